"""Bad input end to end: every user error exits 2 with one plain line on stderr.

The line starts with ``anonaudit: error:``, names the file, column or value at fault and
says what to do; ``--debug`` lets the exception through instead. Input files are never
modified. Also the Python API: frames and files agree, errors are builtin subclasses.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import anonaudit
from anonaudit import AuditOptions, Roles
from anonaudit.cli import main
from anonaudit.errors import (
    AnonauditError,
    ColumnError,
    HierarchyError,
    InputError,
    MalformedFileError,
    ParameterError,
    SourceNotFoundError,
)

HEADER = "zip,age,disease\n"
BODY = "02134,30,flu\n02134,30,cold\n02139,40,flu\n02139,40,cancer\n"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``anonaudit audit argv``; check the error protocol and return the one line."""
    try:
        code = main(["audit", *argv])
    except SystemExit as exc:  # argparse reports usage errors by exiting
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n")
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("anonaudit: error: ")
    return lines[0]


def expect(line: str, *patterns: str) -> None:
    for pattern in patterns:
        assert re.search(pattern, line), f"{pattern!r} not in {line!r}"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write(tmp_path / "data.csv", HEADER + BODY)


# -- files ------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "exports" / "nope.csv"
    line = error_line(capsys, str(missing), "--qi", "zip")
    expect(line, re.escape(str(missing)), r"no such file", r"check the path")


def test_missing_file_among_several(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "part2.csv"
    line = error_line(capsys, str(data), str(missing), "--qi", "zip")
    expect(line, re.escape(str(missing)), r"no such file")


def test_unknown_column_is_named_with_the_existing_ones(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = error_line(capsys, str(data), "--qi", "zip,agee", "--sensitive", "disease")
    expect(
        line,
        re.escape(str(data)),
        r"no column named 'agee'",
        r"the columns are: zip, age, disease$",
    )


def test_unknown_sensitive_column(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, str(data), "--qi", "zip", "--sensitive", "diagnosis")
    expect(line, r"'diagnosis'", r"zip, age, disease")


def test_duplicate_column_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "dup.csv", "zip,age,zip\n02134,30,02134\n")
    line = error_line(capsys, str(path), "--qi", "age")
    expect(line, re.escape(str(path)), r"'zip' twice", r"rename one")


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "empty.csv", "")
    line = error_line(capsys, str(path), "--qi", "zip")
    expect(line, re.escape(str(path)), r"empty", r"header")


def test_blank_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "blank.csv", "\n \n")
    line = error_line(capsys, str(path), "--qi", "zip")
    expect(line, re.escape(str(path)), r"empty")


@pytest.mark.parametrize("content", [HEADER, HEADER.rstrip("\n")], ids=["newline", "no-newline"])
def test_header_only(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    path = write(tmp_path / "header.csv", content)
    line = error_line(capsys, str(path), "--qi", "zip")
    expect(line, re.escape(str(path)), r"header but no data rows")


def test_ragged_row_names_file_and_physical_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEADER + "02134,30,flu\n02134,30,cold\n02139,40,flu,extra\n02139,40,flu\n"
    path = write(tmp_path / "ragged.csv", text)
    physical = text.splitlines().index("02139,40,flu,extra") + 1
    assert physical == 4
    line = error_line(capsys, str(path), "--qi", "zip,age", "--sensitive", "disease")
    expect(
        line,
        rf"^anonaudit: error: {re.escape(str(path))}, line {physical}: ",
        r"expected 3 fields, found 4",
        r"--sep",
    )


def test_short_row_after_a_quoted_newline_names_the_physical_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The quoted value spans lines 2-3, so the short row is record 4 but line 5.
    text = HEADER + '02134,30,"flu\nsevere"\n02134,30,cold\n02139,40\n02139,40,flu\n'
    path = write(tmp_path / "ragged.csv", text)
    line = error_line(capsys, str(path), "--qi", "zip,age", "--sensitive", "disease")
    expect(line, rf"{re.escape(str(path))}, line 5: ", r"expected 3 fields, found 2")


def test_ragged_row_beyond_the_first_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # More than the reader's 16 MiB block, so the bad row is met while streaming.
    padding = "x" * 1000
    lines = [f"{i % 50:05d},30,{padding}\n" for i in range(17_500)]
    lines[17_000] = "00001,30,a,b\n"
    path = write(tmp_path / "big.csv", "zip,age,pad\n" + "".join(lines))
    assert path.stat().st_size > 16 * 1024 * 1024
    physical = 1 + 17_000 + 1  # the header, the rows before it, itself
    line = error_line(capsys, str(path), "--qi", "zip,age", "--quiet")
    expect(line, rf"{re.escape(str(path))}, line {physical}: ", r"expected 3 fields, found 4")


def test_undecodable_byte_suggests_an_encoding_which_then_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "latin.csv", (HEADER + BODY + "02139,40,café\n").encode("latin-1"))
    before = path.read_bytes()
    line = error_line(capsys, str(path), "--qi", "zip,age", "--sensitive", "disease")
    expect(line, rf"{re.escape(str(path))}, line 6: ", r"0xe9", r"--encoding latin-1")

    argv = ["audit", str(path), "--qi", "disease", "-k", "2", "--json", "-", "--quiet"]
    assert main([*argv, "--encoding", "latin-1", "--show-values"]) == 1
    out, err = capsys.readouterr()
    assert err == ""
    report = json.loads(out)
    assert report["rows"] == 5
    violating = report["k_anonymity"]["violating"]["classes"]
    assert {"quasi_identifiers": {"disease": "café"}, "size": 1} in violating
    assert path.read_bytes() == before


