"""Minimal sample uniques and SUDA / DIS-SUDA scores (anonaudit.measures.suda).

Published constants: the worked example of the IHSN practice guide (Benschop,
Machingauta & Welch, "Statistical Disclosure Control: A Practice Guide", section
"Calculating SUDA scores", Table 4.5 and Example 4.7, which prints sdcMicro's output),
and sdcMicro's ``tests/testthat/test_suda2.R`` (the "book example" of Templ 2017 and the
attribute contributions). Properties compare the class-table computation with a brute
force enumeration of every attribute subset on the raw records.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import wide_rows

from anonaudit import Analyses, AuditOptions, PopulationOptions, Roles, audit
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import InputError, ParameterError
from anonaudit.measures.suda import DIS_BANDS, suda, suda_weights

SETTINGS = settings(max_examples=60, deadline=None)

# Table 4.4/4.5 of the practice guide (also sdcMicro's "suda2 sdc guideline" test).
GUIDE = pd.DataFrame(
    {
        "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        "Gender": [
            "Female",
            "Female",
            "Female",
            "Male",
            "Female",
            "Male",
            "Female",
            "Male",
            "Female",
            "Female",
        ],
        "Education": [
            "Secondary incomplete",
            "Secondary incomplete",
            "Primary incomplete",
            "Secondary complete",
            "Secondary complete",
            "Secondary complete",
            "Primary complete",
            "Post-secondary",
            "Secondary incomplete",
            "Secondary incomplete",
        ],
        "Labor": [
            "Employed",
            "Employed",
            "Non-LF",
            "Employed",
            "Unemployed",
            "Employed",
            "Non-LF",
            "Unemployed",
            "Non-LF",
            "Non-LF",
        ],
    }
)


def table_of(frame: pd.DataFrame) -> ClassTable:
    counted = frame.astype(object).where(frame.notna(), None).assign(count=1)
    return ClassTable.from_frame(counted, quasi_identifiers=list(frame.columns))


def per_record(frame: pd.DataFrame, values: np.ndarray, table: ClassTable) -> list[float]:
    """A per-class array read per input record, in input order."""
    ids = {tuple(row.values()): i for i, row in enumerate(table.classes.keys.to_pylist())}
    rows = frame.astype(object).where(frame.notna(), None).itertuples(index=False)
    return [float(values[ids[tuple(row)]]) for row in rows]


def scores(frame: pd.DataFrame, **options: object) -> tuple[list[float], list[float]]:
    table = table_of(frame)
    result = suda(table, **options)  # type: ignore[arg-type]
    return per_record(frame, result.scores, table), per_record(frame, result.dis_scores, table)


# -- published examples ----------------------------------------------------------------


def test_practice_guide_scores() -> None:
    """Table 4.5: SUDA scores 6, 12, 6, 10 for the sample uniques 3, 5, 7 and 8."""
    score, _ = scores(GUIDE)
    assert score == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]


def test_practice_guide_msus_of_record_5() -> None:
    """The guide's MSUs of record 5: {Rural}, and three pairs among Female, Secondary
    complete and Unemployed."""
    result = suda(table_of(GUIDE))
    fifth = next(r for r in result.top if r.values[0] == "Rural")
    assert fifth.msus == (
        ("Residence",),
        ("Gender", "Education"),
        ("Gender", "Labor"),
        ("Education", "Labor"),
    )
    assert fifth.score == 6 + 2 + 2 + 2
    # Record 3 {Primary incomplete}, 7 {Primary complete}, 8 {Post-secondary} and two
    # pairs (its score 10 = 6 + 2 + 2), 5 as above.
    assert result.msus_by_size == {1: 4, 2: 5, 3: 0, 4: 0}
    assert (result.sample_uniques, result.special_uniques, result.pairs) == (4, 4, 6)


def test_special_uniques_are_unique_on_a_proper_subset() -> None:
    """Elliot, Manning & Ford 2002: a special unique is a sample unique with an MSU
    smaller than the key. By hand: (a, y) is unique on y alone (special); (a, x) is
    unique only on both QIs (a and x each occur more than once), so its one MSU is the
    whole key and it is not special; (b, x) occurs twice."""
    frame = pd.DataFrame({"p": ["a", "a", "b", "b"], "q": ["x", "y", "x", "x"]})
    result = suda(table_of(frame))
    assert result.msus_by_size == {1: 1, 2: 1}
    assert (result.sample_uniques, result.special_uniques) == (2, 1)
    assert scores(frame)[0] == [1.0, 1.0, 0.0, 0.0]  # (ATT - k)!: 0! and 1!


def test_cli_summary_explains_special_uniques_and_shares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "guide.csv"
    GUIDE.to_csv(data, index=False)
    assert main(["audit", str(data), "--qi", ",".join(GUIDE.columns), "--suda"]) == 0
    printed = capsys.readouterr().out
    assert "4 special uniques (unique on fewer than all 4 QIs) among 4 sample uniques" in printed
    assert "a record's score counts once for each QI of each of its MSUs" in printed


def test_practice_guide_dis_suda_of_sdcmicro() -> None:
    """Example 4.7 prints sdcMicro's (IHSN) scores and DIS-SUDA scores (DisFraction 0.01)."""
    score, dis = scores(GUIDE, original_scores=False)
    assert score == pytest.approx([0, 0, 1.75, 0, 3.25, 0, 1.75, 2.75, 0, 0])
    published = [0, 0, 0.005120313, 0, 0.010702061, 0, 0.005120313, 0.008775093, 0, 0]
    # sdcMicro holds DIS and Q in single precision: agreement to 1e-6 relative.
    assert dis == pytest.approx(published, rel=1e-6)


