"""Benchmark: the Spark engine where the local engine spills, and its per-partition costs.

What it measures
----------------
A Parquet dataset of ``--rows`` records (default 20,000,000) in ``--files`` files
(default 40), with ``--classes`` equivalence classes (default 10,000,000: two records a
class) and a sensitive column of 12 values, is written once by DuckDB (reused when it
exists). The class table then has about ``rows`` distinct (QI, SA) combinations, far
more than ``--memory-limit`` (default 1GB) holds in a hash table, so the local engine
spills. In fresh child processes (``bench_audit.measure_all``):

* ``duckdb GROUP BY``: bare DuckDB ``read_parquet`` + ``GROUP BY ALL`` under the same
  ``memory_limit``, its spill folder watched (the baseline);
* ``local engine``: ``anonaudit.load`` with ``EngineOptions(memory_limit=...)``, its
  spill folder watched: the peak bytes spilled are printed, the proof that it spills;
* ``--engine spark``: the Spark engine on ``local[2]`` (driver ``--driver-memory``),
  start-up timed apart. Its monitoring API (``/api/v1``, the UI on a free port of
  127.0.0.1) gives every stage's tasks, run time, records and shuffle bytes, measured
  by Spark itself.

From Spark's own metrics the script prints the per-partition costs (the scan and
partial aggregation of one file, the merge of one shuffle partition, the collection of
the class table to the driver, which no cluster parallelises) and projects the class
table of a dataset ``--project-rows`` long (default 6.3 billion: a national census
over decades) on clusters of ``--project-cores`` cores, assuming the same per-record and
per-class costs (linear in records for the scan, in classes for the merge and the
collection) and no data skew. The projection is a model, not a measurement: it says
where the time would go.

The script always exits 0: it is a benchmark, not a test.

How to run
----------
From the repository root, with the ``spark`` extra and Java::

    python benchmarks/bench_spark.py                       # 20M rows, 10^7 classes
    python benchmarks/bench_spark.py --rows 5000000 --classes 2500000 --repeat 1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_audit import MIB, PREPARE, REPO_ROOT, WORK, load_average, measure_all

QUASI_IDENTIFIERS = ["person", "region"]
SENSITIVE = "disease"
_LIMIT = "ANONAUDIT_BENCH_MEMORY_LIMIT"
_DRIVER = "ANONAUDIT_BENCH_DRIVER_MEMORY"


def ensure_dataset(out_dir: Path, rows: int, classes: int, files: int) -> Path:
    """The Parquet folder of ``rows`` records in ``classes`` classes, ``files`` files."""
    import duckdb

    folder = out_dir / f"spark_{rows}rows_{classes}classes_{files}files"
    if folder.exists():
        return folder
    partial = folder.with_name(folder.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    per_file = -(-rows // files)
    for f in range(files):
        low, high = f * per_file, min(rows, (f + 1) * per_file)
        # person: a record's number times a large odd number modulo classes, so each
        # file holds records of classes spread over all of them (a shuffle has work).
        connection.execute(
            f"""
            COPY (
                SELECT
                    'p' || lpad(CAST((i * 7919) % {classes} AS VARCHAR), 9, '0') AS person,
                    'r' || CAST(((i * 7919) % {classes}) % 97 AS VARCHAR) AS region,
                    'd' || CAST(hash(i * 31 + 7) % 12 AS VARCHAR) AS disease
                FROM range({low}, {high}) AS t(i)
            ) TO '{partial / f"part-{f:04d}.parquet"}' (FORMAT parquet)
            """
        )
    connection.close()
    partial.rename(folder)
    size = sum(p.stat().st_size for p in folder.iterdir()) / MIB
    print(f"data: wrote {folder.name} ({size:,.0f} MiB) in {time.perf_counter() - start:.1f} s")
    return folder


@contextmanager
def watched(folder: Path) -> Iterator[dict[str, int]]:
    """Sample the bytes under ``folder`` every 50 ms; ``peak`` is the largest seen."""
    folder.mkdir(parents=True, exist_ok=True)
    seen = {"peak": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            total = 0
            for root, _, names in os.walk(folder):
                for name in names:
                    with contextlib.suppress(OSError):  # removed while listed
                        total += os.path.getsize(os.path.join(root, name))
            seen["peak"] = max(seen["peak"], total)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join()
        shutil.rmtree(folder, ignore_errors=True)


def _spill_dir(kind: str) -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp")) / f"anonaudit-bench-spill-{kind}-{os.getpid()}"


def _work_duckdb(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import duckdb

    spill = _spill_dir("duckdb")
    columns = ", ".join([*QUASI_IDENTIFIERS, SENSITIVE])
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    connection.execute(f"SET memory_limit = '{os.environ[_LIMIT]}'")
    connection.execute(f"SET temp_directory = '{spill}'")
    with watched(spill) as seen:
        query = f"SELECT {columns}, count(*) FROM read_parquet('{path}/*.parquet') GROUP BY ALL"
        result = connection.sql(query).to_arrow_table()
    connection.close()
    return {"groups": result.num_rows, "spilled_mib": seen["peak"] / MIB}


def _work_local(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit

    spill = _spill_dir("local")
    engine = anonaudit.EngineOptions(memory_limit=os.environ[_LIMIT], temp_dir=str(spill))
    with watched(spill) as seen:
        table = anonaudit.load(path, anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]), engine=engine)
    return {"groups": len(table), "rows": table.rows, "spilled_mib": seen["peak"] / MIB}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _api(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/{path}", timeout=30) as r:
        return json.loads(r.read())


def _work_spark(path: str, phases: dict[str, float]) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    from anonaudit.engines.spark import build_class_table
    from anonaudit.sources import open_inputs

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    port = _free_port()
    start = time.perf_counter()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", str(port))
        .config("spark.port.maxRetries", "0")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ[_DRIVER])
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1).count()  # the JVM and its first job: start-up, timed apart
    phases["startup_s"] = time.perf_counter() - start
    app = spark.sparkContext.applicationId
    before = {s["stageId"] for s in _api(port, f"applications/{app}/stages")}
    start = time.perf_counter()
    try:
        sources = open_inputs([path], sep=None, encoding="utf-8", na_values=("",))
        table = build_class_table(
            sources, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=[SENSITIVE], session=spark
        )
        phases["class_table_s"] = time.perf_counter() - start
        stages = [
            {
                key: s.get(key, 0)
                for key in (
                    "stageId",
                    "name",
                    "numTasks",
                    "executorRunTime",
                    "executorCpuTime",
                    "inputBytes",
                    "inputRecords",
                    "shuffleReadBytes",
                    "shuffleReadRecords",
                    "shuffleWriteBytes",
                    "shuffleWriteRecords",
                    "submissionTime",
                    "completionTime",
                )
            }
            for s in _api(port, f"applications/{app}/stages?status=complete")
            if s["stageId"] not in before
        ]
    finally:
        spark.stop()
    return {
        "groups": len(table),
        "rows": table.rows,
        "stages": sorted(stages, key=lambda s: s["stageId"]),
    }


WORK.update({"spark-duckdb": _work_duckdb, "spark-local": _work_local, "spark-spark": _work_spark})
PREPARE.update(
    {
        "spark-duckdb": ["duckdb"],
        "spark-local": ["duckdb", "anonaudit", "anonaudit.engines.local"],
        "spark-spark": ["pyspark.sql", "anonaudit", "anonaudit.engines.spark"],
    }
)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:,.2f} s"


def report_stages(stages: list[dict[str, Any]], rows: int, groups: int) -> dict[str, float]:
    """Print Spark's stages and return the per-unit costs the projection uses."""
    print("\nSpark's stages (its monitoring API; run time summed over tasks):")
    scan = merge = None
    for s in stages:
        tasks = max(1, int(s["numTasks"]))
        print(
            f"  stage {s['stageId']}: {tasks} task(s), run {_seconds(s['executorRunTime'])} "
            f"({_seconds(s['executorRunTime'] / tasks)} a task), CPU "
            f"{s['executorCpuTime'] / 1e9:,.2f} s; input {s['inputRecords']:,} records "
            f"({s['inputBytes'] / MIB:,.1f} MiB); shuffle write {s['shuffleWriteRecords']:,} "
            f"records ({s['shuffleWriteBytes'] / MIB:,.1f} MiB), read "
            f"{s['shuffleReadRecords']:,} ({s['shuffleReadBytes'] / MIB:,.1f} MiB)"
        )
        if s["inputRecords"] > 0 and scan is None:
            scan = s
        elif s["shuffleReadRecords"] > 0 and merge is None:
            merge = s
    costs: dict[str, float] = {}
    if scan is not None:
        costs["scan_ms_per_record"] = scan["executorRunTime"] / max(1, scan["inputRecords"])
        costs["scan_tasks"] = scan["numTasks"]
        costs["partials_per_record"] = scan["shuffleWriteRecords"] / max(1, rows)
    if merge is not None:
        costs["merge_ms_per_record"] = merge["executorRunTime"] / max(
            1, merge["shuffleReadRecords"]
        )
    costs["classes_per_record"] = groups / max(1, rows)
    return costs


