"""How the reports show :mod:`anonaudit.measures.k_anonymity`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from anonaudit.measures.k_anonymity import KAnonymityResult
from anonaudit.report import charts, explain
from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    MeasureView,
    Options,
    VerdictRow,
    _count,
    _mark,
    _plural,
    join_names,
    json_classes,
)
from anonaudit.report.sections.base import ClassSection

__all__ = ["SECTION", "KAnonymitySection"]


class KAnonymitySection(ClassSection[KAnonymityResult]):
    """How the reports show :data:`anonaudit.measures.k_anonymity.MEASURE`."""

    key = "k_anonymity"
    anchor = "k-anonymity"
    about = explain.K_ANONYMITY
    usage = (
        "`-k K` (policy file: `[thresholds] k`); JSON `k_anonymity`; Python "
        "`report.k_anonymity`, `anonaudit.measures.k_anonymity.k_anonymity`."
    )
    schema: ClassVar[Mapping[str, Any]] = ClassSection.entry_schema(
        {
            "k": {"type": "integer", "minimum": 0},
            "classes": {"type": "integer", "minimum": 0},
            "threshold": {"type": ["integer", "null"], "minimum": 0},
            "histogram": {
                "type": "object",
                "additionalProperties": {"type": "integer", "minimum": 0},
                "description": "Class size -> classes.",
            },
        }
    )

    def title(self, sensitive: str | None) -> str:
        return "k-anonymity"

    def summary(self, result: KAnonymityResult) -> list[str]:
        k = result
        wanted = f" (policy: k >= {k.threshold})" if k.threshold is not None else ""
        return [
            f"k-anonymity: k = {k.k}{wanted}; {k.violating_records:,} records in "
            f"{k.failing.count:,} classes below the threshold{_mark(k.passed)}"
            if k.threshold is not None
            else f"k-anonymity: k = {k.k}"
        ]

    def to_json(self, result: KAnonymityResult, layout: Layout) -> dict[str, Any]:
        k = result
        return {
            "k": k.k,
            "classes": k.classes,
            "threshold": k.threshold,
            "passed": k.passed,
            "histogram": {str(size): n for size, n in k.histogram.items()},
            "violating_records": k.violating_records,
            "violating": json_classes(k.failing, layout),
        }

    def verdict_rows(
        self, result: KAnonymityResult, audited: Audited, anchor: str
    ) -> list[VerdictRow]:
        qi = join_names(audited.quasi_identifiers)
        if result.threshold is None or result.passed is None:
            return []
        sentence = (
            f"The smallest group of people who share these attributes ({qi}) has "
            f"{_plural(result.k, 'member')}; the policy asks for {result.threshold}."
        )
        if not result.passed:
            sentence += (
                f" {_plural(result.violating_records, 'record')} are in "
                f"{_plural(result.failing.count, 'group')} smaller than that."
            )
        return [
            VerdictRow(
                "k-anonymity",
                anchor,
                f"k = {result.k}",
                f"k ≥ {result.threshold}",
                result.passed,
                sentence,
            )
        ]

    def view(
        self, result: KAnonymityResult, audited: Audited, options: Options, anchor: str
    ) -> MeasureView:
        """Class sizes, their chart and the classes smaller than k."""
        rule = None if result.threshold is None else f"k ≥ {result.threshold}"
        return self.classes_view(
            result,
            audited,
            options,
            sensitive=None,
            rule=rule,
            order="smallest first",
            columns=[("size", "records", _count)],
            lead="Every record should share its quasi-identifier values "
            f"({join_names(audited.quasi_identifiers)}) with at least k − 1 others, so that "
            "someone who knows those values cannot narrow a person down to fewer than k "
            "records.",
            facts=(
                Fact("smallest class (k)", f"{result.k:,}"),
                Fact("equivalence classes", f"{result.classes:,}"),
                Fact("records", f"{result.rows:,}"),
            ),
            charts=(charts.class_size_chart(result.histogram, k=result.threshold, chart_id="k"),),
        )


SECTION = KAnonymitySection()
