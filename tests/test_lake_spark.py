"""A Spark DataFrame's class table, aggregated by Spark's ``groupBy``.

Spark is not installed for the tests (it needs a JVM); a stand-in with the four
DataFrame methods anonaudit calls (``columns``, ``selectExpr``, ``groupBy().agg()``,
``toPandas``), backed by pandas, checks the wiring: the counts Spark would return
become the same class table as the rows themselves.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from lake_data import QI, SA, rows_of, whole_table

import anonaudit
from anonaudit.errors import ColumnError

_CAST = re.compile(r"CAST\(`(?P<name>[^`]+)` AS STRING\) AS `(?P=name)`")


class FakeSparkFrame:
    """Just enough of ``pyspark.sql.DataFrame`` for :func:`anonaudit.engines.spark.from_spark`."""

    def __init__(self, frame: pd.DataFrame, keys: list[str] | None = None) -> None:
        self.frame = frame
        self.keys = keys

    @property
    def columns(self) -> list[str]:
        return list(self.frame.columns)

    def selectExpr(self, *expressions: str) -> FakeSparkFrame:  # noqa: N802 - Spark's name
        names = [_CAST.fullmatch(e)["name"] for e in expressions]  # type: ignore[index]
        text = {name: self.frame[name].astype(pd.StringDtype()) for name in names}
        return FakeSparkFrame(pd.DataFrame(text))

    def groupBy(self, *names: str) -> FakeSparkFrame:  # noqa: N802 - Spark's name
        return FakeSparkFrame(self.frame, list(names))

    def agg(self, spec: dict[str, str]) -> FakeSparkFrame:
        assert spec == {"*": "count"} and self.keys is not None
        grouped = self.frame.groupby(self.keys, dropna=False).size()
        return FakeSparkFrame(grouped.rename("count(1)").reset_index())

    def toPandas(self) -> pd.DataFrame:  # noqa: N802 - Spark's name
        return self.frame


FakeSparkFrame.__module__ = "pyspark.sql.dataframe"


def test_spark_counts_equal_the_rows() -> None:
    # Nullable integers, as Spark holds them (pandas' default would make them floats).
    frame = whole_table().to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    table = anonaudit.load(FakeSparkFrame(frame), quasi_identifiers=QI, sensitive=SA)
    assert rows_of(table) == rows_of(
        anonaudit.load(whole_table(), quasi_identifiers=QI, sensitive=SA)
    )
    assert (table.sources[0].format, table.sources[0].rows) == ("spark", len(frame))


def test_spark_missing_column() -> None:
    frame: Any = FakeSparkFrame(pd.DataFrame({"zip": ["1"]}))
    with pytest.raises(ColumnError, match=r"no column named 'age'; the columns are: zip"):
        anonaudit.load(frame, quasi_identifiers=["zip", "age"])
