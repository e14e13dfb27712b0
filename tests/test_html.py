"""The HTML report: sections, verdict wording, escaping, redaction, CSV downloads,
provenance, atomic writes and size. The page in a real browser: test_html_browser.py."""

from __future__ import annotations

import base64
import csv
import io
import itertools
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

import anonaudit
from anonaudit import AuditOptions, HierarchicalDistance, Roles
from anonaudit.cli import main
from anonaudit.report import html as html_report
from anonaudit.sources import file_sha256

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "sample_data" / "adult"
ADULT_QI = ["sex", "age", "race", "marital-status"]
ADULT_POLICY = anonaudit.Policy(k=5, l=2, entropy_l=1.5, recursive=(3.0, 2), t=0.2)

SCRIPT = "<script>window.pwned = 1; document.title = 'pwned'</script>"
IMAGE = '"><img src=x onerror="window.pwned = 2">'
#: Quasi-identifier values no page may show as markup, and no CSV may leave as formulas.
HOSTILE = [SCRIPT, IMAGE, '=HYPERLINK("http://evil.example")', "+SUM(1)", "-1+2", "@cmd", "\tTAB"]


def hostile_frame() -> pd.DataFrame:
    """Each hostile value alone in its class (so every one fails k = 2), beside a safe
    class of three; the SA holds markup too."""
    zips = [*HOSTILE, "02134", "02134", "02134"]
    return pd.DataFrame(
        {
            "zip": zips,
            "<b>age</b>": ["30"] * len(zips),
            "diagnosis": ["<i>flu</i>", *["cold"] * (len(zips) - 1)],
        }
    )


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
def adult_page(adult: anonaudit.AuditReport) -> str:
    return adult.to_html()


@pytest.fixture(scope="module")
def hostile() -> anonaudit.AuditReport:
    return anonaudit.audit(
        hostile_frame(),
        Roles(["zip", "<b>age</b>"], ["diagnosis"]),
        AuditOptions(policy=anonaudit.Policy(k=2, l=2, t=0.1, alpha=0.9)),
    )


def csv_links(page: str) -> dict[str, list[list[str]]]:
    """Every CSV download of the page, decoded and parsed, by file name."""
    links = re.findall(
        r'href="data:text/csv;charset=utf-8;base64,([A-Za-z0-9+/=]+)" download="([^"]+)"', page
    )
    assert links, "no CSV download found"
    return {
        name: list(csv.reader(io.StringIO(base64.b64decode(data).decode("utf-8-sig"))))
        for data, name in links
    }


# -- content --------------------------------------------------------------------------


def test_every_section_is_present(adult_page: str) -> None:
    anchors = ["verdict", "dataset", "k-anonymity", "risk", "about", "limitations", "references"]
    for sa in ("salary-class", "occupation"):
        anchors += [f"l-diversity-{sa}", f"t-closeness-{sa}", f"disclosure-{sa}"]
    for anchor in anchors:
        assert f'<section id="{anchor}"' in adult_page, anchor
        assert f'href="#{anchor}"' in adult_page, anchor  # in the table of contents
    for about in ("about-k", "about-l", "about-t", "about-disclosure", "about-risk"):
        assert f'id="{about}"' in adult_page
    for attack in ("homogeneity", "background-knowledge", "skewness", "similarity"):
        assert attack in adult_page
    for citation in (
        "Sweeney, L. (2002)",
        "Machanavajjhala, A.",
        "Li, N., Li, T., Venkatasubramanian, S. (2007)",
        "Wong, R. C.-W.",
        "Cao, J., Karras, P. (2012)",
        "Brickell, J., Shmatikov, V. (2008)",
        "El Emam, K., Dankar, F. K. (2008)",
    ):
        assert citation in adult_page
    assert "not a privacy guarantee" in adult_page


