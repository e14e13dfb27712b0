"""The attacker's linear system: every published cell as an equation over one common table.

Tables of one population (:class:`~anonaudit.published.TableSet`) are sums of one common
table, the cross-classification of the leaves of every dimension any of them uses (the
*cube*). Each published cell is a row ``lower <= A x <= upper`` over the cube's cells
``x >= 0``: ``lower == upper`` for a cell published as it is, the marker's or the
rounding's interval otherwise (Fischetti & Salazar-González 2000, "Models and algorithms
for optimizing cell suppression in tabular data with linear constraints", JASA 95: the
attacker's problem is the linear program over these constraints).

:func:`reduce` then settles what arithmetic alone settles, as an attacker with a pencil
would: a published row with one unknown cell left fixes it (``15 - 10 - 3 = 2``), and a
published row whose unknown cells must sum to 0 fixes each of them to 0 (counts are not
negative). Each cell so fixed keeps the row that fixed it, so that every later bound has
a certificate in published cells (:mod:`anonaudit.tables.attack`). What is left is split
into connected components (cells linked through rows), each a small linear program.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.sparse import csgraph

from anonaudit.errors import InputError
from anonaudit.published import TableSet

__all__ = ["Reduced", "System", "build", "reduce"]

#: Tolerance of the arithmetic on published values (they are whole numbers or decimals).
TOLERANCE = 1e-7


@dataclass(frozen=True)
class System:
    """Published cells as rows over the cube's cells.

    Attributes
    ----------
    tables : TableSet
        The tables, all of one population and one kind.
    matrix : scipy.sparse.csr_matrix
        ``rows x cube cells``, 1 where a published cell sums a cube cell.
    lower, upper : array of float
        Per row, what the publication says of its sum.
    table, cell : array of int
        Per row, its table (an index into ``tables.tables``) and cell.
    shape : tuple of int
        The cube's shape: leaves per dimension of ``tables.cube_dimensions``.
    integer : bool
        Whether the cells are counts (whole numbers).
    """

    tables: TableSet
    matrix: sparse.csr_matrix
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    table: NDArray[np.int64]
    cell: NDArray[np.int64]
    shape: tuple[int, ...]
    integer: bool

    @property
    def exact(self) -> NDArray[np.bool_]:
        """Rows published as they are (an equation)."""
        return np.asarray(np.abs(self.upper - self.lower) <= TOLERANCE)

    def label(self, row: int) -> str:
        """``table: dim=code, dim=code`` of a row."""
        table = self.tables.tables[int(self.table[row])]
        return f"{table.name}: {table.label(int(self.cell[row]))}"

    def shown(self, row: int) -> str:
        """The row's cell as published."""
        return str(self.tables.tables[int(self.table[row])].shown[int(self.cell[row])])


def build(tables: TableSet) -> System:
    """The rows of every cell of ``tables`` (one population, one kind) over their cube.

    Raises
    ------
    InputError
        The tables mix counts and sums, or the cube is too large to hold.
    """
    kinds = {t.kind for t in tables.tables}
    if len(kinds) > 1:
        raise InputError(
            "tables of counts and tables of sums are different quantities; audit them "
            "separately, or give each its own population"
        )
    names = tables.cube_dimensions
    dims = [tables.dimensions[d] for d in names]
    shape = tuple(len(d.leaves) for d in dims)
    size = math.prod(shape)
    indptr = [0]
    indices: list[NDArray[np.int64]] = []
    lower, upper, table_of, cell_of = [], [], [], []
    cells: list[tuple[int, int, NDArray[np.int64]]] = []
    for t, table in enumerate(tables.tables):
        position = {d: i for i, d in enumerate(table.dimensions)}
        leaf = np.ones(len(table), dtype=bool)
        for name, dim in zip(names, dims, strict=True):
            if name in position:
                leaf &= np.isin(table.codes[position[name]], dim.leaves)
            elif len(dim.leaves) > 1:
                leaf[:] = False
        for c in range(len(table)):
            if leaf[c]:
                continue
            axes = []
            for name, dim in zip(names, dims, strict=True):
                if name in position:
                    axes.append(np.asarray(dim.leaves_under(str(table.codes[position[name]][c]))))
                else:
                    axes.append(np.arange(len(dim.leaves)))
            grid = np.meshgrid(*axes, indexing="ij")
            flat = np.ravel_multi_index(tuple(g.ravel() for g in grid), shape)
            cells.append((t, c, np.asarray(flat, dtype=np.int64)))
        leaves = np.flatnonzero(leaf)
        if len(leaves):  # a cell of leaves is one cube cell: all of them at once
            index = tuple(
                np.vectorize(dim.leaf_index.__getitem__, otypes=[np.int64])(
                    table.codes[position[name]][leaves]
                )
                if name in position
                else np.zeros(len(leaves), dtype=np.int64)
                for name, dim in zip(names, dims, strict=True)
            )
            flat = np.ravel_multi_index(index, shape)
            cells.extend((t, int(c), flat[k : k + 1]) for k, c in enumerate(leaves))
    cells.sort(key=lambda cell: (cell[0], cell[1]))
    for t, c, flat in cells:
        table = tables.tables[t]
        indices.append(flat)
        indptr.append(indptr[-1] + len(flat))
        lower.append(table.lower[c])
        upper.append(table.upper[c])
        table_of.append(t)
        cell_of.append(c)
    column = np.concatenate(indices) if indices else np.zeros(0, np.int64)
    matrix = sparse.csr_matrix(
        (np.ones(len(column)), column, np.asarray(indptr)), shape=(len(lower), size)
    )
    return System(
        tables=tables,
        matrix=matrix,
        lower=np.asarray(lower, dtype=float),
        upper=np.asarray(upper, dtype=float),
        table=np.asarray(table_of, dtype=np.int64),
        cell=np.asarray(cell_of, dtype=np.int64),
        shape=shape,
        integer=kinds == {"count"},
    )


