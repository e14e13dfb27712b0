"""Benchmark: the local and Dask engines on a Parquet dataset against a bare DuckDB ``GROUP BY``.

What it measures
----------------
1. ``--rows`` records (default 20,000,000) are drawn once with ``bench_audit.py``'s
   generator (5 quasi-identifiers: zip, age, sex, race, education; 1 sensitive
   attribute: disease; age is ``int16``, the others text) and written as ``--files``
   Parquet files (default 20) in one folder, reused when it exists for the same sizes.
2. Each of these runs in a fresh child process (``multiprocessing`` "spawn", through
   ``bench_audit.measure``), so the peak resident set size (``ru_maxrss``) belongs to
   that measurement alone:

   * ``duckdb GROUP BY``: bare DuckDB ``SELECT <columns>, count(*) FROM
     read_parquet('<folder>/*.parquet') GROUP BY ALL`` fetched to Arrow: DuckDB reading
     the files itself, with both cores, the floor for any hash-aggregate audit;
   * ``anonaudit.load``: the local engine's class table of the folder (a dataset of 20
     files read part by part through pyarrow.dataset, aggregated by DuckDB);
   * ``anonaudit.audit``: the same plus every check; with ``--population``, the full
     audit of ``bench_audit.py`` (t under the equal distance, population and individual
     risk at sampling fraction 0.1);
   * ``dask LocalCluster``: ``anonaudit.load(..., engine=EngineOptions(engine="dask"))`` on a
     ``LocalCluster(n_workers=2, threads_per_worker=1)`` started in the child; the
     cluster's start-up is timed apart. Its peak RSS is the client process's only (the
     workers are other processes), so it is not compared;
   * ``--engine spark``: the Spark engine (``anonaudit.engines.spark``) on a
     ``local[2]`` session started in the child (start-up and a first job timed apart):
     Spark reads the Parquet files and merges the partial class tables itself; only the
     class table reaches Python. Needs the ``spark`` extra and Java; ``--skip-spark``.

   Each child times the work with ``time.perf_counter`` and reports its peak RSS minus
   its RSS just before the work (imports are done before that point). Every
   measurement runs ``--repeat`` times (default 3); the median time and the largest peak
   are shown.
   Target: the full audit within 1.2x of the bare ``GROUP BY``'s time, at most its
   peak memory.
3. The class table: distinct (QI, SA) combinations, equivalence classes and its size in
   memory.

The script always exits 0: it is a benchmark, not a test.

How to run
----------
From the repository root, with the ``dask`` extra installed (``pip install -e ".[dask]"``)::

    python benchmarks/bench_lake.py                     # 20M rows, a few minutes
    python benchmarks/bench_lake.py --rows 2000000      # quick check
    python benchmarks/bench_lake.py --repeat 3 --skip-dask
    python benchmarks/bench_lake.py --rows 5000000 --files 1 --population --skip-dask --skip-spark

Generated data goes to ``benchmarks/data/`` (git-ignored) unless ``--out-dir`` says
otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench_audit import (
    MEMORY_TARGET,
    MIB,
    PREPARE,
    QUASI_IDENTIFIERS,
    REPO_ROOT,
    SEED,
    SENSITIVE,
    TIME_TARGET,
    WORK,
    Result,
    _options,
    _verdict,
    duckdb_group_by,
    generate_table,
    in_child,
    load_average,
    measure,
    measure_all,
)

#: Set by ``--population``: the full audit of ``bench_audit.py`` (population risk too).
_POPULATION = "ANONAUDIT_BENCH_POPULATION"

# --------------------------------------------------------------------------- data


def ensure_dataset(out_dir: Path, rows: int, files: int) -> Path:
    """The folder of ``files`` Parquet files holding ``rows`` records, generated if missing."""
    folder = out_dir / f"lake_{rows}rows_{files}files_seed{SEED}"
    if (folder / "_COMPLETE").exists():
        verb = "reusing"
        elapsed = ""
    else:
        start = time.perf_counter()
        in_child(write_dataset, folder, rows, files)
        verb, elapsed = "generated", f" in {time.perf_counter() - start:.1f} s"
    size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
    print(f"data: {verb} {folder} ({size / MIB:,.1f} MiB, {rows:,} rows, {files} files){elapsed}")
    return folder


def write_dataset(folder: Path, rows: int, files: int) -> None:
    """Draw ``rows`` records once and write them as ``files`` Parquet files in ``folder``."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = generate_table(rows, SEED)  # one draw, so every file shares the same ZIP codes
    per_file = -(-rows // files)
    for index in range(files):
        part = table.slice(index * per_file, per_file)
        pq.write_table(part, folder / f"part-{index:03d}.parquet", row_group_size=1 << 20)
    (folder / "_COMPLETE").write_text("")
    os.sync()


# --------------------------------------------------------------------------- children


def _work_duckdb(path: str, phases: dict[str, float]) -> dict[str, Any]:
    pattern = f"{path}/*.parquet".replace("'", "''")
    return {"groups": duckdb_group_by(f"read_parquet('{pattern}')").num_rows}


def _work_load(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit

    table = anonaudit.load(path, anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]))
    return _table_info(table)


