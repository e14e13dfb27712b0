"""Reconstruction: how many people a set of published tables gives back, proved.

Tables of counts published for small groups (a census block, a ward, a site) are often
enough to rebuild every record of a group: the counts over the full cross-classification
of the published dimensions (the *cube* of :mod:`anonaudit.tables.system`), of which each
published cell is a sum. Dinur & Nissim (2003, "Revealing information while preserving
privacy", PODS) showed that too many accurate sums give a database back; the US Census
Bureau rebuilt its 2010 census microdata (block, sex, age, race, ethnicity) from the
published tables and confirmed every record of 70% of blocks (Abowd et al. 2023, "The
2010 Census confidentiality protections failed, here's how and why", NBER working paper
31995). This module asks that question of any set of published count tables.

**Per group.** Each code of the grouping dimension is solved on its own: its cells of
every table are rows over its cube (:func:`~anonaudit.tables.system.build`), and every
cube cell is made a target of the attacker (:func:`~anonaudit.tables.attack.attack`):
the smallest and largest value the cell takes over every non-negative table agreeing
with every published cell. A cell whose minimum equals its maximum is *forced*. The
bounds are linear-programming bounds rounded inwards, tightened by the integer program
where they were fractional: an interval of width 0 is a proof of uniqueness (the
integer solutions lie inside the linear ones), and a group all of whose cells are forced
is **reconstructed**, its one solution checked against every published cell. A width
above 0 may overstate the integer freedom; so, for small groups, the integer tables are
also counted by enumeration (at most ``count_budget`` partial tables visited), which
gives the exact integer bounds, the number of solutions and a posterior per record.

**Rates and their baseline.** Per group and overall: groups reconstructed; records in
forced cells; records unique in the reconstruction (a forced cell of 1: that person's
every published attribute is known); with a ``sensitive`` dimension, records whose
sensitive value is known (every record of their combination of the other dimensions
lies in one category). Ruggles & Van Riper (2021, "The role of chance in the Census
Bureau database reconstruction experiment", *Population Research and Policy Review*
41) showed that a raw match rate overstates such an attack: a reconstruction drawn at
random from the published margins also matches many records. So each rate is set
beside its **chance baseline**: records drawn at random with the group's one-way margins
(each dimension's codes shuffled independently, ``draws`` times with a fixed ``seed``),
scored on what the attack proves (a forced cell's records the draw also puts there).

Deterministic: the same tables and seed give the same result, with any ``workers``.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from anonaudit.errors import InputError, OptionError, require
from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.tables.attack import attack
from anonaudit.tables.system import TOLERANCE, System, build, reduce

__all__ = [
    "Chance",
    "GroupReconstruction",
    "Rate",
    "Reconstruction",
    "SizeBand",
    "reconstruct",
]

#: How a group's cube intervals were proved.
Method = Literal["linear programming", "enumeration"]

#: Groups with more cells left free by the linear bounds are not counted (the search
#: goes one cell deeper per free cell).
COUNT_CELLS = 200

#: Groups a worker process is sent at a time (in chunks of a quarter of it).
BATCH = 64

#: The group sizes (records) the reports band groups by.
SIZES = (0, 5, 10, 20, 50, 100, 200, 500, 1000)

#: The name of the targets added to every group's tables (one per cube cell, margin and
#: the total): not a table of the publication.
TARGETS = "(reconstruction targets)"


@dataclass(frozen=True)
class Chance:
    """The chance baseline of a group: what a reconstruction drawn at random from its
    one-way margins gets of what the attack proves, averaged over the draws.

    Attributes
    ----------
    reconstructed : float
        The share of draws equal to the group's one reconstruction (0 when the group
        is not reconstructed).
    records_forced : float
        Records of the forced cells the draw puts in their cell.
    records_unique : float
        Forced cells of one record that the draw also makes a cell of one record.
    sensitive_known : float
        Records whose sensitive value the attack knows, given that value by the draw.
    records_right : float or None
        For a counted group, the records of the draw that are real, in expectation
        over every table consistent with the publication (each equally likely).
    """

    reconstructed: float
    records_forced: float
    records_unique: float
    sensitive_known: float
    records_right: float | None


@dataclass(frozen=True)
class GroupReconstruction:
    """What the published tables give back of one group.

    Attributes
    ----------
    group : str
        The group's code (``""`` when every group is solved jointly).
    records : int
        The group's records: its total where published, else the estimate the baseline
        draws (the middle of the total's interval, or its lower end when unbounded).
    lower, upper : array of float
        Per cube cell (the flat C order of :attr:`Reconstruction.shape`), the smallest and
        largest count consistent with the publication; ``upper`` may be ``inf``.
    method : {"linear programming", "enumeration"}
        How the bounds were proved: linear programming (tightened to integers where
        fractional), or enumeration of every integer table (exact).
    solutions : int or None
        The number of integer tables consistent with the publication, when counted (1
        for a reconstructed group); ``None`` when the count was not attempted or gave
        up.
    posterior : array of float or None
        With ``solutions``: per record of the most probable reconstruction (the
        ``records`` cell units most likely real, each table equally likely), the
        probability that the record is real; sorted, largest first.
    sensitive_known : int
        Records whose sensitive value is known (0 without a sensitive dimension).
    chance : Chance
        The baseline.
    """

    group: str
    records: int
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    method: Method
    solutions: int | None
    posterior: NDArray[np.float64] | None
    sensitive_known: int
    chance: Chance

    @property
    def forced(self) -> NDArray[np.bool_]:
        """Cube cells forced to one value."""
        return np.asarray(self.lower == self.upper)

    @property
    def reconstructed(self) -> bool:
        """Whether every cube cell is forced: the group's records are given back (an
        empty group gives nobody back, and is not counted)."""
        return bool(self.forced.all()) and self.records_forced > 0

    @property
    def records_forced(self) -> int:
        """Records in forced cells: their every published attribute is known."""
        return int(self.lower[self.forced].sum())

    @property
    def records_unique(self) -> int:
        """Forced cells of one record: a person alone with their attributes."""
        return int((self.forced & (self.lower == 1)).sum())

    @property
    def records_right(self) -> float | None:
        """The expected number of real records in the most probable reconstruction
        (with :attr:`posterior`)."""
        return None if self.posterior is None else float(self.posterior.sum())


@dataclass(frozen=True)
class Rate:
    """A count the attack proves beside its chance baseline.

    Attributes
    ----------
    key : str
        ``reconstructed``, ``records_forced``, ``records_unique``, ``sensitive_known``
        or ``records_right`` (the fields of :class:`GroupReconstruction`).
    count : float
        What the attack proves, summed over the groups.
    chance : float
        What a random reconstruction gets of it (:class:`Chance`), summed.
    of : int
        What it is a share of: groups (``reconstructed``) or records.
    """

    key: str
    count: float
    chance: float
    of: int

    @property
    def share(self) -> float:
        """``count / of`` (0 of nothing)."""
        return self.count / self.of if self.of else 0.0

    @property
    def chance_share(self) -> float:
        """``chance / of`` (0 of nothing)."""
        return self.chance / self.of if self.of else 0.0


@dataclass(frozen=True)
class SizeBand:
    """Groups of a range of sizes and how many were reconstructed.

    Attributes
    ----------
    low, high : int
        The band's fewest and most records (``high`` ``None``: no limit).
    groups, reconstructed : int
        Its groups, and those reconstructed.
    records, records_forced : int
        Their records, and those in forced cells.
    """

    low: int
    high: int | None
    groups: int
    reconstructed: int
    records: int
    records_forced: int


@dataclass(frozen=True)
class Reconstruction:
    """The reconstruction of every group of a publication.

    Attributes
    ----------
    tables : TableSet
        The tables, as given.
    group : str or None
        The grouping dimension (``None``: every group solved jointly).
    sensitive : str or None
        The sensitive dimension, if any.
    dimensions : tuple of str
        The cube's dimensions (the group's excepted), in the order of its axes.
    shape : tuple of int
        Leaves per dimension.
    groups : tuple of GroupReconstruction
        Per group, in the order of the grouping dimension's leaves.
    draws, seed : int
        The baseline's draws per group and its seed.
    """

    tables: TableSet
    group: str | None
    sensitive: str | None
    dimensions: tuple[str, ...]
    shape: tuple[int, ...]
    groups: tuple[GroupReconstruction, ...]
    draws: int
    seed: int

    @cached_property
    def reconstructed(self) -> int:
        """Groups reconstructed."""
        return sum(g.reconstructed for g in self.groups)

    @cached_property
    def records(self) -> int:
        """Records of every group."""
        return sum(g.records for g in self.groups)

    @cached_property
    def counted(self) -> tuple[GroupReconstruction, ...]:
        """The groups whose integer tables were counted."""
        return tuple(g for g in self.groups if g.solutions is not None)

    def rates(self) -> tuple[Rate, ...]:
        """Every rate of the attack beside its chance baseline: groups reconstructed (of
        the groups), records in forced cells, records unique in the reconstruction and,
        with a sensitive dimension, records whose sensitive value is known (of the
        records); for counted groups, the real records of the most probable
        reconstruction (of their records)."""
        groups = self.groups
        rates = [
            Rate("reconstructed", self.reconstructed, _sum(groups, "reconstructed"), len(groups)),
            Rate(
                "records_forced",
                sum(g.records_forced for g in groups),
                _sum(groups, "records_forced"),
                self.records,
            ),
            Rate(
                "records_unique",
                sum(g.records_unique for g in groups),
                _sum(groups, "records_unique"),
                self.records,
            ),
        ]
        if self.sensitive is not None:
            known = sum(g.sensitive_known for g in groups)
            rates.append(
                Rate("sensitive_known", known, _sum(groups, "sensitive_known"), self.records)
            )
        if self.counted:
            right = sum(g.records_right or 0.0 for g in self.counted)
            of = sum(g.records for g in self.counted)
            rates.append(Rate("records_right", right, _sum(self.counted, "records_right"), of))
        return tuple(rates)

    def by_size(self, edges: Sequence[int] = SIZES) -> tuple[SizeBand, ...]:
        """Groups reconstructed by the number of their records: one band per interval
        ``[edges[i], edges[i + 1])`` (the last one unbounded) holding a group."""
        records = np.asarray([g.records for g in self.groups])
        band = np.searchsorted(np.asarray(edges), records, side="right") - 1
        bands = []
        for i, low in enumerate(edges):
            members = [g for g, b in zip(self.groups, band, strict=True) if b == i]
            if members:
                high = edges[i + 1] - 1 if i + 1 < len(edges) else None
                bands.append(
                    SizeBand(
                        low,
                        high,
                        len(members),
                        sum(g.reconstructed for g in members),
                        sum(g.records for g in members),
                        sum(g.records_forced for g in members),
                    )
                )
        return tuple(bands)

    def label(self, cell: int) -> str:
        """A cube cell by its codes: ``sex=F, age=30-34, race=White``."""
        index = np.unravel_index(cell, self.shape)
        dims = self.tables.dimensions
        return ", ".join(
            f"{d}={dims[d].leaves[int(i)]}" for d, i in zip(self.dimensions, index, strict=True)
        )


def _sum(groups: Sequence[GroupReconstruction], field: str) -> float:
    """A :class:`Chance` field summed over ``groups``."""
    return float(sum(getattr(g.chance, field) or 0.0 for g in groups))


def reconstruct(
    tables: TableSet,
    *,
    group: str | None = None,
    sensitive: str | None = None,
    count_budget: int = 20_000,
    draws: int = 20,
    seed: int = 0,
    workers: int = 1,
) -> Reconstruction:
    """Reconstruct every group of a publication of count tables (module docstring).

    Parameters
    ----------
    tables : TableSet
        Count tables of one population.
    group : str, optional
        The grouping dimension: every table must have it; each of its leaves is solved
        on its own, and cells of a code above the leaves (a sum of groups) are not used.
        ``None``: the tables are solved as one group.
    sensitive : str, optional
        A dimension of the cube whose value a reconstructed record gives away.
    count_budget : int
        The partial tables the enumeration may visit per group before it gives up (0:
        never count).
    draws : int
        Random reconstructions per group for the chance baseline.
    seed : int
        The baseline's seed (each group draws from its own stream of it).
    workers : int
        Processes solving groups in parallel (1: in this process).

    Returns
    -------
    Reconstruction

    Raises
    ------
    OptionError
        ``group`` or ``sensitive`` is not a dimension they can be; a budget, a number
        of draws or of workers out of range.
    InputError
        Tables of sums, of several populations, or that contradict each other.

    Examples
    --------
    A table of sex by age whose margins leave one table of counts possible:

    >>> import numpy as np
    >>> from anonaudit.published import Dimension, PublishedTable, TableSet
    >>> cells = [("F", "young", 2), ("F", "old", 0), ("M", "young", 0), ("M", "old", 1)]
    >>> t = PublishedTable(
    ...     "t", "count", ("sex", "age"),
    ...     (np.array([s for s, _, _ in cells]), np.array([a for _, a, _ in cells])),
    ...     np.array([v for *_, v in cells], float), np.array([v for *_, v in cells], float),
    ...     np.full(4, "published"), np.array([str(v) for *_, v in cells]))
    >>> dims = {"sex": Dimension.flat("sex", ["F", "M"]),
    ...         "age": Dimension.flat("age", ["young", "old"])}
    >>> result = reconstruct(TableSet((t,), dims))
    >>> [(r.key, r.count, r.of) for r in result.rates()]  # doctest: +NORMALIZE_WHITESPACE
    [('reconstructed', 1, 1), ('records_forced', 3, 3), ('records_unique', 1, 3),
     ('records_right', 3.0, 3)]
    """
    require(count_budget >= 0, "count_budget", "be 0 or more", count_budget)
    require(draws >= 1, "draws", "be at least 1", draws)
    require(workers >= 1, "workers", "be at least 1", workers)
    _check(tables, group, sensitive)
    names = tuple(d for d in tables.cube_dimensions if d != group)
    dimensions = {d: tables.dimensions[d] for d in names}
    targets = _targets(names, dimensions)
    axis = names.index(sensitive) if sensitive is not None else None
    tasks = (
        _Task(
            code,
            f"{group}={code}: " if group is not None else "",
            TableSet((*part, targets), dimensions),
            index,
            axis,
            count_budget,
            draws,
            seed,
        )
        for index, (code, part) in enumerate(_split(tables, group))
    )
    if workers > 1:
        solved: list[GroupReconstruction] = []
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            # a batch at a time, so that only a batch of groups' tables is held at once
            while batch := list(itertools.islice(tasks, workers * BATCH)):
                solved += pool.map(_solve, batch, chunksize=max(1, BATCH // 4))
    else:
        solved = list(map(_solve, tasks))
    return Reconstruction(
        tables=tables,
        group=group,
        sensitive=sensitive,
        dimensions=names,
        shape=tuple(len(dimensions[d].leaves) for d in names),
        groups=tuple(solved),
        draws=draws,
        seed=seed,
    )


def _check(tables: TableSet, group: str | None, sensitive: str | None) -> None:
    """Refuse what cannot be reconstructed, naming it."""
    if {t.kind for t in tables.tables} - {"count"}:
        raise InputError(
            "reconstruction counts records: every table must be a table of counts "
            "(a table of sums has no records to give back)"
        )
    if len(tables.populations) > 1:
        raise InputError(
            "the tables count several populations; reconstruct the tables of one "
            "population at a time"
        )
    dims = tables.cube_dimensions
    if group is not None:
        if group not in dims:
            raise OptionError(
                "group",
                group,
                says=f"{{label}} {{value}}: no table has that dimension; the dimensions are "
                f"{', '.join(dims)}",
            )
        for table in tables.tables:
            if group not in table.dimensions:
                raise OptionError(
                    "group",
                    group,
                    says=f"{{label}} {{value}}: the table {table.name} has no such dimension "
                    f"(its dimensions are {', '.join(table.dimensions) or 'none'}); every "
                    "table must be split by the group, or leave the group out to solve "
                    "all groups jointly",
                )
    rest = [d for d in dims if d != group]
    if not rest:
        raise InputError(
            "the tables have no dimension but the group: every group is one count, and "
            "there is nothing to reconstruct"
        )
    if sensitive is not None and sensitive not in rest:
        raise OptionError(
            "sensitive",
            sensitive,
            says=f"{{label}} {{value}}: not a dimension of the tables besides the group; "
            f"choose one of {', '.join(rest)}",
        )


def _split(tables: TableSet, group: str | None) -> Iterator[tuple[str, tuple[PublishedTable, ...]]]:
    """Per leaf of ``group`` found in a table, each table's cells of that leaf, without
    the group's dimension; every table as one group when ``group`` is ``None``."""
    if group is None:
        yield "", tables.tables
        return
    leaves = tables.dimensions[group].leaf_index
    parts = []
    for table in tables.tables:
        axis = table.dimensions.index(group)
        code = np.asarray([leaves.get(str(c), -1) for c in table.codes[axis].tolist()])
        order = np.argsort(code, kind="stable")
        bounds = np.searchsorted(code[order], np.arange(len(leaves) + 1))
        parts.append((table, axis, order, bounds))
    for leaf, index in leaves.items():
        if not any(b[index] < b[index + 1] for *_, b in parts):
            continue  # a code of the list no table publishes
        yield (
            leaf,
            tuple(
                _cells(table, axis, order[bounds[index] : bounds[index + 1]])
                for table, axis, order, bounds in parts
            ),
        )


