"""The local engine: record batches (or a file's codes) -> one aggregate -> class table.

Four ways, the fastest that applies (``benchmarks/bench_audit.py``, 10M rows, 2.76M
distinct (QI, SA) combinations, 2 cores):

* a local CSV file of at most 1 GiB whose columns repeat their values, with no memory
  limit set, is read at once by pyarrow's threaded reader with each value kept as a
  4-byte code into its block's dictionary, and its records are counted by their codes
  (:meth:`ClassTable.from_coded <anonaudit.classtable.ClassTable.from_coded>`): 0.6x
  to 0.8x of the time DuckDB's own CSV scan and ``GROUP BY`` take, in less memory
  than DuckDB's, and the classes then need no value hashed again (:func:`_read_coded`);
* larger CSV files, several of them, or any file under ``--memory-limit``: DuckDB's own
  CSV reader parses on every core and aggregates in the same pass, where it reads what
  pyarrow's reader reads;
* batches whose every column arrives dictionary-coded with few values (Parquet text,
  typed columns turned into text), up to 1 GiB of codes, are counted by their codes
  too (:func:`_held_coded`);
* anything else (plain text batches, pipes, compressed files, frames, what the paths
  above decline): pyarrow's streaming batches feed one DuckDB hash ``GROUP BY``, which
  holds one batch plus the hash table of distinct combinations and spills that table
  to disk if it outgrows the memory limit.

Every part of every source (each file of a dataset) feeds one stream and one hash
table, so peak memory grows with the distinct combinations, not with the rows or the
files (the codes counted by the first and third ways grow with the rows, which is why
they stop at 1 GiB and at a memory limit); the rows each part gave are counted on the
way (:class:`SourceStats`), and each file's SHA-256 is taken
(:func:`~anonaudit.sources.base.fingerprint_now`): a CSV file's as its bytes stream
through the reader, a Parquet file's once it is read, a file a fast path reads in a
thread beside the read. Text columns that arrive as dictionaries (Parquet, partition
keys) stay dictionaries: DuckDB then hashes each batch's few distinct values
(``benchmarks/bench_lake.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable, SourceStats, to_text_batch, whole_numbers
from anonaudit.errors import AnonauditError, InputError, MalformedFileError, ParameterError
from anonaudit.progress import Progress
from anonaudit.settings import work
from anonaudit.settings.options import EngineOptions
from anonaudit.settings.work import Limits, limits
from anonaudit.sources.base import (
    MultiPartSource,
    Source,
    absent_columns,
    fingerprint,
    fingerprint_now,
    parts_of,
    require_columns,
)

if TYPE_CHECKING:
    import duckdb

    from anonaudit.sources.parquet import ParquetSource
    from anonaudit.sources.parts import FragmentSource

__all__ = [
    "ROW_COUNT",
    "FileStats",
    "Limits",
    "build_class_table",
    "check_columns",
    "connect",
    "engine_limits",
    "group_counts",
    "limits",
    "limits_in_force",
    "numbered_batches",
    "provenance",
    "total_size",
]

_log = logging.getLogger("anonaudit")

_COUNT = "__anonaudit_count__"
_WEIGHT = "__anonaudit_weight__"
#: The column of records per row in :func:`numbered_batches` (from ``count``).
ROW_COUNT = "__anonaudit_rows__"
#: The most records a ``--count`` column, and the most a ``--weights`` column, may add up
#: to: beyond 2^53 neither is exact as a float, and counts near 2^63 overflow ``int64``.
MAX_TOTAL = 2**53
# Dictionaries up to this size (or an eighth of their batch) are grouped by codes.
_SMALL_DICTIONARY = 1024
# A QI with more distinct values than this share of a sample's records looks like an
# identifier; samples smaller than _IDENTIFIER_SAMPLE records are not judged.
_IDENTIFIER_SHARE = 0.9
_IDENTIFIER_SAMPLE = 1000
# Records the CSV fast paths sample from the top of a file for that warning.
_SAMPLE_ROWS = 100_000
# Local CSV files up to this size are read at once, as codes (_read_coded), when the
# records of their first _HEAD_BYTES say codes pay (_codes_pay: judged on _PAY_ROWS
# records, with this share).
_CODED_BYTES = 1024**3
_CODED_SHARE = 0.5
_PAY_ROWS = 65_536
_DISTINCT_SHARE = 0.9
_CODED_TYPE = pa.dictionary(pa.int32(), pa.string())
_HEAD_BYTES = 1024**2
# _unique: hashes checked in this many rows spread over the column first; hashes that
# repeat for more than _HASH_COLLISIONS values (not collisions, then) settled by DuckDB.
_HASH_SAMPLE = 1 << 16
_HASH_COLLISIONS = 64


def engine_limits(engine: EngineOptions) -> Limits:
    """The :class:`Limits` ``engine`` asks for, checked.

    Raises
    ------
    ParameterError
        ``engine.temp_dir`` is not a writable directory, or DuckDB does not read
        ``engine.memory_limit`` as a size (such as ``"4GB"`` or ``"500MB"``).
    """
    temp_dir = engine.temp_dir
    if temp_dir is not None and not (os.path.isdir(temp_dir) and os.access(temp_dir, os.W_OK)):
        raise ParameterError(f"--temp-dir {temp_dir}: not a writable directory")
    value = Limits(engine.memory_limit, temp_dir)
    if value.memory_limit is not None:
        with work.scoped_limits(value):
            connect().close()  # DuckDB checks the size now, not in the middle of a scan
    return value


@contextmanager
def limits_in_force(engine: EngineOptions) -> Iterator[None]:
    """``engine``'s memory limit and spill folder (:func:`engine_limits`) in force for
    every aggregation and bounded read of the block, in this context only."""
    with work.scoped_limits(engine_limits(engine)):
        yield


@dataclass(frozen=True)
class FileStats(SourceStats):
    """The :class:`SourceStats` of a dataset's file, with the audited columns it lacks.

    Attributes
    ----------
    null_columns : tuple of str
        Audited columns the file does not have, read as null
        (``missing_columns="null"``).
    """

    null_columns: tuple[str, ...] = ()


def build_class_table(
    sources: Sequence[Source],
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    weights: str | None = None,
    count: str | None = None,
    progress: Progress | None = None,
) -> ClassTable:
    """Aggregate ``sources`` into one class table in a single streaming pass.

    Parameters
    ----------
    sources : sequence of Source
        Files, datasets or frames; every one must have all the named columns.
    quasi_identifiers, sensitive : sequence of str
        Column roles.
    weights : str, optional
        A column of survey weights, summed per combination into
        :attr:`ClassTable.weights`; every value must be a non-negative number.
    count : str, optional
        A column of whole numbers: each row stands for that many records (a frequency
        table, one row per group), summed per combination; rows counting 0 add none.
    progress : Progress, optional
        Where to report parts, bytes and rows read.

    Returns
    -------
    ClassTable
        The table of all sources, with the records each source (and each file of a
        dataset) gave and each file's SHA-256 (:attr:`SourceStats.sha256`).

    Raises
    ------
    InputError
        A weight or count that is null, not a number of its kind, or negative (the
        column, the value and the file are named).
    """
    columns = check_columns(sources, quasi_identifiers, sensitive)
    numbers = _numbers(weights, count)
    if len(numbers) == 2:
        raise ParameterError("--weights and --count cannot be combined: give one of them")
    for name, kind in numbers.items():
        if name in columns:
            raise ParameterError(
                f"the {kind.noun} column {name!r} is also a quasi-identifier or sensitive column"
            )
    read = [*columns, *check_columns(sources, list(numbers), ())]
    flat = [part for source in sources for part in parts_of(source)]
    rows = [0] * len(flat)
    if progress is not None:
        progress.start(parts=len(flat), size_bytes=total_size(flat))
    coded = None if numbers else _read_coded(flat, columns, quasi_identifiers)
    if coded is not None:
        records, flagged = coded
        if progress is not None:
            progress.advance(records.num_rows)
            progress.part_done(flat[0].info.size_bytes)
            progress.finish()
        stats = provenance(sources, [records.num_rows], read)
        table = ClassTable.from_coded(
            records, quasi_identifiers=quasi_identifiers, sensitive=sensitive, sources=stats
        )
        return _with_identifiers(table, flagged)
    fast = None if numbers else _scan_csv(flat, columns, quasi_identifiers)
    if fast is not None:
        keys, counts, part_rows, flagged = fast
        if progress is not None:
            progress.advance(int(counts.sum()))
            for part in flat:
                progress.part_done(part.info.size_bytes)
            progress.finish()
        stats = provenance(sources, part_rows, read)
        table = ClassTable(tuple(quasi_identifiers), tuple(sensitive), keys, counts, stats)
        return _with_identifiers(table, flagged)
    suspects: list[str] = []
    totals = _Totals()
    integers = _integers(flat, columns, numbers)

    def stream() -> Iterator[pa.RecordBatch]:
        unseen = True
        for index, part in enumerate(flat):
            read = numbered_batches(part, columns, weights=weights, count=count, integers=integers)
            for batch in read:
                if unseen and count is None:  # a frequency table's rows are not records
                    suspects.extend(_warn_identifiers(batch, quasi_identifiers, part.info.name))
                unseen = False
                records = batch.num_rows
                if count is not None:
                    records = totals.add(batch[ROW_COUNT], _COUNTS, count, part.info.name)
                if weights is not None:
                    totals.add(batch[_WEIGHT], _WEIGHTS, weights, part.info.name)
                rows[index] += records
                if progress is not None:
                    progress.advance(records)
                yield batch
            fingerprint_now(part)  # a CSV file was hashed as it streamed; Parquet now
            if progress is not None:
                progress.part_done(part.info.size_bytes)

    batches = stream()
    bounded = numbers or limits().memory_limit is not None  # a limit: DuckDB may spill
    held, countable, typed = (
        ([], False, True) if bounded else _held_coded(batches, columns, integers)
    )
    if not typed:  # the batches held are text: so must the rest be
        batches = (to_text_batch(batch, columns) for batch in batches)
    if countable:
        if progress is not None:
            progress.finish()
        table = ClassTable.from_coded(
            {name: [batch.column(name) for batch in held] for name in columns},
            quasi_identifiers=quasi_identifiers,
            sensitive=sensitive,
            sources=provenance(sources, rows, read),
        )
        return _with_identifiers(table, suspects)
    keys, counts, sums = group_counts(
        itertools.chain(held, batches),
        columns,
        weight=_WEIGHT if weights is not None else None,
        count=ROW_COUNT if count is not None else None,
    )
    if count is not None and not counts.all():  # groups whose rows all counted 0
        keys, counts = keys.filter(pa.array(counts > 0)), counts[counts > 0]
    if progress is not None:
        progress.finish()
    stats = provenance(sources, rows, read)
    table = ClassTable(tuple(quasi_identifiers), tuple(sensitive), keys, counts, stats, sums)
    return _with_identifiers(table, suspects)


def _integers(
    parts: Sequence[Source], columns: Sequence[str], numbers: Mapping[str, _Numbers]
) -> tuple[str, ...]:
    """The ``columns`` Parquet files may give as whole numbers (not as text).

    DuckDB groups a column of integers several times faster, and in less memory, than
    its text (10M rows with a unique ``id``: 2.4 s against 5.5 to 6.7 s, 1.7 to 2.1 GB
    against 2.5); the class table takes their text after grouping, as the reader
    would have (:func:`~anonaudit.classtable.to_text_batch`). A column every part
    reads as whole numbers (``int32`` in one file and ``int64`` in another agree); not
    in a CSV file, nor beside a weight or count column.
    """
    files = [_parquet(part) for part in parts]
    if numbers or not files:
        return ()
    return tuple(
        name
        for name in columns
        if all(f is not None and whole_numbers(f.read_type(name) or pa.null()) for f in files)
    )


def _parquet(part: Source) -> ParquetSource | FragmentSource | None:
    """``part`` if it is a file that may give whole numbers as such (a Parquet file, or
    a dataset's file, whose :meth:`read_type` says how it reads each column: never as
    whole numbers from a CSV file)."""
    from anonaudit.sources.parquet import ParquetSource
    from anonaudit.sources.parts import FragmentSource

    return part if isinstance(part, (ParquetSource, FragmentSource)) else None


def _held_coded(
    batches: Iterator[pa.RecordBatch], columns: Sequence[str], integers: Sequence[str] = ()
) -> tuple[list[pa.RecordBatch], bool, bool]:
    """Read ``batches`` while they can be counted by their codes, and hold them.

    Batches whose every column is dictionary-coded text with few values (Parquet's
    dictionary pages, typed columns turned into text) are counted faster by their codes
    (:meth:`ClassTable.from_coded`) than hashed again by DuckDB: on the 20M-row dataset
    of ``benchmarks/bench_lake.py`` the class table takes half the time of DuckDB's own
    ``GROUP BY`` of the files, in 0.6x its memory. Their codes are held, narrowed to the
    smallest integer type (a byte a value for up to 127 values), up to ``_CODED_BYTES``
    (counted at 4 bytes a value); a first batch whose records say codes do not pay
    (:func:`_codes_pay`), a batch with a plain text column or many values, or more than
    that to hold, ends the holding.

    Whole numbers a Parquet file gives as such (``integers``: :func:`_integers`) are
    held as text codes too; when the first batch ends the holding, it is given back as
    it came, and so may the rest be.

    Returns
    -------
    held : list of pyarrow.RecordBatch
        The batches read so far.
    coded : bool
        Whether ``batches`` came to their end and every one can be counted by codes;
        if not, the caller aggregates ``held`` and then the rest of ``batches``.
    typed : bool
        Whether ``held`` are the batches as they came (the first, alone), so that the
        rest may stay so too; otherwise they are text, and the rest must be made so.
    """
    held: list[pa.RecordBatch] = []
    size = 0
    for read in batches:
        batch = to_text_batch(read, columns) if integers else read
        held.append(batch)
        size += 4 * batch.num_rows * batch.num_columns
        if (
            size > _CODED_BYTES
            or not all(
                column.type == _CODED_TYPE
                and (
                    batch.num_rows < _IDENTIFIER_SAMPLE
                    or len(column.dictionary) <= _CODED_SHARE * batch.num_rows
                )
                for column in batch.columns
            )
            or (len(held) == 1 and not _codes_pay(batch))
        ):
            return ([read], False, True) if len(held) == 1 else (held, False, not integers)
        held[-1] = _narrow(batch)
    return held, bool(held), not integers


def _codes_pay(sample: pa.RecordBatch) -> bool:
    """Whether records like ``sample``'s are counted faster by codes than by DuckDB.

    Codes pay where every column repeats its values but their combinations do not: no
    column has more distinct values than ``_CODED_SHARE`` of the sample's records, and
    at least ``_DISTINCT_SHARE`` of them are combinations of their own (a class table
    of as many groups as the sample has records at least, as in
    ``benchmarks/bench_audit.py``). Where values hardly repeat, each chunk's
    dictionary holds nearly every value and the packed codes are hashed anyway; where
    combinations repeat, DuckDB's hash table is small and its output cheap to encode
    (``benchmarks/bench_scaling.py``: 10^3 and 10^4 classes over 10M records, where
    codes took up to 2.5x DuckDB's memory for no gain in time). Judged on the
    first ``_PAY_ROWS`` records; fewer than ``_IDENTIFIER_SAMPLE``: codes (a small
    input, either way fast).
    """
    rows = min(sample.num_rows, _PAY_ROWS)
    if rows < _IDENTIFIER_SAMPLE:
        return True
    columns = [  # a batch's dictionary holds each value once: its codes tell them apart
        column.indices if pa.types.is_dictionary(column.type) else column
        for column in sample.slice(0, rows).columns
    ]
    if any(
        pc.count_distinct(column, mode="all").as_py() > _CODED_SHARE * rows for column in columns
    ):
        return False
    names = [f"c{i}" for i in range(len(columns))]
    combinations = pa.table(columns, names=names).group_by(names).aggregate([])
    return bool(combinations.num_rows >= _DISTINCT_SHARE * rows)


def _narrow(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch``'s dictionary columns with codes of the narrowest integer type that holds
    them (a byte for up to 127 values): the batches held take a quarter of the memory."""
    arrays = []
    for column in batch.columns:
        size = len(column.dictionary)
        kind = pa.int8() if size <= 127 else pa.int16() if size <= 32767 else pa.int32()
        arrays.append(pa.DictionaryArray.from_arrays(column.indices.cast(kind), column.dictionary))
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _with_identifiers(table: ClassTable, suspects: Sequence[str]) -> ClassTable:
    """``table``, told which of the ``suspects`` (QIs that looked like identifiers) are.

    A QI whose value differs in every row of the class table makes every row a class
    of its own; the table then needs no hashing of that column's millions of values to
    find its classes (which took more memory than the table itself). Whether one is
    unique is told by :func:`_unique`.
    """
    if not suspects or len(table) < 2:
        return table
    # A table counted by codes knows each QI's number of values: unique or not is told.
    unknown = [name for name in suspects if ("group", name) not in table._encodings]
    if len(unknown) < len(suspects):
        return table
    connection = connect()
    try:
        for name in unknown:
            if _unique(connection, table.keys.column(name)):
                table._know_unique(name)
                break
    finally:
        connection.close()
    return table


def _unique(connection: duckdb.DuckDBPyConnection, column: pa.ChunkedArray) -> bool:
    """Whether every value of ``column`` differs (nulls count as one value), exactly.

    DuckDB hashes the values (64 bits, on every core; 0.4 to 0.6 s for 10^7 values) and
    numpy sorts the hashes: different hashes are different values. Values whose hashes
    repeat are compared as they are, first within ``_HASH_SAMPLE`` rows spread evenly
    over the column (a column that repeats its values usually shows a repeat there; a
    prefix need not: the engine returns groups in about the order the input first has
    them); hashes that repeat beyond ``_HASH_COLLISIONS`` values without the values
    repeating are settled by DuckDB's
    ``GROUP BY`` of the values. On 10M rows of a unique column the hashes take 1 to 2 s
    against 4 s for that ``GROUP BY``, and 16 bytes a row (the hashes, sorted) where
    that ``GROUP BY`` took up to the memory limit beside the class table.
    """
    step = max(len(column) // _HASH_SAMPLE, 1)
    spread = column.take(pa.array(np.arange(0, len(column), step))) if step > 1 else None
    for part in (column,) if spread is None else (spread, column):
        with _registered(connection, part):
            hashes = connection.sql("SELECT hash(c0) AS h FROM suspect").fetchnumpy()["h"]
        ordered = np.sort(np.asarray(hashes))
        repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        if len(repeated):
            rows_of = np.flatnonzero(np.isin(hashes, repeated[:_HASH_COLLISIONS]))
            pairs = pa.table({"h": hashes[rows_of], "v": part.take(pa.array(rows_of))})
            if pairs.group_by(["h", "v"]).aggregate([]).num_rows < pairs.num_rows:
                return False  # a value repeats
            if len(repeated) > _HASH_COLLISIONS:  # hashes repeat, values may not
                break
        elif part is column:
            return True
    repeats = "SELECT 1 FROM (SELECT c0 FROM suspect GROUP BY c0 HAVING count(*) > 1) LIMIT 1"
    with _registered(connection, column):
        return not connection.sql(repeats).fetchall()


@contextmanager
def _registered(connection: duckdb.DuckDBPyConnection, column: pa.ChunkedArray) -> Iterator[None]:
    """``column`` registered with ``connection`` as the table ``suspect(c0)``."""
    connection.register("suspect", pa.table([column], names=["c0"]))
    try:
        yield
    finally:
        connection.unregister("suspect")


@contextlib.contextmanager
def _hashed_beside(parts: Sequence[Source]) -> Iterator[Future[list[str | None]]]:
    """Hash the files of ``parts`` in a thread beside a read that does not pass their
    bytes through anonaudit (the fast paths), mostly from the page cache.

    The caller waits for the digests (``result()``) once its read has succeeded; after
    a failed read the thread is left to finish, and the reader that reads the files
    next hashes them as it streams.
    """
    hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="anonaudit-sha256")
    try:
        yield hashing.submit(lambda: [fingerprint_now(part) for part in parts])
    finally:
        hashing.shutdown(wait=False)


def _read_coded(
    parts: Sequence[Source], columns: Sequence[str], quasi_identifiers: Sequence[str]
) -> tuple[pa.Table, list[str]] | None:
    """The records of one CSV file read at once, on every core, as codes, if they may be.

    The fastest path, for a single local file of at most ``_CODED_BYTES`` when no
    memory limit is set and the records of its first ``_HEAD_BYTES`` say codes pay
    (:func:`_codes_pay`): :meth:`~anonaudit.sources.csv.CsvSource.read_coded`
    parses it with the very reader :meth:`~anonaudit.sources.base.Source.batches` uses
    (threaded), keeping each value as a 4-byte code, and the caller counts the records
    by their codes (:meth:`ClassTable.from_coded`). On the 10M-row file of
    ``benchmarks/bench_audit.py`` (510 MiB, 2.76M distinct combinations) that is about
    3 s against DuckDB's 4 s, in less memory (the codes take 240 MiB), and the classes
    then need no value hashed again. Larger files, a memory limit (which asks for
    spilling), several files, columns of many values or combinations that repeat:
    ``None``, and DuckDB aggregates (:func:`_scan_csv`). The file is hashed in a
    thread beside the read, as there.

    Returns
    -------
    records : pyarrow.Table
        The ``columns``, dictionary-coded, one row per record.
    suspects : list of str
        The QIs that look like identifiers in the first records.
    """
    from anonaudit.sources.csv import CsvSource

    if len(parts) != 1 or limits().memory_limit is not None:
        return None
    (part,) = parts
    size = part.info.size_bytes
    if not isinstance(part, CsvSource) or size is None or size > _CODED_BYTES:
        return None
    head = part.head(columns, _HEAD_BYTES)
    if head is None or not _codes_pay(head):
        return None
    with _hashed_beside(parts) as hashed:
        records = part.read_coded(columns)
    if records is None:
        return None
    hashed.result()  # the digest is kept by the part (fingerprint)
    sample = records.slice(0, _SAMPLE_ROWS)
    return records, _warn_identifiers(sample, quasi_identifiers, part.info.name)


def _scan_csv(
    parts: Sequence[Source], columns: Sequence[str], quasi_identifiers: Sequence[str]
) -> tuple[pa.Table, NDArray[Any], list[int], list[str]] | None:
    """The class table of CSV files read and aggregated by DuckDB alone, if it may.

    The fast path: when every part is a CSV file DuckDB reads as anonaudit's own reader
    does (:meth:`~anonaudit.sources.csv.CsvSource.duckdb_scan`), one query parses and
    groups them on every core. Several files are told apart by a second grouping set,
    which counts each file's records in the same scan. ``None`` (read the files with
    :meth:`~anonaudit.sources.base.Source.batches`, whose messages name the line) when a
    part does not qualify, DuckDB reports any error, or a file has no data rows.

    DuckDB reads the files itself (by ranges, on every core: no stream to hash on the
    way), so they are hashed (``hash_file``) in a read of their own, by one thread
    beside the scan, mostly from the page cache. On the 10M-row file of
    ``benchmarks/bench_audit.py`` (510 MiB) that is about 0.5 s of SHA-256, measured as
    +0.4 s of CPU time (5%) for the whole scan on a shared two-core machine.

    Returns
    -------
    keys : pyarrow.Table
        The distinct combinations (string columns ``columns``).
    counts : numpy.ndarray
        Records per combination.
    rows : list of int
        Records per part.
    suspects : list of str
        The QIs that look like identifiers in the first records.
    """
    import duckdb

    from anonaudit.sources.csv import CsvSource

    scans = []
    for part in parts:
        scan = part.duckdb_scan() if isinstance(part, CsvSource) else None
        if scan is None:
            return None
        positions = [part.columns.index(name) for name in columns]
        scans.append((part, scan, positions))
    names = [f"k{i}" for i in range(len(columns))]
    keys = ", ".join(names)

    def select(scan: str, positions: Sequence[int], index: int) -> str:
        picked = ", ".join(f"c{p} AS k{i}" for i, p in enumerate(positions))
        return f"SELECT {picked}, {index} AS part FROM {scan}"

    connection = connect()
    with _hashed_beside(parts) as hashed:
        try:
            first_part, first_scan, first_positions = scans[0]
            sample = connection.sql(
                f"SELECT * FROM ({select(first_scan, first_positions, 0)}) LIMIT {_SAMPLE_ROWS}"
            ).to_arrow_table()
            named = sample.rename_columns([*columns, "part"])
            suspects = _warn_identifiers(named, quasi_identifiers, first_part.info.name)
            if len(scans) == 1:
                scan = select(first_scan, first_positions, 0)
                query = f"SELECT {keys}, count(*) AS {_COUNT} FROM ({scan}) GROUP BY ALL"
            else:
                union = " UNION ALL ".join(
                    select(scan, positions, index)
                    for index, (_, scan, positions) in enumerate(scans)
                )
                query = (
                    f"SELECT {keys}, part, count(*) AS {_COUNT}, grouping(part) AS by_keys "
                    f"FROM ({union}) GROUP BY GROUPING SETS (({keys}), (part))"
                )
            result = connection.sql(query).to_arrow_table()
        except duckdb.Error:
            return None
        finally:
            connection.close()
    hashed.result()  # the digests are kept by the parts (fingerprint)
    if len(scans) == 1:
        rows = [int(pc.sum(result.column(_COUNT)).as_py() or 0)]
        table = result
    else:
        by_keys = pc.equal(result.column("by_keys"), 1)
        per_part = result.filter(pc.invert(by_keys))
        rows = [0] * len(scans)
        for index, count in zip(
            per_part.column("part").to_pylist(), per_part.column(_COUNT).to_pylist(), strict=True
        ):
            rows[int(index)] = int(count)
        table = result.filter(by_keys)
    if 0 in rows:  # a file without data rows: the reader says so
        return None
    counts = table.column(_COUNT).to_numpy().astype(np.int64, copy=False)
    scanned = [table.column(name) for name in names]
    del result, table
    # Each column copied out of DuckDB's buffers, one at a time: held, those buffers kept
    # the query's memory from going back (1.5 GB more after 5x10^7 classes under a
    # limit of 4GB), and copied all at once they doubled the table for a moment.
    arrays = []
    while scanned:
        arrays.append(scanned.pop(0).combine_chunks().cast(pa.string()))
    return pa.Table.from_arrays(arrays, names=list(columns)), counts, rows, suspects


def _warn_identifiers(
    sample: pa.RecordBatch | pa.Table, quasi_identifiers: Sequence[str], where: str
) -> list[str]:
    """Log a warning for each QI that looks like an identifier in the first records read.

    A QI whose distinct values exceed 90% of a sample of at least 1,000 records makes
    nearly every record a class of its own (and the class table as large as the data);
    this is said before the full scan, one line a column, on the ``anonaudit`` logger.
    Returns those columns.
    """
    total = sample.num_rows
    suspects: list[str] = []
    if total < _IDENTIFIER_SAMPLE:
        return suspects
    for name in quasi_identifiers:
        if name not in sample.schema.names:
            continue
        column = sample.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        distinct = pc.count_distinct(column, mode="all").as_py()
        if distinct > _IDENTIFIER_SHARE * total:
            suspects.append(name)
            _log.warning(
                "anonaudit: warning: quasi-identifier %r looks like an identifier "
                "(%s distinct values in the first %s records of %s): nearly every record "
                "will be a class of its own; generalize it or leave it out",
                name,
                f"{distinct:,}",
                f"{total:,}",
                where,
            )
    return suspects


@dataclass(frozen=True)
class _Numbers:
    """A column of numbers read beside the audited ones: survey weights or row counts."""

    option: str  #: the CLI option naming the column
    noun: str  #: what one value is
    row: str  #: what one row of the input is
    type: pa.DataType  #: what the text becomes
    rule: str  #: the values allowed, said to the user
    column: str  #: the name it takes in the stream (no audited column has it)


_WEIGHTS = _Numbers(
    "--weights", "weight", "record", pa.float64(), "non-negative finite numbers", _WEIGHT
)
_COUNTS = _Numbers("--count", "count", "row", pa.int64(), "whole numbers, 0 or more", ROW_COUNT)


class _Totals:
    """The running sums of a ``--count`` or ``--weights`` column, refused past :data:`MAX_TOTAL`.

    Each value was checked alone (:func:`_with_numbers`); their sum may still not fit:
    counts of 2^62 overflow ``int64`` three at a time, weights of 1e308 sum to infinity.
    Summed as floats first (which cannot overflow below 1e308 per value), then exactly.
    """

    def __init__(self) -> None:
        self.sums: dict[str, float | int] = {}

    def add(self, values: pa.Array | pa.ChunkedArray, kind: _Numbers, name: str, where: str) -> int:
        """Add ``values`` (the column ``name`` of the file ``where``); their sum, rounded down.

        Raises
        ------
        InputError
            The sum so far exceeds :data:`MAX_TOTAL` or is not finite.
        """
        approximate = float(pc.sum(pc.cast(values, pa.float64(), safe=False)).as_py() or 0.0)
        before = self.sums.get(name, 0)
        exact: float | int = approximate
        fits = np.isfinite(approximate) and before + approximate <= 2 * MAX_TOTAL
        if fits and pa.types.is_integer(values.type):  # int64 then holds the exact sum
            exact = int(pc.sum(values).as_py() or 0)
        if not np.isfinite(exact) or before + exact > MAX_TOTAL:
            raise InputError(
                f"{where}: the {kind.noun}s of column {name!r} ({kind.option}) add up to more "
                f"than 2^53 ({MAX_TOTAL:,}), more than can be summed exactly; check that "
                f"{name!r} is the {kind.noun} column, or scale its values down"
            )
        self.sums[name] = before + exact
        return int(exact)


def numbered_batches(
    part: Source,
    columns: Sequence[str],
    *,
    weights: str | None = None,
    count: str | None = None,
    integers: Sequence[str] = (),
) -> Iterator[pa.RecordBatch]:
    """The batches of ``part``'s ``columns``, with its weight or count column as numbers.

    The ``weights`` column (``float64``) becomes the stream's weight column, the
    ``count`` column (``int64``, records per row) :data:`ROW_COUNT`; each value is
    checked, and a bad one is an :class:`~anonaudit.errors.InputError` naming the
    part, the column, the row and the value. ``integers``: the columns a Parquet part
    may give as whole numbers (:func:`_integers`).
    """
    numbers = _numbers(weights, count)
    lines = 0
    wanted = [*columns, *numbers]
    parquet = _parquet(part) if integers else None
    given = part.batches(wanted) if parquet is None else parquet.batches(wanted, integers=integers)
    for batch in given:
        read = batch.num_rows
        for name, kind in numbers.items():
            batch = _with_numbers(batch, name, kind, part.info.name, lines)
        lines += read
        yield batch


def _numbers(weights: str | None, count: str | None) -> dict[str, _Numbers]:
    """The number columns read beside the audited ones, each with what it holds."""
    return {name: kind for name, kind in ((weights, _WEIGHTS), (count, _COUNTS)) if name}


def _with_numbers(
    batch: pa.RecordBatch, name: str, numbers: _Numbers, where: str, start: int
) -> pa.RecordBatch:
    """``batch`` with its text column ``name`` checked and turned into ``numbers.type``.

    ``where`` names the source and ``start`` counts the rows read from it before this
    batch, for the error message. The column is renamed ``numbers.column``.
    """
    text = batch.column(name)
    if pa.types.is_dictionary(text.type):
        text = text.dictionary_decode()
    noun = numbers.noun
    if text.null_count:
        row = pc.index(pc.is_null(text), True).as_py()
        raise InputError(
            f"{where}: {noun} column {name!r} is empty in {numbers.row} {start + row + 1:,}; "
            f"every {numbers.row} needs a {noun} (or drop {numbers.option})"
        )
    rule = f"{noun}s must be {numbers.rule}"
    try:
        values = pc.cast(pc.utf8_trim_whitespace(text), pa.float64())
    except pa.ArrowInvalid:
        bad = next(v for v in pc.unique(text).to_pylist() if not _is_number(v))
        row = pc.index(text, bad).as_py()
        raise InputError(
            f"{where}: {noun} column {name!r} holds {bad!r} in {numbers.row} "
            f"{start + row + 1:,}, not a number; {rule}"
        ) from None
    bad_mask = pc.or_(pc.invert(pc.is_finite(values)), pc.less(values, 0.0))
    if pa.types.is_integer(numbers.type):  # whole numbers, also written "3.0"
        bad_mask = pc.or_(bad_mask, pc.not_equal(values, pc.floor(values)))
        bad_mask = pc.or_(bad_mask, pc.greater(values, float(2**62)))
    if pc.any(bad_mask).as_py():
        row = pc.index(bad_mask, True).as_py()
        raise InputError(
            f"{where}: {noun} column {name!r} holds {text[row].as_py()!r} in {numbers.row} "
            f"{start + row + 1:,}; {rule}"
        )
    if pa.types.is_integer(numbers.type):  # exactly: floats are exact only up to 2^53
        try:
            values = pc.cast(pc.utf8_trim_whitespace(text), numbers.type)
        except pa.ArrowInvalid:
            values = pc.cast(values, numbers.type)
    arrays = [batch.column(i) for i, field in enumerate(batch.schema) if field.name != name]
    names = [field.name for field in batch.schema if field.name != name]
    return pa.RecordBatch.from_arrays([*arrays, values], names=[*names, numbers.column])


def _is_number(text: str) -> bool:
    """Whether Arrow reads ``text`` (trimmed) as a ``float64``."""
    try:
        pc.cast(pa.array([text.strip()]), pa.float64())
    except pa.ArrowInvalid:
        return False
    return True


def check_columns(
    sources: Sequence[Source], quasi_identifiers: Sequence[str], sensitive: Sequence[str]
) -> list[str]:
    """The audited columns, after checking that every source has them all."""
    if not sources:
        raise InputError("no input given; name at least one file")
    columns = list(quasi_identifiers) + list(sensitive)
    for source in sources:
        require_columns(source, columns)
    return columns


def total_size(parts: Sequence[Source]) -> int | None:
    """The bytes of ``parts`` in storage; ``None`` if any size is unknown (a frame)."""
    sizes = [part.info.size_bytes for part in parts]
    return None if None in sizes else sum(size or 0 for size in sizes)


def provenance(
    sources: Sequence[Source],
    part_rows: Sequence[int],
    columns: Sequence[str] = (),
    digests: Sequence[str | None] | None = None,
) -> tuple[SourceStats, ...]:
    """Where the records came from, given the records each part of each source gave.

    Parameters
    ----------
    sources : sequence of Source
        The sources, in order.
    part_rows : sequence of int
        Records per part, the parts of all sources in order (:func:`parts_of`).
    columns : sequence of str
        The columns read: a dataset's file lacking some has them in its
        :attr:`FileStats.null_columns`.
    digests : sequence of str or None, optional
        Each part's SHA-256 (:attr:`SourceStats.sha256`), in the order of
        ``part_rows``, when the parts were hashed elsewhere (a Dask worker); by default
        what each part recorded (:func:`~anonaudit.sources.base.fingerprint`). Nothing
        is read here.

    Raises
    ------
    MalformedFileError
        A dataset whose files (after any filter) hold no record.
    """
    stats, start = [], 0
    for source in sources:
        info, parts = source.info, parts_of(source)
        counts = part_rows[start : start + len(parts)]
        hashes = (
            [fingerprint(part) for part in parts]
            if digests is None
            else digests[start : start + len(parts)]
        )
        start += len(parts)
        rows = sum(counts)
        if not isinstance(source, MultiPartSource):
            stats.append(
                SourceStats(info.name, info.format, rows, info.size_bytes, sha256=hashes[0])
            )
            continue
        if rows == 0:
            selection = f" match --filter {info.filter}" if info.filter else ""
            raise MalformedFileError(f"{info.name}: no records{selection}; nothing to audit")
        files = tuple(
            FileStats(
                part.info.name,
                part.info.format,
                count,
                part.info.size_bytes,
                sha256=digest,
                null_columns=absent_columns(part, columns),
            )
            for part, count, digest in zip(parts, counts, hashes, strict=True)
        )
        stats.append(
            SourceStats(
                info.name, info.format, rows, info.size_bytes, files, info.filter, info.version
            )
        )
    return tuple(stats)


def group_counts(
    batches: Iterable[pa.RecordBatch],
    columns: Sequence[str],
    *,
    weight: str | None = None,
    count: str | None = None,
) -> tuple[pa.Table, NDArray[Any], NDArray[Any] | None]:
    """Count the records of every distinct combination of ``columns`` in ``batches``.

    Parameters
    ----------
    batches : iterable of pyarrow.RecordBatch
        Text batches (:class:`~anonaudit.sources.base.Source`) holding ``columns``; a
        column may be a string array in one batch and a dictionary in another, or whole
        numbers in every batch (a Parquet file's: :func:`_integers`), counted as such
        and returned as their text.
    columns : sequence of str
        The grouping columns.
    weight : str, optional
        A ``float64`` column of the batches to sum per combination as well.
    count : str, optional
        An ``int64`` column of the records each row stands for, summed per
        combination instead of counting rows.

    Returns
    -------
    keys : pyarrow.Table
        One row per distinct combination, plain string columns.
    counts : numpy.ndarray
        Records per row of ``keys`` (``int64``).
    sums : numpy.ndarray or None
        The sum of ``weight`` per row of ``keys`` (``float64``); ``None`` without it.

    Raises
    ------
    AnonauditError
        The error a source raised while streaming (DuckDB sees only that the stream
        failed); any other exception becomes an :class:`InputError`.
    """
    import duckdb

    failure: list[BaseException] = []
    iterator = iter(batches)

    def guarded() -> Iterator[pa.RecordBatch]:
        try:
            yield from iterator
        except BaseException as exc:  # re-raised below, DuckDB only sees a stream error
            failure.append(exc)
            raise

    stream = guarded()
    try:
        first = next(stream, None)
    except Exception as exc:
        raise _unwrap(exc) from None
    coding = _Coding(first, columns)
    batches_in = itertools.chain([first] if first else [], stream)
    schema = coding.schema
    aggregates = [f"count(*) AS {_COUNT}"]
    if count is not None:
        aggregates = [f"sum({_quote(count)})::BIGINT AS {_COUNT}"]
    carried = [(name, t) for name, t in ((count, pa.int64()), (weight, pa.float64())) if name]
    if weight is not None:
        aggregates.append(f"sum({_quote(weight)}) AS {_quote(weight)}")
    for name, type in carried:
        schema = schema.append(pa.field(name, type))

    def converted() -> Iterator[pa.RecordBatch]:
        for batch in batches_in:
            coded = coding.convert(batch)
            for name, _ in carried:
                coded = coded.append_column(schema.field(name), batch.column(name))
            yield coded

    query = (
        f"SELECT {', '.join(coding.schema.names)}, {', '.join(aggregates)} FROM reader GROUP BY ALL"
    )
    reader = pa.RecordBatchReader.from_batches(schema, converted())
    connection = connect()
    try:
        connection.register("reader", reader)
        result = connection.sql(query).to_arrow_table()
    except duckdb.Error:
        if failure:
            raise _unwrap(failure[0]) from None
        raise
    finally:
        connection.close()
    counts = result.column(_COUNT).to_numpy().astype(np.int64, copy=False)
    sums = None
    if weight is not None:
        sums = result.column(weight).to_numpy().astype(np.float64, copy=False)
    return coding.decode(result), counts, sums


class _Codes:
    """Integer codes for one column's values, shared by every batch of a stream.

    A batch's dictionary is mapped to the codes once (Parquet repeats one dictionary for
    all the batches of a row group), then its indices are translated with one ``take``.
    Null stays null.
    """

    def __init__(self) -> None:
        self._code: dict[str, int] = {}
        self._dictionary: pa.Array | None = None
        self._mapping = pa.array([], pa.int32())

    def encode(self, array: pa.Array) -> pa.Array:
        if not pa.types.is_dictionary(array.type):
            array = pc.dictionary_encode(array)
        dictionary = array.dictionary
        seen = self._dictionary
        if seen is None or not (dictionary is seen or dictionary.equals(seen)):
            code = self._code
            self._mapping = pa.array(
                [
                    None if v is None else code.setdefault(v, len(code))
                    for v in dictionary.to_pylist()
                ],
                pa.int32(),
            )
            self._dictionary = dictionary
        return self._mapping.take(array.indices)

    def decode(self, codes: pa.Array) -> pa.Array:
        return pa.array(list(self._code), pa.string()).take(codes)


class _Coding:
    """How a stream's columns reach DuckDB: as integer codes, as strings, or (whole
    numbers a Parquet file gave as such: :func:`_integers`) as ``int64``.

    A column that arrives as a dictionary much smaller than its batch (Parquet text, a
    partition key, a typed column) is grouped by integer codes: DuckDB hashes int32s
    faster than strings (``benchmarks/bench_lake.py``), and only the distinct values are
    kept as text. Other columns (CSV text, high-cardinality values) go in as strings.
    The choice is made on the first batch; later batches are converted to it. DuckDB
    sees the columns by position (``c0``, ``c1``, ...): its names ignore case, so
    columns ``Age`` and ``age`` would be one.
    """

    def __init__(self, first: pa.RecordBatch | None, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.codes: dict[str, _Codes] = {}
        self.integers: set[str] = set()  # whole numbers, grouped as such (_integers)
        if first is not None:
            for name in columns:
                array = first.column(name)
                if whole_numbers(array.type):
                    self.integers.add(name)
                elif pa.types.is_dictionary(array.type) and (
                    len(array.dictionary) <= max(_SMALL_DICTIONARY, len(array) // 8)
                ):
                    self.codes[name] = _Codes()
        self.schema = pa.schema(
            [(f"c{position}", self._type(name)) for position, name in enumerate(columns)]
        )

    def _type(self, name: str) -> pa.DataType:
        if name in self.integers:
            return pa.int64()
        return pa.int32() if name in self.codes else pa.string()

    def convert(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        arrays = []
        for name in self.columns:
            array = batch.column(name)
            if name in self.integers:
                array = array.cast(pa.int64())  # the stream's one type (int8 to uint32 fit)
            elif name in self.codes:
                array = self.codes[name].encode(array)
            elif pa.types.is_dictionary(array.type):
                array = array.dictionary_decode()
            arrays.append(array)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def decode(self, result: pa.Table) -> pa.Table:
        """DuckDB's result, codes turned back into their text."""
        arrays = []
        for position, name in enumerate(self.columns):
            column = result.column(position).combine_chunks()
            if name in self.codes:
                column = self.codes[name].decode(column)
            elif name in self.integers:  # their text, as the reader would have made it
                column = column.cast(pa.string())
            arrays.append(column)
        return pa.Table.from_arrays(arrays, names=self.columns)


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection that prints nothing.

    DuckDB draws its own progress bar on stdout for queries over two seconds, which
    would corrupt ``--json -``; anonaudit reports progress itself, on stderr.
    """
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    # Aggregates need not keep the input order; without it DuckDB spills more freely.
    connection.execute("SET preserve_insertion_order = false")
    memory_limit, temp_dir = limits().memory_limit, limits().temp_dir
    if memory_limit is not None:
        try:
            connection.execute(f"SET memory_limit = {_literal(memory_limit)}")
        except duckdb.Error as exc:
            connection.close()
            raise ParameterError(
                f"--memory-limit {memory_limit}: {str(exc).splitlines()[0]}; "
                "give a size such as 4GB or 500MB"
            ) from None
    if temp_dir is not None:
        connection.execute(f"SET temp_directory = {_literal(temp_dir)}")
    return connection


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _unwrap(exc: BaseException) -> BaseException:
    return exc if isinstance(exc, AnonauditError) else InputError(f"cannot read input: {exc}")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
