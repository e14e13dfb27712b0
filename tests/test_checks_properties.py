"""Property tests of the checks on random small class tables.

Each test draws records ``(q1, q2, s, count)`` from small alphabets (nulls included),
builds the class table with :meth:`ClassTable.from_frame`, and compares the checks with
references computed directly from the drawn records, or with the exact transport
solution of POT for the earth mover's distances.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import class_table, rows

from anonaudit.classtable import ClassTable
from anonaudit.hierarchy import Hierarchy
from anonaudit.measures._classes import TOLERANCE
from anonaudit.measures.disclosure import attribute_disclosure
from anonaudit.measures.emd import Distributions, pot_distance
from anonaudit.measures.k_anonymity import k_anonymity
from anonaudit.measures.l_diversity import l_diversity
from anonaudit.measures.risk import RISK_BANDS, prosecutor_risk
from anonaudit.measures.t_closeness import t_closeness

QI1 = ("a", "b", "c")
QI2 = ("x", "y", None)
CATEGORIES = ("flu", "hiv", "cancer", "cold", None)
NUMBERS = ("0", "1", "2", "5", "7.5", "10", "40", None)
LETTERS = ("a", "b", "c", "d", "e", None)
LEAVES = ("s0", "s1", "s2", "s3", "s4", "s5")

SETTINGS = settings(max_examples=60, deadline=None)

Record = tuple[str, str | None, str | None, int]


def records(sa_values: Sequence[str | None], max_size: int = 20) -> st.SearchStrategy:
    """Lists of records (q1, q2, s, count) with positive counts."""
    values = (st.sampled_from(QI1), st.sampled_from(QI2), st.sampled_from(sa_values))
    return rows(*values, st.integers(1, 5), max_size=max_size)


def make(records: Sequence[Record]) -> ClassTable:
    return class_table(
        [r[:3] for r in records], ["q1", "q2"], ["s"], counts=[r[3] for r in records]
    )


def raw_classes(rows: Sequence[Record]) -> dict[tuple, Counter]:
    """QI tuple -> Counter of SA values, straight from the records."""
    result: dict[tuple, Counter] = defaultdict(Counter)
    for q1, q2, s, n in rows:
        result[(q1, q2)][s] += n
    return dict(result)


def class_keys(table: ClassTable) -> list[tuple]:
    """The QI tuple of every class, in class-id order (nulls as ``None``)."""
    keys = table.classes.keys
    if isinstance(keys, pd.DataFrame):
        return list(keys.itertuples(index=False, name=None))
    columns = [keys.column(name).to_pylist() for name in keys.column_names]
    return list(zip(*columns, strict=True))


def per_key(table: ClassTable, values: np.ndarray) -> dict[tuple, float]:
    """Per-class values keyed by the class's QI tuple (class ids are not stable)."""
    keys = class_keys(table)
    return {key: float(value) for key, value in zip(keys, values, strict=True)}


def content(table: ClassTable) -> list[tuple[tuple, int]]:
    """The (key tuple, count) pairs of a class table, sorted (nulls last)."""
    columns = [table.keys.column(name).to_pylist() for name in table.keys.column_names]
    keys = zip(*columns, strict=True)
    pairs = [(tuple(key), int(n)) for key, n in zip(keys, table.counts, strict=True)]
    return sorted(pairs, key=lambda kv: tuple((v is None, v or "") for v in kv[0]))


def positions(table: ClassTable, ranked: Sequence[str]) -> np.ndarray:
    """Code -> place in ``ranked`` for the SA codes of ``table``; -1 for null."""
    place = {v: i for i, v in enumerate(ranked)}
    values = table.sensitive_counts("s").values
    return np.array([-1 if v is None else place[v] for v in values], dtype=np.int64)


def present(rows: Sequence[Record]) -> set[str]:
    return {s for _, _, s, _ in rows if s is not None}


def pot(table: ClassTable, ranked: Sequence[str], ground: np.ndarray) -> np.ndarray:
    d = Distributions.from_sensitive(table.sensitive_counts("s"), positions(table, ranked))
    return pot_distance(d, ground)


