"""The primary rules of published tables (issue 26): worked examples and properties.

The worked examples are the SDC handbook's (Hundepool et al., *Statistical Disclosure
Control*, Wiley 2012; sdcTools/HandbookSDC): chapter 4's sensitivity rules and upper
protection levels (Examples 1, 2 and 4), chapter 5's group attribute and within-group
disclosure (the "Marital status by hours worked" table), each computed by hand in a
comment; the properties are the rules' invariants (scale, monotony in p, the (p, q) rule
at q = 100, the handbook's (2, k) to p% correspondence, holdings never making a cell
safer), and the vectorized ranking against a cell-by-cell reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from random import Random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonaudit.errors import InputError, OptionError
from anonaudit.published import Dimension, PublishedTable
from anonaudit.tables.rules import (
    RULES,
    PrimaryResult,
    Rules,
    coalition_rule,
    dominance_rule,
    p_percent_rule,
    primary_rules,
    threshold_rule,
)

TOTAL = "Total"
#: Rules that judge only what the test is about: no threshold, no dominance, no p%.
OFF = Rules(threshold=0, min_contributors=0, dominance_k=100, p=0)


# --------------------------------------------------------------------------- helpers


def magnitude(
    *cells: Sequence[float],
    holdings: Sequence[Sequence[str]] = (),
    state: Sequence[str] = (),
) -> tuple[PublishedTable, dict[str, Dimension]]:
    """A one-dimensional magnitude table, cell ``i`` (code ``s{i}``) holding ``cells[i]``."""
    codes = [f"s{i}" for i in range(len(cells))]
    states = list(state) or ["published"] * len(cells)
    sums = np.array([float(sum(c)) for c in cells])
    hidden = np.array([s == "suppressed" for s in states])
    table = PublishedTable(
        "turnover",
        "sum",
        ("sector",),
        (np.array(codes),),
        np.where(hidden, 0.0, sums),
        np.where(hidden, math.inf, sums),
        np.array(states),
        np.array(["x" if h else f"{v:g}" for h, v in zip(hidden, sums, strict=True)]),
        contributions=tuple(np.asarray(c, dtype=float) for c in cells),
        holdings=tuple(np.asarray(h, dtype=str) for h in holdings),
    )
    return table, {"sector": Dimension.flat("sector", codes)}


def one(
    *contributions: float, rules: Rules | None = None, holdings: Sequence[str] | None = None
) -> PrimaryResult:
    """The rules applied to one magnitude cell (its contributors' holdings optional)."""
    table, dims = magnitude(contributions, holdings=[holdings] if holdings is not None else ())
    return primary_rules(table, dims, rules=rules)


def grid_table(
    grid: Sequence[Sequence[int]],
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    hidden: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[PublishedTable, dict[str, Dimension]]:
    """A count table ``rows x cols`` with its margins (code ``Total``), ``hidden`` cells
    suppressed."""
    cube = np.asarray(grid, dtype=float)
    r_codes, c_codes, values = [], [], []
    for i, r in enumerate([*rows, TOTAL]):
        for j, c in enumerate([*cols, TOTAL]):
            part = cube[i if r != TOTAL else slice(None), j if c != TOTAL else slice(None)]
            r_codes.append(r)
            c_codes.append(c)
            values.append(float(np.sum(part)))
    value = np.array(values)
    off = np.array([(r, c) in hidden for r, c in zip(r_codes, c_codes, strict=True)])
    table = PublishedTable(
        "counts",
        "count",
        ("marital", "hours"),
        (np.array(r_codes), np.array(c_codes)),
        np.where(off, 0.0, value),
        np.where(off, math.inf, value),
        np.where(off, "suppressed", "published"),
        np.array(["x" if o else f"{v:g}" for o, v in zip(off, value, strict=True)]),
    )
    dims = {"marital": Dimension.flat("marital", rows), "hours": Dimension.flat("hours", cols)}
    return table, dims


def cell(table: PublishedTable, **codes: str) -> int:
    """The position of the cell with these codes."""
    match = np.ones(len(table), dtype=bool)
    for name, code in codes.items():
        match &= table.codes[table.dimensions.index(name)] == code
    (found,) = np.flatnonzero(match)
    return int(found)


#: Hundepool et al. 2012, section 5.2, "Marital status by hours worked".
MARITAL = ("Married", "Divorced", "Single")
HOURS = ("Full", "Part")
HANDBOOK = ((6, 0), (5, 1), (2, 2))


# --------------------------------------------------------------------------- options


def test_defaults_are_the_documented_ones() -> None:
    rules = Rules()
    assert (rules.threshold, rules.min_contributors) == (10, 3)
    assert (rules.dominance_n, rules.dominance_k, rules.p, rules.q) == (2, 85.0, 10.0, None)
    assert (rules.coalition, rules.safety_range) == (1, 0.0)
    assert (rules.contributor, rules.zeros) == ("holding", "report")


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"threshold": -1}, r"threshold must be a whole number of at least 0 \(got -1\)"),
        ({"threshold": True}, r"threshold must be a whole number of at least 0 \(got True\)"),
        ({"min_contributors": 2.5}, r"min_contributors must be a whole number"),
        ({"dominance_n": 0}, r"dominance_n must be a whole number of at least 1 \(got 0\)"),
        ({"dominance_k": 0}, r"dominance_k must lie in \(0, 100\] \(got 0\)"),
        ({"p": 101}, r"p must lie in \[0, 100\] \(got 101\)"),
        ({"p": math.nan}, r"p must lie in \[0, 100\] \(got nan\)"),
        ({"q": 0}, r"q must lie in \(0, 100\] \(got 0\)"),
        ({"coalition": -1}, r"coalition must be a whole number of at least 0"),
        ({"safety_range": -5}, r"safety_range must be a percentage of at least 0"),
        ({"contributor": "enterprise"}, r"unknown contributor 'enterprise'; choose one of"),
        ({"zeros": "yes"}, r"unknown zeros 'yes'; choose one of ignore, report, sensitive"),
    ],
)
def test_bad_rules_are_refused_by_name(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        Rules(**keywords)


# --------------------------------------------------------------------------- magnitude tables


def test_p_percent_boundary_passes_and_dominance_flags_it() -> None:
    # Contributions 100, 50, 10: X = 160. p% at p = 10: X - x1 - x2 = 10, and 10 < 10/100
    # * 100 = 10 is false: the cell sits on the boundary and passes (the handbook's rule
    # is a strict inequality; its protection level p/100 x1 - rest = 0).
    # (2, 85)-dominance: (100 + 50) / 160 = 93.75% > 85%: sensitive, and the upper
    # protection is 100/85 * 150 - 160 = 176.4706 - 160 = 16.4706.
    result = one(100, 50, 10)
    assert not result.failed["p_percent"][0]
    assert result.failed["dominance"][0]
    assert result.rule[0] == "dominance"
    assert result.upper_protection[0] == pytest.approx(100 / 85 * 150 - 160)
    assert result.upper_protection[0] == pytest.approx(16.4706, abs=1e-4)


def test_p_percent_worked_example() -> None:
    # 100, 50, 9: X = 159, rest = 9 < 10: sensitive; upper protection 10 - 9 = 1, and the
    # lower protection equals it (the handbook's symmetry).
    result = one(100, 50, 9, rules=Rules(dominance_k=100))
    assert result.rule[0] == "p_percent"
    assert (result.upper_protection[0], result.lower_protection[0]) == (1.0, 1.0)
    # Under (2, 85) too: 150/159 = 94.3% > 85%, dominance is named first and its level
    # 100/85 * 150 - 159 = 17.47 is the larger, so it is the one required.
    both = one(100, 50, 9)
    assert both.rule[0] == "dominance"
    assert both.failed["p_percent"][0]
    assert both.upper_protection[0] == pytest.approx(100 / 85 * 150 - 159)


def test_handbook_example_1_one_k_dominance_misses_what_p_percent_catches() -> None:
    # Section 4.2, Example 1: X = 100,000, x1 = 50,000, x2 = 49,000. (1, 90): 50,000 is
    # not above 90,000, safe; yet x2 estimates x1 within 2%. The p% rule at p = 10:
    # rest = 1,000 < 5,000, sensitive, protection 5,000 - 1,000 = 4,000.
    result = one(50_000, 49_000, 1_000, rules=Rules(dominance_n=1, dominance_k=90))
    assert not result.failed["dominance"][0]
    assert result.rule[0] == "p_percent"
    assert result.upper_protection[0] == pytest.approx(4_000)


def test_handbook_example_2_p_percent_safe_but_two_k_dominance_not() -> None:
    # Section 4.2, Example 2: p = 10, k = 100 * 100 / 110 = 90.9; X = 110,000, x1 =
    # 52,000, x2 = 50,000. p%: rest 8,000 >= 5,200, safe. (2, 90.9): 102,000 > 100,000.
    result = one(52_000, 50_000, 8_000, rules=Rules(dominance_k=100 * 100 / 110))
    assert not result.failed["p_percent"][0]
    assert result.failed["dominance"][0]
    assert result.rule[0] == "dominance"


def test_handbook_example_4_upper_protection_level() -> None:
    # Section 4.2, Example 4: X = 330 of 300, 20, 10 under (1, 85): 300 > 280.5. The
    # upper protection is 100/85 * 300 - 330 = 352.94 - 330 = 22.94.
    result = one(300, 20, 10, rules=Rules(dominance_n=1, p=0))
    assert result.rule[0] == "dominance"
    assert result.upper_protection[0] == pytest.approx(22.94, abs=0.005)


def test_pq_rule_is_stricter_and_its_protection_uses_p_over_q() -> None:
    # 100, 50, 15 with p = 10, q = 50: p% 15 < 10 false; pq 15 < 10/50 * 100 = 20 true,
    # protection 20 - 15 = 5.
    rules = Rules(dominance_k=100, q=50)
    result = one(100, 50, 15, rules=rules)
    assert not result.failed["p_percent"][0]
    assert result.rule[0] == "pq"
    assert result.upper_protection[0] == pytest.approx(5.0)
    assert "within 50%" in result.reason(0)


def test_p_percent_for_a_coalition_subtracts_the_coalitions_contributions() -> None:
    # 100, 50, 30, 9: the second largest alone misses 39 >= 10; a coalition of the two
    # next largest misses 9 < 10 (the handbook's X - x_n - ... - x1 < p/100 x1).
    alone = one(100, 50, 30, 9, rules=Rules(dominance_k=100))
    pooled = one(100, 50, 30, 9, rules=Rules(dominance_k=100, coalition=2, min_contributors=0))
    assert not alone.sensitive[0]
    assert pooled.failed["p_percent"][0]
    assert pooled.rest[0] == 9
    assert "the 2 next largest contributors together" in pooled.reason(0)
    # With no coalition at all, the cell alone: 100 and 5 estimate the 100 within 5%.
    outsider = one(100, 5, rules=Rules(dominance_k=100, coalition=0, min_contributors=0))
    assert outsider.rule[0] == "p_percent"
    assert "a reader of the cell alone can estimate the largest" in outsider.reason(0)
    singleton = one(100, rules=replace(OFF, coalition=0))
    assert singleton.reason(0) == "a single contributor: the cell is its value (singleton rule)"


def test_holdings_merge_contributors_before_ranking() -> None:
    # 40, 40, 10, 5, 5 from holdings A, A, B, C, D. Unit by unit: (2, 85) sees 80% and
    # p% a rest of 20 >= 4: safe. As holdings: A = 80, B = 10: 90% > 85%, sensitive.
    cells = (40, 40, 10, 5, 5)
    owners = ("A", "A", "B", "C", "D")
    units = one(*cells, rules=Rules(contributor="unit"), holdings=owners)
    groups = one(*cells, holdings=owners)
    assert not units.sensitive[0]
    assert (units.contributors[0], groups.contributors[0]) == (5, 4)
    assert groups.rule[0] == "dominance"
    assert groups.dominant[0] == 90


def test_holdings_can_bring_a_cell_under_the_minimum_and_blank_is_no_holding() -> None:
    # 30, 20, 10: three contributors pass the minimum of 3; as holdings A, A, B they are
    # two. A blank holding is the unit itself: "", "", "B" stay three.
    assert one(30, 20, 10, holdings=("A", "A", "B")).rule[0] == "threshold"
    blank = one(30, 20, 10, holdings=("", "", "B"))
    assert blank.contributors[0] == 3
    assert not blank.failed["threshold"][0]


def test_holdings_must_align_with_contributions() -> None:
    table, dims = magnitude((1, 2, 3), holdings=[("A", "B")])
    with pytest.raises(InputError, match="one holding per contribution"):
        primary_rules(table, dims)


def test_singletons_and_coalitions_in_magnitude_cells() -> None:
    # One contributor: the cell is its value. Two: each subtracts itself. Three: a pair
    # pools theirs (coalition = 2).
    assert one(500).rule[0] == "threshold"
    assert one(500, rules=OFF).rule[0] == "coalition"
    assert one(500, 20, rules=OFF).rule[0] == "coalition"
    assert not one(500, 20, 10, rules=OFF).sensitive[0]
    assert one(500, 20, 10, rules=replace(OFF, coalition=2)).rule[0] == "coalition"
    singletons = replace(OFF, coalition=0)
    assert one(500, rules=singletons).sensitive[0]
    assert not one(500, 20, rules=singletons).sensitive[0]


def test_negative_contributions_leave_the_concentration_rules_unapplied() -> None:
    # 100, -50, 10: a p% or dominance reading is meaningless; the threshold still holds.
    result = one(100, -50, 10)
    assert result.negative[0]
    assert not (result.failed["dominance"][0] or result.failed["p_percent"][0])
    assert not result.sensitive[0]
    assert one(100, -50, rules=Rules()).rule[0] == "threshold"


def test_zero_sums_give_every_contribution_away() -> None:
    # sdcTools/UserSupport#194 (and #115): a zero sum of non-negative contributions says
    # each was 0.
    assert one(0, 0, 0).failed["zero"][0]
    assert not one(0, 0, 0).sensitive[0]
    sensitive = one(0, 0, 0, rules=Rules(zeros="sensitive"))
    assert sensitive.rule[0] == "zero"
    assert "each of them contributed 0" in sensitive.reason(0)
    assert not one(0, 0, 0, rules=Rules(zeros="ignore")).failed["zero"][0]


def test_empty_magnitude_cell_is_not_sensitive() -> None:
    result = one(rules=Rules(zeros="sensitive"))
    assert not result.sensitive[0]
    assert result.contributors[0] == 0


def test_lower_protection_never_exceeds_the_value() -> None:
    # (1, 40) on one contribution of 10: upper 100/40 * 10 - 10 = 15; below, a reader
    # knows the cell is at least 0, so 10 is all that can be asked.
    result = one(10, rules=Rules(dominance_n=1, dominance_k=40, p=0, min_contributors=0))
    assert result.upper_protection[0] == pytest.approx(15)
    assert result.lower_protection[0] == pytest.approx(10)


def test_values_must_agree_with_contributions() -> None:
    table, dims = magnitude((1, 2, 3), (4, 5, 6))
    assert primary_rules(table, dims, values=[6, 15]).evaluated.all()
    with pytest.raises(InputError, match=r"cell sector=s1: the true value given and the sum"):
        primary_rules(table, dims, values=[6, 14])


# --------------------------------------------------------------------------- count tables


def test_threshold_on_counts_judges_every_cell_margins_included() -> None:
    table, dims = grid_table(((12, 0), (3, 20)), ("a", "b"), ("x", "y"))
    result = primary_rules(table, dims)
    small = {table.label(i) for i in np.flatnonzero(result.failed["threshold"])}
    # 3 is under 10; 0 is empty, not small; the margins 12, 23, 15, 20, 35 are not.
    assert small == {"marital=b, hours=x"}
    assert result.upper_protection[cell(table, marital="b", hours="x")] == 0


def test_safety_range_is_a_percentage_of_the_value() -> None:
    # A count of 5 under the threshold with a 20% safety range needs 1 above and below.
    table, dims = grid_table(((5, 30),), ("a",), ("x", "y"))
    result = primary_rules(table, dims, rules=Rules(safety_range=20))
    i = cell(table, marital="a", hours="x")
    assert (result.upper_protection[i], result.lower_protection[i]) == (1.0, 1.0)


def test_handbook_group_and_within_group_disclosure() -> None:
    # Hundepool et al. 2012, section 5.2, "Marital status by hours worked":
    #             Full  Part  Total
    #   Married      6     0      6   everyone married works full time (group)
    #   Divorced     5     1      6   the part-timer learns the other 5 work full time
    #   Single       2     2      4
    #   Total       13     3     16   of the 3 part-timers, the divorced one learns the
    #                                 other 2 are single (6 - 5 = 1 and 3 - 2 = 1 <= 1)
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS)
    result = primary_rules(table, dims, rules=Rules(threshold=0))
    found = {
        (f.kind, table.label(f.cell), f.dimension, f.outside) for f in result.group_disclosures
    }
    assert found == {
        ("group", "marital=Married, hours=Full", "hours", 0),
        ("group", "marital=Divorced, hours=Full", "hours", 1),
        ("group", "marital=Single, hours=Part", "marital", 1),
        ("zero", "marital=Married, hours=Part", "marital", 3),
        ("zero", "marital=Married, hours=Part", "hours", 6),
    }
    married = cell(table, marital="Married", hours="Full")
    assert result.rule[married] == "group"
    assert "everyone in marital=Married has hours=Full" in result.reason(married)
    # The divorced part-timer (1) and the singles (2, 2) are also small enough for a
    # coalition of one to single someone out; the margins are safe.
    assert set(result.rule[result.sensitive]) == {"group", "coalition"}
    assert not result.sensitive[cell(table, marital=TOTAL, hours=TOTAL)]


