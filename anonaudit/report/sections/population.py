"""How the reports show :mod:`anonaudit.measures.population`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow.compute as pc

from anonaudit.measures.population import PopulationRisks, PopulationUniqueness
from anonaudit.report import explain
from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    Options,
    _plural,
    _share,
    json_number,
    real,
)
from anonaudit.report.sections.base import AnalysisSection

__all__ = ["SECTION", "PopulationRiskSection", "PopulationView"]


#: Estimates further apart than this factor get a caveat.
_DISAGREEMENT = 100.0


@dataclass(frozen=True)
class PopulationView:
    """The section's content: the population ``facts``, the journalist and marketer
    ``risks`` and the ``caveats``."""

    facts: tuple[Fact, ...]
    risks: tuple[Fact, ...]
    caveats: tuple[str, ...]


def population_caveats(population: PopulationUniqueness, audited: Audited) -> list[str]:
    """Warnings on the population estimates ``population`` of the audit ``audited``."""
    p = population
    caveats = []
    estimates = {m: v for m, v in (("pitman", p.pitman), ("zayatz", p.zayatz), ("snb", p.snb))}
    positive = {m: v for m, v in estimates.items() if v is not None and v > 0}
    if len(positive) >= 2:
        low, high = min(positive, key=positive.__getitem__), max(positive, key=positive.__getitem__)
        if positive[high] > _DISAGREEMENT * positive[low]:
            caveats.append(
                f"the models disagree by a factor of {positive[high] / positive[low]:,.0f} "
                f"({low} {_share(positive[low])}, {high} {_share(positive[high])} of the "
                "population unique): treat the estimate as an order of magnitude at best"
            )
    combinations = math.prod(
        len(pc.unique(audited.table.keys.column(qi))) for qi in audited.quasi_identifiers
    )
    if p.uniques > combinations:
        caveats.append(
            f"the estimate of {real(p.uniques)} population uniques exceeds the "
            f"{combinations:,} combinations of the quasi-identifier values in the data, "
            "each of which can hold one unique at most: the model does not fit this data"
        )
    return caveats


class PopulationRiskSection(AnalysisSection[PopulationRisks]):
    """How the reports show :data:`anonaudit.measures.population.ANALYSIS`."""

    key = "population"
    extends = "risk"
    about = explain.POPULATION_RISK
    template = "sections/population.html.j2"
    anchor = "population-risk"
    title = "Population, journalist and marketer risk"
    properties: ClassVar[Mapping[str, Any]] = {
        "population": {"$ref": "#/$defs/population"},
        "journalist": {"$ref": "#/$defs/journalist"},
        "marketer": {"$ref": "#/$defs/marketer"},
    }
    definitions: ClassVar[Mapping[str, Any]] = {
        "population": {
            "type": "object",
            "description": "Population uniqueness (1.2): with --population-size or "
            "--sampling-fraction.",
            "properties": {
                "model": {
                    "enum": ["pitman", "zayatz", "snb", "none"],
                    "description": "The estimate reported; none when no estimate applies.",
                },
                "requested_model": {"enum": ["dankar", "pitman", "zayatz", "snb"]},
                "reason": {"type": "string"},
                "uniques": {"$ref": "#/$defs/real_or_null"},
                "uniques_fraction": {"$ref": "#/$defs/real_or_null"},
                "population_size": {"$ref": "#/$defs/real_or_null"},
                "sampling_fraction": {"$ref": "#/$defs/real_or_null"},
                "sample_uniques": {"type": "integer", "minimum": 0},
                "estimates": {
                    "type": "object",
                    "properties": {
                        "pitman": {
                            "description": "This model's uniques_fraction, null when it did not "
                            "converge.",
                            "$ref": "#/$defs/real_or_null",
                        },
                        "zayatz": {
                            "description": "This model's uniques_fraction, null when it did not "
                            "converge.",
                            "$ref": "#/$defs/real_or_null",
                        },
                        "snb": {
                            "description": "This model's uniques_fraction, null when it did not "
                            "converge.",
                            "$ref": "#/$defs/real_or_null",
                        },
                    },
                    "required": ["pitman", "zayatz", "snb"],
                    "additionalProperties": False,
                },
                "caveats": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Warnings on the estimates: models that disagree by more than "
                    "a factor of 100, an estimate of population uniques above the number of "
                    "combinations of the quasi-identifier values in the data.",
                },
            },
            "required": [
                "model",
                "requested_model",
                "reason",
                "uniques",
                "uniques_fraction",
                "population_size",
                "sampling_fraction",
                "sample_uniques",
                "estimates",
                "caveats",
            ],
            "additionalProperties": False,
        },
        "journalist": {
            "type": "object",
            "description": "Journalist risk (1.2).",
            "properties": {
                "highest": {"$ref": "#/$defs/real_or_null"},
                "average": {"$ref": "#/$defs/real_or_null"},
                "threshold": {"type": ["number", "null"]},
                "records_at_risk": {"type": "integer", "minimum": 0},
                "records_at_risk_fraction": {"$ref": "#/$defs/real_or_null"},
                "population_class_sizes": {
                    "description": "Where the population class sizes came from.",
                    "type": "string",
                },
            },
            "required": [
                "highest",
                "average",
                "threshold",
                "records_at_risk",
                "records_at_risk_fraction",
                "population_class_sizes",
            ],
            "additionalProperties": False,
        },
        "marketer": {
            "type": "object",
            "description": "Marketer risk (1.2).",
            "properties": {
                "average": {"$ref": "#/$defs/real_or_null"},
                "population_class_sizes": {"type": "string"},
            },
            "required": ["average", "population_class_sizes"],
            "additionalProperties": False,
        },
    }

    def summary(self, result: PopulationRisks, audited: Audited) -> list[str]:
        population = result.uniqueness
        return [
            f"risk (population, {population.model_used}): "
            f"{population.uniques_fraction:.4%} of the population estimated unique, "
            f"sampling fraction {population.sampling_fraction:.4g} ({population.reason})",
            *(f"  caveat: {caveat}" for caveat in population_caveats(population, audited)),
        ]

    def to_json(self, result: PopulationRisks, audited: Audited, layout: Layout) -> dict[str, Any]:
        """``risk.population``, ``risk.journalist`` and ``risk.marketer``."""
        p, j, m = result.uniqueness, result.journalist, result.marketer
        return {
            "population": {
                "model": p.model_used,
                "requested_model": p.model,
                "reason": p.reason,
                "uniques": json_number(p.uniques),
                "uniques_fraction": json_number(p.uniques_fraction),
                "population_size": json_number(p.population_size),
                "sampling_fraction": json_number(p.sampling_fraction),
                "sample_uniques": p.sample_uniques,
                "estimates": {
                    "pitman": json_number(p.pitman),
                    "zayatz": json_number(p.zayatz),
                    "snb": json_number(p.snb),
                },
                "caveats": population_caveats(p, audited),
            },
            "journalist": {
                "highest": json_number(j.highest),
                "average": json_number(j.average),
                "threshold": j.threshold,
                "records_at_risk": j.records_at_risk,
                "records_at_risk_fraction": json_number(j.records_at_risk_fraction),
                "population_class_sizes": j.basis,
            },
            "marketer": {"average": json_number(m.average), "population_class_sizes": m.basis},
        }

    def view(self, result: PopulationRisks, audited: Audited, options: Options) -> PopulationView:
        """The population estimates, the journalist and marketer risk, the caveats."""
        p, j, m = result.uniqueness, result.journalist, result.marketer
        estimates = ", ".join(
            f"{name} {'did not converge' if value is None else _share(value)}"
            for name, value in (("Pitman", p.pitman), ("Zayatz", p.zayatz), ("SNB", p.snb))
        )
        facts = (
            Fact("population size (N)", real(p.population_size)),
            Fact("sampling fraction (n / N)", real(p.sampling_fraction)),
            Fact("sample uniques", f"{p.sample_uniques:,}"),
            Fact(
                f"estimated population uniques ({p.model_used})",
                f"{real(p.uniques)} ({_share(p.uniques_fraction)} of the population)",
            ),
            Fact("why this model", p.reason),
            Fact("each model's share of the population unique", estimates),
        )
        risks = (
            Fact("journalist risk: highest", _share(j.highest)),
            Fact("journalist risk: average", _share(j.average)),
            Fact(
                f"journalist risk: records above {_share(j.threshold)}",
                f"{_plural(j.records_at_risk, 'record')} ({_share(j.records_at_risk_fraction)})",
            ),
            Fact("marketer risk (expected share re-identified)", _share(m.average)),
            Fact("population class sizes", j.basis),
        )
        return PopulationView(
            facts=facts, risks=risks, caveats=tuple(population_caveats(p, audited))
        )


SECTION = PopulationRiskSection()
