"""Survey weights, sdcMicro's individual risk and the global risk.

Published constants: sdcMicro's ``tests/testthat/test_indivRisk.R`` (an 8-record
table with three key variables and weights, with and without missing values; the
expected ``rk`` of ``indivRisk(method = "approx")`` are copied below) and the
``freqCalc`` example on ``francdat`` (sdcMicro's ``data/francdat``).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonaudit import AuditOptions, EngineOptions, Roles, audit, load
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import InputError, ParameterError
from anonaudit.measures.individual import individual_risk, sdcmicro_risk

# sdcMicro tests/testthat/test_indivRisk.R: keys A, B, C and weights.
A = ["2", "3", "2", "2", "3", "3", "1", "2"]
B = ["3", "3", "3", "3", "3", "3", "4", "3"]
C = ["1", "3", "1", "2", "1", "1", "1", "1"]
WEIGHTS = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]
# The same table with NA in A[8], C[3] and C[7].
A_NA = ["2", "3", "2", "2", "3", "3", "1", None]
C_NA = ["1", "3", None, "2", "1", "1", None, "1"]
# indivRisk(fr, method = "approx", qual = 1, survey = TRUE)$rk
RK_WEIGHTED = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883,
               0.03931625, 0.01369863]  # fmt: skip
RK_WEIGHTED_NA = [0.013698630, 0.085791288, 0.010554090, 0.032466112, 0.009836066,
                  0.009836066, 0.039316254, 0.005973716]  # fmt: skip


def _records(a: list[str | None], c: list[str | None]) -> pd.DataFrame:
    return pd.DataFrame({"A": a, "B": B, "C": c, "w": [f"{w:g}" for w in WEIGHTS]})


def _per_record(report_table: ClassTable, per_class: np.ndarray, frame: pd.DataFrame) -> list:
    """Map a per-class array to the records of ``frame`` (by their QI values)."""
    keys = [tuple(row.values()) for row in report_table.classes.keys.to_pylist()]
    lookup = dict(zip(keys, per_class.tolist(), strict=True))
    return [lookup[tuple(None if pd.isna(v) else v for v in row)] for row in
            frame[list(report_table.quasi_identifiers)].itertuples(index=False)]  # fmt: skip


def test_sdcmicro_indivrisk_weighted_without_missing_values() -> None:
    frame = _records(A, C)
    report = audit(frame, Roles(["A", "B", "C"], weights="w"))
    r = report.individual
    assert r is not None and r.weights == "w" and r.basis == "survey weights"
    per_record = _per_record(report.table, r.risk, frame)
    np.testing.assert_allclose(per_record, RK_WEIGHTED, atol=5e-9)
    # measure_risk: global_risk_ER = sum(rk); global_risk = ER / n
    assert r.expected_reidentifications == pytest.approx(sum(RK_WEIGHTED), abs=1e-7)
    assert r.global_risk == pytest.approx(sum(RK_WEIGHTED) / 8, abs=1e-8)
    assert r.population_size == pytest.approx(sum(WEIGHTS))
    assert r.highest == pytest.approx(0.17707583, abs=5e-9)


def test_sdcmicro_indivrisk_weighted_with_missing_values_as_wildcards() -> None:
    frame = _records(A_NA, C_NA)
    report = audit(frame, Roles(["A", "B", "C"], weights="w"), AuditOptions(nulls="wildcard"))
    r = report.individual
    assert r is not None
    np.testing.assert_allclose(_per_record(report.table, r.risk, frame), RK_WEIGHTED_NA, atol=5e-9)
    # freqCalc's fk for the same records (1 / rk of the unweighted test: 3,1,4,2,3,3,1,5)
    assert _per_record(report.table, r.fk, frame) == [3, 1, 4, 2, 3, 3, 1, 5]
    assert _per_record(report.table, r.Fk, frame)[:3] == pytest.approx([108.0, 45.5, 125.0])


def test_unweighted_sdcmicro_risk_is_one_over_fk_when_the_file_is_the_population() -> None:
    # survey = FALSE (or Fk = fk): rk = 1 / fk, sdcMicro's unweighted expectation
    fk = np.array([3, 1, 4, 2, 5])
    np.testing.assert_allclose(sdcmicro_risk(fk, fk.astype(float)), 1 / fk)


def test_sdcmicro_risk_formulas_by_hand() -> None:
    # fk = 1, Fk = 4: p = 1/4; p/(1-p) log(1/p) = (1/3) ln 4
    # fk = 2, Fk = 8: p = 1/4; 1/3 - (1/9) ln 4
    # fk = 5, Fk = 20: p = 1/4; p / (fk - (1 - p)) = 0.25 / 4.25
    risk = sdcmicro_risk(np.array([1, 2, 5]), np.array([4.0, 8.0, 20.0]))
    expected = [np.log(4) / 3, 1 / 3 - np.log(4) / 9, 0.25 / 4.25]
    np.testing.assert_allclose(risk, expected, rtol=1e-12)


def test_weights_below_one_are_treated_as_the_whole_population() -> None:
    assert sdcmicro_risk(np.array([2]), np.array([1.0])).tolist() == [0.5]


def test_uniform_weights_from_a_sampling_fraction() -> None:
    table = ClassTable.from_frame(
        pd.DataFrame({"q": ["a", "b"], "count": [1, 4]}), quasi_identifiers=["q"]
    )
    r = individual_risk(table, sampling_fraction=0.25)
    # weight N/n = 4: Fk = 4 and 16, p = 1/4; risks (1/3) ln 4 and 0.25 / (4 - 0.75)
    np.testing.assert_allclose(r.risk, [np.log(4) / 3, 0.25 / 3.25], rtol=1e-12)
    assert r.basis.startswith("uniform N/n = 4") and r.weights is None
    assert r.population_size == pytest.approx(20.0)
    assert r.expected_reidentifications == pytest.approx(np.log(4) / 3 + 4 * 0.25 / 3.25)
    same = individual_risk(table, population_size=20)
    np.testing.assert_allclose(same.risk, r.risk)


def test_records_at_risk_and_the_classes_listed() -> None:
    table = ClassTable.from_frame(
        pd.DataFrame({"q": ["a", "b", "c"], "count": [1, 2, 10], "w": [1.5, 4.0, 100.0]}),
        quasi_identifiers=["q"],
        weight="w",
    )
    r = individual_risk(table, threshold=0.2)
    # a: p = 2/3 -> 2 ln 1.5 = 0.81; b: p = 1/2 -> 1 - ln 2 = 0.31; c: 0.1 / 9.1
    assert r.records_at_risk == 3
    assert r.at_risk["q"].tolist() == ["a", "b"]
    assert r.at_risk["risk"].tolist() == pytest.approx([2 * np.log(1.5), 1 - np.log(2)])


def test_individual_risk_needs_weights_or_a_population() -> None:
    table = ClassTable.from_frame(pd.DataFrame({"q": ["a"], "count": [1]}), quasi_identifiers=["q"])
    with pytest.raises(ParameterError, match="survey weights"):
        individual_risk(table)
    assert audit(table, Roles(["q"])).individual is None


# -- weights in the class table ----------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("xy"), st.integers(1, 50)),
        min_size=1,
        max_size=40,
    ),
    st.integers(1, 5),
)
def test_merge_of_split_tables_keeps_the_weights(records: list, parts: int) -> None:
    frame = pd.DataFrame(records, columns=["q", "s", "w"])
    whole = load(frame, Roles(["q"], ["s"], weights="w"))
    bounds = np.linspace(0, len(frame), parts + 1).astype(int)
    pieces = [
        ClassTable.from_frame(
            frame.iloc[start:stop].assign(count=1),
            quasi_identifiers=["q"],
            sensitive=["s"],
            weight="w",
        )
        for start, stop in itertools.pairwise(bounds)
        if stop > start
    ]
    merged = pieces[0].merge(*pieces[1:])
    by_key = dict(
        zip(whole.classes.keys.column("q").to_pylist(), whole.classes.weights, strict=True)
    )
    merged_keys = merged.classes.keys.column("q").to_pylist()
    for key, weight in zip(merged_keys, merged.classes.weights, strict=True):
        assert weight == pytest.approx(by_key[key])
    assert merged.weights is not None and merged.weights.sum() == pytest.approx(frame.w.sum())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("xyz")), min_size=1))
def test_weights_all_one_give_fk_equal_to_big_fk(records: list) -> None:
    frame = pd.DataFrame(records, columns=["q", "r"]).assign(w="1")
    table = load(frame, Roles(["q", "r"], weights="w"))
    risk = individual_risk(table)
    np.testing.assert_array_equal(risk.Fk, table.classes.sizes)
    # Fk = fk: the class is its whole population and the risk is the prosecutor's 1/fk
    np.testing.assert_allclose(risk.risk, 1 / table.classes.sizes)


def test_dropping_null_records_keeps_the_weights_aligned() -> None:
    frame = pd.DataFrame({"q": ["a", None, "a", "b"], "w": ["1", "2", "3", "4"]})
    report = audit(frame, Roles(["q"], weights="w"), AuditOptions(nulls="drop"))
    keys = report.table.classes.keys.column("q").to_pylist()
    weights = dict(zip(keys, report.table.classes.weights, strict=True))
    assert weights == {"a": 4.0, "b": 4.0}


def test_weighted_and_unweighted_tables_do_not_merge() -> None:
    frame = pd.DataFrame({"q": ["a"], "count": [1], "w": [2.0]})
    weighted = ClassTable.from_frame(frame, quasi_identifiers=["q"], weight="w")
    plain = ClassTable.from_frame(frame, quasi_identifiers=["q"])
    with pytest.raises(ValueError, match="weighted"):
        weighted.merge(plain)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("abc", "'abc' in record 2, not a number"),
        ("-2", "'-2' in record 2"),
        ("inf", "'inf' in record 2"),
        ("", "empty in record 2"),
    ],
)
def test_a_bad_weight_names_the_column_the_value_and_the_file(
    tmp_path: Path, value: str, shown: str
) -> None:
    path = tmp_path / "survey.csv"
    path.write_text(f"q;w\na;1\nb;{value}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"survey\.csv") as caught:
        audit(path, Roles(["q"], weights="w"))
    assert "weight column 'w'" in str(caught.value) and shown in str(caught.value)


def test_weights_need_the_local_engine() -> None:
    with pytest.raises(ParameterError, match="local engine"):
        audit(
            pd.DataFrame({"q": ["a"], "w": ["1"]}),
            Roles(["q"], weights="w"),
            engine=EngineOptions(engine="dask"),
        )


def test_the_weight_column_cannot_be_a_quasi_identifier() -> None:
    with pytest.raises(ParameterError, match="also a quasi-identifier"):
        audit(pd.DataFrame({"q": ["a"]}), Roles(["q"], weights="q"))


# -- command line, JSON, text and HTML ---------------------------------------------


def _survey(tmp_path: Path) -> Path:
    path = tmp_path / "survey.csv"
    rows = ["A;B;C;w"] + [
        f"{a or ''};{b};{c or ''};{w:g}" for a, b, c, w in zip(A_NA, B, C_NA, WEIGHTS, strict=True)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_cli_weights_json_text_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _survey(tmp_path)
    out, html = tmp_path / "r.json", tmp_path / "r.html"
    args = ["audit", str(path), "--qi", "A,B,C", "--weights", "w", "--nulls", "wildcard", "--quiet"]
    assert main([*args, "--json", str(out), "--html", str(html)]) == 0
    text = capsys.readouterr().out
    assert "risk (individual, sdcMicro, survey weights): 0.21 expected re-identifications" in text
    document = json.loads(out.read_text(encoding="utf-8"))
    individual = document["risk"]["individual"]
    assert individual["weights"] == "w" and individual["method"] == "approx"
    assert individual["expected_reidentifications"] == pytest.approx(sum(RK_WEIGHTED_NA), abs=1e-7)
    assert individual["global_risk"] == pytest.approx(sum(RK_WEIGHTED_NA) / 8, abs=1e-8)
    assert individual["records_at_risk"] == 0 and individual["at_risk"]["count"] == 0
    assert document["nulls"]["policy"] == "wildcard"
    page = html.read_text(encoding="utf-8")
    assert 'id="individual-risk"' in page and "column w" in page


def test_cli_weights_from_the_policy_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _survey(tmp_path)
    config = tmp_path / "policy.toml"
    config.write_text(
        f'inputs = ["{path.name}"]\nquasi_identifiers = ["A", "B", "C"]\n'
        'weights = "w"\nnulls = "wildcard"\n',
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(config), "--quiet"]) == 0
    assert "0.21 expected re-identifications" in capsys.readouterr().out


def test_cli_bad_weight_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "survey.csv"
    path.write_text("q;w\na;1\nb;12,5\n", encoding="utf-8")
    assert main(["audit", str(path), "--qi", "q", "--weights", "w", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "survey.csv" in err and "'w'" in err and "'12,5'" in err
