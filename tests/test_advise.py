"""``anonaudit advise``: the lattice search for the Pareto-best passing transformations.

* A hand-checked lattice: ARX's example table (``data/test.csv`` of arx-deidentifier/arx,
  ages, genders and ZIP codes of 7 people, with its three hierarchies restricted to the
  values present) at k = 2, with and without suppression.
* ARX's published optima on Adult (``TestAnonymizationKAnonymity``, arx-deidentifier/arx,
  ``src/test/org/deidentifier/arx/test/``): with the non-uniform entropy metric, which
  is monotone without suppression, ARX's optimum is a minimal passing node; it must pass
  here, every one-level specialization of it must fail, and with 4% suppression it
  must pass within the limit.
* Property tests: the pruned search finds the same passing nodes and the same front as
  an independent brute force that audits every node with ``audit_table(generalize=...)``
  and its suppression advice; the front is non-dominated; every listed transformation
  passes when re-audited; ``--out`` writes a table whose audit meets k.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
from pathlib import Path
from random import Random
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
from adult_data import ADULT_DIR, ADULT_QIS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import Analyses, AuditOptions, ReadOptions, Roles
from anonaudit.advice import lattice as lattice_module
from anonaudit.auditing import advise
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import ColumnError, HierarchyError, ParameterError
from anonaudit.hierarchy import Hierarchy
from anonaudit.measures.generalization import Generalization
from anonaudit.settings.policy import Policy

# ARX data/test.csv and its hierarchies (rows for the values present).
ARX_TEST = pd.DataFrame(
    {
        "age": ["34", "45", "66", "70", "34", "70", "45"],
        "gender": ["male", "female", "male", "female", "female", "male", "male"],
        "zipcode": ["81667", "81675", "81925", "81931", "81931", "81931", "81931"],
    }
)
ARX_HIERARCHIES = {
    "age": Hierarchy.from_rows(
        [["34", "<50", "*"], ["45", "<50", "*"], ["66", ">=50", "*"], ["70", ">=50", "*"]]
    ),
    "gender": Hierarchy.from_rows([["male", "*"], ["female", "*"]]),
    "zipcode": Hierarchy.from_rows(
        [
            ["81667", "8166*", "816**", "81***", "8****", "*"],
            ["81675", "8167*", "816**", "81***", "8****", "*"],
            ["81925", "8192*", "819**", "81***", "8****", "*"],
            ["81931", "8193*", "819**", "81***", "8****", "*"],
        ]
    ),
}


def _arx_table() -> ClassTable:
    return ClassTable.from_frame(
        ARX_TEST.assign(count=1), quasi_identifiers=["age", "gender", "zipcode"]
    )


def _levels(advice: anonaudit.advice.Advice) -> list[list[int]]:
    return [list(t.levels.values()) for t in advice.transformations]


# -- the hand-checked lattice -----------------------------------------------------------


def test_arx_example_k2_without_suppression() -> None:
    # Minimal 2-anonymous nodes, by hand: (age 1, gender 1, zip 2) gives classes
    # {<50,*,816**} = 2, {>=50,*,819**} = 3, {<50,*,819**} = 2 (DM* 4+9+4 = 17, height 4);
    # (2, 0, 3) gives {*,male,81***} = 4, {*,female,81***} = 3 (DM* 25, height 5): dominated.
    advice = advise(_arx_table(), hierarchies=ARX_HIERARCHIES, policy=Policy(k=2))
    assert advice.nodes == 3 * 2 * 6
    assert _levels(advice) == [[1, 1, 2]]
    best = advice.transformations[0]
    assert best.suppressed == 0
    assert sorted(best.report.k_anonymity.histogram.items()) == [(2, 2), (3, 1)]
    assert best.information_loss.discernibility == 17
    assert best.information_loss.average_class_size == pytest.approx(7 / 3 / 2)
    assert advice.evaluated + advice.pruned == advice.nodes
    assert advice.pruned > 0


def test_arx_example_k2_with_one_suppressed_record() -> None:
    # 0.15 * 7 allows one record. (0, 1, 3) suppresses the lone 66 and keeps ages
    # 34, 45, 70 in pairs; (1, 0, 3) suppresses the lone (>=50, female): both DM*
    # 3 * 4 + 7 * 1 = 19, C_AVG 2, height 4, 1 suppressed; neither they nor (1, 1, 2)
    # (DM* 17, no suppression) dominate one another.
    advice = advise(
        _arx_table(), hierarchies=ARX_HIERARCHIES, policy=Policy(k=2), suppression_limit=0.15
    )
    assert _levels(advice) == [[1, 1, 2], [0, 1, 3], [1, 0, 3]]
    assert [t.suppressed for t in advice.transformations] == [0, 1, 1]
    assert [t.information_loss.discernibility for t in advice.transformations] == [17, 19, 19]
    suppressed = advice.transformations[1].suppressed_classes.to_pylist()
    assert suppressed == [{"age": "66", "gender": "*", "zipcode": "81***"}]
    assert all(t.passed for t in advice.transformations)


def test_no_transformation_passes() -> None:
    advice = advise(_arx_table(), hierarchies=ARX_HIERARCHIES, policy=Policy(k=8))
    assert not advice.passed
    assert advice.transformations == ()
    assert advice.front == 0


def test_blocked_by_names_the_thresholds_no_generalization_can_meet() -> None:
    """Hand-checked: s is a, a, a, b, c over 5 records. One class of all of them has 3 < 4
    distinct values, r1 = 3 >= 1 * (r2 + r3) = 2 for (1,2), a largest share 0.6 > alpha
    0.5 and entropy l exp(H) = 2.59 >= 2; k = 2 and t (distance 0) hold."""
    frame = ARX_TEST.iloc[:5].assign(s=["a", "a", "a", "b", "c"], count=1)
    table = ClassTable.from_frame(frame, quasi_identifiers=["age", "gender"], sensitive=["s"])
    hierarchies = {qi: ARX_HIERARCHIES[qi] for qi in ("age", "gender")}
    policy = Policy(k=2, l=4, entropy_l=2.0, recursive=(1.0, 2), t=0.01, alpha=0.5)
    advice = advise(table, hierarchies=hierarchies, policy=policy)
    assert not advice.passed
    blocked = {b.measure: b.reason for b in advice.blocked_by}
    assert list(blocked) == [
        "distinct l-diversity of s (l = 4)",
        "recursive (1,2)-diversity of s",
        "(α,k)-anonymity of s (α = 0.5)",
    ]
    assert blocked["distinct l-diversity of s (l = 4)"].endswith("only 3 distinct value(s) of s")
    assert "r1 = 3 ≥ c·(r2 + … + r3) = 1 × 2 = 2" in blocked["recursive (1,2)-diversity of s"]
    assert "60.0%" in blocked["(α,k)-anonymity of s (α = 0.5)"]
    # Only k fails on the fully generalized table when it exceeds the records.
    too_big = advise(table, hierarchies=hierarchies, policy=Policy(k=6))
    assert [b.measure for b in too_big.blocked_by] == ["k-anonymity (k = 6)"]
    assert advise(table, hierarchies=hierarchies, policy=Policy(k=5)).blocked_by == ()


def test_cli_says_why_nothing_passes_on_adult(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """salary-class is 22,654 '<=50K' to 7,508 '>50K': even one class of all 30,162
    records has r1 = 22,654 >= 3 * 7,508 = 22,524, so recursive (3,2) cannot hold."""
    report, page = tmp_path / "advice.json", tmp_path / "advice.html"
    args = [str(ADULT_DIR / "adult.csv"), "--sep", ";", "--qi", "sex,age"]
    args += ["--sensitive", "salary-class", "--recursive", "3,2", "-k", "2"]
    args += ["--hierarchy", "age=interval:10,20"]
    assert main(["advise", *args, "--json", str(report), "--html", str(page), "--quiet"]) == 1
    printed = capsys.readouterr().out
    assert "none can" in printed
    assert "recursive (3,2)-diversity of salary-class: " in printed
    assert "r1 = 22,654 ≥ c·(r2) = 3 × 7,508 = 22,524" in printed
    blocked = json.loads(report.read_text())["search"]["blocked_by"]
    assert [b["measure"] for b in blocked] == ["recursive (3,2)-diversity of salary-class"]
    assert "75.1%" in blocked[0]["reason"]
    html = page.read_text()
    assert "and none can" in html
    assert "<strong>recursive (3,2)-diversity of salary-class</strong>: the whole" in html


def test_bad_input_is_named() -> None:
    table = _arx_table()
    with pytest.raises(ParameterError, match="threshold"):
        advise(table, hierarchies=ARX_HIERARCHIES, policy=Policy())
    with pytest.raises(ColumnError, match="'salary'"):
        advise(table, hierarchies={"salary": ARX_HIERARCHIES["age"]}, policy=Policy(k=2))
    with pytest.raises(ParameterError, match="suppression limit"):
        advise(table, hierarchies=ARX_HIERARCHIES, policy=Policy(k=2), suppression_limit=1.0)
    forked = Hierarchy.from_rows([["34", "young", "a"], ["45", "young", "b"]])
    with pytest.raises(HierarchyError, match="'young' at level 1 has two parents"):
        advise(
            ClassTable.from_frame(
                pd.DataFrame({"age": ["34", "45"], "count": 1}), quasi_identifiers=["age"]
            ),
            hierarchies={"age": forked},
            policy=Policy(k=2),
        )


# -- ARX's published optima on Adult ---------------------------------------------------


@pytest.fixture(scope="module")
def adult() -> tuple[ClassTable, dict[str, Hierarchy]]:
    table = anonaudit.load(ADULT_DIR / "adult.csv", Roles(ADULT_QIS), reading=ReadOptions(sep=";"))
    hierarchies = {
        qi: Hierarchy.from_csv(ADULT_DIR / f"adult_hierarchy_{qi}.csv") for qi in ADULT_QIS
    }
    return table, hierarchies


def _passes(
    table: ClassTable, hierarchies: dict[str, Hierarchy], levels: list[int], k: int, limit: float
) -> bool:
    report = anonaudit.audit_table(
        table,
        AuditOptions(
            policy=Policy(k=k),
            hierarchies=hierarchies,
            generalize=dict(zip(ADULT_QIS, levels, strict=True)),
        ),
    )
    if report.passed:
        return True
    s = report.suppression
    return s is not None and s.passed and s.records <= math.floor(limit * table.rows)


# TestAnonymizationKAnonymity cases 0-3: (suppression limit, k, ARX's optimal levels)
ARX_OPTIMA = [
    (0.04, 5, [1, 0, 1, 1, 3, 2, 2, 0, 1]),
    (0.04, 100, [1, 1, 1, 1, 3, 2, 2, 1, 1]),
    (0.0, 5, [1, 2, 1, 1, 3, 2, 2, 1, 1]),
    (0.0, 100, [0, 4, 1, 1, 3, 2, 2, 1, 1]),
]


@pytest.mark.parametrize(("limit", "k", "levels"), ARX_OPTIMA)
def test_arx_optimum_on_adult_passes(
    adult: tuple[ClassTable, dict[str, Hierarchy]], limit: float, k: int, levels: list[int]
) -> None:
    table, hierarchies = adult
    assert _passes(table, hierarchies, levels, k, limit)
    if limit == 0:  # a monotone metric's optimum is a minimal passing node
        for q in range(len(levels)):
            if levels[q]:
                below = [*levels[:q], levels[q] - 1, *levels[q + 1 :]]
                assert not _passes(table, hierarchies, below, k, limit)


def test_adult_front_without_suppression(adult: tuple[ClassTable, dict[str, Hierarchy]]) -> None:
    table, hierarchies = adult
    advice = advise(table, hierarchies=hierarchies, policy=Policy(k=5), max_results=None)
    assert advice.nodes == 2 * 5 * 2 * 3 * 4 * 3 * 3 * 3 * 2
    # ARX's entropy-optimal node is minimal; here it is also on the DM* front.
    assert [1, 2, 1, 1, 3, 2, 2, 1, 1] in _levels(advice)
    assert advice.evaluated < advice.nodes / 10
    _check_front(advice)


def test_adult_front_with_suppression(adult: tuple[ClassTable, dict[str, Hierarchy]]) -> None:
    table, hierarchies = adult
    advice = advise(
        table, hierarchies=hierarchies, policy=Policy(k=5), suppression_limit=0.02, max_results=8
    )
    assert advice.monotone and advice.measured > 0
    assert all(0 < t.suppressed <= 0.02 * table.rows for t in advice.transformations[:3])
    _check_front(advice)
    for t in advice.transformations[:2]:  # re-audit independently
        report = anonaudit.audit_table(
            table, AuditOptions(policy=Policy(k=5), hierarchies=hierarchies, generalize=t.levels)
        )
        assert report.suppression is not None and report.suppression.passed
        assert report.suppression.records == t.suppressed


def _check_front(advice: anonaudit.advice.Advice) -> None:
    """Every listed transformation passes, and none dominates another."""
    losses = np.array(
        [
            (
                t.information_loss.discernibility,
                t.information_loss.average_class_size,
                t.height,
                t.suppressed,
            )
            for t in advice.transformations
        ]
    )
    assert all(t.passed for t in advice.transformations)
    assert all(t.report.k_anonymity.k >= 5 for t in advice.transformations)
    for i, row in enumerate(losses):
        dominated = (losses <= row).all(axis=1) & (losses < row).any(axis=1)
        assert not dominated.any(), advice.transformations[i].levels
    assert list(losses[:, 0]) == sorted(losses[:, 0])


# -- pruned search == brute force ------------------------------------------------------


@st.composite
def problems(draw: st.DrawFn) -> tuple[ClassTable, dict[str, Hierarchy], Policy, float]:
    qis = ["a", "b", "c"][: draw(st.integers(2, 3))]
    values = {q: [f"{q}{i}" for i in range(draw(st.integers(2, 5)))] for q in qis}
    hierarchies = {}
    for q in qis:
        groups = [f"{q}g{draw(st.integers(0, 2))}" for _ in values[q]]
        rows = [[v, g] for v, g in zip(values[q], groups, strict=True)]
        if draw(st.booleans()):  # a second level above the groups
            top = {g: f"{q}G{draw(st.integers(0, 1))}" for g in sorted(set(groups))}
            rows = [[v, g, top[g]] for v, g in rows]
        hierarchies[q] = Hierarchy.from_rows(rows)
    records = draw(
        st.lists(
            st.tuples(*(st.sampled_from(values[q]) for q in qis), st.sampled_from("xyz")),
            min_size=1,
            max_size=25,
        )
    )
    frame = pd.DataFrame(records, columns=[*qis, "s"]).assign(count=1)
    table = ClassTable.from_frame(frame, quasi_identifiers=qis, sensitive=["s"])
    policy = draw(
        st.sampled_from(
            [
                Policy(k=2),
                Policy(k=3),
                Policy(k=2, l=2),
                Policy(max_risk=0.5),
                Policy(entropy_l=1.5),
                Policy(k=2, t=0.4),
                Policy(alpha=0.8),
            ]
        )
    )
    limit = draw(st.sampled_from([0.0, 0.1, 0.3]))
    return table, hierarchies, policy, limit


def _brute_force(
    table: ClassTable, hierarchies: dict[str, Hierarchy], policy: Policy, limit: float
) -> tuple[int, set[tuple[int, ...]]]:
    """Audit every node; return the number passing and the front, independently."""
    names = list(hierarchies)
    allowed = math.floor(limit * table.rows + 1e-9)
    losses = {}
    for node in itertools.product(*(range(hierarchies[q].height + 1) for q in names)):
        report = anonaudit.audit_table(
            table,
            AuditOptions(
                policy=policy,
                hierarchies=hierarchies,
                generalize=dict(zip(names, node, strict=True)),
            ),
        )
        if report.passed:
            kept, suppressed = report.table, 0
        elif (
            report.suppression is not None
            and report.suppression.passed
            and report.suppression.records <= allowed
        ):
            kept, suppressed = report.suppression.remaining, report.suppression.records
        else:
            continue
        sizes = kept.classes.sizes
        dm = float((sizes.astype(float) ** 2).sum() + suppressed * table.rows)
        losses[node] = (dm, sizes.sum() / len(sizes), sum(node), suppressed)
    front = {
        node
        for node, row in losses.items()
        if not any(
            all(o <= r for o, r in zip(other, row, strict=True)) and other != row
            for other in losses.values()
        )
    }
    return len(losses), front


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_pruned_search_equals_brute_force(
    problem: tuple[ClassTable, dict[str, Hierarchy], Policy, float],
) -> None:
    table, hierarchies, policy, limit = problem
    passing, front = _brute_force(table, hierarchies, policy, limit)
    for prune in (True, False):
        advice = advise(
            table,
            hierarchies=hierarchies,
            policy=policy,
            suppression_limit=limit,
            max_results=None,
            prune=prune,
        )
        assert advice.passing == passing
        assert {tuple(t.levels.values()) for t in advice.transformations} == front
        assert all(t.passed for t in advice.transformations)
        assert advice.evaluated + advice.pruned == advice.nodes
        if not prune:
            assert advice.pruned == 0


# -- the command line ------------------------------------------------------------------


def _adult_args(tmp_path: Path) -> list[str]:
    args = [str(ADULT_DIR / "adult.csv"), "--sep", ";", "--qi", ",".join(ADULT_QIS)]
    for qi in ADULT_QIS:
        args += ["--hierarchy", f"{qi}={ADULT_DIR / f'adult_hierarchy_{qi}.csv'}"]
    return args


def test_cli_out_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, report = tmp_path / "adult_k5.csv", tmp_path / "advice.json"
    status = main(
        [
            *("advise", *_adult_args(tmp_path), "-k", "5", "--max-results", "3"),
            *("--out", str(out), "--json", str(report), "--quiet"),
        ]
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert "Pareto front" in printed and "DM" in printed
    document = json.loads(report.read_text())
    first = document["advice"][0]
    assert document["search"]["nodes"] == 12960
    assert first["passed"] and first["measures"]["k"] >= 5
    written = anonaudit.audit(
        out,
        Roles(ADULT_QIS),
        AuditOptions(policy=Policy(k=5), analyses=Analyses(suppression=False)),
        reading=ReadOptions(sep=";"),
    )
    assert written.passed
    assert written.rows == 30162
    assert written.k_anonymity.k == first["measures"]["k"]
    assert written.k_anonymity.classes == first["measures"]["classes"]


def test_cli_out_with_suppression_marks_records(tmp_path: Path) -> None:
    data = tmp_path / "test.csv"
    ARX_TEST.to_csv(data, index=False, sep=";")
    args = [str(data), "--qi", "age,gender,zipcode", "-k", "2", "--suppression-limit", "0.15"]
    for name, h in ARX_HIERARCHIES.items():
        path = tmp_path / f"h_{name}.csv"
        path.write_text("\n".join(";".join(row) for row in zip(*h.levels, strict=True)))
        args += ["--hierarchy", f"{name}={path}"]
    out = tmp_path / "out.csv"
    assert main(["advise", *args, "--out", str(out), "--choose", "2", "--quiet"]) == 0
    written = pd.read_csv(out, sep=";", dtype=str, keep_default_na=False)
    starred = written[(written[["age", "gender", "zipcode"]] == "*").all(axis=1)]
    assert len(starred) == 1  # the lone 66-year-old
    kept = written.drop(starred.index)
    assert kept.groupby(["age", "gender", "zipcode"]).size().min() >= 2
    assert data.read_text().count("\n") == 8  # the input is untouched


def test_cli_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "test.csv"
    ARX_TEST.to_csv(data, index=False)
    args = ["advise", str(data), "--qi", "age,gender", "--hierarchy", "age=interval:50"]
    assert main([*args, "-k", "8", "--quiet"]) == 1
    assert "no transformation passes" in capsys.readouterr().out
    assert main([*args, "-k", "2", "--choose", "2", "--quiet"]) == 2
    assert "--choose" in capsys.readouterr().err
    assert main([*args, "--hierarchy", "gender=prefix", "-k", "2", "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    # (age *, gender as is): classes 4 and 3, height 2; gender only merges at its top.
    assert [entry["levels"] for entry in document["advice"]] == [{"age": 2, "gender": 0}]


# -- the search's own computations -----------------------------------------------------


def test_adult_search_judges_the_same_nodes(
    adult: tuple[ClassTable, dict[str, Hierarchy]],
) -> None:
    """The counts and optimum of the benchmark's search (``benchmarks/bench_advise.py``)
    as the search that grouped every node from the base classes found them."""
    table, hierarchies = adult
    advice = advise(
        table, hierarchies=hierarchies, policy=Policy(k=5), suppression_limit=0.02, max_results=1
    )
    assert (advice.evaluated, advice.measured, advice.passing, advice.front) == (
        2940,
        1809,
        2861,
        59,
    )
    assert _levels(advice) == [[0, 0, 1, 2, 3, 2, 2, 1, 1]]


@st.composite
def lattices(draw: st.DrawFn) -> tuple[ClassTable, dict[str, Hierarchy]]:
    """1 to 4 QIs with nulls, some records repeated, hierarchies for some of the QIs."""
    qis = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    values = {q: [f"{q}{i}" for i in range(draw(st.integers(1, 4)))] for q in qis}
    hierarchies = {}
    for q in qis:
        if q != qis[-1] and not draw(st.booleans()) and len(qis) > 1:
            continue
        groups = [f"{q}g{draw(st.integers(0, 2))}" for _ in values[q]]
        rows = [[v, g] for v, g in zip(values[q], groups, strict=True)]
        if draw(st.booleans()):
            top = {g: f"{q}G{draw(st.integers(0, 1))}" for g in sorted(set(groups))}
            rows = [[v, g, top[g]] for v, g in rows]
        hierarchies[q] = Hierarchy.from_rows(rows)
    records = draw(
        st.lists(
            st.tuples(*(st.sampled_from([*values[q], None]) for q in qis), st.integers(1, 3)),
            min_size=1,
            max_size=30,
        )
    )
    frame = pd.DataFrame(records, columns=[*qis, "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=qis), hierarchies


@settings(max_examples=60, deadline=None)
@given(lattices(), st.randoms(use_true_random=False), st.booleans())
def test_node_class_sizes_are_those_of_the_generalized_table(
    problem: tuple[ClassTable, dict[str, Hierarchy]], random: Random, small: bool
) -> None:
    """Nodes asked in any order, each grouped from those cached below it, have the class
    sizes of the table generalized by :class:`Generalization`; ``small`` keeps nearly
    nothing cached and numbers every node's pairs by sorting."""
    table, hierarchies = problem
    lattice = lattice_module._Lattice(table, hierarchies)
    nodes = list(itertools.product(*(range(h + 1) for h in lattice.heights)))
    random.shuffle(nodes)
    limits = {"_CACHED": 3, "_HALF_IDS": 3, "_DIRECT_GROUPING": 0}
    with patch.multiple(lattice_module, **limits) if small else contextlib.nullcontext():
        for node in nodes:
            levels = dict(zip(lattice.names, node, strict=True))
            generalized = Generalization(hierarchies=hierarchies, levels=levels).apply(table)
            assert sorted(lattice.sizes(node)) == sorted(generalized.classes.sizes)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2)),
        min_size=1,
        max_size=40,
    )
)
def test_the_front_is_every_non_dominated_candidate(
    verdicts: list[tuple[list[int], int]],
) -> None:
    """Against the definition, all pairs compared, in blocks of 3 candidates."""
    nodes = list(itertools.product(range(7), repeat=2))[: len(verdicts)]
    cache = {
        node: lattice_module._Verdict(True, suppressed, np.array(kept, dtype=float))
        for node, (kept, suppressed) in zip(nodes, verdicts, strict=True)
    }
    losses = {node: lattice_module._losses(node, cache[node], 10) for node in nodes}
    expected = [
        node
        for node, row in losses.items()
        if not any(
            all(o <= r for o, r in zip(other, row, strict=True)) and other != row
            for other in losses.values()
        )
    ]
    expected.sort(key=lambda node: (losses[node][0], losses[node][3], losses[node][2], node))
    with patch.object(lattice_module, "_FRONT_BLOCK", 3):
        assert lattice_module._front(nodes, cache, 10) == expected
