"""Benchmark: the population risk models on a 10M-record sample.

What it measures
----------------
The records of :func:`bench_audit.generate_table` (``--rows``, default 10,000,000; zip,
age, sex, race, education, drawn uniformly) plus a ``region`` drawn from a Zipf law
(exponent 1.6, folded into 1M codes), so that class sizes are heavy-tailed with many
sample uniques, the shape the population models are made for (on purely uniform data
Pitman's model has no admissible fit and reports none). The table is built in memory
(not timed), then:

* baseline: the class table, :func:`anonaudit.load` of the in-memory table (one streaming
  pass, DuckDB aggregate) — what every audit pays anyway;
* each population model (``pitman``, ``zayatz``, ``snb`` and the ``dankar`` rule) at
  sampling fractions 0.01, 0.1, 0.2 and 0.5, plus journalist and marketer risk: the time of
  each, its estimate, and its ratio to the baseline.

The models read only the class-size frequencies ``c_j``, so their cost does not grow with
the records: the ratio says what population risk adds to an audit of this size. Times are
``time.perf_counter`` of one run each (best of ``--repeat``); the load average is printed
because other work on the machine inflates them. The script always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_population.py                  # 10M rows, about a minute
    python benchmarks/bench_population.py --rows 1000000
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_audit import QUASI_IDENTIFIERS, SEED, generate_table
from timing import best_of

FRACTIONS = (0.01, 0.1, 0.2, 0.5)
MODELS = ("pitman", "zayatz", "snb", "dankar")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import numpy as np
    import pyarrow as pa

    import anonaudit
    from anonaudit.measures.population import (
        journalist_risk,
        marketer_risk,
        population_uniqueness,
    )

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    data = generate_table(args.rows)
    rng = np.random.default_rng(SEED + 1)
    data = data.append_column("region", pa.array(rng.zipf(1.6, size=args.rows) % 1_000_000))
    qi = [*QUASI_IDENTIFIERS, "region"]

    base, table = best_of(args.repeat, lambda: anonaudit.load(data, anonaudit.Roles(qi)))
    sizes = table.classes.sizes
    print(
        f"sample: {table.rows:,} records, {len(sizes):,} classes, "
        f"{int((sizes == 1).sum()):,} sample uniques"
    )
    print(f"baseline  class table (anonaudit.load)      {base:8.3f} s")
    for fraction in FRACTIONS:
        for model in MODELS:
            seconds, result = best_of(
                args.repeat,
                lambda f=fraction, m=model: population_uniqueness(
                    table, sampling_fraction=f, model=m
                ),
            )
            estimate = "n/a" if result.model_used == "none" else f"{result.uniques_fraction:.6g}"
            print(
                f"f={fraction:<5} {model:<7} -> {result.model_used:<7} "
                f"uniques fraction {estimate:<12} {seconds:8.3f} s  "
                f"({seconds / base:.3f}x the class table)"
            )
    for name, work in (
        ("journalist", lambda: journalist_risk(table)),
        ("marketer", lambda: marketer_risk(table)),
    ):
        seconds, _ = best_of(args.repeat, work)
        print(f"{name:<10} risk {seconds:8.4f} s  ({seconds / base:.4f}x the class table)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
