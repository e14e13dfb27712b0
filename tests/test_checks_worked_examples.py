"""Worked examples for the checks: small hand-checkable tables and the papers' tables.

Every expected number below is computed by hand in the comment next to it; nothing is
copied from the library's output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from anonaudit.classtable import ClassTable
from anonaudit.errors import HierarchyError, ParameterError
from anonaudit.hierarchy import GroundDistance, Hierarchy
from anonaudit.measures.disclosure import attribute_disclosure
from anonaudit.measures.k_anonymity import k_anonymity
from anonaudit.measures.l_diversity import l_diversity
from anonaudit.measures.risk import RISK_BANDS, prosecutor_risk
from anonaudit.measures.t_closeness import t_closeness

# -- helpers ----------------------------------------------------------------------------


def make_table(
    rows: Sequence[Sequence[object]], qi: Sequence[str], sa: Sequence[str] = ()
) -> ClassTable:
    """A class table from rows ``(*qi values, *sa values, count)``."""
    frame = pd.DataFrame(list(rows), columns=[*qi, *sa, "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=list(qi), sensitive=list(sa))


def class_keys(table: ClassTable) -> list[tuple]:
    """The QI tuple of every class, in class-id order (nulls as ``None``)."""
    keys = table.classes.keys
    columns = [keys.column(name).to_pylist() for name in keys.column_names]
    return list(zip(*columns, strict=True))


def per_key(table: ClassTable, values: np.ndarray) -> dict[tuple, float]:
    """Per-class values keyed by the class's QI tuple (class ids are not stable)."""
    keys = class_keys(table)
    return {key: float(value) for key, value in zip(keys, values, strict=True)}


def frame_rows(frame: pd.DataFrame, columns: Sequence[str]) -> list[tuple]:
    return list(frame[list(columns)].itertuples(index=False, name=None))


# -- k-anonymity ------------------------------------------------------------------------

# Sweeney (2002), Figure 2: a 2-anonymous release over QI {Race, Birth, Gender, ZIP}.
SWEENEY_QI = ("race", "birth", "gender", "zip")
SWEENEY = [
    ("black", "1965", "m", "0214*", 2),  # short breath, chest pain
    ("black", "1965", "f", "0213*", 2),  # hypertension x2
    ("black", "1964", "f", "0213*", 2),  # obesity, chest pain
    ("white", "1964", "m", "0213*", 3),  # chest pain, obesity, short breath
    ("white", "1967", "m", "0213*", 2),  # chest pain x2
]


def test_k_anonymity_sweeney_figure_2():
    # Class sizes 2, 2, 2, 3, 2: k = min = 2, 5 classes, 11 records,
    # histogram {2: 4 classes, 3: 1 class}.
    result = k_anonymity(make_table(SWEENEY, SWEENEY_QI), k=2)
    assert result.k == 2
    assert result.classes == 5
    assert result.rows == 11
    assert result.histogram == {2: 4, 3: 1}
    assert list(result.histogram) == [2, 3]
    assert result.passed is True
    assert result.violating.empty
    assert result.violating_records == 0


def test_k_anonymity_violating_classes_smallest_first():
    # Sweeney's table plus one record that is alone in its class (size 1).
    # Against k = 3: the singleton and the four classes of size 2 violate,
    # 1 + 4 * 2 = 9 records; the size-3 class does not. Smallest first: the
    # singleton leads, then the size-2 classes.
    rows = [*SWEENEY, ("white", "1966", "f", "0214*", 1)]
    result = k_anonymity(make_table(rows, SWEENEY_QI), k=3)
    assert result.k == 1
    assert result.histogram == {1: 1, 2: 4, 3: 1}
    assert result.passed is False
    assert result.violating_records == 9
    assert list(result.violating.columns) == [*SWEENEY_QI, "size"]
    assert result.violating["size"].tolist() == [1, 2, 2, 2, 2]
    assert frame_rows(result.violating.iloc[:1], SWEENEY_QI) == [("white", "1966", "f", "0214*")]
    expected = {row[:4]: row[4] for row in rows if row[4] < 3}
    got = {row[:4]: row[4] for row in frame_rows(result.violating, [*SWEENEY_QI, "size"])}
    assert got == expected


def test_k_anonymity_counts_are_summed_and_no_threshold():
    # Repeated combinations are summed: ("a", 2) + ("a", 3) = class of 5, ("b", 4).
    # k = 4, histogram {4: 1, 5: 1}; without a threshold nothing is judged.
    table = make_table([("a", 2), ("a", 3), ("b", 4)], ["zip"])
    result = k_anonymity(table)
    assert (result.k, result.classes, result.rows) == (4, 2, 9)
    assert result.histogram == {4: 1, 5: 1}
    assert result.passed is None
    assert result.violating.empty


# -- l-diversity (Machanavajjhala et al. 2007) ------------------------------------------


def test_distinct_l_diversity():
    # Class A = {flu, flu, cancer}: 2 distinct; class B = {flu, hiv, cancer}: 3.
    # Distinct l = min = 2. Against l = 3 only A (3 records) violates.
    table = make_table(
        [("A", "flu", 2), ("A", "cancer", 1), ("B", "flu", 1), ("B", "hiv", 1), ("B", "cancer", 1)],
        ["q"],
        ["d"],
    )
    assert l_diversity(table, "d", l=2).passed is True
    result = l_diversity(table, "d", l=3)
    assert result.distinct == 2
    assert result.passed is False
    assert frame_rows(result.violating, ["q", "size", "distinct"]) == [("A", 3, 2)]
    assert result.violating_records == 3


