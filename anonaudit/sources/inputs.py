"""Opening the inputs of an audit: paths, URLs, frames, or a list of them, as sources.

:func:`open_inputs` is what :func:`anonaudit.load` and every second pass over the
records (``--records-out``, ``advise --out``, the sample of undeclared columns) open the
data with, so that each reads the same records the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from anonaudit.errors import InputError
from anonaudit.sources.base import Source, open_source
from anonaudit.sources.csv import CsvOptions
from anonaudit.sources.dataset import DatasetOptions
from anonaudit.sources.frames import is_spark_frame

if TYPE_CHECKING:
    from anonaudit.sources.base import MissingColumns

__all__ = ["open_inputs", "require_rereadable"]


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
