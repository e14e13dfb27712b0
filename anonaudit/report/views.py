"""The views of the HTML report: one frozen dataclass per section, built from one result.

A view holds only text ready to print: numbers formatted, quasi-identifier values
redacted when asked, charts drawn (:mod:`anonaudit.report.charts`), failing classes cut
to the rows shown plus a CSV ``data:`` link holding all of them. The templates under
``templates/`` print views and never compute; :mod:`anonaudit.report.html` lists the
sections and renders them. Nothing here computes a measure: sentences compare nothing
the results have not already judged (their ``passed`` and ``verdicts``).
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit import __version__
from anonaudit.csvfile import table_to_csv
from anonaudit.identifiers import SAMPLE_ROWS
from anonaudit.options import DISTANCE_CLASSES
from anonaudit.report import charts
from anonaudit.report.charts import Chart
from anonaudit.report.criteria import criteria
from anonaudit.sources.storage import is_url
from anonaudit.vocabulary import REDACTED

if TYPE_CHECKING:
    from anonaudit.auditing import AuditReport
    from anonaudit.checks import (
        DisclosureResult,
        KAnonymityResult,
        LDiversityResult,
        RiskResult,
        TClosenessResult,
    )
    from anonaudit.classtable import Classes, SourceStats
    from anonaudit.dp.companion import DPReport
    from anonaudit.dp.contrast import AttackerContrast, SensitiveContrast
    from anonaudit.dp.utility import Measures

__all__ = [
    "REDACTED",
    "ColumnRow",
    "ContrastRow",
    "DPView",
    "DatasetView",
    "Fact",
    "IdentifiersView",
    "Listing",
    "MeasureView",
    "Options",
    "SourceRow",
    "TableRow",
    "VerdictRow",
    "VerdictView",
    "audit_time",
    "contents_notice",
    "dataset_view",
    "describe_call",
    "disclosure_view",
    "dp_view",
    "identifiers_view",
    "join_names",
    "k_view",
    "l_view",
    "listing_csv",
    "make_listing",
    "risk_view",
    "slugs",
    "t_view",
    "verdict_view",
]

_OPEN_ROWS = 10  # tables with more rows start collapsed
_FARTHEST = 3  # classes drawn beside the whole table's distribution


@dataclass(frozen=True)
class Fact:
    """One measured value, as printed: ``label`` and ``value``."""

    label: str
    value: str


@dataclass(frozen=True)
class Listing:
    """A table of classes: the first rows on the page, all of them in a CSV download.

    Attributes
    ----------
    caption : str
        What the rows are and in which order.
    summary : str
        The text of the ``<summary>`` that opens the table.
    headers : tuple of str
        Column headings.
    numeric_from : int
        Index of the first numeric column (the QI columns come first).
    rows : tuple of tuple of str
        The rows shown, as printed.
    collapsed : bool
        Whether the table starts closed (a long one).
    csv_href : str
        ``data:text/csv;base64,...`` link holding the first ``embedded`` rows,
        formula-safe.
    csv_name : str
        File name offered for the download, and of the full listing's file.
    download : str
        The text of the download link.
    embedded : int
        Rows in the page's CSV download (at most :attr:`Options.max_classes`).
    total : int
        Rows of the whole listing.
    identifying : bool
        Whether the rows carry values from the data (quasi-identifier values), which the
        page's notice counts.
    file_href : str or None
        Link to the file holding every row, written beside the report
        (:attr:`Options.listings_href`); ``None`` when none is written.
    full : pyarrow.Table or None
        Every row, for that file; never printed.
    """

    caption: str
    summary: str
    headers: tuple[str, ...]
    numeric_from: int
    rows: tuple[tuple[str, ...], ...]
    collapsed: bool
    csv_href: str
    csv_name: str
    download: str
    embedded: int
    total: int
    identifying: bool
    file_href: str | None
    full: pa.Table | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class MeasureView:
    """A measure's section: what it is, the values, the charts, the failing classes.

    Attributes
    ----------
    lead : str
        One sentence on what the measure says.
    about : str
        Anchor of its explanation under "What the measures mean".
    facts : tuple of Fact
        Measured values and thresholds.
    charts : tuple of Chart
        Drawn in order.
    outcome : str
        Which classes fail, or that none does, or that no threshold is set.
    listing : Listing or None
        The failing classes, if any.
    """

    lead: str
    about: str
    facts: tuple[Fact, ...]
    charts: tuple[Chart, ...]
    outcome: str
    listing: Listing | None


@dataclass(frozen=True)
class VerdictRow:
    """One threshold of the policy: the measured value, the bound and a sentence."""

    check: str
    anchor: str
    measured: str
    asks: str
    passed: bool
    sentence: str


@dataclass(frozen=True)
class CriterionRow:
    """One of WP216's three criteria: its status, what backs it, what was not assessed."""

    name: str
    question: str
    status: str
    backing: str
    gaps: tuple[str, ...]


@dataclass(frozen=True)
class VerdictView:
    """The verdict: ``status`` is ``"pass"``, ``"fail"`` or ``"none"`` (no threshold)."""

    status: str
    headline: str
    rows: tuple[VerdictRow, ...]
    criteria: tuple[CriterionRow, ...] = ()


@dataclass(frozen=True)
class SourceRow:
    """One input file or frame, with its SHA-256 (or why there is none)."""

    name: str
    format: str
    rows: str
    size: str
    sha256: str


@dataclass(frozen=True)
class ColumnRow:
    """One audited column: its role and its null count."""

    name: str
    role: str
    nulls: str


@dataclass(frozen=True)
class DatasetView:
    """The data audited and how to reproduce the audit.

    ``audited_at`` and ``version`` change on every run; the template prints each in an
    element of its own, on its own line, marked ``data-volatile``.
    """

    sources: tuple[SourceRow, ...]
    columns: tuple[ColumnRow, ...]
    facts: tuple[Fact, ...]
    command: str
    command_note: str
    audited_at: str
    audited_at_iso: str
    version: str


@dataclass(frozen=True)
class ContrastRow:
    """One SA: what the syntactic release lets an attacker believe beside ε-DP, in
    ``sentence``, and the prior-posterior ``chart``."""

    sensitive: str
    anchor: str
    sentence: str
    chart: Chart


@dataclass(frozen=True)
class TableRow:
    """One row of a small table: its heading ``label`` and its ``cells``, as printed."""

    label: str
    cells: tuple[str, ...]


@dataclass(frozen=True)
class DPView:
    """The differential-privacy companion (:class:`~anonaudit.dp.DPReport`).

    Attributes
    ----------
    release : tuple of Fact
        Mechanism, ε, δ, noise, neighbouring relation, privacy unit, combinations.
    guarantee, neighbours, keys : str
        What the guarantee, the neighbouring relation and the choice of released
        combinations (public domain, threshold or randomized response) mean.
    withheld : str or None
        Records left out of the release, if any.
    accounting : tuple of Fact
        The cost in every currency that applies.
    contrast : tuple of ContrastRow
        Per SA: the sentence and the chart.
    contrast_table : tuple of TableRow
        One row per figure, one cell per SA (in the order of ``contrast``).
    error : tuple of Fact
        Expected and observed error, groups hidden and fabricated.
    error_note : str
        Why the observed error differs from the expected one.
    reader : tuple of TableRow
        k, l and t of the data beside those of the release (two cells).
    loss : tuple of Fact
        The privacy loss random variable.
    profile : Chart or None
        δ(ε'), when there are points.
    """

    release: tuple[Fact, ...]
    guarantee: str
    neighbours: str
    keys: str
    withheld: str | None
    accounting: tuple[Fact, ...]
    contrast: tuple[ContrastRow, ...]
    contrast_table: tuple[TableRow, ...]
    error: tuple[Fact, ...]
    error_note: str
    reader: tuple[TableRow, ...]
    loss: tuple[Fact, ...]
    profile: Chart | None


