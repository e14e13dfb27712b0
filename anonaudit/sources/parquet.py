"""Parquet files, streamed row group by row group with pyarrow."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from anonaudit.errors import MalformedFileError
from anonaudit.sources.base import SourceInfo, to_string_batch

__all__ = ["ParquetSource"]

_BATCH_ROWS = 1 << 20


class ParquetSource:
    """One Parquet file; typed columns are turned into their text form.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._file = pq.ParquetFile(str(path))
        except (pa.ArrowInvalid, OSError) as exc:
            raise MalformedFileError(f"{path}: not a readable Parquet file ({exc})") from None
        self.columns = tuple(self._file.schema_arrow.names)
        self.info = SourceInfo(name=str(path), format="parquet", size_bytes=path.stat().st_size)

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` as string record batches."""
        if self._file.metadata.num_rows == 0:
            raise MalformedFileError(f"{self.path}: the file has no rows")
        try:
            for batch in self._file.iter_batches(batch_size=_BATCH_ROWS, columns=list(columns)):
                yield to_string_batch(batch, columns)
        except (pa.ArrowInvalid, OSError) as exc:
            raise MalformedFileError(f"{self.path}: cannot read: {exc}") from None
