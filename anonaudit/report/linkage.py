"""JSON documents and text summaries of the linkage commands: renderers, no measure."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from anonaudit import __version__
from anonaudit.files import printable
from anonaudit.settings.names import REDACTED, SCHEMA_VERSION

if TYPE_CHECKING:
    from anonaudit.classtable import SourceStats
    from anonaudit.dp.budgets import Spend
    from anonaudit.linkage.composition import Composition, DPComposition
    from anonaudit.linkage.differencing import Differencing
    from anonaudit.linkage.ledger import Ledger, LedgerEntry

__all__ = [
    "composition_entry",
    "composition_summary",
    "composition_to_dict",
    "differencing_counts",
    "differencing_summary",
    "differencing_to_dict",
    "disclosing_rows",
    "entry_to_dict",
    "ledger_summary",
    "ledger_to_dict",
]

_LISTED = ("old_size", "new_size", "value", "change")  # the listing's columns beside the QIs


def _lines(lines: Sequence[str]) -> str:
    """The printed lines, one text: control characters within a line escaped
    (:func:`~anonaudit.files.printable`), so that no name or value printed can drive the
    terminal or forge a line."""
    return "\n".join(printable(line, limit=None) for line in lines)


def _number(value: float) -> float | str | None:
    """JSON has no infinity or NaN: ``"inf"``, and ``None`` for an undefined value."""
    if math.isnan(value):
        return None
    return "inf" if math.isinf(value) else value


def _header(sources: Sequence[SourceStats]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "inputs": [{"name": s.name, "format": s.format, "rows": s.rows} for s in sources],
    }


def _dp_to_dict(dp: DPComposition) -> dict[str, Any]:
    accounting = dp.accounting
    return {
        "mechanism": dp.mechanism,
        "releases": dp.releases,
        "per_release": {"epsilon": dp.epsilon, "delta": dp.delta},
        "total": {
            "epsilon": _number(accounting.epsilon),
            "delta": accounting.delta,
            "epsilon_pure": accounting.cost.epsilon,
            "rho": accounting.cost.rho,
            "zcdp": accounting.cost.zcdp,
            "renyi": [{"alpha": a, "epsilon": e} for a, e in accounting.renyi],
        },
        "value_epsilon": _number(dp.value_epsilon),
        "posterior_bound": _number(dp.posterior_bound),
    }


def composition_to_dict(
    results: Mapping[str, Composition], sources: Sequence[SourceStats], *, id: str
) -> dict[str, Any]:
    """The ``anonaudit compose`` JSON document."""
    from anonaudit.linkage.composition import COMBINATION_RULE

    document = _header(sources) | {"id": id, "combination_rule": COMBINATION_RULE}
    document["composition"] = {name: composition_entry(r) for name, r in results.items()}
    return document


def composition_entry(result: Composition) -> dict[str, Any]:
    """One SA's composition attack, as ``compose`` and ``audit --ledger`` report it."""
    return {
        "records": result.records,
        "changed_records": result.changed_records,
        "disclosed_records": result.disclosed_records,
        "newly_disclosed_records": result.newly_disclosed_records,
        "max_posterior": _number(result.max_posterior),
        "combinations": len(result.candidates),
        "releases": [
            {
                "name": release.name,
                "records": release.records,
                "classes": release.classes,
                "distinct_l": release.distinct_l,
            }
            for release in result.releases
        ],
        "dp": None if result.dp is None else _dp_to_dict(result.dp),
    }


def composition_summary(results: Mapping[str, Composition], *, id: str) -> str:
    """The printed summary of ``anonaudit compose``."""
    lines = []
    for name, result in results.items():
        lines.append(f"Composition attack on {name!r} (releases joined on {id!r}):")
        for release in result.releases:
            lines.append(
                f"  {release.name}: distinct l = {release.distinct_l} "
                f"({release.records:,} records, {release.classes:,} classes)"
            )
        lines.append(
            f"  composed: {result.records:,} records in two or more releases; "
            f"{result.disclosed_records:,} disclosed (one consistent value), "
            f"{result.newly_disclosed_records:,} of them by the composition alone; "
            f"largest posterior {fixed(result.max_posterior)}"
        )
        if not result.records:
            lines.append(
                f"  warning: no {id!r} appears in two releases, so nothing was composed; ids "
                "are compared as text (01 and 001 differ): check that the releases write "
                "their ids alike"
            )
        if result.changed_records:
            lines.append(
                f"  {result.changed_records:,} records whose value differs between releases "
                "are left out"
            )
        if result.dp is not None:
            dp = result.dp
            total = dp.accounting
            lines.append(
                f"  DP counterpart: {dp.releases} {dp.mechanism} releases at epsilon "
                f"{dp.epsilon:g}" + (f", delta {dp.delta:g}" if dp.delta else "") + " each: "
                f"total epsilon {fixed(total.epsilon)} (pure {total.cost.epsilon:g}, "
                f"zCDP rho {total.cost.zcdp:.4g}); a person's value: epsilon "
                f"{fixed(dp.value_epsilon)}, largest posterior {fixed(dp.posterior_bound)}"
            )
    return _lines(lines)


