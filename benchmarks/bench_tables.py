"""Benchmark: the attacker's intervals of ``anonaudit tables`` against a naive baseline.

What it measures
----------------
A two-dimensional count table of ``--size`` x ``--size`` cells with its margins (200 x
200 = 40,000 cells by default, the issue's case), counts drawn with a fixed seed from a
gamma-Poisson mixture so that about 2.7% of the cells (1,095 of 40,000) are 1 or 2;
those are suppressed (a threshold rule of 3, no secondary suppression: the pattern an
unaided export has).

* ``anonaudit``: :func:`anonaudit.tables.system.reduce` and
  :func:`anonaudit.tables.attack.attack` (the arithmetic a pencil settles, then one HiGHS
  model per component with its objective changed in place, solving only the bounds no
  solution seen settles);
* ``naive``: one fresh linear program per bound per suppressed cell over the whole
  table (scipy's ``linprog``, HiGHS too), as an auditor without the structure would.
  ``--naive-cells N`` times it on N suppressed cells and scales to all of them (the
  printed figure says so); ``--naive-cells 0`` runs it on every one (minutes).

Both give the same intervals (checked on the cells the baseline solves). The script
prints seconds, the ratio, and the load average before and after. It always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_tables.py                  # 40,000 cells
    python benchmarks/bench_tables.py --size 500       # 250,000 cells
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best_of

from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.tables.attack import attack
from anonaudit.tables.system import System, build, reduce


def table(size: int, seed: int = 0) -> TableSet:
    """A ``size`` x ``size`` table (margins included) with its small cells suppressed."""
    rng = np.random.default_rng(seed)
    n = size - 1
    grid = rng.poisson(rng.gamma(1.0, 70, size=(n, n)))
    full = np.zeros((size, size))
    full[:n, :n] = grid
    full[n, :n] = grid.sum(0)
    full[:n, n] = grid.sum(1)
    full[n, n] = grid.sum()
    hidden = np.zeros((size, size), dtype=bool)
    hidden[:n, :n] = (grid > 0) & (grid < 3)
    rows = [f"r{i}" for i in range(n)] + ["Total"]
    cols = [f"c{j}" for j in range(n)] + ["Total"]
    values, mask = full.ravel(), hidden.ravel()
    published = PublishedTable(
        "bench",
        "count",
        ("r", "c"),
        (np.repeat(np.asarray(rows), size), np.tile(np.asarray(cols), size)),
        np.where(mask, 0.0, values),
        np.where(mask, np.inf, values),
        np.where(mask, "suppressed", "published"),
        np.where(mask, "x", values.astype(int).astype(str)),
    )
    dims = {"r": Dimension.flat("r", rows[:-1]), "c": Dimension.flat("c", cols[:-1])}
    return TableSet((published,), dims)


def naive(system: System, rows: np.ndarray) -> dict[int, tuple[float, float]]:
    """One fresh LP per bound per cell, over the whole table."""
    a = system.matrix
    exact = system.exact
    a_eq, b_eq = a[exact], system.lower[exact]
    bounded = ~exact & np.isfinite(system.upper)
    a_ub = a[bounded] if bounded.any() else None
    b_ub = system.upper[bounded] if bounded.any() else None
    result = {}
    for row in rows:
        c = np.asarray(a[row].todense()).ravel()
        low = optimize.linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
        high = optimize.linprog(-c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
        top = -high.fun if high.status == 0 else np.inf
        result[int(row)] = (float(np.ceil(low.fun - 1e-7)), float(np.floor(top + 1e-7)))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--naive-cells", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    tables = table(args.size)
    system = build(tables)
    targets = np.flatnonzero(~system.exact)
    print(f"table: {args.size} x {args.size} = {args.size**2:,} cells, {len(targets):,} suppressed")

    def ours() -> dict[int, tuple[float, float]]:
        return {i.row: (i.lower, i.upper) for i in attack(reduce(build(tables)))}

    seconds, found = best_of(args.repeat, ours)
    exact = sum(1 for low, high in found.values() if low == high)
    print(f"anonaudit: {seconds:.2f} s (best of {args.repeat}), {exact:,} cells disclosed exactly")
    sample = (
        targets if args.naive_cells <= 0 else targets[:: max(1, len(targets) // args.naive_cells)]
    )
    start = time.perf_counter()
    baseline = naive(system, sample)
    spent = time.perf_counter() - start
    scaled = spent * len(targets) / len(sample)
    label = "measured" if len(sample) == len(targets) else f"{len(sample)} cells timed, scaled"
    print(f"naive (one fresh linprog per bound per cell): {scaled:.1f} s ({label})")
    agree = all(baseline[r] == found[r] for r in baseline)
    print(f"same intervals on the {len(sample)} cells compared: {agree}")
    print(f"ratio naive / anonaudit: {scaled / seconds:.1f}x")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
