"""What an attacker can prove of each unpublished cell, with a proof a person can check.

For each cell not published as it is (suppressed, a ``<5`` marker, rounded), the attacker's
interval is the minimum and the maximum of its sum over every non-negative table that
agrees with every published cell (:mod:`anonaudit.tables.system`; the *audit* of a
suppression pattern, Hundepool et al., *Statistical Disclosure Control*, Wiley 2012,
section 4.3.3; Fischetti & Salazar-González 2000). For counts the bounds are whole
numbers: a fractional linear-programming bound is rounded inwards, and where it was
fractional the integer program is solved too (the interval an attacker can *prove* is the
integer one, de Wolf & Giessing 2009, "Adjusting the τ-ARGUS modular approach to deal
with linked tables", *Data & Knowledge Engineering*).

Each connected component is one HiGHS model (Huangfu & Hall 2018, "Parallelizing the
dual revised simplex method", *Mathematical Programming Computation*) whose objective
alone changes from cell to cell, so that every solve starts from the last basis. A bound
is solved only when the solutions found so far do not already attain its trivial value:
a cell seen at 0 has minimum 0, a cell seen at the residual of a published row it alone
fills has that as its maximum. For counts, a fractional bound is settled without the
integer program when a whole-number solution seen already attains it rounded inwards.

Components are independent: where there are several large ones they are solved in a pool
of processes (``workers``), each component in one process with the same sequence of
solves as in this one, so that the intervals do not depend on how many processes ran.

**Certificates.** A bound comes with the combination of published cells that proves it
(linear-programming duality): ``cell >= sum of y_r * published_r`` because the combined
rows leave every other cell with a coefficient that can only lower the sum, and cells
are never negative. The combination is rebuilt in the original published cells (the
rows the pencil arithmetic used included), checked exactly against the rows before it is
printed, and shown as ``row total 15 - 10 - 3 = 2``. Each is solved from the basis the
component's model starts from, the solver's state cleared, so that a cell's certificate
does not depend on which other cells are proved, nor on the order; the models for
certificates also hold the published cells the others imply (a total) where all their
free cells are in the component, as a person would quote them.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from anonaudit.errors import InputError
from anonaudit.tables.system import TOLERANCE, Reduced, System, reduce

__all__ = ["Certificate", "Interval", "attack", "attack_last", "highs", "no_proof", "program"]

Sense = Literal["lower", "upper"]

#: Free cells (over every component) from which :func:`attack` runs the components in a
#: pool of processes by default: below, starting the processes costs more than it saves.
PARALLEL_CELLS = 10_000


@dataclass(frozen=True)
class Certificate:
    """A bound on a cell proved by a combination of published cells.

    Attributes
    ----------
    sense : {"lower", "upper"}
        ``cell >= bound`` or ``cell <= bound``.
    bound : float
        What the combination proves (before rounding to a whole number).
    terms : tuple of (int, float, float)
        ``(row, coefficient, value)``: each published cell used, its multiplier, and the
        value it stands for (the cell's, or the end of its interval the proof uses).
    whole : bool
        Whether the bound was then rounded to a whole number (counts).
    """

    sense: Sense
    bound: float
    terms: tuple[tuple[int, float, float], ...]
    whole: bool

    @property
    def rounded(self) -> float:
        """The bound as proved: rounded inwards to a whole number for counts."""
        if not self.whole:
            return self.bound
        if self.sense == "lower":
            return float(math.ceil(self.bound - TOLERANCE))
        return float(math.floor(self.bound + TOLERANCE))


@dataclass(frozen=True)
class Interval:
    """What the attacker proves of one unpublished cell.

    Attributes
    ----------
    row : int
        The cell's row in the system.
    lower, upper : float
        The smallest and largest values consistent with the publication.
    method : {"arithmetic", "lp", "integer"}
        How: fixed by published equations one at a time, by linear programming, or by
        integer programming where the LP bound was fractional.
    proofs : tuple of Certificate
        Certificates of the bounds (for the cells asked for).
    parts : tuple of (int, float, float)
        ``(component, lower, upper)`` of the sum of the cell's free cubes cells in each
        component they lie in (the components' programs are independent: the interval
        is the fixed cells' sum plus these parts').
    """

    row: int
    lower: float
    upper: float
    method: str
    proofs: tuple[Certificate, ...] = ()
    parts: tuple[tuple[int, float, float], ...] = ()

    @property
    def width(self) -> float:
        """``upper - lower``: 0 is exact disclosure."""
        return self.upper - self.lower


def no_proof(row: int, lower: float, upper: float) -> bool:
    """Ask :func:`attack` for no certificate (its ``prove``): the intervals only."""
    return False


def attack_last(system: System) -> list[Interval]:
    """The attacker's intervals of the cells of ``system``'s last table, without
    certificates: what every other table of the system proves of cells unknown to the
    reader (a group's targets in a reconstruction, the rest of a population in the
    differencing of two).

    Parameters
    ----------
    system : System
        The tables, the unknown one last.

    Returns
    -------
    list of Interval
        One per row of the last table (:attr:`Interval.row` a row of ``system``).
    """
    last = system.table == len(system.tables.tables) - 1
    return attack(reduce(system), prove=no_proof, rows=last)


def attack(
    reduced: Reduced,
    *,
    prove: Callable[[int, float, float], bool] = lambda row, lower, upper: lower == upper,
    workers: int | None = None,
    rows: NDArray[np.bool_] | None = None,
) -> list[Interval]:
    """The interval of every cell not published as it is, certified where ``prove`` says.

    Parameters
    ----------
    reduced : Reduced
        The system after the pencil arithmetic.
    prove : callable
        ``prove(row, lower, upper)``: whether to certify this cell's bounds (by default
        the exact disclosures).
    workers : int, optional
        Processes to solve the components in: 1 solves them in this process; by default
        every processor when there are several components and at least
        :data:`PARALLEL_CELLS` free cells. The results are the same either way. The
        processes are started afresh (``spawn``: HiGHS's threads do not survive a
        fork), so a script that calls this must guard its main code with
        ``if __name__ == "__main__":``, as :mod:`multiprocessing` requires.
    rows : array of bool, optional
        Per row of the system, whether to find its interval (by default every cell not
        published as it is): only the components these rows' free cells lie in are
        solved.

    Returns
    -------
    list of Interval
        One per unpublished cell (that ``rows`` marks), in row order.

    Raises
    ------
    InputError
        The publication is infeasible: no non-negative table agrees with it.
    """
    system = reduced.system
    fixed_part = system.matrix @ np.nan_to_num(reduced.value, nan=0.0)
    low, high = system.lower - fixed_part, system.upper - fixed_part
    targets = ~system.exact if rows is None else ~system.exact & rows
    blocks = _blocks(reduced, low, high, targets)
    if workers is None:
        large = len(blocks) > 1 and len(reduced.free) >= PARALLEL_CELLS
        workers = os.cpu_count() or 1 if large else 1
    parts: dict[int, list[tuple[int, float, float, str]]] = {}
    for block, found in zip(blocks, _solve_all(blocks, workers), strict=True):
        for row, (low_part, high_part, how) in zip(
            block.rows[block.members].tolist(), found, strict=True
        ):
            parts.setdefault(row, []).append((block.component, low_part, high_part, how))
    intervals = []
    unpublished = np.flatnonzero(targets)
    for row, fixed in zip(unpublished.tolist(), fixed_part[unpublished].tolist(), strict=True):
        pieces = parts.get(row, [])
        methods = [how for *_, how in pieces] or ["arithmetic"]
        method = "integer" if "integer" in methods else methods[0]
        intervals.append(
            Interval(
                row,
                sum(piece[1] for piece in pieces) + fixed,
                sum(piece[2] for piece in pieces) + fixed,
                method,
                parts=tuple((c, low_part, high_part) for c, low_part, high_part, _ in pieces),
            )
        )
    asked = np.zeros(len(targets), dtype=bool)
    asked[unpublished] = [prove(i.row, i.lower, i.upper) for i in intervals]
    duals: dict[tuple[int, float], list[tuple[NDArray[np.int64], NDArray[np.float64]]]] = {}
    for block in _blocks(reduced, low, high, asked, implied=True):
        model = _Component(block)
        for member in block.members.tolist():
            row = int(block.rows[member])
            interval = intervals[int(np.searchsorted(unpublished, row))]
            for sign, bound in ((1.0, interval.lower), (-1.0, interval.upper)):
                if math.isfinite(bound):
                    duals.setdefault((row, sign), []).append((block.rows, model.dual(member, sign)))
    for k in np.flatnonzero(asked[unpublished]):
        intervals[k] = _with_proofs(reduced, intervals[k], duals)
    return intervals


@dataclass(frozen=True)
class _Block:
    """One component's linear program, as sent to a process.

    Attributes
    ----------
    matrix : scipy.sparse.csr_matrix
        Its rows over its free cells.
    rows : array of int
        The system rows of ``matrix``'s rows, ascending.
    low, high : array of float
        Per row, its bounds less the fixed cells it sums (none for the part of an
        unpublished cell in several components: its bounds say nothing there).
    exact : array of bool
        Per row, whether it was published as it is.
    members : array of int
        The unpublished cells to bound, as positions in ``rows``.
    integer : bool
        Whether the cells are counts.
    label : str
        The first row's name, for the message of an infeasible component.
    component : int
        The component (:attr:`~anonaudit.tables.system.Reduced.component`).
    """

    matrix: sparse.csr_matrix
    rows: NDArray[np.int64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    exact: NDArray[np.bool_]
    members: NDArray[np.int64]
    integer: bool
    label: str
    component: int


def _blocks(
    reduced: Reduced,
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    members: NDArray[np.bool_],
    *,
    implied: bool = False,
) -> list[_Block]:
    """The linear program of every component holding a free cell of a row ``members``
    marks, in component order.

    Its rows: the kept rows with a free cell in it, the unpublished cells' (an unpublished
    cell not kept may have free cells in several components: its part in each is a row
    of each, without bounds, and its bounds are the sums of its parts'), and with
    ``implied`` the implied rows whose free cells are all in it too: the same tables,
    and a total among the cells a certificate can quote. The free cells' matrix is
    sorted by component, then row, so that each component is one block of it.
    """
    system = reduced.system
    by_free = reduced.free_matrix
    count = np.diff(by_free.indptr)
    row = np.repeat(np.arange(len(count)), count)
    component = reduced.component[by_free.indices]
    has = np.flatnonzero(count > 0)
    single = np.zeros(len(count), dtype=bool)
    single[has] = np.minimum.reduceat(component, by_free.indptr[has]) == np.maximum.reduceat(
        component, by_free.indptr[has]
    )
    chosen = reduced.kept | ~system.exact | (implied & single)
    sizes = np.bincount(reduced.component)
    wanted = np.zeros(len(sizes), dtype=bool)
    wanted[component[members[row]]] = True
    pick = chosen[row] & wanted[component]
    row, component, column = row[pick], component[pick], by_free.indices[pick]
    if len(row) == 0:
        return []
    order = np.lexsort((row, component))  # stable: the columns stay ascending in a row
    row, component, column = row[order], component[order], column[order]
    by_component = np.argsort(reduced.component, kind="stable")
    local = np.empty(len(by_component), dtype=np.int64)
    first_column = np.searchsorted(reduced.component[by_component], reduced.component)
    local[by_component] = np.arange(len(by_component))
    local -= first_column
    new_row = np.flatnonzero(np.diff(row, prepend=-1) | np.diff(component, prepend=-1))
    keys, starts = np.unique(component[new_row], return_index=True)
    ends = [*starts[1:], len(new_row)]
    row_ends = np.append(new_row[1:], len(row))
    exact = system.exact
    blocks = []
    for key, r0, r1 in zip(keys, starts, ends, strict=True):
        mine = row[new_row[r0:r1]]
        indptr = np.append(new_row[r0:r1], row_ends[r1 - 1]) - new_row[r0]
        entries = slice(new_row[r0], row_ends[r1 - 1])
        matrix = sparse.csr_matrix(
            (np.ones(len(column[entries])), local[column[entries]], indptr),
            shape=(r1 - r0, sizes[key]),
        )
        split = ~exact[mine] & ~single[mine]
        blocks.append(
            _Block(
                matrix=matrix,
                rows=mine,
                low=np.where(split, -math.inf, low[mine]),
                high=np.where(split, math.inf, high[mine]),
                exact=exact[mine],
                members=np.flatnonzero(members[mine]),
                integer=system.integer,
                label=system.label(int(mine[0])),
                component=int(key),
            )
        )
    return blocks


def _solve_all(blocks: Sequence[_Block], workers: int) -> list[list[tuple[float, float, str]]]:
    """:func:`_settle` of every block, in ``workers`` processes (the largest sent first),
    in the blocks' order."""
    if workers <= 1 or len(blocks) < 2:
        return [_settle(block) for block in blocks]
    largest = sorted(range(len(blocks)), key=lambda k: -blocks[k].matrix.nnz)
    context = multiprocessing.get_context("spawn")  # HiGHS's threads do not survive fork
    with ProcessPoolExecutor(min(workers, len(blocks)), mp_context=context) as pool:
        found = dict(zip(largest, pool.map(_settle, [blocks[k] for k in largest]), strict=True))
    return [found[k] for k in range(len(blocks))]