def test_without_coalitions_only_the_whole_group_is_flagged() -> None:
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS)
    result = primary_rules(table, dims, rules=Rules(threshold=0, coalition=0, zeros="ignore"))
    assert [table.label(f.cell) for f in result.group_disclosures] == [
        "marital=Married, hours=Full"
    ]


def test_zero_policies() -> None:
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS)
    zero = cell(table, marital="Married", hours="Part")
    reported = primary_rules(table, dims, rules=Rules(threshold=0))
    assert reported.failed["zero"][zero] and not reported.sensitive[zero]
    assert reported.reason(zero).startswith("not sensitive; reported: nobody in")
    protected = primary_rules(table, dims, rules=Rules(threshold=0, zeros="sensitive"))
    assert protected.rule[zero] == "zero"
    ignored = primary_rules(table, dims, rules=Rules(threshold=0, zeros="ignore"))
    assert not ignored.failed["zero"].any()
    assert all(f.kind == "group" for f in ignored.group_disclosures)


def test_a_zero_in_an_empty_group_discloses_nothing() -> None:
    #        x  y  Total
    #   a    7  0      7
    #   b    0  0      0
    # Row b and column y are empty: a zero in them says nothing of anyone (b's zero in x
    # is a finding only along marital, where column x has 7 members; a's zero in y only
    # along hours). The margins' zeros are findings too: nobody is in b, nobody in y.
    table, dims = grid_table(((7, 0), (0, 0)), ("a", "b"), ("x", "y"))
    result = primary_rules(table, dims, rules=Rules(threshold=0, coalition=0))
    zeros = {
        (table.label(f.cell), f.dimension) for f in result.group_disclosures if f.kind == "zero"
    }
    assert zeros == {
        ("marital=a, hours=y", "hours"),
        ("marital=b, hours=x", "marital"),
        ("marital=b, hours=Total", "marital"),
        ("marital=Total, hours=y", "hours"),
    }