def test_entropy_l_of_balanced_three_value_class_is_three():
    # Class A = {x, y, z} twice each: entropy = -3 * (1/3) ln(1/3) = ln 3, entropy l = 3.
    # Class B = {w, x, y, z} once each: ln 4, entropy l = 4. Table's entropy l = min = 3.
    # exp(ln 3) may round just below 3; entropy_l = 3 must still pass (tolerance).
    table = make_table(
        [("A", v, 2) for v in "xyz"] + [("B", v, 1) for v in "wxyz"],
        ["q"],
        ["s"],
    )
    result = l_diversity(table, "s", entropy_l=3)
    assert result.entropy == pytest.approx(3.0, rel=1e-12)
    assert result.passed is True
    assert result.violating.empty
    # 3.01 > 3: class A fails, B (entropy l 4) does not.
    stricter = l_diversity(table, "s", entropy_l=3.01)
    assert stricter.passed is False
    assert frame_rows(stricter.violating, ["q", "size"]) == [("A", 6)]
    assert stricter.violating["entropy_l"].iloc[0] == pytest.approx(3.0)


def test_recursive_c_l_diversity_counts_3_2_1():
    # One class with counts r1 = 3, r2 = 2, r3 = 1 (6 records).
    # Entropy: -(1/2 ln 1/2 + 1/3 ln 1/3 + 1/6 ln 1/6) = 1.01140; exp = 2.74946.
    # Recursive (c, 2): r1 < c (r2 + r3)  <=>  3 < 3c; c* = 3 / (2 + 1) = 1.0.
    table = make_table([("a", "x", 3), ("a", "y", 2), ("a", "z", 1)], ["q"], ["s"])
    result = l_diversity(table, "s", recursive_l=2)
    assert result.distinct == 3
    entropy = 0.5 * math.log(2) + math.log(3) / 3 + math.log(6) / 6
    assert result.entropy == pytest.approx(math.exp(entropy))
    assert result.entropy == pytest.approx(2.74946, abs=1e-5)
    assert result.recursive_c == pytest.approx(1.0)
    # c = 1: 3 < 1 * 3 is false, so the class fails (the inequality is strict).
    at_one = l_diversity(table, "s", recursive_l=2, c=1)
    assert at_one.passed is False
    assert at_one.violating_records == 6
    assert at_one.violating["recursive_c"].tolist() == pytest.approx([1.0])
    # c = 1.01: 3 < 3.03 holds.
    above = l_diversity(table, "s", recursive_l=2, c=1.01)
    assert above.passed is True
    assert above.violating.empty


def test_recursive_c_is_infinite_with_fewer_than_l_values():
    # The 3,2,1 class has 3 distinct values; at l = 4 the tail r4 + ... is empty,
    # so no c works: c* = inf and even c = 1000 fails.
    table = make_table([("a", "x", 3), ("a", "y", 2), ("a", "z", 1)], ["q"], ["s"])
    result = l_diversity(table, "s", recursive_l=4, c=1000)
    assert result.recursive_c == math.inf
    assert result.passed is False
    assert result.violating_records == 6


def test_recursive_c_at_l_1_is_r1_over_size():
    # At l = 1 the tail is r1 + r2 + ... = the class size: c* = r1 / size.
    # Class a: 3/(3+2+1) = 0.5; class b: counts 4, 1 -> 4/5 = 0.8. Table c* = max = 0.8.
    table = make_table(
        [("a", "x", 3), ("a", "y", 2), ("a", "z", 1), ("b", "x", 1), ("b", "y", 4)],
        ["q"],
        ["s"],
    )
    result = l_diversity(table, "s", recursive_l=1, c=0.6)
    assert result.recursive_c == pytest.approx(0.8)
    # c = 0.6: class a (0.5 < 0.6) passes, class b (0.8) fails.
    assert frame_rows(result.violating, ["q", "recursive_c"]) == [("b", pytest.approx(0.8))]


# Machanavajjhala et al. (2007), Figures 2 and 3: the inpatient microdata, 4-anonymous
# and 3-diverse. Conditions per block (ZIP prefix, age):
HEART, VIRAL, CANCER = "Heart Disease", "Viral Infection", "Cancer"
FIGURE_2 = {
    ("130**", "<30"): [HEART, HEART, VIRAL, VIRAL],
    ("1485*", ">=40"): [CANCER, HEART, VIRAL, VIRAL],
    ("130**", "3*"): [CANCER, CANCER, CANCER, CANCER],
}
FIGURE_3 = {
    ("1305*", "<=40"): [HEART, VIRAL, CANCER, CANCER],
    ("1485*", ">40"): [CANCER, HEART, VIRAL, VIRAL],
    ("1306*", "<=40"): [HEART, VIRAL, CANCER, CANCER],
}


def _figure(blocks: dict[tuple[str, str], list[str]]) -> ClassTable:
    rows = [(*key, value, 1) for key, values in blocks.items() for value in values]
    return make_table(rows, ["zip", "age"], ["condition"])


