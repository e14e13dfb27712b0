"""Input fingerprints: each file's SHA-256 is taken while the sources read it.

The digest recorded in :attr:`SourceStats.sha256` must equal hashlib's of the file's
bytes as stored (a compressed file's compressed bytes) on every read path: the local
engine's DuckDB scan of a CSV file, its own streaming reader (a file DuckDB does not
read, a compressed file, a pipe), Parquet files, and each file of a dataset. Frames and
files in object storage are not hashed. The report only formats what was recorded: a
report rendered after its input was deleted still shows the digest.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
import threading
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import cast

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from anonaudit import audit_table
from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.cli import main
from anonaudit.engines.local import build_class_table
from anonaudit.report.views import source_digest
from anonaudit.sources import CsvSource, open_source
from anonaudit.sources.base import fingerprint, fingerprint_now
from anonaudit.sources.csv import CsvOptions
from anonaudit.sources.dataset import DatasetOptions

QI = ["zip", "age"]
SA = ["disease"]


def records(n: int = 3000) -> pd.DataFrame:
    """Enough records that the CSV reader reads several blocks of a small block size."""
    return pd.DataFrame(
        {
            "zip": [f"0213{i % 7}" for i in range(n)],
            "age": [str(20 + i % 11) for i in range(n)],
            "disease": [("flu", "cold", "asthma")[i % 3] for i in range(n)],
        }
    )


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(
    source: object, *, csv: CsvOptions | None = None, dataset: DatasetOptions | None = None
) -> ClassTable:
    return build_class_table(
        [open_source(source, csv=csv, dataset=dataset)], quasi_identifiers=QI, sensitive=SA
    )


@pytest.fixture
def csv_file(tmp_path: Path) -> Path:
    path = tmp_path / "records.csv"
    records().to_csv(path, index=False)
    return path


def test_a_csv_file_read_by_duckdb_is_hashed(csv_file: Path) -> None:
    assert CsvSource(csv_file, CsvOptions()).duckdb_scan() is not None  # the fast path
    (stats,) = load(csv_file).sources
    assert stats.sha256 == sha256_of(csv_file)
    assert stats.files == ()


def test_a_csv_file_streamed_by_the_reader_is_hashed_on_the_way(
    csv_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = CsvSource(csv_file, CsvOptions(encoding="latin-1"))  # DuckDB reads UTF-8 only
    assert source.duckdb_scan() is None and source.sha256 is None
    list(source.batches(QI))
    assert source.sha256 == sha256_of(csv_file)
    # Small blocks and a record longer than one: the file is read again from its start.
    monkeypatch.setattr("anonaudit.sources.csv._BLOCK_BYTES", 256)
    long = tmp_path / "long.csv"
    frame = records()
    frame.loc[2000, "disease"] = "x" * 600
    frame.to_csv(long, index=False)
    source = CsvSource(long, CsvOptions(encoding="latin-1"))
    assert sum(batch.num_rows for batch in source.batches(QI)) == 3000
    assert source.sha256 == sha256_of(long)
    (stats,) = load(csv_file, csv=CsvOptions(encoding="latin-1")).sources
    assert stats.sha256 == sha256_of(csv_file)


def test_a_partial_read_records_no_digest(csv_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("anonaudit.sources.csv._BLOCK_BYTES", 1024)
    source = CsvSource(csv_file, CsvOptions())
    batches = cast("Generator[pa.RecordBatch, None, None]", source.batches(QI))
    next(batches)
    batches.close()
    assert source.sha256 is None and fingerprint(source) is None
    assert fingerprint_now(source) == sha256_of(csv_file)  # hashed in a read of its own


def test_a_compressed_csv_file_is_hashed_as_stored(tmp_path: Path) -> None:
    path = tmp_path / "records.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8", newline="") as stream:
        records().to_csv(stream, index=False)
    (stats,) = load(path).sources
    assert stats.sha256 == sha256_of(path)  # the compressed bytes, as `sha256sum` says
    assert stats.rows == 3000


def test_a_parquet_file_is_hashed(tmp_path: Path) -> None:
    path = tmp_path / "records.parquet"
    pq.write_table(pa.Table.from_pandas(records(), preserve_index=False), path, row_group_size=500)
    (stats,) = load(path).sources
    assert stats.format == "parquet"
    assert stats.sha256 == sha256_of(path)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_each_file_of_a_dataset_is_hashed(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "visits"
    frame = records()
    paths = []
    for i, day in enumerate(["2024-01-01", "2024-01-02"]):
        folder = root / f"day={day}"
        folder.mkdir(parents=True)
        for j in range(2):
            path = folder / f"part-{j}.{fmt}"
            chunk = frame.iloc[(2 * i + j) * 750 : (2 * i + j + 1) * 750]
            if fmt == "csv":
                chunk.to_csv(path, index=False)
            else:
                pq.write_table(pa.Table.from_pandas(chunk, preserve_index=False), path)
            paths.append(path)
    (stats,) = load(root).sources
    assert stats.sha256 is None  # a dataset: each file has its own
    assert [Path(f.name).name for f in stats.files] == [p.name for p in paths]
    assert [f.sha256 for f in stats.files] == [sha256_of(p) for p in paths]
    shown = source_digest(stats)
    assert shown.startswith("per file: ")
    assert all(sha256_of(p) in shown for p in paths)
    # A filter reads only some files (pruned by partition): those are the ones hashed.
    (chosen,) = load(root, dataset=DatasetOptions(filters=("day = 2024-01-02",))).sources
    assert [f.sha256 for f in chosen.files] == [sha256_of(p) for p in paths[2:]]


def test_a_single_file_read_as_a_dataset_shows_its_digest(csv_file: Path) -> None:
    (stats,) = load(csv_file, dataset=DatasetOptions(format="csv")).sources
    assert len(stats.files) == 1 and stats.files[0].sha256 == sha256_of(csv_file)
    assert source_digest(stats) == sha256_of(csv_file)


def test_a_frame_is_not_hashed() -> None:
    (stats,) = load(records()).sources
    assert stats.format == "pandas" and stats.sha256 is None
    assert source_digest(stats) == "n/a (not a file)"
    counts = ClassTable.from_frame(
        pd.DataFrame({"zip": ["1"], "count": [3]}), quasi_identifiers=["zip"]
    )
    assert source_digest(counts.sources[0]) == "n/a (not a file)"


def test_files_in_object_storage_are_not_hashed() -> None:
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    text = records().to_csv(index=False).encode()
    for name in ("part-0.csv", "part-1.csv"):
        with memory.open(f"/fingerprints/visits/{name}", "wb") as stream:
            stream.write(text)
    try:
        (stats,) = load("memory://fingerprints/visits/").sources
    finally:
        memory.rm("/fingerprints", recursive=True)
    assert stats.rows == 6000
    assert [f.sha256 for f in stats.files] == [None, None]
    assert source_digest(stats).startswith("not hashed (a URL")


def test_the_report_formats_only_what_was_recorded() -> None:
    digest = "ab" * 32
    assert source_digest(SourceStats("gone.csv", "csv", 3, 10, sha256=digest)) == digest
    # Nothing is read at render time: a file that exists but was never hashed says so.
    assert source_digest(SourceStats(__file__, "csv", 3, 10)).startswith("not hashed")
    assert source_digest(SourceStats("s3://bucket/a.csv", "csv", 3, 10)).startswith(
        "not hashed (a URL"
    )
    files = tuple(
        SourceStats(f"d/part-{i}.parquet", "parquet", 1, 1, sha256=f"{i:064x}") for i in range(60)
    )
    listed = source_digest(SourceStats("d", "parquet", 60, 60, files))
    assert f"d/part-49.parquet: {49:064x}" in listed
    assert "part-50" not in listed and listed.endswith("and 10 more files (not listed)")


def test_a_report_rendered_after_the_input_is_deleted_shows_its_digest(csv_file: Path) -> None:
    digest = sha256_of(csv_file)
    table = load(csv_file)
    csv_file.unlink()
    page = audit_table(table).to_html()
    assert digest in page
    assert "could not be read" not in page


def test_the_cli_report_shows_the_digest_taken_while_reading(
    csv_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "report.html"
    argv = ["audit", str(csv_file), "--qi", "zip,age", "--html", str(page), "--exit-zero"]
    assert main([*argv, "--quiet"]) == 0
    capsys.readouterr()
    assert sha256_of(csv_file) in page.read_text(encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes are POSIX")
def test_a_pipe_is_hashed_as_it_is_read(tmp_path: Path) -> None:
    data = records().to_csv(index=False).encode()
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as stream:
            stream.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        (stats,) = load(fifo).sources
    finally:
        writer.join(timeout=10)
    assert stats.sha256 == hashlib.sha256(data).hexdigest()


def digests(stats: Sequence[SourceStats]) -> list[str | None]:
    return [s.sha256 for s in stats]


def test_merged_tables_keep_each_inputs_digest(tmp_path: Path) -> None:
    paths = []
    for i in range(2):
        path = tmp_path / f"half-{i}.csv"
        records().iloc[i * 1500 : (i + 1) * 1500].to_csv(path, index=False)
        paths.append(path)
    first, second = (load(path) for path in paths)
    merged = first.merge(second)
    assert digests(merged.sources) == [sha256_of(p) for p in paths]