def test_one_dimensional_group_is_the_whole_table() -> None:
    codes = np.array([TOTAL, "a", "b"])
    value = np.array([5.0, 5.0, 0.0])
    table = PublishedTable(
        "t",
        "count",
        ("d",),
        (codes,),
        value,
        value,
        np.array(["published"] * 3),
        np.array(["5", "5", "0"]),
    )
    result = primary_rules(table, {"d": Dimension.flat("d", ["a", "b"])}, rules=Rules(threshold=0))
    (group,) = [f for f in result.group_disclosures if f.kind == "group"]
    assert group.describe() == "everyone in the whole table has d=a"
    assert group.total == 0


def test_a_code_with_one_child_is_not_a_group() -> None:
    # region North has the single child n1: n1 always equals North, by the hierarchy.
    region = Dimension(
        "region",
        {"North": TOTAL, "South": TOTAL, "n1": "North", "s1": "South", "s2": "South"},
        TOTAL,
    )
    codes = np.array([TOTAL, "North", "South", "n1", "s1", "s2"])
    value = np.array([40.0, 12.0, 28.0, 12.0, 14.0, 14.0])
    table = PublishedTable(
        "t",
        "count",
        ("region",),
        (codes,),
        value,
        value,
        np.array(["published"] * 6),
        np.array([f"{v:g}" for v in value]),
    )
    result = primary_rules(table, {"region": region}, rules=Rules(threshold=0))
    assert result.group_disclosures == ()