def _settle(block: _Block) -> list[tuple[float, float, str]]:
    """Per member of ``block``: its bounds less the fixed cells it sums, and the method."""
    model = _Component(block)
    model.settle(block.members)
    return [model.interval(int(member)) for member in block.members]


_QUIET: list[bool] = []


def highs() -> Any:
    """A HiGHS instance; the first one of a process prints HiGHS's banner to file
    descriptor 1, which is closed for it (standard output may carry a JSON report)."""
    import highspy

    if _QUIET:
        return highspy.Highs()  # type: ignore[no-untyped-call]
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = highspy.Highs()  # type: ignore[no-untyped-call]
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    _QUIET.append(True)
    return h


def program(
    matrix: sparse.spmatrix,
    row_lower: NDArray[np.float64],
    row_upper: NDArray[np.float64],
    cost: NDArray[np.float64],
    *,
    integer: int = 0,
    options: dict[str, Any] | None = None,
) -> Any:
    """A quiet HiGHS instance (:func:`highs`) holding the program ``min cost @ x`` over
    ``x >= 0`` with ``row_lower <= matrix @ x <= row_upper`` (bounds not finite are
    HiGHS's infinity); the first ``integer`` columns take whole numbers.

    Parameters
    ----------
    matrix : scipy.sparse matrix
        The rows' coefficients, one column per variable.
    row_lower, row_upper : numpy.ndarray
        Each row's bounds.
    cost : numpy.ndarray
        The objective's coefficients, one per column.
    integer : int
        How many of the first columns are integer variables.
    options : dict, optional
        HiGHS options set before the model is passed (``output_flag`` is off).

    Returns
    -------
    highspy.Highs
    """
    import highspy

    a = sparse.csc_matrix(matrix)
    rows, columns = a.shape
    inf = highspy.kHighsInf
    h = highs()
    for name, value in {"output_flag": False, **(options or {})}.items():
        h.setOptionValue(name, value)
    lp = highspy.HighsLp()
    lp.num_col_ = columns
    lp.num_row_ = rows
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.zeros(columns)
    lp.col_upper_ = np.full(columns, inf)
    lp.row_lower_ = np.where(np.isfinite(row_lower), row_lower, -inf)
    lp.row_upper_ = np.where(np.isfinite(row_upper), row_upper, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr
    lp.a_matrix_.index_ = a.indices
    lp.a_matrix_.value_ = a.data
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * integer + [
            highspy.HighsVarType.kContinuous
        ] * (columns - integer)
    h.passModel(lp)
    return h


class _Component:
    """One connected component's linear program, its objective changed per cell."""

    def __init__(self, block: _Block) -> None:
        self.block = block
        self.by_row = block.matrix
        self.sub = self.by_row.tocsc()
        self.by_column = sparse.csr_matrix(self.by_row.T)
        self.low, self.high = block.low, block.high
        self.integer = block.integer
        self.exact = block.exact
        n = self.by_row.shape[1]
        options = {"presolve": "off", "simplex_strategy": 4}
        h = program(self.sub, self.low, self.high, np.zeros(n), options=options)
        self.h = h
        self.seen_low = np.full(len(self.low), math.inf)
        self.seen_high = np.full(len(self.low), -math.inf)
        self.whole_low = np.full(len(self.low), math.inf)
        self.whole_high = np.full(len(self.low), -math.inf)
        self.targets = ~self.exact
        self.cost = np.zeros(n)
        self._solve(np.zeros(n))  # feasibility, and a first point
        self.start = h.getBasis()
        self.bounds: dict[int, tuple[float, float]] = {}

    def _columns(self, member: int) -> NDArray[np.int64]:
        """The model's columns summed by its row ``member``."""
        indptr = self.by_row.indptr
        return np.asarray(self.by_row.indices[indptr[member] : indptr[member + 1]], np.int64)

    def _solve(self, cost: NDArray[np.float64]) -> tuple[float, Any]:
        """Minimise ``cost @ x``; record what the solution shows of every unpublished row
        (and, where it is in whole numbers, what a whole-number table shows)."""
        import highspy

        h = self.h
        changed = np.flatnonzero(cost != self.cost)
        if len(changed):
            h.changeColsCost(len(changed), changed, cost[changed])
            self.cost = cost.copy()
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            raise InputError(
                f"{self.block.label}: no table of non-negative cells agrees with every "
                "published cell around it; the tables contradict each other"
            )
        solution = h.getSolution()
        values = np.asarray(solution.col_value)
        sums = self.by_row @ values
        np.minimum(self.seen_low, np.where(self.targets, sums, math.inf), out=self.seen_low)
        np.maximum(self.seen_high, np.where(self.targets, sums, -math.inf), out=self.seen_high)
        if self.integer and np.all(np.abs(values - np.round(values)) <= TOLERANCE):
            np.minimum(self.whole_low, np.where(self.targets, sums, math.inf), out=self.whole_low)
            np.maximum(
                self.whole_high, np.where(self.targets, sums, -math.inf), out=self.whole_high
            )
        if status in (
            highspy.HighsModelStatus.kUnbounded,
            highspy.HighsModelStatus.kUnboundedOrInfeasible,  # feasible: the first solve
        ):
            return -math.inf, solution  # no published cell bounds the cells above
        return float(h.getInfo().objective_function_value), solution

    def _objective(self, members: NDArray[np.int64], sign: float) -> NDArray[np.float64]:
        """``sign`` times the sum of the model rows ``members``, as column costs."""
        weights = np.zeros(self.by_row.shape[0])
        weights[members] = sign
        return np.asarray(self.by_column @ weights, dtype=float)

    def settle(self, members: NDArray[np.int64]) -> None:
        """The interval of each of ``members`` (model rows of unpublished cells).

        A bound is solved only when no solution seen attains its trivial value. First
        the undecided cells are pushed all together (one objective summing them) for as
        long as that decides some; then each remaining cell is solved alone.
        """
        low = np.maximum(0.0, self.low[members])
        high = np.minimum(self.high[members], self._fill_bounds(members))
        lower = np.full(len(members), np.nan)
        upper = np.full(len(members), np.nan)
        for sign, bound, trivial, seen in (
            (1.0, lower, low, self.seen_low),
            (-1.0, upper, high, self.seen_high),
        ):
            undecided = np.abs(seen[members] - trivial) > TOLERANCE
            while undecided.sum() > 1:
                self._solve(self._objective(members[undecided], sign))
                still = undecided & (np.abs(seen[members] - trivial) > TOLERANCE)
                if still.sum() == undecided.sum():
                    break
                undecided = still
            bound[~undecided] = trivial[~undecided]
            for k in np.flatnonzero(undecided):
                if abs(seen[members[k]] - trivial[k]) <= TOLERANCE:
                    bound[k] = trivial[k]
                else:
                    value, _ = self._solve(self._objective(members[k : k + 1], sign))
                    bound[k] = value * sign
        for position, member in enumerate(members.tolist()):
            self.bounds[member] = (float(lower[position]), float(upper[position]))

    def interval(self, member: int) -> tuple[float, float, str]:
        """The cell's bounds (after :meth:`settle`; whole numbers for counts) less the
        fixed cells it sums, and how they were found."""
        lower, upper = self.bounds[member]
        method = "lp"
        if self.integer:
            lower, upper, tightened = self._whole(member, lower, upper)
            method = "integer" if tightened else method
        return lower, upper, method

    def _fill_bounds(self, members: NDArray[np.int64]) -> NDArray[np.float64]:
        """Per member row, the smallest residual of a published row holding every one of
        its columns: the cell cannot exceed it (the row's other cells are not negative)."""
        exact = sparse.csr_matrix(self.by_row[self.exact])
        residual = self.low[self.exact]
        single = np.diff(self.by_row.indptr)[members] == 1
        bounds = np.full(len(members), math.inf)
        if len(residual):
            by_column = exact.tocsc()
            column_bound = np.full(by_column.shape[1], math.inf)
            counts = np.diff(by_column.indptr)
            has = counts > 0
            starts = by_column.indptr[:-1][has]
            column_bound[has] = np.minimum.reduceat(residual[by_column.indices], starts)
            first = self.by_row.indices[self.by_row.indptr[members[single]]]
            bounds[single] = column_bound[first]
            for k in np.flatnonzero(~single):
                columns = self._columns(int(members[k]))
                holds = np.asarray(exact[:, columns].sum(axis=1)).ravel() == len(columns)
                if holds.any():
                    bounds[k] = float(residual[holds].min())
        return bounds

    def _whole(self, member: int, lower: float, upper: float) -> tuple[float, float, bool]:
        """Counts: the bounds rounded inwards, and the integer program where the LP bound
        was fractional (the integer bound can be tighter still) and no whole-number
        solution seen attains the bound rounded."""
        fractional = [
            sign
            for sign, bound in ((1.0, lower), (-1.0, upper))
            if math.isfinite(bound) and abs(bound - round(bound)) > TOLERANCE
        ]
        lower = float(math.ceil(lower - TOLERANCE))
        upper = float(math.floor(upper + TOLERANCE)) if math.isfinite(upper) else upper
        if not fractional:
            return lower, upper, False
        attained = {
            1.0: self.whole_low[member] <= lower + TOLERANCE,
            -1.0: self.whole_high[member] >= upper - TOLERANCE,
        }
        unsettled = [sign for sign in fractional if not attained[sign]]
        if not unsettled:
            return lower, upper, True
        import highspy

        h = self.h
        n = self.by_row.shape[1]
        h.changeColsIntegrality(n, np.arange(n), np.full(n, highspy.HighsVarType.kInteger))
        try:
            for sign in unsettled:
                cost = np.zeros(n)
                cost[self._columns(member)] = sign
                value, _ = self._solve(cost)
                if sign > 0:
                    lower = max(lower, float(round(value)))
                else:
                    upper = min(upper, float(round(-value)))
        finally:
            h.changeColsIntegrality(n, np.arange(n), np.full(n, highspy.HighsVarType.kContinuous))
        return lower, upper, True

    def dual(self, member: int, sign: float) -> NDArray[np.float64]:
        """The row duals (over the block's rows) of the LP bound of ``sign`` times the
        cell of model row ``member``, solved from the model's first basis."""
        self.h.clearSolver()
        self.h.setBasis(self.start)
        _, solution = self._solve(self._objective(np.asarray([member]), sign))
        return np.asarray(solution.row_dual)


def _with_proofs(
    reduced: Reduced,
    found: Interval,
    duals: dict[tuple[int, float], list[tuple[NDArray[np.int64], NDArray[np.float64]]]],
) -> Interval:
    """``found`` with a certificate of each finite bound: from the duals of its parts in
    their components (``duals[row, sign]``: the rows of each and their duals), or from
    the pencil arithmetic alone."""
    proofs = []
    for sense, sign, bound in (("lower", 1.0, found.lower), ("upper", -1.0, found.upper)):
        if not math.isfinite(bound):
            continue
        pieces = duals.get((found.row, sign), [])
        rows = np.concatenate([r for r, _ in pieces] or [np.zeros(0, dtype=np.int64)])
        values = np.concatenate([d for _, d in pieces] or [np.zeros(0)])
        used, at = np.unique(rows, return_inverse=True)
        combination = np.zeros(len(used))
        np.add.at(combination, at, values)
        certificate = _certificate(reduced, found.row, sense, sign, used, combination)  # type: ignore[arg-type]
        if certificate is not None:
            proofs.append(certificate)
    return replace(found, proofs=tuple(proofs))


def _spread(
    matrix: sparse.csr_matrix,
    rows: NDArray[np.int64],
    weights: NDArray[np.float64],
    into: NDArray[np.float64],
) -> NDArray[np.int64]:
    """Add to ``into``, per cube cell, the weights of the rows ``rows`` (ascending)
    holding it, in row order (``into += matrix.T @ weights`` on those cells); the cells,
    with repeats."""
    sub = matrix[rows]
    np.add.at(into, sub.indices, np.repeat(weights, np.diff(sub.indptr)))
    return np.asarray(sub.indices, dtype=np.int64)


def _fresh(
    cells: NDArray[np.int64], visited: NDArray[np.bool_], stamp: NDArray[np.int64]
) -> NDArray[np.int64]:
    """The cells not ``visited`` yet, each once, then marked visited (``stamp``: scratch
    of the cube's size, to keep one of each without sorting)."""
    fresh = cells[~visited[cells]]
    order = np.arange(len(fresh))
    stamp[fresh] = order
    fresh = fresh[stamp[fresh] == order]
    visited[fresh] = True
    return np.asarray(fresh, dtype=np.int64)


def _certificate(
    reduced: Reduced,
    row: int,
    sense: Sense,
    sign: float,
    rows: NDArray[np.int64],
    duals: NDArray[np.float64],
) -> Certificate | None:
    """Complete the LP duals (``duals`` of the system rows ``rows``, ascending) into a
    combination of published rows that proves the bound, and check it: ``sign * cell >=
    sum(coef * bound)`` holds when every cube cell's combined coefficient is at most its
    coefficient in ``sign * cell`` (cells are not negative). ``None`` when the check
    fails. Only the cells and rows the combination touches are visited."""
    system = reduced.system
    a = system.matrix
    own = a.indices[a.indptr[row] : a.indptr[row + 1]]
    target = np.zeros(a.shape[1])
    target[own] = sign
    coefficients = np.zeros(a.shape[0])
    coefficients[rows] = duals
    combined = np.zeros(a.shape[1])
    change_sums = np.zeros(a.shape[1])
    visited = np.zeros(a.shape[1], dtype=bool)
    stamp = np.zeros(a.shape[1], dtype=np.int64)
    cells = _fresh(np.concatenate([_spread(a, rows, duals, combined), own]), visited, stamp)
    used = [rows]
    # Undo the pencil arithmetic round by round, the last first: a cell the combination
    # still counts (a gap to its coefficient in the target) is replaced by the row that
    # fixed it. A row that fixed one cell takes its gap exactly; a row whose cells were
    # fixed to 0 together is needed only for a positive gap, its largest.
    last = int(reduced.batch.max(initial=-1)) + 1
    while True:
        fixed = cells[(reduced.batch[cells] >= 0) & (reduced.batch[cells] < last)]
        gap = combined[fixed] - target[fixed]
        zero = reduced.zero_row[fixed]
        needed = np.where(zero, gap > TOLERANCE, np.abs(gap) > TOLERANCE)
        if not needed.any():
            break
        last = int(reduced.batch[fixed[needed]].max())
        needed &= reduced.batch[fixed] == last
        by = reduced.fixed_by[fixed]
        changed = np.unique(by[needed])
        change = np.zeros(len(changed))
        eq = needed & ~zero
        np.add.at(change, np.searchsorted(changed, by[eq]), gap[eq])
        largest = np.zeros(len(changed))
        np.maximum.at(largest, np.searchsorted(changed, by[needed & zero]), gap[needed & zero])
        change += largest
        coefficients[changed] -= change
        touched = _spread(a, changed, change, change_sums)
        combined[touched] -= change_sums[touched]
        change_sums[touched] = 0.0
        cells = np.concatenate([cells, _fresh(touched, visited, stamp)])
        used.append(changed)
    involved = np.unique(np.concatenate(used))
    weights = coefficients[involved]
    scale = max(1.0, float(np.abs(weights).max(initial=0.0)))
    if (combined[cells] > target[cells] + 1e-6 * scale).any():
        return None
    # a marker row used at a lower end of 0 says only that its cells are not negative
    # (which the proof says of every cell): left out
    said = (weights > 1e-9) & ~system.exact[involved] & (system.lower[involved] == 0)
    keep = (np.abs(weights) > 1e-9) & ~said
    involved, weights = involved[keep], weights[keep]
    sides = np.where(weights > 0, system.lower[involved], system.upper[involved])
    if not np.isfinite(sides).all():
        return None
    bound = float(weights @ sides) * sign
    terms = tuple(
        (int(r), float(c) * sign, float(v))
        for r, c, v in zip(involved, weights, sides, strict=True)
    )
    return Certificate(sense, bound, terms, system.integer)


def fraction(value: float) -> str:
    """A coefficient as a person writes it: ``1``, ``-1``, ``1/2``."""
    return str(Fraction(value).limit_denominator(1000))


def describe(reduced: Reduced, certificate: Certificate, *, show_values: bool) -> str:
    """The certificate as a sentence: ``cell >= 1 x [t: a=1, Total] (15) - 1 x [...]
    (10) = 5, every other cell being >= 0``; published values only with ``show_values``."""
    system = reduced.system
    parts = []
    for row, coefficient, value in sorted(certificate.terms, key=lambda term: -term[1]):
        shown = system.shown(row)
        if system.exact[row]:
            quoted = f" ({shown})" if show_values else ""
        else:  # a marker or a rounded cell: the end of its interval the proof uses
            towards = coefficient if certificate.sense == "lower" else -coefficient
            end = "at least" if towards > 0 else "at most"
            quoted = f" ({shown}: {end} {value:g})" if show_values else f" ({end} its bound)"
        sign = "-" if coefficient < 0 else "+"
        size = fraction(abs(coefficient))
        times = "" if size == "1" else f"{size} x "
        parts.append(f"{sign} {times}[{system.label(row)}]{quoted}")
    relation = ">=" if certificate.sense == "lower" else "<="
    if not parts:
        return f"{relation} 0: cells are not negative"
    text = " ".join(parts).removeprefix("+ ")
    bound = f" = {certificate.bound:g}" if show_values else ""
    whole = ", and counts are whole numbers" if certificate.whole else ""
    return f"{relation} {text}{bound}, every other cell being >= 0{whole}"
