"""The views of the "Information loss and how to pass" section, and its sentences.

:func:`advice_view` lays out the report's information loss
(:class:`~anonaudit.measures.utility.InformationLoss`), the generalization the data was
audited under, and the suppression advice
(:class:`~anonaudit.advice.suppression.SuppressionAdvice`) in plain words: "suppressing
N records (x%) in M classes would reach k = 5". :func:`suppression_sentence` is the same
sentence for the command line's summary. :func:`lattice_view` lays out the lattice
search (:class:`~anonaudit.advice.lattice.Advice`) of the "Transformations that pass"
section. Nothing here computes: the advice was checked by an audit already (its
``passed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anonaudit.report.kit import (
    Fact,
    Listing,
    Options,
    _count,
    _listing,
    _plural,
    _share,
    join_names,
    none_as_null,
    real,
)

if TYPE_CHECKING:
    from anonaudit.advice.lattice import Advice, Blocker, Transformation
    from anonaudit.hierarchy import Hierarchy
    from anonaudit.report.reported import Reported
    from anonaudit.settings.policy import Policy

__all__ = [
    "MOST_TO_SUPPRESS",
    "AdviceView",
    "LatticeView",
    "MeasureRow",
    "TransformationRow",
    "advice_view",
    "lattice_view",
    "policy_text",
    "suppression_sentence",
]

#: Suppression advice withholding more than this share of the records points to
#: generalization instead: a release missing a fifth of its records is biased by what
#: was withheld (the small classes are the unusual records).
MOST_TO_SUPPRESS = 0.2

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


def suppression_sentence(report: Reported) -> str | None:
    """The suppression advice in one sentence, or ``None`` when there is none."""
    advice = report.suppression
    if advice is None:
        return None
    amount = (
        f"{_plural(advice.records, 'record')} ({_share(advice.fraction)}) in "
        f"{_plural(advice.classes, 'class')}"
    )
    goals = [policy_text(report.policy)] if report.policy.active() else []
    if report.linkage is not None and report.linkage.k_map.threshold is not None:
        goals.append(f"k-map = {report.linkage.k_map.threshold}")
    goal = " and ".join(goals)
    if advice.passed and advice.fraction > MOST_TO_SUPPRESS:
        return (
            f"Suppressing {amount} would reach {goal}, but that withholds more than "
            f"{_share(MOST_TO_SUPPRESS)} of the data: generalize the quasi-identifiers "
            "instead (anonaudit advise finds the least generalization that passes)."
        )
    if advice.passed:
        return f"Suppressing {amount} would reach {goal}."
    if advice.records == advice.rows:
        return f"Suppression alone cannot reach {goal}: every record would have to go."
    return (
        f"Suppression alone cannot reach {goal}: after suppressing {amount} the rest still "
        "fails; generalize the quasi-identifiers first."
    )


def _generalization(report: Reported) -> str:
    g = report.generalization
    if g is None or not g.height():
        return "The quasi-identifiers were audited as they are (no generalization)."
    levels = ", ".join(
        f"{qi} to level {level} of {g.hierarchies[qi].height} ({g.hierarchies[qi].name})"
        for qi, level in g.levels.items()
        if level
    )
    return f"The data was audited as it would be after generalizing {levels}."


def _loss_facts(report: Reported, *, after: bool) -> tuple[Fact, ...]:
    loss = report.suppression.utility if after and report.suppression else report.utility
    if loss is None:
        return ()
    facts = [
        Fact("Discernibility (DM, a suppressed record counts n)", real(loss.discernibility)),
        Fact(
            f"Records per class divided by k (C_AVG, k = {loss.k})"
            if loss.k is not None
            else "Records per class (C_AVG)",
            real(loss.average_class_size),
        ),
        Fact("Generalization height", _count(loss.height)),
        Fact("Precision (Sweeney)", f"{loss.precision:.3g}"),
    ]
    if loss.suppressed:
        facts.append(Fact("Records suppressed", _count(loss.suppressed)))
    return tuple(facts)


def advice_view(report: Reported, options: Options) -> AdviceView:
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


@dataclass(frozen=True)
class TransformationRow:
    """One transformation of the Pareto front, as printed.

    Attributes
    ----------
    rank : str
        Its place in the list (least DM* first).
    levels : tuple of str
        Per generalizable QI, its level and what an example value becomes.
    suppressed : str
        Records suppressed, and their share.
    discernibility, average_class_size, height, precision, k : str
        Information loss and the smallest class of the transformed data.
    verdicts : str
        The audit's verdicts on the transformed data.
    """

    rank: str
    levels: tuple[str, ...]
    suppressed: str
    discernibility: str
    average_class_size: str
    height: str
    precision: str
    k: str
    verdicts: str


@dataclass(frozen=True)
class LatticeView:
    """The "Transformations that pass" section's content.

    Attributes
    ----------
    search : str
        The lattice and how it was searched, in one sentence.
    seconds : str
        How long the search took (a line of its own: it changes from run to run).
    sentence : str
        The first transformation in plain words, or that none passes and what to try.
    columns : tuple of str
        The generalizable QIs, one column each.
    rows : tuple of TransformationRow
        The listed front; empty when no transformation passes.
    generalize : str or None
        The ``--generalize`` argument that audits the first transformation.
    blocked_by : tuple of Blocker
        The thresholds no transformation can meet, each with its whole-table cause.
    """

    search: str
    seconds: str
    sentence: str
    columns: tuple[str, ...]
    rows: tuple[TransformationRow, ...]
    generalize: str | None
    blocked_by: tuple[Blocker, ...]


def _example(hierarchy: Hierarchy) -> str:
    """The leaf each level of ``hierarchy`` is illustrated with: the middle one."""
    leaves = hierarchy.levels[0]
    return leaves[len(leaves) // 2]


def _recoding(t: Transformation, qi: str, options: Options) -> str | None:
    """``"37 → [30, 40["``: the example leaf of ``qi`` and its value at ``t``'s level."""
    level = t.levels[qi]
    if not level:
        return None
    hierarchy = t.generalization.hierarchies[qi]
    leaf = _example(hierarchy)
    label = hierarchy.levels[level][hierarchy.levels[0].index(leaf)]
    shown = (none_as_null(options.shown.value(v, options.redact)) for v in (leaf, label))
    return " → ".join(shown)