def test_undecodable_byte_beyond_the_sniffed_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Past the first 64 KiB the header sniffer reads, but within pyarrow's first block.
    rows = [f"{i:05d},30,flu\n" for i in range(10_000)]
    rows[9_000] = "09000,30,café\n"
    path = write(tmp_path / "latin.csv", (HEADER + "".join(rows)).encode("latin-1"))
    assert path.stat().st_size > 64 * 1024
    line = error_line(capsys, str(path), "--qi", "zip", "--sensitive", "disease")
    expect(line, rf"{re.escape(str(path))}, line 9002: ", r"0xe9", r"--encoding latin-1")
    assert main(["audit", str(path), "--qi", "zip", "--encoding", "latin-1", "--quiet"]) == 0
    capsys.readouterr()


def test_utf8_byte_order_mark_is_not_part_of_the_first_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Spreadsheet programs save "CSV UTF-8" with a BOM; the header still says zip.
    path = write(tmp_path / "bom.csv", b"\xef\xbb\xbf" + (HEADER + BODY).encode())
    code = main(["audit", str(path), "--qi", "zip,age", "--json", "-", "--quiet"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert '"zip"' in out


def test_unknown_encoding(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, str(data), "--qi", "zip", "--encoding", "klingon")
    expect(line, r"'klingon'", r"latin-1")


def test_directory_as_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    line = error_line(capsys, str(folder), "--qi", "zip")
    expect(line, re.escape(str(folder)), r"directory")


def test_not_a_parquet_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "data.parquet", HEADER + BODY)
    line = error_line(capsys, str(path), "--qi", "zip")
    expect(line, re.escape(str(path)), r"Parquet")


# -- values -----------------------------------------------------------------------------


def test_quasi_identifier_that_is_all_null(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "data.csv", "zip,age,disease\n02134,,flu\n02139,,cold\n")
    line = error_line(capsys, str(path), "--qi", "zip,age", "--sensitive", "disease")
    expect(line, r"'age'", r"null in every row", r"--na")


def test_every_record_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "data.csv", "zip,age,disease\n02134,,flu\n,30,cold\n")
    line = error_line(capsys, str(path), "--qi", "zip,age", "--nulls", "drop")
    expect(line, r"null quasi-identifier", r"nothing is left")


