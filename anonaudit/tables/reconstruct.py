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

import collections
import functools
import itertools
import math
import multiprocessing
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from anonaudit.errors import InputError, OptionError, ParameterError, number, require
from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.tables.attack import attack_last, program
from anonaudit.tables.system import TOLERANCE, System, build

if TYPE_CHECKING:  # the DP companion and the class tables are imported by the runs using them
    from anonaudit.classtable import ClassTable
    from anonaudit.dp.accounting import PrivacyCost
    from anonaudit.dp.mechanisms import Mechanism, NoiseDistribution

__all__ = [
    "BesideDP",
    "Chance",
    "Closeness",
    "GroupReconstruction",
    "Linkage",
    "NoisyRelease",
    "Rate",
    "Reconstruction",
    "SizeBand",
    "beside_dp",
    "closeness",
    "complete",
    "dense",
    "link",
    "reconstruct",
    "release_tables",
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
    forced_cells : array of float
        Per cube cell, the records the draw puts in it if it is forced (at most its
        count; 0 for the other cells): their sum is ``records_forced``.
    """

    reconstructed: float
    records_forced: float
    records_unique: float
    sensitive_known: float
    records_right: float | None
    forced_cells: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0), compare=False)


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
    best : array of float or None
        From a noisy release (``noise``): the integer table closest to the released
        cells (least total absolute difference, :func:`_fit`); ``None`` otherwise.
    distance : float or None
        That table's total absolute difference from the released cells.
    contradicted : bool
        From a noisy release: no table lies within every cell's confidence interval
        (the noise went beyond one), so nothing is certified of the group.
    smallest : tuple of int or None
        With ``subsets``, for a reconstructed group: the positions (in
        ``Reconstruction.tables.tables``) of a smallest subset of the tables that
        still gives it back (:func:`_smallest`).
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
    best: NDArray[np.float64] | None = None
    distance: float | None = None
    contradicted: bool = False
    smallest: tuple[int, ...] | None = None

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
    noise : NoiseDistribution or None
        With a noisy release: the noise on each released cell.
    confidence : float or None
        With a noisy release: the probability with which each group's certificate
        holds (the cells' intervals hold together at least that often).
    count_budget : int
        The enumeration's budget per group.
    subsets : bool
        Whether each reconstructed group's smallest subset of tables was searched.
    class_table : bool
        Whether the tables are class-table releases, listing only the combinations that
        occur (:func:`reconstruct`'s ``class_table``): a DP release of them covers every
        combination (:func:`beside_dp`, :func:`dense`).
    """

    tables: TableSet
    group: str | None
    sensitive: str | None
    dimensions: tuple[str, ...]
    shape: tuple[int, ...]
    groups: tuple[GroupReconstruction, ...]
    draws: int
    seed: int
    noise: NoiseDistribution | None = None
    confidence: float | None = None
    count_budget: int = 20_000
    subsets: bool = False
    class_table: bool = False

    @cached_property
    def reconstructed(self) -> int:
        """Groups reconstructed."""
        return sum(g.reconstructed for g in self.groups)

    @cached_property
    def contradicted(self) -> int:
        """Groups of a noisy release no table fits within the noise's intervals
        (:attr:`GroupReconstruction.contradicted`)."""
        return sum(g.contradicted for g in self.groups)

    @property
    def discloses(self) -> bool:
        """Whether the tables give someone back: a group reconstructed, a record unique in
        the reconstruction (a person alone with every published attribute), or a record
        whose sensitive value is known (the exit status of ``anonaudit reconstruct``)."""
        return any(g.reconstructed or g.records_unique or g.sensitive_known for g in self.groups)

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

    def smallest_subsets(self) -> tuple[tuple[tuple[str, ...], int], ...]:
        """With ``subsets``: each smallest subset of the tables that gives a group back
        (by the tables' names) and the groups it is found for, most groups first."""
        names = [t.name for t in self.tables.tables]
        found: dict[tuple[str, ...], int] = {}
        for g in self.groups:
            if g.smallest is not None:
                key = tuple(names[k] for k in g.smallest)
                found[key] = found.get(key, 0) + 1
        return tuple(sorted(found.items(), key=lambda item: (-item[1], len(item[0]))))

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
    noise: NoiseDistribution | None = None,
    confidence: float = 0.99,
    executor: Executor | None = None,
    class_table: bool = False,
    subsets: bool = False,
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
    noise : NoiseDistribution, optional
        The tables are a noisy release (:func:`release_tables`, or a DP release made
        elsewhere with this noise on every cell): their counts are evidence, not
        equations. Each group is then certified from intervals holding every cell's
        true count together with probability ``confidence`` (union bound over the
        group's cells, :meth:`~anonaudit.dp.mechanisms.NoiseDistribution.within`),
        and its closest integer table is found (:attr:`GroupReconstruction.best`).
        Noise of unbounded support proves nothing with certainty: a certificate
        from a noisy release is a claim at that confidence.
    confidence : float
        With ``noise``: the probability a group's certificate holds (0.99).
    class_table : bool
        The tables are class-table releases (counts per QI tuple and SA value, as
        ``anonaudit audit --count`` reads a long frequency table): every record is
        counted in a listed cell, so a combination not listed holds nobody
        (:func:`complete`).
    subsets : bool
        Find, for each reconstructed group, the smallest subset of the tables that
        still gives it back (:attr:`GroupReconstruction.smallest`): up to 2^T checks a
        group for T tables.
    executor : concurrent.futures.Executor, optional
        Solve the groups with this executor's ``map`` instead (``workers`` times
        :data:`BATCH` groups at a time), such as a Dask cluster's
        (``distributed.Client(...).get_executor()``): the groups are independent, and
        the result is the same.

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
    require(0 < confidence < 1, "confidence", "lie strictly between 0 and 1", confidence)
    _check(tables, group, sensitive)
    solving = complete(tables, group) if class_table else tables
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
            noise,
            confidence,
            subsets,
        )
        for index, (code, part) in enumerate(_split(solving, group))
    )
    solved: list[GroupReconstruction] = []
    if executor is not None:
        # a batch at a time, so that only a batch of groups' tables is held at once
        while batch := list(itertools.islice(tasks, workers * BATCH)):
            solved += executor.map(_solve, batch)
    elif workers > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
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
        noise=noise,
        confidence=confidence if noise is not None else None,
        count_budget=count_budget,
        subsets=subsets,
        class_table=class_table,
    )