def assert_in_unit_interval(per_class: np.ndarray, t: float) -> None:
    assert np.all(per_class >= 0.0), per_class
    assert np.all(per_class <= 1.0), per_class
    assert 0.0 <= t <= 1.0
    assert t == per_class.max()


# -- hierarchies ------------------------------------------------------------------------


@st.composite
def hierarchy_rows(draw) -> list[list[str]]:
    """ARX-style rows over LEAVES with 0, 1 or 2 levels above the leaves.

    Parent and grandparent labels are drawn independently per leaf, so one label can
    sit under two grandparents: these are two different nodes (identified by path).
    """
    depth = draw(st.integers(0, 2))
    leaves = draw(st.permutations(LEAVES))
    rows = []
    for leaf in leaves:
        parent = draw(st.sampled_from(("p0", "p1", "p2")))
        grand = draw(st.sampled_from(("g0", "g1")))
        rows.append([leaf, parent, grand][: depth + 1])
    return rows


def tree_height(rows: Sequence[Sequence[str]]) -> int:
    """H: the levels above the leaves, plus the root added over a multi-valued top."""
    width = len(rows[0])
    return width - 1 if len({row[-1] for row in rows}) == 1 else width


def lca_level(a: Sequence[str], b: Sequence[str]) -> int:
    """Height of the lowest common ancestor of two leaves given by their rows."""
    for j in range(len(a)):
        if list(a[j:]) == list(b[j:]):
            return j
    return len(a)  # joined only by the added root


def hierarchical_ground(rows: Sequence[Sequence[str]], ranked: Sequence[str]) -> np.ndarray:
    by_leaf = {row[0]: row for row in rows}
    height = tree_height(rows)
    return np.array(
        [[lca_level(by_leaf[u], by_leaf[v]) / height for v in ranked] for u in ranked], dtype=float
    )


# -- k-anonymity, class sizes -----------------------------------------------------------


@SETTINGS
@given(records(CATEGORIES))
def test_k_is_the_smallest_class_and_sizes_sum_to_rows(rows):
    table = make(rows)
    raw_sizes = {key: sum(c.values()) for key, c in raw_classes(rows).items()}
    result = k_anonymity(table, k=3)
    assert result.k == min(raw_sizes.values())
    assert result.k == int(table.classes.sizes.min())
    assert int(table.classes.sizes.sum()) == table.rows == sum(n for *_, n in rows)
    assert result.rows == table.rows
    assert result.classes == len(raw_sizes) == len(table.classes)
    assert result.histogram == dict(sorted(Counter(raw_sizes.values()).items()))
    assert per_key(table, table.classes.sizes) == raw_sizes
    assert result.violating_records == sum(n for n in raw_sizes.values() if n < 3)
    assert result.violating["size"].is_monotonic_increasing
    assert result.passed == (min(raw_sizes.values()) >= 3)


# -- l-diversity ------------------------------------------------------------------------


@SETTINGS
@given(records(CATEGORIES), st.integers(1, 4))
def test_l_diversity_bounds_and_raw_reference(rows, at_l):
    table = make(rows)
    classes = raw_classes(rows)
    result = l_diversity(table, "s", recursive_l=at_l)
    k = k_anonymity(table).k
    assert result.distinct <= k
    assert result.entropy <= result.distinct + 1e-9
    assert result.entropy >= 1.0 - 1e-12
    assert result.distinct == min(len(c) for c in classes.values())
    entropies = []
    for c in classes.values():
        size = sum(c.values())
        entropies.append(-sum(n / size * math.log(n / size) for n in c.values()))
    assert result.entropy == pytest.approx(math.exp(min(entropies)), rel=1e-9)
    # Recursive c* at l: r1 / (r_l + ... + r_m), inf with fewer than l values.
    worst = 0.0
    for c in classes.values():
        ranked = sorted(c.values(), reverse=True)
        tail = sum(ranked[at_l - 1 :])
        worst = max(worst, ranked[0] / tail if tail else math.inf)
    assert result.recursive_c == pytest.approx(worst)
    assert result.nulls == sum(n for _, _, s, n in rows if s is None)


