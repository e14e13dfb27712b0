"""Benchmark: a differentially private release of a one-million-cell class table.

What it measures
----------------
A synthetic class table is built in memory (not timed): 2,000 values of one QI x 50 of
another x 10 sensitive values = ``--cells`` cells of a public domain (default 1,000,000),
about 300,000 of them populated, 3,000,000 records. The synthetic counts come from
numpy's seeded generator: they are test data, never a release.

Timed in this process, best of ``--repeat``:

* baseline: numpy's default generator (PCG64, *not* a secure or exact sampler; the
  insecure floor, for scale) drawing a two-sided geometric vector of the same size as
  the difference of two geometric draws;
* ``add_noise``: OpenDP's discrete Laplace and discrete Gaussian on the whole vector in
  one call (``T="i64"``);
* ``release``: the full pure epsilon-DP release over the public domain (cell indexing,
  noise, post-processing, building the released class table);
* ``companion``: the release plus accounting, privacy loss, utility, k/l/t of the noisy
  table and the contrast;
* ``release`` over the observed cells with a stability threshold (epsilon, delta).

Each line prints the seconds and the ratio to the baseline. The load average is printed
before and after: other work on the machine inflates the times.

How to run
----------
From the repository root, with OpenDP installed (``pip install -e ".[dp]"``)::

    python benchmarks/bench_dp.py                # 1M cells, about a minute
    python benchmarks/bench_dp.py --cells 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best_of

from anonaudit.classtable import ClassTable
from anonaudit.dp import (
    DPOptions,
    PrivacyGuarantee,
    PublicDomain,
    add_noise,
    companion,
    release,
)

SEED = 20240601
SA_VALUES = 10
QI2_VALUES = 50


def make_table(cells: int) -> tuple[ClassTable, PublicDomain]:
    """A class table over a public domain of ``cells`` cells, ~30% of them populated."""
    rng = np.random.default_rng(SEED)  # synthetic data only, never noise
    qi1 = max(1, cells // (QI2_VALUES * SA_VALUES))
    domain = PublicDomain.of(
        {
            "q1": [f"v{i}" for i in range(qi1)],
            "q2": [f"w{i}" for i in range(QI2_VALUES)],
            "s": [f"s{i}" for i in range(SA_VALUES)],
        }
    )
    total = qi1 * QI2_VALUES * SA_VALUES
    populated = rng.choice(total, size=int(0.3 * total), replace=False)
    q1, rest = np.divmod(populated, QI2_VALUES * SA_VALUES)
    q2, s = np.divmod(rest, SA_VALUES)
    frame = pd.DataFrame(
        {
            "q1": np.char.add("v", q1.astype(str)),
            "q2": np.char.add("w", q2.astype(str)),
            "s": np.char.add("s", s.astype(str)),
            "count": rng.geometric(0.1, size=len(populated)),
        }
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["q1", "q2"], sensitive=["s"])
    return table, domain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cells", type=int, default=1_000_000, help="public-domain cells")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best)")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    table, domain = make_table(args.cells)
    cells = domain.size(["q1", "q2", "s"])
    print(f"class table: {len(table):,} populated cells of {cells:,}, {table.rows:,} records")
    zeros = np.zeros(cells, dtype=np.int64)
    insecure = np.random.default_rng()

    def baseline() -> object:
        p = 1 - np.exp(-1.0)
        return zeros + insecure.geometric(p, cells) - insecure.geometric(p, cells)

    measurements: list[tuple[str, Callable[[], object]]] = [
        ("baseline: numpy default_rng two-sided geometric (INSECURE)", baseline),
        (
            "OpenDP discrete Laplace, add_noise",
            lambda: add_noise(zeros, mechanism="discrete-laplace", scale=1.0),
        ),
        (
            "OpenDP discrete Gaussian, add_noise",
            lambda: add_noise(zeros, mechanism="discrete-gaussian", scale=1.0),
        ),
        (
            "release, public domain, pure eps = 1",
            lambda: release(table, DPOptions(PrivacyGuarantee(1.0), domain=domain)),
        ),
        (
            "companion (release + report), eps = 1",
            lambda: companion(table, DPOptions(PrivacyGuarantee(1.0), domain=domain)),
        ),
        (
            f"release, {len(table):,} observed cells, eps = 1, delta = 1e-6",
            lambda: release(table, DPOptions(PrivacyGuarantee(1.0, delta=1e-6))),
        ),
    ]
    floor = None
    for name, work in measurements:
        seconds = best_of(args.repeat, work)[0]
        floor = floor or seconds
        print(f"{name:<62} {seconds:8.2f} s  {seconds / floor:7.1f}x baseline")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
