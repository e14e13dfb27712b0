"""The second pass over the rows: ``--records-out`` and the transformed-table writer."""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import anonaudit.engines.records as rows_module
from anonaudit import Analyses, AuditOptions, PopulationOptions, ReadOptions, Roles, audit
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.cli.config import read_config
from anonaudit.engines.records import (
    KeyIndex,
    class_ids,
    record_batches,
    write_records,
    write_transformed,
)
from anonaudit.errors import InputError, MalformedFileError, ParameterError
from anonaudit.sources import open_inputs

CLINIC = Path(__file__).resolve().parent.parent / "sample_data" / "clinic.csv"


def _write_csv(path: Path, header: list[str], rows: list[list[str]], sep: str = ",") -> Path:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, delimiter=sep, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


@pytest.fixture
def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """CSV files read in blocks of 64 bytes: a handful of records per batch."""
    monkeypatch.setattr("anonaudit.sources.csv._BLOCK_BYTES", 64)


# -- the lookup ---------------------------------------------------------------------------


def test_lookup_nulls_match_nulls_and_unknown_tuples_get_minus_one() -> None:
    keys = pa.table({"zip": ["1", "2", None, None], "sex": ["F", "M", "F", None]})
    batch = pa.record_batch(
        {"zip": [None, "2", None, "1", "3", "1"], "sex": [None, "M", "F", "M", "F", "F"]}
    )
    assert class_ids(batch, ["zip", "sex"], keys).tolist() == [3, 1, 2, -1, -1, 0]


def test_lookup_recodes_the_records_not_the_keys() -> None:
    keys = pa.table({"age": ["20-29", "30-39"], "zip": ["021*", None]})
    recode = {"age": {"23": "20-29", "31": "30-39"}, "zip": {"02139": "021*"}}
    batch = pa.record_batch(
        {"age": ["23", "31", "31", "40"], "zip": ["02139", None, "02139", None]}
    )
    # "40" is not in the recoding and stays "40", which no key has.
    assert class_ids(batch, ["age", "zip"], keys, recode).tolist() == [0, 1, -1, -1]


_value = st.one_of(st.none(), st.sampled_from(["", "a", "b", "=1", "7"]))


@settings(max_examples=60, deadline=None)
@given(
    key_rows=st.lists(st.tuples(_value, _value, _value), max_size=20, unique=True),
    records=st.lists(st.tuples(_value, _value, _value), max_size=40),
    narrow=st.booleans(),
)
def test_lookup_agrees_with_a_dictionary(
    key_rows: list[tuple[str | None, ...]],
    records: list[tuple[str | None, ...]],
    narrow: bool,
) -> None:
    """Against a Python dict of tuples (None == None), with and without re-numbering."""
    names = ["a", "b", "c"]
    keys = pa.table(
        {n: pa.array([r[i] for r in key_rows], pa.string()) for i, n in enumerate(names)}
    )
    batch = pa.table(
        {n: pa.array([r[i] for r in records], pa.string()) for i, n in enumerate(names)}
    )
    old_bound = rows_module._KEY_BOUND
    # A bound of 4 forces the packed prefixes to be re-numbered before every column.
    rows_module._KEY_BOUND = 4 if narrow else old_bound
    try:
        found = KeyIndex(keys, names).lookup(batch).tolist()
    finally:
        rows_module._KEY_BOUND = old_bound
    where = {row: position for position, row in enumerate(key_rows)}
    assert found == [where.get(record, -1) for record in records]


# -- records out ----------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    records=st.lists(st.tuples(_value, st.sampled_from(["x", "y"])), min_size=1, max_size=30),
    drop=st.booleans(),
)
def test_records_of_a_frame_carry_their_class_size(
    tmp_path_factory: pytest.TempPathFactory, records: list[tuple[str | None, str]], drop: bool
) -> None:
    """fk is the number of records sharing the tuple (empty when dropped for a null)."""
    frame = pd.DataFrame(records, columns=["a", "b"], dtype=object)
    assume(any(a is not None for a, _ in records))  # else the audit refuses column a
    report = audit(frame, Roles(["a", "b"]), AuditOptions(nulls="drop" if drop else "value"))
    out = tmp_path_factory.mktemp("records") / "r.csv"
    assert write_records(open_inputs(frame), report, out) == len(records)
    kept = [r for r in records if not (drop and r[0] is None)]
    sizes = Counter(kept)
    expected = ["" if drop and r[0] is None else str(sizes[r]) for r in records]
    assert [line["fk"] for line in _read(out)] == expected


