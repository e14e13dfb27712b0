"""CSV files, streamed with pyarrow's incremental reader.

Every column is read as text so codes such as ZIP ``02134`` keep their leading zero; only
the markers in ``na_values`` (by default the empty field) become nulls. The streaming
reader runs single-threaded because only then does pyarrow know the line of a malformed
row. A local file the engine reads whole (:meth:`CsvSource.read_coded`) goes through the
same reader, threaded, and on any error is read again by the streaming one, whose
messages name the line.
"""

from __future__ import annotations

import atexit
import csv as _csv
import functools
import gc
import hashlib
import io
import mmap
import os
import re
import stat
import threading
import time
import weakref
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.fs as pafs
from numpy.typing import NDArray

from anonaudit.errors import ColumnError, MalformedFileError, ParameterError, SourceNotFoundError
from anonaudit.files import from_decimal_comma
from anonaudit.sources.options import CsvOptions
from anonaudit.sources.protocol import Format, SourceInfo, local_sha256

__all__ = [
    "FORMAT",
    "CsvOptions",
    "CsvSource",
    "Readable",
    "from_decimal_comma",
    "read_header",
    "read_rows",
]

_SNIFF_BYTES = 64 * 1024
_BLOCK_BYTES = 16 * 1024 * 1024
_MAX_BLOCK_BYTES = 1024**3
_READ_AHEAD_WAIT = 60.0  # seconds a close waits for a read pyarrow's thread began
_QUIET = 0.05  # seconds without a read after which pyarrow's reading ahead has ended
_BLOCK_SHARE = 8  # of the memory there is, the most a block may take (_largest_block)
_CODECS = {"gzip": ".gz", "bz2": ".bz2", "zstd": ".zst", "lz4": ".lz4"}
_CANDIDATE_SEPARATORS = ",;\t|"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as CSV readers split lines, unlike str.splitlines
_ROW_ERROR = re.compile(r"Row #(\d+): Expected (\d+) columns, got (\d+)")


