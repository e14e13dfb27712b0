"""Earth mover's distance between each class's SA distribution and the table's.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007, Section 4 ("How to calculate the EMD").

Each function takes the per-class distributions as a sparse class-by-value matrix
(:class:`Distributions`) and returns one distance per class, in a time linear (up to a
log factor) in the number of non-zero entries, never a dense classes-by-values matrix:

* :func:`equal_distance`: every two values at distance 1; EMD = ``1/2 sum |p_i - q_i|``.
* :func:`cdf_distance`: values on a line. With unit gaps and normalization ``m - 1``
  this is the paper's *ordered distance* ``1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|``;
  with the values' own gaps and normalization by their range it is the Wasserstein-1
  distance of the actual values (*numeric distance*).
* :func:`hierarchical_distance`: the ground distance of two leaves is the height of
  their lowest common ancestor divided by the tree height H; EMD is the sum over
  internal nodes N of ``height(N)/H * min(pos_extra(N), neg_extra(N))``.
* :func:`pot_distance`: any ground-distance matrix, solved exactly as a transport
  problem with POT (``ot.emd2``), one class at a time.

All distances lie in [0, 1] when the ground distance does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anonaudit.classtable import SensitiveCounts

__all__ = [
    "Distributions",
    "cdf_distance",
    "equal_distance",
    "hierarchical_distance",
    "pot_distance",
]


@dataclass(frozen=True)
class Distributions:
    """Per-class counts over ``m`` values, as sparse entries.

    Attributes
    ----------
    class_ids, codes, counts : numpy.ndarray
        One entry per (class, value) with a positive count, in any order; the
        distances that need them sorted by class then code call :meth:`sorted`.
    n_classes : int
        Number of classes (a class may have no entry when all its values were left out).
    m : int
        Number of values.
    """

    class_ids: NDArray[Any]
    codes: NDArray[Any]
    counts: NDArray[Any]
    n_classes: int
    m: int

    @classmethod
    def from_sensitive(cls, counts: SensitiveCounts, position: NDArray[Any]) -> Distributions:
        """Re-code ``counts`` so value ``v`` gets code ``position[v]``; -1 leaves it out.

        The entries' arrays are ``counts``'s own (not copied) when every value is kept,
        and their codes too when no value is re-coded.
        """
        m = int(position.max()) + 1 if len(position) else 0
        if bool(np.all(position >= 0)):  # every entry kept
            identity = position.dtype == counts.codes.dtype and bool(
                np.array_equal(position, np.arange(len(position)))
            )
            codes = counts.codes if identity else position[counts.codes]
            return cls(counts.class_ids, codes, counts.counts, counts.n_classes, m)
        new_codes = position[counts.codes]
        keep = new_codes >= 0
        return cls(
            counts.class_ids[keep], new_codes[keep], counts.counts[keep], counts.n_classes, m
        )

    def sorted(self) -> Distributions:
        """The same entries sorted by class, then by code."""
        order = np.lexsort((self.codes, self.class_ids))
        return Distributions(
            self.class_ids[order], self.codes[order], self.counts[order], self.n_classes, self.m
        )

    @property
    def sizes(self) -> NDArray[Any]:
        """Records per class among the kept values."""
        return np.bincount(self.class_ids, weights=self.counts, minlength=self.n_classes)

    @property
    def q(self) -> NDArray[Any]:
        """The whole table's distribution over the ``m`` values."""
        totals = np.bincount(self.codes, weights=self.counts, minlength=self.m)
        return np.asarray(totals / totals.sum())

    def p(self) -> NDArray[Any]:
        """Each entry's share of its class."""
        return np.asarray(self.counts / self.sizes[self.class_ids])

    def per_class_sum(self, weights: NDArray[Any]) -> NDArray[Any]:
        """Sum ``weights`` (one per entry) within each class."""
        return np.bincount(self.class_ids, weights=weights, minlength=self.n_classes)


def equal_distance(d: Distributions) -> NDArray[Any]:
    """EMD under the equal ground distance: ``1/2 sum_i |p_i - q_i|`` (Li et al. 2007).

    Values absent from a class contribute ``q_i``, so only the entries present are
    visited: ``1/2 (sum_present |p_i - q_i| + 1 - sum_present q_i)``.
    """
    sizes = d.sizes  # once: d.p() would sum the classes again
    q = d.q[d.codes]
    p = d.counts / sizes[d.class_ids]
    distance = 0.5 * (d.per_class_sum(np.abs(p - q)) + 1.0 - d.per_class_sum(q))
    # Rounding can leave -1e-16 where P = Q; the EMD lies in [0, 1].
    return np.where(sizes > 0, np.clip(distance, 0.0, 1.0), 0.0)


