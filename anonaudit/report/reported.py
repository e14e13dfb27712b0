"""What the reports read of an audit: :class:`Reported`.

The renderers sit above the audit's results, which call them
(:meth:`~anonaudit.results.AuditReport.to_json`, ``to_html``): so that nothing here
imports the results back, every renderer names the audit it shows by this protocol, and
an :class:`~anonaudit.results.AuditReport` is one (mypy checks it where a report is
rendered).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from anonaudit.advice.lattice import Advice
    from anonaudit.advice.suppression import SuppressionAdvice
    from anonaudit.classtable import ClassTable, SourceStats
    from anonaudit.dp.companion import DPReport
    from anonaudit.linkage.history import ReleaseHistory
    from anonaudit.measures.base import Analysis, Measure
    from anonaudit.measures.disclosure import DisclosureResult
    from anonaudit.measures.generalization import Generalization
    from anonaudit.measures.identifiers import Identifier
    from anonaudit.measures.individual import IndividualRisk
    from anonaudit.measures.k_anonymity import KAnonymityResult
    from anonaudit.measures.l_diversity import LDiversityResult
    from anonaudit.measures.linkage import PopulationLinkage
    from anonaudit.measures.population import JournalistRisk, MarketerRisk, PopulationUniqueness
    from anonaudit.measures.qi_analysis import QIAnalysis
    from anonaudit.measures.risk import RiskResult
    from anonaudit.measures.suda import SudaResult
    from anonaudit.measures.t_closeness import TClosenessResult
    from anonaudit.measures.utility import InformationLoss
    from anonaudit.measures.wildcard import NullPolicy
    from anonaudit.settings.names import Verdict
    from anonaudit.settings.policy import Policy

__all__ = ["Reported"]

_Result = TypeVar("_Result")


class Reported(Protocol):
    """An audit as the reports read it: its results, verdicts and provenance (see
    :class:`~anonaudit.results.AuditReport` for each member)."""

    @property
    def quasi_identifiers(self) -> tuple[str, ...]: ...

    @property
    def sensitive(self) -> tuple[str, ...]: ...

    @property
    def rows(self) -> int: ...

    @property
    def sources(self) -> tuple[SourceStats, ...]: ...

    @property
    def nulls(self) -> dict[str, int]: ...

    @property
    def null_policy(self) -> NullPolicy: ...

    @property
    def dropped_records(self) -> int: ...

    @property
    def suppressed_records(self) -> int: ...

    @property
    def policy(self) -> Policy: ...

    @property
    def utility(self) -> InformationLoss: ...

    @property
    def table(self) -> ClassTable: ...

    @property
    def audited_at(self) -> _dt.datetime: ...

    @property
    def analyses(self) -> Mapping[str, Any]: ...

    @property
    def dp(self) -> DPReport | None: ...

    @property
    def generalization(self) -> Generalization | None: ...

    @property
    def suppression(self) -> SuppressionAdvice | None: ...

    @property
    def advice(self) -> Advice | None: ...

    @property
    def identifiers(self) -> tuple[Identifier, ...]: ...

    @property
    def identifiers_checked(self) -> bool: ...

    @property
    def allowed_identifiers(self) -> tuple[str, ...]: ...

    @property
    def history(self) -> ReleaseHistory | None: ...

    @property
    def k_anonymity(self) -> KAnonymityResult: ...

    @property
    def l_diversity(self) -> dict[str, LDiversityResult]: ...

    @property
    def t_closeness(self) -> dict[str, TClosenessResult]: ...

    @property
    def disclosure(self) -> dict[str, DisclosureResult]: ...

    @property
    def risk(self) -> RiskResult: ...

    @property
    def population(self) -> PopulationUniqueness | None: ...

    @property
    def journalist(self) -> JournalistRisk | None: ...

    @property
    def marketer(self) -> MarketerRisk | None: ...

    @property
    def individual(self) -> IndividualRisk | None: ...

    @property
    def linkage(self) -> PopulationLinkage | None: ...

    @property
    def qi_analysis(self) -> QIAnalysis | None: ...

    @property
    def suda(self) -> SudaResult | None: ...

    @property
    def undeclared_identifiers(self) -> tuple[Identifier, ...]: ...

    @property
    def passed(self) -> bool | None: ...

    def result(self, measure: Measure[_Result], sensitive: str | None = None) -> _Result:
        """The result of ``measure`` (of SA ``sensitive``, for a measure per SA)."""
        ...

    def analysed(self) -> Iterator[tuple[Analysis[Any], Any]]:
        """Each optional analysis that ran, with its result."""
        ...

    def verdicts(self) -> list[Verdict]:
        """One verdict per threshold the policy sets, and the direct identifiers'."""
        ...
