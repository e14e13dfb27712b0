"""Benchmark: how the full audit scales with rows and with classes, beside DuckDB's GROUP BY.

What it measures
----------------
CSV files of ``rows`` records with exactly ``min(rows, classes)`` equivalence classes
are written once by DuckDB (``COPY``, reused when they exist): a quasi-identifier
``person`` with ``classes`` values in equal shares, a second one ``region`` that is a
function of the first (so it splits no class), and a sensitive ``disease`` of 12 values
hashed per record. Two curves:

* rows: ``--rows-curve`` (default 1M, 10M, 50M) at ``--classes-at`` classes (100,000);
* classes: ``--classes-curve`` (default 10^3 .. 10^7) at ``--rows-at`` rows (10M); at
  10^7 classes and 10M rows the QI is unique per record, an identifier.

With ``--phases`` each point also runs the audit in its two parts in a child of its own
(``anonaudit.load``, then ``anonaudit.audit_table``), the process's memory sampled every
10 ms with the function running: the class table's time and peak, what the table holds
once built, and the checks' time and peak over it, with the function at that peak (where
issue 28's memory went).

For each file, in fresh child processes (``bench_audit.measure``): the bare DuckDB
``SELECT person, region, disease, count(*) FROM read_csv(file) GROUP BY ALL`` fetched to
Arrow, then the full ``anonaudit.audit`` (k, l, entropy l, t, disclosure, risk, and the
suppression advice when the policy fails). Time (median of ``--repeat``) and peak RSS
(the child's, over its RSS before the work) of both, and their ratios, are printed with
the load average. Always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_scaling.py                        # every point; long at 50M
    python benchmarks/bench_scaling.py --rows-curve 1000000 10000000 --classes-curve
    python benchmarks/bench_scaling.py --memory-limit 2GB     # the audit spills to disk
    python benchmarks/bench_scaling.py --rows-curve --classes-curve 10000000 --phases

Generated data goes to ``benchmarks/data/`` (git-ignored), about 30 bytes a record.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench_audit import (
    MIB,
    PREPARE,
    REPO_ROOT,
    WORK,
    Result,
    load_average,
    measure,
    measure_all,
)

QUASI_IDENTIFIERS = ["person", "region"]
SENSITIVE = "disease"
_MEMORY_LIMIT = "ANONAUDIT_BENCH_MEMORY_LIMIT"


def ensure_file(out_dir: Path, rows: int, classes: int) -> Path:
    """The CSV of ``rows`` records in ``classes`` classes, written by DuckDB if missing."""
    import duckdb

    path = out_dir / f"scaling_{rows}rows_{classes}classes.csv"
    if path.exists():
        return path
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    start = time.perf_counter()
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    # person: the record's number modulo classes, so the classes hold equal shares of
    # the records; region a function of person; disease hashed from the record number.
    connection.execute(
        f"""
        COPY (
            SELECT
                'p' || lpad(CAST(i % {classes} AS VARCHAR), 8, '0') AS person,
                'r' || CAST((i % {classes}) % 97 AS VARCHAR) AS region,
                'd' || CAST(hash(i * 31 + 7) % 12 AS VARCHAR) AS disease
            FROM range({rows}) AS t(i)
        ) TO '{partial}' (HEADER, DELIMITER ',')
        """
    )
    connection.close()
    partial.replace(path)
    os.sync()
    size = path.stat().st_size / MIB
    print(f"data: wrote {path.name} ({size:,.0f} MiB) in {time.perf_counter() - start:.1f} s")
    return path


def _work_duckdb(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import duckdb

    columns = ", ".join([*QUASI_IDENTIFIERS, SENSITIVE])
    literal = path.replace("'", "''")
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    limit = os.environ.get(_MEMORY_LIMIT)
    if limit:
        connection.execute(f"SET memory_limit = '{limit}'")
    try:
        query = f"SELECT {columns}, count(*) FROM read_csv('{literal}') GROUP BY ALL"
        result = connection.sql(query).to_arrow_table()
    finally:
        connection.close()
    return {"groups": result.num_rows}


def _work_audit(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import logging

    import anonaudit

    logging.getLogger("anonaudit").setLevel(logging.ERROR)  # the identifier warning
    engine = anonaudit.EngineOptions(memory_limit=os.environ.get(_MEMORY_LIMIT) or None)
    policy = anonaudit.Policy(k=5, l=2, entropy_l=2.0, t=0.2)
    report = anonaudit.audit(
        path,
        anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]),
        anonaudit.AuditOptions(policy=policy, distances=anonaudit.EqualDistance()),
        engine=engine,
    )
    return {"groups": len(report.table), "classes": report.k_anonymity.classes}


class _Sampler:
    """The process's resident memory every ``interval`` seconds, in a thread, with the
    innermost anonaudit function the main thread was running at the highest sample."""

    def __init__(self, interval: float = 0.01) -> None:
        import threading

        self.interval = interval
        self.peak, self.where = 0, ""
        self._main = threading.main_thread().ident
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def rss() -> int:
        """Resident bytes now (Linux ``/proc``)."""
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.is_set():
            now = self.rss()
            if now > self.peak:
                frame = sys._current_frames().get(self._main or 0)
                while frame is not None and "anonaudit" not in frame.f_code.co_filename:
                    frame = frame.f_back
                if frame is not None:
                    code = frame.f_code
                    self.where = f"{Path(code.co_filename).name}:{code.co_name}"
                self.peak = now
            self._stop.wait(self.interval)

    def __enter__(self) -> _Sampler:
        self.peak = self.rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _work_phases(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import logging

    import anonaudit
    from anonaudit.engines.local import limits_in_force

    logging.getLogger("anonaudit").setLevel(logging.ERROR)  # the identifier warning
    engine = anonaudit.EngineOptions(memory_limit=os.environ.get(_MEMORY_LIMIT) or None)
    policy = anonaudit.Policy(k=5, l=2, entropy_l=2.0, t=0.2)
    options = anonaudit.AuditOptions(policy=policy, distances=anonaudit.EqualDistance())
    start = time.perf_counter()
    with _Sampler() as loading:
        table = anonaudit.load(path, anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]), engine=engine)
    phases["load_s"] = time.perf_counter() - start
    held = _Sampler.rss()
    start = time.perf_counter()
    with limits_in_force(engine), _Sampler() as checking:
        anonaudit.audit_table(table, options)
    phases["checks_s"] = time.perf_counter() - start
    return {
        "load_peak_mib": loading.peak / MIB,
        "load_peak_at": loading.where,
        "table_mib": held / MIB,
        "checks_over_table_mib": (checking.peak - held) / MIB,
        "checks_peak_mib": checking.peak / MIB,
        "checks_peak_at": checking.where,
    }


WORK.update(
    {"scaling-duckdb": _work_duckdb, "scaling-audit": _work_audit, "scaling-phases": _work_phases}
)
PREPARE.update(
    {
        "scaling-duckdb": ["duckdb"],
        "scaling-audit": ["duckdb", "anonaudit", "anonaudit.auditing"],
        "scaling-phases": ["duckdb", "anonaudit", "anonaudit.auditing"],
    }
)


def phases(path: Path) -> None:
    """Print the class table's and the checks' time and peak memory for ``path``."""
    found = measure("scaling-phases", "audit in two parts", path, 1)
    if found.error:
        return
    info, times = found.info, found.phases
    print(
        f"  class table: {times['load_s']:.2f} s, process peak {info['load_peak_mib']:,.0f} "
        f"MiB (in {info['load_peak_at']}), held after: {info['table_mib']:,.0f} MiB\n"
        f"  checks: {times['checks_s']:.2f} s, peak {info['checks_peak_mib']:,.0f} MiB, "
        f"+{info['checks_over_table_mib']:,.0f} MiB over the table (in {info['checks_peak_at']})"
    )


def point(path: Path, rows: int, classes: int, repeat: int) -> tuple[Result, Result]:
    """DuckDB's GROUP BY and the full audit of one file."""
    print(f"\n-- {rows:,} rows, {classes:,} classes ({path.name}); load {load_average()}")
    baseline, audit = measure_all(
        [("scaling-duckdb", "duckdb GROUP BY"), ("scaling-audit", "anonaudit.audit")],
        path,
        repeat,
    )
    return baseline, audit