def test_groups_within_a_hierarchy_name_their_parent() -> None:
    region = Dimension(
        "region", {"North": TOTAL, "South": TOTAL, "s1": "South", "s2": "South"}, TOTAL
    )
    codes = np.array([TOTAL, "North", "South", "s1", "s2"])
    value = np.array([40.0, 12.0, 28.0, 28.0, 0.0])
    table = PublishedTable(
        "t",
        "count",
        ("region",),
        (codes,),
        value,
        value,
        np.array(["published"] * 5),
        np.array([f"{v:g}" for v in value]),
    )
    result = primary_rules(table, {"region": region}, rules=Rules(threshold=0))
    (group,) = [f for f in result.group_disclosures if f.kind == "group"]
    assert (group.category, group.parent) == ("s1", "South")
    assert group.describe() == "everyone in region=South has region=s1"


# --------------------------------------------------------------------------- unknown values


def test_a_suppressed_cell_without_its_value_is_assumed_sensitive() -> None:
    hidden = frozenset({("Single", "Part")})
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS, hidden=hidden)
    i = cell(table, marital="Single", hours="Part")
    result = primary_rules(table, dims)
    assert not result.evaluated[i]
    assert (result.sensitive[i], result.rule[i], result.upper_protection[i]) == (True, "assumed", 0)
    assert result.reason(i).startswith("unknown, assumed sensitive: it was suppressed")
    # Column Part has an unknown member, but its total (3) is published: its known cells
    # are still judged in it, so the married zero there is still a finding.
    zero = cell(table, marital="Married", hours="Part")
    assert any(
        f.cell == zero and f.dimension == "marital" and f.kind == "zero"
        for f in result.group_disclosures
    )


