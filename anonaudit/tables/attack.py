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
fills has that as its maximum.

**Certificates.** A bound comes with the combination of published cells that proves it
(linear-programming duality): ``cell >= sum of y_r * published_r`` because the combined
rows leave every other cell with a coefficient that can only lower the sum, and cells
are never negative. The combination is rebuilt in the original published cells (the
rows the pencil arithmetic used included), checked exactly against the rows before it is
printed, and shown as ``row total 15 - 10 - 3 = 2``.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from anonaudit.errors import InputError
from anonaudit.tables.system import TOLERANCE, Reduced

__all__ = ["Certificate", "Interval", "attack"]

Sense = Literal["lower", "upper"]


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
    """

    row: int
    lower: float
    upper: float
    method: str
    proofs: tuple[Certificate, ...] = ()

    @property
    def width(self) -> float:
        """``upper - lower``: 0 is exact disclosure."""
        return self.upper - self.lower


def attack(
    reduced: Reduced,
    *,
    prove: Callable[[int, float, float], bool] = lambda row, lower, upper: lower == upper,
) -> list[Interval]:
    """The interval of every cell not published as it is, certified where ``prove`` says.

    Parameters
    ----------
    reduced : Reduced
        The system after the pencil arithmetic.
    prove : callable
        ``prove(row, lower, upper)``: whether to certify this cell's bounds (by default
        the exact disclosures).

    Returns
    -------
    list of Interval
        One per unpublished cell, in row order.

    Raises
    ------
    InputError
        The publication is infeasible: no non-negative table agrees with it.
    """
    system = reduced.system
    a = system.matrix
    low, high = reduced.residual()
    targets = np.flatnonzero(~system.exact)
    free_position = np.full(a.shape[1], -1, dtype=np.int64)
    free_position[reduced.free] = np.arange(len(reduced.free))
    known = np.nan_to_num(reduced.value, nan=0.0)
    fixed_part = a @ known
    result: dict[int, Interval] = {}
    by_component: dict[int, list[int]] = {}
    for row in targets:
        cells = a.indices[a.indptr[row] : a.indptr[row + 1]]
        positions = free_position[cells]
        positions = positions[positions >= 0]
        if len(positions) == 0:
            value = float(fixed_part[row])
            result[int(row)] = Interval(int(row), value, value, "arithmetic")
        else:
            by_component.setdefault(int(reduced.component[positions[0]]), []).append(int(row))
    for component, members in sorted(by_component.items()):
        model = _Component(reduced, component, low, high, fixed_part)
        model.settle(members)
        for member in members:
            result[member] = model.interval(member)
    intervals = []
    for row in targets:
        found = result[int(row)]
        if prove(found.row, found.lower, found.upper):
            found = _with_proofs(reduced, found, low, high, fixed_part)
        intervals.append(found)
    return intervals


_QUIET: list[bool] = []


def _highs() -> Any:
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


class _Component:
    """One connected component's linear program, its objective changed per cell."""

    def __init__(
        self,
        reduced: Reduced,
        component: int,
        low: NDArray[np.float64],
        high: NDArray[np.float64],
        fixed_part: NDArray[np.float64],
    ) -> None:
        import highspy

        system = reduced.system
        self.reduced = reduced
        self.cells = reduced.free[reduced.component == component]
        sub = system.matrix[:, self.cells].tocsr()
        self.rows = np.flatnonzero(np.diff(sub.indptr) > 0)
        self.by_row = sub[self.rows]
        self.sub = self.by_row.tocsc()
        self.low, self.high = low[self.rows], high[self.rows]
        self.fixed_part = fixed_part
        self.integer = system.integer
        self.exact = system.exact[self.rows]
        h = _highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("presolve", "off")
        h.setOptionValue("simplex_strategy", 4)
        inf = highspy.kHighsInf
        n = len(self.cells)
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = len(self.rows)
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.full(n, inf)
        lp.row_lower_ = np.where(np.isfinite(self.low), self.low, -inf)
        lp.row_upper_ = np.where(np.isfinite(self.high), self.high, inf)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = self.sub.indptr
        lp.a_matrix_.index_ = self.sub.indices
        lp.a_matrix_.value_ = self.sub.data
        h.passModel(lp)
        self.h = h
        self.row_of = {int(r): i for i, r in enumerate(self.rows)}
        self.seen_low = np.full(len(self.rows), math.inf)
        self.seen_high = np.full(len(self.rows), -math.inf)
        self.targets = ~self.exact
        self.cost = np.zeros(n)
        self._solve(np.zeros(n))  # feasibility, and a first point
        self.bounds: dict[int, tuple[float, float]] = {}

    def _columns(self, row: int) -> NDArray[np.int64]:
        """The model's columns summed by ``row``."""
        i = self.row_of[row]
        return np.asarray(
            self.by_row.indices[self.by_row.indptr[i] : self.by_row.indptr[i + 1]], dtype=np.int64
        )

    def _solve(self, cost: NDArray[np.float64]) -> tuple[float, Any]:
        """Minimise ``cost @ x``; record what the solution shows of every unpublished row."""
        import highspy

        h = self.h
        changed = np.flatnonzero(cost != self.cost)
        if len(changed):
            h.changeColsCost(len(changed), changed, cost[changed])
            self.cost = cost.copy()
        h.run()
        if h.getModelStatus() == highspy.HighsModelStatus.kInfeasible:
            row = int(self.rows[0])
            raise InputError(
                f"{self.reduced.system.label(row)}: no table of non-negative cells agrees "
                "with every published cell around it; the tables contradict each other"
            )
        solution = h.getSolution()
        sums = self.by_row @ np.asarray(solution.col_value)
        np.minimum(self.seen_low, np.where(self.targets, sums, math.inf), out=self.seen_low)
        np.maximum(self.seen_high, np.where(self.targets, sums, -math.inf), out=self.seen_high)
        return float(h.getInfo().objective_function_value), solution

    def _objective(self, rows: NDArray[np.int64], sign: float) -> NDArray[np.float64]:
        """``sign`` times the sum of the model rows ``rows``, as column costs."""
        weights = np.zeros(len(self.rows))
        weights[rows] = sign
        return np.asarray(self.by_row.T @ weights, dtype=float)

    def settle(self, rows: list[int]) -> None:
        """The interval of each of ``rows`` (system rows of unpublished cells).

        A bound is solved only when no solution seen attains its trivial value. First
        the undecided cells are pushed all together (one objective summing them) for as
        long as that decides some; then each remaining cell is solved alone.
        """
        members = np.asarray([self.row_of[r] for r in rows], dtype=np.int64)
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
        for position, row in enumerate(rows):
            self.bounds[row] = (float(lower[position]), float(upper[position]))

    def interval(self, row: int) -> Interval:
        """The cell's interval (after :meth:`settle`), whole numbers for counts."""
        columns = self._columns(row)
        fixed = float(self.fixed_part[row])
        lower, upper = self.bounds[row]
        method = "lp"
        if self.integer:
            lower, upper, tightened = self._whole(columns, lower, upper)
            method = "integer" if tightened else method
        return Interval(row, lower + fixed, upper + fixed, method)

    def _fill_bounds(self, members: NDArray[np.int64]) -> NDArray[np.float64]:
        """Per member row, the smallest residual of a published row holding every one of
        its columns: the cell cannot exceed it (the row's other cells are not negative)."""
        exact = sparse.csr_matrix(self.by_row[self.exact])
        residual = self.low[self.exact]
        single = np.asarray(self.by_row[members].sum(axis=1)).ravel() == 1
        bounds = np.full(len(members), math.inf)
        if len(residual):
            by_column = exact.tocsc()
            column_bound = np.full(by_column.shape[1], math.inf)
            counts = np.diff(by_column.indptr)
            has = counts > 0
            starts = by_column.indptr[:-1][has]
            column_bound[has] = np.minimum.reduceat(residual[by_column.indices], starts)
            for k in np.flatnonzero(single):
                bounds[k] = column_bound[self._columns(int(self.rows[members[k]]))[0]]
            for k in np.flatnonzero(~single):
                columns = self._columns(int(self.rows[members[k]]))
                holds = np.asarray(exact[:, columns].sum(axis=1)).ravel() == len(columns)
                if holds.any():
                    bounds[k] = float(residual[holds].min())
        return bounds

    def _whole(
        self, columns: NDArray[np.int64], lower: float, upper: float
    ) -> tuple[float, float, bool]:
        """Counts: the bounds rounded inwards, and the integer program where the LP bound
        was fractional (the integer bound can be tighter still)."""
        fractional = [
            (sign, bound)
            for sign, bound in ((1.0, lower), (-1.0, upper))
            if math.isfinite(bound) and abs(bound - round(bound)) > TOLERANCE
        ]
        lower = float(math.ceil(lower - TOLERANCE))
        upper = float(math.floor(upper + TOLERANCE)) if math.isfinite(upper) else upper
        if not fractional:
            return lower, upper, False
        import highspy

        h = self.h
        n = len(self.cells)
        h.changeColsIntegrality(n, np.arange(n), np.full(n, highspy.HighsVarType.kInteger))
        try:
            for sign, _ in fractional:
                cost = np.zeros(n)
                cost[columns] = sign
                value, _ = self._solve(cost)
                if sign > 0:
                    lower = max(lower, float(round(value)))
                else:
                    upper = min(upper, float(round(-value)))
        finally:
            h.changeColsIntegrality(n, np.arange(n), np.full(n, highspy.HighsVarType.kContinuous))
        return lower, upper, True

    def dual(self, row: int, sign: float) -> tuple[float, NDArray[np.float64]]:
        """The LP bound of ``sign * cell`` and its row duals (over ``self.rows``)."""
        value, solution = self._solve(self._objective(np.asarray([self.row_of[row]]), sign))
        return value, np.asarray(solution.row_dual)