def test_order_is_kept_across_files_and_batches(tmp_path: Path, tiny_batches: None) -> None:
    header = ["zip", "age", "note"]
    generator = np.random.default_rng(7)
    files, expected = [], []
    for number in range(3):
        data = [
            [str(generator.integers(0, 4)), str(generator.integers(0, 3)), f"n{number}-{i}"]
            for i in range(40 + number)
        ]
        files.append(_write_csv(tmp_path / f"part{number}.csv", header, data))
        expected += [(str(files[-1]), i + 1, row) for i, row in enumerate(data)]
    sources = open_inputs([str(f) for f in files])
    assert sum(1 for _ in sources[0].batches(["zip"])) > 3  # really several batches per file
    report = audit([str(f) for f in files], Roles(["zip", "age"]))
    out = tmp_path / "records.csv"
    assert write_records(sources, report, out) == len(expected)
    written = _read(out)
    assert list(written[0]) == ["source", "record", "zip", "age", "fk", "prosecutor_risk"]
    sizes = Counter((row[0], row[1]) for _, _, row in expected)
    for (source, number, row), line in zip(expected, written, strict=True):
        assert (line["source"], int(line["record"])) == (source, number)
        assert (line["zip"], line["age"]) == (row[0], row[1])
        assert int(line["fk"]) == sizes[(row[0], row[1])]
        assert float(line["prosecutor_risk"]) == pytest.approx(1 / sizes[(row[0], row[1])])


def test_id_column_comes_first_across_files_and_batches(
    tmp_path: Path, tiny_batches: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """--id COL: the records file starts with COL as read (defused), row by row."""
    header = ["pid", "zip", "age"]
    first = [[f"P{i}", str(i % 3), "30"] for i in range(20)]
    second = [["=HYPERLINK()", "0", "30"], ["", "1", "30"]]
    files = [
        _write_csv(tmp_path / "a.csv", header, first),
        _write_csv(tmp_path / "b.csv", header, second),
    ]
    out = tmp_path / "records.csv"
    args = ["audit", *map(str, files), "--qi", "zip,age", "--quiet"]
    assert main([*args, "--records-out", str(out), "--id", "pid"]) == 0
    written = _read(out)
    assert list(written[0])[:4] == ["pid", "source", "record", "zip"]
    assert [line["pid"] for line in written] == [
        *(f"P{i}" for i in range(20)),
        "'=HYPERLINK()",
        "",
    ]
    assert [line["fk"] for line in written[:3]] == ["8", "8", "6"]  # 7 + 1, 7 + 1, 6
    assert main([*args, "--id", "pid"]) == 2
    assert "add --records-out" in capsys.readouterr().err
    assert main([*args, "--records-out", str(out), "--id", "zip"]) == 2
    assert "'zip' would appear twice" in capsys.readouterr().err


def test_record_batches_follow_the_input(tmp_path: Path, tiny_batches: None) -> None:
    data = [[str(i), str(i % 3)] for i in range(30)]
    path = _write_csv(tmp_path / "d.csv", ["id", "g"], data)
    batches = list(record_batches(open_inputs(str(path)), ["g", "id"]))
    assert len(batches) > 1
    assert pa.Table.from_batches(batches).to_pylist() == [{"g": g, "id": i} for i, g in data]


def test_fk_of_a_worked_example_with_nulls(tmp_path: Path) -> None:
    """Hand count: (02139, F) x2, (null, F) x2, (null, null) x1, (02139, M) x1."""
    path = _write_csv(
        tmp_path / "n.csv",
        ["zip", "sex"],
        [["02139", "F"], ["", "F"], ["02139", "M"], ["", ""], ["", "F"], ["02139", "F"]],
    )
    report = audit(str(path), Roles(["zip", "sex"]))
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(path)), report, out)
    assert [int(line["fk"]) for line in _read(out)] == [2, 2, 1, 1, 2, 2]
    assert [line["zip"] for line in _read(out)] == ["02139", "", "02139", "", "", "02139"]


def test_fk_matches_the_class_table_of_clinic(tmp_path: Path) -> None:
    qi = ["zip", "age", "sex"]
    report = audit(str(CLINIC), Roles(qi))
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(CLINIC)), report, out)
    written = _read(out)
    size_of = _sizes(report.table)
    assert len(written) == report.rows
    for line in written:
        key = tuple(line[q] or None for q in qi)
        assert int(line["fk"]) == size_of[key]
    assert sum(1 / int(line["fk"]) for line in written) == pytest.approx(len(size_of))


