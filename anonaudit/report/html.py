r"""The HTML report: one self-contained page a privacy officer can read, file and share.

:func:`render_html` lays an :class:`~anonaudit.results.AuditReport` out as one HTML file:
a verdict in plain words, the data audited (with the SHA-256 of each input file and the
command that reproduces the audit), one section per measure with its charts
(:mod:`anonaudit.report.charts`) and the classes that fail, an explanation of the
measures and their limits, and references. CSS is inline; there is no script, no font
and no request to any server (the page's Content-Security-Policy forbids them). The page
is a document people e-mail, so its size is bounded whatever the data's: each listing of
classes embeds at most ``max_classes`` rows (100 by default) as a CSV inside a ``data:``
link, and the full listings are written as CSV files beside the report only when asked
(``listings_dir``); a notice at the top says how many rows of quasi-identifier values the
page holds. Templates are files in ``anonaudit/report/templates`` rendered by Jinja2 with
autoescaping, so every value that comes from the data is escaped. With ``redact=True``
the quasi-identifier values of the listed classes are replaced by ``[redacted]``
everywhere.

How the page is put together
----------------------------
The page (``report.html.j2``) is a list of :class:`Section` objects. A section is one
template under ``templates/sections/`` fed by one view object: a frozen dataclass built
from one result in :mod:`anonaudit.report.views`, holding only text ready to print
(numbers formatted, values redacted, charts drawn). Templates never compute. Most
sections share ``sections/measure.html.j2`` and a :class:`~anonaudit.report.MeasureView`
(facts, charts, failing classes); the differential-privacy companion, when the report
has one, is ``sections/dp.html.j2`` fed by a :class:`~anonaudit.report.views.DPView`.
Each measure of the registry (:mod:`anonaudit.measures`) gives its own section, in
order, and so does each optional analysis that ran and has a view (its ``template``,
``anchor`` and ``title``); a measure or an analysis is added by its module alone. To add
another section:

1. build its view from the result in a function in :mod:`anonaudit.report.views` (a
   ``MeasureView``, or a dataclass of its own with a template
   ``templates/sections/<name>.html.j2`` that reads ``view``);
2. append ``Section(template=..., anchor=..., title=..., view=...)`` in
   :func:`_sections`.

The table of contents, the anchors and the layout follow the list; nothing else changes.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, StrictUndefined

from anonaudit import __version__
from anonaudit.errors import ParameterError
from anonaudit.files import atomic_write_text
from anonaudit.measures import in_order, registered
from anonaudit.report import (
    explain,
    view_advice,
    view_releases,
    views,
)
from anonaudit.report.kit import Listing, Options, join_names, listing_csv
from anonaudit.report.sections import analysis_section, section
from anonaudit.report.views import contents_notice, describe_call
from anonaudit.settings.names import DEFAULT_MAX_ROWS

if TYPE_CHECKING:
    from anonaudit.report.reported import Reported

__all__ = [
    "DEFAULT_MAX_CLASSES",
    "DEFAULT_MAX_ROWS",
    "Section",
    "check_cap",
    "describe_call",
    "render_html",
    "save_html",
    "write_listings",
]

#: Rows per listing embedded in the page's CSV download (the JSON report's default too).
DEFAULT_MAX_CLASSES = 100
_MEASURE = "sections/measure.html.j2"


@dataclass(frozen=True)
class Section:
    """One section of the page: ``template`` rendered with ``view``.

    Attributes
    ----------
    template : str
        Template path under ``anonaudit/report/templates``.
    anchor : str
        The section's id, unique in the page.
    title : str
        Its heading and its entry in the table of contents.
    view : object
        What the template reads as ``view``.
    """

    template: str
    anchor: str
    title: str
    view: object


@dataclass(frozen=True)
class _Page:
    title: str
    subtitle: str
    redacted: bool
    notice: str
    max_rows: int
    version: str
    audited_at: str
    sections: tuple[Section, ...]


def render_html(
    report: Reported,
    *,
    redact: bool = True,
    command: str | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_classes: int | None = DEFAULT_MAX_CLASSES,
    listings_href: str | None = None,
) -> str:
    """Render ``report`` as one self-contained HTML page.

    Parameters
    ----------
    report : Reported
        The audit.
    redact : bool
        Replace the quasi-identifier values of every listed class (tables, CSV downloads,
        chart labels) by ``[redacted]``; the page says it is redacted.
    command : str, optional
        The command line that ran the audit, shell-quoted; by default a description of
        the equivalent :func:`anonaudit.audit` call (:func:`describe_call`).
    max_rows : int
        Failing classes shown per table.
    max_classes : int or None
        Rows per listing in the page's CSV downloads (``None``: all of them, and the
        page grows with the data).
    listings_href : str, optional
        Link each listing to ``listings_href + "<name>.csv"``, the file holding all its
        rows (written by :func:`save_html` or :func:`write_listings`).

    Returns
    -------
    str
        The HTML document. Input files named in ``report.sources`` are read once to
        print their SHA-256.
    """
    options = _options(redact, max_rows, max_classes, listings_href)
    return _render(report, redact, command, options)[0]


def save_html(
    report: Reported,
    path: str | os.PathLike[str],
    *,
    redact: bool = True,
    command: str | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_classes: int | None = DEFAULT_MAX_CLASSES,
    listings_dir: str | os.PathLike[str] | None = None,
) -> None:
    """Write :func:`render_html` of ``report`` to ``path`` atomically.

    The page is rendered in full before anything is written, then written to a
    temporary file renamed over ``path``: an existing report is replaced only by a
    complete one. With ``listings_dir``, every listing is first written there in full
    (``<name>.csv``, as :func:`write_listings` does) and the page links to the files.
    """
    href = None
    if listings_dir is not None:
        relative = os.path.relpath(Path(listings_dir), Path(path).absolute().parent)
        href = Path(relative).as_posix().rstrip("/") + "/"
    options = _options(redact, max_rows, max_classes, href)
    html, listings = _render(report, redact, command, options)
    if listings_dir is not None:
        _write(listings, Path(listings_dir))
    atomic_write_text(Path(path), html)


def write_listings(
    report: Reported, directory: str | os.PathLike[str], *, redact: bool = True
) -> list[Path]:
    """Write every listing of the HTML report of ``report`` in full, one CSV file each
    (``<name>.csv``, formula-safe, UTF-8), in ``directory``; returns their paths."""
    options = _options(redact, DEFAULT_MAX_ROWS, DEFAULT_MAX_CLASSES, "")
    sections = _sections(report, command=None, options=options)
    return _write([x for section in sections for x in _listings(section.view)], Path(directory))


def check_cap(name: str, value: object, *, none: bool = False) -> None:
    """Refuse a page's cap on rows listed (``max_rows``, ...) that is not a whole number
    of at least 1 (or ``None`` where ``none`` allows it).

    Raises
    ------
    ParameterError
        Naming the cap and the value given.
    """
    if none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        allowed = " or None" if none else ""
        raise ParameterError(f"{name} must be a whole number >= 1{allowed} (got {value!r})")


def _options(
    redact: bool, max_rows: int, max_classes: int | None, listings_href: str | None
) -> Options:
    check_cap("max_rows", max_rows)
    check_cap("max_classes", max_classes, none=True)
    return Options(
        redact=redact, max_rows=max_rows, max_classes=max_classes, listings_href=listings_href
    )


def _render(
    report: Reported, redact: bool, command: str | None, options: Options
) -> tuple[str, list[Listing]]:
    """The page, and the listings it holds."""
    sections = tuple(_sections(report, command=command, options=options))
    listings = [listing for section in sections for listing in _listings(section.view)]
    identifying = [listing for listing in listings if listing.identifying]
    names = ", ".join(Path(source.name).name for source in report.sources) or "data"
    page = _Page(
        title=f"Anonymity audit of {names}" + (" (redacted)" if redact else ""),
        subtitle=(
            f"{report.rows:,} records in {report.k_anonymity.classes:,} equivalence classes "
            f"over {join_names(report.quasi_identifiers)}"
            + (f"; sensitive: {join_names(report.sensitive)}" if report.sensitive else "")
        ),
        redacted=redact,
        notice=contents_notice(
            sum(listing.embedded for listing in identifying),
            sum(listing.embedded < listing.total for listing in identifying),
            options.max_classes,
            redacted=redact,
            elsewhere=options.shown.places,
        ),
        max_rows=options.max_rows,
        version=__version__,
        audited_at=views.audit_time(report),
        sections=sections,
    )
    about = explain.report_about(_about(report))  # what the measures mean: anonaudit.report.explain
    html = environment().get_template("report.html.j2").render(page=page, about=about)
    return html, listings


def _about(report: Reported) -> tuple[explain.Measure, ...]:
    """The measures the page explains: every measure's, every optional analysis's that ran
    (and has an explanation), and with earlier releases, the attacks run on them."""
    history = report.history
    abouts = [section(m).about for m in registered()]
    abouts += [analysis_section(a).about for a, _ in report.analysed()]
    return (
        *(about for about in abouts if about is not None),
        *((explain.COMPOSITION,) if history is not None and history.composition else ()),
        *((explain.DIFFERENCING,) if history is not None and history.differencing else ()),
    )


def _listings(view: object) -> Iterator[Listing]:
    """The listings a section's view holds (a field of it, or of a field of it, or in a
    tuple of them: the "Earlier releases" section's attacks)."""
    if isinstance(view, Listing):
        yield view
    elif isinstance(view, tuple):
        for value in view:
            yield from _listings(value)
    elif dataclasses.is_dataclass(view) and not isinstance(view, type):
        for item in dataclasses.fields(view):
            yield from _listings(getattr(view, item.name))


