"""Benchmark: ``anonaudit reconstruct`` on census-style blocks (issue 27).

What it measures
----------------
``--groups`` blocks (1,000 by default; ``--groups 10000`` is the issue's size), drawn
with a fixed seed (``tests/census_tables.py``), each block its own mix of races:

* ``--case census`` (the issue's case, the default): blocks of 5 to 100 people, sex x 38
  age bins (single years under 20, table P12's bands from 20) x 7 races x Hispanic
  origin (1,064 cube cells), published as five tables of the 2010 kind: sex x age (P12),
  sex x age x race (P12A-G), sex x age x Hispanic origin (P12H), race x Hispanic origin
  and the block totals, every margin; nothing suppressed.
* ``--case p12``: blocks of 5 to 30 people, sex x the 23 age bands of P12 x 7 races (322
  cells), four tables (sex x age, age x race, sex x race, totals).

Each block is reconstructed with race as the sensitive dimension
(:func:`anonaudit.tables.reconstruct.reconstruct`: the linear bounds of every cube
cell, the count of the small blocks' tables, the chance baseline), timed once for every
``--workers`` count (processes over the blocks) and, with ``--dask``, once through a
Dask cluster (the product's Dask engine's local cluster, the blocks sent as tasks of
``--workers`` x 64 at a time); the results of the runs are checked equal
(deterministic). The **naive baseline**, run in the same process: each cube cell's
minimum and maximum by a fresh integer program (``scipy.optimize.milp``) over the
block's published cells, timed on ``--baseline-cells`` cells of ``--baseline`` blocks
and scaled to the whole cube. With ``--dp-epsilon E`` the tables are also released
under E-DP (every cell with OpenDP's discrete Laplace noise) and reconstructed beside
(:func:`~anonaudit.tables.reconstruct.beside_dp`), timed.

Printed: seconds in all and per block, the ratio to the baseline, the share of blocks
reconstructed (certified) by block size and the rates beside their chance baseline,
the peak resident memory of this process, and the load average before and after. It
always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_reconstruct.py                      # 1,000 census blocks
    python benchmarks/bench_reconstruct.py --groups 10000       # the issue's size
    python benchmarks/bench_reconstruct.py --workers 1,2 --dask # processes, then Dask
    python benchmarks/bench_reconstruct.py --case p12           # the smaller cube
    python benchmarks/bench_reconstruct.py --sizes 90,100 --baseline 0  # one block size
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import numpy as np  # noqa: E402
from census_tables import (  # noqa: E402
    AGES_38,
    NAMES_4,
    TABLES_2010_FIVE,
    blocks,
    publish,
)

from anonaudit.published import TableSet  # noqa: E402
from anonaudit.tables.reconstruct import Reconstruction, _split, reconstruct  # noqa: E402
from anonaudit.tables.system import build  # noqa: E402

#: Block sizes and the bands the certified share is printed by, per case.
BANDS = {"census": (5, 10, 20, 30, 50, 75, 101), "p12": (5, 10, 15, 20, 25, 31)}


def _peak_mib() -> float:
    """This process's peak resident memory. (A worker's is not measured here: the
    children's figure counts the parent's pages a child holds between fork and exec.)"""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _same(a: Reconstruction, b: Reconstruction) -> bool:
    return all(
        x.group == y.group
        and (x.lower == y.lower).all()
        and (x.upper == y.upper).all()
        and x.solutions == y.solutions
        and x.chance == y.chance
        for x, y in zip(a.groups, b.groups, strict=True)
    )


def _tables(
    case: str, groups: int, seed: int, sizes: tuple[int, int] | None
) -> tuple[np.ndarray, TableSet]:
    if case == "census":
        people = sizes or (5, 100)
        cubes = blocks(groups, sizes=people, ages=AGES_38, ethnicity=True, seed=seed)
        return cubes, publish(cubes, TABLES_2010_FIVE, names=NAMES_4)
    cubes = blocks(groups, sizes=sizes or (5, 30), seed=seed)
    return cubes, publish(cubes)


def _naive(tables: TableSet, blocks_timed: int, cells: int) -> float:
    """Seconds a block of the naive baseline: a fresh integer program per bound per
    cube cell (``scipy.optimize.milp``), timed on ``cells`` cells of the first
    ``blocks_timed`` blocks and scaled to the whole cube."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    per_block = []
    for _, part in itertools.islice(_split(tables, "block"), blocks_timed):
        dims = {d: v for d, v in tables.dimensions.items() if d != "block"}
        system = build(TableSet(part, dims))
        a, n = system.matrix, system.matrix.shape[1]
        rows = LinearConstraint(a, system.lower, system.upper)
        start = time.perf_counter()
        for cell in range(min(cells, n)):
            for sign in (1.0, -1.0):
                cost = np.zeros(n)
                cost[cell] = sign
                milp(cost, constraints=rows, integrality=np.ones(n), bounds=Bounds(0, np.inf))
        per_block.append((time.perf_counter() - start) / min(cells, n) * n)
    return float(np.mean(per_block))


