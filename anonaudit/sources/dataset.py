"""Datasets: directories, globs and object-storage prefixes of Parquet or CSV files.

A dataset is read with :mod:`pyarrow.dataset`, one file (fragment) at a time. Hive-style
partition directories (``day=2024-01-02/``) become text columns usable as QIs and in
``--filter``; a filter on them selects files by their path alone, so other
partitions' files are never opened (not even for their schema). A partition key that
is also a column of a file is refused: neither value silently wins. Files and
directories whose name starts with ``_`` or ``.`` (``_SUCCESS``, ``_delta_log``,
``.crc``) are not data. Inside a local dataset no directory symlink is followed (a
``latest -> day=...`` link would count that day twice, a link to ``.`` loop), and a file
reached by two paths (a file symlink, a hard link) is read once. The format is taken
from the file suffixes (``.parquet``/``.pq``/``.parq``, ``.csv``/``.tsv``/``.txt``,
optionally compressed) unless ``format`` names it, in which case files without a known
suffix count too; a directory holding a ``_delta_log`` is a Delta table
(:mod:`anonaudit.sources.delta`).

Each part (:class:`FragmentSource`) is picklable, so the Dask engine reads the parts on
its workers from the same storage.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from anonaudit.classtable import to_text_batch
from anonaudit.errors import (
    AnonauditError,
    MalformedFileError,
    ParameterError,
    SourceNotFoundError,
)
from anonaudit.settings.names import FORMATS
from anonaudit.sources.base import (
    MISSING_COLUMNS,
    MissingColumns,
    SourceInfo,
    local_sha256,
    require_flat,
)
from anonaudit.sources.csv import CsvOptions, CsvSource
from anonaudit.sources.filters import Filter, parse_filter, to_expression
from anonaudit.sources.parquet import check_decoded, check_row_groups, damaged_pages
from anonaudit.sources.storage import Location, resolve, storage_error

if TYPE_CHECKING:
    from anonaudit.sources.storage import StorageOptions

__all__ = [
    "FORMATS",
    "DatasetOptions",
    "DatasetSource",
    "FragmentSource",
    "dataset_source",
    "dictionary_format",
    "open_dataset",
]

#: Formats a dataset may have.

_SUFFIXES = {
    "parquet": (".parquet", ".pq", ".parq"),
    "csv": (".csv", ".tsv", ".txt"),
}
_COMPRESSED = (".gz", ".bz2", ".zst")
_GLOB = frozenset("*?[")
_BATCH_ROWS = 1 << 17
_TEXT = pa.dictionary(pa.int32(), pa.string())
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"  # pyarrow's (and Hive's) null partition value
_INDEX = "__anonaudit_file_index__"


@dataclass(frozen=True)
class DatasetOptions:
    """How to find and select a dataset's records.

    Attributes
    ----------
    format : {"parquet", "csv", "delta"} or None
        The files' format; ``None`` infers it from the suffixes (or ``_delta_log``).
    filters : tuple of str
        ``--filter`` texts (:mod:`anonaudit.sources.filters`), all of which must hold.
    storage_options : mapping of str to str
        Object-storage settings (:mod:`anonaudit.sources.storage`).
    delta_version : int or None
        The Delta table version to read; ``None`` reads the latest.
    missing_columns : {"error", "null"}
        A file lacking an audited column that other files have is an error naming
        it (``"error"``), or its values of that column are null (``"null"``).
    """

    format: str | None = None
    filters: tuple[str, ...] = ()
    storage_options: StorageOptions = field(default_factory=dict)
    delta_version: int | None = None
    missing_columns: MissingColumns = "error"

    def __post_init__(self) -> None:
        if self.missing_columns not in MISSING_COLUMNS:
            raise ParameterError(
                f"unknown --missing-columns {self.missing_columns!r}; "
                f"choose one of {', '.join(MISSING_COLUMNS)}"
            )
        if self.format is not None and self.format not in FORMATS:
            raise ParameterError(
                f"unknown --format {self.format!r}; choose one of {', '.join(FORMATS)}"
            )
        if self.delta_version is not None and self.delta_version < 0:
            raise ParameterError(f"--delta-version must be >= 0 (got {self.delta_version})")
        for text in self.filters:
            parse_filter(text)

    @property
    def given(self) -> bool:
        """Whether any option asks for dataset reading (a plain file path otherwise)."""
        return bool(
            self.format or self.filters or self.storage_options or self.delta_version is not None
        )


class FragmentSource:
    """One file of a dataset, read on its own (by this process or by a Dask worker).

    Its ``columns`` are its file's own and the partition keys: a dataset's files may
    differ (:func:`~anonaudit.sources.base.require_columns`). A column it lacks is read
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

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` of this file's selected rows as text batches."""
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
                yield to_text_batch(batch, columns)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise MalformedFileError(f"{self.info.name}: cannot read: {_first_line(exc)}") from None
        except OSError as exc:
            raise damaged_pages(self.info.name, exc) or storage_error(self.info.name, exc) from None

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
        (:func:`~anonaudit.sources.base.require_columns`).
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

        Called by :func:`~anonaudit.sources.base.require_columns` with the audited
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


def open_dataset(
    location: str | os.PathLike[str],
    *,
    options: DatasetOptions | None = None,
    csv: CsvOptions | None = None,
) -> DatasetSource:
    """Open a directory, glob, file or object-storage URL as a :class:`DatasetSource`.

    Parameters
    ----------
    location : str or os.PathLike
        A local path or glob, or a URL such as ``s3://bucket/events/`` (globs allowed).
    options : DatasetOptions, optional
        Format, filters, storage options, Delta version.
    csv : CsvOptions, optional
        Separator, encoding and null markers for CSV files.

    Raises
    ------
    SourceNotFoundError
        Nothing at ``location``, no data files in it, or no partition matching the filter.
    StorageError
        Unreachable storage or rejected credentials.
    """
    options = options or DatasetOptions()
    where = resolve(location, options.storage_options)
    try:
        if options.format == "delta" or options.delta_version is not None or _is_delta(where):
            from anonaudit.sources.delta import open_delta

            return open_delta(where, options)
        files, base = _list_files(where)
    except AnonauditError:
        raise
    except OSError as exc:
        raise storage_error(where, exc) from None
    fmt = options.format or _infer_format(where, files)
    files = _of_format(files, fmt, named=options.format is not None)
    if not files:
        raise SourceNotFoundError(f"{where.name}: holds no {fmt} files; check --format")
    partition_keys = _partition_keys(files[0].path, base)
    files = _prune(where, files, base, partition_keys, options.filters)
    readers: dict[str, CsvSource] = {}
    schema: pa.Schema | None = None
    file_format: ds.FileFormat = ds.ParquetFileFormat()
    try:
        if fmt == "csv":
            readers = {f.path: _csv_reader(where, f, csv or CsvOptions()) for f in files}
            names = dict.fromkeys(name for r in readers.values() for name in r.columns)
            schema = pa.schema([(name, pa.string()) for name in [*names, *partition_keys]])
            file_format = ds.CsvFileFormat()  # for partition pruning: the readers read
        dataset = ds.dataset(
            [f.path for f in files],
            schema=schema,
            format=file_format,
            filesystem=where.filesystem,
            partitioning=(
                ds.partitioning(
                    pa.schema([(k, pa.string()) for k in partition_keys]), flavor="hive"
                )
                if partition_keys
                else None
            ),
            partition_base_dir=base,
        )
        physical: dict[str, pa.Schema] = {}
        if fmt == "parquet":
            physical = {f.path: _footer(where, f) for f in dataset.get_fragments()}
            _refuse_key_columns(where, base, partition_keys, physical)
            dataset = dataset.replace_schema(_union(physical.values(), dataset.schema))
        else:
            _refuse_key_columns(where, base, partition_keys, readers)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise MalformedFileError(
            f"{where.name}: cannot read as {fmt}: {_first_line(exc)}"
        ) from None
    except OSError as exc:
        raise storage_error(where, exc) from None
    if fmt == "parquet":
        file_format = dictionary_format(dataset.schema)
    sizes = {f.path: f.size for f in files}
    text_columns = [f.name for f in dataset.schema if pa.types.is_string(f.type)]
    return dataset_source(
        where,
        dataset,
        fmt=fmt,
        file_format=file_format,
        dictionaries=text_columns if fmt == "parquet" else partition_keys,
        filters=options.filters,
        name_of=where.child,
        size_of=sizes.get,
        missing_columns=options.missing_columns,
        physical=physical,
        readers=readers,
        keys=partition_keys,
    )


def _partition_values(path: str, base: str) -> dict[str, str | None]:
    """The hive partition values in the directories between ``base`` and ``path``.

    Decoded as pyarrow decodes them (``%2F`` is ``/``); ``__HIVE_DEFAULT_PARTITION__``
    is null.

    >>> _partition_values("/lake/day=2024-01-02/region=e%20u/part-0.parquet", "/lake")
    {'day': '2024-01-02', 'region': 'e u'}
    """
    relative = posixpath.relpath(posixpath.dirname(path), base) if base else posixpath.dirname(path)
    values: dict[str, str | None] = {}
    for part in relative.split("/"):
        if "=" in part:
            key, value = part.split("=", 1)
            decoded = urllib.parse.unquote(value)
            values[urllib.parse.unquote(key)] = None if decoded == _HIVE_NULL else decoded
    return values


def _prune(
    where: Location,
    files: Sequence[pafs.FileInfo],
    base: str,
    keys: Sequence[str],
    filters: Sequence[str],
) -> list[pafs.FileInfo]:
    """The files whose partition values (read from their path) meet the filters on keys.

    Nothing is opened: a file of an excluded partition may be damaged, or still being
    written, and the audit of the others goes on. Filters on file columns select rows
    later.

    Raises
    ------
    SourceNotFoundError
        No file is left; the message lists the partition values present.
    """
    parsed = [parse_filter(text) for text in filters]
    on_keys = [item for item in parsed if item.column in keys]
    if not on_keys:
        return list(files)
    values = [_partition_values(f.path, base) for f in files]
    table = pa.table(
        {key: pa.array([v.get(key) for v in values], pa.string()) for key in keys}
    ).append_column(_INDEX, pa.array(range(len(files)), pa.int64()))
    expression = to_expression(on_keys, table.schema, where.name)
    kept = [files[i] for i in table.filter(expression).column(_INDEX).to_pylist()]
    if not kept:
        present = {key: {v for row in values if (v := row.get(key)) is not None} for key in keys}
        raise SourceNotFoundError(_no_match(where, parsed, present))
    return kept


def _refuse_key_columns(
    where: Location,
    base: str,
    keys: Sequence[str],
    files: Mapping[str, pa.Schema] | Mapping[str, CsvSource],
) -> None:
    """Refuse a file holding a column named like a partition key of its directories.

    Which of the two values is right cannot be known: pyarrow would silently keep the
    directory's.

    Raises
    ------
    MalformedFileError
        Naming the key, the file and the column.
    """
    if not keys:
        return
    for path, opened in files.items():
        own = opened.names if isinstance(opened, pa.Schema) else opened.columns
        for key in keys:
            if key in own:
                value = _partition_values(path, base).get(key)
                raise MalformedFileError(
                    f"{where.child(path)}: the partition key {key!r} (folder {key}={value}) "
                    f"is also a column {key!r} of the file, and the two may disagree; "
                    f"rename the column in the file or the partition folder"
                )


def _csv_reader(where: Location, info: pafs.FileInfo, options: CsvOptions) -> CsvSource:
    name = where.child(info.path)
    try:
        return CsvSource(
            info.path, options, filesystem=where.filesystem, name=name, size_bytes=info.size
        )
    except OSError as exc:
        raise storage_error(name, exc) from None


def _footer(where: Location, fragment: ds.Fragment) -> pa.Schema:
    """A Parquet file's own schema, from its footer; an unreadable one is named."""
    try:
        return fragment.physical_schema
    except (pa.ArrowInvalid, OSError) as exc:
        raise MalformedFileError(
            f"{where.child(fragment.path)}: cannot read: {_first_line(exc)}"
        ) from None


def _union(schemas: Iterable[pa.Schema], first: pa.Schema) -> pa.Schema:
    """Every column of ``schemas`` (the first type seen of each), then ``first``'s others.

    ``first`` is the schema the dataset inferred from its first file, with the
    partition keys.
    """
    fields: dict[str, pa.Field] = {}
    for schema in schemas:
        for item in schema:
            fields.setdefault(item.name, item)
    for item in first:
        fields.setdefault(item.name, item)
    return pa.schema(list(fields.values()))


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
        raise SourceNotFoundError(_no_match(where, parsed, _fragment_values(dataset, names)))
    sizes = [part.info.size_bytes for part in parts]
    info = SourceInfo(
        name=where.name,
        format=fmt,
        size_bytes=None if None in sizes else sum(s for s in sizes if s is not None),
        filter=" and ".join(str(item) for item in parsed) or None,
        version=version,
    )
    return DatasetSource(info, parts, tuple(schema.names), missing_columns)


def _no_match(where: Location, filters: Sequence[Filter], present: Mapping[str, set[str]]) -> str:
    """Why nothing is left: the filters, and the partition values ``present`` by key."""
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
    present: dict[str, set[str]] = {key: set() for key in keys}
    for fragment in dataset.get_fragments():
        for key, value in ds.get_partition_keys(fragment.partition_expression).items():
            present.setdefault(key, set()).add(str(value))
    return present


def _is_delta(where: Location) -> bool:
    log = where.filesystem.get_file_info(posixpath.join(where.path, "_delta_log"))
    return bool(log.type == pafs.FileType.Directory)


def _list_files(where: Location) -> tuple[list[pafs.FileInfo], str]:
    """The data files at ``where`` and the directory partition paths are relative to.

    Locally, no directory symlink below the location is followed, and a file reached
    by two paths is listed once (:func:`_local_files`).
    """
    path = where.path
    local = isinstance(where.filesystem, pafs.LocalFileSystem)
    if any(char in _GLOB for char in path):
        base = path[: min(path.index(c) for c in _GLOB if c in path)].rpartition("/")[0]
        candidates = _listing(where, base, local)
        files = [f for f in candidates if fnmatch.fnmatchcase(f.path, path)]
        if not files:
            raise SourceNotFoundError(f"{where.name}: no file matches the pattern")
    else:
        info = where.filesystem.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise SourceNotFoundError(
                f"{where.name}: no such file, directory or bucket; check the path"
            )
        if info.is_file:
            return [info], posixpath.dirname(path)
        base = path
        files = _listing(where, base, local)
    files = [f for f in files if not _hidden(f.path, base)]
    if not files:
        links = _folder_links(base) if local else []
        hint = (
            f" (folder symlinks inside a dataset are not followed: {', '.join(links[:3])}"
            f"{', ...' if len(links) > 3 else ''}; name a linked folder as an input of its own)"
            if links
            else ""
        )
        raise SourceNotFoundError(f"{where.name}: is a directory with no data files{hint}")
    return sorted(files, key=lambda f: f.path), base


def _listing(where: Location, base: str, local: bool) -> list[pafs.FileInfo]:
    """Every file below ``base``: locally by :func:`_local_files`, else as listed."""
    if local:
        files = _local_files(base or "/")  # a glob in the root folder: "/*.parquet"
        return where.filesystem.get_file_info(files)  # type: ignore[no-any-return]
    selector = pafs.FileSelector(base, recursive=True)
    return [f for f in where.filesystem.get_file_info(selector) if f.is_file]


def _folder_links(base: str) -> list[str]:
    """The names of the directory symlinks in local directory ``base``, sorted."""
    with os.scandir(base) as entries:
        return sorted(e.name for e in entries if e.is_symlink() and e.is_dir())


def _local_files(base: str) -> list[str]:
    """The files below local directory ``base``, each file once.

    A directory symlink below ``base`` is not followed (``base`` itself may be one): a
    ``latest -> day=2024-01-02`` link would add that day's records a second time, and
    a link to ``.`` would loop. A file symlink is read, unless the file it names is
    listed already (by another path, or as a hard link): then the path that is not a
    link is kept, or the first in order. Folders named ``_...`` or ``.`` are not
    entered (:func:`_hidden`).
    """
    found: dict[tuple[int, int], tuple[bool, str]] = {}
    folders = [base]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(("_", ".")):
                        folders.append(entry.path)
                    continue
                if not entry.is_file(follow_symlinks=True):
                    continue  # a directory symlink, a broken link, a socket or a FIFO
                status = entry.stat(follow_symlinks=True)
                key, candidate = (status.st_dev, status.st_ino), (entry.is_symlink(), entry.path)
                if key not in found or candidate < found[key]:
                    found[key] = candidate
    return sorted(path for _, path in found.values())


def _hidden(path: str, base: str) -> bool:
    relative = posixpath.relpath(path, base) if base else path
    return any(part.startswith(("_", ".")) for part in relative.split("/"))


def _strip_compression(path: str) -> str:
    lowered = path.lower()
    for suffix in _COMPRESSED:
        lowered = lowered.removesuffix(suffix)
    return lowered


def _infer_format(where: Location, files: Sequence[pafs.FileInfo]) -> str:
    found = {
        fmt
        for f in files
        for fmt, suffixes in _SUFFIXES.items()
        if _strip_compression(f.path).endswith(suffixes)
    }
    if len(found) == 1:
        return found.pop()
    if not found:
        raise SourceNotFoundError(
            f"{where.name}: is a directory with no .parquet or .csv files "
            f"(found e.g. {posixpath.basename(files[0].path)}); name the format with --format"
        )
    raise ParameterError(
        f"{where.name}: holds both Parquet and CSV files; pick one with --format or a glob"
    )


def _of_format(files: Sequence[pafs.FileInfo], fmt: str, *, named: bool) -> list[pafs.FileInfo]:
    """The files of format ``fmt``: with its suffix, or (when ``named``) any but another's."""
    others = tuple(suffix for key, group in _SUFFIXES.items() if key != fmt for suffix in group)
    kept = []
    for info in files:
        plain = _strip_compression(info.path)
        if plain.endswith(_SUFFIXES[fmt]) or (named and not plain.endswith(others)):
            kept.append(info)
    return kept


def _partition_keys(first_file: str, base: str) -> list[str]:
    """Hive partition keys from the directories between ``base`` and the first file."""
    relative = posixpath.relpath(posixpath.dirname(first_file), base) if base else first_file
    return [part.split("=", 1)[0] for part in relative.split("/") if "=" in part]


def dictionary_format(schema: pa.Schema) -> ds.ParquetFileFormat:
    """Parquet read with the text columns of ``schema`` as dictionaries.

    They arrive straight from Parquet's dictionary pages, and the hash aggregate then
    works on the few distinct values of each batch rather than on every row's bytes
    (``benchmarks/bench_lake.py``).
    """
    names = [f.name for f in schema if pa.types.is_string(f.type)]
    return ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(dictionary_columns=names),
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(
            page_checksum_verification=True  # where the writer stored page CRCs
        ),
    )


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
