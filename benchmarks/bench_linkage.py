"""Benchmark: ``anonaudit compose`` and ``anonaudit diff`` against bare DuckDB.

What it measures
----------------
1. Two synthetic releases of ``--rows`` records each (default 1,000,000; the issue's
   target is 10,000,000: pass ``--rows 10000000``) are generated once with a fixed seed
   from :func:`bench_audit.generate_table` over a population of 1.5 x ``--rows`` people
   (each release a random sample of it, so about two thirds of each release's records are
   in the other). Release A generalizes ZIP to 3 digits and age to decades; release B ZIP
   to 2 digits and age to 5-year bands; both keep sex and the disease. Each file holds the
   record id ``pid``. A third file, coded as release A over another sample, is A's next
   snapshot, for differencing. The files are reused when they exist.
2. In a fresh child process each (the house style of ``bench_audit.py``: peak RSS above
   the RSS after imports, best time of ``--repeat`` runs):

   * ``duckdb join + GROUP BY``: bare DuckDB reading both CSVs, a full outer join on
     ``pid`` and ``GROUP BY ALL`` of both releases' columns, fetched to Arrow: the floor
     of the composition;
   * ``anonaudit compose``: :func:`anonaudit.linkage.read_releases` and
     :func:`anonaudit.linkage.compose` (with the DP counterpart);
   * ``duckdb GROUP BY x2 + join``: bare DuckDB counting each snapshot per (QI, SA) and
     full-outer-joining the two counts: the floor of differencing;
   * ``anonaudit diff``: ``anonaudit.load`` of both snapshots and
     :func:`anonaudit.linkage.difference`.

   The ratios anonaudit / DuckDB are printed, and the load average before and after.

The script always exits 0: it is a benchmark, not a test.

How to run
----------
From the repository root::

    python benchmarks/bench_linkage.py                    # 2 x 1M rows
    python benchmarks/bench_linkage.py --rows 10000000    # the issue's size
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_audit  # noqa: E402
from bench_audit import MIB, SEED, in_child, load_average, measure  # noqa: E402

QUASI_IDENTIFIERS = ["zip", "age", "sex"]
SENSITIVE = "disease"
RELEASES = ("release_a.csv", "release_b.csv")
SNAPSHOTS = ("release_a.csv", "snapshot_a2.csv")  # the same coding, another sample
FILES = (*RELEASES, SNAPSHOTS[1])


def generate(folder: Path, rows: int) -> None:
    """Write the two releases of ``rows`` records each into ``folder``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    population = bench_audit.generate_table(rows * 3 // 2, SEED)
    rng = np.random.default_rng(SEED + 1)
    age = population.column("age").to_numpy().astype(np.int64)
    zips = population.column("zip")
    folder.mkdir(parents=True, exist_ok=True)
    codings = zip(FILES, (3, 2, 3), (10, 5, 10), strict=True)
    for name, digits, width in codings:
        chosen = np.sort(rng.choice(population.num_rows, size=rows, replace=False))
        low = age[chosen] // width * width
        release = pa.table(
            {
                "pid": pa.array(chosen),
                "zip": pc.utf8_slice_codeunits(zips.take(chosen), 0, digits),
                "age": pa.array([f"{a}-{a + width - 1}" for a in low.tolist()]),
                "sex": population.column("sex").take(chosen),
                SENSITIVE: population.column(SENSITIVE).take(chosen),
            }
        )
        partial = folder / (name + ".partial")
        pacsv.write_csv(release, partial)
        partial.replace(folder / name)


def _files(folder: str, names: tuple[str, ...] = RELEASES) -> list[str]:
    return [str(Path(folder) / name) for name in names]


def _rows(query: str) -> int:
    """Rows of ``query``'s result in bare DuckDB, fetched to Arrow."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")  # as anonaudit's engine does
    try:
        return int(connection.sql(query).to_arrow_table().num_rows)
    finally:
        connection.close()


def _work_duckdb_join(folder: str, phases: dict[str, float]) -> dict[str, Any]:
    a, b = (path.replace("'", "''") for path in _files(folder))
    columns = [*QUASI_IDENTIFIERS, SENSITIVE]
    select = ", ".join(f"a.{c}, b.{c}" for c in columns)
    query = (
        f"SELECT {select}, count(*) FROM read_csv('{a}', all_varchar=true) a FULL OUTER JOIN "
        f"read_csv('{b}', all_varchar=true) b ON a.pid = b.pid GROUP BY ALL"
    )
    return {"groups": _rows(query)}


def _work_compose(folder: str, phases: dict[str, float]) -> dict[str, Any]:
    from anonaudit.linkage import compose, read_releases

    releases = read_releases(
        _files(folder), id="pid", quasi_identifiers=QUASI_IDENTIFIERS, sensitive=[SENSITIVE]
    )
    result = compose(releases, SENSITIVE, dp_epsilon=1.0)
    return {
        "groups": len(releases.table),
        "records": result.records,
        "disclosed": result.disclosed_records,
        "max_posterior": round(result.max_posterior, 4),
    }


def _work_duckdb_diff(folder: str, phases: dict[str, float]) -> dict[str, Any]:
    a, b = (path.replace("'", "''") for path in _files(folder, SNAPSHOTS))
    columns = ", ".join([*QUASI_IDENTIFIERS, SENSITIVE])
    on = " AND ".join(f"o.{c} IS NOT DISTINCT FROM n.{c}" for c in [*QUASI_IDENTIFIERS, SENSITIVE])
    query = (
        f"WITH o AS (SELECT {columns}, count(*) AS c FROM read_csv('{a}', all_varchar=true) "
        f"GROUP BY ALL), n AS (SELECT {columns}, count(*) AS c FROM "
        f"read_csv('{b}', all_varchar=true) GROUP BY ALL) "
        f"SELECT o.*, n.* FROM o FULL OUTER JOIN n ON {on}"
    )
    return {"pairs": _rows(query)}


def _work_diff(folder: str, phases: dict[str, float]) -> dict[str, Any]:
    import anonaudit
    from anonaudit.linkage import difference

    old, new = (
        anonaudit.load(path, anonaudit.Roles(QUASI_IDENTIFIERS, [SENSITIVE]))
        for path in _files(folder, SNAPSHOTS)
    )
    result = difference(old, new, SENSITIVE)
    return {"classes": result.classes, "disclosed": result.disclosed_records}


bench_audit.PREPARE.update(
    {
        "link_duckdb_join": ["duckdb"],
        "link_compose": ["duckdb", "anonaudit", "anonaudit.linkage"],
        "link_duckdb_diff": ["duckdb"],
        "link_diff": ["duckdb", "anonaudit", "anonaudit.linkage"],
    }
)
bench_audit.WORK.update(
    {
        "link_duckdb_join": _work_duckdb_join,
        "link_compose": _work_compose,
        "link_duckdb_diff": _work_duckdb_diff,
        "link_diff": _work_diff,
    }
)


def main() -> None:
    """Generate the releases if needed, measure, and print the table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="records per release")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement")
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "data")
    options = parser.parse_args()
    folder = options.out_dir / f"linkage_{options.rows}rows_seed{SEED}"
    if not all((folder / name).exists() for name in FILES):
        in_child(generate, folder, options.rows)
    size = sum((folder / name).stat().st_size for name in FILES) / MIB
    print(f"data: {folder} (3 x {options.rows:,} rows, {size:,.1f} MiB)")
    print(f"load average before: {load_average()}")
    results = [
        measure(kind, label, folder, options.repeat)
        for kind, label in (
            ("link_duckdb_join", "duckdb join + GROUP BY"),
            ("link_compose", "anonaudit compose"),
            ("link_duckdb_diff", "duckdb GROUP BY x2 + join"),
            ("link_diff", "anonaudit diff"),
        )
    ]
    print(f"load average after: {load_average()}")
    header = f"{'measurement':<28} {'seconds':>9} {'peak MiB':>10}  result"
    print("\n" + header + "\n" + "-" * len(header))
    for result in results:
        line = f"{result.label:<28} {result.seconds:>9.2f} {result.delta_mib:>10,.0f}"
        print(f"{line}  {result.info}")
    for base, ours in ((results[0], results[1]), (results[2], results[3])):
        if base.error is None and ours.error is None:
            print(
                f"{ours.label} / {base.label}: time {ours.seconds / base.seconds:.2f}x, "
                f"peak memory {ours.delta_mib / max(base.delta_mib, 1):.2f}x"
            )


if __name__ == "__main__":
    main()