def _cells(table: PublishedTable, axis: int, cells: NDArray[np.int64]) -> PublishedTable:
    """The table's ``cells``, without the dimension ``axis``."""
    keep = [k for k in range(len(table.dimensions)) if k != axis]
    return PublishedTable(
        table.name,
        table.kind,
        tuple(table.dimensions[k] for k in keep),
        tuple(table.codes[k][cells] for k in keep),
        table.lower[cells],
        table.upper[cells],
        table.state[cells],
        table.shown[cells],
        population=table.population,
    )


def _targets(names: Sequence[str], dimensions: dict[str, Dimension]) -> PublishedTable:
    """A table of every cube cell, every one-way margin and the total, each unknown
    (``[0, inf)``): the attacker's interval of each is what the group gives back."""
    dims = [dimensions[d] for d in names]
    totals = tuple(d.total for d in dims)
    combos = list(itertools.product(*(d.leaves for d in dims)))
    if len(dims) > 1:
        combos += [
            (*totals[:k], leaf, *totals[k + 1 :]) for k, d in enumerate(dims) for leaf in d.leaves
        ]
    combos.append(totals)
    n = len(combos)
    return PublishedTable(
        TARGETS,
        "count",
        tuple(names),
        tuple(np.asarray([c[k] for c in combos]) for k in range(len(dims))),
        np.zeros(n),
        np.full(n, math.inf),
        np.full(n, "suppressed"),
        np.full(n, "x"),
    )