@dataclass(frozen=True)
class NoisyRelease:
    """Count tables released under differential privacy (:func:`release_tables`).

    Attributes
    ----------
    tables : TableSet
        The released tables: the same cells, each count with noise (whole numbers,
        possibly negative: rounding them up to 0 would bias the evidence).
    noise : NoiseDistribution
        The noise on each cell.
    epsilon, delta : float
        The guarantee, for adding or removing one person.
    cells_per_person : int
        The most cells of all the tables one person is counted in (their margins and
        totals included): the release's L1 sensitivity; its L2 is the square root.
    cost : PrivacyCost
        What the release spends.
    """

    tables: TableSet
    noise: NoiseDistribution
    epsilon: float
    delta: float
    cells_per_person: int
    cost: PrivacyCost


def release_tables(
    tables: TableSet,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: Mechanism = "discrete-laplace",
    rng: np.random.Generator | None = None,
) -> NoisyRelease:
    """Release count tables under (ε, δ)-differential privacy, every cell with noise.

    The tables are one query: a person added or removed changes by 1 each cell they are
    counted in, at most :attr:`NoisyRelease.cells_per_person` of them (``L1``, and
    ``L2`` its square root). The noise is the DP companion's
    (:mod:`anonaudit.dp.mechanisms`, OpenDP's exact samplers on the operating system's
    secure generator), calibrated as :func:`anonaudit.dp.release` calibrates a
    histogram: discrete Laplace of scale ``L1 / ε`` (Ghosh, Roughgarden &
    Sundararajan 2009), or the discrete Gaussian (Canonne, Kamath & Steinke 2020) whose
    scale is checked on its exact privacy-loss distribution for that many cells
    shifted by 1. No count is rounded up to 0 and no margin made consistent: that is
    post-processing, which a reader may do (and :func:`reconstruct` does). The cells
    released are the tables' as given: their layout must be public (a table design),
    so a class table, whose listed combinations are data, is released as
    :func:`dense` of it.

    Parameters
    ----------
    tables : TableSet
        Count tables whose every cell is published as it is (the true counts).
    epsilon, delta : float
        The guarantee; ``delta`` 0 (pure ε-DP) with discrete Laplace noise.
    mechanism : {"discrete-laplace", "discrete-gaussian"}
        The noise.
    rng : numpy.random.Generator, optional
        For tests only: draw discrete Laplace noise from this seeded generator instead
        of OpenDP's secure one. Never for a release.

    Returns
    -------
    NoisyRelease

    Raises
    ------
    InputError
        A table of sums, or a cell suppressed or rounded (its true count is unknown).
    ParameterError
        A mechanism other than the two, ε or δ out of range, or ``rng`` with the
        discrete Gaussian.

    Examples
    --------
    >>> import numpy as np
    >>> from anonaudit.published import Dimension, PublishedTable, TableSet
    >>> t = PublishedTable("sex", "count", ("sex",), (np.array(["F", "M", "Total"]),),
    ...     np.array([2.0, 1, 3]), np.array([2.0, 1, 3]), np.full(3, "published"),
    ...     np.array(["2", "1", "3"]))
    >>> r = release_tables(TableSet((t,), {"sex": Dimension.flat("sex", ["F", "M"])}),
    ...                    epsilon=1.0)
    >>> r.cells_per_person, r.noise.scale, r.cost.epsilon
    (2, 2.0, 1.0)
    """
    from anonaudit.dp.mechanisms import DISCRETE, NoiseDistribution, add_noise
    from anonaudit.dp.options import EPSILON_RANGE, PrivacyGuarantee
    from anonaudit.dp.release import calibrate
    from anonaudit.dp.sensitivity import cells_sensitivity

    # The DP companion's smallest epsilon and its range of delta; no largest epsilon:
    # what weak noise gives back is what this release is for.
    low = EPSILON_RANGE[0]
    require(
        number(epsilon) and epsilon >= low, "epsilon", f"be a number of {low:g} or more", epsilon
    )
    PrivacyGuarantee(low, delta)
    if mechanism not in DISCRETE:
        raise ParameterError(
            f"the tables' counts are released with {' or '.join(DISCRETE)} noise "
            f"(got {mechanism!r})"
        )
    if len(tables.populations) > 1:  # a person would be one leaf in each: not counted so
        raise InputError(
            "the tables count several populations; release the tables of one population at a time"
        )
    for table in tables.tables:
        if table.kind != "count":
            raise InputError(f"{table.name}: a table of sums; only counts are released here")
        if len(set(table.dimensions)) < len(table.dimensions):
            raise InputError(f"{table.name}: names a dimension twice; name each once")
        _require_exact(
            table,
            "a DP release adds noise to every cell's true count: give the tables before "
            "suppression and rounding",
        )
    m = _cells_per_person(tables)
    scale, cost = calibrate(mechanism, cells_sensitivity(m), epsilon, delta)
    noise = NoiseDistribution(mechanism, scale)
    values = np.concatenate([t.lower for t in tables.tables]).astype(np.int64)
    if rng is None:
        noisy = add_noise(values, mechanism=mechanism, scale=scale)
    elif mechanism == "discrete-laplace":
        p = -math.expm1(-1 / scale)  # two-sided geometric: the difference of two geometrics
        noisy = values + rng.geometric(p, len(values)) - rng.geometric(p, len(values))
    else:
        raise ParameterError("rng (seeded noise, for tests) draws discrete Laplace noise only")
    ends = np.cumsum([0, *(len(t) for t in tables.tables)])
    released = tuple(
        replace(
            t,
            lower=noisy[a:b].astype(float),
            upper=noisy[a:b].astype(float),
            shown=noisy[a:b].astype(str),
        )
        for t, a, b in zip(tables.tables, ends[:-1], ends[1:], strict=True)
    )
    return NoisyRelease(TableSet(released, tables.dimensions), noise, epsilon, delta, m, cost)


