"""Benchmark: the full anonaudit audit against a bare DuckDB ``GROUP BY`` and against pycanon.

What it measures
----------------
1. A synthetic CSV of ``--rows`` records (default 10,000,000) is generated once with a fixed
   seed (5 quasi-identifiers: zip, age, sex, race, education; 1 sensitive attribute:
   disease), about 237k QI classes and 2.7M distinct (QI, SA) groups at 10M rows. The file
   is reused when it exists for the same row count and seed. Generation is not timed as
   part of the benchmark.
2. Each of these runs in a fresh child process (``multiprocessing`` "spawn" context), so
   the peak resident set size (``ru_maxrss``) belongs to that measurement alone:

   * ``duckdb GROUP BY``: bare DuckDB ``SELECT <all columns>, count(*) FROM read_csv(file)
     GROUP BY ALL`` fetched to Arrow, the floor any audit built on a hash aggregate pays;
   * ``anonaudit.audit``: the full audit (k, distinct/entropy/recursive l, t with the
     equal distance, disclosure, prosecutor risk, and population risk with individual
     risk at sampling fraction 0.1, as issue 13 defines it; the suppression advice the
     failing policy asks for) from the CSV path;
   * ``anonaudit.load`` then ``anonaudit.audit_table`` in one child: the class table alone
     and the checks on it;
   * ``pyarrow group_by``: ``pyarrow.csv.read_csv`` with dictionary-typed string columns and
     ``Table.group_by(...).aggregate(count_all)``, the alternative engine, for the record.

   Each child times the work with ``time.perf_counter`` (and its CPU time, every
   thread's, with ``time.process_time``: steadier where other work shares the cores) and
   reports its peak RSS minus its RSS just before the work (imports are done before
   that point), and the absolute peak.
   Every measurement runs ``--repeat`` times (default 3), in rounds (each measurement
   once per round, so that other work on a shared machine slows them alike); the median
   time and the largest peak are shown, and the load average after each run.
   ``anonaudit`` and the modules an audit imports on first use (``anonaudit.auditing``:
   the checks, scipy) are imported before the starting point, as ``duckdb`` is for the
   baseline.
   The file is read once before each run, so every run starts with it in the page cache.
   The load average is printed before and after: on a shared machine, other work competing
   for the CPUs inflates the times (use ``--repeat``).
   Target: the full audit within 1.2x of the bare ``GROUP BY``'s time, at most its
   peak memory.
3. pycanon comparison on a smaller file (``--pycanon-rows``, default 30,000; same
   generator): pycanon's ``k_anonymity``, ``l_diversity``, ``entropy_l_diversity`` and
   ``t_closeness`` against one ``anonaudit.audit`` of the same in-memory DataFrame (which
   computes all of those and more). Target: anonaudit at least 100x faster. Both tools'
   values are printed side by side; a disagreement is reported, not failed.

The script always exits 0: it is a benchmark, not a test.

How to run
----------
From the repository root (the package is imported from there, no installation needed)::

    python benchmarks/bench_audit.py                  # 10M rows, a few minutes
    python benchmarks/bench_audit.py --rows 1000000   # quick check
    python benchmarks/bench_audit.py --repeat 3 --skip-pycanon

Generated data goes to ``benchmarks/data/`` (git-ignored) unless ``--out-dir`` says otherwise.
The pycanon part needs ``pip install pycanon`` (or ``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing as mp
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from timing import best_of  # noqa: E402

# Heavy modules (numpy, pyarrow, duckdb, pandas, anonaudit) are imported inside functions:
# the "spawn" children re-import this module, and each child should load only what its
# measurement needs, before it takes its starting RSS.

SEED = 20240601
QUASI_IDENTIFIERS = ["zip", "age", "sex", "race", "education"]
SENSITIVE = "disease"
COLUMNS = [*QUASI_IDENTIFIERS, SENSITIVE]
TIME_TARGET = 1.2  # full audit / bare GROUP BY (issue 13)
MEMORY_TARGET = 1.0  # full audit's peak memory / the bare GROUP BY's
SPEEDUP_TARGET = 1000.0  # pycanon / anonaudit (issue 13)

SEXES = ["Female", "Male"]
RACES = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
EDUCATIONS = [
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
    "Doctorate",
]  # fmt: skip
DISEASES = [
    "flu", "bronchitis", "gastritis", "ulcer", "pneumonia", "asthma", "diabetes",
    "hypertension", "migraine", "arthritis", "hepatitis", "cancer",
]  # fmt: skip

MIB = 1024 * 1024


# --------------------------------------------------------------------------- data


def generate_csv(path: Path, rows: int, seed: int = SEED) -> None:
    """Write ``rows`` synthetic records (:func:`generate_table`) to ``path`` atomically."""
    import pyarrow.csv as pacsv

    table = generate_table(rows, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    pacsv.write_csv(table, partial)
    partial.replace(path)
    # Flush the new file now, so that background write-back does not slow the first
    # measurement.
    os.sync()


def generate_table(rows: int, seed: int = SEED) -> Any:
    """``rows`` synthetic records as a ``pyarrow.Table``.

    Every column is drawn uniformly and independently: 20 ZIP codes (five digits, some
    with a leading zero), age 17..90 (``int16``), 2 sexes, 5 races, 16 education levels,
    12 diseases (text).
    """
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    # 20 distinct ZIP codes, 5 of them below 10000 so their text starts with "0".
    low = rng.choice(10_000, size=5, replace=False)
    high = rng.choice(np.arange(10_000, 100_000), size=15, replace=False)
    zips = pa.array([f"{z:05d}" for z in sorted([*low.tolist(), *high.tolist()])])

    def pick(values: pa.Array | list[str]) -> pa.Array:
        dictionary = values if isinstance(values, pa.Array) else pa.array(values)
        indices = rng.integers(0, len(dictionary), size=rows, dtype=np.int32)
        return dictionary.take(pa.array(indices))

    return pa.table(
        {
            "zip": pick(zips),
            "age": pa.array(rng.integers(17, 91, size=rows, dtype=np.int16)),
            "sex": pick(SEXES),
            "race": pick(RACES),
            "education": pick(EDUCATIONS),
            "disease": pick(DISEASES),
        }
    )


def ensure_csv(out_dir: Path, rows: int) -> Path:
    """The data file for ``rows`` and :data:`SEED`, generated unless it already exists."""
    path = out_dir / f"bench_{rows}rows_seed{SEED}.csv"
    if path.exists():
        print(f"data: reusing {_rel(path)} ({path.stat().st_size / MIB:,.1f} MiB, {rows:,} rows)")
        return path
    start = time.perf_counter()
    in_child(generate_csv, path, rows)
    elapsed = time.perf_counter() - start
    print(
        f"data: generated {_rel(path)} ({path.stat().st_size / MIB:,.1f} MiB, {rows:,} rows) "
        f"in {elapsed:.1f} s"
    )
    return path


def in_child(work: Callable[..., None], *args: Any) -> None:
    """Run ``work(*args)`` in a fresh spawned process and wait for it.

    Used to generate data: Linux carries a process's peak RSS over into the children it
    starts, so generating in this process would inflate every later measurement's peak.
    """
    process = mp.get_context("spawn").Process(target=work, args=args)
    process.start()
    process.join()
    if process.exitcode != 0:
        raise SystemExit(f"{work.__name__} failed in its child process ({process.exitcode})")


def warm_cache(path: Path) -> None:
    """Read ``path`` (a file, or every file below a folder) once, into the page cache."""
    for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if file.is_file():
            with open(file, "rb") as handle:
                while handle.read(16 * MIB):
                    pass


def load_average() -> str:
    """The 1-minute load average, to show whether other work competed for the CPUs."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- memory


