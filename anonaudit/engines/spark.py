"""The Spark engine: Spark's own ``GROUP BY`` builds the class table on the cluster.

``pip install 'anonaudit[spark]'`` (and a Java runtime). Two ways in:

* :func:`from_spark`: a ``pyspark.sql.DataFrame`` passed to :func:`anonaudit.load` or
  :func:`anonaudit.audit`;
* :func:`build_class_table` (``--engine spark``): local CSV and Parquet files, and
  directories of them, read by Spark itself (``spark.read.csv`` / ``spark.read.parquet``).

Either way Spark aggregates each partition into a partial class table and merges the
partials with its own shuffle (a hash ``GROUP BY``): the records never leave the
cluster; only the merged class table, one row per distinct (QI, SA) combination, is
collected to the driver, as Arrow (``DataFrame.toArrow``, Spark 4) where available.
Files read alike (same format, CSV options and partition values) are read by one
reader, a single scan: Spark plans that far better than a union of per-file readers
(``benchmarks/bench_lake.py``: 17 s against 30 s warm, 20 files). The records each file
gave, which a report states as with the local engine, come from a Parquet file's footer,
and for CSV files from a count per ``input_file_name()``. Spark reads the files itself,
so the driver hashes each one (their SHA-256, :attr:`SourceStats.sha256`) in a read of
its own, in a thread while Spark runs the scan.

Values are cast to text by Spark (``CAST(x AS STRING)``), which writes integers, dates
and strings as a file audit does but floating-point numbers with a trailing ``.0``
(``30.0``, where pyarrow writes ``30``): cast such columns in Spark first if they must
agree with a file audit. CSV files are read with every column as text, quoted values
spanning lines allowed; the empty field is null unless ``na_values`` leaves it out, and
every ``na_values`` text is null, quoted or not (the local engine keeps a quoted
``"NA"`` as a value).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.engines.local import check_columns, provenance, total_size
from anonaudit.errors import ColumnError, EngineError, MissingDependencyError, ParameterError
from anonaudit.progress import Progress
from anonaudit.sources.base import Source, fingerprint_now, parts_of
from anonaudit.sources.csv import CsvSource
from anonaudit.sources.frames import is_spark_frame

__all__ = ["build_class_table", "from_spark", "is_spark_frame", "spark_session"]

_COUNT = "__anonaudit_count__"
# A null marker no cell holds: Spark's CSV reader then keeps a quoted "" as a value.
_NO_NULL = "\x00anonaudit-no-null\x00"


def from_spark(
    frame: Any, *, quasi_identifiers: Sequence[str], sensitive: Sequence[str] = ()
) -> ClassTable:
    """The class table of a Spark DataFrame, aggregated by Spark.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The data.
    quasi_identifiers, sensitive : sequence of str
        Column roles.

    Returns
    -------
    ClassTable
        With one source named ``<pyspark.sql.DataFrame>`` of format ``"spark"``.
    """
    columns = [*quasi_identifiers, *sensitive]
    present = list(frame.columns)
    for name in columns:
        if name not in present:
            raise ColumnError(
                f"<pyspark.sql.DataFrame>: no column named {name!r}; "
                f"the columns are: {', '.join(present)}"
            )
    text = frame.selectExpr(
        *[f"CAST({_quote(name)} AS STRING) AS {_quote(f'c{i}')}" for i, name in enumerate(columns)]
    )
    names = [f"c{i}" for i in range(len(columns))]
    counted = text.groupBy(*names).agg({"*": "count"}).toDF(*names, _COUNT)
    result = _collect(counted)
    counts = _counts(result)
    stats = SourceStats("<pyspark.sql.DataFrame>", "spark", int(counts.sum()))
    return _table(result, quasi_identifiers, sensitive, counts, (stats,))


def build_class_table(
    sources: Sequence[Source],
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    session: Any = None,
    progress: Progress | None = None,
) -> ClassTable:
    """Aggregate ``sources`` (local CSV and Parquet files) into one class table with Spark.

    Parameters
    ----------
    sources : sequence of Source
        Opened files and datasets (:func:`anonaudit.engines.records.open_inputs`): Spark reads
        their files again itself, so they must be local CSV or Parquet files, or
        unfiltered directories of them.
    quasi_identifiers, sensitive : sequence of str
        Column roles.
    session : pyspark.sql.SparkSession or str, optional
        A running session, or a master URL (``spark://host:7077``, ``local[4]``) for
        :func:`spark_session`; ``None`` uses the active session or starts a local one.
    progress : Progress, optional
        Told the parts and bytes when the scan starts and ends (Spark reports its own
        stages).

    Returns
    -------
    ClassTable
        The same table the local engine builds, row order aside.

    Raises
    ------
    ParameterError
        A source Spark cannot read here (a frame, a pipe, object storage, a filter).
    EngineError
        Spark failed (its first message line is given).
    """
    columns = check_columns(sources, quasi_identifiers, sensitive)
    for source in sources:
        if source.info.format == "delta" or source.info.filter:
            raise ParameterError(
                f"{source.info.name}: --engine spark reads local CSV and Parquet files and "
                "unfiltered directories of them; use the local or Dask engine for this input"
            )
    flat = [part for source in sources for part in parts_of(source)]
    if progress is not None:
        progress.start(parts=len(flat), size_bytes=total_size(flat))
    spark = session if session is not None and not isinstance(session, str) else None
    spark = spark or spark_session(session)
    names = [f"c{i}" for i in range(len(columns))]
    # Files read alike (same format, CSV options and partition values) are read by one
    # reader: Spark plans one scan of many files much better than a union of many.
    groups: dict[tuple[Any, ...], list[tuple[int, _File]]] = {}
    for index, part in enumerate(flat):
        file = _locate(part)
        groups.setdefault(file.group, []).append((index, file))
    frames = {
        key: _read(spark, [file for _, file in files], columns).toDF(*names)
        for key, files in groups.items()
    }
    union = None
    for frame in frames.values():
        union = frame if union is None else union.unionAll(frame)
    assert union is not None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="anonaudit-sha256") as hashing:
        hashed = hashing.submit(lambda: [fingerprint_now(part) for part in flat])
        classes = _collect(union.groupBy(*names).count().toDF(*names, _COUNT))
    hashed.result()  # each part keeps its digest (fingerprint)
    counts = _counts(classes)
    rows = [0] * len(flat)
    if len(flat) == 1:
        rows[0] = int(counts.sum())
    else:  # Parquet files say how many records they hold; CSV files are counted
        for key, files in groups.items():
            for index, file in files:
                if file.csv is None:
                    rows[index] = pq.read_metadata(file.path).num_rows
            if files[0][1].csv is not None:
                from pyspark.sql import functions

                by_path = {Path(file.path).resolve(): index for index, file in files}
                counted = _collect(
                    frames[key].groupBy(functions.input_file_name()).count().toDF("f", _COUNT)
                )
                for uri, count in zip(
                    counted.column("f").to_pylist(), counted.column(_COUNT).to_pylist(), strict=True
                ):
                    rows[by_path[_uri_path(uri)]] = int(count)
    if progress is not None:
        for part in flat:
            progress.part_done(part.info.size_bytes)
        progress.advance(int(counts.sum()))
        progress.finish()
    stats = provenance(sources, rows, columns)
    return _table(classes, quasi_identifiers, sensitive, counts, stats)


def spark_session(master: str | None = None) -> Any:
    """The active Spark session, or a new one (``master`` or ``local[*]``) that prints little.

    Raises
    ------
    MissingDependencyError
        pyspark is not installed.
    EngineError
        Spark did not start (no Java runtime, for one).
    """
    with _quiet():
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise MissingDependencyError(
                "--engine spark needs pyspark and a Java runtime: pip install 'anonaudit[spark]'"
            ) from None
        active = SparkSession.getActiveSession()
        if active is not None and master is None:
            return active
        builder = SparkSession.builder.appName("anonaudit").master(master or "local[*]")
        try:
            return (
                builder.config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
                .getOrCreate()
            )
        except Exception as exc:
            raise EngineError(f"cannot start Spark: {_first_line(exc)}") from None


@dataclass(frozen=True)
class _File:
    """Where Spark finds a part, and how to read it."""

    path: str
    csv: CsvSource | None
    literals: tuple[tuple[str, Any], ...]

    @property
    def group(self) -> tuple[Any, ...]:
        """Files with equal groups are read by one reader."""
        options = None if self.csv is None else (self.csv.sep, self.csv.options)
        return (options, self.literals)


def _locate(part: Source) -> _File:
    """The local file behind ``part``, which Spark reads itself."""
    from anonaudit.sources.dataset import FragmentSource
    from anonaudit.sources.parquet import ParquetSource

    # Private state of the sources, read here only: where Spark finds the same file.
    if isinstance(part, CsvSource) and part._pipe is None and _is_local(part._filesystem):
        return _File(str(Path(part.path).resolve()), part, ())
    if isinstance(part, ParquetSource):
        return _File(str(Path(part.path).resolve()), None, ())
    if isinstance(part, FragmentSource) and part._filter is None and _is_local(part._filesystem):
        literals = tuple(sorted(part._partition.items()))
        return _File(str(Path(part._path).resolve()), part._csv, literals)
    raise ParameterError(
        f"{part.info.name}: --engine spark reads local CSV and Parquet files and "
        "unfiltered directories of them; use the local or Dask engine for this input"
    )


def _read(spark: Any, files: Sequence[_File], columns: Sequence[str]) -> Any:
    """One Spark DataFrame of ``files`` (read alike), ``columns`` as text."""
    first = files[0]
    csv, literals = first.csv, dict(first.literals)
    paths = [file.path for file in files]
    if csv is None:
        frame = spark.read.parquet(*paths)
    else:
        frame = spark.read.csv(
            paths,
            header=True,
            sep=csv.sep,
            encoding=csv.options.encoding,
            quote='"',
            escape='"',
            multiLine=True,
            mode="FAILFAST",
            inferSchema=False,
            nullValue=_NO_NULL,
            enforceSchema=False,
        )
    expressions = []
    for name in columns:
        if name in literals and name not in frame.columns:
            value = literals[name]
            literal = "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"
            expressions.append(f"CAST({literal} AS STRING)")
            continue
        text = f"CAST({_quote(name)} AS STRING)"
        if csv is not None:
            na = csv.options.na_values
            if "" not in na:  # the empty field is a value: Spark reads it as null
                text = f"coalesce({text}, '')"
            others = ", ".join("'" + v.replace("'", "''") + "'" for v in na if v)
            if others:
                text = f"CASE WHEN {text} IN ({others}) THEN NULL ELSE {text} END"
        expressions.append(text)
    return frame.selectExpr(*expressions)


def _uri_path(uri: str) -> Path:
    """The local path of a ``file:`` URI (Spark's ``input_file_name``)."""
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path)).resolve()


