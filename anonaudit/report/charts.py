"""Inline SVG charts for the HTML report.

Each function returns a :class:`Chart`: one ``<svg role="img">`` whose ``<title>`` and
``<desc>`` state what is drawn and every number in it (the alt text), sized by its
``viewBox`` so it scales with the page, plus a caption for the ``<figcaption>``. No
JavaScript, font or external resource is involved, and every text is escaped with
:func:`markupsafe.escape`.

The numbers come from the result objects. The only arithmetic here is for display:
grouping values into bins, turning counts into shares and laying out the axes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from markupsafe import Markup, escape
from numpy.typing import NDArray

from anonaudit.classtable import SensitiveCounts

if TYPE_CHECKING:
    from anonaudit.dp.contrast import PosteriorCurve, ScatterPoints

__all__ = [
    "Chart",
    "class_size_chart",
    "distance_chart",
    "distribution_chart",
    "posterior_chart",
    "profile_chart",
    "risk_chart",
]

#: Colours: bars, bars beyond a threshold, text, grid lines (contrast >= 4.5:1 on white
#: for text, >= 3:1 for shapes).
_BAR, _FLAGGED, _INK, _GRID = "#2f5d8a", "#b3261e", "#1f1f1f", "#d0d4d9"
#: The whole table, then one colour per class (Okabe-Ito palette, safe for colour blindness).
_SERIES = ("#4d4d4d", "#0072b2", "#d55e00", "#009e73", "#cc79a7")
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
_WIDTH = 560
#: Width of one bin of the t-closeness histogram.
_DISTANCE_BIN = 0.05
#: Height (viewBox units) under which a failing bar counts as invisible.
_MIN_BAR = 4
#: More distinct numeric SA values than this are drawn in bins.
_MAX_VALUES = 20


@dataclass(frozen=True)
class Chart:
    """A drawn chart.

    Attributes
    ----------
    svg : markupsafe.Markup
        The ``<svg>`` element, safe to insert as is.
    caption : str
        What the chart shows and how to read it (plain text, for a ``<figcaption>``).
    """

    svg: Markup
    caption: str


@dataclass(frozen=True)
class _Bar:
    label: str  # what the bar counts, e.g. "5-9": under it, in the alt text and tooltip
    value: float  # its height, in the unit of the y axis
    text: str  # its value as printed
    flagged: bool  # beyond the policy's threshold


@dataclass(frozen=True)
class _Marker:
    position: float  # in bar widths from the left edge of the plot
    label: str


def _el(tag: str, text: str | Markup | None = None, **attrs: object) -> Markup:
    """One SVG element; attribute names use ``_`` for ``-``, values and text are escaped."""
    rendered = "".join(
        f' {name.rstrip("_").replace("_", "-")}="{escape(str(value))}"'
        for name, value in attrs.items()
    )
    if text is None:
        return Markup(f"<{tag}{rendered}/>")
    return Markup(f"<{tag}{rendered}>{escape(text)}</{tag}>")


def _svg(chart_id: str, title: str, desc: str, height: float, body: Sequence[Markup]) -> Markup:
    return Markup("").join(
        [
            Markup(
                f'<svg class="chart" role="img" '
                f'viewBox="0 0 {_WIDTH} {height:.0f}" '
                f'aria-labelledby="{escape(chart_id)}-title {escape(chart_id)}-desc" '
                f'font-family="{escape(_FONT)}" font-size="13" fill="{_INK}">'
            ),
            _el("title", title, id=f"{chart_id}-title"),
            _el("desc", desc, id=f"{chart_id}-desc"),
            *body,
            Markup("</svg>"),
        ]
    )


def _axis_ticks(maximum: float) -> list[float]:
    """0 and round steps (1, 2 or 5 times a power of ten) up to at least ``maximum``."""
    if maximum <= 0:
        return [0.0, 1.0]
    rough = maximum / 4
    power = 10 ** math.floor(math.log10(rough))
    step = next(power * m for m in (1, 2, 5, 10) if power * m >= rough)
    return [step * i for i in range(math.ceil(maximum / step - 1e-9) + 1)]


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text_width(text: str, size: float) -> float:
    """A generous width of ``text`` at font ``size``: 0.62 em a character (system sans
    fonts average about 0.5 em over digits and lower case), 0.8 em for capitals and wide
    signs, so that a label laid out with it is never clipped."""
    return _width(len(text), sum(map(_wide, text)), size)


def _wide(character: str) -> bool:
    return character.isupper() or character in "MW%@—–…"


def _width(characters: int, wide: int, size: float) -> float:
    """:func:`_text_width` of ``characters`` characters, ``wide`` of them wide."""
    return size * (0.62 * (characters - wide) + 0.8 * wide)


def _number(value: float) -> str:
    """``value`` with at most 4 significant digits, thousands separated, no exponent:
    ``0.30000000000000004`` -> ``0.3``, ``45234`` -> ``45,230``."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = 3 - math.floor(math.log10(abs(value)))
    text = f"{round(value, decimals):,.{max(decimals, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _wrap(text: str, width: float, size: float) -> list[str]:
    """``text`` broken at spaces into lines no wider than ``width`` (a word longer than
    that is cut with an ellipsis)."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and _text_width(joined, size) <= width:
            lines[-1] = joined
            continue
        lines.append(_cut(word, width, size))
    return lines


def _cut(word: str, width: float, size: float) -> str:
    """``word``, or its longest start (of at least one character, at most all but two)
    that fits ``width`` with an ellipsis after it: found in one pass over the word (a
    value of 50,000 characters, shown with --show-values, took 53 s cut a character at
    a time, each cut measured again)."""
    wide = list(itertools.accumulate(map(_wide, word), initial=0))
    if len(word) <= 2 or _width(len(word), wide[-1], size) <= width:
        return word
    keep = len(word) - 2
    while keep > 1 and _width(keep + 1, wide[keep] + 1, size) > width:
        keep -= 1
    return word[:keep] + "…"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _percent(value: float) -> str:
    return f"{value * 100:.3g}%"


def _log_ticks(maximum: float) -> list[float]:
    """0, 1 and the powers of ten up to at least ``maximum``: a log axis of counts."""
    return [0.0, *(10.0**i for i in range(max(math.ceil(math.log10(max(maximum, 1))), 1) + 1))]


def _bar_chart(
    bars: Sequence[_Bar],
    *,
    chart_id: str,
    title: str,
    x_title: str,
    y_title: str,
    y_format: Callable[[float], str],
    marker: _Marker | None,
    x_name: str,
    ticks: Sequence[tuple[float, str]] | None = None,
    log: bool = False,
) -> Markup:
    """Vertical bars with a y grid, x tick labels and an optional threshold line.

    ``ticks`` (by default each bar's label under its centre) and ``marker`` are placed
    in bar widths from the plot's left edge: ``i + 0.5`` is the centre of bar ``i``,
    ``i`` its left edge. ``x_name`` prefixes the bar labels in the alt text. With
    ``log``, heights are ``log10(1 + value)`` (counts: 0 stays at the axis, 1 shows).
    The margins are measured from the labels (:func:`_text_width`), so none is clipped.
    """
    if ticks is None:
        ticks = [(i + 0.5, bar.label) for i, bar in enumerate(bars)]
    top = 30
    tallest = max((bar.value for bar in bars), default=0.0)
    grid = _log_ticks(tallest) if log else _axis_ticks(tallest)
    left = max(64.0, 30 + max(_text_width(y_format(v), 13) for v in grid) + 8)
    right = 16
    slot = (_WIDTH - left - right) / max(len(bars), 1)
    # Tick labels that would overlap are turned 40 degrees.
    positions = [position for position, _ in ticks]
    spacing = slot * min((b - a for a, b in itertools.pairwise(positions)), default=len(bars))
    longest = max((_text_width(label, 12) for _, label in ticks), default=0.0)
    turned = longest > spacing * 0.95
    if turned:  # the first label reaches left of its tick by cos 40 of its length
        left = max(left, longest * 0.77 - positions[0] * slot + 8)
        slot = (_WIDTH - left - right) / max(len(bars), 1)
    bottom = 16 + (longest * 0.65 if turned else 4) + 30
    plot_w, plot_h = _WIDTH - left - right, 204
    height = top + plot_h + bottom

    def level(value: float) -> float:
        return math.log10(1 + value) if log else value

    scale = plot_h / level(grid[-1])
    body: list[Markup] = []
    for value in grid:
        y = top + plot_h - level(value) * scale
        body.append(
            _el("line", x1=left, x2=_WIDTH - right, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke=_GRID)
        )
        body.append(_el("text", y_format(value), x=left - 6, y=f"{y + 4:.1f}", text_anchor="end"))
    show_values = len(bars) <= 16
    for i, bar in enumerate(bars):
        bar_h = level(bar.value) * scale
        x = left + i * slot + slot * 0.1
        y = top + plot_h - bar_h
        body.append(
            Markup(
                '<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}">{}</rect>'
            ).format(
                x,
                y,
                slot * 0.8,
                bar_h,
                _FLAGGED if bar.flagged else _BAR,
                _el("title", f"{x_name} {bar.label}: {bar.text}"),
            )
        )
        if show_values and bar.value > 0 and _text_width(bar.text, 11) <= slot:
            body.append(
                _el(
                    "text",
                    bar.text,
                    x=f"{x + slot * 0.4:.1f}",
                    y=f"{y - 4:.1f}",
                    text_anchor="middle",
                    font_size=11,
                )
            )
    for position, label in ticks:
        x, y = left + position * slot, top + plot_h + 16
        if turned:
            body.append(
                _el(
                    "text",
                    label,
                    x=f"{x + 4:.1f}",
                    y=y,
                    text_anchor="end",
                    font_size=12,
                    transform=f"rotate(-40 {x + 4:.1f} {y})",
                )
            )
        else:
            body.append(_el("text", label, x=f"{x:.1f}", y=y, text_anchor="middle", font_size=12))
    body.append(
        _el("line", x1=left, x2=_WIDTH - right, y1=top + plot_h, y2=top + plot_h, stroke=_INK)
    )
    x_half = _text_width(x_title, 13) / 2
    centre = min(max(left + plot_w / 2, x_half + 4), _WIDTH - x_half - 4)
    body.append(_el("text", x_title, x=f"{centre:.1f}", y=height - 8, text_anchor="middle"))
    y_label = y_title + (" (log scale)" if log else "")
    body.append(
        _el(
            "text",
            y_label,
            x=14,
            y=top + plot_h / 2,
            text_anchor="middle",
            transform=f"rotate(-90 14 {top + plot_h / 2:.1f})",
        )
    )
    described = "; ".join(f"{x_name} {bar.label}: {bar.text}" for bar in bars)
    if log:
        described = f"The {y_title} axis is logarithmic. {described}"
    if marker is not None:
        x = left + marker.position * slot
        body.extend(
            _threshold_line(x, marker.label, left=left, top=top, plot_w=plot_w, plot_h=plot_h)
        )
        described += f". The dashed line marks {marker.label}; bars beyond it are in red"
    return _svg(chart_id, title, f"{title}. {described}.", height, body)


def _threshold_line(
    x: float, label: str, *, left: float, top: float, plot_w: float, plot_h: float
) -> list[Markup]:
    """A dashed vertical line at ``x`` with a bold label that stays inside the plot."""
    anchor = "end" if x > left + plot_w * 0.7 else "start"
    return [
        _el(
            "line",
            x1=f"{x:.1f}",
            x2=f"{x:.1f}",
            y1=top - 8,
            y2=top + plot_h,
            stroke=_INK,
            stroke_width=2,
            stroke_dasharray="6 4",
        ),
        _el(
            "text",
            label,
            x=f"{x + (-4 if anchor == 'end' else 4):.1f}",
            y=top - 12,
            text_anchor=anchor,
            font_weight="bold",
        ),
    ]


def class_size_chart(histogram: Mapping[int, int], *, k: int | None, chart_id: str) -> Chart:
    """Number of equivalence classes by class size, with the policy's ``k`` marked.

    Sizes 1 to 10 (and ``k``) have bars of their own; larger sizes are grouped in
    ranges of 11-20, 21-50, 51-100, 101-200, ...

    Parameters
    ----------
    histogram : mapping of int to int
        Class size -> number of classes (:attr:`KAnonymityResult.histogram`).
    k : int or None
        The policy's k; classes smaller than it are drawn in red.
    chart_id : str
        Unique id prefix within the page.
    """
    largest = max(histogram, default=1)
    lows = set(range(1, 11))
    if k is not None:
        lows.add(k)
    edge, multipliers = 10, itertools.cycle((2, 2.5, 2))  # 10, 20, 50, 100, 200, ...
    while edge < largest:
        lows.add(edge + 1)
        edge = round(edge * next(multipliers))
    starts = sorted(low for low in lows if low <= largest)
    bars = []
    for i, low in enumerate(starts):
        high = starts[i + 1] - 1 if i + 1 < len(starts) else largest
        classes = sum(n for size, n in histogram.items() if low <= size <= high)
        label = f"{low}" if low == high else f"{low}–{high}"
        flagged = k is not None and high < k
        bars.append(_Bar(label, classes, _count(classes), flagged))
    marker = None
    if k is not None:
        marker = _Marker(sum(low < k for low in starts), f"k = {k}")
    # On a linear axis a bar of n classes is n / tallest of the plot's 204 units high: a
    # log axis when a nonzero red bar would be under 4 units (invisible on paper).
    tallest = max((bar.value for bar in bars), default=0.0)
    failing = [bar.value for bar in bars if bar.flagged and bar.value > 0]
    log = bool(failing) and min(failing) / _axis_ticks(tallest)[-1] * 204 < _MIN_BAR
    return Chart(
        svg=_bar_chart(
            bars,
            chart_id=chart_id,
            title="Equivalence classes by size",
            x_title="class size (records sharing the same quasi-identifier values)",
            y_title="classes",
            y_format=_count,
            marker=marker,
            x_name="size",
            log=log,
        ),
        caption="Number of equivalence classes of each size. Every record in a class of "
        "size n shares its quasi-identifier values with n - 1 others"
        + (f"; classes smaller than k = {k} are drawn in red" if k is not None else "")
        + (
            ". The axis is logarithmic (1, 10, 100, ...) so that the few failing classes show."
            if log
            else "."
        ),
    )


def distance_chart(
    per_class: NDArray[Any],
    sizes: NDArray[Any],
    *,
    t: float | None,
    sensitive: str,
    chart_id: str,
) -> Chart:
    """How far classes are from the whole table: a histogram of t-closeness distances.

    Parameters
    ----------
    per_class : numpy.ndarray
        Each class's EMD (:attr:`TClosenessResult.per_class`).
    sizes : numpy.ndarray
        Records per class, aligned with ``per_class``; each class counts with its records.
    t : float or None
        The policy's t; bins wholly above it are drawn in red.
    sensitive : str
        The SA, for the title.
    chart_id : str
        Unique id prefix within the page.
    """
    n_bins = round(1 / _DISTANCE_BIN)
    # Bins are (a, b], so a class exactly at t falls at or below it. Rounding the
    # position to 1e-6 of a bin keeps a last-bit difference from moving a class.
    position = np.round(np.asarray(per_class, dtype=float) / _DISTANCE_BIN, 6)
    index = np.clip(np.ceil(position).astype(np.int64) - 1, 0, n_bins - 1)
    records = np.bincount(index, weights=sizes, minlength=n_bins)
    bars = [
        _Bar(
            f"{i * _DISTANCE_BIN:.2f}–{(i + 1) * _DISTANCE_BIN:.2f}",
            float(n),
            f"{_count(n)} records",
            t is not None and i * _DISTANCE_BIN >= t - 1e-12,
        )
        for i, n in enumerate(records)
    ]
    marker = None if t is None else _Marker(t / _DISTANCE_BIN, f"t = {t:g}")
    return Chart(
        svg=_bar_chart(
            bars,
            chart_id=chart_id,
            title=f"Records by their class's distance from the whole table ({sensitive})",
            x_title=f"earth mover's distance of the class's {sensitive} from the whole table's",
            y_title="records",
            y_format=_count,
            marker=marker,
            x_name="distance",
            ticks=[(i, f"{i * _DISTANCE_BIN:.1f}") for i in range(0, n_bins + 1, 2)],
        ),
        caption=f"Each class's distance (EMD) between its distribution of {sensitive} and "
        "the whole table's, in bins of 0.05 (a bin holds distances above its left edge "
        "up to its right edge). Bars count records, not classes: a class of 20 records "
        "adds 20" + (f"; bins above t = {t:g} are drawn in red." if t is not None else "."),
    )


def _numeric(values: Sequence[str | None]) -> NDArray[Any] | None:
    """The values as numbers (NaN for null), or ``None`` when some value is not one."""
    try:
        numbers = np.array([np.nan if v is None else float(v) for v in values])
    except ValueError:
        return None
    present = numbers[~np.isnan(numbers)]
    return numbers if len(present) and np.isfinite(present).all() else None


def _value_rows(
    names: Sequence[str], numbers: NDArray[Any] | None, stacked: NDArray[Any], top: int
) -> tuple[list[tuple[str, NDArray[Any]]], str]:
    """The rows of the distribution chart and how they are ordered (for the caption).

    Text values: the ``top`` with the largest share, the rest summed. Numbers: ordered by
    value; more than :data:`_MAX_VALUES` distinct ones are grouped in about ten bins of a
    round width (1, 2 or 5 times a power of ten), each holding the values from its left
    edge up to, not including, its right edge. A null is a row of its own, last.
    """
    if numbers is None:
        ranked = sorted(range(len(names)), key=lambda i: (-stacked[:, i].max(), names[i]))
        rows = [(names[i], stacked[:, i]) for i in ranked[:top]]
        rest = ranked[top:]
        if rest:
            rows.append((f"other values ({len(rest)})", stacked[:, rest].sum(axis=1)))
        return rows, "Values are ordered by their largest share" + (
            "; the rest are summed as other values." if rest else "."
        )
    null = [i for i in range(len(names)) if np.isnan(numbers[i])]
    present = [i for i in range(len(names)) if not np.isnan(numbers[i])]
    present.sort(key=lambda i: numbers[i])
    if len(present) <= _MAX_VALUES:
        rows = [
            (names[i] if len(names[i]) <= 8 else _number(float(numbers[i])), stacked[:, i])
            for i in present
        ]
        how = "Values are in increasing order."
    else:
        low, high = float(numbers[present[0]]), float(numbers[present[-1]])
        step = _axis_ticks((high - low) * 0.4)[1]  # a round width, 4 to 10 bins
        first = math.floor(low / step) * step
        edges = [first + step * i for i in range(math.floor((high - first) / step) + 2)]
        bins = np.searchsorted(edges, numbers[present], side="right") - 1
        shares = stacked[:, present]
        rows = [
            (f"{_number(edges[b])}–{_number(edges[b + 1])}", shares[:, bins == b].sum(axis=1))
            for b in range(len(edges) - 1)
        ]
        how = (
            f"The {len(present):,} distinct values are grouped in bins of width {_number(step)}, "
            "in increasing order; a bin holds the values from its left edge up to, not "
            "including, its right edge."
        )
    if null:
        rows.append(("(null)", stacked[:, null].sum(axis=1)))
    return rows, how


def distribution_chart(
    counts: SensitiveCounts,
    classes: Sequence[tuple[int, str]],
    *,
    named_by: Sequence[str],
    chart_id: str,
    top: int = 8,
) -> Chart:
    """The SA distribution of some classes beside the whole table's (grouped bars).

    Parameters
    ----------
    counts : SensitiveCounts
        The SA's per-class counts (:meth:`ClassTable.sensitive_counts`).
    classes : sequence of (int, str)
        Class ids and their labels (already redacted if need be), at most four.
    named_by : sequence of str
        The columns whose values make up the labels, for the caption.
    chart_id : str
        Unique id prefix within the page.
    top : int
        Text values drawn; the rest are summed into one "other values" row. Numeric
        values are all drawn in order, binned when there are many (:func:`_value_rows`).
    """
    series = [(f"Whole table ({counts.rows:,} records)", counts.prior())]
    posterior = counts.posterior()
    for class_id, label in classes:
        share = np.zeros(len(counts.values))
        mine = counts.class_ids == class_id
        share[counts.codes[mine]] = posterior[mine]
        series.append((label, share))
    stacked = np.vstack([share for _, share in series])
    names = ["(null)" if v is None else v for v in counts.values]
    rows, ordered = _value_rows(names, _numeric(counts.values), stacked, top)
    row_labels = [_truncate(name, 24) for name, _ in rows]

    bar_h, legend_size = 12, 12
    left = 16 + max(_text_width(label, 13) for label in row_labels)
    grid = _axis_ticks(min(float(max(shares.max() for _, shares in rows)), 1.0))
    right = 8 + _text_width("99.9%", 10)  # the widest share printed beside a bar
    legend = [_wrap(label, _WIDTH - 34, legend_size) for label, _ in series]
    legend_h = sum(16 * len(lines) + 4 for lines in legend) + 8
    group_h = bar_h * len(series) + 12
    top_y = legend_h + 8
    height = top_y + group_h * len(rows) + 30
    plot_w = _WIDTH - left - right
    scale = plot_w / grid[-1]
    body: list[Markup] = []
    y = 8.0
    for i, ((label, _), lines) in enumerate(zip(series, legend, strict=True)):
        body.append(_el("rect", x=8, y=y, width=12, height=12, fill=_SERIES[i % len(_SERIES)]))
        spans = Markup("").join(
            _el("tspan", line, x=26, dy=0 if j == 0 else 16) for j, line in enumerate(lines)
        )
        body.append(
            Markup('<text x="26" y="{:.1f}" font-size="{}">{}{}</text>').format(
                y + 11, legend_size, spans, _el("title", label)
            )
        )
        y += 16 * len(lines) + 4
    plot_bottom = top_y + group_h * len(rows)
    for value in grid:
        x = left + value * scale
        body.append(
            _el("line", x1=f"{x:.1f}", x2=f"{x:.1f}", y1=top_y, y2=plot_bottom, stroke=_GRID)
        )
        body.append(
            _el(
                "text",
                _percent(value),
                x=f"{x:.1f}",
                y=plot_bottom + 16,
                text_anchor="middle",
                font_size=11,
            )
        )
    for r, ((name, shares), shown) in enumerate(zip(rows, row_labels, strict=True)):
        y0 = top_y + r * group_h + 6
        body.append(
            Markup('<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}{}</text>').format(
                left - 8, y0 + bar_h * len(series) / 2 + 4, shown, _el("title", name)
            )
        )
        for s, share in enumerate(shares):
            y = y0 + s * bar_h
            width = float(share) * scale
            body.append(
                Markup(
                    '<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}">{}</rect>'
                ).format(
                    left,
                    y,
                    width,
                    bar_h - 2,
                    _SERIES[s % len(_SERIES)],
                    _el("title", f"{series[s][0]}: {name} {float(share):.1%}"),
                )
            )
            if share > 0:
                body.append(
                    _el(
                        "text",
                        _percent(float(share)),
                        x=f"{left + width + 4:.1f}",
                        y=f"{y + bar_h - 2:.1f}",
                        font_size=10,
                    )
                )
    described = "; ".join(
        f"{label}: " + ", ".join(f"{name} {float(shares[s]):.1%}" for name, shares in rows)
        for s, (label, _) in enumerate(series)
    )
    title = f"Distribution of {counts.name}: the farthest classes beside the whole table"
    return Chart(
        svg=_svg(chart_id, title, f"{title}. {described}.", height, body),
        caption=f"Share of each value of {counts.name} in the classes farthest from the "
        "whole table (what t-closeness compares), beside the whole table's. "
        + ordered
        + f" Classes are named by their {', '.join(named_by)}.",
    )


def risk_chart(bands: Mapping[float, int], *, threshold: float, chart_id: str) -> Chart:
    """Share of records per band of prosecutor re-identification risk.

    Parameters
    ----------
    bands : mapping of float to int
        Upper edge of each band -> records (:attr:`RiskResult.bands`).
    threshold : float
        Risk above which a record is at risk; bands above it are drawn in red.
    chart_id : str
        Unique id prefix within the page.
    """
    total = sum(bands.values()) or 1
    bars, lows = [], []
    low = 0.0
    for high, records in bands.items():
        label = f"≤ {high:.0%}" if low == 0 else f"{low:.0%}–{high:.0%}"
        bars.append(
            _Bar(
                label,
                records / total,
                f"{records / total:.1%}",
                low >= threshold - 1e-12,
            )
        )
        lows.append(low)
        low = high
    edges = [*lows, low]
    band = next((i for i in range(len(bars)) if edges[i + 1] >= threshold), len(bars) - 1)
    span = edges[band + 1] - edges[band]
    position = band + (threshold - edges[band]) / span if span else band
    return Chart(
        svg=_bar_chart(
            bars,
            chart_id=chart_id,
            title="Share of records by re-identification risk",
            x_title="prosecutor risk of a record (1 / size of its class)",
            y_title="share of records",
            y_format=_percent,
            marker=_Marker(position, f"at risk above {_percent(threshold)}"),
            x_name="risk",
        ),
        caption="Share of all records in each band of prosecutor risk: the chance that an "
        "attacker who knows a person is in the data and knows their quasi-identifiers "
        f"picks their record. Bands above the threshold {_percent(threshold)} are drawn in red.",
    )


def _plot_frame(
    body: list[Markup],
    *,
    left: float,
    top: float,
    plot_w: float,
    plot_h: float,
    x_ticks: Sequence[tuple[float, str]],
    y_ticks: Sequence[tuple[float, str]],
    x_title: str,
    y_title: str,
    height: float,
) -> None:
    """Grid lines, tick labels, the x axis line and the axis titles of an x-y plot.

    Tick positions are fractions of the plot's width (x) and height (y, from the bottom).
    """
    bottom = top + plot_h
    for fraction, label in y_ticks:
        y = bottom - fraction * plot_h
        body.append(
            _el("line", x1=left, x2=left + plot_w, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke=_GRID)
        )
        body.append(_el("text", label, x=left - 6, y=f"{y + 4:.1f}", text_anchor="end"))
    for fraction, label in x_ticks:
        x = left + fraction * plot_w
        body.append(_el("line", x1=f"{x:.1f}", x2=f"{x:.1f}", y1=top, y2=bottom, stroke=_GRID))
        body.append(
            _el("text", label, x=f"{x:.1f}", y=bottom + 16, text_anchor="middle", font_size=12)
        )
    body.append(_el("line", x1=left, x2=left + plot_w, y1=bottom, y2=bottom, stroke=_INK))
    body.append(_el("line", x1=left, x2=left, y1=top, y2=bottom, stroke=_INK))
    body.append(_el("text", x_title, x=left + plot_w / 2, y=height - 8, text_anchor="middle"))
    body.append(
        _el(
            "text",
            y_title,
            x=14,
            y=f"{top + plot_h / 2:.1f}",
            text_anchor="middle",
            transform=f"rotate(-90 14 {top + plot_h / 2:.1f})",
        )
    )


def _legend(body: list[Markup], entries: Sequence[tuple[Markup, str]], *, y: float) -> None:
    """One row of legend entries (a 24-unit swatch, then the label) from the left edge."""
    x = 8.0
    for swatch, label in entries:
        body.append(Markup('<g transform="translate({:.1f} {:.1f})">{}</g>').format(x, y, swatch))
        body.append(_el("text", label, x=f"{x + 30:.1f}", y=f"{y + 4:.1f}", font_size=12))
        x += 30 + len(label) * 6.6 + 18


def _share_tick(value: float) -> str:
    return f"{value * 100:g}%"


def posterior_chart(
    curve: PosteriorCurve,
    scatter: ScatterPoints,
    *,
    sensitive: str,
    classes: int,
    chart_id: str,
) -> Chart:
    """The prior-posterior chart: the ε-DP posterior bound as a function of the prior,
    with each class's most revealing value of the syntactic release on the same axes.

    Both axes are logarithmic, so a point's height above the diagonal is its leakage
    ``ln p(s | class) / p(s)``; the bound stays within ε of the diagonal.

    Parameters
    ----------
    curve : PosteriorCurve
        The bound at each prior (:attr:`DPReport.curve`).
    scatter : ScatterPoints
        Per class the value of largest leakage, most leaking first
        (:attr:`SensitiveContrast.scatter`).
    sensitive : str
        The SA, for the title.
    classes : int
        Classes in the table (the scatter may hold only the most leaking).
    chart_id : str
        Unique id prefix within the page.
    """
    epsilon = f"ε = {curve.epsilon:.3g}"
    prior = np.asarray(scatter.prior, dtype=float)
    posterior = np.asarray(scatter.posterior, dtype=float)
    smallest = min(float(prior.min()), float(posterior.min()), 0.01) if len(prior) else 0.01
    decades = min(max(2, math.ceil(-math.log10(smallest) - 1e-9)), 6)
    low = 10.0**-decades

    left, right, top = 64, 16, 58
    plot_w, plot_h = _WIDTH - left - right, 360
    height = top + plot_h + 48

    def x_of(value: float) -> float:
        fraction = (math.log10(max(value, low)) + decades) / decades
        return left + fraction * plot_w

    def y_of(value: float) -> float:
        fraction = (math.log10(max(value, low)) + decades) / decades
        return top + plot_h - fraction * plot_h

    ticks = [(i / decades, _share_tick(10.0 ** (i - decades))) for i in range(decades + 1)]
    body: list[Markup] = []
    _plot_frame(
        body,
        left=left,
        top=top,
        plot_w=plot_w,
        plot_h=plot_h,
        x_ticks=ticks,
        y_ticks=ticks,
        x_title=f"prior: share of the value in the whole table, p({sensitive})",
        y_title="posterior p(value | group)",
        height=height,
    )
    # Points: classes at the same spot (to 2 units) are drawn once, sized by their number.
    spots: dict[tuple[int, int], list[int]] = {}
    for i in range(len(prior)):
        key = (round(x_of(float(prior[i])) / 2), round(y_of(float(posterior[i])) / 2))
        spots.setdefault(key, []).append(i)
    above = np.asarray(scatter.above_bound, dtype=bool)
    for members in sorted(spots.values(), key=len, reverse=True):
        first = members[0]
        flagged = bool(above[members].any())
        records = int(np.asarray(scatter.size)[members].sum())
        value = scatter.values[first]
        named = "(null)" if value is None else value
        tip = (
            f"{named}: {_percent(float(prior[first]))} of the table, "
            f"{_percent(float(posterior[first]))} of the group"
            + (
                f" ({len(members):,} groups, {records:,} records)"
                if len(members) > 1
                else f" (a group of {records:,} records)"
            )
            + ("; above the bound" if flagged else "")
        )
        body.append(
            Markup(
                '<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}" fill-opacity="0.55" '
                'stroke="{}" stroke-width="1">{}</circle>'
            ).format(
                x_of(float(prior[first])),
                y_of(float(posterior[first])),
                min(3 + math.sqrt(len(members) - 1), 9),
                _FLAGGED if flagged else _BAR,
                _FLAGGED if flagged else _BAR,
                _el("title", tip),
            )
        )
    diagonal = f"M{x_of(low):.1f},{y_of(low):.1f} L{x_of(1):.1f},{y_of(1):.1f}"
    body.append(
        _el("path", d=diagonal, fill="none", stroke=_INK, stroke_width=1.5, stroke_dasharray="6 4")
    )
    shown = [
        (float(p), float(b))
        for p, b in zip(curve.prior, curve.bound, strict=True)
        if p >= low and b > 0
    ]
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{x_of(p):.1f},{y_of(b):.1f}" for i, (p, b) in enumerate(shown)
    )
    body.append(_el("path", d=path, fill="none", stroke=_SERIES[3], stroke_width=3))
    line = Markup('<line x1="0" x2="24" y1="0" y2="0" stroke="{}" stroke-width="{}"{}/>')
    dot = Markup('<circle cx="12" cy="0" r="5" fill="{}" fill-opacity="0.55" stroke="{}"/>')
    _legend(
        body,
        [
            (line.format(_SERIES[3], 3, ""), f"most an {epsilon} release allows"),
            (line.format(_INK, 1.5, Markup(' stroke-dasharray="6 4"')), "nothing learned"),
        ],
        y=12,
    )
    _legend(
        body,
        [
            (dot.format(_FLAGGED, _FLAGGED), "a group above the bound"),
            (dot.format(_BAR, _BAR), "a group within it"),
        ],
        y=34,
    )

    def bound_at(p: float) -> str:
        return _percent(float(np.interp(p, curve.prior, curve.bound)))

    examples = ", ".join(
        f"{_percent(p)} to at most {bound_at(p)}" for p in (0.001, 0.01, 0.1, 0.5) if p >= low
    )
    # The most revealing points, those with the same value and shares counted together.
    alike: dict[tuple[str | None, float, float], list[int]] = {}
    for i in range(len(prior)):
        same = (scatter.values[i], round(float(prior[i]), 9), round(float(posterior[i]), 9))
        alike.setdefault(same, []).append(i)
    worst = "; ".join(
        f"{'(null)' if value is None else value}: {_percent(p)} to {_percent(q)} "
        + (
            f"in {len(members):,} groups ({int(np.asarray(scatter.size)[members].sum()):,} records)"
            if len(members) > 1
            else f"in a group of {int(scatter.size[members[0]]):,}"
        )
        for (value, p, q), members in itertools.islice(alike.items(), 5)
    )
    n_above = int(above.sum())
    title = f"What an attacker believes about {sensitive}: the syntactic release beside {epsilon}"
    desc = (
        f"{title}. Both axes are logarithmic, from {_percent(low)} to 100%. The dashed "
        f"diagonal is posterior equal to prior (nothing learned). The curve is the most "
        f"an {epsilon} release allows: a prior of {examples}. Points: {len(prior):,} "
        f"groups, each at its most revealing value of {sensitive}; {n_above:,} lie above "
        f"the curve and {len(prior) - n_above:,} on or below it"
        + (f". Most revealing: {worst}" if worst else "")
        + "."
    )
    return Chart(
        svg=_svg(chart_id, title, desc, height, body),
        caption=f"Each point is one group (equivalence class) at its most revealing value "
        f"of {sensitive}: across, the value's share of the whole table (what an attacker "
        "believes before learning the person's group); up, its share of the group (what "
        "the attacker believes after). Both axes are logarithmic, so a point's height "
        "above the dashed diagonal is the leakage. The curve is the most an attacker "
        f"could believe after an {epsilon} release, from the same prior; red points are "
        "groups where the syntactic release lets an attacker believe more than that. "
        "Groups at the same spot share one dot, larger when there are more of them"
        + (
            f"; the {len(prior):,} most revealing of {classes:,} groups are drawn."
            if len(prior) < classes
            else "."
        ),
    )


def profile_chart(
    profile: Sequence[tuple[float, float]], *, epsilon: float, chart_id: str
) -> Chart:
    """The privacy profile δ(ε') of the mechanism as a line, the release's ε marked.

    Parameters
    ----------
    profile : sequence of (float, float)
        ``(ε', δ(ε'))`` points, ε' ascending (:attr:`DPReport.profile`).
    epsilon : float
        The release's ε, marked with a dashed line.
    chart_id : str
        Unique id prefix within the page.
    """
    left, right, top = 64, 16, 30
    plot_w, plot_h = _WIDTH - left - right, 200
    height = top + plot_h + 48
    xs = [float(e) for e, _ in profile]
    ys = [float(d) for _, d in profile]
    x_grid = _axis_ticks(max(xs, default=1.0))
    y_grid = _axis_ticks(max(ys, default=0.0))

    def x_of(value: float) -> float:
        return left + value / x_grid[-1] * plot_w

    def y_of(value: float) -> float:
        return top + plot_h - value / y_grid[-1] * plot_h

    body: list[Markup] = []
    _plot_frame(
        body,
        left=left,
        top=top,
        plot_w=plot_w,
        plot_h=plot_h,
        x_ticks=[(v / x_grid[-1], f"{v:g}") for v in x_grid],
        y_ticks=[(v / y_grid[-1], f"{v:g}") for v in y_grid],
        x_title="ε′",
        y_title="δ(ε′)",
        height=height,
    )
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{x_of(x):.1f},{y_of(y):.1f}"
        for i, (x, y) in enumerate(zip(xs, ys, strict=True))
    )
    body.append(_el("path", d=path, fill="none", stroke=_BAR, stroke_width=2.5))
    for x, y in zip(xs, ys, strict=True):
        body.append(
            Markup('<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}">{}</circle>').format(
                x_of(x), y_of(y), _BAR, _el("title", f"ε′ {x:.3g}: δ {y:.3g}")
            )
        )
    marked = f"ε = {epsilon:.3g}"
    if math.isfinite(epsilon) and epsilon <= x_grid[-1]:
        x = x_of(epsilon)
        label = f"this release: {marked}"
        body.extend(_threshold_line(x, label, left=left, top=top, plot_w=plot_w, plot_h=plot_h))
    title = "Privacy profile of the mechanism: the smallest δ at each ε′"
    described = "; ".join(f"ε′ {x:.3g}: δ {y:.3g}" for x, y in zip(xs, ys, strict=True))
    return Chart(
        svg=_svg(
            chart_id,
            title,
            f"{title}. {described}. The dashed line marks this release's {marked}.",
            height,
            body,
        ),
        caption="For each ε′ across, the smallest δ up, such that the noise makes one "
        "release (ε′, δ)-differentially private for the worst pair of neighbouring "
        "datasets: the chance that the privacy loss exceeds ε′, weighted by how far. "
        "Where the line reaches 0 the mechanism is pure ε′-DP. The chance that a "
        "stability threshold lets a combination through is not part of this curve.",
    )
