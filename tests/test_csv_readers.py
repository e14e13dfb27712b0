"""pyarrow's CSV readers are closed, every one, before the file they read.

A streaming reader (:func:`pyarrow.csv.open_csv`) left open when the interpreter exits
may abort it ("terminate called without an active exception", exit 134) after a
successful audit; :meth:`CsvSource.head` left its reader open, and :meth:`CsvSource.batches`
left it to the garbage collector when its consumer stopped early.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import GeneratorType
from typing import Any

import pyarrow.csv as pacsv
import pytest

from anonaudit.sources.csv import CsvOptions, CsvSource


class _Watched:
    """A pyarrow reader that notes whether it was closed."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self.closed = False

    def read_next_batch(self) -> Any:
        return self._reader.read_next_batch()

    def close(self) -> None:
        self.closed = True
        self._reader.close()

    def __enter__(self) -> _Watched:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[_Watched]]:
    """Every streaming reader opened while the test runs."""
    opened: list[_Watched] = []
    original = pacsv.open_csv

    def open_csv(*args: Any, **kwargs: Any) -> _Watched:
        reader = _Watched(original(*args, **kwargs))
        opened.append(reader)
        return reader

    monkeypatch.setattr(pacsv, "open_csv", open_csv)
    yield opened


def _file(tmp_path: Path, rows: int = 50) -> CsvSource:
    path = tmp_path / "data.csv"
    lines = ["zip,age,dx", *(f"1{i % 7}0,{20 + i % 40},flu" for i in range(rows))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return CsvSource(path, CsvOptions())


def test_head_closes_its_reader(tmp_path: Path, readers: list[_Watched]) -> None:
    source = _file(tmp_path)
    batch = source.head(["zip", "age"], 64)  # a block smaller than the file: more to read
    assert batch is not None and batch.num_rows > 0
    assert len(readers) == 1 and readers[0].closed


def test_batches_close_their_reader_when_read_to_the_end(
    tmp_path: Path, readers: list[_Watched]
) -> None:
    source = _file(tmp_path)
    assert sum(batch.num_rows for batch in source.batches(["zip"])) == 50
    assert readers and all(reader.closed for reader in readers)


def test_batches_close_their_reader_when_the_consumer_stops_early(
    tmp_path: Path, readers: list[_Watched]
) -> None:
    source = _file(tmp_path, rows=20_000)
    batches = source.batches(["zip"])
    assert isinstance(batches, GeneratorType)
    next(batches)
    batches.close()
    assert readers and all(reader.closed for reader in readers)
