"""The fast paths of the class table and the checks against the straightforward computations.

Each shortcut taken for speed (issue 13) must give the same result, bit for bit, as the
computation it replaces: grouping codes by direct addressing (:func:`_combine`), the
rows where values first appear (:func:`_first_rows`, the identifiers' distinct values,
sampled by hash the same whatever built the table),
the SA distributions' sort, the equal-distance EMD without copies, and the class-local
measures a subset takes from the table it was cut from. The references here are the
plain computations (``pandas.factorize``, ``pyarrow.compute.unique``, a fresh class
table of the same records); no test is timed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from strategies import VALUE, class_table, rows

import anonaudit.classtable as classtable
from anonaudit.classtable import ClassTable, SensitiveCounts, _combine, _first_rows, _sum_sorted
from anonaudit.measures.disclosure import attribute_disclosure
from anonaudit.measures.emd import Distributions, equal_distance
from anonaudit.measures.identifiers import _table_distinct, find_identifiers, value_hashes
from anonaudit.measures.l_diversity import class_entropy, l_diversity, recursive_c
from anonaudit.measures.t_closeness import t_closeness

SETTINGS = settings(max_examples=80, deadline=None)

#: Columns of small codes: (width, codes) pairs of one length.
CODE_COLUMNS = st.integers(0, 40).flatmap(
    lambda length: st.lists(
        st.integers(1, 6).flatmap(
            lambda width: st.tuples(
                st.just(width),
                st.lists(st.integers(0, width - 1), min_size=length, max_size=length),
            )
        ),
        min_size=1,
        max_size=4,
    )
)


def _reference_combine(columns: Sequence[NDArray[np.int64]]) -> tuple[NDArray, NDArray]:
    """Group rows by their tuple of codes with a hash factorization: group ids in order of
    first appearance, and each group's first row."""
    tuples = pd.Series(list(zip(*columns, strict=True)), dtype=object)
    index = pd.factorize(tuples)[0].astype(np.int64)
    first = np.array(
        [int(np.flatnonzero(index == g)[0]) for g in range(len(set(index)))], dtype=np.int64
    )
    return first, index


def _records(sa_values: Sequence[str | None] = ("flu", "hiv", "cold", "cancer", None)):
    """Records (q1, q2, s) with counts, from small alphabets (nulls included)."""
    values = (st.sampled_from(["a", "b", "c"]), VALUE, st.sampled_from(sa_values))
    return rows(*values, max_size=30).flatmap(
        lambda drawn: st.tuples(
            st.just(drawn), st.lists(st.integers(1, 5), min_size=len(drawn), max_size=len(drawn))
        )
    )


def _same(left: NDArray, right: NDArray) -> None:
    """Equal bit for bit: dtype, shape and bytes (NaN and signed zeros included)."""
    left, right = np.asarray(left), np.asarray(right)
    assert left.dtype == right.dtype
    assert left.shape == right.shape
    assert left.tobytes() == right.tobytes()


# --------------------------------------------------------------------------- grouping


@SETTINGS
@given(CODE_COLUMNS, st.booleans())
def test_combine_direct_addressing_is_a_factorization(columns, give_widths) -> None:
    codes = [np.array(c, dtype=np.int64) for _, c in columns]
    widths = [w for w, _ in columns] if give_widths else None
    first, index = _combine(codes, widths)
    expected_first, expected_index = _reference_combine(codes)
    _same(index, expected_index)
    _same(first, expected_first)


def test_combine_paths_agree_on_wide_and_narrow_keys() -> None:
    """Keys of a narrow range take direct addressing, keys of a wide one the hash
    factorization; both number groups alike."""
    rng = np.random.default_rng(7)
    rows_ = 5_000
    for widths in ([3, 5, 7], [2**20, 2**20, 50]):  # bound below / far above 4 x rows
        codes = [rng.integers(0, min(w, 40), size=rows_).astype(np.int64) for w in widths]
        first, index = _combine(codes, widths)
        expected = pd.factorize(pd.Series(list(zip(*codes, strict=True)), dtype=object))[0]
        _same(index, expected.astype(np.int64))
        _same(first, np.unique(expected, return_index=True)[1].astype(np.int64))


