"""Benchmark: the ``--records-out`` pass on a 10M-row CSV, against the audit's own pass.

What it measures
----------------
The CSV of :func:`bench_audit.ensure_csv` (``--rows``, default 10,000,000; zip, age, sex,
race, education as QIs, about 237k classes at 10M rows; generated once, reused), read
from the page cache, in one process:

* baseline: :func:`anonaudit.load`, the class table, the one streaming pass every audit
  pays (pyarrow CSV batches into a DuckDB aggregate);
* ``write_records``: the second pass of ``--records-out`` — re-read the CSV, find each
  record's class (:class:`anonaudit.engines.records.KeyIndex`), write ``record``, the QIs,
  ``fk`` and
  ``prosecutor_risk`` as CSV (through pyarrow's streaming writer, formula cells defused)
  to a temporary file;
* the same lookups without writing (``KeyIndex.lookup`` over the batches), to separate
  finding the classes from writing the file.

Each is timed with ``time.perf_counter`` (best of ``--repeat``) and shown with its ratio to
the baseline. Memory: the resident set size is sampled every 20 ms during each pass; the
records pass should stay within the class table's peak plus a batch or two (it never
holds the records). The load average is printed before and after: other work on the
machine inflates the times. The script always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_records.py                  # 10M rows, a few minutes
    python benchmarks/bench_records.py --rows 1000000   # quick check
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit import (  # importable through the path above
    MIB,
    QUASI_IDENTIFIERS,
    REPO_ROOT,
    _current_rss_bytes,
    ensure_csv,
    load_average,
    warm_cache,
)


class _PeakRss:
    """The largest resident set size seen while the block runs (sampled every 20 ms)."""

    def __enter__(self) -> _PeakRss:
        self.start = self.peak = _current_rss_bytes()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, _current_rss_bytes())

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, _current_rss_bytes())


def _best(repeat: int, work: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """Best time, and the RSS at the start and the peak of that run, and its result."""
    best: tuple[float, float, float, Any] | None = None
    for _ in range(repeat):
        with _PeakRss() as rss:
            start = time.perf_counter()
            result = work()
            elapsed = time.perf_counter() - start
        if best is None or elapsed < best[0]:
            best = (elapsed, rss.start / MIB, rss.peak / MIB, result)
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> int:
    """Generate or reuse the data, time the passes, print the numbers and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the CSV")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best time)")
    parser.add_argument(
        "--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "data", help="data directory"
    )
    args = parser.parse_args(argv)
    if args.rows < 1 or args.repeat < 1:
        parser.error("--rows and --repeat must be at least 1")

    import anonaudit
    from anonaudit.engines.records import KeyIndex, record_batches, write_records
    from anonaudit.sources import open_inputs

    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load_average()}")
    path = ensure_csv(args.out_dir, args.rows)
    warm_cache(path)
    qi = list(QUASI_IDENTIFIERS)

    load_s, load_rss0, load_peak, table = _best(
        args.repeat, lambda: anonaudit.load(str(path), anonaudit.Roles(qi))
    )
    report = anonaudit.audit_table(table)
    classes = report.table.classes
    print(f"{table.rows:,} records, {len(classes):,} classes")

    def lookups() -> int:
        index = KeyIndex(classes.keys, qi)
        return sum(
            int((index.lookup(b) >= 0).sum()) for b in record_batches(open_inputs(str(path)), qi)
        )

    look_s, look_rss0, look_peak, matched = _best(args.repeat, lookups)
    with tempfile.TemporaryDirectory(dir=args.out_dir) as folder:
        out = Path(folder) / "records.csv"
        write_s, write_rss0, write_peak, written = _best(
            args.repeat, lambda: write_records(open_inputs(str(path)), report, out)
        )
        size = out.stat().st_size / MIB
    assert matched == written == table.rows

    print(f"\n{'pass':<34}{'time':>9}{'ratio':>8}{'RSS start':>12}{'RSS peak':>11}")
    for label, seconds, start, peak in [
        ("class table (anonaudit.load)", load_s, load_rss0, load_peak),
        ("class lookups only", look_s, look_rss0, look_peak),
        ("write_records (--records-out)", write_s, write_rss0, write_peak),
    ]:
        print(
            f"{label:<34}{seconds:>8.2f}s{seconds / load_s:>7.2f}x"
            f"{start:>10.0f} MiB{peak:>7.0f} MiB"
        )
    print(f"\nrecords file: {size:,.0f} MiB, {written:,} rows")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
