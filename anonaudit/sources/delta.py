"""Delta Lake tables, at their latest or a chosen version (``pip install 'anonaudit[delta]'``).

``deltalake`` reads the transaction log: which Parquet files make up the table at that
version, their sizes and partition values. The files themselves are then read like any
other dataset's (:mod:`anonaudit.sources.parts`), through the same pyarrow filesystem (so
the Dask engine's workers can read them too). Tables that need deletion vectors or
column mapping are refused by ``deltalake``'s reader with a message saying so. A
directory holding a ``_delta_log`` is read as a Delta table wherever a dataset is
opened (:data:`FORMAT`).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.fs as pafs

from anonaudit.errors import InputError, MissingDependencyError, SourceNotFoundError
from anonaudit.sources.parts import DatasetSource, dataset_source, dictionary_format
from anonaudit.sources.protocol import Format
from anonaudit.sources.storage import Location, storage_error

if TYPE_CHECKING:
    from anonaudit.sources.options import DatasetOptions

__all__ = ["FORMAT", "is_delta", "open_delta"]

_DELTA_S3_KEYS = {
    "endpoint_url": "AWS_ENDPOINT_URL",
    "region": "AWS_REGION",
    "access_key_id": "AWS_ACCESS_KEY_ID",
    "secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "session_token": "AWS_SESSION_TOKEN",
    "anonymous": "AWS_SKIP_SIGNATURE",
}


def open_delta(where: Location, options: DatasetOptions) -> DatasetSource:
    """Open the Delta table at ``where`` (version ``options.delta_version``, else the latest).

    Raises
    ------
    MissingDependencyError
        ``deltalake`` is not installed.
    SourceNotFoundError
        No Delta table at ``where``, or no such version.
    """
    try:
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError
    except ImportError:
        raise MissingDependencyError(
            f"{where.name}: reading Delta tables needs deltalake; pip install 'anonaudit[delta]'"
        ) from None
    uri = where.path if where.scheme == "file" else f"{where.scheme}://{where.path}"
    try:
        table = DeltaTable(uri, version=options.delta_version, storage_options=_options(where))
    except TableNotFoundError:
        raise SourceNotFoundError(
            f"{where.name}: no Delta table here (no readable _delta_log); check the path"
        ) from None
    except DeltaError as exc:
        raise _version_error(where, options, exc) from None
    root = pafs.SubTreeFileSystem(where.path, where.filesystem)
    try:
        probe = table.to_pyarrow_dataset(filesystem=root)
        actions = pa.table(table.get_add_actions(flatten=True))
        sizes = dict(
            zip(
                actions.column("path").to_pylist(),
                actions.column("size_bytes").to_pylist(),
                strict=True,
            )
        )
        file_format = dictionary_format(probe.schema)
        dataset = table.to_pyarrow_dataset(
            filesystem=root, parquet_read_options=file_format.read_options
        )
    except DeltaError as exc:
        raise InputError(f"{where.name}: cannot read this Delta table: {exc}") from None
    except OSError as exc:
        raise storage_error(where, exc) from None
    return dataset_source(
        where,
        dataset,
        fmt="delta",
        file_format=file_format,
        dictionaries=file_format.read_options.dictionary_columns,
        filters=options.filters,
        name_of=lambda path: posixpath.join(where.name.rstrip("/"), path),
        size_of=sizes.get,
        version=table.version(),
        missing_columns=options.missing_columns,
    )


def _options(where: Location) -> dict[str, str]:
    """Storage options in delta-rs's names (it reads the AWS environment variables too)."""
    if where.scheme != "s3":
        return {}
    result = {_DELTA_S3_KEYS[key]: value for key, value in where.s3.items()}
    if where.s3.get("endpoint_url", "").startswith("http://"):
        result["AWS_ALLOW_HTTP"] = "true"
    return result


def _version_error(where: Location, options: DatasetOptions, exc: Any) -> Exception:
    if options.delta_version is None or "version" not in str(exc).lower():
        return storage_error(where, exc)
    return SourceNotFoundError(
        f"{where.name}: the Delta table has no version {options.delta_version} "
        f"({' '.join(str(exc).split())}); pick an existing --delta-version"
    )


def is_delta(where: Location, options: DatasetOptions) -> bool:
    """Whether ``where`` is to be read as a Delta table: ``options`` ask for a version of
    one (``--delta-version``), or it is a directory holding a ``_delta_log``.

    Parameters
    ----------
    where : Location
        A dataset's location, local or in object storage.
    options : DatasetOptions
        The dataset options given.

    Returns
    -------
    bool
        Whether :func:`open_delta` is to open ``where``.

    Raises
    ------
    OSError
        The storage could not be asked.
    """
    if options.delta_version is not None:
        return True
    log = where.filesystem.get_file_info(posixpath.join(where.path, "_delta_log"))
    return bool(log.type == pafs.FileType.Directory)


#: Delta Lake tables: directories (local or in object storage), not single files; their
#: Parquet files are found in the table's log, not by their suffix.
FORMAT = Format(name="delta", title="Delta", is_table=is_delta, open_table=open_delta)
