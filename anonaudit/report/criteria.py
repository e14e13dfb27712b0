"""The audit by the three questions regulators ask of an anonymised release.

The Article 29 Working Party's Opinion 05/2014 on anonymisation techniques (WP216,
Section 2.2.2) judges a release by three risks: **singling out** (isolating the records
of one person), **linkability** (linking records about the same person, within or across
datasets) and **inference** (deducing a person's attribute from others). This module
sorts the measures of an :class:`~anonaudit.results.AuditReport` under them, says which
back each answer and, as plainly, what was not checked; the JSON report, the summary and
the HTML verdict all read it, so they never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anonaudit.measures import analyses, in_order
from anonaudit.settings.names import Judged

if TYPE_CHECKING:
    from anonaudit.report.reported import Reported

__all__ = ["CRITERIA", "Criterion", "criteria"]

#: The three criteria, in WP216's order: (key, name, question).
CRITERIA = (
    ("singling_out", "Singling out", "Can the records of one person be isolated?"),
    ("linkability", "Linkability", "Can records be linked to other data about the person?"),
    ("inference", "Inference", "Can a person's sensitive value be deduced?"),
)


@dataclass(frozen=True)
class Criterion:
    """One WP216 criterion: what backs its answer and what was not checked.

    Attributes
    ----------
    key, name, question : str
        As in :data:`CRITERIA`.
    measures : tuple of str
        The measures computed for it.
    verdicts : tuple of (str, bool)
        The thresholds judged among them, and whether each passed.
    not_checked : tuple of str
        What this audit could not assess for the criterion, in a sentence each.
    """

    key: str
    name: str
    question: str
    measures: tuple[str, ...]
    verdicts: tuple[tuple[str, bool], ...]
    not_checked: tuple[str, ...]

    @property
    def passed(self) -> bool | None:
        """Whether every judged threshold passed; ``None`` when none was judged, or only
        that no undeclared direct identifier is left (as for the audit's own verdict,
        :attr:`~anonaudit.results.Reported.passed`: it alone does not say that one
        person's records cannot be isolated)."""
        if not all(ok for _, ok in self.verdicts):
            return False
        judged = [name for name, _ in self.verdicts if name != Judged.DIRECT_IDENTIFIERS.value]
        return True if judged else None


def criteria(report: Reported) -> tuple[Criterion, ...]:
    """The three criteria of ``report``, in :data:`CRITERIA` order.

    Each measure and each analysis that ran declares the criteria it backs
    (:attr:`~anonaudit.measures.base.Measure.criteria`), in report order; an analysis
    that did not run says what was not assessed (``unassessed``). The attacks across
    earlier releases back linkability and inference.
    """
    verdicts = {v.name: v.passed for v in report.verdicts()}
    backing: dict[str, list[str]] = {key: [] for key, _, _ in CRITERIA}
    not_checked: dict[str, list[str]] = {key: [] for key, _, _ in CRITERIA}
    if report.identifiers_checked:  # a direct identifier singles out on its own: first
        backing["singling_out"].append(Judged.DIRECT_IDENTIFIERS.value)
    for measure, sa in in_order(report.sensitive):
        for key, names in measure.criteria.items():
            backing[key] += [name if sa is None else f"{name} of {sa}" for name in names]
    for analysis in analyses():
        if analysis.key in report.analyses:
            for key, names in analysis.criteria.items():
                backing[key] += names
        else:
            for key, sentence in analysis.unassessed.items():
                not_checked[key].append(sentence)
    history = report.history
    if history is None:
        not_checked["linkability"].append(
            "no earlier release was given: composition and differencing across releases "
            "were not assessed (--ledger FILE; anonaudit compose, anonaudit diff)"
        )
    else:
        composed = [f"composition of {sa}" for sa in history.composition]
        backing["linkability"] += composed
        backing["linkability"] += [f"differencing of {sa}" for sa in history.differencing]
        backing["inference"] += composed
        not_checked["linkability"] += history.not_checked
    direct = Judged.DIRECT_IDENTIFIERS.value
    if not any(name in verdicts for name in backing["singling_out"] if name != direct):
        not_checked["singling_out"].append(
            "no threshold on the classes was set (-k, --max-risk): whether one person's "
            "records can be isolated by their quasi-identifiers was not judged"
        )
    if not report.sensitive:
        not_checked["inference"].append(
            "no sensitive attribute was declared: inference was not assessed (--sensitive)"
        )
    return tuple(
        Criterion(
            key=key,
            name=name,
            question=question,
            measures=tuple(backing[key]),
            verdicts=tuple((m, verdicts[m]) for m in backing[key] if m in verdicts),
            not_checked=tuple(not_checked[key]),
        )
        for key, name, question in CRITERIA
    )
