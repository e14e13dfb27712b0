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

Generated data goes to ``benchmarks/data/`` (git-ignored), about 30 bytes a record.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench_audit import MIB, PREPARE, REPO_ROOT, WORK, Result, load_average, measure_all

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


WORK.update({"scaling-duckdb": _work_duckdb, "scaling-audit": _work_audit})
PREPARE.update(
    {
        "scaling-duckdb": ["duckdb"],
        "scaling-audit": ["duckdb", "anonaudit", "anonaudit.auditing"],
    }
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
