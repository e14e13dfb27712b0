"""How the reports show :mod:`anonaudit.measures.suda`: its lines in the text summary,
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
    _fmt,
    _plural,
    exact,
    join_names,
    make_listing,
    none_as_null,
    qi_value,
    real,
)

if TYPE_CHECKING:
    pass
from anonaudit.measures.suda import SudaResult
from anonaudit.report.sections.base import AnalysisSection

__all__ = ["SECTION", "SpecialUniquesSection", "SudaView"]


@dataclass(frozen=True)
class SudaView:
    """The "Special uniques (SUDA)" section.

    Attributes
    ----------
    facts : tuple of Fact
        Sample and special uniques, the DIS estimate, the search limits.
    limit : str or None
        What a bounded search misses, when it was bounded.
    contributions : tuple of TableRow
        Per QI, its share of the total SUDA score.
    sizes : tuple of TableRow
        MSUs found of each size.
    bands : tuple of TableRow
        Records per DIS-SUDA band.
    listing : Listing or None
        The highest-scoring records with the column sets that single them out.
    """

    facts: tuple[Fact, ...]
    limit: str | None
    contributions: tuple[TableRow, ...]
    sizes: tuple[TableRow, ...]
    bands: tuple[TableRow, ...]
    listing: Listing | None


def suda_view(result: SudaResult, audited: Audited, options: Options) -> SudaView:
    """The view of ``result``, the SUDA analysis of ``audited``."""
    weights = (
        "(ATT − k)! per minimal sample unique of k of the ATT columns (sdcMicro, Elliot et al.)"
        if result.original_scores
        else "(2^(ATT−k) − 1) k! (ATT−k)! / ATT! per minimal sample unique of k of the ATT "
        "columns (IHSN weights)"
    )
    facts = (
        Fact(
            "records unique on every quasi-identifier (sample uniques)",
            _count(result.sample_uniques),
        ),
        Fact(
            "special uniques (also unique on fewer columns: a minimal sample unique "
            "smaller than all of them, within the limit)",
            _count(result.special_uniques),
        ),
        Fact(
            "largest column set searched",
            f"{result.max_msu_size} of {len(result.quasi_identifiers)} columns",
        ),
        Fact("score weights", weights),
        Fact("sampling fraction used for DIS", real(result.dis_fraction)),
        Fact(
            "probability that a unique match is correct (DIS)",
            real(result.dis),
        ),
    )
    limit = (
        None
        if result.complete
        else (
            f"Only column sets of up to {result.max_msu_size} columns were searched: "
            "records unique only on larger sets are not counted, and the scores are lower "
            "bounds."
        )
    )
    contributions = tuple(
        TableRow(name, (f"{share:.1f}%",)) for name, share in result.attribute_contributions.items()
    )
    sizes = tuple(
        TableRow(_plural(size, "column"), (_count(n),)) for size, n in result.msus_by_size.items()
    )
    bands = []
    previous = None
    for edge, n in result.dis_bands.items():
        if previous is None:
            label = "0 (no minimal sample unique)"
        elif edge == 1.0:
            label = f"above {previous:g}"
        else:
            label = f"above {previous:g}, at most {edge:g}"
        bands.append(TableRow(label, (_count(n),)))
        previous = edge
    return SudaView(
        facts=facts,
        limit=limit,
        contributions=contributions,
        sizes=sizes,
        bands=tuple(bands),
        listing=_top_listing(result, audited, options) if result.top else None,
    )


def _top_listing(result: SudaResult, audited: Audited, options: Options) -> Listing:
    """The highest-scoring records: QI values, the column sets, the scores."""
    qi = list(audited.quasi_identifiers)
    shown = min(options.max_rows, len(result.top))
    values = [[qi_value(v, options.redact) for v in r.values] for r in result.top]
    msus = ["; ".join(join_names(m) for m in r.msus) for r in result.top]
    rows = tuple(
        (
            *(none_as_null(v) for v in values[i]),
            msus[i],
            real(r.score),
            real(r.dis_score),
        )
        for i, r in enumerate(result.top[:shown])
    )

    def table(limit: int | None) -> pa.Table:
        top = result.top[:limit]
        return pa.Table.from_arrays(
            [pa.array([row[j] for row in values[:limit]], pa.string()) for j in range(len(qi))]
            + [
                pa.array(msus[:limit], pa.string()),
                pa.array([exact(r.score) for r in top], pa.string()),
                pa.array([exact(r.dis_score) for r in top], pa.string()),
            ],
            names=[*qi, "unique on", "suda_score", "dis_suda_score"],
        )

    return make_listing(
        caption=(
            "Records with the highest SUDA scores and the column sets on which each is "
            f"unique ({shown:,} of {len(result.top):,} shown)"
        ),
        summary=f"Show {_plural(shown, 'record')}",
        headers=(*qi, "unique on", "SUDA score", "DIS-SUDA"),
        numeric_from=len(qi) + 1,
        rows=rows,
        total=len(result.top),
        table=table,
        name="suda-top",
        noun="record",
        options=options,
    )


class SpecialUniquesSection(AnalysisSection[SudaResult]):
    """How the reports show :data:`anonaudit.measures.suda.ANALYSIS`."""

    key = "suda"
    template = "sections/suda.html.j2"
    anchor = "suda"
    title = "Special uniques (SUDA)"
    definitions: ClassVar[Mapping[str, Any]] = {
        "suda": {
            "type": "object",
            "description": "Special uniques (1.3): only with --suda.",
            "properties": {
                "max_msu_size": {"type": "integer", "minimum": 0},
                "complete": {"type": "boolean"},
                "original_scores": {"type": "boolean"},
                "dis_fraction": {"type": "number"},
                "sample_uniques": {"type": "integer", "minimum": 0},
                "special_uniques": {"type": "integer", "minimum": 0},
                "pairs": {"type": "integer", "minimum": 0},
                "dis": {"$ref": "#/$defs/real_or_null"},
                "msus_by_size": {
                    "type": "object",
                    "additionalProperties": {"type": "integer", "minimum": 0},
                    "description": "MSU size -> MSUs.",
                },
                "dis_score_bands": {
                    "type": "object",
                    "additionalProperties": {"type": "integer", "minimum": 0},
                    "description": "Upper edge -> records.",
                },
                "attribute_contributions": {
                    "type": "object",
                    "additionalProperties": {"type": "number"},
                    "description": "QI -> percent of the total score.",
                },
                "top": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "quasi_identifiers": {"$ref": "#/$defs/qi_values"},
                            "score": {"type": "number"},
                            "dis_score": {"type": "number"},
                            "msus": {
                                "type": "array",
                                "items": {"type": "array", "items": {"type": "string"}},
                            },
                        },
                        "required": ["quasi_identifiers", "score", "dis_score", "msus"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": [
                "max_msu_size",
                "complete",
                "original_scores",
                "dis_fraction",
                "sample_uniques",
                "special_uniques",
                "pairs",
                "dis",
                "msus_by_size",
                "dis_score_bands",
                "attribute_contributions",
                "top",
            ],
            "additionalProperties": False,
        }
    }
    properties: ClassVar[Mapping[str, Any]] = {"suda": {"$ref": "#/$defs/suda"}}

    def summary(self, result: SudaResult, audited: Audited) -> list[str]:
        su = result
        shares = su.attribute_contributions.items()
        return [
            f"suda (MSUs of up to {su.max_msu_size} QIs): {su.special_uniques:,} special "
            f"uniques (unique on fewer than all {len(su.quasi_identifiers)} QIs) among "
            f"{su.sample_uniques:,} sample uniques; DIS {_fmt(su.dis)}"
            + (
                f"; highest score {_fmt(su.top[0].score)} (DIS-SUDA {_fmt(su.top[0].dis_score)})"
                if su.top
                else ""
            ),
            "  share of the SUDA score carried by each QI (more than 100% in all: a record's "
            "score counts once for each QI of each of its MSUs): "
            + ", ".join(f"{name} {share:.1f}%" for name, share in shares),
        ]

    def to_json(self, result: SudaResult, audited: Audited, layout: Layout) -> dict[str, Any]:
        """``suda``."""
        su = result
        return {
            "suda": {
                "max_msu_size": su.max_msu_size,
                "complete": su.complete,
                "original_scores": su.original_scores,
                "dis_fraction": su.dis_fraction,
                "sample_uniques": su.sample_uniques,
                "special_uniques": su.special_uniques,
                "pairs": su.pairs,
                "dis": su.dis,
                "msus_by_size": {str(size): n for size, n in su.msus_by_size.items()},
                "dis_score_bands": {str(edge): n for edge, n in su.dis_bands.items()},
                "attribute_contributions": su.attribute_contributions,
                "top": [
                    {
                        "quasi_identifiers": layout.qi_values(
                            dict(zip(audited.quasi_identifiers, r.values, strict=True))
                        ),
                        "score": r.score,
                        "dis_score": r.dis_score,
                        "msus": [list(msu) for msu in r.msus],
                    }
                    for r in su.top
                ],
            }
        }

    def json_rows(self, document: Mapping[str, Any]) -> int:
        """The highest-scoring records, with their QI values."""
        return len(document["suda"]["top"])

    def view(self, result: SudaResult, audited: Audited, options: Options) -> SudaView:
        """Which records are unique on few columns, on which columns, and how much each
        column contributes."""
        return suda_view(result, audited, options)


SECTION = SpecialUniquesSection()
