"""t-closeness with the earth mover's distance.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007. An equivalence class has t-closeness if the
distance between its SA distribution P and the distribution Q of the SA in the whole
table is no more than t; the table's t is the largest class distance. The distance is
the EMD under a ground distance: one of :mod:`anonaudit.distances` (:data:`DISTANCES`,
by name), each of which computes its EMD in its own module (equal, ordered, numeric,
hierarchical, matrix, ...).

Null SA values have no place in an order, hierarchy or matrix: under those distances
the records with a null SA are left out of P and Q, and the result says how many.

Its declaration as a measure of the audit (:data:`MEASURE`) closes the
module; :mod:`anonaudit.report.sections.t_closeness` shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.distances import DISTANCES, Distance, named
from anonaudit.errors import ParameterError
from anonaudit.hierarchy import GroundDistance, Hierarchy
from anonaudit.measures._classes import TOLERANCE, FailingClasses, records_in
from anonaudit.measures.base import ClassMeasure, Context
from anonaudit.settings.names import Judged

__all__ = ["DISTANCES", "MEASURE", "TCloseness", "TClosenessResult", "t_closeness"]


@dataclass(frozen=True)
class TClosenessResult:
    """Result of :func:`t_closeness` for one sensitive attribute.

    Attributes
    ----------
    sensitive : str
        The SA.
    distance : str
        The name of the ground distance used (one of :data:`DISTANCES`).
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
    distance: str | Distance = "equal",
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
    distance : str or Distance
        The ground distance (:mod:`anonaudit.distances`), or its name with what it
        needs in ``order``, ``hierarchy`` or ``ground``.
    order : sequence of str, optional
        With ``"ordered"``: the values from lowest to highest, needed when they are not
        all numbers.
    hierarchy : Hierarchy, optional
        With ``"hierarchical"``.
    ground : GroundDistance, optional
        With ``"matrix"``.

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
    if isinstance(distance, str):
        given = {"orders": order, "hierarchies": hierarchy, "ground_distances": ground}
        inputs = {keyword: value for keyword, value in given.items() if value is not None}
        distance = named(distance).from_inputs(sensitive, inputs)
    if t is not None and not 0 <= t <= 1:
        raise ParameterError(f"t must lie between 0 and 1 (got {t!r})")
    per_class, excluded = distance.emd(table.sensitive_counts(sensitive))
    mask = per_class > t + TOLERANCE if t is not None else np.zeros(len(per_class), dtype=bool)
    return TClosenessResult(
        sensitive=sensitive,
        distance=distance.name,
        t=float(per_class.max()) if len(per_class) else 0.0,
        per_class=per_class,
        threshold=None if t is None else float(t),
        nulls_excluded=excluded,
        failing=FailingClasses(
            table.classes, mask, {"distance": per_class}, worst_first="distance", descending=True
        ),
        violating_records=records_in(table.classes.sizes, mask),
    )


class TCloseness(ClassMeasure[TClosenessResult]):
    """t-closeness of each SA under its ground distance
    (:func:`t_closeness`)."""

    key = "t_closeness"
    judged = Judged.T_CLOSENESS
    per_sensitive = True
    position = 30
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"inference": ("t-closeness",)}
    thresholds = ("t",)

    def compute(self, context: Context, sensitive: str | None) -> TClosenessResult:
        assert sensitive is not None
        return t_closeness(
            context.table, sensitive, t=context.policy.t, distance=context.distances[sensitive]
        )


MEASURE = TCloseness()