class CsvSource:
    """A delimited text file with a header row.

    A file that is not a regular file (a named pipe, ``/dev/stdin``) is read as a
    stream, once: its header is kept from the first read and :meth:`batches` may run
    only one time.

    A local file's bytes (as stored: compressed, for a compressed file) are hashed with
    SHA-256 as :meth:`batches` reads them, in the same pass, and :attr:`sha256` holds
    the digest once a read has come to the end of the file. A file DuckDB reads itself
    (:meth:`duckdb_scan`) is hashed by :meth:`hash_file` instead.

    Parameters
    ----------
    path : str or pathlib.Path
        The file; compressed files (``.gz``, ``.bz2``, ``.zst``) are decompressed on the fly.
    options : CsvOptions
        Separator, encoding, null markers.
    filesystem : pyarrow.fs.FileSystem, optional
        Where ``path`` lives (a dataset's storage); the local disk by default.
    name : str, optional
        The user-facing name for messages and reports (default: ``path``).
    size_bytes : int, optional
        The file's size, when the caller knows it already.

    Raises
    ------
    MalformedFileError
        An empty, damaged or undecodable file, or a duplicate column name.
    OSError
        With ``filesystem``: the storage could not be read.
    """

    def __init__(
        self,
        path: str | Path,
        options: CsvOptions,
        *,
        filesystem: pafs.FileSystem | None = None,
        name: str | None = None,
        size_bytes: int | None = None,
    ) -> None:
        self.path = str(path)
        self.options = options
        self._filesystem = filesystem or pafs.LocalFileSystem()
        name = name or self.path
        self._pipe: _Rewound | None = None
        self._pipe_digest: _Digesting | None = None
        self._sha256: str | None = None
        try:
            if filesystem is None:
                status = os.stat(self.path)
                size_bytes = status.st_size
                if not stat.S_ISREG(status.st_mode):
                    raw = open(self.path, "rb", buffering=0)  # noqa: SIM115 - _Rewound closes it
                    self._pipe_digest = _Digesting(raw)
                    self._pipe = _Rewound(_decompressed(self._pipe_digest, self.path.lower()))
            stream = self._pipe or self._open()
            try:
                self.sep, self.columns = read_header(stream, name, options)
            except BaseException:
                stream.close()  # a pipe too: it is never read
                raise
            if self._pipe is not None:
                self._pipe.rewind()
            else:
                stream.close()
        except OSError as exc:
            if filesystem is not None:  # the caller tells storage errors from damage
                raise
            raise _damaged(name, exc) from None
        self.info = SourceInfo(name=name, format="csv", size_bytes=size_bytes)

    def _open(self) -> pa.NativeFile:
        return self._filesystem.open_input_stream(self.path, compression="detect")

    @property
    def _local(self) -> bool:
        return isinstance(self._filesystem, pafs.LocalFileSystem)

    @property
    def _plain(self) -> bool:
        """Whether this is a plain local file: not a pipe, in object storage or compressed
        (what a reader other than :meth:`batches` may read by path)."""
        return (
            self._pipe is None
            and self._local
            and not self.path.lower().endswith(tuple(_CODECS.values()))
        )

    @property
    def sha256(self) -> str | None:
        """The SHA-256 of the file's bytes as stored (lowercase hex), or ``None``.

        Taken by the last read that came to the end of the file (:meth:`batches`, or
        :meth:`hash_file`); ``None`` before, and always for a file in object storage
        (it is not hashed).
        """
        return self._sha256

    def hash_file(self) -> str | None:
        """:attr:`sha256`, hashing the file now in a read of its own if no read has.

        For readers that do not pass the file's bytes through this source: DuckDB's own
        scan (:meth:`duckdb_scan`) and Spark. The digest is then of the file as it is
        when hashed, a moment before or after (or while) that reader reads it. ``None``
        for a file in object storage, a pipe not read to its end by :meth:`batches`
        (it cannot be read again), or a file that can no longer be read.
        """
        if self._sha256 is None and self._pipe is None and self._local:
            self._sha256 = local_sha256(self.path)
        return self._sha256

    def duckdb_scan(self) -> str | None:
        """DuckDB's own ``read_csv`` of this file, where it reads what :meth:`batches` reads.

        The fast path of the local engine: DuckDB parses the file on every core and
        aggregates it in the same pass. Its columns are named ``c0``, ``c1``, ... by
        position in the file. ``None`` when only this reader is known to give the same
        values: a pipe, compressed or remote file, an encoding other than UTF-8, a
        single column (DuckDB reads a blank line as a null there), a path DuckDB would
        read as a glob pattern (``*?[]{}``), a header whose quoted name spans lines, or
        white space next to a quote outside a quoted value (DuckDB drops it; pyarrow
        keeps it in an unquoted value). DuckDB runs in strict
        mode (a ragged row, an unclosed quote, an undecodable byte is an error) with the
        same null markers, unquoted only; on any error, or a file without data rows, the
        engine reads the file with :meth:`batches` instead, whose messages name the line.
        """
        encoding = self.options.encoding.lower().replace("_", "-")
        if (
            not self._plain
            or encoding not in ("utf-8", "utf8")
            or len(self.columns) < 2
            or len(self.sep.encode()) != 1
            or any(c in self.path for c in "*?[]{}")  # DuckDB would read it as a glob
            or not _quotes_agree(self.path, self.sep)
        ):
            return None
        path = os.path.abspath(self.path)  # DuckDB would expand a leading ~
        names = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(self.columns)))
        nulls = ", ".join(_literal(value) for value in self.options.na_values)
        return (
            f"read_csv({_literal(path)}, columns = {{{names}}}, auto_detect = false, "
            f"header = true, delim = {_literal(self.sep)}, quote = '\"', escape = '\"', "
            f"strict_mode = true, null_padding = false, nullstr = [{nulls}], "
            "allow_quoted_nulls = false, compression = 'none')"
        )

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` as string record batches.

        A record longer than the reader's block is read by reading the file again with
        blocks twice as large, from where it had come to (up to 1 GiB).

        The bytes read from a local file or a pipe (before decompression) are hashed on
        their way to the CSV reader; a read that comes to the end of the file records
        the digest as :attr:`sha256`.

        Raises
        ------
        MalformedFileError
            A row with the wrong number of fields (with its line), bytes that do not
            decode, a damaged or truncated (compressed) file, a quoted value that is
            never closed, a header with no data rows, or a pipe read a second time.
        """
        # The last column is read too: its last value tells an unclosed quote.
        last = self.columns[-1]
        wanted = [*columns, last] if last not in columns else list(columns)
        block, rows, value = _BLOCK_BYTES, 0, None
        largest = _largest_block()
        while True:
            raw, digest = self._stream()
            stream = _WatchedStream(raw)
            read = self._read(stream, wanted, block, skip=rows)
            failed = False
            try:
                for batch in read:
                    rows += batch.num_rows
                    value = batch.column(last)[-1].as_py()
                    yield batch.select(list(columns))
                break
            except _StraddlingError:
                failed = True
                if self._pipe is not None or block * 4 > largest:
                    memory = "" if block * 4 > _MAX_BLOCK_BYTES else " with the memory there is"
                    raise MalformedFileError(
                        f"{self.info.name}, after record {rows:,}: a record is longer than "
                        f"{block / 1024**2:g} MiB, the most anonaudit reads at once{memory}; "
                        "check for a quote never closed, or split the field"
                    ) from None
                block *= 4
            except MemoryError:  # pyarrow's allocator, or Python's, under a memory limit
                failed = True
                raise MalformedFileError(
                    f"{self.info.name}, after record {rows:,}: memory ran out reading a "
                    f"record in blocks of {block / 1024**2:g} MiB; check for a quote never "
                    "closed or a field too long, or run where more memory is free"
                ) from None
            except GeneratorExit:  # stopped early: the read ahead is waited for at exit
                raise
            except BaseException:  # its traceback may keep the stream: its reads end here
                failed = True
                raise
            finally:
                read.close()  # closes pyarrow's reader (a consumer may stop early) ...
                if failed:
                    stream.end()  # ... lets a read it began end ...
                stream.close()  # ... before the stream it reads
        if rows == 0:
            raise MalformedFileError(f"{self.info.name}: the file has a header but no data rows")
        if value is not None:
            self._check_closed(stream, value)
        if digest is not None and digest.ended:
            self._sha256 = digest.hexdigest()

    def _stream(self) -> tuple[Any, _Digesting | None]:
        """The (decompressed) stream to read, and what hashes its bytes, if anything.

        A local file is opened without decompression, so that the bytes as stored are
        hashed, and decompressed after; a file in object storage is not hashed.
        """
        if self._pipe is None:
            if not self._local:
                return self._open(), None
            digest = _Digesting(self._filesystem.open_input_stream(self.path, compression=None))
            return _decompressed(digest, self.path), digest
        if self._pipe.closed:
            raise MalformedFileError(
                f"{self.info.name}: is a pipe and was read already; write the data to a file "
                "to read it twice"
            )
        return self._pipe, self._pipe_digest

    def _read(
        self, stream: _WatchedStream, columns: Sequence[str], block: int, *, skip: int
    ) -> Generator[pa.RecordBatch]:
        """The records of ``stream`` after the first ``skip``, read in blocks of ``block``.

        pyarrow's reader is closed when the records end, on an error, and when the
        generator is closed (:meth:`batches` closes it): a reader left open at exit may
        abort the interpreter (``terminate called without an active exception``).
        """
        try:
            with self._reader(stream, columns, block) as reader:
                while True:
                    try:
                        batch = reader.read_next_batch()
                    except StopIteration:
                        return
                    if skip >= batch.num_rows:
                        skip -= batch.num_rows
                        continue
                    if batch.num_rows:
                        yield batch.slice(skip)
                    skip = 0
        except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
            if "straddl" in str(exc):
                raise _StraddlingError from None
            raise self._explain(exc) from None

    def read_coded(self, columns: Sequence[str]) -> pa.Table | None:
        """The whole file at once, ``columns`` dictionary-coded, read on every core.

        The same parse as :meth:`batches` (the same pyarrow reader options, threaded),
        for a plain local file: each value is kept as a code into its block's
        dictionary (4 bytes a value), so the table takes about half the file's size
        when values repeat. ``None`` where only :meth:`batches` may read it: a pipe, a
        compressed or remote file, a record longer than a block, a header without data
        rows, any error, or a last value whose quote is never closed; :meth:`batches`
        then reads the file and names what is wrong.

        Parameters
        ----------
        columns : sequence of str
            Columns of the file.

        Returns
        -------
        pyarrow.Table or None
            ``columns``, typed ``dictionary<int32, string>``.
        """
        if not self._plain:
            return None
        last = self.columns[-1]
        wanted = [*columns, last] if last not in columns else list(columns)
        coded = pa.dictionary(pa.int32(), pa.string())
        try:
            table = pacsv.read_csv(
                self.path, **self._options(wanted, _BLOCK_BYTES, coded, threads=True)
            )
        except (pa.ArrowException, OSError, UnicodeDecodeError):
            return None
        if not table.num_rows:
            return None
        value = table.column(last)[-1].as_py()
        if value is not None:
            ending = 4 * len(value.encode()) + 64  # more bytes than it takes written
            with open(self.path, "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - ending))
                if self._unclosed(handle.read(), value):
                    return None
        return table.select(list(columns))

    def head(self, columns: Sequence[str], size: int) -> pa.RecordBatch | None:
        """The records of about the first ``size`` bytes, ``columns`` as text.

        A cheap look at a local file before choosing how to read it (single-threaded,
        one block of ``size`` bytes: the last record may be left out). ``None`` for a
        file :meth:`read_coded` would not read, or on any error. pyarrow's reader is
        closed before the file, here: one left open at exit may abort the interpreter.
        """
        if not self._plain:
            return None
        try:
            with (  # pyarrow's own stream: its reading ahead never needs Python
                self._open() as raw,
                self._reader(raw, columns, size) as reader,
            ):
                return reader.read_next_batch()
        except (pa.ArrowException, OSError, UnicodeDecodeError, StopIteration):
            return None

    def _unclosed(self, tail: bytes, value: str) -> bool:
        """Whether a file ending in ``tail`` ends inside a quote opened before ``value``,
        its last value: pyarrow then reads everything to the end of the file as that
        value, so the file ends with the quote and the value as written (quotes
        doubled), with no closing quote."""
        written = '"' + value.replace('"', '""')
        return tail.decode(self.options.encoding, errors="replace").endswith(written)

    def _check_closed(self, stream: _WatchedStream, value: str) -> None:
        """Refuse a file whose last value opens a quote and never closes it
        (:meth:`_unclosed`)."""
        if not self._unclosed(stream.tail(), value):
            return
        line = stream.newlines - value.count("\n") + 1
        raise MalformedFileError(
            f"{self.info.name}, line {line}: a quoted value starts here and is never closed; "
            "it would swallow the rest of the file: add the closing quote"
        )

    def _reader(
        self, stream: _WatchedStream | pa.NativeFile, columns: Sequence[str], block: int
    ) -> pacsv.CSVStreamingReader:
        """pyarrow's streaming reader of ``stream``: the caller closes it (``with``)."""
        return pacsv.open_csv(stream, **self._options(columns, block, pa.string(), threads=False))

    def _options(
        self, columns: Sequence[str], block: int, kind: pa.DataType, *, threads: bool
    ) -> dict[str, Any]:
        """pyarrow's reader options for ``columns`` of this file, each read as ``kind``
        (text, or text coded by a dictionary)."""
        return {
            "read_options": pacsv.ReadOptions(
                use_threads=threads,
                block_size=block,
                encoding=self.options.encoding,
                column_names=list(self.columns),
                skip_rows=1,
            ),
            "parse_options": pacsv.ParseOptions(delimiter=self.sep, newlines_in_values=True),
            "convert_options": pacsv.ConvertOptions(
                include_columns=list(columns),
                column_types={name: kind for name in columns},
                null_values=list(self.options.na_values),
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        }

    def _explain(self, exc: Exception) -> MalformedFileError:
        message = str(exc)
        ragged = _ROW_ERROR.search(message)
        name = self.info.name
        if "skip initial" in message:
            return MalformedFileError(f"{name}: the file has a header but no data rows")
        if ragged:
            record, expected, got = ragged.groups()
            where = (
                f"record {record}"
                if self._pipe is not None
                else f"line {self._physical_line(int(record))}"
            )
            return MalformedFileError(
                f"{name}, {where}: expected {expected} fields, found {got}; "
                f"fix that row or pass the right --sep (read with {self.sep!r})"
            )
        if self._pipe is None and ("UTF8" in message or isinstance(exc, UnicodeDecodeError)):
            return _locate_decode_error(name, self.options.encoding, self._open)
        if isinstance(exc, OSError):
            return _damaged(name, exc)
        return MalformedFileError(f"{name}: cannot parse as CSV: {message.splitlines()[0]}")

    def _physical_line(self, record: int) -> int:
        """The file line on which CSV record ``record`` (1 = header) ends.

        pyarrow counts records; a quoted value may span lines, so on this error path
        the file is read again with the csv module, which counts lines.
        """
        with self._open() as raw:
            text = io.TextIOWrapper(raw, encoding=self.options.encoding, errors="replace")
            reader = _csv.reader(text, delimiter=self.sep)
            for number, _ in enumerate(reader, start=1):
                if number == record:
                    return reader.line_num
        return record


def _largest_block() -> int:
    """The largest block a record may be read in: 1 GiB, or what the memory there is allows.

    pyarrow holds a block, the record it is parsing and the decoded columns at once:
    a block may take an eighth of :func:`anonaudit.settings.work.memory_budget` (lowered by
    ``--memory-limit``), so that a gzip bomb's one huge record is refused, not read.
    """
    from anonaudit.settings.work import limits, memory_budget

    return min(_MAX_BLOCK_BYTES, memory_budget(limits().memory_limit) // _BLOCK_SHARE)


#: :func:`_quotes_agree` searches a file this many bytes at a time (a multiple of the page
#: size), each window's pages let go once searched: a file mapped and read whole counted
#: its size in the process's memory (974 MiB for a 50M-row file, DuckDB's whole scan 539).
_SCAN_WINDOW = 64 * 1024**2


#: A line longer than this is not searched for quotes: DuckDB is not given the file.
_LONGEST_LINE = 64 * 1024**2
#: :func:`_touching_quote` searches windows of at least this many bytes: it holds a byte
#: and, per quote, 8 bytes more for each byte of a window.
_QUOTE_WINDOW = 8 * 1024**2


def _found(data: mmap.mmap, needle: bytes) -> bool:
    """Whether ``needle`` occurs in ``data``, searched a window at a time.

    Windows overlap by ``len(needle) - 1`` bytes, so an occurrence across two is found;
    each window's pages are released from the process after its search
    (:func:`_release`).
    """
    size = len(data)
    for start in range(0, size, _SCAN_WINDOW):
        end = min(start + _SCAN_WINDOW + len(needle) - 1, size)
        found = data.find(needle, start, end) >= 0
        _release(data, start, end)
        if found:
            return True
    return False


def _touching_quote(data: mmap.mmap, sep: bytes) -> bool:
    """Whether white space touches a quote from outside in ``data``: a run of spaces,
    tabs, form or vertical feeds between a quote and a line break, ``sep`` (one byte) or
    the file's start or end, as ``(\\A|[\\r\\n,])[ \\t\\f\\v]+"`` or its mirror.

    Searched whole lines at a time (each window ends after a line break at least
    :data:`_QUOTE_WINDOW` bytes on, or at the file's end; the line break before it is
    read with it), its pages released after (:func:`_release`), by :func:`_touching_in`
    (a regular expression took 25 ns a byte where a quote and a space meet on every
    line). A line longer than :data:`_LONGEST_LINE` counts as touching: DuckDB is not
    given the file, and a hostile line costs no more memory than that.
    """
    space, edge = np.zeros(256, dtype=bool), np.zeros(256, dtype=bool)
    space[list(b" \t\f\v")] = True
    edge[[*b"\r\n", sep[0]]] = True
    size, start = len(data), 0
    while start < size:
        end = _line_end(data, min(start + _QUOTE_WINDOW, size) - 1)
        if end is None:  # a line too long to look at: the reader that streams it reads it
            return True
        view = max(start - 1, 0)
        window = np.frombuffer(data, dtype=np.uint8, count=end - view, offset=view)
        try:
            found = _touching_in(window, space, edge)
        finally:
            del window  # no view of the map may outlive it (closing it would fail)
        _release(data, start, end)
        if found:
            return True
        start = end
    return False


def _line_end(data: mmap.mmap, start: int) -> int | None:
    """Where the first line break at or after ``start`` ends (``\\n`` or ``\\r``), or the
    end of ``data``; ``None`` when none comes within :data:`_LONGEST_LINE` bytes (a line
    that long is no reason to read it whole here). Searched :data:`_SCAN_WINDOW` bytes at
    a time, so that no page beyond the break is read."""
    size = len(data)
    limit = min(start + _LONGEST_LINE, size)
    while start < limit:
        stop = min(start + _SCAN_WINDOW, limit)
        ends = [data.find(b"\n", start, stop), data.find(b"\r", start, stop)]
        if max(ends) >= 0:
            return min(at for at in ends if at >= 0) + 1
        start = stop
    return size if limit == size else None


def _touching_in(
    window: NDArray[np.uint8], space: NDArray[np.bool_], edge: NDArray[np.bool_]
) -> bool:
    """Whether white space (the bytes marked in ``space``) joins a quote of ``window``
    to an ``edge`` byte or one of the window's ends: every quote found in one pass, and
    only those with white space beside them followed, a byte at a time over the run.
    Past either end of a window is past the file's: a window starts after a line break
    and ends with one unless it is the file's first or last."""
    quotes = np.flatnonzero(window == ord('"'))
    for step in (-1, 1):  # the runs before the quotes, then after them
        at = quotes + step
        at = at[(at >= 0) & (at < len(window))]
        at = at[space[window[at]]]
        while len(at):
            at += step
            outside = (at < 0) | (at >= len(window))
            if outside.any() or edge[window[at[~outside]]].any():
                return True
            at = at[~outside]
            at = at[space[window[at]]]
    return False


def _release(data: mmap.mmap, start: int, end: int) -> None:
    """Release the pages of ``data`` wholly within ``[start, end)`` from the process
    (``MADV_DONTNEED``: the file's pages stay in the page cache, the process no longer
    maps them), where the system can; the file's last page with the end."""
    release = getattr(mmap, "MADV_DONTNEED", None)
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    last = end if end == len(data) else end // mmap.PAGESIZE * mmap.PAGESIZE
    if release is not None and last > first:
        data.madvise(release, first, last - first)


def _quotes_agree(path: str, sep: str) -> bool:
    """Whether DuckDB and pyarrow read the quotes of ``path`` alike (see ``duckdb_scan``).

    A file without a quote qualifies at once; otherwise its header line must hold an
    even number of quotes and no white space may touch a quote from outside. Single
    bytes are found at memory speed (``memchr``), pairs such as ``' "'`` ten times more
    slowly: pairs are searched only for the white space the file has, and where such a
    pair occurs at all, its context (:func:`_touching_quote`).
    """
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return False
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                if not _found(data, b'"'):
                    return True
                header = _line_end(data, 0)
                if header is None or data[:header].count(b'"') % 2:  # the header line's
                    return False
                spaces = [bytes([c]) for c in b" \t\f\v" if _found(data, bytes([c]))]
                pairs = [pair for c in spaces for pair in (c + b'"', b'"' + c)]
                if not any(_found(data, pair) for pair in pairs):
                    return True
                return not _touching_quote(data, sep.encode())
    except (OSError, ValueError):
        return False


def _literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _decompressed(raw: Any, path: str) -> Any:
    """``raw`` (the bytes of ``path`` as stored), decompressed as the suffix says.

    As ``compression="detect"`` of pyarrow's filesystems: by the suffixes of
    ``_CODECS``, in the case given.
    """
    codec = next((c for c in _CODECS if path.endswith(_CODECS[c])), None)
    return raw if codec is None else pa.input_stream(raw, compression=codec)


class _StraddlingError(Exception):
    """A record is longer than the reader's block."""


class _Digesting(io.RawIOBase):
    """A readable stream over ``raw`` that hashes (SHA-256) every byte read through it.

    :attr:`ended` tells whether a read came to the end of ``raw``: only then is
    :meth:`hexdigest` the digest of all of it.
    """

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self._raw = raw
        self._hash = hashlib.sha256()
        self.ended = False

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        whole = size is None or size < 0
        chunk = bytes(self._raw.read(None if whole else size))
        if chunk:
            self._hash.update(chunk)  # releases the GIL for large chunks
        elif whole or size:
            self.ended = True
        return chunk

    def readinto(self, buffer: Any) -> int:
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def hexdigest(self) -> str:
        """The SHA-256 of the bytes read so far, lowercase hex."""
        return self._hash.hexdigest()

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Rewound(io.RawIOBase):
    """A stream read once (a pipe) whose first bytes, kept, are read again after :meth:`rewind`."""

    def __init__(self, raw: pa.NativeFile) -> None:
        super().__init__()
        self._raw = raw
        self._kept = bytearray()
        self._keeping = True

    def readable(self) -> bool:
        return True

    def rewind(self) -> None:
        """Read the bytes read so far again, then the rest of the stream."""
        self._keeping = False

    def read(self, size: int | None = -1) -> bytes:
        if not self._keeping and self._kept:
            count = len(self._kept) if size is None or size < 0 else min(size, len(self._kept))
            chunk = bytes(self._kept[:count])
            del self._kept[:count]
            return chunk
        chunk = bytes(self._raw.read(None if size is None or size < 0 else size))
        if self._keeping:
            self._kept += chunk
        return chunk

    def close(self) -> None:
        self._raw.close()
        super().close()


class _WatchedStream(io.RawIOBase):
    """A readable stream over ``raw`` that counts its line feeds and keeps its last bytes.

    pyarrow's reader reads ahead on a thread of its own, and a read may still be under
    way when the reader is closed on an error: :meth:`end` ends further reads at once
    and waits (a bounded time) for that one, so that no pyarrow thread is still in
    Python when the interpreter exits (which aborts it). A reader closed early by its
    consumer (a sample of the first records) lets go of the stream on that thread too,
    once its last read ends: :func:`_let_go_at_exit` waits for that at exit.
    """

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self._raw = raw
        self._chunks: tuple[bytes, bytes] = (b"", b"")
        self.newlines = 0
        self._reading = 0
        self._started = 0
        self._ending = False
        self._idle = threading.Condition()

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        with self._idle:
            if self._ending:
                return b""
            self._reading += 1
            self._started += 1
        try:
            chunk: bytes = self._raw.read(None if size is None or size < 0 else size)
        finally:
            with self._idle:
                self._reading -= 1
                self._idle.notify_all()
        if chunk:
            self.newlines += chunk.count(b"\n")
            self._chunks = (self._chunks[1], chunk)
        return chunk

    def readinto(self, buffer: Any) -> int:
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def tail(self) -> bytes:
        """The last bytes read: the last two reads (at least one block)."""
        return b"".join(self._chunks)

    @property
    def ended(self) -> bool:
        """Whether :meth:`end` was called (no read under way then, none after)."""
        return self._ending

    def end(self) -> None:
        """End further reads at once, and wait (a bounded time) for any under way.

        Called on an error that leaves pyarrow's reader reading ahead (a record longer
        than the largest block): a read still under way at interpreter exit aborts it.
        """
        deadline = time.monotonic() + _READ_AHEAD_WAIT
        with self._idle:
            self._ending = True
            while time.monotonic() < deadline:  # until no read is under way, nor begins
                self._idle.wait_for(lambda: self._reading == 0, deadline - time.monotonic())
                started = self._started
                self._idle.wait(_QUIET)
                if self._reading == 0 and self._started == started:
                    break

    def close(self) -> None:
        if self.closed:
            return
        self._raw.close()
        super().close()
        _HELD.add(self)  # closed: only pyarrow's thread may still hold it


#: The streams made for pyarrow's readers, closed and not yet let go of
#: (:func:`_let_go_at_exit`).
_HELD: weakref.WeakSet[_WatchedStream] = weakref.WeakSet()
_LET_GO_WAIT = 10.0  # seconds the interpreter's exit waits for pyarrow to let go


@atexit.register
def _let_go_at_exit() -> None:
    """Wait, at the interpreter's exit, until pyarrow's reading-ahead threads let go of
    every stream made for a reader (a bounded time).

    A reader closed before the end of its file (the identifier check's sample of the
    first records, at the end of an audit) leaves a read ahead under way on pyarrow's
    I/O thread; that thread lets go of the Python stream when the read ends. If that
    happens while the interpreter is being torn down, the thread cannot take the GIL,
    is unwound, and the process aborts (``terminate called without an active
    exception``, exit status 134) after the program's work is done. ``atexit`` runs
    before the tear-down, the interpreter whole: waiting here, the GIL released, lets
    the thread finish. Only streams closed and not ended are waited for: anonaudit
    closes each once its reader is closed, so a reader the program itself left open is
    not; and a stream ended on an error (:meth:`_WatchedStream.end`, its reads over) may
    be kept by the error's traceback with its reader, both then let go at the tear-down
    on the main thread (it was waited for the whole bound).
    """
    if not _HELD:
        return
    gc.collect()  # a stream kept only by a reference cycle
    deadline = time.monotonic() + _LET_GO_WAIT
    while any(not stream.ended for stream in _HELD) and time.monotonic() < deadline:
        time.sleep(0.002)


class Readable(Protocol):
    """A binary stream: a :class:`pyarrow.NativeFile` or a Python raw stream."""

    def read(self, size: int, /) -> bytes:
        """Up to ``size`` bytes; ``b""`` at the end."""
        ...


def read_header(stream: Readable, name: str, options: CsvOptions) -> tuple[str, tuple[str, ...]]:
    """The separator and the column names of a CSV file, from its first 64 KiB.

    A header longer than that is read to its end (up to the 16 MiB a record may take).

    Parameters
    ----------
    stream : Readable
        The file, opened for reading (decompressed).
    name : str
        The file's name, for messages.
    options : CsvOptions
        The separator (sniffed when ``None``) and encoding.

    Raises
    ------
    MalformedFileError
        An empty file or bytes that do not decode.
    ColumnError
        A column named twice in the header.
    """
    raw = stream.read(_SNIFF_BYTES)
    while b"\n" not in raw and len(raw) < _BLOCK_BYTES:  # a header longer than the sample
        more = stream.read(len(raw))
        if not more:
            break
        raw += more
    if not raw.strip():
        raise MalformedFileError(f"{name}: the file is empty; expected a header row")
    # The sample may end inside a multi-byte character: decode up to the last newline.
    cut = raw.rfind(b"\n")
    head = raw if cut < 0 or len(raw) < _SNIFF_BYTES else raw[: cut + 1]
    try:
        sample = str(head.decode(options.encoding)).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _decode_error(name, options.encoding, head, exc) from None
    except LookupError:
        raise _unknown_encoding(options.encoding) from None
    sep = options.sep or _sniff_separator(sample)
    # Only CR and LF end a record: form feed, NEL or U+2028 may be part of a name.
    first = next(_csv.reader(io.StringIO(sample, newline=""), delimiter=sep), [])
    names = tuple(column.strip() for column in first)
    seen: set[str] = set()
    for column in names:
        if column in seen:
            raise ColumnError(
                f"{name}: the header names column {column!r} twice; rename one of them"
            )
        seen.add(column)
    return sep, names


def read_rows(
    path: str | os.PathLike[str], options: CsvOptions, *, name: str | None = None
) -> tuple[str, list[tuple[int, list[str]]]]:
    """Every row of a small delimited text file, with the line it starts on, read whole.

    For files whose first rows are not one header of unique column names: a published
    cross-tab's header may span two rows, its codes repeated or left blank
    (:mod:`anonaudit.sources.published`). The separator is sniffed as :func:`read_header`
    sniffs it, a byte-order mark is dropped, a compressed file (``.gz``, ``.bz2``,
    ``.zst``) is decompressed, blank lines are skipped and cells are kept as written.

    Parameters
    ----------
    path : path
        A local file.
    options : CsvOptions
        The separator (sniffed when ``None``) and the encoding; ``na_values`` is not
        used (every cell is text).
    name : str, optional
        The file's name in messages (default: ``path``).

    Returns
    -------
    tuple
        The separator, and each row as ``(line, cells)``.

    Raises
    ------
    SourceNotFoundError
        No such file.
    MalformedFileError
        An empty, damaged or undecodable file, or a row with another number of fields
        than the first (naming its line).
    """
    name = name or os.fspath(path)
    if not os.path.exists(path):
        raise SourceNotFoundError(f"{name}: no such file; check the path")
    try:
        with pafs.LocalFileSystem().open_input_stream(
            os.fspath(path), compression="detect"
        ) as stream:
            data = bytes(stream.read())
    except OSError as exc:
        raise _damaged(name, exc) from None
    try:
        text = data.decode(options.encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _decode_error(name, options.encoding, data, exc) from None
    except LookupError:
        raise _unknown_encoding(options.encoding) from None
    if not text.strip():
        raise MalformedFileError(f"{name}: the file is empty; expected a header row")
    sep = options.sep or _sniff_separator(text[:_SNIFF_BYTES])
    reader = _csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    rows: list[tuple[int, list[str]]] = []
    line = 1
    for cells in reader:
        if any(cell.strip() for cell in cells):
            if rows and len(cells) != len(rows[0][1]):
                raise MalformedFileError(
                    f"{name}, line {line}: expected {len(rows[0][1])} fields, found "
                    f"{len(cells)}; fix that row or pass the right --sep (read with {sep!r})"
                )
            rows.append((line, cells))
        line = reader.line_num + 1
    return sep, rows


def _unknown_encoding(encoding: str) -> ParameterError:
    return ParameterError(f"unknown encoding {encoding!r}; use a codec name such as latin-1")


def _damaged(path: str, exc: OSError) -> MalformedFileError:
    """The error for a file (or its compressed stream) that breaks off or is corrupt."""
    reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    return MalformedFileError(
        f"{path}: cannot read the file ({reason}); it is damaged or truncated"
    )


@functools.lru_cache(maxsize=8)
def _sniff_separator(sample: str) -> str:
    """The separator of the CSV text ``sample`` (:class:`csv.Sniffer`, a few
    milliseconds), kept for the few samples seen last: an audit opens its inputs twice,
    to read them and to look for direct identifiers (:mod:`anonaudit.measures.identifiers`)."""
    lines = _LINE_BREAK.split(sample)[:50]
    try:
        return _csv.Sniffer().sniff("\n".join(lines), delimiters=_CANDIDATE_SEPARATORS).delimiter
    except _csv.Error:
        header = lines[0] if lines else ""
        counts = {sep: header.count(sep) for sep in _CANDIDATE_SEPARATORS}
        best = max(counts, key=lambda sep: counts[sep])
        return best if counts[best] else ","


def _decode_error(
    path: Path | str, encoding: str, data: bytes, exc: UnicodeDecodeError, lines_before: int = 0
) -> MalformedFileError:
    line = lines_before + data.count(b"\n", 0, exc.start) + 1
    byte = data[exc.start : exc.start + 1].hex()
    hint = "latin-1" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else "utf-8"
    return MalformedFileError(
        f"{path}, line {line}: byte 0x{byte} is not valid {encoding}; "
        f"pass the file's encoding, e.g. --encoding {hint}"
    )


def _locate_decode_error(
    path: str, encoding: str, reopen: Callable[[], pa.NativeFile]
) -> MalformedFileError:
    """Find the first undecodable byte of ``path``, read again with ``reopen`` (error path)."""
    import codecs

    decoder = codecs.getincrementaldecoder(encoding)()
    lines = 0
    with reopen() as stream:
        while chunk := stream.read(_BLOCK_BYTES):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                return _decode_error(path, encoding, chunk, exc, lines_before=lines)
            lines += chunk.count(b"\n")
    return MalformedFileError(f"{path}: bytes that are not valid {encoding}; pass --encoding")


def _open_file(path: Path, options: CsvOptions | None) -> CsvSource:
    """A local CSV file, read with ``options`` (``None``: the defaults)."""
    return CsvSource(path, options or CsvOptions())


#: Delimited text: a single file with none of another format's suffixes is read as CSV
#: (a ``.dat`` file, a compressed one, a pipe); in a dataset, only files with these
#: suffixes (optionally compressed) are, unless ``--format csv`` is given.
FORMAT = Format(
    name="csv",
    title="CSV",
    suffixes=(".csv", ".tsv", ".txt"),
    open_file=_open_file,
    fallback=True,
)
