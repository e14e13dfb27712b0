"""The run: :func:`load` a class table, :func:`audit` it (every measure, the optional
analyses, the suppression advice and the lattice search, :func:`advise`), and read the
:class:`~anonaudit.results.AuditReport`."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.classtable import ClassTable
from anonaudit.engines.load import Source, load
from anonaudit.engines.local import limits_in_force
from anonaudit.errors import ColumnError, InputError, ParameterError
from anonaudit.measures import Context, Setting, by_key
from anonaudit.measures import analyses as registered_analyses
from anonaudit.measures.generalization import Generalization, qi_hierarchy
from anonaudit.measures.identifiers import find_identifiers, sample_sources
from anonaudit.measures.margins import margin_values, wide_margin
from anonaudit.measures.utility import information_loss
from anonaudit.measures.wildcard import NullPolicy, class_frequencies
from anonaudit.progress import Progress, Steps
from anonaudit.results import AuditReport
from anonaudit.settings.names import SUPPRESSED
from anonaudit.settings.options import (
    AUDIT_KEYWORDS,
    KEYWORDS,
    Analyses,
    AuditOptions,
    EngineOptions,
    LedgerOptions,
    ReadOptions,
    Roles,
    deprecated,
    from_keywords,
)
from anonaudit.settings.policy import Policy
from anonaudit.sources.csv import from_decimal_comma
from anonaudit.sources.inputs import open_inputs

if TYPE_CHECKING:
    from anonaudit.advice.lattice import Advice
    from anonaudit.dp.options import DPOptions
    from anonaudit.hierarchy import Hierarchy
    from anonaudit.sources.base import Source as Opened

__all__ = [
    "AuditReport",
    "Source",
    "advise",
    "audit",
    "audit_table",
    "load",
    "with_dp",
    "with_ledger",
]


def audit(
    source: Source | ClassTable,
    roles: Roles | None = None,
    options: AuditOptions | None = None,
    *,
    reading: ReadOptions | None = None,
    engine: EngineOptions | str | None = None,
    dp: DPOptions | None = None,
    ledger: LedgerOptions | None = None,
    **keywords: Any,
) -> AuditReport:
    """Audit ``source`` for every syntactic anonymity measure: :func:`load` it, then
    :func:`audit_table`; with ``dp``, release the class table under differential privacy
    beside it; with ``ledger``, judge it against the earlier releases of its dataset and
    record it when it passes. The report is the one ``anonaudit audit`` writes for the
    same settings.

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
    dp : DPOptions, optional
        The differential-privacy companion (``--dp-epsilon`` and its options): the
        release, its cost and what a reader learns from it, beside the audit
        (:attr:`AuditReport.dp`).
    ledger : LedgerOptions, optional
        The release ledger (``--ledger``): the release attacked with the earlier ones of
        its dataset (differencing; composition with ``ledger.id``), and recorded when the
        audit passes (:attr:`AuditReport.history`). The ledger is checked before any input
        is read.
    **keywords
        The flat keyword arguments of earlier versions (``quasi_identifiers=``,
        ``policy=``, ``sep=``, ...: :data:`anonaudit.settings.options.KEYWORDS`), deprecated:
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
    with limits_in_force(engine):
        return _audited(source, roles, options, reading, engine, dp, ledger)


def _audited(
    source: Source | ClassTable,
    roles: Roles | None,
    options: AuditOptions,
    reading: ReadOptions,
    engine: EngineOptions,
    dp: DPOptions | None,
    ledger: LedgerOptions | None,
) -> AuditReport:
    """:func:`audit`, its options resolved and its limits in force."""
    if ledger is not None:  # refused before any input is read
        from anonaudit.linkage.ledger import Ledger

        Ledger.check(ledger.file)
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
    if table.rows == 0:  # not "null in every row" (as a QI of no records would say)
        names = ", ".join(stats.name for stats in table.sources) or "the input"
        raise InputError(
            f"{names}: every count in --count {roles.count} is 0, so the table holds no "
            "records; check the count column"
            if roles.count is not None
            else f"{names}: holds no records; nothing to audit"
        )
    if roles.count is not None:
        _refuse_margins(table, sources, roles)
    # ARX's convention, as advise --out writes it: a record starred in every QI is
    # suppressed, in no class and matched against no population.
    table, suppressed = table.without_suppressed(SUPPRESSED)
    if suppressed and not len(table):
        raise ColumnError(
            f"every record is suppressed (every quasi-identifier is {SUPPRESSED!r}); "
            "nothing is left to audit"
        )
    if options.nulls != "wildcard":
        _refuse_null_quasi_identifiers(table)
    report = audit_table(table, options, weights=roles.weights, progress=engine.progress)
    numbers = [name for name in (roles.weights, roles.count) if name is not None]
    report = replace(
        report,
        identifiers=find_identifiers(report.table, sources, ignore=numbers),
        identifiers_checked=True,
        allowed_identifiers=tuple(roles.allowed_identifiers),
        suppressed_records=suppressed,
    )
    if dp is not None:
        report = with_dp(report, dp, options)
    if ledger is not None:
        report = with_ledger(report, ledger, source, reading)
    return report


def with_dp(report: AuditReport, dp: DPOptions, options: AuditOptions) -> AuditReport:
    """``report`` with the DP companion of its class table (:attr:`AuditReport.dp`): the
    release under ``dp``, and what a reader learns from it, measured with the audit's
    ground distances (a reader's t of the data is the audit's)."""
    from anonaudit.dp.companion import companion
    from anonaudit.dp.utility import reader_measures

    released = companion(report.table, dp)
    reader = AuditOptions(distances=options.distances, analyses=Analyses(suppression=False))
    measure = functools.partial(audit_table, options=reader)
    measures = reader_measures(released.release, lambda table: measure(table).t_closeness)
    return replace(report, dp=replace(released, measures=measures))


