"""The lattice advice inside the audit report: ``audit(advise=True)``, ``--advise``,
the ``advice``/``search`` JSON keys, the "Transformations that pass" HTML section and
``anonaudit advise --html``.

The worked example is ARX's example table (``data/test.csv`` of arx-deidentifier/arx,
with its hierarchies restricted to the values present; :mod:`test_advise`), whose
fronts at k = 2 are checked by hand there: without suppression the only Pareto-best
node is (age 1, gender 1, zipcode 2), DM* 4 + 9 + 4 = 17; with one record allowed
(0.15 * 7) also (0, 1, 3) and (1, 0, 3), DM* 3 * 4 + 7 = 19.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_advise import ARX_HIERARCHIES, ARX_TEST
from test_html import SCRIPT
from test_html_browser import Visit, browser  # noqa: F401  (the fixture)

import anonaudit
from anonaudit import Analyses, AuditOptions, Roles
from anonaudit.auditing import advise
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import ParameterError
from anonaudit.hierarchy import Hierarchy
from anonaudit.report.text import summary
from anonaudit.settings.policy import Policy

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "sample_data" / "adult"
QI = ["age", "gender", "zipcode"]


def _audit(
    *,
    policy: Policy | None = None,
    hierarchies: dict[str, Any] | None = None,
    advise: bool = True,
    suppression_limit: float = 0.0,
    **options: Any,
) -> anonaudit.AuditReport:
    """The ARX test table audited with advice; ``options``: more of :class:`AuditOptions`."""
    return anonaudit.audit(
        ARX_TEST,
        Roles(QI),
        AuditOptions(
            policy=Policy(k=2) if policy is None else policy,
            hierarchies=ARX_HIERARCHIES if hierarchies is None else hierarchies,
            analyses=Analyses(advise=advise, suppression_limit=suppression_limit),
            **options,
        ),
    )


def _section(page: str) -> str:
    """The HTML of the "Transformations that pass" section."""
    match = re.search(r'<section id="advice".*?</section>', page, flags=re.DOTALL)
    assert match, "the page has no advice section"
    return match.group(0)


def _files(folder: Path) -> dict[str, str]:
    """The example table and its hierarchies, as files the command line reads."""
    ARX_TEST.to_csv(folder / "test.csv", index=False)
    paths = {"data": str(folder / "test.csv")}
    for qi, hierarchy in ARX_HIERARCHIES.items():
        path = folder / f"hierarchy_{qi}.csv"
        rows = zip(*hierarchy.levels[:-1], strict=True)  # Hierarchy.from_rows adds the root
        path.write_text("".join(";".join(row) + "\n" for row in rows), encoding="utf-8")
        paths[qi] = str(path)
    return paths


# -- the API ------------------------------------------------------------------------------


def test_advise_fills_the_report_with_the_hand_checked_front() -> None:
    report = _audit()
    assert report.k_anonymity.k == 1 and report.passed is False  # every record is unique
    advice = report.advice
    assert advice is not None
    assert advice.nodes == 3 * 2 * 6
    assert [t.levels for t in advice.transformations] == [{"age": 1, "gender": 1, "zipcode": 2}]
    assert advice.transformations[0].information_loss.discernibility == 17
    assert _audit(advise=False).advice is None


def test_the_first_transformation_passes_when_audited_again() -> None:
    best = _audit().advice.transformations[0]  # type: ignore[union-attr]
    again = _audit(advise=False, generalize=best.levels)
    assert again.passed is True
    assert sorted(again.k_anonymity.histogram.items()) == [(2, 2), (3, 1)]


def test_the_suppression_limit_reaches_the_search() -> None:
    advice = _audit(suppression_limit=0.15).advice
    assert advice is not None and advice.suppression_limit == 0.15
    assert [list(t.levels.values()) for t in advice.transformations] == [
        [1, 1, 2],
        [0, 1, 3],
        [1, 0, 3],
    ]
    assert [t.information_loss.discernibility for t in advice.transformations] == [17, 19, 19]


def test_the_search_starts_from_the_data_not_from_its_generalization() -> None:
    # Auditing at (age 1) and advising: the levels are levels of the original values.
    report = _audit(generalize={"age": 1})
    assert report.generalization is not None
    assert [t.levels for t in report.advice.transformations] == [  # type: ignore[union-attr]
        {"age": 1, "gender": 1, "zipcode": 2}
    ]


def test_advise_refuses_without_a_qi_hierarchy_or_with_wildcard_nulls() -> None:
    with pytest.raises(ParameterError, match=r"--hierarchy COL=FILE\|interval:"):
        _audit(hierarchies={})
    with pytest.raises(ParameterError, match="--nulls value or drop"):
        _audit(nulls="wildcard")
    with pytest.raises(ParameterError, match="threshold"):
        _audit(policy=Policy())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["34", "45", "66", "70"]), st.sampled_from(["male", "female"])),
        min_size=1,
        max_size=12,
    ),
    k=st.integers(1, 4),
    limit=st.sampled_from([0.0, 0.2]),
)
def test_the_report_holds_what_advise_finds(
    rows: list[tuple[str, str]], k: int, limit: float
) -> None:
    frame = pd.DataFrame(rows, columns=["age", "gender"])
    hierarchies = {qi: ARX_HIERARCHIES[qi] for qi in ("age", "gender")}
    report = anonaudit.audit(
        frame,
        Roles(["age", "gender"]),
        AuditOptions(
            policy=Policy(k=k),
            hierarchies=hierarchies,
            analyses=Analyses(advise=True, suppression_limit=limit),
        ),
    )
    table = ClassTable.from_frame(frame.assign(count=1), quasi_identifiers=["age", "gender"])
    alone = advise(table, hierarchies=hierarchies, policy=Policy(k=k), suppression_limit=limit)
    assert report.advice is not None
    assert [t.levels for t in report.advice.transformations] == [
        t.levels for t in alone.transformations
    ]
    for t in report.advice.transformations:
        assert t.report.k_anonymity.k >= k
        assert t.suppressed <= limit * len(frame)


# -- JSON and the summary -----------------------------------------------------------------


def test_json_has_advice_and_search_only_when_asked() -> None:
    document = _audit(suppression_limit=0.15).to_dict()
    assert document["search"]["nodes"] == 36
    assert document["search"]["suppression_limit"] == 0.15
    assert document["search"]["hierarchy_heights"] == {"age": 2, "gender": 1, "zipcode": 5}
    assert [entry["suppressed"] for entry in document["advice"]] == [0, 1, 1]
    assert document["advice"][0]["information_loss"]["discernibility"] == 17
    assert document["advice"][1]["suppressed_fraction"] == pytest.approx(1 / 7)
    plain = _audit(advise=False).to_dict()
    assert "advice" not in plain and "search" not in plain


def test_the_summary_lists_the_front() -> None:
    text = summary(_audit())
    assert "anonaudit advise: 36 transformations" in text
    assert re.search(r"^\s+1\s+17\s.*age=1 gender=1 zipcode=2$", text, flags=re.MULTILINE)


# -- HTML -----------------------------------------------------------------------------------


def test_the_section_shows_levels_examples_and_the_plain_sentence() -> None:
    page = _audit(suppression_limit=0.15).to_html(redact=False)
    section = _section(page)
    assert 'href="#advice"' in page  # in the table of contents
    assert "Transformations that pass" in section
    assert "The search covered the 36 combinations" in section
    assert "suppressing at most 15% of the records" in section
    # The middle leaf of each hierarchy illustrates it: 66 (age), female, 81925.
    assert "<td>1 (66 → &gt;=50)</td>" in section
    assert "<td>1 (female → *)</td>" in section
    assert "<td>2 (81925 → 819**)</td>" in section
    assert "<td>0 (as is)</td>" in section
    assert "1 record (14.3%)" in section
    assert (
        "Generalizing age to level 1 of 2 (66 → &gt;=50), gender to level 1 of 1 "
        "(female → *), zipcode to level 2 of 5 (81925 → 819**), with no record "
        "suppressed, meets k = 2."
    ) in section
    assert "<code>--generalize age=1,gender=1,zipcode=2</code>" in section
    assert section.count('<th scope="row" class="num">') == 3
    assert "meets all 1 threshold" in section


def test_the_section_says_when_nothing_passes() -> None:
    section = _section(_audit(policy=Policy(k=8)).to_html())
    assert "None passes." in section
    assert "No transformation meets k = 8: none of the 36 combinations" in section
    assert "with no record suppressed" in section
    assert "<table>" not in section


def test_hierarchy_labels_are_escaped() -> None:
    hostile = {
        **ARX_HIERARCHIES,
        "age": Hierarchy.from_rows(
            [["34", "<50", "*"], ["45", "<50", "*"], ["66", SCRIPT, "*"], ["70", SCRIPT, "*"]]
        ),
    }
    page = _audit(hierarchies=hostile).to_html(redact=False)
    assert SCRIPT not in page
    assert "66 → &lt;script&gt;window.pwned" in _section(page)


def test_redaction_hides_the_example_values() -> None:
    report = _audit()
    section = _section(report.to_html(redact=True))
    assert _section(report.to_html()) == section  # redacted by default
    assert "<td>1 ([redacted] → [redacted])</td>" in section
    for value in ("66", "&gt;=50", "female", "81925", "819**"):
        assert value not in section
    assert "<code>--generalize age=1,gender=1,zipcode=2</code>" in section


# -- the command line -------------------------------------------------------------------------


def test_audit_advise_flags(tmp_path: Path) -> None:
    f = _files(tmp_path)
    out = tmp_path / "report.json"
    argv = ["audit", f["data"], "--qi", ",".join(QI), "-k", "2", "--json", str(out), "--quiet"]
    argv += [f"--hierarchy={qi}={f[qi]}" for qi in QI]
    assert main([*argv, "--advise", "--suppression-limit", "0.15"]) == 1  # the data fails k
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["search"]["suppression_limit"] == 0.15
    assert [list(e["levels"].values()) for e in document["advice"]] == [
        [1, 1, 2],
        [0, 1, 3],
        [1, 0, 3],
    ]
    assert main(argv) == 1
    assert "advice" not in json.loads(out.read_text(encoding="utf-8"))


def test_toml_keys_for_audit_and_advise(tmp_path: Path) -> None:
    f = _files(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f"inputs = [{f['data']!r}]\nquasi_identifiers = {QI!r}\nadvise = true\n"
        "suppression_limit = 0.15\n[thresholds]\nk = 2\n[hierarchy]\n"
        + "".join(f"{qi} = {f[qi]!r}\n" for qi in QI),
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    assert main(["audit", "--config", str(policy), "--json", str(out), "--quiet"]) == 1
    assert len(json.loads(out.read_text(encoding="utf-8"))["advice"]) == 3
    # anonaudit advise takes its suppression limit from the file, unless given
    assert main(["advise", "--config", str(policy), "--json", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["search"]["suppression_limit"] == 0.15
    argv = ["advise", "--config", str(policy), "--json", str(out), "--quiet"]
    assert main([*argv, "--suppression-limit", "0"]) == 0
    assert len(json.loads(out.read_text(encoding="utf-8"))["advice"]) == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--suppression-limit", "0.1"], "--suppression-limit bounds the search of --advise"),
        (["--advise", "--suppression-limit", "1.5"], r"must lie in \[0, 1\) \(got 1.5\)"),
        (["--advise"], "advise needs a hierarchy for at least one quasi-identifier"),
        (["--advise", "--nulls", "wildcard", "--hierarchy", "age=interval:10"], "--nulls value"),
    ],
)
def test_cli_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    f = _files(tmp_path)
    assert main(["audit", f["data"], "--qi", ",".join(QI), "-k", "2", *extra]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and re.search(message, error)


def test_advise_writes_the_audit_report_with_the_advice(tmp_path: Path) -> None:
    f = _files(tmp_path)
    page = tmp_path / "report.html"
    argv = ["advise", f["data"], "--qi", ",".join(QI), "-k", "2", "--quiet"]
    argv += [f"--hierarchy={qi}={f[qi]}" for qi in QI]
    assert main([*argv, "--html", str(page), "--redact"]) == 0
    text = page.read_text(encoding="utf-8")
    assert 'id="k-anonymity"' in text and "does not meet the policy" in text  # the audit
    assert "<td>1 ([redacted] → [redacted])</td>" in _section(text)
    assert "anonaudit advise " in text  # the command that made it
    assert main([*argv, "--redact"]) == 2


# -- in a browser ----------------------------------------------------------------------------


def test_the_advice_section_is_visible_on_a_phone(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    report = anonaudit.audit(
        ADULT / "adult.csv",
        Roles(["sex", "age", "race", "marital-status"], ["salary-class"]),
        AuditOptions(
            policy=Policy(k=5, l=2),
            hierarchies={
                "age": "interval:5,10,20",
                "race": ADULT / "adult_hierarchy_race.csv",
                "marital-status": ADULT / "adult_hierarchy_marital-status.csv",
            },
            analyses=Analyses(advise=True, suppression_limit=0.02),
        ),
    )
    assert report.advice is not None and len(report.advice.transformations) == 3
    path = tmp_path / "advice.html"
    report.save_html(path)
    for width in (1280, 390):
        visit = Visit(browser, path, width=width)
        section = visit.page.locator("#advice")
        section.scroll_into_view_if_needed()
        assert section.is_visible()
        assert visit.page.locator("#advice table tbody tr").count() == 3
        assert "meets k = 5 and l = 2" in visit.page.locator("#advice .outcome").inner_text()
        overflow = visit.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow == 0, f"the page is wider than a {width}px screen"
        assert visit.errors == [] and visit.requests == [visit.url]
        visit.page.close()
