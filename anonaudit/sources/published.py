"""Published tables read from CSV files: long or wide, with markers, rounding and totals.

The readers of the model in :mod:`anonaudit.published`. A file holds one table of counts
or of sums, in one of two layouts:

- **long**: one row per cell, a column per dimension holding the cell's codes, and one
  column holding what is published (``region,sex,count``);
- **wide**, as spreadsheets export cross-tabs: the first column holds the codes of the
  dimension down the rows, the header row the codes of the dimension across (two header
  rows: two dimensions across, the first row's codes repeated, or left blank after their
  first column, over the second's)::

      education \\ race,Black,White,Total        sex,Female,,Male,
      HS,3,x,15                                 education,Black,White,Black,White
      Bachelors,<5,20,23                        HS,3,x,4,12

  The cell above the first column names the dimension down (``row`` when blank); a cell
  ``A \\ B`` (or ``A / B``) names the dimension down ``A`` and the one across ``B``
  (``column`` otherwise; ``column 1`` and ``column 2`` for two). A first header row of
  two names the first dimension across by its first cell. pandas writes a pivot table
  with its dimensions named another way, which is read too: the header rows' first
  cells name the dimensions across, and a row right under them with only its first cell
  filled names the dimension down.

**Finding the layout** (``layout="auto"``): a file is wide when it has at least three
columns, none of its header names is a value word (``count``, ``n``, ``freq``,
``value``, ... :data:`VALUE_WORDS`), no ``dimensions`` or ``value`` column is given,
no code repeats in its first column below the header rows, and at least half the cells
of every other column there are numbers or markers. Otherwise it is long: a column of
codes other than the first (``region,sex,persons``) or a code repeated down the first
column (``region,age,persons``, the regions repeated for each age) makes a long table.
A cell of a wide table that is neither a number nor a marker (a typo, an undeclared
marker) is an error naming it, not a reason to read the file another way. ``layout``
(``--layout``) overrides the rule.

**What a cell says** (:func:`read_cell`): a number is published as it is (``[v, v]``);
a suppression marker (:data:`~anonaudit.settings.names.MARKERS`: ``x``, ``X``, ``c``,
``C``, ``..``, ``...``, ``*`` and the empty cell, unless told; ``-`` is not one, many
offices print it for a nil) hides it (``[0, inf)``); ``<N`` (or ``< N``) says it is
below ``N`` (``[1, N-1]`` for a count, ``[0, N-1]`` when ``<N`` may hide a zero), and
``≤N`` (or ``<=N``) at most ``N``. In a rounded table every number is rounded to its
base ``b`` (Hundepool et al., *Statistical Disclosure Control*, Wiley 2012, chapter
5): to the nearest multiple, a count published as ``v`` is in
``[v - floor(b/2), v + ceil(b/2) - 1]`` (halves rounded up); randomly rounded (up or
down, to either neighbouring multiple) in ``[v - b + 1, v + b - 1]``; never below 0, so
that a zero randomly rounded is in ``[0, b - 1]``. A sum is real: ``[v - b/2, v + b/2]``
and ``[v - b, v + b]``; a sum hidden by a marker is taken as a magnitude, in
``[0, inf)``, and one published as ``<N`` is in ``[0, N]`` (the model's intervals are
closed).

**Totals** are never counted as data: they are each dimension's aggregate code
(:attr:`~anonaudit.published.Dimension.total`). A dimension's total is, in this order,
the root of its hierarchy file (ARX's ``leaf;level1;...;*``, read by
:class:`anonaudit.hierarchy.Hierarchy`; its intermediate codes are subtotals), a code
named like a total (:data:`~anonaudit.settings.names.MARGIN_WORDS`, trimmed and in any
case), a code whose published value is the sum of the dimension's other codes' in every
position of the other dimensions where all are published (at least
:data:`~anonaudit.settings.names.MIN_COMBINATIONS` positions, as
:mod:`anonaudit.measures.margins` finds a margin), or else an implicit code ``Total``
with no published cell. A subtotal that is neither named in a hierarchy file nor a
total is read as a code of its own: give the hierarchy.

Several tables (:func:`read_tables`) share the dimensions of one name: the code list is
the union of the tables' codes, a hierarchy file wins over what a table shows, and the
tables' totals take one name (the hierarchy's root, else the first total a table
publishes).

The microdata behind a magnitude table (:func:`read_contributions`) give each cell its
contributors, for the rules that need them (dominance, p%).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import pairwise, product
from typing import get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.errors import (
    ColumnError,
    HierarchyError,
    InputError,
    MalformedFileError,
    OptionError,
    one_of,
    require,
    texts,
)
from anonaudit.files import from_decimal_comma
from anonaudit.hierarchy import Hierarchy
from anonaudit.published import CellState, Dimension, Kind, PublishedTable, TableSet
from anonaudit.settings.names import (
    MARGIN_WORDS,
    MARKERS,
    MIN_COMBINATIONS,
    ROUNDING_METHODS,
    TABLE_LAYOUTS,
    RoundingMethod,
    TableLayout,
)
from anonaudit.sources.csv import read_rows
from anonaudit.sources.inputs import open_source
from anonaudit.sources.options import CsvOptions
from anonaudit.sources.protocol import require_columns

__all__ = [
    "IMPLICIT_TOTAL",
    "VALUE_WORDS",
    "CellReading",
    "Contributors",
    "TableOptions",
    "read_cell",
    "read_contributions",
    "read_table",
    "read_tables",
]

#: Header names that make a file a long table (compared in lower case, trimmed).
VALUE_WORDS = frozenset(
    {"count", "counts", "n", "freq", "frequency", "value", "values", "amount", "number"}
    | {"obs", "observations"}
)
#: The name of a dimension's total when no table publishes it.
IMPLICIT_TOTAL = "Total"

_KINDS: tuple[Kind, ...] = get_args(Kind)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: Digits grouped by thousands with a comma, a space, a (narrow) no-break space or an
#: apostrophe, with a decimal point: ``1,234`` and ``12 345.5``.
_GROUPED = re.compile(r"[+-]?\d{1,3}([, \u00a0\u202f'])\d{3}(?:\1\d{3})*(?:\.\d+)?")
_BOUND = re.compile(r"(<=|<|≤)\s*(\d+(?:\.\d+)?)")
_NAMING = re.compile(r"(.+?)\s*[\\/]\s*(.+)")  # "education \ race", "education/race"


@dataclass(frozen=True)
class TableOptions:
    """How to read a published table.

    Attributes
    ----------
    layout : {"auto", "long", "wide"}
        One row per cell, a cross-tab, or found from the file (see the module).
    dimensions : tuple of str
        A long table's dimension columns; empty: every column but the value column.
    value : str or None
        A long table's value column; ``None``: the last column whose cells are all
        numbers or markers.
    kind : {"count", "sum"}
        Counts (whole numbers >= 0) or sums of a magnitude.
    markers : tuple of str
        The texts of suppressed cells, compared trimmed (``""`` is the empty cell);
        ``<N`` and ``≤N`` are always read as bounds.
    less_than_includes_zero : bool
        Whether a count published as ``<N`` may be 0 (``[0, N-1]``) or is at least 1
        (``[1, N-1]``: an office that prints zeros as zeros).
    rounding : int or None
        The base every number was rounded to (``5``: multiples of 5), or ``None``.
    rounding_method : {"nearest", "random"}
        Rounded to the nearest multiple, or randomly to one of the two neighbouring ones.
    totals : frozenset of str
        The names of a total code, compared in lower case, trimmed.
    hierarchies : mapping of str to path
        A hierarchy file per dimension (ARX's format: ``leaf;level1;...;*``).
    population : str
        The population the table counts: tables of one population are sums of one
        common table (:class:`~anonaudit.published.TableSet`).
    csv : CsvOptions
        The file's separator and encoding.
    decimal_comma : bool
        Numbers are written with a decimal comma (``1.234,5``); otherwise a comma,
        a space or an apostrophe may group thousands (``1,234``).

    Raises
    ------
    OptionError
        An option out of its range or not one of its choices.
    """

    layout: TableLayout = "auto"
    dimensions: tuple[str, ...] = ()
    value: str | None = None
    kind: Kind = "count"
    markers: tuple[str, ...] = MARKERS
    less_than_includes_zero: bool = False
    rounding: int | None = None
    rounding_method: RoundingMethod = "nearest"
    totals: frozenset[str] = MARGIN_WORDS
    hierarchies: Mapping[str, str | os.PathLike[str]] = field(default_factory=dict)
    population: str = ""
    csv: CsvOptions = field(default_factory=CsvOptions)
    decimal_comma: bool = False

    def __post_init__(self) -> None:
        one_of(self.layout, "layout", TABLE_LAYOUTS)
        one_of(self.kind, "kind", _KINDS)
        one_of(self.rounding_method, "rounding_method", ROUNDING_METHODS)
        object.__setattr__(self, "dimensions", texts(self.dimensions, "dimensions"))
        markers = tuple(marker.strip() for marker in texts(self.markers, "markers"))
        for marker in markers:
            require(
                _number(marker, decimal_comma=self.decimal_comma) is None
                and not _BOUND.fullmatch(marker),
                "every marker",
                "be a text that is not a number nor a bound such as <5",
                marker,
            )
        object.__setattr__(self, "markers", markers)
        totals = frozenset(word.strip().lower() for word in texts(sorted(self.totals), "totals"))
        object.__setattr__(self, "totals", totals)
        require(
            self.rounding is None
            or (
                isinstance(self.rounding, int)
                and not isinstance(self.rounding, bool)
                and self.rounding >= 2
            ),
            "rounding",
            "be a whole number >= 2 (the base values were rounded to)",
            self.rounding,
        )
        if self.layout == "wide" and (self.dimensions or self.value is not None):
            raise OptionError(
                "layout",
                self.layout,
                says="dimensions and value name the columns of a long table; a wide "
                "table's dimensions are its first column and its header rows",
            )
        object.__setattr__(self, "hierarchies", dict(self.hierarchies))


@dataclass(frozen=True)
class CellReading:
    """What a reader knows of one cell from the text published in it.

    Attributes
    ----------
    lower, upper : float
        ``lower <= true value <= upper`` (``upper`` may be ``inf``).
    state : {"published", "suppressed", "rounded"}
        A number as it is, a marker, or a rounded number.
    """

    lower: float
    upper: float
    state: CellState


def read_cell(text: str, options: TableOptions) -> CellReading:
    """What the text of a published cell says of its true value (see the module).

    Examples
    --------
    >>> read_cell("12", TableOptions())
    CellReading(lower=12.0, upper=12.0, state='published')
    >>> read_cell("<5", TableOptions())
    CellReading(lower=1.0, upper=4.0, state='suppressed')
    >>> read_cell("x", TableOptions())
    CellReading(lower=0.0, upper=inf, state='suppressed')
    >>> read_cell("10", TableOptions(rounding=5))  # nearest: 8, 9, 10, 11, 12
    CellReading(lower=8.0, upper=12.0, state='rounded')
    >>> read_cell("0", TableOptions(rounding=5, rounding_method="random"))
    CellReading(lower=0.0, upper=4.0, state='rounded')

    Raises
    ------
    InputError
        A text that is neither a number nor a marker, a negative or fractional count,
        a number that is not a multiple of the rounding base, a bound that leaves no
        value (the message says what, not where).
    """
    text = text.strip()
    if text in options.markers:
        return CellReading(0.0, math.inf, "suppressed")
    bound = _BOUND.fullmatch(text)
    if bound:
        return _below(text, bound.group(1), float(bound.group(2)), options)
    value = _number(text, decimal_comma=options.decimal_comma)
    if value is None:
        listed = ", ".join(marker or "blank" for marker in options.markers)
        raise InputError(
            f"{text!r} is neither a number nor a suppression marker (markers: {listed}, <N); "
            "declare the marker with --marker or fix the cell"
        )
    if options.kind == "count":
        if value < 0:
            raise InputError(
                f"{text!r} is a negative count; a table of counts holds whole numbers >= 0: "
                "fix the cell, or read the table as sums (--kind sum)"
            )
        if not value.is_integer():
            raise InputError(
                f"{text!r} is not a whole number; a table of counts holds whole numbers: "
                "fix the cell, or read the table as sums (--kind sum)"
            )
    if options.rounding is None:
        return CellReading(value, value, "published")
    base = options.rounding
    if not (value / base).is_integer():
        raise InputError(
            f"{text!r} is not a multiple of the rounding base {base}; check --rounding or "
            "fix the cell"
        )
    below: float
    above: float
    if options.kind == "count":
        below, above = (
            (base // 2, (base + 1) // 2 - 1)
            if options.rounding_method == "nearest"
            else (base - 1, base - 1)
        )
    else:
        below = above = base / 2 if options.rounding_method == "nearest" else base
    lower = value - below if value < 0 else max(0.0, value - below)
    return CellReading(float(lower), float(value + above), "rounded")


def _below(text: str, sign: str, bound: float, options: TableOptions) -> CellReading:
    """The cell published as ``<N`` or ``≤N``."""
    strict = sign == "<"
    if options.kind == "sum":
        return CellReading(0.0, bound, "suppressed")
    if not bound.is_integer():
        raise InputError(
            f"{text!r} bounds a count by a fractional number; a table of counts holds "
            "whole numbers: fix the cell, or read the table as sums (--kind sum)"
        )
    lower = 0.0 if options.less_than_includes_zero else 1.0
    upper = bound - 1 if strict else bound
    if upper < lower:
        raise InputError(
            f"{text!r} leaves no count from {lower:g} up: read it as possibly 0 "
            "(--less-than-includes-zero) or fix the cell"
        )
    return CellReading(lower, upper, "suppressed")


def _number(text: str, *, decimal_comma: bool) -> float | None:
    """``text`` as a finite number, or ``None``."""
    if decimal_comma:
        text = from_decimal_comma([text])[0] or ""
    elif _GROUPED.fullmatch(text):
        text = re.sub(r"[, \u00a0\u202f']", "", text)
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class _Cells:
    """The cells of a file, as text, before they are read."""

    dimensions: tuple[str, ...]
    codes: tuple[list[str], ...]  # per dimension, each cell's code
    texts: list[str]
    lines: list[int]
    columns: list[str]  # the column each cell is in, for messages

    @cached_property
    def factors(self) -> tuple[tuple[list[str], NDArray[np.intp]], ...]:
        """Per dimension, its codes in the order first seen, and each cell's by position."""
        found = []
        for codes in self.codes:
            index: dict[str, int] = {}
            ids = np.fromiter((index.setdefault(c, len(index)) for c in codes), np.intp, len(codes))
            found.append((list(index), ids))
        return tuple(found)


@dataclass(frozen=True)
class _Read:
    """One table read, with what merging tables needs to know of its dimensions."""

    table: PublishedTable
    dimensions: dict[str, Dimension]
    hierarchical: frozenset[str]  # dimensions from a hierarchy file
    published_totals: frozenset[str]  # dimensions whose total has cells in the table


def read_table(
    path: str | os.PathLike[str], options: TableOptions | None = None
) -> tuple[PublishedTable, dict[str, Dimension]]:
    """Read one published table and the code lists of its dimensions.

    Parameters
    ----------
    path : path
        A CSV file (optionally compressed), long or wide (see the module).
    options : TableOptions, optional
        How to read it; the defaults otherwise.

    Returns
    -------
    tuple
        The table (named by ``path``), and its dimensions by name.

    Raises
    ------
    InputError
        One line naming the file, the line and column or the value, and what to do: a
        cell that is neither a number nor a marker, a negative or fractional count, a
        cell given twice, a wide header naming a code twice, an unknown column, a
        hierarchy that does not fit.
    """
    read = _read(path, options or TableOptions())
    return read.table, read.dimensions


def read_tables(
    paths: Sequence[str | os.PathLike[str]],
    options: TableOptions | Sequence[TableOptions] | None = None,
) -> TableSet:
    """Read tables published together, their dimensions merged by name.

    A dimension's code list is the union of the tables' codes (in the order first
    seen); a hierarchy file given for it (with any table's options) wins, and two
    different ones are refused. Every table's total code of a dimension is renamed to
    one name: the hierarchy's root, else the first total a table publishes, else
    ``Total``.

    Parameters
    ----------
    paths : sequence of path
        The tables' files.
    options : TableOptions or sequence of TableOptions, optional
        One set of options for every file, or one per file, in order.

    Returns
    -------
    TableSet
        The tables, in the order given, with every dimension's code list.

    Raises
    ------
    InputError
        As :func:`read_table`; and two hierarchies of one dimension that differ.
    OptionError
        A number of options other than the number of paths.
    """
    if options is None or isinstance(options, TableOptions):
        each = [options or TableOptions()] * len(paths)
    else:
        each = list(options)
        require(len(each) == len(paths), "options", f"be one per table ({len(paths)})", len(each))
    reads = [_read(path, o) for path, o in zip(paths, each, strict=True)]
    merged = _merge(reads)
    tables = tuple(_renamed(read, merged) for read in reads)
    return TableSet(tables, merged)


def _read(path: str | os.PathLike[str], options: TableOptions) -> _Read:
    name = os.fspath(path)
    _, rows = read_rows(path, options.csv, name=name)
    layout = options.layout
    if layout == "auto":
        layout = "wide" if _looks_wide(rows, options) else "long"
    cells = _long(rows, name, options) if layout == "long" else _wide(rows, name, options)
    lower, upper, state = _readings(cells, name, options)
    _refuse_duplicates(cells, name)
    dimensions: dict[str, Dimension] = {}
    published: set[str] = set()
    for k, dimension in enumerate(cells.dimensions):
        codes = cells.codes[k]
        if dimension in options.hierarchies:
            found = _from_hierarchy(dimension, options.hierarchies[dimension], codes, options)
        else:
            found = _flat(dimension, k, cells, lower, state, name, options)
        dimensions[dimension] = found
        if found.total in codes:
            published.add(dimension)
    table = PublishedTable(
        name=name,
        kind=options.kind,
        dimensions=cells.dimensions,
        codes=tuple(np.array(codes, dtype=np.str_) for codes in cells.codes),
        lower=lower,
        upper=upper,
        state=state,
        shown=np.array([text.strip() for text in cells.texts], dtype=np.str_),
        population=options.population,
    )
    return _Read(
        table, dimensions, frozenset(options.hierarchies) & set(dimensions), frozenset(published)
    )


def _looks_wide(rows: list[tuple[int, list[str]]], options: TableOptions) -> bool:
    """The auto-detection rule of the module's docstring."""
    header = rows[0][1]
    if options.dimensions or options.value is not None or len(header) < 3:
        return False
    if any(cell.strip().lower() in VALUE_WORDS for cell in header):
        return False
    headers, named = _header_rows(rows, options)
    body = rows[headers + named :]
    down = [cells[0].strip() for _, cells in body]
    if not body or len(set(down)) < len(down):
        return False
    known: dict[str, bool] = {}
    for j in range(1, len(header)):
        values = 0
        for _, cells in body:
            text = cells[j]
            if text not in known:
                known[text] = _is_value(text, options)
            values += known[text]
        if 2 * values < len(body):
            return False
    return True


def _is_value(text: str, options: TableOptions) -> bool:
    """Whether ``text`` is a number or a marker."""
    text = text.strip()
    return (
        text in options.markers
        or _BOUND.fullmatch(text) is not None
        or _number(text, decimal_comma=options.decimal_comma) is not None
    )


def _header_rows(rows: list[tuple[int, list[str]]], options: TableOptions) -> tuple[int, int]:
    """A wide file's header rows (1 or 2), and whether a row naming the dimension down
    follows them (pandas' pivot tables: 1, else 0).

    The second row is a header row when its first cell is blank (a data row has its
    code there) or some other cell of it is neither a number nor a marker (a code). The
    row under the header rows names the dimension down when only its first cell is
    filled and every header row's first cell holds a name (not ``A \\ B``): a data row
    of that table whose every cell is blank would read so, as pandas writes none.
    """
    headers = 1
    if len(rows) > 2:
        second = rows[1][1]
        if not second[0].strip() or not all(_is_value(cell, options) for cell in second[1:]):
            headers = 2
    named = 0
    if len(rows) > headers + 1:
        after = rows[headers][1]
        corners = [rows[i][1][0].strip() for i in range(headers)]
        if (
            all(corner and not _NAMING.fullmatch(corner) for corner in corners)
            and after[0].strip()
            and not any(cell.strip() for cell in after[1:])
        ):
            named = 1
    return headers, named


def _long(rows: list[tuple[int, list[str]]], name: str, options: TableOptions) -> _Cells:
    header = [cell.strip() for cell in rows[0][1]]
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise ColumnError(
                f"{name}: the header names column {column!r} twice; rename one of them"
            )
        seen.add(column)
    body = rows[1:]
    if not body:
        raise MalformedFileError(f"{name}: the file has a header but no data rows")
    for column in (*options.dimensions, *([options.value] if options.value else [])):
        if column not in seen:
            raise ColumnError(
                f"{name}: no column named {column!r}; the columns are: {', '.join(header)}"
            )
    value = options.value
    if value is None:
        # The last column holding a number; each of its cells is read below, so a cell
        # that is neither a number nor a marker is named, rather than the guess falling
        # on an earlier column of numbers (a year) or on none.
        numeric = [
            column
            for j, column in enumerate(header)
            if column not in options.dimensions
            and any(
                _number(cells[j].strip(), decimal_comma=options.decimal_comma) is not None
                for _, cells in body
            )
        ]
        if not numeric:
            raise ColumnError(
                f"{name}: no column holds numbers to read as the table's values; name it "
                "with --value"
            )
        value = numeric[-1]
    if value in options.dimensions:
        raise ColumnError(
            f"{name}: column {value!r} is named as a dimension and as the value; name it once"
        )
    dimensions = options.dimensions or tuple(c for c in header if c != value)
    if not dimensions:
        raise ColumnError(
            f"{name}: the table has only its value column {value!r}; a table needs a "
            "column of codes"
        )
    where = [header.index(d) for d in dimensions]
    at = header.index(value)
    codes: tuple[list[str], ...] = tuple([] for _ in dimensions)
    for line, cells in body:
        for k, j in enumerate(where):
            code = cells[j].strip()
            if not code:
                raise MalformedFileError(
                    f"{name}: line {line}, column {header[j]!r}: the code is blank; every "
                    "cell needs a code in each dimension (the total's too, e.g. Total)"
                )
            codes[k].append(code)
    return _Cells(
        dimensions=dimensions,
        codes=codes,
        texts=[cells[at] for _, cells in body],
        lines=[line for line, _ in body],
        columns=[value] * len(body),
    )


def _wide(rows: list[tuple[int, list[str]]], name: str, options: TableOptions) -> _Cells:
    headers, named = _header_rows(rows, options)
    body = rows[headers + named :]
    if not body:
        raise MalformedFileError(f"{name}: the table has header rows but no data rows")
    across = [[cell.strip() for cell in rows[i][1][1:]] for i in range(headers)]
    if not across[0]:
        raise MalformedFileError(f"{name}: a wide table needs columns of values")
    if headers == 2:  # the first row's codes stand over the columns after them, too
        if not across[0][0]:
            raise MalformedFileError(
                f"{name}: line {rows[0][0]}: the first header row has no code over the "
                "first column of values; write the code there"
            )
        for j in range(1, len(across[0])):
            across[0][j] = across[0][j] or across[0][j - 1]
    for i, row in enumerate(across):
        for j, code in enumerate(row):
            if not code:
                raise MalformedFileError(
                    f"{name}: line {rows[i][0]}: column {j + 2} of the header has no code; "
                    "a wide table's header holds a code over every column of values"
                )
    labels = [" / ".join(column) for column in zip(*across, strict=True)]
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ColumnError(
                f"{name}: the header names {label!r} twice; a wide table's header holds "
                "each code of the dimension across once: remove or rename one of the columns"
            )
        seen.add(label)
    dimensions = _wide_names(rows, headers, named, name)
    codes: tuple[list[str], ...] = tuple([] for _ in dimensions)
    texts_: list[str] = []
    lines: list[int] = []
    columns: list[str] = []
    for line, cells in body:
        code = cells[0].strip()
        if not code:
            raise MalformedFileError(
                f"{name}: line {line}: the row has no code in its first column; write the "
                f"{dimensions[0]} code there (the total's too, e.g. Total)"
            )
        for j, text in enumerate(cells[1:]):
            codes[0].append(code)
            for i in range(headers):
                codes[i + 1].append(across[i][j])
            texts_.append(text)
            lines.append(line)
            columns.append(labels[j])
    return _Cells(dimensions, codes, texts_, lines, columns)


def _wide_names(
    rows: list[tuple[int, list[str]]], headers: int, named: int, name: str
) -> tuple[str, ...]:
    """The names of a wide table's dimensions: down, then across (see the module)."""
    corners = [rows[i][1][0].strip() for i in range(headers)]
    defaults = ["column"] if headers == 1 else ["column 1", "column 2"]
    if named:
        down, across = rows[headers][1][0].strip(), corners
    else:
        down, across = "row", list(defaults)
        for i, corner in enumerate(corners):
            split = _NAMING.fullmatch(corner)
            if split:
                down, across[i] = split.group(1), split.group(2)
            elif corner and i == headers - 1:
                down = corner
            elif corner:
                across[i] = corner
    dimensions = (down, *across)
    if len(set(dimensions)) < len(dimensions):
        raise MalformedFileError(
            f"{name}: the table's dimensions are named {', '.join(map(repr, dimensions))}; "
            "name each once in the header's first column (e.g. education \\ race)"
        )
    return dimensions


def _readings(
    cells: _Cells, name: str, options: TableOptions
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.str_]]:
    """Each cell's interval and state, read once per distinct text."""
    known: dict[str, CellReading] = {}
    n = len(cells.texts)
    lower = np.empty(n, dtype=np.float64)
    upper = np.empty(n, dtype=np.float64)
    states: list[str] = []
    for i, text in enumerate(cells.texts):
        reading = known.get(text)
        if reading is None:
            try:
                reading = known[text] = read_cell(text, options)
            except InputError as exc:
                raise MalformedFileError(
                    f"{name}: line {cells.lines[i]}, column {cells.columns[i]!r}: {exc}"
                ) from None
        lower[i], upper[i] = reading.lower, reading.upper
        states.append(reading.state)
    return lower, upper, np.array(states, dtype=np.str_)


