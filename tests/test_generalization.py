"""Generalization: ARX's test table with its hierarchies, built-in interval and prefix
hierarchies on Adult ages and clinic ZIP codes, ``--generalize``, and the invariants
(generalizing never lowers k; level 0 is the identity; generalizing commutes with
merging class tables).

The small table and its hierarchies are ARX's ``data/test.csv`` and
``test_hierarchy_{age,gender,zipcode}.csv`` (``arx_test_table.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from arx_test_table import ARX_HIERARCHIES, arx_table
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import AuditOptions, ClassTable, Policy, ReadOptions, Roles
from anonaudit.cli import main
from anonaudit.errors import HierarchyError, ParameterError
from anonaudit.measures.generalization import Generalization, qi_hierarchy

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "sample_data" / "adult" / "adult.csv"
CLINIC = ROOT / "sample_data" / "clinic.csv"


def sizes(table: ClassTable) -> list[int]:
    return sorted(table.classes.sizes.tolist())


# -- ARX's test table, by hand ------------------------------------------------------


def test_arx_table_at_node_1_1_2_has_classes_of_2_2_3() -> None:
    # age <50/>=50, gender *, zipcode 816**/819**: (<50, 816**) x2 {34 m 81667,
    # 45 f 81675}, (>=50, 819**) x3 {66, 70, 70}, (<50, 819**) x2 {34 f, 45 m}.
    g = Generalization(ARX_HIERARCHIES, {"age": 1, "gender": 1, "zipcode": 2})
    generalized = g.apply(arx_table())
    assert sizes(generalized) == [2, 2, 3]
    assert generalized.rows == 7
    assert g.height() == 4
    keys = generalized.classes.keys.to_pylist()
    assert {"age": ">=50", "gender": "*", "zipcode": "819**"} in keys


def test_arx_table_at_node_1_0_2_is_still_1_anonymous() -> None:
    # Only (>=50, male, 819**) repeats: 66 male 81925 and 70 male 81931.
    g = Generalization(ARX_HIERARCHIES, {"age": 1, "zipcode": 2})
    assert sizes(g.apply(arx_table())) == [1, 1, 1, 1, 1, 2]


def test_recode_maps_send_leaves_to_their_level_and_null_to_null() -> None:
    g = Generalization(ARX_HIERARCHIES, {"age": 1, "gender": 0, "zipcode": 3})
    maps = g.recode_maps()
    assert set(maps) == {"age", "zipcode"}  # gender stays at level 0
    assert maps["age"]["66"] == ">=50" and maps["age"][None] is None
    assert maps["zipcode"]["81675"] == "81***"


def test_audit_generalizes_before_measuring() -> None:
    report = anonaudit.audit(
        arx_table(),
        Roles(["age", "gender", "zipcode"]),
        AuditOptions(
            policy=Policy(k=2),
            hierarchies=ARX_HIERARCHIES,
            generalize={"age": 1, "gender": 1, "zipcode": 2},
        ),
    )
    assert report.k_anonymity.k == 2 and report.passed is True
    assert report.generalization is not None and report.generalization.height() == 4
    assert report.suppression is None


def test_null_qi_stays_null_and_its_own_class() -> None:
    frame = pd.DataFrame({"age": ["34", None, "45"], "count": [1, 2, 1]})
    table = ClassTable.from_frame(frame, quasi_identifiers=["age"])
    g = Generalization({"age": ARX_HIERARCHIES["age"]}, {"age": 1})
    keys = g.apply(table).classes.keys.column("age").to_pylist()
    assert len(keys) == 2 and set(keys) == {"<50", None}


def test_weights_are_summed_with_the_counts() -> None:
    frame = pd.DataFrame({"age": ["34", "45", "66"], "count": [1, 2, 3], "w": [10.0, 20.0, 5.0]})
    table = ClassTable.from_frame(frame, quasi_identifiers=["age"], weight="w")
    generalized = Generalization({"age": ARX_HIERARCHIES["age"]}, {"age": 1}).apply(table)
    by_key = dict(
        zip(
            generalized.classes.keys.column("age").to_pylist(),
            np.asarray(generalized.classes.weights).tolist(),
            strict=True,
        )
    )
    assert by_key == {"<50": 30.0, ">=50": 5.0}


# -- built-in hierarchies -----------------------------------------------------------


def test_interval_bands_are_aligned_at_zero_and_nested() -> None:
    h = qi_hierarchy("interval:5,10,20", ["17", "37", "40", "-3", "2.5", None], column="age")
    column = {leaf: [level[i] for level in h.levels] for i, leaf in enumerate(h.levels[0])}
    assert column["37"] == ["37", "[35, 40[", "[30, 40[", "[20, 40[", "*"]
    assert column["40"] == ["40", "[40, 45[", "[40, 50[", "[40, 60[", "*"]
    assert column["-3"] == ["-3", "[-5, 0[", "[-10, 0[", "[-20, 0[", "*"]
    assert column["2.5"][1] == "[0, 5["
    assert h.height == 4


def test_interval_on_adult_age_counts_the_bands() -> None:
    # Adult's ages run from 17 to 90: bands of 5 from [15, 20[ to [90, 95[ (16), of 10
    # from [10, 20[ to [90, 100[ (9), of 20 from [0, 20[ to [80, 100[ (5), then *.
    ages = pd.read_csv(ADULT, sep=";", usecols=["age"], dtype=str)["age"]
    assert (int(ages.astype(int).min()), int(ages.astype(int).max())) == (17, 90)
    classes = []
    for level in range(5):
        report = anonaudit.audit(
            ADULT,
            Roles(["age"]),
            AuditOptions(hierarchies={"age": "interval:5,10,20"}, generalize={"age": level}),
            reading=ReadOptions(sep=";"),
        )
        classes.append(report.k_anonymity.classes)
        assert report.rows == 30162
    assert classes == [ages.nunique(), 16, 9, 5, 1]


def test_prefix_truncates_clinic_zip_codes() -> None:
    zips = pd.read_csv(CLINIC, dtype=str)["zip"]  # one null, which stays its own class
    h = qi_hierarchy("prefix", zips.dropna().unique().tolist(), column="zip")
    assert h.height == 5  # 4 masking levels for 5-digit codes, then *
    leaf = h.levels[0].index("02139")
    assert [level[leaf] for level in h.levels] == ["02139", "0213*", "021**", "02***", "0****", "*"]
    report = anonaudit.audit(
        CLINIC, Roles(["zip"]), AuditOptions(hierarchies={"zip": "prefix:2"}, generalize={"zip": 2})
    )
    expected = zips.str[:3].nunique() + 1
    assert report.k_anonymity.classes == expected
    assert qi_hierarchy("prefix:2", ["02139"], column="zip").height == 3


@pytest.mark.parametrize(
    ("spec", "values", "error", "match"),
    [
        (
            "interval:5",
            ["34", "unknown"],
            HierarchyError,
            "'unknown' of column 'age' is not a number",
        ),
        ("interval:5", ["nan"], HierarchyError, "'nan'"),
        ("interval:", ["34"], ParameterError, "positive band widths"),
        ("interval:10,25", ["34"], ParameterError, "25 is not a multiple of 10"),
        ("interval:10,10", ["34"], ParameterError, "larger multiple"),
        ("prefix:x", ["02139"], ParameterError, "whole number N >= 1"),
        ("prefix:0", ["02139"], ParameterError, "whole number N >= 1"),
    ],
)
def test_bad_builtin_specs_and_values_are_named(
    spec: str, values: list[str], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        qi_hierarchy(spec, values, column="age")


def test_a_value_missing_from_a_hierarchy_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "age.csv"
    path.write_text("34;<50;*\n45;<50;*\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"value '66' of column 'age' is not in the hierarchy"):
        qi_hierarchy(path, ["34", "66"], column="age")
    assert qi_hierarchy(path, ["34", None], column="age").height == 2


def test_levels_out_of_range_and_missing_hierarchies_are_parameter_errors() -> None:
    with pytest.raises(ParameterError, match=r"'age'.*levels 0 to 2"):
        Generalization(ARX_HIERARCHIES, {"age": 3})
    with pytest.raises(ParameterError, match=r"'age'.*levels 0 to 2"):
        Generalization(ARX_HIERARCHIES, {"age": -1})
    with pytest.raises(ParameterError, match="'race': it has no hierarchy"):
        Generalization(ARX_HIERARCHIES, {"race": 1})
    with pytest.raises(ParameterError, match="'sex': it is not a quasi-identifier"):
        anonaudit.audit(
            arx_table(), Roles(["age", "gender", "zipcode"]), AuditOptions(generalize={"sex": 1})
        )


# -- invariants ---------------------------------------------------------------------

ages = st.sampled_from(["34", "45", "66", "70"])
genders = st.sampled_from(["male", "female"])
zips = st.sampled_from(["81667", "81675", "81925", "81931"])
rows = st.lists(st.tuples(ages, genders, zips, st.integers(1, 5)), min_size=1, max_size=25)
levels = st.fixed_dictionaries(
    {"age": st.integers(0, 2), "gender": st.integers(0, 1), "zipcode": st.integers(0, 5)}
)


def table_of(data: list[tuple[str, str, str, int]]) -> ClassTable:
    frame = pd.DataFrame(data, columns=["age", "gender", "zipcode", "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=["age", "gender", "zipcode"])


def canonical(table: ClassTable) -> list[tuple[object, ...]]:
    keys = table.keys.to_pylist()
    return sorted((*row.values(), int(n)) for row, n in zip(keys, table.counts, strict=True))


@settings(max_examples=60, deadline=None)
@given(rows, levels, levels)
def test_generalizing_further_never_lowers_k(
    data: list[tuple[str, str, str, int]], low: dict[str, int], high: dict[str, int]
) -> None:
    upper = {qi: max(low[qi], high[qi]) for qi in low}
    table = table_of(data)
    k_low = Generalization(ARX_HIERARCHIES, low).apply(table).classes.sizes.min()
    k_high = Generalization(ARX_HIERARCHIES, upper).apply(table).classes.sizes.min()
    assert k_high >= k_low
    assert k_low >= table.classes.sizes.min()


@settings(max_examples=40, deadline=None)
@given(rows)
def test_level_zero_is_the_identity(data: list[tuple[str, str, str, int]]) -> None:
    table = table_of(data)
    zero = {"age": 0, "gender": 0, "zipcode": 0}
    assert canonical(Generalization(ARX_HIERARCHIES, zero).apply(table)) == canonical(table)
    assert Generalization(ARX_HIERARCHIES, zero).recode_maps() == {}


@settings(max_examples=60, deadline=None)
@given(rows, rows, levels)
def test_generalizing_commutes_with_merging(
    first: list[tuple[str, str, str, int]],
    second: list[tuple[str, str, str, int]],
    chosen: dict[str, int],
) -> None:
    a, b = table_of(first), table_of(second)
    g = Generalization(ARX_HIERARCHIES, chosen)
    assert canonical(g.apply(a.merge(b))) == canonical(g.apply(a).merge(g.apply(b)))


# -- command line and policy file -----------------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


ADULT_ARGS = [str(ADULT), "--sep", ";", "--qi", "sex,age,race"]


def test_cli_generalize_audits_the_generalized_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "r.json"
    code, out, _ = run(
        [
            *ADULT_ARGS,
            "--hierarchy",
            "age=interval:5,10,20",
            "--generalize",
            "age=4",
            "--json",
            str(out_json),
        ],
        capsys,
    )
    assert code == 0
    assert "generalized: age level 4 (height 4)" in out
    document = json.loads(out_json.read_text(encoding="utf-8"))
    assert document["generalization"] == {
        "levels": {"age": 4},
        "hierarchies": {"age": "interval:5,10,20"},
        "height": 4,
    }
    # age at * leaves sex x race: 2 x 5 classes.
    assert document["k_anonymity"]["classes"] == 10
    assert document["utility"]["height"] == 4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--generalize", "age=2"], "cannot generalize 'age': it has no hierarchy"),
        (
            ["--hierarchy", "age=interval:5,10,20", "--generalize", "age=5"],
            "level 5 for 'age' is out of range: its hierarchy (interval:5,10,20) has levels 0 to 4",
        ),
        (["--generalize", "age=two"], "--generalize age=two: the level must be a whole number"),
        (["--generalize", "age"], "--generalize takes COL=VALUE"),
        (
            ["--hierarchy", "race=interval:5", "--generalize", "race=1"],
            "of column 'race' is not a number",
        ),
        (["--hierarchy", "age=prefix", "--generalize", "zip=1"], "'zip': it is not a quasi"),
    ],
)
def test_cli_generalize_errors_are_one_line_exit_2(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run([*ADULT_ARGS, *extra], capsys)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1


def test_policy_file_generalize_and_builtin_hierarchy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f"""
inputs = [{json.dumps(str(ADULT))}]
quasi_identifiers = ["sex", "age", "race"]
sep = ";"
json = "out.json"
[hierarchy]
age = "interval:5,10,20"
[generalize]
age = 3
""",
        encoding="utf-8",
    )
    code, _, _ = run(["--config", str(policy)], capsys)
    assert code == 0
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert document["generalization"]["levels"] == {"age": 3}
    # A command-line level overrides the file's.
    code, _, _ = run(["--config", str(policy), "--generalize", "age=1"], capsys)
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert document["generalization"]["levels"] == {"age": 1}
    policy.write_text(policy.read_text(encoding="utf-8").replace("age = 3", 'age = "3"'))
    code, _, err = run(["--config", str(policy)], capsys)
    assert code == 2 and "generalize.age must be a whole number" in err