def test_verdict_states_each_threshold_in_plain_words(adult_page: str) -> None:
    # the first check, direct identifiers, passes: every column of adult.csv is declared
    # or looks like no identifier
    assert "The data does not meet the policy: 5 of 6 checks fail (k-anonymity, " in adult_page
    assert "9 thresholds" not in adult_page  # counted as the summary counts: per measure
    assert (
        "The smallest group of people who share these attributes (sex, age, race, "
        "marital-status) has 1 member; the policy asks for 5." in adult_page
    )
    assert "measured <strong>k = 1</strong>; the policy asks for <strong>k ≥ 5</strong>" in (
        adult_page
    )
    assert "measured <strong>t = 0.83</strong>" in adult_page
    assert adult_page.count('<li class="verdict fail">') == 9
    [passing] = re.findall(r'<li class="verdict pass">.*?</li>', adult_page, flags=re.S)
    assert ">direct identifiers</a>" in passing


def test_verdict_when_the_policy_passes_or_sets_nothing() -> None:
    frame = pd.DataFrame({"zip": ["1", "1", "2", "2"], "s": ["a", "b", "a", "b"]})
    passing = anonaudit.audit(
        frame, Roles(["zip"], ["s"]), AuditOptions(policy=anonaudit.Policy(k=2, l=2))
    ).to_html()
    # direct identifiers (none is left undeclared), k-anonymity, l-diversity
    assert "The data meets the policy: all 3 checks pass." in passing
    verdicts = passing.split('<ul class="verdicts">')[1].split("</ul>")[0]
    assert verdicts.index(">direct identifiers</a>") < verdicts.index(">k-anonymity</a>")
    assert "has 2 members; the policy asks for 2." in passing
    assert "No class fails." in passing
    measured_only = anonaudit.audit(frame, Roles(["zip"])).to_html()
    assert "The policy sets no thresholds" in measured_only
    assert "The policy sets no threshold here, so no class is listed." in measured_only


def test_dataset_section_names_inputs_digests_nulls_and_the_call(adult_page: str) -> None:
    assert file_sha256(ADULT / "adult.csv") in adult_page
    assert "2,516,935 bytes" in adult_page
    assert "anonaudit.audit(" in adult_page  # the Python call, rebuilt
    assert "distances={&#39;occupation&#39;: anonaudit.HierarchicalDistance(...)}" in adult_page
    assert '<time datetime="' in adult_page
    frame_page = anonaudit.audit(hostile_frame(), Roles(["zip"])).to_html()
    assert "n/a (not a file)" in frame_page


def test_null_quasi_identifier_values_show_as_null() -> None:
    frame = pd.DataFrame({"zip": ["1", None, "1"], "s": ["a", "a", "b"]})
    report = anonaudit.audit(
        frame, Roles(["zip"], ["s"]), AuditOptions(policy=anonaudit.Policy(k=2))
    )
    page = report.to_html(redact=False)
    assert "<td>(null)</td>" in page
    assert csv_links(page)["k-anonymity.csv"] == [["zip", "size"], ["", "1"]]
    redacted = report.to_html()  # the default
    assert "<td>(null)</td>" not in redacted
    assert csv_links(redacted)["k-anonymity.csv"] == [["zip", "size"], ["[redacted]", "1"]]


def test_charts_carry_alt_text(adult_page: str) -> None:
    charts = re.findall(r"<svg [^>]*>.*?</svg>", adult_page, flags=re.S)
    assert len(charts) == 1 + 2 * 2 + 1  # class sizes; per SA two; risk
    for chart in charts:
        ids = re.search(r'aria-labelledby="([^"]+)-title \1-desc"', chart)
        assert ids and 'role="img"' in chart
        assert f'<title id="{ids.group(1)}-title">' in chart
        assert f'<desc id="{ids.group(1)}-desc">' in chart
    assert "size 1: 543" in adult_page  # the class-size chart's description states its bars
    assert "k = 5" in charts[0]


