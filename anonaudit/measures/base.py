"""What a measure declares, once: :class:`Measure`.

A measure is one module of :mod:`anonaudit.measures` holding a ``MEASURE``: how it is
computed from the class table, what its verdict judges, which classes fail it (a mask),
and how the text summary, the JSON report and the HTML report show it. An optional
analysis (:class:`Analysis`) is a module holding an ``ANALYSIS``: the same, and when the
audit's options ask for it. The audit, the reports and the suppression advice loop over
the registries (:data:`anonaudit.measures.MEASURES`, :data:`anonaudit.measures.ANALYSES`);
none of them names a measure or an analysis. The maths itself stays in
:mod:`anonaudit.checks`, where the lattice search and the DP companion share it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from anonaudit.report.charts import Chart
from anonaudit.report.kit import (
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

    from anonaudit.checks._classes import FailingClasses
    from anonaudit.classtable import ClassTable
    from anonaudit.progress import Progress
    from anonaudit.report import explain
    from anonaudit.settings.names import Judged
    from anonaudit.settings.options import AuditOptions, Distance
    from anonaudit.settings.policy import Policy

__all__ = ["Analysis", "ClassMeasure", "Context", "Measure", "Result", "Setting"]

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
        The :class:`~anonaudit.settings.policy.Policy` fields it judges against.
    usage : str
        Where anonaudit reports it (options, JSON keys, Python), in Markdown: the "In
        anonaudit" part of its page in the docs.
    schema : mapping
        The JSON Schema (draft 2020-12) of its JSON entry (of one SA's, for a measure
        per SA), which may refer to the shared ``#/$defs`` of the report's schema;
        :mod:`anonaudit.report.schema` writes it into the shipped schema.
    criteria : mapping of str to tuple of str
        Per WP216 criterion it backs (``"singling_out"``, ``"linkability"``,
        ``"inference"``: :data:`anonaudit.report.criteria.CRITERIA`), the names it is
        listed under there (followed by `` of <SA>`` for a measure per SA).
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
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {}

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


@dataclass(frozen=True)
class Setting:
    """What an optional analysis is computed from: the audited table and the options.

    Attributes
    ----------
    table : ClassTable
        The class table audited (generalized and without dropped records, if asked).
    options : AuditOptions
        The audit's options: which analyses are asked, and their settings.
    population : ClassTable or None
        The population table (``options.population.table``) in the release's coding,
        generalized as the release is; ``None`` without one.
    weights : str or None
        The name of the column :attr:`ClassTable.weights` came from, for the report.
    progress : Progress or None
        Where to show the steps of a long analysis.
    """

    table: ClassTable
    options: AuditOptions
    population: ClassTable | None = None
    weights: str | None = None
    progress: Progress | None = None


class Analysis(ABC, Generic[Result]):
    """An optional analysis of the audit, declared once: run when the options ask.

    Subclasses set the class attributes and implement the abstract methods; the module
    that defines one assigns an instance to ``ANALYSIS`` and is found by
    :data:`anonaudit.measures.ANALYSES`. Its result is
    ``AuditReport.analyses[key]`` when it ran.

    Attributes
    ----------
    key : str
        Its key in :attr:`AuditReport.analyses`.
    position : int
        Its place among the analyses, in every report.
    extends : str or None
        The key of the measure whose JSON entry its fragment joins (its lines then
        follow the measures in the text summary); ``None``: its fragment's keys are
        top-level keys of the JSON report, and its lines come later in the summary.
    about : explain.Measure or None
        What it means, for the HTML report's explanations, if it has one.
    judged : Judged or None
        What its verdict judges, if it has one.
    template, anchor, title : str
        Its HTML section: the template under ``report/templates``, the section's id
        and heading (when :meth:`view` gives a view).
    definitions : mapping
        The JSON Schema definitions (``$defs``) its fragment refers to, by name.
    properties : mapping
        The JSON Schema of each key of its fragment: keys of the entry of the measure
        it ``extends`` (written into that measure's ``$defs`` entry), or top-level keys
        of the report; they may refer to ``definitions``.
    criteria : mapping of str to tuple of str
        As :attr:`Measure.criteria`: the WP216 criteria it backs when it ran.
    unassessed : mapping of str to str
        Per WP216 criterion, what the audit did not assess because it did not run, in a
        sentence naming the option that runs it.
    """

    key: str
    position: int
    extends: str | None = None
    about: explain.Measure | None = None
    judged: Judged | None = None
    template: str = ""
    anchor: str = ""
    title: str = ""
    definitions: ClassVar[Mapping[str, Any]] = {}
    properties: ClassVar[Mapping[str, Any]] = {}
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    unassessed: ClassVar[Mapping[str, str]] = {}

    @abstractmethod
    def asked(self, setting: Setting) -> bool:
        """Whether the audit's options (and, for some, its table) ask for it."""

    def check(self, setting: Setting) -> None:
        """Refuse, before any analysis runs, what it cannot do (by default nothing)."""

    @abstractmethod
    def compute(self, setting: Setting) -> Result:
        """The result on ``setting.table``."""

    def passed(self, result: Result) -> bool | None:
        """Whether ``result`` meets the policy; ``None`` (the default) when it judges
        nothing."""
        return None

    def failing(self, result: Result, table: ClassTable) -> NDArray[Any] | None:
        """A mask over ``table``'s classes of those failing its verdict, for the
        suppression advice (``None``, the default: none)."""
        return None

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