# -- t-closeness: range and agreement with POT ------------------------------------------


@SETTINGS
@given(records(CATEGORIES))
def test_equal_distance_in_unit_interval_and_equals_pot(rows):
    table = make(rows)
    result = t_closeness(table, "s", distance="equal")
    assert_in_unit_interval(result.per_class, result.t)
    values = table.sensitive_counts("s").values
    d = Distributions.from_sensitive(table.sensitive_counts("s"), np.arange(len(values)))
    ground = 1.0 - np.eye(len(values))
    np.testing.assert_allclose(result.per_class, pot_distance(d, ground), rtol=0, atol=1e-9)
    assert result.nulls_excluded == 0


@SETTINGS
@given(records(CATEGORIES))
def test_equal_distance_matches_raw_records_per_class(rows):
    # 1/2 sum_v |p_E(v) - q(v)|, null being a value, keyed by the class's QI tuple.
    table = make(rows)
    classes = raw_classes(rows)
    total = Counter()
    for c in classes.values():
        total.update(c)
    rows_n = sum(total.values())
    expected = {}
    for key, c in classes.items():
        size = sum(c.values())
        expected[key] = 0.5 * sum(abs(c[v] / size - total[v] / rows_n) for v in total)
    got = per_key(table, t_closeness(table, "s", distance="equal").per_class)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12)


@SETTINGS
@given(records(NUMBERS))
def test_ordered_distance_in_unit_interval_and_equals_pot(rows):
    table = make(rows)
    result = t_closeness(table, "s", distance="ordered")
    assert_in_unit_interval(result.per_class, result.t)
    ranked = sorted(present(rows), key=float)
    m = len(ranked)
    ranks = np.arange(m, dtype=float)
    ground = np.abs(ranks[:, None] - ranks[None, :]) / max(m - 1, 1)
    np.testing.assert_allclose(result.per_class, pot(table, ranked, ground), rtol=0, atol=1e-9)
    assert result.nulls_excluded == sum(n for _, _, s, n in rows if s is None)


@SETTINGS
@given(records(LETTERS), st.permutations(LETTERS[:-1]))
def test_ordered_distance_with_given_order_equals_pot(rows, order):
    table = make(rows)
    result = t_closeness(table, "s", distance="ordered", order=order)
    assert_in_unit_interval(result.per_class, result.t)
    ranked = [v for v in order if v in present(rows)]
    m = len(ranked)
    ranks = np.arange(m, dtype=float)
    ground = np.abs(ranks[:, None] - ranks[None, :]) / max(m - 1, 1)
    np.testing.assert_allclose(result.per_class, pot(table, ranked, ground), rtol=0, atol=1e-9)


@SETTINGS
@given(records(NUMBERS))
def test_numeric_distance_in_unit_interval_and_equals_pot(rows):
    table = make(rows)
    result = t_closeness(table, "s", distance="numeric")
    assert_in_unit_interval(result.per_class, result.t)
    ranked = sorted(present(rows), key=float)
    x = np.array([float(v) for v in ranked])
    spread = x.max() - x.min() if len(x) else 0.0
    ground = np.abs(x[:, None] - x[None, :]) / (spread if spread > 0 else 1.0)
    np.testing.assert_allclose(result.per_class, pot(table, ranked, ground), rtol=0, atol=1e-9)


@SETTINGS
@given(records((*LEAVES, None)), hierarchy_rows())
def test_hierarchical_distance_in_unit_interval_and_equals_pot(rows, tree):
    table = make(rows)
    hierarchy = Hierarchy.from_rows(tree)
    assert hierarchy.height == tree_height(tree)
    result = t_closeness(table, "s", distance="hierarchical", hierarchy=hierarchy)
    assert_in_unit_interval(result.per_class, result.t)
    ranked = sorted(present(rows))
    ground = hierarchical_ground(tree, ranked)
    np.testing.assert_allclose(result.per_class, pot(table, ranked, ground), rtol=0, atol=1e-9)
    assert result.nulls_excluded == sum(n for _, _, s, n in rows if s is None)


