"""The HTML report of ``anonaudit reconstruct``: a renderer, no measure.

One self-contained page like the ``tables`` page (:mod:`anonaudit.report.tables_html`):
the same stylesheet inlined, no script, the same Content-Security-Policy, a Jinja2
template with autoescaping (``reconstruct.html.j2``) fed by a view holding only text
ready to print. The page is built from the JSON document
(:func:`~anonaudit.report.reconstruct.reconstruct_to_dict`), not from the
reconstruction, so that it never carries more than the JSON report: redacted, it gives
counts and rates per group but no record, cell count or interval; with ``show_values``
the document, and so the page, lists each group's cells. Deterministic: no time of
writing. At most ``max_groups`` groups are listed; the JSON report holds every one.

Examples
--------
>>> document = {
...     "reconstructed": False, "redacted": True, "anonaudit_version": "0",
...     "tables": [], "group": "block", "sensitive": None, "dimensions": ["sex"],
...     "cube_cells": 2, "groups_solved": 0, "records": 0,
...     "baseline": {"draws": 20, "seed": 0, "model": "m"}, "rates": [], "by_size": [],
...     "groups": [], "smallest_subsets": None, "linkage": None, "dp": None,
... }
>>> reconstruct_view(document).headline
'No group of 0 is reconstructed exactly'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anonaudit.report.html import DEFAULT_MAX_ROWS, check_cap, environment
from anonaudit.report.kit import Fact, _count, _plural
from anonaudit.report.reconstruct import RATES

__all__ = ["GroupRow", "ReconstructPage", "reconstruct_html", "reconstruct_view"]

_TEMPLATE = "reconstruct.html.j2"


@dataclass(frozen=True)
class GroupRow:
    """One group, as printed: its code, records, verdict and what is known, and with
    ``--show-values`` its cells (``code: lower`` or ``code: lower to upper``)."""

    group: str
    records: str
    verdict: str
    forced: str
    known: str
    subset: str
    cells: tuple[str, ...]


@dataclass(frozen=True)
class ReconstructPage:
    """The page: the verdict, the tables read, the rates beside chance, the groups.

    Attributes
    ----------
    title, subtitle : str
        The heading and the tables' names.
    reconstructed : bool
        Whether a group is given back.
    headline, meaning : str
        The verdict in words, and what it means.
    redacted : bool
        Whether values are left out.
    notice : str
        What the page holds of the data.
    tables : tuple of tuple of str
        Per table read: name, dimensions, cells, suppressed, rounded.
    setting : tuple of Fact
        How the groups were solved and the baseline drawn.
    rates : tuple of tuple of str
        Per rate: what it counts, the attack's count and share, chance's.
    bands : tuple of tuple of str
        Per band of group sizes: the band, groups, reconstructed, share.
    groups : tuple of GroupRow
        The first groups.
    left_out : str or None
        The groups the page leaves to the JSON report.
    subsets : tuple of tuple of str
        With ``--smallest-subset``: each subset and its groups.
    linkage : str or None
        With ``--population``: the sentence.
    dp : tuple of Fact
        With ``--dp-epsilon``: the release and what it still gives back.
    command : str or None
        The command line that wrote the page.
    version : str
        The anonaudit that wrote it.
    """

    title: str
    subtitle: str
    reconstructed: bool
    headline: str
    meaning: str
    redacted: bool
    notice: str
    tables: tuple[tuple[str, ...], ...]
    setting: tuple[Fact, ...]
    rates: tuple[tuple[str, ...], ...]
    bands: tuple[tuple[str, ...], ...]
    groups: tuple[GroupRow, ...]
    left_out: str | None
    subsets: tuple[tuple[str, str], ...]
    linkage: str | None
    dp: tuple[Fact, ...]
    command: str | None
    version: str


def reconstruct_html(
    document: Mapping[str, Any],
    *,
    command: str | None = None,
    max_groups: int = DEFAULT_MAX_ROWS,
) -> str:
    """The ``anonaudit reconstruct`` HTML report: one page, self-contained.

    Parameters
    ----------
    document : mapping
        The JSON document, redacted or with its values: the page shows what it holds.
    command : str, optional
        The command line that wrote the page, printed to reproduce it.
    max_groups : int
        Groups listed (the JSON report holds every one).

    Raises
    ------
    ParameterError
        ``max_groups`` below 1.
    """
    page = reconstruct_view(document, command=command, max_groups=max_groups)
    return environment().get_template(_TEMPLATE).render(page=page)


def reconstruct_view(
    document: Mapping[str, Any],
    *,
    command: str | None = None,
    max_groups: int = DEFAULT_MAX_ROWS,
) -> ReconstructPage:
    """The page's view of ``document`` (:func:`reconstruct_html`'s parameters)."""
    check_cap("max_groups", max_groups)
    solved = int(document["groups_solved"])
    rates = {r["rate"]: r for r in document["rates"]}
    done = rates.get("reconstructed")
    given = bool(document["reconstructed"]) and done is not None
    if given and done is not None:
        headline = (
            f"{_count(int(done['count']))} of {_plural(solved, 'group')} "
            f"({done['share']:.1%}) reconstructed exactly"
        )
    else:
        headline = f"No group of {_count(solved)} is reconstructed exactly"
    sensitive = document["sensitive"] or ""
    groups: Sequence[Mapping[str, Any]] = document["groups"]
    left = len(groups) - max_groups
    return ReconstructPage(
        title=f"Reconstruction from {_plural(len(document['tables']), 'published table')}",
        subtitle=", ".join(t["name"] for t in document["tables"]),
        reconstructed=given,
        headline=headline,
        meaning=_meaning(given),
        redacted=bool(document["redacted"]),
        notice=_notice(bool(document["redacted"])),
        tables=tuple(
            (
                t["name"],
                ", ".join(t["dimensions"]),
                _count(t["cells"]),
                _count(t["suppressed"]),
                _count(t["rounded"]),
            )
            for t in document["tables"]
        ),
        setting=_setting(document),
        rates=tuple(_rate(key, r, sensitive) for key, r in rates.items()),
        bands=tuple(_band(b) for b in document["by_size"]),
        groups=tuple(_group(g, sensitive) for g in groups[:max_groups]),
        left_out=None
        if left <= 0
        else f"Left out of this page: {_plural(left, 'more group')}; the JSON report "
        "(--json) lists every one.",
        subsets=tuple(
            (" + ".join(s["tables"]), _count(s["groups"]))
            for s in document.get("smallest_subsets") or ()
        ),
        linkage=_linkage(document.get("linkage")),
        dp=_dp(document.get("dp"), done),
        command=command,
        version=str(document["anonaudit_version"]),
    )


def _meaning(given: bool) -> str:
    if given:
        return (
            "Every record of the groups reconstructed is given back by the published "
            "tables alone: the tables agree with exactly one table of counts over the full "
            "cross-classification of their dimensions, proved cell by cell. A record alone "
            "in its cell is a person whose every published attribute is known."
        )
    return (
        "No group has a single table of counts consistent with the publication; records "
        "in forced cells, counted below, are still given back."
    )


def _notice(redacted: bool) -> str:
    if redacted:
        return (
            "This page gives counts and rates per group but no reconstructed record, cell "
            "count or interval. Run the command again with --show-values to list them."
        )
    return (
        "This page lists the records given back (--show-values): each group's cells that "
        "may hold a record, with their intervals. It is an assessment for the privacy "
        "office, not something to publish with the tables."
    )


def _setting(document: Mapping[str, Any]) -> tuple[Fact, ...]:
    group = document["group"]
    baseline = document["baseline"]
    return (
        Fact("groups", f"each {group} solved alone" if group else "all solved jointly"),
        Fact("groups solved", _count(document["groups_solved"])),
        Fact("records", _count(document["records"])),
        Fact(
            "cells a group",
            f"{_count(document['cube_cells'])} ({' x '.join(document['dimensions'])})",
        ),
        Fact("sensitive dimension", document["sensitive"] or "none"),
        Fact(
            "chance baseline",
            f"{baseline['draws']} draws a group, seed {baseline['seed']}: {baseline['model']}",
        ),
    )


def _rate(key: str, rate: Mapping[str, Any], sensitive: str) -> tuple[str, ...]:
    count = f"{rate['count']:,.1f}" if key == "records_right" else f"{rate['count']:,.0f}"
    return (
        RATES[key].format(sensitive=sensitive),
        f"{count} of {_count(rate['of'])}",
        f"{rate['share']:.1%}",
        f"{rate['chance']:,.1f}",
        f"{rate['chance_share']:.1%}",
    )


def _band(band: Mapping[str, Any]) -> tuple[str, ...]:
    low, high = band["records"]
    share = band["reconstructed"] / band["groups"] if band["groups"] else 0.0
    return (
        f"{low}-{high}" if high is not None else f"{low}+",
        _count(band["groups"]),
        _count(band["reconstructed"]),
        f"{share:.1%}",
    )


def _group(g: Mapping[str, Any], sensitive: str) -> GroupRow:
    if g["reconstructed"]:
        verdict = f"reconstructed ({g['method']})"
    elif g["solutions"] is not None:
        verdict = f"{_count(g['solutions'])} tables possible"
    else:
        verdict = "not reconstructed"
    known = f"{_count(g['records_forced'])} ({_count(g['records_unique'])} unique"
    if g["sensitive_known"] is not None:
        known += f"; {sensitive} known {_count(g['sensitive_known'])}"
    cells = tuple(
        f"{c['cell']}: {c['lower']:g}"
        + ("" if c["upper"] == c["lower"] else f" to {_end(c['upper'])}")
        for c in g.get("cells", ())
    )
    return GroupRow(
        group=g["group"] or "(all)",
        records=_count(g["records"]),
        verdict=verdict,
        forced=_count(g["forced_cells"]),
        known=known + ")",
        subset=" + ".join(g["smallest_subset"] or ()) or "—",
        cells=cells,
    )


def _end(upper: float | None) -> str:
    return "unbounded" if upper is None else f"{upper:g}"


def _linkage(linkage: Mapping[str, Any] | None) -> str | None:
    if not linkage:
        return None
    share = linkage["unique"] / linkage["records"] if linkage["records"] else 0.0
    return (
        f"Linked to the identified table by {', '.join(linkage['columns'])}: "
        f"{_count(linkage['unique'])} of {_plural(linkage['records'], 'reconstructed record')} "
        f"({share:.1%}) match exactly one person (k-map {linkage['k_map']}; "
        f"{_count(linkage['unmatched'])} match nobody); a reconstruction drawn at random "
        f"from the margins: {linkage['chance_unique']:,.1f}."
    )


def _dp(dp: Mapping[str, Any] | None, exact: Mapping[str, Any] | None) -> tuple[Fact, ...]:
    if not dp:
        return ()
    certified = next(r for r in dp["rates"] if r["rate"] == "reconstructed")
    close = dp["closest"]
    right = close["records_right"] / close["records"] if close["records"] else 0.0
    delta = f", delta {dp['delta']:g}" if dp["delta"] else ""
    return (
        Fact(
            "the release",
            f"{dp['mechanism']} noise on every cell, epsilon {dp['epsilon']:g}{delta} "
            f"(scale {dp['scale']:.4g}; a person is in {dp['cells_per_person']} cells)",
        ),
        Fact(
            f"groups certified at {dp['confidence']:.0%} confidence",
            f"{certified['count']:,.0f} ({certified['share']:.1%}), against "
            f"{exact['count'] if exact else 0:,.0f} from the exact tables",
        ),
        Fact(
            "closest tables, on the groups the exact tables give back",
            f"{_count(close['exact'])} of {_count(close['groups'])} rebuilt exactly; "
            f"{_count(close['records_right'])} of {_count(close['records'])} records in "
            f"their cell ({right:.1%})",
        ),
        Fact("groups whose noise went beyond the intervals", _count(dp["groups_contradicted"])),
    )
