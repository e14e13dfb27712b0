"""The local streaming engine: record batches -> DuckDB ``GROUP BY`` -> class table.

Why DuckDB (``benchmarks/bench_audit.py``, 10M rows, 2.76M distinct (QI, SA)
combinations, 2 cores): DuckDB's hash aggregate over pyarrow's streaming CSV batches
builds the class table in 3.4-3.8 s, as fast as DuckDB's own CSV scan (3.2-4.0 s).
pyarrow's ``read_csv`` + ``Table.group_by`` on dictionary strings is about as fast
(3.4-3.6 s) but materializes the whole file first, so its memory grows with the rows;
DuckDB pulls one batch at a time, holding one batch plus the hash table of distinct
combinations, and spills that table to disk if it outgrows memory.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from typing import TextIO

import duckdb
import numpy as np
import pyarrow as pa

from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.errors import AnonauditError, InputError
from anonaudit.sources.base import Source, require_columns

__all__ = ["Progress", "build_class_table"]

_COUNT = "__anonaudit_count__"


class Progress:
    """Progress lines on a stream for long scans, at most one per ``interval`` seconds.

    Parameters
    ----------
    stream : file, optional
        Where to write; ``None`` writes nothing.
    interval : float
        Seconds between lines.
    """

    def __init__(self, stream: TextIO | None = sys.stderr, interval: float = 2.0) -> None:
        self.stream = stream
        self.interval = interval
        self._last = time.monotonic()
        self._spoken: set[str] = set()

    def update(self, name: str, rows: int, *, final: bool = False) -> None:
        """Report that ``rows`` records of ``name`` were read.

        Short scans stay silent: a line appears once a scan has run ``interval``
        seconds, and the final line only for a scan that printed before.
        """
        now = time.monotonic()
        if self.stream is None:
            return
        if final:
            if name not in self._spoken:
                return
        elif now - self._last < self.interval:
            return
        self._last = now
        self._spoken.add(name)
        state = "done" if final else "reading"
        print(f"anonaudit: {name}: {state}, {rows:,} rows", file=self.stream, flush=True)


def build_class_table(
    sources: Sequence[Source],
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    progress: Progress | None = None,
) -> ClassTable:
    """Aggregate ``sources`` into one class table in a single streaming pass each.

    Parameters
    ----------
    sources : sequence of Source
        Files or frames; every one must have all the named columns.
    quasi_identifiers, sensitive : sequence of str
        Column roles.
    progress : Progress, optional
        Where to report rows read.

    Returns
    -------
    ClassTable
        The merged table of all sources.
    """
    if not sources:
        raise InputError("no input given; name at least one file")
    columns = list(quasi_identifiers) + list(sensitive)
    for source in sources:
        require_columns(source, columns)
    partials = [
        _aggregate(source, columns, quasi_identifiers, sensitive, progress) for source in sources
    ]
    return partials[0] if len(partials) == 1 else partials[0].merge(*partials[1:])


def _aggregate(
    source: Source,
    columns: list[str],
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    progress: Progress | None,
) -> ClassTable:
    failure: list[BaseException] = []
    rows = [0]
    name = source.info.name

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            for batch in source.batches(columns):
                rows[0] += batch.num_rows
                if progress is not None:
                    progress.update(name, rows[0])
                yield batch
        except BaseException as exc:  # re-raised below, DuckDB only sees a stream error
            failure.append(exc)
            raise

    schema = pa.schema([(column, pa.string()) for column in columns])
    reader = pa.RecordBatchReader.from_batches(schema, batches())
    select = ", ".join(_quote(column) for column in columns)
    query = f"SELECT {select}, count(*) AS {_COUNT} FROM reader GROUP BY ALL"
    connection = duckdb.connect()
    try:
        connection.register("reader", reader)
        result = connection.sql(query).to_arrow_table()
    except duckdb.Error:
        if failure:
            raise _unwrap(failure[0]) from None
        raise
    finally:
        connection.close()
    if progress is not None:
        progress.update(name, rows[0], final=True)
    counts = result.column(_COUNT).to_numpy().astype(np.int64, copy=False)
    stats = SourceStats(name, source.info.format, rows[0], source.info.size_bytes)
    return ClassTable(
        tuple(quasi_identifiers), tuple(sensitive), result.select(columns), counts, (stats,)
    )


def _unwrap(exc: BaseException) -> BaseException:
    return exc if isinstance(exc, AnonauditError) else InputError(f"cannot read input: {exc}")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
