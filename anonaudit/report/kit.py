"""What a measure's section of the HTML report is made of: facts, listings, verdict rows.

A view holds only text ready to print: numbers formatted, quasi-identifier values
redacted when asked, charts drawn (:mod:`anonaudit.report.charts`), failing classes cut
to the rows shown plus a CSV ``data:`` link holding all of them. Each measure builds its
own view from these parts (:meth:`anonaudit.measures.base.Measure.view`); the report's
other sections (:mod:`anonaudit.report.views`) use them too. Nothing here computes a
measure.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.files import table_to_csv
from anonaudit.report.charts import Chart
from anonaudit.settings.names import REDACTED

if TYPE_CHECKING:
    from anonaudit.classtable import Classes, ClassTable
    from anonaudit.measures._classes import FailingClasses
    from anonaudit.measures.wildcard import NullPolicy

__all__ = [
    "Audited",
    "Column",
    "Fact",
    "Layout",
    "Listing",
    "MeasureView",
    "Options",
    "TableRow",
    "VerdictRow",
    "dumps",
    "join_names",
    "json_classes",
    "json_number",
    "listing_csv",
    "make_listing",
    "slugs",
]


#: A column of a listing beside the QI values: the result's column, its heading, its format.
Column: TypeAlias = tuple[str, str, Callable[[Any], str]]


class Audited(Protocol):
    """What a view reads of the audit besides its own result (an
    :class:`~anonaudit.AuditReport` is one)."""

    @property
    def quasi_identifiers(self) -> tuple[str, ...]: ...

    @property
    def sensitive(self) -> tuple[str, ...]: ...

    @property
    def rows(self) -> int: ...

    @property
    def table(self) -> ClassTable: ...

    @property
    def null_policy(self) -> NullPolicy: ...


_OPEN_ROWS = 10  # tables with more rows start collapsed


_FARTHEST = 3  # classes drawn beside the whole table's distribution


@dataclass(frozen=True)
class Fact:
    """One measured value, as printed: ``label`` and ``value``."""

    label: str
    value: str


@dataclass(frozen=True)
class Listing:
    """A table of classes: the first rows on the page, all of them in a CSV download.

    Attributes
    ----------
    caption : str
        What the rows are and in which order.
    summary : str
        The text of the ``<summary>`` that opens the table.
    headers : tuple of str
        Column headings.
    numeric_from : int
        Index of the first numeric column (the QI columns come first).
    rows : tuple of tuple of str
        The rows shown, as printed.
    collapsed : bool
        Whether the table starts closed (a long one).
    csv_href : str
        ``data:text/csv;base64,...`` link holding the first ``embedded`` rows,
        formula-safe.
    csv_name : str
        File name offered for the download, and of the full listing's file.
    download : str
        The text of the download link.
    embedded : int
        Rows in the page's CSV download (at most :attr:`Options.max_classes`).
    total : int
        Rows of the whole listing.
    identifying : bool
        Whether the rows carry values from the data (quasi-identifier values), which the
        page's notice counts.
    file_href : str or None
        Link to the file holding every row, written beside the report
        (:attr:`Options.listings_href`); ``None`` when none is written.
    full : pyarrow.Table or None
        Every row, for that file; never printed.
    """

    caption: str
    summary: str
    headers: tuple[str, ...]
    numeric_from: int
    rows: tuple[tuple[str, ...], ...]
    collapsed: bool
    csv_href: str
    csv_name: str
    download: str
    embedded: int
    total: int
    identifying: bool
    file_href: str | None
    full: pa.Table | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class MeasureView:
    """A measure's section: what it is, the values, the charts, the failing classes.

    Attributes
    ----------
    lead : str
        One sentence on what the measure says.
    about : str or None
        Anchor of its explanation under "What the measures mean" (``None``: none).
    facts : tuple of Fact
        Measured values and thresholds.
    charts : tuple of Chart
        Drawn in order.
    outcome : str
        Which classes fail, or that none does, or that no threshold is set.
    listing : Listing or None
        The failing classes, if any.
    """

    lead: str
    about: str | None
    facts: tuple[Fact, ...]
    charts: tuple[Chart, ...]
    outcome: str
    listing: Listing | None


@dataclass(frozen=True)
class TableRow:
    """One row of a small table: its heading ``label`` and its ``cells``, as printed."""

    label: str
    cells: tuple[str, ...]


@dataclass(frozen=True)
class VerdictRow:
    """One threshold of the policy: the measured value, the bound and a sentence."""

    check: str
    anchor: str
    measured: str
    asks: str
    passed: bool
    sentence: str


@dataclass(frozen=True)
class Options:
    """What the reader asked for.

    Attributes
    ----------
    redact : bool
        Replace the QI values by :data:`REDACTED`.
    max_rows : int
        Rows shown per table.
    max_classes : int or None
        Rows per listing embedded in the page (its CSV download); ``None``: all.
    listings_href : str or None
        Where the full listings are written, as a link relative to the page (ending in
        ``/``); ``None``: they are not written.
    shown : Shown
        Where, besides the listings, the page showed a class's QI values (chart legends,
        hierarchy examples): counted as they are drawn, for the report's notice.
    """

    redact: bool
    max_rows: int
    max_classes: int | None = 100
    listings_href: str | None = None
    shown: Shown = field(default_factory=lambda: Shown())


@dataclass
class Shown:
    """A tally of the places outside the listings where a report showed data values
    (:attr:`Options.shown`); the notice atop the report counts them with the rows."""

    places: int = 0

    def value(self, value: Any, redact: bool) -> str | None:
        """``value`` as the page shows it (:data:`REDACTED` with ``redact``), counted
        when it is shown."""
        self.places += not redact
        return qi_value(value, redact)


class _Failing(Protocol):
    """A result that lists its failing classes (k-anonymity, l-diversity, ...)."""

    @property
    def violating(self) -> pd.DataFrame: ...

    @property
    def violating_records(self) -> int: ...


def _rule(*parts: str | None) -> str | None:
    """The thresholds that are set, joined; ``None`` when none is."""
    return ", ".join(part for part in parts if part) or None


def failing_classes(
    result: _Failing,
    report: Audited,
    options: Options,
    *,
    rule: str | None,
    order: str,
    measures: Sequence[Column],
    name: str,
) -> tuple[str, Listing | None]:
    """A sentence on the classes that fail ``rule`` (``None``: the policy sets no
    threshold), and the table of them."""
    frame, records = result.violating, result.violating_records
    if rule is None:
        return "The policy sets no threshold here, so no class is listed.", None
    if frame.empty:
        return "No class fails.", None
    outcome = (
        f"{_plural(len(frame), 'class')} holding {_plural(records, 'record')} "
        f"({_share(records / report.rows)} of all) fail {rule}; they are listed {order}."
    )
    caption = f"Classes failing {rule}, {order}"
    return outcome, _listing(frame, report, options, measures=measures, caption=caption, name=name)


def _listing(
    frame: pd.DataFrame,
    report: Audited,
    options: Options,
    *,
    measures: Sequence[Column],
    caption: str,
    name: str,
) -> Listing:
    """The classes of ``frame`` (QI columns, then ``measures``: column, heading, format)."""
    qi = list(report.quasi_identifiers)
    shown = min(options.max_rows, len(frame))

    def values(rows: pd.DataFrame) -> list[list[str | None]]:
        return [[qi_value(v, options.redact) for v in rows[column].tolist()] for column in qi]

    def table(limit: int | None) -> pa.Table:
        rows = frame if limit is None else frame.head(limit)
        return pa.Table.from_arrays(
            [pa.array(column, pa.string()) for column in values(rows)]
            + [
                pa.array([exact(v) for v in rows[column].tolist()], pa.string())
                for column, _, _ in measures
            ],
            names=[*qi, *(column for column, _, _ in measures)],
        )

    head = frame.head(shown)
    numbers = [head[column].tolist() for column, _, _ in measures]
    rows = tuple(
        tuple(
            [none_as_null(column[i]) for column in values(head)]
            + [fmt(column[i]) for column, (_, _, fmt) in zip(numbers, measures, strict=True)]
        )
        for i in range(shown)
    )
    return make_listing(
        caption=f"{caption} ({shown:,} of {len(frame):,} shown)",
        summary=(
            f"Show the {shown:,} worst of {len(frame):,} classes"
            if shown < len(frame)
            else f"Show {'the class' if shown == 1 else f'all {shown:,} classes'}"
        ),
        headers=(*qi, *(heading for _, heading, _ in measures)),
        numeric_from=len(qi),
        rows=rows,
        total=len(frame),
        table=table,
        name=name,
        noun="class",
        options=options,
    )


def make_listing(
    *,
    caption: str,
    summary: str,
    headers: tuple[str, ...],
    numeric_from: int,
    rows: tuple[tuple[str, ...], ...],
    total: int,
    table: Callable[[int | None], pa.Table],
    name: str,
    noun: str,
    options: Options,
    identifying: bool = True,
) -> Listing:
    """A :class:`Listing` of ``total`` rows, ``rows`` of them shown.

    ``table(limit)`` builds the first ``limit`` rows (``None``: all) as text columns: the
    page's CSV download holds at most :attr:`Options.max_classes` of them, and the full
    table is kept for a file beside the report when :attr:`Options.listings_href` asks.
    """
    embedded = total if options.max_classes is None else min(options.max_classes, total)
    full = None if options.listings_href is None else table(None)
    csv_name = f"{_slug(name)}.csv"
    return Listing(
        caption=caption,
        summary=summary,
        headers=headers,
        numeric_from=numeric_from,
        rows=rows,
        collapsed=len(rows) > _OPEN_ROWS,
        csv_href=_csv_href(full if full is not None and embedded == total else table(embedded)),
        csv_name=csv_name,
        download=f"Download all {_plural(total, noun)} as CSV"
        if embedded == total
        else f"Download the first {embedded:,} of {_plural(total, noun)} as CSV",
        embedded=embedded,
        total=total,
        identifying=identifying,
        file_href=None if full is None else f"{options.listings_href}{csv_name}",
        full=full,
    )


def listing_csv(table: pa.Table) -> str:
    """``table`` as formula-safe CSV text with a byte-order mark, so that spreadsheets
    read it as UTF-8: the page's downloads and the listing files beside it."""
    return "\ufeff" + table_to_csv(table)


