"""The JSON report: the versioned contract batch jobs read.

``schema_version`` follows semantic versioning: a new key is a minor change, a renamed
or removed key a major one. Infinity is written as the string ``"inf"`` (JSON has no
infinity); every other number is finite. The layout is documented in docs/json.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from anonaudit import __version__
from anonaudit.engines.local import FileStats
from anonaudit.measures import by_key
from anonaudit.report.criteria import criteria
from anonaudit.report.kit import Layout, dumps, json_classes, json_number
from anonaudit.report.linkage import (
    composition_entry,
    differencing_counts,
    disclosing_rows,
    entry_to_dict,
)
from anonaudit.report.sections import analysis_section, section
from anonaudit.report.views import contents_notice
from anonaudit.settings.names import SCHEMA_VERSION

if TYPE_CHECKING:
    from anonaudit.advice.lattice import Advice
    from anonaudit.classtable import SourceStats
    from anonaudit.dp.attacker import Disclosure, PosteriorSummary
    from anonaudit.dp.companion import DPReport
    from anonaudit.dp.selfaudit import AuditBound, SelfAudit
    from anonaudit.dp.utility import Measures
    from anonaudit.measures.utility import InformationLoss
    from anonaudit.report.reported import Reported

__all__ = [
    "SCHEMA_VERSION",
    "advice_to_dict",
    "coverage",
    "dp_to_dict",
    "dumps",
    "report_to_dict",
]


def _contents(
    report: Reported, document: dict[str, Any], layout: Layout, listings_dir: str | None
) -> dict[str, Any]:
    """The ``contents`` notice: rows of QI values the document holds, listings capped."""
    listings = [
        value
        for section in document.values()
        for value in _nested(section)
        if isinstance(value, dict) and {"count", "truncated", "classes"} <= value.keys()
    ]
    outside = sum(
        analysis_section(analysis).json_rows(document) for analysis, _ in report.analysed()
    )
    rows = sum(len(listing["classes"]) for listing in listings) + outside
    capped = sum(listing["truncated"] for listing in listings)
    return {
        "quasi_identifier_rows": rows,
        "listings": len(listings),
        "listings_capped": capped,
        "max_classes": layout.limit,
        "redacted": layout.redact,
        "listings_dir": listings_dir,
        "notice": contents_notice(rows, capped, layout.limit, redacted=layout.redact),
    }


def _nested(value: Any) -> list[Any]:
    """``value`` and every dict nested in it (not inside lists)."""
    if not isinstance(value, dict):
        return []
    return [value, *(item for child in value.values() for item in _nested(child))]


def _source(stats: SourceStats) -> dict[str, Any]:
    return {
        "name": stats.name,
        "format": stats.format,
        "rows": stats.rows,
        "size_bytes": stats.size_bytes,
        "filter": stats.filter,
        "version": stats.version,
        "files": [
            {
                "name": f.name,
                "rows": f.rows,
                "size_bytes": f.size_bytes,
                "null_columns": list(f.null_columns) if isinstance(f, FileStats) else [],
            }
            for f in stats.files
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


def report_to_dict(
    report: Reported,
    *,
    max_classes: int | None = 100,
    redact: bool = True,
    listings_dir: str | None = None,
) -> dict[str, Any]:
    """Lay out ``report`` as the documented JSON structure.

    Parameters
    ----------
    report : Reported
        The audit.
    max_classes : int or None
        Violating classes listed per measure (worst first); ``None`` lists all. The
        ``count`` beside each list is always the full number.
    redact : bool
        Replace the quasi-identifier values of every listed class or record by
        ``"[redacted]"``.
    listings_dir : str, optional
        Where the full listings were written as CSV files, for the ``contents`` notice.
    """
    layout = Layout(report.quasi_identifiers, max_classes, redact)
    document = _report(report, layout)
    contents = _contents(report, document, layout, listings_dir)
    return {"schema_version": document.pop("schema_version"), "contents": contents, **document}


def _report(report: Reported, layout: Layout) -> dict[str, Any]:
    measured = _measured(report, layout)
    # The population, individual and linkage risks extend the prosecutor risk's entry.
    # An optional analysis's keys join the entry of the measure it extends, or the top.
    analysed: dict[str, Any] = {}
    for analysis, found in report.analysed():
        shown = analysis_section(analysis)
        fragment = shown.to_json(found, report, layout)
        (analysed if shown.extends is None else measured[shown.extends]).update(fragment)
    return {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "audited_at": report.audited_at.isoformat(),
        "rows": report.rows,
        "suppressed_records": report.suppressed_records,
        "sources": [_source(s) for s in report.sources],
        "coverage": coverage(report.sources),
        "quasi_identifiers": list(report.quasi_identifiers),
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
        "verdicts": [{"measure": v.name, "passed": v.passed} for v in report.verdicts()],
        **_advice(report, layout),
        **measured,
        "criteria": {
            c.key: {
                "question": c.question,
                "passed": c.passed,
                "measures": list(c.measures),
                "verdicts": {name: ok for name, ok in c.verdicts},
                "not_checked": list(c.not_checked),
            }
            for c in criteria(report)
        },
        **analysed,
        "identifiers": [
            {
                "column": i.column,
                "declared_role": i.declared_role,
                "reasons": list(i.reasons),
                "allowed": i.column in report.allowed_identifiers,
                "fails": i in report.undeclared_identifiers,
            }
            for i in report.identifiers
        ],
        **(advice_to_dict(report.advice) if report.advice is not None else {}),
        **({"dp": dp_to_dict(report.dp)} if report.dp is not None else {}),
        **_history(report, layout),
    }


def _measured(report: Reported, layout: Layout) -> dict[str, Any]:
    """Every measure's entry (:data:`anonaudit.measures.MEASURES`): ``key`` or
    ``key.<SA>``."""
    return by_key(
        report.sensitive,
        lambda measure, sa: section(measure).to_json(report.result(measure, sa), layout),
    )


def _history(report: Reported, layout: Layout) -> dict[str, Any]:
    """``releases``: the release against the earlier ones in the ledger (else none)."""
    history = report.history
    if history is None:
        return {}
    differencing = {}
    for sa, result in history.differencing.items():
        rows = disclosing_rows(result, limit=layout.limit, redact=layout.redact)
        differencing[sa] = differencing_counts(result) | {
            "disclosing": {
                "count": result.disclosing_classes,
                "truncated": len(rows) < result.disclosing_classes,
                "classes": rows,
            }
        }
    against = history.differenced_with
    return {
        "releases": {
            "dataset": history.dataset,
            "recorded_as": history.recorded,
            "earlier": [entry_to_dict(entry) for entry in history.earlier],
            "composed_with": [entry.id for entry in history.composed_with],
            "composition": {sa: composition_entry(r) for sa, r in history.composition.items()},
            "differenced_with": None if against is None else against.id,
            "differencing": differencing,
            "not_checked": list(history.not_checked),
        }
    }


def _advice(report: Reported, layout: Layout) -> dict[str, Any]:
    """``utility``, ``generalization`` and ``suppression`` (the last two may be null)."""
    g, s = report.generalization, report.suppression
    return {
        "utility": _loss(report.utility),
        "generalization": None
        if g is None
        else {
            "levels": dict(g.levels),
            "hierarchies": {qi: h.name for qi, h in g.hierarchies.items() if qi in g.levels},
            "height": g.height(),
        },
        "suppression": None
        if s is None
        else {
            "passed": s.passed,
            "classes": s.classes,
            "records": s.records,
            "fraction": json_number(s.fraction),
            "rounds": s.rounds,
            "measures": [
                {"measure": m.measure, "classes": m.classes, "records": m.records}
                for m in s.measures
            ],
            "utility": None if s.utility is None else _loss(s.utility),
            "suppressed": json_classes(s.failing, layout),
        },
    }


def _loss(loss: InformationLoss) -> dict[str, Any]:
    return {
        "discernibility": json_number(loss.discernibility),
        "average_class_size": json_number(loss.average_class_size),
        "k": loss.k,
        "height": loss.height,
        "precision": json_number(loss.precision),
        "suppressed": loss.suppressed,
    }


def advice_to_dict(advice: Advice) -> dict[str, Any]:
    """``search`` (the lattice and how it was searched) and ``advice`` (the listed front).

    Each entry of ``advice``: ``levels`` per generalizable QI, ``height``, ``suppressed``
    records and their ``suppressed_fraction``, ``passed`` and the audit's ``verdicts``,
    the ``measures`` of the transformed table and its ``information_loss``.
    """
    return {
        "search": {
            "policy": {
                key: list(v) if isinstance(v, tuple) else v
                for key, v in advice.policy.active().items()
            },
            "suppression_limit": advice.suppression_limit,
            "hierarchy_heights": dict(advice.hierarchies),
            "nodes": advice.nodes,
            "evaluated": advice.evaluated,
            "pruned": advice.pruned,
            "measured": advice.measured,
            "passing": advice.passing,
            "monotone": advice.monotone,
            "front": advice.front,
            "seconds": json_number(advice.seconds),
            "blocked_by": [{"measure": b.measure, "reason": b.reason} for b in advice.blocked_by],
        },
        "advice": [
            {
                "levels": dict(t.levels),
                "height": t.height,
                "suppressed": t.suppressed,
                "suppressed_fraction": json_number(t.suppressed / (t.report.rows + t.suppressed)),
                "passed": t.passed,
                "verdicts": [{"measure": v.name, "passed": v.passed} for v in t.report.verdicts()],
                "measures": {
                    "k": t.report.k_anonymity.k,
                    "classes": t.report.k_anonymity.classes,
                    "highest_risk": json_number(t.report.risk.highest),
                    "l_diversity": {
                        sa: {
                            "distinct": r.distinct,
                            "entropy": json_number(r.entropy),
                            "recursive_c": json_number(r.recursive_c),
                        }
                        for sa, r in t.report.l_diversity.items()
                    },
                    "t_closeness": {sa: json_number(r.t) for sa, r in t.report.t_closeness.items()},
                    "disclosure": {
                        sa: {
                            "alpha": json_number(r.alpha),
                            "beta": json_number(r.beta),
                            "delta": json_number(r.delta),
                        }
                        for sa, r in t.report.disclosure.items()
                    },
                },
                "information_loss": _loss(t.information_loss),
            }
            for t in advice.transformations
        ],
    }


_INTERNAL_NOTE = "internal: computed from the exact data; do not publish"


def dp_to_dict(report: DPReport) -> dict[str, Any]:
    """Lay out a differential-privacy companion report (the ``dp`` section).

    Two parts: ``release``, the public facts a reader of the release needs (the sidecar
    of :mod:`anonaudit.report.dp`), and ``internal``, the whole report, computed from
    the exact data and labelled by its ``note`` as not for publication; and a third,
    ``self_audit``, when the release code was sampled on worst-case neighbours
    (:mod:`anonaudit.dp.selfaudit`; it reads no data).
    """
    from anonaudit.report.dp import sidecar  # anonaudit.dp imports this package

    document = {"release": sidecar(report), "internal": _dp_internal(report)}
    if report.self_audit is not None:
        document["self_audit"] = _self_audit(report.self_audit)
    return document


_SELF_AUDIT_NOTE = (
    "empirical lower bounds from sampling the release code on worst-case neighbouring "
    "datasets: a bound above the claim refutes it; one below it is no proof that it holds"
)


def _self_audit(audit: SelfAudit) -> dict[str, Any]:
    return {
        "note": _SELF_AUDIT_NOTE,
        "claim": {"epsilon": json_number(audit.epsilon), "delta": json_number(audit.delta)},
        "epsilon_lower_bound": _audit_bound(audit.epsilon_lower),
        "delta_lower_bound": _audit_bound(audit.delta_lower),
        "confidence": audit.confidence,
        "samples": audit.samples,
        "pairs": list(audit.pairs),
        "refuted": audit.refuted,
    }


def _audit_bound(bound: AuditBound) -> dict[str, Any]:
    return {
        "value": json_number(bound.value),
        "event": bound.event,
        "hits": bound.hits,
        "trials": bound.trials,
        "hits_other": bound.hits_other,
        "trials_other": bound.trials_other,
    }


def _dp_internal(report: DPReport) -> dict[str, Any]:
    r, a, loss, u = report.release, report.accounting, report.privacy_loss, report.utility
    s = r.sensitivity
    return {
        "note": _INTERNAL_NOTE,
        "mechanism": r.mechanism,
        "epsilon": json_number(r.epsilon),
        "delta": json_number(r.delta),
        "noise_scale": json_number(r.noise_scale),
        "neighbouring": s.neighbouring,
        "privacy_unit": report.privacy_unit,
        "max_contributions": s.max_contributions,
        "sensitivity": {"l0": s.l0, "l1": s.l1, "l2": json_number(s.l2), "linf": s.linf},
        "domain": {
            "kind": r.domain,
            "cells": r.cells,
            "threshold": r.threshold,
            "keep_below": json_number(r.keep_below),
        },
        "released": {"rows": r.table.rows, "combinations": len(r.table)},
        "not_released": {
            "outside_domain": r.outside_domain,
            "bounded_records": report.bounded_records,
        },
        "accounting": {
            "epsilon": json_number(a.epsilon),
            "delta": json_number(a.delta),
            "epsilon_pure": json_number(a.cost.epsilon),
            "rho": json_number(a.rho),
            "delta_threshold": json_number(a.cost.delta),
            "epsilon_exact_gaussian": json_number(a.epsilon_exact_gaussian),
            "epsilon_pld": json_number(a.epsilon_pld),
            "renyi": [{"alpha": alpha, "epsilon": json_number(e)} for alpha, e in a.renyi],
        },
        "privacy_loss": {
            "epsilon": json_number(loss.epsilon),
            "infinite_with_probability": json_number(report.infinite_loss),
            "mean": json_number(loss.mean),
            "kl_bound": json_number(loss.kl_bound),
            "profile": [{"epsilon": e, "delta": json_number(d)} for e, d in report.profile],
        },
        "utility": {
            "cells": u.cells,
            "expected_mean_absolute_error": json_number(u.expected_mean_absolute_error),
            "expected_rmse": json_number(u.expected_rmse),
            "expected_within": u.expected_within,
            "confidence": u.confidence,
            "mean_absolute_error": json_number(u.mean_absolute_error),
            "rmse": json_number(u.rmse),
            "max_absolute_error": u.max_absolute_error,
            "bias": json_number(u.bias),
            "share_within": json_number(u.share_within),
            "classes": u.classes,
            "classes_released": u.classes_released,
            "classes_hidden": u.classes_hidden,
            "classes_fabricated": u.classes_fabricated,
        },
        "measures": {
            "original": _measures(report.measures.original),
            "released": _measures(report.measures.released),
        },
        "contrast": _contrast_to_dict(report),
    }


def _contrast_to_dict(report: DPReport) -> dict[str, Any]:
    """Per SA, both attackers against both releases (``epsilon``: of learning a present
    person's value, :attr:`~anonaudit.dp.release.Release.value_epsilon`)."""
    result = {}
    for sa, c in report.contrast.items():
        a = report.attackers[sa]
        gain = a.equal_gain
        result[sa] = {
            "epsilon": json_number(c.epsilon),
            "delta": json_number(a.delta),
            "neighbouring": a.neighbouring,
            "max_posterior": json_number(c.max_posterior),
            "dp_posterior_bound": json_number(c.dp_posterior_bound),
            "dp_posterior_bound_fails_with_probability": json_number(report.release.value_failure),
            "max_pml": json_number(c.max_pml),
            "min_entropy": json_number(c.min_entropy),
            "disclosed_classes": c.disclosed_classes,
            "disclosed_records": c.disclosed_records,
            "classes_above_bound": c.classes_above_bound,
            "records_above_bound": c.records_above_bound,
            "attackers": {
                "syntactic_uninformed": _posteriors(a.uninformed),
                "syntactic_informed": _posteriors(a.informed),
                "dp_informed": _posteriors(a.dp_informed),
            },
            "informed_equivalent_epsilon": json_number(math.inf),
            "informed_leakage": json_number(a.informed_leakage),
            "equivalent_epsilon": {
                "attacker": "knows the quasi-identifiers",
                "max": json_number(a.max_equivalent_epsilon),
                "infinite_classes": a.infinite_classes,
                "infinite_records": a.infinite_records,
                "equal_gain": None
                if gain is None
                else {
                    "epsilon": json_number(gain.epsilon),
                    "noise_scale": json_number(gain.noise_scale),
                    "within": gain.within,
                    "confidence": gain.confidence,
                },
            },
            "pml": {
                "prior_factor": json_number(a.prior_factor),
                "max_over_priors": json_number(a.max_pml_family),
                "syntactic": _disclosure(a.syntactic_disclosure),
                "dp": _disclosure(a.dp_disclosure),
            },
        }
    return result


def _posteriors(s: PosteriorSummary) -> dict[str, Any]:
    return {
        "records": s.records,
        "median": json_number(s.median),
        "p90": json_number(s.p90),
        "p99": json_number(s.p99),
        "max": json_number(s.max),
        "share_above_half": json_number(s.share_above_half),
        "share_above_bound": json_number(s.share_above_bound),
    }


def _disclosure(d: Disclosure) -> dict[str, Any]:
    return {
        "leakage": json_number(d.leakage),
        "epsilon_star": json_number(d.epsilon_star),
        "discloses_nothing": d.discloses_nothing,
        "features_maybe_disclosed": list(d.features),
    }


def _measures(measures: Measures | None) -> dict[str, Any] | None:
    if measures is None:
        return None
    return {
        "k": measures.k,
        "classes": measures.classes,
        "distinct_l": measures.distinct_l,
        "entropy_l": {sa: json_number(v) for sa, v in measures.entropy_l.items()},
        "t": {sa: json_number(v) for sa, v in measures.t.items()},
    }
