"""Datasets on local disk: directories, globs, hive partitions as QIs, ``--filter``,
coverage in the report, clear errors, progress, and policy files with ``[[datasets]]``.

Every dataset here is compared with the audit of the same records as one in-memory
table, which the engine already audits correctly (tests/test_cli.py).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from lake_data import (
    DAYS,
    FILES_PER_DAY,
    QI,
    ROWS_PER_FILE,
    SA,
    rows_of,
    whole_table,
    write_partitioned,
    write_text,
)

import anonaudit
from anonaudit import EngineOptions, ReadOptions, Roles
from anonaudit.cli import main
from anonaudit.errors import ColumnError, MalformedFileError, ParameterError, SourceNotFoundError
from anonaudit.progress import Progress
from anonaudit.sources.filters import parse_filter


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "visits"
    write_partitioned(str(root))
    write_text(root / "_SUCCESS", "")  # a marker file, not data
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_directory_with_partition_key_as_qi_equals_the_whole_table(lake: Path) -> None:
    table = anonaudit.load(lake, Roles([*QI, "day"], SA))
    expected = anonaudit.load(whole_table(), Roles([*QI, "day"], SA))
    assert rows_of(table) == rows_of(expected)
    (source,) = table.sources
    assert (source.name, source.format, source.rows) == (str(lake), "parquet", len(whole_table()))
    assert len(source.files) == len(DAYS) * FILES_PER_DAY
    assert {f.rows for f in source.files} == {ROWS_PER_FILE}
    assert all(f.name.startswith(str(lake / "day=")) for f in source.files)
    assert source.size_bytes == sum(Path(f.name).stat().st_size for f in source.files)


def test_glob_selects_files(lake: Path) -> None:
    table = anonaudit.load(f"{lake}/day=2024-01-0[12]/*.parquet", Roles(QI))
    expected = anonaudit.load(whole_table(DAYS[:2]), Roles(QI))
    assert rows_of(table) == rows_of(expected)
    assert len(table.sources[0].files) == 2 * FILES_PER_DAY


def test_filter_on_a_partition_reads_only_its_files(lake: Path) -> None:
    table = anonaudit.load(lake, Roles(QI, SA), reading=ReadOptions(filter="day=2024-01-02"))
    expected = anonaudit.load(whole_table(["2024-01-02"]), Roles(QI, SA))
    assert rows_of(table) == rows_of(expected)
    (source,) = table.sources
    assert source.filter == "day=2024-01-02"
    assert [Path(f.name).parent.name for f in source.files] == ["day=2024-01-02"] * 2


@pytest.mark.parametrize(
    ("filters", "days"),
    [
        (["day>=2024-01-02"], DAYS[1:]),
        (["day in 2024-01-01,2024-01-03"], [DAYS[0], DAYS[2]]),
        (["day!=2024-01-01", "day<2024-01-03"], [DAYS[1]]),
    ],
)
def test_filter_expressions(lake: Path, filters: list[str], days: list[str]) -> None:
    table = anonaudit.load(lake, Roles(QI), reading=ReadOptions(filter=filters))
    assert rows_of(table) == rows_of(anonaudit.load(whole_table(days), Roles(QI)))


def test_row_filter_on_a_typed_column(lake: Path) -> None:
    table = anonaudit.load(lake, Roles(QI), reading=ReadOptions(filter=["age>=25"]))
    frame = whole_table().to_pandas()
    expected = anonaudit.load(frame[frame["age"] >= 25], Roles(QI))
    assert rows_of(table) == rows_of(expected)


def test_missing_partition_names_the_values_present(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, str(lake), "--qi", "zip", "--filter", "day=2024-02-30", "--quiet")
    assert code == 2
    assert err.count("\n") == 1
    assert "no file matches --filter day=2024-02-30" in err
    assert "day has 2024-01-01, 2024-01-02, 2024-01-03" in err


def test_filter_errors(lake: Path) -> None:
    with pytest.raises(ColumnError, match=r"--filter region=eu names no column.*zip, age"):
        anonaudit.load(lake, Roles(QI), reading=ReadOptions(filter="region=eu"))
    with pytest.raises(ParameterError, match=r"'old' is not a value of column 'age'"):
        anonaudit.load(lake, Roles(QI), reading=ReadOptions(filter="age>old"))
    with pytest.raises(ParameterError, match=r"cannot read --filter 'day'.*COLUMN OP VALUE"):
        anonaudit.load(lake, Roles(QI), reading=ReadOptions(filter="day"))
    with pytest.raises(MalformedFileError, match=r"no records match --filter age>99"):
        anonaudit.load(lake, Roles(QI), reading=ReadOptions(filter="age>99"))


def test_parse_filter_round_trips() -> None:
    for text in ("day=2024-01-02", "age<=30", "region in eu,us", "day!=x"):
        assert str(parse_filter(text)) == text


def test_csv_dataset_with_partitions(tmp_path: Path) -> None:
    root = tmp_path / "csv"
    write_partitioned(str(root), fmt="csv")
    table = anonaudit.load(root, Roles([*QI, "day"], SA))
    expected = anonaudit.load(whole_table(), Roles([*QI, "day"], SA))
    assert rows_of(table) == rows_of(expected)
    assert table.sources[0].format == "csv"


def test_unreadable_partition_is_an_error_naming_the_file(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = lake / "day=2024-01-02" / "part-1.parquet"
    broken.write_bytes(b"PAR1 this is not parquet PAR1")
    code, out, err = run(capsys, str(lake), "--qi", "zip", "--json", "-", "--quiet")
    assert (code, out) == (2, "")
    assert re.fullmatch(rf"anonaudit: error: {re.escape(str(broken))}: cannot read: .+\n", err)


def test_directory_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceNotFoundError, match=r"empty: is a directory with no data files"):
        anonaudit.load(tmp_path / "empty", Roles(QI))
    mixed = tmp_path / "mixed"
    write_text(mixed / "a.csv", "zip\n1\n")
    pq.write_table(pa.table({"zip": ["2"]}), mixed / "b.parquet")
    with pytest.raises(ParameterError, match=r"both Parquet and CSV files; pick one with --format"):
        anonaudit.load(mixed, Roles(["zip"]))
    assert anonaudit.load(mixed, Roles(["zip"]), reading=ReadOptions(format="csv")).rows == 1
    with pytest.raises(SourceNotFoundError, match=r"no file matches the pattern"):
        anonaudit.load(f"{tmp_path}/nothing-*.parquet", Roles(QI))


def test_report_states_coverage(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, str(lake), "--qi", "zip,age,sex,day", "--filter", "day>=2024-01-02",
        "--json", "-", "--quiet",
    )  # fmt: skip
    assert code == 0
    report = json.loads(out)
    rows = 2 * FILES_PER_DAY * ROWS_PER_FILE
    (source,) = report["sources"]
    assert (source["rows"], source["filter"], source["version"]) == (rows, "day>=2024-01-02", None)
    assert [(Path(f["name"]).parent.name, f["rows"]) for f in source["files"]] == [
        (f"day={day}", ROWS_PER_FILE) for day in DAYS[1:] for _ in range(FILES_PER_DAY)
    ]
    assert report["coverage"] == {
        "sources": 1,
        "files": 2 * FILES_PER_DAY,
        "rows": rows,
        "size_bytes": source["size_bytes"],
    }


def test_progress_reports_parts_bytes_rows_and_eta(lake: Path) -> None:
    stream = io.StringIO()
    progress = Progress(stream, interval=0.0, when="always")
    anonaudit.load(lake, Roles(QI), engine=EngineOptions(progress=progress))
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith(f"anonaudit: read: {len(DAYS) * FILES_PER_DAY}/6 parts, ")
    assert f"{len(whole_table()):,} rows" in lines[-1]
    assert any("ETA" in line for line in lines[:-1])
    assert Progress(io.StringIO()).stream is None  # not a terminal: quiet by default


# -- several datasets in one policy file -----------------------------------------------


def policy(tmp_path: Path, lake: Path, extra: str = "") -> Path:
    text = f"""
