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

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.classtable import ClassTable
from anonaudit.dp.options import (
    BOUND_KEYWORDS,
    INSTEAD,
    LOAD_BOUNDED_KEYWORDS,
    PrivacyUnit,
    check_keywords,
    from_keywords,
)
from anonaudit.engines.load import Source, load
from anonaudit.errors import ColumnError, InputError, ParameterError
from anonaudit.settings.options import EngineOptions, ReadOptions, Roles, deprecated

__all__ = ["BoundedTable", "bound_contributions", "load_bounded", "resolve_unit"]

_COUNT = "__anonaudit_count__"


@dataclass(frozen=True)
class BoundedTable:
    """A class table in which no privacy unit has more than ``m`` records.

    Attributes
    ----------
    table : ClassTable
        The bounded class table (without the unit column).
    unit : PrivacyUnit
        The unit bounded: its ``column``, ``contributions`` (``m``) and neighbouring
        relation, which :func:`~anonaudit.dp.companion` and
        :func:`~anonaudit.dp.release` use.
    units : int
        Distinct units seen (for the data owner; not part of any release).
    dropped_records : int
        Records removed by the bound (likewise not released).
    """

    table: ClassTable
    unit: PrivacyUnit
    units: int
    dropped_records: int

    @property
    def privacy_unit(self) -> str:
        """The column that identifies a unit."""
        assert self.unit.column is not None  # bound_contributions refuses a unit without one
        return self.unit.column

    @property
    def max_contributions(self) -> int:
        """``m``: records kept per unit."""
        return self.unit.contributions


def _unit_column(unit: PrivacyUnit, function: str) -> str:
    if not isinstance(unit, PrivacyUnit):
        raise TypeError(f"{function}() takes a PrivacyUnit(column=..., contributions=...)")
    if unit.column is None:
        raise ParameterError(
            f"{function}() bounds the rows of each person: name the column identifying them, "
            "PrivacyUnit(column=..., contributions=...)"
        )
    return unit.column


def bound_contributions(
    table: ClassTable, unit: PrivacyUnit | None = None, **keywords: Any
) -> BoundedTable:
    """Keep at most ``unit.contributions`` records of each unit.

    Parameters
    ----------
    table : ClassTable
        A class table whose first QI column is ``unit.column``.
    unit : PrivacyUnit
        The unit column and ``m``, the records kept of each unit.
    **keywords
        ``privacy_unit=`` and ``max_contributions=`` of earlier versions, deprecated:
        they stop working in 0.3.

    Returns
    -------
    BoundedTable

    Examples
    --------
    >>> import pandas as pd
    >>> raw = ClassTable.from_frame(pd.DataFrame(
    ...     {"id": ["a", "a", "b"], "zip": ["1", "2", "1"], "count": [3, 1, 1]}),
    ...     quasi_identifiers=["id", "zip"])
    >>> b = bound_contributions(raw, PrivacyUnit(column="id", contributions=2))
    >>> b.table.rows, b.dropped_records
    (3, 2)
    """
    if keywords:
        if unit is not None:
            raise TypeError("give a PrivacyUnit or the deprecated keyword arguments, not both")
        check_keywords("bound_contributions", keywords, BOUND_KEYWORDS)
        deprecated("bound_contributions", list(keywords), INSTEAD["bound_contributions"])
        unit = from_keywords("bound_contributions", keywords, BOUND_KEYWORDS).unit
    if unit is None:
        raise TypeError(
            "bound_contributions() needs the unit: PrivacyUnit(column=..., contributions=...)"
        )
    privacy_unit = _unit_column(unit, "bound_contributions")
    m = unit.contributions
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
    codes = np.asarray(unit_codes.to_numpy(zero_copy_only=False), dtype=np.int64)
    before = np.cumsum(counts) - counts
    starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1] if len(codes) else np.zeros(0, int)
    unit_start = np.repeat(before[starts], np.diff(np.r_[starts, len(codes)]))
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
        unit=unit,
        units=len(starts),
        dropped_records=int(counts.sum() - kept.sum()),
    )


