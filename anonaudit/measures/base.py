"""What a measure declares, once: :class:`Measure`.

A measure is one module of :mod:`anonaudit.measures` holding its maths (functions of the
class table, with their citations) and a ``MEASURE``: how it is computed from the class
table, what its verdict judges, which classes fail it (a mask) and the WP216 criteria it
backs. An optional analysis (:class:`Analysis`) is a module holding an ``ANALYSIS``: the
same, and when the audit's options ask for it. The audit, the reports and the
suppression advice loop over the registries (:data:`anonaudit.measures.MEASURES`,
:data:`anonaudit.measures.ANALYSES`); none of them names a measure or an analysis. How
the reports show one is its section, :mod:`anonaudit.report.sections`: nothing here
formats text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import NDArray

    from anonaudit.classtable import ClassTable
    from anonaudit.measures._classes import FailingClasses
    from anonaudit.progress import Progress
    from anonaudit.settings.names import Judged
    from anonaudit.settings.options import AuditOptions, Distance
    from anonaudit.settings.policy import Policy

__all__ = [
    "Analysis",
    "ClassMeasure",
    "Classwise",
    "ClasswiseResult",
    "Context",
    "Measure",
    "Result",
    "Setting",
]

#: A measure's result type (a frozen dataclass of its module).
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
        (:func:`anonaudit.measures.wildcard.class_frequencies`); else ``None``.
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
    thresholds : tuple of str
        The :class:`~anonaudit.settings.policy.Policy` fields it judges against.
    criteria : mapping of str to tuple of str
        Per WP216 criterion it backs (``"singling_out"``, ``"linkability"``,
        ``"inference"``: :data:`anonaudit.report.criteria.CRITERIA`), the names it is
        listed under there (followed by `` of <SA>`` for a measure per SA).
    """

    key: str
    judged: Judged
    per_sensitive: bool = False
    position: int
    thresholds: tuple[str, ...] = ()
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


class Classwise(Protocol):
    """A result that judges itself and holds the classes failing it."""

    @property
    def passed(self) -> bool | None: ...

    @property
    def failing(self) -> FailingClasses: ...

    @property
    def violating(self) -> pd.DataFrame: ...

    @property
    def violating_records(self) -> int: ...


#: The result type of a measure judged class by class.
ClasswiseResult = TypeVar("ClasswiseResult", bound=Classwise)


class ClassMeasure(Measure[ClasswiseResult]):
    """A measure whose result says whether it passed and marks the classes failing it
    (a :class:`~anonaudit.measures._classes.FailingClasses`), as every measure judged
    per class does."""

    def passed(self, result: ClasswiseResult) -> bool | None:
        return result.passed

    def failing(self, result: ClasswiseResult, table: ClassTable) -> NDArray[Any]:
        return result.failing.mask


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
    judged : Judged or None
        What its verdict judges, if it has one.
    criteria : mapping of str to tuple of str
        As :attr:`Measure.criteria`: the WP216 criteria it backs when it ran.
    unassessed : mapping of str to str
        Per WP216 criterion, what the audit did not assess because it did not run, in a
        sentence naming the option that runs it.
    """

    key: str
    position: int
    judged: Judged | None = None
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