@dataclass(frozen=True)
class _Task:
    """One group to solve (sent to a worker process)."""

    code: str
    name: str
    tables: TableSet
    index: int
    sensitive: int | None
    count_budget: int
    draws: int
    seed: int


def _never(row: int, lower: float, upper: float) -> bool:
    return False


def _solve(task: _Task) -> GroupReconstruction:
    """:func:`_group`, an error naming the group."""
    try:
        return _group(task)
    except InputError as error:
        raise InputError(f"{task.name}{error}") from None


def _group(task: _Task) -> GroupReconstruction:
    """Reconstruct one group: every target's interval, the count where small, the
    baseline."""
    system = _system(task.tables)
    targets = len(task.tables.tables) - 1
    lower = np.full(len(system.lower), np.nan)
    upper = np.full(len(system.lower), np.nan)
    for found in attack(reduce(system), prove=_never):
        lower[found.row], upper[found.row] = found.lower, found.upper
    rows = np.flatnonzero(system.table == targets)
    a = system.matrix
    size = a.shape[1]
    cube = rows[:size]
    column = a.indices[a.indptr[cube]]
    low, high = np.empty(size), np.empty(size)
    low[column], high[column] = lower[cube], upper[cube]
    shape = system.shape
    if len(shape) > 1:
        ends = size + np.cumsum([0, *shape])
        by_dimension = [rows[ends[k] : ends[k + 1]] for k in range(len(shape))]
    else:
        by_dimension = [cube]
    total = _estimate(lower[rows[-1]], upper[rows[-1]])
    margins = [
        _apportion([_estimate(lower[r], min(upper[r], total)) for r in margin], total)
        for margin in by_dimension
    ]
    real = system.table != targets
    method: Method = "linear programming"
    solutions: int | None = None
    tail: NDArray[np.float64] | None = None
    if (low == high).all():
        _verify(system, real, low)
        solutions = 1
        tail = _tail_of_one(low)
    elif task.count_budget and np.isfinite(high).all() and (low < high).sum() <= COUNT_CELLS:
        counted = _count(system, real, low, high, task.count_budget)
        if counted is not None:
            solutions, histogram = counted
            present = histogram > 0
            low = np.argmax(present, axis=1).astype(float)
            high = (present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)).astype(float)
            method = "enumeration"
            tail = np.cumsum(histogram[:, ::-1], axis=1)[:, ::-1] / solutions
    posterior = None if tail is None else _posterior(tail)
    known, guess = _sensitive(low, high, shape, task.sensitive)
    rng = np.random.default_rng((task.seed, task.index))
    chance = _chance(
        low, high, shape, margins, (task.sensitive, known, guess), tail, task.draws, rng
    )
    return GroupReconstruction(
        group=task.code,
        records=total,
        lower=low,
        upper=high,
        method=method,
        solutions=solutions,
        posterior=posterior,
        sensitive_known=int(known.sum()),
        chance=chance,
    )


