"""The HTML report in a real headless Chromium (the Debian ``chromium`` package, driven by
Playwright): it loads offline without errors or requests, every chart renders, markup in
the data never runs, printing shows the collapsed tables, and the CSV link downloads; the
same for a report with the differential-privacy section.

Screenshots go to ``test-artifacts/``. Without Playwright or ``/usr/bin/chromium`` the
tests are skipped, unless ``ANONAUDIT_BROWSER_TESTS=required`` (set by ``.ci/run``),
which turns the skip into a failure.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_html import ADULT, ADULT_POLICY, ADULT_QI, hostile_frame

import anonaudit
from anonaudit import Analyses, AuditOptions, HierarchicalDistance, ReadOptions, Roles

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("ANONAUDIT_BROWSER_TESTS") == "required":
        pytest.fail(f"browser tests are required here, but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install playwright)")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def adult() -> anonaudit.AuditReport:
    return anonaudit.audit(
        ADULT / "adult.csv",
        Roles(ADULT_QI, ["salary-class", "occupation"]),
        AuditOptions(
            policy=ADULT_POLICY,
            distances={
                "occupation": HierarchicalDistance(ADULT / "adult_hierarchy_occupation.csv")
            },
        ),
    )


@pytest.fixture(scope="module")
def pages(
    tmp_path_factory: pytest.TempPathFactory, adult: anonaudit.AuditReport
) -> dict[str, Path]:
    """The Adult report and a report of data full of markup, written to files with their
    values shown; the Adult report also as written by default, redacted."""
    folder = tmp_path_factory.mktemp("pages")
    hostile = anonaudit.audit(
        hostile_frame(),
        Roles(["zip", "<b>age</b>"], ["diagnosis"]),
        AuditOptions(policy=anonaudit.Policy(k=2, l=2, t=0.1)),
    )
    paths = {
        "adult": folder / "adult.html",
        "hostile": folder / "hostile.html",
        "redacted": folder / "redacted.html",
    }
    adult.save_html(paths["adult"], redact=False)
    hostile.save_html(paths["hostile"], redact=False)
    adult.save_html(paths["redacted"])
    return paths


class Visit:
    """A page opened from file://, with what it logged and requested."""

    def __init__(self, browser: Any, path: Path, width: int = 1280) -> None:
        self.url = path.as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", self._dialog)
        self.page.goto(self.url, wait_until="load")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def test_the_report_loads_offline_without_errors_or_requests(
    browser: Any, pages: dict[str, Path]
) -> None:
    visit = Visit(browser, pages["adult"])
    assert visit.page.title() == "Anonymity audit of adult.csv"
    assert visit.requests == [visit.url]
    assert visit.errors == []
    verdict = visit.page.locator("#verdict .headline")
    assert "does not meet the policy" in verdict.inner_text()
    visit.page.close()
    redacted = Visit(browser, pages["redacted"])  # as written by default
    assert redacted.page.title() == "Anonymity audit of adult.csv (redacted)"
    assert redacted.requests == [redacted.url]
    assert redacted.errors == []
    listed = redacted.page.locator("#k-anonymity table.classes").text_content()
    assert listed and "[redacted]" in listed and "Amer-Indian-Eskimo" not in listed
    redacted.page.close()


def test_every_chart_renders(browser: Any, pages: dict[str, Path]) -> None:
    visit = Visit(browser, pages["adult"])
    charts = visit.page.locator("svg.chart")
    assert charts.count() == 6
    for i in range(charts.count()):
        chart = charts.nth(i)
        box = chart.bounding_box()
        assert box and box["width"] > 200 and box["height"] > 100, i
        bars = [
            chart.locator("rect").nth(j).bounding_box()
            for j in range(chart.locator("rect").count())
        ]
        assert any(bar and bar["width"] > 0 and bar["height"] > 0 for bar in bars), i
        assert chart.get_attribute("role") == "img"
    visit.page.close()


def test_markup_in_the_data_does_not_run(browser: Any, pages: dict[str, Path]) -> None:
    visit = Visit(browser, pages["hostile"])
    assert visit.page.evaluate("typeof window.pwned") == "undefined"
    assert visit.page.title() == "Anonymity audit of <pandas.DataFrame>"
    assert visit.dialogs == [] and visit.errors == []
    assert visit.requests == [visit.url]  # the injected <img src=x> was never an image
    assert visit.page.locator("img, script").count() == 0
    listed = visit.page.locator("#k-anonymity table.classes").inner_text()
    assert "<script>window.pwned = 1;" in listed  # shown as text
    visit.page.close()