@dataclass(frozen=True)
class IdentifiersView:
    """The columns that likely identify a person directly (:mod:`anonaudit.identifiers`):
    a ``lead`` sentence, one row per column (its role and the reasons) and a ``note`` on
    how they were found."""

    lead: str
    rows: tuple[TableRow, ...]
    note: str


@dataclass(frozen=True)
class Options:
    """What the reader asked for.

    Attributes
    ----------
    redact : bool
        Replace the QI values by :data:`REDACTED`.
    max_rows : int
        Rows shown per table.
    max_classes : int or None
        Rows per listing embedded in the page (its CSV download); ``None``: all.
    listings_href : str or None
        Where the full listings are written, as a link relative to the page (ending in
        ``/``); ``None``: they are not written.
    """

    redact: bool
    max_rows: int
    max_classes: int | None = 100
    listings_href: str | None = None


class _Failing(Protocol):
    """A result that lists its failing classes (k-anonymity, l-diversity, ...)."""

    @property
    def violating(self) -> pd.DataFrame: ...

    @property
    def violating_records(self) -> int: ...


# -- builders ------------------------------------------------------------------------


def describe_call(report: AuditReport) -> str:
    """The :func:`anonaudit.audit` call that reproduces ``report``, as far as it records it.

    Hierarchy, order and matrix arguments are not kept in the report: the call names
    the ground distances and leaves their argument as ``...`` to fill in.

    Examples
    --------
    >>> import pandas as pd, anonaudit
    >>> r = anonaudit.audit(pd.DataFrame({"zip": ["1", "1"]}), anonaudit.Roles(["zip"]),
    ...                     anonaudit.AuditOptions(policy=anonaudit.Policy(k=2)))
    >>> describe_call(r)
    "anonaudit.audit('<pandas.DataFrame>', anonaudit.Roles(['zip']), \
anonaudit.AuditOptions(policy=anonaudit.Policy(k=2), nulls='value', risk_threshold=0.2))"
    """
    names = [source.name for source in report.sources]
    source = repr(names[0]) if len(names) == 1 else repr(names)
    roles = [repr(list(report.quasi_identifiers))]
    if report.sensitive:
        roles.append(repr(list(report.sensitive)))
    options = []
    thresholds = report.policy.active()
    if thresholds:
        policy = ", ".join(f"{name}={value!r}" for name, value in thresholds.items())
        options.append(f"policy=anonaudit.Policy({policy})")
    distances = {
        sa: f"anonaudit.{DISTANCE_CLASSES[r.distance].__name__}"
        + ("()" if r.distance == "numeric" else "(...)")
        for sa, r in report.t_closeness.items()
        if r.distance != "equal"
    }
    if distances:
        named = ", ".join(f"{sa!r}: {call}" for sa, call in distances.items())
        options.append(f"distances={{{named}}}")
    options.append(f"nulls={report.null_policy!r}")
    options.append(f"risk_threshold={report.risk.threshold!r}")
    return (
        f"anonaudit.audit({source}, anonaudit.Roles({', '.join(roles)}), "
        f"anonaudit.AuditOptions({', '.join(options)}))"
    )


def verdict_view(report: AuditReport) -> VerdictView:
    """Every threshold of the policy: measured value, bound, pass or fail, in words."""
    qi = join_names(report.quasi_identifiers)
    rows = [*_k_verdicts(report.k_anonymity, qi)]
    for sa, slug in zip(report.sensitive, slugs(report.sensitive), strict=True):
        rows += _l_verdicts(report.l_diversity[sa], f"l-diversity-{slug}")
        rows += _t_verdicts(report.t_closeness[sa], f"t-closeness-{slug}")
        rows += _disclosure_verdicts(report.disclosure[sa], f"disclosure-{slug}")
    rows += _risk_verdicts(report.risk, qi)
    rows += _k_map_verdicts(report)
    rows += _releases_verdicts(report)
    # Counted as the summary and the JSON report count them: one check per measure (and
    # SA), which may set several thresholds (one row each).
    checks = report.verdicts()
    failed = [v.name for v in checks if not v.passed]
    if not rows:
        status = "none"
        headline = (
            "The policy sets no thresholds: nothing was judged, and the measures below are "
            "reported without a verdict."
        )
    elif failed:
        status = "fail"
        headline = (
            f"The data does not meet the policy: {len(failed)} of "
            f"{_plural(len(checks), 'check')} {'fails' if len(failed) == 1 else 'fail'} "
            f"({join_names(failed)})."
        )
    else:
        status = "pass"
        headline = f"The data meets the policy: all {_plural(len(checks), 'check')} pass."
    return VerdictView(
        status=status,
        headline=headline,
        rows=tuple(rows),
        criteria=tuple(
            CriterionRow(
                name=c.name,
                question=c.question,
                status="none" if c.passed is None else "pass" if c.passed else "fail",
                backing=join_names(list(c.measures)) if c.measures else "no measure",
                gaps=c.not_checked,
            )
            for c in criteria(report)
        ),
    )


def _k_verdicts(result: KAnonymityResult, qi: str) -> list[VerdictRow]:
    if result.threshold is None or result.passed is None:
        return []
    sentence = (
        f"The smallest group of people who share these attributes ({qi}) has "
        f"{_plural(result.k, 'member')}; the policy asks for {result.threshold}."
    )
    if not result.passed:
        sentence += (
            f" {_plural(result.violating_records, 'record')} are in "
            f"{_plural(len(result.violating), 'group')} smaller than that."
        )
    return [
        VerdictRow(
            "k-anonymity",
            "k-anonymity",
            f"k = {result.k}",
            f"k ≥ {result.threshold}",
            result.passed,
            sentence,
        )
    ]


def _l_verdicts(result: LDiversityResult, anchor: str) -> list[VerdictRow]:
    sa, rows = result.sensitive, []
    for name, passed in result.verdicts.items():
        if name == "l":
            rows.append(
                VerdictRow(
                    f"distinct l-diversity of {sa}",
                    anchor,
                    f"l = {result.distinct}",
                    f"l ≥ {result.l}",
                    passed,
                    f"In the least varied group, {sa} takes "
                    f"{_plural(result.distinct, 'different value')}; the policy asks for at "
                    f"least {result.l} in every group.",
                )
            )
        elif name == "entropy_l":
            rows.append(
                VerdictRow(
                    f"entropy l-diversity of {sa}",
                    anchor,
                    f"entropy l = {_real(result.entropy)}",
                    f"entropy l ≥ {_real(result.entropy_l)}",
                    passed,
                    f"Measured by entropy, the least varied group's {sa} is as mixed as "
                    f"{_real(result.entropy)} equally common "
                    f"{'value' if _real(result.entropy) == '1' else 'values'} would be; the "
                    f"policy asks for at least {_real(result.entropy_l)}.",
                )
            )
        else:
            c, at_l = _real(result.c), result.recursive_l
            rest = _after_most_common(at_l)
            if math.isinf(result.recursive_c):
                sentence = (
                    f"Some group has fewer than {at_l} different values of {sa}, so nothing "
                    f"outweighs its most common value; the policy asks that the most common "
                    f"value be less than {c} times as frequent as {rest}."
                )
            else:
                sentence = (
                    f"In the worst group, the most common {sa} is "
                    f"{_real(result.recursive_c)} times as frequent as {rest}; the policy "
                    f"asks for less than {c} times."
                )
            rows.append(
                VerdictRow(
                    f"recursive ({c}, {at_l})-diversity of {sa}",
                    anchor,
                    f"c* = {_real(result.recursive_c)}",
                    f"c* < {c}",
                    passed,
                    sentence,
                )
            )
    return rows


