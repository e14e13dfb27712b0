"""Full-domain generalization of quasi-identifiers, applied to a class table.

Samarati & Sweeney (1998), "Protecting privacy when disclosing information:
k-anonymity and its enforcement through generalization and suppression" (SRI
technical report): every value of a QI is replaced by its ancestor at one level of a
*value generalization hierarchy*; a *generalization* picks one level per QI. Applied to
a :class:`~anonaudit.classtable.ClassTable` it recodes the QI columns of the keys and
sums the rows that become equal, so the result is the class table the generalized data
would have, computed from the class table alone (memory grows with the distinct
combinations, never with the records).

Hierarchies (:func:`qi_hierarchy`) come from ARX files (``leaf;parent;...;*``) or are
built from the data for two common cases:

``interval:W1,W2,...``
    Numeric bands of width ``W1`` (level 1), ``W2`` (level 2), ... then ``*``. Bands are
    aligned at 0 like ARX's interval hierarchies: a value ``v`` falls in
    ``[floor(v / W) * W, floor(v / W) * W + W[``, labelled ``"[20, 25["`` (lower bound
    included, upper bound excluded, numbers written without trailing zeros). Each width
    must be a multiple of the previous one so that bands nest (every level-j band lies in
    one level-(j+1) band). ``interval:5,10,20`` on ages gives ``37 -> [35, 40[ ->
    [30, 40[ -> [20, 40[ -> *``.
``prefix`` / ``prefix:N``
    ZIP-code style truncation: level ``j`` (1 <= j <= N) replaces the last ``j``
    characters by ``*`` (``02134 -> 0213* -> 021**``; a value of ``j`` characters or
    fewer becomes all stars), and level ``N + 1`` is ``*``. Without ``N``, ``N`` is one
    less than the longest value, so the last level before ``*`` keeps one character.

A null QI value has no place in a hierarchy and stays null under every generalization
(it remains a class value of its own, or is dropped by ``nulls="drop"``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from itertools import pairwise

import numpy as np

from anonaudit.classtable import ClassTable
from anonaudit.errors import HierarchyError, ParameterError
from anonaudit.hierarchy import Hierarchy

__all__ = ["BUILTIN_HIERARCHIES", "Generalization", "is_builtin", "qi_hierarchy"]

#: The built-in hierarchy specifications :func:`qi_hierarchy` understands.
BUILTIN_HIERARCHIES = ("interval:W1,W2,...", "prefix", "prefix:N")


def is_builtin(spec: object) -> bool:
    """Whether ``spec`` names a built-in hierarchy (``interval:...``, ``prefix[:N]``)."""
    return isinstance(spec, str) and (
        spec.startswith("interval:") or spec == "prefix" or spec.startswith("prefix:")
    )


def qi_hierarchy(
    spec: str | Hierarchy | os.PathLike[str],
    values: Sequence[str | None],
    *,
    column: str,
) -> Hierarchy:
    """The generalization hierarchy of QI ``column`` described by ``spec``.

    Parameters
    ----------
    spec : str, Hierarchy or path
        A :class:`~anonaudit.hierarchy.Hierarchy`; a built-in, ``"interval:5,10,20"``
        or ``"prefix"`` / ``"prefix:N"`` (see the module docstring); or the path of an
        ARX hierarchy file.
    values : sequence of str or None
        The column's distinct values in the data; built-ins take their leaves from them,
        and every value must be a leaf of a given hierarchy. Nulls are ignored.
    column : str
        The QI, for messages.

    Returns
    -------
    Hierarchy
        Its leaves cover every non-null value of ``values``.

    Raises
    ------
    HierarchyError
        A value that is not a number (``interval``) or not a leaf of the hierarchy.
    ParameterError
        A malformed built-in specification.

    Examples
    --------
    >>> h = qi_hierarchy("interval:5,10", ["37", "41", None], column="age")
    >>> [level[0] for level in h.levels], h.height
    (['37', '[35, 40[', '[30, 40[', '*'], 3)
    >>> qi_hierarchy("prefix:2", ["02134"], column="zip").levels
    (('02134',), ('0213*',), ('021**',), ('*',))
    """
    leaves = sorted({value for value in values if value is not None})
    if isinstance(spec, str) and is_builtin(spec):
        build = _interval if spec.startswith("interval:") else _prefix
        return build(spec, leaves, column)
    hierarchy = spec if isinstance(spec, Hierarchy) else Hierarchy.from_csv(spec)
    known = set(hierarchy.levels[0])
    for value in leaves:
        if value not in known:
            raise HierarchyError(
                f"{hierarchy.name}: value {value!r} of column {column!r} is not in the "
                "hierarchy; add a line for it"
            )
    return hierarchy


def _interval(spec: str, leaves: list[str], column: str) -> Hierarchy:
    """``interval:W1,W2,...``: bands aligned at 0, nested, then ``*``."""
    try:
        widths = [Decimal(part.strip()) for part in spec.removeprefix("interval:").split(",")]
    except InvalidOperation:
        widths = []
    if not widths or not all(w.is_finite() and w > 0 for w in widths):
        raise ParameterError(
            f"hierarchy {spec!r} for {column!r}: give positive band widths, "
            "such as interval:5,10,20"
        )
    for narrow, wide in pairwise(widths):
        if wide <= narrow or wide % narrow != 0:
            raise ParameterError(
                f"hierarchy {spec!r} for {column!r}: each band width must be a larger "
                f"multiple of the previous one ({wide} is not a multiple of {narrow} above it)"
            )
    numbers = []
    for value in leaves:
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            number = Decimal("nan")
        if not number.is_finite():
            raise HierarchyError(
                f"hierarchy {spec!r}: value {value!r} of column {column!r} is not a number; "
                "interval hierarchies need numeric values (give an ARX hierarchy file instead)"
            )
        numbers.append(number)
    levels = [tuple(leaves)]
    for width in widths:
        lows = [(n / width).to_integral_value(rounding=ROUND_FLOOR) * width for n in numbers]
        levels.append(tuple(f"[{_decimal(low)}, {_decimal(low + width)}[" for low in lows))
    levels.append(("*",) * len(leaves))
    return Hierarchy(tuple(levels), name=spec)


def _decimal(number: Decimal) -> str:
    """``number`` without exponent or trailing zeros: 20, 2.5, -5."""
    text = format(number, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _prefix(spec: str, leaves: list[str], column: str) -> Hierarchy:
    """``prefix`` / ``prefix:N``: mask the last j characters at level j, then ``*``."""
    count = spec.removeprefix("prefix").removeprefix(":")
    if count:
        if not count.isdigit() or int(count) < 1:
            raise ParameterError(
                f"hierarchy {spec!r} for {column!r}: prefix:N takes a whole number N >= 1 "
                "of characters to mask"
            )
        depth = int(count)
    else:
        depth = max((len(value) for value in leaves), default=1) - 1
    levels = [tuple(leaves)]
    for j in range(1, depth + 1):
        levels.append(tuple(v[: max(len(v) - j, 0)] + "*" * min(j, len(v)) for v in leaves))
    levels.append(("*",) * len(leaves))
    return Hierarchy(tuple(levels), name=spec)


@dataclass(frozen=True)
class Generalization:
    """One level of generalization per quasi-identifier (full-domain recoding).

    Attributes
    ----------
    hierarchies : mapping of str to Hierarchy
        The hierarchy of every QI that can be generalized.
    levels : mapping of str to int
        The level of each QI, from 0 (the values as they are) to its hierarchy's height
        (``*``); a QI not named stays at level 0.

    Raises
    ------
    ParameterError
        A level for a QI without a hierarchy, or outside ``0..height`` (the message
        names the QI and the valid range).

    Examples
    --------
    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame({"age": ["31", "37", "42"], "count": 1}),
    ...                           quasi_identifiers=["age"])
    >>> g = Generalization({"age": qi_hierarchy("interval:10", ["31", "37", "42"],
    ...                                         column="age")}, {"age": 1})
    >>> g.apply(t).classes.sizes.tolist(), g.height()
    ([2, 1], 1)
    """

    hierarchies: Mapping[str, Hierarchy]
    levels: Mapping[str, int]

    def __post_init__(self) -> None:
        for column, level in self.levels.items():
            hierarchy = self.hierarchies.get(column)
            if hierarchy is None:
                raise ParameterError(
                    f"cannot generalize {column!r}: it has no hierarchy; give one with "
                    f"--hierarchy {column}=FILE, interval:W1,W2,... or prefix"
                )
            if (
                isinstance(level, bool)
                or not isinstance(level, (int, np.integer))
                or not 0 <= level <= hierarchy.height
            ):
                raise ParameterError(
                    f"generalization level {level!r} for {column!r} is out of range: "
                    f"its hierarchy ({hierarchy.name}) has levels 0 to {hierarchy.height}"
                )

    def height(self) -> int:
        """Sum of the levels: the node's height in the generalization lattice."""
        return int(sum(self.levels.values()))

    def recode_maps(self) -> dict[str, dict[str | None, str | None]]:
        """Per QI generalized above level 0: each leaf's generalized value (null -> null)."""
        maps: dict[str, dict[str | None, str | None]] = {}
        for column, level in self.levels.items():
            if level > 0:
                levels = self.hierarchies[column].levels
                maps[column] = {None: None, **dict(zip(levels[0], levels[level], strict=True))}
        return maps

    def apply(self, table: ClassTable) -> ClassTable:
        """The class table of the generalized data.

        QI columns of ``table.keys`` are recoded and rows that become equal are summed
        by :meth:`ClassTable.merge` (so every per-row quantity the class table carries is
        summed with the counts). With every level 0 the table is returned as it is.

        Raises
        ------
        ParameterError
            A generalized QI that is not a QI of ``table``.
        HierarchyError
            A value of the table that is not a leaf of its QI's hierarchy.
        """
        maps = self.recode_maps()
        for column in maps:
            if column not in table.quasi_identifiers:
                raise ParameterError(
                    f"cannot generalize {column!r}: it is not a quasi-identifier "
                    f"({', '.join(table.quasi_identifiers)})"
                )
        return table.recode({column: self._recoder(column, maps[column]) for column in maps})

    def _recoder(
        self, column: str, mapping: Mapping[str | None, str | None]
    ) -> Callable[[list[str | None]], list[str | None]]:
        """The recoding of ``column``'s values by ``mapping``, refusing a value it lacks."""

        def recode(values: list[str | None]) -> list[str | None]:
            for value in values:
                if value not in mapping:
                    raise HierarchyError(
                        f"{self.hierarchies[column].name}: value {value!r} of column "
                        f"{column!r} is not in the hierarchy; add a line for it"
                    )
            return [mapping[v] for v in values]

        return recode
