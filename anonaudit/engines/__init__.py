"""Engines: the only code that turns record batches into class tables.

The local engine (:mod:`~anonaudit.engines.local`) streams every part of every source
through one DuckDB hash aggregation. The Dask engine (:mod:`~anonaudit.engines.dask`)
builds one partial table per part on its workers and merges them; a Spark DataFrame is
aggregated by Spark (:mod:`~anonaudit.engines.spark`). All produce the same
:class:`~anonaudit.classtable.ClassTable`; the checks never know which built it.
"""

from __future__ import annotations

from anonaudit.engines.local import build_class_table

__all__ = ["build_class_table"]
