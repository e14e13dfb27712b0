"""What the reports read of an audit: :class:`Reported`.

The renderers sit above the audit's results, which call them
(:meth:`~anonaudit.results.AuditReport.to_json`, ``to_html``): so that nothing here
imports the results back, every renderer names the audit it shows by this protocol, and
an :class:`~anonaudit.results.AuditReport` is one (mypy checks it where a report is
rendered).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from anonaudit.advice.audit import Audit

if TYPE_CHECKING:
    from anonaudit.advice.lattice import Advice
    from anonaudit.advice.suppression import SuppressionAdvice
    from anonaudit.classtable import SourceStats
    from anonaudit.dp.companion import DPReport
    from anonaudit.linkage.history import ReleaseHistory
    from anonaudit.measures.identifiers import Identifier
    from anonaudit.measures.individual import IndividualRisk
    from anonaudit.measures.linkage import PopulationLinkage
    from anonaudit.measures.population import JournalistRisk, MarketerRisk, PopulationUniqueness
    from anonaudit.measures.qi_analysis import QIAnalysis
    from anonaudit.measures.suda import SudaResult
    from anonaudit.measures.utility import InformationLoss
    from anonaudit.measures.wildcard import NullPolicy

__all__ = ["Reported"]


class Reported(Audit, Protocol):
    """An audit as the reports read it: what the advice reads of one
    (:class:`~anonaudit.advice.audit.Audit`: the table, the policy, the measures'
    results and verdicts), and its provenance, optional analyses, DP companion, advice
    and releases (see :class:`~anonaudit.results.AuditReport` for each member)."""

    @property
    def quasi_identifiers(self) -> tuple[str, ...]: ...

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
    def utility(self) -> InformationLoss: ...

    @property
    def audited_at(self) -> _dt.datetime: ...

    @property
    def analyses(self) -> Mapping[str, Any]: ...

    @property
    def dp(self) -> DPReport | None: ...

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