def _refuse_duplicates(cells: _Cells, name: str) -> None:
    """Refuse a cell given twice, naming both lines."""
    keys = _positions(cells, range(len(cells.dimensions)))
    first = np.unique(keys, return_index=True)[1]
    if len(first) == len(keys):
        return
    again = int(np.flatnonzero(np.isin(np.arange(len(keys)), first, invert=True))[0])
    before = int(np.flatnonzero(keys == keys[again])[0])
    where = ", ".join(f"{d}={c[again]}" for d, c in zip(cells.dimensions, cells.codes, strict=True))
    raise MalformedFileError(
        f"{name}: line {cells.lines[again]} gives the cell {where} again (line "
        f"{cells.lines[before]} gave it first); keep one of the two"
    )


def _positions(cells: _Cells, dimensions: Sequence[int]) -> NDArray[np.intp]:
    """Each cell's combination of codes of ``dimensions``, numbered ``0, 1, ...``."""
    ids = [cells.factors[k][1] for k in dimensions]
    sizes = [len(cells.factors[k][0]) for k in dimensions]
    if math.prod(sizes) < 2**62:  # one number per combination: a fast sort of integers
        key = np.ravel_multi_index(tuple(ids), sizes)
        return np.unique(key, return_inverse=True)[1].ravel()
    return np.unique(np.stack(ids, axis=1), axis=0, return_inverse=True)[1].ravel()


