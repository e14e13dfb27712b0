"""Contribution bounding: one person, at most ``m`` rows, before anything is released.

When one person (a *privacy unit*, e.g. a patient id) can have several rows, a
guarantee per row protects nobody in particular. Bounding keeps at most ``m`` rows of
each unit; adding or removing a unit then changes at most ``m`` records, and the
sensitivities of :mod:`anonaudit.dp.sensitivity` scale with ``m``. The unit id is needed
once, here, on the loader side: the raw rows are aggregated with the unit as an extra
key, bounded, and summed into an ordinary class table without it. Everything downstream
sees only the bounded class table.

Which rows a unit keeps is decided per unit, without looking at other units (a *stable*
transformation: Dwork & Roth 2014, Section 2.3; Wilson et al. 2020, "Differentially
private SQL with bounded user contribution", PoPETs): here the first ``m`` in the order of
their (QI, SA) values. The rule is deterministic and simple; it favours values that sort
first, which a random choice would avoid at the cost of another source of randomness.
Memory grows with the number of distinct (unit, QI, SA) combinations, close to the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.classtable import ClassTable
from anonaudit.engines.local import Progress
from anonaudit.errors import ColumnError, InputError, ParameterError
from anonaudit.loading import Source, load

__all__ = ["BoundedTable", "bound_contributions", "load_bounded"]

_COUNT = "__anonaudit_count__"


@dataclass(frozen=True)
class BoundedTable:
    """A class table in which no privacy unit has more than ``max_contributions`` records.

    Attributes
    ----------
    table : ClassTable
        The bounded class table (without the unit column).
    privacy_unit : str
        The column that identifies a unit.
    max_contributions : int
        ``m``.
    units : int
        Distinct units seen (for the data owner; not part of any release).
    dropped_records : int
        Records removed by the bound (likewise not released).
    """

    table: ClassTable
    privacy_unit: str
    max_contributions: int
    units: int
    dropped_records: int


def bound_contributions(
    table: ClassTable, *, privacy_unit: str, max_contributions: int = 1
) -> BoundedTable:
    """Keep at most ``max_contributions`` records of each unit.

    Parameters
    ----------
    table : ClassTable
        A class table whose first QI column is ``privacy_unit``.
    privacy_unit : str
        The unit column.
    max_contributions : int
        ``m`` (>= 1).

    Examples
    --------
    >>> import pandas as pd
    >>> raw = ClassTable.from_frame(pd.DataFrame(
    ...     {"id": ["a", "a", "b"], "zip": ["1", "2", "1"], "count": [3, 1, 1]}),
    ...     quasi_identifiers=["id", "zip"])
    >>> b = bound_contributions(raw, privacy_unit="id", max_contributions=2)
    >>> b.table.rows, b.dropped_records
    (3, 2)
    """
    m = max_contributions
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ParameterError(f"max_contributions must be a whole number >= 1 (got {m!r})")
    if not table.quasi_identifiers or table.quasi_identifiers[0] != privacy_unit:
        raise ParameterError(
            f"the class table's first QI must be the privacy unit {privacy_unit!r}"
        )
    unit_column = table.keys.column(privacy_unit)
    nulls = unit_column.null_count
    if nulls:
        raise ColumnError(
            f"privacy unit {privacy_unit!r} is empty in {nulls:,} combinations of rows; "
            "every row needs the id of the person it belongs to"
        )
    columns = table.keys.column_names
    order = pc.sort_indices(table.keys, sort_keys=[(c, "ascending") for c in columns])
    keys = table.keys.take(order)
    counts = table.counts[order.to_numpy()]
    unit_codes = pc.dictionary_encode(keys.column(privacy_unit).combine_chunks()).indices
    unit = np.asarray(unit_codes.to_numpy(zero_copy_only=False), dtype=np.int64)
    before = np.cumsum(counts) - counts
    starts = np.r_[0, np.flatnonzero(np.diff(unit)) + 1] if len(unit) else np.zeros(0, int)
    unit_start = np.repeat(before[starts], np.diff(np.r_[starts, len(unit)]))
    kept = np.clip(m - (before - unit_start), 0, counts)
    rest = keys.drop_columns([privacy_unit]).append_column(_COUNT, pa.array(kept, pa.int64()))
    bounded = ClassTable.from_frame(
        rest,
        quasi_identifiers=table.quasi_identifiers[1:],
        sensitive=table.sensitive,
        count=_COUNT,
    )
    bounded = ClassTable(
        bounded.quasi_identifiers, bounded.sensitive, bounded.keys, bounded.counts, table.sources
    )
    return BoundedTable(
        table=bounded,
        privacy_unit=privacy_unit,
        max_contributions=m,
        units=len(starts),
        dropped_records=int(counts.sum() - kept.sum()),
    )


def load_bounded(
    source: Source,
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    privacy_unit: str,
    max_contributions: int = 1,
    sep: str | None = None,
    encoding: str = "utf-8",
    na_values: Sequence[str] = ("",),
    progress: Progress | None = None,
    decimal_comma: Sequence[str] = (),
) -> BoundedTable:
    """Read ``source`` once with the unit column and return the bounded class table.

    Parameters are those of :func:`anonaudit.load`, plus the unit column and ``m``.
    """
    if privacy_unit in quasi_identifiers or privacy_unit in sensitive:
        raise InputError(
            f"the privacy unit {privacy_unit!r} is also named as a QI or SA; "
            "it identifies people and is never released"
        )
    raw = load(
        source,
        quasi_identifiers=[privacy_unit, *quasi_identifiers],
        sensitive=sensitive,
        sep=sep,
        encoding=encoding,
        na_values=na_values,
        progress=progress,
        decimal_comma=decimal_comma,
    )
    return bound_contributions(raw, privacy_unit=privacy_unit, max_contributions=max_contributions)