def readme_table(results: list[tuple[int, int, Result, Result]], limit: str | None) -> str:
    """The rows of the README's scaling table (``--markdown``), one per point measured."""
    lines = []
    for rows, classes, baseline, audit in results:
        if baseline.error or audit.error:
            continue
        digits = str(classes)
        power = f"10^{len(digits) - 1}"
        label = f"{classes:,}" if len(digits.rstrip("0")) > 1 else power
        label = label if digits[0] == "1" or label != power else f"{digits[0]}x{power}"
        if classes >= rows >= 10_000_000:
            label += " (unique QI)"
        if limit:
            label += f", `--memory-limit {limit}`"
        cells = [
            f"{rows // 1_000_000}M",
            label,
            f"{audit.seconds:.2f} s",
            f"{audit.delta_mib:,.0f} MiB",
            f"{baseline.seconds:.2f} s",
            f"{baseline.delta_mib:,.0f} MiB",
            f"{audit.seconds / baseline.seconds:.2f}x / "
            f"{audit.cpu_seconds / baseline.cpu_seconds:.2f}x",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, write the files, measure every point, print the curves."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--rows-curve", type=int, nargs="*", default=[1_000_000, 10_000_000, 50_000_000]
    )
    parser.add_argument("--classes-at", type=int, default=100_000)
    parser.add_argument(
        "--classes-curve", type=int, nargs="*", default=[10**3, 10**4, 10**5, 10**6, 10**7]
    )
    parser.add_argument("--rows-at", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (median)")
    parser.add_argument(
        "--memory-limit", help="DuckDB's memory_limit for both, e.g. 2GB (the audit spills)"
    )
    parser.add_argument(
        "--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "data", help="data directory"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print the rows of the README's table"
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="also time the class table and the checks apart, with their peak memory",
    )
    args = parser.parse_args(argv)
    if args.memory_limit:
        os.environ[_MEMORY_LIMIT] = args.memory_limit

    import duckdb

    print(f"Python {sys.version.split()[0]}, duckdb {duckdb.__version__}, {os.cpu_count()} CPUs")
    print(f"load average before: {load_average()}")
    points = [(rows, args.classes_at) for rows in args.rows_curve]
    points += [(args.rows_at, classes) for classes in args.classes_curve]
    results = []
    for rows, classes in dict.fromkeys(points):
        path = ensure_file(args.out_dir, rows, classes)
        results.append((rows, classes, *point(path, rows, classes, args.repeat)))
        if args.phases:
            phases(path)
    print(f"\nload average after: {load_average()}")
    header = (
        f"{'rows':>12} {'classes':>11} {'duckdb s':>9} {'audit s':>9} {'ratio':>6} "
        f"{'duckdb CPU':>10} {'audit CPU':>9} {'ratio':>6} "
        f"{'duckdb MiB':>11} {'audit MiB':>10} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for rows, classes, baseline, audit in results:
        if baseline.error or audit.error:
            print(f"{rows:>12,} {classes:>11,}  error")
            continue
        print(
            f"{rows:>12,} {classes:>11,} {baseline.seconds:>9.2f} {audit.seconds:>9.2f} "
            f"{audit.seconds / baseline.seconds:>5.2f}x {baseline.cpu_seconds:>10.2f} "
            f"{audit.cpu_seconds:>9.2f} {audit.cpu_seconds / baseline.cpu_seconds:>5.2f}x "
            f"{baseline.delta_mib:>11,.0f} {audit.delta_mib:>10,.0f} "
            f"{audit.delta_mib / max(baseline.delta_mib, 1):>5.2f}x"
        )
    print("(CPU: every thread's CPU time; MiB: the child's peak RSS over its RSS before the work)")
    if args.markdown:
        print("\n" + readme_table(results, args.memory_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