@SETTINGS
@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=60),
    st.lists(st.integers(0, 2**20 - 1), min_size=31, max_size=31),
    st.one_of(st.none(), st.integers(0, 59)),
)
def test_combine_of_a_column_that_is_a_function_of_another(keys, mapping, changed) -> None:
    """A column determined by the one before it (a region of a person) splits no group
    and is spared; one row off the function and it is grouped by: the reference's
    groups either way."""
    first_column = np.array(keys, dtype=np.int64)
    second = np.array(mapping, dtype=np.int64)[first_column]
    if changed is not None and changed < len(second):
        second[changed] = (second[changed] + 1) % 2**20
    codes = [first_column, second]
    first, index = _combine(codes, [31, 2**20])  # 31 x 2^20 slots: beyond addressing
    expected_first, expected_index = _reference_combine(codes)
    _same(index, expected_index)
    _same(first, expected_first)


def test_combine_leaves_its_inputs_alone() -> None:
    codes = [np.array([1, 0, 1, 2]), np.array([0, 1, 0, 1]), np.array([3, 3, 3, 0])]
    before = [c.copy() for c in codes]
    _combine(codes, [3, 2, 4])
    for column, kept in zip(codes, before, strict=True):
        _same(column, kept)


def test_combine_of_no_rows() -> None:
    first, index = _combine([np.array([], dtype=np.int64)] * 2, [3, 4])
    assert first.dtype == index.dtype == np.int64
    assert len(first) == len(index) == 0


@SETTINGS
@given(st.lists(st.integers(0, 9), max_size=60))
def test_first_rows_are_the_first_occurrences(values) -> None:
    key = np.array(values, dtype=np.int64)
    expected = np.sort(np.unique(key, return_index=True)[1]).astype(np.int64)
    _same(_first_rows(key, 10), expected)


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 300), st.integers(1, 5)), max_size=80),
    st.booleans(),
    st.booleans(),
)
def test_sum_sorted_is_a_groupby_sum(drawn, distinct, wide) -> None:
    """Keys ascending, each with its rows' counts summed (in row order, as floats, when
    they repeat), by the slots (narrow range) or a comparison sort (wide)."""
    if distinct:
        drawn = list({key: (key, count) for key, count in drawn}.values())
    keys = np.array([key for key, _ in drawn], dtype=np.int64)
    counts = np.array([count for _, count in drawn], dtype=np.int64)
    bound = 10**9 if wide else 301  # below 1,024: the slots
    summed_keys, summed = _sum_sorted(keys, counts, bound=bound, distinct=distinct)
    expected = pd.Series(counts.astype(float)).groupby(keys).sum()
    _same(summed_keys, expected.index.to_numpy().astype(np.int64))
    _same(summed, expected.to_numpy().astype(np.int64))
    # Records (no counts: each row counts one), as ClassTable.from_coded counts them.
    record_keys, records = _sum_sorted(keys, None, bound=bound, distinct=distinct)
    tally = pd.Series(keys).value_counts().sort_index()
    _same(record_keys, tally.index.to_numpy().astype(np.int64))
    _same(records, tally.to_numpy().astype(np.int64))


# --------------------------------------------------------------------------- classes


def _fresh(table: ClassTable) -> ClassTable:
    """The same rows as a new table: nothing cached."""
    return ClassTable(
        table.quasi_identifiers,
        table.sensitive,
        table.keys,
        table.counts,
        table.sources,
        table.weights,
    )


def _assert_same_counts(left: SensitiveCounts, right: SensitiveCounts) -> None:
    assert left.values == right.values
    for name in ("class_ids", "codes", "counts", "class_sizes", "totals"):
        _same(getattr(left, name), getattr(right, name))


