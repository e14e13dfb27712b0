"""Published tables: the cells an office publishes, as an attacker reads them.

A *published table* is an aggregate export: a count (frequency table) or a sum (magnitude
table) per combination of codes of its dimensions, some of the combinations margins or
totals, some cells suppressed (``x``, ``..``, ``<5``) or rounded. What a reader of the
publication knows of each cell is an interval: ``[value, value]`` for a cell published
as it is, the rounding interval of a rounded cell, ``[0, inf)`` for a suppressed cell,
``[1, 4]`` for one published as ``<5``. This module is that model; reading files into it
is :mod:`anonaudit.sources.published`, and auditing it :mod:`anonaudit.tables`.

Every dimension has a code list with a hierarchy (:class:`Dimension`): its *leaves* are
the finest codes, every other code (a subtotal, the total) is the sum of the leaves
under it (Hundepool et al., *Statistical Disclosure Control*, Wiley 2012, section 4.2:
a table's margins are sums of its cells). Several tables of the same population share
dimensions by name: each cell of each table is then a sum of cells of one common table,
the cross-classification of every dimension's leaves, which is what makes an audit of
linked tables joint (de Wolf 2002, "HiTaS: a heuristic approach to cell suppression in
hierarchical tables", in *Inference Control in Statistical Databases*, LNCS 2316).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from anonaudit.errors import InputError

__all__ = ["CellState", "Dimension", "Kind", "PublishedTable", "TableSet"]

#: A table of counts (frequencies) or of sums (magnitudes).
Kind = Literal["count", "sum"]
#: How a cell was published.
CellState = Literal["published", "suppressed", "rounded"]


@dataclass(frozen=True)
class Dimension:
    """A dimension's codes and their hierarchy.

    Attributes
    ----------
    name : str
        The dimension (a column of the long form, a header of the wide form).
    parents : mapping of str to str
        Each code's parent code; the total has none. A code with no children is a leaf.
    total : str
        The code of the whole population (the root).
    """

    name: str
    parents: Mapping[str, str]
    total: str

    @classmethod
    def flat(cls, name: str, codes: Sequence[str], total: str = "Total") -> Dimension:
        """A dimension whose codes are all leaves under one total."""
        return cls(name, {code: total for code in codes if code != total}, total)

    @cached_property
    def codes(self) -> tuple[str, ...]:
        """Every code: the total, then the others in their order."""
        return (self.total, *self.parents)

    @cached_property
    def leaves(self) -> tuple[str, ...]:
        """The finest codes, in their order."""
        inner = set(self.parents.values())
        return tuple(code for code in self.parents if code not in inner)

    @cached_property
    def leaf_index(self) -> dict[str, int]:
        """Each leaf's position in :attr:`leaves`."""
        return {code: i for i, code in enumerate(self.leaves)}

    @cached_property
    def _below(self) -> dict[str, tuple[int, ...]]:
        below: dict[str, list[int]] = {code: [] for code in self.codes}
        for leaf, i in self.leaf_index.items():
            code: str | None = leaf
            while code is not None:
                below[code].append(i)
                code = self.parents.get(code)
        return {code: tuple(sorted(v)) for code, v in below.items()}

    def leaves_under(self, code: str) -> tuple[int, ...]:
        """Positions of the leaves a code sums (itself, for a leaf).

        Raises
        ------
        KeyError
            ``code`` is not a code of the dimension.
        """
        return self._below[code]

    def depth(self, code: str) -> int:
        """0 for the total, 1 for its children, and so on."""
        depth = 0
        while code != self.total:
            code = self.parents[code]
            depth += 1
        return depth


