"""The source protocol, shared helpers and :func:`open_source`, the dispatcher."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pyarrow as pa

from anonaudit.errors import ColumnError, InputError, SourceNotFoundError
from anonaudit.settings.names import MISSING_COLUMNS, MissingColumns

if TYPE_CHECKING:
    from anonaudit.sources.csv import CsvOptions
    from anonaudit.sources.dataset import DatasetOptions

__all__ = [
    "MISSING_COLUMNS",
    "MissingColumns",
    "MultiPartSource",
    "Source",
    "SourceInfo",
    "absent_columns",
    "file_sha256",
    "fingerprint",
    "fingerprint_now",
    "local_sha256",
    "open_source",
    "parts_of",
    "require_columns",
    "require_flat",
]

_DIGEST_CHUNK = 1024 * 1024
_LISTED_PARTS = 5


@dataclass(frozen=True)
class SourceInfo:
    """What a source is, for provenance in reports.

    Attributes
    ----------
    name : str
        The path as given, or a description such as ``"<pandas.DataFrame>"``.
    format : str
        ``"csv"``, ``"parquet"``, ``"delta"``, ``"pandas"`` or ``"arrow"``.
    size_bytes : int or None
        Size of the file (or the dataset's files) in storage; ``None`` for in-memory frames.
    filter : str or None
        The row or partition selection applied (``--filter``), as text.
    version : int or None
        The table version read (Delta tables).
    """

    name: str
    format: str
    size_bytes: int | None = None
    filter: str | None = None
    version: int | None = None


class Source(Protocol):
    """Anything that yields record batches of text columns.

    A text column is a ``pa.string()`` array or, where the reader already has one (Parquet
    dictionary pages, partition keys, categoricals), a ``dictionary<int32, string>`` array:
    the engine's hash aggregate groups those by their few distinct values instead of by
    every row's bytes.

    A source of a file may also fingerprint it: an attribute ``sha256`` (the SHA-256 of
    the file's bytes taken by its last complete read, or ``None``; :func:`fingerprint`)
    and a method ``hash_file()`` that hashes the file now if no read has
    (:func:`fingerprint_now`). Neither is required: a source without them is recorded
    as not hashed.

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
        """Yield record batches holding exactly ``columns``, every one as text."""
        ...


@runtime_checkable
class MultiPartSource(Source, Protocol):
    """A source made of parts read independently: the files of a dataset.

    Engines read a multi-part source part by part, to count each file's records and,
    in the Dask engine, to read the parts on different workers. A part's ``columns``
    are its file's own; the source's are those of all its parts. A source may say what
    a part lacking an audited column means with a ``missing_columns`` attribute
    (:func:`require_columns`).
    """

    def parts(self) -> Sequence[Source]:
        """The parts, each a source of its own (picklable, for distributed engines)."""
        ...


def parts_of(source: Source) -> Sequence[Source]:
    """The independently readable parts of ``source``: its files, or ``source`` itself."""
    return source.parts() if isinstance(source, MultiPartSource) else (source,)


def _separator_hint(columns: Sequence[str]) -> str:
    """What to say when a header was read as one column holding a likely separator.

    >>> _separator_hint(["age;sex;disease"])
    " (one column: the separator is probably ';'; give --sep ';')"
    >>> _separator_hint(["age", "sex"])
    ''
    """
    if len(columns) != 1:
        return ""
    counts = {sep: columns[0].count(sep) for sep in (";", "\t", "|", ",", ":")}
    sep, found = max(counts.items(), key=lambda item: item[1])
    if not found:
        return ""
    shown = "tab" if sep == "\t" else f"'{sep}'"
    return f" (one column: the separator is probably {shown}; give --sep {shown})"


def require_columns(source: Source, wanted: Sequence[str]) -> None:
    """Check that ``source`` has every column of ``wanted``, and so does each of its parts.

    A part (a file of a dataset) lacking an audited column that another part has is an
    error naming every such part and what it lacks, unless the source's
    ``missing_columns`` attribute is ``"null"`` (``"error"`` without one): the part's
    values of that column are then null. A source with a ``require_one_kind(wanted)``
    method (a dataset) checks there that each of ``wanted`` reads alike in every part
    (text in one file and numbers in another are refused); columns not audited are
    not checked.

    Raises
    ------
    ColumnError
        The first column no part has (listing the columns that exist), or the parts
        lacking some.
    MalformedFileError
        From ``require_one_kind``: an audited column typed differently in two parts.
    """
    present = set(source.columns)
    for name in wanted:
        if name not in present:
            listed = ", ".join(source.columns)
            raise ColumnError(
                f"{source.info.name}: no column named {name!r}; the columns are: {listed}"
                + _separator_hint(source.columns)
            )
    if not isinstance(source, MultiPartSource):
        return
    require_one_kind = getattr(source, "require_one_kind", None)
    if callable(require_one_kind):  # a dataset: an audited column of one type in every file
        require_one_kind(wanted)
    if getattr(source, "missing_columns", "error") == "null":
        return
    lacking = [
        f"{part.info.name} lacks {', '.join(absent)}"
        for part in source.parts()
        if (absent := absent_columns(part, wanted))
    ]
    if lacking:
        more = len(lacking) - _LISTED_PARTS
        listed = "; ".join(lacking[:_LISTED_PARTS]) + (f"; and {more} more" if more > 0 else "")
        raise ColumnError(
            f"{source.info.name}: its files differ in the audited columns: {listed}; audit "
            "files of one schema, or pass --missing-columns null to read what a file lacks "
            "as null"
        )


def absent_columns(part: Source, wanted: Sequence[str]) -> tuple[str, ...]:
    """The columns of ``wanted`` that ``part`` lacks, in order."""
    present = set(part.columns)
    return tuple(name for name in wanted if name not in present)


def require_flat(schema: pa.Schema, columns: Sequence[str], name: str) -> None:
    """Refuse a nested column (struct, list, map) among ``columns``: it has no text form.

    Raises
    ------
    ColumnError
        Naming ``name`` (the file), the column and its type.
    """
    for column in columns:
        index = schema.get_field_index(column)
        kind = schema.field(index).type if index >= 0 else None
        if kind is not None and pa.types.is_nested(kind):
            raise ColumnError(
                f"{name}: column {column!r} is nested ({kind}); audit flat columns: write "
                "the fields you mean as columns of their own"
            )


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB chunks, as lowercase hex.

    Reports print it as provenance: anyone holding the file can check that it is the
    one audited.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "abc.txt")
    ...     _ = path.write_bytes(b"abc")
    ...     print(file_sha256(path)[:16])
    ba7816bf8f01cfea
    """
    if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe was read once, by the audit
        raise OSError(f"{os.fspath(path)}: not a regular file")
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_DIGEST_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fingerprint(source: Source) -> str | None:
    """The SHA-256 ``source`` recorded of its file, without reading anything.

    A CSV file is hashed as its bytes stream through the reader, so a complete read
    records it for free; a Parquet file (read by ranges) or a file another reader read
    (DuckDB's own scan, Spark) has a digest once :func:`fingerprint_now` took it.

    Returns
    -------
    str or None
        Lowercase hex; ``None`` when nothing was recorded: a frame, a dataset (each of
        its parts has its own), a file in object storage, a file not read completely
        yet, or a source that does not fingerprint.
    """
    digest = getattr(source, "sha256", None)
    return digest if isinstance(digest, str) else None


def fingerprint_now(source: Source) -> str | None:
    """The SHA-256 of ``source``'s file: recorded by its read, else taken now.

    For readers that do not pass the file's bytes through the source, the file is read
    once more, locally, just to hash it (the source's ``hash_file()``); engines call
    this after or beside their read, never a report. A file that can no longer be read
    then (deleted, or a pipe) is not hashed.

    Returns
    -------
    str or None
        As :func:`fingerprint`.
    """
    hash_file = getattr(source, "hash_file", None)
    if not callable(hash_file):
        return fingerprint(source)
    digest = hash_file()
    return digest if isinstance(digest, str) else None


def local_sha256(path: str | os.PathLike[str]) -> str | None:
    """:func:`file_sha256` of a local file, or ``None`` if it cannot be read (any more)."""
    try:
        return file_sha256(path)
    except OSError:
        return None


_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


def open_source(
    obj: Any, *, csv: CsvOptions | None = None, dataset: DatasetOptions | None = None
) -> Source:
    """Open ``obj`` as a :class:`Source`.

    Parameters
    ----------
    obj : str, os.PathLike, pandas.DataFrame or pyarrow.Table
        A CSV file (optionally ``.gz``/``.bz2``/``.zst``-compressed), a Parquet file, a
        directory, glob or object-storage URL of such files or of a Delta table
        (:mod:`anonaudit.sources.dataset`), or an in-memory frame.
    csv : CsvOptions, optional
        Separator, encoding and null markers for CSV files.
    dataset : DatasetOptions, optional
        Format, filters, storage options and Delta version. When any is set, a single
        file is read as a dataset too.

    Returns
    -------
    Source
        A source whose :meth:`Source.batches` streams text columns.
    """
    from anonaudit.sources.csv import CsvOptions, CsvSource
    from anonaudit.sources.dataset import open_dataset
    from anonaudit.sources.frames import FrameSource
    from anonaudit.sources.parquet import ParquetSource
    from anonaudit.sources.storage import is_url

    if isinstance(obj, (str, os.PathLike)):
        text = os.fspath(obj)
        path = Path(text)
        wanted = dataset is not None and dataset.given
        if wanted or is_url(text) or path.is_dir() or any(c in text for c in "*?["):
            return open_dataset(text, options=dataset, csv=csv)
        if not path.exists():
            raise SourceNotFoundError(f"{path}: no such file; check the path")
        if path.name.lower().endswith(_PARQUET_SUFFIXES):
            return ParquetSource(path)
        return CsvSource(path, csv or CsvOptions())
    if FrameSource.accepts(obj):
        return FrameSource(obj)
    raise InputError(
        f"cannot audit an object of type {type(obj).__name__}; "
        "pass a path, a pandas.DataFrame or a pyarrow.Table"
    )
