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

``anonaudit/schema/policy.schema.json`` is the JSON Schema of a policy file
(:func:`policy_schema`), written wholly from the settings' catalog
(:data:`anonaudit.settings.catalog.OPTIONS`), the thresholds and the ground distances'
inputs: editors that check TOML against a JSON Schema (Taplo, Even Better TOML) check a
policy file with it. The same command rewrites it.
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
from anonaudit.settings.catalog import DP_OPTIONS, OPTIONS, Option
from anonaudit.settings.names import DISTANCE_INPUTS
from anonaudit.settings.policy import threshold_fields

__all__ = [
    "POLICY_SCHEMA_FILE",
    "SCHEMA_FILE",
    "dumps",
    "policy_schema",
    "report_schema",
    "shipped_schema",
]

#: The shipped schema, in the package.
SCHEMA_FILE = resources.files("anonaudit") / "schema" / "report.schema.json"
#: The shipped schema of policy files, in the package.
POLICY_SCHEMA_FILE = resources.files("anonaudit") / "schema" / "policy.schema.json"

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
        field.name: _threshold(field)
        for field in (threshold_fields() if thresholds is None else thresholds)
    }
    return schema


def _threshold(field: Field[Any]) -> dict[str, Any]:
    """The JSON Schema of a threshold's value, from its kind, with its help."""
    return {**_KINDS[field.metadata["kind"]], "description": field.metadata["help"]}


_TEXT: dict[str, Any] = {"type": "string"}
_TEXTS: dict[str, Any] = {"type": "array", "items": _TEXT}
#: The JSON Schema of a setting's value, by its kind (:data:`anonaudit.settings.catalog.Kind`).
_SETTING_KINDS: dict[str, dict[str, Any]] = {
    "text": _TEXT,
    "whole": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "show": {"type": "boolean"},
    "size": {"type": ["boolean", "integer"]},
    "texts": _TEXTS,
    "columns": _TEXTS,
    "mapping": {
        "type": "object",
        "additionalProperties": {"type": ["string", "number", "boolean"]},
    },
    "paths": {"type": "object", "additionalProperties": _TEXT},
    "levels": {"type": "object", "additionalProperties": {"type": "integer"}},
    "distance": {
        "oneOf": [_TEXT, {"type": "object", "additionalProperties": _TEXT}],
    },
}
#: The tables of their own keys.
_TABLES: dict[str, dict[str, Any]] = {
    "ledger": {
        "type": "object",
        "properties": {key: _TEXT for key in ("file", "dataset", "recipient", "id")},
        "additionalProperties": False,
    },
}


def _setting(option: Option) -> dict[str, Any]:
    """The JSON Schema of ``option``'s value, with its help."""
    if option.key == "thresholds":
        found: dict[str, Any] = {
            "type": "object",
            "properties": {
                field.name: {
                    **_KINDS[field.metadata["kind"]],
                    "description": field.metadata["help"],
                }
                for field in threshold_fields()
            },
            "additionalProperties": False,
        }
    elif option.key == "dp":
        found = {
            "type": "object",
            "properties": {o.key: _setting(o) for o in DP_OPTIONS if "audit" in o.commands},
            "additionalProperties": False,
        }
    elif option.kind == "table":
        found = copy.deepcopy(_TABLES[option.key])
    else:
        found = copy.deepcopy(_SETTING_KINDS[option.kind])
    if option.choices:
        found["enum"] = list(option.choices)
    return {**found, "description": option.help.replace("%%", "%")}


def policy_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a policy file, from the settings' catalog.

    >>> schema = policy_schema()
    >>> schema["properties"]["nulls"]["enum"]
    ['value', 'drop', 'wildcard']
    >>> schema["properties"]["datasets"]["items"]["properties"]["sep"]["type"]
    'string'
    """
    dataset = {option.key: _setting(option) for option in OPTIONS}
    for each in DISTANCE_INPUTS:
        values = _TEXT if each.path else _TEXTS
        dataset[each.key] = {
            "type": "object",
            "additionalProperties": values,
            "description": each.help,
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:anonaudit:schema:policy",
        "title": "anonaudit policy file",
        "description": "The settings of an audit (anonaudit audit --config FILE), as TOML.",
        "type": "object",
        "properties": {
            **dataset,
            "datasets": {
                "type": "array",
                "description": "one audit per table, each key defaulting to the top level's",
                "items": {
                    "type": "object",
                    "properties": dataset,
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    }


def dumps(schema: Mapping[str, Any]) -> str:
    """``schema`` as the shipped file writes it (two-space indents, UTF-8 text)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m anonaudit.report.schema: rewrite the shipped files
    for file, written in ((SCHEMA_FILE, report_schema()), (POLICY_SCHEMA_FILE, policy_schema())):
        target = Path(str(file))
        atomic_write_text(target, dumps(written))
        sys.stdout.write(f"wrote {target}\n")
