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
into connected components, each a small linear program: cells are linked only through the
rows the programs need, so a published cell the others imply (a grand total whose
margins are published, the same cell in two tables) and a suppressed cell (which says no
more than that its cells are not negative) link nothing. The suppressed cells of a
hierarchical table then fall apart by the groups of its hierarchies: the 10^6-cell table
of ``benchmarks/bench_tables.py`` is 799 programs of at most 327 cells.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.sparse import csgraph

from anonaudit.errors import InputError
from anonaudit.published import Dimension, PublishedTable, TableSet

__all__ = ["MAX_ENTRIES", "Reduced", "System", "build", "implied", "reduce"]

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
    codes : array of int
        ``rows x dimensions``: each row's code in each dimension of
        ``tables.cube_dimensions``, as an index into the dimension's ``codes`` (0, the
        total, for a dimension its table does not have).
    """

    tables: TableSet
    matrix: sparse.csr_matrix
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    table: NDArray[np.int64]
    cell: NDArray[np.int64]
    shape: tuple[int, ...]
    integer: bool
    codes: NDArray[np.int64]

    @cached_property
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

    A row's cube cells are the product of the leaves under each of its codes (all the
    leaves of a dimension its table does not have): they are generated for every row at
    once, dimension by dimension, a block of rows at a time.

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
    leaves = [_Leaves.of(tables.dimensions[d]) for d in names]
    shape = tuple(len(tables.dimensions[d].leaves) for d in names)
    size = math.prod(shape)
    codes = np.concatenate([_code_indices(t, names, tables) for t in tables.tables])
    counts = np.ones(len(codes), dtype=np.int64)
    for d, under in enumerate(leaves):
        counts *= under.count[codes[:, d]]
    indptr = np.concatenate([[0], np.cumsum(counts)])
    if max(size, int(indptr[-1])) > MAX_ENTRIES:
        raise InputError(
            f"the tables' common table (every combination of the leaves of "
            f"{', '.join(names)}: {size:,} cells, {int(indptr[-1]):,} cell memberships) is "
            "too large to audit at once; audit tables of fewer dimensions together, or "
            "give them populations of their own"
        )
    index_type = np.int32 if size < 2**31 else np.int64
    cuts = np.unique(np.searchsorted(indptr, np.arange(0, indptr[-1], _BLOCK), "right") - 1)
    column = np.concatenate(
        [
            _cells(codes[lo:hi], leaves, shape).astype(index_type)
            for lo, hi in zip(cuts, [*cuts[1:], len(codes)], strict=True)
        ]
        or [np.zeros(0, index_type)]
    )
    matrix = sparse.csr_matrix(
        (np.ones(len(column)), column, indptr.astype(index_type)), shape=(len(codes), size)
    )
    cat = np.concatenate
    return System(
        tables=tables,
        matrix=matrix,
        lower=cat([t.lower for t in tables.tables], dtype=float),
        upper=cat([t.upper for t in tables.tables], dtype=float),
        table=cat([np.full(len(t), i, dtype=np.int64) for i, t in enumerate(tables.tables)]),
        cell=cat([np.arange(len(t), dtype=np.int64) for t in tables.tables]),
        shape=shape,
        integer=kinds == {"count"},
        codes=codes,
    )


#: Cube cells, or cell memberships (non-zeros of the matrix), beyond which :func:`build`
#: refuses the tables (about 3 GiB of matrix).
MAX_ENTRIES = 2**28
#: Cell memberships generated at a time by :func:`build`.
_BLOCK = 2**22


@dataclass(frozen=True)
class _Leaves:
    """A dimension's codes (in :attr:`Dimension.codes` order) as the leaves under each:
    code ``k`` sums ``leaves[start[k] : start[k] + count[k]]``; ``children`` likewise
    (``child_start``, ``child_count``): the codes one level down."""

    leaves: NDArray[np.int64]
    start: NDArray[np.int64]
    count: NDArray[np.int64]
    children: NDArray[np.int64]
    child_start: NDArray[np.int64]
    child_count: NDArray[np.int64]

    @classmethod
    def of(cls, dimension: Dimension) -> _Leaves:
        position = {code: k for k, code in enumerate(dimension.codes)}
        under = [dimension.leaves_under(code) for code in dimension.codes]
        below: list[list[int]] = [[] for _ in dimension.codes]
        for code, parent in dimension.parents.items():
            below[position[parent]].append(position[code])
        return cls(*_ragged(under), *_ragged(below))


def _ragged(
    lists: Sequence[Sequence[int]],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Lists of integers as one array, each list's start and length."""
    count = np.asarray([len(x) for x in lists], dtype=np.int64)
    flat = np.asarray([i for x in lists for i in x], dtype=np.int64)
    return flat, np.cumsum(count) - count, count


