"""The parts of a dataset, each file a source of its own, and the dataset they make.

A :class:`FragmentSource` reads one file of a dataset (Parquet through
:mod:`pyarrow.dataset`, CSV through its :class:`~anonaudit.sources.csv.CsvSource`), with
its partition keys and the rows ``--filter`` keeps; a :class:`DatasetSource` is the
files read as one. :func:`dataset_source` splits a :mod:`pyarrow.dataset` into them,
for the directories, globs and URLs of :mod:`anonaudit.sources.dataset` and the Delta
tables of :mod:`anonaudit.sources.delta` alike.

Each part is picklable, so the Dask engine reads the parts on its workers from the same
storage.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from anonaudit.classtable import to_text_batch
from anonaudit.errors import MalformedFileError, SourceNotFoundError
from anonaudit.sources.csv import CsvSource
from anonaudit.sources.filters import Filter, parse_filter, to_expression
from anonaudit.sources.parquet import check_decoded, check_row_groups, damaged_pages
from anonaudit.sources.protocol import MissingColumns, SourceInfo, local_sha256, require_flat
from anonaudit.sources.storage import Location, storage_error

if TYPE_CHECKING:
    import pyarrow.dataset as ds

__all__ = [
    "DatasetSource",
    "FragmentSource",
    "dataset_source",
    "dictionary_format",
    "first_line",
    "no_match",
]

_BATCH_ROWS = 1 << 17
_TEXT = pa.dictionary(pa.int32(), pa.string())


class FragmentSource:
    """One file of a dataset, read on its own (by this process or by a Dask worker).

    Its ``columns`` are its file's own and the partition keys: a dataset's files may
    differ (:func:`~anonaudit.sources.protocol.require_columns`). A column it lacks is read
    as null.

    A local file is fingerprinted (:attr:`sha256`): a CSV file as its reader streams
    it, a Parquet file (read by ranges, and only the columns and row groups asked for)
    by :meth:`hash_file`, in a read of its own. A file in object storage is not hashed.

    Parameters
    ----------
    file_format : pyarrow.dataset.FileFormat
        How to read it.
    filesystem : pyarrow.fs.FileSystem
        Where it lives.
    path : str
        Its path inside ``filesystem``.
    partition : mapping of str to scalar
        The values of the partition columns for this file (``None``: a null partition).
    schema : pyarrow.Schema
        The dataset's schema (partition columns included).
    filter : pyarrow.compute.Expression or None
        Rows to keep.
    info : SourceInfo
        Provenance (format and size).
    physical : pyarrow.Schema, optional
        The file's own schema (Parquet); ``None`` when it is ``schema`` (Delta).
    csv : CsvSource, optional
        For a CSV file: its reader, which the part reads it with.
    keys : sequence of str
        The dataset's partition keys.
    filter_columns : sequence of str
        The columns ``filter`` compares.
    """

    def __init__(
        self,
        *,
        file_format: ds.FileFormat,
        filesystem: pafs.FileSystem,
        path: str,
        partition: Mapping[str, Any],
        schema: pa.Schema,
        filter: pc.Expression | None,
        info: SourceInfo,
        physical: pa.Schema | None = None,
        csv: CsvSource | None = None,
        keys: Sequence[str] = (),
        filter_columns: Sequence[str] = (),
    ) -> None:
        self._format = file_format
        self._filesystem = filesystem
        self._path = path
        self._partition = dict(partition)
        self._schema = schema
        self._filter = filter
        self._physical = physical
        self._csv = csv
        self._filter_columns = tuple(filter_columns)
        self.info = info
        self._sha256: str | None = None
        own = csv.columns if csv is not None else physical.names if physical is not None else None
        self.columns = (
            tuple(schema.names) if own is None else (*own, *(key for key in keys if key not in own))
        )

    @property
    def sha256(self) -> str | None:
        """The SHA-256 of the file's bytes (lowercase hex) recorded by a read, or ``None``.

        A CSV file's, once a read came to its end; a Parquet file's, once
        :meth:`hash_file` took it; never a file's in object storage.
        """
        return self._csv.sha256 if self._csv is not None else self._sha256

    def hash_file(self) -> str | None:
        """:attr:`sha256`, hashing a local file now, in a read of its own, if no read has.

        ``None`` for a file in object storage or one that can no longer be read.
        """
        if self._csv is not None:
            return self._csv.hash_file()
        if self._sha256 is None and isinstance(self._filesystem, pafs.LocalFileSystem):
            self._sha256 = local_sha256(self._path)
        return self._sha256

    def batches(
        self, columns: Sequence[str], *, integers: Collection[str] = ()
    ) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` of this file's selected rows as text batches; a Parquet
        file's columns named in ``integers`` that hold whole numbers stay as they are
        (:func:`~anonaudit.classtable.to_text_batch`)."""
        import pyarrow.dataset as ds

        require_flat(self._schema, columns, self.info.name)
        if self._csv is not None:
            yield from self._csv_batches(columns)
            return
        schema = self._read_schema(columns)
        expression: pc.Expression | None = None
        for key, value in self._partition.items():
            term = pc.field(key).is_null() if value is None else pc.field(key) == value
            expression = term if expression is None else expression & term
        try:
            fragment = self._format.make_fragment(
                self._path, self._filesystem, partition_expression=expression
            )
            if isinstance(fragment, ds.ParquetFileFragment):
                check_row_groups(fragment.metadata, columns, self.info.name)
            for batch in fragment.to_batches(
                schema=schema,
                columns=list(columns),
                filter=self._filter,
                batch_size=_BATCH_ROWS,
            ):
                check_decoded(batch, columns, self.info.name)
                yield to_text_batch(batch, columns, integers=integers)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise MalformedFileError(f"{self.info.name}: cannot read: {first_line(exc)}") from None
        except OSError as exc:
            raise damaged_pages(self.info.name, exc) or storage_error(self.info.name, exc) from None

    def read_type(self, name: str) -> pa.DataType | None:
        """The type column ``name`` is read as (before any text), ``None`` if none: a
        CSV file's values are text."""
        if self._csv is not None or self._schema.get_field_index(name) < 0:
            return None
        return self._read_schema([name]).field(name).type

    def _read_schema(self, columns: Sequence[str]) -> pa.Schema:
        """The dataset's schema, with the file's own type for each of ``columns`` it has.

        Every value becomes text, so an ``int32`` column of one file and an ``int64``
        one of another agree. A column whose kind differs between files (text in one, a
        number in another) is read as each file has it: that is refused for an audited
        column before anything is read (:meth:`DatasetSource.require_one_kind`), not
        for a column only sampled (the search for direct identifiers) or unused.
        """
        schema = self._schema
        if self._physical is None:
            return schema
        for name in columns:
            index = self._physical.get_field_index(name)
            if index < 0:
                continue
            own, common = self._physical.field(index).type, schema.field(name).type
            if _kind(own) == "text":
                if _kind(common) != "text":
                    schema = schema.set(schema.get_field_index(name), pa.field(name, pa.string()))
            else:
                schema = schema.set(schema.get_field_index(name), pa.field(name, own))
        return schema

    def kind_conflict(self, name: str) -> str | None:
        """Why column ``name`` of this file cannot be audited with the dataset's others.

        ``None`` when its type reads as text like theirs (``int32`` and ``int64`` agree;
        text and a number do not), or when the file lacks it.
        """
        if self._physical is None or (index := self._physical.get_field_index(name)) < 0:
            return None
        own, common = self._physical.field(index).type, self._schema.field(name).type
        if _kind(own) == _kind(common):
            return None
        return (
            f"{self.info.name}: column {name!r} is {own} here but {_plain(common)} in the "
            "dataset's other files; write it with one type in every file"
        )

    def _csv_batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """The CSV file's batches, with partition keys, nulls for what it lacks, filtered."""
        assert self._csv is not None
        wanted = list(dict.fromkeys([*columns, *self._filter_columns]))
        own = [name for name in wanted if name in self._csv.columns]
        for batch in self._csv.batches(own):
            rows = batch.num_rows
            arrays = [
                batch.column(name) if name in own else self._constant(name, rows) for name in wanted
            ]
            selected = pa.RecordBatch.from_arrays(arrays, names=wanted)
            if self._filter is not None:
                selected = selected.filter(self._filter)
            if selected.num_rows:
                yield to_text_batch(selected, columns)

    def _constant(self, name: str, rows: int) -> pa.Array:
        """A partition key's value, or null (a column the file lacks), ``rows`` times."""
        value = self._partition.get(name)
        if value is None:
            return pa.nulls(rows, pa.string())
        return pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(rows, np.int32)), pa.array([str(value)])
        )