def test_given_the_true_values_a_suppressed_cell_is_judged() -> None:
    hidden = frozenset({("Single", "Part")})
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS, hidden=hidden)
    truth, _ = grid_table(HANDBOOK, MARITAL, HOURS)
    i = cell(table, marital="Single", hours="Part")
    result = primary_rules(table, dims, values=truth.lower)
    assert result.evaluated.all()
    assert result.rule[i] == "threshold"
    # (Single, Part) = 2 discloses the part-timers' marital status, from an unpublished
    # value: redacted, the finding does not spell it out.
    (finding,) = [f for f in result.group_disclosures if f.cell == i]
    assert not finding.public
    assert "Single" not in finding.describe()
    assert finding.describe(redact=False).startswith("all but 1 in hours=Part have marital=Single")


def test_a_group_with_an_unknown_count_is_left_to_the_attacker() -> None:
    # Row Married with (Married, Part) and (Married, Total) both suppressed and no
    # values: the group's count is unknown, so (Married, Full) is not judged by it.
    hidden = frozenset({("Married", "Part"), ("Married", TOTAL)})
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS, hidden=hidden)
    result = primary_rules(table, dims, rules=Rules(threshold=0))
    assert not result.failed["group"][cell(table, marital="Married", hours="Full")]


def test_magnitude_tables_need_their_contributions() -> None:
    table = PublishedTable(
        "t",
        "sum",
        ("sector",),
        (np.array(["a", "b"]),),
        np.array([120.0, 0.0]),
        np.array([120.0, math.inf]),
        np.array(["published", "suppressed"]),
        np.array(["120", "x"]),
    )
    result = primary_rules(table, {"sector": Dimension.flat("sector", ["a", "b"])})
    assert not result.evaluated.any()
    assert result.sensitive.tolist() == [False, True]
    assert result.rule.tolist() == ["", "assumed"]
    assert "contributions" in result.reason(0)
    assert result.reason(0).startswith("not checked")