def test_hierarchy_lacking_a_value_of_the_data(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hierarchy = write(tmp_path / "h.csv", "flu;respiratory;*\ncold;respiratory;*\n")
    line = error_line(
        capsys, str(data), "--qi", "zip", "--sensitive", "disease",
        "--hierarchy", f"disease={hierarchy}",
    )  # fmt: skip
    expect(line, re.escape(str(hierarchy)), r"'cancer'", r"not in the hierarchy", r"add")


def test_missing_hierarchy_file(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hierarchy = tmp_path / "h.csv"
    line = error_line(
        capsys, str(data), "--qi", "zip", "--sensitive", "disease",
        "--hierarchy", f"disease={hierarchy}",
    )  # fmt: skip
    expect(line, re.escape(str(hierarchy)), r"no such file")


def test_order_lacking_a_value(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(
        capsys, str(data), "--qi", "zip", "--sensitive", "disease",
        "--t-distance", "ordered", "--order", "disease=flu,cold",
    )  # fmt: skip
    expect(line, r"'disease'", r"'cancer'", r"add it")


def test_distance_for_a_column_that_is_not_sensitive(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = error_line(
        capsys, str(data), "--qi", "zip", "--sensitive", "disease", "--t-distance", "age=ordered"
    )
    expect(line, r"'age'", r"not\s+a sensitive column", r"disease")


# -- options ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "patterns"),
    [
        (["-k", "0"], [r"-k", r"at least 1", r"got 0"]),
        (["-k", "-3"], [r"-k", r"at least 1", r"got -3"]),
        (["-t", "1.5"], [r"-t", r"between 0 and 1", r"1\.5"]),
        (["-t", "-0.1"], [r"-t", r"between 0 and 1", r"-0\.1"]),
        (["--t-distance", "emd"], [r"'emd'", r"equal, ordered, numeric, hierarchical, matrix"]),
        (["--t-distance", "disease=emd"], [r"'emd'", r"equal, ordered"]),
        (["--t-distance", "disease="], [r"--t-distance", r"COLUMN=VALUE", r"'disease='"]),
        (["--recursive", "3"], [r"--recursive", r"C,L", r"'3'"]),
        (["--recursive", "x,2"], [r"--recursive", r"C,L", r"'x,2'"]),
        (["--recursive", "3,2.5"], [r"--recursive", r"C,L", r"'3,2\.5'"]),
        (["--recursive", "0,2"], [r"recursive", r"c > 0"]),
        (["--alpha", "1.5"], [r"alpha", r"\(0, 1\]", r"1\.5"]),
        (["--max-risk", "0"], [r"max risk", r"\(0, 1\]"]),
        (["--entropy-l", "0.5"], [r"entropy l", r">= 1"]),
        (["--max-classes", "-1"], [r"--max-classes", r">= 0"]),
        (["--sep", ";;"], [r"--sep", r"one character"]),
        (["--hierarchy", "disease"], [r"--hierarchy", r"COLUMN=VALUE"]),
        (["-k", "abc"], [r"-k", r"'abc'"]),
    ],
)
def test_bad_option(
    data: Path, capsys: pytest.CaptureFixture[str], option: list[str], patterns: list[str]
) -> None:
    line = error_line(capsys, str(data), "--qi", "zip", "--sensitive", "disease", *option)
    expect(line, *patterns)


def test_no_quasi_identifiers(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, str(data), "--sensitive", "disease")
    expect(line, r"--qi COL1,COL2")


def test_no_input(capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, "--qi", "zip")
    expect(line, r"INPUT")


def test_column_both_qi_and_sensitive(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, str(data), "--qi", "zip,disease", "--sensitive", "disease")
    expect(line, r"'disease'", r"twice")


def test_missing_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "policy.toml"
    line = error_line(capsys, "--config", str(config))
    expect(line, re.escape(str(config)), r"no such policy file")


def test_config_not_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "policy.toml", "inputs = [\n")
    line = error_line(capsys, "--config", str(config))
    expect(line, re.escape(str(config)), r"not valid TOML")


def test_config_value_of_the_wrong_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "policy.toml", 'inputs = "data.csv"\n')
    line = error_line(capsys, "--config", str(config))
    expect(line, re.escape(str(config)), r"'inputs'", r"wrong type")


@pytest.mark.parametrize(
    ("thresholds", "said"),
    [
        ("k = 0", r"\[thresholds\] k must be at least 1 \(got 0\)"),
        ("t = 3", r"\[thresholds\] t must lie between 0 and 1 \(got 3\)"),
        ("recursive = [0, 2]", r"\[thresholds\] recursive \(c,l\) needs c > 0"),
    ],
)
def test_a_threshold_out_of_range_in_a_policy_file_names_the_file_and_key(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], thresholds: str, said: str
) -> None:
    """Not ``-k must be at least 1``: the user typed no ``-k``."""
    config = write(tmp_path / "policy.toml", f"[thresholds]\n{thresholds}\n")
    line = error_line(capsys, str(data), "--qi", "zip", "--config", str(config))
    expect(line, "^anonaudit: error: " + re.escape(f"{config}: ") + said)


# -- --debug ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make_argv", "error"),
    [
        (lambda d, t: [str(t / "nope.csv"), "--qi", "zip"], SourceNotFoundError),
        (lambda d, t: [str(d), "--qi", "nope"], ColumnError),
        (lambda d, t: [str(d), "--qi", "zip", "-k", "0"], ParameterError),
        (lambda d, t: [str(write(t / "e.csv", "")), "--qi", "zip"], MalformedFileError),
    ],
)
def test_debug_lets_the_exception_through(
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make_argv: Callable[[Path, Path], list[str]],
    error: type[Exception],
) -> None:
    with pytest.raises(error):
        main(["audit", *make_argv(data, tmp_path), "--debug"])
    assert "anonaudit: error:" not in capsys.readouterr().err