def test_sdcmicro_book_example() -> None:
    """test_suda2.R "suda2 book example": scores of records 5..8 are 4, 2, 6, 8."""
    frame = pd.DataFrame(
        {
            "age": ["20s"] * 7 + ["60s"],
            "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
            "income": ["50k+"] * 2 + ["50k-"] * 6,
            "education": ["highschool"] * 4
            + ["university", "highschool", "middleschool", "university"],
        }
    )
    score, _ = scores(frame)
    assert score[4:] == [4, 2, 6, 8]
    assert score[:4] == [0, 0, 0, 0]


@pytest.mark.parametrize("order", ["abc", "acb", "cab", "cba"])
def test_sdcmicro_attribute_contributions(order: str) -> None:
    """test_suda2.R "simple example contribution" 1-4: a 50%, b and c 37.5% each."""
    frame = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]}).astype(str)
    result = suda(table_of(frame[list(order)]))
    assert result.attribute_contributions == {"a": 50.0, "b": 37.5, "c": 37.5}


def test_weights() -> None:
    """(ATT - k)! and the IHSN weights (2^(ATT-k) - 1) k! (ATT-k)! / ATT!, by hand."""
    assert suda_weights(4).tolist() == [6, 2, 1, 1]
    assert suda_weights(5).tolist() == [24, 6, 2, 1, 1]
    assert suda_weights(4, original_scores=False).tolist() == pytest.approx(
        [7 * 6 / 24, 3 * 4 / 24, 1 * 6 / 24, 0.0]
    )


# -- hand-computed ---------------------------------------------------------------------


def test_dis_without_pairs_is_one() -> None:
    """No class of size 2: DIS = 1 and every special unique's DIS-SUDA score is 1."""
    frame = pd.DataFrame({"x": ["a", "a", "a", "b"], "y": ["p", "p", "p", "q"], "z": "1"})
    result = suda(table_of(frame))
    assert result.dis == 1.0
    assert sorted(result.dis_scores.tolist()) == [0.0, 1.0]


def test_dis_estimate_by_hand() -> None:
    """Skinner & Elliot: U f / (U f + P (1 - f)) with U = 4, P = 6, f = 0.1; DIS-SUDA of
    record 3 (score 6 among 6, 12, 6, 10; Q = 1 + (8 - 4) / 20 = 1.2) by hand."""
    _, dis = scores(GUIDE, dis_fraction=0.1)
    estimate = 0.4 / (0.4 + 6 * 0.9)
    assert suda(table_of(GUIDE), dis_fraction=0.1).dis == pytest.approx(estimate)
    q = 1.2
    adjust = 2 * 6**-q + 12**-q + 10**-q
    assert dis[2] == pytest.approx(1 / (1 + (4 / estimate - 4) / (6**q * adjust)))
    assert dis[4] == pytest.approx(1 / (1 + (4 / estimate - 4) / (12**q * adjust)))


