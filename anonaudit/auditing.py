"""The front door: :func:`load` a class table, :func:`audit` it, read the :class:`AuditReport`."""

from __future__ import annotations

import datetime as _dt
import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow.compute as pc

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
from anonaudit.checks.individual import IndividualRisk, individual_risk
from anonaudit.checks.population import (
    JournalistRisk,
    MarketerRisk,
    PopulationModel,
    PopulationUniqueness,
    journalist_risk,
    marketer_risk,
    population_uniqueness,
)
from anonaudit.checks.qi_analysis import QIAnalysis, default_max_subset_size
from anonaudit.checks.qi_analysis import qi_analysis as analyse_quasi_identifiers
from anonaudit.checks.suda import DEFAULT_DIS_FRACTION, SudaResult
from anonaudit.checks.suda import suda as find_special_uniques
from anonaudit.checks.utility import InformationLoss, information_loss
from anonaudit.checks.wildcard import NullPolicy, class_frequencies
from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.engines.local import Progress
from anonaudit.errors import ColumnError, ParameterError, PolicyViolationError
from anonaudit.generalization import Generalization, qi_hierarchy
from anonaudit.hierarchy import GroundDistance, Hierarchy
from anonaudit.identifiers import Identifier, find_identifiers, sample_sources
from anonaudit.linkage.population import PopulationLinkage, population_linkage
from anonaudit.loading import Engine, Source, load
from anonaudit.policy import Policy
from anonaudit.report.html import DEFAULT_MAX_ROWS
from anonaudit.sources.csv import from_decimal_comma
from anonaudit.work import DEFAULT_MAX_WORK, SUBSET_OVERHEAD, Steps, check_work, subsets

if TYPE_CHECKING:  # anonaudit.dp and anonaudit.advice import this module
    from anonaudit.advice.lattice import Advice
    from anonaudit.advice.suppression import SuppressionAdvice
    from anonaudit.dp.companion import DPReport
    from anonaudit.linkage.history import ReleaseHistory

__all__ = ["AuditReport", "Source", "audit", "audit_table", "load"]