def _work_audit(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit

    policy = anonaudit.Policy(k=5, l=2, entropy_l=2.0, recursive=(3.0, 2), t=0.2)
    options = _options() if os.environ.get(_POPULATION) else anonaudit.AuditOptions(policy=policy)
    report = anonaudit.audit(path, anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]), options)
    return {**_table_info(report.table), "k": report.k_anonymity.k, "passed": report.passed}


def _work_dask(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit

    start = time.perf_counter()
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        phases["startup_s"] = time.perf_counter() - start
        start = time.perf_counter()
        table = anonaudit.load(
            path,
            anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]),
            engine=anonaudit.EngineOptions(engine="dask", scheduler=client),
        )
        phases["load_s"] = time.perf_counter() - start
    return _table_info(table)


def _work_spark(path: str, phases: dict[str, float]) -> dict[str, Any]:
    from anonaudit.engines.spark import build_class_table
    from anonaudit.sources import open_inputs

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    start = time.perf_counter()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1).count()  # the JVM and its first job: start-up, timed apart
    phases["startup_s"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        sources = open_inputs([path], sep=None, encoding="utf-8", na_values=("",))
        table = build_class_table(
            sources, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=[SENSITIVE], session=spark
        )
    finally:
        phases["load_s"] = time.perf_counter() - start
        spark.stop()
    return _table_info(table)


def _table_info(table: Any) -> dict[str, Any]:
    size = table.keys.nbytes + table.counts.nbytes
    return {
        "groups": len(table),
        "classes": len(table.classes),
        "rows": table.rows,
        "files": len(table.sources[0].files),
        "table_mib": size / MIB,
    }


WORK.update(
    {
        "lake-duckdb": _work_duckdb,
        "lake-load": _work_load,
        "lake-audit": _work_audit,
        "lake-dask": _work_dask,
        "lake-spark": _work_spark,
    }
)
PREPARE.update(
    {
        "lake-duckdb": ["duckdb"],
        "lake-load": ["duckdb", "anonaudit", "anonaudit.sources.dataset"],
        "lake-audit": ["duckdb", "anonaudit", "anonaudit.sources.dataset"],
        "lake-dask": ["anonaudit.sources.dataset", "anonaudit.engines.dask", "distributed"],
        "lake-spark": ["anonaudit.sources.dataset", "anonaudit.engines.spark"],
    }
)


# --------------------------------------------------------------------------- reporting


def _ratios(result: Result, baseline: Result) -> tuple[float, float]:
    """Time and peak-memory ratios of ``result`` to ``baseline``."""
    return result.seconds / baseline.seconds, result.delta_mib / max(baseline.delta_mib, 1e-9)


def run(folder: Path, repeat: int, skip_dask: bool, skip_spark: bool = False) -> None:
    """The measurements on ``folder`` and the summary."""
    print(f"\n== engines on {folder}: median of {repeat}, each run in a fresh process ==")
    print(f"load average before: {load_average()}")
    baseline, engine, full = measure_all(
        [
            ("lake-duckdb", "duckdb GROUP BY (baseline)"),
            ("lake-load", "anonaudit.load (local engine)"),
            ("lake-audit", "anonaudit.audit (engine + checks)"),
        ],
        folder,
        repeat,
    )
    dask: Result | None = None
    if not skip_dask:
        dask = measure("lake-dask", "anonaudit.load (dask engine)", folder, repeat)
    spark: Result | None = None
    if not skip_spark:
        spark = measure("lake-spark", "--engine spark (local[2])", folder, repeat)
    print(f"load average after: {load_average()}")

    header = f"{'measurement':<36} {'seconds':>9} {'peak MiB':>10} {'abs peak':>10}"
    print("\n" + header)
    print("-" * len(header))
    for result in (baseline, engine, full, dask, spark):
        if result is None:
            continue
        if result.error is not None:
            print(f"{result.label:<36} {'error':>9}")
            continue
        print(
            f"{result.label:<36} {result.seconds:>9.2f} "
            f"{result.delta_mib:>10,.0f} {result.peak_mib:>10,.0f}"
        )
        if result is dask or result is spark:
            phases = result.phases
            print(f"{'  of which cluster start-up':<36} {phases.get('startup_s', 0):>9.2f}")
            print(f"{'  of which the class table':<36} {phases.get('load_s', 0):>9.2f}")
    print("(peak MiB: the child's peak RSS minus its RSS before the work; abs peak: peak RSS;")
    print(" dask, spark: the client process only, its workers and the JVM are other processes)")

    if engine.error is None:
        info = engine.info
        print(
            f"\nclass table: {info['groups']:,} (QI, SA) combinations, {info['classes']:,} "
            f"classes, {info['table_mib']:,.1f} MiB, from {info['rows']:,} rows in "
            f"{info['files']} files"
        )
    if baseline.error is None:
        print(f"duckdb: {baseline.info['groups']:,} groups")
    if dask is not None and dask.error is None and engine.error is None:
        same = (
            dask.info["groups"] == engine.info["groups"]
            and dask.info["rows"] == engine.info["rows"]
        )
        print(
            f"dask: {dask.info['groups']:,} groups ({'same as' if same else 'DIFFERS from'} local)"
        )

    if baseline.error is not None:
        return
    print()
    for result in (engine, full):
        if result.error is None:
            time_ratio, memory_ratio = _ratios(result, baseline)
            print(
                f"ratio {result.label} / duckdb: time {time_ratio:.2f}x, "
                f"peak memory {memory_ratio:.2f}x"
            )
    if full.error is None:
        time_ratio, memory_ratio = _ratios(full, baseline)
        print(
            f"target: full audit within {TIME_TARGET}x of the bare GROUP BY: "
            f"time {_verdict(time_ratio <= TIME_TARGET)} ({time_ratio:.2f}x), "
            f"memory (at most {MEMORY_TARGET}x) {_verdict(memory_ratio <= MEMORY_TARGET)} "
            f"({memory_ratio:.2f}x)"
        )
    for other in (dask, spark):
        if other is not None and other.error is None:
            load = other.phases.get("load_s", other.seconds)
            print(
                f"ratio {other.label} / duckdb: time {other.seconds / baseline.seconds:.2f}x, "
                f"{load / baseline.seconds:.2f}x without the cluster's start-up"
            )
    if spark is not None and spark.error is None and engine.error is None:
        same = (
            spark.info["groups"] == engine.info["groups"]
            and spark.info["rows"] == engine.info["rows"]
        )
        verdict = "same as" if same else "DIFFERS from"
        print(f"spark: {spark.info['groups']:,} groups ({verdict} local)")


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, generate the data, run the measurements, print the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=20_000_000, help="rows in all")
    parser.add_argument("--files", type=int, default=20, help="Parquet files")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--skip-dask", action="store_true", help="skip the Dask measurement")
    parser.add_argument("--skip-spark", action="store_true", help="skip the Spark measurement")
    parser.add_argument(
        "--population",
        action="store_true",
        help="the full audit with bench_audit.py's options (t under the equal distance, "
        "population and individual risk at sampling fraction 0.1)",
    )
    parser.add_argument(
        "--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "data", help="data directory"
    )
    args = parser.parse_args(argv)
    if args.population:
        os.environ[_POPULATION] = "1"  # read by the spawned children
    if args.rows < args.files or args.files < 1 or args.repeat < 1:
        parser.error("--files and --repeat must be at least 1, and --rows at least --files")

    import duckdb
    import pyarrow as pa

    print(
        f"Python {sys.version.split()[0]}, duckdb {duckdb.__version__}, pyarrow {pa.__version__}, "
        f"{os.cpu_count()} CPUs"
    )
    folder = ensure_dataset(args.out_dir, args.rows, args.files)
    run(folder, args.repeat, args.skip_dask, args.skip_spark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