def fixed(value: float) -> str:
    return "n/a" if math.isnan(value) else "inf" if math.isinf(value) else f"{value:.4f}"


def differencing_to_dict(
    results: Mapping[str, Differencing], sources: Sequence[SourceStats], *, redact: bool = True
) -> dict[str, Any]:
    """The ``anonaudit diff`` JSON document; with ``redact``, the QI values of the classes
    listed are ``"[redacted]"``."""
    document = _header(sources)
    document["differencing"] = {}
    for name, result in results.items():
        rows = disclosing_rows(result, redact=redact)
        document["differencing"][name] = differencing_counts(result) | {
            "listed": len(rows),
            "truncated": len(rows) < result.disclosing_classes,
            "disclosing": rows,
        }
    return document


def differencing_counts(result: Differencing) -> dict[str, int]:
    """One SA's differencing figures, as ``diff`` and ``audit --ledger`` report them."""
    return {
        "classes": result.classes,
        "classes_changed": result.classes_changed,
        "disclosing_classes": result.disclosing_classes,
        "disclosed_records": result.disclosed_records,
    }


def disclosing_rows(
    result: Differencing, *, limit: int | None = None, redact: bool = True
) -> list[dict[str, Any]]:
    """The disclosing classes of ``result`` as JSON rows, the first ``limit`` of them
    (``None``: as listed), their QI values ``"[redacted]"`` with ``redact``."""
    listing = result.listing
    qi = [c for c in listing.columns if c not in _LISTED]
    return [
        {
            "quasi_identifiers": {column: REDACTED if redact else row[column] for column in qi},
            "old_size": int(row["old_size"]),
            "new_size": int(row["new_size"]),
            "value": row["value"],
            "change": int(row["change"]),
        }
        for row in listing.head(len(listing) if limit is None else limit).to_dict(orient="records")
    ]


def differencing_summary(results: Mapping[str, Differencing], *, redact: bool = True) -> str:
    """The printed summary of ``anonaudit diff``; the QI values of the classes it lists
    read ``[redacted]`` unless ``redact=False`` (``--show-values``)."""
    lines = []
    for name, result in results.items():
        lines.append(
            f"Differencing on {name!r}: {result.classes_changed:,} of {result.classes:,} classes "
            f"changed; {result.disclosing_classes:,} changed in one value only, disclosing it "
            f"for {result.disclosed_records:,} records added or removed"
        )
        for row in result.listing.head(10).to_dict(orient="records"):
            qi = ", ".join(
                f"{k}={REDACTED if redact else v}" for k, v in row.items() if k not in _LISTED
            )
            lines.append(
                f"  [{qi}] {row['old_size']} -> {row['new_size']}: "
                f"{row['change']:+d} {row['value']!s}"
            )
    return _lines(lines)


def entry_to_dict(entry: LedgerEntry) -> dict[str, Any]:
    """One ledger entry, as ``anonaudit ledger`` and ``audit --ledger`` report it."""
    return {
        "id": entry.id,
        "time": entry.time,
        "dataset": entry.dataset,
        "recipient": entry.recipient,
        "source": entry.source,
        "sha256": entry.fingerprint,
        "quasi_identifiers": list(entry.quasi_identifiers),
        "sensitive": list(entry.sensitive),
        "transformation": entry.transformation,
        "mechanism": entry.mechanism,
        "epsilon": entry.epsilon,
        "delta": entry.delta,
        "rho": entry.rho,
    }


def ledger_to_dict(
    ledger: Ledger, *, dataset: str | None = None, recipient: str | None = None
) -> dict[str, Any]:
    """The ``anonaudit ledger`` JSON document: releases and spend per dataset.

    Each release says whether it was retired (``retired``: ``null``, or its ``time`` and
    ``reason``); a retired release's cost is still spent. ``budgets`` is every budget set
    (of ``dataset``), oldest first: the last of a dataset's is in force.
    """
    entries = ledger.releases(dataset, recipient)
    spend = {}
    for name in sorted({entry.dataset for entry in entries}):
        cost = ledger.spent(name, recipient)
        spend[name] = {
            "epsilon_pure": _number(cost.epsilon),
            "rho": cost.rho,
            "delta": cost.delta,
        }
    budgets = ledger.budgets(dataset)
    in_force = {b.dataset: b for b in budgets}
    return {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "meta": ledger.meta(),
        "releases": [
            entry_to_dict(entry)
            | {
                "retired": None
                if entry.retired is None
                else {"time": entry.retired, "reason": entry.retired_reason}
            }
            for entry in entries
        ],
        "spent": spend,
        "spent_by_relation": {
            name: {relation: _spend(s) for relation, s in relations.items()}
            for name, relations in ledger.spent_by_relation(dataset, recipient).items()
        },
        "a_present_persons_value": {
            name: _spend(s) | {"add_remove": _NO_ADD_REMOVE_TOTAL}
            for name, s in ledger.present_value(dataset, recipient).items()
        },
        "budgets": [
            {
                "dataset": b.dataset,
                "epsilon": b.epsilon,
                "delta": b.delta,
                "relation": b.relation,
                "unit": b.unit,
                "time": b.time,
                "reason": b.reason,
            }
            for b in budgets
        ],
        "budget_spent": {
            name: _spend(ledger.spend(b, recipient=recipient)) for name, b in in_force.items()
        },
    }


