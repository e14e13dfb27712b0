"""Delta Lake tables written by deltalake itself: the latest version, an older one, a
partition filter, and the errors for a missing table or version."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from lake_data import DAYS, QI, SA, day_table, need, rows_of, whole_table

import anonaudit
from anonaudit import ReadOptions, Roles
from anonaudit.cli import main
from anonaudit.errors import SourceNotFoundError


def day_rows(day_index: int) -> pa.Table:
    table = pa.concat_tables([day_table(day_index, 0), day_table(day_index, 1)])
    return table.append_column("day", pa.array([DAYS[day_index]] * table.num_rows))


@pytest.fixture(scope="module")
def delta_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Version 0: day 1; version 1: day 2 appended; version 2: day 3 appended."""
    deltalake = need("deltalake")
    root = tmp_path_factory.mktemp("delta") / "visits"
    for index in range(3):
        mode = "overwrite" if index == 0 else "append"
        deltalake.write_deltalake(str(root), day_rows(index), partition_by=["day"], mode=mode)
    return root


def test_latest_version(delta_table: Path) -> None:
    table = anonaudit.load(delta_table, Roles([*QI, "day"], SA))
    expected = anonaudit.load(whole_table(), Roles([*QI, "day"], SA))
    assert rows_of(table) == rows_of(expected)
    (source,) = table.sources
    assert (source.format, source.version, len(source.files)) == ("delta", 2, 3)
    assert all(f.name.startswith(f"{delta_table}/day=") for f in source.files)
    assert all(f.size_bytes and f.size_bytes > 0 for f in source.files)


def test_older_version(delta_table: Path) -> None:
    table = anonaudit.load(delta_table, Roles(QI, SA), reading=ReadOptions(delta_version=0))
    expected = anonaudit.load(whole_table(DAYS[:1]), Roles(QI, SA))
    assert rows_of(table) == rows_of(expected)
    assert table.sources[0].version == 0


def test_cli_version_and_filter(delta_table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # day (full dates, a partition key) looks like a date about a person: allowed knowingly
    argv = [str(delta_table), "--qi", "zip,age", "--json", "-", "--quiet"]
    argv += ["--allow-identifier", "day"]
    code = main(["audit", *argv, "--delta-version", "1", "--filter", "day=2024-01-02"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    (source,) = report["sources"]
    assert (source["format"], source["version"], source["filter"]) == (
        "delta",
        1,
        "day=2024-01-02",
    )
    assert report["rows"] == day_rows(1).num_rows


def test_missing_version_and_table(
    delta_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SourceNotFoundError, match=r"has no version 7.*--delta-version"):
        anonaudit.load(delta_table, Roles(QI), reading=ReadOptions(delta_version=7))
    (tmp_path / "plain").mkdir()
    code = main(["audit", str(tmp_path / "plain"), "--qi", "zip", "--format", "delta"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no Delta table here" in err and err.count("\n") == 1