def test_records_carry_individual_risk_and_suda_scores_of_their_class(tmp_path: Path) -> None:
    # The IHSN guide's SUDA example is about records, so check the wiring on records: each
    # record's Fk, individual risk and SUDA scores are its class's, and every record of a
    # class of two or more scores 0 (only sample uniques have minimal sample uniques).
    qi = ["zip", "age", "sex"]
    report = audit(
        str(CLINIC),
        Roles(qi),
        AuditOptions(
            population=PopulationOptions(sampling_fraction=0.25), analyses=Analyses(suda=2)
        ),
    )
    assert report.individual is not None and report.suda is not None
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(CLINIC)), report, out)
    written = _read(out)
    keys = report.table.classes.keys.to_pylist()
    class_of = {tuple(k[q] for q in qi): i for i, k in enumerate(keys)}
    assert list(written[0])[-4:] == ["Fk", "individual_risk", "suda_score", "dis_suda_score"]
    for line in written:
        c = class_of[tuple(line[q] or None for q in qi)]
        assert float(line["Fk"]) == pytest.approx(4 * int(line["fk"]))
        assert float(line["individual_risk"]) == pytest.approx(report.individual.risk[c])
        assert float(line["suda_score"]) == report.suda.scores[c]
        assert float(line["dis_suda_score"]) == pytest.approx(report.suda.dis_scores[c])
        if int(line["fk"]) > 1:
            assert float(line["suda_score"]) == 0
    assert any(float(line["suda_score"]) > 0 for line in written)


def test_records_dropped_for_null_qis_get_empty_measures(tmp_path: Path) -> None:
    path = _write_csv(
        tmp_path / "n.csv", ["zip", "sex"], [["1", "F"], ["", "F"], ["1", "F"], ["1", ""]]
    )
    report = audit(str(path), Roles(["zip", "sex"]), AuditOptions(nulls="drop"))
    out = tmp_path / "r.csv"
    assert write_records(open_inputs(str(path)), report, out) == 4
    lines = _read(out)
    assert [(line["fk"], line["prosecutor_risk"]) for line in lines] == [
        ("2", "0.5"),
        ("", ""),
        ("2", "0.5"),
        ("", ""),
    ]
    assert out.read_text().splitlines()[1:3] == ['1,"1","F",2,0.5', '2,,"F",,']


def test_wildcard_nulls_give_the_records_each_class_matches(tmp_path: Path) -> None:
    """sdcMicro's convention, by hand: (1, null) matches (1, x) and (1, y)."""
    path = _write_csv(
        tmp_path / "w.csv", ["a", "b"], [["1", "x"], ["1", "y"], ["1", ""], ["2", "x"]]
    )
    report = audit(str(path), Roles(["a", "b"]), AuditOptions(nulls="wildcard"))
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(path)), report, out)
    assert [int(line["fk"]) for line in _read(out)] == [2, 2, 3, 1]


def test_a_generalized_audit_finds_each_record_through_its_recoding(tmp_path: Path) -> None:
    """Ages in 10-year bands, ZIP codes without their last digit; sizes counted by hand."""
    path = _write_csv(
        tmp_path / "g.csv",
        ["age", "zip"],
        [["23", "02139"], ["27", "02138"], ["31", "02139"], ["35", "02141"], ["24", "02134"]],
    )
    report = audit(
        str(path),
        Roles(["age", "zip"]),
        AuditOptions(
            hierarchies={"age": "interval:10", "zip": "prefix"}, generalize={"age": 1, "zip": 1}
        ),
    )
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(path)), report, out)
    lines = _read(out)
    assert [int(line["fk"]) for line in lines] == [3, 3, 1, 1, 3]
    assert [line["age"] for line in lines] == ["23", "27", "31", "35", "24"]  # as read


def test_formula_cells_are_defused(tmp_path: Path) -> None:
    path = _write_csv(
        tmp_path / "f.csv", ["=cmd", "age"], [["=1+1", "-3"], ["@SUM(A1)", "+4"], ["-x", "5"]]
    )
    report = audit(str(path), Roles(["=cmd", "age"]))
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(path)), report, out)
    with open(out, newline="", encoding="utf-8") as stream:
        cells = list(csv.reader(stream))
    assert cells[0][:3] == ["record", "'=cmd", "age"]
    assert [row[1:3] for row in cells[1:]] == [["'=1+1", "-3"], ["'@SUM(A1)", "+4"], ["'-x", "5"]]