def _t_verdicts(result: TClosenessResult, anchor: str) -> list[VerdictRow]:
    if result.threshold is None or result.passed is None:
        return []
    sa = result.sensitive
    return [
        VerdictRow(
            f"t-closeness of {sa}",
            anchor,
            f"t = {_real(result.t)}",
            f"t ≤ {_real(result.threshold)}",
            result.passed,
            f"The group whose {sa} differs most from the whole table's is at distance "
            f"{_real(result.t)} (earth mover's distance, {result.distance} ground distance: "
            f"0 is the same distribution, 1 as different as can be); the policy allows at "
            f"most {_real(result.threshold)}.",
        )
    ]


def _disclosure_verdicts(result: DisclosureResult, anchor: str) -> list[VerdictRow]:
    sa, rows = result.sensitive, []
    for name, passed in result.verdicts.items():
        if name == "alpha":
            rows.append(
                VerdictRow(
                    f"(α,k)-anonymity of {sa}",
                    anchor,
                    f"α = {_share(result.alpha)}",
                    f"α ≤ {_share(result.max_alpha)}",
                    passed,
                    f"In the worst group, a single value of {sa} makes up "
                    f"{_share(result.alpha)} of its records; the policy allows at most "
                    f"{_share(result.max_alpha)}.",
                )
            )
        elif name == "beta":
            rows.append(
                VerdictRow(
                    f"β-likeness of {sa}",
                    anchor,
                    f"β = {_real(result.beta)}",
                    f"β ≤ {_real(result.max_beta)}",
                    passed,
                    f"In the worst group, a value of {sa} is {_share(result.beta)} more "
                    f"common than in the whole table; the policy allows at most "
                    f"{_share(result.max_beta)} more.",
                )
            )
        else:
            bound = _real(result.max_delta)
            sentence = (
                f"Some group lacks a value of {sa} that the whole table has, which tells "
                f"an attacker that nobody in it has that value (δ is infinite); the policy "
                f"asks for δ < {bound}."
                if math.isinf(result.delta)
                else f"In the worst group, the share of a value of {sa} differs from the whole "
                f"table's by a log-ratio of {_real(result.delta)}; the policy asks for less "
                f"than {bound}."
            )
            rows.append(
                VerdictRow(
                    f"δ-disclosure of {sa}",
                    anchor,
                    f"δ = {_real(result.delta)}",
                    f"δ < {bound}",
                    passed,
                    sentence,
                )
            )
    return rows


def _risk_verdicts(result: RiskResult, qi: str) -> list[VerdictRow]:
    if result.max_highest is None or result.passed is None:
        return []
    return [
        VerdictRow(
            "re-identification risk",
            "risk",
            f"highest = {_share(result.highest)}",
            f"highest ≤ {_share(result.max_highest)}",
            result.passed,
            f"An attacker who knows that someone is in the data and knows their {qi} picks "
            f"out the most exposed record with a chance of {_share(result.highest)}; the "
            f"policy allows at most {_share(result.max_highest)}.",
        )
    ]


def _k_map_verdicts(report: AuditReport) -> list[VerdictRow]:
    if report.linkage is None or report.linkage.k_map.passed is None:
        return []
    k_map, passed = report.linkage.k_map, report.linkage.k_map.passed
    return [
        VerdictRow(
            "k-map",
            "risk",
            f"k-map = {k_map.k}",
            f"k-map ≥ {k_map.threshold}",
            passed,
            f"Every group of the release matches at least {k_map.k} people of the "
            f"population table an attacker holds; the policy asks for {k_map.threshold}. "
            f"{_plural(k_map.records_below, 'record')} in "
            f"{_plural(k_map.classes_below, 'group')} match fewer.",
        )
    ]


def _releases_verdicts(report: AuditReport) -> list[VerdictRow]:
    """The rows of the composition and differencing against earlier releases."""
    history = report.history
    if history is None:
        return []
    rows = []
    composed_with = history.composed_names
    for sa, composition in history.composition.items():
        rows.append(
            VerdictRow(
                f"composition of {sa}",
                "releases",
                f"{_count(composition.newly_disclosed_records)} disclosed",
                "none disclosed",
                composition.newly_disclosed_records == 0,
                f"An attacker holding this release and the earlier ones ({composed_with}) who "
                f"knows a person's quasi-identifiers intersects the {sa} values of their "
                f"classes: {_plural(composition.newly_disclosed_records, 'record')} end with "
                "one value that no release disclosed alone.",
            )
        )
    for sa, difference in history.differencing.items():
        rows.append(
            VerdictRow(
                f"differencing of {sa}",
                "releases",
                f"{_count(difference.disclosed_records)} disclosed",
                "none disclosed",
                difference.disclosed_records == 0,
                f"Subtracting release {history.differenced_name} from this one class by class: "
                f"{_plural(difference.disclosing_classes, 'class')} changed in one {sa} value "
                f"only, which discloses it for {_plural(difference.disclosed_records, 'record')} "
                "added or removed.",
            )
        )
    return rows


def dataset_view(report: AuditReport, command: str | None) -> DatasetView:
    """The inputs (with their SHA-256), the columns and how to reproduce the audit.

    ``command`` is the command line as typed; ``None`` describes the Python call.
    """
    roles = [(name, "quasi-identifier") for name in report.quasi_identifiers]
    roles += [(name, "sensitive") for name in report.sensitive]
    null_rule = (
        "a null quasi-identifier is a value of its own"
        if report.null_policy == "value"
        else f"records with a null quasi-identifier are left out ({report.dropped_records:,})"
    )
    return DatasetView(
        sources=tuple(
            SourceRow(
                name=source.name,
                format=source.format,
                rows=f"{source.rows:,}",
                size="n/a" if source.size_bytes is None else _bytes(source.size_bytes),
                sha256=_digest(source),
            )
            for source in report.sources
        ),
        columns=tuple(
            ColumnRow(name, role, f"{report.nulls.get(name, 0):,}") for name, role in roles
        ),
        facts=(
            Fact("records audited", f"{report.rows:,}"),
            Fact("equivalence classes", f"{report.k_anonymity.classes:,}"),
            Fact("nulls", null_rule),
        ),
        command=command or describe_call(report),
        command_note=(
            "The command that ran this audit, as typed (shell-quoted)."
            if command
            else "The Python call, rebuilt from the report: hierarchy, order and matrix "
            "files given to it are not recorded here."
        ),
        audited_at=audit_time(report),
        audited_at_iso=report.audited_at.isoformat(),
        version=__version__,
    )


def identifiers_view(report: AuditReport) -> IdentifiersView:
    """The likely direct identifiers of ``report``: to drop before any release."""
    n = len(report.identifiers)
    return IdentifiersView(
        lead=f"{_plural(n, 'column')} {'looks' if n == 1 else 'look'} like "
        f"{'a direct identifier' if n == 1 else 'direct identifiers'}: a value that names "
        "one person defeats every measure below. Remove such columns before a release, "
        "or replace them (a random code is still an identifier if it is kept).",
        rows=tuple(
            TableRow(i.column, (i.declared_role, "; ".join(i.reasons))) for i in report.identifiers
        ),
        note="Found by the column's name (the 18 identifiers of the HIPAA Safe Harbor "
        "method, 45 CFR 164.514(b)(2)), by what its values look like (e-mail addresses, "
        "telephone, national identification and payment card numbers, IP addresses, URLs, "
        "UUIDs, full dates) and by how many distinct values it takes per record; columns "
        "the audit did not read were judged on the first "
        f"{SAMPLE_ROWS:,} records. These are warnings to judge, not measures.",
    )


