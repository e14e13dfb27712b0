"""The local engine's DuckDB connection, its CSV fast path and its memory limit."""

from __future__ import annotations

import csv
import hashlib
import itertools
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import ReadOptions, Roles
from anonaudit.classtable import ClassTable
from anonaudit.engines import local
from anonaudit.engines.local import (
    Limits,
    build_class_table,
    connect,
    engine_limits,
    group_counts,
    limits,
    limits_in_force,
)
from anonaudit.errors import AnonauditError, OptionError, ParameterError
from anonaudit.sources.csv import CsvOptions, CsvSource


def test_the_engine_never_draws_duckdbs_progress_bar_on_stdout() -> None:
    # DuckDB prints a progress bar to stdout for long queries, which broke `--json -`.
    connection = connect()
    setting = connection.execute("SELECT current_setting('enable_progress_bar')").fetchone()
    assert setting == (False,)


# -- DuckDB's own CSV reader (the fast path) and bounded memory ----------------------

TRICKY_CSV = (
    "\ufeffzip,age,note,ward\r\n"
    '02134,30,"a\nb",A\r\n'
    '02134,30,"",A\r\n'
    "02134,,NA,\r\n"
    '02139,41,"say ""hi""",C\r\n'
    "02139,41,x,C\r\n"
    "\r\n"
    "02139, 41 ,x,C\r\n"
)


def _rows(table: ClassTable) -> list[tuple[object, ...]]:
    columns = [table.keys.column(name).to_pylist() for name in table.keys.column_names]
    return sorted(zip(*columns, table.counts.tolist(), strict=True), key=str)


def _by_pyarrow(
    path: Path, columns: list[str], na: tuple[str, ...], sep: str | None = None
) -> list[tuple[object, ...]]:
    source = CsvSource(path, CsvOptions(sep=sep, na_values=na))
    keys, counts, _ = group_counts(source.batches(columns), columns)
    rows = [keys.column(name).to_pylist() for name in columns]
    return sorted(zip(*rows, counts.tolist(), strict=True), key=str)


@pytest.fixture(params=["coded", "duckdb"])
def fast_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which fast path reads a local CSV file: pyarrow's threaded reader, coded (files up
    to ``_CODED_BYTES``), or DuckDB's own reader (larger files)."""
    if request.param == "duckdb":
        monkeypatch.setattr(local, "_CODED_BYTES", 0)
    path: str = request.param
    return path


def _taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The fast paths that give a result from now on, in order."""
    taken: list[str] = []
    for name in ("_read_coded", "_scan_csv"):
        original = getattr(local, name)

        def spy(*args: object, _original: Any = original, _name: str = name) -> object:
            result = _original(*args)
            if result is not None:
                taken.append(_name)
            return result

        monkeypatch.setattr(local, name, spy)
    return taken


@pytest.mark.parametrize("na", [("",), ("NA",), ("", "NA")])
def test_the_fast_csv_readers_give_the_same_class_table(
    tmp_path: Path, na: tuple[str, ...], fast_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tricky.csv"
    path.write_text(TRICKY_CSV, encoding="utf-8")
    columns = ["zip", "age", "note", "ward"]
    assert CsvSource(path, CsvOptions(na_values=na)).duckdb_scan() is not None
    taken = _taken(monkeypatch)
    table = anonaudit.load(path, Roles(columns[:2], columns[2:]), reading=ReadOptions(na_values=na))
    assert taken == [{"coded": "_read_coded", "duckdb": "_scan_csv"}[fast_path]]
    assert _rows(table) == _by_pyarrow(path, columns, na)
    assert table.sources[0].rows == 6
    assert table.sources[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_keys_in_chunks_are_audited_as_keys_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's result arrives in chunks of about 10^5 rows; the scan copies each column
    out of DuckDB's buffers, in one chunk. A class table whose keys come in chunks (the
    other engines' may) is audited as the same keys joined."""
    monkeypatch.setattr(local, "_CODED_BYTES", 0)
    rows = 300_000
    path = tmp_path / "many.csv"
    with path.open("w", encoding="utf-8") as out:
        out.write("person,region,disease\n")
        out.writelines(f"p{i % 250_000:06d},r{i % 7},d{(i * 31) % 5}\n" for i in range(rows))
    taken = _taken(monkeypatch)
    roles = Roles(["person", "region"], ["disease"])
    whole = anonaudit.load(path, roles)
    assert taken == ["_scan_csv"]
    assert all(column.num_chunks == 1 for column in whole.keys.columns)
    table = ClassTable(
        whole.quasi_identifiers,
        whole.sensitive,
        pa.Table.from_batches(whole.keys.to_batches(max_chunksize=100_000)),
        whole.counts,
        whole.sources,
    )
    assert table.keys.column("person").num_chunks > 1
    options = anonaudit.AuditOptions(policy=anonaudit.Policy(k=2, l=2, t=0.3))
    chunked, joined = (anonaudit.audit_table(t, options) for t in (table, whole))
    for result in (chunked, joined):
        assert result.k_anonymity.violating_records > 0 and result.passed is False
    k = [
        (r.k, r.classes, r.histogram, r.violating_records)
        for r in (chunked.k_anonymity, joined.k_anonymity)
    ]
    assert k[0] == k[1]
    diverse = [
        (d.distinct, d.entropy, d.recursive_c, d.violating_records)
        for d in (chunked.l_diversity["disease"], joined.l_diversity["disease"])
    ]
    assert diverse[0] == diverse[1]
    assert np.array_equal(
        chunked.t_closeness["disease"].per_class, joined.t_closeness["disease"].per_class
    )
    assert chunked.k_anonymity.failing.head(5).equals(joined.k_anonymity.failing.head(5))
    assert chunked.suppression is not None and joined.suppression is not None
    assert chunked.suppression.keys.equals(joined.suppression.keys)


