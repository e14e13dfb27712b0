"""The front door: :func:`load` a class table, :func:`audit` it, read the :class:`AuditReport`."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import pandas as pd
import pyarrow as pa

from anonaudit.checks import (
    DisclosureResult,
    KAnonymityResult,
    LDiversityResult,
    RiskResult,
    TClosenessResult,
    attribute_disclosure,
    k_anonymity,
    l_diversity,
    prosecutor_risk,
    t_closeness,
)
from anonaudit.checks.population import (
    JournalistRisk,
    MarketerRisk,
    PopulationModel,
    PopulationUniqueness,
    journalist_risk,
    marketer_risk,
    population_uniqueness,
)
from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.engines.local import Progress, build_class_table
from anonaudit.errors import ColumnError, ParameterError, PolicyViolationError
from anonaudit.hierarchy import GroundDistance, Hierarchy
from anonaudit.policy import Policy
from anonaudit.report.html import DEFAULT_MAX_ROWS
from anonaudit.sources.base import open_source
from anonaudit.sources.csv import CsvOptions

if TYPE_CHECKING:  # anonaudit.dp imports this module
    from anonaudit.dp.companion import DPReport

__all__ = ["AuditReport", "Source", "audit", "audit_table", "load"]

#: What :func:`audit` and :func:`load` accept as input.
Source: TypeAlias = (
    str | os.PathLike[str] | pd.DataFrame | pa.Table | Sequence[str | os.PathLike[str]]
)
NullPolicy = Literal["value", "drop"]
#: Where the class table is built: in this process, or on a Dask cluster.
Engine = Literal["local", "dask"]


def load(
    source: Source,
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    sep: str | None = None,
    encoding: str = "utf-8",
    na_values: Sequence[str] = ("",),
    format: str | None = None,
    filter: str | Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
    delta_version: int | None = None,
    engine: Engine = "local",
    scheduler: Any = None,
    progress: Progress | None = None,
) -> ClassTable:
    """Read ``source`` in one streaming pass into a :class:`ClassTable`.

    Parameters
    ----------
    source : path, URL, list of them, pandas.DataFrame, pyarrow.Table or Spark DataFrame
        CSV (sniffed separator unless ``sep``) or Parquet files; directories, globs and
        object-storage URLs (``s3://bucket/events/``) of such files, hive-partitioned or
        not, or of a Delta table; a frame. All are aggregated in one pass (a Spark
        DataFrame by Spark itself) and merged.
    quasi_identifiers : sequence of str
        QI columns (at least one); partition keys of a dataset are columns too.
    sensitive : sequence of str
        SA columns.
    sep, encoding, na_values
        CSV reading options; only ``na_values`` texts become null (default: empty).
    format : {"parquet", "csv", "delta"}, optional
        Format of a dataset's files (inferred from their suffixes, or ``_delta_log``).
    filter : str or sequence of str
        Row and partition selection, all of which must hold, such as
        ``"day=2024-01-02"`` (:mod:`anonaudit.sources.filters`).
    storage_options : mapping of str to str, optional
        Object-storage settings such as ``endpoint_url`` (:mod:`anonaudit.sources.storage`).
    delta_version : int, optional
        The Delta table version to read (default: the latest).
    engine : {"local", "dask"}
        Build the class table in this process, or on a Dask cluster.
    scheduler : distributed.Client or str, optional
        For ``engine="dask"``: a running client or a scheduler address; ``None`` starts
        a local cluster.
    progress : Progress, optional
        Where to report progress of long scans.

    Returns
    -------
    ClassTable
    """
    from anonaudit.engines.spark import from_spark, is_spark_frame
    from anonaudit.sources.dataset import DatasetOptions

    quasi_identifiers, sensitive = _roles(quasi_identifiers, sensitive)
    if engine not in ("local", "dask"):
        raise ParameterError(f"engine must be 'local' or 'dask' (got {engine!r})")
    csv = CsvOptions(sep=sep, encoding=encoding, na_values=tuple(na_values))
    lake = DatasetOptions(
        format=format,
        filters=(filter,) if isinstance(filter, str) else tuple(filter),
        storage_options=dict(storage_options or {}),
        delta_version=delta_version,
    )
    items: list[Any] = list(source) if isinstance(source, (list, tuple)) else [source]
    roles: dict[str, Any] = {"quasi_identifiers": quasi_identifiers, "sensitive": sensitive}
    spark = [from_spark(item, **roles) for item in items if is_spark_frame(item)]
    sources = [
        open_source(item, csv=csv, dataset=lake) for item in items if not is_spark_frame(item)
    ]
    if not sources and spark:
        return spark[0].merge(*spark[1:])
    if engine == "dask":
        from anonaudit.engines.dask import build_class_table as build_on_dask

        table = build_on_dask(sources, **roles, scheduler=scheduler, progress=progress)
    else:
        table = build_class_table(sources, **roles, progress=progress)
    return table.merge(*spark) if spark else table


def _roles(qi: Sequence[str], sa: Sequence[str]) -> tuple[list[str], list[str]]:
    if isinstance(qi, str) or isinstance(sa, str):
        raise ParameterError("quasi_identifiers and sensitive are lists of column names")
    qi, sa = list(qi), list(sa)
    if not qi:
        raise ParameterError("name at least one quasi-identifier column")
    for name in {n for n in qi + sa if (qi + sa).count(n) > 1}:
        raise ParameterError(f"column {name!r} is named twice among the QIs and SAs")
    return qi, sa


@dataclass(frozen=True)
class AuditReport:
    """Everything an audit measured, with the policy's verdicts.

    Attributes
    ----------
    quasi_identifiers, sensitive : tuple of str
        Column roles.
    rows : int
        Records audited (after dropping null QIs, if asked).
    sources : tuple of SourceStats
        Inputs and the records read from each.
    nulls : dict of str to int
        Records with a null value, per audited column (before any drop).
    null_policy : {"value", "drop"}
        How null QI values were treated.
    dropped_records : int
        Records left out because a QI was null (``null_policy="drop"``).
    policy : Policy
        The thresholds checked.
    k_anonymity : KAnonymityResult
    l_diversity, t_closeness, disclosure : dict of str to result
        Per SA.
    risk : RiskResult
    table : ClassTable
        The class table the measures were computed from.
    audited_at : datetime.datetime
        When the audit ran (UTC).
    dp : DPReport or None
        The differential-privacy companion (:func:`anonaudit.dp.companion` of
        ``table``), when asked for: ``dataclasses.replace(report, dp=...)``.
    population : PopulationUniqueness or None
        Estimated population uniques, when a population size or sampling fraction is
        given.
    journalist : JournalistRisk or None
    marketer : MarketerRisk or None
        Journalist and marketer risk, with ``population``.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    rows: int
    sources: tuple[SourceStats, ...]
    nulls: dict[str, int]
    null_policy: NullPolicy
    dropped_records: int
    policy: Policy
    k_anonymity: KAnonymityResult
    l_diversity: dict[str, LDiversityResult]
    t_closeness: dict[str, TClosenessResult]
    disclosure: dict[str, DisclosureResult]
    risk: RiskResult
    table: ClassTable = field(repr=False)
    audited_at: _dt.datetime = field(default_factory=lambda: _dt.datetime.now(_dt.UTC))
    dp: DPReport | None = field(default=None, repr=False)
    population: PopulationUniqueness | None = None
    journalist: JournalistRisk | None = None
    marketer: MarketerRisk | None = None

    def verdicts(self) -> list[tuple[str, bool]]:
        """``(measure, passed)`` for every threshold of the policy."""
        result: list[tuple[str, bool]] = []

        def add(name: str, passed: bool | None) -> None:
            if passed is not None:
                result.append((name, passed))

        add("k-anonymity", self.k_anonymity.passed)
        for sa in self.sensitive:
            add(f"l-diversity of {sa}", self.l_diversity[sa].passed)
            add(f"t-closeness of {sa}", self.t_closeness[sa].passed)
            add(f"disclosure of {sa}", self.disclosure[sa].passed)
        add("re-identification risk", self.risk.passed)
        return result

    @property
    def passed(self) -> bool | None:
        """Whether every threshold is met; ``None`` when the policy sets none."""
        verdicts = self.verdicts()
        return None if not verdicts else all(ok for _, ok in verdicts)

    def raise_for_violations(self) -> None:
        """Raise :class:`PolicyViolationError` listing the failed measures, if any."""
        failed = [name for name, ok in self.verdicts() if not ok]
        if failed:
            raise PolicyViolationError("the data violates the policy: " + "; ".join(failed))

    def to_dict(self, *, max_classes: int | None = 100) -> dict[str, Any]:
        """The JSON report as a dict (see :mod:`anonaudit.report.json`)."""
        from anonaudit.report.json import report_to_dict

        return report_to_dict(self, max_classes=max_classes)

    def to_json(self, *, max_classes: int | None = 100) -> str:
        """The JSON report as text."""
        from anonaudit.report.json import dumps

        return dumps(self.to_dict(max_classes=max_classes))

    def to_html(
        self, *, redact: bool = False, command: str | None = None, max_rows: int = DEFAULT_MAX_ROWS
    ) -> str:
        """The HTML report as text (see :func:`anonaudit.report.html.render_html`)."""
        from anonaudit.report.html import render_html

        return render_html(self, redact=redact, command=command, max_rows=max_rows)

    def save_html(
        self,
        path: str | os.PathLike[str],
        *,
        redact: bool = False,
        command: str | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        """Write the HTML report to ``path`` atomically (see :func:`to_html`)."""
        from anonaudit.report.html import save_html

        save_html(self, path, redact=redact, command=command, max_rows=max_rows)


def audit(
    source: Source | ClassTable,
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    policy: Policy | None = None,
    distance: str | Mapping[str, str] | None = None,
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
    ground_distances: Mapping[str, GroundDistance | str | os.PathLike[str]] | None = None,
    nulls: NullPolicy = "value",
    risk_threshold: float = 0.2,
    population_size: float | None = None,
    sampling_fraction: float | None = None,
    population_model: PopulationModel = "dankar",
    sep: str | None = None,
    encoding: str = "utf-8",
    na_values: Sequence[str] = ("",),
    format: str | None = None,
    filter: str | Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
    delta_version: int | None = None,
    engine: Engine = "local",
    scheduler: Any = None,
    progress: Progress | None = None,
) -> AuditReport:
    """Audit ``source`` for every syntactic anonymity measure.

    Parameters
    ----------
    source : path, list of paths, pandas.DataFrame, pyarrow.Table or ClassTable
        The data (see :func:`load`), or a class table built already.
    quasi_identifiers, sensitive : sequence of str
        Column roles.
    policy : Policy, optional
        Thresholds to judge the measures by.
    distance : str or mapping of str to str, optional
        t-closeness ground distance for every SA, or per SA: one of ``equal``,
        ``ordered``, ``numeric``, ``hierarchical``, ``matrix``. An SA not named uses
        ``hierarchical`` when it has a hierarchy, ``matrix`` when it has a ground
        distance, else ``equal``; the distance is never guessed from the data.
    hierarchies : mapping, optional
        Per SA, a :class:`Hierarchy` or the path of an ARX hierarchy file.
    orders : mapping, optional
        Per SA, its values from lowest to highest (ordered distance on text).
    ground_distances : mapping, optional
        Per SA, a :class:`GroundDistance` or the path of a matrix file.
    nulls : {"value", "drop"}
        Null QI values form a value of their own, or their records are left out
        (and counted in :attr:`AuditReport.dropped_records`).
    risk_threshold : float
        Prosecutor risk above which a record counts as at risk.
    population_size, sampling_fraction : float, optional
        The population the data was sampled from: its size ``N`` (at least the
        records audited), or the sampling fraction ``n / N`` in (0, 1]. Either one
        adds population uniqueness, journalist and marketer risk
        (:mod:`anonaudit.checks.population`).
    population_model : {"dankar", "pitman", "zayatz", "snb"}
        The population uniqueness estimate to report; ``dankar`` picks one by
        Dankar et al.'s (2012) rule.
    sep, encoding, na_values, format, filter
        As for :func:`load`.
    storage_options, delta_version, engine, scheduler, progress
        As for :func:`load`.

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"zip": ["02134", "02134", "02139"],
    ...                    "disease": ["flu", "cold", "flu"]})
    >>> report = audit(df, quasi_identifiers=["zip"], sensitive=["disease"],
    ...                policy=Policy(k=2))
    >>> report.k_anonymity.k, report.passed
    (1, False)
    """
    if isinstance(source, ClassTable):
        table = source
    else:
        table = load(
            source,
            quasi_identifiers=quasi_identifiers,
            sensitive=sensitive,
            sep=sep,
            encoding=encoding,
            na_values=na_values,
            format=format,
            filter=filter,
            storage_options=storage_options,
            delta_version=delta_version,
            engine=engine,
            scheduler=scheduler,
            progress=progress,
        )
    return audit_table(
        table,
        policy=policy,
        distance=distance,
        hierarchies=hierarchies,
        orders=orders,
        ground_distances=ground_distances,
        nulls=nulls,
        risk_threshold=risk_threshold,
        population_size=population_size,
        sampling_fraction=sampling_fraction,
        population_model=population_model,
    )


def audit_table(
    table: ClassTable,
    *,
    policy: Policy | None = None,
    distance: str | Mapping[str, str] | None = None,
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
    ground_distances: Mapping[str, GroundDistance | str | os.PathLike[str]] | None = None,
    nulls: NullPolicy = "value",
    risk_threshold: float = 0.2,
    population_size: float | None = None,
    sampling_fraction: float | None = None,
    population_model: PopulationModel = "dankar",
) -> AuditReport:
    """Run every check on a class table; see :func:`audit` for the parameters."""
    policy = policy or Policy()
    if population_size is not None and sampling_fraction is not None:
        raise ParameterError("give population_size or sampling_fraction, not both")
    if nulls not in ("value", "drop"):
        raise ParameterError(f"nulls must be 'value' or 'drop' (got {nulls!r})")
    defaults = {sa: "hierarchical" for sa in hierarchies or {}}
    defaults.update({sa: "matrix" for sa in ground_distances or {}})
    distances = _per_sa(table.sensitive, distance, defaults)
    null_counts = table.null_counts()
    rows_read = table.rows
    for name in table.quasi_identifiers:
        if null_counts[name] == rows_read:
            raise ColumnError(
                f"quasi-identifier {name!r} is null in every row; check the column name or --na"
            )
    audited = table.without_null_quasi_identifiers() if nulls == "drop" else table
    if audited.rows == 0:
        raise ColumnError("every record has a null quasi-identifier; nothing is left to audit")
    hierarchy_objects = {
        sa: h if isinstance(h, Hierarchy) else Hierarchy.from_csv(h)
        for sa, h in (hierarchies or {}).items()
    }
    ground_objects = {
        sa: g if isinstance(g, GroundDistance) else GroundDistance.from_csv(g)
        for sa, g in (ground_distances or {}).items()
    }
    recursive_c, recursive_l = policy.recursive or (None, None)
    population = None
    if population_size is not None or sampling_fraction is not None:
        population = population_uniqueness(
            audited,
            population_size=population_size,
            sampling_fraction=sampling_fraction,
            model=population_model,
        )
    return AuditReport(
        quasi_identifiers=table.quasi_identifiers,
        sensitive=table.sensitive,
        rows=audited.rows,
        sources=table.sources,
        nulls=null_counts,
        null_policy=nulls,
        dropped_records=rows_read - audited.rows,
        policy=policy,
        k_anonymity=k_anonymity(audited, k=policy.k),
        l_diversity={
            sa: l_diversity(
                audited,
                sa,
                l=policy.l,
                entropy_l=policy.entropy_l,
                c=recursive_c,
                recursive_l=None if recursive_l is None else int(recursive_l),
            )
            for sa in table.sensitive
        },
        t_closeness={
            sa: t_closeness(
                audited,
                sa,
                t=policy.t,
                distance=distances[sa],
                order=(orders or {}).get(sa),
                hierarchy=hierarchy_objects.get(sa),
                ground=ground_objects.get(sa),
            )
            for sa in table.sensitive
        },
        disclosure={
            sa: attribute_disclosure(
                audited, sa, alpha=policy.alpha, beta=policy.beta, delta=policy.delta
            )
            for sa in table.sensitive
        },
        risk=prosecutor_risk(audited, threshold=risk_threshold, max_highest=policy.max_risk),
        table=audited,
        population=population,
        journalist=None
        if population is None
        else journalist_risk(audited, threshold=risk_threshold),
        marketer=None if population is None else marketer_risk(audited),
    )


def _per_sa(
    sensitive: Sequence[str],
    distance: str | Mapping[str, str] | None,
    defaults: Mapping[str, str],
) -> dict[str, str]:
    if isinstance(distance, str):
        return {sa: distance for sa in sensitive}
    given = dict(distance or {})
    for sa in [*given, *defaults]:
        if sa not in sensitive:
            raise ParameterError(
                f"a t-closeness distance, hierarchy or matrix is given for {sa!r}, which is not "
                f"a sensitive column ({', '.join(sensitive) or 'none given'})"
            )
    return {sa: given.get(sa, defaults.get(sa, "equal")) for sa in sensitive}
