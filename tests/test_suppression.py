"""Suppression advice: hand-computed k, l and t examples, the fixed point for
t-closeness, the property that the table left after the advice passes, and the
summary, JSON and HTML wording."""

from __future__ import annotations

import functools
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import Analyses, AuditOptions, ClassTable, Policy, ReadOptions, Roles, audit_table
from anonaudit.advice import suppression_advice
from anonaudit.classtable import Classes
from anonaudit.cli import main

ADULT = Path(__file__).resolve().parents[1] / "sample_data" / "adult" / "adult.csv"


def table(rows: list[tuple[str, str, int]]) -> ClassTable:
    frame = pd.DataFrame(rows, columns=["q", "s", "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])


def judged(policy: Policy) -> AuditOptions:
    """The options of an audit under ``policy``, suppression advice included."""
    return AuditOptions(policy=policy)


def checker(policy: Policy) -> functools.partial[anonaudit.AuditReport]:
    """An audit under ``policy`` without suppression advice (the advice's re-audit)."""
    options = AuditOptions(policy=policy, analyses=Analyses(suppression=False))
    return functools.partial(audit_table, options=options)


def test_k_suppresses_the_classes_smaller_than_k() -> None:
    # Classes a (5), b (1), c (2), d (3): k = 3 withholds b and c, 3 of 11 records.
    t = table([("a", "x", 5), ("b", "x", 1), ("c", "y", 2), ("d", "x", 2), ("d", "y", 1)])
    report = audit_table(t, judged(Policy(k=3)))
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
    advice = audit_table(t, judged(Policy(l=2))).suppression
    assert advice is not None and advice.passed
    assert sorted(advice.suppressed["q"]) == ["b", "c"] and advice.records == 4
    assert advice.measures[0].measure == "l-diversity of s"


def test_t_closeness_iterates_to_a_fixed_point() -> None:
    # a: 4 x; b: 1 x, 1 y; c: 1 y. Whole table 5/7 x: distances (equal ground
    # distance, two values: |p_x - q_x|) a 2/7, b 0.214, c 5/7 > 0.3. Round 1 withholds
    # c; the table is then 5/6 x and b moves to |1/2 - 5/6| = 1/3 > 0.3. Round 2
    # withholds b; a alone is the whole table (distance 0).
    t = table([("a", "x", 4), ("b", "x", 1), ("b", "y", 1), ("c", "y", 1)])
    first = audit_table(t, judged(Policy(t=0.3)))
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
    check = checker(Policy(t=0.3))
    assert check(advice.remaining).passed is True
    # Keeping the table distribution fixed (ARX) would have stopped after round 1, and
    # the release without c alone fails a reader's audit:
    without_c = check(table([("a", "x", 4), ("b", "x", 1), ("b", "y", 1)]))
    assert without_c.t_closeness["s"].t == pytest.approx(1 / 3)


def test_b_and_c_fail_then_a_alone_passes() -> None:
    t = table([("a", "y", 4), ("b", "x", 1), ("b", "y", 1), ("c", "x", 4)])
    advice = audit_table(t, judged(Policy(t=0.3))).suppression
    assert advice is not None
    # Round 1: a is at |0 - 0.5| = 0.5 too (all y against half y): a and c fail, b
    # (half and half) is at 0. Without a and c the rest is b alone: t = 0.
    assert sorted(advice.suppressed["q"]) == ["a", "c"]
    assert advice.rounds == 1 and advice.remaining.rows == 2


def test_risk_bound_suppresses_small_classes() -> None:
    t = table([("a", "x", 4), ("b", "x", 1), ("c", "x", 2)])
    advice = audit_table(t, judged(Policy(max_risk=0.5))).suppression
    assert advice is not None and advice.passed
    assert list(advice.suppressed["q"]) == ["b"]


def test_no_advice_when_the_policy_passes_or_is_not_asked() -> None:
    t = table([("a", "x", 4), ("b", "x", 1)])
    assert audit_table(t, judged(Policy(k=1))).suppression is None
    assert checker(Policy(k=2))(t).suppression is None
    assert audit_table(t).suppression is None


def test_when_nothing_can_pass_the_advice_says_so() -> None:
    # Every class has one value: no suppression reaches l = 2.
    t = table([("a", "x", 4), ("b", "y", 3)])
    report = audit_table(t, judged(Policy(l=2)))
    advice = report.suppression
    assert advice is not None and not advice.passed
    assert advice.records == advice.rows == 7 and advice.utility is None
    assert "every record would have to go" in report.to_html()


def test_direct_call_with_a_reaudit_function() -> None:
    t = table([("a", "x", 5), ("b", "x", 1)])
    check = checker(Policy(k=2))
    advice = suppression_advice(check(t), check)
    assert (advice.records, advice.passed, advice.utility is not None) == (1, True, True)
    assert advice.utility.suppressed == 1 and advice.utility.discernibility == 25 + 6


def test_a_rounds_table_and_audit_are_freed_before_the_next_are_made() -> None:
    # Three rounds of the fixed point at t = 0.15: when the re-audit of round n
    # starts, round n-1's table and audit are gone, so at most one of each is alive
    # beside the audited table (the advice's peak on 10^6 classes fell by a third).
    import gc
    import weakref

    rows = [("a", "x", 2), ("b", "x", 3), ("b", "y", 2), ("c", "x", 6), ("d", "x", 8)]
    rows += [("d", "y", 1), ("f", "x", 2), ("f", "y", 4), ("g", "x", 2), ("g", "y", 1)]
    check = checker(Policy(t=0.15))
    seen: list[weakref.ref[Any]] = []
    alive_at_call: list[int] = []

    def reaudit(remaining: ClassTable) -> anonaudit.AuditReport:
        gc.collect()
        alive_at_call.append(sum(ref() is not None for ref in seen))
        audited = check(remaining)
        seen.extend([weakref.ref(remaining), weakref.ref(audited)])
        return audited

    advice = suppression_advice(check(table(rows)), reaudit)
    assert advice.rounds >= 3
    assert alive_at_call == [0] * advice.rounds


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
    report = audit_table(table(rows), judged(policy))
    advice = report.suppression
    if report.passed:
        assert advice is None
        return
    assert advice is not None
    assert advice.records + advice.remaining.rows == report.rows
    if advice.remaining.rows:
        after = checker(policy)(advice.remaining)
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
    report = anonaudit.audit(ADULT, Roles(["sex", "age", "race"]), reading=ReadOptions(sep=";"))
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


def _random_table(seed: int, *, weighted: bool) -> ClassTable:
    """Two QIs (one with nulls) and two SAs, so rows of a class repeat a (class, value)
    entry of each SA; survey weights when ``weighted``."""
    rng = np.random.default_rng(seed)
    n = 400
    frame = pa.table(
        {
            "a": pa.array(rng.choice(["x", "y", "z", None], n).tolist()),
            "b": pa.array(rng.choice(["1", "2", "3", "4", "5"], n).tolist()),
            "s": pa.array(rng.choice(["p", "q", "r", "t"], n).tolist()),
            "u": pa.array(rng.choice(["m", "n", None], n).tolist()),
            "count": pa.array(rng.integers(1, 5, n)),
            "w": pa.array(rng.random(n) * 3),
        }
    )
    return ClassTable.from_frame(
        frame, quasi_identifiers=["a", "b"], sensitive=["s", "u"], weight="w" if weighted else None
    )


def _classes(t: ClassTable) -> list[tuple[Any, ...]]:
    """Each class's QI values, size and weight, in the table's class order."""
    weights = t.classes.weights
    return [
        (*key.values(), int(size), None if weights is None else float(weights[i]))
        for i, (key, size) in enumerate(
            zip(t.classes.keys.to_pylist(), t.classes.sizes, strict=True)
        )
    ]


def _entries(t: ClassTable, sa: str) -> list[tuple[Any, ...]]:
    """One SA's (class QI values, value, count) entries, in the table's entry order."""
    counts = t.sensitive_counts(sa)
    keys = t.classes.keys.to_pylist()
    return [
        (tuple(keys[c].values()), counts.values[v], int(n))
        for c, v, n in zip(counts.class_ids, counts.codes, counts.counts, strict=True)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_without_classes_is_the_table_of_the_kept_rows(seed: int, weighted: bool) -> None:
    # Suppression re-audits the table without some classes, built from the table's own
    # classes, codes and SA distributions: it must be the class table of those rows.
    t = _random_table(seed, weighted=weighted)
    t.classes.rank, t.null_counts()  # known before the classes are dropped
    for sa in t.sensitive:
        t.sensitive_counts(sa)
    drop = np.random.default_rng(seed).random(len(t.classes)) < 0.4
    rest = t.without_classes(drop)
    kept_rows = ~drop[t.classes.index]
    fresh = ClassTable(t.quasi_identifiers, t.sensitive, rest.keys, rest.counts, (), rest.weights)
    assert rest.keys.to_pylist() == t.keys.filter(pa.array(kept_rows)).to_pylist()
    assert rest.counts.tolist() == t.counts[kept_rows].tolist()
    # Class i of the rest is the i-th class kept, with its size and weight unchanged.
    assert _classes(rest) == [c for c, d in zip(_classes(t), drop, strict=True) if not d]
    assert sorted(_classes(rest), key=str) == sorted(_classes(fresh), key=str)
    assert (
        rest.classes.rank.tolist()
        == Classes(rest.classes.index, rest.classes.sizes, rest.classes.keys).rank.tolist()
    )
    for sa in t.sensitive:
        ours, theirs = rest.sensitive_counts(sa), fresh.sensitive_counts(sa)
        assert ours.values == theirs.values
        assert ours.totals.tolist() == theirs.totals.tolist()
        assert ours.class_sizes.tolist() == rest.classes.sizes.tolist()
        assert sorted(_entries(rest, sa), key=str) == sorted(_entries(fresh, sa), key=str)
        pairs = ours.class_ids * len(ours.values) + ours.codes  # sorted: class, then value
        assert bool(np.all(np.diff(pairs) > 0))
    assert rest.null_counts() == fresh.null_counts()
    # subset() of the same rows finds the same classes.
    same = t.subset(kept_rows)
    assert _classes(same) == _classes(rest)
    assert _entries(same, "s") == _entries(rest, "s")
    # The audits agree, measure by measure.
    policy = Policy(k=3, l=2, t=0.3, alpha=0.8)
    ours_report, theirs_report = checker(policy)(rest), checker(policy)(fresh)
    assert ours_report.verdicts() == theirs_report.verdicts()
    assert ours_report.k_anonymity.k == theirs_report.k_anonymity.k
    for sa in t.sensitive:
        assert sorted(ours_report.t_closeness[sa].per_class.tolist()) == sorted(
            theirs_report.t_closeness[sa].per_class.tolist()
        )
        assert ours_report.l_diversity[sa].entropy == theirs_report.l_diversity[sa].entropy
        assert ours_report.disclosure[sa].alpha == theirs_report.disclosure[sa].alpha


def test_a_subsets_keys_are_filtered_when_read_and_kept_by_a_copy() -> None:
    t = _random_table(4, weighted=False)
    assert len(t.classes)  # known before the subsets are taken
    keep = np.random.default_rng(4).random(len(t)) < 0.5
    first = t.subset(keep)
    second = first.subset(np.arange(len(first)) % 2 == 0)  # a subset of a subset
    expected = t.keys.filter(pa.array(keep))
    expected = expected.filter(pa.array(np.arange(len(expected)) % 2 == 0))
    copied = pickle.loads(pickle.dumps(second))
    assert "_pending_keys" not in copied.__dict__
    assert copied.keys.to_pylist() == second.keys.to_pylist() == expected.to_pylist()
    assert len(second) == expected.num_rows and second.rows == int(copied.counts.sum())
    assert first.keys.to_pylist() == t.keys.filter(pa.array(keep)).to_pylist()
    with pytest.raises(ValueError, match="needs"):
        t.subset(keep[:-1])
    with pytest.raises(ValueError, match="needs"):
        t.without_classes(np.zeros(len(t.classes) + 1, dtype=bool))
    with pytest.raises(AttributeError):
        t.no_such_attribute  # noqa: B018


def test_values_only_the_dropped_classes_held_leave_the_distributions() -> None:
    t = table([("a", "x", 2), ("a", "y", 1), ("b", "z", 3), ("c", "y", 4), ("c", "x", 1)])
    counts = t.sensitive_counts("s")
    assert counts.values == ("x", "y", "z")
    rest = t.without_classes(t.classes.keys.column("q").to_numpy(zero_copy_only=False) == "b")
    fresh = ClassTable(t.quasi_identifiers, t.sensitive, rest.keys, rest.counts)
    ours, theirs = rest.sensitive_counts("s"), fresh.sensitive_counts("s")
    assert ours.values == theirs.values == ("x", "y")
    assert ours.totals.tolist() == theirs.totals.tolist() == [3, 5]
    assert _entries(rest, "s") == [
        (("a",), "x", 2),
        (("a",), "y", 1),
        (("c",), "x", 1),
        (("c",), "y", 4),
    ]
    assert sorted(_entries(rest, "s")) == sorted(_entries(fresh, "s"))