def _flat(
    dimension: str,
    k: int,
    cells: _Cells,
    lower: NDArray[np.float64],
    state: NDArray[np.str_],
    name: str,
    options: TableOptions,
) -> Dimension:
    """A dimension without a hierarchy file: its codes, and its total (see the module)."""
    codes = list(dict.fromkeys(cells.codes[k]))
    named = [code for code in codes if code.strip().lower() in options.totals]
    if len(named) > 1:
        raise HierarchyError(
            f"{name}: {dimension} has {len(named)} codes named like a total "
            f"({', '.join(map(repr, named))}); give its hierarchy (--hierarchy "
            f"{dimension}=FILE) or rename the subtotals"
        )
    if named:
        return Dimension.flat(dimension, codes, named[0])
    found = _sum_codes(k, cells, lower, state)
    if len(found) > 1:
        raise HierarchyError(
            f"{name}: in {dimension}, each of {', '.join(map(repr, found))} is the sum of "
            f"the other codes; name the total (Total) or give the hierarchy (--hierarchy "
            f"{dimension}=FILE)"
        )
    total = found[0] if found else _unused(IMPLICIT_TOTAL, codes)
    return Dimension.flat(dimension, codes, total)


def _unused(wanted: str, codes: Sequence[str]) -> str:
    """``wanted``, or ``wanted 2``, ... : a name none of ``codes`` has."""
    taken = set(codes)
    name, number = wanted, 1
    while name in taken:
        number += 1
        name = f"{wanted} {number}"
    return name