#: The last system built in this process, by the layout of its tables' cells.
_LAST: dict[tuple[object, ...], System] = {}


def _system(tables: TableSet) -> System:
    """:func:`~anonaudit.tables.system.build` of ``tables``, reusing the last system
    built when its tables have the same cells, code for code: the groups of one
    publication usually do, and differ only in the published values, which are put in
    the rows (a row is its table's cell, ``System.table`` and ``System.cell``)."""
    layout = (
        *((d, v.total, *v.parents.items()) for d, v in tables.dimensions.items()),
        *((t.name, t.dimensions, *map(_codes_key, t.codes)) for t in tables.tables),
    )
    template = _LAST.get(layout)
    if template is None:
        template = build(tables)
        _LAST.clear()
        _LAST[layout] = template
    starts = np.cumsum([0, *(len(t) for t in tables.tables)])[template.table] + template.cell
    return replace(
        template,
        tables=tables,
        lower=np.concatenate([t.lower for t in tables.tables])[starts],
        upper=np.concatenate([t.upper for t in tables.tables])[starts],
    )


def _codes_key(codes: NDArray[np.str_]) -> tuple[str, bytes]:
    """A column of codes as a key: equal keys, equal codes."""
    text = np.asarray(codes, dtype=str)
    return text.dtype.str, text.tobytes()


