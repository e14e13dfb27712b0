"""The audit of published tables, finding by finding, on the patterns users report.

Issue 26. sdcTools/UserSupport#307: two suppressed cells whose published sum is below
the threshold; #160: dominance over a group of suppressed cells whose sum is published;
#136: linked tables that are safe one at a time and unsafe together; and a sensitive cell
published as it is. Reports are deterministic and redacted by default.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tables_attack import compositions, cube_table, dimensions, grouped_table

from anonaudit.published import PublishedTable, TableSet
from anonaudit.report.tables import (
    SUMMARY_PROOF_CHARACTERS,
    tables_json,
    tables_summary,
    tables_to_dict,
)
from anonaudit.tables.audit import _rest_intervals, audit_tables
from anonaudit.tables.rules import Rules


def _one(cube: np.ndarray, hidden: set[tuple[str, ...]], name: str = "t") -> TableSet:
    dims = dimensions(cube.shape, ("r", "c"))
    return TableSet((cube_table(name, cube, ("r", "c"), (0, 1), hidden),), dims)


def test_a_lone_suppressed_cell_is_given_back_with_its_proof() -> None:
    cube = np.array([[25, 4, 30], [20, 33, 40]])
    audit = audit_tables(_one(cube, {("r0", "c1")}))
    assert not audit.passed
    (exact,) = [f for f in audit.findings if f.kind == "exact"]
    assert exact.cells == ("r=r0, c=c1",)
    assert exact.proofs_values == (
        "[t: r=r0, c=c1] = [t: r=r0, c=Total] (59) - [t: r=r0, c=c0] (25) - [t: r=r0, c=c2] "
        "(30) = 4, every other cell being >= 0, and counts are whole numbers",
    )
    assert "4" not in exact.text and "(59)" not in exact.proofs[0]


def test_two_suppressed_cells_summing_below_the_threshold_are_a_group_finding() -> None:
    """UserSupport#307: in a row of total 20 the published 15 leaves 5 to two suppressed
    cells (2 and 3): neither is given back (each lies in [0, 5]), but together they are
    a cell of 5, below the threshold of 10."""
    cube = np.array([[15, 2, 3], [30, 40, 50]])
    hidden = {("r0", "c1"), ("r0", "c2"), ("r1", "c1"), ("r1", "c2")}
    audit = audit_tables(_one(cube, hidden))
    assert audit.count("exact") == 0
    groups = [f for f in audit.findings if f.kind == "group"]
    assert [g.cells for g in groups] == [("r=r0, c=c1", "r=r0, c=c2")]
    assert groups[0].rule == "threshold"
    assert "sum to 5 ([t: r=r0, c=Total] 20 less its published cells)" in groups[0].text_values


def test_dominance_over_a_group_of_suppressed_cells() -> None:
    """UserSupport#160: two suppressed magnitude cells, each with enough contributors,
    whose published sum (a margin less its published cells, 980) one enterprise
    dominates: 900 / 980 = 92% > 80% under (1, 80)."""
    dims = dimensions((1, 3), ("r", "c"))
    contributions = [
        np.array([50.0, 40.0, 30.0, 20.0]),  # c0: 140, published
        np.array([900.0, 5.0, 4.0]),  # c1: suppressed
        np.array([60.0, 6.0, 5.0]),  # c2: suppressed
        np.array([50.0, 40.0, 30.0, 20.0, 900.0, 5.0, 4.0, 60.0, 6.0, 5.0]),  # r0 Total
        np.array([50.0, 40.0, 30.0, 20.0]),  # Total, c0
        np.array([900.0, 5.0, 4.0]),
        np.array([60.0, 6.0, 5.0]),
        np.array([50.0, 40.0, 30.0, 20.0, 900.0, 5.0, 4.0, 60.0, 6.0, 5.0]),
    ]
    sums = np.array([c.sum() for c in contributions])
    hidden = np.array([False, True, True, False, False, True, True, False])
    table = PublishedTable(
        "turnover",
        "sum",
        ("r", "c"),
        (
            np.array(["r0"] * 4 + ["Total"] * 4),
            np.array(["c0", "c1", "c2", "Total"] * 2),
        ),
        np.where(hidden, 0.0, sums),
        np.where(hidden, np.inf, sums),
        np.where(hidden, "suppressed", "published"),
        np.where(hidden, "x", sums.astype(int).astype(str)),
        contributions=tuple(contributions),
    )
    audit = audit_tables(TableSet((table,), dims), Rules(dominance_n=1, dominance_k=80))
    groups = {f.cells: f.rule for f in audit.findings if f.kind == "group"}
    assert groups[("r=r0, c=c1", "r=r0, c=c2")] == "dominance"


def test_linked_tables_unsafe_together_are_found_jointly() -> None:
    """UserSupport#136: a x b and b x c of the same people. The first hides a0's cells
    and the b margins; the second hides b0's cells and the c margins. Each alone gives
    nothing back; together, b1's margin in the second pins a0's cells in the first."""
    cube = np.array([[[1, 1], [3, 5]], [[1, 3], [3, 5]]])
    dims = dimensions(cube.shape, ("a", "b", "c"))
    hide_ab = {("a0", "b0"), ("a0", "b1"), ("Total", "b0"), ("Total", "b1")}
    hide_bc = {("b0", "c0"), ("b0", "c1"), ("Total", "c0"), ("Total", "c1")}
    ab = cube_table("ab", cube, ("a", "b", "c"), (0, 1), hide_ab)
    bc = cube_table("bc", cube, ("a", "b", "c"), (1, 2), hide_bc)
    rules = Rules(threshold=0, coalition=0, zeros="ignore")
    alone = [audit_tables(TableSet((t,), dims), rules).count("exact") for t in (ab, bc)]
    joint = audit_tables(TableSet((ab, bc), dims), rules)
    assert alone == [0, 0]
    exact = [f for f in joint.findings if f.kind == "exact"]
    assert len(exact) == 4
    assert any("[bc: " in proof for f in exact if f.table == "ab" for proof in f.proofs)


def test_a_small_cell_published_as_it_is_fails() -> None:
    cube = np.array([[25, 4, 30], [20, 33, 40]])
    audit = audit_tables(_one(cube, set()))
    published = [f for f in audit.findings if f.kind == "published"]
    assert [f.cells for f in published] == [("r=r0, c=c1",)]
    assert published[0].rule == "threshold"


def test_a_narrow_interval_falls_short_of_the_protection_level() -> None:
    """Rows: x01 + x03 = 12, x11 + x13 = 12; columns: x01 + x11 = 7, x03 + x13 = 17.
    So x01, x11 lie in [0, 7] and x03, x13 in [5, 12]. With the true values given and a
    safety range of 50%, 8 needs its interval to reach 4 below (it stops at 5) and 9 to
    reach 4.5 below and 13.5 above: both too narrow; 4 and 3 are protected."""
    cube = np.array([[25, 4, 30, 8], [20, 3, 40, 9]])
    hidden = {("r0", "c1"), ("r0", "c3"), ("r1", "c1"), ("r1", "c3")}
    tables = _one(cube, hidden)
    table = tables.tables[0]
    full = np.where(table.suppressed, 0.0, table.lower)
    full[table.suppressed] = [4, 8, 3, 9]
    audit = audit_tables(tables, Rules(safety_range=50), values={"t": full})
    intervals = {i.cell: (i.lower, i.upper) for i in audit.intervals}
    assert intervals["r=r0, c=c1"] == (0, 7) and intervals["r=r1, c=c3"] == (5, 12)
    narrow = {f.cells[0]: f for f in audit.findings if f.kind == "narrow"}
    assert set(narrow) == {"r=r0, c=c3", "r=r1, c=c3"}
    assert "narrow it below its value" in narrow["r=r0, c=c3"].text
    assert "narrow it above and below" in narrow["r=r1, c=c3"].text
    assert all(f.proofs for f in narrow.values())


def test_reports_are_deterministic_and_redacted_by_default() -> None:
    cube = np.array([[15, 2, 3, 7], [30, 40, 50, 6]])
    hidden = {("r0", "c1"), ("r0", "c2"), ("r1", "c3")}
    first = tables_json(audit_tables(_one(cube, hidden)))
    second = tables_json(audit_tables(_one(cube, hidden)))
    assert first == second
    document = json.loads(first)
    assert document["redacted"] and "intervals" not in document
    shown = tables_to_dict(audit_tables(_one(cube, hidden)), show_values=True)
    assert shown["intervals"] and not shown["redacted"]
    text = tables_summary(document)
    assert text.startswith("anonaudit tables: FAIL")
    assert "(15)" not in text and "values redacted" in text


def test_a_long_certificate_is_shortened_in_the_summary_and_whole_in_the_json() -> None:
    """A row of 120 cells with one suppressed: its proof quotes the 120 others."""
    cube = np.arange(1, 241).reshape(2, 120) * 100
    document = json.loads(tables_json(audit_tables(_one(cube, {("r0", "c7")}))))
    (proof,) = next(f["proofs"] for f in document["findings"] if f["kind"] == "exact")
    assert proof.count("[t: ") == 121 and len(proof) > SUMMARY_PROOF_CHARACTERS
    text = tables_summary(document)
    (shown,) = [line for line in text.splitlines() if "proof:" in line]
    assert len(shown) < SUMMARY_PROOF_CHARACTERS + 60 and "characters)" in shown
    assert shown.endswith(f"({len(proof):,} characters)")
    assert "the JSON report has them whole" in text


def test_a_singleton_subtracting_itself_learns_the_other_suppressed_cells() -> None:
    """Lupp & Langsrud's singleton problem: rows x01 + x02 = 2 and x11 + x12 = 14,
    columns x01 + x11 = 7 and x02 + x12 = 9: each cell lies in an interval (x01 in
    [0, 2]), but the one person of x01 knows x01 = 1 and then every other cell."""
    cube = np.array([[25, 1, 1, 30], [20, 6, 8, 40]])
    hidden = {("r0", "c1"), ("r0", "c2"), ("r1", "c1"), ("r1", "c2")}
    tables = _one(cube, hidden)
    table = tables.tables[0]
    full = np.where(table.suppressed, 0.0, table.lower)
    full[table.suppressed] = [1, 1, 6, 8]
    audit = audit_tables(tables, Rules(), values={"t": full})
    assert audit.count("exact") == 0
    learnt = {f.cells for f in audit.findings if f.kind == "coalition"}
    assert ("r=r0, c=c1", "t: r=r0, c=c2") in learnt
    assert ("r=r0, c=c1", "t: r=r1, c=c2") in learnt
    assert ("r=r0, c=c2", "t: r=r0, c=c1") in learnt
    # without the true values the check cannot be made, and nothing is claimed
    assert audit_tables(tables).count("coalition") == 0


@st.composite
def nested(
    draw: st.DrawFn,
) -> tuple[np.ndarray, np.ndarray, set[tuple[str, ...]], set[tuple[str, ...]]]:
    """A sub-population's 2 x 2 table and its population's (the sub-population and the
    rest), each with margins and some cells suppressed (never the grand total)."""
    child = np.asarray(draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))).reshape(2, 2)
    rest = np.asarray(draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))).reshape(2, 2)
    every = [
        (r, c)
        for r in ("r0", "r1", "Total")
        for c in ("c0", "c1", "Total")
        if (r, c) != ("Total", "Total")
    ]
    hide = st.sets(st.sampled_from(every), max_size=4)
    return child, child + rest, draw(hide), draw(hide)


def _consistent(table: PublishedTable, total: int) -> list[np.ndarray]:
    """Every 2 x 2 non-negative integer cube of ``total`` units that ``table`` publishes."""
    cubes = []
    for cube in itertools.product(range(total + 1), repeat=4):
        if sum(cube) == total:
            grid = np.asarray(cube).reshape(2, 2)
            made = cube_table("x", grid, ("r", "c"), (0, 1), set())
            if np.all(~table.exact | (made.lower == table.lower)):
                cubes.append(grid)
    return cubes


@settings(max_examples=40, deadline=None)
@given(nested())
def test_differencing_claims_hold_in_every_pair_of_tables_the_publication_allows(
    case: tuple[np.ndarray, np.ndarray, set[tuple[str, ...]], set[tuple[str, ...]]],
) -> None:
    """By enumeration of every pair of a sub-population table and a population table,
    cell by cell no smaller, that both publications allow: each cell of the difference
    has the interval the pairs give (no wider, no narrower); every cell the audit says
    is known (a differencing finding of a small cell) has the value it states in every
    pair; and a cell published in both tables whose difference is small is always
    reported (as the cell, or as a group sharing an attribute)."""
    child, parent, hidden_child, hidden_parent = case
    small = replace(cube_table("small", child, ("r", "c"), (0, 1), hidden_child), population="A")
    large = replace(cube_table("large", parent, ("r", "c"), (0, 1), hidden_parent), population="B")
    dims = dimensions((2, 2), ("r", "c"))
    rules = Rules(threshold=3)
    audit = audit_tables(TableSet((small, large), dims), rules, nested={"A": "B"})
    pairs = [
        (c, p)
        for c in _consistent(small, int(child.sum()))
        for p in _consistent(large, int(parent.sum()))
        if np.all(p >= c)
    ]
    assert pairs  # the truth is one
    proved = _rest_intervals(TableSet((small, large), dims), large, small)
    for i in range(len(large)):
        codes = dict(part.split("=") for part in large.label(i).split(", "))
        rows = slice(None) if codes["r"] == "Total" else int(codes["r"][1])
        cols = slice(None) if codes["c"] == "Total" else int(codes["c"][1])
        rest = [float((p - c)[rows, cols].sum()) for c, p in pairs]
        assert proved[i] == (min(rest), max(rest)), large.label(i)
    claims = [f for f in audit.findings if f.kind == "differencing" and f.rule == "threshold"]
    for finding in claims:
        (label,) = finding.cells
        stated = float(re.search(r" = ([0-9.]+): ", finding.text_values).group(1))  # type: ignore[union-attr]
        codes = dict(part.split("=") for part in label.split(", "))
        rows = slice(None) if codes["r"] == "Total" else int(codes["r"][1])
        cols = slice(None) if codes["c"] == "Total" else int(codes["c"][1])
        assert {float((p - c)[rows, cols].sum()) for c, p in pairs} == {stated}, label
    small_differences = [
        large.label(i)
        for i in range(len(large))
        for j in range(len(small))
        if small.label(j) == large.label(i)
        and large.exact[i]
        and small.exact[j]
        and 0 < large.lower[i] - small.lower[j] < rules.threshold
    ]
    if small_differences:
        assert any(f.kind == "differencing" for f in audit.findings), small_differences
        assert not audit.passed


def test_one_suppression_pattern_in_two_nested_tables_differs_to_one_person() -> None:
    """A month and the quarter it starts, published with the same four cells suppressed
    (a rectangle: no cell of either table is known alone). The difference of the two
    tables' published margins is the rest of the quarter's: one person in row r0, one in
    column c1, none in column c2, so that person is the rest's cell (r0, c1), which a
    cell-by-cell difference of the two tables' intervals cannot see."""
    month = np.array([[10, 3, 7], [12, 5, 9]])
    quarter = month + np.array([[0, 1, 0], [0, 0, 0]])
    hidden = {("r0", "c1"), ("r0", "c2"), ("r1", "c1"), ("r1", "c2")}
    dims = dimensions((2, 3), ("r", "c"))
    small = replace(cube_table("month", month, ("r", "c"), (0, 1), hidden), population="m")
    large = replace(cube_table("quarter", quarter, ("r", "c"), (0, 1), hidden), population="q")
    alone = audit_tables(TableSet((small, large), dims), Rules(threshold=3))
    assert alone.count("exact") == 0
    audit = audit_tables(TableSet((small, large), dims), Rules(threshold=3), nested={"m": "q"})
    found = {(f.cells[0], f.rule): f for f in audit.findings if f.kind == "differencing"}
    assert {("r=Total, c=Total", "threshold"), ("r=r0, c=c1", "group")} <= set(found)
    assert "= 1: " in found["r=Total, c=Total", "threshold"].text_values
    assert "everyone in r=r0 has c=c1" in found["r=r0, c=c1", "group"].text_values


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from((0, 1, 1, 2)), min_size=8, max_size=8),
    st.sets(
        st.sampled_from(
            [(x, y) for x in ("r0", "r1", "Total") for y in ("c0", "c1", "c2", "c3", "g0", "g1")]
            + [("r0", "Total"), ("r1", "Total")]
        ),
        max_size=6,
    ),
)
def test_coalitions_equal_enumeration(counts: list[int], hidden: set[tuple[str, str]]) -> None:
    """Every coalition finding, and only those, by enumeration of every table the
    publication allows: the members of a small suppressed cell (1 or 2 units), fixing it
    at its true value, leave one value to another suppressed cell that had several. The
    cells of 1 or 2 are suppressed, as a threshold rule would, and some others; about a
    third of such tables have a coalition finding."""
    cube = np.asarray(counts).reshape(2, 4)
    small = {(f"r{i}", f"c{j}") for i in range(2) for j in range(4) if 0 < cube[i, j] <= 2}
    tables = grouped_table(cube, small | hidden)  # the small cells and others
    table = tables.tables[0]
    truth = {"t": np.asarray(grouped_table(cube, set()).tables[0].lower)}
    audit = audit_tables(tables, Rules(threshold=3), values=truth)
    found = {f.cells for f in audit.findings if f.kind == "coalition"}
    r, c = tables.dimensions["r"], tables.dimensions["c"]
    every = np.asarray(list(compositions(int(cube.sum()), 8))).reshape(-1, 2, 4)
    sums = np.stack(
        [
            every[:, list(r.leaves_under(x))][:, :, list(c.leaves_under(y))].sum(axis=(1, 2))
            for x, y in zip(table.codes[0], table.codes[1], strict=True)
        ],
        axis=1,
    )
    allowed = sums[np.all(~table.exact | (sums == table.lower), axis=1)]
    hidden_cells = np.flatnonzero(~table.exact)
    open_before = [j for j in hidden_cells if allowed[:, j].min() < allowed[:, j].max()]
    expected = set()
    for k in open_before:
        value = truth["t"][k]
        if not 0 < value <= 2:
            continue
        given = allowed[allowed[:, k] == value]
        for j in open_before:
            if j != k and given[:, j].min() == given[:, j].max():
                expected.add((table.label(int(k)), f"t: {table.label(int(j))}"))
    assert found == expected