@st.composite
def proportional_rows(draw) -> tuple[list[Record], list[list[str]]]:
    """Records whose classes all have one SA distribution (class counts = base * factor).

    Values are numbers that are also leaves of a drawn hierarchy, so every distance
    applies. Every class then equals the table's distribution: P = Q.
    """
    values = draw(st.lists(st.sampled_from(NUMBERS[:-1]), min_size=1, max_size=7, unique=True))
    base = draw(st.lists(st.integers(1, 7), min_size=len(values), max_size=len(values)))
    keys = draw(
        st.lists(st.tuples(st.sampled_from(QI1), st.sampled_from(QI2)), min_size=1, unique=True)
    )
    rows = []
    for q1, q2 in keys:
        factor = draw(st.integers(1, 3))
        rows += [(q1, q2, v, n * factor) for v, n in zip(values, base, strict=True)]
    tree = [[v, f"p{i % 2}"] for i, v in enumerate(NUMBERS[:-1])]
    return rows, tree


@SETTINGS
@given(proportional_rows())
def test_classes_with_the_table_distribution_are_at_distance_zero(drawn):
    # P = Q in every class: nothing moves, so every EMD is 0 -- never below it.
    rows, tree = drawn
    table = make(rows)
    hierarchy = Hierarchy.from_rows(tree)
    for distance in ("equal", "ordered", "numeric", "hierarchical"):
        result = t_closeness(table, "s", distance=distance, hierarchy=hierarchy)
        assert np.all(result.per_class >= 0.0), (distance, result.per_class)
        assert result.t == pytest.approx(0.0, abs=1e-12)
        assert t_closeness(table, "s", distance=distance, hierarchy=hierarchy, t=0).passed


@SETTINGS
@given(records(CATEGORIES), st.floats(0, 1))
def test_t_threshold_selects_the_classes_beyond_it(rows, t):
    table = make(rows)
    result = t_closeness(table, "s", t=t)
    beyond = result.per_class > t + 1e-9
    assert result.violating_records == int(table.classes.sizes[beyond].sum())
    assert len(result.violating) == int(beyond.sum())
    assert result.violating["distance"].is_monotonic_decreasing
    assert result.passed == (not beyond.any())


# -- merging ----------------------------------------------------------------------------


@SETTINGS
@given(records(CATEGORIES, max_size=25), st.data())
def test_merge_in_any_split_and_order_equals_one_shot(rows, data):
    labels = data.draw(st.lists(st.integers(0, 3), min_size=len(rows), max_size=len(rows)))
    parts = [[r for r, label in zip(rows, labels, strict=True) if label == i] for i in range(4)]
    tables = [make(part) for part in parts if part]
    order = data.draw(st.permutations(range(len(tables))))
    merged = tables[order[0]].merge(*(tables[i] for i in order[1:]))
    one_shot = make(rows)
    assert content(merged) == content(one_shot)
    assert merged.rows == one_shot.rows
    assert len(merged.sources) == len(tables)
    # Nesting does not matter either: ((first + second) + rest) equals the flat merge.
    if len(tables) >= 2:
        nested = tables[order[0]].merge(tables[order[1]]).merge(*(tables[i] for i in order[2:]))
        assert content(nested) == content(one_shot)
    # Counts are summed per distinct combination, exactly as in the records.
    expected = Counter()
    for q1, q2, s, n in rows:
        expected[(q1, q2, s)] += n
    assert dict(content(merged)) == dict(expected)


# -- risk -------------------------------------------------------------------------------


