"""CSV output, safe to open in a spreadsheet: the one CSV writer of anonaudit.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by
spreadsheet programs as a formula (CSV injection; OWASP, "CSV Injection"). Such text
cells are written with a leading apostrophe, which spreadsheets show as text, and so is
every line of a cell that spans lines (a reader that splits lines on a bare carriage
return would otherwise start a cell there); numbers such as ``-3`` are left as they are.
Every text cell is quoted, so a separator, quote, line feed or carriage return in a
value stays inside its cell. A null is an empty cell.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

__all__ = ["csv_writer", "defuse", "table_to_csv"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LINE_BREAK = ("\r", "\n")
# A line start (the value's, or after a line break) followed by a formula character.
_FORMULA_LINE = re.compile(r"(^|\r\n|\r|\n)(?=[=+\-@\t\r])")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _safe(value: str) -> str:
    """``value`` with an apostrophe before every line that starts like a formula."""
    if _NUMBER.fullmatch(value):
        return value
    return _FORMULA_LINE.sub(lambda found: found.group(1) + "'", value)


def defuse(array: pa.Array) -> pa.Array:
    """``array`` with its formula-looking text cells defused (see the module).

    Only the distinct values that start with a formula character or hold a line break
    are converted in Python; other arrays (numbers) and other cells are returned as
    they are, nulls included. A dictionary array comes back decoded.

    >>> defuse(pa.array(["=1+1", "-2", "a", None, "x\\r=cmd"])).to_pylist()
    ["'=1+1", '-2', 'a', None, "x\\r'=cmd"]
    """
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return array
    risky = pc.starts_with(array, _FORMULA_START[0])
    for start in _FORMULA_START[1:]:
        risky = pc.or_(risky, pc.starts_with(array, start))
    for brk in _LINE_BREAK:
        risky = pc.or_(risky, pc.match_substring(array, brk))
    risky = pc.fill_null(risky, False)
    if not pc.any(risky).as_py():
        return array
    found = pc.unique(array.filter(risky))
    fixed = pa.array([_safe(value) for value in found.to_pylist()], array.type)
    return pc.if_else(risky, fixed.take(pc.index_in(array, value_set=found)), array)


@contextmanager
def csv_writer(
    sink: str | os.PathLike[str] | pa.NativeFile, schema: pa.Schema, sep: str = ","
) -> Iterator[Callable[[pa.RecordBatch], None]]:
    """Write record batches of ``schema`` to ``sink`` as CSV, header first.

    Text cells are quoted and defused (:func:`defuse`), header names too; nulls are
    empty cells. Yields the function that writes one batch.

    Parameters
    ----------
    sink : path or pyarrow.NativeFile
        Where to write (a path is created or truncated: write to
        :func:`anonaudit.util.atomic_path`'s path to replace a file safely).
    schema : pyarrow.Schema
        The batches' schema; dictionary columns are written as their values.
    sep : str
        The field separator.
    """
    safe = pa.schema(
        [
            (
                _safe(field.name),
                field.type.value_type if pa.types.is_dictionary(field.type) else field.type,
            )
            for field in schema
        ]
    )
    options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed")
    with pacsv.CSVWriter(sink, safe, write_options=options) as writer:

        def write(batch: pa.RecordBatch) -> None:
            arrays = [defuse(array) for array in batch.columns]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=safe))

        yield write


def table_to_csv(table: pa.Table) -> str:
    """The table as CSV text with a header row, written by :func:`csv_writer`.

    >>> print(table_to_csv(pa.table({"q": ["=1+1", "-2", None], "count": [1, 2, 3]})))
    "q","count"
    "'=1+1",1
    "-2",2
    ,3
    <BLANKLINE>
    """
    sink = pa.BufferOutputStream()
    with csv_writer(sink, table.schema) as write:
        for batch in table.to_batches():
            write(batch)
    return bytes(sink.getvalue()).decode("utf-8")