def load_bounded(
    source: Source,
    roles: Roles | None = None,
    unit: PrivacyUnit | None = None,
    *,
    reading: ReadOptions | None = None,
    engine: EngineOptions | None = None,
    **keywords: Any,
) -> BoundedTable:
    """Read ``source`` once with the unit column and return the bounded class table.

    Parameters
    ----------
    source : path, URL, list of them or frame
        As for :func:`anonaudit.load`.
    roles : Roles
        The QI and SA columns released (and optionally ``count``); not the unit column,
        which identifies people and is never released. Survey ``weights`` are refused.
    unit : PrivacyUnit
        The unit column, ``m`` (the records kept of each unit) and the neighbouring
        relation the release will use.
    reading : ReadOptions, optional
        How the inputs are read, as for :func:`anonaudit.load`.
    engine : EngineOptions, optional
        Where the class table is built, as for :func:`anonaudit.load`.
    **keywords
        The flat keyword arguments of earlier versions (``quasi_identifiers=``,
        ``privacy_unit=``, ``max_contributions=``, ``sep=``, ...), deprecated: they stop
        working in 0.3.

    Returns
    -------
    BoundedTable

    Examples
    --------
    >>> import pandas as pd
    >>> visits = pd.DataFrame({"patient": ["p1", "p1", "p1", "p2"],
    ...                        "zip": ["a", "a", "b", "a"], "dx": ["flu"] * 4})
    >>> bounded = load_bounded(visits, Roles(["zip"], ["dx"]),
    ...                        PrivacyUnit(column="patient", contributions=2))
    >>> bounded.table.rows, bounded.dropped_records, bounded.units
    (3, 1, 2)
    """
    if keywords:
        if any(given is not None for given in (roles, unit, reading, engine)):
            raise TypeError("give option objects or the deprecated keyword arguments, not both")
        check_keywords("load_bounded", keywords, LOAD_BOUNDED_KEYWORDS)
        deprecated("load_bounded", list(keywords), INSTEAD["load_bounded"])
        split = from_keywords("load_bounded", keywords, LOAD_BOUNDED_KEYWORDS)
        roles, unit, reading, engine = split.roles, split.unit, split.reading, split.engine
    if roles is None or unit is None:
        raise TypeError(
            "load_bounded() needs the roles and the unit: load_bounded(source, "
            "Roles(quasi_identifiers, sensitive), PrivacyUnit(column=..., contributions=...))"
        )
    column = _unit_column(unit, "load_bounded")
    if column in roles.columns:
        raise InputError(
            f"the privacy unit {column!r} is also named as a QI or SA; "
            "it identifies people and is never released"
        )
    if roles.weights is not None:
        raise ParameterError(
            "survey weights are not released under differential privacy: drop weights from "
            "the roles of load_bounded()"
        )
    raw = load(
        source,
        replace(roles, quasi_identifiers=(column, *roles.quasi_identifiers)),
        reading=reading,
        engine=engine,
    )
    return bound_contributions(raw, unit)


def resolve_unit(
    data: ClassTable | BoundedTable, unit: PrivacyUnit
) -> tuple[ClassTable, PrivacyUnit, BoundedTable | None]:
    """The class table to release, the unit it is released for, and the bounded table.

    A :class:`BoundedTable` brings its unit: its column and contributions, and its
    neighbouring relation unless ``unit`` names one. A ``unit`` that names a column must
    name the table's, with its contributions; a plain class table cannot have a unit
    column (it is bounded as it is read: :func:`load_bounded`).

    Examples
    --------
    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame({"zip": ["a"], "count": [2]}),
    ...                           quasi_identifiers=["zip"])
    >>> resolve_unit(t, PrivacyUnit(column="patient"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonaudit.errors.ParameterError: the privacy unit 'patient' is bounded as the data is read: ...
    """
    if not isinstance(data, BoundedTable):
        if unit.column is not None:
            raise ParameterError(
                f"the privacy unit {unit.column!r} is bounded as the data is read: "
                "load_bounded(source, roles, unit) or bound_contributions(table, unit), then "
                "release the BoundedTable (a class table given as it is has no unit column)"
            )
        return data, unit, None
    own = data.unit
    if unit.column is not None and (unit.column, unit.contributions) != (
        own.column,
        own.contributions,
    ):
        raise ParameterError(
            f"the table was bounded to {own.contributions} rows of each {own.column!r}, but "
            f"the options' privacy unit is {unit.contributions} rows of each {unit.column!r}"
        )
    neighbouring = unit.neighbouring if unit.neighbouring is not None else own.neighbouring
    return data.table, replace(own, neighbouring=neighbouring), data