def test_dis_bands_count_records() -> None:
    result = suda(table_of(GUIDE))
    assert list(result.dis_bands) == list(DIS_BANDS)
    assert result.dis_bands[0.0] == 6
    assert result.dis_bands[0.1] == 4
    assert sum(result.dis_bands.values()) == len(GUIDE)


def test_max_msu_size_truncates_scores() -> None:
    """Up to size 1 only {Rural} and the education singletons are found; weights stay."""
    full = suda(table_of(GUIDE))
    one = suda(table_of(GUIDE), max_msu_size=1)
    assert one.max_msu_size == 1 and not one.complete and full.complete
    assert one.msus_by_size == {1: 4}
    assert np.all(one.scores <= full.scores)
    assert sorted(one.scores[one.scores > 0].tolist()) == [6, 6, 6, 6]


def test_null_is_a_value() -> None:
    """A null QI value is a value of its own (the audit's null policy)."""
    frame = pd.DataFrame({"x": ["a", "a", None], "y": ["p", "p", "p"], "z": ["1", "1", "1"]})
    result = suda(table_of(frame))
    assert result.top[0].values == (None, "p", "1")
    assert result.top[0].msus == (("x",),)


def test_top_is_ordered_and_bounded() -> None:
    result = suda(table_of(GUIDE), top=2)
    assert [r.score for r in result.top] == [12, 10]
    assert suda(table_of(GUIDE), top=0).top == ()