def k_view(report: AuditReport, options: Options) -> MeasureView:
    """k-anonymity: class sizes, their chart and the classes smaller than k."""
    result = report.k_anonymity
    rule = None if result.threshold is None else f"k ≥ {result.threshold}"
    outcome, listing = _failing(
        result,
        report,
        options,
        rule=rule,
        order="smallest first",
        measures=[("size", "records", _count)],
        name="k-anonymity",
    )
    return MeasureView(
        lead="Every record should share its quasi-identifier values "
        f"({join_names(report.quasi_identifiers)}) with at least k − 1 others, so that someone "
        "who knows those values cannot narrow a person down to fewer than k records.",
        about="about-k",
        facts=(
            Fact("smallest class (k)", f"{result.k:,}"),
            Fact("equivalence classes", f"{result.classes:,}"),
            Fact("records", f"{result.rows:,}"),
            Fact("policy", rule or "none"),
        ),
        charts=(charts.class_size_chart(result.histogram, k=result.threshold, chart_id="k"),),
        outcome=outcome,
        listing=listing,
    )


def l_view(result: LDiversityResult, report: AuditReport, options: Options) -> MeasureView:
    """l-diversity of one SA and the classes that fail it."""
    sa = result.sensitive
    rule = _rule(
        None if result.l is None else f"l ≥ {result.l}",
        None if result.entropy_l is None else f"entropy l ≥ {_real(result.entropy_l)}",
        None if result.c is None else f"recursive ({_real(result.c)}, {result.recursive_l})",
    )
    outcome, listing = _failing(
        result,
        report,
        options,
        rule=rule and f"{rule} on {sa}",
        order="fewest distinct values first",
        measures=[
            ("size", "records", _count),
            ("distinct", "distinct values", _count),
            ("entropy_l", "entropy l", _real),
            ("recursive_c", "recursive c*", _real),
        ],
        name=f"l-diversity-{sa}",
    )
    return MeasureView(
        lead=f"Every class should hold several well-represented values of {sa}, so that "
        f"knowing someone's class does not reveal their {sa}.",
        about="about-l",
        facts=(
            Fact("fewest distinct values in a class (distinct l)", f"{result.distinct:,}"),
            Fact("entropy l", _real(result.entropy)),
            Fact(
                f"recursive (c, {result.recursive_l}): c* (diverse for every c > c*)",
                _real(result.recursive_c),
            ),
            Fact(f"records with a null {sa}", f"{result.nulls:,}"),
            Fact("policy", rule or "none"),
        ),
        charts=(),
        outcome=outcome,
        listing=listing,
    )


def t_view(
    result: TClosenessResult, report: AuditReport, options: Options, *, chart_id: str
) -> MeasureView:
    """t-closeness of one SA: the distance histogram, the farthest classes beside the
    whole table, and the classes farther than t."""
    sa = result.sensitive
    rule = None if result.threshold is None else f"t ≤ {_real(result.threshold)}"
    outcome, listing = _failing(
        result,
        report,
        options,
        rule=rule and f"{rule} on {sa}",
        order="farthest first",
        measures=[("size", "records", _count), ("distance", "distance (EMD)", _real)],
        name=f"t-closeness-{sa}",
    )
    classes = report.table.classes
    labels = [
        (class_id, _class_label(classes, class_id, rank, result.per_class, options))
        for rank, class_id in enumerate(_farthest(result.per_class, classes), start=1)
    ]
    return MeasureView(
        lead=f"The distribution of {sa} within every class should be close to its "
        "distribution in the whole table, so that learning someone's class tells an "
        f"attacker little more about their {sa} than the table as a whole does.",
        about="about-t",
        facts=(
            Fact("largest distance of a class from the whole table (t)", _real(result.t)),
            Fact("ground distance", result.distance),
            Fact(
                f"records with a null {sa} left out of the distributions",
                f"{result.nulls_excluded:,}",
            ),
            Fact("policy", rule or "none"),
        ),
        charts=(
            charts.distance_chart(
                result.per_class,
                classes.sizes,
                t=result.threshold,
                sensitive=sa,
                chart_id=f"{chart_id}-distance",
            ),
            charts.distribution_chart(
                report.table.sensitive_counts(sa),
                labels,
                named_by=report.quasi_identifiers,
                chart_id=f"{chart_id}-values",
            ),
        ),
        outcome=outcome,
        listing=listing,
    )


def disclosure_view(result: DisclosureResult, report: AuditReport, options: Options) -> MeasureView:
    """(alpha,k)-anonymity, beta-likeness and delta-disclosure of one SA."""
    sa = result.sensitive
    rule = _rule(
        None if result.max_alpha is None else f"α ≤ {_share(result.max_alpha)}",
        None if result.max_beta is None else f"β ≤ {_real(result.max_beta)}",
        None if result.max_delta is None else f"δ < {_real(result.max_delta)}",
    )
    outcome, listing = _failing(
        result,
        report,
        options,
        rule=rule and f"{rule} on {sa}",
        order="largest α first",
        measures=[
            ("size", "records", _count),
            ("alpha", "α", _share),
            ("beta", "β", _real),
            ("delta", "δ", _real),
        ],
        name=f"disclosure-{sa}",
    )
    return MeasureView(
        lead=f"How much more an attacker learns about {sa} from someone's class than from "
        "the whole table: the largest share of one value in a class (α), its largest "
        "relative gain (β) and the largest log-ratio of shares (δ).",
        about="about-disclosure",
        facts=(
            Fact("largest share of one value in a class (α)", _share(result.alpha)),
            Fact("largest relative gain of a value in a class (β)", _real(result.beta)),
            Fact("largest |ln(class share / table share)| (δ)", _real(result.delta)),
            Fact("policy", rule or "none"),
        ),
        charts=(),
        outcome=outcome,
        listing=listing,
    )


def risk_view(result: RiskResult, report: AuditReport) -> MeasureView:
    """Prosecutor re-identification risk and the share of records per risk band."""
    facts = (
        Fact("highest risk of a record", _share(result.highest)),
        Fact("average risk", _share(result.average)),
        Fact("lowest risk", _share(result.lowest)),
        Fact(
            f"records at risk (above {_share(result.threshold)})",
            f"{result.records_at_risk:,} ({_share(result.records_at_risk_fraction)})",
        ),
        Fact(
            "sample uniques (alone in their class)",
            f"{result.sample_uniques:,} ({_share(result.sample_uniques_fraction)})",
        ),
        Fact(
            "policy",
            "none" if result.max_highest is None else f"highest ≤ {_share(result.max_highest)}",
        ),
    )
    return MeasureView(
        lead="The prosecutor model: an attacker knows that a person is in the data and knows "
        f"their {join_names(report.quasi_identifiers)}; picking one record of that class at "
        "random finds the person with a chance of 1 / (class size).",
        about="about-risk",
        facts=facts,
        charts=(charts.risk_chart(result.bands, threshold=result.threshold, chart_id="risk"),),
        outcome=f"{_plural(result.records_at_risk, 'record')} "
        f"({_share(result.records_at_risk_fraction)}) have a risk above "
        f"{_share(result.threshold)}; the classes they are in are those smaller than "
        f"{_real(1 / result.threshold)} (see k-anonymity).",
        listing=None,
    )


# -- differential privacy -------------------------------------------------------------

