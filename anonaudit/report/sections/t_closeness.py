"""How the reports show :mod:`anonaudit.measures.t_closeness`: its lines in the text summary,
its JSON entry and its HTML section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from anonaudit.distances import DISTANCES
from anonaudit.measures.t_closeness import TClosenessResult
from anonaudit.report import charts, explain
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
    class_label,
    farthest,
    json_classes,
    json_number,
    real,
)
from anonaudit.report.sections.base import ClassSection
from anonaudit.settings.names import DISTANCE_INPUTS

__all__ = ["SECTION", "TClosenessSection"]


class TClosenessSection(ClassSection[TClosenessResult]):
    """How the reports show :data:`anonaudit.measures.t_closeness.MEASURE`."""

    key = "t_closeness"
    anchor = "t-closeness"
    about = explain.T_CLOSENESS
    usage = (
        "`-t T`, `--t-distance`, `--hierarchy COL=FILE`, "
        + ", ".join(f"`{each.flag}`" for each in DISTANCE_INPUTS)
        + "; JSON `t_closeness.<SA>`; Python `report.t_closeness[sa]`, "
        "`anonaudit.measures.t_closeness.t_closeness`."
    )
    schema: ClassVar[Mapping[str, Any]] = ClassSection.entry_schema(
        {
            "t": {"$ref": "#/$defs/real_or_null"},
            "distance": {"enum": list(DISTANCES)},
            "threshold": {"type": ["number", "null"]},
            "nulls_excluded": {"type": "integer", "minimum": 0},
        }
    )

    def title(self, sensitive: str | None) -> str:
        return f"t-closeness of {sensitive}"

    def summary(self, result: TClosenessResult) -> list[str]:
        tc = result
        return [f"  t-closeness ({tc.distance}): t = {_fmt(tc.t)}{_mark(tc.passed)}"]

    def to_json(self, result: TClosenessResult, layout: Layout) -> dict[str, Any]:
        r = result
        return {
            "t": json_number(r.t),
            "distance": r.distance,
            "threshold": r.threshold,
            "nulls_excluded": r.nulls_excluded,
            "passed": r.passed,
            "violating_records": r.violating_records,
            "violating": json_classes(r.failing, layout),
        }

    def verdict_rows(
        self, result: TClosenessResult, audited: Audited, anchor: str
    ) -> list[VerdictRow]:
        if result.threshold is None or result.passed is None:
            return []
        sa = result.sensitive
        return [
            VerdictRow(
                f"t-closeness of {sa}",
                anchor,
                f"t = {real(result.t)}",
                f"t ≤ {real(result.threshold)}",
                result.passed,
                f"The group whose {sa} differs most from the whole table's is at distance "
                f"{real(result.t)} (earth mover's distance, {result.distance} ground distance: "
                f"0 is the same distribution, 1 as different as can be); the policy allows at "
                f"most {real(result.threshold)}.",
            )
        ]

    def view(
        self, result: TClosenessResult, audited: Audited, options: Options, anchor: str
    ) -> MeasureView:
        """t-closeness of one SA: the distance histogram, the farthest classes beside the
        whole table, and the classes farther than t."""
        sa = result.sensitive
        chart_id = anchor.replace("t-closeness", "t", 1)
        rule = None if result.threshold is None else f"t ≤ {real(result.threshold)}"
        classes = audited.table.classes
        labels = [
            (class_id, class_label(classes, class_id, rank, result.per_class, options))
            for rank, class_id in enumerate(farthest(result.per_class, classes), start=1)
        ]
        return self.classes_view(
            result,
            audited,
            options,
            sensitive=sa,
            rule=rule,
            order="farthest first",
            columns=[("size", "records", _count), ("distance", "distance (EMD)", real)],
            lead=f"The distribution of {sa} within every class should be close to its "
            "distribution in the whole table, so that learning someone's class tells an "
            f"attacker little more about their {sa} than the table as a whole does.",
            facts=(
                Fact("largest distance of a class from the whole table (t)", real(result.t)),
                Fact("ground distance", result.distance),
                Fact(
                    f"records with a null {sa} left out of the distributions",
                    f"{result.nulls_excluded:,}",
                ),
            ),
            charts=(
                charts.distance_chart(
                    result.per_class,
                    classes.sizes,
                    t=result.threshold,
                    sensitive=sa,
                    chart_id=f"{chart_id}-distance",
                ),
                charts.distribution_chart(
                    audited.table.sensitive_counts(sa),
                    labels,
                    named_by=audited.quasi_identifiers,
                    chart_id=f"{chart_id}-values",
                ),
            ),
        )


SECTION = TClosenessSection()