def cdf_distance(d: Distributions, positions: NDArray[Any]) -> NDArray[Any]:
    """EMD between distributions on a line: ``sum_i |P(i) - Q(i)| gap_i / range``.

    Parameters
    ----------
    d : Distributions
        Codes must follow the order of ``positions``.
    positions : numpy.ndarray
        Strictly increasing coordinates of the m values. ``arange(m)`` gives the
        ordered distance of Li et al. (2007); the values themselves give the
        range-normalized Wasserstein-1 (numeric) distance.

    Notes
    -----
    Between two consecutive values present in a class, the class CDF is a constant
    ``a`` while the table CDF ``Q`` rises, so ``sum |a - Q(i)| gap_i`` over that run is
    read off prefix sums of ``gap`` and ``Q * gap`` split where ``Q`` crosses ``a``.
    """
    m = len(positions)
    if m < 2 or positions[-1] == positions[0]:
        return np.zeros(d.n_classes)
    d = d.sorted()
    gaps = np.diff(positions).astype(float)
    table_cdf = np.cumsum(d.q)[:-1]
    prefix_gap = np.r_[0.0, np.cumsum(gaps)]
    prefix_cdf_gap = np.r_[0.0, np.cumsum(table_cdf * gaps)]

    sizes = d.sizes
    running = np.cumsum(d.counts)
    class_start = np.r_[0, running][np.searchsorted(d.class_ids, d.class_ids, side="left")]
    level = (running - class_start) / sizes[d.class_ids]
    last = np.r_[d.class_ids[1:] != d.class_ids[:-1], True]
    lo = d.codes
    hi = np.where(last, m - 1, np.r_[d.codes[1:], 0])
    split = np.clip(np.searchsorted(table_cdf, level, side="right"), lo, hi)
    runs = (
        level * (prefix_gap[split] - prefix_gap[lo])
        - (prefix_cdf_gap[split] - prefix_cdf_gap[lo])
        + (prefix_cdf_gap[hi] - prefix_cdf_gap[split])
        - level * (prefix_gap[hi] - prefix_gap[split])
    )
    first = np.r_[True, d.class_ids[1:] != d.class_ids[:-1]]
    before_first = np.where(first, prefix_cdf_gap[d.codes], 0.0)
    total = d.per_class_sum(runs + before_first)
    distance = np.clip(total / (positions[-1] - positions[0]), 0.0, 1.0)  # rounding at P = Q
    return np.where(sizes > 0, distance, 0.0)


def hierarchical_distance(d: Distributions, ancestors: NDArray[Any]) -> NDArray[Any]:
    """EMD under the hierarchical ground distance (Li et al. 2007, Section 4).

    Parameters
    ----------
    d : Distributions
        The per-class distributions; code ``v`` is row ``v`` of ``ancestors``.
    ancestors : numpy.ndarray
        ``(m, H + 1)`` node ids: column j is each value's ancestor at height j
        (column 0 the leaf itself), as from :meth:`anonaudit.Hierarchy.ancestors`.

    Notes
    -----
    ``extra(N) = P(N) - Q(N)`` is the class's surplus mass under node N. A child with no
    class mass has a negative extra, so ``pos_extra(N)`` only needs the children the
    class occupies, and ``neg_extra(N) = pos_extra(N) - extra(N)``. Nodes the class does
    not reach cost nothing, so the work is ``O(entries * H)``.
    """
    height = ancestors.shape[1] - 1
    sizes = d.sizes
    if height == 0:
        return np.zeros(d.n_classes)
    totals = d.q
    class_ids, nodes, mass = d.class_ids, ancestors[d.codes, 0], d.p()
    node_q = totals
    cost = np.zeros(d.n_classes)
    for j in range(1, height + 1):
        parent_of = np.zeros(int(ancestors[:, j - 1].max()) + 1, dtype=np.int64)
        parent_of[ancestors[:, j - 1]] = ancestors[:, j]
        parent_q = np.zeros(int(ancestors[:, j].max()) + 1)
        np.add.at(parent_q, parent_of, node_q)
        extra = mass - node_q[nodes]
        width = len(parent_q)
        key = class_ids * width + parent_of[nodes]
        group, uniques = pd.factorize(key)
        positive = np.bincount(group, weights=np.maximum(extra, 0.0), minlength=len(uniques))
        parent_mass = np.bincount(group, weights=mass, minlength=len(uniques))
        parent_nodes = uniques % width
        parent_classes = uniques // width
        parent_extra = parent_mass - parent_q[parent_nodes]
        node_cost = np.minimum(positive, positive - parent_extra) * (j / height)
        cost += np.bincount(parent_classes, weights=node_cost, minlength=d.n_classes)
        class_ids, nodes, mass, node_q = parent_classes, parent_nodes, parent_mass, parent_q
    return np.where(sizes > 0, np.maximum(cost, 0.0), 0.0)


def pot_distance(d: Distributions, ground: NDArray[Any]) -> NDArray[Any]:
    """EMD under an arbitrary ground-distance matrix, solved exactly with POT.

    ``ot.emd2(p, q, ground)`` for each class (Flamary et al., POT: Python Optimal
    Transport, JMLR 2021). Linear programs, one per class: slower than the closed forms
    above, which the tests check against this function.
    """
    import ot

    d = d.sorted()
    q = d.q
    sizes = d.sizes
    result = np.zeros(d.n_classes)
    bounds = np.searchsorted(d.class_ids, np.arange(d.n_classes + 1))
    for cls in np.flatnonzero(sizes > 0):
        p = np.zeros(d.m)
        lo, hi = bounds[cls], bounds[cls + 1]
        p[d.codes[lo:hi]] = d.counts[lo:hi] / sizes[cls]
        result[cls] = max(float(ot.emd2(p, q, ground)), 0.0)
    return result
