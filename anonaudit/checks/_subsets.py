"""Class tables over subsets of the quasi-identifiers, from the full class table.

The equivalence classes over a subset ``S`` of the QIs are unions of the classes over
all QIs: group the classes by their values on ``S`` and sum their sizes. No raw record
is read again; the cost per subset is linear in the number of classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import Classes, _combine, _encode

__all__ = ["SubsetClasses"]


@dataclass(frozen=True)
class SubsetClasses:
    """The classes of a table, ready to be regrouped by subsets of its QIs.

    Attributes
    ----------
    classes : Classes
        The equivalence classes over all QIs.
    """

    classes: Classes

    @cached_property
    def codes(self) -> tuple[NDArray[Any], ...]:
        """Per QI, each class's value as an integer code (null is a value of its own)."""
        return tuple(_encode(column)[1] for column in self.classes.keys.columns)

    @property
    def rows(self) -> int:
        """Number of records."""
        return int(self.classes.sizes.sum())

    def group(self, subset: Sequence[int]) -> tuple[NDArray[Any], NDArray[Any]]:
        """Group the classes by their values on the QIs at positions ``subset``.

        Returns
        -------
        index : numpy.ndarray
            For each class, the id of its group (a class over ``subset``).
        sizes : numpy.ndarray
            Records per group, ``int64``. The empty subset gives one group of all
            records.
        """
        if not subset:
            index = np.zeros(len(self.classes), dtype=np.int64)
        else:
            index = _combine(self.codes[i] for i in subset)[1]
        sizes = np.bincount(index, weights=self.classes.sizes).astype(np.int64)
        return index, sizes