def _estimate(lower: float, upper: float) -> int:
    """A count in ``[lower, upper]``: itself when known, the middle (rounded) when
    bounded, the lower end when not."""
    if not math.isfinite(upper):
        return int(lower)
    return round((lower + upper) / 2)


def _apportion(weights: Sequence[int], total: int) -> NDArray[np.int64]:
    """``total`` shared in proportion to ``weights`` (largest remainders, ties to the
    first): whole counts summing to ``total``."""
    w = np.asarray(weights, dtype=float)
    share = w / w.sum() * total if w.sum() > 0 else np.full(len(w), total / len(w))
    whole: NDArray[np.int64] = np.floor(share).astype(np.int64)
    left = total - int(whole.sum())
    whole[np.argsort(-(share - whole), kind="stable")[:left]] += 1
    return whole


def _verify(system: System, real: NDArray[np.bool_], cube: NDArray[np.float64]) -> None:
    """Check the one solution against every published cell (the linear program's bounds
    are floating point): a reconstruction is claimed only when it agrees with each."""
    sums = system.matrix[np.flatnonzero(real)] @ cube
    low, high = system.lower[real], system.upper[real]
    bad = np.flatnonzero((sums < low - TOLERANCE) | (sums > high + TOLERANCE))
    if len(bad):
        row = int(np.flatnonzero(real)[bad[0]])
        raise InputError(
            f"{system.label(row)}: the cells every other published cell forces do not add "
            f"up to it ({sums[bad[0]]:g} against {system.shown(row)}); the tables "
            "contradict each other"
        )