def _level_cell(t: Transformation, qi: str, options: Options) -> str:
    recoding = _recoding(t, qi, options)
    return f"{t.levels[qi]} ({recoding})" if recoding else "0 (as is)"


def _verdict_cell(t: Transformation) -> str:
    verdicts = t.report.verdicts()
    failed = [v.name for v in verdicts if not v.passed]
    if failed:
        return "fails " + join_names(failed)
    return "meets all " + _plural(len(verdicts), "threshold")


def _amount(t: Transformation) -> str:
    total = t.report.rows + t.suppressed
    return f"{_plural(t.suppressed, 'record')} ({_share(t.suppressed / total)})"


def _first_sentence(advice: Advice, options: Options) -> str:
    """The best transformation in plain words, or why there is none."""
    goal = policy_text(advice.policy)
    if not advice.transformations:
        limit = (
            "with no record suppressed"
            if not advice.suppression_limit
            else f"even suppressing up to {_share(advice.suppression_limit)} of the records"
        )
        none = (
            f"No transformation meets {goal}: none of the {_count(advice.nodes)} combinations "
            f"of levels passes, {limit}"
        )
        if advice.blocked_by:
            return (
                f"{none}, and none can: the thresholds below fail even with every record in "
                "one class (every quasi-identifier generalized to one value), because of the "
                "whole table itself. Relax them."
            )
        return (
            f"{none}. Every threshold would hold with every record in one class, so raise "
            "the suppression limit, give hierarchies (reaching *) for more "
            "quasi-identifiers, or relax the policy."
        )
    t = advice.transformations[0]
    parts = [
        f"{qi} to level {level} of {advice.hierarchies[qi]}"
        + ("" if options.redact else f" ({_recoding(t, qi, options)})")
        for qi, level in t.levels.items()
        if level
    ]
    generalizing = "Generalizing " + join_names(parts) if parts else ""
    if t.suppressed and generalizing:
        action = f"{generalizing} and suppressing {_amount(t)}"
    elif t.suppressed:
        action = f"Suppressing {_amount(t)}, without generalizing,"
    else:
        action = f"{generalizing or 'Leaving the data as it is'}, with no record suppressed,"
    return f"{action} meets {goal}."


