"""Loading: inputs of any kind into one class table, by the engine asked for.

:func:`load` opens the inputs (:func:`anonaudit.sources.open_inputs`), has an engine
aggregate them in one streaming pass (:mod:`anonaudit.engines`) and merges the partial
class tables; a Spark DataFrame is aggregated by Spark itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

import pandas as pd
import pyarrow as pa

from anonaudit.classtable import ClassTable
from anonaudit.engines.local import build_class_table, limits_in_force
from anonaudit.errors import ParameterError
from anonaudit.settings.options import (
    LOAD_KEYWORDS,
    EngineOptions,
    ReadOptions,
    Roles,
    deprecated,
    from_keywords,
)
from anonaudit.sources import is_spark_frame, open_inputs
from anonaudit.sources.csv import from_decimal_comma

__all__ = ["Engine", "Source", "load"]

#: What :func:`audit` and :func:`load` accept as input.
Source: TypeAlias = (
    str | os.PathLike[str] | pd.DataFrame | pa.Table | Sequence[str | os.PathLike[str]]
)
#: Where the class table is built: in this process, on a Dask cluster, or by Spark.
Engine = Literal["local", "dask", "spark"]


def load(
    source: Source,
    roles: Roles | None = None,
    *,
    reading: ReadOptions | None = None,
    engine: EngineOptions | str | None = None,
    **keywords: Any,
) -> ClassTable:
    """Read ``source`` in one streaming pass into a :class:`ClassTable`.

    Parameters
    ----------
    source : path, URL, list of them, pandas.DataFrame, pyarrow.Table or Spark DataFrame
        CSV (sniffed separator unless ``reading.sep``) or Parquet files; directories, globs
        and object-storage URLs (``s3://bucket/events/``) of such files, hive-partitioned
        or not, or of a Delta table; a frame. All are aggregated in one pass (a Spark
        DataFrame by Spark itself) and merged.
    roles : Roles
        The QI columns (at least one; partition keys of a dataset are columns too), the
        SA columns, and:

        - ``weights``: a column of survey weights (the people each record stands for),
          summed per combination into :attr:`ClassTable.weights`; local engine only. A
          null, non-numeric or negative weight is an
          :class:`~anonaudit.errors.InputError`.
        - ``count``: a column of whole numbers: each row stands for that many records, as
          in a frequency table exported with one row per group and its count; the class
          table is read straight from it (local and Dask engines).
    reading : ReadOptions, optional
        How the inputs are read: CSV dialect, null markers (only ``na_values`` texts
        become null), dataset format, filters, object-storage settings, Delta version,
        missing columns, and ``decimal_comma``: columns whose numbers are written with a
        decimal comma and optional grouping (``1.234,5``), read as ``1234.5`` so that
        numeric distances, intervals and charts see numbers.
    engine : EngineOptions, optional
        Build the class table in this process, on a Dask cluster (``scheduler``: a
        running client or an address; ``None`` starts a local cluster) or with Spark;
        ``progress`` reports progress of long scans. (A name here is the deprecated
        ``engine=`` keyword.)
    **keywords
        The flat keyword arguments of earlier versions (``quasi_identifiers=``, ``sep=``,
        ``engine=``, ...), deprecated: they stop working in 0.3.

    Returns
    -------
    ClassTable

    Examples
    --------
    >>> import pandas as pd
    >>> table = load(pd.DataFrame({"zip": ["02134", "02139"], "disease": ["flu", "flu"]}),
    ...              Roles(["zip"], ["disease"]))
    >>> table.rows, table.quasi_identifiers
    (2, ('zip',))
    """
    if isinstance(engine, str):  # the deprecated engine name
        keywords["engine"], engine = engine, None
    if keywords:
        deprecated(
            "load",
            list(keywords),
            "pass Roles, ReadOptions, EngineOptions",
            allowed=LOAD_KEYWORDS,
            alongside=roles is not None or reading is not None or engine is not None,
        )
        split = from_keywords(keywords, quasi_identifiers=(), sensitive=())
        roles = Roles(**split.roles) if "quasi_identifiers" in split.roles else None
        reading, engine = split.reading, split.engine
    if roles is None:
        raise ParameterError("name the columns' roles: Roles(quasi_identifiers, sensitive)")
    reading = reading or ReadOptions()
    engine = engine or EngineOptions()
    with limits_in_force(engine):
        return _built(source, roles, reading, engine)


def _built(source: Source, roles: Roles, reading: ReadOptions, engine: EngineOptions) -> ClassTable:
    """:func:`load`, its options resolved and its limits in force."""
    from anonaudit.engines.spark import from_spark

    quasi_identifiers, sensitive = list(roles.quasi_identifiers), list(roles.sensitive)
    items: list[Any] = list(source) if isinstance(source, (list, tuple)) else [source]
    sources = open_inputs(
        [item for item in items if not is_spark_frame(item)], **reading.keywords()
    )
    named: dict[str, Any] = {"quasi_identifiers": quasi_identifiers, "sensitive": sensitive}
    spark = [from_spark(item, **named) for item in items if is_spark_frame(item)]
    weights, count, progress = roles.weights, roles.count, engine.progress
    if weights is not None and (engine.engine != "local" or spark):
        raise ParameterError("--weights needs the local engine (not Dask or Spark)")
    if count is not None and (engine.engine == "spark" or spark):
        raise ParameterError("--count needs the local or the Dask engine (not Spark)")
    for name in reading.decimal_comma:
        if name not in roles.columns:
            raise ParameterError(
                f"--decimal-comma names {name!r}, which is neither a quasi-identifier "
                "nor a sensitive column"
            )
    recoders = dict.fromkeys(reading.decimal_comma, from_decimal_comma)
    if not sources and spark:
        return spark[0].merge(*spark[1:]).recode(recoders)
    if engine.engine == "spark":
        from anonaudit.engines.spark import build_class_table as build_on_spark

        table = build_on_spark(sources, **named, session=engine.scheduler, progress=progress)
    elif engine.engine == "dask":
        from anonaudit.engines.dask import build_class_table as build_on_dask

        table = build_on_dask(
            sources, **named, scheduler=engine.scheduler, progress=progress, count=count
        )
    else:
        table = build_class_table(sources, **named, weights=weights, count=count, progress=progress)
    return (table.merge(*spark) if spark else table).recode(recoders)
