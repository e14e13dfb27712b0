"""The HTML reports of ``anonaudit compose`` and ``anonaudit diff``: renderers, no measure.

Each is one self-contained page in the manner of the audit's report
(:mod:`anonaudit.report.html`): the same stylesheet inlined, no script, the same
Content-Security-Policy, Jinja2 templates with autoescaping (``linkage.html.j2`` and
the two pages that extend it, ``linkage_compose.html.j2`` and ``linkage_diff.html.j2``)
fed by views that hold only text ready to print. Every figure comes from the results
(:class:`~anonaudit.linkage.composition.Composition`,
:class:`~anonaudit.linkage.differencing.Differencing`); nothing here computes one.

What each page carries from the data is as little as it can:

* composition: counts per release and per sensitive attribute, and the names of the
  releases and columns; no value of any record;
* differencing: the disclosing classes, worst first, at most ``max_rows`` of them
  (:data:`~anonaudit.report.html.DEFAULT_MAX_ROWS`, the audit report's cap), each with its
  quasi-identifier values and the sensitive value it discloses; the page says how many
  were left out, and its CSV download holds the rows shown, no more.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from anonaudit import __version__
from anonaudit.classtable import SourceStats
from anonaudit.linkage.composition import COMBINATION_RULE, Composition, DPComposition
from anonaudit.linkage.differencing import Differencing
from anonaudit.report.html import DEFAULT_MAX_ROWS, Section, check_cap, environment
from anonaudit.report.kit import (
    Fact,
    Listing,
    Options,
    _count,
    _plural,
    byte_size,
    join_names,
    probability,
    real,
    slugs,
)
from anonaudit.report.linkage import fixed
from anonaudit.report.view_releases import (
    composition_facts,
    differencing_facts,
    disclosing_listing,
)
from anonaudit.report.views import MECHANISM_WORDS, SourceRow, contents_notice, source_digest

__all__ = [
    "CompositionView",
    "DifferencingView",
    "LinkagePage",
    "ReleaseRow",
    "SideBySide",
    "composition_html",
    "differencing_html",
]

_COMPOSE, _DIFF = "linkage_compose.html.j2", "linkage_diff.html.j2"


@dataclass(frozen=True)
class ReleaseRow:
    """One release on its own, as printed."""

    name: str
    records: str
    classes: str
    distinct_l: str


@dataclass(frozen=True)
class SideBySide:
    """One row of the comparison: the releases as published beside the same releases
    made with differential privacy."""

    label: str
    published: str
    private: str


@dataclass(frozen=True)
class CompositionView:
    """One SA's section of the composition report.

    Attributes
    ----------
    status : str
        ``"fail"`` when a value is disclosed, else ``"none"`` (the headline's colour).
    headline : str
        The finding in one sentence: each release alone, the composition, the DP bound.
    releases : tuple of ReleaseRow
        Each release on its own.
    comparison : tuple of SideBySide
        The releases as published beside their DP counterpart (empty without one).
    attack, dp : tuple of Fact
        The composition attack's figures; the DP counterpart's (empty without one).
    changed : str or None
        Records left out because their value differs between releases.
    """

    status: str
    headline: str
    releases: tuple[ReleaseRow, ...]
    comparison: tuple[SideBySide, ...]
    attack: tuple[Fact, ...]
    dp: tuple[Fact, ...]
    changed: str | None


@dataclass(frozen=True)
class DifferencingView:
    """One SA's section of the differencing report: the ``headline``, the ``facts``,
    the disclosing classes (``listing``, ``None`` when there are none) and what the page
    leaves out of them (``left_out``)."""

    status: str
    headline: str
    facts: tuple[Fact, ...]
    listing: Listing | None
    left_out: str | None


@dataclass(frozen=True)
class LinkagePage:
    """The page around the sections: title, what it holds, the inputs, the command that
    wrote it (``None`` from Python), when written.

    ``written_at`` and ``version`` change on every run; the template marks them
    ``data-volatile`` as the audit report does.
    """

    title: str
    subtitle: str
    notice: str
    inputs: tuple[SourceRow, ...]
    sections: tuple[Section, ...]
    command: str | None
    written_at: str
    written_at_iso: str
    version: str


def composition_html(
    results: Mapping[str, Composition],
    sources: Sequence[SourceStats],
    *,
    id: str,
    command: str | None = None,
) -> str:
    """The ``anonaudit compose`` HTML report: one page, self-contained.

    Parameters
    ----------
    results : mapping of str to Composition
        Per SA, :func:`~anonaudit.linkage.composition.compose`'s result.
    sources : sequence of SourceStats
        The inputs read (their SHA-256 is printed for files).
    id : str
        The record id the releases were joined on.
    command : str, optional
        The command line that wrote the page, printed to reproduce it.

    Returns
    -------
    str
        The HTML document.
    """
    releases = len(next(iter(results.values())).releases) if results else 0
    sections = tuple(
        Section(_COMPOSE, f"sa-{slug}", f"Composition attack on {name}", _composition_view(result))
        for (name, result), slug in zip(results.items(), slugs(list(results)), strict=True)
    )
    page = _page(
        title=f"Composition attack across {_plural(releases, 'release')}",
        subtitle=f"Releases of overlapping records joined on the office's record id {id!r}; "
        f"sensitive: {join_names(list(results))}",
        notice="This report contains no record and no value from the data: only counts per "
        "release and per sensitive attribute, and the names of the releases and columns.",
        sources=sources,
        sections=sections,
        command=command,
    )
    return _render(_COMPOSE, page, rule=COMBINATION_RULE)


def differencing_html(
    results: Mapping[str, Differencing],
    sources: Sequence[SourceStats],
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    redact: bool = True,
    command: str | None = None,
) -> str:
    """The ``anonaudit diff`` HTML report: one page, self-contained.

    Parameters
    ----------
    results : mapping of str to Differencing
        Per SA, :func:`~anonaudit.linkage.differencing.difference`'s result.
    sources : sequence of SourceStats
        The old release's inputs, then the new one's.
    max_rows : int
        Disclosing classes shown per SA (the audit report's cap by default); the
        page's CSV download holds the same rows.
    redact : bool
        Replace the quasi-identifier values of the classes listed by ``[redacted]``
        (the sensitive value each discloses stays: it is the finding).
    command : str, optional
        The command line that wrote the page, printed to reproduce it.

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    ParameterError
        ``max_rows`` below 1.
    """
    check_cap("max_rows", max_rows)
    options = Options(redact=redact, max_rows=max_rows)
    sections = tuple(
        Section(_DIFF, f"sa-{slug}", f"Differencing on {name}", _differencing_view(result, options))
        for (name, result), slug in zip(results.items(), slugs(list(results)), strict=True)
    )
    listings = [s.view.listing for s in sections if isinstance(s.view, DifferencingView)]
    shown = [listing for listing in listings if listing is not None]
    # A listing holds at most max_rows classes, fewer when diff's --max-classes kept fewer
    # (the rows the page and its download hold alike: what the notice counts).
    capped = [listing.embedded for listing in shown if listing.embedded < listing.total]
    old, new = (sources[0].name, sources[-1].name) if sources else ("", "")
    page = _page(
        title=f"Differencing attack between {old} and {new}",
        subtitle="Successive releases compared class by class; sensitive: "
        f"{join_names(list(results))}",
        notice=contents_notice(
            sum(listing.embedded for listing in shown),
            len(capped),
            max(capped, default=max_rows),
            redacted=redact,
        )
        + " Each row also holds the sensitive value it discloses.",
        sources=sources,
        sections=sections,
        command=command,
    )
    return _render(_DIFF, page)


def _composition_view(result: Composition) -> CompositionView:
    """The section of one SA of the composition report."""
    releases = result.releases
    each = ", ".join(_count(r.distinct_l) for r in releases)
    alone = (
        f"Each release on its own is distinct l-diverse (l = {each}): no class of any one of "
        "them holds a single value."
        if releases and min(r.distinct_l for r in releases) >= 2
        else f"On their own, the releases have distinct l = {each}: a release with l = 1 "
        "discloses values with no composition needed."
    )
    if not result.records:
        together = "No record is in two or more releases: there is nothing to compose."
    elif result.disclosed_records:
        together = (
            "Yet composed, they disclose the value of "
            f"{_plural(result.disclosed_records, 'record')} (of {result.records:,} in two or "
            "more releases)."
        )
    else:
        together = (
            "Composed, they disclose no value outright, but over the "
            f"{_plural(result.records, 'record')} in two or more releases the attacker's "
            f"belief in a value reaches {fixed(result.max_posterior)}."
        )
    dp = result.dp
    bound = (
        ""
        if dp is None
        else f" The same {_plural(dp.releases, 'release')} made with differential privacy "
        f"(ε = {real(dp.epsilon)} each) would bound any attacker's posterior at "
        f"{fixed(dp.posterior_bound)}."
    )
    return CompositionView(
        status="fail" if result.disclosed_records else "none",
        headline=f"{alone} {together}{bound}",
        releases=tuple(
            ReleaseRow(r.name, _count(r.records), _count(r.classes), _count(r.distinct_l))
            for r in releases
        ),
        comparison=() if dp is None else _side_by_side(result, dp),
        attack=composition_facts(result),
        dp=() if dp is None else _dp_facts(dp),
        changed=None
        if not result.changed_records
        else f"{_plural(result.changed_records, 'record')} in several releases with a value "
        "that differs between them are left out: the intersection assumes a person's value is "
        "the same in every release.",
    )


def _side_by_side(result: Composition, dp: DPComposition) -> tuple[SideBySide, ...]:
    each = ", ".join(_count(r.distinct_l) for r in result.releases)
    delta = f", δ = {probability(dp.delta)}" if dp.delta else ""
    return (
        SideBySide(
            "each release",
            f"distinct l = {each}",
            f"{MECHANISM_WORDS.get(dp.mechanism, dp.mechanism)}; ε = {real(dp.epsilon)}{delta}",
        ),
        SideBySide(
            f"all {dp.releases:,} together",
            f"{result.disclosed_records:,} of the {_plural(result.records, 'record')} in two "
            "or more releases disclosed",
            f"ε = {real(dp.accounting.epsilon)} at δ = {probability(dp.accounting.delta)} "
            "(sequential composition)",
        ),
        SideBySide(
            "largest posterior on a person's value",
            f"{fixed(result.max_posterior)} (reached on these releases)",
            f"at most {fixed(dp.posterior_bound)} (any attacker; ε = "
            f"{real(dp.value_epsilon)} for a change of one person's value)",
        ),
    )


def _dp_facts(dp: DPComposition) -> tuple[Fact, ...]:
    total = dp.accounting
    return (
        Fact("noise of each release", MECHANISM_WORDS.get(dp.mechanism, dp.mechanism)),
        Fact("releases composed", _count(dp.releases)),
        Fact("ε, δ of each release", f"{real(dp.epsilon)}, {probability(dp.delta)}"),
        Fact("total ε at the summed δ", f"{real(total.epsilon)} at δ = {probability(total.delta)}"),
        Fact("total pure ε", real(total.cost.epsilon)),
        Fact("total as ρ-zCDP", real(total.cost.zcdp)),
        Fact("ε of a change of one person's value", real(dp.value_epsilon)),
        Fact("largest posterior it allows (at the pooled prior)", fixed(dp.posterior_bound)),
    )


def _differencing_view(result: Differencing, options: Options) -> DifferencingView:
    """The section of one SA of the differencing report, ``options.max_rows`` listed."""
    listing = disclosing_listing(result, options) if len(result.listing) else None
    left = result.disclosing_classes - (0 if listing is None else len(listing.rows))
    return DifferencingView(
        status="fail" if result.disclosed_records else "none",
        headline=(
            f"{result.classes_changed:,} of {_plural(result.classes, 'class')} changed between "
            f"the releases; {result.disclosing_classes:,} changed in one value only, disclosing "
            f"it for {_plural(result.disclosed_records, 'record')} added or removed."
        ),
        facts=differencing_facts(result),
        listing=listing,
        left_out=None
        if left <= 0
        else f"Left out of this page: {_plural(left, 'more disclosing class')}; the JSON "
        "report (--json) lists up to --max-classes of them.",
    )


def _page(
    *,
    title: str,
    subtitle: str,
    notice: str,
    sources: Sequence[SourceStats],
    sections: tuple[Section, ...],
    command: str | None,
) -> LinkagePage:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    unique = {source.name: source for source in sources}  # a generalized input is each release's
    return LinkagePage(
        title=title,
        subtitle=subtitle,
        notice=notice,
        inputs=tuple(
            SourceRow(
                s.name,
                s.format,
                _count(s.rows),
                "n/a" if s.size_bytes is None else byte_size(s.size_bytes),
                source_digest(s),
            )
            for s in unique.values()
        ),
        sections=sections,
        command=command,
        written_at=now.strftime("%Y-%m-%d %H:%M:%S %Z"),
        written_at_iso=now.isoformat(),
        version=__version__,
    )


def _render(template: str, page: LinkagePage, **extra: str) -> str:
    return environment().get_template(template).render(page=page, **extra)
