"""What the advice reads of an audit: :class:`Audit`, the audit of one class table.

The advice judges each transformation it considers by auditing its class table; the
audit itself (:func:`anonaudit.auditing.audit_table`, returning an
:class:`~anonaudit.results.AuditReport`) sits above the advice, so the advice names
only what it reads of one. An :class:`~anonaudit.results.AuditReport` is an
:class:`Audit`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from anonaudit.classtable import ClassTable
    from anonaudit.measures.base import Analysis, Measure
    from anonaudit.measures.disclosure import DisclosureResult
    from anonaudit.measures.generalization import Generalization
    from anonaudit.measures.k_anonymity import KAnonymityResult
    from anonaudit.measures.l_diversity import LDiversityResult
    from anonaudit.measures.risk import RiskResult
    from anonaudit.measures.t_closeness import TClosenessResult
    from anonaudit.settings.names import Verdict
    from anonaudit.settings.options import AuditOptions
    from anonaudit.settings.policy import Policy

__all__ = ["Audit", "Auditor", "Check"]

_Result = TypeVar("_Result")


class Audit(Protocol):
    """The audit of a class table, as the advice reads it.

    Attributes
    ----------
    table : ClassTable
        The class table audited.
    policy : Policy
        The thresholds it was judged against.
    sensitive : tuple of str
        The SAs.
    generalization : Generalization or None
        The generalization the table was audited under, if any.
    passed : bool or None
        Whether it meets the policy (``None``: no threshold set).
    rows : int
        The records audited.
    k_anonymity, risk, l_diversity, t_closeness, disclosure
        The measures' results (per SA for the last three).
    """

    @property
    def table(self) -> ClassTable: ...

    @property
    def policy(self) -> Policy: ...

    @property
    def sensitive(self) -> tuple[str, ...]: ...

    @property
    def generalization(self) -> Generalization | None: ...

    @property
    def passed(self) -> bool | None: ...

    @property
    def rows(self) -> int: ...

    @property
    def k_anonymity(self) -> KAnonymityResult: ...

    @property
    def risk(self) -> RiskResult: ...

    @property
    def l_diversity(self) -> Mapping[str, LDiversityResult]: ...

    @property
    def t_closeness(self) -> Mapping[str, TClosenessResult]: ...

    @property
    def disclosure(self) -> Mapping[str, DisclosureResult]: ...

    def result(self, measure: Measure[_Result], sensitive: str | None = None) -> _Result:
        """The result of ``measure`` (of SA ``sensitive``, for a measure per SA)."""
        ...

    def analysed(self) -> Iterator[tuple[Analysis[Any], Any]]:
        """Each optional analysis that ran, with its result."""
        ...

    def verdicts(self) -> list[Verdict]:
        """One verdict per threshold the policy sets."""
        ...


class Auditor(Protocol):
    """Audits a class table under options: :func:`anonaudit.auditing.audit_table`."""

    def __call__(self, table: ClassTable, options: AuditOptions | None = None) -> Audit:
        """The audit of ``table`` under ``options``."""
        ...


#: Audits a class table under a fixed policy and options: how the advice judges a
#: transformation (an :class:`Auditor` with the options bound).
Check = Callable[["ClassTable"], Audit]
