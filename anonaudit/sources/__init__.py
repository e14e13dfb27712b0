"""Loaders: turn a file or a frame into a stream of Arrow record batches.

A source knows its column names and yields, for the columns asked for, record batches
whose columns are all strings (values compared as written; nulls kept as nulls). It never
aggregates: building the class table is the engine's job (:mod:`anonaudit.engines`).
"""

from __future__ import annotations

from anonaudit.sources.base import Source, SourceInfo, open_source
from anonaudit.sources.csv import CsvSource
from anonaudit.sources.frames import FrameSource
from anonaudit.sources.parquet import ParquetSource

__all__ = ["CsvSource", "FrameSource", "ParquetSource", "Source", "SourceInfo", "open_source"]
