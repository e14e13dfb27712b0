"""The ``wildcard`` null policy: a null QI value matches any value (sdcMicro ``freqCalc``).

Published expectations: sdcMicro's ``tests/testthat/test_indivRisk.R`` (its table with
NA, unweighted: ``rk = 1 / fk`` = 1/3, 1, 1/4, 1/2, 1/3, 1/3, 1, 1/5, so ``fk`` = 3, 1, 4,
2, 3, 3, 1, 5) and the expected frequencies written out in the comments of
``tests/testthat/test_freqCalc.R`` (region/status/agegroup, "method 1": the
suppressed status counts in every class, ``fk`` = 3, 3, 3, 3, 5).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import rows

from anonaudit import AuditOptions, Policy, Roles, audit, audit_table
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import ParameterError
from anonaudit.measures.k_anonymity import k_anonymity
from anonaudit.measures.l_diversity import l_diversity
from anonaudit.measures.risk import prosecutor_risk
from anonaudit.measures.wildcard import class_frequencies, wildcard_sums


def _table(columns: dict[str, list[str | None]], **roles: list[str]) -> ClassTable:
    return ClassTable.from_frame(pd.DataFrame(columns).assign(count=1), **roles)  # type: ignore[arg-type]


def _fk_per_record(table: ClassTable, fk: np.ndarray, records: list[tuple]) -> list[int]:
    keys = [tuple(row.values()) for row in table.classes.keys.to_pylist()]
    lookup = dict(zip(keys, fk.tolist(), strict=True))
    return [lookup[record] for record in records]


def _brute_force(records: list[tuple]) -> list[int]:
    """f_k of each record by comparing every pair (the definition)."""

    def compatible(r: tuple, s: tuple) -> bool:
        return all(a is None or b is None or a == b for a, b in zip(r, s, strict=True))

    return [sum(compatible(r, s) for s in records) for r in records]


def test_sdcmicro_indivrisk_table_with_missing_values() -> None:
    a = ["2", "3", "2", "2", "3", "3", "1", None]
    b = ["3", "3", "3", "3", "3", "3", "4", "3"]
    c = ["1", "3", None, "2", "1", "1", None, "1"]
    table = _table({"A": a, "B": b, "C": c}, quasi_identifiers=["A", "B", "C"])
    fk, big = class_frequencies(table, nulls="wildcard")
    records = list(zip(a, b, c, strict=True))
    assert _fk_per_record(table, fk, records) == [3, 1, 4, 2, 3, 3, 1, 5]
    assert big is None


def test_sdcmicro_freqcalc_suppressed_status_matches_every_class() -> None:
    status = ["single", "married", "married", "single", None]
    table = _table(
        {"region": ["A"] * 5, "status": status, "agegroup": ["5"] * 5},
        quasi_identifiers=["region", "status", "agegroup"],
    )
    fk, _ = class_frequencies(table, nulls="wildcard")
    records = [("A", s, "5") for s in status]
    assert _fk_per_record(table, fk, records) == [3, 3, 3, 3, 5]
    value, _ = class_frequencies(table, nulls="value")
    assert _fk_per_record(table, value, records) == [2, 2, 2, 2, 1]


def test_all_null_records_count_for_everyone() -> None:
    # sdcMicro (two or more key variables) gives an all-NA record fk = n but does not add
    # it to records without NA; the relation here is symmetric, so they count it.
    table = _table({"a": ["1", "2", None], "b": ["x", "x", None]}, quasi_identifiers=["a", "b"])
    fk, _ = class_frequencies(table, nulls="wildcard")
    records = [("1", "x"), ("2", "x"), (None, None)]
    assert _fk_per_record(table, fk, records) == [2, 2, 3]


def test_weights_sum_over_compatible_records() -> None:
    frame = pd.DataFrame(
        {"a": ["1", "1", None], "b": ["x", "y", "x"], "count": 1, "w": [10.0, 20.0, 5.0]}
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["a", "b"], weight="w")
    fk, big = class_frequencies(table, nulls="wildcard")
    assert big is not None
    records = [("1", "x"), ("1", "y"), (None, "x")]
    assert _fk_per_record(table, fk, records) == [2, 1, 2]
    assert _fk_per_record(table, big, records) == [15.0, 20.0, 15.0]


def test_k_anonymity_and_prosecutor_risk_under_wildcards() -> None:
    # (1,x) x2, (1,null), (2,y): wildcard fk 3, 3, 1; value sizes 2, 1, 1
    table = _table(
        {"a": ["1", "1", "1", "2"], "b": ["x", "x", None, "y"]}, quasi_identifiers=["a", "b"]
    )
    fk, _ = class_frequencies(table, nulls="wildcard")
    k = k_anonymity(table, k=2, fk=fk)
    assert (k.k, k.classes, k.rows, k.histogram) == (1, 3, 4, {1: 1, 3: 2})
    assert k.violating_records == 1 and k.violating["a"].tolist() == ["2"]
    assert k.violating["fk"].tolist() == [1]
    risk = prosecutor_risk(table, threshold=0.5, fk=fk)
    # records: two with 1/3, one with 1/3, one with 1: average (3 * 1/3 + 1) / 4
    assert risk.highest == 1.0 and risk.lowest == pytest.approx(1 / 3)
    assert risk.average == pytest.approx(0.5)
    assert (risk.records_at_risk, risk.sample_uniques) == (1, 1)


def test_audit_wildcard_changes_fk_measures_only() -> None:
    frame = pd.DataFrame(
        {"a": ["1", "1", "1", "2"], "b": ["x", "x", None, "y"], "s": ["u", "v", "w", "u"]}
    )
    value = audit(frame, Roles(["a", "b"], ["s"]))
    wild = audit(frame, Roles(["a", "b"], ["s"]), AuditOptions(nulls="wildcard"))
    assert (value.k_anonymity.k, wild.k_anonymity.k) == (1, 1)
    assert wild.k_anonymity.histogram == {1: 1, 3: 2}
    assert wild.risk.average == pytest.approx(0.5) and value.risk.average == 0.75
    assert wild.null_policy == "wildcard" and wild.dropped_records == 0
    # l-diversity keeps the partition (nulls as a value)
    assert wild.l_diversity["s"].distinct == value.l_diversity["s"].distinct == 1
    assert l_diversity(wild.table, "s").distinct == 1


def test_suppression_advice_keeps_nulls_as_wildcards() -> None:
    """The advice's rounds re-audit under the audit's null policy: a null still matches
    every value, so the classes it makes large enough are kept."""
    records = pd.DataFrame(
        {
            "zip": ["a", "a", None, "b", "c", "c", "d"],
            "age": ["1", "1", "1", "2", "3", None, "4"],
            "disease": ["x", "y", "x", "y", "x", "y", "x"],
        }
    )
    options = AuditOptions(policy=Policy(k=3), nulls="wildcard")
    report = audit(records, Roles(["zip", "age"], ["disease"]), options)
    advice = report.suppression
    assert advice is not None
    # (b, 2) and (d, 4) match only themselves; (c, 3) and (c, null) match each other
    # only; (a, 1) x2 and (null, 1) make three: only those three are kept.
    assert (advice.records, advice.passed) == (4, True)
    assert advice.remaining.rows == 3
    assert audit_table(advice.remaining, options).passed is True


def test_unknown_null_policy_is_refused() -> None:
    table = _table({"a": ["1"]}, quasi_identifiers=["a"])
    with pytest.raises(ParameterError, match="wildcard"):
        class_frequencies(table, nulls="any")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="wildcard"):
        audit(table, Roles(["a"]), AuditOptions(nulls="any"))  # type: ignore[arg-type]


_values = st.one_of(st.none(), st.sampled_from("ab"))


@settings(max_examples=150, deadline=None)
@given(rows(_values, _values, _values, max_size=30))
def test_wildcard_matches_the_pairwise_definition(records: list[tuple]) -> None:
    table = _table(
        {name: [r[i] for r in records] for i, name in enumerate("abc")},
        quasi_identifiers=["a", "b", "c"],
    )
    fk, _ = class_frequencies(table, nulls="wildcard")
    assert _fk_per_record(table, fk, records) == _brute_force(records)


@settings(max_examples=100, deadline=None)
@given(rows(_values, _values, max_size=30))
def test_wildcard_fk_is_at_least_the_class_size(records: list[tuple]) -> None:
    table = _table(
        {"a": [r[0] for r in records], "b": [r[1] for r in records]},
        quasi_identifiers=["a", "b"],
    )
    fk, _ = class_frequencies(table, nulls="wildcard")
    assert (fk >= table.classes.sizes).all()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("xy"), st.floats(0, 100)), min_size=1
    )
)
def test_without_nulls_wildcard_is_value(records: list[tuple]) -> None:
    frame = pd.DataFrame(records, columns=["a", "b", "w"]).assign(count=1)
    table = ClassTable.from_frame(frame, quasi_identifiers=["a", "b"], weight="w")
    wild = class_frequencies(table, nulls="wildcard")
    value = class_frequencies(table, nulls="value")
    np.testing.assert_array_equal(wild[0], value[0])
    np.testing.assert_array_equal(wild[1], value[1])
    np.testing.assert_array_equal(wildcard_sums(table.classes, value[0]), value[0])


def test_cli_nulls_wildcard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "data.csv"
    path.write_text("region;status;age\nA;single;5\nA;married;5\nA;married;5\nA;single;5\nA;;5\n")
    out = tmp_path / "r.json"
    argv = ["audit", str(path), "--qi", "region,status,age", "-k", "3", "--quiet"]
    assert main([*argv, "--nulls", "wildcard", "--json", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["nulls"]["policy"] == "wildcard" and document["k_anonymity"]["k"] == 3
    assert "nulls as wildcards" in capsys.readouterr().out
    assert main(argv) == 1  # as values, the null record is alone


def test_cli_refuses_an_unknown_null_policy_in_the_policy_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data.csv").write_text("a\n1\n")
    config = tmp_path / "policy.toml"
    config.write_text('inputs = ["data.csv"]\nquasi_identifiers = ["a"]\nnulls = "any"\n')
    assert main(["audit", "--config", str(config), "--quiet"]) == 2
    assert "nulls" in capsys.readouterr().err


def test_wildcard_on_adult_with_suppressed_values() -> None:
    """Adult with a tenth of the ages suppressed: a complete class gains the suppressed
    records of its sex and race; a class with a null age counts every record of its sex
    and race."""
    adult = Path(__file__).parent.parent / "sample_data" / "adult" / "adult.csv"
    frame = pd.read_csv(adult, sep=";", dtype=str, usecols=["sex", "age", "race"])
    frame.loc[frame.index % 10 == 0, "age"] = None
    table = ClassTable.from_frame(frame.assign(count=1), quasi_identifiers=["sex", "age", "race"])
    fk, _ = class_frequencies(table, nulls="wildcard")
    sizes = table.classes.sizes
    assert (fk >= sizes).all()
    keys = table.classes.keys.to_pandas()
    missing = keys["age"].isna().to_numpy()
    suppressed = frame[frame["age"].isna()].groupby(["sex", "race"]).size()
    expected = sizes[~missing] + [
        suppressed.get((sex, race), 0)
        for sex, race in zip(keys["sex"][~missing], keys["race"][~missing], strict=True)
    ]
    np.testing.assert_array_equal(fk[~missing], expected)
    totals = frame.groupby(["sex", "race"]).size()
    np.testing.assert_array_equal(
        fk[missing],
        [
            totals[(sex, race)]
            for sex, race in zip(keys["sex"][missing], keys["race"][missing], strict=True)
        ],
    )
