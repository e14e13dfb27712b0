"""The names the other layers take from the sources, where they have always found them.

The source protocol and the helpers readers share are defined in
:mod:`anonaudit.sources.protocol`, :func:`open_source` (the dispatcher) in
:mod:`anonaudit.sources.inputs`; this module gives both. It stands above every module of
:mod:`anonaudit.sources` (the dispatcher imports every reader), so none of them imports
it: they import :mod:`~anonaudit.sources.protocol`, which imports none of them.
"""

from __future__ import annotations

from anonaudit.sources.inputs import open_source
from anonaudit.sources.protocol import (
    MISSING_COLUMNS,
    Format,
    MissingColumns,
    MultiPartSource,
    Source,
    SourceInfo,
    absent_columns,
    file_sha256,
    fingerprint,
    fingerprint_now,
    local_sha256,
    parts_of,
    require_columns,
    require_flat,
)

__all__ = [
    "MISSING_COLUMNS",
    "Format",
    "MissingColumns",
    "MultiPartSource",
    "Source",
    "SourceInfo",
    "absent_columns",
    "file_sha256",
    "fingerprint",
    "fingerprint_now",
    "local_sha256",
    "open_source",
    "parts_of",
    "require_columns",
    "require_flat",
]