def _require_exact(table: PublishedTable, why: str) -> None:
    """Refuse a table with a cell not published as it is, naming the first and ``why``."""
    inexact = np.flatnonzero(~table.exact)
    if len(inexact):
        i = int(inexact[0])
        raise InputError(
            f"{table.name}: {table.label(i)} is published as {str(table.shown[i])!r}; {why}"
        )


#: The most leaf combinations whose cells are counted one by one (int32 each, 64 MiB):
#: beyond, :func:`_cells_per_person` adds each table's most instead (an upper bound).
_EXACT_COMBINATIONS = 16 * 1024**2


def _cells_per_person(tables: TableSet) -> int:
    """The most cells one person is counted in, over every table: the L1 sensitivity of
    the tables as one query (a person added or removed changes each of their cells by 1).

    A person is one leaf of each dimension; a cell counts them when each of its codes
    lies over their leaf. Each table's cells are counted over the combinations of its
    dimensions' leaves (:func:`_covered`), the tables' counts added over the leaves of
    every dimension, and the most taken: exact, for any table design (sparse tables,
    codes overlapping, tables whose busiest leaves differ). When the combinations of
    every dimension are more than :data:`_EXACT_COMBINATIONS`, each table's most is
    added instead, and when one table's are, the product over its dimensions of the
    most codes a leaf lies under: both at least the truth, so the noise is never too
    small.
    """
    names = list(dict.fromkeys(name for table in tables.tables for name in table.dimensions))
    leaves = {name: len(tables.dimensions[name].leaves) for name in names}
    counted = [_covered(table, tables) for table in tables.tables]
    exact = [cells for cells in counted if cells is not None]
    if len(exact) < len(counted) or math.prod(leaves.values()) > _EXACT_COMBINATIONS:
        return sum(
            int(cells.max(initial=0)) if cells is not None else _cells_bound(table, tables)
            for cells, table in zip(counted, tables.tables, strict=True)
        )
    total = np.zeros([leaves[name] for name in names], dtype=np.int32)
    for table, cells in zip(tables.tables, exact, strict=True):
        # the table's axes in the order of ``names``, the others broadcast
        order = sorted(range(len(table.dimensions)), key=lambda a: names.index(table.dimensions[a]))
        shape = [leaves[name] if name in table.dimensions else 1 for name in names]
        total += np.transpose(cells, order).reshape(shape)
    return int(total.max(initial=0))


def _covered(table: PublishedTable, tables: TableSet) -> NDArray[np.int32] | None:
    """How many of ``table``'s cells count each combination of its dimensions' leaves
    (axes in the order of ``table.dimensions``), or ``None`` when the combinations (or
    those of codes and leaves on the way) are more than :data:`_EXACT_COMBINATIONS`.

    The cells, an array over the table's codes (1 where a cell is published), are
    multiplied along each dimension by which leaves each code lies over.
    """
    if not table.dimensions:  # every cell counts everyone
        return np.array(len(table), dtype=np.int32)
    positions, covers = zip(*(_over(table, name, tables) for name in table.dimensions), strict=True)
    if math.prod(max(over.shape) for over in covers) > _EXACT_COMBINATIONS:
        return None
    cells = np.zeros([over.shape[0] for over in covers], dtype=np.int32)
    np.add.at(cells, tuple(positions), 1)  # a cell given twice (by the API) counts twice
    for axis, over in enumerate(covers):
        last = np.moveaxis(cells, axis, -1)
        flat = last.reshape(math.prod(last.shape[:-1]), over.shape[0])
        counted = np.asarray(flat @ over, dtype=np.int32)
        cells = np.moveaxis(counted.reshape(*last.shape[:-1], over.shape[1]), -1, axis)
    return cells


