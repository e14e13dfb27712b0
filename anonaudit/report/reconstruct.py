"""The JSON document and the printed summary of ``anonaudit reconstruct``: renderers only.

Redacted by default, like every anonaudit report: counts and rates per group (how many
records the tables give back, how many of them a chance reconstruction would get), but
no reconstructed record, cell count or interval; ``show_values`` adds the cube cells'
intervals (the records given back) and each group's posterior per record. Codes of the
dimensions and the groups are shown: they are the tables' headings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from anonaudit import __version__
from anonaudit.files import printable
from anonaudit.report.kit import dumps
from anonaudit.settings.names import SCHEMA_VERSION
from anonaudit.tables.reconstruct import BesideDP, GroupReconstruction, Linkage, Reconstruction

__all__ = ["RATES", "reconstruct_json", "reconstruct_summary", "reconstruct_to_dict"]

#: What each rate counts, as the summary says it (``{sensitive}``: the dimension).
RATES = {
    "reconstructed": "groups reconstructed exactly",
    "records_forced": "records in forced cells",
    "records_unique": "records unique in the reconstruction",
    "sensitive_known": "records whose {sensitive} is known",
    "records_right": "real records of the likeliest reconstruction (counted groups)",
}


def reconstruct_to_dict(
    result: Reconstruction,
    *,
    show_values: bool = False,
    dp: BesideDP | None = None,
    linkage: Linkage | None = None,
) -> dict[str, Any]:
    """The ``anonaudit reconstruct`` JSON document (``dp``: the same tables'
    reconstruction from their DP release, beside it; ``linkage``: the reconstructed
    records linked to an identified table)."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "command": "reconstruct",
        "redacted": not show_values,
        "reconstructed": result.reconstructed > 0,
        "tables": [
            {
                "name": t.name,
                "dimensions": list(t.dimensions),
                "cells": len(t),
                "suppressed": int(t.suppressed.sum()),
                "rounded": int((t.state == "rounded").sum()),
            }
            for t in result.tables.tables
        ],
        "group": result.group,
        "sensitive": result.sensitive,
        "dimensions": list(result.dimensions),
        "cube_cells": math.prod(result.shape),
        "groups_solved": len(result.groups),
        "records": result.records,
        "baseline": {
            "draws": result.draws,
            "seed": result.seed,
            "model": "each dimension's codes drawn independently with the group's "
            "one-way margins (Ruggles & Van Riper 2021)",
        },
        "rates": _rates(result),
        "by_size": [
            {
                "records": [b.low, b.high],
                "groups": b.groups,
                "reconstructed": b.reconstructed,
                "records_total": b.records,
                "records_forced": b.records_forced,
            }
            for b in result.by_size()
        ],
        "groups": [_group(result, g, show_values) for g in result.groups],
        "smallest_subsets": [
            {"tables": list(names), "groups": count} for names, count in result.smallest_subsets()
        ]
        if result.subsets
        else None,
        "dp": None if dp is None else _dp(dp),
        "linkage": None
        if linkage is None
        else {
            "columns": list(linkage.columns),
            "records": linkage.records,
            "unique": linkage.unique,
            "unmatched": linkage.unmatched,
            "k_map": linkage.k_map,
            "chance_unique": linkage.chance_unique,
        },
    }
    return document


def _rates(result: Reconstruction) -> list[dict[str, Any]]:
    """Every rate beside its chance baseline."""
    return [
        {
            "rate": r.key,
            "count": r.count,
            "of": r.of,
            "share": r.share,
            "chance": r.chance,
            "chance_share": r.chance_share,
        }
        for r in result.rates()
    ]


def _dp(dp: BesideDP) -> dict[str, Any]:
    """The DP side: the release, what its reconstruction certifies, how close its
    closest tables come to the groups the exact tables give back."""
    release, noisy, close = dp.release, dp.result, dp.closeness
    return {
        "mechanism": release.noise.mechanism,
        "epsilon": release.epsilon,
        "delta": release.delta,
        "scale": release.noise.scale,
        "cells_per_person": release.cells_per_person,
        "confidence": noisy.confidence,
        "groups_certified": noisy.reconstructed,
        "groups_contradicted": noisy.contradicted,
        "rates": _rates(noisy),
        "closest": {
            "groups": close.groups,
            "exact": close.exact,
            "records": close.records,
            "records_right": close.records_right,
            "certified": close.certified,
            "certified_right": close.certified_right,
        },
    }