def _current_rss_bytes() -> int:
    """Resident set size now (Linux ``/proc``; elsewhere the peak so far)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return _peak_rss_bytes()


def _peak_rss_bytes() -> int:
    """Peak resident set size of this process (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


# --------------------------------------------------------------------------- children


def _policy() -> Any:
    import anonaudit

    return anonaudit.Policy(k=5, l=2, entropy_l=2.0, recursive=(3.0, 2), t=0.2)


def _roles() -> Any:
    import anonaudit

    return anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE])


def _options() -> Any:
    """The audit's options: :func:`_policy`, t-closeness under the equal distance, and
    population (and individual) risk for a 10% sample."""
    import anonaudit

    return anonaudit.AuditOptions(
        policy=_policy(),
        distances={SENSITIVE: anonaudit.EqualDistance()},
        population=anonaudit.PopulationOptions(sampling_fraction=0.1),
    )


def _summary(report: Any) -> dict[str, Any]:
    return {
        "classes": report.k_anonymity.classes,
        "groups": len(report.table),
        "k": report.k_anonymity.k,
        "l": report.l_diversity[SENSITIVE].distinct,
        "entropy_l": report.l_diversity[SENSITIVE].entropy,
        "t": report.t_closeness[SENSITIVE].t,
        "passed": report.passed,
    }