@SETTINGS
@given(_records())
def test_classes_encoded_with_the_sensitive_columns_at_once(drawn) -> None:
    """A large table encodes its SAs in the classes' pool; a small one after: the
    classes and SA distributions are the same."""
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    one_by_one = _fresh(table)
    at_once = _fresh(table)
    saved = classtable._PARALLEL_ROWS
    classtable._PARALLEL_ROWS = 1  # as if the table were large
    try:
        at_once.classes  # noqa: B018
    finally:
        classtable._PARALLEL_ROWS = saved
    assert ("sorted", "s") in at_once._encodings
    for left, right in ((one_by_one.classes, at_once.classes),):
        _same(left.index, right.index)
        _same(left.sizes, right.sizes)
        assert left.keys.equals(right.keys)
    _assert_same_counts(one_by_one.sensitive_counts("s"), at_once.sensitive_counts("s"))


def test_sensitive_counts_sorted_either_way() -> None:
    """Entries sorted by class then value, by slots (narrow range) or argsort (wide)."""
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(
        {
            "q": [f"q{i}" for i in rng.integers(0, 150, size=n)],
            "s": [f"s{i}" for i in rng.integers(0, 40, size=n)],
            "count": rng.integers(1, 4, size=n),
        }
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])
    counts = table.sensitive_counts("s")
    pairs = counts.class_ids * len(counts.values) + counts.codes
    assert bool(np.all(pairs[1:] > pairs[:-1]))
    expected = (
        pd.DataFrame({"c": table.classes.index, "s": table._encoded("s")[0][1], "n": table.counts})
        .groupby(["c", "s"])["n"]
        .sum()
    )
    _same(counts.class_ids, expected.index.get_level_values(0).to_numpy().astype(np.int64))
    _same(counts.codes, expected.index.get_level_values(1).to_numpy().astype(np.int64))
    _same(counts.counts, expected.to_numpy().astype(np.int64))


@SETTINGS
@given(_records(), st.integers(0, 2**32 - 1))
def test_per_class_max_is_the_unbuffered_maximum(drawn, seed) -> None:
    """The maximum between the classes' first entries is ``np.maximum.at`` from -inf
    (NaN and infinities included), for integers as for floats."""
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    sa = table.sensitive_counts("s")
    pool = np.array([0.0, 0.25, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.0])
    floats = np.random.default_rng(seed).choice(pool, size=len(sa.counts))
    for values in (floats, sa.counts):
        expected = np.full(sa.n_classes, -np.inf)
        with np.errstate(invalid="ignore"):  # a NaN met
            np.maximum.at(expected, sa.class_ids, values)
        _same(sa.per_class_max(values), expected)


@SETTINGS
@given(_records(), st.data())
def test_kept_classes_keys_are_taken_when_read(drawn, data) -> None:
    """The classes of a table without some classes (and of a part of that) list the
    kept classes' QI values, in order, filtered from the first table's on first read."""
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    n_classes = len(table.classes)
    drop = np.array(data.draw(st.lists(st.booleans(), min_size=n_classes, max_size=n_classes)))
    rest = table.without_classes(drop)
    assert "keys" not in rest.classes.__dict__
    expected = table.classes.keys.filter(pa.array(~drop))
    again = np.array(data.draw(st.lists(st.booleans(), min_size=len(rest.classes))))
    again = again[: len(rest.classes)] if len(again) >= len(rest.classes) else np.zeros(0)
    if len(again):
        part = rest.without_classes(again)
        assert part.classes.keys.equals(expected.filter(pa.array(~again)))
    assert rest.classes.keys.equals(expected)
    assert rest.classes.keys is rest.classes.keys  # filtered once


# --------------------------------------------------------------------------- identifiers


