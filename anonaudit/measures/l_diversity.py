"""l-diversity: distinct, entropy and recursive (c,l).

Machanavajjhala, A., Kifer, D., Gehrke, J., Venkitasubramaniam, M. (2007).
"l-Diversity: Privacy Beyond k-Anonymity". ACM TKDD 1(1), Article 3.

For an equivalence class with SA counts sorted descending ``r_1 >= r_2 >= ... >= r_m``:

* distinct l-diversity: the class holds at least l distinct values;
* entropy l-diversity (Definition 4.1): ``-sum_s p(s) ln p(s) >= ln l``; the table's
  entropy l is ``exp(min over classes of the entropy)``, a real number (a balanced
  three-value class has entropy l 3.0, not 2);
* recursive (c,l)-diversity (Definition 4.2): ``r_1 < c (r_l + r_{l+1} + ... + r_m)``.
  For a given l we report ``c* = max over classes of r_1 / (r_l + ... + r_m)``
  (infinite when a class has fewer than l values); the table is (c,l)-diverse exactly
  when ``c > c*``.

A null SA value counts as one value of its own; the result reports how many records
have it.

Its declaration as a measure of the audit (:data:`MEASURE`) closes the
module; :mod:`anonaudit.report.sections.l_diversity` shows it.
"""

from __future__ import annotations

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

__all__ = [
    "MEASURE",
    "LDiversity",
    "LDiversityResult",
    "class_entropy",
    "l_diversity",
    "recursive_c",
]


@dataclass(frozen=True)
class LDiversityResult:
    """Result of :func:`l_diversity` for one sensitive attribute.

    Attributes
    ----------
    sensitive : str
        The SA.
    distinct : int
        Smallest number of distinct SA values in a class.
    entropy : float
        Entropy l: ``exp`` of the smallest class entropy (natural log).
    recursive_l : int
        The l at which ``recursive_c`` was computed.
    recursive_c : float
        ``c*``: the table is recursive (c, recursive_l)-diverse for every ``c > c*``.
    nulls : int
        Records whose SA is null (counted as a value of its own).
    l, entropy_l, c : float or None
        Thresholds asked for (distinct l, entropy l, recursive c).
    violating : pandas.DataFrame
        Classes that fail any given threshold, with ``distinct``, ``entropy_l`` and
        ``recursive_c``; fewest distinct values first.
    failing : FailingClasses
        The same classes as a mask over the classes, listed on demand.
    violating_records : int
        Records in those classes.
    """

    sensitive: str
    distinct: int
    entropy: float
    recursive_l: int
    recursive_c: float
    nulls: int
    l: int | None
    entropy_l: float | None
    c: float | None
    failing: FailingClasses = field(repr=False)
    violating_records: int

    @property
    def violating(self) -> pd.DataFrame:
        """The failing classes listed (built on first use; see :attr:`failing`)."""
        return self.failing.frame

    @property
    def verdicts(self) -> dict[str, bool]:
        """Whether each given threshold is met, by name: ``l``, ``entropy_l``, ``c``."""
        verdicts = {}
        if self.l is not None:
            verdicts["l"] = self.distinct >= self.l
        if self.entropy_l is not None:
            verdicts["entropy_l"] = self.entropy >= self.entropy_l * (1 - TOLERANCE)
        if self.c is not None:
            verdicts["c"] = self.c > self.recursive_c
        return verdicts

    @property
    def passed(self) -> bool | None:
        """Whether every given threshold is met; ``None`` without thresholds."""
        verdicts = self.verdicts
        return None if not verdicts else all(verdicts.values())


def class_entropy(counts: SensitiveCounts) -> NDArray[Any]:
    """Shannon entropy (natural log) of each class's SA distribution."""
    terms = counts.posterior()  # in place: counts * log(posterior)
    np.log(terms, out=terms)
    terms *= counts.counts
    return np.asarray(-counts.per_class_sum(terms) / counts.class_sizes)


def recursive_c(counts: SensitiveCounts, l: int) -> NDArray[Any]:
    """Per class ``r_1 / (r_l + ... + r_m)`` with counts sorted descending.

    Infinite for a class with fewer than ``l`` distinct values (Machanavajjhala et al.
    2007, Definition 4.2).
    """
    r1 = counts.per_class_max(counts.counts.astype(float))
    if l <= 2:  # the head r_1 + ... + r_{l-1} is empty or r_1: no sort needed
        head = r1 if l == 2 else np.zeros_like(r1)
    else:
        order = np.lexsort((-counts.counts, counts.class_ids))
        sorted_ids = counts.class_ids[order]
        rank = np.arange(len(order)) - np.searchsorted(sorted_ids, sorted_ids, side="left")
        head = np.bincount(
            sorted_ids,
            weights=np.where(rank < l - 1, counts.counts[order], 0),
            minlength=counts.n_classes,
        )
    tail = counts.class_sizes - head
    c = np.full(len(tail), np.inf)
    np.divide(r1, tail, out=c, where=tail > 0)
    return c


