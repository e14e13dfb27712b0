"""Margins in a frequency table: rows or columns that sum others count people twice.

Statistical tables are published with their margins: a ``Total`` row under the
categories of a dimension, a ``Total`` column beside the categories spread across
(a *wide* cross-tab, as spreadsheets export them). Read as a frequency table
(``--count``), a margin row is one more group of people who are already counted in
the rows it sums, so every count, k included, is wrong. This module finds them before
an audit measures anything, by arithmetic and by name (Hundepool et al., *Statistical
Disclosure Control*, Wiley 2012, section 4.2: a table's margins are the sums of its
cells along a dimension):

- **a margin value** (:func:`margin_values`): a value ``v`` of a column of the class
  table whose count equals the sum of the counts of the column's other values, for
  every combination of the other columns (``n(v, rest) = sum over u != v of
  n(u, rest)``), over at least :data:`MIN_COMBINATIONS` combinations, or over fewer
  when ``v`` is named like a margin (``Total``, ``All``, ...);
- **a wide layout** (:func:`wide_margin`): the count column equals the sum of the
  file's other whole-number columns in every record read: the counts are spread across
  columns and the count column is their total.

An audit of a frequency table refuses either, naming the margin and how to leave it out
(``--filter 'education!=Total'``); the counts are never read twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.settings.names import MARGIN_WORDS, MIN_COMBINATIONS

if TYPE_CHECKING:
    from anonaudit.classtable import ClassTable

__all__ = ["MARGIN_WORDS", "MIN_COMBINATIONS", "Margin", "margin_values", "wide_margin"]


@dataclass(frozen=True)
class Margin:
    """A margin found in a frequency table.

    Attributes
    ----------
    column : str
        The column holding the margin value, or the count column of a wide table.
    value : str or None
        The margin value (``None`` for a wide layout).
    sentence : str
        Why, in words, with what to do.
    """

    column: str
    value: str | None
    sentence: str


def margin_values(table: ClassTable) -> list[Margin]:
    """The values of ``table``'s columns that are the sums of the column's other values.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.classtable import ClassTable
    >>> frame = pd.DataFrame({
    ...     "edu": ["low", "high", "Total"] * 2, "sex": ["F"] * 3 + ["M"] * 3,
    ...     "n": [3, 4, 7, 5, 6, 11]})
    >>> [m.value for m in margin_values(
    ...     ClassTable.from_frame(frame, quasi_identifiers=["edu", "sex"], count="n"))]
    ['Total']
    """
    columns = [*table.quasi_identifiers, *table.sensitive]
    frame = table.keys.select(columns).to_pandas().fillna("\0null")
    frame["__n"] = np.asarray(table.counts, dtype=np.int64)
    found = []
    for column in columns:
        others = [c for c in columns if c != column]
        if frame[column].nunique() < 3:
            continue  # a margin and at least two values it sums
        if others:
            cells = frame.pivot_table("__n", index=others, columns=column, aggfunc="sum")
        else:
            cells = frame.groupby(column)["__n"].sum().to_frame().T
        cells = cells.fillna(0)
        total = cells.sum(axis=1)
        for value in cells.columns:
            named = str(value).strip().lower() in MARGIN_WORDS
            holds = bool((2 * cells[value] == total).all()) and bool(cells[value].sum() > 0)
            if holds and (named or len(cells) >= MIN_COMBINATIONS):
                found.append(
                    Margin(
                        column,
                        str(value),
                        f"{column} {value!r} is the sum of the other {column} values in "
                        f"each of {len(cells):,} combinations of the other columns: a margin "
                        "row, which counts its people twice",
                    )
                )
            elif named and not holds:
                found.append(
                    Margin(
                        column,
                        str(value),
                        f"{column} {value!r} is named like a margin (a total of the other "
                        f"{column} values), which would count its people twice",
                    )
                )
    return found


def wide_margin(sample: pa.Table, count: str, roles: Sequence[str]) -> Margin | None:
    """A wide layout: ``count`` is the sum of the other whole-number columns of
    ``sample`` (at least two) in every record.

    >>> t = pa.table({"edu": ["low", "high"], "F": ["3", "5"], "M": ["4", "6"],
    ...               "Total": ["7", "11"]})
    >>> wide_margin(t, "Total", ["edu"]).sentence  # doctest: +ELLIPSIS
    'the count column Total is the sum of F, M in every record read: ...'
    """
    numbers: dict[str, np.ndarray] = {}
    for name in sample.column_names:
        if name == count or name in roles:
            continue
        parsed = _whole(sample.column(name))
        if parsed is not None:
            numbers[name] = parsed
    counts = _whole(sample.column(count))
    if len(numbers) < 2 or counts is None or not len(counts):
        return None
    if not np.array_equal(sum(numbers.values()), counts):
        return None
    return Margin(
        count,
        None,
        f"the count column {count} is the sum of {', '.join(numbers)} in every record read: "
        "the table is laid out wide (counts spread across columns) and its count column is "
        "their margin",
    )


def _whole(column: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """The column as whole numbers, or ``None`` when any value is not one."""
    try:
        numbers = pc.cast(column, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if numbers.null_count:
        return None
    return np.asarray(numbers.to_numpy(zero_copy_only=False), dtype=np.int64)