def _work_duckdb(path: str, phases: dict[str, float]) -> dict[str, Any]:
    literal = path.replace("'", "''")
    result = duckdb_group_by(f"read_csv('{literal}')")
    types = ", ".join(f"{f.name}:{f.type}" for f in result.schema if f.name in COLUMNS)
    return {"groups": result.num_rows, "types": types}


def duckdb_group_by(relation: str) -> Any:
    """Bare DuckDB: ``SELECT <COLUMNS>, count(*) FROM relation GROUP BY ALL``, as Arrow."""
    import duckdb

    query = f"SELECT {', '.join(COLUMNS)}, count(*) FROM {relation} GROUP BY ALL"
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")  # as anonaudit's engine does
    try:
        return connection.sql(query).to_arrow_table()
    finally:
        connection.close()


def _work_audit(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit

    report = anonaudit.audit(path, _roles(), _options())
    return _summary(report)


def _work_phases(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit

    start = time.perf_counter()
    table = anonaudit.load(path, _roles())
    phases["load_s"] = time.perf_counter() - start
    phases["load_peak"] = _peak_rss_bytes()
    start = time.perf_counter()
    report = anonaudit.audit_table(table, _options())
    phases["checks_s"] = time.perf_counter() - start
    return _summary(report)


def _work_pyarrow(path: str, phases: dict[str, float]) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    dictionary = pa.dictionary(pa.int32(), pa.string())
    types = {name: dictionary for name in COLUMNS}
    table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=types))
    # Each block of the file has its own dictionaries; group_by needs one per column.
    table = table.unify_dictionaries()
    result = table.group_by(COLUMNS).aggregate([([], "count_all")])
    return {"groups": result.num_rows}


def _prepare(kind: str) -> None:
    """Imports for ``kind``, done before the starting RSS is taken."""
    for module in PREPARE[kind]:
        importlib.import_module(module)


#: Modules each measurement imports before its starting RSS (other scripts add theirs).
PREPARE: dict[str, list[str]] = {
    "duckdb": ["duckdb"],
    "audit": ["duckdb", "anonaudit", "anonaudit.auditing"],
    "phases": ["duckdb", "anonaudit", "anonaudit.auditing"],
    "pyarrow": ["pyarrow", "pyarrow.csv"],
}


#: The measurements by kind (other scripts add theirs before calling :func:`measure`).
WORK: dict[str, Callable[[str, dict[str, float]], dict[str, Any]]] = {
    "duckdb": _work_duckdb,
    "audit": _work_audit,
    "phases": _work_phases,
    "pyarrow": _work_pyarrow,
}