def _sample_of(column: pa.ChunkedArray | pa.Array, n: int) -> list[str | None]:
    """The identifiers' sample of a column, from its definition: every distinct value
    when there are at most ``n`` (sorted here: their order is not set), else the ``n``
    of smallest hash, in order of hash."""
    distinct = pc.unique(column)
    if len(distinct) <= n:
        return sorted(distinct.to_pylist(), key=lambda v: (v is None, v or ""))
    hashes = value_hashes(distinct)
    order = np.argsort(hashes, kind="stable")[:n]
    return distinct.take(pa.array(order)).to_pylist()


def _sample(table: ClassTable, column: str, n: int) -> list[str | None]:
    found = _table_distinct(table, column, n).to_pylist()
    every = table.distinct(column) <= n
    return sorted(found, key=lambda v: (v is None, v or "")) if every else found


@SETTINGS
@given(_records(("x", "y", "z", None)), st.sampled_from([1, 2, 3, 5, 100]))
def test_table_distinct_from_codes_is_the_sample_of_the_values(drawn, n) -> None:
    """From the grouping codes (QIs), the sorted codes (SA), or none: every distinct
    value of the column, or the ``n`` of smallest hash."""
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    uncached = _fresh(table)
    table.classes  # noqa: B018
    table.sensitive_counts("s")
    for column in ("q1", "q2", "s"):
        expected = _sample_of(table.keys.column(column), n)
        assert _sample(table, column, n) == expected
        assert _sample(uncached, column, n) == expected
    # A subset carries compacted sorted codes of the SA (and no grouping codes).
    keep = np.arange(len(table)) % 2 == 0
    part = table.subset(keep)
    for column in ("q1", "q2", "s"):
        assert _sample(part, column, n) == _sample_of(part.keys.column(column), n)


@SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "d", "e", "f", None]), st.sampled_from("uv")),
        min_size=1,
        max_size=60,
    ),
    st.randoms(use_true_random=False),
    st.sampled_from([1, 2, 4, 100]),
)
def test_table_distinct_is_the_same_whatever_built_the_table(records, random, n) -> None:
    """The same records counted from text and by codes, in two orders (the engines'
    rows come in different orders): the same sample, of a table and of its subsets."""
    shuffled = list(records)
    random.shuffle(shuffled)
    frame = pd.DataFrame(shuffled, columns=["q", "s"]).assign(count=1)
    text = ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])
    coded = ClassTable.from_coded(
        pa.table(
            {
                name: pa.array([r[i] for r in records]).dictionary_encode()
                for i, name in enumerate(["q", "s"])
            }
        ),
        quasi_identifiers=["q"],
        sensitive=["s"],
    )
    for table in (text, coded):
        table.classes  # noqa: B018
    for column in ("q", "s"):
        assert _sample(text, column, n) == _sample(coded, column, n)
        assert _sample(text, column, n) == _sample_of(
            pa.array([r[0 if column == "q" else 1] for r in records]), n
        )
    for table in (text, coded):
        present = table.without_null_quasi_identifiers()
        assert _sample(present, "q", n) == _sample_of(
            pa.array([r[0] for r in records if r[0] is not None], pa.string()), n
        )


def test_table_distinct_of_a_column_unique_per_row() -> None:
    values = [f"id{i:03d}" for i in range(300)][::-1]
    frame = pd.DataFrame({"pid": values, "zip": ["1", "2", "3"] * 100, "count": 1})
    table = ClassTable.from_frame(frame, quasi_identifiers=["pid", "zip"])
    table._know_unique("pid")
    table.classes  # noqa: B018
    given, own = table._distinct_values("pid"), table.keys.column("pid")
    assert given.chunk(0).buffers()[2].address == own.chunk(0).buffers()[2].address  # no copy
    for n in (1, 7, 300, 1000):
        assert _sample(table, "pid", n) == _sample_of(table.keys.column("pid"), n)


