"""Suppression advice: which equivalence classes to withhold so the rest passes the policy.

Record suppression (Samarati & Sweeney 1998; Sweeney 2002, "Achieving k-anonymity
privacy protection using generalization and suppression", IJUFKS 10(5)) withholds whole
records; ARX suppresses every record of a class that fails a privacy model, which is
what this advice does, computed on the class table alone:

* **k-anonymity**: the classes smaller than k;
* **l-diversity**, **(alpha, k), beta-likeness, delta-disclosure**: the classes failing
  them (each class's verdict depends on the class alone for l-diversity and alpha);
* **t-closeness** (and beta, delta): a class is compared with the SA distribution of the
  *whole table*, which changes when classes are withheld. ARX keeps that distribution
  fixed at the input's; anonaudit instead iterates to a fixed point: withhold the
  failing classes, audit what is left (its own distribution, as any reader of the
  release would compute it), withhold the classes that fail now, and so on until the
  rest passes or nothing is left. Each round removes at least one class, so it ends.
* **prosecutor risk** bound ``max_risk``: the classes whose records' risk ``1 / f`` is
  above it.

The advice is checked, not assumed: :attr:`SuppressionAdvice.passed` is the verdict of
a real audit of the table without the suppressed classes. The share of the data is the
suppressed records over the records audited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.classtable import Classes, ClassTable
from anonaudit.measures import in_order
from anonaudit.measures._classes import FailingClasses, records_in
from anonaudit.measures.utility import InformationLoss, information_loss
from anonaudit.settings.names import Judged, Verdict

if TYPE_CHECKING:
    from anonaudit.advice.audit import Audit
    from anonaudit.measures import Analysis, Measure

__all__ = ["MeasureSuppression", "SuppressionAdvice", "suppression_advice"]


@dataclass(frozen=True)
class MeasureSuppression:
    """The classes that fail one measure of the audited table.

    Attributes
    ----------
    measure : str
        The verdict's name, as in :meth:`Audit.verdicts` (``"k-anonymity"``,
        ``"t-closeness of disease"``, ...).
    classes : int
        Classes failing it.
    records : int
        Records in them: suppressing them reaches this measure alone, except for
        t-closeness, beta and delta, whose table distribution moves (see the module
        docstring).
    """

    measure: str
    classes: int
    records: int


@dataclass(frozen=True)
class SuppressionAdvice:
    """What to suppress so the rest of the table passes the policy.

    Attributes
    ----------
    measures : tuple of MeasureSuppression
        Per failed measure of the audited table, the classes failing it.
    classes : int
        Classes to suppress in all (every round of the fixed point).
    records : int
        Records in them.
    rows : int
        Records audited.
    rounds : int
        Audits of the shrinking table it took (1 unless t-closeness, beta or delta
        moved with the table distribution).
    passed : bool
        Whether the audit of the table without those classes passes the policy (False
        when suppression alone cannot pass without withholding everything).
    failing : FailingClasses
        The classes to suppress, as a mask over the audited table's classes;
        ``suppressed`` lists them (QI values and ``size``, smallest first).
    keys : pyarrow.Table
        Their QI values (one row per class), to mark the records of a transformed table;
        filtered from the classes' when read (a QI unique per record suppresses every
        class: held, they were a second copy of the table's keys).
    utility : InformationLoss or None
        Information loss of the release without them (None when nothing is left).
    remaining : ClassTable
        The class table without them.
    """

    measures: tuple[MeasureSuppression, ...]
    classes: int
    records: int
    rows: int
    rounds: int
    passed: bool
    failing: FailingClasses = field(repr=False)
    utility: InformationLoss | None
    remaining: ClassTable = field(repr=False)

    @property
    def keys(self) -> pa.Table:
        """The suppressed classes' QI values (see the class's attributes)."""
        return self.failing.classes.keys.filter(pa.array(self.failing.mask))

    @property
    def suppressed(self) -> pd.DataFrame:
        """The classes to suppress listed, smallest first (built on first use)."""
        return self.failing.frame

    @property
    def fraction(self) -> float:
        """Suppressed records as a share of the records audited."""
        return self.records / self.rows if self.rows else 0.0


def suppression_advice(report: Audit, reaudit: Callable[[ClassTable], Audit]) -> SuppressionAdvice:
    """The classes to suppress so that ``report``'s table passes its policy.

    Parameters
    ----------
    report : Audit
        The audit of the table (possibly generalized).
    reaudit : callable
        Audits a class table under the same policy and options as ``report`` (the
        audit passes ``functools.partial`` of :func:`anonaudit.audit_table`); called
        once per round on the table without the classes suppressed so far.

    Returns
    -------
    SuppressionAdvice

    Examples
    --------
    >>> import functools, pandas as pd
    >>> from anonaudit import Analyses, AuditOptions, Policy, audit_table
    >>> t = ClassTable.from_frame(pd.DataFrame({"zip": ["a", "b", "c"], "count": [5, 1, 2]}),
    ...                           quasi_identifiers=["zip"])
    >>> options = AuditOptions(policy=Policy(k=2), analyses=Analyses(suppression=False))
    >>> check = functools.partial(audit_table, options=options)
    >>> advice = suppression_advice(check(t), check)
    >>> advice.records, advice.classes, advice.passed, round(advice.fraction, 3)
    (1, 1, True, 0.125)
    """
    return advice_and_audit(report, reaudit)[0]


def advice_and_audit(
    report: Audit, reaudit: Callable[[ClassTable], Audit]
) -> tuple[SuppressionAdvice, Audit | None]:
    """:func:`suppression_advice`, with the last re-audit it made when it passes.

    Returns
    -------
    advice : SuppressionAdvice
    audit : Audit or None
        The audit of ``advice.remaining`` (``report`` itself when nothing was
        suppressed), or None when the advice does not pass or nothing is left: the
        lattice search judges a node by it, never auditing the same table twice.
    """
    table = report.table
    classes = table.classes
    first = _failing(report, classes, None)
    measures = tuple(
        MeasureSuppression(name, int(mask.sum()), records_in(classes.sizes, mask))
        for name, mask in first
    )
    suppress = np.zeros(len(classes), dtype=bool)
    current: Audit | None = report
    remaining, rounds, failing = table, 0, first
    while current is not None and current.passed is False:
        fresh = np.logical_or.reduce([mask for _, mask in failing]) & ~suppress
        if not fresh.any():  # a failure no class accounts for: suppression cannot help
            break
        suppress |= fresh
        rounds += 1
        # The last round's table and audit go before this round's are made: two of
        # each alive at once were the advice's peak on millions of classes.
        current, remaining = None, table
        # The classes kept, whole: their sizes, codes and SA distributions are known,
        # and the keys are filtered only if a report lists them.
        remaining = table.without_classes(suppress)
        current = reaudit(remaining) if remaining.rows else None
        if current is None:
            failing = []
        else:
            failing = _failing(current, classes, _origin(current, remaining, suppress))
    passed = current is not None and current.passed is not False
    records = records_in(classes.sizes, suppress)
    k = report.policy.k
    advice = SuppressionAdvice(
        measures=measures,
        classes=int(suppress.sum()),
        records=records,
        rows=table.rows,
        rounds=rounds,
        passed=passed,
        failing=FailingClasses(classes, suppress, {}, worst_first="size", descending=False),
        utility=information_loss(
            remaining, k=k, suppressed=records, generalization=report.generalization
        )
        if remaining.rows
        else None,
        remaining=remaining,
    )
    return advice, current if passed else None


def _failing(
    report: Audit, classes: Classes, origin: NDArray[Any] | None
) -> list[tuple[str, NDArray[Any]]]:
    """Per failed measure (or analysis) of ``report``, a mask over ``classes`` of the
    classes failing it.

    ``report.table`` holds a subset of ``classes`` (the same QI tuples); ``origin`` is
    each of its classes' id among ``classes`` (``None``: its classes are ``classes``).
    The masks are the checks' own
    (:class:`~anonaudit.measures._classes.FailingClasses`), never their listings.
    """
    judged: list[tuple[Measure[Any] | Analysis[Any], Judged, Any, str | None]] = [
        (measure, measure.judged, report.result(measure, sa), sa)
        for measure, sa in in_order(report.sensitive)
    ]
    judged += [
        (analysis, analysis.judged, found, None)
        for analysis, found in report.analysed()
        if analysis.judged is not None
    ]
    result = []
    for declared, what, measured, sa in judged:
        if declared.passed(measured) is not False:
            continue
        failing = declared.failing(measured, report.table)
        if failing is not None:  # else no class accounts for the failure
            if origin is None:
                mask = np.array(failing, dtype=bool)  # a copy: the check's mask stays its own
            else:  # placed among the classes (origin is one-to-one)
                mask = np.zeros(len(classes), dtype=bool)
                mask[origin] = failing
            result.append((Verdict(what, False, sa).name, mask))
    # An attack across releases fails no class of this table alone: nothing to suppress.
    return result


def _origin(current: Audit, remaining: ClassTable, suppress: NDArray[Any]) -> NDArray[Any]:
    """Each class of ``current.table``'s id among the classes ``suppress`` is over.

    ``current`` is the re-audit of ``remaining``, the table without the classes marked
    in ``suppress`` (:meth:`ClassTable.without_classes`): class ``i`` of ``remaining`` is
    the ``i``-th class kept. A re-audit that audits a table it made of the same rows
    (in the same order) is mapped through the rows.
    """
    kept = np.flatnonzero(~suppress)
    audited = current.table
    if audited is remaining:
        return kept
    origin = np.empty(len(audited.classes), dtype=np.int64)
    origin[audited.classes.index] = kept[remaining.classes.index]
    return origin