def test_printing_opens_the_collapsed_tables(browser: Any, pages: dict[str, Path]) -> None:
    visit = Visit(browser, pages["adult"])
    table = visit.page.locator("#k-anonymity table.classes")
    assert not table.is_visible()  # 25 rows: collapsed on screen
    visit.page.emulate_media(media="print")
    assert table.is_visible()
    visit.page.close()


def test_the_csv_link_downloads_the_first_classes(browser: Any, pages: dict[str, Path]) -> None:
    visit = Visit(browser, pages["adult"])
    with visit.page.expect_download() as download:
        visit.page.locator("#k-anonymity .download a").click()
    saved = Path(download.value.path())
    assert download.value.suggested_filename == "k-anonymity.csv"
    rows = list(csv.reader(io.StringIO(saved.read_text(encoding="utf-8-sig"))))
    assert rows[0] == ["sex", "age", "race", "marital-status", "size"]
    assert len(rows) == 1 + 100  # of 1,023: bounded by --max-classes (issue 12)
    visit.page.close()


def test_screenshots_of_the_adult_report(browser: Any, pages: dict[str, Path]) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for name, width in (("desktop", 1280), ("phone", 390)):
        visit = Visit(browser, pages["adult"], width=width)
        target = ARTIFACTS / f"adult_audit-{name}.png"
        visit.page.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 10_000
        overflow = visit.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow == 0, f"the page is wider than a {width}px screen"
        visit.page.close()


# -- the differential-privacy section ---------------------------------------------------


@pytest.fixture(scope="module")
def dp_page(tmp_path_factory: pytest.TempPathFactory, adult: anonaudit.AuditReport) -> Path:
    """The Adult report with a DP companion (epsilon 1, delta 1e-6), written to a file."""
    pytest.importorskip("opendp")
    from anonaudit import dp

    path = tmp_path_factory.mktemp("dp") / "adult_dp.html"
    options = dp.DPOptions(dp.PrivacyGuarantee(epsilon=1.0, delta=1e-6))
    replace(adult, dp=dp.companion(adult.table, options)).save_html(path)
    return path


def test_the_dp_report_loads_and_its_charts_render(browser: Any, dp_page: Path) -> None:
    visit = Visit(browser, dp_page)
    assert visit.requests == [visit.url]
    assert visit.errors == [] and visit.dialogs == []
    assert visit.page.locator("svg.chart").count() == 6 + 3
    charts = visit.page.locator("#dp svg.chart")
    assert charts.count() == 3  # prior-posterior per SA, privacy profile
    for i in range(charts.count()):
        chart = charts.nth(i)
        box = chart.bounding_box()
        assert box and box["width"] > 200 and box["height"] > 100, i
        assert chart.get_attribute("role") == "img"
        assert chart.get_attribute("aria-labelledby")
        curves = [
            chart.locator("path").nth(j).bounding_box()
            for j in range(chart.locator("path").count())
        ]
        assert any(c and c["width"] > 100 and c["height"] > 50 for c in curves), i
        points = chart.locator("circle")
        assert points.count() > 5, i
        first = points.first.bounding_box()
        assert first and first["width"] > 0 and first["height"] > 0, i
    visit.page.close()