def project(
    costs: dict[str, float],
    collect_s: float,
    rows: int,
    groups: int,
    cores: list[int],
    project_rows: int,
    project_classes: int | None,
) -> None:
    """The projected class-table time of ``project_rows`` records on each cluster size."""
    if "scan_ms_per_record" not in costs or "merge_ms_per_record" not in costs:
        print("projection: Spark's stages were not all found; none made")
        return
    per_class_collect = collect_s / max(1, groups)
    print(
        f"\nper-unit costs measured: scan and partial aggregation "
        f"{costs['scan_ms_per_record'] * 1e3:,.3f} us a record; merge "
        f"{costs['merge_ms_per_record'] * 1e3:,.3f} us a partial row "
        f"({costs['partials_per_record']:.2f} partial rows a record); collection to the "
        f"driver {per_class_collect * 1e6:,.3f} us a class (what no cluster parallelises)"
    )
    if project_classes is None:
        classes = costs["classes_per_record"] * project_rows
        said = "at this data's combinations per record"
    else:
        classes, said = float(project_classes), "as given"
    # partitions of this data's size; a partition's partial rows are its own
    # combinations: as many a record as here, and at most the classes
    per_partition = rows / max(1.0, costs["scan_tasks"])
    partitions = project_rows / per_partition
    partials = partitions * min(per_partition * costs["partials_per_record"], classes)
    print(
        f"projection to {project_rows:,} records and {classes:,.0f} combinations ({said}; "
        "linear costs, no skew, no start-up):"
    )
    for n in cores:
        scan = costs["scan_ms_per_record"] * project_rows / n / 1000
        merge = costs["merge_ms_per_record"] * partials / n / 1000
        collect = per_class_collect * classes
        print(
            f"  {n:>5} cores: scan {scan:,.0f} s + merge {merge:,.0f} s + collect "
            f"{collect:,.0f} s = {scan + merge + collect:,.0f} s"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--classes", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--project-rows", type=int, default=6_300_000_000)
    parser.add_argument(
        "--project-classes",
        type=int,
        default=None,
        help="distinct combinations of the projected data (default: this data's per record)",
    )
    parser.add_argument("--project-cores", type=int, nargs="+", default=[16, 64, 256, 1024])
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "data")
    args = parser.parse_args(argv)
    os.environ[_LIMIT] = args.memory_limit
    os.environ[_DRIVER] = args.driver_memory
    print(f"load average before: {load_average()}")
    folder = ensure_dataset(args.out_dir, args.rows, args.classes, args.files)
    baseline, local, spark = measure_all(
        [
            ("spark-duckdb", f"duckdb GROUP BY (memory_limit {args.memory_limit})"),
            ("spark-local", f"local engine (--memory-limit {args.memory_limit})"),
            ("spark-spark", "--engine spark (local[2])"),
        ],
        folder,
        args.repeat,
    )
    print(f"\n{args.rows:,} records, {args.files} files, {args.classes:,} classes")
    for result in (baseline, local, spark):
        if result.error is not None:
            print(f"  {result.label}: failed")
            continue
        extra = ""
        if "spilled_mib" in result.info:
            extra = f", spilled at most {result.info['spilled_mib']:,.0f} MiB to disk"
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in result.phases.items())
        print(
            f"  {result.label}: {result.seconds:.1f} s (runs {result.runs}), "
            f"+{result.delta_mib:,.0f} MiB{extra}; {result.info.get('groups', 0):,} "
            f"combinations{'; ' + phases if phases else ''}"
        )
    if baseline.error is None and local.error is None:
        print(f"  local / duckdb: {local.seconds / baseline.seconds:.2f}x")
    if spark.error is None and local.error is None:
        print(
            f"  spark class table / local: {spark.phases['class_table_s'] / local.seconds:.2f}x"
            f" (same combinations: {spark.info['groups'] == local.info['groups']})"
        )
        stages = spark.info["stages"]
        costs = report_stages(stages, args.rows, spark.info["groups"])
        last = stages[-1] if stages else None
        collect = 0.0
        if last is not None and last.get("completionTime"):
            # the driver's part: the class table's time less the stages' wall clock
            collect = max(0.0, spark.phases["class_table_s"] - _stage_wall(stages))
        project(
            costs,
            collect,
            args.rows,
            spark.info["groups"],
            args.project_cores,
            args.project_rows,
            args.project_classes,
        )
    print(f"load average after: {load_average()}")
    return 0


def _stage_wall(stages: list[dict[str, Any]]) -> float:
    """Seconds from the first stage's submission to the last one's completion."""
    from datetime import datetime

    def parsed(text: str) -> float:
        return datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()

    first = min(parsed(s["submissionTime"]) for s in stages if s.get("submissionTime"))
    last = max(parsed(s["completionTime"]) for s in stages if s.get("completionTime"))
    return last - first


if __name__ == "__main__":
    sys.exit(main())
