"""The JSON report: the versioned contract batch jobs read.

``schema_version`` follows semantic versioning: a new key is a minor change, a renamed
or removed key a major one. Infinity is written as the string ``"inf"`` (JSON has no
infinity); every other number is finite. The layout is documented in the README.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonaudit import __version__

if TYPE_CHECKING:
    from anonaudit.audit import AuditReport
    from anonaudit.classtable import SourceStats
    from anonaudit.dp.companion import DPReport
    from anonaudit.dp.utility import Measures

__all__ = ["SCHEMA_VERSION", "coverage", "dp_to_dict", "dumps", "report_to_dict"]

SCHEMA_VERSION = "1.2"


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


def _source(stats: SourceStats) -> dict[str, Any]:
    return {
        "name": stats.name,
        "format": stats.format,
        "rows": stats.rows,
        "size_bytes": stats.size_bytes,
        "filter": stats.filter,
        "version": stats.version,
        "files": [
            {"name": f.name, "rows": f.rows, "size_bytes": f.size_bytes} for f in stats.files
        ],
    }


def coverage(sources: Sequence[SourceStats]) -> dict[str, int]:
    """What an audit read: sources, files, records (before any null drop) and bytes.

    >>> from anonaudit.classtable import SourceStats
    >>> coverage([SourceStats("a.csv", "csv", 10, 100), SourceStats("<df>", "pandas", 5)])
    {'sources': 2, 'files': 1, 'rows': 15, 'size_bytes': 100}
    """
    files = sum(len(s.files) or int(s.size_bytes is not None) for s in sources)
    return {
        "sources": len(sources),
        "files": files,
        "rows": sum(s.rows for s in sources),
        "size_bytes": sum(s.size_bytes or 0 for s in sources),
    }


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
        "sources": [_source(s) for s in report.sources],
        "coverage": coverage(report.sources),
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
        }
        | _population(report),
    } | ({"dp": dp_to_dict(report.dp)} if report.dp is not None else {})


def _population(report: AuditReport) -> dict[str, Any]:
    """``risk.population``, ``risk.journalist`` and ``risk.marketer``, when asked for."""
    p, j, m = report.population, report.journalist, report.marketer
    if p is None or j is None or m is None:
        return {}
    return {
        "population": {
            "model": p.model_used,
            "requested_model": p.model,
            "reason": p.reason,
            "uniques": _number(p.uniques),
            "uniques_fraction": _number(p.uniques_fraction),
            "population_size": _number(p.population_size),
            "sampling_fraction": _number(p.sampling_fraction),
            "sample_uniques": p.sample_uniques,
            "estimates": {
                "pitman": _number(p.pitman),
                "zayatz": _number(p.zayatz),
                "snb": _number(p.snb),
            },
        },
        "journalist": {
            "highest": _number(j.highest),
            "average": _number(j.average),
            "threshold": j.threshold,
            "records_at_risk": j.records_at_risk,
            "records_at_risk_fraction": _number(j.records_at_risk_fraction),
            "population_class_sizes": j.basis,
        },
        "marketer": {"average": _number(m.average), "population_class_sizes": m.basis},
    }


def dp_to_dict(report: DPReport) -> dict[str, Any]:
    """Lay out a differential-privacy companion report (the ``dp`` section)."""
    r, a, loss, u = report.release, report.accounting, report.privacy_loss, report.utility
    s = r.sensitivity
    return {
        "mechanism": r.mechanism,
        "epsilon": _number(r.epsilon),
        "delta": _number(r.delta),
        "noise_scale": _number(r.noise_scale),
        "neighbouring": s.neighbouring,
        "privacy_unit": report.privacy_unit,
        "max_contributions": s.max_contributions,
        "sensitivity": {"l0": s.l0, "l1": s.l1, "l2": _number(s.l2), "linf": s.linf},
        "domain": {"kind": r.domain, "cells": r.cells, "threshold": r.threshold},
        "released": {"rows": r.table.rows, "combinations": len(r.table)},
        "not_released": {
            "outside_domain": r.outside_domain,
            "bounded_records": report.bounded_records,
        },
        "accounting": {
            "epsilon": _number(a.epsilon),
            "delta": _number(a.delta),
            "epsilon_pure": _number(a.cost.epsilon),
            "rho": _number(a.rho),
            "delta_threshold": _number(a.cost.delta),
            "epsilon_exact_gaussian": _number(a.epsilon_exact_gaussian),
            "epsilon_pld": _number(a.epsilon_pld),
            "renyi": [{"alpha": alpha, "epsilon": _number(e)} for alpha, e in a.renyi],
        },
        "privacy_loss": {
            "epsilon": _number(loss.epsilon),
            "mean": _number(loss.mean),
            "kl_bound": _number(loss.kl_bound),
            "profile": [{"epsilon": e, "delta": _number(d)} for e, d in report.profile],
        },
        "utility": {
            "cells": u.cells,
            "expected_mean_absolute_error": _number(u.expected_mean_absolute_error),
            "expected_rmse": _number(u.expected_rmse),
            "expected_within": u.expected_within,
            "confidence": u.confidence,
            "mean_absolute_error": _number(u.mean_absolute_error),
            "rmse": _number(u.rmse),
            "max_absolute_error": u.max_absolute_error,
            "bias": _number(u.bias),
            "share_within": _number(u.share_within),
            "classes": u.classes,
            "classes_released": u.classes_released,
            "classes_hidden": u.classes_hidden,
            "classes_fabricated": u.classes_fabricated,
        },
        "measures": {
            "original": _measures(report.measures.original),
            "released": _measures(report.measures.released),
        },
        "contrast": {
            sa: {
                "epsilon": _number(c.epsilon),
                "max_posterior": _number(c.max_posterior),
                "dp_posterior_bound": _number(c.dp_posterior_bound),
                "max_pml": _number(c.max_pml),
                "min_entropy": _number(c.min_entropy),
                "disclosed_classes": c.disclosed_classes,
                "disclosed_records": c.disclosed_records,
                "classes_above_bound": c.classes_above_bound,
                "records_above_bound": c.records_above_bound,
            }
            for sa, c in report.contrast.items()
        },
    }


def _measures(measures: Measures | None) -> dict[str, Any] | None:
    if measures is None:
        return None
    return {
        "k": measures.k,
        "classes": measures.classes,
        "distinct_l": measures.distinct_l,
        "entropy_l": {sa: _number(v) for sa, v in measures.entropy_l.items()},
        "t": {sa: _number(v) for sa, v in measures.t.items()},
    }


def dumps(data: dict[str, Any]) -> str:
    """Serialize a report dict; refuses NaN and infinity (they must be strings by now)."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
