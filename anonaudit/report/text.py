"""The short human summary the command line prints."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anonaudit.audit import AuditReport

__all__ = ["summary"]


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.4g}"


def _mark(passed: bool | None) -> str:
    return {None: "", True: "  [pass]", False: "  [FAIL]"}[passed]


def summary(report: AuditReport) -> str:
    """A few lines per measure, with pass/fail marks where the policy sets a threshold."""
    k = report.k_anonymity
    risk = report.risk
    lines = [
        f"anonaudit: {report.rows:,} records, {k.classes:,} equivalence classes over "
        f"{', '.join(report.quasi_identifiers)}",
    ]
    if report.dropped_records:
        lines.append(f"  {report.dropped_records:,} records with a null QI were left out")
    wanted = f" (policy: k >= {k.threshold})" if k.threshold is not None else ""
    lines.append(
        f"k-anonymity: k = {k.k}{wanted}; {k.violating_records:,} records in "
        f"{len(k.violating):,} classes below the threshold{_mark(k.passed)}"
        if k.threshold is not None
        else f"k-anonymity: k = {k.k}"
    )
    for sa in report.sensitive:
        ld, tc, dc = report.l_diversity[sa], report.t_closeness[sa], report.disclosure[sa]
        lines.append(f"{sa}:")
        recursive = (
            f"recursive (c,{ld.recursive_l}) for c > {_fmt(ld.recursive_c)}"
            if not math.isinf(ld.recursive_c)
            else f"recursive (c,{ld.recursive_l}) for no c (a class has < {ld.recursive_l} values)"
        )
        lines.append(
            f"  l-diversity: distinct {ld.distinct}, entropy {_fmt(ld.entropy)}, "
            f"{recursive}{_mark(ld.passed)}"
        )
        lines.append(f"  t-closeness ({tc.distance}): t = {_fmt(tc.t)}{_mark(tc.passed)}")
        lines.append(
            f"  disclosure: alpha {_fmt(dc.alpha)}, beta {_fmt(dc.beta)}, "
            f"delta {_fmt(dc.delta)}{_mark(dc.passed)}"
        )
        if ld.nulls:
            lines.append(f"  records with a null {sa}: {ld.nulls:,}")
    lines.append(
        f"risk (prosecutor): highest {_fmt(risk.highest)}, average {_fmt(risk.average)}, "
        f"{risk.sample_uniques:,} sample uniques ({risk.sample_uniques_fraction:.2%}), "
        f"{risk.records_at_risk:,} records above {_fmt(risk.threshold)}{_mark(risk.passed)}"
    )
    verdict = report.passed
    if verdict is not None:
        failed = [name for name, ok in report.verdicts() if not ok]
        lines.append("PASS: every threshold is met" if verdict else "FAIL: " + "; ".join(failed))
    return "\n".join(lines)