def test_rounded_counts_without_values_are_not_checked() -> None:
    codes = np.array(["a", "b"])
    table = PublishedTable(
        "t",
        "count",
        ("d",),
        (codes,),
        np.array([10.0, 3.0]),
        np.array([14.0, 3.0]),
        np.array(["rounded", "published"]),
        np.array(["10", "3"]),
    )
    result = primary_rules(table, {"d": Dimension.flat("d", ["a", "b"])})
    assert result.evaluated.tolist() == [False, True]
    assert not result.sensitive[0]
    assert result.reason(0) == "not checked: its true value was not given"
    assert result.rule[1] == "threshold"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([1.0, 2.0], r"one per cell \(12\); got shape \(2,\)"),
        ([math.nan] * 12, r"cell marital=Married, hours=Full has true value nan"),
        ([-1.0] * 12, r"has true value -1.0; give a finite value \(a count is never negative\)"),
    ],
)
def test_bad_true_values_are_refused(values: list[float], message: str) -> None:
    table, dims = grid_table(HANDBOOK, MARITAL, HOURS)
    with pytest.raises(InputError, match=message):
        primary_rules(table, dims, values=values)


# --------------------------------------------------------------------------- reasons


def test_reasons_are_redacted_by_default() -> None:
    table, dims = grid_table(((7, 30),), ("a",), ("x", "y"))
    result = primary_rules(table, dims)
    i = cell(table, marital="a", hours="x")
    assert result.reason(i) == "fewer than 10 units (threshold rule, minimum 10)"
    assert result.reason(i, redact=False) == "7, fewer than 10 units (threshold rule, minimum 10)"
    assert (
        result.reason(cell(table, marital="a", hours="y"))
        == "not sensitive under the primary rules"
    )


def test_magnitude_reasons_print_numbers_only_when_asked() -> None:
    result = one(1234, 567, 8)
    assert result.rule[0] == "dominance"
    assert result.reason(0) == (
        "the 2 largest contributions exceed 85% of the cell ((2, 85)-dominance rule)"
    )
    # (1234 + 567) / 1809 = 99.56%
    assert "exceed 85% of the cell (99.56%)" in result.reason(0, redact=False)
    pair = one(1234, 567, rules=OFF)
    assert pair.reason(0).startswith("at most 2 contributors: a coalition of the others")
    assert pair.reason(0, redact=False).startswith("2 contributors")


# --------------------------------------------------------------------------- the rule functions


