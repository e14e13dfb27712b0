"""CSV output of a released table, safe to open in a spreadsheet.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by
spreadsheet programs as a formula (CSV injection; OWASP, "CSV Injection"). Such text
cells are written with a leading apostrophe, which spreadsheets show as text; numbers
such as ``-3`` are left as they are. A null is an empty cell.
"""

from __future__ import annotations

import csv
import io

import pyarrow as pa

__all__ = ["table_to_csv"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _safe(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


def table_to_csv(table: pa.Table) -> str:
    """The table as CSV text with a header row, formula-looking text defused.

    >>> print(table_to_csv(pa.table({"q": ["=1+1", "-2", None], "count": [1, 2, 3]})))
    q,count
    '=1+1,1
    -2,2
    ,3
    <BLANKLINE>
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_safe(name) for name in table.column_names])
    columns = [table.column(name).to_pylist() for name in table.column_names]
    for row in zip(*columns, strict=True):
        writer.writerow([_safe(value) for value in row])
    return out.getvalue()
