"""The hierarchical ground distance: how high two values meet in a hierarchy.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007, Section 4: the ground distance of two leaves
of a generalization hierarchy of height H is the height of their lowest common ancestor
divided by H, and the EMD is the sum over internal nodes N of
``height(N)/H * min(pos_extra(N), neg_extra(N))``. Null is no leaf: its records are
left out of both distributions, and counted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anonaudit.distances._transport import Distributions, in_any_order, required
from anonaudit.distances.base import Distance
from anonaudit.hierarchy import Hierarchy

if TYPE_CHECKING:
    from anonaudit.classtable import SensitiveCounts

__all__ = ["DISTANCE", "HierarchicalDistance", "hierarchical_distance"]


@dataclass(frozen=True)
class HierarchicalDistance(Distance):
    """The height of two values' lowest common ancestor in a hierarchy, over its height
    (Li, Li & Venkatasubramanian 2007).

    Parameters
    ----------
    hierarchy : Hierarchy or path
        The hierarchy, or the path of an ARX hierarchy file.
    """

    hierarchy: Hierarchy | str | os.PathLike[str]
    name: ClassVar[str] = "hierarchical"
    definition: ClassVar[str] = (
        "Hierarchical distance: the cost of moving mass between leaves of a generalization "
        "hierarchy, per Section 4 of Li, Li & Venkatasubramanian."
    )
    implied_by: ClassVar[str | None] = "hierarchies"

    @classmethod
    def from_inputs(cls, sensitive: str, inputs: Mapping[str, Any]) -> Self:
        """The hierarchy of ``sensitive`` (``hierarchies``), which it needs."""
        return cls(required(cls, sensitive, inputs, "a hierarchy", "--hierarchy"))

    def resolved(self) -> Self:
        """With its hierarchy read, if given as a path."""
        if isinstance(self.hierarchy, Hierarchy):
            return self
        return type(self)(Hierarchy.from_csv(self.hierarchy))

    def emd(self, counts: SensitiveCounts) -> tuple[NDArray[Any], int]:
        hierarchy = self.resolved().hierarchy
        assert isinstance(hierarchy, Hierarchy)
        return in_any_order(
            counts, lambda d, values: hierarchical_distance(d, hierarchy.ancestors(values))
        )


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


DISTANCE = HierarchicalDistance