def test_l_diversity_paper_figure_2_homogeneity():
    # 4-anonymous, yet the third block is all Cancer: distinct l = 1, alpha = 1.
    table = _figure(FIGURE_2)
    assert k_anonymity(table).k == 4
    result = l_diversity(table, "condition", l=2)
    assert result.distinct == 1
    assert result.passed is False
    assert frame_rows(result.violating, ["zip", "age"]) == [("130**", "3*")]
    assert attribute_disclosure(table, "condition").alpha == 1.0


def test_l_diversity_paper_figure_3_is_3_diverse():
    # Every block has counts (2, 1, 1): distinct 3; entropy -(1/2 ln 1/2 + 2/4 ln 1/4)
    # = 1.5 ln 2, so entropy l = 2^1.5 = 2.828 (not entropy 3-diverse); recursive
    # c* = r1 / (r2 + r3) = 2/2 = 1 at l = 2 and r1 / r3 = 2 at l = 3.
    table = _figure(FIGURE_3)
    assert k_anonymity(table).k == 4
    result = l_diversity(table, "condition", l=3, entropy_l=3.0, c=2.0, recursive_l=3)
    assert result.distinct == 3
    assert result.entropy == pytest.approx(2**1.5)
    assert result.recursive_c == pytest.approx(2.0)
    assert result.passed is False  # entropy l 2.83 < 3, and c = 2 is not > c* = 2
    assert l_diversity(table, "condition", recursive_l=2).recursive_c == pytest.approx(1.0)
    assert l_diversity(table, "condition", l=3, c=2.01, recursive_l=3).passed is True


def test_l_diversity_null_sa_is_a_value_of_its_own():
    # Class {x, null, null}: null counts as a second value; 2 null records reported.
    table = make_table([("a", "x", 1), ("a", None, 2)], ["q"], ["s"])
    result = l_diversity(table, "s")
    assert result.distinct == 2
    assert result.nulls == 2


# -- t-closeness: Li, Li & Venkatasubramanian (ICDE 2007) ------------------------------

# Table 3 of the paper (ZIP;Age;Salary(k);Disease).
PAPER_TABLE_3 = """\
47677;29;3;gastric ulcer
47602;22;4;gastritis
47678;27;5;stomach cancer
47905;43;6;gastritis
47909;52;11;flu
47906;47;8;bronchitis
47605;30;7;bronchitis
47673;36;9;pneumonia
47607;32;10;stomach cancer
"""

# The disease hierarchy, one row per leaf: leaf;parent;grandparent;root. H = 3.
DISEASE_HIERARCHY = Hierarchy.from_rows(
    [
        [leaf, "stomach disease", "digestive system disease", "respiratory&digestive disease"]
        for leaf in ("gastric ulcer", "gastritis", "stomach cancer")
    ]
    + [
        [leaf, "respiratory infection", "vascular lung disease", "respiratory&digestive disease"]
        for leaf in ("flu", "bronchitis", "pneumonia")
    ],
    name="disease",
)

# Table 4 (3-diverse): generalized QI per original ZIP.
TABLE_4 = {
    "47677": ("476**", "2*"),
    "47602": ("476**", "2*"),
    "47678": ("476**", "2*"),
    "47905": ("4790*", ">=40"),
    "47909": ("4790*", ">=40"),
    "47906": ("4790*", ">=40"),
    "47605": ("476**", "3*"),
    "47673": ("476**", "3*"),
    "47607": ("476**", "3*"),
}

# Table 5 (0.167-close w.r.t. Salary, 0.278-close w.r.t. Disease as printed).
TABLE_5 = {
    "47677": ("4767*", "<=40"),
    "47678": ("4767*", "<=40"),
    "47673": ("4767*", "<=40"),
    "47905": ("4790*", ">=40"),
    "47909": ("4790*", ">=40"),
    "47906": ("4790*", ">=40"),
    "47602": ("4760*", "<=40"),
    "47605": ("4760*", "<=40"),
    "47607": ("4760*", "<=40"),
}


def paper_table(generalization: dict[str, tuple[str, str]]) -> ClassTable:
    rows = []
    for line in PAPER_TABLE_3.splitlines():
        zip_code, _age, salary, disease = line.split(";")
        rows.append((*generalization[zip_code], salary, disease, 1))
    return make_table(rows, ["zip", "age"], ["salary", "disease"])


def test_paper_table_3_embedded_as_printed():
    # 9 records, salaries 3k..11k each once, diseases 1/2/2 stomach, 1/2/1 respiratory.
    table = paper_table(TABLE_4)
    assert table.rows == 9
    salary = table.sensitive_counts("salary")
    assert sorted(salary.values, key=float) == [str(s) for s in range(3, 12)]
    disease = table.sensitive_counts("disease")
    totals = dict(zip(disease.values, disease.totals.tolist(), strict=True))
    assert totals == {
        "gastric ulcer": 1,
        "gastritis": 2,
        "stomach cancer": 2,
        "flu": 1,
        "bronchitis": 2,
        "pneumonia": 1,
    }