def _code_indices(
    table: PublishedTable, names: Sequence[str], tables: TableSet
) -> NDArray[np.int64]:
    """Per cell (a row) and cube dimension, the index of its code in the dimension's
    codes; 0 (the total) for a dimension the table does not have."""
    out = np.zeros((len(table), len(names)), dtype=np.int64)
    for d, name in enumerate(names):
        if name in table.dimensions:
            position = {c: k for k, c in enumerate(tables.dimensions[name].codes)}
            found, inverse = np.unique(
                table.codes[table.dimensions.index(name)], return_inverse=True
            )
            out[:, d] = np.asarray([position[c] for c in found.tolist()])[inverse]
    return out


def _expand(
    counts: NDArray[np.int64], starts: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Ragged ranges ``starts[i] .. starts[i] + counts[i]`` concatenated, and the index
    ``i`` of each element's range."""
    owner = np.repeat(np.arange(len(counts)), counts)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    return starts[owner] + offset, owner


def _cells(
    codes: NDArray[np.int64], leaves: Sequence[_Leaves], shape: tuple[int, ...]
) -> NDArray[np.int64]:
    """The cube cells (flat, ascending within a row) of rows of codes, row after row:
    the cells so far, each extended by every leaf of the next dimension's code."""
    row = np.arange(len(codes))  # the row of each cell so far
    flat = np.zeros(len(codes), dtype=np.int64)
    for d, under in enumerate(leaves):
        code = codes[row, d]
        position, owner = _expand(under.count[code], under.start[code])
        flat = flat[owner] * shape[d] + under.leaves[position]
        row = row[owner]
    return flat


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
    free_matrix : scipy.sparse.csr_matrix
        ``rows x free cells``: the matrix's columns of the free cells (aligned with
        ``free``).
    kept : array of bool
        Per row, whether the linear programs need it as a constraint: ``False`` for a
        published cell the other published cells imply (:func:`implied`), and for an
        unpublished cell whose bounds, less its fixed cells, say no more than that cells
        are not negative (a suppressed cell: ``[0, inf)``). An unpublished cell is
        bounded all the same, whether kept or not.
    component : array of int
        Per free cell (aligned with ``free``), its connected component: free cells are
        linked by the kept rows they share.
    """

    system: System
    value: NDArray[np.float64]
    fixed_by: NDArray[np.int64]
    zero_row: NDArray[np.bool_]
    order: NDArray[np.int64]
    batch: NDArray[np.int64]
    free: NDArray[np.int64]
    free_matrix: sparse.csr_matrix
    kept: NDArray[np.bool_]
    component: NDArray[np.int64]

    def residual(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per row, its bounds less the fixed cells it sums."""
        return _residual(self.system, self.value)


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
    while True:
        free_count = a @ np.isnan(value).astype(float)
        low, high = _residual(system, value)
        settled = exact & (free_count > 0)
        zeros = settled & (np.abs(low) <= TOLERANCE)
        ones = settled & (free_count == 1) & ~zeros
        zeros |= (high <= TOLERANCE) & (free_count > 0)  # an upper bound of 0: all 0
        if not zeros.any() and not ones.any():
            break
        newly = []
        for rows, zero in ((np.flatnonzero(ones), False), (np.flatnonzero(zeros), True)):
            picked = a[rows]
            cells = picked.indices
            sources = np.repeat(rows, np.diff(picked.indptr))
            keep = np.isnan(value[cells])  # free, and the first row to fix a cell fixes it
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
    free_matrix = sparse.csr_matrix(a[:, free_cells])
    free_matrix.sort_indices()
    low, high = _residual(system, value)
    loose = ~exact & (low <= 0) & np.isinf(high)
    kept = ~(implied(system) | loose)
    return Reduced(
        system=system,
        value=value,
        fixed_by=fixed_by,
        zero_row=zero_row,
        order=np.concatenate(order) if order else np.zeros(0, np.int64),
        batch=batch,
        free=free_cells,
        free_matrix=free_matrix,
        kept=kept,
        component=_components(free_matrix, kept),
    )