def _csv_href(table: pa.Table) -> str:
    """A ``data:`` link to ``table`` as :func:`listing_csv` writes it."""
    data = listing_csv(table).encode("utf-8")
    return "data:text/csv;charset=utf-8;base64," + base64.b64encode(data).decode("ascii")


def qi_value(value: Any, redact: bool) -> str | None:
    if redact:
        return REDACTED
    return None if value is None or pd.isna(value) else str(value)


def none_as_null(value: str | None) -> str:
    return "(null)" if value is None else value


def exact(value: Any) -> str:
    """A number for the CSV: 12 significant digits (``inf`` for infinity).

    Enough to compare with any threshold, and stable where the engine's summation order
    changes the last bit between runs; the JSON report has every digit. A text value (a
    sensitive value listed beside the numbers) is written as it is, a null as empty.
    """
    if value is None or isinstance(value, str):
        return "" if value is None else value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{float(value):.12g}"


def farthest(per_class: NDArray[Any], classes: Classes) -> list[int]:
    """Ids of the classes farthest from the whole table, ties broken by size (largest
    first) then QI values, so the choice does not depend on the engine's class order."""
    if not len(per_class):
        return []
    # Rounded so a last-bit difference between runs does not change the choice.
    distance = np.round(per_class, 9)
    n = min(_FARTHEST, len(distance))
    candidates = np.flatnonzero(distance >= np.partition(distance, -n)[-n])
    keys = classes.keys.take(pa.array(candidates)).to_pylist()

    def order(i: int) -> tuple[float, int, tuple[tuple[bool, str], ...]]:
        values = tuple((v is None, v or "") for v in keys[i].values())
        return (-float(distance[candidates[i]]), -int(classes.sizes[candidates[i]]), values)

    return [int(candidates[i]) for i in sorted(range(len(candidates)), key=order)[:n]]