def _over(table: PublishedTable, name: str, tables: TableSet) -> tuple[NDArray[np.intp], Any]:
    """Each cell's position among ``table``'s distinct codes of dimension ``name``, and
    which leaves each of those codes lies over (a sparse 0/1 matrix, codes by leaves)."""
    from scipy import sparse

    dimension = tables.dimensions[name]
    codes = table.codes[table.dimensions.index(name)]
    listed, position = np.unique(codes.astype(str), return_inverse=True)
    under = [dimension.leaves_under(code) for code in listed.tolist()]
    rows = np.repeat(np.arange(len(listed)), [len(leaves) for leaves in under])
    columns = np.fromiter(itertools.chain.from_iterable(under), np.int64, len(rows))
    over = sparse.csr_array(
        (np.ones(len(rows), np.int32), (rows, columns)),
        shape=(len(listed), len(dimension.leaves)),
    )
    return position, over


def _cells_bound(table: PublishedTable, tables: TableSet) -> int:
    """At least the most cells of ``table`` one person is counted in: the product over
    its dimensions of the most of its codes one leaf lies under (exact for a table of
    every combination of its codes), times the most times one cell is given."""
    if not len(table) or not table.dimensions:  # every cell then counts everyone
        return len(table)
    given = collections.Counter(zip(*(c.astype(str).tolist() for c in table.codes), strict=True))
    cells = max(given.values())  # the most times one cell is given
    for name in table.dimensions:
        _, over = _over(table, name, tables)
        cells *= int(over.sum(axis=0).max(initial=0))
    return cells


@dataclass(frozen=True)
class Closeness:
    """How close a noisy release's reconstruction comes to the true tables.

    Attributes
    ----------
    groups : int
        Groups compared (those whose true table is known).
    exact : int
        Groups whose closest table (:attr:`GroupReconstruction.best`) is the true one.
    records : int
        The true records of those groups.
    records_right : int
        Records the closest tables put in their true cell (``sum min(best, true)``).
    certified, certified_right : int
        Groups certified at the release's confidence, and those equal to the truth.
    """

    groups: int
    exact: int
    records: int
    records_right: int
    certified: int
    certified_right: int


def closeness(result: Reconstruction, truth: Mapping[str, NDArray[np.float64]]) -> Closeness:
    """Compare a noisy release's reconstruction (``reconstruct(..., noise=)``) with the
    true tables of its groups, by group code (flat cube cells, in the result's order):
    the planted tables, or the groups the exact tables reconstruct.

    Raises
    ------
    ValueError
        ``result`` is not of a noisy release.
    """
    if result.noise is None:
        raise ValueError("closeness compares the reconstruction of a noisy release")
    compared = [(g, np.asarray(truth[g.group], float)) for g in result.groups if g.group in truth]
    best = [(g.best, x) for g, x in compared if g.best is not None]
    return Closeness(
        groups=len(compared),
        exact=sum(bool((b == x).all()) for b, x in best),
        records=int(sum(x.sum() for _, x in compared)),
        records_right=int(sum(np.minimum(b, x).sum() for b, x in best)),
        certified=sum(g.reconstructed for g, _ in compared),
        certified_right=sum(g.reconstructed and bool((g.lower == x).all()) for g, x in compared),
    )


@dataclass(frozen=True)
class BesideDP:
    """The same tables reconstructed from their DP release (:func:`beside_dp`).

    Attributes
    ----------
    release : NoisyRelease
        The release.
    result : Reconstruction
        Its reconstruction (``noise`` set).
    closeness : Closeness
        Its closest tables against the groups the exact tables reconstruct (their one
        table is the truth).
    """

    release: NoisyRelease
    result: Reconstruction
    closeness: Closeness


def beside_dp(
    tables: TableSet,
    exact: Reconstruction,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: Mechanism = "discrete-laplace",
    confidence: float = 0.99,
    workers: int = 1,
    rng: np.random.Generator | None = None,
) -> BesideDP:
    """What DP buys: release ``tables`` under (ε, δ)-DP (:func:`release_tables`; class
    tables, as ``exact`` read them, with every combination: :func:`dense`), reconstruct
    the release as ``exact`` reconstructed the tables (its group, sensitive dimension,
    budget, baseline), and compare its closest tables with the groups ``exact`` proved
    (:func:`closeness`)."""
    if exact.class_table:  # every combination released, not only those the tables list
        tables = dense(tables, exact.group)
    release = release_tables(tables, epsilon=epsilon, delta=delta, mechanism=mechanism, rng=rng)
    result = reconstruct(
        release.tables,
        group=exact.group,
        sensitive=exact.sensitive,
        count_budget=exact.count_budget,
        draws=exact.draws,
        seed=exact.seed,
        workers=workers,
        noise=release.noise,
        confidence=confidence,
    )
    truth = {g.group: g.lower for g in exact.groups if g.reconstructed}
    return BesideDP(release, result, closeness(result, truth))


@dataclass(frozen=True)
class Linkage:
    """The reconstructed records linked to an identified table (:func:`link`).

    Attributes
    ----------
    columns : tuple of str
        The columns they are linked by: the identified table's that are the group or a
        dimension of the tables.
    records : int
        Reconstructed records: those of the forced cells.
    unique : int
        Of them, records whose combination of ``columns`` matches exactly one person
        of the identified table: linked to a name with certainty, every other published
        attribute of theirs learned.
    unmatched : int
        Records whose combination matches nobody (the table does not cover them).
    k_map : int
        The fewest people any reconstructed combination matches (0: one matches
        nobody).
    chance_unique : float
        The chance baseline of ``unique``: the records a reconstruction drawn from the
        margins puts in the forced cells that match exactly one person (each cell at most
        its count), in expectation over the draws (:class:`Chance`).
    """

    columns: tuple[str, ...]
    records: int
    unique: int
    unmatched: int
    k_map: int
    chance_unique: float = 0.0