def test_rule_functions_on_arrays() -> None:
    small = threshold_rule([0, 1, 9, 10], [0, 1, 9, 10], minimum=10)
    assert small.sensitive.tolist() == [False, True, True, False]
    alone = coalition_rule([0, 1, 2], [0, 1, 2], coalition=0)
    assert alone.sensitive.tolist() == [False, True, False]
    outcome = dominance_rule([85.0, 86.0], [100.0, 100.0], k=85)
    # 85 is not above 85% of 100: the boundary passes.
    assert outcome.sensitive.tolist() == [False, True]
    assert outcome.protection[1] == pytest.approx(100 / 85 * 86 - 100)
    assert p_percent_rule([100.0], [10.0], p=10, q=50).protection.tolist() == [10.0]


# --------------------------------------------------------------------------- properties

CONTRIBUTIONS = st.lists(st.integers(0, 1000), min_size=1, max_size=8)
PERCENT = st.integers(1, 100)


@given(CONTRIBUTIONS, st.integers(1, 1000), PERCENT, st.integers(1, 4), st.integers(50, 100))
@settings(max_examples=200, deadline=None)
def test_scaling_leaves_the_concentration_rules_unchanged(
    values: list[int], scale: int, p: int, n: int, k: int
) -> None:
    rules = Rules(p=p, dominance_n=n, dominance_k=k, q=50)
    base = one(*values, rules=rules)
    scaled = one(*(scale * v for v in values), rules=rules)
    for rule in ("dominance", "p_percent", "pq"):
        assert base.failed[rule][0] == scaled.failed[rule][0]
    assert scaled.upper_protection[0] == pytest.approx(scale * base.upper_protection[0])


@given(CONTRIBUTIONS, PERCENT, PERCENT)
@settings(max_examples=200, deadline=None)
def test_passing_the_p_percent_rule_passes_it_for_any_smaller_p(
    values: list[int], p: int, smaller: int
) -> None:
    smaller = min(smaller, p)
    if not one(*values, rules=Rules(p=p)).failed["p_percent"][0]:
        assert not one(*values, rules=Rules(p=smaller)).failed["p_percent"][0]


@given(CONTRIBUTIONS, PERCENT)
@settings(max_examples=200, deadline=None)
def test_the_pq_rule_at_q_100_is_the_p_percent_rule(values: list[int], p: int) -> None:
    result = one(*values, rules=Rules(p=p, q=100, dominance_k=100))
    assert result.failed["pq"][0] == result.failed["p_percent"][0]
    pq = p_percent_rule(result.largest, result.rest, p=p, q=100)
    assert (
        pq.protection.tolist()
        == p_percent_rule(result.largest, result.rest, p=p).protection.tolist()
    )


@given(CONTRIBUTIONS, st.sampled_from([25, 60, 100]))
@settings(max_examples=200, deadline=None)
def test_safe_under_the_corresponding_two_k_rule_is_safe_under_p_percent(
    values: list[int], p: int
) -> None:
    # Hundepool et al. 2012, section 4.2, proof of A: with k = 100 * 100 / (100 + p)
    # (80, 62.5 and 50: exact in binary), a cell safe under (2, k) is safe under p%.
    rules = Rules(p=p, dominance_k=100 * 100 / (100 + p))
    result = one(*values, rules=rules)
    if not result.failed["dominance"][0]:
        assert not result.failed["p_percent"][0]


@given(
    st.lists(
        st.tuples(st.integers(0, 500), st.sampled_from(["A", "B", "C", ""])), min_size=1, max_size=8
    )
)
@settings(max_examples=200, deadline=None)
def test_holdings_never_make_a_cell_safer(pairs: list[tuple[int, str]]) -> None:
    # Merging contributions only raises the largest and the sum of the n largest and
    # lowers the rest and the number of contributors.
    values = [v for v, _ in pairs]
    owners = [h for _, h in pairs]
    units = one(*values, rules=Rules(contributor="unit"), holdings=owners)
    merged = one(*values, holdings=owners)
    for rule in ("threshold", "dominance", "p_percent"):
        assert merged.failed[rule][0] or not units.failed[rule][0]


def _reference(values: Sequence[float], owners: Sequence[str], rules: Rules) -> tuple[float, ...]:
    """One cell's contributors, largest, top-n sum and rest, computed plainly."""
    merged: dict[str, float] = {}
    for i, (v, h) in enumerate(zip(values, owners, strict=True)):
        key = h if h and rules.contributor == "holding" else f"unit {i}"
        merged[key] = merged.get(key, 0.0) + v
    ranked = sorted(merged.values(), reverse=True)
    total = sum(ranked)
    return (
        len(ranked),
        ranked[0] if ranked else 0.0,
        sum(ranked[: rules.dominance_n]),
        total - sum(ranked[: rules.coalition + 1]),
    )


