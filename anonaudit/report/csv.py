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
import pyarrow.compute as pc

__all__ = ["defuse", "table_to_csv"]

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


def defuse(array: pa.Array) -> pa.Array:
    """``array`` with its formula-looking text cells defused as :func:`table_to_csv` does.

    For writers that stream Arrow batches to CSV: only the distinct values that start
    with a formula character are converted in Python; other arrays (numbers) and other
    cells are returned as they are, nulls included.

    >>> defuse(pa.array(["=1+1", "-2", "a", None, "=1+1"])).to_pylist()
    ["'=1+1", '-2', 'a', None, "'=1+1"]
    """
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return array
    risky = pc.starts_with(array, _FORMULA_START[0])
    for start in _FORMULA_START[1:]:
        risky = pc.or_(risky, pc.starts_with(array, start))
    risky = pc.fill_null(risky, False)
    if not pc.any(risky).as_py():
        return array
    found = pc.unique(array.filter(risky))
    fixed = pa.array([_safe(value) for value in found.to_pylist()], array.type)
    return pc.if_else(risky, fixed.take(pc.index_in(array, value_set=found)), array)


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