def _sum_codes(
    k: int, cells: _Cells, lower: NDArray[np.float64], state: NDArray[np.str_]
) -> list[str]:
    """The codes of dimension ``k`` whose value is the sum of the other codes' values in
    every position of the other dimensions where all of them are published, over at
    least :data:`MIN_COMBINATIONS` positions (Hundepool et al. 2012, section 4.2)."""
    names, ids = cells.factors[k]
    if len(cells.codes) < 2 or len(names) < 3:  # a total and at least two codes it sums
        return []
    position = _positions(cells, [j for j in range(len(cells.codes)) if j != k])
    exact = state == "published"
    present = np.bincount(position)
    inexact = np.bincount(position, weights=~exact)
    complete = ((present == len(names)) & (inexact == 0))[position]
    whole = np.bincount(position, weights=np.where(exact, lower, 0.0))
    fails = complete & ~np.isclose(2 * lower, whole[position], rtol=1e-9, atol=1e-9)
    positions = np.bincount(ids, weights=complete, minlength=len(names))
    failed = np.bincount(ids, weights=fails, minlength=len(names))
    positive = np.bincount(ids, weights=complete & (lower > 0), minlength=len(names))
    found = (positions >= MIN_COMBINATIONS) & (failed == 0) & (positive > 0)
    return [names[c] for c in np.flatnonzero(found)]


