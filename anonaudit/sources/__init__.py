"""Loaders: turn a file, a dataset or a frame into a stream of Arrow record batches.

A source knows its column names and yields, for the columns asked for, record batches
whose columns are all text (values compared as written; nulls kept as nulls). A dataset
(:mod:`anonaudit.sources.dataset`: directories, globs, object-storage URLs, Delta tables)
is made of parts, its files, each a source of its own. Each file format (CSV, Parquet,
Delta) is declared once, by the module that reads it, and found through the registry
(:mod:`anonaudit.sources.formats`). A source never aggregates: building the class table
is the engine's job (:mod:`anonaudit.engines`).
"""

from __future__ import annotations

from anonaudit.sources.csv import CsvSource
from anonaudit.sources.dataset import DatasetOptions, DatasetSource, FragmentSource, open_dataset
from anonaudit.sources.frames import FrameSource, is_spark_frame
from anonaudit.sources.inputs import open_inputs, open_source, require_rereadable
from anonaudit.sources.parquet import ParquetSource
from anonaudit.sources.protocol import MultiPartSource, Source, SourceInfo, file_sha256

__all__ = [
    "CsvSource",
    "DatasetOptions",
    "DatasetSource",
    "FragmentSource",
    "FrameSource",
    "MultiPartSource",
    "ParquetSource",
    "Source",
    "SourceInfo",
    "file_sha256",
    "is_spark_frame",
    "open_dataset",
    "open_inputs",
    "open_source",
    "require_rereadable",
]
