"""The source protocol, shared helpers and :func:`open_source`, the dispatcher."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.errors import ColumnError, InputError, SourceNotFoundError

if TYPE_CHECKING:
    from anonaudit.sources.csv import CsvOptions

__all__ = ["Source", "SourceInfo", "open_source", "require_columns", "to_string_batch"]


@dataclass(frozen=True)
class SourceInfo:
    """What a source is, for provenance in reports.

    Attributes
    ----------
    name : str
        The path as given, or a description such as ``"<pandas.DataFrame>"``.
    format : str
        ``"csv"``, ``"parquet"``, ``"pandas"`` or ``"arrow"``.
    size_bytes : int or None
        Size of the file on disk; ``None`` for in-memory frames.
    """

    name: str
    format: str
    size_bytes: int | None = None


class Source(Protocol):
    """Anything that yields record batches of string columns.

    Attributes
    ----------
    info : SourceInfo
        Provenance of this source.
    columns : tuple of str
        Column names, in file order.
    """

    info: SourceInfo
    columns: tuple[str, ...]

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Yield record batches holding exactly ``columns``, every one as strings."""
        ...


def require_columns(source: Source, wanted: Sequence[str]) -> None:
    """Raise :class:`ColumnError` naming the first unknown column and listing those that exist."""
    present = set(source.columns)
    for name in wanted:
        if name not in present:
            listed = ", ".join(source.columns)
            raise ColumnError(
                f"{source.info.name}: no column named {name!r}; the columns are: {listed}"
            )


def to_string_batch(batch: pa.RecordBatch | pa.Table, columns: Sequence[str]) -> pa.RecordBatch:
    """Return ``batch`` restricted to ``columns``, each cast to ``pa.string()``.

    Dictionary columns are decoded first; nulls stay nulls. Numbers become their
    shortest decimal text, so a Parquet integer 2134 and a CSV cell ``2134`` agree.
    """
    arrays = []
    for name in columns:
        array = batch.column(name)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        if not pa.types.is_string(array.type):
            if pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
                array = array.cast(pa.string())
            else:
                array = pc.cast(array, pa.string())
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=list(columns))


_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


def open_source(obj: Any, *, csv: CsvOptions | None = None) -> Source:
    """Open ``obj`` as a :class:`Source`.

    Parameters
    ----------
    obj : str, os.PathLike, pandas.DataFrame or pyarrow.Table
        A CSV file (optionally ``.gz``/``.bz2``/``.zst``-compressed), a Parquet file, or
        an in-memory frame.
    csv : CsvOptions, optional
        Separator, encoding and null markers for CSV files.

    Returns
    -------
    Source
        A source whose :meth:`Source.batches` streams string columns.
    """
    from anonaudit.sources.csv import CsvOptions, CsvSource
    from anonaudit.sources.frames import FrameSource
    from anonaudit.sources.parquet import ParquetSource

    if isinstance(obj, (str, os.PathLike)):
        path = Path(obj)
        if not path.exists():
            raise SourceNotFoundError(f"{path}: no such file; check the path")
        if path.is_dir():
            raise InputError(f"{path}: is a directory; pass the files in it (e.g. {path}/*.csv)")
        if path.name.lower().endswith(_PARQUET_SUFFIXES):
            return ParquetSource(path)
        return CsvSource(path, csv or CsvOptions())
    if FrameSource.accepts(obj):
        return FrameSource(obj)
    raise InputError(
        f"cannot audit an object of type {type(obj).__name__}; "
        "pass a path, a pandas.DataFrame or a pyarrow.Table"
    )
