"""The attacker's arithmetic over published tables, against enumeration.

Issue 26: every interval the audit reports equals the smallest and largest value of the
cell over every non-negative integer table that agrees with what was published (found by
enumerating them all on small tables), and every certificate, recomputed from the
published cells, proves the bound it claims.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonaudit.errors import InputError
from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.tables import system as system_module
from anonaudit.tables.attack import Certificate, attack, describe
from anonaudit.tables.system import Reduced, build, reduce

TOTAL = "Total"


def cube_table(
    name: str,
    cube: np.ndarray,
    dims: Sequence[str],
    keep: Sequence[int],
    hidden: set[tuple[str, ...]],
) -> PublishedTable:
    """The table of ``cube`` over the axes ``keep`` with every margin; the cells whose
    codes are in ``hidden`` are suppressed (``x``)."""
    names = [dims[k] for k in keep]
    other = tuple(k for k in range(cube.ndim) if k not in keep)
    grid = cube.sum(axis=other) if other else cube
    codes: list[list[str]] = [[] for _ in keep]
    lower, upper, state, shown = [], [], [], []
    choices = [[*range(cube.shape[k]), None] for k in keep]
    for combo in itertools.product(*choices):
        index = tuple(slice(None) if c is None else c for c in combo)
        value = float(np.sum(grid[index]))
        label = tuple(TOTAL if c is None else f"{names[i]}{c}" for i, c in enumerate(combo))
        for i, code in enumerate(label):
            codes[i].append(code)
        if label in hidden:
            lower.append(0.0), upper.append(math.inf), state.append("suppressed")
            shown.append("x")
        else:
            lower.append(value), upper.append(value), state.append("published")
            shown.append(f"{value:g}")
    return PublishedTable(
        name,
        "count",
        tuple(names),
        tuple(np.asarray(c) for c in codes),
        np.asarray(lower),
        np.asarray(upper),
        np.asarray(state),
        np.asarray(shown),
    )


def dimensions(shape: Sequence[int], dims: Sequence[str]) -> dict[str, Dimension]:
    return {
        d: Dimension.flat(d, [f"{d}{i}" for i in range(n)])
        for d, n in zip(dims, shape, strict=True)
    }


def compositions(total: int, cells: int) -> Iterator[tuple[int, ...]]:
    """Every way of putting ``total`` units into ``cells`` cells."""
    for bars in itertools.combinations(range(total + cells - 1), cells - 1):
        edges = (-1, *bars, total + cells - 1)
        yield tuple(b - a - 1 for a, b in itertools.pairwise(edges))


def enumerate_intervals(reduced: Reduced, total: int) -> dict[int, tuple[float, float]]:
    """By brute force: the range of every unpublished row over every consistent cube."""
    system = reduced.system
    a = system.matrix.toarray()
    cubes = np.asarray(list(compositions(total, a.shape[1])), dtype=float)
    sums = cubes @ a.T
    ok = np.all((sums >= system.lower - 1e-9) & (sums <= system.upper + 1e-9), axis=1)
    consistent = sums[ok]
    rows = np.flatnonzero(~system.exact)
    return {int(r): (consistent[:, r].min(), consistent[:, r].max()) for r in rows}


def check_certificate(reduced: Reduced, proof: Certificate, lower: float, upper: float) -> None:
    """Recompute the certificate from the published cells as shown, and check that the
    combination leaves no cell with a coefficient that could break the inequality."""
    system = reduced.system
    value = 0.0
    for row, coefficient, used in proof.terms:
        if system.exact[row]:  # a published cell: its value as printed
            assert used == float(system.shown(row))
        else:  # an interval: the end that keeps the inequality
            towards = coefficient if proof.sense == "lower" else -coefficient
            assert used == (system.lower[row] if towards > 0 else system.upper[row])
        value += coefficient * used
    assert value == pytest.approx(proof.bound, abs=1e-6)
    assert proof.rounded == (lower if proof.sense == "lower" else upper)


@pytest.fixture(scope="module")
def worked() -> Reduced:
    """A 3 x 3 table with margins; four interior cells suppressed in a square."""
    cube = np.array([[5, 1, 3], [2, 4, 6], [7, 0, 2]])
    hidden = {("r0", "c0"), ("r0", "c1"), ("r1", "c0"), ("r1", "c1")}
    dims = dimensions(cube.shape, ("r", "c"))
    table = cube_table("t", cube, ("r", "c"), (0, 1), hidden)
    return reduce(build(TableSet((table,), dims)))


def test_a_square_of_suppressed_cells_has_the_intervals_worked_by_hand(worked: Reduced) -> None:
    """Rows: x00 + x01 = 9 - 3 = 6, x10 + x11 = 12 - 6 = 6; columns: x00 + x10 = 14 - 7
    = 7, x01 + x11 = 5 - 0 = 5. So x00 = 7 - x10 >= 1 (x10 <= 6) and x00 <= 6; x01 in
    [0, 5]; x10 in [1, 6]; x11 in [0, 5]."""
    found = {worked.system.label(i.row): (i.lower, i.upper) for i in attack(worked)}
    assert found == {
        "t: r=r0, c=c0": (1, 6),
        "t: r=r0, c=c1": (0, 5),
        "t: r=r1, c=c0": (1, 6),
        "t: r=r1, c=c1": (0, 5),
    }


def test_every_bound_has_a_certificate_in_published_cells(worked: Reduced) -> None:
    intervals = attack(worked, prove=lambda row, lower, upper: True)
    for interval in intervals:
        assert {p.sense for p in interval.proofs} == {"lower", "upper"}
        for proof in interval.proofs:
            check_certificate(worked, proof, interval.lower, interval.upper)
    first = intervals[0].proofs[1]
    text = describe(worked, first, show_values=True)
    expected = "<= [t: r=r0, c=Total] (9) - [t: r=r0, c=c2] (3) = 6, every other cell being >= 0"
    assert text == expected + ", and counts are whole numbers"
    assert "(9)" not in describe(worked, first, show_values=False)


def test_one_suppressed_cell_in_a_row_is_given_back_by_subtraction() -> None:
    cube = np.array([[5, 1], [2, 4]])
    dims = dimensions(cube.shape, ("r", "c"))
    table = cube_table("t", cube, ("r", "c"), (0, 1), {("r0", "c1")})
    reduced = reduce(build(TableSet((table,), dims)))
    (interval,) = attack(reduced)
    assert (interval.lower, interval.upper, interval.method) == (1, 1, "arithmetic")
    proof, _ = interval.proofs
    check_certificate(reduced, proof, 1, 1)
    assert "[t: r=r0, c=Total] (6) - [t: r=r0, c=c0] (5) = 1" in describe(
        reduced, proof, show_values=True
    )


def test_linked_tables_disclose_jointly_what_each_protects_alone() -> None:
    """Two tables of one population, a x b and a x c. In each, two cells of a row and
    two of a column are suppressed, which alone leaves intervals of width 2. The same
    people cut two ways pin them: the audit of the two together finds what a per-table
    check misses."""
    cube = np.zeros((2, 2, 2))
    cube[0, 0, 0] = 1
    cube[1, 1, 1] = 1
    cube[0, 1, 1] = 1
    dims = dimensions(cube.shape, ("a", "b", "c"))
    hide = {("a0", "b0"), ("a0", "b1"), ("a1", "b0"), ("a1", "b1")}
    ab = cube_table("ab", cube, ("a", "b", "c"), (0, 1), hide)
    hide_ac = {("a0", "c0"), ("a0", "c1"), ("a1", "c0"), ("a1", "c1")}
    ac = cube_table("ac", cube, ("a", "b", "c"), (0, 2), hide_ac)
    alone = attack(reduce(build(TableSet((ab,), dims))))
    assert all(i.width > 0 for i in alone)
    together = reduce(build(TableSet((ab, ac), dims)))
    joint = attack(together)
    expected = enumerate_intervals(together, 3)
    assert {i.row: (i.lower, i.upper) for i in joint} == expected


def test_contradicting_tables_are_refused() -> None:
    cube = np.array([[5, 1], [2, 4]])
    dims = dimensions(cube.shape, ("r", "c"))
    table = cube_table("t", cube, ("r", "c"), (0, 1), set())
    lower = table.lower.copy()
    lower[0] = 4  # (r0, c0) published as 4 where the margins need 5
    bad = PublishedTable(
        "t", "count", table.dimensions, table.codes, lower, lower.copy(), table.state, table.shown
    )
    with pytest.raises(InputError, match="do not add up"):
        reduce(build(TableSet((bad,), dims)))


@st.composite
def published(draw: st.DrawFn) -> tuple[Reduced, int]:
    """A small population published as one table or as linked tables, cells hidden."""
    linked = draw(st.booleans())
    shape = (2, 2, 2) if linked else (draw(st.integers(2, 3)), draw(st.integers(2, 3)))
    total = draw(st.integers(1, 6 if linked else 7))
    flat = np.zeros(int(np.prod(shape)), dtype=int)
    for _ in range(total):
        flat[draw(st.integers(0, len(flat) - 1))] += 1
    cube = flat.reshape(shape)
    names = ("a", "b", "c")[: len(shape)]
    dims = dimensions(shape, names)
    keeps: Sequence[tuple[int, ...]] = [(0, 1), (0, 2), (1, 2)] if linked else [(0, 1)]
    tables = []
    for n, keep in enumerate(keeps):
        codes = [[*(f"{names[k]}{i}" for i in range(shape[k])), TOTAL] for k in keep]
        every = list(itertools.product(*codes))
        if n == 0:  # the population's size is published: enumeration is then finite
            every.remove((TOTAL,) * len(keep))
        hidden = set(draw(st.lists(st.sampled_from(every), max_size=len(every) - 1)))
        tables.append(cube_table(f"t{n}", cube, names, keep, hidden))
    return reduce(build(TableSet(tuple(tables), dims))), total


@settings(max_examples=60, deadline=None)
@given(published())
def test_intervals_equal_enumeration(case: tuple[Reduced, int]) -> None:
    reduced, total = case
    truth = enumerate_intervals(reduced, total)
    intervals = attack(reduced, prove=lambda row, lower, upper: True)
    assert {i.row: (i.lower, i.upper) for i in intervals} == truth
    for interval in intervals:
        for proof in interval.proofs:
            check_certificate(reduced, proof, interval.lower, interval.upper)


def grouped_table(cube: np.ndarray, hidden: set[tuple[str, str]]) -> TableSet:
    """Two rows by four columns in two groups of two (``g0``: c0, c1; ``g1``: c2, c3)
    with every margin, the cells of ``hidden`` suppressed."""
    r = Dimension.flat("r", ["r0", "r1"])
    c = Dimension(
        "c", {"g0": TOTAL, "c0": "g0", "c1": "g0", "g1": TOTAL, "c2": "g1", "c3": "g1"}, TOTAL
    )
    cells = list(itertools.product(r.codes, c.codes))
    values = [float(cube[np.ix_(r.leaves_under(x), c.leaves_under(y))].sum()) for x, y in cells]
    mask = np.asarray([cell in hidden for cell in cells])
    table = PublishedTable(
        "t",
        "count",
        ("r", "c"),
        (np.asarray([x for x, _ in cells]), np.asarray([y for _, y in cells])),
        np.where(mask, 0.0, values),
        np.where(mask, math.inf, values),
        np.where(mask, "suppressed", "published"),
        np.where(mask, "x", [f"{v:g}" for v in values]),
    )
    return TableSet((table,), {"r": r, "c": c})


def grouped() -> tuple[Reduced, int]:
    """:func:`grouped_table` with the cells of each group suppressed in a rectangle and
    both row totals suppressed: the groups' subtotals are published, so the grand total
    is implied and the groups are two components, each row total a part in each."""
    cube = np.array([[1, 2, 1, 0], [2, 1, 0, 1]])
    hidden = {(f"r{i}", f"c{j}") for i in range(2) for j in range(4)}
    hidden |= {("r0", TOTAL), ("r1", TOTAL)}
    return reduce(build(grouped_table(cube, hidden))), int(cube.sum())


def test_the_groups_of_a_hierarchy_are_solved_apart_and_a_total_across_them_whole() -> None:
    reduced, total = grouped()
    system = reduced.system
    assert len(set(reduced.component.tolist())) == 2
    grand = [row for row in range(len(system.lower)) if system.label(row) == "t: r=Total, c=Total"]
    assert not reduced.kept[grand].any()
    intervals = attack(reduced, prove=lambda row, lower, upper: True, workers=1)
    assert {i.row: (i.lower, i.upper) for i in intervals} == enumerate_intervals(reduced, total)
    for interval in intervals:
        for proof in interval.proofs:
            check_certificate(reduced, proof, interval.lower, interval.upper)


@settings(max_examples=40, deadline=None)
@given(published(), st.data())
def test_the_intervals_of_some_rows_are_theirs_in_the_whole_attack(
    case: tuple[Reduced, int], data: st.DataObject
) -> None:
    reduced, _ = case
    whole = {i.row: i for i in attack(reduced)}
    asked = np.asarray(
        data.draw(st.lists(st.booleans(), min_size=len(reduced.kept), max_size=len(reduced.kept)))
    )
    some = attack(reduced, rows=asked)
    assert [i.row for i in some] == [r for r in sorted(whole) if asked[r]]
    assert all(i == whole[i.row] for i in some)


def test_the_rows_of_one_component_keep_their_intervals() -> None:
    reduced, _ = grouped()
    whole = {i.row: i for i in attack(reduced, workers=1)}
    first = reduced.component == 0
    alone = np.diff(reduced.free_matrix[:, first].tocsr().indptr) > 0
    only = np.diff(reduced.free_matrix[:, ~first].tocsr().indptr) == 0
    mine = attack(reduced, rows=alone & only, workers=1)
    assert mine and all(i == whole[i.row] for i in mine)


def test_components_in_processes_give_the_same_intervals_and_certificates() -> None:
    """The pool of processes (two components, two processes) against this process:
    the same bytes (``repr`` writes every float exactly; pickles differ only by which
    equal floats are one object)."""
    reduced, _ = grouped()
    serial = attack(reduced, prove=lambda row, lower, upper: True, workers=1)
    parallel = attack(reduced, prove=lambda row, lower, upper: True, workers=2)
    assert any(i.proofs for i in serial)
    assert repr(parallel) == repr(serial)


def test_a_common_table_too_large_to_hold_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    cube = np.array([[5, 1], [2, 4]])
    dims = dimensions(cube.shape, ("r", "c"))
    tables = TableSet((cube_table("t", cube, ("r", "c"), (0, 1), set()),), dims)
    monkeypatch.setattr(system_module, "MAX_ENTRIES", 8)
    with pytest.raises(InputError, match="too large to audit at once"):
        build(tables)


def test_a_cell_no_published_cell_bounds_above_is_unbounded() -> None:
    """Row r0 is published with its total, r1 has no total and column c0 none: the
    cell (r1, c0) could be any count (its linear program is unbounded), not 0."""
    dims = dimensions((2, 2), ("r", "c"))
    hidden = np.array([True, True, True, False, False])
    values = np.array([0.0, 0.0, 0.0, 2.0, 5.0])
    table = PublishedTable(
        "t",
        "count",
        ("r", "c"),
        (np.array(["r0", "r0", "r1", "r1", "r0"]), np.array(["c0", "c1", "c0", "c1", TOTAL])),
        values,
        np.where(hidden, math.inf, values),
        np.where(hidden, "suppressed", "published"),
        np.where(hidden, "x", values.astype(int).astype(str)),
    )
    found = attack(reduce(build(TableSet((table,), dims))))
    assert [(i.lower, i.upper) for i in found] == [(0, 5), (0, 5), (0, math.inf)]