def test_extra_per_class_columns(tmp_path: Path) -> None:
    report = audit(str(CLINIC), Roles(["zip", "sex"]))
    sizes = report.table.classes.sizes
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(CLINIC)), report, out, columns={"twice": 2.0 * sizes})
    assert all(float(line["twice"]) == 2 * int(line["fk"]) for line in _read(out))
    with pytest.raises(ParameterError, match="one per class"):
        write_records(open_inputs(str(CLINIC)), report, out, columns={"x": np.zeros(3)})
    with pytest.raises(ParameterError, match="'fk'"):
        write_records(open_inputs(str(CLINIC)), report, out, columns={"fk": 1.0 * sizes})


def test_parquet_numbers_are_read_as_the_class_table_read_them(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"age": [30, 30, None, 41], "zip": ["1", "1", "2", "2"]}), path)
    report = audit(str(path), Roles(["age", "zip"]))
    out = tmp_path / "r.csv"
    write_records(open_inputs(str(path)), report, out)
    assert [(line["age"], line["fk"]) for line in _read(out)] == [
        ("30", "2"),
        ("30", "2"),
        ("", "1"),
        ("41", "1"),
    ]


def test_a_changed_input_is_refused_and_the_old_output_kept(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "d.csv", ["zip"], [["1"], ["1"], ["2"]])
    report = audit(str(path), Roles(["zip"]))
    out = tmp_path / "r.csv"
    out.write_text("previous\n")
    _write_csv(path, ["zip"], [["1"], ["2"], ["2"]])
    with pytest.raises(InputError, match="not written"):
        write_records(open_inputs(str(path)), report, out)
    assert out.read_text() == "previous\n"


def test_a_failure_midway_leaves_the_existing_file_intact(
    tmp_path: Path, tiny_batches: None
) -> None:
    good = [[str(i % 5), "x"] for i in range(50)]
    path = _write_csv(tmp_path / "d.csv", ["zip", "v"], good)
    report = audit(str(path), Roles(["zip"]))
    with open(path, "a", encoding="utf-8") as stream:
        stream.write("1,x,extra\n")  # a ragged row after many good batches
    out = tmp_path / "r.csv"
    out.write_text("previous\n")
    with pytest.raises(MalformedFileError, match="line 52"):
        write_records(open_inputs(str(path)), report, out)
    with pytest.raises(MalformedFileError, match="line 52"):
        write_transformed(open_inputs(str(path)), out, quasi_identifiers=["zip"], recode={})
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "r.csv"]  # no temporary left


def test_writing_over_an_input_is_refused(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "d.csv", ["zip"], [["1"], ["2"]])
    report = audit(str(path), Roles(["zip"]))
    with pytest.raises(ParameterError, match="input file"):
        write_records(open_inputs(str(path)), report, path)
    with pytest.raises(ParameterError, match="input file"):
        write_transformed(open_inputs(str(path)), path, quasi_identifiers=["zip"], recode={})


def test_spark_frames_cannot_be_reread() -> None:
    fake = type("DataFrame", (), {"__module__": "pyspark.sql.dataframe", "groupBy": None})()
    with pytest.raises(InputError, match="Parquet"):
        open_inputs([fake])


# -- the command line ------------------------------------------------------------------------


def test_cli_records_out_on_clinic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "records.csv"
    before = (CLINIC.read_bytes(), os.stat(CLINIC).st_mtime_ns)
    status = main(
        [
            "audit",
            str(CLINIC),
            "--qi",
            "zip,age,sex",
            "-k",
            "2",
            "--records-out",
            str(out),
            "--quiet",
            "--exit-zero",
        ]
    )
    assert status == 0
    with open(CLINIC, newline="", encoding="utf-8") as stream:
        raw = list(csv.DictReader(stream))
    sizes = Counter((r["zip"], r["age"], r["sex"]) for r in raw)
    written = _read(out)
    assert [int(line["record"]) for line in written] == list(range(1, len(raw) + 1))
    assert [int(line["fk"]) for line in written] == [
        sizes[(r["zip"], r["age"], r["sex"])] for r in raw
    ]
    assert "source" not in written[0]
    assert (CLINIC.read_bytes(), os.stat(CLINIC).st_mtime_ns) == before


def test_policy_file_records_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'inputs = ["{CLINIC.as_posix()}"]\nquasi_identifiers = ["zip"]\n'
        'records_out = "out/records.csv"\n'
    )
    (tmp_path / "out").mkdir()
    assert main(["audit", "--config", str(policy), "--quiet"]) == 0
    assert len(_read(tmp_path / "out" / "records.csv")) == 241


