"""The HTML reports of ``anonaudit compose`` and ``anonaudit diff``, and releases given as
generalizations of one input (``compose INPUT --generalize ... --generalize ...``)."""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonaudit.cli import main
from anonaudit.linkage import Composition, compose, generalized_releases, read_releases
from anonaudit.report.html import DEFAULT_MAX_ROWS

HOSTILE = "<script>alert(1)</script>"

# Two releases of overlapping patients (Ganta, Kasiviswanathan & Smith 2008, Table 1, as
# tests/test_linkage.py rebuilds it): each is 3-diverse or better, yet pid 1's value is
# the only one common to both of its classes.
RELEASE_A = pd.DataFrame(
    {
        "pid": [1, 2, 3, 4, 5, 6, 7, 8],
        "zip": ["130**"] * 8,
        "age": ["<30"] * 4 + [">=40"] * 4,
        "disease": ["AIDS", "Cold", "Ulcer", "Flu", "Cancer", "Heart", "Flu", "Flu"],
    }
)
RELEASE_B = pd.DataFrame(
    {
        "pid": [1, 11, 12, 13, 14, 15, 5, 21, 22, 23, 24, 25],
        "zip": ["130**"] * 12,
        "age": ["<35"] * 6 + [">=35"] * 6,
        "disease": [
            *("AIDS", "TB", "Cancer", "Heart", "Viral", "Hepatitis"),
            *("Cancer", "Flu", "Cold", "Heart", "Hepatitis", "TB"),
        ],
    }
)