def link(result: Reconstruction, population: ClassTable) -> Linkage:
    """Link the reconstructed records to an identified table: the k-map and unique
    matches of :func:`anonaudit.measures.linkage.population_linkage` (Sweeney 2002; El
    Emam & Dankar 2008), the release being the records of every group's forced cells,
    each a record whose every published attribute is known.

    Parameters
    ----------
    result : Reconstruction
        The reconstruction.
    population : ClassTable
        The identified table (a voter list, a register), its quasi-identifiers the
        columns to link by: each the group or a dimension of the tables, coded with
        their finest codes.

    Raises
    ------
    InputError
        A quasi-identifier of ``population`` is neither the group nor a dimension.
    """
    import pyarrow as pa

    from anonaudit.classtable import ClassTable
    from anonaudit.measures.linkage import population_linkage

    known = [*([result.group] if result.group else []), *result.dimensions]
    columns = tuple(population.quasi_identifiers)
    other = [c for c in columns if c not in known]
    if other:
        raise InputError(
            f"the identified table's column {other[0]!r} is not a dimension of the tables; "
            f"link by {', '.join(known)}"
        )
    leaves = [np.asarray(result.tables.dimensions[d].leaves) for d in result.dimensions]
    parts: dict[str, list[NDArray[np.str_]]] = {c: [] for c in columns}
    counts, drawn = [], []
    for g in result.groups:
        cells = np.flatnonzero(g.forced & (g.lower > 0))
        index = np.unravel_index(cells, result.shape)
        for c in columns:
            if c == result.group:
                parts[c].append(np.full(len(cells), g.group))
            else:
                k = result.dimensions.index(c)
                parts[c].append(leaves[k][index[k]])
        counts.append(g.lower[cells])
        drawn.append(g.chance.forced_cells[cells])
    frame = pa.table(
        {
            **{c: pa.array(np.concatenate(parts[c]).astype(str)) for c in columns},
            "count": pa.array(np.concatenate(counts).astype(np.int64)),
        }
    )
    records = int(frame.column("count").to_numpy().sum())
    if not records:
        return Linkage(columns, 0, 0, 0, 0)
    # One row a forced cell, not merged: the k-map's population count of each row's class
    # is then that row's, as the chance baseline needs it cell by cell.
    released = ClassTable(
        columns, (), frame.select(list(columns)), frame.column("count").to_numpy()
    )
    found = population_linkage(released, population)
    alone = found.k_map.matches[released.classes.index] == 1
    return Linkage(
        columns,
        records,
        found.unique_matches.records,
        found.k_map.unmatched_records,
        found.k_map.k,
        chance_unique=float(np.concatenate(drawn)[alone].sum()),
    )


def complete(tables: TableSet, group: str | None = None) -> TableSet:
    """Class-table releases as complete tables: each table of the finest cells gets
    its total per group (the sum of its cells), so that every combination it does not
    list is proved to hold nobody.

    A class table (a frequency table per QI tuple and SA value; Samarati 2001,
    "Protecting respondents' identities in microdata release", IEEE TKDE 13(6)) lists
    the combinations that occur: the records it counts are all in them, which is the
    total this adds. Without it, a combination not listed is merely unpublished.

    Raises
    ------
    InputError
        A cell that is not published as it is, or a code that is not a leaf (a margin:
        a class table has none).
    """
    done = []
    for table in tables.tables:
        for k, name in enumerate(table.dimensions):
            leaves = tables.dimensions[name].leaf_index
            inner = [i for i, c in enumerate(table.codes[k].tolist()) if str(c) not in leaves]
            if inner:
                i = inner[0]
                raise InputError(
                    f"{table.name}: {table.label(i)} is a margin ({name}={table.codes[k][i]} "
                    "is not a finest code); a class table lists the finest cells only"
                )
        _require_exact(table, "a class table's every count is published as it is")
        if group is not None and group in table.dimensions:
            axis = table.dimensions.index(group)
            codes, where = np.unique(table.codes[axis].astype(str), return_inverse=True)
            sums = np.bincount(where, weights=table.lower, minlength=len(codes))
        else:
            axis, codes, sums = -1, np.asarray([""]), np.asarray([table.lower.sum()])
        extra = tuple(
            codes if k == axis else np.full(len(codes), tables.dimensions[name].total)
            for k, name in enumerate(table.dimensions)
        )
        done.append(
            replace(
                table,
                codes=tuple(
                    np.concatenate([c.astype(str), e.astype(str)])
                    for c, e in zip(table.codes, extra, strict=True)
                ),
                lower=np.concatenate([table.lower, sums]),
                upper=np.concatenate([table.upper, sums]),
                state=np.concatenate([table.state.astype(str), np.full(len(codes), "published")]),
                shown=np.concatenate(
                    [table.shown.astype(str), np.asarray([f"{v:g}" for v in sums])]
                ),
            )
        )
    return TableSet(tuple(done), tables.dimensions)