_MECHANISM_WORDS = {
    "discrete-laplace": "discrete Laplace noise (two-sided geometric) on each count",
    "discrete-gaussian": "discrete Gaussian noise on each count",
    "laplace": "Laplace noise on each count, then rounded",
    "gaussian": "Gaussian noise on each count, then rounded",
    "randomized-response": "randomized response on each record's value (local model)",
}


def dp_view(dp: DPReport) -> DPView:
    """The differential-privacy companion: the release, its cost, the contrast with the
    syntactic release per SA, the error of the noisy counts and the privacy loss."""
    r, a, u, loss = dp.release, dp.accounting, dp.utility, dp.privacy_loss
    rr = r.mechanism == "randomized-response"
    m = r.sensitivity.max_contributions
    if dp.privacy_unit is None:
        unit, units = "record", "one record (each record is taken to be a different person)"
    else:
        unit = "person"
        units = (
            f"one person: one value of {dp.privacy_unit}, with at most {_plural(m, 'record')} each"
        )
    additive = f", plus an additive δ = {_probability(a.delta)}" * bool(a.delta)
    guarantee = (
        f"(ε, δ)-DP: whatever an attacker knew beforehand, including every other record, "
        f"the probability of any outcome of this release grows at most by a factor "
        f"e^ε = {_real(math.exp(a.epsilon))} (ε = {_real(a.epsilon)}){additive} when one "
        f"{unit} is {_CHANGE[r.sensitivity.neighbouring]}. It holds for every {unit}, "
        "including those in the smallest and most homogeneous groups."
    )
    if rr:
        neighbours = (
            f"Neighbouring datasets differ in the sensitive value of {units}: what each "
            "record says is protected, not whether it is in the data."
        )
    elif r.sensitivity.neighbouring == "add-remove":
        neighbours = (
            f"Neighbouring datasets differ by adding or removing {units}: whether someone "
            "is in the data at all is protected, and the number of records is not published."
        )
    else:
        neighbours = (
            f"Neighbouring datasets differ by replacing {units} with another: the number of "
            "records is treated as public; what each record says is protected."
        )
    columns = join_names([*r.original.quasi_identifiers, *r.original.sensitive])
    if rr:
        sa = r.original.sensitive[0]
        keys = (
            f"Randomized response: the quasi-identifier values and the size of every group "
            f"are published as they are; only each record's {sa} is replaced at random by "
            f"another value with a probability of {_share(r.noise_scale)}. It protects "
            f"{sa}, not whether someone is in the data or which group they are in."
        )
        kind = f"{_plural(r.cells, 'record')} randomized"
    elif r.domain == "public":
        keys = (
            f"Combinations from a public domain: every combination of the declared values of "
            f"{columns} was released ({_plural(r.cells, 'cell')}), empty ones included, so "
            "the release does not reveal which combinations occur in the data. That is what "
            "makes pure ε-DP possible."
        )
        kind = f"{_plural(r.cells, 'cell')} of the public domain"
    else:
        keys = (
            f"Combinations thresholded: no public list of values was declared for every "
            f"column, so only combinations that occur in the data could be released, and "
            f"which ones occur is itself private. Each was noised and released only when "
            f"its noisy count reached {r.threshold}; a combination that exists because of "
            f"one {unit} passes that threshold with a probability of at most "
            f"{_probability(a.cost.delta)}. This is why the release is (ε, δ)-DP and not "
            f"pure ε-DP; {u.classes_hidden:,} of {_plural(u.classes, 'group')} fell below "
            "the threshold and do not appear in it. Declaring public values of every "
            "column (--public-domain) releases every combination instead, under pure ε-DP."
        )
        kind = (
            f"{_plural(r.cells, 'combination')} present in the data, each kept when its "
            f"noisy count is at least {r.threshold}"
        )
    withheld = None
    if r.outside_domain or dp.bounded_records:
        withheld = (
            f"Not released: {_plural(r.outside_domain, 'record')} whose values are not among "
            f"the declared ones, and {_plural(dp.bounded_records, 'record')} beyond "
            f"{_plural(m, 'record')} per person. These counts come from the real data: "
            "do not publish them."
        )
    noise = (
        Fact(
            "chance that a record reports another value than its own",
            _share(r.noise_scale),
        )
        if rr
        else Fact(
            "noise scale " + ("σ" if "gaussian" in r.mechanism else "b"),
            _real(r.noise_scale)
            + (
                "" if u.expected_rmse is None else f" (standard deviation {_real(u.expected_rmse)})"
            ),
        )
    )
    release = (
        Fact("mechanism", _MECHANISM_WORDS.get(r.mechanism, r.mechanism)),
        Fact("ε (epsilon), the privacy budget", _real(r.epsilon)),
        Fact(
            "δ (delta), added to the e^ε bound on the probability of any outcome",
            _probability(r.delta) if r.delta else "0 (pure ε-DP)",
        ),
        noise,
        Fact("neighbouring datasets", r.sensitivity.neighbouring),
        Fact("protected unit", units),
        Fact("combinations", kind),
        Fact(
            "released",
            f"{_plural(r.table.rows, 'record')} in {_plural(len(r.table), 'combination')}",
        ),
    )
    return DPView(
        release=release,
        guarantee=guarantee,
        neighbours=neighbours,
        keys=keys,
        withheld=withheld,
        accounting=_dp_accounting(dp),
        contrast=tuple(
            _contrast_row(dp, dp.contrast[sa], dp.attackers[sa], slug)
            for sa, slug in zip(dp.contrast, slugs(list(dp.contrast)), strict=True)
        ),
        contrast_table=_contrast_table([(dp.contrast[sa], dp.attackers[sa]) for sa in dp.contrast]),
        error=_dp_error(dp),
        error_note=(
            "Randomized response changes values, not counts: the error is in each group's "
            "count of each value."
            if rr
            else "The observed error includes the threshold: a combination whose noisy count "
            f"falls below {r.threshold} is released as 0, so small counts lose all their "
            "records (a negative bias)."
            if r.domain == "observed"
            else "Counts are rounded and negatives set to 0, so empty cells can come out "
            "positive (a positive bias) and show groups that do not exist."
        ),
        reader=_reader_rows(dp.measures.original, dp.measures.released),
        loss=(
            Fact(
                "largest privacy loss",
                "unbounded (Gaussian noise: see δ)"
                if math.isinf(loss.epsilon)
                else _nats(loss.epsilon),
            ),
            Fact(
                "average privacy loss: KL divergence, the mutual-information DP figure",
                _nats(loss.mean)
                + (
                    ""
                    if loss.kl_bound is None
                    else f" (at most ε·tanh(ε/2) = {_real(loss.kl_bound)} at this ε)"
                ),
            ),
            Fact(
                f"chance the privacy loss exceeds ε = {_real(a.epsilon)} "
                "(probabilistic DP), P[L > ε]",
                _probability(loss.tail(a.epsilon)),
            ),
        ),
        profile=charts.profile_chart(dp.profile, epsilon=a.epsilon, chart_id="dp-profile")
        if dp.profile
        else None,
    )