@SETTINGS
@given(records(CATEGORIES), st.integers(1, 12), st.sampled_from(("0.03", "0.15", "0.3", "0.7")))
def test_risk_against_class_sizes(rows, n, decimal):
    table = make(rows)
    sizes = [sum(c.values()) for c in raw_classes(rows).values()]
    total = sum(sizes)
    result = prosecutor_risk(table, threshold=1 / n)
    assert result.average == pytest.approx(len(sizes) / total)
    assert result.average == pytest.approx(len(table.classes) / table.rows)
    assert result.highest == pytest.approx(1 / min(sizes))
    assert result.lowest == pytest.approx(1 / max(sizes))
    assert result.lowest <= result.average <= result.highest
    # Threshold 1/n: a record is at risk when its class is smaller than n.
    assert result.records_at_risk == sum(s for s in sizes if s < n)
    assert result.sample_uniques == sum(s for s in sizes if s == 1)
    assert result.sample_uniques_fraction == pytest.approx(result.sample_uniques / total)
    assert sum(result.bands.values()) == total
    bands = dict.fromkeys(RISK_BANDS, 0)
    for s in sizes:
        edge = min(e for e in RISK_BANDS if Fraction(1, s) <= Fraction(str(e)))
        bands[edge] += s
    assert result.bands == bands
    # A threshold that is no reciprocal: compare exactly with fractions.
    other = prosecutor_risk(table, threshold=float(decimal))
    assert other.records_at_risk == sum(s for s in sizes if Fraction(1, s) > Fraction(decimal))


# -- attribute disclosure ---------------------------------------------------------------


@SETTINGS
@given(records(CATEGORIES))
def test_disclosure_alpha_beta_delta_against_raw(rows):
    table = make(rows)
    classes = raw_classes(rows)
    result = attribute_disclosure(table, "s")
    distinct = l_diversity(table, "s").distinct
    assert 1 / distinct - 1e-12 <= result.alpha <= 1.0
    expected_alpha = max(max(c.values()) / sum(c.values()) for c in classes.values())
    assert result.alpha == pytest.approx(expected_alpha)
    assert result.beta >= 0.0
    table_values = {s for _, _, s, _ in rows}
    lacks = any(set(c) != table_values for c in classes.values())
    assert (result.delta == math.inf) == lacks
    if not lacks:
        assert math.isfinite(result.delta)
        assert result.delta >= 0.0


# -- verdicts agree with the listed classes ---------------------------------------------


@SETTINGS
@given(records(NUMBERS), st.data())
def test_verdicts_agree_with_violating_classes(rows, data):
    # Thresholds drawn at the measured value itself (the boundary) or at random.
    # Non-strict bounds (k, l, entropy l, t, alpha, beta) pass at the measured value;
    # strict ones (recursive c, delta) fail there. Every verdict matches the classes
    # listed as violating.
    table = make(rows)
    measured_k = k_anonymity(table).k
    k = data.draw(st.sampled_from((measured_k, measured_k + 1)))
    kr = k_anonymity(table, k=k)
    assert kr.passed == (k == measured_k) == (kr.violating_records == 0)

    base = l_diversity(table, "s")
    lr = l_diversity(table, "s", l=base.distinct, entropy_l=base.entropy)
    assert lr.passed is True
    assert lr.violating.empty
    if math.isfinite(base.recursive_c):
        at_c = l_diversity(table, "s", c=base.recursive_c)
        assert at_c.passed is False
        assert at_c.violating_records > 0

    measured_t = t_closeness(table, "s", distance="ordered").t
    t = data.draw(st.sampled_from((measured_t, measured_t / 2)))
    tr = t_closeness(table, "s", distance="ordered", t=t)
    assert tr.passed == (tr.violating_records == 0)
    # at half the measured t it fails, unless t is floating-point noise within the
    # checks' tolerance of zero (an ordered EMD of 5.6e-17 for identical distributions)
    assert tr.passed == (measured_t <= t + TOLERANCE)

    dr = attribute_disclosure(table, "s")
    at_alpha = attribute_disclosure(table, "s", alpha=dr.alpha)
    assert at_alpha.passed is True
    assert at_alpha.violating.empty
    if dr.beta > 0:
        assert attribute_disclosure(table, "s", beta=dr.beta).passed is True
    if dr.delta > 0:
        at_delta = attribute_disclosure(table, "s", delta=dr.delta)
        assert at_delta.passed is False
        assert at_delta.violating_records > 0