_Result = TypeVar("_Result")


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
    null_policy : {"value", "drop", "wildcard"}
        How null QI values were treated (:mod:`anonaudit.checks.wildcard`).
    dropped_records : int
        Records left out because a QI was null (``null_policy="drop"``).
    policy : Policy
        The thresholds checked.
    k_anonymity : KAnonymityResult
    l_diversity, t_closeness, disclosure : dict of str to result
        Per SA.
    risk : RiskResult
    utility : InformationLoss
        Information loss of the audited (possibly generalized) table
        (:mod:`anonaudit.checks.utility`).
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
    generalization : Generalization or None
        The generalization the data was audited under (``generalize=``), if any.
    suppression : SuppressionAdvice or None
        When the policy fails: the classes to suppress so the rest passes
        (:mod:`anonaudit.advice.suppression`).
    qi_analysis : QIAnalysis or None
        Distinction and separation of QI subsets, and k without each QI, when asked
        for (:mod:`anonaudit.checks.qi_analysis`).
    suda : SudaResult or None
        Minimal sample uniques and SUDA / DIS-SUDA scores per class, when asked for
        (:mod:`anonaudit.checks.suda`).
    individual : IndividualRisk or None
        sdcMicro's individual and global risk, with survey weights or a population
        size or sampling fraction (:mod:`anonaudit.checks.individual`).
    advice : Advice or None
        The Pareto-best generalizations (and suppression) that pass the policy, when
        asked for (:func:`anonaudit.advice.advise`).
    identifiers : tuple of Identifier
        Columns that likely identify a person directly, audited or not
        (:func:`anonaudit.identifiers.find_identifiers`; :func:`audit` only).
    linkage : PopulationLinkage or None
        k-map, delta-presence and unique matches against a population table, when one
        is given (:mod:`anonaudit.linkage.population`).
    history : ReleaseHistory or None
        Composition and differencing against the earlier releases of the dataset kept
        in a release ledger, when one is given (:mod:`anonaudit.linkage.history`):
        ``dataclasses.replace(report, history=...)``.
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
    utility: InformationLoss
    table: ClassTable = field(repr=False)
    audited_at: _dt.datetime = field(default_factory=lambda: _dt.datetime.now(_dt.UTC))
    dp: DPReport | None = field(default=None, repr=False)
    population: PopulationUniqueness | None = None
    journalist: JournalistRisk | None = None
    marketer: MarketerRisk | None = None
    generalization: Generalization | None = None
    suppression: SuppressionAdvice | None = None
    qi_analysis: QIAnalysis | None = None
    suda: SudaResult | None = field(default=None, repr=False)
    individual: IndividualRisk | None = None
    advice: Advice | None = field(default=None, repr=False)
    identifiers: tuple[Identifier, ...] = ()
    linkage: PopulationLinkage | None = None
    history: ReleaseHistory | None = field(default=None, repr=False)

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
        if self.linkage is not None:
            add("k-map", self.linkage.k_map.passed)
        if self.history is not None:
            result += self.history.verdicts()
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
    generalize: Mapping[str, int] | None = None,
    advise_suppression: bool = True,
    qi_analysis: bool | int | None = None,
    suda: bool | int | None = None,
    advise: bool = False,
    suppression_limit: float = 0.0,
    max_results: int | None = 10,
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
    weights: str | None = None,
    missing_columns: str = "error",
    count: str | None = None,
    decimal_comma: Sequence[str] = (),
    population_table: Source | ClassTable | None = None,
    k_map: int | None = None,
    max_work: int | None = DEFAULT_MAX_WORK,
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
        Per SA, a :class:`Hierarchy` or the path of an ARX hierarchy file. Per QI, the
        same or a built-in (``"interval:5,10,20"``, ``"prefix"``, ``"prefix:N"``; see
        :mod:`anonaudit.generalization`), used by ``generalize``.
    orders : mapping, optional
        Per SA, its values from lowest to highest (ordered distance on text).
    ground_distances : mapping, optional
        Per SA, a :class:`GroundDistance` or the path of a matrix file.
    nulls : {"value", "drop", "wildcard"}
        Null QI values form a value of their own, or their records are left out
        (and counted in :attr:`AuditReport.dropped_records`), or a null matches any
        value when counting class sizes (sdcMicro's convention; changes k-anonymity,
        prosecutor and individual risk only: :mod:`anonaudit.checks.wildcard`).
    risk_threshold : float
        Prosecutor (and individual) risk above which a record counts as at risk.
    population_size, sampling_fraction : float, optional
        The population the data was sampled from: its size ``N`` (at least the
        records audited), or the sampling fraction ``n / N`` in (0, 1]. Either one
        adds population uniqueness, journalist and marketer risk
        (:mod:`anonaudit.checks.population`).
    population_model : {"dankar", "pitman", "zayatz", "snb"}
        The population uniqueness estimate to report; ``dankar`` picks one by
        Dankar et al.'s (2012) rule.
    generalize : mapping of str to int, optional
        Audit the data as it would be after generalizing each named QI to this level of
        its hierarchy (:class:`~anonaudit.generalization.Generalization`); the report's
        ``generalization`` says which.
    advise_suppression : bool
        When the policy fails, work out which classes to suppress so the rest passes
        (:mod:`anonaudit.advice.suppression`; a few more audits of the shrinking table).
    qi_analysis : bool or int, optional
        Analyse distinction and separation of every QI subset of up to this many QIs
        (:func:`anonaudit.checks.qi_analysis.qi_analysis`); ``True`` for the default
        size.
    suda : bool or int, optional
        Search minimal sample uniques of up to this many QIs and score every record
        (:func:`anonaudit.checks.suda.suda`); ``True`` for the default size. The
        DIS-SUDA scores use the sampling fraction when one is given (directly or as
        ``n / population_size``), else sdcMicro's default 0.01.
    advise : bool
        Search the lattice of the QIs' hierarchy levels (those of ``hierarchies``) for
        the Pareto-best transformations that pass the policy
        (:func:`anonaudit.advice.advise`; at most ``max_results`` listed) and keep them in
        :attr:`AuditReport.advice`. The search starts from the data as it is (before any
        ``generalize``; without the records ``nulls="drop"`` leaves out), and needs a
        threshold, a QI hierarchy, and ``nulls`` other than ``"wildcard"``.
    suppression_limit : float
        With ``advise``: the largest share of the records, in [0, 1), that a
        transformation may suppress.
    max_results : int or None
        With ``advise``: transformations of the Pareto front listed and audited
        (``None``: all of them).
    sep, encoding, na_values, format, filter
        As for :func:`load`.
    storage_options, delta_version, engine, scheduler, missing_columns
        As for :func:`load`.
    progress : Progress, optional
        As for :func:`load`, and then the steps of the long analyses (QI analysis,
        SUDA, the advice search) as they run.
    weights : str, optional
        A column of survey weights (:func:`load`): adds sdcMicro's individual and
        global risk with ``F_k`` the sum of each class's weights
        (:mod:`anonaudit.checks.individual`). Without it, a population size or
        sampling fraction adds the same risk with uniform weights ``N / n``.
    count : str, optional
        A column of records per row: the input is a frequency table, one row per group
        with its count (:func:`load`); ``population_table`` is read the same way.
    decimal_comma : sequence of str
        Columns whose numbers are written with a decimal comma (:func:`load`).
    population_table : path, frame or ClassTable, optional
        The attacker's identified table (a voter list, a census extract) with the QI
        columns in the release's coding (generalized by ``generalize`` as the release
        is): adds k-map, delta-presence and unique matches
        (:func:`anonaudit.linkage.population_linkage`) as
        :attr:`AuditReport.linkage`. Read with the same options as ``source``.
    k_map : int, optional
        With ``population_table``: every release class must match at least this many of its
        records (k-map; El Emam & Dankar 2008), a verdict of the audit.
    max_work : int or None
        Refuse, before they start, a QI analysis, SUDA or non-monotone advice search
        whose estimated work exceeds this (:mod:`anonaudit.work`); ``None``: no limit.

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
    reading: dict[str, Any] = {
        "sep": sep,
        "encoding": encoding,
        "na_values": na_values,
        "format": format,
        "filter": filter,
        "storage_options": storage_options,
        "delta_version": delta_version,
        "missing_columns": missing_columns,
    }
    engines = {"engine": engine, "scheduler": scheduler, "progress": progress, "count": count}
    if isinstance(source, ClassTable):
        table = source.recode(dict.fromkeys(decimal_comma, from_decimal_comma))
    else:
        table = load(
            source,
            quasi_identifiers=quasi_identifiers,
            sensitive=sensitive,
            weights=weights,
            decimal_comma=decimal_comma,
            **reading,
            **engines,
        )
    if population_table is not None and not isinstance(population_table, ClassTable):
        population_table = load(
            population_table,
            quasi_identifiers=quasi_identifiers,
            decimal_comma=[c for c in decimal_comma if c in quasi_identifiers],
            **reading,
            **engines,
        )
    if nulls != "wildcard":
        _refuse_null_quasi_identifiers(table)
    report = audit_table(
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
        generalize=generalize,
        advise_suppression=advise_suppression,
        qi_analysis=qi_analysis,
        suda=suda,
        advise=advise,
        suppression_limit=suppression_limit,
        max_results=max_results,
        weights=weights,
        population_table=population_table,
        k_map=k_map,
        max_work=max_work,
        progress=progress,
    )
    # The inputs' other columns are sampled again (a bounded read) for direct identifiers.
    sources = sample_sources(source, **reading)
    numbers = [name for name in (weights, count) if name is not None]
    return replace(report, identifiers=find_identifiers(report.table, sources, ignore=numbers))


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
    generalize: Mapping[str, int] | None = None,
    advise_suppression: bool = True,
    qi_analysis: bool | int | None = None,
    suda: bool | int | None = None,
    advise: bool = False,
    suppression_limit: float = 0.0,
    max_results: int | None = 10,
    weights: str | None = None,
    population_table: ClassTable | None = None,
    k_map: int | None = None,
    max_work: int | None = DEFAULT_MAX_WORK,
    progress: Progress | None = None,
) -> AuditReport:
    """Run every check on a class table; see :func:`audit` for the parameters.

    ``weights`` here only names the column :attr:`ClassTable.weights` came from.
    """
    policy = policy or Policy()
    if population_size is not None and sampling_fraction is not None:
        raise ParameterError("give population_size or sampling_fraction, not both")
    if nulls not in ("value", "drop", "wildcard"):
        raise ParameterError(f"nulls must be 'value', 'drop' or 'wildcard' (got {nulls!r})")
    qi_specs = {c: h for c, h in (hierarchies or {}).items() if c in table.quasi_identifiers}
    sa_hierarchies = {c: h for c, h in (hierarchies or {}).items() if c not in qi_specs}
    if advise:
        _check_advise(qi_specs, nulls)
    original = table
    generalization = _generalization(table, qi_specs, generalize)
    if generalization is not None:
        table = generalization.apply(table)
    if population_table is not None and generalize:  # the release's coding, alike
        levelled = _generalization(population_table, qi_specs, generalize)
        assert levelled is not None
        population_table = levelled.apply(population_table)
    if k_map is not None and population_table is None:
        raise ParameterError("k-map counts matches in a population table: give one")
    defaults = {sa: "hierarchical" for sa in sa_hierarchies}
    defaults.update({sa: "matrix" for sa in ground_distances or {}})
    distances = _per_sa(table.sensitive, distance, defaults)
    null_counts = table.null_counts()
    rows_read = table.rows
    audited = table.without_null_quasi_identifiers() if nulls == "drop" else table
    if audited.rows == 0:
        raise ColumnError("every record has a null quasi-identifier; nothing is left to audit")
    hierarchy_objects = {
        sa: h if isinstance(h, Hierarchy) else Hierarchy.from_csv(h)
        for sa, h in sa_hierarchies.items()
    }
    ground_objects = {
        sa: g if isinstance(g, GroundDistance) else GroundDistance.from_csv(g)
        for sa, g in (ground_distances or {}).items()
    }
    recursive_c, recursive_l = policy.recursive or (None, None)
    fk = class_frequencies(audited, nulls="wildcard")[0] if nulls == "wildcard" else None
    individual = None
    given = population_size is not None or sampling_fraction is not None
    if audited.weights is not None or given:
        individual = individual_risk(
            audited,
            nulls=nulls,
            threshold=risk_threshold,
            population_size=population_size,
            sampling_fraction=sampling_fraction,
            weight_column=weights,
        )
    population = None
    if population_size is not None or sampling_fraction is not None:
        population = population_uniqueness(
            audited,
            population_size=population_size,
            sampling_fraction=sampling_fraction,
            model=population_model,
        )
    classes = len(audited.classes)
    n_qi = len(audited.quasi_identifiers)
    for option, asked in (("--qi-analysis", qi_analysis), ("--suda", suda)):
        if asked is not None and asked is not False:
            size = _subset_size(asked, n_qi)
            check_work(
                f"{option} {size} over {n_qi} QIs and {classes:,} classes",
                subsets(n_qi, size) * (classes + SUBSET_OVERHEAD),
                max_work,
                "class-subset checks",
            )
    report = AuditReport(
        quasi_identifiers=table.quasi_identifiers,
        sensitive=table.sensitive,
        rows=audited.rows,
        sources=table.sources,
        nulls=null_counts,
        null_policy=nulls,
        dropped_records=rows_read - audited.rows,
        policy=policy,
        k_anonymity=k_anonymity(audited, k=policy.k, fk=fk),
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
        risk=prosecutor_risk(audited, threshold=risk_threshold, max_highest=policy.max_risk, fk=fk),
        individual=individual,
        linkage=None
        if population_table is None
        else population_linkage(audited, population_table, k=k_map),
        utility=information_loss(audited, k=policy.k, generalization=generalization),
        generalization=generalization,
        table=audited,
        population=population,
        journalist=None
        if population is None
        else journalist_risk(audited, threshold=risk_threshold),
        marketer=None if population is None else marketer_risk(audited),
        qi_analysis=None
        if qi_analysis is None or qi_analysis is False
        else _with_steps(
            progress,
            "QI analysis",
            subsets(n_qi, _subset_size(qi_analysis, n_qi)) + n_qi,
            "QI subsets",
            lambda steps: analyse_quasi_identifiers(
                audited, max_size=_size(qi_analysis), steps=steps
            ),
        ),
        suda=None
        if suda is None or suda is False
        else _with_steps(
            progress,
            "SUDA",
            subsets(n_qi, _subset_size(suda, n_qi)),
            "QI subsets",
            lambda steps: find_special_uniques(
                audited,
                max_msu_size=_size(suda),
                dis_fraction=DEFAULT_DIS_FRACTION
                if population is None
                else population.sampling_fraction,
                steps=steps,
            ),
        ),
    )
    if advise_suppression and report.passed is False:
        from anonaudit.advice.suppression import suppression_advice

        reaudit = functools.partial(
            audit_table,
            policy=policy,
            distance=distances,
            hierarchies=hierarchy_objects,
            orders=orders,
            ground_distances=ground_objects,
            risk_threshold=risk_threshold,
            advise_suppression=False,
        )
        report = replace(report, suppression=suppression_advice(report, reaudit))
    if advise:
        from anonaudit.advice.lattice import advise as search
        from anonaudit.advice.lattice import qi_hierarchies

        searched = original.without_null_quasi_identifiers() if nulls == "drop" else original
        lattice_hierarchies = qi_hierarchies(searched, qi_specs)
        nodes = math.prod(h.height + 1 for h in lattice_hierarchies.values())
        advice = search(
            searched,
            hierarchies=lattice_hierarchies,
            policy=policy,
            suppression_limit=suppression_limit,
            max_results=max_results,
            max_work=max_work,
            steps=None
            if progress is None
            else progress.steps("advice search", nodes, "lattice nodes", exact=False),
            audit_options={
                "distance": distances,
                "hierarchies": hierarchy_objects,
                "orders": orders,
                "ground_distances": ground_objects,
                "risk_threshold": risk_threshold,
            },
        )
        report = replace(report, advice=advice)
        if progress is not None:
            progress.finish()
    return report