@given(
    st.lists(
        st.lists(st.tuples(st.integers(-5, 100), st.sampled_from(["A", "B", ""])), max_size=6),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["holding", "unit"]),
    st.integers(1, 3),
    st.integers(0, 2),
)
@settings(max_examples=150, deadline=None)
def test_the_vectorized_ranking_equals_a_cell_by_cell_reference(
    cells: list[list[tuple[int, str]]], contributor: str, n: int, coalition: int
) -> None:
    rules = Rules(contributor=contributor, dominance_n=n, coalition=coalition)
    table, dims = magnitude(
        *[[v for v, _ in c] for c in cells], holdings=[[h for _, h in c] for c in cells]
    )
    result = primary_rules(table, dims, rules=rules)
    for i, c in enumerate(cells):
        expected = _reference([v for v, _ in c], [h for _, h in c], rules)
        got = (result.contributors[i], result.largest[i], result.dominant[i], result.rest[i])
        assert got == pytest.approx(expected)
        assert result.negative[i] == any(v < 0 for v, _ in c)


GRIDS = st.integers(1, 3).flatmap(
    lambda rows: st.integers(1, 3).flatmap(
        lambda cols: st.lists(
            st.lists(st.integers(0, 4), min_size=cols, max_size=cols), min_size=rows, max_size=rows
        )
    )
)


def _brute_groups(grid: list[list[int]], coalition: int) -> set[tuple[str, str, str, str]]:
    """Group findings read off the grid by looping over its rows and columns."""
    rows = [f"r{i}" for i in range(len(grid))]
    cols = [f"c{j}" for j in range(len(grid[0]))]
    full = [[*row, sum(row)] for row in grid]
    full.append([sum(col) for col in zip(*full, strict=True)])
    r_all, c_all = [*rows, TOTAL], [*cols, TOTAL]
    found = set()
    for i, r in enumerate(r_all):  # along hours: the row r is the group
        if len(cols) > 1:
            for j, c in enumerate(cols):
                x, t = full[i][j], full[i][-1]
                if x > 0 and t - x <= coalition:
                    found.add(("group", r, c, "hours"))
                if x == 0 and t > 0:
                    found.add(("zero", r, c, "hours"))
    for j, c in enumerate(c_all):  # along marital: the column c is the group
        if len(rows) > 1:
            for i, r in enumerate(rows):
                x, t = full[i][j], full[-1][j]
                if x > 0 and t - x <= coalition:
                    found.add(("group", r, c, "marital"))
                if x == 0 and t > 0:
                    found.add(("zero", r, c, "marital"))
    return found


@given(GRIDS, st.integers(0, 2))
@settings(max_examples=150, deadline=None)
def test_group_findings_equal_a_brute_force_reading(grid: list[list[int]], coalition: int) -> None:
    rows = [f"r{i}" for i in range(len(grid))]
    cols = [f"c{j}" for j in range(len(grid[0]))]
    table, dims = grid_table(grid, rows, cols)
    result = primary_rules(table, dims, rules=Rules(coalition=coalition))
    found = {
        (f.kind, str(table.codes[0][f.cell]), str(table.codes[1][f.cell]), f.dimension)
        for f in result.group_disclosures
    }
    assert found == _brute_groups(grid, coalition)


@given(GRIDS, st.randoms(use_true_random=False))
@settings(max_examples=100, deadline=None)
def test_the_cells_order_does_not_matter(grid: list[list[int]], random: Random) -> None:
    rows = [f"r{i}" for i in range(len(grid))]
    cols = [f"c{j}" for j in range(len(grid[0]))]
    table, dims = grid_table(grid, rows, cols)
    order = list(range(len(table)))
    random.shuffle(order)
    permuted = PublishedTable(
        table.name,
        table.kind,
        table.dimensions,
        tuple(c[order] for c in table.codes),
        table.lower[order],
        table.upper[order],
        table.state[order],
        table.shown[order],
    )
    before = primary_rules(table, dims)
    after = primary_rules(permuted, dims)
    assert after.rule.tolist() == before.rule[order].tolist()
    assert after.upper_protection.tolist() == before.upper_protection[order].tolist()
    for rule in RULES:
        assert after.failed[rule].tolist() == before.failed[rule][order].tolist()
    where = {new: old for new, old in enumerate(order)}
    assert sorted((where[f.cell], f.dimension, f.kind) for f in after.group_disclosures) == sorted(
        (f.cell, f.dimension, f.kind) for f in before.group_disclosures
    )
