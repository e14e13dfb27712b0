"""How the reports show :mod:`anonaudit.measures.l_diversity`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from anonaudit.measures.l_diversity import LDiversityResult
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
    _plural,
    _rule,
    after_most_common,
    json_classes,
    json_number,
    real,
)
from anonaudit.report.sections.base import ClassSection

__all__ = ["SECTION", "LDiversitySection"]


class LDiversitySection(ClassSection[LDiversityResult]):
    """How the reports show :data:`anonaudit.measures.l_diversity.MEASURE`."""

    key = "l_diversity"
    anchor = "l-diversity"
    about = explain.L_DIVERSITY
    usage = (
        "`-l L`, `--entropy-l X`, `--recursive C,L`; JSON `l_diversity.<SA>`; Python "
        "`report.l_diversity[sa]`, `anonaudit.measures.l_diversity.l_diversity`."
    )
    schema: ClassVar[Mapping[str, Any]] = ClassSection.entry_schema(
        {
            "distinct": {"type": "integer", "minimum": 0},
            "entropy": {"$ref": "#/$defs/real_or_null"},
            "recursive": {
                "type": "object",
                "properties": {"c": {"$ref": "#/$defs/real_or_null"}, "l": {"type": "integer"}},
                "required": ["c", "l"],
                "additionalProperties": False,
            },
            "nulls": {"type": "integer", "minimum": 0},
            "thresholds": {
                "type": "object",
                "properties": {
                    "l": {"type": ["integer", "null"], "minimum": 0},
                    "entropy_l": {"type": ["number", "null"]},
                    "c": {"type": ["number", "null"]},
                },
                "required": ["l", "entropy_l", "c"],
                "additionalProperties": False,
            },
        }
    )

    def title(self, sensitive: str | None) -> str:
        return f"l-diversity of {sensitive}"

    def summary(self, result: LDiversityResult) -> list[str]:
        ld = result
        recursive = (
            f"recursive (c,{ld.recursive_l}) for c > {_fmt(ld.recursive_c)}"
            if not math.isinf(ld.recursive_c)
            else f"recursive (c,{ld.recursive_l}) for no c (a class has < {ld.recursive_l} values)"
        )
        return [
            f"  l-diversity: distinct {ld.distinct}, entropy {_fmt(ld.entropy)}, "
            f"{recursive}{_mark(ld.passed)}"
        ]

    def to_json(self, result: LDiversityResult, layout: Layout) -> dict[str, Any]:
        r = result
        return {
            "distinct": r.distinct,
            "entropy": json_number(r.entropy),
            "recursive": {"c": json_number(r.recursive_c), "l": r.recursive_l},
            "nulls": r.nulls,
            "thresholds": {"l": r.l, "entropy_l": r.entropy_l, "c": r.c},
            "passed": r.passed,
            "violating_records": r.violating_records,
            "violating": json_classes(r.failing, layout),
        }

    def verdict_rows(
        self, result: LDiversityResult, audited: Audited, anchor: str
    ) -> list[VerdictRow]:
        sa, rows = result.sensitive, []
        for name, passed in result.verdicts.items():
            if name == "l":
                rows.append(
                    VerdictRow(
                        f"distinct l-diversity of {sa}",
                        anchor,
                        f"l = {result.distinct}",
                        f"l ≥ {result.l}",
                        passed,
                        f"In the least varied group, {sa} takes "
                        f"{_plural(result.distinct, 'different value')}; the policy asks for at "
                        f"least {result.l} in every group.",
                    )
                )
            elif name == "entropy_l":
                rows.append(
                    VerdictRow(
                        f"entropy l-diversity of {sa}",
                        anchor,
                        f"entropy l = {real(result.entropy)}",
                        f"entropy l ≥ {real(result.entropy_l)}",
                        passed,
                        f"Measured by entropy, the least varied group's {sa} is as mixed as "
                        f"{real(result.entropy)} equally common "
                        f"{'value' if real(result.entropy) == '1' else 'values'} would be; the "
                        f"policy asks for at least {real(result.entropy_l)}.",
                    )
                )
            else:
                c, at_l = real(result.c), result.recursive_l
                rest = after_most_common(at_l)
                if math.isinf(result.recursive_c):
                    sentence = (
                        f"Some group has fewer than {at_l} different values of {sa}, so nothing "
                        f"outweighs its most common value; the policy asks that the most common "
                        f"value be less than {c} times as frequent as {rest}."
                    )
                else:
                    sentence = (
                        f"In the worst group, the most common {sa} is "
                        f"{real(result.recursive_c)} times as frequent as {rest}; the policy "
                        f"asks for less than {c} times."
                    )
                rows.append(
                    VerdictRow(
                        f"recursive ({c}, {at_l})-diversity of {sa}",
                        anchor,
                        f"c* = {real(result.recursive_c)}",
                        f"c* < {c}",
                        passed,
                        sentence,
                    )
                )
        return rows

    def view(
        self, result: LDiversityResult, audited: Audited, options: Options, anchor: str
    ) -> MeasureView:
        """l-diversity of one SA and the classes that fail it."""
        sa = result.sensitive
        rule = _rule(
            None if result.l is None else f"l ≥ {result.l}",
            None if result.entropy_l is None else f"entropy l ≥ {real(result.entropy_l)}",
            None if result.c is None else f"recursive ({real(result.c)}, {result.recursive_l})",
        )
        return self.classes_view(
            result,
            audited,
            options,
            sensitive=sa,
            rule=rule,
            order="fewest distinct values first",
            columns=[
                ("size", "records", _count),
                ("distinct", "distinct values", _count),
                ("entropy_l", "entropy l", real),
                ("recursive_c", "recursive c*", real),
            ],
            lead=f"Every class should hold several well-represented values of {sa}, so that "
            f"knowing someone's class does not reveal their {sa}.",
            facts=(
                Fact("fewest distinct values in a class (distinct l)", f"{result.distinct:,}"),
                Fact("entropy l", real(result.entropy)),
                Fact(
                    f"recursive (c, {result.recursive_l}): c* (diverse for every c > c*)",
                    real(result.recursive_c),
                ),
                Fact(f"records with a null {sa}", f"{result.nulls:,}"),
            ),
        )


SECTION = LDiversitySection()