@pytest.mark.parametrize("late", [False, True])
def test_table_distinct_of_few_values_all_in_a_prefix(late: bool) -> None:
    """Fewer values than asked for: a prefix that holds every value has their first rows;
    a value that first appears late (after every prefix searched) is still found."""
    rng = np.random.default_rng(3)
    values = [f"v{i}" for i in rng.integers(0, 4, size=2_000)]
    if late:
        values[1_990] = "late"
    frame = pd.DataFrame({"q": values, "s": [f"s{i}" for i in range(2_000)], "count": 1})
    table = ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])
    table.classes  # noqa: B018
    assert len(table) == 2_000
    for n in (2, 5, 30):
        assert _sample(table, "q", n) == _sample_of(table.keys.column("q"), n)


@SETTINGS
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=6), st.text(min_size=250, max_size=300))),
    st.integers(1, 5),
)
def test_value_hashes_depend_on_the_value_alone(values, pieces) -> None:
    """Each value's hash is the same alone, in any array, chunked or sliced, as
    ``string``, ``large_string`` or a dictionary; equal values hash equal."""
    array = pa.array(values, pa.string())
    hashes = value_hashes(array)
    assert hashes.dtype == np.uint64 and len(hashes) == len(values)
    alone = [int(value_hashes(pa.array([v], pa.string()))[0]) for v in values]
    assert hashes.tolist() == alone
    cuts = sorted({0, len(values), *(len(values) * k // pieces for k in range(pieces))})
    chunked = pa.chunked_array(
        [array.slice(a, b - a) for a, b in itertools.pairwise(cuts)], pa.string()
    )
    assert value_hashes(chunked).tolist() == alone
    assert value_hashes(array.cast(pa.large_string())).tolist() == alone
    assert value_hashes(array.dictionary_encode()).tolist() == alone
    for i, j in itertools.combinations(range(len(values)), 2):
        if (values[i] or "") == (values[j] or ""):
            assert alone[i] == alone[j]


def test_value_hashes_tell_values_apart() -> None:
    """No two of 200,000 short values, nor of values alike but for one byte or their
    length, share a hash; a value is read to its 256th byte (and its length)."""
    values = [f"v{i}" for i in range(100_000)] + [f"{i:08d}@example.org" for i in range(100_000)]
    assert len(set(value_hashes(pa.array(values)).tolist())) == len(values)
    alike = ["", "a", "aa", "ab", "ba", "a" * 255 + "b", "a" * 256, "a" * 257]
    assert len(set(value_hashes(pa.array(alike)).tolist())) == len(alike)
    past = value_hashes(pa.array(["x" * 256 + "a", "x" * 256 + "b"]))
    assert past[0] == past[1]


def test_find_identifiers_alike_with_and_without_codes() -> None:
    rng = np.random.default_rng(5)
    n = 2_000
    frame = pd.DataFrame(
        {
            "patient_id": [f"P{i:05d}" for i in rng.permutation(n)],
            "zip": rng.choice(["02139", "02141", None], size=n).astype(object),
            "contact": [f"user{i}@example.org" for i in range(n)],
            "count": 1,
        }
    )
    table = ClassTable.from_frame(
        frame, quasi_identifiers=["patient_id", "zip"], sensitive=["contact"]
    )
    plain = find_identifiers(_fresh(table))
    table.classes  # noqa: B018
    table.sensitive_counts("contact")
    assert find_identifiers(table) == plain


# --------------------------------------------------------------------------- EMD


def _copying_from_sensitive(counts: SensitiveCounts, position: NDArray) -> Distributions:
    """:meth:`Distributions.from_sensitive` as it was: every entry copied."""
    new_codes = position[counts.codes]
    keep = new_codes >= 0
    return Distributions(
        counts.class_ids[keep],
        new_codes[keep],
        counts.counts[keep],
        counts.n_classes,
        int(position.max()) + 1 if len(position) else 0,
    )


@SETTINGS
@given(_records(), st.randoms(use_true_random=False))
def test_from_sensitive_without_copies(drawn, random) -> None:
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    sa = table.sensitive_counts("s")
    m = len(sa.values)
    shuffled = list(range(m))
    random.shuffle(shuffled)
    positions = [np.arange(m), np.array(shuffled, dtype=np.int64)]
    if None in sa.values:  # the order-based distances leave the null out
        place = {v: i for i, v in enumerate(v for v in sa.values if v is not None)}
        positions.append(np.array([place.get(v, -1) for v in sa.values], dtype=np.int64))
    for position in positions:
        fast = Distributions.from_sensitive(sa, position)
        slow = _copying_from_sensitive(sa, position)
        for name in ("class_ids", "codes", "counts"):
            _same(getattr(fast, name), getattr(slow, name))
        assert (fast.n_classes, fast.m) == (slow.n_classes, slow.m)
        d = slow
        reference = 0.5 * (
            d.per_class_sum(np.abs(d.p() - d.q[d.codes])) + 1.0 - d.per_class_sum(d.q[d.codes])
        )
        reference = np.where(d.sizes > 0, np.clip(reference, 0.0, 1.0), 0.0)
        _same(equal_distance(fast), reference)


def test_one_entry_a_class_sums_as_bincount_does() -> None:
    """A QI unique per row: each class's sum is its entry, the bits ``bincount`` gives
    (a negative zero made positive, NaN and infinity kept), and the EMD is the one
    computed through ``bincount``."""
    import dataclasses

    rows = 400
    frame = pd.DataFrame(
        {"id": [f"p{i:04d}" for i in range(rows)], "s": [f"v{i % 6}" for i in range(rows)]}
    ).assign(count=[1 + i % 3 for i in range(rows)])
    table = ClassTable.from_frame(frame, quasi_identifiers=["id"], sensitive=["s"])
    d = Distributions.from_sensitive(table.sensitive_counts("s"), np.arange(6))
    assert d.one_each
    plain = dataclasses.replace(d, one_each=False)
    weights = np.linspace(-1.0, 1.0, rows)
    weights[:4] = [-0.0, np.nan, np.inf, -np.inf]
    _same(d.per_class_sum(weights), plain.per_class_sum(weights))
    _same(d.per_class_sum(d.counts), plain.per_class_sum(d.counts))
    _same(d.sizes, plain.sizes)
    _same(equal_distance(d), equal_distance(plain))
    several = ClassTable.from_frame(
        pd.DataFrame({"q": ["a", "a", "b"], "s": ["x", "y", "x"], "count": 1}),
        quasi_identifiers=["q"],
        sensitive=["s"],
    )
    assert not Distributions.from_sensitive(several.sensitive_counts("s"), np.arange(2)).one_each


# --------------------------------------------------------------------------- class-local measures


def _measures(table: ClassTable) -> list[tuple[bool, NDArray]]:
    """Every per-class array (``True``) and summary (``False``) of the checks that keep
    class-local measures."""
    out: list[tuple[bool, NDArray]] = []
    for sa in table.sensitive:
        ld = l_diversity(table, sa, l=2, entropy_l=1.5, c=2.0, recursive_l=3)
        ld2 = l_diversity(table, sa, l=2, c=3.0)  # recursive l = 2: another cached c
        dis = attribute_disclosure(table, sa, alpha=0.6, beta=0.5, delta=1.0)
        tc = t_closeness(table, sa, t=0.2)
        for result in (ld, ld2, dis):
            out.extend((True, np.asarray(v)) for v in result.failing.measures.values())
            out.append((True, result.failing.mask))
        out.append((True, tc.per_class))
        summary = [ld.distinct, ld.entropy, ld.recursive_c, ld2.recursive_c, dis.alpha]
        out.append((False, np.array([*summary, dis.beta, dis.delta, tc.t])))
    return out


@SETTINGS
@given(_records(), st.data())
def test_subsets_take_the_class_local_measures(drawn, data) -> None:
    """Re-auditing a table without some classes gives the measures of a class table of
    the kept records, whether the table it was cut from knew its per-class arrays."""
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    n_classes = len(table.classes)
    drop = np.array(data.draw(st.lists(st.booleans(), min_size=n_classes, max_size=n_classes)))
    if drop.all():
        drop[0] = False
    untouched = _fresh(table)
    untouched.classes  # noqa: B018
    untouched.sensitive_counts("s")
    _measures(table)  # the table now knows its class-local arrays
    assert table.sensitive_counts("s").__dict__.get(classtable._CLASS_LOCAL)

    known = table.without_classes(drop)
    assert known.sensitive_counts("s").__dict__.get(classtable._CLASS_LOCAL)
    plain = untouched.without_classes(drop)
    # Cutting the classes' entries needs their numbers of values alone.
    assert set(plain.sensitive_counts("s").__dict__.get(classtable._CLASS_LOCAL, {})) == {
        "distinct"
    }
    kept = known.keys.to_pandas().assign(count=known.counts)
    rebuilt = ClassTable.from_frame(kept, quasi_identifiers=["q1", "q2"], sensitive=["s"])
    # The rebuilt table may number its classes otherwise: compare class by class.
    position = {
        key: i for i, key in enumerate(zip(*rebuilt.classes.keys.to_pydict().values(), strict=True))
    }
    order = np.array(
        [position[key] for key in zip(*known.classes.keys.to_pydict().values(), strict=True)]
    )
    measured = zip(_measures(known), _measures(plain), _measures(rebuilt), strict=True)
    for (per_class, a), (_, b), (_, c) in measured:
        _same(a, b)
        _same(a, c[order] if per_class else c)


@SETTINGS
@given(_records(), st.lists(st.integers(1, 4), min_size=1, max_size=6))
def test_class_local_measures_are_the_plain_functions(drawn, ls) -> None:
    """Whatever the order of the checks, each per-class array is what the plain function
    computes: one cached array per recursive l."""
    records, counts = drawn
    table = class_table(records, ["q1", "q2"], ["s"], counts=counts)
    sa = table.sensitive_counts("s")
    for l in ls:
        result = l_diversity(table, "s", l=1, entropy_l=1.0, c=1.0, recursive_l=l)
        _same(result.failing.measures["recursive_c"], recursive_c(sa, l))
        _same(result.failing.measures["distinct"], sa.distinct_per_class())
        _same(result.failing.measures["entropy_l"], np.exp(class_entropy(sa)))
        shown = attribute_disclosure(table, "s", alpha=1.0).failing.measures
        _same(shown["alpha"], sa.per_class_max(sa.posterior()))


def test_class_local_arrays_are_shared_read_only() -> None:
    table = class_table(
        [("a", "x", "flu"), ("a", "x", "hiv"), ("b", "y", "flu"), ("b", "y", "flu")],
        ["q1", "q2"],
        ["s"],
    )
    counts = table.sensitive_counts("s")
    first = l_diversity(table, "s", l=2)
    again = l_diversity(table, "s", l=2)
    assert first.failing.measures["distinct"] is again.failing.measures["distinct"]
    with pytest.raises(ValueError):
        first.failing.measures["distinct"][0] = 5
    # The public functions still give arrays of their own, to write at will.
    for fresh in (counts.distinct_per_class(), class_entropy(counts), recursive_c(counts, 2)):
        fresh[0] = 0
    _same(l_diversity(table, "s", l=2).failing.measures["distinct"], np.array([2, 1]))


def test_class_local_keeps_what_compute_returns_writeable() -> None:
    table = class_table([("a", "x", "flu"), ("b", "y", "hiv")], ["q1", "q2"], ["s"])
    counts = table.sensitive_counts("s")
    mine = np.array([1.0, 2.0])
    shared = counts.class_local("mine", lambda: mine)
    assert not shared.flags.writeable
    assert mine.flags.writeable


def test_rows_in_class_order_lend_their_arrays_to_the_distributions() -> None:
    """A QI unique per row (and any table whose rows come in order of class and value):
    the classes' index is the QI's codes and the SA distribution's class ids and codes
    are the index and the SA's codes, one array each, read-only; the distribution is the
    one computed from scratch."""
    rows = 1_000
    frame = pd.DataFrame(
        {
            "id": [f"p{i:05d}" for i in range(rows)],
            "s": [f"v{i % 7}" for i in range(rows)],
            "count": 1,
        }
    ).sort_values(["id", "s"])
    table = ClassTable.from_frame(frame, quasi_identifiers=["id"], sensitive=["s"])
    classes = table.classes
    counts = table.sensitive_counts("s")
    _, group_codes = table._encodings["group", "id"]
    _, sa_codes = table._encodings["sorted", "s"]
    assert np.shares_memory(classes.index, group_codes)
    assert np.shares_memory(counts.class_ids, classes.index)
    assert np.shares_memory(counts.codes, sa_codes)
    for shared in (classes.index, counts.class_ids, counts.codes):
        with pytest.raises(ValueError):
            shared[0] = 1
    # Rows out of that order (a class's values unsorted): entries of their own.
    mixed = pd.DataFrame({"q": ["a", "a", "b"], "s": ["y", "x", "x"], "count": [1, 2, 3]})
    other = ClassTable.from_frame(mixed, quasi_identifiers=["q"], sensitive=["s"])
    entries = other.sensitive_counts("s")
    assert not np.shares_memory(entries.class_ids, other.classes.index)
    assert (entries.class_ids.tolist(), entries.codes.tolist()) == ([0, 0, 1], [0, 1, 0])
    assert entries.counts.tolist() == [2, 1, 3]


def test_per_class_arrays_of_one_value_are_kept_as_that_value() -> None:
    """A QI unique per row: every class's distinct values, entropy, recursive c and
    alpha are the same, and the cache keeps each as its one value (no memory a class);
    the checks read what the plain functions compute, and a subset keeps them so."""
    rows = 500
    frame = pd.DataFrame(
        {"id": [f"p{i:04d}" for i in range(rows)], "s": [f"v{i % 5}" for i in range(rows)]}
    ).assign(count=1)
    table = ClassTable.from_frame(frame, quasi_identifiers=["id"], sensitive=["s"])
    counts = table.sensitive_counts("s")
    diverse = l_diversity(table, "s", l=2, entropy_l=1.2, c=2.0)
    shown = attribute_disclosure(table, "s", alpha=0.5)
    assert (diverse.distinct, diverse.entropy, diverse.recursive_c, shown.alpha) == (
        1,
        1.0,
        math.inf,
        1.0,
    )
    for key in ("distinct", "entropy", ("recursive_c", 2), "alpha"):
        kept = counts.class_local(key, lambda: pytest.fail("computed again"))
        assert kept.strides == (0,) and len(kept) == rows
    _same(diverse.failing.measures["distinct"], counts.distinct_per_class())
    _same(diverse.failing.measures["recursive_c"], recursive_c(counts, 2))
    _same(shown.failing.measures["alpha"], counts.per_class_max(counts.posterior()))
    rest = table.without_classes(np.arange(rows) % 3 == 0)
    taken = rest.sensitive_counts("s").class_local("distinct", lambda: pytest.fail("again"))
    assert taken.strides == (0,) and len(taken) == rest.classes.sizes.size
    # Classes of different sizes: every value kept.
    mixed = ClassTable.from_frame(
        pd.DataFrame({"q": ["a", "a", "b"], "s": ["x", "y", "x"], "count": [1, 1, 1]}),
        quasi_identifiers=["q"],
        sensitive=["s"],
    )
    l_diversity(mixed, "s", l=2)
    kept = mixed.sensitive_counts("s").class_local("distinct", lambda: pytest.fail("again"))
    assert kept.tolist() == [2, 1] and kept.strides == (8,)
