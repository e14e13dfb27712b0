"""What an audit returns: the :class:`AuditReport`, its results read by measure, its
verdicts and whether the data may go out as it is."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.errors import PolicyViolationError
from anonaudit.measures import Analysis, Measure, in_order
from anonaudit.measures import analyses as registered_analyses
from anonaudit.measures.disclosure import DisclosureResult
from anonaudit.measures.generalization import Generalization
from anonaudit.measures.identifiers import Identifier
from anonaudit.measures.k_anonymity import KAnonymityResult
from anonaudit.measures.l_diversity import LDiversityResult
from anonaudit.measures.risk import RiskResult
from anonaudit.measures.t_closeness import TClosenessResult
from anonaudit.measures.utility import InformationLoss
from anonaudit.measures.wildcard import NullPolicy
from anonaudit.settings.names import DEFAULT_MAX_ROWS, Judged, Verdict
from anonaudit.settings.policy import Policy

if TYPE_CHECKING:
    from numpy.typing import NDArray

    # anonaudit.dp and anonaudit.advice import this module
    from anonaudit.advice.lattice import Advice
    from anonaudit.advice.suppression import SuppressionAdvice
    from anonaudit.dp.companion import DPReport
    from anonaudit.linkage.history import ReleaseHistory
    from anonaudit.measures.individual import IndividualRisk
    from anonaudit.measures.linkage import PopulationLinkage
    from anonaudit.measures.population import (
        JournalistRisk,
        MarketerRisk,
        PopulationRisks,
        PopulationUniqueness,
    )
    from anonaudit.measures.qi_analysis import QIAnalysis
    from anonaudit.measures.suda import SudaResult

__all__ = ["AuditReport"]

_Result = TypeVar("_Result")


@dataclass(frozen=True)
class AuditReport:
    """Everything an audit measured, with the policy's verdicts.

    Attributes
    ----------
    quasi_identifiers, sensitive : tuple of str
        Column roles.
    rows : int
        Records audited (after dropping null QIs, if asked).
    sources : tuple of SourceStats
        Inputs and the records read from each.
    nulls : dict of str to int
        Records with a null value, per audited column (before any drop).
    null_policy : {"value", "drop", "wildcard"}
        How null QI values were treated (:mod:`anonaudit.measures.wildcard`).
    dropped_records : int
        Records left out because a QI was null (``null_policy="drop"``).
    suppressed_records : int
        Records read as suppressed, every QI ``*`` (:data:`anonaudit.settings.names.SUPPRESSED`,
        ARX's convention and what ``anonaudit advise --out`` writes): in no class and
        not in :attr:`rows`; :func:`audit` only.
    policy : Policy
        The thresholds checked.
    results : mapping of str to result
        Every measure's result (:data:`anonaudit.measures.MEASURES`) by its key; a
        measure per SA holds a dict of SA to result. :meth:`result` reads one; the
        properties :attr:`k_anonymity`, :attr:`l_diversity`, :attr:`t_closeness`,
        :attr:`disclosure` and :attr:`risk` name the built-in ones.
    utility : InformationLoss
        Information loss of the audited (possibly generalized) table
        (:mod:`anonaudit.measures.utility`).
    table : ClassTable
        The class table the measures were computed from.
    audited_at : datetime.datetime
        When the audit ran (UTC).
    analyses : mapping of str to result
        The result of every optional analysis that ran
        (:data:`anonaudit.measures.ANALYSES`), by its key; :meth:`analysed` lists them
        with their analysis, and the properties :attr:`population`,
        :attr:`journalist`, :attr:`marketer`, :attr:`individual`, :attr:`linkage`,
        :attr:`qi_analysis` and :attr:`suda` name the built-in ones.
    dp : DPReport or None
        The differential-privacy companion (:func:`anonaudit.dp.companion` of
        ``table``), when asked for: ``dataclasses.replace(report, dp=...)``.
    generalization : Generalization or None
        The generalization the data was audited under (``generalize=``), if any.
    suppression : SuppressionAdvice or None
        When the policy fails: the classes to suppress so the rest passes
        (:mod:`anonaudit.advice.suppression`).
    advice : Advice or None
        The Pareto-best generalizations (and suppression) that pass the policy, when
        asked for (:func:`anonaudit.advise`).
    identifiers : tuple of Identifier
        Columns that likely identify a person directly, audited or not
        (:func:`anonaudit.measures.identifiers.find_identifiers`; :func:`audit` only).
    identifiers_checked : bool
        Whether the inputs were searched for direct identifiers (:func:`audit` does;
        :func:`audit_table` of a bare class table cannot). When they were, the first
        verdict judges them: it fails while a column detected as a direct identifier
        is neither a QI, an SA nor allowed (:attr:`allowed_identifiers`).
    allowed_identifiers : tuple of str
        The columns released knowingly although they may identify people directly
        (:attr:`anonaudit.Roles.allowed_identifiers`).
    history : ReleaseHistory or None
        Composition and differencing against the earlier releases of the dataset kept
        in a release ledger, when one is given (:mod:`anonaudit.linkage.history`):
        ``dataclasses.replace(report, history=...)``.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    rows: int
    sources: tuple[SourceStats, ...]
    nulls: dict[str, int]
    null_policy: NullPolicy
    dropped_records: int
    policy: Policy
    results: Mapping[str, Any] = field(repr=False)
    utility: InformationLoss
    table: ClassTable = field(repr=False)
    audited_at: _dt.datetime = field(default_factory=lambda: _dt.datetime.now(_dt.UTC))
    analyses: Mapping[str, Any] = field(default_factory=dict, repr=False)
    dp: DPReport | None = field(default=None, repr=False)
    generalization: Generalization | None = None
    suppression: SuppressionAdvice | None = None
    advice: Advice | None = field(default=None, repr=False)
    identifiers: tuple[Identifier, ...] = ()
    identifiers_checked: bool = False
    suppressed_records: int = 0
    allowed_identifiers: tuple[str, ...] = ()
    history: ReleaseHistory | None = field(default=None, repr=False)

    def result(self, measure: Measure[_Result], sensitive: str | None = None) -> _Result:
        """The result of ``measure`` (of SA ``sensitive``, for a measure per SA)."""
        found = self.results[measure.key]
        return cast("_Result", found[sensitive] if measure.per_sensitive else found)

    @property
    def k_anonymity(self) -> KAnonymityResult:
        """k-anonymity (:mod:`anonaudit.measures.k_anonymity`)."""
        return cast("KAnonymityResult", self.results["k_anonymity"])

    @property
    def l_diversity(self) -> dict[str, LDiversityResult]:
        """l-diversity per SA (:mod:`anonaudit.measures.l_diversity`)."""
        return cast("dict[str, LDiversityResult]", self.results["l_diversity"])

    @property
    def t_closeness(self) -> dict[str, TClosenessResult]:
        """t-closeness per SA (:mod:`anonaudit.measures.t_closeness`)."""
        return cast("dict[str, TClosenessResult]", self.results["t_closeness"])

    @property
    def disclosure(self) -> dict[str, DisclosureResult]:
        """alpha, beta and delta per SA (:mod:`anonaudit.measures.disclosure`)."""
        return cast("dict[str, DisclosureResult]", self.results["disclosure"])

    @property
    def risk(self) -> RiskResult:
        """Prosecutor risk (:mod:`anonaudit.measures.risk`)."""
        return cast("RiskResult", self.results["risk"])

    def analysed(self) -> Iterator[tuple[Analysis[Any], Any]]:
        """Each optional analysis that ran, with its result, in report order."""
        for analysis in registered_analyses():
            if analysis.key in self.analyses:
                yield analysis, self.analyses[analysis.key]

    def _population_risks(self) -> PopulationRisks | None:
        return cast("PopulationRisks | None", self.analyses.get("population"))

    @property
    def population(self) -> PopulationUniqueness | None:
        """Estimated population uniques, when a population size or sampling fraction is
        given (:mod:`anonaudit.measures.population`)."""
        found = self._population_risks()
        return None if found is None else found.uniqueness

    @property
    def journalist(self) -> JournalistRisk | None:
        """Journalist risk, with :attr:`population`."""
        found = self._population_risks()
        return None if found is None else found.journalist

    @property
    def marketer(self) -> MarketerRisk | None:
        """Marketer risk, with :attr:`population`."""
        found = self._population_risks()
        return None if found is None else found.marketer

    @property
    def individual(self) -> IndividualRisk | None:
        """sdcMicro's individual and global risk, with survey weights or a population
        size or sampling fraction (:mod:`anonaudit.measures.individual`)."""
        return cast("IndividualRisk | None", self.analyses.get("individual"))

    @property
    def linkage(self) -> PopulationLinkage | None:
        """k-map, delta-presence and unique matches against a population table, when one
        is given (:mod:`anonaudit.measures.linkage`)."""
        return cast("PopulationLinkage | None", self.analyses.get("linkage"))

    @property
    def qi_analysis(self) -> QIAnalysis | None:
        """Distinction and separation of QI subsets, and k without each QI, when asked
        for (:mod:`anonaudit.measures.qi_analysis`)."""
        return cast("QIAnalysis | None", self.analyses.get("qi_analysis"))

    @property
    def suda(self) -> SudaResult | None:
        """Minimal sample uniques and SUDA / DIS-SUDA scores per class, when asked for
        (:mod:`anonaudit.measures.suda`)."""
        return cast("SudaResult | None", self.analyses.get("suda"))

    def verdicts(self) -> list[Verdict]:
        """A :class:`~anonaudit.settings.names.Verdict` for every threshold group the policy
        sets (one per measure, and per SA for the measures of an SA)."""
        result: list[Verdict] = []

        def add(judged: Judged, passed: bool | None, sensitive: str | None = None) -> None:
            if passed is not None:
                result.append(Verdict(judged, passed, sensitive))

        if self.identifiers_checked:
            add(Judged.DIRECT_IDENTIFIERS, not self.undeclared_identifiers)
        for measure, sa in in_order(self.sensitive):
            add(measure.judged, measure.passed(self.result(measure, sa)), sa)
        for analysis, found in self.analysed():
            if analysis.judged is not None:
                add(analysis.judged, analysis.passed(found))
        if self.history is not None:
            result += self.history.verdicts()
        return result

    @property
    def undeclared_identifiers(self) -> tuple[Identifier, ...]:
        """The likely direct identifiers that fail the audit: columns of the input
        declared neither a QI nor an SA, and not allowed (:attr:`allowed_identifiers`).
        A release holding one may not go out as it is, whatever the measures say."""
        return tuple(
            i
            for i in self.identifiers
            if i.declared_role == "not audited" and i.column not in self.allowed_identifiers
        )

    @property
    def passed(self) -> bool | None:
        """Whether every threshold is met and no undeclared direct identifier is left
        (:attr:`undeclared_identifiers`); ``None`` when the policy sets no threshold
        and no undeclared identifier fails the audit (nothing was judged)."""
        verdicts = self.verdicts()
        if not all(v.passed for v in verdicts):
            return False
        judged = [v for v in verdicts if v.judged is not Judged.DIRECT_IDENTIFIERS]
        return True if judged else None

    def raise_for_violations(self) -> None:
        """Raise :class:`PolicyViolationError` listing the failed measures, if any."""
        failed = [v.name for v in self.verdicts() if not v.passed]
        if failed:
            raise PolicyViolationError("the data violates the policy: " + "; ".join(failed))

    @property
    def recode(self) -> Mapping[str, Mapping[str | None, str | None]] | None:
        """Per QI, raw value -> generalized value, when the audit generalized the input
        (``None`` otherwise): the recoding the records pass applies."""
        return None if self.generalization is None else self.generalization.recode_maps()

    def record_columns(self) -> dict[str, NDArray[Any]]:
        """The measures of each class's records, aligned with ``table.classes``, as the
        records file (``--records-out``) writes them: ``fk`` and ``prosecutor_risk``,
        then ``Fk`` and ``individual_risk`` (with :attr:`individual`), ``suda_score`` and
        ``dis_suda_score`` (with :attr:`suda`). Records of one class share their QI
        values, so a class's value is each of its records' value."""
        columns = {"fk": self.risk.frequencies, "prosecutor_risk": self.risk.per_class}
        if self.individual is not None:
            columns["Fk"] = self.individual.Fk
            columns["individual_risk"] = self.individual.risk
        if self.suda is not None:
            columns["suda_score"] = self.suda.scores
            columns["dis_suda_score"] = self.suda.dis_scores
        return columns

    def to_dict(self, *, max_classes: int | None = 100, redact: bool = True) -> dict[str, Any]:
        """The JSON report as a dict (see :mod:`anonaudit.report.json`); the QI values of
        the classes it lists are ``"[redacted]"`` unless ``redact=False``."""
        from anonaudit.report.json import report_to_dict

        return report_to_dict(self, max_classes=max_classes, redact=redact)

    def to_json(self, *, max_classes: int | None = 100, redact: bool = True) -> str:
        """The JSON report as text (see :meth:`to_dict`)."""
        from anonaudit.report.json import dumps

        return dumps(self.to_dict(max_classes=max_classes, redact=redact))

    def to_html(
        self, *, redact: bool = True, command: str | None = None, max_rows: int = DEFAULT_MAX_ROWS
    ) -> str:
        """The HTML report as text (see :func:`anonaudit.report.html.render_html`)."""
        from anonaudit.report.html import render_html

        return render_html(self, redact=redact, command=command, max_rows=max_rows)

    def save_html(
        self,
        path: str | os.PathLike[str],
        *,
        redact: bool = True,
        command: str | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        """Write the HTML report to ``path`` atomically (see :func:`to_html`)."""
        from anonaudit.report.html import save_html

        save_html(self, path, redact=redact, command=command, max_rows=max_rows)
