"""Reconstruction beside DP (issue 27): the same tables released with noise on every cell.

The noisy counts are evidence, not equations. What is claimed of a release, and checked
here: a group is certified only from intervals that hold every cell's true count with
the stated confidence, so a certified group equals the planted one (seeded noise, many
groups, every certificate checked); at the usual epsilons none is; the closest table is
a whole non-negative table at least as close to the released cells as the truth is; the
two-table screen's answers agree with a brute force over every table of small cubes.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from census_tables import TABLES_2010, blocks, margins, publish
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reconstruct import SMALL, compositions, write

import anonaudit.tables.reconstruct as reconstruct_module
from anonaudit.cli import main
from anonaudit.dp.mechanisms import NoiseDistribution
from anonaudit.errors import InputError, OptionError, ParameterError
from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.tables.reconstruct import (
    _cells_bound,
    _cells_per_person,
    _fit,
    _system,
    _two_tables,
    beside_dp,
    closeness,
    reconstruct,
    release_tables,
)


@pytest.fixture(scope="module")
def census() -> tuple[np.ndarray, TableSet]:
    cubes = blocks(60, sizes=(2, 12), ages=SMALL, races=3, seed=41)
    return cubes, publish(cubes)


def test_the_release_counts_every_cell_a_person_is_in(census: tuple[np.ndarray, TableSet]) -> None:
    _, tables = census
    release = release_tables(tables, epsilon=0.5, rng=np.random.default_rng(0))
    # sex x age, age x race, sex x race with their margins (4 cells each), the total
    assert release.cells_per_person == 4 + 4 + 4 + 1
    assert release.noise.scale == pytest.approx(13 / 0.5)
    assert release.cost.epsilon == pytest.approx(0.5)
    for noisy, true in zip(release.tables.tables, tables.tables, strict=True):
        assert (noisy.codes[0] == true.codes[0]).all()
        assert (noisy.lower == noisy.upper).all() and (noisy.lower != true.lower).any()
        assert noisy.shown.tolist() == noisy.lower.astype(int).astype(str).tolist()


def test_the_discrete_gaussian_is_calibrated_on_every_cell(
    census: tuple[np.ndarray, TableSet],
) -> None:
    _, tables = census
    release = release_tables(tables, epsilon=1.0, delta=1e-6, mechanism="discrete-gaussian")
    assert release.cost.rho > 0 and release.cost.profile == (1.0, 1e-6)
    # the same guarantee for 13 cells needs more noise than for one
    one = release_tables(
        TableSet((tables.tables[-1],), tables.dimensions),
        epsilon=1.0,
        delta=1e-6,
        mechanism="discrete-gaussian",
    )
    assert one.cells_per_person == 1 and release.noise.scale > 3 * one.noise.scale


def test_what_cannot_be_released_is_refused(census: tuple[np.ndarray, TableSet]) -> None:
    cubes, tables = census
    suppressed = publish(cubes, suppress_below=3)
    with pytest.raises(InputError, match=r"^sex_age: block=b\d+, .* is published as 'x'; a DP"):
        release_tables(suppressed, epsilon=1.0)
    with pytest.raises(ParameterError, match="released with discrete-laplace or discrete"):
        release_tables(tables, epsilon=1.0, mechanism="laplace")
    with pytest.raises(ParameterError, match="discrete Laplace noise only"):
        release_tables(
            tables,
            epsilon=1.0,
            delta=1e-6,
            mechanism="discrete-gaussian",
            rng=np.random.default_rng(),
        )
    with pytest.raises(ParameterError, match="epsilon must be a number of 1e-06 or more"):
        release_tables(tables, epsilon=0.0)
    with pytest.raises(ParameterError, match="epsilon must be a number of 1e-06 or more"):
        release_tables(tables, epsilon=1e-300)  # was an overflow calibrating the noise
    with pytest.raises(ParameterError, match=r"delta must be 0 or lie in \[1e-100, 1\)"):
        release_tables(tables, epsilon=1.0, delta=2.0)
    with pytest.raises(OptionError, match="confidence must lie strictly between 0 and 1"):
        reconstruct(
            tables, group="block", noise=NoiseDistribution("discrete-laplace", 1.0), confidence=1
        )


@pytest.mark.parametrize("epsilon", [1.0, 30.0, 300.0, 3000.0])
def test_no_false_certificate_from_a_noisy_release(
    census: tuple[np.ndarray, TableSet], epsilon: float
) -> None:
    """Every group certified from the release is the planted one; none is at epsilon 1;
    with almost no noise the release certifies what the exact tables do."""
    cubes, tables = census
    exact = reconstruct(tables, group="block")
    side = beside_dp(tables, exact, epsilon=epsilon, rng=np.random.default_rng(int(epsilon)))
    noisy = side.result
    assert noisy.noise is side.release.noise and noisy.confidence == 0.99
    truth = {g.group: c.ravel() for g, c in zip(exact.groups, cubes, strict=True)}
    for g in noisy.groups:
        x = truth[g.group]
        assert g.best is not None and g.distance is not None
        assert (g.best >= 0).all() and (g.best == np.round(g.best)).all()
        if g.reconstructed:
            assert (g.lower == x).all()
        # forced cells hold the truth
        assert (g.lower[g.forced] == x[g.forced]).all()
    close = closeness(noisy, truth)
    assert close.certified == close.certified_right == noisy.reconstructed
    if epsilon == 1.0:
        assert noisy.reconstructed == 0  # what the noise buys
    if epsilon == 3000.0:  # scale 0.004: every count released as it is
        assert noisy.reconstructed == exact.reconstructed
        assert close.exact >= exact.reconstructed
    # against the groups the exact tables give back
    assert side.closeness.groups == exact.reconstructed
    assert side.closeness.certified_right == side.closeness.certified


def test_the_closest_table_is_no_farther_than_the_truth(
    census: tuple[np.ndarray, TableSet],
) -> None:
    cubes, tables = census
    release = release_tables(tables, epsilon=2.0, rng=np.random.default_rng(5))
    noisy = reconstruct(release.tables, group="block", noise=release.noise)
    for g, truth in zip(noisy.groups, cubes, strict=True):
        keeps = [(k, t) for k, t in zip(TABLES_2010, release.tables.tables, strict=True)]
        released = np.concatenate(
            [t.lower[t.codes[0] == g.group] for _, t in keeps]
        )  # the group's released cells, in the tables' order
        planted = np.concatenate([margins(truth[np.newaxis], k).ravel() for k, _ in keeps])
        assert g.distance is not None and g.distance <= np.abs(planted - released).sum()


def test_the_fit_and_the_screen_on_one_table() -> None:
    """A table of sex with its total, released as F 2, M -1, Total 3: the closest table
    is F 2, M 1 or F 3, M 0 (distance 2); an interval of [1, 3] on each cell admits
    several tables, and a published table only one."""
    cubes = np.asarray([[[[2]], [[1]]]])  # one block, 2 women and 1 man
    tables = publish(cubes, ((0,), ()))
    noisy = [np.asarray([2.0, -1.0, 3.0]), np.asarray([3.0])]
    released = TableSet(
        tuple(
            PublishedTable(**{**vars(t), "lower": v, "upper": v.copy()})
            for t, v in zip(tables.tables, noisy, strict=True)
        ),
        tables.dimensions,
    )
    result = reconstruct(released, group="block", noise=NoiseDistribution("discrete-laplace", 0.1))
    (g,) = result.groups
    assert g.distance == 2.0 and g.best is not None
    assert g.best.tolist() in ([2.0, 1.0], [3.0, 0.0])
    system = _system(TableSet(tables.tables, tables.dimensions))
    assert _two_tables(system, np.ones(len(system.lower), dtype=bool)) == 1


@settings(max_examples=40, deadline=None)
@given(
    people=st.lists(st.integers(0, 7), min_size=1, max_size=6),
    keeps=st.sets(st.sampled_from(((0, 1), (1, 2), (0, 2), (0,), (2,))), min_size=1),
    widths=st.lists(st.integers(0, 2), min_size=40, max_size=40),
    shifts=st.lists(st.integers(-2, 2), min_size=40, max_size=40),
)
def test_the_two_table_screen_agrees_with_the_brute_force(
    people: list[int],
    keeps: set[tuple[int, ...]],
    widths: list[int],
    shifts: list[int],
) -> None:
    """Random intervals around the released cells (holding the truth or not): None when
    no table lies in them all, 2 only when two do, 1 only when at most one does."""
    truth = np.bincount(people, minlength=8).reshape(1, 2, 2, 2)
    published = (*sorted(keeps), ())
    tables = publish(truth, published)
    cells = [(t, len(t)) for t in tables.tables]
    lows, highs, k = [], [], 0
    widened = []
    for t, n in cells:
        centre = t.lower + np.asarray(shifts[k : k + n])
        width = np.asarray(widths[k : k + n])
        low, high = np.maximum(0, centre - width), centre + width
        widened.append(
            PublishedTable(
                **{**vars(t), "lower": low, "upper": high, "state": np.full(n, "rounded")}
            )
        )
        lows.append(low)
        highs.append(high)
        k += n
    result = _screen(TableSet(tuple(widened), tables.dimensions))
    # brute force: every cube of up to 12 people whose tables lie in the intervals, as
    # tables of the published dimensions (a dimension no table has is not solved for)
    unused = tuple(1 + k for k in range(3) if not any(k in keep for keep in published))
    found: set[bytes] = set()
    for total in range(13):
        candidates = compositions(total, 8).reshape(-1, 2, 2, 2)
        ok = np.ones(len(candidates), dtype=bool)
        for keep, low, high in zip(published, lows, highs, strict=True):
            values = margins(candidates, keep).reshape(len(candidates), -1)
            ok &= ((values >= low) & (values <= high)).all(axis=1)
        kept = candidates[ok].sum(axis=unused) if unused else candidates[ok]
        found |= {c.tobytes() for c in kept}
    if result is None:
        assert not found
    elif result == 2:
        assert len(found) >= 2
    else:  # the two searched for are one: the attacker's intervals decide
        assert len(found) >= 1


def _screen(tables: TableSet) -> int | None:
    """:func:`_two_tables` of one block's tables (every table has the block)."""
    dims = {d: v for d, v in tables.dimensions.items() if d != "block"}
    alone = TableSet(
        tuple(
            PublishedTable(**{**vars(t), "dimensions": t.dimensions[1:], "codes": t.codes[1:]})
            for t in tables.tables
        ),
        dims,
    )
    system = _system(alone)
    return _two_tables(system, np.ones(len(system.lower), dtype=bool))


