"""The front door: :func:`load` a class table, :func:`audit` it, read the :class:`AuditReport`."""

from __future__ import annotations

import datetime as _dt
import functools
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.checks.disclosure import DisclosureResult
from anonaudit.checks.kanonymity import KAnonymityResult
from anonaudit.checks.ldiversity import LDiversityResult
from anonaudit.checks.risk import RiskResult
from anonaudit.checks.tcloseness import TClosenessResult
from anonaudit.checks.utility import InformationLoss, information_loss
from anonaudit.checks.wildcard import NullPolicy, class_frequencies
from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.engines.local import Progress
from anonaudit.errors import ColumnError, InputError, ParameterError, PolicyViolationError
from anonaudit.generalization import Generalization, qi_hierarchy
from anonaudit.hierarchy import Hierarchy
from anonaudit.identifiers import Identifier, find_identifiers, sample_sources
from anonaudit.loading import Source, load
from anonaudit.margins import margin_values, wide_margin
from anonaudit.measures import Analysis, Context, Measure, Setting, by_key, in_order
from anonaudit.measures import analyses as registered_analyses
from anonaudit.options import (
    AUDIT_KEYWORDS,
    KEYWORDS,
    Analyses,
    AuditOptions,
    EngineOptions,
    ReadOptions,
    Roles,
    deprecated,
    from_keywords,
)
from anonaudit.policy import Policy
from anonaudit.report.html import DEFAULT_MAX_ROWS
from anonaudit.sources.csv import from_decimal_comma
from anonaudit.vocabulary import SUPPRESSED, Judged, Verdict