def _write(listings: list[Listing], directory: Path) -> list[Path]:
    """Write each listing's full table to ``directory`` (created if missing)."""
    written = []
    for listing in listings:
        if listing.full is not None:
            path = directory / listing.csv_name
            atomic_write_text(path, listing_csv(listing.full))
            written.append(path)
    return written


def _sections(report: Reported, *, command: str | None, options: Options) -> list[Section]:
    """Every section of the page, in order: the one list to extend with a new section."""
    sections = [
        Section(
            "sections/verdict.html.j2",
            "verdict",
            "Verdict",
            views.verdict_view(report, view_advice.answer(report, options)),
        ),
        Section(
            "sections/dataset.html.j2",
            "dataset",
            "The data audited",
            views.dataset_view(report, command),
        ),
    ]
    if report.identifiers:
        sections.append(
            Section(
                "sections/identifiers.html.j2",
                "identifiers",
                "Direct identifiers",
                views.identifiers_view(report),
            )
        )
    for measure, sa in in_order(report.sensitive):
        anchor = views.section_anchor(measure, sa, report.sensitive)
        shown = section(measure)
        view = shown.view(report.result(measure, sa), report, options, anchor)
        sections.append(Section(_MEASURE, anchor, shown.title(sa), view))
    if report.history is not None:
        sections.append(
            Section(
                "sections/releases.html.j2",
                "releases",
                "Earlier releases",
                view_releases.releases_view(report.history, report, options),
            )
        )
    for analysis, found in report.analysed():
        its = analysis_section(analysis)
        analysis_view = its.view(found, report, options)
        if analysis_view is not None:
            sections.append(Section(its.template, its.anchor, its.title, analysis_view))
    sections.append(
        Section(
            "sections/suppression.html.j2",
            "utility",
            "Information loss and how to pass",
            view_advice.advice_view(report, options),
        )
    )
    if report.advice is not None:
        sections.append(
            Section(
                "sections/advice.html.j2",
                "advice",
                "Transformations that pass",
                view_advice.lattice_view(report.advice, options),
            )
        )
    if report.dp is not None:
        sections.append(
            Section("sections/dp.html.j2", "dp", "Differential privacy", views.dp_view(report.dp))
        )
    return sections


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("anonaudit", "report/templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