def _group(result: Reconstruction, g: GroupReconstruction, show_values: bool) -> dict[str, Any]:
    """One group's entry: its counts, and with ``show_values`` what it gives back."""
    entry: dict[str, Any] = {
        "group": g.group,
        "records": g.records,
        "reconstructed": g.reconstructed,
        "method": g.method,
        "forced_cells": int(g.forced.sum()),
        "records_forced": g.records_forced,
        "records_unique": g.records_unique,
        "sensitive_known": g.sensitive_known if result.sensitive is not None else None,
        "solutions": g.solutions,
        "records_right": g.records_right,
        "smallest_subset": None
        if g.smallest is None
        else [result.tables.tables[k].name for k in g.smallest],
        "chance": {
            "reconstructed": g.chance.reconstructed,
            "records_forced": g.chance.records_forced,
            "records_unique": g.chance.records_unique,
            "sensitive_known": g.chance.sensitive_known if result.sensitive else None,
            "records_right": g.chance.records_right,
        },
    }
    if show_values:
        entry["cells"] = [
            {
                "cell": result.label(int(c)),
                "lower": float(g.lower[c]),
                "upper": float(g.upper[c]) if math.isfinite(g.upper[c]) else None,
            }
            for c in range(len(g.upper))
            if g.upper[c] > 0
        ]
        entry["posterior"] = None if g.posterior is None else [float(p) for p in g.posterior]
    return entry


def reconstruct_json(
    result: Reconstruction,
    *,
    show_values: bool = False,
    dp: BesideDP | None = None,
    linkage: Linkage | None = None,
) -> str:
    """:func:`reconstruct_to_dict` as JSON text."""
    return dumps(reconstruct_to_dict(result, show_values=show_values, dp=dp, linkage=linkage))


def reconstruct_summary(document: Mapping[str, Any], *, limit: int = 20) -> str:
    """The printed summary, from the JSON document: the verdict, each rate beside its
    chance baseline, the groups by size, and the first ``limit`` groups."""
    rates = {r["rate"]: r for r in document["rates"]}
    done = rates["reconstructed"]
    solved = document["groups_solved"]
    if document["reconstructed"]:
        verdict = (
            f"{done['count']:,} of {solved:,} groups ({done['share']:.1%}) reconstructed "
            "exactly: every record of theirs given back"
        )
    else:
        verdict = f"no group of {solved:,} reconstructed exactly"
    lines = [f"anonaudit reconstruct: {verdict}"]
    for t in document["tables"]:
        extra = f", {t['rounded']} rounded" if t["rounded"] else ""
        by = ", ".join(map(printable, t["dimensions"]))
        lines.append(
            f"  {printable(t['name'])}: counts by {by}, {t['cells']:,} cells, "
            f"{t['suppressed']:,} suppressed{extra}"
        )
    group = document["group"]
    per = f"each {printable(group)} solved alone" if group else "all groups solved jointly"
    cube = " x ".join(map(printable, document["dimensions"]))
    lines.append(
        f"  {per}: {document['records']:,} records over {cube} "
        f"({document['cube_cells']:,} cells a group)"
    )
    sensitive = printable(document["sensitive"] or "")
    labels = {key: RATES[key].format(sensitive=sensitive) for key in rates}
    width = max(len(label) for label in labels.values())
    draws = document["baseline"]["draws"]
    lines.append(f"  {'proved':<{width}}  {'attack':>17}  chance ({draws} draws from the margins)")
    for key, rate in rates.items():
        count = f"{rate['count']:,.1f}" if key == "records_right" else f"{rate['count']:,.0f}"
        lines.append(
            f"  {labels[key]:<{width}}  {count:>9} ({rate['share']:5.1%})  "
            f"{rate['chance']:,.1f} ({rate['chance_share']:.1%})"
        )
    if len(document["by_size"]) > 1:
        lines.append("  groups reconstructed by their records:")
        for band in document["by_size"]:
            low, high = band["records"]
            span = f"{low}-{high}" if high is not None else f"{low}+"
            share = band["reconstructed"] / band["groups"]
            lines.append(
                f"    {span:>9}: {band['reconstructed']:,} of {band['groups']:,} ({share:.1%})"
            )
    lines.append(f"  groups (the first {min(limit, solved)}):")
    name = f"{printable(group)}=" if group else ""
    for g in document["groups"][:limit]:
        lines.append(f"    {name}{printable(g['group']) or '(all)'}: {_group_line(g, document)}")
    if solved > limit:
        lines.append(f"    ... and {solved - limit:,} more (all in the JSON report)")
    if document.get("smallest_subsets"):
        lines.append("  the smallest subsets of the tables that give a group back:")
        for entry in document["smallest_subsets"][:limit]:
            names = " + ".join(map(printable, entry["tables"]))
            lines.append(f"    {names}: {entry['groups']:,} groups")
    if document.get("linkage"):
        linked = document["linkage"]
        by = ", ".join(map(printable, linked["columns"]))
        share = linked["unique"] / linked["records"] if linked["records"] else 0.0
        lines.append(
            f"  linked to the identified table by {by}: {linked['unique']:,} of "
            f"{linked['records']:,} reconstructed records ({share:.1%}) match exactly one "
            f"person (k-map {linked['k_map']}; {linked['unmatched']:,} match nobody); by "
            f"chance {linked['chance_unique']:,.1f}"
        )
    if document.get("dp"):
        lines += _dp_lines(document["dp"], done)
    if document["redacted"]:
        lines.append("  values redacted; --show-values prints the records given back")
    return "\n".join(lines) + "\n"


