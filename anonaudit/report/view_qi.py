"""The views of the "Which columns identify" and "Special uniques (SUDA)" sections.

:func:`qi_analysis_view` lays out a :class:`~anonaudit.checks.qi_analysis.QIAnalysis`
(what happens without each QI; distinction and separation of the QI subsets) and
:func:`suda_view` a :class:`~anonaudit.checks.suda.SudaResult` (which records are unique
on few columns, on which columns, and how much each column contributes), in plain
words. Nothing here computes beyond formatting; QI values of the listed records are
redacted when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from anonaudit.measures.present import (
    Fact,
    Listing,
    Options,
    _count,
    _exact,
    _none_as_null,
    _plural,
    _qi_value,
    _real,
    _share,
    join_names,
    make_listing,
)
from anonaudit.report.views import TableRow

if TYPE_CHECKING:
    from anonaudit.auditing import AuditReport
    from anonaudit.checks.qi_analysis import QIAnalysis
    from anonaudit.checks.suda import SudaResult

__all__ = ["QIAnalysisView", "SudaView", "qi_analysis_view", "suda_view"]


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
                pa.array([_exact(e.distinction) for e in entries], pa.string()),
                pa.array([_exact(e.separation) for e in entries], pa.string()),
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
            (names[i], _real(e.distinction), _real(e.separation))
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


def suda_view(result: SudaResult, report: AuditReport, options: Options) -> SudaView:
    """The view of ``result``, the SUDA analysis of ``report``."""
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
        Fact("sampling fraction used for DIS", _real(result.dis_fraction)),
        Fact(
            "probability that a unique match is correct (DIS)",
            _real(result.dis),
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
        listing=_top_listing(result, report, options) if result.top else None,
    )


def _top_listing(result: SudaResult, report: AuditReport, options: Options) -> Listing:
    """The highest-scoring records: QI values, the column sets, the scores."""
    qi = list(report.quasi_identifiers)
    shown = min(options.max_rows, len(result.top))
    values = [[_qi_value(v, options.redact) for v in r.values] for r in result.top]
    msus = ["; ".join(join_names(m) for m in r.msus) for r in result.top]
    rows = tuple(
        (
            *(_none_as_null(v) for v in values[i]),
            msus[i],
            _real(r.score),
            _real(r.dis_score),
        )
        for i, r in enumerate(result.top[:shown])
    )

    def table(limit: int | None) -> pa.Table:
        top = result.top[:limit]
        return pa.Table.from_arrays(
            [pa.array([row[j] for row in values[:limit]], pa.string()) for j in range(len(qi))]
            + [
                pa.array(msus[:limit], pa.string()),
                pa.array([_exact(r.score) for r in top], pa.string()),
                pa.array([_exact(r.dis_score) for r in top], pa.string()),
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