def l_diversity(
    table: ClassTable,
    sensitive: str,
    *,
    l: int | None = None,
    entropy_l: float | None = None,
    c: float | None = None,
    recursive_l: int | None = None,
) -> LDiversityResult:
    """Measure distinct, entropy and recursive (c,l)-diversity of one SA.

    Parameters
    ----------
    table : ClassTable
        The class table.
    sensitive : str
        The SA to measure.
    l : int, optional
        Required distinct values per class.
    entropy_l : float, optional
        Required entropy l (>= 1).
    c : float, optional
        Recursive (c,l): required ``c`` (> 0); needs ``recursive_l`` or ``l``.
    recursive_l : int, optional
        The l of recursive (c,l)-diversity; defaults to ``l``, else 2.

    Returns
    -------
    LDiversityResult

    Examples
    --------
    A class with SA counts 3, 2, 1 (Machanavajjhala et al. 2007, Def. 4.2): it is
    recursive (c, 2)-diverse for c > 3 / (2 + 1) = 1.

    >>> import pandas as pd
    >>> from anonaudit.classtable import ClassTable
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"q": ["a"] * 3, "s": ["x", "y", "z"], "count": [3, 2, 1]}),
    ...     quasi_identifiers=["q"], sensitive=["s"])
    >>> r = l_diversity(t, "s", recursive_l=2)
    >>> r.distinct, round(r.entropy, 4), r.recursive_c
    (3, 2.7495, 1.0)
    """
    for name, value, low in (("l", l, 1), ("recursive l", recursive_l, 1)):
        if value is not None and (not isinstance(value, (int, np.integer)) or value < low):
            raise ParameterError(f"{name} must be a whole number >= {low} (got {value!r})")
    if entropy_l is not None and not entropy_l >= 1:
        raise ParameterError(f"entropy l must be a number >= 1 (got {entropy_l!r})")
    if c is not None and not c > 0:
        raise ParameterError(f"recursive c must be a number > 0 (got {c!r})")
    at_l = recursive_l if recursive_l is not None else (l if l is not None else 2)
    counts = table.sensitive_counts(sensitive)
    # Class by class: known once per distribution, and taken by the subsets the
    # suppression advice re-audits (SensitiveCounts.class_local).
    distinct = counts.class_local("distinct", counts.distinct_per_class)
    entropy = counts.class_local("entropy", lambda: class_entropy(counts))
    per_class_c = counts.class_local(("recursive_c", at_l), lambda: recursive_c(counts, at_l))
    mask = np.zeros(len(distinct), dtype=bool)
    if l is not None:
        mask |= distinct < l
    if entropy_l is not None:
        mask |= entropy < math.log(entropy_l) - TOLERANCE
    if c is not None:
        mask |= ~(per_class_c < c)
    failing = FailingClasses(
        table.classes,
        mask,
        Listed(
            ("distinct", "entropy_l", "recursive_c"),
            lambda: {
                "distinct": distinct,
                "entropy_l": np.exp(entropy),
                "recursive_c": per_class_c,
            },
        ),
        worst_first="distinct",
        descending=False,
    )
    return LDiversityResult(
        sensitive=sensitive,
        distinct=int(distinct.min()),
        entropy=float(np.exp(entropy.min())),
        recursive_l=int(at_l),
        recursive_c=float(per_class_c.max()),
        nulls=counts.nulls,
        l=None if l is None else int(l),
        entropy_l=None if entropy_l is None else float(entropy_l),
        c=None if c is None else float(c),
        failing=failing,
        violating_records=records_in(table.classes.sizes, mask),
    )


class LDiversity(ClassMeasure[LDiversityResult]):
    """l-diversity of each SA (:func:`l_diversity`)."""

    key = "l_diversity"
    judged = Judged.L_DIVERSITY
    per_sensitive = True
    position = 20
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"inference": ("l-diversity",)}
    thresholds = ("l", "entropy_l", "recursive")

    def compute(self, context: Context, sensitive: str | None) -> LDiversityResult:
        assert sensitive is not None
        policy = context.policy
        c, recursive_l = policy.recursive or (None, None)
        return l_diversity(
            context.table,
            sensitive,
            l=policy.l,
            entropy_l=policy.entropy_l,
            c=c,
            recursive_l=None if recursive_l is None else int(recursive_l),
        )


MEASURE = LDiversity()
