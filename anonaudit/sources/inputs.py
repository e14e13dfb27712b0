"""Opening the inputs of an audit: paths, URLs, frames, or a list of them, as sources.

:func:`open_source` opens one input: a file as the format its suffix names (the
registry, :mod:`anonaudit.sources.formats`), a directory, glob or URL as a dataset
(:mod:`anonaudit.sources.dataset`), a frame as itself. :func:`open_inputs` is what
:func:`anonaudit.load` and every second pass over the records (``--records-out``,
``advise --out``, the sample of undeclared columns) open the data with, so that each
reads the same records the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from anonaudit.errors import InputError, SourceNotFoundError
from anonaudit.sources.dataset import open_dataset
from anonaudit.sources.formats import of_file
from anonaudit.sources.frames import FrameSource, is_spark_frame
from anonaudit.sources.options import CsvOptions, DatasetOptions
from anonaudit.sources.protocol import Source
from anonaudit.sources.storage import is_url

if TYPE_CHECKING:
    from anonaudit.sources.protocol import MissingColumns

__all__ = ["open_inputs", "open_source", "require_rereadable"]


def open_source(
    obj: Any, *, csv: CsvOptions | None = None, dataset: DatasetOptions | None = None
) -> Source:
    """Open ``obj`` as a :class:`~anonaudit.sources.protocol.Source`.

    Parameters
    ----------
    obj : str, os.PathLike, pandas.DataFrame or pyarrow.Table
        A file of a format of :mod:`anonaudit.sources.formats`, by its suffix (a CSV
        file, optionally ``.gz``/``.bz2``/``.zst``-compressed, or any file no format's
        suffix claims; a Parquet file), a directory, glob or object-storage URL of such
        files or of a Delta table (:mod:`anonaudit.sources.dataset`), or an in-memory
        frame.
    csv : CsvOptions, optional
        Separator, encoding and null markers for CSV files.
    dataset : DatasetOptions, optional
        Format, filters, storage options and Delta version. When any is set, a single
        file is read as a dataset too.

    Returns
    -------
    Source
        A source whose :meth:`~anonaudit.sources.protocol.Source.batches` streams text
        columns.

    Raises
    ------
    SourceNotFoundError
        No such file.
    InputError
        An object that is neither a path nor a frame.
    """
    if isinstance(obj, (str, os.PathLike)):
        text = os.fspath(obj)
        path = Path(text)
        wanted = dataset is not None and dataset.given
        if wanted or is_url(text) or path.is_dir() or any(c in text for c in "*?["):
            return open_dataset(text, options=dataset, csv=csv)
        if not path.exists():
            raise SourceNotFoundError(f"{path}: no such file; check the path")
        opener = of_file(path.name).open_file
        assert opener is not None  # of_file gives a format that opens files
        return opener(path, csv)
    if FrameSource.accepts(obj):
        return FrameSource(obj)
    raise InputError(
        f"cannot audit an object of type {type(obj).__name__}; "
        "pass a path, a pandas.DataFrame or a pyarrow.Table"
    )


def open_inputs(
    source: Any,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    na_values: Sequence[str] = ("",),
    format: str | None = None,
    filter: str | Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
    delta_version: int | None = None,
    missing_columns: str = "error",
) -> list[Source]:
    """Open ``source`` as :func:`anonaudit.auditing.load` does, as a list of sources.

    Parameters
    ----------
    source : path, URL, pandas.DataFrame, pyarrow.Table, or a list of them
        The inputs (see :func:`anonaudit.auditing.load`).
    sep, encoding, na_values, format, filter, storage_options, delta_version
        As for :func:`anonaudit.auditing.load`.
    missing_columns : {"error", "null"}
        What a dataset's file lacking an audited column means
        (:class:`~anonaudit.sources.dataset.DatasetOptions`).

    Returns
    -------
    list of Source
        One per input, in order.

    Raises
    ------
    InputError
        A Spark DataFrame: Spark aggregates it itself and its rows have no order to
        re-read; write it to Parquet and pass the files.
    """
    csv = CsvOptions(sep=sep, encoding=encoding, na_values=tuple(na_values))
    lake = DatasetOptions(
        format=format,
        filters=(filter,) if isinstance(filter, str) else tuple(filter),
        storage_options=dict(storage_options or {}),
        delta_version=delta_version,
        missing_columns=cast("MissingColumns", missing_columns),  # DatasetOptions checks it
    )
    items: list[Any] = list(source) if isinstance(source, (list, tuple)) else [source]
    for item in items:
        if is_spark_frame(item):
            raise InputError(
                "a Spark DataFrame cannot be re-read record by record; "
                "write it to Parquet and pass the files"
            )
    return [open_source(item, csv=csv, dataset=lake) for item in items]


def require_rereadable(inputs: Sequence[object], option: str) -> None:
    """Refuse an input that can be read only once (a pipe) for ``option``, which re-reads.

    Called before the audit, so that it is not run for nothing and then waits forever
    on a pipe whose writer has gone.

    Raises
    ------
    InputError
        Naming the input and ``option``.
    """
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)) or not os.path.exists(item):
            continue
        mode = os.stat(item).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise InputError(
                f"{os.fspath(item)}: is a pipe or device, which can be read only once, and "
                f"{option} reads the inputs a second time; write the data to a file first"
            )