def _dp_accounting(dp: DPReport) -> tuple[Fact, ...]:
    a = dp.accounting
    at = f" at δ = {_probability(a.delta)}" if a.delta else " (pure ε-DP)"
    facts = [Fact("total ε" + at, _real(a.epsilon))]
    if a.cost.epsilon and a.rho is not None:
        facts.append(Fact("pure ε part (Laplace noise)", _real(a.cost.epsilon)))
    if a.rho is not None:
        facts.append(Fact("ρ, zero-concentrated DP (zCDP) of the Gaussian noise", _real(a.rho)))
    if a.cost.delta:
        facts.append(
            Fact(
                "δ spent on the threshold (a one-person combination released)",
                _probability(a.cost.delta),
            )
        )
    if a.epsilon_exact_gaussian is not None:
        facts.append(
            Fact("ε at δ by the continuous Gaussian curve", _real(a.epsilon_exact_gaussian))
        )
    if a.epsilon_pld is not None:
        facts.append(
            Fact("ε at δ by privacy-loss distributions (dp-accounting)", _real(a.epsilon_pld))
        )
    r = dp.release
    facts.append(
        Fact(
            "ε to learn the value of a person who is in the data "
            f"({_CHANGE_STEPS[r.sensitivity.neighbouring]})"
            + (f" at δ = {_probability(r.value_delta)}" if r.value_delta else ""),
            _real(r.value_epsilon),
        )
    )
    facts.append(
        Fact(
            "Rényi DP: ε(α) at order α (the α-Rényi divergence of the outputs on neighbours)",
            ", ".join(f"α {alpha:g}: {_real(e)}" for alpha, e in a.renyi),
        )
    )
    return tuple(facts)


#: What a neighbouring step does to one unit, in a sentence.
_CHANGE = {"add-remove": "added or removed", "replace": "replaced by another"}
#: The steps that change one present person's value, per relation of the stated ε.
_CHANGE_STEPS = {
    "add-remove": "a change of that person's value: two add-remove steps",
    "replace": "a change of that person's value: one replace step",
}


def _contrast_row(
    dp: DPReport, c: SensitiveContrast, a: AttackerContrast, slug: str
) -> ContrastRow:
    # The sentence evaluates the DP module's own bound at the most revealing prior.
    # Imported here: anonaudit.dp imports anonaudit.auditing, which imports this module.
    from anonaudit.dp.contrast import posterior_bound

    sa, eps = c.sensitive, _real(c.epsilon)
    qi = join_names(dp.release.original.quasi_identifiers)
    if c.disclosed_classes:
        sentence = (
            f"Someone who knows a person's quasi-identifiers ({qi}) can be 100% sure of "
            f"their {sa} in {_plural(c.disclosed_classes, 'group')} "
            f"({_plural(c.disclosed_records, 'record')})."
        )
    else:
        sentence = (
            f"Someone who knows a person's quasi-identifiers ({qi}) can be at most "
            f"{_share(c.max_posterior)} sure of their {sa}."
        )
    sentence += (
        f" Someone who also knows every other record, the attacker differential privacy "
        f"is stated against, subtracts them from the group and is left with the person's "
        f"{sa}: after the syntactic release the median posterior on the true value is "
        f"{_share(a.informed.median)}, above 50% for {_share(a.informed.share_above_half)} "
        f"of records, whatever k, l or t. To learn the {sa} of a person who is in the data "
        f"({_CHANGE_STEPS[a.neighbouring]}) the DP release gives ε = {eps}"
        + (f" with δ = {_probability(a.delta)}" if a.delta else "")
        + f": nobody's {sa} can be believed above {_share(c.dp_posterior_bound)}"
        + (" (up to the additive δ)" if a.delta else "")
        + f". Simulated on this release, that attacker's posterior on the true value has a "
        f"median of {_share(a.dp_informed.median)} and a maximum of "
        f"{_share(a.dp_informed.max)}; {_share(a.dp_informed.share_above_bound)} of records "
        "are above the bound."
    )
    points = c.scatter
    if len(points.prior):
        prior, posterior = float(points.prior[0]), float(points.posterior[0])
        value = _none_as_null(points.values[0])
        sentence += (
            f" In the most revealing group ({_plural(int(points.size[0]), 'record')}), "
            f"“{value}” goes from {_share(prior)} of the whole table to {_share(posterior)} "
            f"of the group: a leakage of {_nats(c.max_pml)}, where an ε = {eps} release allows "
            f"at most {_nats(c.epsilon)} and raises a {_share(prior)} prior to at most "
            f"{_share(float(posterior_bound(prior, c.epsilon)))}."
        )
    if c.classes_above_bound:
        sentence += (
            f" In {_plural(c.classes_above_bound, 'group')} "
            f"({_plural(c.records_above_bound, 'record')}) even the attacker who knows only "
            "the quasi-identifiers believes more than that."
        )
    sentence += f" The syntactic release amounts to ε = {_real(a.max_equivalent_epsilon)}"
    if a.equal_gain is None:
        sentence += (
            f" ({_plural(a.infinite_classes, 'group')} give certainty, which no DP "
            "release allows): no DP release matches its attacker gain."
            if a.infinite_classes
            else ": it teaches the attacker nothing a prior did not."
        )
    else:
        g = a.equal_gain
        sentence += "; a DP release with the same mechanism allowing no more would " + (
            f"flip each record's value with a probability of {_share(g.noise_scale)}."
            if g.within is None
            else f"add noise of scale {_real(g.noise_scale)}, each count within "
            f"±{g.within:,} with {g.confidence:.0%} probability."
        )
    d, e = a.syntactic_disclosure, a.dp_disclosure
    sentence += (
        f" Over every prior within a factor {_real(a.prior_factor)} of the table's, the "
        f"syntactic release leaks up to {_nats(a.max_pml_family)}. A leakage below "
        f"ε* = ln(1 / (1 − p_min)) = {_real(d.epsilon_star)} discloses nothing about {sa}; "
        f"the syntactic release leaks {_nats(d.leakage)} and the DP release at most "
        f"{_nats(e.leakage)}"
        + (
            f", so whether a person's {sa} is {_values(e.features)} may be disclosed even "
            "by the DP release."
            if e.features
            else ", below it."
        )
    )
    return ContrastRow(
        sensitive=sa,
        anchor=f"dp-{slug}",
        sentence=sentence,
        chart=charts.posterior_chart(
            dp.curve,
            points,
            sensitive=sa,
            classes=len(c.posterior),
            chart_id=f"dp-{slug}-posterior",
        ),
    )


def _equal_gain_cell(a: AttackerContrast) -> str:
    g = a.equal_gain
    if g is None:
        return "none: no DP release allows certainty" if a.infinite_classes else "none needed"
    if g.within is None:
        return f"{_share(g.noise_scale)} of values flipped"
    return f"{_real(g.noise_scale)} (±{g.within:,})"


def _values(values: Sequence[str | None], shown: int = 5) -> str:
    """Values as a list in a sentence, the first ``shown`` of them."""
    named = [f"“{_none_as_null(v)}”" for v in values[:shown]]
    more = f" or one of {len(values) - shown:,} other values" if len(values) > shown else ""
    return " or ".join(named) + more


def _dp_error(dp: DPReport) -> tuple[Fact, ...]:
    r, u = dp.release, dp.utility
    facts = [Fact("counts released", f"{u.cells:,}")]
    if u.expected_within is not None:
        facts.append(
            Fact(
                "expected error of one count",
                f"within ±{u.expected_within:,} with {u.confidence:.0%} probability; "
                f"{_real(u.expected_mean_absolute_error)} on average",
            )
        )
    facts.append(
        Fact(
            "observed error",
            f"{_real(u.mean_absolute_error)} on average (root mean square "
            f"{_real(u.rmse)}), at most {u.max_absolute_error:,}",
        )
    )
    if u.expected_within is not None:
        facts.append(Fact(f"counts within ±{u.expected_within:,}", _share(u.share_within)))
    facts += [
        Fact("bias (released minus true count, on average)", _signed(u.bias)),
        Fact("groups in the data", f"{u.classes:,}"),
        Fact("groups in the release", f"{u.classes_released:,}"),
        Fact("groups hidden (records in the data, none released)", f"{u.classes_hidden:,}"),
        Fact(
            "groups fabricated (released, none in the data)",
            f"{u.classes_fabricated:,}"
            + (" (impossible without a public domain)" if r.domain == "observed" else ""),
        ),
    ]
    return tuple(facts)