def _group_line(g: Mapping[str, Any], document: Mapping[str, Any]) -> str:
    """A group's line: its records, what is proved of them, and how."""
    head = f"{g['records']:,} records, "
    if g["reconstructed"]:
        text = head + f"reconstructed (proved by {g['method']})"
    else:
        text = head + f"{g['forced_cells']:,} of {document['cube_cells']:,} cells forced"
        if g["solutions"] is not None:
            text += f", {g['solutions']:,} tables possible (counted)"
    text += f"; records known {g['records_forced']:,} ({g['records_unique']:,} unique"
    if g["sensitive_known"] is not None:
        text += f"; {printable(document['sensitive'])} known {g['sensitive_known']:,}"
    text += ")"
    if "cells" in g:
        shown = [
            f"{printable(c['cell'])}: {c['lower']:g}"
            + ("" if c["upper"] == c["lower"] else f" to {_end(c['upper'])}")
            for c in g["cells"]
        ]
        text += "\n      " + "\n      ".join(shown)
    return text


def _end(upper: float | None) -> str:
    return "?" if upper is None else f"{upper:g}"


def _dp_lines(dp: Mapping[str, Any], exact: Mapping[str, Any]) -> list[str]:
    """The DP side of the summary: what the noise buys."""
    delta = f", delta {dp['delta']:g}" if dp["delta"] else ""
    certified = next(r for r in dp["rates"] if r["rate"] == "reconstructed")
    close = dp["closest"]
    right = close["records_right"] / close["records"] if close["records"] else 0.0
    lines = [
        f"  beside DP: the same tables released with {dp['mechanism']} noise, epsilon "
        f"{dp['epsilon']:g}{delta} (scale {dp['scale']:.4g}; a person is in "
        f"{dp['cells_per_person']} cells), their counts read as evidence:",
        f"    groups certified at {dp['confidence']:.0%} confidence: "
        f"{certified['count']:,.0f} ({certified['share']:.1%}), against "
        f"{exact['count']:,.0f} ({exact['share']:.1%}) from the exact tables",
        f"    closest tables (least absolute difference from the released cells), on the "
        f"{close['groups']:,} groups the exact tables give back: {close['exact']:,} "
        f"rebuilt exactly, {close['records_right']:,} of {close['records']:,} records "
        f"in their cell ({right:.1%})",
    ]
    if dp["groups_contradicted"]:
        lines.append(
            f"    {dp['groups_contradicted']:,} groups with noise beyond the intervals "
            "(no table within them all: nothing certified of them)"
        )
    return lines