def with_ledger(
    report: AuditReport,
    ledger: LedgerOptions,
    source: Source | ClassTable,
    reading: ReadOptions | None = None,
) -> AuditReport:
    """``report`` judged against the earlier releases of ``ledger.dataset``
    (:attr:`AuditReport.history`), and recorded when it still passes.

    The release is attacked with the earlier exact releases of the dataset in the ledger
    (:func:`~anonaudit.linkage.history.release_history`: differencing, and composition
    when ``ledger.id`` names the office's record ids, read again from ``source``), and
    recorded, with its records under ``id``, when the audit passes and the ledger does
    not hold this very input for this dataset and recipient yet. The attacks and the
    record are one transaction: another audit of the dataset waits, and is then attacked
    with this release.
    """
    from anonaudit.engines.records import release_records
    from anonaudit.linkage.history import (
        fingerprint_inputs,
        refuse_repeated_ids,
        release_history,
    )
    from anonaudit.linkage.ledger import Ledger

    inputs = _input_paths(source)
    fingerprint = fingerprint_inputs(inputs)
    records = None
    if ledger.id is not None:
        if isinstance(source, ClassTable):
            raise ParameterError(
                "a class table holds no record ids: give the records (a file or a frame) "
                "to keep the release's ids in the ledger"
            )
        opened = open_inputs(source, **(reading or ReadOptions()).keywords())
        records = release_records(opened, report, ledger.id)
        refuse_repeated_ids(records, ",".join(inputs))  # before the ledger is read
    generalization = report.generalization
    transformation = None if generalization is None else {"generalize": dict(generalization.levels)}
    with Ledger.open(ledger.file) as book, book.transaction():
        history = release_history(
            book,
            report.table,
            dataset=ledger.dataset,
            fingerprint=fingerprint,
            records=records,
            transformation=transformation,
            max_classes=None,  # the reports cap their listings
        )
        report = replace(report, history=history)
        known = book.releases(ledger.dataset, ledger.recipient, retired=False)
        # The same input recorded already: known by its bytes, so only when every input
        # is a file (a frame or a URL has no fingerprint, and two of them may differ).
        hashed = bool(inputs) and all(fingerprint.split(","))
        if report.passed is False or (hashed and any(e.fingerprint == fingerprint for e in known)):
            return report
        number = book.record(
            dataset=ledger.dataset,
            fingerprint=fingerprint,
            source=",".join(inputs),
            quasi_identifiers=report.quasi_identifiers,
            sensitive=report.sensitive,
            table=report.table,
            transformation=transformation,
            recipient=ledger.recipient,
            records=records,
        )
    return replace(report, history=replace(history, recorded=number))


def _input_paths(source: Source | ClassTable) -> list[str]:
    """The paths among ``source`` (none for a frame or a class table), as text."""
    items = source if isinstance(source, list | tuple) else [source]
    return [os.fspath(item) for item in items if isinstance(item, str | os.PathLike)]


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
        from anonaudit.advice.lattice import qi_hierarchies

        searched = original.without_null_quasi_identifiers() if nulls == "drop" else original
        lattice_hierarchies = qi_hierarchies(searched, options.hierarchies)
        nodes = math.prod(h.height + 1 for h in lattice_hierarchies.values())
        advice = advise(
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


def advise(
    table: ClassTable,
    *,
    hierarchies: Mapping[str, Hierarchy],
    policy: Policy,
    suppression_limit: float = 0.0,
    max_results: int | None = 10,
    options: AuditOptions | None = None,
    prune: bool = True,
    max_work: int | None = None,
    steps: Steps | None = None,
) -> Advice:
    """Search the generalization lattice of ``table`` for the Pareto-best transformations
    that pass ``policy``, each judged by :func:`audit_table`: the search of
    :func:`anonaudit.advice.lattice.search` (see it for the parameters and the method).

    >>> import pandas as pd
    >>> from anonaudit import Hierarchy, Policy
    >>> t = ClassTable.from_frame(pd.DataFrame({"age": ["31", "32", "41", "42"],
    ...     "count": [2, 1, 2, 1]}), quasi_identifiers=["age"])
    >>> h = Hierarchy.from_rows([["31", "3*"], ["32", "3*"], ["41", "4*"], ["42", "4*"]])
    >>> [x.levels for x in advise(t, hierarchies={"age": h}, policy=Policy(k=3)).transformations]
    [{'age': 1}]
    """
    from anonaudit.advice.lattice import search

    return search(
        table,
        audit=audit_table,
        hierarchies=hierarchies,
        policy=policy,
        suppression_limit=suppression_limit,
        max_results=max_results,
        options=options,
        prune=prune,
        max_work=max_work,
        steps=steps,
    )


def _refuse_margins(table: ClassTable, sources: Sequence[Opened], roles: Roles) -> None:
    """Refuse a frequency table holding its margins (:mod:`anonaudit.measures.margins`): a total
    row or a wide layout would count people twice. The wide layout is judged on the
    first batch of the first of ``sources``
    (:func:`anonaudit.measures.identifiers.sample_sources`)."""
    found = margin_values(table)
    if not found:
        for opened in sources[:1]:
            sample = next(iter(opened.batches(list(opened.columns))), None)
            wide = (
                None
                if sample is None
                else wide_margin(pa.Table.from_batches([sample]), str(roles.count), roles.columns)
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