@pytest.mark.parametrize(
    "options",
    [
        {"max_msu_size": 0},
        {"max_msu_size": 1.5},
        {"dis_fraction": 0},
        {"dis_fraction": 1.5},
        {"top": -1},
    ],
)
def test_bad_parameters(options: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        suda(table_of(GUIDE), **options)  # type: ignore[arg-type]


# -- properties against a brute-force enumeration on raw records -----------------------


def brute_force(
    rows: Sequence[tuple[str | None, ...]], max_size: int, original_scores: bool
) -> tuple[list[float], list[list[tuple[int, ...]]]]:
    """Per record: SUDA score and MSUs, by checking every subset on the raw records."""
    att = len(rows[0])
    weights = suda_weights(att, original_scores=original_scores)

    def unique(i: int, subset: tuple[int, ...]) -> bool:
        key = tuple(rows[i][p] for p in subset)
        return sum(tuple(r[p] for p in subset) == key for r in rows) == 1

    result_scores, result_msus = [], []
    for i in range(len(rows)):
        msus = [
            subset
            for size in range(1, max_size + 1)
            for subset in combinations(range(att), size)
            if unique(i, subset)
            and not any(unique(i, smaller) for smaller in combinations(subset, size - 1) if smaller)
        ]
        result_msus.append(msus)
        result_scores.append(float(sum(weights[len(m) - 1] for m in msus)))
    return result_scores, result_msus


@SETTINGS
@given(
    wide_rows(max_size=14),
    st.integers(1, 4),
    st.booleans(),
)
def test_matches_brute_force(
    rows: list[tuple[str | None, ...]], max_size: int, original_scores: bool
) -> None:
    att = len(rows[0])
    frame = pd.DataFrame(rows, columns=[f"q{i}" for i in range(att)])
    table = table_of(frame)
    result = suda(table, max_msu_size=max_size, original_scores=original_scores, top=len(rows))
    expected_scores, expected_msus = brute_force(rows, min(max_size, att), original_scores)
    assert per_record(frame, result.scores, table) == pytest.approx(expected_scores)
    counts = per_record(frame, result.msu_counts, table)
    assert counts == [len(m) for m in expected_msus]
    names = table.quasi_identifiers
    for record in result.top:
        i = next(j for j, row in enumerate(rows) if tuple(row) == record.values)
        assert record.msus == tuple(tuple(names[p] for p in m) for m in expected_msus[i])
    # Only sample uniques score; the DIS-SUDA score is a probability, 0 exactly without MSU.
    sizes = table.classes.sizes
    assert np.all(result.scores[sizes >= 2] == 0)
    assert np.all((result.dis_scores >= 0) & (result.dis_scores <= 1))
    assert np.all((result.dis_scores > 0) == (result.scores > 0))
    assert sum(result.msus_by_size.values()) == int(result.msu_counts.sum())
    if result.scores.sum():
        total = sum(result.attribute_contributions.values())
        assert 100 - 1e-9 <= total <= 100 * min(max_size, att) + 1e-9


# -- wiring ----------------------------------------------------------------------------


def test_audit_and_json() -> None:
    report = audit(
        GUIDE, Roles(list(GUIDE.columns)), AuditOptions(analyses=Analyses(suda=True, qi_analysis=2))
    )
    assert report.suda is not None and report.suda.max_msu_size == 4
    data = report.to_dict(redact=False)
    assert data["suda"]["msus_by_size"] == {"1": 4, "2": 5, "3": 0, "4": 0}
    assert data["suda"]["top"][0]["msus"][0] == ["Residence"]
    assert data["suda"]["top"][0]["quasi_identifiers"]["Residence"] == "Rural"
    redacted = report.to_dict()["suda"]["top"][0]  # redacted by default
    assert redacted["msus"][0] == ["Residence"]
    assert set(redacted["quasi_identifiers"].values()) == {"[redacted]"}
    assert audit(GUIDE, Roles(list(GUIDE.columns))).to_dict().get("suda") is None


def test_audit_uses_the_sampling_fraction_for_dis() -> None:
    report = audit(
        GUIDE,
        Roles(list(GUIDE.columns)),
        AuditOptions(
            population=PopulationOptions(sampling_fraction=0.1), analyses=Analyses(suda=True)
        ),
    )
    assert report.suda is not None
    assert report.suda.dis_fraction == 0.1
    assert report.suda.dis == pytest.approx(0.4 / (0.4 + 6 * 0.9))


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "guide.csv"
    GUIDE.to_csv(data, index=False)
    out = tmp_path / "report.json"
    code = main(
        ["audit", str(data), "--qi", ",".join(GUIDE.columns), "--suda", "2", "--json", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["suda"]["max_msu_size"] == 2 and not report["suda"]["complete"]
    assert "special uniques" in capsys.readouterr().out
    assert main(["audit", str(data), "--qi", "Gender", "--suda", "0"]) == 2
    assert "--suda" in capsys.readouterr().err


def test_config(tmp_path: Path) -> None:
    from anonaudit.cli.config import read_config

    path = tmp_path / "policy.toml"
    path.write_text('inputs = ["a.csv"]\nquasi_identifiers = ["x"]\nsuda = 3\nqi_analysis = true\n')
    config = read_config(path)
    assert (config.suda, config.qi_analysis) == (3, True)
    path.write_text('inputs = ["a.csv"]\nquasi_identifiers = ["x"]\nsuda = "all"\n')
    with pytest.raises(InputError, match="suda"):
        read_config(path)


def test_html_sections_escape_and_redact() -> None:
    """Both sections render; a hostile QI value is escaped, and gone when redacted."""
    hostile = "<script>window.pwned = 1</script>"
    frame = GUIDE.assign(Residence=GUIDE["Residence"].replace("Rural", hostile))
    report = audit(
        frame,
        Roles(list(frame.columns)),
        AuditOptions(analyses=Analyses(suda=True, qi_analysis=True)),
    )
    page = report.to_html(redact=False)
    assert '<section id="qi-analysis"' in page and '<section id="suda"' in page
    assert 'href="#suda"' in page and 'href="#qi-analysis"' in page
    assert hostile not in page and "&lt;script&gt;" in page
    assert "Residence" in page and "Gender, Education" in page  # an MSU, as column names
    redacted = report.to_html(redact=True)
    assert report.to_html() == redacted  # redacted by default
    assert "pwned" not in redacted
    links = re.findall(r'base64,([A-Za-z0-9+/=]+)" download="suda-top.csv"', redacted)
    assert "pwned" not in base64.b64decode(links[0]).decode("utf-8-sig")