def class_label(
    classes: Classes, class_id: int, rank: int, per_class: NDArray[Any], options: Options
) -> str:
    if options.redact:
        described = f"class {rank} {REDACTED}"
    else:
        key = classes.keys.slice(class_id, 1).to_pylist()[0]
        options.shown.places += 1
        described = ", ".join(none_as_null(qi_value(value, False)) for value in key.values())
    return (
        f"{described} — {_plural(int(classes.sizes[class_id]), 'record')}, "
        f"distance {real(float(per_class[class_id]))}"
    )


def join_names(names: Sequence[str]) -> str:
    """Column names as a list in a sentence."""
    return ", ".join(names)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "column"


def slugs(names: Sequence[str]) -> list[str]:
    """Anchor-safe names, unique: numbered when two names give the same slug."""
    slugs = [_slug(name) for name in names]
    if len(set(slugs)) < len(slugs):
        slugs = [f"{i}-{slug}" for i, slug in enumerate(slugs, start=1)]
    return slugs


def after_most_common(at_l: int) -> str:
    """What recursive (c, l) weighs the most common value against, in words."""
    if at_l <= 1:
        return "all the group's values together"
    if at_l == 2:
        return "all other values together"
    return f"the values after the {at_l - 1} most common, together"


def _plural(n: int, word: str) -> str:
    plural = word + ("es" if word.endswith("s") else "s")
    return f"{n:,} {word if n == 1 else plural}"


