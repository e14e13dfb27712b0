"""Suppression advice: hand-computed k, l and t examples, the fixed point for
t-closeness, the property that the table left after the advice passes, and the
summary, JSON and HTML wording."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import ClassTable, Policy, audit_table
from anonaudit.advice import suppression_advice
from anonaudit.cli import main

ADULT = Path(__file__).resolve().parents[1] / "sample_data" / "adult" / "adult.csv"


def table(rows: list[tuple[str, str, int]]) -> ClassTable:
    frame = pd.DataFrame(rows, columns=["q", "s", "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])


def test_k_suppresses_the_classes_smaller_than_k() -> None:
    # Classes a (5), b (1), c (2), d (3): k = 3 withholds b and c, 3 of 11 records.
    t = table([("a", "x", 5), ("b", "x", 1), ("c", "y", 2), ("d", "x", 2), ("d", "y", 1)])
    report = audit_table(t, policy=Policy(k=3))
    advice = report.suppression
    assert advice is not None and advice.passed
    assert (advice.classes, advice.records, advice.rows, advice.rounds) == (2, 3, 11, 1)
    assert advice.fraction == pytest.approx(3 / 11)
    assert sorted(advice.suppressed["q"]) == ["b", "c"]
    assert sorted(advice.keys.column("q").to_pylist()) == ["b", "c"]
    assert advice.remaining.rows == 8
    assert [(m.measure, m.classes, m.records) for m in advice.measures] == [("k-anonymity", 2, 3)]


def test_l_suppresses_the_classes_with_too_few_values() -> None:
    # a holds x and y, b only x, c only y: distinct 2-diversity withholds b and c.
    t = table([("a", "x", 2), ("a", "y", 2), ("b", "x", 3), ("c", "y", 1)])
    advice = audit_table(t, policy=Policy(l=2)).suppression
    assert advice is not None and advice.passed
    assert sorted(advice.suppressed["q"]) == ["b", "c"] and advice.records == 4
    assert advice.measures[0].measure == "l-diversity of s"


def test_t_closeness_iterates_to_a_fixed_point() -> None:
    # a: 4 x; b: 1 x, 1 y; c: 1 y. Whole table 5/7 x: distances (equal ground
    # distance, two values: |p_x - q_x|) a 2/7, b 0.214, c 5/7 > 0.3. Round 1 withholds
    # c; the table is then 5/6 x and b moves to |1/2 - 5/6| = 1/3 > 0.3. Round 2
    # withholds b; a alone is the whole table (distance 0).
    t = table([("a", "x", 4), ("b", "x", 1), ("b", "y", 1), ("c", "y", 1)])
    first = audit_table(t, policy=Policy(t=0.3))
    assert sorted(first.t_closeness["s"].per_class.round(6).tolist()) == [
        round(1.5 / 7, 6),
        round(2 / 7, 6),
        round(5 / 7, 6),
    ]
    advice = first.suppression
    assert advice is not None and advice.passed
    assert [(m.measure, m.classes, m.records) for m in advice.measures] == [
        ("t-closeness of s", 1, 1)
    ]
    assert (advice.rounds, advice.classes, advice.records) == (2, 2, 3)
    assert sorted(advice.suppressed["q"]) == ["b", "c"]
    check = functools.partial(audit_table, policy=Policy(t=0.3), advise_suppression=False)
    assert check(advice.remaining).passed is True
    # Keeping the table distribution fixed (ARX) would have stopped after round 1, and
    # the release without c alone fails a reader's audit:
    without_c = check(table([("a", "x", 4), ("b", "x", 1), ("b", "y", 1)]))
    assert without_c.t_closeness["s"].t == pytest.approx(1 / 3)


def test_b_and_c_fail_then_a_alone_passes() -> None:
    t = table([("a", "y", 4), ("b", "x", 1), ("b", "y", 1), ("c", "x", 4)])
    advice = audit_table(t, policy=Policy(t=0.3)).suppression
    assert advice is not None
    # Round 1: a is at |0 - 0.5| = 0.5 too (all y against half y): a and c fail, b
    # (half and half) is at 0. Without a and c the rest is b alone: t = 0.
    assert sorted(advice.suppressed["q"]) == ["a", "c"]
    assert advice.rounds == 1 and advice.remaining.rows == 2


def test_risk_bound_suppresses_small_classes() -> None:
    t = table([("a", "x", 4), ("b", "x", 1), ("c", "x", 2)])
    advice = audit_table(t, policy=Policy(max_risk=0.5)).suppression
    assert advice is not None and advice.passed
    assert list(advice.suppressed["q"]) == ["b"]


def test_no_advice_when_the_policy_passes_or_is_not_asked() -> None:
    t = table([("a", "x", 4), ("b", "x", 1)])
    assert audit_table(t, policy=Policy(k=1)).suppression is None
    assert audit_table(t, policy=Policy(k=2), advise_suppression=False).suppression is None
    assert audit_table(t).suppression is None


def test_when_nothing_can_pass_the_advice_says_so() -> None:
    # Every class has one value: no suppression reaches l = 2.
    t = table([("a", "x", 4), ("b", "y", 3)])
    report = audit_table(t, policy=Policy(l=2))
    advice = report.suppression
    assert advice is not None and not advice.passed
    assert advice.records == advice.rows == 7 and advice.utility is None
    assert "every record would have to go" in report.to_html()


def test_direct_call_with_a_reaudit_function() -> None:
    t = table([("a", "x", 5), ("b", "x", 1)])
    check = functools.partial(audit_table, policy=Policy(k=2), advise_suppression=False)
    advice = suppression_advice(check(t), check)
    assert (advice.records, advice.passed, advice.utility is not None) == (1, True, True)
    assert advice.utility.suppressed == 1 and advice.utility.discernibility == 25 + 6


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcdefgh"), st.sampled_from("xyz"), st.integers(1, 6)),
        min_size=1,
        max_size=30,
    ),
    st.integers(2, 6),
    st.sampled_from([None, 2]),
    st.sampled_from([None, 0.4]),
)
def test_the_table_left_after_the_advice_passes(
    rows: list[tuple[str, str, int]], k: int, l: int | None, t: float | None
) -> None:
    policy = Policy(k=k, l=l, t=t)
    report = audit_table(table(rows), policy=policy)
    advice = report.suppression
    if report.passed:
        assert advice is None
        return
    assert advice is not None
    assert advice.records + advice.remaining.rows == report.rows
    if advice.remaining.rows:
        after = audit_table(advice.remaining, policy=policy, advise_suppression=False)
        assert after.passed is advice.passed
        assert after.k_anonymity.k >= k or not advice.passed
    # Every class smaller than k is among those suppressed.
    small = report.k_anonymity.violating["q"].tolist()
    assert set(small) <= set(advice.suppressed["q"])


def test_cli_summary_json_and_html_state_the_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    code = main(
        [
            "audit",
            str(ADULT),
            "--sep",
            ";",
            "--qi",
            "sex,age,race",
            "-k",
            "5",
            "--json",
            str(out_json),
            "--html",
            str(out_html),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    document = json.loads(out_json.read_text(encoding="utf-8"))
    s = document["suppression"]
    report = anonaudit.audit(ADULT, sep=";", quasi_identifiers=["sex", "age", "race"])
    sizes = report.table.classes.sizes
    assert s["records"] == int(sizes[sizes < 5].sum()) and s["classes"] == int((sizes < 5).sum())
    assert s["passed"] is True and s["rounds"] == 1
    assert s["fraction"] == pytest.approx(s["records"] / 30162)
    share = f"{s['fraction'] * 100:.3g}%"
    sentence = f"Suppressing {s['records']:,} records ({share}) in {s['classes']:,} classes"
    assert f"suppression: {sentence} would reach k = 5." in out
    html = out_html.read_text(encoding="utf-8")
    assert f"{sentence} would reach k = 5." in html
    assert 'id="utility"' in html and "Information loss of the audited data" in html
