"""Row and partition selection: ``--filter`` texts -> a pyarrow dataset expression.

Each filter is one comparison; several filters must all hold::

    day=2024-01-02          equal (also ==)
    region!=test            not equal
    day>=2024-01-01         also <, <=, >
    region in eu,us         one of several values

The value is read as the column's type in the dataset (text for partition columns, so
ISO dates compare in calendar order; numbers numerically for numeric file columns).
A filter on a partition column skips the files of other partitions without opening them.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.errors import ColumnError, ParameterError

__all__ = ["Filter", "parse_filter", "to_expression"]

_IN = re.compile(r"^\s*(?P<column>.+?)\s+in\s+(?P<values>.+?)\s*$")
_COMPARISON = re.compile(
    r"^\s*(?P<column>[^=!<>]+?)\s*(?P<op>==|=|!=|<=|>=|<|>)\s*(?P<value>.*?)\s*$"
)
_COMPARE = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_OPERATORS = (*_COMPARE, "in")


@dataclass(frozen=True)
class Filter:
    """One parsed comparison.

    Attributes
    ----------
    column : str
        The column (or partition key) compared.
    op : str
        One of ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``.
    values : tuple of str
        The value, or the values for ``in``, as written.
    """

    column: str
    op: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        if self.op == "in":
            return f"{self.column} in {','.join(self.values)}"
        return f"{self.column}{self.op}{self.values[0]}"


def parse_filter(text: str) -> Filter:
    """Parse one filter text.

    >>> parse_filter("day = 2024-01-02")
    Filter(column='day', op='=', values=('2024-01-02',))
    >>> str(parse_filter("region in eu, us"))
    'region in eu,us'
    """
    match = _IN.match(text)
    if match:
        values = tuple(v.strip() for v in match["values"].split(",") if v.strip())
        if values:
            return Filter(match["column"], "in", values)
    match = _COMPARISON.match(text)
    if match is None or not match["column"]:
        raise ParameterError(
            f"cannot read --filter {text!r}; write COLUMN OP VALUE with OP one of "
            f"{' '.join(_OPERATORS)}, e.g. day=2024-01-02 or region in eu,us"
        )
    op = "=" if match["op"] == "==" else match["op"]
    return Filter(match["column"], op, (match["value"],))


def to_expression(filters: Sequence[Filter], schema: pa.Schema, where: str) -> pc.Expression:
    """The conjunction of ``filters`` as an expression typed against ``schema``.

    Raises
    ------
    ColumnError
        A filter names a column the dataset does not have (the message lists them).
    ParameterError
        A value that cannot be read as the column's type.
    """
    expression: pc.Expression | None = None
    for item in filters:
        if item.column not in schema.names:
            raise ColumnError(
                f"{where}: --filter {item} names no column of the dataset; "
                f"the columns are: {', '.join(schema.names)}"
            )
        kind = schema.field(item.column).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        values = [_typed(value, kind, item, where) for value in item.values]
        field = pc.field(item.column)
        if item.op == "in":
            term = field.isin(pa.array([value.as_py() for value in values], kind))
        else:
            term = _COMPARE[item.op](field, values[0])
        expression = term if expression is None else expression & term
    assert expression is not None
    return expression


def _typed(value: str, kind: pa.DataType, item: Filter, where: str) -> pa.Scalar:
    try:
        return pa.scalar(value, pa.string()).cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ParameterError(
            f"{where}: --filter {item}: {value!r} is not a value of column "
            f"{item.column!r} (type {kind})"
        ) from None