def test_parquet_files_counted_by_their_codes_give_duckdbs_table(
    tmp_path: Path, fast_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Parquet text arrives dictionary-coded (each row group its own dictionary); typed
    # columns are coded as they are turned into text. Counted by those codes, or by
    # DuckDB: the same table, whatever the files' dictionaries and nulls.
    rng = np.random.default_rng(11)
    frames = []
    for index in range(3):
        n = 4000
        frame = pa.table(
            {
                "zip": pa.array(rng.choice(["02134", "02139", None, f"0{index}000"], n).tolist()),
                "age": pa.array(rng.integers(0, 800, n)),
                "ward": pa.array(rng.choice([f"w{i}" for i in range(30)], n).tolist()),
                "sa": pa.array(rng.choice(["flu", "cold", "", None][: 2 + index], n).tolist()),
            }
        )
        pq.write_table(frame, tmp_path / f"part-{index}.parquet", row_group_size=2000)
        frames.append(frame)
    taken = _taken(monkeypatch)
    counted = []
    original = local._held_coded

    def spy(batches: Any, columns: Any, integers: Any) -> Any:
        held, countable, typed = original(batches, columns, integers)
        counted.append(countable)
        return held, countable, typed

    monkeypatch.setattr(local, "_held_coded", spy)
    table = anonaudit.load(tmp_path, Roles(["zip", "age", "ward"], ["sa"]))
    assert taken == [] and counted == [fast_path == "coded"]
    expected = (
        pa.concat_tables(frames)
        .group_by(["zip", "age", "ward", "sa"])
        .aggregate([([], "count_all")])
        .to_pylist()
    )
    assert _rows(table) == sorted(
        ((r["zip"], str(r["age"]), r["ward"], r["sa"], r["count_all"]) for r in expected),
        key=str,
    )
    assert [source.rows for source in table.sources[0].files] == [4000] * 3
    fresh = ClassTable(table.quasi_identifiers, table.sensitive, table.keys, table.counts)
    assert _classes(table) == _classes(fresh)
    assert table.sensitive_counts("sa").values == fresh.sensitive_counts("sa").values


def test_codes_count_only_where_they_pay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Codes pay where columns repeat their values but not their combinations (a large
    # class table); a column with a value of its own in most records, or combinations
    # that repeat (a small class table), is left to DuckDB. Either way, one table.
    pays, unique, repeated = tmp_path / "pays.csv", tmp_path / "unique.csv", tmp_path / "few.csv"
    pays.write_text("q,r,s\n" + "".join(f"{i % 40},{i // 40},{i % 3}\n" for i in range(3000)))
    unique.write_text("q,r,s\n" + "".join(f"{i % 2900},{i % 7},{i % 3}\n" for i in range(3000)))
    repeated.write_text("q,r,s\n" + "".join(f"{i % 40},{i % 2},{i % 3}\n" for i in range(3000)))
    taken = _taken(monkeypatch)
    tables = [anonaudit.load(path, Roles(["q", "r"], ["s"])) for path in (pays, unique, repeated)]
    assert taken == ["_read_coded", "_scan_csv", "_scan_csv"]
    assert [table.rows for table in tables] == [3000, 3000, 3000]
    assert [len(table.classes) for table in tables] == [3000, 3000, 40]


_VALUE = st.one_of(
    st.none(),
    st.text(alphabet=st.sampled_from(list('ab ,"\n\r\tNA\u00e9\u4e2d')), max_size=5),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    records=st.lists(st.tuples(_VALUE, _VALUE, _VALUE), min_size=1, max_size=40),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    na=st.sampled_from([("",), ("NA",), ("", "NA")]),
)
def test_the_coded_read_counts_what_the_streaming_reader_counts(
    tmp_path_factory: pytest.TempPathFactory,
    records: list[tuple[str | None, ...]],
    quoting: int,
    na: tuple[str, ...],
) -> None:
    # Any values, quoted any way, with the null markers given: the whole-file read of
    # pyarrow's threaded reader, counted by codes, equals the streaming reader's table.
    path = tmp_path_factory.mktemp("coded") / "records.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, quoting=quoting)
        writer.writerow(["q1", "q2", "s"])
        writer.writerows([["" if v is None else v for v in record] for record in records])
    columns = ["q1", "q2", "s"]
    source = CsvSource(path, CsvOptions(sep=",", na_values=na))
    try:
        expected = _by_pyarrow(path, columns, na, sep=",")
    except AnonauditError:  # the streaming reader refuses it: so must the coded read
        assert source.read_coded(columns) is None
        return
    coded = source.read_coded(columns)
    assert coded is not None
    table = ClassTable.from_coded(coded, quasi_identifiers=columns[:2], sensitive=columns[2:])
    assert _rows(table) == expected
    fresh = ClassTable(table.quasi_identifiers, table.sensitive, table.keys, table.counts)
    assert _classes(table) == _classes(fresh)
    ours, theirs = table.sensitive_counts("s"), fresh.sensitive_counts("s")
    assert ours.values == theirs.values and ours.totals.tolist() == theirs.totals.tolist()
    for name in columns[:2]:
        assert table.distinct(name) == fresh.distinct(name)


def _classes(t: ClassTable) -> list[tuple[object, ...]]:
    keys = t.classes.keys.to_pylist()
    return sorted(
        ((*k.values(), int(s)) for k, s in zip(keys, t.classes.sizes, strict=True)), key=str
    )


def test_records_coded_by_several_dictionaries_are_counted_by_value() -> None:
    # Chunks with dictionaries of their own, values no record holds (a slice keeps its
    # whole dictionary), nulls; and columns too wide to pack into one integer.
    first = pa.array(["b", "a", None, "b"]).dictionary_encode()
    second = pa.array(["z", "a", "b", "c"]).dictionary_encode().slice(1, 2)
    sa = pa.chunked_array(
        [
            pa.array(["x", "y", "x", "x"]).dictionary_encode(),
            pa.array(["y", None]).dictionary_encode(),
        ]
    )
    records = pa.table({"q": pa.chunked_array([first, second]), "s": sa})
    table = ClassTable.from_coded(records, quasi_identifiers=["q"], sensitive=["s"])
    assert _rows(table) == sorted(
        [("a", "y", 2), ("b", None, 1), ("b", "x", 2), (None, "x", 1)], key=str
    )
    assert table.distinct("q") == 3 and table.sensitive_counts("s").values == ("x", "y", None)
    assert _classes(table) == sorted([("a", 2), ("b", 3), (None, 1)], key=str)
    # Chunks whose codes are of different integer types (the engine narrows them).
    mixed = {
        "q": [
            pa.DictionaryArray.from_arrays(pa.array([0, 1, 1], pa.int8()), pa.array(["u", "v"])),
            pa.DictionaryArray.from_arrays(pa.array([1, None], pa.int32()), pa.array(["v", "w"])),
        ]
    }
    mixed_table = ClassTable.from_coded(mixed, quasi_identifiers=["q"])
    assert _rows(mixed_table) == sorted([("u", 1), ("v", 2), ("w", 1), (None, 1)], key=str)
    wide = {
        f"c{i}": pa.array([f"{i}-{j % 3}-{j}" for j in range(4000)]).dictionary_encode()
        for i in range(6)
    }
    wide["c5"] = pa.array([str(j % 2) for j in range(4000)]).dictionary_encode()
    # 4000^5 * 2 codes: more than 2^62, so the records are grouped column by column.
    table = ClassTable.from_coded(pa.table(wide), quasi_identifiers=[f"c{i}" for i in range(6)])
    assert len(table) == 4000 and table.counts.tolist() == [1] * 4000
    assert _classes(table) == _classes(
        ClassTable(table.quasi_identifiers, (), table.keys, table.counts)
    )


def _per_class(table: ClassTable, sa: str) -> list[tuple[object, ...]]:
    """Each class's QI values, size and SA distribution, in the order of the keys."""
    classes, counts = table.classes, table.sensitive_counts(sa)
    return sorted(
        (
            *key.values(),
            int(classes.sizes[c]),
            sorted(
                (counts.values[v], int(n))
                for v, n in zip(
                    counts.codes[counts.class_ids == c],
                    counts.counts[counts.class_ids == c],
                    strict=True,
                )
            ),
        )
        for c, key in enumerate(classes.keys.to_pylist())
    )


def test_a_unique_quasi_identifier_after_another_is_grouped_by_its_rows() -> None:
    # Counted by codes, the rows come in order of the first QI's values: the codes of a
    # second QI that is unique per row are not the rows' numbers. Each class's size and
    # SA distribution belong to its own QI values (they were another row's: an entropy
    # l of 0.25 and an alpha of 2 for classes of one value).
    records = [("F", "z3", "x"), ("F", "z1", "y"), ("M", "z2", "w"), ("M", "z4", "v")]
    records.append(records[0])
    coded = pa.table(
        {
            name: pa.array([r[i] for r in records]).dictionary_encode()
            for i, name in enumerate(["sex", "id", "s"])
        }
    )
    table = ClassTable.from_coded(coded, quasi_identifiers=["sex", "id"], sensitive=["s"])
    fresh = ClassTable(table.quasi_identifiers, table.sensitive, table.keys, table.counts)
    assert _per_class(table, "s") == _per_class(fresh, "s")
    options = anonaudit.AuditOptions(policy=anonaudit.Policy(k=2, t=0.5, alpha=0.9))
    report = anonaudit.audit_table(table, options)
    assert report.l_diversity["s"].entropy == 1.0 and report.disclosure["s"].alpha == 1.0
    assert report.t_closeness["s"].t == anonaudit.audit_table(fresh, options).t_closeness["s"].t


_CODED_VALUE = st.one_of(st.none(), st.sampled_from(["*", "a", "b", "c"]))


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(st.tuples(_CODED_VALUE, _CODED_VALUE, _CODED_VALUE), min_size=1, max_size=30),
    seed=st.integers(0, 2**16),
)
def test_a_coded_tables_keys_are_taken_as_text_only_when_read(
    records: list[tuple[str | None, ...]], seed: int
) -> None:
    # A table counted by codes holds its keys as codes: what an audit asks of them (null
    # counts, suppressed records, first values, subsets, classes) is read from the codes
    # and equals what the keys as text give; the text is taken when a listing reads it.
    columns = ["q1", "q2", "s"]
    records = [*records, ("a", "b", "c")]  # a record without nulls, whatever is drawn
    coded = pa.table(
        {
            name: pa.array([r[i] for r in records], pa.string()).dictionary_encode()
            for i, name in enumerate(columns)
        }
    )
    table = ClassTable.from_coded(coded, quasi_identifiers=columns[:2], sensitive=columns[2:])
    twin = ClassTable.from_coded(coded, quasi_identifiers=columns[:2], sensitive=columns[2:])
    fresh = ClassTable(twin.quasi_identifiers, twin.sensitive, twin.keys, twin.counts)
    whole = fresh.keys.to_pylist().index({"q1": "a", "q2": "b", "s": "c"})
    taken: list[int] = []
    real = type(table.__dict__["_pending_keys"][0]).table

    def counted(self: Any, rows: Any) -> pa.Table:
        taken.append(len(rows))
        return real(self, rows)

    # A subset made before the classes are known (records with a null QI dropped) finds
    # its classes, distributions and distinct values from the codes too.
    third = ClassTable.from_coded(coded, quasi_identifiers=columns[:2], sensitive=columns[2:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(table.__dict__["_pending_keys"][0]), "table", counted)
        known = third.without_null_quasi_identifiers()
        known_classes = (known.classes.sizes.tolist(), known.classes.index.tolist())
        known_counts = known.sensitive_counts("s")
        known_distinct = [known.distinct(name) for name in columns[:2]]
        nulls = table.null_counts()
        kept, suppressed = table.without_suppressed("*")
        every = np.arange(len(table))
        firsts = {name: table._values_at(name, every).to_pylist() for name in columns}
        drop = np.random.default_rng(seed).random(len(table.classes)) < 0.5
        drop[table.classes.index[whole]] = False  # the record without nulls stays
        rest = table.without_classes(drop)
        audited = rest.without_null_quasi_identifiers()
        report = anonaudit.audit_table(
            audited, anonaudit.AuditOptions(policy=anonaudit.Policy(k=2, l=2))
        )
        assert report.k_anonymity.classes == len(audited.classes) > 0
        assert not taken
    assert table.keys.to_pylist() == fresh.keys.to_pylist()
    expected = fresh.without_null_quasi_identifiers()
    expected = ClassTable(
        expected.quasi_identifiers, expected.sensitive, expected.keys, expected.counts
    )
    assert known_classes == (expected.classes.sizes.tolist(), expected.classes.index.tolist())
    assert known_distinct == [expected.distinct(name) for name in columns[:2]]
    theirs_counts = expected.sensitive_counts("s")
    assert known_counts.values == theirs_counts.values
    for field in ("class_ids", "codes", "counts", "totals"):
        assert getattr(known_counts, field).tolist() == getattr(theirs_counts, field).tolist()
    assert known.keys.to_pylist() == expected.keys.to_pylist()
    assert nulls == fresh.null_counts()
    theirs, their_suppressed = fresh.without_suppressed("*")
    assert suppressed == their_suppressed and _rows(kept) == _rows(theirs)
    assert firsts == {name: fresh.keys.column(name).to_pylist() for name in columns}
    assert _rows(rest) == _rows(fresh.without_classes(drop))
    assert rest.classes.keys.to_pylist() == fresh.without_classes(drop).classes.keys.to_pylist()
    assert table.classes.keys.to_pylist() == fresh.classes.keys.to_pylist()


@pytest.mark.parametrize(
    "text",
    [
        'a,b\n1, "x"\n',  # white space before a quote: DuckDB would drop it
        'a,b\n"x" ,1\n',
        '"a\nb",c\n1,2\n',  # a header name spanning lines
        "a\nx\n\ny\n",  # one column: DuckDB would read the blank line as a null
    ],
)
def test_csv_files_duckdb_would_read_otherwise_take_the_pyarrow_reader(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "odd.csv"
    path.write_bytes(text.encode())
    assert CsvSource(path, CsvOptions()).duckdb_scan() is None


@pytest.mark.parametrize("offset", [-2, -1, 0, 1])
def test_the_quote_check_searches_a_window_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offset: int
) -> None:
    """The check that sends a file to DuckDB's reader searches it a page-aligned window
    at a time (a file mapped whole counted its size in the process's memory): white
    space touching a quote is found however it straddles two windows, and a file whose
    only quote lies windows away is still checked."""
    import mmap

    import anonaudit.sources.csv as csv_source

    monkeypatch.setattr(csv_source, "_SCAN_WINDOW", mmap.PAGESIZE)
    head = "a,b,c\n1,x,w\n"
    filler = "1," + "y" * (3 * mmap.PAGESIZE - len(head) - 4 + offset) + ","
    path = tmp_path / "straddle.csv"
    path.write_bytes((head + filler + ' "z"\n').encode())
    boundary = path.read_bytes().index(b' "')
    assert boundary == 3 * mmap.PAGESIZE - 1 + offset  # offset 0: across a window's end
    assert CsvSource(path, CsvOptions()).duckdb_scan() is None
    # The same file without the space: its quotes agree, DuckDB may read it.
    path.write_bytes((head + filler + '"z"\n').encode())
    assert CsvSource(path, CsvOptions()).duckdb_scan() is not None


@settings(max_examples=80, deadline=None)
@given(
    pages=st.integers(0, 2),
    lines=st.integers(-3, 3),
    tail=st.text(alphabet='a, \t\f"\n\r', max_size=40),
    long_line=st.booleans(),
)
@example(pages=1, lines=0, tail=' "z"\n', long_line=False)  # a line break ends a window
@example(pages=1, lines=-1, tail='1,"z" \n', long_line=False)
@example(pages=2, lines=0, tail='\n "z"', long_line=True)  # a line longer than a window
@example(pages=1, lines=0, tail='\r "z"\r', long_line=True)  # lines ended by \r alone
def test_the_touching_quote_search_finds_what_a_regular_expression_on_the_whole_file_does(
    tmp_path_factory: pytest.TempPathFactory, pages: int, lines: int, tail: str, long_line: bool
) -> None:
    """White space touching a quote, followed from each quote in windows of whole lines
    (a page here), is found exactly where a regular expression over the whole file
    finds it: at the file's start and end, after a line break ending a window, across a
    line longer than a window, after a carriage return or a separator."""
    import mmap
    import re

    import anonaudit.sources.csv as csv_source

    size = max(pages * mmap.PAGESIZE + 4 * lines, 0)  # lines of 4 bytes end pages
    body = ("a" * size if long_line else "a,b\n" * (size // 4)) + tail
    assume(body)  # an empty file is not mapped: it is no CSV file
    path = tmp_path_factory.mktemp("quotes") / "lines.csv"
    path.write_bytes(body.encode())
    pattern = re.compile(rb'(?:\A|[\r\n,])[ \t\f\v]+"|"[ \t\f\v]+(?:\Z|[\r\n,])')
    with pytest.MonkeyPatch.context() as patch, path.open("rb") as handle:
        patch.setattr(csv_source, "_SCAN_WINDOW", mmap.PAGESIZE)
        patch.setattr(csv_source, "_QUOTE_WINDOW", mmap.PAGESIZE)
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            windowed = csv_source._touching_quote(data, b",")
    assert windowed == (pattern.search(body.encode()) is not None)


@pytest.mark.parametrize("where", ["header", "record"])
def test_a_line_too_long_to_search_keeps_the_file_from_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A line longer than the quote check looks at (a hostile file of one huge line):
    the check reads no more of it than that and says no, so the streaming reader (whose
    errors name lines) reads the file; it is audited all the same."""
    import mmap

    import anonaudit.sources.csv as csv_source

    monkeypatch.setattr(csv_source, "_SCAN_WINDOW", mmap.PAGESIZE)
    monkeypatch.setattr(csv_source, "_QUOTE_WINDOW", mmap.PAGESIZE)
    monkeypatch.setattr(csv_source, "_LONGEST_LINE", 4 * mmap.PAGESIZE)
    long = "x" * (5 * mmap.PAGESIZE)
    if where == "header":
        text = f'a,"b {long}"\n1,2\n1,2\n'
        columns = ["a", f"b {long}"]
    else:
        text = f'a,b\n1,"x "" y"\n1,"{long}"\n'
        columns = ["a", "b"]
    path = tmp_path / "long.csv"
    path.write_text(text, encoding="utf-8")
    assert CsvSource(path, CsvOptions()).duckdb_scan() is None
    table = anonaudit.load(path, Roles(columns[:1], columns[1:]))
    assert table.rows == 2


def test_several_csv_files_count_their_own_records(tmp_path: Path) -> None:
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("q,s\n1,x\n1,y\n2,x\n", encoding="utf-8")
    second.write_text("s;q\nx;1\n", encoding="utf-8")
    table = anonaudit.load([first, second], Roles(["q"], ["s"]))
    assert _rows(table) == [("1", "x", 2), ("1", "y", 1), ("2", "x", 1)]
    assert [source.rows for source in table.sources] == [3, 1]


def test_an_identifier_is_named_before_the_scan(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("id,sex\n" + "".join(f"{i},{'FM'[i % 2]}\n" for i in range(2000)))
    with caplog.at_level(logging.WARNING, logger="anonaudit"):
        table = anonaudit.load(path, Roles(["id", "sex"]))
    assert [record.getMessage().split("(")[0] for record in caplog.records] == [
        "anonaudit: warning: quasi-identifier 'id' looks like an identifier "
    ]
    # Found unique by DuckDB, the column is not hashed again: the classes are the rows.
    fresh = ClassTable(table.quasi_identifiers, table.sensitive, table.keys, table.counts)
    assert table.classes.index.tolist() == list(range(2000)) == fresh.classes.index.tolist()
    assert table.classes.keys.equals(fresh.classes.keys)
    assert table.classes.sizes.tolist() == fresh.classes.sizes.tolist()


@pytest.mark.parametrize("limit", [None, "64MB"])
@pytest.mark.parametrize(("sample", "collisions"), [(1 << 16, 64), (3, 64), (3, 0), (1, 0)])
@given(values=st.lists(st.one_of(st.none(), st.sampled_from("abcdefgh")), max_size=8))
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_column_is_unique_exactly_as_its_values_say(
    monkeypatch: pytest.MonkeyPatch,
    limit: str | None,
    sample: int,
    collisions: int,
    values: list[str | None],
) -> None:
    # Hashes of rows spread over the column, then of all, then DuckDB's GROUP BY (repeated
    # hashes beyond the collisions compared, or a memory limit): one answer, the values'.
    monkeypatch.setattr(local, "_HASH_SAMPLE", sample)
    monkeypatch.setattr(local, "_HASH_COLLISIONS", collisions)
    column = pa.chunked_array([values[:3], values[3:]], type=pa.string())
    with limits_in_force(anonaudit.EngineOptions(memory_limit=limit)):
        connection = connect()
        try:
            assert local._unique(connection, column) == (len(set(values)) == len(values))
        finally:
            connection.close()


@pytest.mark.parametrize("fast", [True, False])
def test_the_aggregation_spills_to_disk_under_a_small_memory_limit(
    tmp_path: Path, fast: bool
) -> None:
    # 400,000 distinct (QI, SA) combinations need far more than 16 MB of hash table:
    # DuckDB must spill to --temp-dir to finish (an out-of-memory error otherwise).
    rows = 400_000
    ids = np.arange(rows)
    table = pa.table(
        {
            "id": pa.array([f"person-{i:09d}" for i in ids]),
            "group": pa.array((ids % 7).astype(str)),
            "sa": pa.array((ids % 3).astype(str)),
        }
    )
    path = tmp_path / "unique.csv"
    pacsv.write_csv(table, path, pacsv.WriteOptions(quoting_style="none"))
    spill = tmp_path / "spill"
    spill.mkdir()
    source: object = path if fast else pa.Table.from_pandas(table.to_pandas())
    engine = anonaudit.EngineOptions(memory_limit="16MB", temp_dir=str(spill))
    result = anonaudit.load(source, Roles(["id", "group"], ["sa"]), engine=engine)
    assert limits() == Limits()  # in force for that load only
    assert result.rows == rows and len(result) == rows
    assert int(result.counts.max()) == 1


@pytest.mark.parametrize("limit", [None, "256MB"])
def test_whole_numbers_of_one_parquet_file_are_grouped_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str | None
) -> None:
    # A unique integer id (codes do not pay) in one Parquet file reaches DuckDB as
    # integers, of whatever width, nulls and negatives included; with a memory limit
    # too (no codes held). The class table holds their text, as the reader makes it.
    rng = np.random.default_rng(5)
    n = 30_000
    small = rng.integers(0, 200, n).astype(np.uint8)
    table = pa.table(
        {
            "id": pa.array(rng.permutation(n) - n // 2, pa.int64()),
            "small": pa.array(small, mask=small > 190),
            "big": pa.array(rng.integers(2**31, 2**32 - 1, n, dtype=np.uint32)),
            "sa": pa.array(rng.choice(["flu", "cold", None], n).tolist()),
        }
    )
    path = tmp_path / "ids.parquet"
    pq.write_table(table, path, row_group_size=8_000)
    reached: list[pa.Schema] = []
    original = local.group_counts

    def spy(batches: Any, columns: Any, **kwargs: Any) -> Any:
        batches = iter(batches)
        first = next(batches)
        reached.append(first.schema)
        return original(itertools.chain([first], batches), columns, **kwargs)

    monkeypatch.setattr(local, "group_counts", spy)
    roles = Roles(["id", "small", "big"], ["sa"])
    loaded = anonaudit.load(path, roles, engine=anonaudit.EngineOptions(memory_limit=limit))
    assert [reached[0].field(name).type for name in ("id", "small", "big")] == [
        pa.int64(),
        pa.uint8(),
        pa.uint32(),
    ]
    expected = table.group_by(["id", "small", "big", "sa"]).aggregate([([], "count_all")])
    text = [pc.cast(expected.column(name), pa.string()) for name in ("id", "small", "big")]
    assert _rows(loaded) == sorted(
        zip(
            *(column.to_pylist() for column in text),
            expected.column("sa").to_pylist(),
            expected.column("count_all").to_pylist(),
            strict=True,
        ),
        key=str,
    )
    # The same records in a folder of two files, the id as int64 in one and int32 in the
    # other: integers too, the same table.
    folder = tmp_path / "lake"
    folder.mkdir()
    pq.write_table(table.slice(0, n // 2), folder / "a.parquet")
    narrow = table.column("id").slice(n // 2).cast(pa.int32())
    pq.write_table(table.slice(n // 2).set_column(0, "id", narrow), folder / "b.parquet")
    reached.clear()
    assert _rows(anonaudit.load(folder, roles)) == _rows(loaded)
    assert reached and reached[0].field("id").type == pa.int64()
    # A uint64 id (beyond int64) is read as text, as every other type.
    wide = table.set_column(
        0, "id", pa.array(rng.permutation(n).astype(np.uint64) + np.uint64(2**63))
    )
    pq.write_table(wide, tmp_path / "wide.parquet")
    reached.clear()
    unsigned = anonaudit.load(tmp_path / "wide.parquet", roles)
    assert str(2**63) in {row[0] for row in _rows(unsigned)} and len(unsigned) == n
    assert reached and pa.types.is_dictionary(reached[0].field("id").type)
    assert reached[0].field("small").type == pa.uint8()


def test_memory_limit_and_temp_dir_are_checked(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="memory_limit must be a size"):
        anonaudit.EngineOptions(memory_limit="lots")
    with pytest.raises(ParameterError, match="not a writable directory"):
        engine_limits(anonaudit.EngineOptions(temp_dir=str(tmp_path / "absent")))
    assert limits() == Limits()


def test_the_limits_hold_in_their_block_and_context_only(tmp_path: Path) -> None:
    engine = anonaudit.EngineOptions(memory_limit="64MB", temp_dir=str(tmp_path))
    with limits_in_force(engine):
        assert limits() == Limits("64MB", str(tmp_path))
        connection = connect()  # every aggregation in the block takes them
        found = connection.execute("SELECT current_setting('memory_limit')").fetchone()
        connection.close()
        assert found is not None and found[0].replace(" ", "") in ("61.0MiB", "64.0MB", "61.0MB")
    assert limits() == Limits()
    connection = connect()
    found = connection.execute("SELECT current_setting('memory_limit')").fetchone()
    connection.close()
    assert found is not None and found[0].replace(" ", "") not in ("61.0MiB", "64.0MB", "61.0MB")


def test_a_subset_equals_the_table_of_its_rows() -> None:
    # ClassTable.subset reuses the parent's classes and codes (suppression re-audits).
    rng = np.random.default_rng(7)
    n = 3000
    frame = pa.table(
        {
            "a": pa.array(rng.choice(["x", "y", "z", None], n).tolist()),
            "b": pa.array(rng.choice(["1", "2", "3"], n).tolist()),
            "s": pa.array(rng.choice(["p", "q", "r", "t"], n).tolist()),
            "count": pa.array(rng.integers(1, 5, n)),
        }
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["a", "b"], sensitive=["s"])
    table.classes, table.sensitive_counts("s")  # known before the subset is taken
    keep = rng.random(len(table)) < 0.3
    keep[np.flatnonzero(table.keys.column("s").to_numpy(zero_copy_only=False) == "t")] = False
    subset = table.subset(keep)
    fresh = ClassTable(table.quasi_identifiers, table.sensitive, subset.keys, subset.counts)
    assert _rows(subset) == _rows(fresh)

    def classes(t: ClassTable) -> list[tuple[object, ...]]:
        keys = t.classes.keys.to_pylist()
        return sorted(
            ((*k.values(), int(s)) for k, s in zip(keys, t.classes.sizes, strict=True)), key=str
        )

    assert classes(subset) == classes(fresh)
    ours, theirs = subset.sensitive_counts("s"), fresh.sensitive_counts("s")
    assert ours.values == theirs.values == ("p", "q", "r")
    assert ours.totals.tolist() == theirs.totals.tolist()
    distinct = ours.distinct_per_class().tolist(), theirs.distinct_per_class().tolist()
    assert sorted(distinct[0]) == sorted(distinct[1])


def test_a_path_duckdb_would_read_as_a_glob_takes_the_pyarrow_reader(tmp_path: Path) -> None:
    (tmp_path / "a1.csv").write_text("q,s\n1,x\n", encoding="utf-8")
    path = tmp_path / "a[1].csv"
    path.write_text("q,s\n2,y\n", encoding="utf-8")
    source = CsvSource(path, CsvOptions())
    assert source.duckdb_scan() is None
    table = build_class_table([source], quasi_identifiers=["q"], sensitive=["s"])
    assert _rows(table) == [("2", "y", 1)]