def test_fit_of_exact_counts_is_the_truth_where_the_tables_reconstruct(
    census: tuple[np.ndarray, TableSet],
) -> None:
    cubes, tables = census
    exact = reconstruct(tables, group="block", count_budget=0)
    for g, truth in zip(exact.groups, cubes, strict=True):
        if g.reconstructed:
            part = TableSet(
                tuple(
                    PublishedTable(
                        **{
                            **vars(t),
                            "dimensions": t.dimensions[1:],
                            "codes": tuple(c[t.codes[0] == g.group] for c in t.codes[1:]),
                            "lower": t.lower[t.codes[0] == g.group],
                            "upper": t.upper[t.codes[0] == g.group],
                            "state": t.state[t.codes[0] == g.group],
                            "shown": t.shown[t.codes[0] == g.group],
                        }
                    )
                    for t in tables.tables
                ),
                {d: v for d, v in tables.dimensions.items() if d != "block"},
            )
            system = _system(part)
            best, distance = _fit(system, np.ones(len(system.lower), dtype=bool))
            assert distance == 0 and (best == truth.ravel()).all()
            break


# -- the command line -------------------------------------------------------------------


def test_the_command_sets_the_dp_release_beside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cubes = blocks(8, sizes=(3, 8), ages=SMALL, races=3, seed=4)
    files = [str(write(t, tmp_path)) for t in publish(cubes).tables]
    argv = ["reconstruct", *files, "--group", "block", "--dp-epsilon", "1"]
    assert main(argv) == 1  # the exact tables' verdict
    out = capsys.readouterr().out
    assert "beside DP: the same tables released with discrete-laplace noise, epsilon 1" in out
    assert "groups certified at 99% confidence: 0 (0.0%)" in out
    assert main([*argv, "--json", "-"]) == 1
    dp = json.loads(capsys.readouterr().out)["dp"]
    assert dp["groups_certified"] == 0 and dp["cells_per_person"] == 13
    assert dp["scale"] == 13.0 and dp["mechanism"] == "discrete-laplace"
    assert dp["closest"]["groups"] > 0
    assert 0 <= dp["closest"]["records_right"] <= dp["closest"]["records"]


