"""Benchmark: ``anonaudit reconstruct`` on census-style blocks (issue 27).

What it measures
----------------
``--groups`` blocks (1,000 by default; ``--groups 10000`` is the issue's size) of 5 to
30 people each, drawn with a fixed seed (``tests/census_tables.py``: sex x the 23 age
bands of the 2010 table P12 x 7 races, each block its own mix of races), published as
tables of the 2010 kind (sex x age, age x race, sex x race, block totals, every margin;
no cell suppressed), then reconstructed block by block with race as the sensitive
dimension: :func:`anonaudit.tables.reconstruct.reconstruct` (the linear bounds of
every cell of the 322-cell cube, the count of the small blocks' tables, the chance
baseline). Each run is timed once for every ``--workers`` count (processes over the
blocks), and the results of the runs are checked equal (deterministic).

Printed: seconds in all and per block, the share of blocks reconstructed (certified)
by block size and the rates beside their chance baseline, the peak resident memory of
this process once the tables are made and at the end, and the load average before and
after. It always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_reconstruct.py                     # 1,000 blocks
    python benchmarks/bench_reconstruct.py --groups 10000      # the issue's size
    python benchmarks/bench_reconstruct.py --workers 1,2       # one process, then two
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from census_tables import blocks, publish  # noqa: E402

from anonaudit.tables.reconstruct import Reconstruction, reconstruct  # noqa: E402


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=1000, help="blocks (1,000)")
    parser.add_argument("--workers", default="2", help="process counts to time, e.g. 1,2")
    parser.add_argument("--seed", type=int, default=2010, help="the blocks' seed")
    args = parser.parse_args()
    load = os.getloadavg()
    start = time.perf_counter()
    cubes = blocks(args.groups, seed=args.seed)
    tables = publish(cubes)
    made = time.perf_counter() - start
    cells = sum(len(t) for t in tables.tables)
    print(
        f"{args.groups:,} blocks, {int(cubes.sum()):,} people; {cells:,} published cells "
        f"in {len(tables.tables)} tables (made in {made:.1f} s, peak memory "
        f"{_peak_mib():,.0f} MiB); load average before {load[0]:.2f}"
    )
    first: Reconstruction | None = None
    for workers in (int(w) for w in args.workers.split(",")):
        start = time.perf_counter()
        result = reconstruct(tables, group="block", sensitive="race", workers=workers)
        seconds = time.perf_counter() - start
        same = "" if first is None else f"; same result as before: {_same(first, result)}"
        first = first or result
        print(
            f"workers {workers}: {seconds:.1f} s, {1000 * seconds / args.groups:.1f} ms a "
            f"block; reconstructed {result.reconstructed:,} of {args.groups:,} "
            f"({result.reconstructed / args.groups:.1%}); counted {len(result.counted):,}"
            f"{same}"
        )
    assert first is not None
    for band in first.by_size((5, 10, 15, 20, 25, 31)):
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
    after = os.getloadavg()
    print(
        f"peak memory of this process {_peak_mib():,.0f} MiB; load average after "
        f"{after[0]:.2f} (1 min), {after[1]:.2f} (5 min)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
