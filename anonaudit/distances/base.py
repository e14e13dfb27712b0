"""What a t-closeness ground distance declares, once: :class:`Distance`.

t-closeness (Li, N., Li, T., Venkatasubramanian, S. (2007). "t-Closeness: Privacy
Beyond k-Anonymity and l-Diversity". ICDE 2007) measures how far each class's
distribution of a sensitive attribute (SA) is from the whole table's by the earth
mover's distance (EMD), the cheapest way of moving one distribution's mass onto the
other when moving a unit from value i to value j costs the *ground distance* d(i, j).

A ground distance is one module of :mod:`anonaudit.distances`, named as the distance
is (``--t-distance NAME``, the reports' ``distance``), holding ``DISTANCE``: a frozen
subclass of :class:`Distance` whose fields are what it needs (an order, a hierarchy, a
matrix) and whose :meth:`~Distance.emd` computes every class's EMD from the SA's
class-by-value counts. The option objects, the t-closeness check, the policy files and
the command line, the reports and the docs find it there; none of them names it.

This module imports nothing heavy: the option objects (:mod:`anonaudit.settings.options`) import
it when ``anonaudit`` is imported.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from anonaudit.classtable import SensitiveCounts

__all__ = ["Distance"]


@dataclass(frozen=True)
class Distance(ABC):
    """A ground distance of t-closeness, with what it needs (Li, Li & Venkatasubramanian
    2007).

    Subclasses are frozen dataclasses; their fields are the distance's parameters, given
    in Python (``OrderedDistance(order)``) or built from an SA's inputs on the command
    line and in policy files (:meth:`from_inputs`).

    Attributes
    ----------
    name : str
        How the command line, policy files and reports call it; the name of its module.
    definition : str
        Its sentence in the definition of t-closeness
        (:data:`anonaudit.report.explain.T_CLOSENESS`).
    nulls_left_out : bool
        Whether a null SA value has no place under it, so that the records holding one
        are left out of both distributions and counted (ordered, hierarchical, ...), or
        is a value like any other (equal).
    implied_by : str or None
        The input of an SA (a key of :meth:`from_inputs`'s ``inputs``: ``"hierarchies"``,
        ``"ground_distances"``) that makes it the SA's distance unless one is named.
    """

    name: ClassVar[str]
    definition: ClassVar[str]
    nulls_left_out: ClassVar[bool] = True
    implied_by: ClassVar[str | None] = None

    @classmethod
    def from_inputs(cls, sensitive: str, inputs: Mapping[str, Any]) -> Self:
        """The distance of the SA ``sensitive`` from its inputs.

        Parameters
        ----------
        sensitive : str
            The SA, for messages.
        inputs : mapping of str to object
            What the policy file, the command line or the flat keyword arguments give
            for this SA, by keyword: ``orders`` (its values in order), ``hierarchies``
            (a hierarchy or its file), ``ground_distances`` (a matrix or its file).

        Returns
        -------
        Distance
            Without parameters, the distance; subclasses with parameters take theirs
            from ``inputs``.

        Raises
        ------
        ParameterError
            An input the distance needs is not given, or is refused.
        """
        return cls()

    def resolved(self) -> Self:
        """The distance with what it reads from files read (once per audit); itself when
        it reads none."""
        return self

    @abstractmethod
    def emd(self, counts: SensitiveCounts) -> tuple[NDArray[Any], int]:
        """Each class's EMD between its distribution of the SA and the whole table's.

        Parameters
        ----------
        counts : SensitiveCounts
            The SA's records per class and value.

        Returns
        -------
        per_class : numpy.ndarray
            The EMD of each class, in [0, 1], aligned with ``counts``'s classes.
        nulls_excluded : int
            Records left out of both distributions because their SA is null.
        """
