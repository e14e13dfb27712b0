"""In-memory pandas DataFrames and pyarrow Tables."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from anonaudit.classtable import to_text_batch
from anonaudit.errors import ColumnError, MalformedFileError
from anonaudit.sources.protocol import SourceInfo

__all__ = ["FrameSource", "is_spark_frame"]

_BATCH_ROWS = 1 << 20


def is_spark_frame(obj: Any) -> bool:
    """Whether ``obj`` is a ``pyspark.sql.DataFrame`` (checked without importing pyspark).

    Spark aggregates such a frame itself (:mod:`anonaudit.engines.spark`); it is not a
    source of record batches.
    """
    return type(obj).__module__.startswith("pyspark.") and hasattr(obj, "groupBy")


class FrameSource:
    """A ``pandas.DataFrame`` or ``pyarrow.Table`` held in memory.

    Parameters
    ----------
    frame : pandas.DataFrame or pyarrow.Table
        The data. Column names must be unique strings.
    """

    def __init__(self, frame: pd.DataFrame | pa.Table) -> None:
        kind = "pandas" if isinstance(frame, pd.DataFrame) else "arrow"
        labels = list(frame.columns) if isinstance(frame, pd.DataFrame) else frame.column_names
        names = [str(name) for name in labels]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise ColumnError(
                f"<{kind} frame>: column {duplicated[0]!r} appears twice; rename one of them"
            )
        self._frame = frame
        self.columns = tuple(names)
        self._labels = dict(zip(names, labels, strict=True))
        module = type(frame).__module__.split(".")[0]
        self.info = SourceInfo(name=f"<{module}.{type(frame).__name__}>", format=kind)

    @staticmethod
    def accepts(obj: Any) -> bool:
        """Whether ``obj`` is a frame this source can read."""
        return isinstance(obj, (pd.DataFrame, pa.Table))

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Yield ``columns`` as text record batches, without copying the whole frame."""
        if len(self._frame) == 0:
            raise MalformedFileError(f"{self.info.name}: the frame has no rows")
        frame = self._frame
        if isinstance(frame, pd.DataFrame):
            labels = [self._labels[name] for name in columns]
            for start in range(0, len(frame), _BATCH_ROWS):
                chunk = frame.iloc[start : start + _BATCH_ROWS][labels]
                chunk = chunk.set_axis(list(columns), axis=1)
                yield to_text_batch(_pandas_to_arrow(chunk), columns)
        else:
            for batch in frame.select(list(columns)).to_batches(max_chunksize=_BATCH_ROWS):
                yield to_text_batch(batch, columns)


def _pandas_to_arrow(chunk: pd.DataFrame) -> pa.Table:
    try:
        return pa.Table.from_pandas(chunk, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        # Mixed Python objects in one column: fall back to their str(), keeping nulls.
        as_text = {
            name: pa.array(
                [None if _is_missing(v) else str(v) for v in chunk[name].tolist()], pa.string()
            )
            for name in chunk.columns
        }
        return pa.table(as_text)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value is pd.NA