if TYPE_CHECKING:  # anonaudit.dp and anonaudit.advice import this module
    from anonaudit.advice.lattice import Advice
    from anonaudit.advice.suppression import SuppressionAdvice
    from anonaudit.checks.individual import IndividualRisk
    from anonaudit.checks.linkage import PopulationLinkage
    from anonaudit.checks.population import JournalistRisk, MarketerRisk, PopulationUniqueness
    from anonaudit.checks.qi_analysis import QIAnalysis
    from anonaudit.checks.suda import SudaResult
    from anonaudit.dp.companion import DPReport
    from anonaudit.linkage.history import ReleaseHistory
    from anonaudit.measures.population import PopulationRisks
    from anonaudit.sources.base import Source as Opened

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
    suppressed_records : int
        Records read as suppressed, every QI ``*`` (:data:`anonaudit.vocabulary.SUPPRESSED`,
        ARX's convention and what ``anonaudit advise --out`` writes): in no class and
        not in :attr:`rows`; :func:`audit` only.
    policy : Policy
        The thresholds checked.
    results : mapping of str to result
        Every measure's result (:data:`anonaudit.measures.MEASURES`) by its key; a
        measure per SA holds a dict of SA to result. :meth:`result` reads one; the
        properties :attr:`k_anonymity`, :attr:`l_diversity`, :attr:`t_closeness`,
        :attr:`disclosure` and :attr:`risk` name the built-in ones.
    utility : InformationLoss
        Information loss of the audited (possibly generalized) table
        (:mod:`anonaudit.checks.utility`).
    table : ClassTable
        The class table the measures were computed from.
    audited_at : datetime.datetime
        When the audit ran (UTC).
    analyses : mapping of str to result
        The result of every optional analysis that ran
        (:data:`anonaudit.measures.ANALYSES`), by its key; :meth:`analysed` lists them
        with their analysis, and the properties :attr:`population`,
        :attr:`journalist`, :attr:`marketer`, :attr:`individual`, :attr:`linkage`,
        :attr:`qi_analysis` and :attr:`suda` name the built-in ones.
    dp : DPReport or None
        The differential-privacy companion (:func:`anonaudit.dp.companion` of
        ``table``), when asked for: ``dataclasses.replace(report, dp=...)``.
    generalization : Generalization or None
        The generalization the data was audited under (``generalize=``), if any.
    suppression : SuppressionAdvice or None
        When the policy fails: the classes to suppress so the rest passes
        (:mod:`anonaudit.advice.suppression`).
    advice : Advice or None
        The Pareto-best generalizations (and suppression) that pass the policy, when
        asked for (:func:`anonaudit.advice.advise`).
    identifiers : tuple of Identifier
        Columns that likely identify a person directly, audited or not
        (:func:`anonaudit.identifiers.find_identifiers`; :func:`audit` only).
    identifiers_checked : bool
        Whether the inputs were searched for direct identifiers (:func:`audit` does;
        :func:`audit_table` of a bare class table cannot). When they were, the first
        verdict judges them: it fails while a column detected as a direct identifier
        is neither a QI, an SA nor allowed (:attr:`allowed_identifiers`).
    allowed_identifiers : tuple of str
        The columns released knowingly although they may identify people directly
        (:attr:`anonaudit.Roles.allowed_identifiers`).
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
    results: Mapping[str, Any] = field(repr=False)
    utility: InformationLoss
    table: ClassTable = field(repr=False)
    audited_at: _dt.datetime = field(default_factory=lambda: _dt.datetime.now(_dt.UTC))
    analyses: Mapping[str, Any] = field(default_factory=dict, repr=False)
    dp: DPReport | None = field(default=None, repr=False)
    generalization: Generalization | None = None
    suppression: SuppressionAdvice | None = None
    advice: Advice | None = field(default=None, repr=False)
    identifiers: tuple[Identifier, ...] = ()
    identifiers_checked: bool = False
    suppressed_records: int = 0
    allowed_identifiers: tuple[str, ...] = ()
    history: ReleaseHistory | None = field(default=None, repr=False)

    def result(self, measure: Measure[_Result], sensitive: str | None = None) -> _Result:
        """The result of ``measure`` (of SA ``sensitive``, for a measure per SA)."""
        found = self.results[measure.key]
        return cast("_Result", found[sensitive] if measure.per_sensitive else found)

    @property
    def k_anonymity(self) -> KAnonymityResult:
        """k-anonymity (:mod:`anonaudit.measures.k_anonymity`)."""
        return cast("KAnonymityResult", self.results["k_anonymity"])

    @property
    def l_diversity(self) -> dict[str, LDiversityResult]:
        """l-diversity per SA (:mod:`anonaudit.measures.l_diversity`)."""
        return cast("dict[str, LDiversityResult]", self.results["l_diversity"])

    @property
    def t_closeness(self) -> dict[str, TClosenessResult]:
        """t-closeness per SA (:mod:`anonaudit.measures.t_closeness`)."""
        return cast("dict[str, TClosenessResult]", self.results["t_closeness"])

    @property
    def disclosure(self) -> dict[str, DisclosureResult]:
        """alpha, beta and delta per SA (:mod:`anonaudit.measures.disclosure`)."""
        return cast("dict[str, DisclosureResult]", self.results["disclosure"])

    @property
    def risk(self) -> RiskResult:
        """Prosecutor risk (:mod:`anonaudit.measures.risk`)."""
        return cast("RiskResult", self.results["risk"])

    def analysed(self) -> Iterator[tuple[Analysis[Any], Any]]:
        """Each optional analysis that ran, with its result, in report order."""
        for analysis in registered_analyses():
            if analysis.key in self.analyses:
                yield analysis, self.analyses[analysis.key]

    def _population_risks(self) -> PopulationRisks | None:
        return cast("PopulationRisks | None", self.analyses.get("population"))

    @property
    def population(self) -> PopulationUniqueness | None:
        """Estimated population uniques, when a population size or sampling fraction is
        given (:mod:`anonaudit.measures.population`)."""
        found = self._population_risks()
        return None if found is None else found.uniqueness

    @property
    def journalist(self) -> JournalistRisk | None:
        """Journalist risk, with :attr:`population`."""
        found = self._population_risks()
        return None if found is None else found.journalist

    @property
    def marketer(self) -> MarketerRisk | None:
        """Marketer risk, with :attr:`population`."""
        found = self._population_risks()
        return None if found is None else found.marketer

    @property
    def individual(self) -> IndividualRisk | None:
        """sdcMicro's individual and global risk, with survey weights or a population
        size or sampling fraction (:mod:`anonaudit.measures.individual`)."""
        return cast("IndividualRisk | None", self.analyses.get("individual"))

    @property
    def linkage(self) -> PopulationLinkage | None:
        """k-map, delta-presence and unique matches against a population table, when one
        is given (:mod:`anonaudit.measures.linkage`)."""
        return cast("PopulationLinkage | None", self.analyses.get("linkage"))

    @property
    def qi_analysis(self) -> QIAnalysis | None:
        """Distinction and separation of QI subsets, and k without each QI, when asked
        for (:mod:`anonaudit.measures.qi_analysis`)."""
        return cast("QIAnalysis | None", self.analyses.get("qi_analysis"))

    @property
    def suda(self) -> SudaResult | None:
        """Minimal sample uniques and SUDA / DIS-SUDA scores per class, when asked for
        (:mod:`anonaudit.measures.suda`)."""
        return cast("SudaResult | None", self.analyses.get("suda"))

    def verdicts(self) -> list[Verdict]:
        """A :class:`~anonaudit.vocabulary.Verdict` for every threshold group the policy
        sets (one per measure, and per SA for the measures of an SA)."""
        result: list[Verdict] = []

        def add(judged: Judged, passed: bool | None, sensitive: str | None = None) -> None:
            if passed is not None:
                result.append(Verdict(judged, passed, sensitive))

        if self.identifiers_checked:
            add(Judged.DIRECT_IDENTIFIERS, not self.undeclared_identifiers)
        for measure, sa in in_order(self.sensitive):
            add(measure.judged, measure.passed(self.result(measure, sa)), sa)
        for analysis, found in self.analysed():
            if analysis.judged is not None:
                add(analysis.judged, analysis.passed(found))
        if self.history is not None:
            result += self.history.verdicts()
        return result

    @property
    def undeclared_identifiers(self) -> tuple[Identifier, ...]:
        """The likely direct identifiers that fail the audit: columns of the input
        declared neither a QI nor an SA, and not allowed (:attr:`allowed_identifiers`).
        A release holding one may not go out as it is, whatever the measures say."""
        return tuple(
            i
            for i in self.identifiers
            if i.declared_role == "not audited" and i.column not in self.allowed_identifiers
        )

    @property
    def passed(self) -> bool | None:
        """Whether every threshold is met and no undeclared direct identifier is left
        (:attr:`undeclared_identifiers`); ``None`` when the policy sets no threshold
        and no undeclared identifier fails the audit (nothing was judged)."""
        verdicts = self.verdicts()
        if not all(v.passed for v in verdicts):
            return False
        judged = [v for v in verdicts if v.judged is not Judged.DIRECT_IDENTIFIERS]
        return True if judged else None

    def raise_for_violations(self) -> None:
        """Raise :class:`PolicyViolationError` listing the failed measures, if any."""
        failed = [v.name for v in self.verdicts() if not v.passed]
        if failed:
            raise PolicyViolationError("the data violates the policy: " + "; ".join(failed))

    def to_dict(self, *, max_classes: int | None = 100, redact: bool = True) -> dict[str, Any]:
        """The JSON report as a dict (see :mod:`anonaudit.report.json`); the QI values of
        the classes it lists are ``"[redacted]"`` unless ``redact=False``."""
        from anonaudit.report.json import report_to_dict

        return report_to_dict(self, max_classes=max_classes, redact=redact)

    def to_json(self, *, max_classes: int | None = 100, redact: bool = True) -> str:
        """The JSON report as text (see :meth:`to_dict`)."""
        from anonaudit.report.json import dumps

        return dumps(self.to_dict(max_classes=max_classes, redact=redact))

    def to_html(
        self, *, redact: bool = True, command: str | None = None, max_rows: int = DEFAULT_MAX_ROWS
    ) -> str:
        """The HTML report as text (see :func:`anonaudit.report.html.render_html`)."""
        from anonaudit.report.html import render_html

        return render_html(self, redact=redact, command=command, max_rows=max_rows)

    def save_html(
        self,
        path: str | os.PathLike[str],
        *,
        redact: bool = True,
        command: str | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        """Write the HTML report to ``path`` atomically (see :func:`to_html`)."""
        from anonaudit.report.html import save_html

        save_html(self, path, redact=redact, command=command, max_rows=max_rows)


def audit(
    source: Source | ClassTable,
    roles: Roles | None = None,
    options: AuditOptions | None = None,
    *,
    reading: ReadOptions | None = None,
    engine: EngineOptions | str | None = None,
    **keywords: Any,
) -> AuditReport:
    """Audit ``source`` for every syntactic anonymity measure: :func:`load` it, then
    :func:`audit_table`.

    Parameters
    ----------
    source : path, list of paths, pandas.DataFrame, pyarrow.Table or ClassTable
        The data (see :func:`load`), or a class table built already.
    roles : Roles
        The QI and SA columns, and any weight or count column.
    options : AuditOptions, optional
        The thresholds, distances, population and analyses (default: measure only).
    reading : ReadOptions, optional
        How the inputs (and ``options.population.table``) are read.
    engine : EngineOptions, optional
        Where the class table is built, and where progress is shown (a name here is the
        deprecated ``engine=`` keyword).
    **keywords
        The flat keyword arguments of earlier versions (``quasi_identifiers=``,
        ``policy=``, ``sep=``, ...: :data:`anonaudit.options.KEYWORDS`), deprecated:
        they stop working in 0.3.

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit import AuditOptions, Policy, Roles
    >>> df = pd.DataFrame({"zip": ["02134", "02134", "02139"],
    ...                    "disease": ["flu", "cold", "flu"]})
    >>> report = audit(df, Roles(["zip"], ["disease"]), AuditOptions(policy=Policy(k=2)))
    >>> report.k_anonymity.k, report.passed
    (1, False)
    """
    if isinstance(engine, str):  # the deprecated engine name
        keywords["engine"], engine = engine, None
    if keywords:
        given = (roles, options, reading, engine)
        deprecated(
            "audit",
            list(keywords),
            "pass Roles, AuditOptions, ReadOptions, EngineOptions",
            allowed=KEYWORDS,
            alongside=any(o is not None for o in given),
        )
        split = from_keywords(
            keywords,
            quasi_identifiers=keywords.get("quasi_identifiers", ()),
            sensitive=keywords.get("sensitive", ()),
        )
        roles = Roles(**split.roles) if "quasi_identifiers" in split.roles else None
        options, reading, engine = split.audit, split.reading, split.engine
    options = options or AuditOptions()
    reading = reading or ReadOptions()
    engine = engine or EngineOptions()
    if isinstance(source, ClassTable):
        roles = roles or Roles(source.quasi_identifiers, source.sensitive)
        table = source.recode(dict.fromkeys(reading.decimal_comma, from_decimal_comma))
    else:
        if roles is None:
            raise ParameterError("name the columns' roles: Roles(quasi_identifiers, sensitive)")
        table = load(source, roles, reading=reading, engine=engine)
    population = options.population
    if population.table is not None and not isinstance(population.table, ClassTable):
        levelled = load(
            population.table,
            Roles(roles.quasi_identifiers, count=roles.count),
            reading=replace(
                reading,
                decimal_comma=[c for c in reading.decimal_comma if c in roles.quasi_identifiers],
            ),
            engine=engine,
        )
        options = replace(options, population=replace(population, table=levelled))
    # The inputs opened once more for bounded reads: the margins of a frequency table
    # (before anything is measured) and the direct identifiers (after).
    sources = sample_sources(source, **reading.keywords())
    if roles.count is not None:
        _refuse_margins(table, sources, roles)
    # ARX's convention, as advise --out writes it: a record starred in every QI is
    # suppressed, in no class and matched against no population.
    table, suppressed = table.without_suppressed()
    if suppressed and not len(table):
        raise ColumnError(
            f"every record is suppressed (every quasi-identifier is {SUPPRESSED!r}); "
            "nothing is left to audit"
        )
    if options.nulls != "wildcard":
        _refuse_null_quasi_identifiers(table)
    report = audit_table(table, options, weights=roles.weights, progress=engine.progress)
    numbers = [name for name in (roles.weights, roles.count) if name is not None]
    return replace(
        report,
        identifiers=find_identifiers(report.table, sources, ignore=numbers),
        identifiers_checked=True,
        allowed_identifiers=tuple(roles.allowed_identifiers),
        suppressed_records=suppressed,
    )


def audit_table(
    table: ClassTable,
    options: AuditOptions | None = None,
    *,
    weights: str | None = None,
    progress: Progress | None = None,
    **keywords: Any,
) -> AuditReport:
    """Run every check on a class table.

    Parameters
    ----------
    table : ClassTable
        The class table (:func:`load`).
    options : AuditOptions, optional
        The thresholds, distances, population and analyses (default: measure only).
    weights : str, optional
        The name of the column :attr:`ClassTable.weights` came from, for the report.
    progress : Progress, optional
        Where to show the steps of the long analyses (QI analysis, SUDA, the advice
        search).
    **keywords
        The flat keyword arguments of earlier versions (``policy=``, ``distance=``,
        ...), deprecated: they stop working in 0.3.

    Returns
    -------
    AuditReport
    """
    if keywords:
        deprecated(
            "audit_table",
            list(keywords),
            "pass AuditOptions",
            allowed=AUDIT_KEYWORDS,
            alongside=options is not None,
        )
        options = from_keywords(
            keywords, quasi_identifiers=table.quasi_identifiers, sensitive=table.sensitive
        ).audit
    options = options or AuditOptions()
    options.check_roles(table)
    policy, nulls, analyses = options.policy, options.nulls, options.analyses
    if analyses.advise:
        _check_advise(options.hierarchies, nulls)
    original = table
    generalization = _generalization(table, options.hierarchies, options.generalize)
    if generalization is not None:
        table = generalization.apply(table)
    population_table = options.population.table
    if population_table is not None and options.generalize:  # the release's coding, alike
        levelled = _generalization(population_table, options.hierarchies, options.generalize)
        assert levelled is not None
        population_table = levelled.apply(population_table)
    distances = {sa: options.distance_for(sa).resolved() for sa in table.sensitive}
    null_counts = table.null_counts()
    rows_read = table.rows
    audited = table.without_null_quasi_identifiers() if nulls == "drop" else table
    if audited.rows == 0:
        raise ColumnError("every record has a null quasi-identifier; nothing is left to audit")
    risk_threshold = options.risk_threshold
    fk = class_frequencies(audited, nulls="wildcard")[0] if nulls == "wildcard" else None
    setting = Setting(audited, options, population_table, weights, progress)
    asked = [analysis for analysis in registered_analyses() if analysis.asked(setting)]
    for analysis in asked:
        analysis.check(setting)
    # The analyses first: one that cannot run (weights missing) says so before the
    # measures take their time, as it always did.
    analysed = {analysis.key: analysis.compute(setting) for analysis in asked}
    context = Context(audited, policy, risk_threshold, distances, wildcard_sizes=fk)
    measured = by_key(table.sensitive, lambda measure, sa: measure.compute(context, sa))
    report = AuditReport(
        quasi_identifiers=table.quasi_identifiers,
        sensitive=table.sensitive,
        rows=audited.rows,
        sources=table.sources,
        nulls=null_counts,
        null_policy=nulls,
        dropped_records=rows_read - audited.rows,
        policy=policy,
        results=measured,
        analyses=analysed,
        utility=information_loss(audited, k=policy.k, generalization=generalization),
        generalization=generalization,
        table=audited,
    )
    # What a re-audit of part of the table (suppression rounds, lattice nodes) measures:
    # the thresholds and the measures' own settings, on the table as it is, with nulls
    # meaning what they meant in the audit (a wildcard still matches every value).
    measures = AuditOptions(
        policy=policy,
        nulls=nulls,
        risk_threshold=risk_threshold,
        distances=distances,
        analyses=Analyses(suppression=False),
    )
    if analyses.suppression and report.passed is False:
        from anonaudit.advice.suppression import suppression_advice

        reaudit = functools.partial(audit_table, options=measures)
        report = replace(report, suppression=suppression_advice(report, reaudit))
    if analyses.advise:
        from anonaudit.advice.lattice import advise as search
        from anonaudit.advice.lattice import qi_hierarchies

        searched = original.without_null_quasi_identifiers() if nulls == "drop" else original
        lattice_hierarchies = qi_hierarchies(searched, options.hierarchies)
        nodes = math.prod(h.height + 1 for h in lattice_hierarchies.values())
        advice = search(
            searched,
            hierarchies=lattice_hierarchies,
            policy=policy,
            suppression_limit=analyses.suppression_limit,
            max_results=analyses.max_results,
            max_work=analyses.max_work,
            steps=None
            if progress is None
            else progress.steps("advice search", nodes, "lattice nodes", exact=False),
            options=measures,
        )
        report = replace(report, advice=advice)
        if progress is not None:
            progress.finish()
    return report


def _refuse_margins(table: ClassTable, sources: Sequence[Opened], roles: Roles) -> None:
    """Refuse a frequency table holding its margins (:mod:`anonaudit.margins`): a total
    row or a wide layout would count people twice. The wide layout is judged on the
    first batch of the first of ``sources`` (:func:`anonaudit.identifiers.sample_sources`)."""
    found = margin_values(table)
    if not found:
        for opened in sources[:1]:
            sample = next(iter(opened.batches(list(opened.columns))), None)
            wide = None if sample is None else wide_margin(
                pa.Table.from_batches([sample]), str(roles.count), roles.columns
            )
            found += [wide] if wide is not None else []
    if found:
        first = found[0]
        remedy = (
            f"leave it out (--filter '{first.column}!={first.value}') and audit again"
            if first.value is not None
            else "give the table in long form (one row per cell, one count column)"
        )
        raise InputError(
            f"--count {roles.count}: {first.sentence}; {remedy}"
            + (f" ({len(found) - 1} more margin(s) found)" if len(found) > 1 else "")
        )


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

