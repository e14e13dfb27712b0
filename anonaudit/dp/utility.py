"""What the noise costs: error of the released counts, and the measures a reader computes.

The expected error comes from the noise distribution alone
(:class:`~anonaudit.dp.mechanisms.NoiseDistribution`), before post-processing; the
observed error compares the released counts with the true ones, after rounding and
clamping at 0 (which biases empty cells upward). A class is *hidden* when it has records
but the release shows none, *fabricated* when the release shows records of a class that
has none (possible only over a public domain).

A reader of the release sees only the released table and computes k, l and t on it as
on any table: :func:`reader_measures` runs the syntactic checks on both tables, showing
how the noise moves them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from anonaudit.classtable import ClassTable
from anonaudit.dp.release import Release
from anonaudit.measures.k_anonymity import k_anonymity
from anonaudit.measures.l_diversity import l_diversity
from anonaudit.measures.t_closeness import TClosenessResult, t_closeness

__all__ = ["Measures", "ReaderMeasures", "Utility", "reader_measures", "utility"]


@dataclass(frozen=True)
class Utility:
    """Error of a release.

    Attributes
    ----------
    cells : int
        Counts released (cells of the domain, observed cells, or (class, value) pairs).
    expected_mean_absolute_error, expected_rmse : float or None
        ``E|Z|`` and ``√Var Z`` of the noise on one count (``None`` for randomized
        response, whose error depends on the counts).
    expected_within : int or None
        Each count is within ±this of the truth with probability ``confidence``.
    confidence : float
        0.95.
    mean_absolute_error, rmse, max_absolute_error : float
        Observed over all released cells, after post-processing.
    bias : float
        Mean of released minus true count (positive: clamping at 0 inflates).
    share_within : float
        Share of cells whose observed error is within ``expected_within`` (NaN-free:
        1.0 for randomized response, which has no such bound).
    classes, classes_released, classes_hidden, classes_fabricated : int
        Equivalence classes with records, with released records, with records but none
        released, and with released records but none in truth.
    records_in_released_classes : int
        Records of the data whose class has released records.
    """

    cells: int
    expected_mean_absolute_error: float | None
    expected_rmse: float | None
    expected_within: int | None
    confidence: float
    mean_absolute_error: float
    rmse: float
    max_absolute_error: int
    bias: float
    share_within: float
    classes: int
    classes_released: int
    classes_hidden: int
    classes_fabricated: int
    records_in_released_classes: int


def utility(result: Release, *, confidence: float = 0.95) -> Utility:
    """Measure the error of ``result`` against the class table it came from."""
    noise = result.noise
    true, released = result.true_counts, result.released_counts
    error = (released - true).astype(float)
    absolute = np.abs(error)
    within = noise.within(confidence) if noise is not None else None
    share = float((absolute <= within).mean()) if within is not None and len(true) else 1.0
    n_classes = int(result.class_ids.max()) + 1 if len(result.class_ids) else 0
    true_size = np.bincount(result.class_ids, weights=true, minlength=n_classes)
    released_size = np.bincount(result.class_ids, weights=released, minlength=n_classes)
    return Utility(
        cells=len(true),
        expected_mean_absolute_error=None if noise is None else noise.mean_absolute_error,
        expected_rmse=None if noise is None else math.sqrt(noise.variance),
        expected_within=within,
        confidence=confidence,
        mean_absolute_error=float(absolute.mean()) if len(true) else 0.0,
        rmse=float(math.sqrt((error**2).mean())) if len(true) else 0.0,
        max_absolute_error=int(absolute.max()) if len(true) else 0,
        bias=float(error.mean()) if len(true) else 0.0,
        share_within=share,
        classes=int((true_size > 0).sum()),
        classes_released=int((released_size > 0).sum()),
        classes_hidden=int(((true_size > 0) & (released_size == 0)).sum()),
        classes_fabricated=int(((true_size == 0) & (released_size > 0)).sum()),
        records_in_released_classes=int(true_size[released_size > 0].sum()),
    )


@dataclass(frozen=True)
class Measures:
    """k, l and t of one table, as the syntactic checks compute them.

    Attributes
    ----------
    k : int
        Smallest class size.
    classes : int
        Equivalence classes.
    distinct_l, entropy_l, t : dict of str to float
        Per SA: smallest number of distinct values in a class, entropy l, and the
        largest EMD between a class and the table.
    distances : dict of str to str
        Per SA, the ground distance of ``t``: the audit's (:func:`reader_measures`),
        else ``equal``.
    """

    k: int
    classes: int
    distinct_l: dict[str, int]
    entropy_l: dict[str, float]
    t: dict[str, float]
    distances: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReaderMeasures:
    """The measures of the original table beside those a reader of the release computes.

    Attributes
    ----------
    original : Measures
        Of the class table the release was made from.
    released : Measures or None
        Of the released table; ``None`` when the release is empty.
    """

    original: Measures
    released: Measures | None


#: t-closeness of every SA of a class table, with the audit's ground distances.
Closeness = Callable[[ClassTable], Mapping[str, TClosenessResult]]


def _measures(table: ClassTable, closeness: Closeness | None) -> Measures:
    ls = {sa: l_diversity(table, sa) for sa in table.sensitive}
    ts = closeness(table) if closeness else {sa: t_closeness(table, sa) for sa in table.sensitive}
    return Measures(
        k=k_anonymity(table).k,
        classes=len(table.classes),
        distinct_l={sa: r.distinct for sa, r in ls.items()},
        entropy_l={sa: r.entropy for sa, r in ls.items()},
        t={sa: r.t for sa, r in ts.items()},
        distances={sa: r.distance for sa, r in ts.items()},
    )


def reader_measures(result: Release, closeness: Closeness | None = None) -> ReaderMeasures:
    """k, l and t before and after the release.

    ``closeness`` measures t-closeness as the audit did (its ground distances, orders,
    hierarchies and matrices), so that the t of the data is the audit's; without it, t
    uses the equal ground distance.
    """
    return ReaderMeasures(
        original=_measures(result.original, closeness),
        released=_measures(result.table, closeness) if result.table.rows else None,
    )