# -- input files are never modified -----------------------------------------------------


def fingerprint(path: Path) -> tuple[str, int, int]:
    info = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mtime_ns, info.st_size


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], 0),  # a successful run
        (["-k", "3"], 1),  # a violation
        (["--t-distance", "ordered"], 2),  # an error after reading the data
    ],
)
def test_inputs_are_never_modified(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    expected: int,
) -> None:
    first = write(tmp_path / "in" / "a.csv", HEADER + BODY)
    second = write(tmp_path / "in" / "b.csv", HEADER + "02139,40,cold\n")
    hierarchy = write(tmp_path / "in" / "h.csv", "flu;r;*\ncold;r;*\ncancer;t;*\n")
    config = write(tmp_path / "in" / "p.toml", 'quasi_identifiers = ["zip", "age"]\n')
    files = [first, second, hierarchy, config]
    before = [fingerprint(p) for p in files]
    listing = sorted(p.name for p in (tmp_path / "in").iterdir())
    monkeypatch.chdir(tmp_path / "in")
    code = main(
        ["audit", "a.csv", "b.csv", "--config", "p.toml", "--sensitive", "disease",
         "--hierarchy", "disease=h.csv", "--json", str(tmp_path / "r.json"), *extra]
    )  # fmt: skip
    capsys.readouterr()
    assert code == expected
    assert [fingerprint(p) for p in files] == before
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == listing


def test_input_unmodified_after_a_malformed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "ragged.csv", HEADER + "02134,30\n")
    before = fingerprint(path)
    error_line(capsys, str(path), "--qi", "zip")
    assert fingerprint(path) == before
    assert [p.name for p in tmp_path.iterdir()] == ["ragged.csv"]


# -- the Python API ---------------------------------------------------------------------

ROLES = Roles(["zip", "age"], ["disease"])
OPTIONS = AuditOptions(policy=anonaudit.Policy(k=2, l=2, t=0.3))
NULLABLE = "zip,age,disease\n02134,30,flu\n02134,30,cold\n,30,flu\n,30,\n02139,40,cancer\n"


def comparable(report: anonaudit.AuditReport) -> dict[str, Any]:
    result = report.to_dict(max_classes=None)
    for key in ("audited_at", "sources", "coverage", "anonaudit_version"):
        result.pop(key)
    return result


def frame_of_strings() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "zip": ["02134", "02134", None, None, "02139"],
            "age": ["30", "30", "30", "30", "40"],
            "disease": ["flu", "cold", "flu", None, "cancer"],
        }
    )


def as_kind(frame: pd.DataFrame, kind: str) -> pd.DataFrame | pa.Table:
    return frame if kind == "pandas" else pa.Table.from_pandas(frame, preserve_index=False)


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_frame_matches_the_csv(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path / "data.csv", NULLABLE)
    expected = comparable(anonaudit.audit(path, ROLES, OPTIONS))
    assert expected["rows"] == 5 and expected["passed"] is False
    report = anonaudit.audit(as_kind(frame_of_strings(), kind), ROLES, OPTIONS)
    assert comparable(report) == expected
    assert report.sources[0].format == kind
    assert report.k_anonymity.violating["zip"].tolist() == ["02139"]


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_frame_with_an_int_column_as_qi(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path / "data.csv", "age,disease\n30,flu\n30,cold\n41,flu\n,cold\n")
    roles = Roles(["age"], ["disease"])
    expected = comparable(anonaudit.audit(path, roles, OPTIONS))
    floats = pd.DataFrame({"age": [30, 30, 41, None], "disease": ["flu", "cold", "flu", "cold"]})
    assert floats["age"].dtype == "float64"  # pandas turns an int column with a gap to float
    nullable = floats.astype({"age": "Int64"})
    for frame in (floats, nullable):
        report = anonaudit.audit(as_kind(frame, kind), roles, OPTIONS)
        assert comparable(report) == expected
    ints = pd.DataFrame({"age": [30, 30, 41], "disease": ["flu", "cold", "flu"]})
    assert ints["age"].dtype == "int64"
    report = anonaudit.audit(as_kind(ints, kind), Roles(["age"]), OPTIONS)
    assert report.k_anonymity.violating.to_dict("records") == [{"age": "41", "size": 1}]


