"""The HTML report of ``anonaudit tables``: a renderer, no measure.

One self-contained page in the manner of the linkage pages
(:mod:`anonaudit.report.linkage_html`): the same stylesheet inlined, no script, the same
Content-Security-Policy, a Jinja2 template with autoescaping (``tables.html.j2``) fed by
a view that holds only text ready to print. The page is built from the JSON document
(:func:`~anonaudit.report.tables.tables_to_dict`), not from the audit, so that it never
carries more than the JSON report does: redacted, it names the cells that disclose, the
rule and the published cells each certificate combines, but gives no value (of a
suppressed cell, of a published figure a certificate quotes, of an interval); with
``show_values`` the document, and so the page, holds them.

The page is deterministic: it carries no time of writing, so the same tables give the
same bytes (issue 26). Each kind of finding lists at most ``max_findings`` findings (the
audit report's cap by default) and says how many it leaves to the JSON report.

Examples
--------
>>> document = {
...     "passed": True, "redacted": True, "anonaudit_version": "0", "components": 0,
...     "tables": [], "findings": [], "counts": {},
...     "rules": {"threshold": 10, "min_contributors": 3, "dominance": [2, 85.0],
...               "p": 10.0, "q": None, "coalition": 1, "safety_range": 0.0,
...               "contributor": "holding", "zeros": "report"},
... }
>>> page = tables_view(document)
>>> page.headline
'PASS: the tables may go out as they are'
>>> [f.value for f in page.rules][:3]
['10 units', '3 contributors', 'n = 2, k = 85%']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anonaudit.report.html import DEFAULT_MAX_ROWS, check_cap, environment
from anonaudit.report.kit import Fact, _count, _plural, real
from anonaudit.report.tables import HEADINGS, VERDICTS
from anonaudit.tables.audit import FINDINGS

__all__ = [
    "FindingView",
    "KindSection",
    "TableRow",
    "TablesPage",
    "tables_html",
    "tables_view",
]

_TEMPLATE = "tables.html.j2"

#: Each primary rule a finding names, in words.
_RULES = {
    "threshold": "threshold (minimum frequency)",
    "coalition": "singletons and coalitions",
    "dominance": "(n,k)-dominance",
    "p_percent": "p% rule",
    "pq": "(p,q) prior-posterior rule",
    "group": "group attribute disclosure",
    "zero": "zero",
    "assumed": "assumed sensitive (suppressed, its true value not given)",
    "": "none: the cell passes the primary rules",
}
_KINDS = {"count": "counts", "sum": "sums"}
_ZEROS = {
    "report": "reported, not failing",
    "sensitive": "sensitive cells",
    "ignore": "ignored",
}
_CONTRIBUTOR = {
    "holding": "a holding (its units' contributions summed)",
    "unit": "a unit",
}


@dataclass(frozen=True)
class TableRow:
    """One table read, as printed."""

    name: str
    kind: str
    dimensions: str
    cells: str
    suppressed: str
    rounded: str
    population: str


@dataclass(frozen=True)
class FindingView:
    """One finding, as printed.

    Attributes
    ----------
    fails : bool
        Whether it fails the audit (a zero under the ``report`` policy does not).
    table : str
        The table it is in.
    cells : str
        The cells concerned, by their codes (``""`` when it names none).
    rule : str
        The primary rule concerned, in words.
    sentence : str
        What it discloses (the JSON's ``text``).
    proofs : tuple of str
        Its certificates.
    """

    fails: bool
    table: str
    cells: str
    rule: str
    sentence: str
    proofs: tuple[str, ...]


@dataclass(frozen=True)
class KindSection:
    """The section of one kind of finding: its ``title`` (how many, and the kind's
    heading), whether any of them ``fails``, its ``findings`` (at most the page's cap)
    and what the page leaves out of them (``left_out``)."""

    anchor: str
    title: str
    fails: bool
    findings: tuple[FindingView, ...]
    left_out: str | None


@dataclass(frozen=True)
class TablesPage:
    """The page: the verdict, what it holds, the tables read, the rules, the findings.

    Attributes
    ----------
    title, subtitle : str
        The page's heading and what it audited.
    passed : bool
        The verdict.
    headline, meaning : str
        The verdict in words, and what it means.
    redacted : bool
        Whether values are left out.
    notice : str
        What the page holds of the data.
    tables : tuple of TableRow
        The tables read.
    components : str
        How the attacker's linear programs were split, in a sentence.
    rules : tuple of Fact
        The primary rules applied.
    sections : tuple of KindSection
        One per kind of finding found, in the order of
        :data:`~anonaudit.tables.audit.FINDINGS` (the verdict lists them too).
    command : str or None
        The command line that wrote the page (``None`` from Python).
    version : str
        The anonaudit that wrote it.
    """

    title: str
    subtitle: str
    passed: bool
    headline: str
    meaning: str
    redacted: bool
    notice: str
    tables: tuple[TableRow, ...]
    components: str
    rules: tuple[Fact, ...]
    sections: tuple[KindSection, ...]
    command: str | None
    version: str


def tables_html(
    document: Mapping[str, Any],
    *,
    command: str | None = None,
    max_findings: int = DEFAULT_MAX_ROWS,
) -> str:
    """The ``anonaudit tables`` HTML report: one page, self-contained.

    Parameters
    ----------
    document : mapping
        The JSON document (:func:`~anonaudit.report.tables.tables_to_dict`), redacted
        or with its values: the page shows what it holds, no more.
    command : str, optional
        The command line that wrote the page, printed to reproduce it.
    max_findings : int
        Findings listed per kind (the audit report's cap by default); the JSON report
        holds every one.

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    ParameterError
        ``max_findings`` below 1.
    """
    page = tables_view(document, command=command, max_findings=max_findings)
    return environment().get_template(_TEMPLATE).render(page=page)


def tables_view(
    document: Mapping[str, Any],
    *,
    command: str | None = None,
    max_findings: int = DEFAULT_MAX_ROWS,
) -> TablesPage:
    """The page's view of ``document`` (:func:`tables_html`'s parameters)."""
    check_cap("max_findings", max_findings)
    passed = bool(document["passed"])
    findings: Sequence[Mapping[str, Any]] = document["findings"]
    sections = tuple(
        _section(kind, [f for f in findings if f["kind"] == kind], max_findings)
        for kind in FINDINGS
        if any(f["kind"] == kind for f in findings)
    )
    names = [t["name"] for t in document["tables"]]
    return TablesPage(
        title=f"Audit of {_plural(len(names), 'published table')}, jointly",
        subtitle=", ".join(names),
        passed=passed,
        headline=VERDICTS[passed],
        meaning=_meaning(passed, sections),
        redacted=bool(document["redacted"]),
        notice=_notice(bool(document["redacted"])),
        tables=tuple(_table_row(t) for t in document["tables"]),
        components=_components(int(document["components"])),
        rules=_rules(document["rules"]),
        sections=sections,
        command=command,
        version=str(document["anonaudit_version"]),
    )


def _section(kind: str, found: Sequence[Mapping[str, Any]], cap: int) -> KindSection:
    """One kind's section: its first ``cap`` findings."""
    left = len(found) - cap
    return KindSection(
        anchor=f"kind-{kind}",
        title=f"{_count(len(found))} {HEADINGS[kind]}",
        fails=any(f["fails"] for f in found),
        findings=tuple(
            FindingView(
                fails=bool(f["fails"]),
                table=f["table"],
                cells="; ".join(f["cells"]),
                rule=_RULES.get(f["rule"], f["rule"]),
                sentence=f["text"],
                proofs=tuple(f["proofs"]),
            )
            for f in found[:cap]
        ),
        left_out=None
        if left <= 0
        else f"Left out of this page: {_plural(left, 'more finding')} of this kind; the JSON "
        "report (--json) lists every one.",
    )


def _meaning(passed: bool, sections: Sequence[KindSection]) -> str:
    """What the verdict means."""
    if not passed:
        return (
            "A reader holding these tables can learn what their suppression was meant to "
            "hide, or reads a cell the primary rules make sensitive. Each finding below names "
            "its cells and rule and, where the attacker's arithmetic is the proof, gives a "
            "certificate: the published cells whose combination proves it, which anyone can "
            "check by hand."
        )
    reported = " Zeros are reported below; they do not fail." if sections else ""
    return (
        "Under the primary rules below, no sensitive cell is published as it is, and the "
        "published cells of every table of a population, taken together, neither give a "
        "suppressed cell's value nor narrow it below the protection its rule asks for."
        f"{reported}"
    )


def _notice(redacted: bool) -> str:
    """What the page holds of the data."""
    if redacted:
        return (
            "This page names the cells that disclose (by their codes), the rule and the "
            "published cells each certificate combines, but gives no value: "
            "not the suppressed cells', not the published figures a certificate quotes, not "
            "the attacker's intervals. Run the command again with --show-values to print them."
        )
    return (
        "This page holds values (--show-values): what the published cells give of "
        "suppressed cells, and the published figures each certificate combines. It is an "
        "assessment for the privacy office, not something to publish with the tables."
    )


def _table_row(table: Mapping[str, Any]) -> TableRow:
    return TableRow(
        name=table["name"],
        kind=_KINDS.get(table["kind"], table["kind"]),
        dimensions=", ".join(table["dimensions"]),
        cells=_count(table["cells"]),
        suppressed=_count(table["suppressed"]),
        rounded=_count(table["rounded"]),
        population=table["population"] or "—",
    )


def _components(components: int) -> str:
    if components == 0:
        return "The attacker's arithmetic settled every suppressed cell without a linear program."
    return (
        "The attacker's linear programs were split into "
        f"{_plural(components, 'independent component')}."
    )


def _rules(rules: Mapping[str, Any]) -> tuple[Fact, ...]:
    """The primary rules' parameters, in words."""
    threshold, minimum = int(rules["threshold"]), int(rules["min_contributors"])
    n, k = rules["dominance"]
    p, q, safety = float(rules["p"]), rules["q"], float(rules["safety_range"])
    return (
        Fact(
            "threshold (counts): a cell of fewer units is sensitive",
            f"{threshold:,} units" if threshold > 1 else "none",
        ),
        Fact(
            "minimum contributors (sums): a cell of fewer is sensitive",
            f"{minimum:,} contributors" if minimum > 1 else "none",
        ),
        Fact(
            "(n,k)-dominance (sums): the n largest contributions above k% of the cell",
            f"n = {int(n):,}, k = {real(k)}%",
        ),
        Fact(
            "p% rule (sums): the rest below p% of the largest",
            f"p = {real(p)}%" if p > 0 else "not applied",
        ),
        Fact(
            "(p,q) rule (sums): the rest known beforehand within q%",
            "not applied" if q is None else f"q = {real(q)}%",
        ),
        Fact(
            "coalition: units that may pool what they know of themselves",
            _count(rules["coalition"]),
        ),
        Fact(
            "safety range: the protection the frequency rules ask for",
            f"{real(safety)}% of the cell's value, above and below"
            if safety > 0
            else "0% (exact disclosure only)",
        ),
        Fact(
            "one contributor (sums)",
            _CONTRIBUTOR.get(rules["contributor"], rules["contributor"]),
        ),
        Fact("zeros", _ZEROS.get(rules["zeros"], rules["zeros"])),
    )