def _collect(frame: Any) -> pa.Table:
    """The (small) aggregated ``frame`` on the driver, as Arrow."""
    try:
        with _quiet():
            if hasattr(frame, "toArrow"):  # Spark 4
                return frame.toArrow()
            return pa.Table.from_pandas(frame.toPandas(), preserve_index=False)
    except Exception as exc:
        if type(exc).__module__.startswith(("pyspark", "py4j")):
            raise EngineError(f"Spark failed: {_first_line(exc)}") from None
        raise


def _counts(result: pa.Table) -> NDArray[Any]:
    return np.asarray(result.column(_COUNT).to_numpy(zero_copy_only=False), dtype=np.int64)


def _table(
    result: pa.Table,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    counts: NDArray[Any],
    stats: tuple[SourceStats, ...],
) -> ClassTable:
    """Spark's grouped result (unique combinations, ``c0..cn``) as a class table."""
    columns = [*quasi_identifiers, *sensitive]
    arrays = [
        result.column(f"c{i}").cast(pa.string()).combine_chunks() for i in range(len(columns))
    ]
    keys = pa.Table.from_arrays(arrays, names=columns)
    return ClassTable(tuple(quasi_identifiers), tuple(sensitive), keys, counts, stats)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence pyspark's warning that it does not fully support pandas 3 (not used here)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        yield


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _is_local(filesystem: pafs.FileSystem) -> bool:
    return isinstance(filesystem, pafs.LocalFileSystem)