def dense(tables: TableSet, group: str | None = None) -> TableSet:
    """Class-table releases with every combination of their codes listed, 0 where the
    release lists none: the cells a DP release of them must cover.

    Which combinations occur is itself private: noise added only to the listed cells
    would publish the list as it is (Dwork & Roth 2014, section 3.3: a histogram over a
    data-independent partition), so :func:`release_tables` of a class table is made of
    this. The group's codes are those the tables list (a public geography).

    Raises
    ------
    InputError
        As :func:`complete`: a margin or a cell not published as it is.
    """
    complete(tables, group)  # the same refusals
    done = []
    for table in tables.tables:
        axes = [
            np.unique(table.codes[k].astype(str))
            if name == group
            else np.asarray(tables.dimensions[name].leaves)
            for k, name in enumerate(table.dimensions)
        ]
        shape = tuple(len(a) for a in axes)
        index = tuple(
            np.searchsorted(a, table.codes[k].astype(str))
            if table.dimensions[k] == group
            else np.asarray(
                [
                    tables.dimensions[table.dimensions[k]].leaf_index[str(c)]
                    for c in table.codes[k].tolist()
                ],
                dtype=np.int64,
            )
            for k, a in enumerate(axes)
        )
        values = np.zeros(shape)
        np.add.at(values, index, table.lower)
        grid = np.indices(shape).reshape(len(shape), -1)
        flat = values.ravel()
        done.append(
            replace(
                table,
                codes=tuple(a[g] for a, g in zip(axes, grid, strict=True)),
                lower=flat,
                upper=flat.copy(),
                state=np.full(len(flat), "published"),
                shown=np.asarray([f"{v:g}" for v in flat]),
            )
        )
    return TableSet(tuple(done), tables.dimensions)


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
    noise: NoiseDistribution | None
    confidence: float
    subsets: bool


def _solve(task: _Task) -> GroupReconstruction:
    """:func:`_group`, an error naming the group."""
    try:
        return _group(task)
    except InputError as error:
        raise InputError(f"{task.name}{error}") from None


def _group(task: _Task) -> GroupReconstruction:
    """Reconstruct one group: every target's interval, the count where small, the
    baseline."""
    targets = len(task.tables.tables) - 1
    best: NDArray[np.float64] | None = None
    distance: float | None = None
    contradicted = False
    if task.noise is None:
        system = _system(task.tables)
        lower, upper = _attack(system)
    else:
        released = _system(task.tables)
        best, distance = _fit(released, released.table != targets)
        system = _system(_intervals(task.tables, task.noise, task.confidence))
        witnesses = _two_tables(system, system.table != targets)
        if witnesses is None or witnesses > 1:
            # no table within every interval (the noise went beyond one), or two: not
            # certified, and its cells are not bounded one by one
            contradicted = witnesses is None
            lower, upper = np.zeros(len(system.lower)), np.full(len(system.lower), math.inf)
        else:
            lower, upper = _attack(system)
    rows = np.flatnonzero(system.table == targets)
    low, high = _cube(system, rows, lower, upper)
    size = len(low)
    cube = rows[:size]
    shape = system.shape
    if len(shape) > 1:
        ends = size + np.cumsum([0, *shape])
        by_dimension = [rows[ends[k] : ends[k + 1]] for k in range(len(shape))]
    else:
        by_dimension = [cube]
    if best is None:
        total = _estimate(lower[rows[-1]], upper[rows[-1]])
    else:
        total = round(float(best.sum()))
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
    else:
        counted = _count(system, real, low, high, task.count_budget)
        if counted is not None:
            solutions, histogram = counted
            present = histogram > 0
            low = np.argmax(present, axis=1).astype(float)
            high = (present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)).astype(float)
            method = "enumeration"
            tail = np.cumsum(histogram[:, ::-1], axis=1)[:, ::-1] / solutions
    posterior = None if tail is None else _posterior(tail)
    smallest = None
    if task.subsets and solutions == 1 and low.sum() > 0:
        smallest = _smallest(task.tables, task.count_budget)
    known, guess = _sensitive(low, high, shape, task.sensitive)
    known_records = _known_records(system, real, known, guess, shape, task.sensitive)
    rng = np.random.default_rng((task.seed, task.index))
    chance = _chance(
        low, high, shape, margins, (task.sensitive, known_records, guess), tail, task.draws, rng
    )
    return GroupReconstruction(
        group=task.code,
        records=total,
        lower=low,
        upper=high,
        method=method,
        solutions=solutions,
        posterior=posterior,
        sensitive_known=known_records,
        chance=chance,
        best=best,
        distance=distance,
        contradicted=contradicted,
        smallest=smallest,
    )


