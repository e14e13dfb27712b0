"""The numeric ground distance: numbers at their difference over the range.

The range-normalized Wasserstein-1 distance of the values themselves: the ground
distance of two numbers is ``|x_i - x_j| / (max - min)``, so that the EMD lies in
[0, 1] as Li, N., Li, T., Venkatasubramanian, S. (2007), "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity", ICDE 2007, ask of a ground distance; their ordered
distance is the same with the values one step apart. Null is no number: its records
are left out of both distributions, and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from anonaudit.distances.base import Distance
from anonaudit.distances.ordered import on_a_line

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from anonaudit.classtable import SensitiveCounts

__all__ = ["DISTANCE", "NumericDistance"]


@dataclass(frozen=True)
class NumericDistance(Distance):
    """Numbers at their difference over the range (the numeric EMD: Wasserstein-1 over
    the range; Li, Li & Venkatasubramanian 2007 for the EMD)."""

    name: ClassVar[str] = "numeric"
    definition: ClassVar[str] = (
        "Numeric distance: the Wasserstein-1 distance on the values divided by their range."
    )

    def emd(self, counts: SensitiveCounts) -> tuple[NDArray[Any], int]:
        return on_a_line(counts, None, numeric=True)


DISTANCE = NumericDistance