def _from_hierarchy(
    dimension: str,
    path: str | os.PathLike[str],
    codes: Sequence[str],
    options: TableOptions,
) -> Dimension:
    """A dimension from its hierarchy file: each code's parent is the next field of its
    line, the last field's parent the root. The root takes the name of the table's
    total when the table names one the file does not (``Total`` for ARX's ``*``)."""
    hierarchy = Hierarchy.from_csv(path)
    parents: dict[str, str] = {}
    for chain in zip(*hierarchy.levels, strict=True):
        steps = [code for j, code in enumerate(chain) if j == 0 or code != chain[j - 1]]
        for child, parent in pairwise(steps):
            if parents.setdefault(child, parent) != parent:
                raise HierarchyError(
                    f"{hierarchy.name}: {child!r} has two parents, {parents[child]!r} and "
                    f"{parent!r}; a published table's codes each sum one set of codes: "
                    "rename one of them"
                )
    root = hierarchy.levels[-1][0]
    table_totals = [
        code
        for code in dict.fromkeys(codes)
        if code.strip().lower() in options.totals and code not in parents and code != root
    ]
    if len(table_totals) == 1:
        new = table_totals[0]
        parents = {child: new if parent == root else parent for child, parent in parents.items()}
        root = new
    return Dimension(dimension, parents, root)


