"""How the reports show :mod:`anonaudit.measures.risk`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from anonaudit.report import charts, explain
from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    MeasureView,
    Options,
    VerdictRow,
    _fmt,
    _mark,
    _plural,
    _share,
    join_names,
    json_number,
    real,
)

if TYPE_CHECKING:
    pass
from anonaudit.measures.risk import RiskResult
from anonaudit.report.sections.base import MeasureSection

__all__ = ["SECTION", "ProsecutorRiskSection"]


class ProsecutorRiskSection(MeasureSection[RiskResult]):
    """How the reports show :data:`anonaudit.measures.risk.MEASURE`."""

    key = "risk"
    anchor = "risk"
    about = explain.PROSECUTOR_RISK
    usage = (
        "`--max-risk R`, `--risk-threshold R`; JSON `risk`; Python `report.risk`, "
        "`anonaudit.measures.risk.prosecutor_risk`; per record in `--records-out`."
    )
    schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "description": "Re-identification risk (prosecutor model), with population, journalist, "
        "marketer and individual risk when asked for.",
        "properties": {
            "model": {"const": "prosecutor"},
            "highest": {"$ref": "#/$defs/real_or_null"},
            "average": {"$ref": "#/$defs/real_or_null"},
            "lowest": {"$ref": "#/$defs/real_or_null"},
            "threshold": {"type": ["number", "null"]},
            "records_at_risk": {"type": "integer", "minimum": 0},
            "records_at_risk_fraction": {"$ref": "#/$defs/real_or_null"},
            "sample_uniques": {"type": "integer", "minimum": 0},
            "sample_uniques_fraction": {"$ref": "#/$defs/real_or_null"},
            "bands": {
                "type": "object",
                "additionalProperties": {"type": "integer", "minimum": 0},
                "description": "Upper edge of each risk band -> records.",
            },
            "max_highest": {"description": "The --max-risk threshold.", "type": ["number", "null"]},
            "passed": {"type": ["boolean", "null"]},
        },
        "required": [
            "model",
            "highest",
            "average",
            "lowest",
            "threshold",
            "records_at_risk",
            "records_at_risk_fraction",
            "sample_uniques",
            "sample_uniques_fraction",
            "bands",
            "max_highest",
            "passed",
        ],
        "additionalProperties": False,
    }

    def title(self, sensitive: str | None) -> str:
        return "Re-identification risk"

    def summary(self, result: RiskResult) -> list[str]:
        risk = result
        return [
            f"risk (prosecutor): highest {_fmt(risk.highest)}, average {_fmt(risk.average)}, "
            f"{risk.sample_uniques:,} sample uniques ({risk.sample_uniques_fraction:.2%}), "
            f"{risk.records_at_risk:,} records above {_fmt(risk.threshold)}{_mark(risk.passed)}"
        ]

    def to_json(self, result: RiskResult, layout: Layout) -> dict[str, Any]:
        risk = result
        return {
            "model": "prosecutor",
            "highest": json_number(risk.highest),
            "average": json_number(risk.average),
            "lowest": json_number(risk.lowest),
            "threshold": risk.threshold,
            "records_at_risk": risk.records_at_risk,
            "records_at_risk_fraction": json_number(risk.records_at_risk_fraction),
            "sample_uniques": risk.sample_uniques,
            "sample_uniques_fraction": json_number(risk.sample_uniques_fraction),
            "bands": {str(edge): n for edge, n in risk.bands.items()},
            "max_highest": risk.max_highest,
            "passed": risk.passed,
        }

    def verdict_rows(self, result: RiskResult, audited: Audited, anchor: str) -> list[VerdictRow]:
        qi = join_names(audited.quasi_identifiers)
        if result.max_highest is None or result.passed is None:
            return []
        return [
            VerdictRow(
                "re-identification risk",
                anchor,
                f"highest = {_share(result.highest)}",
                f"highest ≤ {_share(result.max_highest)}",
                result.passed,
                f"An attacker who knows that someone is in the data and knows their {qi} picks "
                f"out the most exposed record with a chance of {_share(result.highest)}; the "
                f"policy allows at most {_share(result.max_highest)}.",
            )
        ]

    def view(
        self, result: RiskResult, audited: Audited, options: Options, anchor: str
    ) -> MeasureView:
        """Prosecutor re-identification risk and the share of records per risk band."""
        facts = (
            Fact("highest risk of a record", _share(result.highest)),
            Fact("average risk", _share(result.average)),
            Fact("lowest risk", _share(result.lowest)),
            Fact(
                f"records at risk (above {_share(result.threshold)})",
                f"{result.records_at_risk:,} ({_share(result.records_at_risk_fraction)})",
            ),
            Fact(
                "sample uniques (alone in their class)",
                f"{result.sample_uniques:,} ({_share(result.sample_uniques_fraction)})",
            ),
            Fact(
                "policy",
                "none" if result.max_highest is None else f"highest ≤ {_share(result.max_highest)}",
            ),
        )
        return MeasureView(
            lead="The prosecutor model: an attacker knows that a person is in the data and knows "
            f"their {join_names(audited.quasi_identifiers)}; picking one record of that class at "
            "random finds the person with a chance of 1 / (class size).",
            about=self.about.anchor,
            facts=facts,
            charts=(charts.risk_chart(result.bands, threshold=result.threshold, chart_id="risk"),),
            outcome=f"{_plural(result.records_at_risk, 'record')} "
            f"({_share(result.records_at_risk_fraction)}) have a risk above "
            f"{_share(result.threshold)}; the classes they are in are those smaller than "
            f"{real(1 / result.threshold)} (see k-anonymity).",
            listing=None,
        )


SECTION = ProsecutorRiskSection()