def _child(kind: str, path: str, conn: Connection) -> None:
    """Entry point of a spawned child: measure one run of ``kind`` and send the numbers."""
    try:
        _prepare(kind)
        import gc

        gc.collect()
        phases: dict[str, float] = {}
        rss_before = _current_rss_bytes()
        start, cpu = time.perf_counter(), time.process_time()
        info = WORK[kind](path, phases)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        peak = _peak_rss_bytes()
        if "load_peak" in phases:
            phases["load_peak_mib"] = (phases.pop("load_peak") - rss_before) / MIB
        conn.send(
            {
                "ok": True,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "delta_mib": (peak - rss_before) / MIB,
                "peak_mib": peak / MIB,
                "start_mib": rss_before / MIB,
                "phases": phases,
                "info": info,
            }
        )
    except BaseException:
        conn.send({"ok": False, "error": traceback.format_exc()})
    finally:
        conn.close()


@dataclass
class Result:
    """The median of several runs of one measurement (time), and their largest peak."""

    label: str
    seconds: float = float("inf")
    #: The median run's CPU time, every thread's (DuckDB's on both cores): on a machine
    #: shared with other work it varies less than the time on the clock.
    cpu_seconds: float = float("inf")
    runs: list[float] = field(default_factory=list)
    delta_mib: float = 0.0
    peak_mib: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def measure(kind: str, label: str, path: Path, repeat: int) -> Result:
    """Run ``kind`` ``repeat`` times, each in a fresh spawned child; keep the median time."""
    return measure_all([(kind, label)], path, repeat)[0]


def measure_all(kinds: list[tuple[str, str]], path: Path, repeat: int) -> list[Result]:
    """Run each ``(kind, label)`` ``repeat`` times, in rounds, each run in a fresh child.

    Round after round every measurement runs once, so that other work on a shared
    machine slows them alike rather than whichever ran while it did. Each result keeps
    the median time (the phases and details shown are the median run's: the faster
    middle one for an even ``repeat``) and the largest peak.
    """
    results = [Result(label) for _, label in kinds]
    done: list[list[dict[str, Any]]] = [[] for _ in kinds]
    for run in range(1, repeat + 1):
        for position, (kind, label) in enumerate(kinds):
            result = results[position]
            if result.error is not None:
                continue
            data = _run_once(kind, path)
            if not data["ok"]:
                result.error = data["error"]
                print(f"  {label}: run {run} FAILED\n{data['error']}", file=sys.stderr)
                continue
            print(
                f"  {label}: run {run}/{repeat}: {data['seconds']:.2f} s "
                f"({data['cpu_seconds']:.2f} s CPU), "
                f"+{data['delta_mib']:,.0f} MiB (peak {data['peak_mib']:,.0f} MiB), "
                f"load {load_average()}",
                flush=True,
            )
            result.delta_mib = max(result.delta_mib, data["delta_mib"])
            result.peak_mib = max(result.peak_mib, data["peak_mib"])
            done[position].append(data)
    for result, runs in zip(results, done, strict=True):
        if result.error is not None or not runs:
            continue
        runs.sort(key=lambda data: float(data["seconds"]))
        middle = runs[(len(runs) - 1) // 2]
        result.seconds, result.phases = middle["seconds"], middle["phases"]
        result.cpu_seconds = middle["cpu_seconds"]
        result.info = middle["info"]
        result.runs = [float(data["seconds"]) for data in runs]
    return results


def _run_once(kind: str, path: Path) -> dict[str, Any]:
    """One run of ``kind`` in a fresh spawned child, with the file in the page cache."""
    context = mp.get_context("spawn")
    warm_cache(path)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(kind, str(path), sender))
    process.start()
    sender.close()
    try:
        data: dict[str, Any] = receiver.recv()
    except EOFError:
        data = {"ok": False, "error": f"child exited without a result (code {process.exitcode})"}
    process.join()
    receiver.close()
    return data