def test_load_several_files_matches_one(tmp_path: Path) -> None:
    whole = write(tmp_path / "whole.csv", HEADER + BODY)
    lines = BODY.splitlines(keepends=True)
    first = write(tmp_path / "a.csv", HEADER + "".join(lines[:1]))
    second = write(tmp_path / "b.csv", (HEADER + "".join(lines[1:])).replace(",", ";"))
    one = anonaudit.load(whole, ROLES)
    parts = anonaudit.load([first, second], ROLES)
    assert parts.rows == one.rows == 4
    assert sorted(parts.classes.sizes.tolist()) == sorted(one.classes.sizes.tolist())
    assert [s.rows for s in parts.sources] == [1, 3]


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (ColumnError, KeyError),
        (SourceNotFoundError, FileNotFoundError),
        (InputError, ValueError),
        (MalformedFileError, ValueError),
        (HierarchyError, ValueError),
        (ParameterError, ValueError),
    ],
)
def test_errors_are_builtin_subclasses(error: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(error, builtin)
    assert issubclass(error, AnonauditError)


def test_api_errors_carry_plain_messages(tmp_path: Path) -> None:
    path = write(tmp_path / "data.csv", HEADER + BODY)
    with pytest.raises(KeyError) as column:
        anonaudit.audit(path, Roles(["nope"]))
    assert isinstance(column.value, ColumnError)
    assert str(column.value) == (
        f"{path}: no column named 'nope'; the columns are: zip, age, disease"
    )
    missing = tmp_path / "missing.csv"
    with pytest.raises(FileNotFoundError) as not_found:
        anonaudit.audit(missing, Roles(["zip"]))
    assert isinstance(not_found.value, SourceNotFoundError)
    assert str(not_found.value).startswith(str(missing))
    with pytest.raises(ValueError) as bad_k:
        anonaudit.audit(path, Roles(["zip"]), AuditOptions(policy=anonaudit.Policy(k=0)))
    assert isinstance(bad_k.value, ParameterError)
    assert not str(bad_k.value).startswith(("'", '"'))


def test_api_rejects_what_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot audit an object of type dict"):
        anonaudit.audit({"zip": ["1"]}, Roles(["zip"]))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="lists of column names"):
        anonaudit.audit(pd.DataFrame({"zip": ["1"]}), Roles("zip"))
    with pytest.raises(MalformedFileError, match="no rows"):
        anonaudit.audit(pd.DataFrame({"zip": pd.Series([], dtype=str)}), Roles(["zip"]))
    duplicated = pd.DataFrame([["1", "2"]], columns=["zip", "zip"])
    with pytest.raises(ColumnError, match="'zip' appears twice"):
        anonaudit.audit(duplicated, Roles(["zip"]))


def test_side_files_saved_with_a_byte_order_mark_read_as_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A BOM at the start of a ``COL=@FILE`` list, a hierarchy or a policy file is not
    part of its first value (helper's report: a public domain read ``"\\ufeffF"``, and
    every F record was left out of the DP release without an error)."""
    bom = b"\xef\xbb\xbf"
    data = write(tmp_path / "d.csv", b"sex,age,d\nF,30,flu\nF,30,cold\nM,30,hiv\nM,30,flu\n")
    domain = write(tmp_path / "dom.txt", bom + b"F\nM\n")
    out = tmp_path / "r.csv"
    argv = ["dp", str(data), "--qi", "sex", "--sensitive", "d", "--epsilon", "1", "--quiet"]
    argv += ["--public-domain", f"sex=@{domain}", "--public-domain", "d=cold,flu,hiv"]
    assert main([*argv, "--out", str(out)]) == 0
    released = pd.read_csv(out, keep_default_na=False)
    assert set(released["sex"]) == {"F", "M"}  # every cell of the domain, none "\ufeffF"
    hierarchy = write(tmp_path / "h.csv", bom + b"flu;resp;*\ncold;resp;*\nhiv;other;*\n")
    order = write(tmp_path / "order.txt", bom + b"cold\nflu\nhiv\n")
    policy = write(tmp_path / "p.toml", bom + b"[thresholds]\nk = 1\n")
    audit = ["audit", str(data), "--qi", "sex,age", "--sensitive", "d", "--quiet"]
    assert main([*audit, "-t", "0.5", "--hierarchy", f"d={hierarchy}"]) == 0
    assert main([*audit, "-t", "0.5", "--order", f"d=@{order}"]) == 0
    assert main([*audit, "--config", str(policy)]) == 0
    assert capsys.readouterr().err == ""
