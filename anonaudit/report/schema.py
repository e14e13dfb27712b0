"""The JSON Schema of the reports, with the parts the code declares written from it.

``anonaudit/schema/report.schema.json`` is the contract batch jobs read (JSON Schema
draft 2020-12, shipped in the package). Three of its parts are declared in the code and
written into it from there, so that a measure, an analysis or a threshold is described
where it is defined:

- each measure's entry (:data:`anonaudit.measures.MEASURES`): ``$defs/<key>`` is the
  measure's ``schema``, and the audit report's ``<key>`` refers to it (through an object
  keyed by SA, for a measure per SA); the key is required;
- each optional analysis's parts (:data:`anonaudit.measures.ANALYSES`): its
  ``definitions`` join ``$defs``, and its keys' ``properties`` those of the entry of the
  measure it extends, or of the audit report (never required: the analysis runs when
  asked);
- the policy's thresholds (``$defs/policy``), from each :class:`~anonaudit.settings.policy.Policy`
  threshold's kind and help (:func:`~anonaudit.settings.policy.threshold_fields`).

``python -m anonaudit.report.schema`` rewrites the shipped file with them;
``tests/test_schema.py`` fails while the file differs from :func:`report_schema`.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import Field
from importlib import resources
from pathlib import Path
from typing import Any

from anonaudit import measures
from anonaudit.files import atomic_write_text
from anonaudit.measures import Analysis, Measure
from anonaudit.report.sections import analysis_section, section
from anonaudit.settings.policy import threshold_fields

__all__ = ["SCHEMA_FILE", "dumps", "report_schema", "shipped_schema"]

#: The shipped schema, in the package.
SCHEMA_FILE = resources.files("anonaudit") / "schema" / "report.schema.json"

#: The JSON Schema of a threshold's value, by its kind
#: (:data:`anonaudit.settings.policy.ThresholdKind`).
_KINDS: dict[str, dict[str, Any]] = {
    "whole": {"type": "integer", "minimum": 1},
    "number": {"type": "number"},
    "pair": {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "integer"}],
        "minItems": 2,
        "maxItems": 2,
    },
}


def shipped_schema() -> dict[str, Any]:
    """The schema as shipped in the package (``anonaudit/schema/report.schema.json``).

    Returns
    -------
    dict
        The parsed file.
    """
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def report_schema(
    registered: Sequence[Measure[Any]] | None = None,
    thresholds: Sequence[Field[Any]] | None = None,
    analyses: Sequence[Analysis[Any]] | None = None,
) -> dict[str, Any]:
    """The schema of the reports, its measures' and thresholds' parts from the code.

    Parameters
    ----------
    registered : sequence of Measure, optional
        The measures the audit reports (default: :data:`anonaudit.measures.MEASURES`).
    thresholds : sequence of dataclasses.Field, optional
        The policy's thresholds (default: :func:`anonaudit.settings.policy.threshold_fields`).
    analyses : sequence of Analysis, optional
        The optional analyses the audit reports (default:
        :data:`anonaudit.measures.ANALYSES`).

    Returns
    -------
    dict
        :func:`shipped_schema` with ``$defs/<key>`` and the audit report's ``<key>`` of
        every measure, the definitions and keys of every optional analysis, and
        ``$defs/policy``'s properties, written from the code.

    Examples
    --------
    >>> schema = report_schema()
    >>> schema["$defs"]["audit"]["properties"]["l_diversity"]["additionalProperties"]
    {'$ref': '#/$defs/l_diversity'}
    >>> schema["$defs"]["policy"]["properties"]["k"]["type"]
    'integer'
    """
    schema = shipped_schema()
    defs = schema["$defs"]
    audit = defs["audit"]
    for measure in measures.MEASURES if registered is None else registered:
        shown = section(measure)
        defs[measure.key] = copy.deepcopy(dict(shown.schema))
        entry: dict[str, Any] = {"$ref": f"#/$defs/{measure.key}"}
        if measure.per_sensitive:
            entry = {
                "type": "object",
                "additionalProperties": entry,
                "description": "Sensitive attribute -> "
                f"{shown.title(None) if shown.about is None else shown.about.title}.",
            }
        audit["properties"][measure.key] = entry
        if measure.key not in audit["required"]:
            audit["required"].append(measure.key)
    for analysis in measures.ANALYSES if analyses is None else analyses:
        its = analysis_section(analysis)
        defs.update(copy.deepcopy(dict(its.definitions)))
        extended = audit if its.extends is None else defs[its.extends]
        extended["properties"].update(copy.deepcopy(dict(its.properties)))
    defs["policy"]["properties"] = {
        field.name: {**_KINDS[field.metadata["kind"]], "description": field.metadata["help"]}
        for field in (threshold_fields() if thresholds is None else thresholds)
    }
    return schema


def dumps(schema: Mapping[str, Any]) -> str:
    """``schema`` as the shipped file writes it (two-space indents, UTF-8 text)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m anonaudit.report.schema: rewrite the shipped file
    target = Path(str(SCHEMA_FILE))
    atomic_write_text(target, dumps(report_schema()))
    sys.stdout.write(f"wrote {target}\n")
