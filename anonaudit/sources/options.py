"""The options inputs are read with: a CSV file's (:class:`CsvOptions`) and a dataset's
(:class:`DatasetOptions`).

Plain values, checked when made, in a module of their own below the readers: a format's
declaration (:class:`~anonaudit.sources.protocol.Format`) takes them, and so does every
reader. :mod:`anonaudit.sources.csv` and :mod:`anonaudit.sources.dataset` export them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anonaudit.errors import ParameterError
from anonaudit.settings.names import FORMATS, MISSING_COLUMNS, MissingColumns
from anonaudit.sources.filters import parse_filter

if TYPE_CHECKING:
    from anonaudit.sources.storage import StorageOptions

__all__ = ["CsvOptions", "DatasetOptions"]


@dataclass(frozen=True)
class CsvOptions:
    """How to read CSV files.

    Attributes
    ----------
    sep : str or None
        Field separator; ``None`` sniffs it from the first 64 KiB among ``, ; TAB |``.
    encoding : str
        Text encoding of the file, e.g. ``"utf-8"`` or ``"latin-1"``.
    na_values : tuple of str
        Cell texts read as null. Only the empty field by default: ``"NA"`` stays a value.
    """

    sep: str | None = None
    encoding: str = "utf-8"
    na_values: tuple[str, ...] = ("",)

    def __post_init__(self) -> None:
        if self.sep is not None and len(self.sep) != 1:
            raise ParameterError(f"--sep must be one character (got {self.sep!r})")


@dataclass(frozen=True)
class DatasetOptions:
    """How to find and select a dataset's records.

    Attributes
    ----------
    format : {"parquet", "csv", "delta"} or None
        The files' format; ``None`` infers it from the suffixes (or ``_delta_log``).
    filters : tuple of str
        ``--filter`` texts (:mod:`anonaudit.sources.filters`), all of which must hold.
    storage_options : mapping of str to str
        Object-storage settings (:mod:`anonaudit.sources.storage`).
    delta_version : int or None
        The Delta table version to read; ``None`` reads the latest.
    missing_columns : {"error", "null"}
        A file lacking an audited column that other files have is an error naming
        it (``"error"``), or its values of that column are null (``"null"``).
    """

    format: str | None = None
    filters: tuple[str, ...] = ()
    storage_options: StorageOptions = field(default_factory=dict)
    delta_version: int | None = None
    missing_columns: MissingColumns = "error"

    def __post_init__(self) -> None:
        if self.missing_columns not in MISSING_COLUMNS:
            raise ParameterError(
                f"unknown --missing-columns {self.missing_columns!r}; "
                f"choose one of {', '.join(MISSING_COLUMNS)}"
            )
        if self.format is not None and self.format not in FORMATS:
            raise ParameterError(
                f"unknown --format {self.format!r}; choose one of {', '.join(FORMATS)}"
            )
        if self.delta_version is not None and self.delta_version < 0:
            raise ParameterError(f"--delta-version must be >= 0 (got {self.delta_version})")
        for text in self.filters:
            parse_filter(text)

    @property
    def given(self) -> bool:
        """Whether any option asks for dataset reading (a plain file path otherwise)."""
        return bool(
            self.format or self.filters or self.storage_options or self.delta_version is not None
        )