def _reader_rows(data: Measures, release: Measures | None) -> tuple[TableRow, ...]:
    """Each measure of the data beside the value on the released table."""
    rows: list[tuple[str, Callable[[Measures], str]]] = [
        ("k (smallest group)", lambda m: f"{m.k:,}"),
        ("groups", lambda m: f"{m.classes:,}"),
    ]
    for sa in data.distinct_l:
        rows += _sensitive_measures(sa, data.distances.get(sa, "equal"))
    return tuple(
        TableRow(label, (show(data), "nothing released" if release is None else show(release)))
        for label, show in rows
    )


def _sensitive_measures(sa: str, distance: str) -> list[tuple[str, Callable[[Measures], str]]]:
    return [
        (f"distinct l of {sa}", lambda m: f"{m.distinct_l[sa]:,}"),
        (f"entropy l of {sa}", lambda m: _real(m.entropy_l[sa])),
        (f"t of {sa} ({distance} ground distance)", lambda m: _real(m.t[sa])),
    ]


def _contrast_table(
    contrasts: Sequence[tuple[SensitiveContrast, AttackerContrast]],
) -> tuple[TableRow, ...]:
    """One row per figure of the contrast, one cell per SA: the two attackers against the
    syntactic release, then against the DP release, then the leakages."""
    rows: list[tuple[str, Callable[[SensitiveContrast, AttackerContrast], str]]] = [
        ("ε to learn a present person's value", lambda c, a: _real(a.epsilon)),
        ("neighbouring relation of the stated ε", lambda c, a: a.neighbouring),
        (
            "knows the quasi-identifiers, syntactic release: median / largest posterior",
            lambda c, a: f"{_share(a.uninformed.median)} / {_share(a.uninformed.max)}",
        ),
        (
            "groups where it is 100%",
            lambda c, a: f"{c.disclosed_classes:,} ({_plural(c.disclosed_records, 'record')})",
        ),
        (
            "groups above the ε-DP bound",
            lambda c, a: f"{c.classes_above_bound:,} ({_plural(c.records_above_bound, 'record')})",
        ),
        (
            "knows every other record, syntactic release: median posterior, records above 50%",
            lambda c, a: f"{_share(a.informed.median)}, {_share(a.informed.share_above_half)}",
        ),
        ("largest posterior an ε-DP release allows", lambda c, a: _share(c.dp_posterior_bound)),
        (
            "knows every other record, DP release: median / 90th / 99th percentile / largest",
            lambda c, a: " / ".join(
                _share(v)
                for v in (
                    a.dp_informed.median,
                    a.dp_informed.p90,
                    a.dp_informed.p99,
                    a.dp_informed.max,
                )
            ),
        ),
        (
            "DP release: records above 50%, records above the bound",
            lambda c, a: (
                f"{_share(a.dp_informed.share_above_half)}, "
                f"{_share(a.dp_informed.share_above_bound)}"
            ),
        ),
        (
            "syntactic release as an ε (largest over groups)",
            lambda c, a: _real(a.max_equivalent_epsilon),
        ),
        ("DP noise at equal attacker gain (95% error bound)", lambda c, a: _equal_gain_cell(a)),
        ("largest leakage, ln(posterior / prior), in nats", lambda c, a: _real(c.max_pml)),
        (
            "largest leakage over priors within a factor, in nats",
            lambda c, a: f"{_real(a.max_pml_family)} (factor {_real(a.prior_factor)})",
        ),
        (
            "ε* = ln(1 / (1 − p_min)): leakage below it discloses nothing",
            lambda c, a: _real(a.syntactic_disclosure.epsilon_star),
        ),
    ]
    return tuple(TableRow(label, tuple(show(c, a) for c, a in contrasts)) for label, show in rows)


# -- failing classes ------------------------------------------------------------------


def _rule(*parts: str | None) -> str | None:
    """The thresholds that are set, joined; ``None`` when none is."""
    return ", ".join(part for part in parts if part) or None


def _failing(
    result: _Failing,
    report: AuditReport,
    options: Options,
    *,
    rule: str | None,
    order: str,
    measures: Sequence[tuple[str, str, Callable[[Any], str]]],
    name: str,
) -> tuple[str, Listing | None]:
    """A sentence on the classes that fail ``rule`` (``None``: the policy sets no
    threshold), and the table of them."""
    frame, records = result.violating, result.violating_records
    if rule is None:
        return "The policy sets no threshold here, so no class is listed.", None
    if frame.empty:
        return "No class fails.", None
    outcome = (
        f"{_plural(len(frame), 'class')} holding {_plural(records, 'record')} "
        f"({_share(records / report.rows)} of all) fail {rule}; they are listed {order}."
    )
    caption = f"Classes failing {rule}, {order}"
    return outcome, _listing(frame, report, options, measures=measures, caption=caption, name=name)


def _listing(
    frame: pd.DataFrame,
    report: AuditReport,
    options: Options,
    *,
    measures: Sequence[tuple[str, str, Callable[[Any], str]]],
    caption: str,
    name: str,
) -> Listing:
    """The classes of ``frame`` (QI columns, then ``measures``: column, heading, format)."""
    qi = list(report.quasi_identifiers)
    shown = min(options.max_rows, len(frame))

    def values(rows: pd.DataFrame) -> list[list[str | None]]:
        return [[_qi_value(v, options.redact) for v in rows[column].tolist()] for column in qi]

    def table(limit: int | None) -> pa.Table:
        rows = frame if limit is None else frame.head(limit)
        return pa.Table.from_arrays(
            [pa.array(column, pa.string()) for column in values(rows)]
            + [
                pa.array([_exact(v) for v in rows[column].tolist()], pa.string())
                for column, _, _ in measures
            ],
            names=[*qi, *(column for column, _, _ in measures)],
        )

    head = frame.head(shown)
    numbers = [head[column].tolist() for column, _, _ in measures]
    rows = tuple(
        tuple(
            [_none_as_null(column[i]) for column in values(head)]
            + [fmt(column[i]) for column, (_, _, fmt) in zip(numbers, measures, strict=True)]
        )
        for i in range(shown)
    )
    return make_listing(
        caption=f"{caption} ({shown:,} of {len(frame):,} shown)",
        summary=(
            f"Show the {shown:,} worst of {len(frame):,} classes"
            if shown < len(frame)
            else f"Show {'the class' if shown == 1 else f'all {shown:,} classes'}"
        ),
        headers=(*qi, *(heading for _, heading, _ in measures)),
        numeric_from=len(qi),
        rows=rows,
        total=len(frame),
        table=table,
        name=name,
        noun="class",
        options=options,
    )


def contents_notice(rows: int, capped: int, max_classes: int | None, *, redacted: bool) -> str:
    """What a report holds from the data, in a sentence (the notice atop both reports).

    >>> contents_notice(120, 1, 100, redacted=False)  # doctest: +NORMALIZE_WHITESPACE
    'This report contains 120 rows of quasi-identifier values from the data
    (1 listing capped at 100 rows); redacted: no.'
    >>> contents_notice(1, 0, None, redacted=True)  # doctest: +NORMALIZE_WHITESPACE
    'This report contains 1 row of classes whose quasi-identifier values are replaced by
    [redacted] (no listing capped); redacted: yes.'
    """
    cap = (
        "no listing capped"
        if max_classes is None
        else f"{_plural(capped, 'listing')} capped at {max_classes:,} rows"
    )
    noun = "row" if rows == 1 else "rows"
    what = (
        f"{noun} of classes whose quasi-identifier values are replaced by [redacted]"
        if redacted
        else f"{noun} of quasi-identifier values from the data"
    )
    return f"This report contains {rows:,} {what} ({cap}); redacted: {'yes' if redacted else 'no'}."


