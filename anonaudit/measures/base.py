"""What a measure declares, once: :class:`Measure`.

A measure is one module of :mod:`anonaudit.measures` holding a ``MEASURE``: how it is
computed from the class table, what its verdict judges, which classes fail it (a mask),
and how the text summary, the JSON report and the HTML report show it. The audit, the
reports and the suppression advice loop over the registry
(:data:`anonaudit.measures.MEASURES`); none of them names a measure. The maths itself
stays in :mod:`anonaudit.checks`, where the lattice search and the DP companion share
it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from anonaudit.measures.charts import Chart
from anonaudit.measures.present import (
    Audited,
    Column,
    Fact,
    Layout,
    MeasureView,
    Options,
    VerdictRow,
    _failing,
)

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import NDArray

    from anonaudit import explain
    from anonaudit.checks._classes import FailingClasses
    from anonaudit.classtable import ClassTable
    from anonaudit.options import Distance
    from anonaudit.policy import Policy
    from anonaudit.vocabulary import Judged

__all__ = ["ClassMeasure", "Context", "Measure", "Result"]

#: A measure's result type (a frozen dataclass of :mod:`anonaudit.checks`).
Result = TypeVar("Result")


@dataclass(frozen=True)
class Context:
    """What a measure is computed from: the audited table and the audit's settings.

    Attributes
    ----------
    table : ClassTable
        The class table audited (generalized and without dropped records, if asked).
    policy : Policy
        The thresholds.
    risk_threshold : float
        The risk above which a record counts as at risk.
    distances : mapping of str to Distance
        The ground distance of each SA, with its hierarchy or matrix read.
    wildcard_sizes : numpy.ndarray or None
        Under ``nulls="wildcard"``, the number of records each class's record could be
        (:func:`anonaudit.checks.wildcard.class_frequencies`); else ``None``.
    """

    table: ClassTable
    policy: Policy
    risk_threshold: float
    distances: Mapping[str, Distance]
    wildcard_sizes: NDArray[Any] | None = None


class Measure(ABC, Generic[Result]):
    """A measure of the audit, declared once.

    Subclasses set the class attributes and implement the methods; the module that
    defines one assigns an instance to ``MEASURE`` and is found by
    :data:`anonaudit.measures.MEASURES`.

    Attributes
    ----------
    key : str
        Its key in :attr:`AuditReport.results` and in the JSON report.
    judged : Judged
        What its verdicts judge.
    per_sensitive : bool
        Whether it is computed (and judged) once per SA.
    position : int
        Its place among the measures, in every report (a measure per SA is shown with
        the other measures of that SA).
    anchor : str
        The id of its HTML section (followed by ``-<SA>`` for a measure per SA).
    about : explain.Measure
        What it means, protects and misses, with its citations (the HTML report and the
        docs' page of the measure).
    thresholds : tuple of str
        The :class:`~anonaudit.policy.Policy` fields it judges against.
    usage : str
        Where anonaudit reports it (options, JSON keys, Python), in Markdown: the "In
        anonaudit" part of its page in the docs.
    schema : mapping
        The JSON Schema (draft 2020-12) of its JSON entry (of one SA's, for a measure
        per SA), which may refer to the shared ``#/$defs`` of the report's schema;
        :mod:`anonaudit.report.schema` writes it into the shipped schema.
    """

    key: str
    judged: Judged
    per_sensitive: bool = False
    position: int
    anchor: str
    about: explain.Measure
    thresholds: tuple[str, ...] = ()
    usage: str
    schema: ClassVar[Mapping[str, Any]]

    @abstractmethod
    def compute(self, context: Context, sensitive: str | None) -> Result:
        """The result on ``context.table`` (of SA ``sensitive``, for a measure per SA)."""

    @abstractmethod
    def passed(self, result: Result) -> bool | None:
        """Whether ``result`` meets the policy; ``None`` when it sets no threshold here."""

    @abstractmethod
    def failing(self, result: Result, table: ClassTable) -> NDArray[Any] | None:
        """A mask over ``table``'s classes of those failing the policy (``None``: no
        class accounts for a failure), for the suppression advice."""

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


class _Classwise(Protocol):
    """A result that judges itself and holds the classes failing it."""

    @property
    def passed(self) -> bool | None: ...

    @property
    def failing(self) -> FailingClasses: ...

    @property
    def violating(self) -> pd.DataFrame: ...

    @property
    def violating_records(self) -> int: ...


_ClasswiseResult = TypeVar("_ClasswiseResult", bound=_Classwise)


class ClassMeasure(Measure[_ClasswiseResult]):
    """A measure whose result says whether it passed and marks the classes failing it
    (a :class:`~anonaudit.checks._classes.FailingClasses`), as every check of
    :mod:`anonaudit.checks` judged per class does."""

    def passed(self, result: _ClasswiseResult) -> bool | None:
        return result.passed

    def failing(self, result: _ClasswiseResult, table: ClassTable) -> NDArray[Any]:
        return result.failing.mask

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
        result: _ClasswiseResult,
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
        outcome, listing = _failing(
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
            about=self.about.anchor,
            facts=(*facts, Fact("policy", rule or "none")),
            charts=charts,
            outcome=outcome,
            listing=listing,
        )
