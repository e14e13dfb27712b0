"""Engines: the only code that turns record batches into class tables.

The local engine streams each source's batches through DuckDB's hash aggregation and
merges the per-source partial tables. Other engines (distributed) produce the same
:class:`~anonaudit.classtable.ClassTable`.
"""

from __future__ import annotations

from anonaudit.engines.local import build_class_table

__all__ = ["build_class_table"]
