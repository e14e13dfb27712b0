"""The options of an audit, grouped in small frozen objects, validated once.

An audit is configured by a few groups, each a frozen dataclass that checks its values
when it is made (one message template, :class:`~anonaudit.errors.OptionError`):

- :class:`Roles`: which columns are quasi-identifiers (QIs), sensitive (SAs), survey
  weights or record counts;
- :class:`ReadOptions`: how the inputs are read (CSV dialect, null markers, dataset
  format, filters, object-storage settings, decimal commas);
- :class:`EngineOptions`: where the class table is built (this process, Dask, Spark);
- :class:`AuditOptions`: what is measured and judged on the class table: the
  :class:`~anonaudit.settings.policy.Policy` (thresholds), the t-closeness ground distance of each
  SA (one object per kind, holding what it needs: ``EqualDistance()``,
  ``OrderedDistance(order)``, ``HierarchicalDistance(hierarchy)``, ...: the modules of
  :mod:`anonaudit.distances`, whose classes this module and ``anonaudit`` export), the
  QI hierarchies and levels to generalize to, the :class:`PopulationOptions` and the
  optional :class:`Analyses`.

:func:`anonaudit.load` takes roles, reading and engine options; :func:`anonaudit.audit_table`
takes audit options; :func:`anonaudit.audit` takes all four. The command line and policy
files are mapped onto these objects in one place (:func:`from_keywords`, used by
:meth:`anonaudit.cli.config.AuditConfig.options`), and so are the flat keyword arguments of
earlier versions, which keep working with a :class:`DeprecationWarning` until 0.3.

Examples
--------
>>> from anonaudit import OrderedDistance, Policy
>>> options = AuditOptions(policy=Policy(k=5, t=0.2),
...                        distances={"salary": OrderedDistance()},
...                        population=PopulationOptions(sampling_fraction=0.1))
>>> options.distance_for("salary").name, options.distance_for("disease").name
('ordered', 'equal')
>>> AuditOptions(nulls="maybe")
Traceback (most recent call last):
...
anonaudit.errors.OptionError: unknown nulls 'maybe'; choose one of value, drop, wildcard
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from anonaudit import distances as ground_distances
from anonaudit.distances.base import Distance
from anonaudit.errors import OptionError, ParameterError, texts
from anonaudit.errors import number as _number
from anonaudit.errors import one_of as _one_of
from anonaudit.errors import require as _require
from anonaudit.settings.names import (
    DISTANCE_INPUTS,
    ENGINES,
    FORMATS,
    MISSING_COLUMNS,
    NULL_POLICIES,
    POPULATION_MODELS,
    MissingColumns,
    NullPolicy,
    PopulationModel,
)
from anonaudit.settings.policy import Policy
from anonaudit.settings.work import DEFAULT_MAX_WORK, parse_size

if TYPE_CHECKING:
    from anonaudit.classtable import ClassTable
    from anonaudit.distances.equal import EqualDistance
    from anonaudit.distances.hierarchical import HierarchicalDistance
    from anonaudit.distances.matrix import MatrixDistance
    from anonaudit.distances.numeric import NumericDistance
    from anonaudit.distances.ordered import OrderedDistance
    from anonaudit.hierarchy import Hierarchy
    from anonaudit.progress import Progress

__all__ = [
    "Analyses",
    "AuditOptions",
    "Distance",
    "EngineOptions",
    "EqualDistance",
    "HierarchicalDistance",
    "LedgerOptions",
    "MatrixDistance",
    "NumericDistance",
    "OrderedDistance",
    "PopulationOptions",
    "ReadOptions",
    "Roles",
    "from_keywords",
    "texts",
]

#: Below this, the population the data is a sample of would be over a trillion times
#: larger than the sample: a typo rather than a survey.
SMALLEST_SAMPLING_FRACTION = 1e-12
#: The release in which the flat keyword arguments of :func:`anonaudit.audit`,
#: :func:`anonaudit.audit_table` and :func:`anonaudit.load` stop working.
REMOVED_IN = "0.3"


# --------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class Roles:
    """The roles of the columns audited.

    Parameters
    ----------
    quasi_identifiers : sequence of str
        QI columns (at least one): what an attacker may know about a person.
    sensitive : sequence of str
        SA columns: what a release must not disclose.
    weights : str, optional
        A column of survey weights (the people each record stands for): adds
        sdcMicro's individual risk with ``F_k`` the sum of a class's weights.
    count : str, optional
        A column of whole numbers: the input is a frequency table, one row per group
        with its count of records.
    allowed_identifiers : sequence of str
        Columns of the input that the person releasing it knows to identify people
        directly and releases knowingly (``--allow-identifier``, ``allow_identifiers``
        in a policy file). Any other column detected as a direct identifier
        (:mod:`anonaudit.measures.identifiers`) and declared neither a QI nor an SA fails the
        audit.

    Examples
    --------
    >>> Roles(["zip", "age"], ["disease"])  # doctest: +NORMALIZE_WHITESPACE
    Roles(quasi_identifiers=('zip', 'age'), sensitive=('disease',), weights=None, count=None,
          allowed_identifiers=())
    >>> Roles(["zip", "zip"])
    Traceback (most recent call last):
    ...
    anonaudit.errors.OptionError: column 'zip' is named twice among the QIs and SAs
    """

    quasi_identifiers: Sequence[str]
    sensitive: Sequence[str] = ()
    weights: str | None = None
    count: str | None = None
    allowed_identifiers: Sequence[str] = ()

    def __post_init__(self) -> None:
        for option in ("quasi_identifiers", "sensitive", "allowed_identifiers"):
            value = getattr(self, option)
            if isinstance(value, str):
                raise OptionError(
                    option,
                    value,
                    says="quasi_identifiers, sensitive and allowed_identifiers are lists "
                    "of column names ({label} is one text, {value!r})",
                )
        qi = texts(self.quasi_identifiers, "quasi_identifiers")
        sa = texts(self.sensitive, "sensitive")
        if not qi:
            raise OptionError(
                "quasi_identifiers", qi, says="name at least one quasi-identifier column ({value})"
            )
        named = qi + sa
        for name in sorted({n for n in named if named.count(n) > 1}):
            raise OptionError(
                "columns", name, says="column {value!r} is named twice among the QIs and SAs"
            )
        object.__setattr__(self, "quasi_identifiers", qi)
        object.__setattr__(self, "sensitive", sa)
        allowed = texts(self.allowed_identifiers, "allowed_identifiers")
        object.__setattr__(self, "allowed_identifiers", tuple(dict.fromkeys(allowed)))

    @property
    def columns(self) -> tuple[str, ...]:
        """The QIs, then the SAs."""
        return (*self.quasi_identifiers, *self.sensitive)


@dataclass(frozen=True, kw_only=True)
class ReadOptions:
    """How the inputs are read (:func:`anonaudit.sources.open_inputs`).

    Parameters
    ----------
    sep : str, optional
        The CSV separator (default: sniffed from the first lines).
    encoding : str
        The text encoding of CSV files.
    na_values : sequence of str
        The texts that mean a null value (default: the empty field only).
    format : {"parquet", "csv", "delta"}, optional
        The format of a dataset's files (default: from their suffixes, or
        ``_delta_log``).
    filter : str or sequence of str
        Row and partition selections that must all hold, such as ``"day=2024-01-02"``
        (:mod:`anonaudit.sources.filters`).
    storage_options : mapping of str to str
        Object-storage settings such as ``endpoint_url`` (:mod:`anonaudit.sources.storage`).
    delta_version : int, optional
        The Delta table version to read (default: the latest).
    missing_columns : {"error", "null"}
        A dataset's file lacking an audited column is an error naming it, or its values
        of that column are null (listed per file in the report).
    decimal_comma : sequence of str
        Columns whose numbers are written with a decimal comma (``1.234,5``): read as
        ``1234.5``.
    """

    sep: str | None = None
    encoding: str = "utf-8"
    na_values: Sequence[str] = ("",)
    format: str | None = None
    filter: str | Sequence[str] = ()
    storage_options: Mapping[str, str] = field(default_factory=dict)
    delta_version: int | None = None
    missing_columns: MissingColumns = "error"
    decimal_comma: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "na_values", texts(self.na_values, "na_values"))
        filters = (self.filter,) if isinstance(self.filter, str) else self.filter
        object.__setattr__(self, "filter", texts(filters, "filter"))
        object.__setattr__(self, "decimal_comma", texts(self.decimal_comma, "decimal_comma"))
        object.__setattr__(self, "storage_options", dict(self.storage_options or {}))
        if self.format is not None:
            _one_of(self.format, "format", FORMATS)
        _one_of(self.missing_columns, "missing_columns", MISSING_COLUMNS)
        if self.delta_version is not None:
            _require(
                isinstance(self.delta_version, int)
                and not isinstance(self.delta_version, bool)
                and self.delta_version >= 0,
                "delta_version",
                "be a whole number >= 0",
                self.delta_version,
            )

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments of :func:`anonaudit.sources.open_inputs` (all but
        ``decimal_comma``, which recodes the class table once built)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "decimal_comma"}


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """Where and how the class table is built.

    Parameters
    ----------
    engine : {"local", "dask", "spark"}
        In this process (DuckDB), on a Dask cluster, or by Spark.
    scheduler : distributed.Client, SparkSession or str, optional
        A running Dask client or scheduler address, or a Spark session; ``None`` starts
        a local one.
    progress : Progress, optional
        Where to report the progress of long scans and analyses.
    memory_limit : str, optional
        Memory the local engine's aggregation may take before it spills to disk, such as
        ``"4GB"`` (DuckDB's units; default: 80% of the machine's memory); it also bounds
        the reads of compressed files. In force while the class table is built and the
        audit reads its inputs, for this call only.
    temp_dir : str, optional
        Where the local engine spills its hash table when it outgrows ``memory_limit``
        (default: the system's temporary directory).
    """

    engine: str = "local"
    scheduler: Any = None
    progress: Progress | None = None
    memory_limit: str | None = None
    temp_dir: str | None = None

    def __post_init__(self) -> None:
        _one_of(self.engine, "engine", ENGINES)
        _require(
            self.memory_limit is None or parse_size(self.memory_limit) is not None,
            "memory_limit",
            "be a size such as 4GB or 500MB",
            self.memory_limit,
        )


# --------------------------------------------------------------------------- distances


#: The distance classes by the name reports give them (:data:`anonaudit.distances.CLASSES`).
@dataclass(frozen=True)
class LedgerOptions:
    """Where a release is judged against the earlier releases of its dataset, and
    recorded when its audit passes (``anonaudit audit --ledger``).

    Parameters
    ----------
    file : str or os.PathLike
        The release ledger (SQLite), made on first use. It is internal: do not publish it.
    dataset : str
        The data the release comes from: its releases are checked against each other.
    recipient : str, optional
        Who receives the release.
    id : str, optional
        The office's record id column: kept with the release, so that later releases are
        composed with it (without it, only differencing is checked).

    Examples
    --------
    >>> LedgerOptions("releases.sqlite", "")
    Traceback (most recent call last):
    ...
    anonaudit.errors.OptionError: dataset must be a name that is not empty (got '')
    """

    file: str | os.PathLike[str]
    dataset: str
    recipient: str | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        _require(
            isinstance(self.dataset, str) and bool(self.dataset.strip()),
            "dataset",
            "be a name that is not empty",
            self.dataset,
        )


DISTANCE_CLASSES = ground_distances.CLASSES


def __getattr__(name: str) -> type[Distance]:
    """A ground distance's class by its Python name (``OrderedDistance``), imported on
    first use from its module of :mod:`anonaudit.distances` (PEP 562)."""
    kind = None if name.startswith("__") else ground_distances.exported(name)
    if kind is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return kind


# --------------------------------------------------------------------------- audit


@dataclass(frozen=True, kw_only=True)
class PopulationOptions:
    """The population the data was sampled from, and an attacker's population table.

    Parameters
    ----------
    size : float, optional
        The population size ``N`` (at least the records audited).
    sampling_fraction : float, optional
        ``n / N``, in (0, 1]. Either this or ``size`` adds population uniqueness,
        journalist and marketer risk (:mod:`anonaudit.measures.population`).
    model : {"dankar", "pitman", "zayatz", "snb"}
        The population uniqueness estimate to report; ``dankar`` picks one by Dankar et
        al.'s (2012) rule.
    table : path, frame or ClassTable, optional
        The attacker's identified table (a voter list, a census extract) with the QI
        columns in the release's coding: adds k-map, delta-presence and unique matches
        (:func:`anonaudit.linkage.population_linkage`). Read with the release's options.
    k_map : int, optional
        With ``table``: every release class must match at least this many of its
        records (k-map; El Emam & Dankar 2008), a verdict of the audit.
    """

    size: float | None = None
    sampling_fraction: float | None = None
    model: PopulationModel = "dankar"
    table: Any = None
    k_map: int | None = None

    def __post_init__(self) -> None:
        size, fraction = self.size, self.sampling_fraction
        if size is not None and fraction is not None:
            raise OptionError(
                "sampling_fraction",
                fraction,
                says="give population_size or sampling_fraction, not both ({label} {value!r} "
                "with a population size)",
            )
        if size is not None:
            ok = _number(size) and size >= 1
            _require(ok, "population_size", "be a positive number of people", size)
        if fraction is not None:
            _require(_number(fraction) and 0 < fraction <= 1, "sampling_fraction",
                     "lie in (0, 1]", fraction)  # fmt: skip
            if fraction < SMALLEST_SAMPLING_FRACTION:
                raise OptionError(
                    "sampling_fraction",
                    fraction,
                    says="{label} {value} would make the population more than "
                    f"{1 / SMALLEST_SAMPLING_FRACTION:.0e} times the data; give the share of "
                    "the population in the data, or the population size",
                )
        _one_of(self.model, "population_model", POPULATION_MODELS)
        if self.k_map is not None and self.table is None:
            raise OptionError(
                "k_map",
                self.k_map,
                says="k-map counts matches in a population table: give one "
                "({label} {value!r} without one)",
            )
        if self.k_map is not None:
            whole = isinstance(self.k_map, int) and not isinstance(self.k_map, bool)
            _require(whole and self.k_map >= 1, "k_map", "be a whole number >= 1", self.k_map)

    @property
    def given(self) -> bool:
        """Whether a population size or sampling fraction is known."""
        return self.size is not None or self.sampling_fraction is not None


@dataclass(frozen=True, kw_only=True)
class Analyses:
    """The analyses an audit runs besides the measures.

    Parameters
    ----------
    suppression : bool
        When the policy fails, work out which classes to suppress so the rest passes
        (:mod:`anonaudit.advice.suppression`).
    qi_analysis : bool or int, optional
        Distinction and separation of every QI subset of up to this many QIs
        (:func:`anonaudit.measures.qi_analysis.qi_analysis`); ``True`` for the default size.
    suda : bool or int, optional
        Minimal sample uniques of up to this many QIs, and SUDA scores
        (:func:`anonaudit.measures.suda.suda`); ``True`` for the default size.
    advise : bool
        Search the lattice of the QIs' hierarchy levels for the Pareto-best
        transformations that pass the policy (:func:`anonaudit.advise`).
    suppression_limit : float
        With ``advise``: the largest share of the records, in [0, 1), a transformation
        may suppress.
    max_results : int or None
        With ``advise``: transformations of the Pareto front listed (``None``: all).
    max_work : int or None
        Refuse, before they start, a QI analysis, SUDA or non-monotone advice search whose
        estimated work exceeds this (:mod:`anonaudit.settings.work`); ``None``: no limit.
    """

    suppression: bool = True
    qi_analysis: bool | int | None = None
    suda: bool | int | None = None
    advise: bool = False
    suppression_limit: float = 0.0
    max_results: int | None = 10
    max_work: int | None = DEFAULT_MAX_WORK

    def __post_init__(self) -> None:
        limit = self.suppression_limit
        _require(_number(limit) and 0 <= limit < 1, "suppression_limit", "lie in [0, 1)", limit)
        if self.max_results is not None:
            _require(isinstance(self.max_results, int) and self.max_results >= 1,
                     "max_results", "be a whole number >= 1, or None for all",
                     self.max_results)  # fmt: skip
        if self.max_work is not None:
            ok = isinstance(self.max_work, int) and self.max_work >= 1
            _require(ok, "max_work", "be a whole number >= 1, or None for no limit", self.max_work)
        for name in ("qi_analysis", "suda"):
            asked = getattr(self, name)
            if asked is not None and not isinstance(asked, bool):
                whole = isinstance(asked, int) and asked >= 1
                _require(whole, name, "be a largest subset size >= 1", asked)


@dataclass(frozen=True, kw_only=True)
class AuditOptions:
    """What an audit measures on the class table, and judges.

    Parameters
    ----------
    policy : Policy
        The thresholds to judge the measures by (none: measure only).
    nulls : {"value", "drop", "wildcard"}
        Null QI values form a value of their own, or their records are left out, or a
        null matches any value when counting class sizes (sdcMicro's convention:
        :mod:`anonaudit.measures.wildcard`).
    risk_threshold : float
        Prosecutor (and individual) risk above which a record counts as at risk.
    distances : Distance or mapping of str to Distance
        The t-closeness ground distance of every SA, or per SA (an SA not named:
        :class:`EqualDistance`).
    hierarchies : mapping of str to Hierarchy, path or built-in spec
        Per QI, its hierarchy (a :class:`~anonaudit.hierarchy.Hierarchy`, the path of an
        ARX hierarchy file, or ``"interval:5,10,20"``, ``"prefix"``, ``"prefix:N"``: see
        :mod:`anonaudit.measures.generalization`), for ``generalize`` and the advice search.
    generalize : mapping of str to int, optional
        Audit the data as it would be after generalizing each named QI to this level of
        its hierarchy.
    population : PopulationOptions
        The population sampled, and an attacker's population table.
    analyses : Analyses
        Suppression advice, QI analysis, SUDA and the advice search.
    """

    policy: Policy = field(default_factory=Policy)
    nulls: NullPolicy = "value"
    risk_threshold: float = 0.2
    distances: Distance | Mapping[str, Distance] = field(default_factory=dict)
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] = field(default_factory=dict)
    generalize: Mapping[str, int] | None = None
    population: PopulationOptions = field(default_factory=PopulationOptions)
    analyses: Analyses = field(default_factory=Analyses)

    def __post_init__(self) -> None:
        _one_of(self.nulls, "nulls", NULL_POLICIES)
        _require(isinstance(self.policy, Policy), "policy", "be a Policy", self.policy)
        for name, kind in (("population", PopulationOptions), ("analyses", Analyses)):
            value = getattr(self, name)
            _require(isinstance(value, kind), name, f"be {kind.__name__}(...)", value)
        threshold = self.risk_threshold
        _require(_number(threshold) and 0 < threshold <= 1, "risk_threshold", "lie in (0, 1]",
                 threshold)  # fmt: skip
        if not isinstance(self.distances, Distance):
            _require(
                isinstance(self.distances, Mapping)
                and all(isinstance(d, Distance) for d in self.distances.values()),
                "distances",
                "be a distance (EqualDistance(), OrderedDistance(order), ...) or a mapping of "
                "sensitive columns to distances",
                self.distances,
            )
            object.__setattr__(self, "distances", dict(self.distances))
        object.__setattr__(self, "hierarchies", dict(self.hierarchies or {}))
        if self.generalize is not None:
            for qi, level in self.generalize.items():
                ok = isinstance(level, int) and not isinstance(level, bool) and level >= 0
                _require(ok, f"generalize[{qi!r}]", "be a hierarchy level >= 0", level)

    def distance_for(self, sensitive: str) -> Distance:
        """The ground distance of the SA ``sensitive``."""
        if isinstance(self.distances, Distance):
            return self.distances
        assert isinstance(self.distances, Mapping)
        distance = self.distances.get(sensitive)
        return ground_distances.default() if distance is None else distance

    def check_roles(self, table: ClassTable) -> None:
        """Refuse distances named for a column that is not an SA of ``table``, and
        hierarchies for one that is not a QI."""
        sensitive = table.sensitive
        if isinstance(self.distances, Mapping):
            _refuse_not_sensitive(self.distances, sensitive)
        for qi in self.hierarchies:
            if qi not in table.quasi_identifiers:
                raise ParameterError(
                    f"a hierarchy is given for {qi!r}, which is not a quasi-identifier "
                    f"({', '.join(table.quasi_identifiers)}); a sensitive column's hierarchy "
                    "is its HierarchicalDistance"
                )


# --------------------------------------------------------------------------- flat keywords

#: The flat keyword arguments of earlier versions, by the option object they now set.
_ROLES = ("quasi_identifiers", "sensitive", "weights", "count", "allowed_identifiers")
_READING = tuple(f.name for f in fields(ReadOptions))
_ENGINE = ("engine", "scheduler", "progress", "memory_limit", "temp_dir")
_AUDIT = (
    "policy",
    "distance",
    "hierarchies",
    *(each.keyword for each in DISTANCE_INPUTS),
    "nulls",
    "risk_threshold",
    "population_size",
    "sampling_fraction",
    "population_model",
    "population_table",
    "k_map",
    "generalize",
    "advise_suppression",
    "qi_analysis",
    "suda",
    "advise",
    "suppression_limit",
    "max_results",
    "max_work",
)
KEYWORDS = (*_ROLES, *_READING, *_ENGINE, *_AUDIT)
#: The deprecated flat keyword arguments :func:`anonaudit.load` still takes.
LOAD_KEYWORDS = (*_ROLES, *_READING, *_ENGINE)
#: Those :func:`anonaudit.audit_table` still takes (the rest it never took).
AUDIT_KEYWORDS = _AUDIT


@dataclass(frozen=True)
class Keywords:
    """Flat settings split into option objects (:func:`from_keywords`).

    Attributes
    ----------
    roles : dict
        The keyword arguments of :class:`Roles` given.
    reading : ReadOptions
    engine : EngineOptions
    audit : AuditOptions
    """

    roles: dict[str, Any]
    reading: ReadOptions
    engine: EngineOptions
    audit: AuditOptions


def from_keywords(
    settings: Mapping[str, Any], *, quasi_identifiers: Sequence[str], sensitive: Sequence[str]
) -> Keywords:
    """Flat settings (the keyword arguments of earlier versions, and the keys of policy
    files and command-line options once named alike) as option objects.

    Parameters
    ----------
    settings : mapping
        Any of the names in :data:`KEYWORDS`; ``distance`` is one distance name for
        every SA or a mapping of SA to name; ``hierarchies`` maps QIs and SAs alike
        (an SA with one is measured with its hierarchical distance unless ``distance``
        says otherwise), ``orders`` and ``ground_distances`` map SAs.
    quasi_identifiers, sensitive : sequence of str
        The QIs and SAs: a hierarchy is a QI's, or else an SA's.

    Returns
    -------
    Keywords

    Raises
    ------
    TypeError
        A name that is no option, as for a function's unknown keyword argument.
    ParameterError
        A value an option refuses.
    """
    unknown = sorted(set(settings) - set(KEYWORDS))
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    given = {k: v for k, v in settings.items()}

    def take(names: Sequence[str]) -> dict[str, Any]:
        return {n: given[n] for n in names if n in given}

    audit = take(_AUDIT)
    hierarchies = dict(audit.get("hierarchies") or {})
    sa_hierarchies = {c: h for c, h in hierarchies.items() if c not in quasi_identifiers}
    population = PopulationOptions(
        size=audit.get("population_size"),
        sampling_fraction=audit.get("sampling_fraction"),
        model=audit.get("population_model", "dankar"),
        table=audit.get("population_table"),
        k_map=audit.get("k_map"),
    )
    analyses = Analyses(
        suppression=audit.get("advise_suppression", True),
        qi_analysis=audit.get("qi_analysis"),
        suda=audit.get("suda"),
        advise=audit.get("advise", False),
        suppression_limit=audit.get("suppression_limit", 0.0),
        max_results=audit.get("max_results", 10),
        max_work=audit.get("max_work", DEFAULT_MAX_WORK),
    )
    options = AuditOptions(
        policy=audit.get("policy") or Policy(),
        nulls=audit.get("nulls", "value"),
        risk_threshold=audit.get("risk_threshold", 0.2),
        distances=_distances(
            sensitive,
            audit.get("distance"),
            {
                "hierarchies": sa_hierarchies,
                **{e.keyword: dict(audit.get(e.keyword) or {}) for e in DISTANCE_INPUTS},
            },
        ),
        hierarchies={c: h for c, h in hierarchies.items() if c in quasi_identifiers},
        generalize=audit.get("generalize") or None,
        population=population,
        analyses=analyses,
    )
    return Keywords(
        roles=take(_ROLES),
        reading=ReadOptions(**take(_READING)),
        engine=EngineOptions(**take(_ENGINE)),
        audit=options,
    )


def _distances(
    sensitive: Sequence[str],
    distance: str | Mapping[str, str] | None,
    inputs: Mapping[str, Mapping[str, Any]],
) -> dict[str, Distance]:
    """Per SA, the distance a name makes (or the one its inputs imply: hierarchical with a
    hierarchy, matrix with a matrix, else equal) with its inputs (``inputs``: by keyword,
    ``hierarchies``, ``orders``, ``ground_distances``, ..., the value of each SA given).
    An input that implies a distance must be an SA's; the others are read for an SA
    only."""
    named = (
        {sa: distance for sa in sensitive} if isinstance(distance, str) else dict(distance or {})
    )
    implying = {kind.implied_by for kind in ground_distances.registered().values()}
    implied = [sa for keyword, values in inputs.items() if keyword in implying for sa in values]
    _refuse_not_sensitive([*named, *implied], sensitive)
    result: dict[str, Distance] = {}
    for sa in sensitive:
        given = {keyword: values[sa] for keyword, values in inputs.items() if sa in values}
        name = named.get(sa, ground_distances.implied(given))
        result[sa] = ground_distances.named(name).from_inputs(sa, given)
    return result


def _refuse_not_sensitive(names: Iterable[str], sensitive: Sequence[str]) -> None:
    """Refuse a ground distance (or its hierarchy or matrix) named for a non-SA column."""
    for sa in names:
        if sa not in sensitive:
            raise ParameterError(
                f"a t-closeness distance, hierarchy or matrix is given for {sa!r}, which is not "
                f"a sensitive column ({', '.join(sensitive) or 'none given'})"
            )


def deprecated(
    function: str,
    names: Sequence[str],
    instead: str,
    *,
    allowed: Sequence[str] | None = None,
    alongside: bool = False,
) -> None:
    """Warn that ``function`` was called with the flat keyword arguments ``names``.

    Raises
    ------
    TypeError
        Before any warning: a name not in ``allowed`` (when given), as for an unknown
        keyword argument, or option objects given ``alongside`` the keywords.
    """
    unknown = sorted(set(names) - set(allowed or names))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    if alongside:
        raise TypeError("give option objects or the deprecated keyword arguments, not both")
    warnings.warn(
        f"{function}({', '.join(f'{n}=' for n in names)}) is deprecated and stops working in "
        f"{REMOVED_IN}: {instead}",
        DeprecationWarning,
        stacklevel=3,
    )