def _with_proofs(
    reduced: Reduced,
    found: Interval,
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    fixed_part: NDArray[np.float64],
) -> Interval:
    """``found`` with a certificate of each finite bound."""
    system = reduced.system
    a = system.matrix
    cells = a.indices[a.indptr[found.row] : a.indptr[found.row + 1]]
    free = np.isin(cells, reduced.free)
    component = None
    if free.any():
        position = int(np.searchsorted(reduced.free, cells[free][0]))
        component = _Component(reduced, int(reduced.component[position]), low, high, fixed_part)
    proofs = []
    for sense, sign, bound in (("lower", 1.0, found.lower), ("upper", -1.0, found.upper)):
        if not math.isfinite(bound):
            continue
        coefficients = np.zeros(a.shape[0])
        if component is not None:
            _, dual = component.dual(found.row, sign)
            coefficients[component.rows] = dual
        certificate = _certificate(reduced, found.row, sense, sign, coefficients)  # type: ignore[arg-type]
        if certificate is not None:
            proofs.append(certificate)
    return Interval(found.row, found.lower, found.upper, found.method, tuple(proofs))


def _certificate(
    reduced: Reduced,
    row: int,
    sense: Sense,
    sign: float,
    coefficients: NDArray[np.float64],
) -> Certificate | None:
    """Complete the LP duals into a combination of published rows that proves the bound,
    and check it: ``sign * cell >= sum(coef * bound)`` holds when every cube cell's
    combined coefficient is at most its coefficient in ``sign * cell`` (cells are not
    negative). ``None`` when the check fails."""
    system = reduced.system
    a = system.matrix
    target = np.zeros(a.shape[1])
    target[a.indices[a.indptr[row] : a.indptr[row + 1]]] = sign
    combined = np.asarray(a.T @ coefficients).ravel()
    # Undo the pencil arithmetic round by round, the last first: a cell the combination
    # still counts (a gap to its coefficient in the target) is replaced by the row that
    # fixed it. A row that fixed one cell takes its gap exactly; a row whose cells were
    # fixed to 0 together is needed only for a positive gap, its largest.
    rounds = reduced.batch[reduced.order]
    for number in range(int(rounds.max(initial=-1)), -1, -1):
        cells = reduced.order[rounds == number]
        gap = combined[cells] - target[cells]
        zero = reduced.zero_row[cells]
        needed = np.where(zero, gap > TOLERANCE, np.abs(gap) > TOLERANCE)
        if not needed.any():
            continue
        change = np.zeros(a.shape[0])
        eq = needed & ~zero
        np.add.at(change, reduced.fixed_by[cells[eq]], gap[eq])
        largest = np.zeros(a.shape[0])
        np.maximum.at(largest, reduced.fixed_by[cells[needed & zero]], gap[needed & zero])
        change += largest
        coefficients -= change
        combined -= np.asarray(a.T @ change).ravel()
    scale = max(1.0, float(np.abs(coefficients).max(initial=0.0)))
    if (combined > target + 1e-6 * scale).any():
        return None
    # a marker row used at a lower end of 0 says only that its cells are not negative
    # (which the proof says of every cell): left out
    said = (coefficients > 1e-9) & ~system.exact & (system.lower == 0)
    used = np.flatnonzero((np.abs(coefficients) > 1e-9) & ~said)
    sides = np.where(coefficients[used] > 0, system.lower[used], system.upper[used])
    if not np.isfinite(sides).all():
        return None
    bound = float(coefficients[used] @ sides) * sign
    terms = tuple(
        (int(r), float(c) * sign, float(v))
        for r, c, v in zip(used, coefficients[used], sides, strict=True)
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