def _merge(reads: Sequence[_Read]) -> dict[str, Dimension]:
    """The dimensions of several tables merged by name (see :func:`read_tables`)."""
    merged: dict[str, Dimension] = {}
    for dimension in dict.fromkeys(d for read in reads for d in read.dimensions):
        having = [read for read in reads if dimension in read.dimensions]
        given = [read for read in having if dimension in read.hierarchical]
        if given:
            chosen = given[0].dimensions[dimension]
            for other in given[1:]:
                if other.dimensions[dimension] != chosen:
                    raise HierarchyError(
                        f"{given[0].table.name} and {other.table.name}: the hierarchies of "
                        f"{dimension} differ; give both tables one hierarchy file"
                    )
            merged[dimension] = chosen
            continue
        totals = [
            read.dimensions[dimension].total
            for read in having
            if dimension in read.published_totals
        ]
        leaves = dict.fromkeys(
            code for read in having for code in read.dimensions[dimension].parents
        )
        total = totals[0] if totals else _unused(IMPLICIT_TOTAL, list(leaves))
        merged[dimension] = Dimension.flat(dimension, list(leaves), total)
    return merged


def _renamed(read: _Read, dimensions: Mapping[str, Dimension]) -> PublishedTable:
    """The table of ``read`` with the total code of each of its dimensions renamed to
    the merged dimension's total."""
    table = read.table
    codes = []
    for dimension, column in zip(table.dimensions, table.codes, strict=True):
        old, new = read.dimensions[dimension].total, dimensions[dimension].total
        codes.append(np.where(column == old, new, column) if old != new else column)
    return replace(table, codes=tuple(codes))


