"""How the reports show :mod:`anonaudit.measures.individual`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from anonaudit.measures.individual import IndividualRisk
from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    Listing,
    Options,
    _count,
    _fmt,
    _listing,
    _plural,
    _share,
    json_classes,
    json_number,
    real,
)
from anonaudit.report.sections.base import AnalysisSection

__all__ = ["SECTION", "IndividualView", "SdcMicroRiskSection"]


@dataclass(frozen=True)
class IndividualView:
    """The section's content.

    Attributes
    ----------
    basis : str
        Where the estimated population frequencies ``F_k`` came from, in a sentence.
    nulls : str or None
        How null QI values were counted, when they count as wildcards.
    facts : tuple of Fact
        The global and highest risk, records at risk.
    outcome : str
        The records above the threshold, or that none is.
    listing : Listing or None
        The classes above the threshold, highest risk first.
    """

    basis: str
    nulls: str | None
    facts: tuple[Fact, ...]
    outcome: str
    listing: Listing | None


def individual_view(result: IndividualRisk, audited: Audited, options: Options) -> IndividualView:
    """The view of ``result``, the individual risk of ``audited``."""
    if result.weights is not None:
        basis = (
            f"Fₖ is the sum of the survey weights (column {result.weights}) of the class's "
            f"records; together they stand for {real(result.population_size)} people."
        )
    elif result.basis == "survey weights":
        basis = (
            "Fₖ is the sum of the survey weights of the class's records; together they "
            f"stand for {real(result.population_size)} people."
        )
    else:
        basis = (
            "No weight column was given, so every record stands for the same number of "
            f"people, N / n ({result.basis.removeprefix('uniform N/n = ')}), as in a simple "
            f"random sample of {real(result.population_size)} people: Fₖ = fₖ × N / n."
        )
    nulls = (
        "Null quasi-identifier values count as wildcards here: fₖ and Fₖ include every "
        "record a null could stand for, as sdcMicro counts them."
        if audited.null_policy == "wildcard"
        else None
    )
    facts = (
        Fact(
            "expected re-identifications (sum of the individual risks)",
            f"{result.expected_reidentifications:,.2f} of {audited.rows:,} records",
        ),
        Fact("global risk (their share of the records)", _share(result.global_risk)),
        Fact("highest individual risk of a record", _share(result.highest)),
        Fact(
            f"records at risk (above {_share(result.threshold)})",
            f"{result.records_at_risk:,} ({_share(result.records_at_risk_fraction)})",
        ),
        Fact("estimated population (sum of the weights)", real(result.population_size)),
        Fact("method", "sdcMicro indivRisk, approximation (Franconi & Polettini 2004)"),
    )
    frame = result.at_risk
    listing = None
    outcome = f"No record has an individual risk above {_share(result.threshold)}."
    if len(frame):
        outcome = (
            f"{_plural(result.records_at_risk, 'record')} "
            f"({_share(result.records_at_risk_fraction)}) in {_plural(len(frame), 'class')} "
            f"have an individual risk above {_share(result.threshold)}."
        )
        listing = _listing(
            frame,
            audited,
            options,
            measures=(
                ("size", "records", _count),
                ("fk", "fₖ", _count),
                ("Fk", "Fₖ", real),
                ("risk", "individual risk", _share),
            ),
            caption="Classes above the individual risk threshold, highest risk first",
            name="individual-risk",
        )
    return IndividualView(basis=basis, nulls=nulls, facts=facts, outcome=outcome, listing=listing)


class SdcMicroRiskSection(AnalysisSection[IndividualRisk]):
    """How the reports show :data:`anonaudit.measures.individual.ANALYSIS`."""

    key = "individual"
    extends = "risk"
    template = "sections/individual.html.j2"
    anchor = "individual-risk"
    title = "Individual and global risk (sdcMicro)"
    properties: ClassVar[Mapping[str, Any]] = {"individual": {"$ref": "#/$defs/individual"}}
    definitions: ClassVar[Mapping[str, Any]] = {
        "individual": {
            "type": "object",
            "description": "sdcMicro's individual and global risk (1.3).",
            "properties": {
                "method": {"const": "approx"},
                "weights": {
                    "description": "The weights column, or null for uniform weights N/n.",
                    "type": ["string", "null"],
                },
                "basis": {"type": "string"},
                "population_size": {
                    "description": "Sum of the weights.",
                    "$ref": "#/$defs/real_or_null",
                },
                "expected_reidentifications": {"$ref": "#/$defs/real_or_null"},
                "global_risk": {"$ref": "#/$defs/real_or_null"},
                "highest": {"$ref": "#/$defs/real_or_null"},
                "threshold": {"type": ["number", "null"]},
                "records_at_risk": {"type": "integer", "minimum": 0},
                "records_at_risk_fraction": {"$ref": "#/$defs/real_or_null"},
                "at_risk": {"$ref": "#/$defs/classes"},
            },
            "required": [
                "method",
                "weights",
                "basis",
                "population_size",
                "expected_reidentifications",
                "global_risk",
                "highest",
                "threshold",
                "records_at_risk",
                "records_at_risk_fraction",
                "at_risk",
            ],
            "additionalProperties": False,
        }
    }

    def summary(self, result: IndividualRisk, audited: Audited) -> list[str]:
        individual = result
        return [
            f"risk (individual, sdcMicro, {individual.basis}): "
            f"{individual.expected_reidentifications:,.2f} expected re-identifications "
            f"(global risk {individual.global_risk:.4%}), highest {_fmt(individual.highest)}, "
            f"{individual.records_at_risk:,} records above {_fmt(individual.threshold)}"
        ]

    def to_json(self, result: IndividualRisk, audited: Audited, layout: Layout) -> dict[str, Any]:
        """``risk.individual``."""
        r = result
        return {
            "individual": {
                "method": r.method,
                "weights": r.weights,
                "basis": r.basis,
                "population_size": json_number(r.population_size),
                "expected_reidentifications": json_number(r.expected_reidentifications),
                "global_risk": json_number(r.global_risk),
                "highest": json_number(r.highest),
                "threshold": r.threshold,
                "records_at_risk": r.records_at_risk,
                "records_at_risk_fraction": json_number(r.records_at_risk_fraction),
                "at_risk": json_classes(r.failing, layout),
            }
        }

    def view(self, result: IndividualRisk, audited: Audited, options: Options) -> IndividualView:
        """What ``F_k`` is, the expected re-identifications, the classes at risk."""
        return individual_view(result, audited, options)


SECTION = SdcMicroRiskSection()
