"""Loading: inputs of any kind into one class table, by the engine asked for.

:func:`load` opens the inputs (:func:`anonaudit.sources.open_inputs`), has an engine
aggregate them in one streaming pass (:mod:`anonaudit.engines`) and merges the partial
class tables; a Spark DataFrame is aggregated by Spark itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

import pandas as pd
import pyarrow as pa

from anonaudit.classtable import ClassTable
from anonaudit.engines.local import Progress, build_class_table
from anonaudit.errors import ParameterError
from anonaudit.sources import is_spark_frame, open_inputs
from anonaudit.sources.csv import from_decimal_comma

__all__ = ["Engine", "Source", "load"]

#: What :func:`audit` and :func:`load` accept as input.
Source: TypeAlias = (
    str | os.PathLike[str] | pd.DataFrame | pa.Table | Sequence[str | os.PathLike[str]]
)
#: Where the class table is built: in this process, or on a Dask cluster.
Engine = Literal["local", "dask", "spark"]


def load(
    source: Source,
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    sep: str | None = None,
    encoding: str = "utf-8",
    na_values: Sequence[str] = ("",),
    format: str | None = None,
    filter: str | Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
    delta_version: int | None = None,
    engine: Engine = "local",
    scheduler: Any = None,
    progress: Progress | None = None,
    weights: str | None = None,
    missing_columns: str = "error",
    count: str | None = None,
    decimal_comma: Sequence[str] = (),
) -> ClassTable:
    """Read ``source`` in one streaming pass into a :class:`ClassTable`.

    Parameters
    ----------
    source : path, URL, list of them, pandas.DataFrame, pyarrow.Table or Spark DataFrame
        CSV (sniffed separator unless ``sep``) or Parquet files; directories, globs and
        object-storage URLs (``s3://bucket/events/``) of such files, hive-partitioned or
        not, or of a Delta table; a frame. All are aggregated in one pass (a Spark
        DataFrame by Spark itself) and merged.
    quasi_identifiers : sequence of str
        QI columns (at least one); partition keys of a dataset are columns too.
    sensitive : sequence of str
        SA columns.
    sep, encoding, na_values
        CSV reading options; only ``na_values`` texts become null (default: empty).
    format : {"parquet", "csv", "delta"}, optional
        Format of a dataset's files (inferred from their suffixes, or ``_delta_log``).
    filter : str or sequence of str
        Row and partition selection, all of which must hold, such as
        ``"day=2024-01-02"`` (:mod:`anonaudit.sources.filters`).
    storage_options : mapping of str to str, optional
        Object-storage settings such as ``endpoint_url`` (:mod:`anonaudit.sources.storage`).
    delta_version : int, optional
        The Delta table version to read (default: the latest).
    engine : {"local", "dask"}
        Build the class table in this process, or on a Dask cluster.
    scheduler : distributed.Client or str, optional
        For ``engine="dask"``: a running client or a scheduler address; ``None`` starts
        a local cluster.
    progress : Progress, optional
        Where to report progress of long scans.
    weights : str, optional
        A column of survey weights (the people each record stands for), summed per
        combination into :attr:`ClassTable.weights`; local engine only. A null,
        non-numeric or negative weight is an :class:`~anonaudit.errors.InputError`.
    count : str, optional
        A column of whole numbers: each row stands for that many records, as in a
        frequency table exported with one row per group and its count; the class
        table is read straight from it (local and Dask engines).
    decimal_comma : sequence of str
        Columns whose numbers are written with a decimal comma and optional grouping
        (``1.234,5``, ``1 234,5``): read as ``1234.5``, so that numeric distances,
        intervals and charts see numbers; other values are kept as written.
    missing_columns : {"error", "null"}
        A dataset's file lacking an audited column is an error naming it, or its
        values of that column are null (and the report lists it per file).

    Returns
    -------
    ClassTable
    """
    from anonaudit.engines.spark import from_spark

    quasi_identifiers, sensitive = _roles(quasi_identifiers, sensitive)
    if engine not in ("local", "dask", "spark"):
        raise ParameterError(f"engine must be 'local', 'dask' or 'spark' (got {engine!r})")
    items: list[Any] = list(source) if isinstance(source, (list, tuple)) else [source]
    sources = open_inputs(
        [item for item in items if not is_spark_frame(item)],
        sep=sep,
        encoding=encoding,
        na_values=na_values,
        format=format,
        filter=filter,
        storage_options=storage_options,
        delta_version=delta_version,
        missing_columns=missing_columns,
    )
    roles: dict[str, Any] = {"quasi_identifiers": quasi_identifiers, "sensitive": sensitive}
    spark = [from_spark(item, **roles) for item in items if is_spark_frame(item)]
    if weights is not None and (engine != "local" or spark):
        raise ParameterError("--weights needs the local engine (not Dask or Spark)")
    if count is not None and (engine == "spark" or spark):
        raise ParameterError("--count needs the local or the Dask engine (not Spark)")
    for name in decimal_comma:
        if name not in (*quasi_identifiers, *sensitive):
            raise ParameterError(
                f"--decimal-comma names {name!r}, which is neither a quasi-identifier "
                "nor a sensitive column"
            )
    recoders = dict.fromkeys(decimal_comma, from_decimal_comma)
    if not sources and spark:
        return spark[0].merge(*spark[1:]).recode(recoders)
    if engine == "spark":
        from anonaudit.engines.spark import build_class_table as build_on_spark

        table = build_on_spark(sources, **roles, session=scheduler, progress=progress)
    elif engine == "dask":
        from anonaudit.engines.dask import build_class_table as build_on_dask

        table = build_on_dask(sources, **roles, scheduler=scheduler, progress=progress, count=count)
    else:
        table = build_class_table(sources, **roles, weights=weights, count=count, progress=progress)
    return (table.merge(*spark) if spark else table).recode(recoders)


def _roles(qi: Sequence[str], sa: Sequence[str]) -> tuple[list[str], list[str]]:
    if isinstance(qi, str) or isinstance(sa, str):
        raise ParameterError("quasi_identifiers and sensitive are lists of column names")
    qi, sa = list(qi), list(sa)
    if not qi:
        raise ParameterError("name at least one quasi-identifier column")
    for name in {n for n in qi + sa if (qi + sa).count(n) > 1}:
        raise ParameterError(f"column {name!r} is named twice among the QIs and SAs")
    return qi, sa