def _cube(
    system: System,
    rows: NDArray[np.int64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per cube cell (flat C order), its interval: the targets' first ``rows`` are the
    cube's cells, one cell each."""
    a = system.matrix
    size = a.shape[1]
    cube = rows[:size]
    column = a.indices[a.indptr[cube]]
    low, high = np.empty(size), np.empty(size)
    low[column], high[column] = lower[cube], upper[cube]
    return low, high


def _unique(tables: TableSet, count_budget: int) -> bool:
    """Whether ``tables`` (the targets last) leave one integer table: every cube cell
    forced by the attacker's intervals, or one table counted."""
    system = _system(tables)
    lower, upper = _attack(system)
    targets = len(tables.tables) - 1
    low, high = _cube(system, np.flatnonzero(system.table == targets), lower, upper)
    if (low == high).all():
        return True
    counted = _count(system, system.table != targets, low, high, count_budget)
    return counted is not None and counted[0] == 1


def _smallest(tables: TableSet, count_budget: int) -> tuple[int, ...]:
    """The smallest subset of a reconstructed group's tables (positions) that still
    leaves it one table.

    Adding a table only adds equations, so a subset that leaves one table leaves one
    with any table more. Up to :data:`EXACT_SUBSETS` tables, subsets are tried by size,
    in the tables' order, and the first that leaves one table is a smallest; with more
    tables, each table is left out in turn while the rest still leave one table (a
    subset from which no table can be taken, not always a smallest).
    """
    *published, targets = tables.tables

    def unique(subset: tuple[int, ...]) -> bool:
        chosen = (*(published[k] for k in subset), targets)
        return _unique(TableSet(chosen, tables.dimensions), count_budget)

    everything = tuple(range(len(published)))
    if len(published) <= EXACT_SUBSETS:
        for size in range(1, len(published)):
            for subset in itertools.combinations(everything, size):
                if unique(subset):
                    return subset
        return everything
    kept = list(everything)
    for k in everything:
        trial = tuple(j for j in kept if j != k)
        if trial and unique(trial):
            kept = list(trial)
    return tuple(kept)


def _attack(system: System) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per target row of ``system`` (its last table's), the attacker's interval (``nan``
    for the other rows: the published cells' own intervals are not needed)."""
    lower = np.full(len(system.lower), np.nan)
    upper = np.full(len(system.lower), np.nan)
    for found in attack_last(system):
        lower[found.row], upper[found.row] = found.lower, found.upper
    return lower, upper


def _fit(system: System, real: NDArray[np.bool_]) -> tuple[NDArray[np.float64], float]:
    """The integer table closest to released noisy cells, and its distance from them.

    The released counts ``y`` (``system.lower`` of the ``real`` rows) are evidence,
    not equations: the table is a whole non-negative ``x`` minimising the total
    absolute difference ``sum |A x - y|``, the maximum-likelihood table under
    discrete Laplace noise (its log-likelihood is ``-sum |A x - y| / b``), as an
    integer program (HiGHS): ``x`` whole, ``d >= 0`` per released cell with
    ``A x - d <= y <= A x + d``, minimising ``sum d``. This is the reconstruction the
    US Census Bureau's experiment ran against its own noisy measurements (Abowd et al.
    2023, section 4): the best an attacker can do without a certificate.
    """
    from scipy import sparse

    a = system.matrix[np.flatnonzero(real)]
    y = system.lower[real]
    rows, cells = a.shape
    eye = sparse.identity(rows, format="csr")
    matrix = sparse.vstack([sparse.hstack([a, -eye]), sparse.hstack([a, eye])])
    infinite = np.full(rows, math.inf)
    cost = np.concatenate([np.zeros(cells), np.ones(rows)])
    h = program(
        matrix, np.concatenate([-infinite, y]), np.concatenate([y, infinite]), cost, integer=cells
    )
    h.run()
    x = np.maximum(0.0, np.round(np.asarray(h.getSolution().col_value[:cells])))
    return x, float(np.abs(a @ x - y).sum())


def _two_tables(system: System, real: NDArray[np.bool_]) -> int | None:
    """Whether two integer tables agree with the ``real`` rows' intervals: 2 when two
    are found (the group is not unique: a proof), 1 when the two searched for are the
    same (the group may be unique: the attacker's intervals decide), ``None`` when
    there is none.

    The two are the integer tables of least and of largest ``c @ x`` for fixed
    generic weights ``c`` (integer programs, HiGHS): distinct whenever the integer
    tables are not all alike in ``c``, which for distinct tables almost never happens.
    Two integer programs instead of a linear program per cell: most groups of a
    noisy release are settled by them.
    """
    import highspy

    cells = system.matrix.shape[1]
    weights = np.random.default_rng(cells).integers(1, 1000, cells).astype(float)
    h = _program(system, real, weights, integer=True)
    found = []
    for sense in (highspy.ObjSense.kMinimize, highspy.ObjSense.kMaximize):
        h.changeObjectiveSense(sense)
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return None
        if status != highspy.HighsModelStatus.kOptimal:
            return 1  # unbounded: left to the attacker's intervals
        found.append(np.round(np.asarray(h.getSolution().col_value)))
    return 1 if (found[0] == found[1]).all() else 2


def _program(
    system: System, real: NDArray[np.bool_], cost: NDArray[np.float64], *, integer: bool
) -> Any:
    """A HiGHS model over the cube's cells (not negative; whole numbers if ``integer``)
    within the ``real`` rows' intervals, of objective ``cost @ x`` (to be minimised)."""
    a = system.matrix[np.flatnonzero(real)]
    return program(
        a, system.lower[real], system.upper[real], cost, integer=a.shape[1] if integer else 0
    )


def _known_records(
    system: System,
    real: NDArray[np.bool_],
    known: NDArray[np.float64],
    category: NDArray[np.int64],
    shape: tuple[int, ...],
    axis: int | None,
) -> int:
    """Records whose sensitive value is known, at least: the least number of records,
    over every table the ``real`` rows allow, in the combinations of the other
    dimensions that have one possible sensitive category (:func:`_sensitive`).

    Summing each combination's own lower bound can fall far short: of the Titanic's
    six first-class children, all of whom survived, neither sex's count is known, yet
    every one of them is known to have survived. The least total is a linear program
    (HiGHS), rounded up for counts; never below the sum of the lower bounds.
    """
    chosen = category >= 0
    floor = int(known.sum())
    if axis is None or not chosen.any():
        return floor
    import highspy

    cells = int(np.prod(shape))
    index = np.moveaxis(np.arange(cells).reshape(shape), axis, -1).reshape(-1, shape[axis])
    cost = np.zeros(cells)
    cost[index[chosen].ravel()] = 1.0
    h = _program(system, real, cost, integer=False)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return floor
    least = math.ceil(float(h.getInfo().objective_function_value) - TOLERANCE)
    return max(floor, least)


def _intervals(tables: TableSet, noise: NoiseDistribution, confidence: float) -> TableSet:
    """A group's released tables (the targets last) with each cell's noisy count
    replaced by an interval that holds the true count, every cell of the group at once,
    with probability ``confidence``: ``y - w`` to ``y + w`` (not below 0) with
    ``P(|Z| <= w) >= 1 - (1 - confidence) / cells`` (the union bound)."""
    released = tables.tables[:-1]
    width = _width(noise, confidence, sum(len(t) for t in released))

    def widened(table: PublishedTable) -> PublishedTable:
        return replace(
            table,
            lower=np.maximum(0.0, table.lower - width),
            upper=table.upper + width,
            state=np.full(len(table), "rounded"),
        )

    return TableSet((*map(widened, released), tables.tables[-1]), tables.dimensions)


@functools.lru_cache(maxsize=256)
def _width(noise: NoiseDistribution, confidence: float, cells: int) -> int:
    """The half-width of :func:`_intervals` for ``cells`` cells."""
    return noise.within(1 - (1 - confidence) / max(cells, 1))


#: The systems built last in this process, by the layout of their tables' cells.
_LAST: dict[tuple[object, ...], System] = {}

#: Systems kept: one per subset of the tables of a publication of up to 6 tables.
_KEEP = 64

#: Tables up to which the smallest subset that gives a group back is searched exactly.
EXACT_SUBSETS = 8


def _system(tables: TableSet) -> System:
    """:func:`~anonaudit.tables.system.build` of ``tables``, reusing a system built
    lately when its tables have the same cells, code for code: the groups of one
    publication usually do, and differ only in the published values, which are put in
    the rows (a row is its table's cell, ``System.table`` and ``System.cell``)."""
    layout = (
        *((d, v.total, *v.parents.items()) for d, v in tables.dimensions.items()),
        *((t.name, t.dimensions, *map(_codes_key, t.codes)) for t in tables.tables),
    )
    template = _LAST.get(layout)
    if template is None:
        template = build(tables)
        if len(_LAST) >= _KEEP:
            del _LAST[next(iter(_LAST))]
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
    each value. ``None`` when more than ``budget`` partial tables would be visited, or
    when they are too many to try: no budget, a cell unbounded, more than
    :data:`COUNT_CELLS` cells open.

    The cells are assigned in an order that completes published cells early; a cell's
    values are those that leave each of its published cells reachable by the cells
    still open (their bounds summed), so that a published cell is checked exactly when
    its last cell is assigned."""
    if not (budget and np.isfinite(high).all() and (low < high).sum() <= COUNT_CELLS):
        return None
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
    sensitive: tuple[int | None, int, NDArray[np.int64]],
    tail: NDArray[np.float64] | None,
    draws: int,
    rng: np.random.Generator,
) -> Chance:
    """The baseline: ``draws`` tables whose records' codes are drawn independently with
    the one-way ``margins`` (each dimension's codes shuffled), each scored on what the
    attack proves, averaged. ``sensitive``: the axis, the records whose value the attack
    knows (:func:`_known_records`) and per combination of the other dimensions that value
    (:func:`_sensitive`; -1: not known): a draw is right on the records it puts in those
    combinations with that value, at most the cell's upper bound each and the attack's
    count in all."""
    forced = low == high
    one = forced & (low == 1)
    whole = bool(forced.all()) and low.sum() > 0
    axis, known_total, category = sensitive
    sure = category >= 0
    if axis is not None:
        cap = np.moveaxis(high.reshape(shape), axis, -1).reshape(len(category), -1)
        cap = cap[np.arange(len(category)), np.maximum(category, 0)]
    sums = np.zeros(5)
    in_forced = np.zeros(len(low))
    labels = [np.repeat(np.arange(len(m)), m) for m in margins]
    cumulative = None if tail is None else np.cumsum(tail, axis=1)
    for _ in range(draws):
        index = tuple(rng.permutation(codes) for codes in labels)
        drawn = np.bincount(np.ravel_multi_index(index, shape), minlength=len(low)).astype(float)
        sums[0] += whole and bool((drawn == low).all())
        in_forced += np.where(forced, np.minimum(drawn, low), 0.0)
        sums[2] += (drawn[one] == 1).sum()
        if axis is not None:
            moved = np.moveaxis(drawn.reshape(shape), axis, -1).reshape(len(category), -1)
            given = moved[np.arange(len(category)), np.maximum(category, 0)]
            sums[3] += min(float(np.minimum(given, cap)[sure].sum()), known_total)
        if cumulative is not None:
            taken = np.minimum(drawn, cumulative.shape[1] - 1).astype(np.int64)
            sums[4] += (cumulative[np.arange(len(low)), taken] - cumulative[:, 0]).sum()
    means = sums / draws
    in_forced /= draws
    return Chance(
        reconstructed=float(means[0]),
        records_forced=float(in_forced.sum()),
        records_unique=float(means[2]),
        sensitive_known=float(means[3]),
        records_right=None if tail is None else float(means[4]),
        forced_cells=in_forced,
    )