def test_headings_descend_one_level_at_a_time(adult_page: str) -> None:
    levels = [int(level) for level in re.findall(r"<h([1-6])[ >]", adult_page)]
    assert levels[0] == 1 and levels.count(1) == 1
    assert all(b <= a + 1 for a, b in itertools.pairwise(levels))
    assert '<html lang="en">' in adult_page
    assert re.search(r'<th scope="(col|row)"', adult_page)
    assert "<th>" not in adult_page


def test_the_page_is_self_contained_and_small(adult_page: str) -> None:
    assert len(adult_page.encode("utf-8")) < 1_000_000
    assert not re.search(r'(src|href|action)="(?!#|data:text/csv;)', adult_page)
    for forbidden in ("<link", "<script", "<iframe", "@import", "url(", "http://", "https://"):
        assert forbidden not in adult_page
    assert "default-src 'none'" in adult_page  # the browser refuses any request too


def test_long_tables_are_cut_and_collapsed(adult: anonaudit.AuditReport) -> None:
    assert '<details class="listing">' in adult.to_html()  # closed: 25 rows
    page = adult.to_html(max_rows=7)
    assert "Show the 7 worst of 1,023 classes" in page
    assert '<details class="listing">' not in page  # 7 rows: open
    section = page.split('<section id="k-anonymity"')[1]
    table = section.split('<table class="classes">')[1].split("</table>")[0]
    assert table.count("<tr>") == 1 + 7
    assert len(csv_links(page)["k-anonymity.csv"]) == 1 + 100  # bounded: --max-classes
    everything = html_report.render_html(adult, max_classes=None)
    assert len(csv_links(everything)["k-anonymity.csv"]) == 1 + 1023
    with pytest.raises(anonaudit.ParameterError, match="max_rows must be a whole number >= 1"):
        adult.to_html(max_rows=0)


# -- escaping and CSV downloads ----------------------------------------------------------


def test_every_data_value_is_escaped(hostile: anonaudit.AuditReport) -> None:
    page = hostile.to_html(redact=False)
    assert "<script" not in page
    assert "<img" not in page
    assert "<b>age</b>" not in page and "<i>flu</i>" not in page
    assert escape(SCRIPT) in page
    assert escape(IMAGE) in page
    assert "&lt;b&gt;age&lt;/b&gt;" in page and "&lt;i&gt;flu&lt;/i&gt;" in page


def test_csv_downloads_hold_every_class_and_defuse_formulas(
    hostile: anonaudit.AuditReport,
) -> None:
    downloads = csv_links(hostile.to_html(max_rows=1, redact=False))
    assert set(downloads) == {
        "k-anonymity.csv",
        "l-diversity-diagnosis.csv",
        "t-closeness-diagnosis.csv",
        "disclosure-diagnosis.csv",
        "classes-to-suppress.csv",
    }
    rows = downloads["k-anonymity.csv"]
    assert rows[0] == ["zip", "<b>age</b>", "size"]
    listed = {row[0] for row in rows[1:]}
    assert len(rows) == 1 + len(HOSTILE)
    assert SCRIPT in listed and IMAGE in listed  # text, exactly as in the data
    for value in ('=HYPERLINK("http://evil.example")', "+SUM(1)", "-1+2", "@cmd", "\tTAB"):
        assert "'" + value in listed, value
        assert value not in listed
    for table in downloads.values():
        for row in table:
            assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in row), row
    t_rows = downloads["t-closeness-diagnosis.csv"]
    assert t_rows[0][-2:] == ["size", "distance"]
    assert float(t_rows[1][-1]) == pytest.approx(hostile.t_closeness["diagnosis"].t, rel=1e-11)


# -- redaction --------------------------------------------------------------------------


def test_redaction_removes_every_quasi_identifier_value(hostile: anonaudit.AuditReport) -> None:
    page = hostile.to_html(redact=True)
    decoded = "\n".join(
        ",".join(",".join(row) for row in table) for table in csv_links(page).values()
    )
    for value in HOSTILE:
        for text in (page, decoded):
            assert value not in text
            assert escape(value) not in text
    assert "[redacted]" in page and "[redacted]" in decoded
    assert "Redacted report." in page
    assert "(redacted)</title>" in page