sensitive = ["diagnosis"]
json = "reports/summary.json"
allow_identifiers = ["day"]  # a partition's date, not a date of birth
[thresholds]
k = 1

[[datasets]]
name = "day2"
inputs = ["{lake}"]
filter = ["day=2024-01-02"]
quasi_identifiers = ["zip", "sex"]

[[datasets]]
name = "strict"
inputs = ["{lake}"]
quasi_identifiers = ["zip", "age", "sex", "day"]
json = "strict-report.json"
[datasets.thresholds]
k = 1000
{extra}"""
    (tmp_path / "reports").mkdir(exist_ok=True)
    return write_text(tmp_path / "policy.toml", text)


def test_policy_with_datasets_writes_a_summary_and_a_report_each(
    tmp_path: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--config", str(policy(tmp_path, lake)), "--quiet")
    assert code == 1  # the worst: "strict" violates k >= 1000
    assert "== day2 ==" in out and "== strict ==" in out
    summary = json.loads((tmp_path / "reports" / "summary.json").read_text())
    entries = {entry["name"]: entry for entry in summary["datasets"]}
    assert summary["exit_status"] == 1
    assert (entries["day2"]["exit_status"], entries["day2"]["passed"]) == (0, True)
    assert entries["strict"]["failed"] == ["k-anonymity"]
    day2 = json.loads(Path(entries["day2"]["report"]).read_text())
    assert entries["day2"]["report"] == str(tmp_path / "reports" / "day2.json")
    assert day2["sources"][0]["filter"] == "day=2024-01-02"
    assert day2["quasi_identifiers"] == ["zip", "sex"]
    assert day2["rows"] == entries["day2"]["rows"] == FILES_PER_DAY * ROWS_PER_FILE
    strict = json.loads((tmp_path / "strict-report.json").read_text())
    assert strict["policy"] == {"k": 1000}
    assert strict["coverage"]["files"] == len(DAYS) * FILES_PER_DAY


def test_policy_datasets_exit_with_the_worst_status(
    tmp_path: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"""