# --------------------------------------------------------------------------- reporting


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def run_engines(path: Path, repeat: int) -> None:
    """Part 2: the four child-process measurements on ``path`` and the summary table."""
    print(f"\n== engines on {_rel(path)}: median of {repeat}, each run in a fresh process ==")
    print(f"load average before: {load_average()}")
    baseline, full, phases, arrow = measure_all(
        [
            ("duckdb", "duckdb GROUP BY (baseline)"),
            ("audit", "anonaudit.audit (full)"),
            ("phases", "anonaudit.load + audit_table"),
            ("pyarrow", "pyarrow read_csv + group_by"),
        ],
        path,
        repeat,
    )

    print(f"load average after: {load_average()}")
    header = f"{'measurement':<34} {'seconds':>9} {'peak MiB':>10} {'abs peak':>10}"
    print("\n" + header)
    print("-" * len(header))

    def row(label: str, seconds: float, delta: float | None, peak: float | None) -> None:
        delta_text = "" if delta is None else f"{delta:,.0f}"
        peak_text = "" if peak is None else f"{peak:,.0f}"
        print(f"{label:<34} {seconds:>9.2f} {delta_text:>10} {peak_text:>10}".rstrip())

    for result in (baseline, full, phases, arrow):
        if result.error is not None:
            print(f"{result.label:<34} {'error':>9}")
            continue
        row(result.label, result.seconds, result.delta_mib, result.peak_mib)
        if result is phases:
            load_peak = result.phases.get("load_peak_mib")
            row("  load (class table)", result.phases.get("load_s", float("nan")), load_peak, None)
            row("  audit_table (checks)", result.phases.get("checks_s", float("nan")), None, None)
    print("(peak MiB: the child's peak RSS minus its RSS before the work; abs peak: peak RSS)")

    if baseline.error is None:
        info = baseline.info
        print(f"\nduckdb: {info['groups']:,} (QI, SA) groups; read as {info['types']}")
    for result in (full, phases):
        if result.error is None:
            info = result.info
            print(
                f"{result.label}: {info['classes']:,} classes, {info['groups']:,} groups, "
                f"k={info['k']}, l={info['l']}, "
                f"entropy l={info['entropy_l']:.3f}, t={info['t']:.4f}, "
                f"policy passed={info['passed']}"
            )
    if arrow.error is None:
        print(f"pyarrow: {arrow.info['groups']:,} (QI, SA) groups")

    if baseline.error is not None:
        return
    print()
    if full.error is None:
        time_ratio = full.seconds / baseline.seconds
        memory_ratio = full.delta_mib / max(baseline.delta_mib, 1e-9)
        print(f"ratio audit/duckdb: time {time_ratio:.2f}x, peak memory {memory_ratio:.2f}x")
        print(
            f"target: full audit within {TIME_TARGET}x of the bare GROUP BY: "
            f"time {_verdict(time_ratio <= TIME_TARGET)} ({time_ratio:.2f}x), "
            f"memory (at most {MEMORY_TARGET}x) {_verdict(memory_ratio <= MEMORY_TARGET)} "
            f"({memory_ratio:.2f}x)"
        )
    if arrow.error is None:
        print(
            f"ratio pyarrow/duckdb: time {arrow.seconds / baseline.seconds:.2f}x, "
            f"peak memory {arrow.delta_mib / baseline.delta_mib:.2f}x"
        )