@dataclass(frozen=True)
class Contributors:
    """The contributors behind each cell of a table, read from its microdata.

    Attributes
    ----------
    values : tuple of arrays of float
        Per cell of the table, in its order, the values of the records under it
        (multiplied by their weights, when weighted); the total's cells and the
        subtotals' hold every record under them.
    holdings : tuple of arrays of str
        Per cell, each contributor's holding (enterprise group), aligned with
        ``values``; empty without a holding column.
    """

    values: tuple[NDArray[np.float64], ...]
    holdings: tuple[NDArray[np.str_], ...] = ()

    def fill(self, table: PublishedTable) -> PublishedTable:
        """``table`` with these contributors (its ``contributions`` and ``holdings``)."""
        return replace(table, contributions=self.values, holdings=self.holdings)


def read_contributions(
    path: str | os.PathLike[str],
    table: PublishedTable,
    dims: Mapping[str, Dimension],
    value_column: str,
    holding_column: str | None = None,
    weight_column: str | None = None,
    *,
    csv: CsvOptions | None = None,
) -> Contributors:
    """Read the microdata behind a table: each cell's contributors.

    One record per contributor (an enterprise, a person), with a column per dimension
    of the table holding its leaf code (the finest code), and its value. A record
    contributes to every cell whose codes are its leaves' or above them in each
    dimension's hierarchy, so that the totals and subtotals have their contributors too.

    With a weight column (a survey's sampling weights), each contribution is the
    record's value times its weight: what the record stands for in the weighted
    estimate the cell publishes. The dominance and p% rules then judge the
    contributors' shares of that estimate: a weighted contribution that dominates a
    cell is a sampled unit whose value, times its weight, makes most of it. For a
    census (every weight 1) that is a unit's own value; with weights above 1 a unit's
    value is known from the cell only to within its weight, so the rules protect it at
    least as much as they say.

    Parameters
    ----------
    path : path
        The microdata: a CSV or Parquet file (:func:`anonaudit.sources.open_source`).
    table : PublishedTable
        The table the records are behind.
    dims : mapping of str to Dimension
        The table's dimensions (:func:`read_table`'s, or a :class:`TableSet`'s).
    value_column : str
        The records' values (the magnitude the table sums).
    holding_column : str, optional
        The records' holdings (enterprise groups): contributors of one holding count
        as one in the rules.
    weight_column : str, optional
        The records' sampling weights (>= 0).
    csv : CsvOptions, optional
        The separator and encoding of a CSV file.

    Returns
    -------
    Contributors
        Per cell of ``table``; :meth:`Contributors.fill` puts them into it.

    Raises
    ------
    ColumnError
        A column the file lacks (each dimension of the table must be one).
    InputError
        A code that is not a leaf of its dimension, a value or weight that is not a
        number (or a negative weight), a blank holding.
    """
    source = open_source(path, csv=csv)
    name = source.info.name
    extra = [c for c in (value_column, holding_column, weight_column) if c is not None]
    wanted = [*table.dimensions, *extra]
    if len(set(wanted)) < len(wanted):
        raise ColumnError(
            f"{name}: the columns {', '.join(map(repr, wanted))} name one column twice; "
            "the value, holding and weight columns are columns of their own"
        )
    require_columns(source, wanted)
    chunks: dict[str, list[pa.Array]] = {column: [] for column in wanted}
    for batch in source.batches(wanted):
        for column in wanted:
            chunks[column].append(pc.cast(batch.column(column), pa.string()))
    text = {
        column: pa.chunked_array(chunks[column], pa.string()).to_numpy(zero_copy_only=False)
        for column in wanted
    }
    contribution = _numbers(text[value_column], name, value_column)
    if weight_column is not None:
        weights = _numbers(text[weight_column], name, weight_column)
        if (weights < 0).any():
            record = int(np.argmax(weights < 0)) + 1
            raise MalformedFileError(
                f"{name}: record {record}, column {weight_column!r}: the weight is negative; "
                "sampling weights are >= 0"
            )
        contribution = contribution * weights
    holding = None
    if holding_column is not None:
        holding = text[holding_column]
        blank = np.array([v is None or not str(v).strip() for v in holding], dtype=bool)
        if blank.any():
            raise MalformedFileError(
                f"{name}: record {int(np.argmax(blank)) + 1}, column {holding_column!r}: the "
                "holding is blank; give every contributor its holding (its own id when it "
                "belongs to none)"
            )
        holding = np.array([str(v).strip() for v in holding], dtype=np.str_)
    leaves = np.stack([_leaves(text[d], dims[d], name) for d in table.dimensions], axis=1)
    combos, inverse = np.unique(leaves, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(combos) + 1))
    cell_of = {key: i for i, key in enumerate(zip(*(c.tolist() for c in table.codes), strict=True))}
    above = [_ancestors(dims[d]) for d in table.dimensions]
    members: list[list[int]] = [[] for _ in range(len(table))]
    for c, combo in enumerate(combos.tolist()):
        for key in product(*(above[k][leaf] for k, leaf in enumerate(combo))):
            cell = cell_of.get(key)
            if cell is not None:
                members[cell].append(c)
    records = [
        np.concatenate([order[bounds[c] : bounds[c + 1]] for c in combo_ids])
        if combo_ids
        else np.empty(0, dtype=np.intp)
        for combo_ids in members
    ]
    values = tuple(contribution[r] for r in records)
    holdings = () if holding is None else tuple(holding[r] for r in records)
    return Contributors(values, holdings)