def _dask(tables: TableSet, workers: int) -> Reconstruction:
    """The reconstruction with the blocks as tasks of the product's Dask engine's local
    cluster."""
    import distributed

    from anonaudit.engines.dask import _connect

    with _connect(None, distributed) as client:
        return reconstruct(
            tables,
            group="block",
            sensitive="race",
            workers=workers,
            executor=client.get_executor(),
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=tuple(BANDS), default="census", help="(census)")
    parser.add_argument("--groups", type=int, default=1000, help="blocks (1,000)")
    parser.add_argument("--workers", default="2", help="process counts to time, e.g. 1,2")
    parser.add_argument("--dask", action="store_true", help="also run through Dask")
    parser.add_argument("--baseline", type=int, default=2, help="blocks timed naively (2)")
    parser.add_argument("--baseline-cells", type=int, default=20, help="cells a block (20)")
    parser.add_argument("--seed", type=int, default=2010, help="the blocks' seed")
    parser.add_argument("--sizes", help="people a block, LOW,HIGH (the case's by default)")
    parser.add_argument(
        "--dp-epsilon", type=float, help="also release the tables under DP and reconstruct"
    )
    args = parser.parse_args()
    sizes = None
    if args.sizes:
        low, high = (int(n) for n in args.sizes.split(","))
        sizes = (low, high)
    load = os.getloadavg()
    start = time.perf_counter()
    cubes, tables = _tables(args.case, args.groups, args.seed, sizes)
    made = time.perf_counter() - start
    cells = sum(len(t) for t in tables.tables)
    print(
        f"case {args.case}: {args.groups:,} blocks, {int(cubes.sum()):,} people, "
        f"{int(np.prod(cubes.shape[1:])):,} cube cells a block; {cells:,} published cells "
        f"in {len(tables.tables)} tables (made in {made:.1f} s, peak memory "
        f"{_peak_mib():,.0f} MiB); load average before {load[0]:.2f}"
    )
    naive = _naive(tables, args.baseline, args.baseline_cells) if args.baseline else None
    if naive is not None:
        print(
            f"naive baseline (scipy milp per bound per cell, {args.baseline_cells} cells of "
            f"{args.baseline} blocks timed, scaled): {naive:.1f} s a block"
        )
    first: Reconstruction | None = None
    runs = [(f"workers {w}", int(w)) for w in args.workers.split(",")]
    if args.dask:
        runs.append(("dask", max(w for _, w in runs)))
    for name, workers in runs:
        start = time.perf_counter()
        if name == "dask":
            result = _dask(tables, workers)
        else:
            result = reconstruct(tables, group="block", sensitive="race", workers=workers)
        seconds = time.perf_counter() - start
        same = "" if first is None else f"; same result as before: {_same(first, result)}"
        first = first or result
        ratio = f"; {naive / (seconds / args.groups):,.0f}x the baseline" if naive else ""
        print(
            f"{name}: {seconds:.1f} s, {1000 * seconds / args.groups:.1f} ms a "
            f"block{ratio}; reconstructed {result.reconstructed:,} of {args.groups:,} "
            f"({result.reconstructed / args.groups:.1%}); counted {len(result.counted):,}"
            f"{same}; load average {os.getloadavg()[0]:.2f}"
        )
    assert first is not None
    for band in first.by_size(BANDS[args.case]):
        print(
            f"  {band.low:>2}-{band.high}: {band.reconstructed:,} of {band.groups:,} "
            f"({band.reconstructed / band.groups:.1%}); records in forced cells "
            f"{band.records_forced / band.records:.1%}"
        )
    for rate in first.rates():
        print(
            f"  {rate.key}: {rate.count:,.0f} of {rate.of:,} ({rate.share:.1%}); "
            f"chance {rate.chance:,.1f} ({rate.chance_share:.1%})"
        )
    if args.dp_epsilon:
        from anonaudit.tables.reconstruct import beside_dp

        start = time.perf_counter()
        side = beside_dp(tables, first, epsilon=args.dp_epsilon, workers=runs[0][1])
        seconds = time.perf_counter() - start
        close = side.closeness
        print(
            f"beside DP (discrete Laplace, epsilon {args.dp_epsilon:g}, scale "
            f"{side.release.noise.scale:.3g}): {seconds:.1f} s, "
            f"{1000 * seconds / args.groups:.1f} ms a block; certified at 99% "
            f"{side.result.reconstructed:,}; closest tables on the {close.groups:,} blocks "
            f"reconstructed: {close.exact:,} exact, {close.records_right:,} of "
            f"{close.records:,} records in their cell; load average {os.getloadavg()[0]:.2f}"
        )
    after = os.getloadavg()
    print(
        f"peak memory of this process {_peak_mib():,.0f} MiB; load average after "
        f"{after[0]:.2f} (1 min), {after[1]:.2f} (5 min)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