def test_screenshots_of_the_dp_section(browser: Any, dp_page: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for name, width in (("desktop", 1280), ("phone", 390)):
        visit = Visit(browser, dp_page, width=width)
        target = ARTIFACTS / f"adult_dp-{name}.png"
        visit.page.locator("#dp").screenshot(path=str(target))
        assert target.stat().st_size > 10_000
        overflow = visit.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow == 0, f"the page is wider than a {width}px screen"
        assert visit.errors == []
        visit.page.close()


# -- issue 12: numeric SAs, readable labels, scroll cues ---------------------------------


@pytest.fixture(scope="module")
def numeric_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two reports with a numeric SA: incomes with 17-digit floats (one unique record among
    600 classes of 5, so the failing bar needs the log scale), and Adult's ages (73
    values) with the lattice search over six QIs (a wide advice table)."""
    import numpy as np
    import pandas as pd

    folder = tmp_path_factory.mktemp("numeric")
    generator = np.random.default_rng(12)
    zips = [f"Z{z:03d}" for z in range(600) for _ in range(5)] + ["Z-alone"]
    incomes = pd.DataFrame(
        {"zip": zips, "income": [repr(float(x)) for x in generator.lognormal(10, 0.6, 3001)]}
    )
    paths = {"incomes": folder / "incomes.html", "ages": folder / "ages.html"}
    anonaudit.audit(
        incomes, Roles(["zip"], ["income"]), AuditOptions(policy=anonaudit.Policy(k=2))
    ).save_html(paths["incomes"])
    qis = ["sex", "race", "marital-status", "education", "native-country", "workclass"]
    anonaudit.audit(
        ADULT / "adult.csv",
        Roles(qis, ["age"]),
        AuditOptions(
            policy=anonaudit.Policy(k=5, t=0.3),
            hierarchies={qi: ADULT / f"adult_hierarchy_{qi}.csv" for qi in qis},
            analyses=Analyses(advise=True),
        ),
        reading=ReadOptions(sep=";"),
    ).save_html(paths["ages"])
    return paths


# Every text of every chart: its box on the page against its svg's box (transforms
# included, so turned labels count as drawn), and its length.
_TEXTS = """() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll(':scope > text, :scope text:not(text text)')].map(t => {
    const r = t.getBoundingClientRect();
    const shown = [...t.childNodes].filter(n => n.nodeName !== 'title');
    return {chart: svg.getAttribute('aria-labelledby'),
            text: shown.map(n => n.textContent).join(' '),
            out: Math.max(box.left - r.left, r.right - box.right, box.top - r.top,
                          r.bottom - box.bottom)};
  });
})"""

_SCROLLER = """(selector) => {
  const e = document.querySelector(selector);
  const style = getComputedStyle(e);
  return {overflows: e.scrollWidth - e.clientWidth, overflowX: style.overflowX,
          shadow: style.backgroundImage, attachment: style.backgroundAttachment};
}"""


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("name", ["incomes", "ages"])
def test_chart_labels_fit_and_are_short(
    browser: Any, numeric_pages: dict[str, Path], name: str, width: int
) -> None:
    visit = Visit(browser, numeric_pages[name], width=width)
    assert visit.errors == []
    texts = visit.page.evaluate(_TEXTS)
    assert len(texts) > 40
    for text in texts:
        assert text["out"] <= 0.5, text  # not clipped by its chart
        assert not re.search(r"\d{5}|\.\d{5}", text["text"]), text  # <= 4 digits shown
    sa, first = {
        "incomes": ("income", ["0–20,000", "20,000–40,000", "40,000–60,000"]),
        "ages": ("age", ["10–20", "20–30", "30–40"]),
    }[name]
    values = visit.page.locator(f"svg[aria-labelledby^='t-{sa}-values'] > text[text-anchor=end]")
    labels = [values.nth(i).evaluate("t => t.firstChild.data") for i in range(values.count())]
    assert labels[:3] == first  # binned, in increasing order
    visit.page.close()


def test_numbers_are_ordered_and_the_failing_class_shows(
    browser: Any, numeric_pages: dict[str, Path]
) -> None:
    visit = Visit(browser, numeric_pages["incomes"])
    chart = visit.page.locator("svg[aria-labelledby^='k-title']")
    assert "(log scale)" in (chart.text_content() or "")
    failing = chart.locator("rect[fill='#b3261e']").first.bounding_box()
    assert failing and failing["height"] > 20  # 1 class beside 600: visible
    caption = visit.page.locator("#k-anonymity figcaption").first.inner_text()
    assert "logarithmic" in caption
    visit.page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_wide_tables_and_charts_scroll_with_a_visible_cue(
    browser: Any, numeric_pages: dict[str, Path], width: int
) -> None:
    visit = Visit(browser, numeric_pages["ages"], width=width)
    advice = visit.page.evaluate(_SCROLLER, "#advice .scroll")
    assert advice["overflows"] > 0 and advice["overflowX"] == "auto"
    # Headless Chromium hides scrollbars; the cue tested is the shadow at the edge with
    # more content beyond it (fixed to the box), uncovered as the white covers (moving
    # with the content) scroll away.
    assert advice["shadow"].count("gradient") == 4
    assert advice["attachment"] == "local, local, scroll, scroll"
    chart = visit.page.evaluate(_SCROLLER, ".chart-frame")
    assert chart["attachment"] == advice["attachment"]
    if width == 390:
        assert chart["overflows"] > 0
    else:
        assert chart["overflows"] == 0
    overflow = visit.page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow == 0
    ARTIFACTS.mkdir(exist_ok=True)
    visit.page.screenshot(path=str(ARTIFACTS / f"numeric_sa-{width}.png"), full_page=True)
    for section in ("advice", "t-closeness-age"):
        target = ARTIFACTS / f"numeric_sa-{section}-{width}.png"
        visit.page.locator(f"#{section}").screenshot(path=str(target))
        assert target.stat().st_size > 10_000
    visit.page.close()