def _plain(kind: pa.DataType) -> pa.DataType:
    """A dictionary type's value type; any other type as it is."""
    return kind.value_type if pa.types.is_dictionary(kind) else kind


def _kind(kind: pa.DataType) -> str:
    """What a type's values look like as text: ``text``, ``integer``, ``real`` or the type."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return "text"
    if pa.types.is_integer(kind):
        return "integer"
    if pa.types.is_floating(kind):
        return "real"
    return str(kind)


class DatasetSource:
    """Several files read as one source; :meth:`parts` gives them one by one.

    Parameters
    ----------
    info : SourceInfo
        The dataset's provenance (name as given, format, total size, filter, version).
    parts : sequence of FragmentSource
        Its files, after partition pruning.
    columns : tuple of str
        Its columns (those of all its files), partition columns last.
    missing_columns : {"error", "null"}
        What a file lacking an audited column means
        (:func:`~anonaudit.sources.protocol.require_columns`).
    """

    def __init__(
        self,
        info: SourceInfo,
        parts: Sequence[FragmentSource],
        columns: tuple[str, ...],
        missing_columns: MissingColumns = "error",
    ) -> None:
        self.info = info
        self.columns = columns
        self.missing_columns = missing_columns
        self._parts = tuple(parts)

    def parts(self) -> tuple[FragmentSource, ...]:
        """The dataset's files, each a source of its own."""
        return self._parts

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` of every file in turn."""
        for part in self._parts:
            yield from part.batches(columns)

    def require_one_kind(self, columns: Sequence[str]) -> None:
        """Refuse an audited column whose values are text in one file, numbers in another.

        Called by :func:`~anonaudit.sources.protocol.require_columns` with the audited
        columns only: a column the audit does not use may change type between files.

        Raises
        ------
        MalformedFileError
            Naming the first such file, the column and both types.
        """
        for name in columns:
            for part in self._parts:
                conflict = part.kind_conflict(name)
                if conflict is not None:
                    raise MalformedFileError(conflict)


def dataset_source(
    where: Location,
    dataset: ds.FileSystemDataset,
    *,
    fmt: str,
    file_format: ds.FileFormat,
    dictionaries: Sequence[str],
    filters: Sequence[str],
    name_of: Callable[[str], str],
    size_of: Callable[[str], int | None],
    version: int | None = None,
    missing_columns: MissingColumns = "error",
    physical: Mapping[str, pa.Schema] | None = None,
    readers: Mapping[str, CsvSource] | None = None,
    keys: Sequence[str] = (),
) -> DatasetSource:
    """Split ``dataset`` into :class:`FragmentSource` parts, pruned by ``filters``.

    Parameters
    ----------
    where : Location
        Where the dataset lives (for messages).
    dataset : pyarrow.dataset.FileSystemDataset
        Its files, schema and partition expressions.
    fmt : str
        ``"parquet"``, ``"csv"`` or ``"delta"``.
    file_format : pyarrow.dataset.FileFormat
        How the parts read their file.
    dictionaries : sequence of str
        Text columns that arrive as dictionaries (partition keys; Parquet text columns
        read with :func:`dictionary_format`).
    filters : sequence of str
        ``--filter`` texts.
    name_of, size_of : callable
        A fragment path's user-facing name and its size in bytes.
    version : int, optional
        The table version (Delta).
    missing_columns : {"error", "null"}
        What a file lacking an audited column means.
    physical : mapping of str to pyarrow.Schema, optional
        Each Parquet file's own schema, by path (``None``: every file has the dataset's).
    readers : mapping of str to CsvSource, optional
        Each CSV file's reader, by path.
    keys : sequence of str
        The hive partition keys, columns of every file read with ``physical`` or
        ``readers``.
    """
    import pyarrow.dataset as ds

    parsed = [parse_filter(text) for text in filters]
    expression = to_expression(parsed, dataset.schema, where.name) if parsed else None
    schema = dataset.schema
    for name in dictionaries:
        schema = schema.set(schema.get_field_index(name), pa.field(name, _TEXT))
    parts = []
    try:
        for fragment in dataset.get_fragments(filter=expression):
            parts.append(
                FragmentSource(
                    file_format=file_format,
                    filesystem=fragment.filesystem,
                    path=fragment.path,
                    partition=ds.get_partition_keys(fragment.partition_expression),
                    schema=schema,
                    filter=expression,
                    info=SourceInfo(
                        name=name_of(fragment.path), format=fmt, size_bytes=size_of(fragment.path)
                    ),
                    physical=(physical or {}).get(fragment.path),
                    csv=(readers or {}).get(fragment.path),
                    keys=keys,
                    filter_columns=[item.column for item in parsed],
                )
            )
    except OSError as exc:
        raise storage_error(where, exc) from None
    if not parts:
        names = dataset.partitioning.schema.names if dataset.partitioning else []
        raise SourceNotFoundError(no_match(where, parsed, _fragment_values(dataset, names)))
    sizes = [part.info.size_bytes for part in parts]
    info = SourceInfo(
        name=where.name,
        format=fmt,
        size_bytes=None if None in sizes else sum(s for s in sizes if s is not None),
        filter=" and ".join(str(item) for item in parsed) or None,
        version=version,
    )
    return DatasetSource(info, parts, tuple(schema.names), missing_columns)


def no_match(where: Location, filters: Sequence[Filter], present: Mapping[str, set[str]]) -> str:
    """Why no file of a dataset is left: the filters, and the partition values there are.

    Parameters
    ----------
    where : Location
        The dataset (its name begins the message).
    filters : sequence of Filter
        The ``--filter`` conditions applied; none when the dataset has no files at all.
    present : mapping of str to set of str
        The values each partition key has, shown (the first ten) to pick from.

    Returns
    -------
    str
        The message of a :class:`~anonaudit.errors.SourceNotFoundError`.
    """
    if not filters:
        return f"{where.name}: the dataset has no data files"
    text = " and ".join(str(item) for item in filters)
    listed = "; ".join(
        f"{key} has {', '.join(sorted(values)[:10])}{', ...' if len(values) > 10 else ''}"
        for key, values in present.items()
        if values
    )
    hint = f" ({listed})" if listed else ""
    return f"{where.name}: no file matches --filter {text}{hint}; check the partition values"


def _fragment_values(dataset: ds.Dataset, keys: Sequence[str]) -> dict[str, set[str]]:
    """The partition values of ``dataset``'s fragments (Delta: from its log), by key."""
    import pyarrow.dataset as ds

    present: dict[str, set[str]] = {key: set() for key in keys}
    for fragment in dataset.get_fragments():
        for key, value in ds.get_partition_keys(fragment.partition_expression).items():
            present.setdefault(key, set()).add(str(value))
    return present


def dictionary_format(schema: pa.Schema) -> ds.ParquetFileFormat:
    """Parquet read with the text columns of ``schema`` as dictionaries.

    They arrive straight from Parquet's dictionary pages, and the hash aggregate then
    works on the few distinct values of each batch rather than on every row's bytes
    (``benchmarks/bench_lake.py``).
    """
    import pyarrow.dataset as ds

    names = [f.name for f in schema if pa.types.is_string(f.type)]
    return ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(dictionary_columns=names),
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(
            page_checksum_verification=True  # where the writer stored page CRCs
        ),
    )


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, for a one-line error.

    Parameters
    ----------
    exc : BaseException
        An error from pyarrow or the storage.

    Returns
    -------
    str
        Its message's first line; the error's type name when it has no message.

    Examples
    --------
    >>> first_line(ValueError("bad footer" + chr(10) + "at offset 12"))
    'bad footer'
    >>> first_line(OSError())
    'OSError'
    """
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