def test_paper_table_4_ordered_salary_distances():
    # m = 9 salaries 3..11, Q uniform (1/9 each). Ordered EMD = sum_i |cumP - cumQ| / (m-1).
    # {3,4,5}: cum diffs 2/9,4/9,6/9,5/9,4/9,3/9,2/9,1/9 -> 27/9 = 3; 3/8 = 0.375.
    # {6,8,11}: |diffs| 1/9,2/9,3/9,1/9,2/9,0,1/9,2/9 -> 12/9; (4/3)/8 = 1/6 = 0.167.
    # {7,9,10}: |diffs| 1,2,3,4,2,3,1,1 /9 -> 17/9; (17/9)/8 = 17/72 = 0.236.
    table = paper_table(TABLE_4)
    result = t_closeness(table, "salary", distance="ordered")
    got = per_key(table, result.per_class)
    assert got == {
        ("476**", "2*"): pytest.approx(0.375),
        ("4790*", ">=40"): pytest.approx(1 / 6),
        ("476**", "3*"): pytest.approx(17 / 72),
    }
    assert result.t == pytest.approx(0.375)


def test_paper_table_5_is_0167_close_on_salary():
    # {3,5,9}: |diffs| 2,1,3,2,1,0,2,1 /9 = 12/9 -> 1/6.
    # {6,8,11}: 1/6 (as in Table 4).
    # {4,7,10}: |diffs| 1,1,0,1,1,0,1,1 /9 = 6/9 -> 1/12.
    # t = 1/6 = 0.1667 <= 0.167: the paper's "0.167-closeness w.r.t. Salary".
    table = paper_table(TABLE_5)
    result = t_closeness(table, "salary", distance="ordered", t=0.167)
    assert per_key(table, result.per_class) == {
        ("4767*", "<=40"): pytest.approx(1 / 6),
        ("4790*", ">=40"): pytest.approx(1 / 6),
        ("4760*", "<=40"): pytest.approx(1 / 12),
    }
    assert result.t == pytest.approx(1 / 6)
    assert result.passed is True
    assert result.violating.empty
    # At t = 0.16 the two classes at 1/6 (3 records each) violate.
    strict = t_closeness(table, "salary", distance="ordered", t=0.16)
    assert strict.passed is False
    assert strict.violating_records == 6
    assert sorted(frame_rows(strict.violating, ["zip", "age"])) == [
        ("4767*", "<=40"),
        ("4790*", ">=40"),
    ]


def test_paper_table_5_hierarchical_disease_distance():
    # Q: gastric ulcer 1/9, gastritis 2/9, stomach cancer 2/9, flu 1/9, bronchitis 2/9,
    # pneumonia 1/9. H = 3; cost(N) = height(N)/H * min(pos_extra(N), neg_extra(N)).
    # Level-2 nodes have a single child each, so they never cost anything.
    #
    # {gastritis, flu, bronchitis} (4790*, >=40), P = 1/3 each:
    #   leaf extras P-Q: GU -1/9, G +1/9, SC -2/9 | F +2/9, B +1/9, Pn -1/9
    #   stomach disease: min(1/9, 3/9) = 1/9 -> 1/3 * 1/9 = 1/27, extra -2/9
    #   respiratory infection: min(3/9, 1/9) = 1/9 -> 1/27, extra +2/9
    #   root: min(2/9, 2/9) = 2/9 -> 3/3 * 2/9 = 6/27;  total 8/27 = 0.296
    # {gastric ulcer, stomach cancer, pneumonia} (4767*, <=40):
    #   extras GU +2/9, G -2/9, SC +1/9 | F -1/9, B -2/9, Pn +2/9
    #   stomach: min(3/9, 2/9) -> 2/27 (extra +1/9); respiratory: min(2/9, 3/9) -> 2/27
    #   root: min(1/9, 1/9) -> 3/27;  total 7/27 = 0.259
    # {gastritis, bronchitis, stomach cancer} (4760*, <=40):
    #   extras GU -1/9, G +1/9, SC +1/9 | F -1/9, B +1/9, Pn -1/9
    #   stomach: min(2/9, 1/9) -> 1/27; respiratory: min(1/9, 2/9) -> 1/27; root 3/27
    #   total 5/27 = 0.185
    # t = 8/27 = 0.296. The paper prints 0.278 (= 5/18) for this table; the formula of
    # its own Section 4 gives 8/27 as above, which is what we assert.
    table = paper_table(TABLE_5)
    result = t_closeness(table, "disease", distance="hierarchical", hierarchy=DISEASE_HIERARCHY)
    assert per_key(table, result.per_class) == {
        ("4790*", ">=40"): pytest.approx(8 / 27),
        ("4767*", "<=40"): pytest.approx(7 / 27),
        ("4760*", "<=40"): pytest.approx(5 / 27),
    }
    assert result.t == pytest.approx(8 / 27)
    assert result.nulls_excluded == 0


