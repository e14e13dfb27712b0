"""How the reports show :mod:`anonaudit.measures.linkage`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from anonaudit.report import explain
from anonaudit.report.kit import (
    Audited,
    Layout,
    VerdictRow,
    _fmt,
    _mark,
    _plural,
    json_number,
)

if TYPE_CHECKING:
    pass
from anonaudit.measures.linkage import PopulationLinkage
from anonaudit.report.sections.base import AnalysisSection

__all__ = ["SECTION", "PopulationTableLinkageSection"]


class PopulationTableLinkageSection(AnalysisSection[PopulationLinkage]):
    """How the reports show :data:`anonaudit.measures.linkage.ANALYSIS`."""

    key = "linkage"
    extends = "risk"
    about = explain.POPULATION_LINKAGE
    properties: ClassVar[Mapping[str, Any]] = {
        "k_map": {"$ref": "#/$defs/k_map"},
        "delta_presence": {"$ref": "#/$defs/delta_presence"},
        "linkage": {"$ref": "#/$defs/linkage"},
    }
    definitions: ClassVar[Mapping[str, Any]] = {
        "k_map": {
            "type": "object",
            "description": "k-map against the population table (--population): the fewest "
            "population records any release class matches (El Emam & Dankar 2008) (2.2).",
            "properties": {
                "k": {"type": "integer", "minimum": 0},
                "threshold": {"type": ["integer", "null"]},
                "passed": {"type": ["boolean", "null"]},
                "classes": {"type": "integer", "minimum": 0},
                "classes_below": {"type": "integer", "minimum": 0},
                "records_below": {"type": "integer", "minimum": 0},
                "unmatched_classes": {"type": "integer", "minimum": 0},
                "unmatched_records": {"type": "integer", "minimum": 0},
            },
            "required": [
                "k",
                "threshold",
                "passed",
                "classes",
                "classes_below",
                "records_below",
                "unmatched_classes",
                "unmatched_records",
            ],
            "additionalProperties": False,
        },
        "delta_presence": {
            "type": "object",
            "description": "delta-presence: released / population records per population class "
            "(Nergiz et al. 2007) (2.2).",
            "properties": {
                "min": {"$ref": "#/$defs/real"},
                "max": {"$ref": "#/$defs/real"},
                "classes": {"type": "integer", "minimum": 0},
            },
            "required": ["min", "max", "classes"],
            "additionalProperties": False,
        },
        "linkage": {
            "type": "object",
            "description": "Release records whose class matches exactly one population record "
            "(2.2).",
            "properties": {
                "unique_matches": {"type": "integer", "minimum": 0},
                "unique_match_classes": {"type": "integer", "minimum": 0},
            },
            "required": ["unique_matches", "unique_match_classes"],
            "additionalProperties": False,
        },
    }

    def summary(self, result: PopulationLinkage, audited: Audited) -> list[str]:
        km, presence = result.k_map, result.delta_presence
        wanted = f" (policy: k-map >= {km.threshold})" if km.threshold is not None else ""
        return [
            f"linkage (population table): k-map k = {km.k}{wanted}, {km.records_below:,} "
            f"records in {km.classes_below:,} classes below; delta-presence "
            f"{_fmt(presence.min)} to {_fmt(presence.max)}; "
            f"{result.unique_matches.records:,} records match exactly one person"
            f"{_mark(km.passed)}"
        ]

    def to_json(
        self, result: PopulationLinkage, audited: Audited, layout: Layout
    ) -> dict[str, Any]:
        """``risk.k_map``, ``risk.delta_presence`` and ``risk.linkage``."""
        k, presence = result.k_map, result.delta_presence
        return {
            "k_map": {
                "k": k.k,
                "threshold": k.threshold,
                "passed": k.passed,
                "classes": k.classes,
                "classes_below": k.classes_below,
                "records_below": k.records_below,
                "unmatched_classes": k.unmatched_classes,
                "unmatched_records": k.unmatched_records,
            },
            "delta_presence": {
                "min": json_number(presence.min),
                "max": json_number(presence.max),
                "classes": presence.classes,
            },
            "linkage": {
                "unique_matches": result.unique_matches.records,
                "unique_match_classes": result.unique_matches.classes,
            },
        }

    def verdict_rows(self, result: PopulationLinkage, audited: Audited) -> list[VerdictRow]:
        k_map, passed = result.k_map, result.k_map.passed
        if passed is None:
            return []
        return [
            VerdictRow(
                "k-map",
                "risk",
                f"k-map = {k_map.k}",
                f"k-map ≥ {k_map.threshold}",
                passed,
                f"Every group of the release matches at least {k_map.k} people of the "
                f"population table an attacker holds; the policy asks for {k_map.threshold}. "
                f"{_plural(k_map.records_below, 'record')} in "
                f"{_plural(k_map.classes_below, 'group')} match fewer.",
            )
        ]


SECTION = PopulationTableLinkageSection()
