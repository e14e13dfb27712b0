"""Helpers shared by the checks: the classes failing a threshold, listed on demand."""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.classtable import Classes

__all__ = ["TOLERANCE", "FailingClasses", "Listed", "offending_classes", "records_in"]

#: Relative slack for comparing a float measure with its threshold, so that a balanced
#: three-value class (entropy l = exp(ln 3), which may round to 2.9999999999999996)
#: meets ``entropy_l=3``.
TOLERANCE = 1e-9


def records_in(sizes: NDArray[Any], mask: NDArray[Any]) -> int:
    """The records of the classes ``mask`` marks (``sizes``: records per class), summed
    where marked: no array of the marked classes' sizes is made (on 5x10^7 classes all
    failing, 400 MB a check).

    >>> records_in(np.array([3, 1, 2]), np.array([True, False, True]))
    5
    """
    return int(np.sum(sizes, where=mask))


class Listed(Mapping[str, NDArray[Any]]):
    """A listing's per-class columns, computed by ``compute`` each time they are read.

    A check's result keeps the function, not the arrays: on millions of classes each
    column a listing shows beside the QI values is as large as a column of the class
    table, and a report lists a few classes once. :meth:`items` computes every column
    at once; reading one by name computes them all and returns it.

    Parameters
    ----------
    names : tuple of str
        The columns, in listing order.
    compute : callable
        Returns every column by name (each length C).

    Examples
    --------
    >>> import numpy as np
    >>> listed = Listed(("double",), lambda: {"double": np.arange(3) * 2})
    >>> list(listed), listed["double"].tolist()
    (['double'], [0, 2, 4])
    """

    def __init__(
        self, names: tuple[str, ...], compute: Callable[[], Mapping[str, NDArray[Any]]]
    ) -> None:
        self._names = names
        self._compute = compute

    def __getitem__(self, name: str) -> NDArray[Any]:
        if name not in self._names:
            raise KeyError(name)
        return self._compute()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def items(self) -> ItemsView[str, NDArray[Any]]:
        """Every column by name, computed once."""
        computed = self._compute()
        return {name: computed[name] for name in self._names}.items()


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
        Per-class values shown beside the QI values in the listing (a :class:`Listed`
        where the check computes them for the listing only).
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
        return records_in(self.classes.sizes, self.mask)

    @property
    def count(self) -> int:
        """The failing classes: the rows of :attr:`frame`."""
        return int(np.count_nonzero(self.mask))

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The listing: :func:`offending_classes` of the mask."""
        return self.head(None)

    def head(self, limit: int | None) -> pd.DataFrame:
        """The first ``limit`` rows of :attr:`frame` (all of them with ``None``).

        The reports show a few classes of millions: unless :attr:`frame` is built
        already, only the ``limit`` worst classes are found and listed
        (:func:`offending_classes` with ``limit``).
        """
        if limit is not None and "frame" in self.__dict__:
            return self.frame.head(limit)
        return offending_classes(
            self.classes,
            self.mask,
            self.measures,
            worst_first=self.worst_first,
            descending=self.descending,
            limit=limit,
        )


def offending_classes(
    classes: Classes,
    mask: NDArray[Any],
    measures: Mapping[str, NDArray[Any]],
    *,
    worst_first: str,
    descending: bool,
    limit: int | None = None,
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
    limit : int, optional
        List only the first ``limit`` classes of that order (all of them by default):
        they are selected without ranking the others (:func:`_first_in_order`).

    Returns
    -------
    pandas.DataFrame
        QI columns, ``size``, then the measures; index reset. A measure whose name is
        also a QI's gets a trailing underscore (a QI named ``size`` leaves ``size_``).
    """
    qi = list(classes.keys.column_names)
    selected = np.flatnonzero(mask)
    values = {"size": classes.sizes, **dict(measures.items())}  # a Listed computed once
    worst = values[worst_first][selected]
    order = [-worst if descending else worst, classes.sizes[selected]]
    if limit is not None and limit < len(selected) and not np.isnan(order[0]).any():
        selected = _first_in_order(classes, selected, order, limit)
    else:
        selected = selected[np.lexsort([classes.rank[selected], *order[::-1]])]
    listed = classes.keys.take(pa.array(selected))
    # Object columns of Python strings, None for null, under pandas 2 and 3 alike.
    columns: dict[str, Any] = {
        name: pd.Series(listed.column(name).to_pylist(), dtype=object) for name in qi
    }
    for name, column in values.items():
        columns[_label(name, qi)] = column[selected]
    return pd.DataFrame(columns)


def _first_in_order(
    classes: Classes, selected: NDArray[Any], order: list[NDArray[Any]], limit: int
) -> NDArray[Any]:
    """The first ``limit`` of ``selected`` (class ids) ordered by the keys ``order`` (per
    selected class, the first key first; no NaN), then by the classes' QI values, as
    :attr:`Classes.rank <anonaudit.classtable.Classes.rank>` orders them.

    Each key in turn sets aside the classes surely among the first (below the key's
    ``limit``-th value, by ``numpy.partition``) and keeps those tied with it; the QI
    values are compared only among the classes so kept, by Arrow's top-k selection
    (``select_k_unstable``, exact here: no two classes share their QI values) or sort.
    A listing of 10^7 failing classes needed every class ranked by its QI values.
    """
    sure = np.zeros(0, dtype=np.int64)
    tied = np.arange(len(selected))
    for key in order:
        need = limit - len(sure)
        if len(tied) <= need:
            break
        values = key[tied]
        last = np.partition(values, need - 1)[need - 1]
        sure = np.concatenate([sure, tied[values < last]])
        tied = tied[values == last]
    kept = np.concatenate([sure, tied])
    columns = {f"k{i}": key[kept] for i, key in enumerate(order)}
    keys = classes.keys.take(pa.array(selected[kept]))
    table = pa.table({**columns, **{f"q{i}": c for i, c in enumerate(keys.columns)}})
    sort_keys = [(name, "ascending") for name in table.column_names]
    # select_k_unstable is not for every type (pyarrow 26 crashes on string views).
    plain = all(pa.types.is_string(t) or pa.types.is_large_string(t) for t in keys.schema.types)
    if plain:
        first = pc.select_k_unstable(table, limit, sort_keys=sort_keys)
    else:
        first = pc.sort_indices(table, sort_keys=sort_keys).slice(0, limit)
    chosen: NDArray[Any] = selected[kept[first.to_numpy()]]
    return chosen


def _label(name: str, qi: list[str]) -> str:
    """``name``, or ``name_`` when a QI column already has that name."""
    return f"{name}_" if name in qi else name
