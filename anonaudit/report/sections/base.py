"""How a measure or an analysis is shown, declared once: its section.

A measure's section (:class:`MeasureSection`) is the presentation of one
:class:`~anonaudit.measures.base.Measure`: the heading and lines of the text summary,
the JSON entry and its schema, the rows of the HTML verdict table and the HTML section,
with the explanation of what it means. An analysis has its :class:`AnalysisSection`.
The module :mod:`anonaudit.report.sections.<key>` holds the section of the measure or
analysis of that key (``SECTION``); a measure without one is shown by
:class:`GenericSection`, which prints the fields of its result. Sections compute
nothing: they read results.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from anonaudit.measures.base import Classwise, ClasswiseResult, Measure, Result
from anonaudit.report.charts import Chart
from anonaudit.report.kit import (
    Audited,
    Column,
    Fact,
    Layout,
    MeasureView,
    Options,
    VerdictRow,
    failing_classes,
)

if TYPE_CHECKING:
    from anonaudit.report import explain

__all__ = ["AnalysisSection", "ClassSection", "GenericSection", "MeasureSection"]


class MeasureSection(ABC, Generic[Result]):
    """How the reports show a measure of the audit.

    Attributes
    ----------
    key : str
        The key of the measure it shows.
    anchor : str
        The id of its HTML section (followed by ``-<SA>`` for a measure per SA).
    about : explain.Measure or None
        What it means, protects and misses, with its citations (the HTML report and the
        docs' page of the measure); ``None``: no explanation yet.
    usage : str
        Where anonaudit reports it (options, JSON keys, Python), in Markdown: the "In
        anonaudit" part of its page in the docs.
    schema : mapping
        The JSON Schema (draft 2020-12) of its JSON entry (of one SA's, for a measure
        per SA), which may refer to the shared ``#/$defs`` of the report's schema;
        :mod:`anonaudit.report.schema` writes it into the shipped schema.
    """

    key: str
    anchor: str
    about: explain.Measure | None = None
    usage: str = ""
    schema: ClassVar[Mapping[str, Any]] = {"type": "object"}

    @abstractmethod
    def title(self, sensitive: str | None) -> str:
        """The heading of its HTML section."""

    @abstractmethod
    def summary(self, result: Result) -> list[str]:
        """Its lines in the text summary (indented under their SA, for a measure per
        SA)."""

    @abstractmethod
    def to_json(self, result: Result, layout: Layout) -> dict[str, Any]:
        """Its entry in the JSON report (``report[key]``, or ``report[key][sa]``)."""

    @abstractmethod
    def verdict_rows(self, result: Result, audited: Audited, anchor: str) -> list[VerdictRow]:
        """A row of the HTML report's verdict table per threshold it judges."""

    @abstractmethod
    def view(self, result: Result, audited: Audited, options: Options, anchor: str) -> MeasureView:
        """Its HTML section (``anchor`` is the section's id)."""


class ClassSection(MeasureSection[ClasswiseResult]):
    """The section of a measure judged class by class
    (:class:`~anonaudit.measures.base.ClassMeasure`): its JSON entry ends with the
    verdict and the failing classes, its HTML section lists them."""

    @staticmethod
    def entry_schema(properties: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON Schema of a class-by-class measure's entry: ``properties``, then the
        verdict and the failing classes every such entry ends with, all required."""
        every = {
            **properties,
            "passed": {"type": ["boolean", "null"]},
            "violating_records": {"type": "integer", "minimum": 0},
            "violating": {"$ref": "#/$defs/classes"},
        }
        return {
            "type": "object",
            "properties": every,
            "required": list(every),
            "additionalProperties": False,
        }

    def classes_view(
        self,
        result: Classwise,
        audited: Audited,
        options: Options,
        *,
        sensitive: str | None,
        rule: str | None,
        order: str,
        columns: list[Column],
        lead: str,
        facts: tuple[Fact, ...],
        charts: tuple[Chart, ...] = (),
    ) -> MeasureView:
        """The section of a measure judged class by class: ``facts`` and the policy's
        ``rule`` (``None``: no threshold), ``charts``, and the classes failing the rule,
        listed ``order`` with their QI values and ``columns``."""
        outcome, listing = failing_classes(
            result,
            audited,
            options,
            rule=rule if rule is None or sensitive is None else f"{rule} on {sensitive}",
            order=order,
            measures=columns,
            name=self.anchor if sensitive is None else f"{self.anchor}-{sensitive}",
        )
        return MeasureView(
            lead=lead,
            about=None if self.about is None else self.about.anchor,
            facts=(*facts, Fact("policy", rule or "none")),
            charts=charts,
            outcome=outcome,
            listing=listing,
        )


def _printed(value: object) -> str:
    """A field of a result as the reports print it."""
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "none"}[value]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:.4g}"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def _fields(result: object) -> dict[str, object]:
    """The scalar fields of a result (a dataclass): numbers, texts, verdicts."""
    if not dataclasses.is_dataclass(result):
        return {}
    found = {}
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        if value is None or isinstance(value, bool | int | float | str | enum.Enum):
            found[field.name] = value.value if isinstance(value, enum.Enum) else value
    return found


class GenericSection(MeasureSection[Any]):
    """The section of a measure that has none of its own: its result's scalar fields,
    printed in the text summary, written in the JSON entry and listed in the HTML
    section, and its verdict, if it judges one.

    Parameters
    ----------
    measure : Measure
        The measure shown.
    """

    def __init__(self, measure: Measure[Any]) -> None:
        self.measure = measure
        self.key = measure.key
        self.anchor = measure.key.replace("_", "-")

    def _name(self) -> str:
        return self.key.replace("_", " ")

    def title(self, sensitive: str | None) -> str:
        return self._name() if sensitive is None else f"{self._name()} of {sensitive}"

    def summary(self, result: Any) -> list[str]:
        values = ", ".join(f"{name} {_printed(v)}" for name, v in _fields(result).items())
        passed = self.measure.passed(result)
        mark = "" if passed is None else ("  [pass]" if passed else "  [FAIL]")
        return [f"{self._name()}: {values}{mark}"]

    def to_json(self, result: Any, layout: Layout) -> dict[str, Any]:
        entry: dict[str, Any] = {
            name: None if isinstance(v, float) and not math.isfinite(v) else v
            for name, v in _fields(result).items()
        }
        entry["passed"] = self.measure.passed(result)
        return entry

    def verdict_rows(self, result: Any, audited: Audited, anchor: str) -> list[VerdictRow]:
        passed = self.measure.passed(result)
        if passed is None:
            return []
        measured = "; ".join(f"{name} {_printed(v)}" for name, v in _fields(result).items())
        asks = ", ".join(self.measure.thresholds) or "the policy"
        sentence = f"{self._name()}: {'meets' if passed else 'fails'} the policy."
        return [VerdictRow(self._name(), anchor, measured, asks, passed, sentence)]

    def view(self, result: Any, audited: Audited, options: Options, anchor: str) -> MeasureView:
        passed = self.measure.passed(result)
        return MeasureView(
            lead=f"{self._name()[:1].upper()}{self._name()[1:]}, as measured on the class table.",
            about=None,
            facts=tuple(
                Fact(name.replace("_", " "), _printed(v)) for name, v in _fields(result).items()
            ),
            charts=(),
            outcome={
                None: "The policy sets no threshold here.",
                True: "It meets the policy.",
                False: "It fails the policy.",
            }[passed],
            listing=None,
        )


class AnalysisSection(ABC, Generic[Result]):
    """How the reports show an optional analysis, when it ran.

    Attributes
    ----------
    key : str
        The key of the analysis it shows.
    extends : str or None
        The key of the measure whose JSON entry its fragment joins (its lines then
        follow the measures in the text summary); ``None``: its fragment's keys are
        top-level keys of the JSON report, and its lines come later in the summary.
    about : explain.Measure or None
        What it means, for the HTML report's explanations, if it has one.
    template, anchor, title : str
        Its HTML section: the template under ``report/templates``, the section's id
        and heading (when :meth:`view` gives a view).
    definitions : mapping
        The JSON Schema definitions (``$defs``) its fragment refers to, by name.
    properties : mapping
        The JSON Schema of each key of its fragment: keys of the entry of the measure
        it ``extends`` (written into that measure's ``$defs`` entry), or top-level keys
        of the report; they may refer to ``definitions``.
    """

    key: str
    extends: str | None = None
    about: explain.Measure | None = None
    template: str = ""
    anchor: str = ""
    title: str = ""
    definitions: ClassVar[Mapping[str, Any]] = {}
    properties: ClassVar[Mapping[str, Any]] = {}

    @abstractmethod
    def summary(self, result: Result, audited: Audited) -> list[str]:
        """Its lines in the text summary."""

    @abstractmethod
    def to_json(self, result: Result, audited: Audited, layout: Layout) -> dict[str, Any]:
        """Its fragment of the JSON report: keys of the entry it extends, or top-level
        keys."""

    def json_rows(self, document: Mapping[str, Any]) -> int:
        """Rows of QI values its keys of the JSON report ``document`` hold outside
        listings of classes (by default none), for the report's ``contents`` notice."""
        return 0

    def verdict_rows(self, result: Result, audited: Audited) -> list[VerdictRow]:
        """A row of the HTML report's verdict table per threshold it judges (by default
        none)."""
        return []

    def view(self, result: Result, audited: Audited, options: Options) -> object | None:
        """The view its HTML section's template reads; ``None`` (the default): no
        section."""
        return None
