"""How the reports show :mod:`anonaudit.measures.qi_analysis`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    Listing,
    Options,
    TableRow,
    _count,
    _share,
    exact,
    join_names,
    make_listing,
    real,
)

if TYPE_CHECKING:
    pass
from anonaudit.measures.qi_analysis import QIAnalysis
from anonaudit.report.sections.base import AnalysisSection

__all__ = ["SECTION", "QIAnalysisView", "QuasiIdentifierAnalysisSection"]


@dataclass(frozen=True)
class QIAnalysisView:
    """The "Which columns identify" section.

    Attributes
    ----------
    outcome : str
        The column whose removal helps most, in a sentence.
    facts : tuple of Fact
        Records, sample uniques and k over all QIs; subsets analysed.
    drops : tuple of TableRow
        Per QI: k, sample uniques and their share without it.
    subsets : Listing
        Distinction and separation of every subset analysed, in ARX's order.
    """

    outcome: str
    facts: tuple[Fact, ...]
    drops: tuple[TableRow, ...]
    subsets: Listing


def qi_analysis_view(result: QIAnalysis, options: Options) -> QIAnalysisView:
    """The view of ``result``."""
    best = result.most_identifying
    outcome = (
        f"Leaving out {best.dropped} helps most: {_share(best.uniques_fraction)} of the "
        f"records stay unique on the other columns, against "
        f"{_share(result.uniques_fraction)} with every column."
        if result.uniques
        else "No record is unique on the quasi-identifiers."
    )
    facts = (
        Fact("records", _count(result.rows)),
        Fact(
            "unique on every quasi-identifier",
            f"{result.uniques:,} ({_share(result.uniques_fraction)}), k = {result.k:,}",
        ),
        Fact(
            "column sets analysed",
            f"{len(result.entries):,} (every set of up to {result.max_size} of the "
            f"{len(result.quasi_identifiers)} columns)",
        ),
    )
    drops = tuple(
        TableRow(
            d.dropped,
            (_count(d.k), _count(d.uniques), _share(d.uniques_fraction)),
        )
        for d in result.drops
    )
    shown = min(options.max_rows, len(result.entries))
    names = [join_names(e.qi) for e in result.entries]

    def table(limit: int | None) -> pa.Table:
        entries = result.entries[:limit]
        return pa.Table.from_arrays(
            [
                pa.array(names[:limit], pa.string()),
                pa.array([str(len(e.qi)) for e in entries], pa.string()),
                pa.array([exact(e.distinction) for e in entries], pa.string()),
                pa.array([exact(e.separation) for e in entries], pa.string()),
            ],
            names=["columns", "size", "distinction", "separation"],
        )

    subsets = make_listing(
        caption=(
            "Distinction and separation of each column set, smallest sets first, least "
            f"distinguishing first ({shown:,} of {len(result.entries):,} shown)"
        ),
        summary=f"Show {shown:,} of {len(result.entries):,} column sets",
        headers=("columns", "distinction", "separation"),
        numeric_from=1,
        rows=tuple(
            (names[i], real(e.distinction), real(e.separation))
            for i, e in enumerate(result.entries[:shown])
        ),
        total=len(result.entries),
        table=table,
        name="qi-analysis",
        noun="column set",
        options=options,
        identifying=False,
    )
    return QIAnalysisView(outcome=outcome, facts=facts, drops=drops, subsets=subsets)


class QuasiIdentifierAnalysisSection(AnalysisSection[QIAnalysis]):
    """How the reports show :data:`anonaudit.measures.qi_analysis.ANALYSIS`."""

    key = "qi_analysis"
    template = "sections/qi_analysis.html.j2"
    anchor = "qi-analysis"
    title = "Which columns identify"
    definitions: ClassVar[Mapping[str, Any]] = {
        "qi_analysis_entry": {
            "type": "object",
            "properties": {
                "qi": {"type": "array", "items": {"type": "string"}},
                "distinction": {"type": "number"},
                "separation": {"type": "number"},
            },
            "required": ["qi", "distinction", "separation"],
            "additionalProperties": False,
        },
        "qi_analysis_summary": {
            "type": "object",
            "description": "Uniqueness over all QIs and without each QI in turn (1.3).",
            "properties": {
                "max_subset_size": {"type": "integer", "minimum": 0},
                "k": {"type": "integer", "minimum": 0},
                "sample_uniques": {"type": "integer", "minimum": 0},
                "sample_uniques_fraction": {"type": "number"},
                "without": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "qi": {"description": "The QI dropped.", "type": "string"},
                            "k": {"type": "integer", "minimum": 0},
                            "sample_uniques": {"type": "integer", "minimum": 0},
                            "sample_uniques_fraction": {"type": "number"},
                        },
                        "required": ["qi", "k", "sample_uniques", "sample_uniques_fraction"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": [
                "max_subset_size",
                "k",
                "sample_uniques",
                "sample_uniques_fraction",
                "without",
            ],
            "additionalProperties": False,
        },
    }
    properties: ClassVar[Mapping[str, Any]] = {
        "qi_analysis": {
            "description": "Every QI subset analysed, in ARX's order; only with "
            "--qi-analysis (1.3).",
            "type": "array",
            "items": {"$ref": "#/$defs/qi_analysis_entry"},
        },
        "qi_analysis_summary": {"$ref": "#/$defs/qi_analysis_summary"},
    }

    def summary(self, result: QIAnalysis, audited: Audited) -> list[str]:
        q = result
        return [
            f"qi analysis ({len(q.entries):,} subsets of up to {q.max_size} QIs): "
            f"sample uniques {q.uniques_fraction:.2%} with every QI; left without one QI: "
            + ", ".join(f"{d.dropped} {d.uniques_fraction:.2%} (k = {d.k})" for d in q.drops)
        ]

    def to_json(self, result: QIAnalysis, audited: Audited, layout: Layout) -> dict[str, Any]:
        """``qi_analysis`` and ``qi_analysis_summary``."""
        q = result
        return {
            "qi_analysis": [
                {"qi": list(e.qi), "distinction": e.distinction, "separation": e.separation}
                for e in q.entries
            ],
            "qi_analysis_summary": {
                "max_subset_size": q.max_size,
                "k": q.k,
                "sample_uniques": q.uniques,
                "sample_uniques_fraction": q.uniques_fraction,
                "without": [
                    {
                        "qi": d.dropped,
                        "k": d.k,
                        "sample_uniques": d.uniques,
                        "sample_uniques_fraction": d.uniques_fraction,
                    }
                    for d in q.drops
                ],
            },
        }

    def view(self, result: QIAnalysis, audited: Audited, options: Options) -> QIAnalysisView:
        """What happens without each QI; distinction and separation of the QI subsets."""
        return qi_analysis_view(result, options)


SECTION = QuasiIdentifierAnalysisSection()