@dataclass(frozen=True)
class PublishedTable:
    """One published table: a value, or what is known of it, per cell.

    Attributes
    ----------
    name : str
        How the table is named in findings (its file name).
    kind : {"count", "sum"}
        Counts of units, or sums of a magnitude (turnover, income) over them.
    dimensions : tuple of str
        Its dimensions, by name (a :class:`TableSet` holds their code lists).
    codes : tuple of arrays of str
        Per dimension, each cell's code (a leaf, a subtotal or the total).
    lower, upper : array of float
        What a reader knows of each cell's true value: ``lower <= value <= upper``
        (``upper`` may be ``inf``).
    state : array of str
        ``published``, ``suppressed`` or ``rounded`` per cell.
    shown : array of str
        Each cell as published (``"12"``, ``"x"``, ``"<5"``): what a certificate quotes.
    contributions : tuple of arrays of float, optional
        For a magnitude table, per cell, its contributors' values (the microdata behind
        it), needed by the dominance and p% rules; empty when not given.
    holdings : tuple of arrays of str, optional
        Per cell, the holding (enterprise group) of each contributor, aligned with
        ``contributions``; contributors of one holding count as one.
    population : str
        The population the table counts: tables of one population are sums of one
        common table; tables of different populations are compared by differencing.
    """

    name: str
    kind: Kind
    dimensions: tuple[str, ...]
    codes: tuple[NDArray[np.str_], ...]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    state: NDArray[np.str_]
    shown: NDArray[np.str_]
    contributions: tuple[NDArray[np.float64], ...] = field(default=())
    holdings: tuple[NDArray[np.str_], ...] = field(default=())
    population: str = ""

    def __post_init__(self) -> None:
        n = len(self.lower)
        sizes = {len(c) for c in self.codes} | {len(self.upper), len(self.state), len(self.shown)}
        if sizes - {n} or len(self.codes) != len(self.dimensions):
            raise ValueError("a published table's arrays must have one entry per cell")
        if self.contributions and len(self.contributions) != n:
            raise ValueError("contributions must have one array per cell")

    def __len__(self) -> int:
        return len(self.lower)

    @property
    def exact(self) -> NDArray[np.bool_]:
        """Cells whose value is published as it is."""
        return np.asarray(self.state == "published")

    @property
    def suppressed(self) -> NDArray[np.bool_]:
        """Cells published as a marker (an interval, or nothing)."""
        return np.asarray(self.state == "suppressed")

    def label(self, i: int) -> str:
        """The cell ``i`` named by its codes: ``education=HS-grad, race=White`` (``Total``
        in a table without dimensions, such as a group's total)."""
        codes = zip(self.dimensions, self.codes, strict=True)
        return ", ".join(f"{d}={c[i]}" for d, c in codes) or "Total"


@dataclass(frozen=True)
class TableSet:
    """Tables published together, with the code lists of their dimensions.

    Attributes
    ----------
    tables : tuple of PublishedTable
        The tables.
    dimensions : mapping of str to Dimension
        Every dimension any table uses, by name.
    """

    tables: tuple[PublishedTable, ...]
    dimensions: Mapping[str, Dimension]

    def __post_init__(self) -> None:
        for table in self.tables:
            for name, codes in zip(table.dimensions, table.codes, strict=True):
                dimension = self.dimensions.get(name)
                if dimension is None:
                    raise InputError(f"{table.name}: dimension {name!r} has no code list")
                unknown = sorted(set(codes.tolist()) - set(dimension.codes))
                if unknown:
                    raise InputError(
                        f"{table.name}: {name} has codes not in its code list "
                        f"({', '.join(map(repr, unknown[:5]))}); add them to the hierarchy "
                        "or correct the table"
                    )

    @cached_property
    def populations(self) -> tuple[str, ...]:
        """The populations counted, in the tables' order."""
        return tuple(dict.fromkeys(t.population for t in self.tables))

    def of_population(self, population: str) -> TableSet:
        """The tables of one population."""
        return TableSet(
            tuple(t for t in self.tables if t.population == population), self.dimensions
        )

    @cached_property
    def cube_dimensions(self) -> tuple[str, ...]:
        """Every dimension of the tables, in order of first use."""
        return tuple(dict.fromkeys(d for t in self.tables for d in t.dimensions))

    @property
    def cube_size(self) -> int:
        """Cells of the common table: the product of the dimensions' leaf counts."""
        return math.prod(len(self.dimensions[d].leaves) for d in self.cube_dimensions)
