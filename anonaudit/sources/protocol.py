"""The source protocol, the declaration of a file format and the helpers readers share.

Every reader of :mod:`anonaudit.sources` imports this module, which imports none of
them: a format's module declares its :class:`Format` here, the registry
(:mod:`anonaudit.sources.formats`) collects them, and :func:`anonaudit.sources.open_source`
(:mod:`anonaudit.sources.inputs`) looks them up.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import pyarrow as pa

from anonaudit.errors import ColumnError
from anonaudit.settings.names import MISSING_COLUMNS, MissingColumns

if TYPE_CHECKING:
    from pathlib import Path

    from anonaudit.sources.options import CsvOptions, DatasetOptions
    from anonaudit.sources.storage import Location

__all__ = [
    "MISSING_COLUMNS",
    "Format",
    "MissingColumns",
    "MultiPartSource",
    "Source",
    "SourceInfo",
    "absent_columns",
    "file_sha256",
    "fingerprint",
    "fingerprint_now",
    "local_sha256",
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


@dataclass(frozen=True)
class Format:
    """A format of input files, declared once, as ``FORMAT``, by the module that reads it.

    The registry (:mod:`anonaudit.sources.formats`) collects the declarations;
    :func:`anonaudit.sources.open_source` and the datasets
    (:mod:`anonaudit.sources.dataset`) look formats up there, by name or by a file's
    suffix, and name none themselves.

    Attributes
    ----------
    name : str
        As ``--format`` names it (:data:`anonaudit.settings.names.FORMATS`) and
        :attr:`SourceInfo.format` records it: ``"csv"``.
    title : str
        As messages name it: ``"CSV"``.
    suffixes : tuple of str
        The lowercase file-name suffixes of its files, the first the usual one
        (``(".csv", ".tsv", ".txt")``); none for a format of tables (Delta).
    open_file : callable or None
        Opens one local file of the format, ``open_file(path, csv)``: ``path`` a
        :class:`pathlib.Path`, ``csv`` the :class:`~anonaudit.sources.options.CsvOptions`
        given (``None``: the defaults), which a binary format ignores. ``None`` when a
        file of it is not opened alone.
    fallback : bool
        A single file whose suffix no format claims is read as this format (CSV: a
        ``.dat`` file, a compressed one, a pipe). One format at most says so.
    is_table : callable or None
        ``is_table(where, options)``: whether the
        :class:`~anonaudit.sources.storage.Location` ``where`` holds a table of this
        format (Delta: a directory with a ``_delta_log``), or the
        :class:`~anonaudit.sources.options.DatasetOptions` ask for one (a
        ``--delta-version``). Given with ``open_table``.
    open_table : callable or None
        ``open_table(where, options)``: the table at ``where`` as a source.

    Raises
    ------
    ValueError
        A suffix not lowercase or without its dot, ``is_table`` without
        ``open_table`` (or the reverse), a fallback that opens no file, or a format
        that opens neither files nor tables.

    Examples
    --------
    >>> text = Format("text", "text", suffixes=(".text",), open_file=lambda path, csv: ...)
    >>> text.claims("notes.TEXT"), text.claims("notes.text.gz")
    (True, False)
    """

    name: str
    title: str
    suffixes: tuple[str, ...] = ()
    open_file: Callable[[Path, CsvOptions | None], Source] | None = None
    fallback: bool = False
    is_table: Callable[[Location, DatasetOptions], bool] | None = None
    open_table: Callable[[Location, DatasetOptions], Source] | None = None

    def __post_init__(self) -> None:
        bad = [s for s in self.suffixes if not s.startswith(".") or s != s.lower()]
        if bad:
            raise ValueError(f"format {self.name!r}: suffix {bad[0]!r} is not '.' and lowercase")
        if (self.is_table is None) != (self.open_table is None):
            raise ValueError(f"format {self.name!r}: give is_table and open_table together")
        if self.fallback and self.open_file is None:
            raise ValueError(f"format {self.name!r}: a fallback format must open files")
        if self.open_file is None and self.open_table is None:
            raise ValueError(f"format {self.name!r} opens neither files nor tables")

    def claims(self, name: str) -> bool:
        """Whether a file called ``name`` is of this format by its suffix.

        Parameters
        ----------
        name : str
            A file's name or path.

        Returns
        -------
        bool
            Whether it ends with one of :attr:`suffixes`, in any case (never, for a
            format without suffixes).
        """
        return name.lower().endswith(self.suffixes)


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