_NO_ADD_REMOVE_TOTAL = "no finite total: a release stated for replace does not protect presence"


def _spend(s: Spend) -> dict[str, Any]:
    """The JSON of a :class:`~anonaudit.dp.budgets.Spend`."""
    return {
        "relation": s.relation,
        "unit": s.unit,
        "releases": s.releases,
        "epsilon_pure": _number(s.cost.epsilon),
        "rho": s.cost.rho,
        "delta": s.delta,
        "epsilon_at_delta": _number(s.epsilon),
        "method": s.method,
        "epsilon_sum": _number(s.epsilon_sum),
        "epsilon_pld": None if s.epsilon_pld is None else _number(s.epsilon_pld),
        "uncovered": sorted(set(s.uncovered)),
    }


def _g(value: float | str) -> str:
    """A number of the listing (``"inf"`` stays as written)."""
    return value if isinstance(value, str) else f"{value:g}"


def _spent_line(s: Mapping[str, Any]) -> str:
    """``epsilon 2.3 at delta 1e-06 (privacy-loss distributions; sum 3), one record``."""
    from anonaudit.dp.budgets import unit_name

    at = f" at delta {s['delta']:g}" if s["delta"] else " (pure)" if not s["rho"] else ""
    how = (
        f" (privacy-loss distributions; the sum gives {_g(s['epsilon_sum'])})"
        if s["method"] == "pld"
        else ""
    )
    rho = f" (rho {s['rho']:g})" if s["rho"] else ""
    return f"epsilon {_g(s['epsilon_at_delta'])}{at}{how}{rho}, {printable(unit_name(s['unit']))}"


def ledger_summary(document: Mapping[str, Any]) -> str:
    """The printed listing of ``anonaudit ledger``, from its JSON document."""
    from anonaudit.dp.budgets import unit_name

    lines = [f"Release ledger ({document['meta'].get('note', '')}):"]
    for entry in document["releases"]:
        cost = (
            "not DP"
            if entry["mechanism"] is None
            else f"{entry['mechanism']} epsilon {entry['epsilon']:g}"
            + (f" rho {entry['rho']:g}" if entry["rho"] else "")
            + (f" delta {entry['delta']:g}" if entry["delta"] else "")
        )
        to = entry["recipient"] or "-"
        retired = entry.get("retired")
        lines.append(
            f"  #{entry['id']} {entry['time']} {printable(entry['dataset'])} to "
            f"{printable(to)}: {printable(entry['source'])} "
            f"(sha256 {entry['sha256'][:12]}), {cost}"
            + (
                ""
                if not retired
                else f"; RETIRED {retired['time']}: {printable(retired['reason'])}"
            )
        )
    for name, relations in document.get("spent_by_relation", {}).items():
        for relation, s in relations.items():
            lines.append(
                f"  spent on {printable(name)} under {relation} neighbours: "
                f"{s['releases']} release(s), {_spent_line(s)}"
            )
    for name, total in document.get("a_present_persons_value", {}).items():
        lines.append(
            f"  {printable(name)}: releases under several relations are not one total; for "
            f"a present person's value (replace): {_spent_line(total)}; under add-remove: "
            f"{total['add_remove']}"
        )
    budgets = document.get("budgets", [])
    in_force = {b["dataset"]: b for b in budgets}  # the last set of each dataset
    for b in budgets:
        state = "in force" if in_force[b["dataset"]] is b else "replaced"
        lines.append(
            f"  budget of {printable(b['dataset'])}: epsilon {b['epsilon']:g}, delta "
            f"{b['delta']:g} under {b['relation']} neighbours, "
            f"{printable(unit_name(b['unit']))}, set {b['time']} ({state}): "
            f"{printable(b['reason'])}"
        )
    for name, s in document.get("budget_spent", {}).items():
        lines.append(f"  spent of the budget of {printable(name)}: {_spent_line(s)}")
        lines.extend(f"    no cost under {s['relation']}: {why}" for why in s["uncovered"])
    return _lines(lines)