def _count(value: Any) -> str:
    return f"{int(value):,}"


def real(value: Any) -> str:
    value = float(value)
    if math.isinf(value):
        return "∞"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def nats(value: float) -> str:
    return f"{real(value)} {'nat' if real(value) == '1' else 'nats'}"


def signed(value: float) -> str:
    return ("+" if value > 0 else "−" if value < 0 else "") + real(abs(value))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def probability(value: float) -> str:
    """A small probability as printed: ``1 × 10⁻⁶`` below 0.001, else 3 digits."""
    if value == 0 or value >= 1e-3:
        return f"{value:.3g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    digits = mantissa.rstrip("0").rstrip(".")
    power = f"10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    return power if digits == "1" else f"{digits} × {power}"


def _share(value: Any) -> str:
    value = float(value)
    return "∞" if math.isinf(value) else f"{value * 100:.3g}%"


def byte_size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit} ({size:,} bytes)"
    return f"{size:,} bytes"


# -- JSON ------------------------------------------------------------------------------


def json_number(value: float | int | None) -> float | int | str | None:
    """A number for JSON: infinity as ``"inf"``, numpy scalars as Python numbers."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


@dataclass(frozen=True)
class Layout:
    """How a JSON report writes listings: at most ``limit`` classes each, their QI
    values redacted or not."""

    qi: tuple[str, ...]
    limit: int | None
    redact: bool

    def qi_values(self, values: Mapping[Any, Any]) -> dict[str, Any]:
        """A class's QI values, or :data:`REDACTED` for each."""
        return {name: REDACTED if self.redact else values[name] for name in self.qi}


def json_classes(failing: FailingClasses, layout: Layout) -> dict[str, Any]:
    """A listing of classes for JSON: its count, whether it is cut, the classes (only the
    ones shown are listed: :meth:`FailingClasses.head`)."""
    count = failing.count
    if not count:  # the common case, without pandas' conversion of no rows
        return {"count": 0, "truncated": False, "classes": []}
    shown = failing.head(layout.limit)
    rows = []
    for record in shown.to_dict(orient="records"):
        entry: dict[str, Any] = {"quasi_identifiers": layout.qi_values(record)}
        entry.update({str(k): json_number(v) for k, v in record.items() if k not in layout.qi})
        rows.append(entry)
    return {"count": count, "truncated": len(shown) < count, "classes": rows}


# -- the text summary -------------------------------------------------------------------


def _fmt(value: float) -> str:
    """A measured value in the text summary: 4 significant digits, ``inf``."""
    return "inf" if math.isinf(value) else f"{value:.4g}"


def _mark(passed: bool | None) -> str:
    """The end of a summary line: its verdict, if judged."""
    return {None: "", True: "  [pass]", False: "  [FAIL]"}[passed]


def dumps(data: dict[str, Any]) -> str:
    """A JSON document as anonaudit writes it (the reports, the DP release's sidecar);
    refuses NaN and infinity (they must be strings by now)."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