def _subset_size(asked: bool | int, n_qi: int) -> int:
    """The largest QI subset an analysis asked as ``asked`` visits."""
    return default_max_subset_size(n_qi) if asked is True else min(int(asked), n_qi)


def _with_steps(
    progress: Progress | None,
    what: str,
    total: int,
    unit: str,
    analysis: Callable[[Steps | None], _Result],
) -> _Result:
    """Run ``analysis`` with a progress display of its ``total`` steps, if any."""
    if progress is None:
        return analysis(None)
    result = analysis(progress.steps(what, total, unit))
    progress.finish()
    return result


def _refuse_null_quasi_identifiers(table: ClassTable) -> None:
    """Refuse an input with a QI null in every row: a wrong column name or null marker.

    Only the input: what suppression leaves of a valid table may lack a QI's values, and
    under ``nulls="wildcard"`` a null matches every value, so such a QI is audited.
    """
    null_counts = table.null_counts()
    for name in table.quasi_identifiers:
        if null_counts[name] == table.rows:
            raise ColumnError(
                f"quasi-identifier {name!r} is null in every row; check the column name or --na"
            )


def _check_advise(qi_specs: Mapping[str, object], nulls: NullPolicy) -> None:
    """Refuse an advice search the lattice cannot run, before the audit's work."""
    if not qi_specs:
        raise ParameterError(
            "advise needs a hierarchy for at least one quasi-identifier: "
            "--hierarchy COL=FILE|interval:W1,W2,...|prefix[:N]"
        )
    if nulls == "wildcard":
        raise ParameterError(
            "advise counts null QI values as a value or drops them; use --nulls value or drop"
        )


def _generalization(
    table: ClassTable,
    specs: Mapping[str, Hierarchy | str | os.PathLike[str]],
    levels: Mapping[str, int] | None,
) -> Generalization | None:
    """The generalization ``levels`` asks for, with the QI hierarchies ``specs`` names."""
    hierarchies = {
        qi: qi_hierarchy(spec, pc.unique(table.keys.column(qi)).to_pylist(), column=qi)
        for qi, spec in specs.items()
    }
    if not levels:
        return None
    for qi in levels:
        if qi not in table.quasi_identifiers:
            raise ParameterError(
                f"cannot generalize {qi!r}: it is not a quasi-identifier "
                f"({', '.join(table.quasi_identifiers)})"
            )
    return Generalization(hierarchies, dict(levels))


def _size(asked: bool | int) -> int | None:
    """The subset size asked for an optional analysis; ``None`` (default) for ``True``."""
    return None if asked is True else asked


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