def _count(
    system: System,
    real: NDArray[np.bool_],
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    budget: int,
) -> tuple[int, NDArray[np.int64]] | None:
    """Every integer table within the cube bounds that agrees with every published
    cell, by depth-first search; the number of them and, per cube cell, how many give it
    each value. ``None`` when more than ``budget`` partial tables would be visited.

    The cells are assigned in an order that completes published cells early; a cell's
    values are those that leave each of its published cells reachable by the cells
    still open (their bounds summed), so that a published cell is checked exactly when
    its last cell is assigned."""
    free = np.flatnonzero(low < high)
    fixed = np.where(low == high, low, 0.0)
    a = system.matrix[np.flatnonzero(real)]
    sums = a @ fixed
    residual_low = np.ceil(system.lower[real] - sums - TOLERANCE)
    residual_high = np.floor(np.minimum(system.upper[real], 1e15) - sums + TOLERANCE)
    sub = a[:, free].tocsc()
    rows_of = [sub.indices[sub.indptr[j] : sub.indptr[j + 1]].tolist() for j in range(len(free))]
    lo = low[free].astype(np.int64).tolist()
    hi = high[free].astype(np.int64).tolist()
    order = _order(rows_of, sub.shape[0])
    need_low = residual_low.astype(np.int64).tolist()
    need_high = residual_high.astype(np.int64).tolist()
    open_low = np.asarray(sub @ np.asarray(lo, dtype=float), dtype=np.int64).tolist()
    open_high = np.asarray(sub @ np.asarray(hi, dtype=float), dtype=np.int64).tolist()
    if any(need_low[r] > open_high[r] or need_high[r] < open_low[r] for r in range(sub.shape[0])):
        return None  # no integer table within the bounds: leave it to the linear bounds
    value = [0] * len(free)
    counts = [[0] * (h + 1) for h in hi]
    visited = 0
    found = 0
    depth = len(order)

    def search(step: int) -> bool:
        nonlocal visited, found
        if step == depth:
            found += 1
            for j, v in enumerate(value):
                counts[j][v] += 1
            return True
        j = order[step]
        first, last = lo[j], hi[j]
        for r in rows_of[j]:
            first = max(first, need_low[r] - (open_high[r] - hi[j]))
            last = min(last, need_high[r] - (open_low[r] - lo[j]))
        for v in range(first, last + 1):
            visited += 1
            if visited > budget:
                return False
            value[j] = v
            for r in rows_of[j]:
                need_low[r] -= v
                need_high[r] -= v
                open_low[r] -= lo[j]
                open_high[r] -= hi[j]
            going = search(step + 1)
            for r in rows_of[j]:
                need_low[r] += v
                need_high[r] += v
                open_low[r] += lo[j]
                open_high[r] += hi[j]
            if not going:
                return False
        return True

    if not search(0) or not found:
        return None
    width = int(high.max(initial=0.0)) + 1
    histogram = np.zeros((len(low), width), dtype=np.int64)
    forced = np.flatnonzero(low == high)
    histogram[forced, low[forced].astype(np.int64)] = found
    for k, cell in enumerate(free):
        histogram[cell, : len(counts[k])] = counts[k]
    return found, histogram


