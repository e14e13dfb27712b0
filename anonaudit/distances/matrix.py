"""The matrix ground distance: any distances between values, given as a matrix.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007: the EMD under any ground distance in [0, 1] is
a transport problem, solved here exactly, one class at a time, with POT's network
simplex (Flamary, R. et al. (2021). "POT: Python Optimal Transport". JMLR 22(78)).
Slower than the closed forms of the other distances, which the tests check against it.
Null has no row in a matrix: its records are left out of both distributions, and
counted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from anonaudit.distances._transport import Distributions, in_any_order, required
from anonaudit.distances.base import Distance
from anonaudit.hierarchy import GroundDistance

if TYPE_CHECKING:
    from anonaudit.classtable import SensitiveCounts

__all__ = ["DISTANCE", "MatrixDistance", "pot_distance"]


@dataclass(frozen=True)
class MatrixDistance(Distance):
    """Any ground distance, as a matrix of distances between values (solved exactly by
    POT's transport solver).

    Parameters
    ----------
    matrix : GroundDistance or path
        The distances, or the path of a matrix file.
    """

    matrix: GroundDistance | str | os.PathLike[str]
    name: ClassVar[str] = "matrix"
    definition: ClassVar[str] = (
        "Matrix: any square ground-distance matrix, solved as a transport problem."
    )
    implied_by: ClassVar[str | None] = "ground_distances"

    @classmethod
    def from_inputs(cls, sensitive: str, inputs: Mapping[str, Any]) -> Self:
        """The matrix of ``sensitive`` (``ground_distances``), which it needs."""
        return cls(required(cls, sensitive, inputs, "a ground-distance file", "--ground-distance"))

    def resolved(self) -> Self:
        """With its matrix read, if given as a path."""
        if isinstance(self.matrix, GroundDistance):
            return self
        return type(self)(GroundDistance.from_csv(self.matrix))

    def emd(self, counts: SensitiveCounts) -> tuple[NDArray[Any], int]:
        ground = self.resolved().matrix
        assert isinstance(ground, GroundDistance)
        return in_any_order(counts, lambda d, values: pot_distance(d, ground.submatrix(values)))


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


DISTANCE = MatrixDistance
