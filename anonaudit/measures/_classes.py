"""Helpers shared by the checks: the classes failing a threshold, listed on demand."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.classtable import Classes

__all__ = ["TOLERANCE", "FailingClasses", "offending_classes"]

#: Relative slack for comparing a float measure with its threshold, so that a balanced
#: three-value class (entropy l = exp(ln 3), which may round to 2.9999999999999996)
#: meets ``entropy_l=3``.
TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class FailingClasses:
    """The classes that fail a threshold: a mask over the classes, listed on demand.

    The checks return this rather than a listing: the lattice search and the
    suppression advice need only :attr:`mask` and :attr:`records`; the listing (QI
    values, size and measures, worst first) is built the first time :attr:`frame` is
    read, by a report.

    Attributes
    ----------
    classes : Classes
        The equivalence classes the mask is over.
    mask : numpy.ndarray of bool
        Which classes fail (length C).
    measures : mapping of str to numpy.ndarray
        Per-class values shown beside the QI values in the listing.
    worst_first : str
        Column the listing is sorted by, worst first (see :func:`offending_classes`).
    descending : bool
        Whether larger values of ``worst_first`` are worse.
    """

    classes: Classes = field(repr=False)
    mask: NDArray[Any] = field(repr=False)
    measures: Mapping[str, NDArray[Any]] = field(repr=False)
    worst_first: str
    descending: bool

    @property
    def records(self) -> int:
        """Records in the failing classes."""
        return int(self.classes.sizes[self.mask].sum())

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The listing: :func:`offending_classes` of the mask."""
        return offending_classes(
            self.classes,
            self.mask,
            self.measures,
            worst_first=self.worst_first,
            descending=self.descending,
        )


def offending_classes(
    classes: Classes,
    mask: NDArray[Any],
    measures: Mapping[str, NDArray[Any]],
    *,
    worst_first: str,
    descending: bool,
) -> pd.DataFrame:
    """The classes selected by ``mask`` with their QI values, size and measures.

    Parameters
    ----------
    classes : Classes
        The equivalence classes.
    mask : numpy.ndarray of bool
        Which classes to list (length C).
    measures : mapping of str to numpy.ndarray
        Per-class values to show beside the QI values (each length C).
    worst_first : str
        Column to sort by, worst first; ties broken by class size, smallest first, then
        by the QI values, so listings do not depend on the engine's output order.
    descending : bool
        Whether larger values of ``worst_first`` are worse.

    Returns
    -------
    pandas.DataFrame
        QI columns, ``size``, then the measures; index reset. A measure whose name is
        also a QI's gets a trailing underscore (a QI named ``size`` leaves ``size_``).
    """
    qi = list(classes.keys.column_names)
    selected = np.flatnonzero(mask)
    worst = {"size": classes.sizes, **measures}[worst_first][selected]
    keys = [classes.rank[selected], classes.sizes[selected], -worst if descending else worst]
    selected = selected[np.lexsort(keys)]
    listed = classes.keys.take(pa.array(selected))
    # Object columns of Python strings, None for null, under pandas 2 and 3 alike.
    columns: dict[str, Any] = {
        name: pd.Series(listed.column(name).to_pylist(), dtype=object) for name in qi
    }
    for name, values in {"size": classes.sizes, **measures}.items():
        columns[_label(name, qi)] = values[selected]
    return pd.DataFrame(columns)


def _label(name: str, qi: list[str]) -> str:
    """``name``, or ``name_`` when a QI column already has that name."""
    return f"{name}_" if name in qi else name