@dataclass(frozen=True)
class Reduced:
    """The system after the arithmetic a pencil settles (:func:`reduce`).

    Attributes
    ----------
    system : System
        The system reduced.
    value : array of float
        Per cube cell, its value where fixed, NaN where still free.
    fixed_by : array of int
        Per cube cell, the row that fixed it (-1: free).
    zero_row : array of bool
        Per cube cell, whether its row fixed it to 0 with others at once (the row's
        unknown cells sum to 0, none negative) rather than as the row's one unknown.
    order : array of int
        Cube cells in the order they were fixed.
    batch : array of int
        Per cube cell, the round of the arithmetic that fixed it (-1: free); a row that
        fixed a cell holds only cells fixed in earlier rounds, or fixed to 0 with it.
    free : array of int
        The cube cells still free.
    component : array of int
        Per free cell (aligned with ``free``), its connected component.
    """

    system: System
    value: NDArray[np.float64]
    fixed_by: NDArray[np.int64]
    zero_row: NDArray[np.bool_]
    order: NDArray[np.int64]
    batch: NDArray[np.int64]
    free: NDArray[np.int64]
    component: NDArray[np.int64]

    def residual(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per row, its bounds less the fixed cells it sums."""
        known = np.nan_to_num(self.value, nan=0.0)
        fixed = self.system.matrix @ known
        return self.system.lower - fixed, self.system.upper - fixed


def reduce(system: System) -> Reduced:
    """Fix every cell the published equations fix one at a time (module docstring).

    Raises
    ------
    InputError
        The published cells contradict each other (a margin that is not the sum of
        its cells, two cells fixed to different values), naming a row.
    """
    a = system.matrix
    n = a.shape[1]
    value = np.full(n, np.nan)
    fixed_by = np.full(n, -1, dtype=np.int64)
    zero_row = np.zeros(n, dtype=bool)
    batch = np.full(n, -1, dtype=np.int64)
    order: list[NDArray[np.int64]] = []
    exact = system.exact
    csc = a.tocsc()
    while True:
        free = np.isnan(value)
        free_count = a @ free.astype(float)
        low, high = _residual(system, value)
        settled = exact & (free_count > 0)
        zeros = settled & (np.abs(low) <= TOLERANCE)
        ones = settled & (free_count == 1) & ~zeros
        zeros |= (high <= TOLERANCE) & (free_count > 0)  # an upper bound of 0: all 0
        if not zeros.any() and not ones.any():
            break
        free_matrix = a.multiply(free[np.newaxis, :]).tocsr()
        newly = []
        for rows, zero in ((np.flatnonzero(ones), False), (np.flatnonzero(zeros), True)):
            picked = free_matrix[rows]
            cells = picked.indices
            sources = np.repeat(rows, np.diff(picked.indptr))
            keep = np.isnan(value[cells])  # the first row to fix a cell fixes it
            cells, sources = cells[keep], sources[keep]
            cells, first = np.unique(cells, return_index=True)
            sources = sources[first]
            value[cells] = 0.0 if zero else low[sources]
            fixed_by[cells] = sources
            zero_row[cells] = zero
            batch[cells] = len(order)
            newly.append(cells)
        order.append(np.concatenate(newly))
    _check(system, value, fixed_by)
    free_cells = np.flatnonzero(np.isnan(value))
    component = _components(csc, free_cells)
    return Reduced(
        system=system,
        value=value,
        fixed_by=fixed_by,
        zero_row=zero_row,
        order=np.concatenate(order) if order else np.zeros(0, np.int64),
        batch=batch,
        free=free_cells,
        component=component,
    )


def _residual(system: System, value: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    known = np.nan_to_num(value, nan=0.0)
    fixed = system.matrix @ known
    return system.lower - fixed, system.upper - fixed


def _check(system: System, value: NDArray[np.float64], fixed_rows: NDArray[np.int64]) -> None:
    """Refuse a publication whose settled rows contradict it: a row whose cells are all
    fixed and fall outside what was published, a row whose unknown cells would have to
    sum below 0, a cell fixed below 0."""
    a = system.matrix
    free_count = a @ np.isnan(value).astype(float)
    low, high = _residual(system, value)
    finite = np.abs(system.upper[np.isfinite(system.upper)])
    tol = TOLERANCE * max(1.0, float(finite.max(initial=1.0)))
    bad = (free_count == 0) & ((low > tol) | (high < -tol))
    bad |= high < -tol
    negative = np.flatnonzero(value < -tol)
    rows = np.flatnonzero(bad)
    if len(negative):
        rows = np.append(rows, fixed_rows[negative[:1]])
    if len(rows):
        row = int(rows[0])
        raise InputError(
            f"{system.label(row)}: published as {system.shown(row)}, but the other cells it "
            "sums do not add up to it; the tables contradict each other (check the totals, "
            "the rounding base, or whether the tables count the same population)"
        )


def _components(csc: sparse.csc_matrix, free: NDArray[np.int64]) -> NDArray[np.int64]:
    """Connected components of the free cells, linked by the rows they share."""
    if len(free) == 0:
        return np.zeros(0, dtype=np.int64)
    sub = csc[:, free].tocsr()
    rows_used = np.flatnonzero(np.diff(sub.indptr) > 1)
    sub = sub[rows_used]
    k, m = sub.shape
    graph = sparse.bmat([[None, sub], [sub.T, None]], format="csr")
    graph.resize((k + m, k + m))
    _, labels = csgraph.connected_components(graph, directed=False)
    return np.asarray(labels[k:], dtype=np.int64)
