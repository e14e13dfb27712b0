"""Attribute-disclosure measures related to l-diversity and t-closeness.

For a class E with SA distribution ``p_E`` and the table's distribution ``p``:

* (alpha,k)-anonymity (Wong, Li, Fu, Wang 2006, "(alpha, k)-anonymity: an enhanced
  k-anonymity model for privacy preserving data publishing", KDD): the relative
  frequency of every SA value in every class is at most alpha. We report
  ``alpha = max_E max_s p_E(s)``.
* basic beta-likeness (Cao & Karras 2012, "Publishing Microdata with a Robust Privacy
  Guarantee", PVLDB 5(11), Definition 2): for every value more frequent in the class
  than in the table, ``(p_E(s) - p(s)) / p(s) <= beta``. We report the largest such
  relative gain (0 when no value gains).
* delta-disclosure privacy (Brickell & Shmatikov 2008, "The cost of privacy:
  destruction of data-mining utility in anonymized data publishing", KDD,
  Definition 6): ``|ln(p_E(s) / p(s))| < delta`` for every class and every value of
  the table. We report ``max |ln(p_E(s)/p(s))|``, infinite when a class lacks a value.

Other tools measure delta over the values *present* in a class only: ARX
(``DDisclosurePrivacy``) with ``log2``, a class failing when ``|log2(p_E/p)| >= d``,
and pycanon (``delta_disclosure``) with ``ln``. Where a class holds every value of
the table, our delta equals pycanon's and ``ln(2)`` times ARX's, so ARX's bound ``d``
is our ``delta = ln(2) d`` (same strict comparison); a class lacking a value fails
here at any delta but is judged on its present values there. Both figures are on the
result: ``delta_present`` (pycanon's) and ``delta_arx`` (``delta_present / ln 2``).

Its declaration as a measure of the audit (:data:`MEASURE`) closes the
module; :mod:`anonaudit.report.sections.disclosure` shows it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable, SensitiveCounts
from anonaudit.errors import ParameterError
from anonaudit.measures._classes import TOLERANCE, FailingClasses, Listed, records_in
from anonaudit.measures.base import ClassMeasure, Context
from anonaudit.settings.names import Judged

__all__ = ["MEASURE", "Disclosure", "DisclosureResult", "attribute_disclosure"]


@dataclass(frozen=True)
class DisclosureResult:
    """Result of :func:`attribute_disclosure` for one sensitive attribute.

    Attributes
    ----------
    sensitive : str
        The SA.
    alpha : float
        Largest share of one SA value within a class.
    beta : float
        Largest relative gain ``(p_E(s) - p(s)) / p(s)`` of a value in a class.
    delta : float
        Largest ``|ln(p_E(s) / p(s))|``; ``inf`` when some class lacks a value.
    max_alpha, max_beta, max_delta : float or None
        The thresholds asked for.
    violating : pandas.DataFrame
        Classes that fail a given threshold, with ``alpha``, ``beta``, ``delta``;
        largest alpha first.
    failing : FailingClasses
        The same classes as a mask over the classes, listed on demand.
    violating_records : int
        Records in those classes.
    delta_present : float
        ``max |ln(p_E(s) / p(s))|`` over the values present in each class only, the
        figure pycanon reports; equal to ``delta`` when every class holds every value.
    """

    sensitive: str
    alpha: float
    beta: float
    delta: float
    max_alpha: float | None
    max_beta: float | None
    max_delta: float | None
    failing: FailingClasses = field(repr=False)
    violating_records: int
    delta_present: float

    @property
    def delta_arx(self) -> float:
        """ARX's delta: ``max |log2(p_E(s) / p(s))|`` over the values present in each
        class (ARX ``DDisclosurePrivacy``), ``delta_present / ln 2``; ARX's bound ``d``
        holds when this is below ``d``."""
        return self.delta_present / math.log(2)

    @property
    def violating(self) -> pd.DataFrame:
        """The failing classes listed (built on first use; see :attr:`failing`)."""
        return self.failing.frame

    @property
    def verdicts(self) -> dict[str, bool]:
        """Whether each given threshold is met, by name: ``alpha``, ``beta``, ``delta``."""
        verdicts = {}
        if self.max_alpha is not None:
            verdicts["alpha"] = self.alpha <= self.max_alpha + TOLERANCE
        if self.max_beta is not None:
            verdicts["beta"] = self.beta <= self.max_beta + TOLERANCE
        if self.max_delta is not None:
            verdicts["delta"] = self.delta < self.max_delta
        return verdicts

    @property
    def passed(self) -> bool | None:
        """Whether every given threshold is met; ``None`` without thresholds."""
        verdicts = self.verdicts
        return None if not verdicts else all(verdicts.values())


def attribute_disclosure(
    table: ClassTable,
    sensitive: str,
    *,
    alpha: float | None = None,
    beta: float | None = None,
    delta: float | None = None,
) -> DisclosureResult:
    """Measure (alpha,k)-anonymity's alpha, basic beta-likeness and delta-disclosure.

    Parameters
    ----------
    table : ClassTable
        The class table.
    sensitive : str
        The SA.
    alpha : float, optional
        Largest within-class share allowed, in (0, 1].
    beta : float, optional
        Largest relative gain allowed (> 0).
    delta : float, optional
        Bound on ``|ln(p_E(s)/p(s))|`` (> 0; strict, as in Brickell & Shmatikov).

    Returns
    -------
    DisclosureResult

    Examples
    --------
    Table share of "x" is 1/2; a class that is all "x" has alpha 1, beta
    (1 - 1/2)/(1/2) = 1, and lacks "y", so delta is infinite.

    >>> import pandas as pd
    >>> from anonaudit.classtable import ClassTable
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"q": ["a", "b", "b"], "s": ["x", "x", "y"], "count": [2, 0, 2]}),
    ...     quasi_identifiers=["q"], sensitive=["s"])
    >>> r = attribute_disclosure(t, "s")
    >>> r.alpha, r.beta, r.delta
    (1.0, 1.0, inf)
    """
    if alpha is not None and not 0 < alpha <= 1:
        raise ParameterError(f"alpha must lie in (0, 1] (got {alpha!r})")
    for name, value in (("beta", beta), ("delta", delta)):
        if value is not None and not value > 0:
            raise ParameterError(f"{name} must be a number > 0 (got {value!r})")
    counts = table.sensitive_counts(sensitive)
    per_class, largest_present = _per_class(counts)
    mask = np.zeros(counts.n_classes, dtype=bool)
    if alpha is not None:
        mask |= per_class["alpha"] > alpha + TOLERANCE
    if beta is not None:
        mask |= per_class["beta"] > beta + TOLERANCE
    if delta is not None:
        mask |= ~(per_class["delta"] < delta)
    return DisclosureResult(
        sensitive=sensitive,
        alpha=float(per_class["alpha"].max()),
        beta=float(per_class["beta"].max()),
        delta=float(per_class["delta"].max()),
        max_alpha=alpha,
        max_beta=beta,
        max_delta=delta,
        failing=FailingClasses(
            table.classes,
            mask,
            Listed(("alpha", "beta", "delta"), lambda: _per_class(counts)[0]),
            worst_first="alpha",
            descending=True,
        ),
        violating_records=records_in(table.classes.sizes, mask),
        delta_present=largest_present,
    )


def _per_class(counts: SensitiveCounts) -> tuple[dict[str, NDArray[Any]], float]:
    """Per class of ``counts``: ``alpha`` (its largest share), ``beta`` (its largest
    relative gain over the table's share, 0 at least) and ``delta`` (the largest
    ``|ln(p_E(s)/p(s))|`` over every value: infinite where a value is missing); and the
    largest of that over the values present, in any class. Computed again for a listing,
    so that a result holds none of these arrays."""
    share = counts.posterior()
    # alpha and the distinct values are the class's own (SensitiveCounts.class_local);
    # beta and delta depend on the table's distribution too.
    per_alpha = counts.class_local("alpha", functools.partial(counts.per_class_max, share))
    prior = counts.prior()[counts.codes]
    # Three arrays of entries at most: each is consumed by the reduction that reads it
    # last (on a QI unique per record it becomes the per-class array itself).
    gain = share - prior
    gain /= prior
    per_beta = counts.per_class_max(np.maximum(gain, 0.0, out=gain), consume=True)
    del gain
    # over the values present (pycanon's and, in log2, ARX's), then over every value
    ratio = np.divide(share, prior, out=share)
    del share, prior
    present = counts.per_class_max(np.abs(np.log(ratio, out=ratio), out=ratio), consume=True)
    del ratio
    largest_present = float(present.max())
    distinct = counts.class_local("distinct", counts.distinct_per_class)
    present[distinct < len(counts.values)] = np.inf  # in place: delta over every value
    return {"alpha": per_alpha, "beta": per_beta, "delta": present}, largest_present


class Disclosure(ClassMeasure[DisclosureResult]):
    """alpha, beta and delta of each SA (:func:`attribute_disclosure`)."""

    key = "disclosure"
    judged = Judged.DISCLOSURE
    per_sensitive = True
    position = 40
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"inference": ("disclosure",)}
    thresholds = ("alpha", "beta", "delta")

    def compute(self, context: Context, sensitive: str | None) -> DisclosureResult:
        assert sensitive is not None
        policy = context.policy
        return attribute_disclosure(
            context.table, sensitive, alpha=policy.alpha, beta=policy.beta, delta=policy.delta
        )


MEASURE = Disclosure()
