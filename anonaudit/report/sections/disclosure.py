"""How the reports show :mod:`anonaudit.measures.disclosure`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from anonaudit.measures.disclosure import DisclosureResult
from anonaudit.report import explain
from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    MeasureView,
    Options,
    VerdictRow,
    _count,
    _fmt,
    _mark,
    _rule,
    _share,
    json_classes,
    json_number,
    real,
)
from anonaudit.report.sections.base import ClassSection

__all__ = ["SECTION", "DisclosureSection"]


class DisclosureSection(ClassSection[DisclosureResult]):
    """How the reports show :data:`anonaudit.measures.disclosure.MEASURE`."""

    key = "disclosure"
    anchor = "disclosure"
    about = explain.DISCLOSURE
    usage = (
        "`--alpha A`, `--beta B`, `--delta D`; JSON `disclosure.<SA>`; Python "
        "`report.disclosure[sa]` (its `delta_present` and `delta_arx` are pycanon's and "
        "ARX's δ), `anonaudit.measures.disclosure.attribute_disclosure`."
    )
    schema: ClassVar[Mapping[str, Any]] = ClassSection.entry_schema(
        {
            "alpha": {"$ref": "#/$defs/real_or_null"},
            "beta": {"$ref": "#/$defs/real_or_null"},
            "delta": {"$ref": "#/$defs/real_or_null"},
            "thresholds": {
                "type": "object",
                "properties": {
                    "alpha": {"type": ["number", "null"]},
                    "beta": {"type": ["number", "null"]},
                    "delta": {"type": ["number", "null"]},
                },
                "required": ["alpha", "beta", "delta"],
                "additionalProperties": False,
            },
        }
    )

    def title(self, sensitive: str | None) -> str:
        return f"Attribute disclosure of {sensitive}"

    def summary(self, result: DisclosureResult) -> list[str]:
        dc = result
        return [
            f"  disclosure: alpha {_fmt(dc.alpha)}, beta {_fmt(dc.beta)}, "
            f"delta {_fmt(dc.delta)}{_mark(dc.passed)}"
        ]

    def to_json(self, result: DisclosureResult, layout: Layout) -> dict[str, Any]:
        r = result
        return {
            "alpha": json_number(r.alpha),
            "beta": json_number(r.beta),
            "delta": json_number(r.delta),
            "thresholds": {"alpha": r.max_alpha, "beta": r.max_beta, "delta": r.max_delta},
            "passed": r.passed,
            "violating_records": r.violating_records,
            "violating": json_classes(r.failing, layout),
        }

    def verdict_rows(
        self, result: DisclosureResult, audited: Audited, anchor: str
    ) -> list[VerdictRow]:
        sa, rows = result.sensitive, []
        for name, passed in result.verdicts.items():
            if name == "alpha":
                rows.append(
                    VerdictRow(
                        f"(α,k)-anonymity of {sa}",
                        anchor,
                        f"α = {_share(result.alpha)}",
                        f"α ≤ {_share(result.max_alpha)}",
                        passed,
                        f"In the worst group, a single value of {sa} makes up "
                        f"{_share(result.alpha)} of its records; the policy allows at most "
                        f"{_share(result.max_alpha)}.",
                    )
                )
            elif name == "beta":
                rows.append(
                    VerdictRow(
                        f"β-likeness of {sa}",
                        anchor,
                        f"β = {real(result.beta)}",
                        f"β ≤ {real(result.max_beta)}",
                        passed,
                        f"In the worst group, a value of {sa} is {_share(result.beta)} more "
                        f"common than in the whole table; the policy allows at most "
                        f"{_share(result.max_beta)} more.",
                    )
                )
            else:
                bound = real(result.max_delta)
                sentence = (
                    f"Some group lacks a value of {sa} that the whole table has, which tells "
                    f"an attacker that nobody in it has that value (δ is infinite); the policy "
                    f"asks for δ < {bound}."
                    if math.isinf(result.delta)
                    else f"In the worst group, the share of a value of {sa} differs from the whole "
                    f"table's by a log-ratio of {real(result.delta)}; the policy asks for less "
                    f"than {bound}."
                )
                rows.append(
                    VerdictRow(
                        f"δ-disclosure of {sa}",
                        anchor,
                        f"δ = {real(result.delta)}",
                        f"δ < {bound}",
                        passed,
                        sentence,
                    )
                )
        return rows

    def view(
        self, result: DisclosureResult, audited: Audited, options: Options, anchor: str
    ) -> MeasureView:
        """(alpha,k)-anonymity, beta-likeness and delta-disclosure of one SA."""
        sa = result.sensitive
        rule = _rule(
            None if result.max_alpha is None else f"α ≤ {_share(result.max_alpha)}",
            None if result.max_beta is None else f"β ≤ {real(result.max_beta)}",
            None if result.max_delta is None else f"δ < {real(result.max_delta)}",
        )
        return self.classes_view(
            result,
            audited,
            options,
            sensitive=sa,
            rule=rule,
            order="largest α first",
            columns=[
                ("size", "records", _count),
                ("alpha", "α", _share),
                ("beta", "β", real),
                ("delta", "δ", real),
            ],
            lead=f"How much more an attacker learns about {sa} from someone's class than from "
            "the whole table: the largest share of one value in a class (α), its largest "
            "relative gain (β) and the largest log-ratio of shares (δ).",
            facts=(
                Fact("largest share of one value in a class (α)", _share(result.alpha)),
                Fact("largest relative gain of a value in a class (β)", real(result.beta)),
                Fact("largest |ln(class share / table share)| (δ)", real(result.delta)),
            ),
        )


SECTION = DisclosureSection()
