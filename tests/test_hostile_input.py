"""Hostile input that used to give a wrong answer or hang: each is refused in one line.

Counts and weights whose sums do not fit, a Parquet page that fails its checksum, an
output that is a FIFO nobody reads. The line starts with ``anonaudit: error:``, names
the file or option at fault and says what to do; the exit status is 2.
"""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import InputError


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``anonaudit audit argv``; check the error protocol and return the one line."""
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("anonaudit: error: ")
    return lines[0]


def expect(line: str, *patterns: str) -> None:
    for pattern in patterns:
        assert re.search(pattern, line), f"{pattern!r} not in {line!r}"


# -- sums that do not fit ----------------------------------------------------------------


@pytest.mark.parametrize(
    "counts",
    [
        [2**62, 2**62, 2**62],  # int64 wrapped: k 4.6e18, rows negative, exit 0
        [2**62, 2**62],  # exactly 2^63: DuckDB's sum overflowed, exit 3
        [2**53, 1],
    ],
)
def test_counts_whose_total_does_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], counts: list[int]
) -> None:
    data = tmp_path / "table.csv"
    data.write_text("zip,n\n" + "".join(f"z{i},{c}\n" for i, c in enumerate(counts)))
    line = error_line(capsys, str(data), "--qi", "zip", "--count", "n", "-k", "2", "--quiet")
    expect(line, re.escape(str(data)), r"'n'", r"--count", r"2\^53", r"scale")


def test_counts_up_to_the_limit_are_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "table.csv"
    data.write_text(f"zip,n\na,{2**53 - 3}\nb,3\n")
    code = main(["audit", str(data), "--qi", "zip", "--count", "n", "--json", "-", "--quiet"])
    out, _ = capsys.readouterr()
    assert code in (0, 1)
    assert f'"rows": {2**53}' in out


@pytest.mark.parametrize("weights", [["1e308", "1e308"], ["1e308", "1e308", "1"], ["9e15", "9e15"]])
def test_weights_whose_sum_overflows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], weights: list[str]
) -> None:
    data = tmp_path / "survey.csv"
    data.write_text("zip,w\n" + "".join(f"a,{w}\n" for w in weights))
    line = error_line(capsys, str(data), "--qi", "zip", "--weights", "w", "-k", "2", "--quiet")
    expect(line, re.escape(str(data)), r"'w'", r"--weights", r"scale")


@pytest.mark.parametrize("weight", ["inf", "nan", "1e309"])
def test_non_finite_weight(tmp_path: Path, capsys: pytest.CaptureFixture[str], weight: str) -> None:
    data = tmp_path / "survey.csv"
    data.write_text(f"zip,w\na,1\na,{weight}\n")
    line = error_line(capsys, str(data), "--qi", "zip", "--weights", "w", "-k", "2", "--quiet")
    expect(line, re.escape(str(data)), r"'w'", r"finite")


# -- Parquet page checksums --------------------------------------------------------------


def corrupted_parquet(path: Path) -> Path:
    """A Parquet file written with page CRCs, then one byte of one value changed."""
    table = pa.table(
        {"zip": [f"z{i % 50:03d}" for i in range(2000)], "age": [str(i % 7) for i in range(2000)]}
    )
    pq.write_table(table, path, write_page_checksum=True, use_dictionary=False, compression="none")
    data = bytearray(path.read_bytes())
    at = data.find(b"z025")
    assert at > 0
    data[at + 1] ^= 0x01  # "z025" becomes "z125": still a plausible value
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("as_folder", [False, True])
def test_parquet_page_failing_its_checksum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_folder: bool
) -> None:
    folder = tmp_path / "lake"
    folder.mkdir()
    damaged = corrupted_parquet(folder / "part-0.parquet")
    target = folder if as_folder else damaged
    line = error_line(capsys, str(target), "--qi", "zip,age", "-k", "2", "--quiet")
    expect(line, re.escape(str(damaged)), r"damaged", r"checksum", r"good copy")


def test_parquet_with_checksums_intact_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "good.parquet"
    pq.write_table(pa.table({"zip": ["a", "a", "b", "b"]}), path, write_page_checksum=True)
    assert main(["audit", str(path), "--qi", "zip", "-k", "2", "--quiet"]) == 0


# -- outputs that are not files ----------------------------------------------------------


@pytest.fixture
def small_table(tmp_path: Path) -> Path:
    data = tmp_path / "data.csv"
    data.write_text("zip,age\na,1\na,1\nb,2\nb,2\n")
    return data


@pytest.mark.parametrize("option", ["--json", "--html", "--records-out"])
def test_output_to_a_fifo_nobody_reads(
    small_table: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    option: str,
) -> None:
    monkeypatch.setattr("anonaudit.files.FIFO_READER_WAIT", 0.3)
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    line = error_line(capsys, str(small_table), "--qi", "zip,age", option, str(fifo), "--quiet")
    assert time.monotonic() - started < 30
    expect(line, re.escape(f"{option} {fifo}"), r"FIFO that nobody reads", r"regular file")


def test_output_to_a_socket(
    small_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        line = error_line(capsys, str(small_table), "--qi", "zip", "--json", str(path), "--quiet")
    finally:
        server.close()
    expect(line, re.escape(f"--json {path}"), r"socket", r"regular file")


@pytest.mark.parametrize(
    ("column", "values"), [("count", [2**62, 2**62, 2**62]), ("w", [1e308, 1e308, 1.0])]
)
def test_counts_frame_whose_sums_do_not_fit(column: str, values: list[float]) -> None:
    frame = pa.table(
        {
            "zip": ["a", "b", "c"],
            "count": values if column == "count" else [1, 1, 1],
            "w": values if column == "w" else [1.0, 1.0, 1.0],
        }
    )
    with pytest.raises(InputError, match=rf"counts frame: column '{column}' adds up to more"):
        ClassTable.from_frame(frame, quasi_identifiers=["zip"], weight="w")