def test_paper_table_4_hierarchical_disease_all_stomach_class():
    # {gastric ulcer, gastritis, stomach cancer} (476**, 2*), P = 1/3 each:
    #   extras GU +2/9, G +1/9, SC +1/9 | F -1/9, B -2/9, Pn -1/9
    #   stomach disease: no negative extra -> 0, extra +4/9; respiratory: 0, extra -4/9
    #   root: min(4/9, 4/9) = 4/9 at height 3/3 -> 4/9 = 0.444
    # {gastritis, flu, bronchitis} (4790*, >=40): 8/27 (see Table 5).
    # {bronchitis, pneumonia, stomach cancer} (476**, 3*):
    #   extras GU -1/9, G -2/9, SC +1/9 | F -1/9, B +1/9, Pn +2/9
    #   stomach: min(1/9, 3/9) -> 1/27 (extra -2/9); respiratory: min(3/9, 1/9) -> 1/27
    #   root: 2/9 -> 6/27; total 8/27
    table = paper_table(TABLE_4)
    result = t_closeness(
        table, "disease", distance="hierarchical", hierarchy=DISEASE_HIERARCHY, t=0.3
    )
    assert per_key(table, result.per_class) == {
        ("476**", "2*"): pytest.approx(4 / 9),
        ("4790*", ">=40"): pytest.approx(8 / 27),
        ("476**", "3*"): pytest.approx(8 / 27),
    }
    assert result.t == pytest.approx(4 / 9)
    # Against t = 0.3 only the all-stomach class (4/9 > 0.3 > 8/27 = 0.296) violates.
    assert frame_rows(result.violating, ["zip", "age", "size"]) == [("476**", "2*", 3)]
    assert result.violating["distance"].tolist() == pytest.approx([4 / 9])


def test_hierarchical_distance_value_missing_from_hierarchy():
    # The hierarchy lacks "pneumonia", which the data has.
    partial = Hierarchy.from_rows(
        [
            ["gastric ulcer", "stomach"],
            ["gastritis", "stomach"],
            ["stomach cancer", "stomach"],
            ["flu", "respiratory"],
            ["bronchitis", "respiratory"],
        ],
        name="partial",
    )
    with pytest.raises(HierarchyError, match=r"value 'pneumonia' of the data is not in"):
        t_closeness(paper_table(TABLE_5), "disease", distance="hierarchical", hierarchy=partial)


def test_hierarchical_distance_needs_a_hierarchy():
    with pytest.raises(ParameterError, match=r"hierarchical distance for 'disease' needs"):
        t_closeness(paper_table(TABLE_5), "disease", distance="hierarchical")


# -- t-closeness: other ground distances ------------------------------------------------


def test_equal_distance_by_hand():
    # Class A = {x, x}; class B = {x, y, z, z}. Q: x 3/6, y 1/6, z 2/6.
    # A: 1/2 (|1 - 1/2| + 1/6 + 2/6) = 1/2.
    # B: P = (1/4, 1/4, 1/2): 1/2 (|1/4-1/2| + |1/4-1/6| + |1/2-1/3|)
    #    = 1/2 (3/12 + 1/12 + 2/12) = 1/4.
    table = make_table([("A", "x", 2), ("B", "x", 1), ("B", "y", 1), ("B", "z", 2)], ["q"], ["s"])
    result = t_closeness(table, "s", distance="equal", t=0.3)
    assert per_key(table, result.per_class) == {
        ("A",): pytest.approx(0.5),
        ("B",): pytest.approx(0.25),
    }
    assert result.t == pytest.approx(0.5)
    assert result.passed is False
    assert frame_rows(result.violating, ["q", "size"]) == [("A", 2)]
    assert result.violating_records == 2


# Values 0, 1, 10 (uneven gaps, range 10). A = {0, 1}, B = {1, 10}, C = {10, 10}.
# Q: 0 -> 1/6, 1 -> 2/6, 10 -> 3/6; table CDF 1/6 on [0,1), 1/2 on [1,10).
UNEVEN = [("A", "0", 1), ("A", "1", 1), ("B", "1", 1), ("B", "10", 1), ("C", "10", 2)]


def test_numeric_distance_uses_the_gaps():
    # Wasserstein-1 = integral |F_P - F_Q|, divided by the range 10.
    # A: F_P = 1/2 on [0,1), 1 on [1,10): |1/2-1/6|*1 + |1-1/2|*9 = 1/3 + 9/2 = 29/6 -> 29/60
    # B: F_P = 0, 1/2: 1/6*1 + 0*9 = 1/6 -> 1/60
    # C: F_P = 0, 0: 1/6*1 + 1/2*9 = 28/6 -> 28/60
    table = make_table(UNEVEN, ["q"], ["s"])
    result = t_closeness(table, "s", distance="numeric")
    assert per_key(table, result.per_class) == {
        ("A",): pytest.approx(29 / 60),
        ("B",): pytest.approx(1 / 60),
        ("C",): pytest.approx(28 / 60),
    }
    assert result.t == pytest.approx(29 / 60)


def test_ordered_distance_ignores_the_gaps():
    # Same table, ranks 0, 1, 2 (m - 1 = 2): sum over the first two ranks of |cumP - cumQ|.
    # A: |1/2-1/6| + |1-1/2| = 5/6 -> 5/12;  B: 1/6 + 0 -> 1/12;  C: 1/6 + 1/2 -> 1/3.
    table = make_table(UNEVEN, ["q"], ["s"])
    result = t_closeness(table, "s", distance="ordered")
    assert per_key(table, result.per_class) == {
        ("A",): pytest.approx(5 / 12),
        ("B",): pytest.approx(1 / 12),
        ("C",): pytest.approx(1 / 3),
    }