def test_dp_options_without_an_epsilon_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cubes = blocks(2, sizes=(3, 4), ages=SMALL, races=2, seed=4)
    files = [str(write(t, tmp_path)) for t in publish(cubes).tables]
    assert main(["reconstruct", *files, "--dp-delta", "1e-6"]) == 2
    assert capsys.readouterr().err == (
        "anonaudit: error: --dp-delta describes the DP release of --dp-epsilon E\n"
    )
    assert main(["reconstruct", *files, "--dp-epsilon", "0"]) == 2
    assert "--dp-epsilon must be a number of 1e-06 or more" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--dp-epsilon", "1e-300"], "--dp-epsilon must be a number of 1e-06 or more"),
        (["--dp-epsilon", "inf"], "--dp-epsilon must be a number of 1e-06 or more"),
        (["--dp-epsilon", "1", "--dp-confidence", "0"], "--dp-confidence must lie strictly"),
        (["--dp-epsilon", "1", "--dp-confidence", "1"], "--dp-confidence must lie strictly"),
        (["--dp-epsilon", "1", "--dp-delta", "2"], "--dp-delta must be 0 or lie in [1e-100, 1)"),
    ],
)
def test_dp_values_out_of_range_are_one_line_and_exit_2(
    extra: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0 is a value given, not a default (--dp-confidence 0 was read as 0.99), and an
    epsilon too small to calibrate was an internal error (an overflow)."""
    cubes = blocks(2, sizes=(3, 4), ages=SMALL, races=2, seed=4)
    files = [str(write(t, tmp_path)) for t in publish(cubes).tables]
    assert main(["reconstruct", *files, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"anonaudit: error: {said}") and err.count("\n") == 1


def test_a_class_table_is_released_over_every_combination(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Noise on the listed cells only would publish which combinations occur: the DP
    release of a class table covers every combination of its codes, zeros included, and
    a person is in one of its cells."""
    from test_reconstruct import class_table

    from anonaudit.sources.published import TableOptions, read_tables
    from anonaudit.tables.reconstruct import dense

    cubes = blocks(4, sizes=(3, 8), ages=SMALL, races=3, seed=9)
    path = class_table(cubes, tmp_path)
    listed = read_tables([str(path)], TableOptions())
    full = dense(listed, "block")
    (table,) = full.tables
    assert len(table) == 4 * 2 * 2 * 3 and len(listed.tables[0]) == (cubes > 0).sum()
    assert table.lower.sum() == cubes.sum() and (table.lower == 0).sum() == (cubes == 0).sum()
    release = release_tables(full, epsilon=1.0, rng=np.random.default_rng(3))
    assert release.cells_per_person == 1
    argv = ["reconstruct", str(path), "--group", "block", "--class-table", "--dp-epsilon", "1"]
    assert main([*argv, "--json", "-"]) == 1
    dp = json.loads(capsys.readouterr().out)["dp"]
    assert dp["cells_per_person"] == 1 and dp["groups_certified"] == 0


def test_beside_dp_releases_a_class_table_over_every_combination(tmp_path: Path) -> None:
    """From Python as from the command line: the reconstruction remembers that it read a
    class table, and its DP release covers every combination of the codes (the listed
    cells alone would publish which combinations occur)."""
    from test_reconstruct import class_table

    from anonaudit.sources.published import TableOptions, read_tables
    from anonaudit.tables.reconstruct import beside_dp, dense, reconstruct

    cubes = blocks(4, sizes=(3, 8), ages=SMALL, races=3, seed=9)
    listed = read_tables([str(class_table(cubes, tmp_path))], TableOptions())
    exact = reconstruct(listed, group="block", class_table=True)
    assert exact.class_table
    side = beside_dp(listed, exact, epsilon=1.0, rng=np.random.default_rng(3))
    (released,) = side.release.tables.tables
    (full,) = dense(listed, "block").tables
    assert len(released) == len(full) == 4 * 2 * 2 * 3 > len(listed.tables[0])
    assert not reconstruct(listed, group="block").class_table


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        (
            "dp_delta = 1e-6",
            "[tables] dp_delta describes the DP release of [tables] dp_epsilon\n",
        ),
        ("dp_epsilon = 0", "[tables] dp_epsilon must be a number of 1e-06 or more"),
        ("dp_epsilon = 1\ndp_delta = 2", "[tables] dp_delta must be 0 or lie in [1e-100, 1)"),
        ("dp_epsilon = 1\ndp_confidence = 1", "[tables] dp_confidence must lie strictly"),
    ],
)
def test_dp_values_from_a_policy_file_are_named_by_their_key(
    policy: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value the policy file gave is named as the file names it, not as a flag the
    user never typed."""
    cubes = blocks(2, sizes=(3, 4), ages=SMALL, races=2, seed=4)
    files = [str(write(t, tmp_path)) for t in publish(cubes).tables]
    config = tmp_path / "policy.toml"
    config.write_text(f"[tables]\n{policy}\n", encoding="utf-8")
    assert main(["reconstruct", *files, "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"anonaudit: error: {said}") and err.count("\n") == 1


# -- the cells a person is counted in (the release's L1 sensitivity) -------------------


def _counts(name: str, names: tuple[str, ...], cells: list[tuple[str, ...]]) -> PublishedTable:
    """A count table of ``cells`` (tuples of codes), each of count 1."""
    codes = tuple(np.array([cell[a] for cell in cells]) for a in range(len(names)))
    ones = np.ones(len(cells))
    return PublishedTable(
        name, "count", names, codes, ones, ones.copy(), np.full(len(cells), "published"),
        np.full(len(cells), "1"),
    )  # fmt: skip


def _brute_force(tables: TableSet) -> int:
    """The most cells one combination of leaves (a person) lies in, each counted."""
    names = sorted(tables.dimensions)
    most = 0
    for person in itertools.product(*(tables.dimensions[n].leaves for n in names)):
        leaf = dict(zip(names, person, strict=True))
        counted = 0
        for table in tables.tables:
            dims = [tables.dimensions[d] for d in table.dimensions]
            for i in range(len(table)):
                counted += all(
                    dims[a].leaves.index(leaf[d]) in dims[a].leaves_under(str(table.codes[a][i]))
                    for a, d in enumerate(table.dimensions)
                )
        most = max(most, counted)
    return most


@st.composite
def _table_sets(draw: st.DrawFn) -> TableSet:
    """Up to three dimensions of two levels, and up to three tables over some of them,
    each of some of its cells (sparse, codes of every level)."""
    dimensions = {}
    for d in range(draw(st.integers(1, 3))):
        parents: dict[str, str] = {}
        for g in range(draw(st.integers(1, 3))):
            parents[f"g{d}{g}"] = "T"
            for leaf in range(draw(st.integers(1, 3))):
                parents[f"l{d}{g}{leaf}"] = f"g{d}{g}"
        dimensions[f"d{d}"] = Dimension(f"d{d}", parents, "T")
    tables = []
    for t in range(draw(st.integers(1, 3))):
        names = tuple(
            draw(st.lists(st.sampled_from(sorted(dimensions)), min_size=1, max_size=3, unique=True))
        )
        every = list(itertools.product(*(dimensions[n].codes for n in names)))
        cells = draw(st.lists(st.sampled_from(every), min_size=1, max_size=12, unique=True))
        tables.append(_counts(f"t{t}", names, cells))
    return TableSet(tuple(tables), dimensions)


@settings(max_examples=80, deadline=None)
@given(_table_sets())
def test_the_cells_a_person_is_in_are_counted_exactly(tables: TableSet) -> None:
    """Equal to counting every person's cells, and never more than the bound the
    release used before (each table's most added; a product per table)."""
    exact = _cells_per_person(tables)
    assert exact == _brute_force(tables)
    assert exact <= sum(_cells_bound(table, tables) for table in tables.tables)


def test_two_tables_of_different_people_count_one_table_s_cells() -> None:
    """Cells of ages a1 and A in one table, b1 and B in another: nobody is in more than
    two of them. The bound added each table's most: 4, twice the noise needed."""
    age = Dimension("age", {"A": "T", "B": "T", "a1": "A", "a2": "A", "b1": "B"}, "T")
    tables = TableSet(
        (
            _counts("young", ("age",), [("a1",), ("A",)]),
            _counts("old", ("age",), [("b1",), ("B",)]),
        ),
        {"age": age},
    )
    release = release_tables(tables, epsilon=1.0, rng=np.random.default_rng(0))
    assert release.cells_per_person == 2 and release.noise.scale == pytest.approx(2.0)
    assert sum(_cells_bound(table, tables) for table in tables.tables) == 4


def test_a_cell_given_twice_counts_twice() -> None:
    """The reader refuses a cell given twice; a table made in Python may hold one, and
    both copies are released with their noise: a person in it is in both."""
    age = Dimension.flat("age", ["a", "b"])
    tables = TableSet((_counts("t", ("age",), [("a",), ("a",), ("Total",)]),), {"age": age})
    assert _cells_per_person(tables) == _brute_force(tables) == 3


def test_edge_designs_are_counted_at_least_as_they_are() -> None:
    """The helper's review: a table of no dimensions counts everyone in each of its
    cells (it counted 1 for two); one of no cells counts nobody (it crashed)."""
    age = Dimension.flat("age", ["a", "b"])
    total = PublishedTable(
        "total", "count", (), (), np.array([3.0, 3.0]), np.array([3.0, 3.0]),
        np.full(2, "published"), np.full(2, "3"),
    )  # fmt: skip
    empty = PublishedTable(
        "empty", "count", ("age",), (np.array([], dtype=str),), np.zeros(0), np.zeros(0),
        np.full(0, "published"), np.full(0, "0"),
    )  # fmt: skip
    by_age = _counts("by_age", ("age",), [("a",), ("Total",)])
    tables = TableSet((total, empty, by_age), {"age": age})
    assert _cells_per_person(tables) == _brute_force(tables) == 4
    assert _cells_bound(total, tables) == 2 and _cells_bound(empty, tables) == 0


def test_the_bound_counts_a_cell_given_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the combinations counted one by one, the bound of a table with a cell
    given twice counted it once: 1 cell for a person in 2 (the helper's review)."""
    age = Dimension.flat("age", ["a", "b"])
    tables = TableSet((_counts("t", ("age",), [("a",), ("a",)]),), {"age": age})
    monkeypatch.setattr(reconstruct_module, "_EXACT_COMBINATIONS", 1)
    assert _cells_per_person(tables) == 2


def test_a_release_of_several_populations_or_a_dimension_twice_is_refused() -> None:
    """A person is one leaf in each dimension only within one population (a woman in
    2020 may be a man in 2021), so several are refused, as reconstruct refuses them."""
    sex = Dimension.flat("sex", ["F", "M"])
    y2020 = replace(_counts("y2020", ("sex",), [("F",)]), population="2020")
    y2021 = replace(_counts("y2021", ("sex",), [("M",)]), population="2021")
    with pytest.raises(InputError, match="several populations"):
        release_tables(TableSet((y2020, y2021), {"sex": sex}), epsilon=1.0)
    twice = _counts("twice", ("sex", "sex"), [("F", "F"), ("M", "Total")])
    with pytest.raises(InputError, match="twice: names a dimension twice"):
        release_tables(TableSet((twice,), {"sex": sex}), epsilon=1.0)


def test_too_many_combinations_fall_back_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    age = Dimension("age", {"A": "T", "B": "T", "a1": "A", "a2": "A", "b1": "B"}, "T")
    tables = TableSet(
        (
            _counts("young", ("age",), [("a1",), ("A",)]),
            _counts("old", ("age",), [("b1",), ("B",)]),
        ),
        {"age": age},
    )
    monkeypatch.setattr(reconstruct_module, "_EXACT_COMBINATIONS", 2)
    assert _cells_per_person(tables) == 4  # at least the truth, 2
