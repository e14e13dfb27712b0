"""Earth mover's distance between each class's SA distribution and the table's.

Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy Beyond
k-Anonymity and l-Diversity". ICDE 2007, Section 4 ("How to calculate the EMD").

Each ground distance computes its EMD in its own module of :mod:`anonaudit.distances`;
this module gathers their closed forms, which take the per-class distributions as a
sparse class-by-value matrix (:class:`Distributions`) and return one distance per
class, in a time linear (up to a log factor) in the number of non-zero entries:

* :func:`equal_distance` (:mod:`anonaudit.distances.equal`): every two values at
  distance 1; EMD = ``1/2 sum |p_i - q_i|``.
* :func:`cdf_distance` (:mod:`anonaudit.distances.ordered`, also the numeric
  distance's): values on a line, the paper's *ordered distance* with unit gaps, the
  range-normalized Wasserstein-1 distance with the values' own.
* :func:`hierarchical_distance` (:mod:`anonaudit.distances.hierarchical`): the height
  of two leaves' lowest common ancestor over the tree height.
* :func:`pot_distance` (:mod:`anonaudit.distances.matrix`): any ground-distance matrix,
  solved exactly as a transport problem with POT (``ot.emd2``), one class at a time.

All distances lie in [0, 1] when the ground distance does.
"""

from __future__ import annotations

from anonaudit.distances._transport import Distributions
from anonaudit.distances.equal import equal_distance
from anonaudit.distances.hierarchical import hierarchical_distance
from anonaudit.distances.matrix import pot_distance
from anonaudit.distances.ordered import cdf_distance

__all__ = [
    "Distributions",
    "cdf_distance",
    "equal_distance",
    "hierarchical_distance",
    "pot_distance",
]