def _write(frame: pd.DataFrame, path: Path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def _facts(page: str) -> dict[str, str]:
    """Every ``<th scope="row">label</th><td>value</td>`` row of ``page``, unescaped."""
    rows = re.findall(r'<tr><th scope="row">(.*?)</th><td>(.*?)</td></tr>', page)
    return {html.unescape(label): html.unescape(value) for label, value in rows}


def _compose_args(tmp_path: Path) -> list[str]:
    a = _write(RELEASE_A, tmp_path / "a.csv")
    b = _write(RELEASE_B, tmp_path / "b.csv")
    return ["compose", a, b, "--id", "pid", "--qi", "zip,age", "--sensitive", "disease"]


def test_compose_html_holds_the_figures_of_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "compose.html"
    args = [*_compose_args(tmp_path), "--html", str(page)]
    assert main([*args, "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)["composition"]["disease"]
    text = page.read_text(encoding="utf-8")
    facts = _facts(text)
    assert facts["records in two or more releases, with the same value in each"] == str(
        document["records"]
    )
    assert facts["of them, disclosed (one consistent value)"] == str(document["disclosed_records"])
    posterior = facts["the attacker's largest posterior on a value"]
    assert posterior == f"{document['max_posterior']:.4f}"
    assert facts["combinations of classes among them"] == str(document["combinations"])
    dp = document["dp"]
    assert facts["total ε at the summed δ"] == f"{dp['total']['epsilon']:g} at δ = 0"
    assert facts["ε of a change of one person's value"] == f"{dp['value_epsilon']:g}"
    bound = f"{dp['posterior_bound']:.4f}"
    assert facts["largest posterior it allows (at the pooled prior)"] == bound
    for release in document["releases"]:  # each release on its own, one row each
        cells = (release["name"], release["records"], release["classes"], release["distinct_l"])
        row = '<tr><th scope="row">{}</th><td class="num">{}</td><td class="num">{}</td>'
        assert (row + '<td class="num">{}</td></tr>').format(*cells) in text
    # The point of the page, in its headline: disclosed by composition, bounded by DP.
    headline = html.unescape(re.search(r'<p class="headline[^"]*">(.*?)</p>', text)[1])
    assert "Each release on its own is distinct l-diverse (l = 3, 6)" in headline
    assert "disclose the value of 1 record" in headline
    assert f"bound any attacker's posterior at {bound}" in headline
    # Self-contained: the audit report's stylesheet inline, no script, nothing fetched.
    assert "<style>" in text and "<script" not in text and "src=" not in text
    assert "default-src 'none'" in text


def test_diff_html_holds_the_figures_of_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(
        pd.DataFrame({"zip": ["130"] * 4, "dx": ["flu", "flu", "hiv", "hiv"]}), tmp_path / "old.csv"
    )
    new = _write(
        pd.DataFrame({"zip": ["130"] * 5, "dx": ["flu", "flu", "hiv", "hiv", "hiv"]}),
        tmp_path / "new.csv",
    )
    page = tmp_path / "diff.html"
    args = ["diff", old, new, "--qi", "zip", "--sensitive", "dx", "--html", str(page)]
    args.append("--show-values")
    assert main([*args, "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)["differencing"]["dx"]
    text = page.read_text(encoding="utf-8")
    facts = _facts(text)
    assert facts["classes in either release"] == str(document["classes"])
    assert facts["classes whose size or histogram changed"] == str(document["classes_changed"])
    assert facts["classes changed in exactly one value"] == str(document["disclosing_classes"])
    disclosed = facts["records added or removed there: value disclosed"]
    assert disclosed == str(document["disclosed_records"])
    (listed,) = document["disclosing"]
    row = "<tr><td>130</td><td>hiv</td>" + "".join(
        f'<td class="num">{cell}</td>' for cell in (listed["old_size"], listed["new_size"], "+1")
    )
    assert row + "</tr>" in text


def test_diff_redacts_by_default_and_says_how_to_reproduce(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(pd.DataFrame({"zip": ["130"] * 2, "dx": ["flu", "hiv"]}), tmp_path / "old.csv")
    new = _write(
        pd.DataFrame({"zip": ["130"] * 3, "dx": ["flu", "hiv", "hiv"]}), tmp_path / "new.csv"
    )
    page = tmp_path / "diff.html"
    args = ["diff", old, new, "--qi", "zip", "--sensitive", "dx", "--html", str(page)]
    assert main([*args, "--json", "-"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["differencing"]["dx"]["disclosing"]
    assert listed["quasi_identifiers"] == {"zip": "[redacted]"} and listed["value"] == "hiv"
    text = page.read_text(encoding="utf-8")
    assert "<td>130</td>" not in text and "<tr><td>[redacted]</td><td>hiv</td>" in text
    assert "redacted: yes" in text
    href = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', text)
    assert href is not None
    download = base64.b64decode(href.group(1)).decode("utf-8")
    assert "130" not in download and "[redacted]" in download and "hiv" in download
    reproduce = text.split("<h3>Reproduce</h3>")[1].split("</pre>")[0]
    assert "anonaudit diff" in reproduce
    # The compose page, which lists no value, says how to reproduce it too.
    compose_page = tmp_path / "compose.html"
    ids = pd.DataFrame({"pid": [1, 2], "zip": ["130", "130"], "dx": ["flu", "hiv"]})
    first, second = _write(ids, tmp_path / "a.csv"), _write(ids, tmp_path / "b.csv")
    compose = ["compose", first, second, "--id", "pid", "--qi", "zip", "--sensitive", "dx"]
    assert main([*compose, "--html", str(compose_page), "--quiet"]) == 0
    assert "<h3>Reproduce</h3>" in compose_page.read_text(encoding="utf-8")
    # The printed summary is redacted too, unless the values are asked for.
    capsys.readouterr()
    assert main(["diff", old, new, "--qi", "zip", "--sensitive", "dx"]) == 0
    printed = capsys.readouterr().out
    assert "zip=[redacted]" in printed and "zip=130" not in printed
    assert main(["diff", old, new, "--qi", "zip", "--sensitive", "dx", "--show-values"]) == 0
    assert "zip=130" in capsys.readouterr().out


def test_hostile_values_are_escaped(tmp_path: Path) -> None:
    """A QI value, an SA value and an SA's name that are markup stay text."""
    frame = pd.DataFrame({"zip": [HOSTILE] * 4, HOSTILE: [HOSTILE, "flu", HOSTILE, "flu"]})
    old = _write(frame, tmp_path / "old.csv")
    new = _write(pd.concat([frame, frame.head(1)]), tmp_path / "new.csv")
    page = tmp_path / "diff.html"
    args = ["diff", old, new, "--qi", "zip", "--sensitive", HOSTILE, "--html", str(page)]
    args.append("--show-values")
    assert main([*args, "--quiet"]) == 0
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text
    escaped = html.escape(HOSTILE, quote=False)
    # The class's QI value and the disclosed SA value, as table cells; the SA in titles.
    assert f"<tr><td>{escaped}</td><td>{escaped}</td>" in text
    assert f"Differencing on {escaped}" in text

    a, b = RELEASE_A.copy(), RELEASE_B.copy()
    for release in (a, b):
        release.loc[release["pid"] == 1, ["age", "disease"]] = HOSTILE
    page = tmp_path / "compose.html"
    args = [
        "compose",
        _write(a, tmp_path / "a.csv"),
        _write(b, tmp_path / "b.csv"),
        "--id",
        "pid",
        "--qi",
        "zip,age",
        "--sensitive",
        "disease",
        "--html",
        str(page),
        "--quiet",
    ]
    assert main(args) == 0
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "alert(1)" not in text  # no value of a record at all


def test_diff_html_caps_the_listing_and_says_how_many_are_left_out(tmp_path: Path) -> None:
    zips = [f"{100 + i}" for i in range(40)]  # 40 classes, each gaining one "hiv" record
    frame = pd.DataFrame({"zip": zips * 2, "dx": ["flu"] * 40 + ["cold"] * 40})
    old = _write(frame, tmp_path / "old.csv")
    grown = pd.concat([frame, pd.DataFrame({"zip": zips, "dx": ["hiv"] * 40})])
    new = _write(grown, tmp_path / "new.csv")
    page = tmp_path / "diff.html"
    args = ["diff", old, new, "--qi", "zip", "--sensitive", "dx", "--html", str(page), "--quiet"]
    args.append("--show-values")
    for extra, shown in (([], DEFAULT_MAX_ROWS), (["--max-classes", "10"], 10)):
        assert main([*args, *extra]) == 0
        text = page.read_text(encoding="utf-8")
        start = text.index('<table class="classes">')
        body = text[start : text.index("</table>", start)]
        assert body.count("<tr><td>") == shown
        assert f"({shown} of 40 shown)" in text
        assert f"Left out of this page: {40 - shown} more disclosing classes" in text
        link = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', text)[1]
        csv = base64.b64decode(link).decode("utf-8-sig").splitlines()
        assert len(csv) == 1 + shown  # the download holds the rows shown, no more
        assert f"This report contains {shown} rows of quasi-identifier values" in text


def test_html_over_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _compose_args(tmp_path)
    a = args[1]
    before = Path(a).read_bytes()
    assert main([*args, "--html", a]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--html {a}: this would overwrite the input" in err
    assert Path(a).read_bytes() == before
    old, new = args[1], args[2]
    assert main(["diff", old, new, "--qi", "zip,age", "--sensitive", "disease", "--html", new]) == 2
    assert f"--html {new}" in capsys.readouterr().err


# -- releases as generalizations of one input ----------------------------------------


def _records() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 400
    ages = rng.integers(18, 80, n).astype(str).astype(object)
    ages[rng.choice(n, 6, replace=False)] = None  # a null QI stays null in every release
    return pd.DataFrame(
        {
            "pid": rng.permutation(n) + 1000,
            "age": ages,
            "zip": rng.choice(["13053", "13068", "13053", "14850", "14853", "14867"], n),
            "dx": rng.choice(["flu", "hiv", "cold", "cancer", "asthma"], n),
        }
    )


def _by_hand(frame: pd.DataFrame, age_width: int, zip_masked: int) -> pd.DataFrame:
    """``frame`` generalized without anonaudit: age in bands, the last ZIP digits masked."""
    low = pd.to_numeric(frame["age"]) // age_width * age_width
    band = (
        "["
        + low.astype("Int64").astype(str)
        + ", "
        + (low + age_width).astype("Int64").astype(str)
        + "["
    )
    return frame.assign(
        age=band.where(frame["age"].notna(), None),
        zip=frame["zip"].str[:-zip_masked] + "*" * zip_masked,
    )


HIERARCHIES = ["--hierarchy", "age=interval:10,20", "--hierarchy", "zip=prefix"]
ROLES = ["--id", "pid", "--qi", "age,zip", "--sensitive", "dx"]


def test_generalizations_compose_as_the_releases_written_to_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _records()
    data = _write(records, tmp_path / "data.csv")
    first = _write(_by_hand(records, 20, 1), tmp_path / "first.csv")
    second = _write(_by_hand(records, 10, 2), tmp_path / "second.csv")

    assert main(["compose", first, second, *ROLES, "--json", "-"]) == 0
    files = json.loads(capsys.readouterr().out)
    page = tmp_path / "what-if.html"
    levels = ["--generalize", "age=2,zip=1", "--generalize", "age=1 zip=2"]  # as advise prints
    what_if = ["compose", data, *ROLES, *HIERARCHIES, *levels, "--html", str(page), "--json", "-"]
    assert main(what_if) == 0
    made = json.loads(capsys.readouterr().out)

    names = [r.pop("name") for r in made["composition"]["dx"]["releases"]]
    assert names == [f"{data} generalized to age=2, zip=1", f"{data} generalized to age=1, zip=2"]
    for release in files["composition"]["dx"]["releases"]:
        release.pop("name")
    assert made["composition"] == files["composition"]
    assert made["composition"]["dx"]["disclosed_records"] > 0  # the check is not vacuous
    assert [source["name"] for source in made["inputs"]] == [data]  # one input, listed once
    text = page.read_text(encoding="utf-8")
    assert "generalized to age=1, zip=2" in text and text.count('<p class="path">') == 1

    # The same through the Python API, down to each combination of classes.
    roles = {"id": "pid", "quasi_identifiers": ["age", "zip"], "sensitive": ["dx"]}
    written = compose(read_releases([first, second], **roles), "dx")
    hierarchies = {"age": "interval:10,20", "zip": "prefix"}
    releases = generalized_releases(
        data, [{"age": 2, "zip": 1}, {"age": 1, "zip": 2}], hierarchies=hierarchies, **roles
    )
    generalized = compose(releases, "dx")
    for result in (written, generalized):
        assert result.records == len(records)  # every record is in both (nulls a class too)

    def combinations(result: Composition) -> list[tuple[int, int, float]]:
        return sorted(
            zip(
                result.combination_records.tolist(),
                result.candidates.tolist(),
                np.round(result.posterior, 12).tolist(),
                strict=True,
            )
        )

    assert combinations(generalized) == combinations(written)

    def prior(result: Composition) -> dict[str | None, float]:
        # The values are numbered in the order each release lists them; compare by value.
        return dict(zip(result.values, result.prior.tolist(), strict=True))

    assert prior(generalized) == prior(written)


def test_generalize_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(_records(), tmp_path / "data.csv")
    base = ["compose", data, *ROLES, *HIERARCHIES]
    two = ["--generalize", "age=2", "--generalize", "zip=2"]
    cases = {
        "two inputs": (["compose", data, data, *ROLES, *HIERARCHIES, *two], "one input file"),
        "one release": ([*base, "--generalize", "age=2"], "at least two releases"),
        "no hierarchy": ([*base[:-4], *two], "no hierarchy"),
        "hierarchy alone": ([*base], "--hierarchy goes with --generalize"),
        "level text": ([*base, "--generalize", "age=x", "--generalize", "zip=1"], "whole number"),
        "level range": ([*base, "--generalize", "age=9", "--generalize", "zip=1"], "out of range"),
        "not a QI": ([*base, "--hierarchy", "dx=prefix", *two], "not a quasi-identifier"),
        "ledger": ([*base, *two, "--ledger", str(tmp_path / "l.sqlite")], "hypothetical"),
    }
    for name, (args, message) in cases.items():
        assert main(args) == 2, name
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (name, err)
    hierarchy = _write(pd.DataFrame([["13053", "1305*", "*"]]), tmp_path / "zip.csv")
    args = [*base[:-2], "--hierarchy", f"zip={hierarchy}", *two, "--html", hierarchy]
    assert main(args) == 2  # a hierarchy file is an input too
    assert f"--html {hierarchy}: this would overwrite the input" in capsys.readouterr().err