def test_ordered_distance_with_an_explicit_order_of_text():
    # grade low < mid < high is the same ladder as 0 < 1 < 10 ranked: same as above.
    names = {"0": "low", "1": "mid", "10": "high"}
    table = make_table([(q, names[s], n) for q, s, n in UNEVEN], ["q"], ["grade"])
    result = t_closeness(table, "grade", distance="ordered", order=["low", "mid", "high"])
    assert per_key(table, result.per_class) == {
        ("A",): pytest.approx(5 / 12),
        ("B",): pytest.approx(1 / 12),
        ("C",): pytest.approx(1 / 3),
    }
    # The reversed order mirrors the ladder: A = {high, mid}, C = {low, low}.
    # cumQ from the top: 10 -> 3/6, 1 -> 5/6. A: cumP 0, 1/2 -> 1/2 + 1/3 = 5/6 -> 5/12.
    # C: cumP 1, 1 -> 1/2 + 1/6 = 2/3 -> 1/3; B: cumP 1/2, 1 -> 0 + 1/6 -> 1/12. Same.
    mirrored = t_closeness(table, "grade", distance="ordered", order=["high", "mid", "low"])
    assert per_key(table, mirrored.per_class) == {
        ("A",): pytest.approx(5 / 12),
        ("B",): pytest.approx(1 / 12),
        ("C",): pytest.approx(1 / 3),
    }


def test_ordered_distance_of_text_needs_an_order():
    table = make_table([("A", "low", 1), ("B", "high", 1)], ["q"], ["grade"])
    with pytest.raises(ParameterError, match=r"ordered distance for 'grade' needs numbers"):
        t_closeness(table, "grade", distance="ordered")
    with pytest.raises(ParameterError, match=r"numeric distance for 'grade' needs numbers"):
        t_closeness(table, "grade", distance="numeric")


def test_ordered_distance_order_missing_a_value():
    table = make_table([("A", "low", 1), ("B", "high", 1)], ["q"], ["grade"])
    with pytest.raises(HierarchyError, match=r"order given for 'grade' lacks value 'high'"):
        t_closeness(table, "grade", distance="ordered", order=["low", "mid"])


@pytest.mark.parametrize("distance", ["equal", "ordered", "numeric", "hierarchical", "matrix"])
def test_single_valued_sa_is_at_distance_zero(distance):
    # Every class has P = Q = (1): nothing to move, t = 0 under every ground distance.
    table = make_table([("A", "5", 2), ("B", "5", 3), ("C", "5", 1)], ["q"], ["s"])
    result = t_closeness(
        table,
        "s",
        distance=distance,
        t=0,
        hierarchy=Hierarchy.from_rows([["5", "*"], ["6", "*"]]),
        ground=GroundDistance(("5",), np.zeros((1, 1))),
    )
    assert result.t == 0
    assert result.per_class.tolist() == [0.0, 0.0, 0.0]
    assert result.passed is True


@pytest.mark.parametrize(
    ("distance", "counts"),
    [
        ("ordered", (1, 1, 1)),
        ("numeric", (1, 1, 1)),
        ("ordered", (10, 5, 2)),
        ("equal", (1, 6, 3, 3)),
    ],
)
def test_class_equal_to_the_table_is_not_at_a_negative_distance(distance, counts):
    # One class holds the whole table (values "0", "1", ... with the given counts), so
    # P = Q and the EMD is 0: e.g. ordered, counts 1,1,1: cum diffs 1/3-1/3, 2/3-2/3 = 0.
    # A distance is never negative (emd.py: "All distances lie in [0, 1]"), and the t a
    # check reports must be accepted back as a threshold (t must lie in [0, 1]).
    table = make_table([("A", str(i), n) for i, n in enumerate(counts)], ["q"], ["s"])
    result = t_closeness(table, "s", distance=distance)
    assert result.t == pytest.approx(0.0, abs=1e-12)
    assert result.t >= 0.0
    assert np.all(result.per_class >= 0.0)
    assert t_closeness(table, "s", distance=distance, t=result.t).passed is True


# Class A = {1, null, null}, class B = {2, 3}.
WITH_NULLS = [("A", "1", 1), ("A", None, 2), ("B", "2", 1), ("B", "3", 1)]


def test_ordered_distance_excludes_null_sa():
    # Without the nulls: values 1, 2, 3, Q = 1/3 each, m - 1 = 2.
    # A: P = (1, 0, 0): |1 - 1/3| + |1 - 2/3| = 1 -> 1/2.
    # B: P = (0, 1/2, 1/2): |0 - 1/3| + |1/2 - 2/3| = 1/2 -> 1/4.
    table = make_table(WITH_NULLS, ["q"], ["s"])
    result = t_closeness(table, "s", distance="ordered")
    assert result.nulls_excluded == 2
    assert per_key(table, result.per_class) == {
        ("A",): pytest.approx(0.5),
        ("B",): pytest.approx(0.25),
    }


def test_equal_distance_keeps_null_as_a_value():
    # Q over {1, null, 2, 3} = (1/5, 2/5, 1/5, 1/5).
    # A: P = (1/3, 2/3, 0, 0): 1/2 (2/15 + 4/15 + 3/15 + 3/15) = 2/5.
    # B: P = (0, 0, 1/2, 1/2): 1/2 (3/15 + 6/15 + 3/10 + 3/10) = 1/2 * 3/5 * 2 = 3/5.
    table = make_table(WITH_NULLS, ["q"], ["s"])
    result = t_closeness(table, "s", distance="equal")
    assert result.nulls_excluded == 0
    assert per_key(table, result.per_class) == {
        ("A",): pytest.approx(2 / 5),
        ("B",): pytest.approx(3 / 5),
    }


