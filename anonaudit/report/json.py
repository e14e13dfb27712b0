"""The JSON report: the versioned contract batch jobs read.

``schema_version`` follows semantic versioning: a new key is a minor change, a renamed
or removed key a major one. Infinity is written as the string ``"inf"`` (JSON has no
infinity); every other number is finite. The layout is documented in the README.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonaudit import __version__

if TYPE_CHECKING:
    from anonaudit.audit import AuditReport

__all__ = ["SCHEMA_VERSION", "dumps", "report_to_dict"]

SCHEMA_VERSION = "1.0"


def _number(value: float | int | None) -> float | int | str | None:
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _classes(frame: pd.DataFrame, qi: tuple[str, ...], limit: int | None) -> dict[str, Any]:
    shown = frame if limit is None else frame.head(limit)
    rows = []
    for record in shown.to_dict(orient="records"):
        entry: dict[str, Any] = {"quasi_identifiers": {name: record.pop(name) for name in qi}}
        entry.update({str(key): _number(value) for key, value in record.items()})
        rows.append(entry)
    return {"count": len(frame), "truncated": len(shown) < len(frame), "classes": rows}


def report_to_dict(report: AuditReport, *, max_classes: int | None = 100) -> dict[str, Any]:
    """Lay out ``report`` as the documented JSON structure.

    Parameters
    ----------
    report : AuditReport
        The audit.
    max_classes : int or None
        Violating classes listed per measure (worst first); ``None`` lists all. The
        ``count`` beside each list is always the full number.
    """
    qi = report.quasi_identifiers
    k = report.k_anonymity
    return {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "audited_at": report.audited_at.isoformat(),
        "rows": report.rows,
        "sources": [
            {"name": s.name, "format": s.format, "rows": s.rows, "size_bytes": s.size_bytes}
            for s in report.sources
        ],
        "quasi_identifiers": list(qi),
        "sensitive": list(report.sensitive),
        "nulls": {
            "policy": report.null_policy,
            "dropped_records": report.dropped_records,
            "per_column": report.nulls,
        },
        "policy": {
            key: list(v) if isinstance(v, tuple) else v for key, v in report.policy.active().items()
        },
        "passed": report.passed,
        "verdicts": [{"measure": name, "passed": ok} for name, ok in report.verdicts()],
        "k_anonymity": {
            "k": k.k,
            "classes": k.classes,
            "threshold": k.threshold,
            "passed": k.passed,
            "histogram": {str(size): n for size, n in k.histogram.items()},
            "violating_records": k.violating_records,
            "violating": _classes(k.violating, qi, max_classes),
        },
        "l_diversity": {
            sa: {
                "distinct": r.distinct,
                "entropy": _number(r.entropy),
                "recursive": {"c": _number(r.recursive_c), "l": r.recursive_l},
                "nulls": r.nulls,
                "thresholds": {"l": r.l, "entropy_l": r.entropy_l, "c": r.c},
                "passed": r.passed,
                "violating_records": r.violating_records,
                "violating": _classes(r.violating, qi, max_classes),
            }
            for sa, r in report.l_diversity.items()
        },
        "t_closeness": {
            sa: {
                "t": _number(r.t),
                "distance": r.distance,
                "threshold": r.threshold,
                "nulls_excluded": r.nulls_excluded,
                "passed": r.passed,
                "violating_records": r.violating_records,
                "violating": _classes(r.violating, qi, max_classes),
            }
            for sa, r in report.t_closeness.items()
        },
        "disclosure": {
            sa: {
                "alpha": _number(r.alpha),
                "beta": _number(r.beta),
                "delta": _number(r.delta),
                "thresholds": {"alpha": r.max_alpha, "beta": r.max_beta, "delta": r.max_delta},
                "passed": r.passed,
                "violating_records": r.violating_records,
                "violating": _classes(r.violating, qi, max_classes),
            }
            for sa, r in report.disclosure.items()
        },
        "risk": {
            "model": "prosecutor",
            "highest": _number(report.risk.highest),
            "average": _number(report.risk.average),
            "lowest": _number(report.risk.lowest),
            "threshold": report.risk.threshold,
            "records_at_risk": report.risk.records_at_risk,
            "records_at_risk_fraction": _number(report.risk.records_at_risk_fraction),
            "sample_uniques": report.risk.sample_uniques,
            "sample_uniques_fraction": _number(report.risk.sample_uniques_fraction),
            "bands": {str(edge): n for edge, n in report.risk.bands.items()},
            "max_highest": report.risk.max_highest,
            "passed": report.risk.passed,
        },
    }


def dumps(data: dict[str, Any]) -> str:
    """Serialize a report dict; refuses NaN and infinity (they must be strings by now)."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
