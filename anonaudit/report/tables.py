"""The JSON document and the printed summary of ``anonaudit tables``: renderers only.

Redacted by default, like every anonaudit report: a finding says which cells disclose,
by which rule, and which published cells prove it, but not the values (of the
suppressed cells, nor the published figures a certificate combines, nor the attacker's
intervals); ``show_values`` adds them. Codes of the dimensions (the table's headings)
are shown: they are what names a cell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from anonaudit import __version__
from anonaudit.files import printable
from anonaudit.report.kit import dumps
from anonaudit.settings.names import SCHEMA_VERSION
from anonaudit.tables.audit import FINDINGS, TablesAudit

__all__ = ["HEADINGS", "VERDICTS", "tables_json", "tables_summary", "tables_to_dict"]

#: Each kind of finding, as its heading says it (after the number found).
HEADINGS = {
    "exact": "disclosed exactly by the published cells",
    "narrow": "narrowed below the protection their rule asks for",
    "group": "groups of suppressed cells whose published sum fails the rule",
    "coalition": "suppressed cells a few of their members give away to themselves",
    "differencing": "disclosures by differencing tables of nested populations",
    "published": "sensitive cells published as they are",
    "attribute": "groups whose members share an attribute",
    "zero": "zeros (reported)",
}
#: The verdict, by whether the audit passed.
VERDICTS = {True: "PASS: the tables may go out as they are", False: "FAIL: the tables disclose"}


def tables_to_dict(audit: TablesAudit, *, show_values: bool = False) -> dict[str, Any]:
    """The ``anonaudit tables`` JSON document (``anonaudit/schema/tables.schema.json``)."""
    rules = audit.rules
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "command": "tables",
        "redacted": not show_values,
        "passed": audit.passed,
        "tables": [
            {
                "name": t.name,
                "kind": t.kind,
                "population": t.population,
                "dimensions": list(t.dimensions),
                "cells": len(t),
                "suppressed": int(t.suppressed.sum()),
                "rounded": int((t.state == "rounded").sum()),
            }
            for t in audit.tables.tables
        ],
        "rules": {
            "threshold": rules.threshold,
            "min_contributors": rules.min_contributors,
            "dominance": [rules.dominance_n, rules.dominance_k],
            "p": rules.p,
            "q": rules.q,
            "coalition": rules.coalition,
            "safety_range": rules.safety_range,
            "contributor": rules.contributor,
            "zeros": rules.zeros,
        },
        "counts": {kind: audit.count(kind) for kind in FINDINGS},
        "components": audit.components,
        "findings": [
            {
                "kind": f.kind,
                "table": f.table,
                "cells": list(f.cells),
                "rule": f.rule,
                "fails": f.fails,
                "text": f.text_values if show_values else f.text,
                "proofs": list(f.proofs_values if show_values else f.proofs),
            }
            for f in audit.findings
        ],
    }
    if show_values:
        document["intervals"] = [
            {
                "table": i.table,
                "cell": i.cell,
                "lower": i.lower,
                "upper": i.upper if math.isfinite(i.upper) else None,
                "method": i.method,
            }
            for i in audit.intervals
        ]
    return document


def tables_json(audit: TablesAudit, *, show_values: bool = False) -> str:
    """:func:`tables_to_dict` as JSON text."""
    return dumps(tables_to_dict(audit, show_values=show_values))


#: Characters of a certificate the printed summary shows (its start and its end, which
#: holds the value proved); the JSON and HTML reports carry it whole.
SUMMARY_PROOF_CHARACTERS = 600


def tables_summary(document: Mapping[str, Any], *, limit: int = 20) -> str:
    """The printed summary, from the JSON document: the verdict, each kind of finding
    with its first ``limit`` findings and their certificates (a long one shortened to
    :data:`SUMMARY_PROOF_CHARACTERS`, its start and end kept)."""
    lines = [f"anonaudit tables: {VERDICTS[document['passed']]}"]
    for t in document["tables"]:
        extra = f", {t['rounded']} rounded" if t["rounded"] else ""
        population = f", population {printable(t['population'])}" if t["population"] else ""
        by = ", ".join(map(printable, t["dimensions"]))
        lines.append(
            f"  {printable(t['name'])}: {t['kind']}s by {by}, {t['cells']} cells, "
            f"{t['suppressed']} suppressed{extra}{population}"
        )
    for kind in FINDINGS:
        found = [f for f in document["findings"] if f["kind"] == kind]
        if not found:
            continue
        lines.append(f"  {len(found)} {HEADINGS[kind]}:")
        for f in found[:limit]:
            lines.append(f"    {printable(f['table'])}: {printable(f['text'], limit=2000)}")
            lines.extend(
                f"      proof: {printable(p, limit=SUMMARY_PROOF_CHARACTERS)}" for p in f["proofs"]
            )
        if len(found) > limit:
            lines.append(f"    ... and {len(found) - limit} more (all in the JSON report)")
    if any(len(p) > SUMMARY_PROOF_CHARACTERS for f in document["findings"] for p in f["proofs"]):
        lines.append("  long certificates are shortened here (…); the JSON report has them whole")
    if document["redacted"]:
        lines.append("  values redacted; --show-values prints them")
    return "\n".join(lines) + "\n"
