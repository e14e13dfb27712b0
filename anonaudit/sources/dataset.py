"""Datasets: directories, globs and object-storage prefixes of files, or tables.

A dataset is read with :mod:`pyarrow.dataset`, one file (fragment) at a time
(:mod:`anonaudit.sources.parts`). Hive-style partition directories (``day=2024-01-02/``)
become text columns usable as QIs and in ``--filter``; a filter on them selects files by
their path alone, so other partitions' files are never opened (not even for their
schema). A partition key that is also a column of a file is refused: neither value
silently wins. Files and directories whose name starts with ``_`` or ``.``
(``_SUCCESS``, ``_delta_log``, ``.crc``) are not data. Inside a local dataset no
directory symlink is followed (a ``latest -> day=...`` link would count that day twice,
a link to ``.`` loop), and a file reached by two paths (a file symlink, a hard link) is
read once.

The format is taken from the file suffixes each format declares
(:mod:`anonaudit.sources.formats`), optionally followed by a compression suffix
(``.gz``, ``.bz2``, ``.zst``), unless ``format`` names it, in which case files without
another format's suffix count too. A location a table format recognises (a directory
holding a ``_delta_log``: :mod:`anonaudit.sources.delta`) is opened as that table.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.fs as pafs

from anonaudit.errors import (
    AnonauditError,
    MalformedFileError,
    ParameterError,
    SourceNotFoundError,
)
from anonaudit.settings.names import FORMATS
from anonaudit.sources.csv import CsvSource
from anonaudit.sources.filters import parse_filter, to_expression
from anonaudit.sources.formats import named, registered
from anonaudit.sources.options import CsvOptions, DatasetOptions
from anonaudit.sources.parts import (
    DatasetSource,
    FragmentSource,
    dataset_source,
    dictionary_format,
    first_line,
    no_match,
)
from anonaudit.sources.storage import Location, resolve, storage_error

if TYPE_CHECKING:
    import pyarrow.dataset as ds

__all__ = [
    "FORMATS",
    "DatasetOptions",
    "DatasetSource",
    "FragmentSource",
    "dataset_source",
    "dictionary_format",
    "open_dataset",
]

#: Compression suffixes a dataset's file name may end with, after its format's suffix.
_COMPRESSED = (".gz", ".bz2", ".zst")
_GLOB = frozenset("*?[")
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"  # pyarrow's (and Hive's) null partition value
_INDEX = "__anonaudit_file_index__"


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
    import pyarrow.dataset as ds

    options = options or DatasetOptions()
    where = resolve(location, options.storage_options)
    try:
        for table in registered().values():
            if table.is_table is None or table.open_table is None:
                continue
            if options.format == table.name or table.is_table(where, options):
                opened = table.open_table(where, options)
                if not isinstance(opened, DatasetSource):
                    raise TypeError(f"format {table.name!r}: open_table must give a DatasetSource")
                return opened
        files, base = _list_files(where)
    except AnonauditError:
        raise
    except OSError as exc:
        raise storage_error(where, exc) from None
    fmt = options.format or _infer_format(where, files)
    files = _of_format(files, fmt, given=options.format is not None)
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
        raise MalformedFileError(f"{where.name}: cannot read as {fmt}: {first_line(exc)}") from None
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
        raise SourceNotFoundError(no_match(where, parsed, present))
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
            f"{where.child(fragment.path)}: cannot read: {first_line(exc)}"
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
    """The one format whose suffixes the files have (after a compression suffix).

    Raises
    ------
    SourceNotFoundError
        No file has a format's suffix.
    ParameterError
        Files of several formats.
    """
    kinds = [fmt for fmt in registered().values() if fmt.suffixes]
    plain = [_strip_compression(f.path) for f in files]
    found = [fmt for fmt in kinds if any(fmt.claims(name) for name in plain)]
    if len(found) == 1:
        return found[0].name
    if not found:
        usual = " or ".join(fmt.suffixes[0] for fmt in kinds)
        raise SourceNotFoundError(
            f"{where.name}: is a directory with no {usual} files "
            f"(found e.g. {posixpath.basename(files[0].path)}); name the format with --format"
        )
    titles = [fmt.title for fmt in found]
    listed = ", ".join(titles[:-1]) + " and " + titles[-1]
    raise ParameterError(
        f"{where.name}: holds {'both ' if len(found) == 2 else ''}{listed} files; "
        "pick one with --format or a glob"
    )


def _of_format(files: Sequence[pafs.FileInfo], fmt: str, *, given: bool) -> list[pafs.FileInfo]:
    """The files of format ``fmt``: with its suffix, or (when ``given``) any but another's."""
    own = named(fmt)
    others = [other for other in registered().values() if other.name != fmt]
    kept = []
    for info in files:
        plain = _strip_compression(info.path)
        if own.claims(plain) or (given and not any(other.claims(plain) for other in others)):
            kept.append(info)
    return kept


def _partition_keys(first_file: str, base: str) -> list[str]:
    """Hive partition keys from the directories between ``base`` and the first file."""
    relative = posixpath.relpath(posixpath.dirname(first_file), base) if base else first_file
    return [part.split("=", 1)[0] for part in relative.split("/") if "=" in part]