def _order(rows_of: list[list[int]], rows: int) -> list[int]:
    """The cells in an order that completes published cells early: next, a cell of the
    published cell with the fewest cells still open (ties: the first cell)."""
    open_count = [0] * rows
    for members in rows_of:
        for r in members:
            open_count[r] += 1
    members_of: list[list[int]] = [[] for _ in range(rows)]
    for j, members in enumerate(rows_of):
        for r in members:
            members_of[r].append(j)
    placed = [False] * len(rows_of)
    order = []
    for _ in range(len(rows_of)):
        pending = [r for r in range(rows) if open_count[r] > 0]
        if pending:
            row = min(pending, key=lambda r: (open_count[r], r))
            j = next(j for j in members_of[row] if not placed[j])
        else:
            j = placed.index(False)
        placed[j] = True
        order.append(j)
        for r in rows_of[j]:
            open_count[r] -= 1
    return order


def _tail_of_one(cube: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`_posterior`'s table for a group of one solution: ``P(x_c >= k)`` is 1 up to
    the cell's count."""
    width = int(cube.max(initial=0.0)) + 1
    return np.asarray(np.arange(width)[np.newaxis, :] <= cube[:, np.newaxis], dtype=float)


def _posterior(tail: NDArray[np.float64]) -> NDArray[np.float64]:
    """The most probable reconstruction's records and the probability each is real.

    ``tail[c, k]`` is ``P(x_c >= k)`` under the uniform distribution on the consistent
    tables (``tail[c, 0]`` unused). The ``k``-th record of cell ``c`` is real with
    probability ``P(x_c >= k)``; the expected number of real records among a set of
    guessed records is the sum of theirs, so the best guess of ``n`` records takes the
    ``n`` largest, ``n`` being the expected total (rounded).
    """
    probabilities = tail[:, 1:].ravel()
    n = round(float(probabilities.sum()))
    return np.sort(probabilities)[::-1][:n]


def _sensitive(
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    shape: tuple[int, ...],
    axis: int | None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Per combination of the other dimensions, the records whose sensitive value is
    known (every record of the combination can only lie in one sensitive category: the
    proved lower count of that category) and that category (-1: none)."""
    if axis is None:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    lower = np.moveaxis(low.reshape(shape), axis, -1).reshape(-1, shape[axis])
    upper = np.moveaxis(high.reshape(shape), axis, -1).reshape(-1, shape[axis])
    possible = upper > 0
    one = possible.sum(axis=1) == 1
    category = np.where(one, np.argmax(possible, axis=1), -1)
    known = np.where(one, lower[np.arange(len(lower)), np.maximum(category, 0)], 0.0)
    return known, category


def _chance(
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    shape: tuple[int, ...],
    margins: list[NDArray[np.int64]],
    sensitive: tuple[int | None, NDArray[np.float64], NDArray[np.int64]],
    tail: NDArray[np.float64] | None,
    draws: int,
    rng: np.random.Generator,
) -> Chance:
    """The baseline: ``draws`` tables whose records' codes are drawn independently with
    the one-way ``margins`` (each dimension's codes shuffled), each scored on what the
    attack proves, averaged. ``sensitive``: the axis, and per combination of the other
    dimensions the records whose value is known and that value (:func:`_sensitive`)."""
    forced = low == high
    one = forced & (low == 1)
    whole = bool(forced.all()) and low.sum() > 0
    axis, known, category = sensitive
    sure = category >= 0
    sums = np.zeros(5)
    labels = [np.repeat(np.arange(len(m)), m) for m in margins]
    cumulative = None if tail is None else np.cumsum(tail, axis=1)
    for _ in range(draws):
        index = tuple(rng.permutation(codes) for codes in labels)
        drawn = np.bincount(np.ravel_multi_index(index, shape), minlength=len(low)).astype(float)
        sums[0] += whole and bool((drawn == low).all())
        sums[1] += np.minimum(drawn, low)[forced].sum()
        sums[2] += (drawn[one] == 1).sum()
        if axis is not None:
            moved = np.moveaxis(drawn.reshape(shape), axis, -1).reshape(len(known), -1)
            given = moved[np.arange(len(known)), np.maximum(category, 0)]
            sums[3] += np.minimum(given, known)[sure].sum()
        if cumulative is not None:
            taken = np.minimum(drawn, cumulative.shape[1] - 1).astype(np.int64)
            sums[4] += (cumulative[np.arange(len(low)), taken] - cumulative[:, 0]).sum()
    means = sums / draws
    return Chance(
        reconstructed=float(means[0]),
        records_forced=float(means[1]),
        records_unique=float(means[2]),
        sensitive_known=float(means[3]),
        records_right=None if tail is None else float(means[4]),
    )