def test_hierarchical_distance_of_an_all_null_sa_is_zero_like_ordered():
    # With every SA value null nothing is left after the nulls are excluded. The ordered
    # and numeric distances then report t = 0 with all 3 records in nulls_excluded; the
    # hierarchical distance must do the same (or raise an AnonauditError), not crash.
    table = make_table([("A", None, 1), ("B", None, 2)], ["q"], ["s"])
    hierarchy = Hierarchy.from_rows([["x", "p"], ["y", "p"]])
    ordered = t_closeness(table, "s", distance="ordered")
    assert (ordered.t, ordered.nulls_excluded) == (0.0, 3)
    result = t_closeness(table, "s", distance="hierarchical", hierarchy=hierarchy)
    assert (result.t, result.nulls_excluded) == (0.0, 3)


# -- attribute disclosure ---------------------------------------------------------------

# Class A = {x, x, x, y}, class B = {x, y}. Table: x 4/6 = 2/3, y 2/6 = 1/3.
DISCLOSURE = [("A", "x", 3), ("A", "y", 1), ("B", "x", 1), ("B", "y", 1)]


def test_alpha_beta_delta_by_hand():
    # alpha: A max share 3/4, B 1/2 -> 3/4.
    # beta (only values gaining on the table count):
    #   A: x (3/4 - 2/3)/(2/3) = (1/12)/(2/3) = 1/8; y loses -> 0.  A's beta = 1/8.
    #   B: y (1/2 - 1/3)/(1/3) = 1/2; x loses.                      B's beta = 1/2.
    # delta = max |ln(p_E/p)|:
    #   A: |ln(9/8)| = 0.118, |ln(3/4)| = 0.288 -> ln(4/3)
    #   B: |ln(3/4)| = 0.288, |ln(3/2)| = 0.405 -> ln(3/2)
    table = make_table(DISCLOSURE, ["q"], ["s"])
    result = attribute_disclosure(table, "s")
    assert result.alpha == pytest.approx(3 / 4)
    assert result.beta == pytest.approx(1 / 2)
    assert result.delta == pytest.approx(math.log(3 / 2))
    assert result.passed is None


def test_alpha_beta_thresholds_pick_the_right_classes():
    table = make_table(DISCLOSURE, ["q"], ["s"])
    # alpha = 0.75 is met exactly; beta = 0.5 too.
    assert attribute_disclosure(table, "s", alpha=0.75, beta=0.5).passed is True
    # alpha = 0.7 < 3/4: only A (4 records) fails.
    by_alpha = attribute_disclosure(table, "s", alpha=0.7)
    assert by_alpha.passed is False
    assert frame_rows(by_alpha.violating, ["q", "size"]) == [("A", 4)]
    assert by_alpha.violating_records == 4
    assert by_alpha.violating["beta"].tolist() == pytest.approx([1 / 8])
    # beta = 0.4 < 1/2: only B (2 records) fails.
    by_beta = attribute_disclosure(table, "s", beta=0.4)
    assert frame_rows(by_beta.violating, ["q", "size"]) == [("B", 2)]
    assert by_beta.violating["alpha"].tolist() == pytest.approx([1 / 2])


def test_delta_threshold_is_strict():
    # delta = ln(3/2) = 0.405: a bound of exactly ln(3/2) fails (|ln| < delta is strict)
    # and flags B only (A's ln(4/3) = 0.288 is below it); 0.41 passes.
    table = make_table(DISCLOSURE, ["q"], ["s"])
    at_bound = attribute_disclosure(table, "s", delta=math.log(3 / 2))
    assert at_bound.passed is False
    assert frame_rows(at_bound.violating, ["q"]) == [("B",)]
    assert at_bound.violating["delta"].tolist() == pytest.approx([math.log(3 / 2)])
    assert attribute_disclosure(table, "s", delta=0.41).passed is True


def test_delta_is_infinite_when_a_class_lacks_a_value():
    # Add class C = {x, x}, which lacks y. Table: x 6/8 = 3/4, y 2/8 = 1/4.
    # delta: A = {x:3/4, y:1/4} equals the table -> 0; B: |ln(2/3)|, |ln 2| -> ln 2;
    #   C: p_C(y) = 0, |ln 0| = inf. Table delta = inf; against delta = 10 only C fails.
    # alpha: C is all x -> 1. beta: B's y (1/2 - 1/4)/(1/4) = 1; C's x 1/3; A 0 -> 1.
    table = make_table([*DISCLOSURE, ("C", "x", 2)], ["q"], ["s"])
    result = attribute_disclosure(table, "s", delta=10)
    assert result.delta == math.inf
    assert result.alpha == 1.0
    assert result.beta == pytest.approx(1.0)
    assert frame_rows(result.violating, ["q", "size", "delta"]) == [("C", 2, math.inf)]
    assert result.violating_records == 2
    # Without C every class holds both values and delta is finite (ln 3/2, see above).
    assert math.isfinite(attribute_disclosure(make_table(DISCLOSURE, ["q"], ["s"]), "s").delta)


# -- prosecutor risk --------------------------------------------------------------------