[[datasets]]
name = "gone"
inputs = ["{tmp_path / "no-such-dir"}"]
quasi_identifiers = ["zip"]
"""
    path = policy(tmp_path, lake, missing)
    code, out, err = run(capsys, "--config", str(path), "--quiet", "--json", "-")
    assert code == 2
    summary: dict[str, Any] = json.loads(out)
    assert [e["exit_status"] for e in summary["datasets"]] == [0, 1, 2]
    assert "no such file" in summary["datasets"][2]["error"]
    assert err.startswith("anonaudit: error: gone: ")
    # Command-line options apply to every dataset: here a filter no dataset can meet.
    code, out, _ = run(
        capsys, "--config", str(path), "--quiet", "--json", "-", "--filter", "day=1999-01-01"
    )
    assert code == 2
    assert all(e["exit_status"] == 2 for e in json.loads(out)["datasets"])


def test_policy_datasets_need_unique_names_and_no_inputs(
    tmp_path: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = policy(tmp_path, lake, '[[datasets]]\nname = "day2"\ninputs = ["x"]\n')
    code, _, err = run(capsys, "--config", str(path))
    assert code == 2 and "two datasets are named 'day2'" in err
    code, _, err = run(capsys, "--config", str(policy(tmp_path, lake)), str(lake))
    assert code == 2 and "INPUT files and [[datasets]]" in err


def test_progress_on_a_terminal_rewrites_one_line(lake: Path) -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        anonaudit.load(
            lake, Roles(QI), engine=EngineOptions(progress=Progress(terminal, interval=0.0))
        )
    chunks = []
    while True:  # a pty hands its buffer over in pieces; read until the closed end (EIO)
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    written = b"".join(chunks).decode()
    assert written.startswith("\ranonaudit: reading: ")
    assert "\x1b[K" in written
    assert "\ranonaudit: read: 6/6 parts, " in written
    assert written.count("\n") == 1  # only the final line ends one


@pytest.mark.parametrize("parquet_first", [True, False])
def test_parquet_and_csv_inputs_in_one_stream(tmp_path: Path, parquet_first: bool) -> None:
    table = whole_table()
    parquet = tmp_path / "a.parquet"
    pq.write_table(table.slice(0, 1000), parquet)
    csv = tmp_path / "b.csv"
    pacsv.write_csv(table.slice(1000), csv)
    inputs = [parquet, csv] if parquet_first else [csv, parquet]
    loaded = anonaudit.load(inputs, Roles([*QI, "day"], SA))
    expected = anonaudit.load(table, Roles([*QI, "day"], SA))
    assert rows_of(loaded) == rows_of(expected)
    assert [s.rows for s in loaded.sources] == (
        [1000, len(table) - 1000] if parquet_first else [len(table) - 1000, 1000]
    )


def test_dp_epsilon_with_datasets_is_refused_not_ignored(
    tmp_path: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = policy(tmp_path, lake)
    code, out, err = run(capsys, "--config", str(path), "--quiet", "--dp-epsilon", "1")
    assert code == 2 and out == ""
    assert "--dp-epsilon and [dp] release one table; with [[datasets]] run anonaudit dp" in err


# -- faults in the lake: pruning, types, symlinks, keys --------------------------------


def small_table(rows: int, **extra: list[Any]) -> pa.Table:
    """``rows`` records of sex, age and diagnosis, and the ``extra`` columns given."""
    columns: dict[str, list[Any]] = {
        "sex": [("F", "M")[i % 2] for i in range(rows)],
        "age": [20 + i % 5 for i in range(rows)],
        "diagnosis": [("flu", "cold", "asthma")[i % 3] for i in range(rows)],
    }
    return pa.table({**columns, **extra})


def write_table(table: pa.Table, path: Path, fmt: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        pacsv.write_csv(table, path)
    return path


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_corrupt_file_in_an_excluded_partition_is_never_opened(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/data-lakes.md: a filter on a partition key skips the other partitions' files
    without opening them, so a damaged file there fails no audit of the others. Here
    ``region=X`` sorts first, where the schema would be taken from."""
    lake = tmp_path / "lake"
    for region in ("eu", "us"):
        write_table(small_table(40), lake / f"region={region}" / f"part-0.{fmt}", fmt)
    corrupt = lake / "region=X" / f"part-0.{fmt}"
    corrupt.parent.mkdir()
    corrupt.write_bytes(random.Random(7).randbytes(4096))
    roles = Roles(["sex", "age"], ["diagnosis"])
    for filters in (["region=eu"], ["region!=X"], ["region in eu,us", "age>=21"]):
        table = anonaudit.load(lake, roles, reading=ReadOptions(filter=filters))
        names = {Path(f.name).parent.name for f in table.sources[0].files}
        assert names <= {"region=eu", "region=us"}, filters
    code, out, err = run(
        capsys, str(lake), "--qi", "sex,age", "--sensitive", "diagnosis",
        "--filter", "region=us", "--json", "-", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["rows"] == 40
    # a filter reaching it still names it; no filter reads it too
    code, _, err = run(capsys, str(lake), "--qi", "sex", "--filter", "region=X", "--quiet")
    assert code == 2 and str(corrupt) in err and err.count("\n") == 1
    code, _, err = run(capsys, str(lake), "--qi", "sex", "--quiet")
    assert code == 2 and str(corrupt) in err and err.count("\n") == 1


def test_a_filter_on_a_key_matching_nothing_names_the_values_without_opening_files(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    for region in ("eu", "us"):
        broken = lake / f"region={region}" / "part-0.parquet"
        broken.parent.mkdir(parents=True)
        broken.write_bytes(b"not parquet at all")
    with pytest.raises(SourceNotFoundError, match=r"region=zz \(region has eu, us\)"):
        anonaudit.load(lake, Roles(["sex"]), reading=ReadOptions(filter="region=zz"))


def test_a_type_change_in_a_column_not_audited_does_not_fail_the_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``income`` is int64 in one file and text in the other; the audit reads sex, age and
    diagnosis (and samples every column for direct identifiers)."""
    lake = tmp_path / "lake"
    write_table(small_table(40, income=list(range(40))), lake / "a.parquet", "parquet")
    write_table(small_table(40, income=[f"{i}k" for i in range(40)]), lake / "b.parquet", "parquet")
    roles = Roles(["sex", "age"], ["diagnosis"])
    table = anonaudit.load(lake, roles)
    assert rows_of(table) == rows_of(anonaudit.load(pa.concat_tables([small_table(40)] * 2), roles))
    code, out, err = run(
        capsys, str(lake), "--qi", "sex,age", "--sensitive", "diagnosis", "--json", "-",
        "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["rows"] == 80
    # audited, the conflict is the clear error it was
    code, out, err = run(capsys, str(lake), "--qi", "sex,income", "--quiet")
    assert (code, out) == (2, "")
    assert err == (
        f"anonaudit: error: {lake / 'b.parquet'}: column 'income' is string here but int64 in "
        "the dataset's other files; write it with one type in every file\n"
    )
    with pytest.raises(MalformedFileError, match=r"b.parquet: column 'income' is string"):
        anonaudit.load(lake, Roles(["sex"], ["income"]))


def test_a_folder_symlink_inside_a_lake_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``latest -> day=2026-11-25`` would count that day twice and overstate k."""
    lake = tmp_path / "lake"
    for day in ("2026-11-24", "2026-11-25"):
        write_table(small_table(60), lake / f"day={day}" / "part-0.parquet", "parquet")
    (lake / "latest").symlink_to("day=2026-11-25", target_is_directory=True)
    code, out, err = run(
        capsys, str(lake), "--qi", "sex,age", "--sensitive", "diagnosis", "--json", "-",
        "--allow-identifier", "day", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["rows"] == 120
    assert [Path(f["name"]).parent.name for f in report["sources"][0]["files"]] == [
        "day=2026-11-24",
        "day=2026-11-25",
    ]
    # named as an input, the linked folder is read
    assert anonaudit.load(lake / "latest", Roles(["sex"])).rows == 60
    assert anonaudit.load(f"{lake}/latest/*.parquet", Roles(["sex"])).rows == 60


def test_a_folder_holding_a_symlink_to_itself_is_read_once(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    write_table(small_table(60), folder / "a.parquet", "parquet")
    (folder / "self").symlink_to(".", target_is_directory=True)
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to("..", target_is_directory=True)
    table = anonaudit.load(folder, Roles(["sex"]))
    assert table.rows == 60
    assert [f.name for f in table.sources[0].files] == [str(folder / "a.parquet")]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_file_reached_twice_is_read_once(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "data"
    real = write_table(small_table(60), folder / "day=1" / f"a.{fmt}", fmt)
    (folder / "day=1" / f"b.{fmt}").symlink_to(f"a.{fmt}")  # a link beside it
    (folder / "day=1" / f"0.{fmt}").symlink_to(f"a.{fmt}")  # one sorting before it
    os.link(real, folder / "day=1" / f"c.{fmt}")  # a hard link
    table = anonaudit.load(folder, Roles(["sex", "day"]))
    assert table.rows == 60
    assert [f.name for f in table.sources[0].files] == [str(real)]


def test_a_lake_of_folder_symlinks_only_says_they_are_not_followed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    write_table(small_table(10), store / "part-0.parquet", "parquet")
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "day=2026-11-25").symlink_to(store, target_is_directory=True)
    with pytest.raises(
        SourceNotFoundError,
        match=r"no data files \(folder symlinks inside a dataset are not followed: "
        r"day=2026-11-25; name a linked folder as an input of its own\)",
    ):
        anonaudit.load(lake, Roles(["sex"]))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_partition_key_that_is_also_a_column_of_the_file_is_refused(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sex=F/`` over a file with its own ``sex`` column (both values here): pyarrow
    would silently keep the folder's."""
    lake = tmp_path / "lake"
    write_table(small_table(10), lake / "sex=M" / f"part-0.{fmt}", fmt)
    write_table(small_table(10).drop_columns(["sex"]), lake / "sex=F" / f"part-0.{fmt}", fmt)
    code, out, err = run(capsys, str(lake), "--qi", "sex,age", "--json", "-", "--quiet")
    assert (code, out) == (2, "")
    assert err == (
        f"anonaudit: error: {lake / 'sex=M' / f'part-0.{fmt}'}: the partition key 'sex' "
        "(folder sex=M) is also a column 'sex' of the file, and the two may disagree; "
        "rename the column in the file or the partition folder\n"
    )
    # a filter excluding that partition leaves no conflict
    assert anonaudit.load(lake, Roles(["sex"]), reading=ReadOptions(filter="sex=F")).rows == 10


def test_a_failed_dataset_leaves_no_report_of_an_earlier_run(
    tmp_path: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Yesterday's run wrote reports and records for "day2"; today its data is damaged.
    Its JSON report says it failed, its HTML page too, its records file is gone; the
    other dataset's reports are today's."""
    (tmp_path / "reports").mkdir()
    config = write_text(
        tmp_path / "policy.toml",
        f"""
sensitive = ["diagnosis"]
json = "reports/summary.json"
allow_identifiers = ["day"]
[thresholds]
k = 1

[[datasets]]
name = "day2"
inputs = ["{lake}"]
filter = ["day=2024-01-02"]
quasi_identifiers = ["zip", "sex"]
html = "reports/day2.html"
records_out = "reports/day2-records.csv"

[[datasets]]
name = "day3"
inputs = ["{lake}"]
filter = ["day=2024-01-03"]
quasi_identifiers = ["zip", "sex"]
json = "day3-report.json"
""",
    )
    reports = tmp_path / "reports"
    code, _, err = run(capsys, "--config", str(config), "--quiet")
    assert code == 0, err  # yesterday: both audited
    assert json.loads((reports / "day2.json").read_text())["rows"] == 800
    assert "<html" in (reports / "day2.html").read_text()
    assert (reports / "day2-records.csv").stat().st_size > 0
    day3_before = json.loads((tmp_path / "day3-report.json").read_text())

    broken = lake / "day=2024-01-02" / "part-1.parquet"
    broken.write_bytes(b"PAR1 damaged overnight PAR1")
    code, _, err = run(capsys, "--config", str(config), "--quiet")
    assert code == 2
    message = f"{broken}: cannot read: "
    assert err.startswith(f"anonaudit: error: day2: {message}") and err.count("\n") == 1
    failed = json.loads((reports / "day2.json").read_text())
    assert failed["status"] == "failed" and failed["exit_status"] == 2
    assert failed["name"] == "day2" and failed["error"].startswith(message)
    assert "rows" not in failed and "measures" not in failed
    page = (reports / "day2.html").read_text()
    assert "day2: the audit failed" in page and str(broken) in page
    assert not (reports / "day2-records.csv").exists()
    summary = json.loads((reports / "summary.json").read_text())
    entry = summary["datasets"][0]
    assert (entry["name"], entry["exit_status"], entry["rows"]) == ("day2", 2, None)
    assert entry["report"] == str(reports / "day2.json")
    assert entry["html"] == str(reports / "day2.html")
    assert [e["exit_status"] for e in summary["datasets"]] == [2, 0]
    day3 = json.loads((tmp_path / "day3-report.json").read_text())
    assert day3["audited_at"] != day3_before["audited_at"]  # today's
    assert "status" not in day3  # a report is never taken for a failure


def test_a_failure_record_replaces_the_json_report_and_leaves_a_folder_alone(
    tmp_path: Path,
) -> None:
    from anonaudit.cli.batch import audit_datasets
    from anonaudit.cli.config import AuditConfig

    old = write_text(tmp_path / "gone.json", '{"rows": 10}')
    folder = tmp_path / "html-is-a-folder.html"
    folder.mkdir()
    config = AuditConfig(
        name="gone", inputs=[str(tmp_path / "nothing")], quasi_identifiers=["zip"],
        json=str(old), html=str(folder),
    )  # fmt: skip
    (result,) = audit_datasets([config])
    assert result.exit_status == 2 and "no such file" in (result.error or "")
    assert json.loads(old.read_text())["status"] == "failed"
    assert result.html is None and folder.is_dir()  # a folder is never removed