def make_listing(
    *,
    caption: str,
    summary: str,
    headers: tuple[str, ...],
    numeric_from: int,
    rows: tuple[tuple[str, ...], ...],
    total: int,
    table: Callable[[int | None], pa.Table],
    name: str,
    noun: str,
    options: Options,
    identifying: bool = True,
) -> Listing:
    """A :class:`Listing` of ``total`` rows, ``rows`` of them shown.

    ``table(limit)`` builds the first ``limit`` rows (``None``: all) as text columns: the
    page's CSV download holds at most :attr:`Options.max_classes` of them, and the full
    table is kept for a file beside the report when :attr:`Options.listings_href` asks.
    """
    embedded = total if options.max_classes is None else min(options.max_classes, total)
    full = None if options.listings_href is None else table(None)
    csv_name = f"{_slug(name)}.csv"
    return Listing(
        caption=caption,
        summary=summary,
        headers=headers,
        numeric_from=numeric_from,
        rows=rows,
        collapsed=len(rows) > _OPEN_ROWS,
        csv_href=_csv_href(full if full is not None and embedded == total else table(embedded)),
        csv_name=csv_name,
        download=f"Download all {_plural(total, noun)} as CSV"
        if embedded == total
        else f"Download the first {embedded:,} of {_plural(total, noun)} as CSV",
        embedded=embedded,
        total=total,
        identifying=identifying,
        file_href=None if full is None else f"{options.listings_href}{csv_name}",
        full=full,
    )


def listing_csv(table: pa.Table) -> str:
    """``table`` as formula-safe CSV text with a byte-order mark, so that spreadsheets
    read it as UTF-8: the page's downloads and the listing files beside it."""
    return "\ufeff" + table_to_csv(table)


def _csv_href(table: pa.Table) -> str:
    """A ``data:`` link to ``table`` as :func:`listing_csv` writes it."""
    data = listing_csv(table).encode("utf-8")
    return "data:text/csv;charset=utf-8;base64," + base64.b64encode(data).decode("ascii")


def _qi_value(value: Any, redact: bool) -> str | None:
    if redact:
        return REDACTED
    return None if value is None or pd.isna(value) else str(value)


def _none_as_null(value: str | None) -> str:
    return "(null)" if value is None else value


def _exact(value: Any) -> str:
    """A number for the CSV: 12 significant digits (``inf`` for infinity).

    Enough to compare with any threshold, and stable where the engine's summation order
    changes the last bit between runs; the JSON report has every digit. A text value (a
    sensitive value listed beside the numbers) is written as it is, a null as empty.
    """
    if value is None or isinstance(value, str):
        return "" if value is None else value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{float(value):.12g}"


def _farthest(per_class: NDArray[Any], classes: Classes) -> list[int]:
    """Ids of the classes farthest from the whole table, ties broken by size (largest
    first) then QI values, so the choice does not depend on the engine's class order."""
    if not len(per_class):
        return []
    # Rounded so a last-bit difference between runs does not change the choice.
    distance = np.round(per_class, 9)
    n = min(_FARTHEST, len(distance))
    candidates = np.flatnonzero(distance >= np.partition(distance, -n)[-n])
    keys = classes.keys.take(pa.array(candidates)).to_pylist()

    def order(i: int) -> tuple[float, int, tuple[tuple[bool, str], ...]]:
        values = tuple((v is None, v or "") for v in keys[i].values())
        return (-float(distance[candidates[i]]), -int(classes.sizes[candidates[i]]), values)

    return [int(candidates[i]) for i in sorted(range(len(candidates)), key=order)[:n]]


def _class_label(
    classes: Classes, class_id: int, rank: int, per_class: NDArray[Any], options: Options
) -> str:
    if options.redact:
        described = f"class {rank} {REDACTED}"
    else:
        key = classes.keys.slice(class_id, 1).to_pylist()[0]
        described = ", ".join(_none_as_null(_qi_value(value, False)) for value in key.values())
    return (
        f"{described} — {_plural(int(classes.sizes[class_id]), 'record')}, "
        f"distance {_real(float(per_class[class_id]))}"
    )


# -- formatting -----------------------------------------------------------------------


#: Formats of inputs held in memory, which have no file to hash.
_FRAMES = frozenset({"pandas", "arrow", "spark", "counts"})
#: A dataset's files whose digests are written out, at most.
_LISTED_DIGESTS = 50


def _digest(source: SourceStats) -> str:
    """What a report says of an input's SHA-256: only what the read recorded.

    The digest was taken while the audit read the file (:attr:`SourceStats.sha256`);
    nothing is read here. A dataset's files each have their own: one file's digest is
    given as the input's, several are listed by name.
    """
    if source.sha256 is not None:
        return source.sha256
    if source.format in _FRAMES:
        return "n/a (not a file)"
    if source.files:
        if len(source.files) == 1 and source.files[0].sha256 is not None:
            return source.files[0].sha256
        if all(file.sha256 is None for file in source.files):
            return _not_hashed(source)
        listed = [f"{file.name}: {_digest(file)}" for file in source.files[:_LISTED_DIGESTS]]
        more = len(source.files) - _LISTED_DIGESTS
        if more > 0:
            listed.append(f"and {_plural(more, 'more file')} (not listed)")
        return "per file: " + "; ".join(listed)
    return _not_hashed(source)


def _not_hashed(source: SourceStats) -> str:
    """Why an input (or a dataset's files) has no digest."""
    if is_url(source.name):
        return "not hashed (a URL: files in object storage are not hashed)"
    return "not hashed (the reader did not record one)"


def audit_time(report: AuditReport) -> str:
    """When the audit ran, as printed."""
    return report.audited_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def join_names(names: Sequence[str]) -> str:
    """Column names as a list in a sentence."""
    return ", ".join(names)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "column"


def slugs(names: Sequence[str]) -> list[str]:
    """Anchor-safe names, unique: numbered when two names give the same slug."""
    slugs = [_slug(name) for name in names]
    if len(set(slugs)) < len(slugs):
        slugs = [f"{i}-{slug}" for i, slug in enumerate(slugs, start=1)]
    return slugs


def _after_most_common(at_l: int) -> str:
    """What recursive (c, l) weighs the most common value against, in words."""
    if at_l <= 1:
        return "all the group's values together"
    if at_l == 2:
        return "all other values together"
    return f"the values after the {at_l - 1} most common, together"


def _plural(n: int, word: str) -> str:
    plural = word + ("es" if word.endswith("s") else "s")
    return f"{n:,} {word if n == 1 else plural}"


def _count(value: Any) -> str:
    return f"{int(value):,}"


def _real(value: Any) -> str:
    value = float(value)
    if math.isinf(value):
        return "∞"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _nats(value: float) -> str:
    return f"{_real(value)} {'nat' if _real(value) == '1' else 'nats'}"


def _signed(value: float) -> str:
    return ("+" if value > 0 else "−" if value < 0 else "") + _real(abs(value))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _probability(value: float) -> str:
    """A small probability as printed: ``1 × 10⁻⁶`` below 0.001, else 3 digits."""
    if value == 0 or value >= 1e-3:
        return f"{value:.3g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    digits = mantissa.rstrip("0").rstrip(".")
    power = f"10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    return power if digits == "1" else f"{digits} × {power}"


def _share(value: Any) -> str:
    value = float(value)
    return "∞" if math.isinf(value) else f"{value * 100:.3g}%"


def _bytes(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit} ({size:,} bytes)"
    return f"{size:,} bytes"
