"""Parquet files, streamed row group by row group with pyarrow."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from anonaudit.classtable import to_text_batch
from anonaudit.errors import InputError, MalformedFileError
from anonaudit.sources.protocol import Format, SourceInfo, local_sha256, require_flat

if TYPE_CHECKING:
    from anonaudit.sources.options import CsvOptions

__all__ = ["FORMAT", "ParquetSource", "check_decoded", "check_row_groups", "damaged_pages"]

_BATCH_ROWS = 1 << 20
_MAGIC = b"PAR1"  # at the start and at the end of every Parquet file
#: A row group's (a batch's) decoded columns may take this share of the memory there is:
#: the reader holds a row group's pages while it decodes them, and a batch is copied.
_SHARE = 4


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

    def read_type(self, name: str) -> pa.DataType | None:
        """The type column ``name`` is read as (before any text), ``None`` if none."""
        index = self._schema.get_field_index(name)
        return None if index < 0 else self._schema.field(index).type

    def batches(
        self, columns: Sequence[str], *, integers: Collection[str] = ()
    ) -> Iterator[pa.RecordBatch]:
        """Stream ``columns`` as text record batches; those named in ``integers`` that
        hold whole numbers stay as they are (:func:`~anonaudit.classtable.to_text_batch`)."""
        if self._rows == 0:
            raise MalformedFileError(f"{self.path}: the file has no rows")
        require_flat(self._schema, columns, str(self.path))
        try:
            file = pq.ParquetFile(
                str(self.path), read_dictionary=self._dictionary, page_checksum_verification=True
            )
            check_row_groups(file.metadata, columns, str(self.path))
            for batch in file.iter_batches(batch_size=_BATCH_ROWS, columns=list(columns)):
                check_decoded(batch, columns, str(self.path))
                yield to_text_batch(batch, columns, integers=integers)
        except OSError as exc:
            raise damaged_pages(str(self.path), exc) or MalformedFileError(
                f"{self.path}: cannot read: {exc}"
            ) from None
        except pa.ArrowInvalid as exc:
            raise MalformedFileError(f"{self.path}: cannot read: {exc}") from None


def damaged_pages(name: str, exc: OSError) -> MalformedFileError | None:
    """The one-line error for a Parquet page whose CRC does not match; ``None`` if not that.

    A file written with page checksums (``write_page_checksum``) is checked page by
    page as it is read: a changed byte is refused instead of counted as another value.
    """
    if "checksum" not in str(exc).lower():
        return None
    first = str(exc).strip().splitlines()[0]
    return MalformedFileError(
        f"{name}: damaged: a data page fails its CRC checksum ({first}); "
        "the file changed after it was written: restore it from a good copy or write it again"
    )


def _budget() -> int:
    """The bytes one row group or batch may decode to: a share of the memory there is."""
    from anonaudit.settings.work import limits, memory_budget

    return memory_budget(limits().memory_limit) // _SHARE


def _size(size: int) -> str:
    return f"{size / 1024**3:,.1f} GiB" if size >= 1024**3 else f"{size / 1024**2:,.0f} MiB"


def check_row_groups(metadata: pq.FileMetaData, columns: Sequence[str], name: str) -> None:
    """Refuse, before reading, a row group whose ``columns`` decode to too much memory.

    The footer says each column chunk's size once its pages are decompressed
    (``total_uncompressed_size``): a few KiB of zstd can hold gigabytes of a repeated
    value. The bound is a quarter of the memory there is
    (:func:`anonaudit.settings.work.memory_budget`,
    lowered by ``--memory-limit``).

    Raises
    ------
    InputError
        Naming the file, the row group, its size and the memory there is.
    """
    wanted = set(columns)
    budget = _budget()
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        size = sum(
            row_group.column(i).total_uncompressed_size
            for i in range(row_group.num_columns)
            if row_group.column(i).path_in_schema.split(".")[0] in wanted
        )
        if size > budget:
            raise InputError(
                f"{name}: row group {group + 1} decompresses to {_size(size)} "
                f"({row_group.num_rows:,} rows of the audited columns), more than the "
                f"{_size(budget)} it may take of the memory there is; rewrite the file with "
                "smaller row groups, or run where more memory is free"
            )


def check_decoded(batch: pa.RecordBatch, columns: Sequence[str], name: str) -> None:
    """Refuse a batch whose dictionary-coded ``columns`` would decode to too much memory.

    A Parquet dictionary page holds each distinct value once and the data pages only
    refer to it: 10 KiB of file can stand for a 1 MiB value repeated 20,000 times. Such
    a column is read coded; this sums what its values would take decoded.

    Raises
    ------
    InputError
        Naming the file, the column and the decoded size.
    """
    budget: int | None = None
    for column in columns:
        array = batch.column(column)
        if not pa.types.is_dictionary(array.type):
            continue
        values = array.dictionary
        if not (pa.types.is_string(values.type) or pa.types.is_binary(values.type)):
            continue
        budget = _budget() if budget is None else budget
        longest = int(pc.max(pc.binary_length(values)).as_py() or 0)
        if longest * len(array) <= budget:  # cheap to tell: even all the longest fit
            continue
        lengths = pc.take(pc.binary_length(values), array.indices)
        decoded = int(pc.sum(lengths.cast(pa.int64())).as_py() or 0)
        if decoded > budget:
            raise InputError(
                f"{name}: column {column!r} decodes to {_size(decoded)} in {batch.num_rows:,} "
                f"rows (values of up to {_size(longest)} each), "
                f"more than the {_size(budget)} it may take of the memory there is; values "
                "this long are no quasi-identifiers: check the file, or audit other columns"
            )


def _open_file(path: Path, csv: CsvOptions | None) -> ParquetSource:
    """A local Parquet file (the CSV options do not apply)."""
    return ParquetSource(path)


#: Parquet files, alone or as a dataset's (and the files of a Delta table, read as its).
FORMAT = Format(
    name="parquet", title="Parquet", suffixes=(".parquet", ".pq", ".parq"), open_file=_open_file
)