def _numbers(column: NDArray[np.object_], name: str, label: str) -> NDArray[np.float64]:
    """A microdata column as finite numbers, or the error naming the first that is not."""
    numbers = np.empty(len(column), dtype=np.float64)
    for i, text in enumerate(column):
        value = None if text is None else _number(str(text).strip(), decimal_comma=False)
        if value is None:
            raise MalformedFileError(
                f"{name}: record {i + 1}, column {label!r}: {text!r} is not a number; "
                "fix the record"
            )
        numbers[i] = value
    return numbers


def _leaves(column: NDArray[np.object_], dimension: Dimension, name: str) -> NDArray[np.intp]:
    """Each record's leaf of ``dimension``, by its position in the dimension's leaves."""
    codes = np.array(["" if v is None else str(v).strip() for v in column], dtype=np.str_)
    distinct, inverse = np.unique(codes, return_inverse=True)
    positions = np.empty(len(distinct), dtype=np.intp)
    for j, code in enumerate(distinct.tolist()):
        where = dimension.leaf_index.get(code)
        if where is None:
            record = int(np.argmax(inverse == j)) + 1
            known = code in dimension.codes
            why = "an aggregate code (a total or subtotal)" if known else "not a code"
            raise MalformedFileError(
                f"{name}: record {record}, column {dimension.name!r}: {code!r} is {why} of "
                f"the table's {dimension.name}; each record needs one of its finest codes "
                f"({', '.join(dimension.leaves[:5])}{', ...' if len(dimension.leaves) > 5 else ''})"
            )
        positions[j] = where
    return positions[inverse.ravel()]


def _ancestors(dimension: Dimension) -> list[tuple[str, ...]]:
    """Per leaf (by position), its code and every code above it up to the total."""
    chains = []
    for leaf in dimension.leaves:
        chain = [leaf]
        while chain[-1] != dimension.total:
            chain.append(dimension.parents[chain[-1]])
        chains.append(tuple(chain))
    return chains
