"""What the ground distances share: the per-class distributions their EMD is computed
on, and how a distance leaves out nulls and asks for its input.

Each distance re-codes an SA's class-by-value counts (:class:`~anonaudit.classtable.
SensitiveCounts`) into :class:`Distributions` over the values it places (in their order,
or as leaves of a hierarchy, or as rows of a matrix) and computes the EMD of Li, N.,
Li, T., Venkatasubramanian, S. (2007), "t-Closeness: Privacy Beyond k-Anonymity and
l-Diversity", ICDE 2007, Section 4, from the sparse entries, never from a dense
classes-by-values matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import sum_within_classes
from anonaudit.distances.base import Distance
from anonaudit.errors import ParameterError

if TYPE_CHECKING:
    from anonaudit.classtable import SensitiveCounts

__all__ = [
    "Distributions",
    "Placement",
    "in_any_order",
    "positions",
    "required",
    "without_nulls",
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
    one_each : bool
        Whether entry ``i`` is class ``i``'s only one (as where a QI is unique per
        record): a sum within each class is then the entry itself.
    """

    class_ids: NDArray[Any]
    codes: NDArray[Any]
    counts: NDArray[Any]
    n_classes: int
    m: int
    one_each: bool = False

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
            return cls(counts.class_ids, codes, counts.counts, counts.n_classes, m, counts.one_each)
        new_codes = position[counts.codes]
        keep = new_codes >= 0
        return cls(
            counts.class_ids[keep], new_codes[keep], counts.counts[keep], counts.n_classes, m
        )

    def sorted(self) -> Distributions:
        """The same entries sorted by class, then by code."""
        order = np.lexsort((self.codes, self.class_ids))
        return Distributions(
            self.class_ids[order],
            self.codes[order],
            self.counts[order],
            self.n_classes,
            self.m,
            self.one_each,
        )

    @property
    def sizes(self) -> NDArray[Any]:
        """Records per class among the kept values."""
        return self.per_class_sum(self.counts)

    @property
    def q(self) -> NDArray[Any]:
        """The whole table's distribution over the ``m`` values."""
        totals = np.bincount(self.codes, weights=self.counts, minlength=self.m)
        return np.asarray(totals / totals.sum())

    def p(self) -> NDArray[Any]:
        """Each entry's share of its class."""
        return np.asarray(self.counts / self.sizes[self.class_ids])

    def per_class_sum(self, weights: NDArray[Any]) -> NDArray[Any]:
        """Sum ``weights`` (one per entry) within each class
        (:func:`~anonaudit.classtable.sum_within_classes`)."""
        return sum_within_classes(self.class_ids, weights, self.n_classes, self.one_each)


def positions(values: Sequence[str | None], ranked: Sequence[str]) -> NDArray[Any]:
    """Map each SA code to its place in ``ranked``; -1 for null."""
    place = {value: i for i, value in enumerate(ranked)}
    return np.array([place[v] if v is not None else -1 for v in values], dtype=np.int64)


#: Where a distance places an SA's values (they, in its order) and its EMD of
#: distributions coded by that order.
Placement: TypeAlias = tuple[list[str], Callable[[Distributions], NDArray[Any]]]


def without_nulls(
    counts: SensitiveCounts, distance: Callable[[list[str]], Placement]
) -> tuple[NDArray[Any], int]:
    """The EMD of a distance under which null has no place: the records with a null SA
    are left out of both distributions, and counted.

    Parameters
    ----------
    counts : SensitiveCounts
        The SA's records per class and value.
    distance : callable
        Given the SA's values other than null, they in the distance's order and the EMD
        of distributions coded by that order.

    Returns
    -------
    per_class : numpy.ndarray
        Each class's EMD (0 for all when every value is null).
    nulls_excluded : int
        The records left out.
    """
    values = [v for v in counts.values if v is not None]
    if not values:
        return np.zeros(counts.n_classes), counts.nulls
    ranked, emd = distance(values)
    return emd(Distributions.from_sensitive(counts, positions(counts.values, ranked))), counts.nulls


def in_any_order(
    counts: SensitiveCounts, emd: Callable[[Distributions, list[str]], NDArray[Any]]
) -> tuple[NDArray[Any], int]:
    """:func:`without_nulls` for a distance that takes the values in any order:
    ``emd(d, values)`` with ``d`` coded by ``values``."""
    return without_nulls(counts, lambda values: (values, lambda d: emd(d, values)))


def required(
    distance: type[Distance], sensitive: str, inputs: Mapping[str, Any], needs: str, flag: str
) -> Any:
    """The input of ``sensitive`` that ``distance`` needs (its
    :attr:`~anonaudit.distances.base.Distance.implied_by`).

    Raises
    ------
    ParameterError
        It is not among ``inputs``: the message says it ``needs`` it, given with ``flag``.
    """
    keyword = distance.implied_by
    if keyword is None or keyword not in inputs:
        raise ParameterError(
            f"{distance.name} distance for {sensitive!r} needs {needs} ({flag} {sensitive}=FILE)"
        )
    return inputs[keyword]