def implied(system: System) -> NDArray[np.bool_]:
    """Per row, whether it is a published cell the other published cells imply.

    Two kinds, found by the rows' codes: a copy of a published cell (the same codes in
    every dimension, published as the same value by another table, or again), and a
    cell that is the sum of its children along one dimension (the codes one level down
    in that dimension's hierarchy, the others the same), every child published and
    their values adding up to the cell's. A cell so implied is implied by cells deeper
    in the hierarchies (or by the first copy), so leaving every one of them out of the
    linear programs leaves the tables an attacker can build unchanged; a cell whose
    children do not add up to it is kept, and contradicts them there. The grand total
    of a table whose margins are published is one; without it, suppressed cells in
    different parts of a table are not linked (HiTaS, module docstring of
    :mod:`anonaudit.published`, splits the protection of a hierarchical table the same
    way).
    """
    result = np.zeros(len(system.lower), dtype=bool)
    exact = np.flatnonzero(system.exact)
    codes = system.codes[exact]
    value = system.lower[exact]
    tol = TOLERANCE * np.maximum(1.0, np.abs(value))
    dims = [_Leaves.of(system.tables.dimensions[d]) for d in system.tables.cube_dimensions]
    sizes = [len(d.count) for d in dims]
    same = _ids(codes, sizes)
    first = np.full(len(exact), len(exact))
    np.minimum.at(first, same, np.arange(len(exact)))
    copy = first[same] != np.arange(len(exact))
    result[exact[copy & (np.abs(value - value[first[same]]) <= tol)]] = True
    for d, under in enumerate(dims):
        line = _ids(np.delete(codes, d, axis=1), [*sizes[:d], *sizes[d + 1 :]])
        key = line * sizes[d] + codes[:, d]
        by_key = np.argsort(key, kind="stable")
        known = key[by_key]
        parents = np.flatnonzero(under.child_count[codes[:, d]] > 0)
        if len(parents) == 0:
            continue
        code = codes[parents, d]
        position, owner = _expand(under.child_count[code], under.child_start[code])
        wanted = line[parents[owner]] * sizes[d] + under.children[position]
        at = np.minimum(np.searchsorted(known, wanted), len(known) - 1)
        found = known[at] == wanted
        starts = np.cumsum(under.child_count[code]) - under.child_count[code]
        complete = np.logical_and.reduceat(found, starts)
        total = np.add.reduceat(np.where(found, value[by_key[at]], 0.0), starts)
        adds_up = complete & (np.abs(total - value[parents]) <= tol[parents])
        result[exact[parents[adds_up]]] = True
    return result


def _ids(columns: NDArray[np.int64], sizes: Sequence[int]) -> NDArray[np.int64]:
    """Per row of ``columns`` (values below ``sizes``), a number shared by the equal rows."""
    ids = np.zeros(len(columns), dtype=np.int64)
    for k, size in enumerate(sizes):
        _, ids = np.unique(ids * size + columns[:, k], return_inverse=True)
    return ids.ravel()


def _residual(
    system: System, value: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
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


def _components(free_matrix: sparse.csr_matrix, kept: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Connected components of the free cells, linked by the kept rows they share."""
    if free_matrix.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    sub = free_matrix[np.flatnonzero(kept & (np.diff(free_matrix.indptr) > 1))]
    k, m = sub.shape
    graph = sparse.bmat([[None, sub], [sub.T, None]], format="csr")
    graph.resize((k + m, k + m))
    _, labels = csgraph.connected_components(graph, directed=False)
    return np.asarray(labels[k:], dtype=np.int64)
