"""Parquet files, streamed row group by row group with pyarrow."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from anonaudit.errors import MalformedFileError
from anonaudit.sources.base import SourceInfo, local_sha256, require_flat, to_text_batch
from anonaudit.sources.dataset import damaged_pages

__all__ = ["ParquetSource"]

_BATCH_ROWS = 1 << 20
_MAGIC = b"PAR1"  # at the start and at the end of every Parquet file


class ParquetSource:
    """One Parquet file; typed columns are turned into their text form.

    Holds no open file, so it can be pickled to a Dask worker.

    pyarrow reads a Parquet file by ranges (the footer, then the column chunks asked
    for), not as one stream that could be hashed on the way: :meth:`hash_file` hashes
    the whole file in a read of its own, which engines call once the audit has read it.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with open(path, "rb") as stream:
                start = stream.read(len(_MAGIC))
            metadata = pq.read_metadata(str(path))
        except (pa.ArrowInvalid, OSError) as exc:
            raise MalformedFileError(f"{path}: not a readable Parquet file ({exc})") from None
        if start != _MAGIC:
            raise MalformedFileError(
                f"{path}, byte 0: the file does not start with the Parquet magic number "
                f"PAR1 (found {start!r}); it is damaged or not Parquet"
            )
        self._schema = schema = metadata.schema.to_arrow_schema()
        self._rows = metadata.num_rows
        # Text columns as dictionaries: see anonaudit.sources.dataset.dictionary_format.
        self._dictionary = [field.name for field in schema if pa.types.is_string(field.type)]
        self.columns = tuple(schema.names)
        self.info = SourceInfo(name=str(path), format="parquet", size_bytes=path.stat().st_size)
        self._sha256: str | None = None

    @property
    def sha256(self) -> str | None:
        """The SHA-256 of the file's bytes (lowercase hex) once :meth:`hash_file` took it."""
        return self._sha256

    def hash_file(self) -> str | None:
        """:attr:`sha256`, hashing the whole file now (once) if it was not yet.

        ``None`` if the file can no longer be read.
        """
        if self._sha256 is None:
            self._sha256 = local_sha256(self.path)
        return self._sha256

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` as text record batches."""
        if self._rows == 0:
            raise MalformedFileError(f"{self.path}: the file has no rows")
        require_flat(self._schema, columns, str(self.path))
        try:
            file = pq.ParquetFile(
                str(self.path), read_dictionary=self._dictionary, page_checksum_verification=True
            )
            for batch in file.iter_batches(batch_size=_BATCH_ROWS, columns=list(columns)):
                yield to_text_batch(batch, columns)
        except OSError as exc:
            raise damaged_pages(str(self.path), exc) or MalformedFileError(
                f"{self.path}: cannot read: {exc}"
            ) from None
        except pa.ArrowInvalid as exc:
            raise MalformedFileError(f"{self.path}: cannot read: {exc}") from None
