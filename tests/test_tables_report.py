"""The reports of ``anonaudit tables``: the HTML page (verdict, findings, certificates,
escaping, redaction) and the JSON Schema of the document (anonaudit/schema/tables.schema.json)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from anonaudit.cli import main
from anonaudit.errors import ParameterError
from anonaudit.report.tables_html import tables_html
from anonaudit.settings.catalog import TABLES_OPTIONS
from anonaudit.settings.names import SCHEMA_VERSION
from anonaudit.tables.audit import FINDINGS

jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs jsonschema")

ROOT = Path(__file__).resolve().parents[1]

EDU = """education \\ race,Black,White,Other,Total
HS,3,x,x,40
Bachelors,12,20,x,45
Masters,x,15,2,29
Total,27,65,22,114
"""

# North, M = 9428 - 7311 = 2117 and South, F = 8977 - 8123 = 854: every figure is a
# number no heading, count or rule of the page can be.
DISTINCT = """region \\ sex,F,M,Total
North,7311,x,9428
South,x,8123,8977
Total,8165,10240,18405
"""

# The codes carry markup and an ampersand; so do the dimension and the file's name.
HOSTILE = """dept & unit \\ sex,F,M,Total
<script>alert(1)</script>,3,x,12
R&D,x,7,15
Total,11,16,27
"""

SAFE = """education \\ race,Black,White,Total
HS,x,x,45
Bachelors,x,x,52
Total,51,46,97
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test in a folder of its own, its tables named as given: ``edu.csv``."""
    monkeypatch.chdir(tmp_path)


def _write(name: str, text: str) -> str:
    Path(name).write_text(text, encoding="utf-8")
    return name


def _html(argv: list[str], out: str, expected: int = 1) -> str:
    assert main(["tables", *argv, "--html", out]) == expected
    return Path(out).read_text(encoding="utf-8")


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(["tables", *argv, "--json", "-"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def _numbers(text: str, least: int = 100) -> set[str]:
    """The whole numbers of at least ``least`` in ``text`` (as written, no separators)."""
    return {n for n in re.findall(r"(?<![\w.])\d+(?![\w.])", text) if int(n) >= least}


# -- the HTML page -----------------------------------------------------------------------


def test_the_page_gives_the_verdict_the_findings_and_their_certificates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    edu = _write("edu.csv", EDU)
    html = _html([edu], "edu.html")
    assert capsys.readouterr().out.startswith("anonaudit tables: FAIL")  # the summary still
    verdict = html.index('<p class="headline headline-fail">FAIL: the tables disclose</p>')
    assert verdict < html.index('id="tables"') < html.index('id="rules"')
    assert '<a href="#kind-exact">4 disclosed exactly by the published cells</a>' in html
    assert '<a href="#kind-published">2 sensitive cells published as they are</a>' in html
    assert html.index('id="kind-exact"') < html.index('id="kind-published"')  # FINDINGS' order
    # the tables read and the rules applied
    assert "<td>edu.csv</td><td>counts</td><td>education, race</td>" in html
    assert '<td class="num">16</td><td class="num">4</td><td class="num">0</td>' in html
    assert "<td>10 units</td>" in html and "<td>n = 2, k = 85%</td>" in html
    # each finding: its cells, rule, sentence and certificate (">=" escaped)
    assert "edu.csv: education=HS, race=Other</p>" in html
    assert "rule: <strong>threshold (minimum frequency)</strong>" in html
    assert "education=HS, race=Other: published as x, but the published cells give its value " \
        "exactly" in html  # fmt: skip
    assert (
        '<pre class="command"><code>[edu.csv: education=HS, race=White] = [edu.csv: '
        "education=Total, race=White] - [edu.csv: education=Bachelors, race=White] - "
        "[edu.csv: education=Masters, race=White], every other cell being &gt;= 0"
    ) in html
    assert html.count("Certificate:") == 4
    # the page of the linkage reports: one file, no script, the same policy
    assert "default-src 'none'; style-src 'unsafe-inline'" in html
    assert "<script" not in html.lower() and "<link" not in html and "src=" not in html
    assert "Redacted report." in html and "--show-values" in html
    assert "<code>anonaudit tables edu.csv --html edu.html</code>" in html


def test_a_passing_page_says_so() -> None:
    safe = _write("safe.csv", SAFE)
    html = _html([safe, "--threshold", "5"], "safe.html", expected=0)
    assert 'headline-pass">PASS: the tables may go out as they are</p>' in html
    assert "neither give a suppressed cell" in html and 'id="kind-' not in html
    assert "<td>5 units</td>" in html


def test_the_page_is_deterministic() -> None:
    edu = _write("edu.csv", EDU)
    first = _html([edu], "first.html")
    second = _html([edu], "second.html")
    assert first.replace("first.html", "") == second.replace("second.html", "")


def test_no_value_appears_without_show_values(capsys: pytest.CaptureFixture[str]) -> None:
    """Neither the suppressed cells' values nor the published figures a certificate
    quotes, in any form; with --show-values, every one of them."""
    table = _write("region.csv", DISTINCT)
    shown = _json([table, "--show-values"], capsys)
    quoted = set()
    for finding in shown["findings"]:
        quoted |= _numbers(finding["text"] + " ".join(finding["proofs"]))
    assert {"2117", "854", "9428", "7311", "8977", "8123"} <= quoted
    redacted = _html([table], "redacted.html")
    for number in quoted:
        assert not re.search(rf"(?<!\d){number}(?!\d)", redacted), number
        assert f"{int(number):,}" not in redacted, number
    full = _html([table, "--show-values"], "full.html")
    assert quoted <= _numbers(full)
    assert "give its value: 2117" in full and "This page holds values" in full
    # and the same for edu.csv's small numbers, by the forms they take
    edu = _write("edu.csv", EDU)
    redacted = _html([edu], "edu.html")
    assert "give its value:" not in redacted and not re.search(r"\] \(\d+\)", redacted)
    assert "published as 3" not in redacted
    full = _html([edu, "--show-values"], "edu-full.html")
    assert "give its value: 7" in full and "(40) + [edu.csv: education=Bachelors" in full
    assert "published as 3, but 3, fewer than 10 units" in full


def test_names_and_codes_are_escaped() -> None:
    table = _write("a&b.csv", HOSTILE)
    for extra in ([], ["--show-values"]):
        html = _html([table, *extra], "hostile.html")
        assert "<script" not in html.lower()
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "R&amp;D" in html and "dept &amp; unit" in html and "a&amp;b.csv" in html
        assert not re.search(r"&(?!(?:amp|lt|gt|quot|#39);)", html), "an unescaped &"


def test_the_page_lists_at_most_max_findings_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json([_write("edu.csv", EDU)], capsys)
    html = tables_html(document, max_findings=1)
    assert html.count("Certificate:") == 1
    assert "Left out of this page: 3 more findings of this kind" in html
    assert "Left out of this page: 1 more finding of this kind" in html
    with pytest.raises(ParameterError, match="max_findings must be a whole number >= 1"):
        tables_html(document, max_findings=0)


def test_the_page_never_overwrites_an_input(capsys: pytest.CaptureFixture[str]) -> None:
    edu = _write("edu.csv", EDU)
    assert main(["tables", edu, "--html", edu]) == 2
    assert "--html" in capsys.readouterr().err and Path(edu).read_text(encoding="utf-8") == EDU
    assert main(["tables", edu, "--html", "same.out", "--json", "same.out"]) == 2
    assert "writes the same file" in capsys.readouterr().err and not Path("same.out").exists()


@pytest.mark.parametrize("flag", ["--true-values", "--hierarchy"])
@pytest.mark.parametrize("output", ["--html", "--json"])
def test_no_output_overwrites_a_file_a_setting_names(
    flag: str, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    edu = _write("edu.csv", EDU)
    other = _write("other.csv", EDU)
    key = "edu.csv" if flag == "--true-values" else "education"
    assert main(["tables", edu, flag, f"{key}={other}", output, other]) == 2
    err = capsys.readouterr().err
    assert f"{output} {other}: this would overwrite the input " in err
    assert f"{other}; write the output to another path" in err
    assert Path(other).read_text(encoding="utf-8") == EDU


# -- the JSON Schema -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    text = (resources.files("anonaudit") / "schema" / "tables.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def _errors(schema: dict[str, Any], document: object) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
        for e in validator.iter_errors(document)
    ]


def _runs() -> list[list[str]]:
    """Command lines covering every part of the document: counts and sums, every kind
    of finding, rounding, populations, true values."""
    edu = _write("edu.csv", EDU)
    region = _write("region.csv", DISTINCT)
    hostile = _write("a&b.csv", HOSTILE)
    safe = _write("safe.csv", SAFE)
    rounded = _write("rounded.csv", "sex,count\nF,15\nM,20\nTotal,35\n")
    # A, P + A, Q = 6: a group below the threshold; with the true values (A, P = 2), the
    # two of A, P learn the other three, and a 100% safety range asks for more than [0, 6]
    grid = "a \\ b,P,Q,R,Total\nA,{},{},20,26\nB,{},{},25,31\nC,15,12,11,38\nTotal,21,18,56,95\n"
    group = _write("group.csv", grid.format("x", "x", "x", "x"))
    truth = _write("truth.csv", grid.format(2, 4, 4, 2))
    # everyone in A has Q, and nobody in A has P
    attribute = _write("attribute.csv", "x \\ y,P,Q,Total\nA,0,30,30\nB,20,25,45\nTotal,20,55,75\n")
    under20 = _write("under20.csv", "insured,count\nyes,40\nno,50\nTotal,90\n")
    under21 = _write("under21.csv", "insured,count\nyes,40\nno,53\nTotal,93\n")
    micro = _write(
        "enterprises.csv",
        "region,value,group\nNorth,900,a\nNorth,60,b\nNorth,40,c\n"
        "South,300,d\nSouth,290,d\nSouth,280,e\nSouth,270,f\n",
    )
    turnover = _write("turnover.csv", "region,turnover\nNorth,1000\nSouth,1140\nTotal,2140\n")
    nested = ["--population", "under20.csv=lt20", "--population", "under21.csv=lt21"]
    nested += ["--within", "lt20=lt21"]
    holding = ["--holding", "group"]
    return [
        [edu],
        [region],
        [hostile],
        [safe, "--threshold", "5"],
        [rounded, "--rounding", "5"],
        [group, "--true-values", f"group.csv={truth}", "--safety-range", "100"],
        [attribute],
        [edu, "--zeros", "sensitive", "--q", "50", "--safety-range", "10"],
        [under20, under21, *nested],
        [turnover, "--kind", "sum", "--contributions", f"turnover.csv={micro}", *holding],
    ]


def test_the_documents_of_many_runs_validate(
    schema: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    kinds: set[str] = set()
    for argv in _runs():
        for extra in ([], ["--show-values"]):
            document = _json([*argv, *extra], capsys)
            assert _errors(schema, document) == [], argv + extra
            assert ("intervals" in document) == bool(extra)
            kinds |= {f["kind"] for f in document["findings"]}
    assert kinds == set(FINDINGS)


def test_the_page_carries_what_its_document_does_and_no_more(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """For every finding of every run: its sentence and certificates as the document
    has them, escaped; the redacted page has none of the texts with values."""
    for argv in _runs():
        redacted, shown = _json(argv, capsys), _json([*argv, "--show-values"], capsys)
        plain = {t for f in redacted["findings"] for t in [f["text"], *f["proofs"]]}
        full = {t for f in shown["findings"] for t in [f["text"], *f["proofs"]]}
        page, page_full = tables_html(redacted), tables_html(shown)
        assert all(str(escape(t)) in page for t in plain), argv
        assert all(str(escape(t)) in page_full for t in full), argv
        assert not any(str(escape(t)) in page for t in full - plain), argv


def test_the_schema_refuses_what_the_document_never_holds(
    schema: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    edu = _write("edu.csv", EDU)
    redacted, shown = _json([edu], capsys), _json([edu, "--show-values"], capsys)
    assert _errors(schema, {**redacted, "intervals": shown["intervals"]})  # values, redacted
    assert _errors(schema, {**redacted, "redacted": False})  # no intervals
    assert _errors(schema, {**redacted, "extra": 1})
    finding = {**redacted["findings"][0], "value": 7}
    assert _errors(schema, {**redacted, "findings": [finding]})
    rules = {**redacted["rules"], "k": 2}
    assert _errors(schema, {**redacted, "rules": rules})


def test_the_schema_describes_every_kind_and_the_current_version(schema: dict[str, Any]) -> None:
    properties = schema["properties"]
    assert properties["schema_version"]["const"] == SCHEMA_VERSION
    assert properties["counts"]["required"] == list(FINDINGS)
    assert properties["findings"]["items"]["properties"]["kind"]["enum"] == list(FINDINGS)


def test_the_schema_ships_with_the_package() -> None:
    assert (ROOT / "anonaudit" / "schema" / "tables.schema.json").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schema/*.json"' in pyproject and '"report/templates/*"' in pyproject


def test_the_docs_list_every_setting_of_the_policy_table() -> None:
    """docs/tables.md's table of the ``[tables]`` keys holds every one, with its flag."""
    page = (ROOT / "docs" / "tables.md").read_text(encoding="utf-8")
    keys = page[page.index("## The `[tables]` policy table") :]
    for option in TABLES_OPTIONS:
        assert f"`{option.key}`" in keys and f"`{option.flag}`" in keys, option.key