def run_pycanon(path: Path, repeat: int) -> None:
    """Part 3: pycanon against anonaudit on the same in-memory DataFrame."""
    print(f"\n== pycanon comparison on {_rel(path)} ==")
    try:
        from pycanon import anonymity  # type: ignore[import-untyped]
    except ImportError:
        print("pycanon is not importable; `pip install pycanon` to run this comparison. Skipped.")
        return
    import pandas as pd

    import anonaudit

    frame = pd.read_csv(path, dtype={"zip": str})
    qi, sa = list(QUASI_IDENTIFIERS), [SENSITIVE]
    print(f"{len(frame):,} rows, {frame.groupby(qi).ngroups:,} classes; pycanon best of {repeat}")

    def pycanon_all() -> dict[str, float]:
        values: dict[str, float] = {}
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("k", lambda: anonymity.k_anonymity(frame, qi)),
            ("l", lambda: anonymity.l_diversity(frame, qi, sa)),
            ("entropy_l", lambda: anonymity.entropy_l_diversity(frame, qi, sa)),
            ("t", lambda: anonymity.t_closeness(frame, qi, sa)),
        ]
        for name, call in calls:
            start = time.perf_counter()
            values[name] = float(call())
            values[name + "_s"] = time.perf_counter() - start
            print(f"  pycanon {name}: {values[name + '_s']:.2f} s", flush=True)
        return values

    def anonaudit_all() -> Any:
        return anonaudit.audit(frame, anonaudit.Roles(qi, sa), _options())

    pycanon_s, theirs = best_of(repeat, pycanon_all)
    audit_repeat = max(repeat, 5)
    ours_s, report = best_of(audit_repeat, anonaudit_all)
    speedup = pycanon_s / ours_s

    print(f"\n{'tool':<44} {'seconds':>9}")
    print(f"{'pycanon (k + l + entropy l + t)':<44} {pycanon_s:>9.3f}")
    print(f"{f'anonaudit.audit on the DataFrame (best of {audit_repeat})':<44} {ours_s:>9.3f}")
    print(f"speed-up: {speedup:,.0f}x")
    verdict = _verdict(speedup >= SPEEDUP_TARGET)
    print(f"target: >= {SPEEDUP_TARGET:.0f}x faster than pycanon: {verdict}")

    ours = {
        "k": report.k_anonymity.k,
        "l": report.l_diversity[SENSITIVE].distinct,
        "entropy_l": report.l_diversity[SENSITIVE].entropy,
        "t": report.t_closeness[SENSITIVE].t,
    }
    print(f"\n{'measure':<12} {'pycanon':>12} {'anonaudit':>12}  note")
    for name in ("k", "l", "entropy_l", "t"):
        note = _compare(name, float(theirs[name]), float(ours[name]))
        print(f"{name:<12} {float(theirs[name]):>12.6g} {float(ours[name]):>12.6g}  {note}")


def _compare(name: str, theirs: float, ours: float) -> str:
    if abs(theirs - ours) <= 1e-9 * max(1.0, abs(ours)):
        return "agree"
    if name == "entropy_l" and theirs == int(ours + 1e-9):
        return "agree (pycanon truncates entropy l to an integer)"
    return "DISAGREE (reported, not failed)"


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, generate the data, run the measurements, print the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the main file")
    parser.add_argument(
        "--pycanon-rows", type=int, default=30_000, help="rows of the pycanon comparison file"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--skip-pycanon", action="store_true", help="skip the pycanon part")
    parser.add_argument(
        "--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "data", help="data directory"
    )
    args = parser.parse_args(argv)
    if args.rows < 1 or args.pycanon_rows < 1 or args.repeat < 1:
        parser.error("--rows, --pycanon-rows and --repeat must be at least 1")

    import duckdb
    import pyarrow as pa

    print(
        f"Python {sys.version.split()[0]}, duckdb {duckdb.__version__}, pyarrow {pa.__version__}, "
        f"{os.cpu_count()} CPUs"
    )
    path = ensure_csv(args.out_dir, args.rows)
    run_engines(path, args.repeat)
    if args.skip_pycanon:
        print("\npycanon comparison skipped (--skip-pycanon)")
    else:
        run_pycanon(ensure_csv(args.out_dir, args.pycanon_rows), args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