def test_redaction_of_the_adult_report(adult: anonaudit.AuditReport, adult_page: str) -> None:
    page = adult.to_html(redact=True)
    assert adult_page == page  # redacted by default
    decoded = str(csv_links(page))
    for value in ("Amer-Indian-Eskimo", "Married-spouse-absent", "Married-AF-spouse", "Widowed"):
        assert value not in page
        assert value not in decoded
    assert "class 1 [redacted]" in page  # the t-closeness chart's legend
    assert "Male" in adult.to_html(redact=False)  # ...which the unredacted report does show


# -- writing ----------------------------------------------------------------------------


def test_save_html_replaces_a_report_only_when_the_new_one_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hostile: anonaudit.AuditReport
) -> None:
    target = tmp_path / "report.html"
    target.write_text("the old report", encoding="utf-8")

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("the renderer failed")

    with monkeypatch.context() as patch:
        patch.setattr(html_report, "_render", broken)
        with pytest.raises(RuntimeError, match="the renderer failed"):
            hostile.save_html(target)
    assert target.read_text(encoding="utf-8") == "the old report"

    def interrupted(source: object, destination: object) -> None:
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr("anonaudit.files.os.replace", interrupted)
        with pytest.raises(OSError, match="disk full"):
            hostile.save_html(target)
    assert target.read_text(encoding="utf-8") == "the old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left

    hostile.save_html(target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_writes_the_html_report_with_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "my data.csv"
    hostile_frame().to_csv(data, index=False)
    page = tmp_path / "out" / "report.html"
    page.parent.mkdir()
    argv = ["audit", str(data), "--qi", "zip", "-k", "2", "--html", str(page), "--redact"]
    assert main(argv) == 1
    text = page.read_text(encoding="utf-8")
    assert f"anonaudit audit &#39;{data}&#39; --qi zip -k 2 --html" in text  # shell-quoted
    assert file_sha256(data) in text
    assert "Redacted report." in text and SCRIPT not in text
    capsys.readouterr()
    assert main(["audit", str(data), "--qi", "zip", "--redact"]) == 2
    error = capsys.readouterr().err
    assert "--redact applies to the HTML and JSON reports; add --html PATH" in error


def test_a_policy_file_names_the_html_report_relative_to_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile_frame().to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "policy.toml").write_text(
        'inputs = ["data.csv"]\nquasi_identifiers = ["zip"]\nhtml = "out/report.html"\n',
        encoding="utf-8",
    )
    (tmp_path / "out").mkdir()
    assert main(["audit", "--config", str(tmp_path / "policy.toml"), "--quiet"]) == 0
    assert "k-anonymity" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    capsys.readouterr()


def _cut_a_character_at_a_time(word: str, width: float, size: float) -> str:
    """The charts' cut of a long word as it was: two characters off, an ellipsis on,
    measured again, until it fits."""
    from anonaudit.report.charts import _text_width

    while _text_width(word, size) > width and len(word) > 2:
        word = word[:-2] + "…"
    return word


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ@—…x", max_size=40), st.floats(0, 300), st.sampled_from([9.0, 11.5]))
def test_a_long_word_is_cut_as_before_in_one_pass(word: str, width: float, size: float) -> None:
    from anonaudit.report.charts import _cut, _wrap

    assert _cut(word, width, size) == _cut_a_character_at_a_time(word, width, size)
    assert _wrap(word, width, size) == [_cut(word, width, size)]


def test_a_value_of_100k_characters_is_cut_in_one_pass() -> None:
    """It took minutes (each cut measured the whole word again: helper's report, a 50,000
    character QI value shown with --show-values took 53 s to lay out)."""
    from anonaudit.report.charts import _cut, _text_width

    word = "x" * 100_000
    cut = _cut(word, 200.0, 11.0)
    assert cut.endswith("…") and _text_width(cut, 11.0) <= 200.0
    assert _text_width(cut[:-1] + "x" + "…", 11.0) > 200.0  # the longest that fits