def answer(report: Reported, options: Options) -> str | None:
    """The answer an advice report leads with: the best passing transformation, what it
    costs and how to apply it (or why none passes); ``None`` without a search."""
    advice = report.advice
    if advice is None:
        return None
    sentence = _first_sentence(advice, options)
    if not advice.transformations:
        return sentence
    t = advice.transformations[0]
    loss = t.information_loss
    return (
        f"{sentence} It costs: precision {loss.precision:.3g} (1 = as is), records per class "
        f"{real(loss.average_class_size)} times k, {_amount(t)} suppressed. Apply it with "
        "anonaudit advise (the same policy) --out FILE, which writes the transformed data "
        "and leaves out every column neither quasi-identifier nor sensitive."
    )


def _search_sentence(advice: Advice) -> str:
    ranges = join_names([f"{qi} (levels 0–{h})" for qi, h in advice.hierarchies.items()])
    limit = (
        "with no record suppressed"
        if not advice.suppression_limit
        else f"suppressing at most {_share(advice.suppression_limit)} of the records"
    )
    pruning = (
        f"{_count(advice.pruned)} judged by monotonicity without evaluating them"
        if advice.monotone
        else "none judged by monotonicity (with suppression, this policy is not monotone)"
    )
    measured = (
        f", {_count(advice.measured)} more measured for the Pareto front" if advice.measured else ""
    )
    if not advice.passing:
        outcome = "None passes."
    else:
        verb = "passes" if advice.passing == 1 else "pass"
        listed = len(advice.transformations)
        outcome = (
            f"{_plural(advice.passing, 'combination')} {verb}; "
            f"{_count(advice.front)} {'is' if advice.front == 1 else 'are'} on the Pareto front"
            + (f", of which the first {listed} are listed" if advice.front > listed else "")
            + "."
        )
    return (
        f"The search covered the {_count(advice.nodes)} combinations of hierarchy levels of "
        f"{ranges}, {limit}: {_count(advice.evaluated)} evaluated, {pruning}{measured}. " + outcome
    )


def lattice_view(advice: Advice, options: Options) -> LatticeView:
    """The lattice search of ``advice`` and its Pareto front, ready to print."""
    columns = tuple(advice.hierarchies)
    rows = tuple(
        TransformationRow(
            rank=str(number),
            levels=tuple(_level_cell(t, qi, options) for qi in columns),
            suppressed=_amount(t),
            discernibility=real(t.information_loss.discernibility),
            average_class_size=real(t.information_loss.average_class_size),
            height=_count(t.height),
            precision=f"{t.information_loss.precision:.3g}",
            k=_count(t.report.k_anonymity.k),
            verdicts=_verdict_cell(t),
        )
        for number, t in enumerate(advice.transformations, start=1)
    )
    first = advice.transformations[0] if advice.transformations else None
    return LatticeView(
        search=_search_sentence(advice),
        seconds=f"The search and the audits of the listed transformations took "
        f"{advice.seconds:.2f} s.",
        sentence=_first_sentence(advice, options),
        columns=columns,
        rows=rows,
        generalize=None
        if first is None or not first.height
        else ",".join(f"{qi}={level}" for qi, level in first.levels.items() if level),
        blocked_by=advice.blocked_by,
    )
