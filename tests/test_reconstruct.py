"""Reconstruction (issue 27): what published count tables give back, against enumeration.

Planted microdata in many small blocks is published as tables of the 2010 census kind
(sex x age, age x race, sex x race, block totals), with and without small cells
suppressed; every block is then reconstructed, and every claim is checked against the
brute force: every integer table with the block's total whose tables agree with what
was published. No false certificate: a block reported reconstructed has exactly one
such table, the planted one; a forced cell has one value in all of them. The count and
the posterior equal the brute force's.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from census_tables import (
    AGES_38,
    NAMES,
    NAMES_4,
    TABLES_2010,
    TABLES_2010_FIVE,
    blocks,
    bounds,
    dimensions,
    margins,
    publish,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from anonaudit.cli import main
from anonaudit.errors import InputError, OptionError
from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.sources.published import read_tables
from anonaudit.tables.reconstruct import Reconstruction, _verify, reconstruct
from anonaudit.tables.system import build

SMALL = (0, 40)  # ages: two bands
SUPPRESSIONS = (0, 3)  # nothing suppressed; interior cells of 1 or 2 suppressed


@functools.cache
def compositions(total: int, cells: int) -> NDArray[np.int64]:
    """Every way of putting ``total`` people into ``cells`` cells, one per row."""
    bars = np.asarray(list(itertools.combinations(range(total + cells - 1), cells - 1)))
    bars = bars.reshape(-1, cells - 1)
    edges = np.hstack(
        [np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), total + cells - 1)]
    )
    return np.diff(edges, axis=1) - 1


def brute_force(
    truth: NDArray[np.int64], suppress_below: int, keeps: Sequence[Sequence[int]] = TABLES_2010
) -> NDArray[np.int64]:
    """Every integer cube with the block's total whose tables (``keeps``, the total
    among them) agree with the tables published of ``truth`` (one flat cube per row)."""
    found = compositions(int(truth.sum()), truth.size)
    candidates = found.reshape(-1, *truth.shape)
    ok = np.ones(len(found), dtype=bool)
    for keep in keeps:
        low, high = bounds(truth[np.newaxis], keep, suppress_below)
        values = margins(candidates, keep)
        ok &= ((values >= low) & (values <= high)).reshape(len(found), -1).all(axis=1)
    return found[ok]


@functools.cache
def planted(suppress_below: int) -> tuple[NDArray[np.int64], TableSet, list[NDArray[np.int64]]]:
    """80 blocks of 1 to 7 people over 2 x 2 x 3 cells, their tables, and per block
    every cube the brute force finds."""
    cubes = blocks(80, sizes=(1, 7), ages=SMALL, races=3, seed=27 + suppress_below)
    tables = publish(cubes, suppress_below=suppress_below)
    return cubes, tables, [brute_force(c, suppress_below) for c in cubes]


@pytest.mark.parametrize("suppress_below", SUPPRESSIONS)
def test_no_false_certificate_from_the_linear_bounds(suppress_below: int) -> None:
    cubes, tables, found = planted(suppress_below)
    result = reconstruct(tables, group="block", count_budget=0)
    assert [g.group for g in result.groups] == [f"b{b}" for b in range(len(cubes))]
    assert 0 < result.reconstructed < len(cubes)  # the test sees both kinds
    for g, truth, solutions in zip(result.groups, cubes, found, strict=True):
        assert g.method == "linear programming"
        low, high = solutions.min(axis=0), solutions.max(axis=0)
        # sound: the interval holds every table the publication allows
        assert (g.lower <= low).all() and (high <= g.upper).all()
        # a forced cell has one value in every table, the planted one
        assert (low[g.forced] == high[g.forced]).all()
        assert (g.lower[g.forced] == truth.ravel()[g.forced]).all()
        if g.reconstructed:
            assert len(solutions) == 1 and g.solutions == 1
            assert (g.lower == truth.ravel()).all()


@pytest.mark.parametrize("suppress_below", SUPPRESSIONS)
def test_counting_equals_the_brute_force(suppress_below: int) -> None:
    cubes, tables, found = planted(suppress_below)
    result = reconstruct(tables, group="block")
    assert len(result.counted) == len(cubes)  # small blocks: every one counted
    assert any(g.method == "enumeration" for g in result.groups)
    for g, solutions in zip(result.groups, found, strict=True):
        assert g.solutions == len(solutions)
        assert (g.lower == solutions.min(axis=0)).all()
        assert (g.upper == solutions.max(axis=0)).all()
        # the posterior: the k-th record of a cell is real in the share of the tables
        # with at least k in it; the likeliest guess takes the most probable records
        tail = [
            (solutions[:, c] >= k).mean()
            for c in range(solutions.shape[1])
            for k in range(1, int(solutions[:, c].max()) + 1)
        ]
        records = round(float(solutions.sum(axis=1).mean()))
        assert g.posterior is not None
        assert np.allclose(g.posterior, sorted(tail, reverse=True)[:records])


@settings(max_examples=40, deadline=None)
@given(
    people=st.lists(st.integers(0, 11), max_size=7),
    keeps=st.sets(st.sampled_from((*TABLES_2010[:3], (0,), (1,), (2,))), min_size=1),
    suppress_below=st.sampled_from((0, 2, 3)),
)
def test_no_false_certificate_on_random_publications(
    people: list[int], keeps: set[tuple[int, ...]], suppress_below: int
) -> None:
    """Any subset of the tables, any suppression: a forced cell has one value in every
    integer table the publication allows, and a reconstructed block has one table."""
    truth = np.bincount(people, minlength=12).reshape(1, 2, 2, 3)  # each person's cell
    published = (*sorted(keeps), ())
    result = reconstruct(publish(truth, published, suppress_below=suppress_below), group="block")
    # the reconstruction's cube: the published dimensions, in the order of first use
    axes = [NAMES.index(d) for d in result.dimensions]
    found = brute_force(truth[0], suppress_below, published).reshape(-1, 2, 2, 3)
    unused = tuple(1 + k for k in range(3) if k not in axes)
    projected = found.sum(axis=unused) if unused else found
    rank = np.argsort(np.argsort(axes))  # each kept axis's place among the kept
    moved = np.transpose(projected, (0, *(1 + rank)))
    solutions = np.unique(moved.reshape(len(found), -1), axis=0)
    (g,) = result.groups
    low, high = solutions.min(axis=0), solutions.max(axis=0)
    assert (g.lower <= low).all() and (high <= g.upper).all()
    assert (low[g.forced] == high[g.forced]).all()
    # small, so counted: exact both ways (an empty block gives nobody back)
    assert g.reconstructed == (len(solutions) == 1 and len(people) > 0)


def test_the_census_case_reports_the_certified_share_by_block_size() -> None:
    """Blocks of 5 to 30 people, sex x 5 age bands x 4 races, the 2010 tables."""
    cubes = blocks(150, sizes=(5, 30), ages=(0, 18, 30, 45, 65), races=4, seed=2010)
    result = reconstruct(publish(cubes), group="block", sensitive="race")
    for g, truth in zip(result.groups, cubes, strict=True):
        x = truth.ravel()
        assert (g.lower <= x).all() and (x <= g.upper).all()
        if g.reconstructed:
            assert (g.lower == x).all()
            # the records of a sex and age band that are all of one race
            by_race = truth.reshape(-1, truth.shape[-1])
            assert g.sensitive_known == by_race[(by_race > 0).sum(axis=1) == 1].sum()
    bands = result.by_size((5, 10, 20, 31))
    assert [(b.low, b.high) for b in bands] == [(5, 9), (10, 19), (20, 30)]
    shares = [b.reconstructed / b.groups for b in bands]
    assert shares == sorted(shares, reverse=True)  # larger blocks hide better
    assert shares[0] > 0.9 and shares[-1] > 0.2
    for rate in result.rates():
        assert rate.count > rate.chance  # the attack beats a draw from the margins


def test_the_issue_census_case_by_block_size() -> None:
    """The issue's case: blocks of 5 to 100 people, sex x 38 ages x 7 races x Hispanic
    origin (1,064 cells), five tables of the 2010 kind. Every certified block is the
    planted one, every forced cell holds its planted count, and small blocks are given
    back more often than large ones."""
    cubes = blocks(40, sizes=(5, 100), ages=AGES_38, ethnicity=True, seed=27)
    tables = publish(cubes, TABLES_2010_FIVE, names=NAMES_4)
    result = reconstruct(tables, group="block", sensitive="race")
    assert result.dimensions == NAMES_4 and result.shape == (2, 38, 7, 2)
    for g, truth in zip(result.groups, cubes, strict=True):
        x = truth.ravel()
        assert g.records == x.sum()
        assert (g.lower <= x).all() and (x <= g.upper).all()
        assert (g.lower[g.forced] == x[g.forced]).all()
        if g.reconstructed:
            assert (g.lower == x).all()
    bands = result.by_size((5, 30, 60, 101))
    assert sum(b.groups for b in bands) == 40
    shares = [b.reconstructed / b.groups for b in bands]
    assert shares[0] > shares[-1] and 0 < result.reconstructed < 40


def test_an_executor_gives_the_same_result() -> None:
    from concurrent.futures import ThreadPoolExecutor

    cubes = blocks(5, sizes=(5, 15), ages=SMALL, races=3, seed=9)
    tables = publish(cubes, suppress_below=2)
    with ThreadPoolExecutor(1) as pool:
        mapped = reconstruct(tables, group="block", executor=pool)
    assert _fields(mapped) == _fields(reconstruct(tables, group="block"))


def test_a_group_too_big_to_count_keeps_its_linear_bounds() -> None:
    cubes = blocks(4, sizes=(25, 30), ages=(0, 18, 30, 45, 65), races=4, seed=5)
    result = reconstruct(publish(cubes), group="block", count_budget=1)
    for g in result.groups:
        assert g.method == "linear programming"
        assert g.solutions == (1 if g.reconstructed else None)


def test_processes_give_the_same_result() -> None:
    cubes = blocks(6, sizes=(5, 15), ages=SMALL, races=3, seed=8)
    tables = publish(cubes, suppress_below=2)
    one = reconstruct(tables, group="block", sensitive="sex")
    two = reconstruct(tables, group="block", sensitive="sex", workers=2)
    assert _fields(one) == _fields(two)


def _fields(result: Reconstruction) -> list[tuple[object, ...]]:
    return [
        (g.group, g.lower.tolist(), g.upper.tolist(), g.solutions, g.chance, g.sensitive_known)
        for g in result.groups
    ]


def test_without_a_group_every_table_is_solved_jointly() -> None:
    cubes = blocks(1, sizes=(6, 6), ages=SMALL, races=2, seed=1)
    tables = publish(cubes)
    joint = TableSet(
        tuple(_without_block(t) for t in tables.tables),
        {d: v for d, v in tables.dimensions.items() if d != "block"},
    )
    grouped = reconstruct(tables, group="block").groups[0]
    alone = reconstruct(joint)
    assert alone.group is None and [g.group for g in alone.groups] == [""]
    assert (alone.groups[0].lower == grouped.lower).all()


def _without_block(table: PublishedTable) -> PublishedTable:
    return PublishedTable(
        table.name,
        table.kind,
        table.dimensions[1:],
        table.codes[1:],
        table.lower,
        table.upper,
        table.state,
        table.shown,
    )


def test_what_cannot_be_reconstructed_is_refused() -> None:
    cubes = blocks(2, sizes=(3, 4), ages=SMALL, races=2)
    tables = publish(cubes)
    with pytest.raises(OptionError, match="group county: no table has that dimension"):
        reconstruct(tables, group="county")
    with pytest.raises(OptionError, match="sensitive block: not a dimension"):
        reconstruct(tables, group="block", sensitive="block")
    unsplit = TableSet((*tables.tables, _without_block(tables.tables[0])), tables.dimensions)
    with pytest.raises(OptionError, match="the table sex_age has no such dimension"):
        reconstruct(unsplit, group="block")
    only = TableSet((tables.tables[-1],), tables.dimensions)
    with pytest.raises(InputError, match="no dimension but the group"):
        reconstruct(only, group="block")
    sums = TableSet(
        (PublishedTable(**{**vars(tables.tables[0]), "kind": "sum"}),), tables.dimensions
    )
    with pytest.raises(InputError, match="every table must be a table of counts"):
        reconstruct(sums)
    with pytest.raises(OptionError, match="draws must be at least 1"):
        reconstruct(tables, draws=0)


def test_a_solution_that_breaks_a_published_cell_is_never_claimed() -> None:
    cubes = blocks(1, sizes=(4, 4), ages=SMALL, races=2, seed=3)
    tables = publish(cubes)
    block = TableSet(
        tuple(_without_block(t) for t in tables.tables),
        dimensions(cubes.shape[1:]),
    )
    system = build(block)
    real = np.ones(len(system.lower), dtype=bool)
    _verify(system, real, cubes[0].ravel().astype(float))  # the truth agrees
    wrong = cubes[0].ravel().astype(float)
    wrong[np.argmax(wrong)] -= 1
    with pytest.raises(InputError, match="do not add up"):
        _verify(system, real, wrong)


# -- the command line -------------------------------------------------------------------


def write(table: PublishedTable, folder: Path) -> Path:
    """The table as a long CSV file (its cells as published)."""
    path = folder / f"{table.name}.csv"
    rows = [",".join([*table.dimensions, "count"])]
    rows += [
        ",".join([*(str(c[i]) for c in table.codes), str(table.shown[i])])
        for i in range(len(table))
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    cubes = blocks(5, sizes=(3, 8), ages=SMALL, races=3, seed=4)
    return [write(t, tmp_path) for t in publish(cubes).tables]


def test_the_command_exits_1_and_redacts(
    files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["reconstruct", *map(str, files), "--group", "block", "--sensitive", "race"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith("anonaudit reconstruct: ")
    assert "groups reconstructed exactly" in out and "records whose race is known" in out
    assert "sex=sex0" not in out and "values redacted" in out
    assert main([*argv, "--json", "-"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["redacted"] and document["reconstructed"]
    assert all("cells" not in g and "posterior" not in g for g in document["groups"])
    assert {r["rate"] for r in document["rates"]} >= {"records_forced", "sensitive_known"}


def test_show_values_prints_the_records_given_back(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "out.json"
    argv = ["reconstruct", *map(str, files), "--group", "block", "--show-values"]
    assert main([*argv, "--json", str(report)]) == 1
    assert "sex=sex0, age=age0, race=race" in capsys.readouterr().out
    document = json.loads(report.read_text())
    group = document["groups"][0]
    assert sum(c["lower"] for c in group["cells"]) <= group["records"]


def test_nobody_given_back_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cubes = np.full((2, 2, 2, 2), 3, dtype=np.int64)  # 24 people a block, evenly spread
    tables = publish(cubes, ((0,), (1,), (2,)))  # one-way tables only
    files = [write(t, tmp_path) for t in tables.tables]
    assert main(["reconstruct", *map(str, files), "--group", "block"]) == 0
    assert "no group of 2 reconstructed exactly" in capsys.readouterr().out


def test_a_bad_group_is_one_line_and_exit_2(
    files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reconstruct", *map(str, files), "--group", "county"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "anonaudit: error: --group county: no table has that dimension; the dimensions "
        "are block, sex, age, race\n"
    )
    assert main(["reconstruct", *map(str, files), "--group", "block", "--workers", "0"]) == 2
    assert "--workers must be at least 1 (got 0)" in capsys.readouterr().err


def test_the_tables_are_read_as_anonaudit_tables_reads_them(
    files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first = files[0]
    lines = first.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",S"  # a cell suppressed with the office's mark
    first.write_text("\n".join(lines) + "\n")
    argv = ["reconstruct", *map(str, files), "--group", "block"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "line 2, column 'count': 'S' is neither a number nor a suppression marker" in err
    assert "declare the marker with --marker" in err
    assert main([*argv, "--marker", "S", "--json", "-"]) == 1
    tables = json.loads(capsys.readouterr().out)["tables"]
    assert [t["suppressed"] for t in tables] == [1, 0, 0, 0]


def test_tables_that_contradict_each_other_name_the_group() -> None:
    cubes = blocks(3, sizes=(4, 6), ages=SMALL, races=2, seed=6)
    tables = publish(cubes)
    total = tables.tables[-1]
    wrong = total.lower.copy()
    wrong[1] += 1  # block b1's total, one more than its cells
    broken = PublishedTable(**{**vars(total), "lower": wrong, "upper": wrong.copy()})
    with pytest.raises(InputError, match=r"^block=b1: total: Total: published as 5, but"):
        reconstruct(TableSet((*tables.tables[:-1], broken), tables.dimensions), group="block")


def test_a_code_list_of_more_codes_is_a_larger_cube() -> None:
    cubes = blocks(2, sizes=(4, 6), ages=SMALL, races=2, seed=7)
    tables = publish(cubes)
    first = reconstruct(tables, group="block")
    wider = dict(tables.dimensions)
    wider["race"] = Dimension.flat("race", ["race0", "race1", "race2"], "Total")
    second = reconstruct(TableSet(tables.tables, wider), group="block")
    assert second.shape == (2, 2, 3) and first.shape == (2, 2, 2)
    for a, b in zip(first.groups, second.groups, strict=True):
        # the new race holds nobody: every table's totals already account for all
        assert (b.upper.reshape(2, 2, 3)[..., 2] == 0).all()
        assert (b.lower.reshape(2, 2, 3)[..., :2].ravel() == a.lower).all()


# -- a class-table release --------------------------------------------------------------


def class_table(cubes: NDArray[np.int64], folder: Path) -> Path:
    """The blocks as a long frequency table of their non-empty cells (block, sex, age,
    race, count), as ``anonaudit audit --count`` reads one."""
    path = folder / "classes.csv"
    rows = ["block,sex,age,race,count"]
    for b, cube in enumerate(cubes):
        for (s, a, r), n in np.ndenumerate(cube):
            if n:
                rows.append(f"b{b},sex{s},age{a},race{r},{n}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_class_table_release_gives_every_record_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A class table lists the combinations that occur: with --class-table every other
    combination is proved empty and every block is given back as planted; without it a
    combination not listed is merely unpublished, and no block is."""
    cubes = blocks(6, sizes=(3, 9), ages=SMALL, races=3, seed=12)
    path = class_table(cubes, tmp_path)
    argv = ["reconstruct", str(path), "--group", "block", "--sensitive", "race"]
    # no block given back whole, but a listed combination of 1 is a person alone
    assert main([*argv, "--json", "-"]) == 1
    rates = {r["rate"]: r["count"] for r in json.loads(capsys.readouterr().out)["rates"]}
    assert rates["reconstructed"] == 0 and rates["records_unique"] > 0
    assert main([*argv, "--class-table", "--show-values", "--json", "-"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["groups_solved"] == 6 and document["tables"][0]["cells"] == int(
        (cubes > 0).sum()
    )
    for g, cube in zip(document["groups"], cubes, strict=True):
        assert g["reconstructed"] and g["records"] == cube.sum()
        shown = {c["cell"]: (c["lower"], c["upper"]) for c in g["cells"]}
        planted = {
            f"sex=sex{s}, age=age{a}, race=race{r}": (float(n), float(n))
            for (s, a, r), n in np.ndenumerate(cube)
            if n
        }
        assert shown == planted


def test_a_class_table_with_a_margin_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cubes = blocks(2, sizes=(3, 4), ages=SMALL, races=2, seed=1)
    path = class_table(cubes, tmp_path)
    path.write_text(path.read_text() + "b0,Total,age0,race0,2\n")
    argv = ["reconstruct", str(path), "--group", "block", "--class-table"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"anonaudit: error: {path}: block=b0, sex=Total, age=age0, race=race0 is a "
        "margin (sex=Total is not a finest code); a class table lists the finest cells only\n"
    )


# -- linkage to an identified table -----------------------------------------------------


def register(cubes: NDArray[np.int64], folder: Path) -> Path:
    """An identified table of the blocks' people: name, block, sex and age (no race)."""
    path = folder / "register.csv"
    rows = ["name,block,sex,age"]
    for b, cube in enumerate(cubes):
        for (s, a, _), n in np.ndenumerate(cube):
            rows += [f"p{b}-{s}-{a}-{len(rows)},b{b},sex{s},age{a}"] * int(n)
    path.write_text("\n".join(rows) + "\n")
    return path


def test_reconstructed_records_linked_to_a_register(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A register of the same people by block, sex and age: a reconstructed record whose
    block, sex and age are one person's in the register is linked to that name, and its
    race learned. Counted independently from the planted blocks."""
    cubes = blocks(12, sizes=(3, 10), ages=SMALL, races=3, seed=21)
    files = [str(write(t, tmp_path)) for t in publish(cubes).tables]
    result = reconstruct(publish(cubes), group="block")
    expected, by_chance = 0, 0.0
    for g, cube in zip(result.groups, cubes, strict=True):
        forced = np.where(g.forced, g.lower, 0).reshape(cube.shape)
        drawn = g.chance.forced_cells.reshape(cube.shape)  # a draw's records kept there
        assert (drawn <= forced).all() and (drawn[~g.forced.reshape(cube.shape)] == 0).all()
        assert math.isclose(float(drawn.sum()), g.chance.records_forced)
        people = cube.sum(axis=2)  # the register's count of each block, sex and age
        expected += int(forced.sum(axis=2)[people == 1].sum())
        by_chance += float(drawn.sum(axis=2)[people == 1].sum())
    assert expected > 0 and 0 < by_chance < expected
    path = register(cubes, tmp_path)
    argv = ["reconstruct", *files, "--group", "block", "--population", str(path)]
    assert main([*argv, "--json", "-"]) == 1
    linked = json.loads(capsys.readouterr().out)["linkage"]
    assert linked["columns"] == ["block", "sex", "age"]
    assert linked["unique"] == expected and linked["unmatched"] == 0
    assert math.isclose(linked["chance_unique"], by_chance)
    assert linked["records"] == sum(g.records_forced for g in result.groups)
    assert main(argv) == 1
    assert f"{expected:,} of {linked['records']:,} reconstructed records" in (
        capsys.readouterr().out
    )
    other = tmp_path / "other.csv"
    other.write_text("name,county\nAda,c1\n")
    assert main([*argv[:-1], str(other)]) == 2
    assert "no column is the group or a dimension of the tables" in capsys.readouterr().err


# -- the smallest subset of tables ------------------------------------------------------


def test_the_smallest_subset_of_tables_is_proved_by_the_brute_force() -> None:
    """Per reconstructed block, the subset reported leaves one table (brute force over
    every table of the block's total) and every smaller subset leaves several."""
    cubes, tables, _ = planted(0)
    result = reconstruct(tables, group="block", subsets=True)
    keeps = dict(zip((t.name for t in tables.tables), TABLES_2010, strict=True))
    seen = 0
    for g, truth in list(zip(result.groups, cubes, strict=True))[:30]:
        if not g.reconstructed:
            assert g.smallest is None
            continue
        assert g.smallest is not None
        chosen = [TABLES_2010[k] for k in g.smallest]
        assert len(brute_force(truth, 0, chosen)) == 1
        for size in range(1, len(chosen)):
            for fewer in itertools.combinations(TABLES_2010, size):
                assert len(brute_force(truth, 0, fewer)) > 1, (g.group, fewer)
        seen += 1
    assert seen > 5
    counted = result.smallest_subsets()
    assert sum(n for _, n in counted) == result.reconstructed
    assert all(set(names) <= set(keeps) for names, _ in counted)


def test_records_whose_sensitive_value_is_known_hold_in_every_table() -> None:
    """Against the brute force: the records said to have a known race are at most the
    fewest, over every table the publication allows, in the sex and age combinations
    with one possible race, and at least the sum of those combinations' own lower
    bounds (the figure before, which a split between sexes hid)."""
    above = 0
    for suppress_below in SUPPRESSIONS:
        cubes, tables, found = planted(suppress_below)
        result = reconstruct(tables, group="block", sensitive="race")
        for g, solutions in zip(result.groups, found, strict=True):
            by_race = solutions.reshape(len(solutions), -1, cubes.shape[-1])
            one = ((by_race > 0).any(axis=0)).sum(axis=1) == 1  # one race possible
            fewest = int(by_race[:, one].sum(axis=(1, 2)).min()) if one.any() else 0
            floor = int(by_race[:, one].min(axis=0).sum()) if one.any() else 0
            assert floor <= g.sensitive_known <= fewest
            above += g.sensitive_known > floor
    assert above > 0  # the test sees the bound beat the sum of lower bounds


def test_the_titanic_children_of_the_first_two_classes_all_survived() -> None:
    """The sample tables of the Titanic (class x age, class x sex, sex x age, each by
    survival): every child of the first class (6) and of the second (24) survived, which
    the tables prove though no child's sex count is known."""
    folder = Path(__file__).resolve().parents[1] / "sample_data" / "tables"
    names = ["class_age_survived", "class_sex_survived", "sex_age_survived"]
    paths = [str(folder / f"titanic_{n}.csv") for n in names]
    result = reconstruct(read_tables(paths), sensitive="Survived")
    (g,) = result.groups
    assert g.sensitive_known == 6 + 24


def test_a_known_sensitive_value_fails_though_no_group_is_rebuilt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The Titanic sample tables rebuild no group, but prove 30 survivals: exit 1 with
    --sensitive Survived, 0 without (no record is unique in the reconstruction)."""
    folder = Path(__file__).resolve().parents[1] / "sample_data" / "tables"
    paths = [str(p) for p in sorted(folder.glob("titanic_*.csv"))]
    assert main(["reconstruct", *paths, "--sensitive", "Survived"]) == 1
    assert "records whose Survived is known" in capsys.readouterr().out
    assert main(["reconstruct", *paths]) == 0


def test_no_output_replaces_an_identified_table_the_policy_file_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The policy file's paths are its folder's: an output over the identified table it
    names is refused before anything is read, and the file is left as it was."""
    cubes = blocks(2, sizes=(3, 5), ages=SMALL, races=2, seed=3)
    files = [str(write(t, tmp_path)) for t in publish(cubes).tables]
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "register.csv").write_text("name,block\nAda,b0\n")
    (folder / "p.toml").write_text('[tables]\nidentified = "register.csv"\n')
    argv = ["reconstruct", *files, "--config", str(folder / "p.toml")]
    assert main([*argv, "--json", str(folder / "register.csv")]) == 2
    assert "this would overwrite the input" in capsys.readouterr().err
    assert (folder / "register.csv").read_text() == "name,block\nAda,b0\n"
