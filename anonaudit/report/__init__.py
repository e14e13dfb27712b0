"""Renderers: typed results in, text out. Nothing here computes a measure."""

from __future__ import annotations

from anonaudit.report.json import SCHEMA_VERSION, dumps, report_to_dict
from anonaudit.report.text import summary

__all__ = ["SCHEMA_VERSION", "dumps", "report_to_dict", "summary"]
