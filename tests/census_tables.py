"""Census-style microdata in blocks, and the count tables a statistical office publishes
of them (the 2010 kind: sex by age, age by race, sex by race, block totals), for the
reconstruction tests and ``benchmarks/bench_reconstruct.py``.

A block's people are counted in a cube (sex x age band x race); a published table keeps
some of the cube's axes, with every margin (``Total``), one table per block stacked along
a ``block`` dimension. Small interior cells may be suppressed (``x``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from anonaudit.published import Dimension, PublishedTable, TableSet

TOTAL = "Total"
#: The age bands of the 2010 census table P12 (sex by age): their lower ends.
P12_AGES = (
    0,
    5,
    10,
    15,
    18,
    20,
    21,
    22,
    25,
    30,
    35,
    40,
    45,
    50,
    55,
    60,
    62,
    65,
    67,
    70,
    75,
    80,
    85,
)
#: The 2010 tables: sex x age, age x race, sex x race, and the block totals.
TABLES_2010 = ((0, 1), (1, 2), (0, 2), ())
NAMES = ("sex", "age", "race")
#: 38 age bins, the union of the 2010 tables' ages: single years under 20 (table P14,
#: sex by single year of age for the population under 20) and table P12's bands from 20.
AGES_38 = (*range(20), *P12_AGES[5:])
#: The issue's census case: sex x age x race x ethnicity (Hispanic or not).
NAMES_4 = ("sex", "age", "race", "ethnicity")
#: Five published tables of the 2010 kind over them: P12 (sex by age), P12A-G (sex by
#: age, by race), P12H (sex by age, by Hispanic origin), P5-like (race by Hispanic
#: origin) and P1 (the block's total), each with its margins.
TABLES_2010_FIVE = ((0, 1), (0, 1, 2), (0, 1, 3), (2, 3), ())


def blocks(
    count: int,
    *,
    sizes: tuple[int, int] = (5, 30),
    ages: Sequence[int] = P12_AGES,
    races: int = 7,
    ethnicity: bool = False,
    seed: int = 0,
) -> NDArray[np.int64]:
    """``count`` blocks of ``sizes[0]`` to ``sizes[1]`` people each, as cubes (block x sex
    x age band x race, x Hispanic origin with ``ethnicity``). Ages follow a declining
    pyramid up to 95; each block has its own mix of races (a Dirichlet draw, so that
    blocks are segregated as real ones are) and its own Hispanic share (a Beta draw)."""
    rng = np.random.default_rng(seed)
    people = rng.integers(sizes[0], sizes[1] + 1, size=count)
    age_weights = np.linspace(1.0, 0.2, 96)
    age_weights /= age_weights.sum()
    band = np.searchsorted(np.asarray(ages), np.arange(96), side="right") - 1
    shape = (count, 2, len(ages), races) + ((2,) if ethnicity else ())
    cubes = np.zeros(shape, dtype=np.int64)
    for b, n in enumerate(people):
        mix = rng.dirichlet(np.full(races, 0.4))
        sex = rng.integers(0, 2, size=n)
        age = band[rng.choice(96, size=n, p=age_weights)]
        race = rng.choice(races, size=n, p=mix)
        if ethnicity:
            hispanic = (rng.random(n) < rng.beta(0.5, 2.0)).astype(np.int64)
            np.add.at(cubes[b], (sex, age, race, hispanic), 1)
        else:
            np.add.at(cubes[b], (sex, age, race), 1)
    return cubes


def margins(cubes: NDArray[np.int64], keep: Sequence[int]) -> NDArray[np.int64]:
    """The table keeping the cube axes ``keep`` (counted from the first after the
    leading one), each with its total last; the leading axis (blocks, or candidate
    tables) is kept as it is."""
    other = tuple(k + 1 for k in range(cubes.ndim - 1) if k not in keep)
    table = cubes.sum(axis=other) if other else cubes
    for axis in range(1, table.ndim):
        table = np.concatenate([table, table.sum(axis=axis, keepdims=True)], axis=axis)
    return table


def bounds(
    cubes: NDArray[np.int64], keep: Sequence[int], suppress_below: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """What a reader knows of each cell of :func:`margins`: its value, or ``[0, inf)``
    for an interior cell of ``1 <= value < suppress_below`` (suppressed)."""
    values = margins(cubes, keep).astype(float)
    interior = np.ones(values.shape, dtype=bool)
    for axis in range(1, values.ndim):
        edge = [slice(None)] * values.ndim
        edge[axis] = -1
        interior[tuple(edge)] = False
    hidden = interior & (values >= 1) & (values < suppress_below)
    return np.where(hidden, 0.0, values), np.where(hidden, np.inf, values)


def dimensions(shape: Sequence[int], names: Sequence[str] = NAMES) -> dict[str, Dimension]:
    """The code lists: ``sex0``, ``sex1``, ``age0``, ... under ``Total``."""
    return {
        d: Dimension.flat(d, [f"{d}{i}" for i in range(n)], TOTAL)
        for d, n in zip(names, shape, strict=True)
    }


def publish(
    cubes: NDArray[np.int64],
    keeps: Sequence[Sequence[int]] = TABLES_2010,
    *,
    names: Sequence[str] = NAMES,
    suppress_below: int = 0,
) -> TableSet:
    """The tables of ``cubes`` keeping each of ``keeps``, stacked by block."""
    shape = cubes.shape[1:]
    dims = dimensions(shape, names)
    dims["block"] = Dimension.flat("block", [f"b{b}" for b in range(len(cubes))], TOTAL)
    tables = []
    for keep in keeps:
        kept = [names[k] for k in keep]
        lower, upper = bounds(cubes, keep, suppress_below)
        codes = [np.asarray([*dims[d].leaves, TOTAL]) for d in ["block", *kept]]
        codes[0] = codes[0][:-1]
        grid = itertools.product(*(range(len(c)) for c in codes))
        index = np.asarray(list(grid), dtype=np.int64).reshape(-1, len(codes))
        low, high = lower.ravel(), upper.ravel()
        hidden = ~np.isfinite(high)
        tables.append(
            PublishedTable(
                "_".join(kept) or "total",
                "count",
                ("block", *kept),
                tuple(c[index[:, i]] for i, c in enumerate(codes)),
                low,
                high,
                np.where(hidden, "suppressed", "published"),
                np.where(hidden, "x", low.astype(np.int64).astype(str)),
            )
        )
    return TableSet(tuple(tables), dims)
