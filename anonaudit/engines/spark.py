"""Spark DataFrames: Spark's own ``groupBy(...).count()`` is a partial class table.

Nothing here imports pyspark (an optional, heavy dependency): the DataFrame's own
methods do the work on the Spark cluster, and only the counts, one row per distinct
(QI, SA) combination, are collected to the driver. Values are cast to text by Spark
(``CAST(x AS STRING)``), which writes integers, dates and strings as a file audit
does but floating-point numbers with a trailing ``.0`` (``30.0``, where pyarrow writes
``30``): cast such columns in Spark first if they must agree with a file audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anonaudit.classtable import ClassTable, SourceStats
from anonaudit.errors import ColumnError

__all__ = ["from_spark", "is_spark_frame"]

_COUNT = "__anonaudit_count__"


def is_spark_frame(obj: Any) -> bool:
    """Whether ``obj`` is a ``pyspark.sql.DataFrame`` (checked without importing pyspark)."""
    return type(obj).__module__.startswith("pyspark.") and hasattr(obj, "groupBy")


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
    quoted = ["`" + name.replace("`", "``") + "`" for name in columns]
    text = frame.selectExpr(*[f"CAST({q} AS STRING) AS {q}" for q in quoted])
    counts = text.groupBy(*columns).agg({"*": "count"}).toPandas()
    counts.columns = [*columns, _COUNT]
    rows = int(counts[_COUNT].sum())
    return ClassTable.from_frame(
        counts,
        quasi_identifiers=quasi_identifiers,
        sensitive=sensitive,
        count=_COUNT,
        source=SourceStats("<pyspark.sql.DataFrame>", "spark", rows),
    )