def test_prosecutor_risk_by_hand():
    # Class sizes 1, 2, 3, 4, 5, 10, 100: 125 records, 7 classes.
    # highest = 1/1, lowest = 1/100, average = 7/125 = 0.056.
    # threshold 0.2: risk > 0.2 for sizes 1..4 -> 1+2+3+4 = 10 records (size 5 sits at 0.2).
    # sample uniques: 1 record, 1/125.
    # bands (upper edges): 0.01 <- 100; 0.05 <- none; 0.1 <- 10; 0.2 <- 5;
    #   0.5 <- sizes 2, 3, 4 = 9; 1.0 <- 1. Sum 125.
    sizes = [1, 2, 3, 4, 5, 10, 100]
    table = make_table([(f"c{i}", n) for i, n in enumerate(sizes)], ["q"])
    result = prosecutor_risk(table, threshold=0.2, max_highest=0.5)
    assert result.highest == 1.0
    assert result.lowest == pytest.approx(0.01)
    assert result.average == pytest.approx(7 / 125)
    assert result.records_at_risk == 10
    assert result.records_at_risk_fraction == pytest.approx(10 / 125)
    assert result.sample_uniques == 1
    assert result.sample_uniques_fraction == pytest.approx(1 / 125)
    assert result.bands == {0.01: 100, 0.05: 0, 0.1: 10, 0.2: 5, 0.5: 9, 1.0: 1}
    assert tuple(result.bands) == RISK_BANDS
    assert sum(result.bands.values()) == 125
    assert result.passed is False  # 1.0 > 0.5


def test_prosecutor_risk_threshold_moves_records_at_risk():
    # Same sizes; threshold 0.3: risks 1, 0.5, 0.333 exceed it -> 1 + 2 + 3 = 6 records.
    sizes = [1, 2, 3, 4, 5, 10, 100]
    table = make_table([(f"c{i}", n) for i, n in enumerate(sizes)], ["q"])
    result = prosecutor_risk(table, threshold=0.3)
    assert result.records_at_risk == 6
    assert result.max_highest is None
    assert result.passed is None


def test_prosecutor_risk_without_uniques():
    # Sizes 2 and 8: highest 1/2, lowest 1/8, average 2/10; no uniques; passes 0.5.
    table = make_table([("a", 2), ("b", 8)], ["q"])
    result = prosecutor_risk(table, max_highest=0.5)
    assert (result.highest, result.lowest) == (0.5, 0.125)
    assert result.average == pytest.approx(0.2)
    assert result.sample_uniques == 0
    assert result.passed is True
    assert result.bands == {0.01: 0, 0.05: 0, 0.1: 0, 0.2: 8, 0.5: 2, 1.0: 0}


# -- thresholds out of range ------------------------------------------------------------

SMALL = make_table([("a", "x", 2), ("a", "y", 1), ("b", "x", 3)], ["q"], ["s"])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: k_anonymity(SMALL, k=0), r"k must be a whole number >= 1 \(got 0\)"),
        (lambda: k_anonymity(SMALL, k=2.5), r"k must be a whole number >= 1 \(got 2\.5\)"),
        (lambda: k_anonymity(SMALL, k=True), r"k must be a whole number >= 1 \(got True\)"),
        (lambda: l_diversity(SMALL, "s", l=0), r"l must be a whole number >= 1 \(got 0\)"),
        (
            lambda: l_diversity(SMALL, "s", recursive_l=0),
            r"recursive l must be a whole number >= 1 \(got 0\)",
        ),
        (
            lambda: l_diversity(SMALL, "s", entropy_l=0.5),
            r"entropy l must be a number >= 1 \(got 0\.5\)",
        ),
        (lambda: l_diversity(SMALL, "s", c=0), r"recursive c must be a number > 0 \(got 0\)"),
        (lambda: t_closeness(SMALL, "s", t=1.5), r"t must lie between 0 and 1 \(got 1\.5\)"),
        (lambda: t_closeness(SMALL, "s", t=-0.1), r"t must lie between 0 and 1 \(got -0\.1\)"),
        (
            lambda: t_closeness(SMALL, "s", distance="foo"),
            r"unknown t-closeness distance 'foo'; choose one of equal, ordered",
        ),
        (lambda: attribute_disclosure(SMALL, "s", alpha=0), r"alpha must lie in \(0, 1\]"),
        (lambda: attribute_disclosure(SMALL, "s", alpha=1.5), r"alpha must lie in \(0, 1\]"),
        (lambda: attribute_disclosure(SMALL, "s", beta=0), r"beta must be a number > 0"),
        (lambda: attribute_disclosure(SMALL, "s", delta=-1), r"delta must be a number > 0"),
        (lambda: prosecutor_risk(SMALL, threshold=0), r"risk threshold must lie in \(0, 1\]"),
        (lambda: prosecutor_risk(SMALL, max_highest=2), r"max risk must lie in \(0, 1\]"),
    ],
)
def test_thresholds_out_of_range_raise(call, message):
    with pytest.raises(ParameterError, match=message):
        call()


def test_parameter_error_is_a_value_error():
    # Callers catching ValueError keep working.
    with pytest.raises(ValueError, match=r"t must lie between 0 and 1"):
        t_closeness(SMALL, "s", t=2)


def test_matrix_distance_needs_a_ground_distance():
    with pytest.raises(ParameterError, match=r"matrix distance for 's' needs a ground-distance"):
        t_closeness(SMALL, "s", distance="matrix")