def test_policy_file_records_out_per_dataset(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'inputs = ["{CLINIC.as_posix()}"]\n'
        '[[datasets]]\nname = "a"\nquasi_identifiers = ["zip"]\nrecords_out = "a.csv"\n'
        # zip, a direct identifier by its name, is released knowingly beside the QI sex
        '[[datasets]]\nname = "b"\nquasi_identifiers = ["sex"]\nallow_identifiers = ["zip"]\n'
    )
    assert read_config(policy).datasets[1].records_out is None
    assert main(["audit", "--config", str(policy), "--quiet", "--json", "-"]) == 0
    assert len(_read(tmp_path / "a.csv")) == 241
    assert main(["audit", "--config", str(policy), "--records-out", "x.csv"]) == 2
    policy.write_text(
        policy.read_text().replace("[[datasets]]", 'records_out = "all.csv"\n[[datasets]]', 1)
    )
    with pytest.raises(InputError, match="each dataset"):
        read_config(policy)


# -- the transformed table ------------------------------------------------------------------------


def _sizes(table: ClassTable) -> dict[tuple[str | None, ...], int]:
    """Each class's QI tuple and size."""
    keys = table.classes.keys.to_pylist()
    sizes = table.classes.sizes.tolist()
    return {tuple(key.values()): size for key, size in zip(keys, sizes, strict=True)}


def _recoded_table(frame: pd.DataFrame, qi: list[str]) -> ClassTable:
    return ClassTable.from_frame(
        frame.groupby(qi, dropna=False).size().rename("count").reset_index(), quasi_identifiers=qi
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_write_transformed_round_trip(tmp_path: Path, tiny_batches: None, suffix: str) -> None:
    header = ["id", "age", "zip", "disease"]
    data = [
        ["1", "23", "02139", "flu"],
        ["2", "27", "02138", "=cold"],
        ["3", "31", "02139", "flu"],
        ["4", "35", "02141", "cancer"],
        ["5", "", "02139", "flu"],
        ["6", "64", "02139", "cold"],
    ] * 3
    path = _write_csv(tmp_path / "in.csv", header, data, sep=";")
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    recode = {
        "age": {"23": "20-29", "27": "20-29", "31": "30-39", "35": "30-39", "64": "60-69"},
        "zip": {"02138": "0213*", "02139": "0213*", "02141": "0214*"},
    }
    suppressed = pa.table({"age": ["60-69", "30-39"], "zip": ["0213*", "0214*"]})
    out = tmp_path / f"out{suffix}"
    written = write_transformed(
        open_inputs(str(path)),
        out,
        quasi_identifiers=["age", "zip"],
        recode=recode,
        suppressed=suppressed,
    )
    assert written == len(data)
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before  # input untouched
    if suffix == ".csv":
        text = out.read_text(encoding="utf-8")
        assert text.startswith('"id";"age";"zip";"disease"\n')  # the input's header and separator
        result = pd.read_csv(out, sep=";", dtype=str, keep_default_na=False)
        assert result["disease"].tolist()[1] == "'=cold"  # defused
    else:
        result = pq.read_table(out).to_pandas()
        assert result["disease"].tolist()[1] == "=cold"  # exact in Parquet
        result["age"] = result["age"].fillna("")
    expected_age = ["20-29", "20-29", "30-39", "*", "", "*"] * 3
    expected_zip = ["0213*", "0213*", "0213*", "*", "0213*", "*"] * 3
    assert result.columns.tolist() == header
    assert result["id"].tolist() == [row[0] for row in data]
    assert result["age"].tolist() == expected_age
    assert result["zip"].tolist() == expected_zip
    # Auditing the output gives the class table of the input, recoded; the suppressed
    # records (every QI "*", ARX's convention) are in no class.
    again = audit(str(out), Roles(["age", "zip"]), reading=ReadOptions(sep=";"))
    by_hand = pd.DataFrame({"age": expected_age, "zip": expected_zip}).replace("", None)
    kept = by_hand[~((by_hand["age"] == "*") & (by_hand["zip"] == "*"))]
    assert (again.suppressed_records, again.rows) == (6, 12)
    assert _sizes(again.table) == _sizes(_recoded_table(kept, ["age", "zip"]))
    assert ("*", "*") not in _sizes(again.table)


def test_write_transformed_needs_the_same_columns(tmp_path: Path) -> None:
    a = _write_csv(tmp_path / "a.csv", ["zip", "x"], [["1", "2"]])
    b = _write_csv(tmp_path / "b.csv", ["zip", "y"], [["1", "2"]])
    with pytest.raises(InputError, match="columns differ"):
        write_transformed(
            open_inputs([str(a), str(b)]), tmp_path / "o.csv", quasi_identifiers=["zip"], recode={}
        )
