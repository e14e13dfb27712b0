"""The ordered ground distance: values on a line, one step apart.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007, Section 4: with the m values in order, the
ground distance of the i-th and j-th is ``|i - j| / (m - 1)`` and the EMD is
``1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|``. Values sort numerically when they all parse
as numbers; otherwise the order is given. Text is never sorted silently. Null has no
place in an order: its records are left out of both distributions, and counted.
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from anonaudit.distances._transport import Distributions, Placement, without_nulls
from anonaudit.distances.base import Distance
from anonaudit.errors import HierarchyError, OptionError, ParameterError, texts
from anonaudit.files import from_decimal_comma

if TYPE_CHECKING:
    from anonaudit.classtable import SensitiveCounts

__all__ = ["DISTANCE", "OrderedDistance", "cdf_distance", "on_a_line"]

#: What an order listing a value twice is told.
_TWICE = "lists {value!r} twice; list each value once, in order"


@dataclass(frozen=True)
class OrderedDistance(Distance):
    """Values on a line: ``|i - j| / (m - 1)`` between the i-th and j-th of ``m``
    (Li, Li & Venkatasubramanian 2007).

    Parameters
    ----------
    order : sequence of str, optional
        The values from lowest to highest; needed when they are not all numbers.
    """

    order: Sequence[str] | None = None
    name: ClassVar[str] = "ordered"
    definition: ClassVar[str] = (
        "Ordered distance: 1/(m − 1) Σ_i |Σ_{j≤i} (p_j − q_j)| over the table’s m distinct "
        "values in order (sorted numerically; text needs an explicit order, never "
        "alphabetical)."
    )

    def __post_init__(self) -> None:
        if self.order is not None:
            order = texts(self.order, "order")
            for value in sorted({v for v in order if order.count(v) > 1}):
                raise OptionError("order", value, says="{label} " + _TWICE)
            object.__setattr__(self, "order", order)

    @classmethod
    def from_inputs(cls, sensitive: str, inputs: Mapping[str, Any]) -> Self:
        """The order of ``sensitive``'s values, if given (``orders``)."""
        try:
            return cls(inputs.get("orders"))
        except OptionError as error:  # name the SA whose order it is
            raise OptionError(
                "order", error.value, says=f"{{label}} {sensitive} {_TWICE}"
            ) from None

    def emd(self, counts: SensitiveCounts) -> tuple[NDArray[Any], int]:
        return on_a_line(counts, self.order, numeric=False)


def on_a_line(
    counts: SensitiveCounts, order: Sequence[str] | None, *, numeric: bool
) -> tuple[NDArray[Any], int]:
    """The EMD of values on a line, without the nulls: one step apart in ``order`` (or
    numerically), or with ``numeric`` at their numbers' distances over the range."""

    def line(values: list[str]) -> Placement:
        ranked, coordinates = _order_values(counts.name, values, order, numeric=numeric)
        axis = coordinates if numeric else np.arange(len(ranked), dtype=float)
        return ranked, lambda d: cdf_distance(d, axis)

    return without_nulls(counts, line)


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


def _order_values(
    name: str, values: list[str], order: Sequence[str] | None, *, numeric: bool
) -> tuple[list[str], NDArray[Any]]:
    """The values from lowest to highest and their numeric coordinates.

    Numbers are compared exactly (as decimals), so integers beyond 2**53 that a float
    would merge stay distinct; the coordinates are their nearest floats.
    """
    parsed = {}
    for value in values:
        try:
            number = decimal.Decimal(value)
        except decimal.InvalidOperation:
            number = decimal.Decimal("NaN")
        parsed[value] = number
    if order is not None and not numeric:
        rank = {v: i for i, v in enumerate(order)}
        missing = [v for v in values if v not in rank]
        if missing:
            raise HierarchyError(
                f"the order given for {name!r} lacks value {missing[0]!r}; add it to the order"
            )
        ranked = sorted(values, key=rank.__getitem__)
        return ranked, np.arange(len(ranked), dtype=float)
    bad = [v for v in values if not parsed[v].is_finite()]
    if bad:
        hint = "" if numeric else f", or give the order of its values (--order {name}=v1,v2,...)"
        if from_decimal_comma(bad[:1]) != bad[:1]:
            hint += f"; if it is written with a decimal comma, give --decimal-comma {name}"
        raise ParameterError(
            f"{'numeric' if numeric else 'ordered'} distance for {name!r} needs numbers, "
            f"but {bad[0]!r} is not one; use --t-distance {name}=equal{hint}"
        )
    ranked = sorted(values, key=parsed.__getitem__)
    if len({parsed[v] for v in ranked}) != len(ranked):
        raise ParameterError(
            f"{name!r} writes one number in two ways (e.g. '1' and '1.0'); normalize the column"
        )
    return ranked, np.array([float(parsed[v]) for v in ranked])


DISTANCE = OrderedDistance
