"""The views of the "Information loss and how to pass" section, and its sentences.

:func:`advice_view` lays out the report's information loss
(:class:`~anonaudit.checks.utility.InformationLoss`), the generalization the data was
audited under, and the suppression advice
(:class:`~anonaudit.advice.suppression.SuppressionAdvice`) in plain words: "suppressing
N records (x%) in M classes would reach k = 5". :func:`suppression_sentence` is the same
sentence for the command line's summary. Nothing here computes: the advice was checked
by an audit already (its ``passed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anonaudit.report.views import Fact, Listing, Options, _count, _listing, _plural, _real, _share

if TYPE_CHECKING:
    from anonaudit.audit import AuditReport
    from anonaudit.policy import Policy

__all__ = ["AdviceView", "MeasureRow", "advice_view", "policy_text", "suppression_sentence"]

# How each threshold of a Policy reads in a sentence.
_THRESHOLD_NAMES = {
    "k": "k",
    "l": "l",
    "entropy_l": "entropy l",
    "recursive": "recursive (c,l)",
    "t": "t",
    "alpha": "alpha",
    "beta": "beta",
    "delta": "delta",
    "max_risk": "highest risk",
}


@dataclass(frozen=True)
class MeasureRow:
    """One failed measure and the classes failing it, as printed."""

    measure: str
    classes: str
    records: str


@dataclass(frozen=True)
class AdviceView:
    """The section's content.

    Attributes
    ----------
    generalization : str
        How the QIs were generalized for the audit (or that they were not).
    utility : tuple of Fact
        Information loss of the audited table.
    sentence : str or None
        The suppression advice in one sentence; ``None`` when the policy passes or sets
        no threshold.
    measures : tuple of MeasureRow
        Per failed measure, the classes failing it.
    after : tuple of Fact
        Information loss of the release after the suppression.
    listing : Listing or None
        The classes to suppress.
    """

    generalization: str
    utility: tuple[Fact, ...]
    sentence: str | None
    measures: tuple[MeasureRow, ...]
    after: tuple[Fact, ...]
    listing: Listing | None


def policy_text(policy: Policy) -> str:
    """The thresholds of ``policy`` as words: ``"k = 5, l = 2 and t = 0.2"``."""
    parts = []
    for name, value in policy.active().items():
        shown = f"({value[0]:g}, {value[1]})" if isinstance(value, tuple) else f"{value:g}"
        parts.append(f"{_THRESHOLD_NAMES[name]} = {shown}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def suppression_sentence(report: AuditReport) -> str | None:
    """The suppression advice in one sentence, or ``None`` when there is none."""
    advice = report.suppression
    if advice is None:
        return None
    amount = (
        f"{_plural(advice.records, 'record')} ({_share(advice.fraction)}) in "
        f"{_plural(advice.classes, 'class')}"
    )
    goal = policy_text(report.policy)
    if advice.passed:
        return f"Suppressing {amount} would reach {goal}."
    if advice.records == advice.rows:
        return f"Suppression alone cannot reach {goal}: every record would have to go."
    return (
        f"Suppression alone cannot reach {goal}: after suppressing {amount} the rest still "
        "fails; generalize the quasi-identifiers first."
    )


def _generalization(report: AuditReport) -> str:
    g = report.generalization
    if g is None or not g.height():
        return "The quasi-identifiers were audited as they are (no generalization)."
    levels = ", ".join(
        f"{qi} to level {level} of {g.hierarchies[qi].height} ({g.hierarchies[qi].name})"
        for qi, level in g.levels.items()
        if level
    )
    return f"The data was audited as it would be after generalizing {levels}."


def _loss_facts(report: AuditReport, *, after: bool) -> tuple[Fact, ...]:
    loss = report.suppression.utility if after and report.suppression else report.utility
    if loss is None:
        return ()
    facts = [
        Fact(
            "Discernibility (DM, a suppressed record counts n)"
            if loss.suppressed
            else "Discernibility (DM*)",
            _real(loss.discernibility),
        ),
        Fact(
            "Average class size (C_AVG)"
            + (f", relative to k = {loss.k}" if loss.k is not None else ""),
            _real(loss.average_class_size),
        ),
        Fact("Generalization height", _count(loss.height)),
        Fact("Precision (Sweeney)", f"{loss.precision:.3g}"),
    ]
    if loss.suppressed:
        facts.append(Fact("Records suppressed", _count(loss.suppressed)))
    return tuple(facts)


def advice_view(report: AuditReport, options: Options) -> AdviceView:
    """The information loss and suppression advice of ``report``, ready to print."""
    advice = report.suppression
    listing = None
    if advice is not None and advice.classes:
        listing = _listing(
            advice.suppressed,
            report,
            options,
            measures=[("size", "records", _count)],
            caption="Classes to suppress, smallest first",
            name="classes to suppress",
        )
    return AdviceView(
        generalization=_generalization(report),
        utility=_loss_facts(report, after=False),
        sentence=suppression_sentence(report),
        measures=()
        if advice is None
        else tuple(
            MeasureRow(m.measure, _count(m.classes), _count(m.records)) for m in advice.measures
        ),
        after=_loss_facts(report, after=True) if advice is not None else (),
        listing=listing,
    )
