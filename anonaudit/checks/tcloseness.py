"""t-closeness with the earth mover's distance.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007. An equivalence class has t-closeness if the
distance between its SA distribution P and the distribution Q of the SA in the whole
table is no more than t; the table's t is the largest class distance. The distance is
the EMD under a ground distance chosen by name (:data:`DISTANCES`); see
:mod:`anonaudit.checks.emd` for the formulas.

* ``equal``: all values at distance 1 (categorical SAs).
* ``ordered``: values ranked; distance |rank_i - rank_j| / (m - 1). Values sort
  numerically when they all parse as numbers; otherwise the caller gives the order.
  Text is never sorted silently.
* ``numeric``: Wasserstein-1 on the numeric values, divided by their range.
* ``hierarchical``: a generalization hierarchy (:class:`anonaudit.Hierarchy`).
* ``matrix``: any ground-distance matrix (:class:`anonaudit.GroundDistance`), via POT.

Null SA values have no place in an order, hierarchy or matrix: under those distances
the records with a null SA are left out of P and Q, and the result says how many.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anonaudit.checks._classes import TOLERANCE, FailingClasses
from anonaudit.checks.emd import (
    Distributions,
    cdf_distance,
    equal_distance,
    hierarchical_distance,
    pot_distance,
)
from anonaudit.classtable import ClassTable, SensitiveCounts
from anonaudit.errors import HierarchyError, ParameterError
from anonaudit.hierarchy import GroundDistance, Hierarchy
from anonaudit.sources.csv import from_decimal_comma
from anonaudit.vocabulary import DISTANCES

__all__ = ["DISTANCES", "TClosenessResult", "t_closeness"]



@dataclass(frozen=True)
class TClosenessResult:
    """Result of :func:`t_closeness` for one sensitive attribute.

    Attributes
    ----------
    sensitive : str
        The SA.
    distance : str
        The ground distance used (one of :data:`DISTANCES`).
    t : float
        Largest EMD between a class and the whole table.
    per_class : numpy.ndarray
        Each class's EMD, aligned with ``ClassTable.classes``.
    threshold : float or None
        The t the policy allows.
    nulls_excluded : int
        Records left out because their SA is null (order-based distances only).
    violating : pandas.DataFrame
        Classes farther than the threshold, with ``distance``; farthest first.
    failing : FailingClasses
        The same classes as a mask over the classes, listed on demand.
    violating_records : int
        Records in those classes.
    """

    sensitive: str
    distance: str
    t: float
    per_class: NDArray[Any]
    threshold: float | None
    nulls_excluded: int
    failing: FailingClasses = field(repr=False)
    violating_records: int

    @property
    def violating(self) -> pd.DataFrame:
        """The failing classes listed (built on first use; see :attr:`failing`)."""
        return self.failing.frame

    @property
    def passed(self) -> bool | None:
        """Whether ``t <= threshold``; ``None`` without a threshold."""
        return None if self.threshold is None else self.t <= self.threshold + TOLERANCE


def t_closeness(
    table: ClassTable,
    sensitive: str,
    *,
    t: float | None = None,
    distance: str = "equal",
    order: Sequence[str] | None = None,
    hierarchy: Hierarchy | None = None,
    ground: GroundDistance | None = None,
) -> TClosenessResult:
    """Measure t-closeness of one SA (Li, Li & Venkatasubramanian 2007).

    Parameters
    ----------
    table : ClassTable
        The class table.
    sensitive : str
        The SA.
    t : float, optional
        The largest distance allowed, in [0, 1].
    distance : {"equal", "ordered", "numeric", "hierarchical", "matrix"}
        The ground distance.
    order : sequence of str, optional
        For ``ordered``: the values from lowest to highest, needed when they are not
        all numbers.
    hierarchy : Hierarchy, optional
        For ``hierarchical``.
    ground : GroundDistance, optional
        For ``matrix``.

    Returns
    -------
    TClosenessResult

    Examples
    --------
    The salaries of Li et al. (2007), Table 3: the classes {3k, 4k, 5k} and
    {6k, 8k, 11k} are at ordered EMD 0.375 and 0.167 from the whole table.

    >>> import pandas as pd
    >>> from anonaudit.classtable import ClassTable
    >>> salary = ["3", "4", "5", "6", "8", "11", "7", "9", "10"]
    >>> zone = ["a", "a", "a", "b", "b", "b", "c", "c", "c"]
    >>> ct = ClassTable.from_frame(pd.DataFrame({"z": zone, "s": salary, "count": 1}),
    ...                            quasi_identifiers=["z"], sensitive=["s"])
    >>> t_closeness(ct, "s", distance="ordered").per_class[:2].round(3).tolist()
    [0.375, 0.167]
    """
    if distance not in DISTANCES:
        raise ParameterError(
            f"unknown t-closeness distance {distance!r}; choose one of {', '.join(DISTANCES)}"
        )
    if t is not None and not 0 <= t <= 1:
        raise ParameterError(f"t must lie between 0 and 1 (got {t!r})")
    counts = table.sensitive_counts(sensitive)
    per_class, excluded = _distances(counts, distance, order, hierarchy, ground)
    mask = per_class > t + TOLERANCE if t is not None else np.zeros(len(per_class), dtype=bool)
    return TClosenessResult(
        sensitive=sensitive,
        distance=distance,
        t=float(per_class.max()) if len(per_class) else 0.0,
        per_class=per_class,
        threshold=None if t is None else float(t),
        nulls_excluded=excluded,
        failing=FailingClasses(
            table.classes, mask, {"distance": per_class}, worst_first="distance", descending=True
        ),
        violating_records=int(table.classes.sizes[mask].sum()),
    )


def _distances(
    counts: SensitiveCounts,
    distance: str,
    order: Sequence[str] | None,
    hierarchy: Hierarchy | None,
    ground: GroundDistance | None,
) -> tuple[NDArray[Any], int]:
    if distance == "equal":
        identity = np.arange(len(counts.values))
        return equal_distance(Distributions.from_sensitive(counts, identity)), 0
    values = [v for v in counts.values if v is not None]
    excluded = counts.nulls
    if not values:
        return np.zeros(counts.n_classes), excluded
    if distance in ("ordered", "numeric"):
        ranked, coordinates = _order_values(
            counts.name, values, order, numeric=distance == "numeric"
        )
        position = _positions(counts.values, ranked)
        d = Distributions.from_sensitive(counts, position)
        axis = np.arange(len(ranked), dtype=float) if distance == "ordered" else coordinates
        return cdf_distance(d, axis), excluded
    position = _positions(counts.values, values)
    d = Distributions.from_sensitive(counts, position)
    if distance == "hierarchical":
        if hierarchy is None:
            raise ParameterError(
                f"hierarchical distance for {counts.name!r} needs a hierarchy "
                f"(--hierarchy {counts.name}=FILE)"
            )
        return hierarchical_distance(d, hierarchy.ancestors(values)), excluded
    if ground is None:
        raise ParameterError(
            f"matrix distance for {counts.name!r} needs a ground-distance file "
            f"(--ground-distance {counts.name}=FILE)"
        )
    return pot_distance(d, ground.submatrix(values)), excluded


def _positions(values: Sequence[str | None], ranked: Sequence[str]) -> NDArray[Any]:
    """Map each SA code to its place in ``ranked``; -1 for null."""
    place = {value: i for i, value in enumerate(ranked)}
    return np.array([place[v] if v is not None else -1 for v in values], dtype=np.int64)


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
