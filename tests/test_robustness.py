"""Issue 15: never lose data, never pass a partial read as a whole, never exit 1 on a crash.

Each test is one reproduction of the issue: the run exits 2 (or 3 for a bug) with one
line that names the file, key or option at fault, and no input is ever modified.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import io
import json
import math
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import anonaudit.cli.commands
from anonaudit import Analyses, AuditOptions, EngineOptions, Roles
from anonaudit.cli import main
from anonaudit.files import table_to_csv

ROWS = "zip,age,disease\n02134,30,flu\n02134,30,cold\n02139,40,flu\n02139,40,cancer\n"
ROLES = ("--qi", "zip,age", "--sensitive", "disease")


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 2) -> str:
    """Run ``argv``; check the exit status and the one-line error, and return it."""
    got, _, err = run(capsys, *argv)
    assert got == code, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write(tmp_path / "data.csv", ROWS)


# -- outputs never replace an input --------------------------------------------------


@pytest.mark.parametrize("option", ["--json", "--html", "--records-out"])
@pytest.mark.parametrize("spelling", ["same", "dot", "parent", "symlink", "hardlink"])
def test_audit_output_that_is_the_input_is_refused(
    data: Path,
    option: str,
    spelling: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(data.parent)
    (data.parent / "sub").mkdir()
    output = {
        "same": "data.csv",
        "dot": "./data.csv",
        "parent": "sub/../data.csv",
        "symlink": "link.csv",
        "hardlink": "hard.csv",
    }[spelling]
    if spelling == "symlink":
        (data.parent / "link.csv").symlink_to(data)
    if spelling == "hardlink":
        os.link(data, data.parent / "hard.csv")
    before = digest(data)
    line = one_error(capsys, "audit", str(data), *ROLES, option, output)
    assert f"{option} {output}" in line and "overwrite the input" in line
    assert digest(data) == before


def test_output_inside_an_input_folder_or_glob_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    part = write(tmp_path / "lake" / "part-0.csv", ROWS)
    line = one_error(capsys, "audit", str(part.parent), *ROLES, "--json", str(part))
    assert str(part) in line and "overwrite the input" in line
    pattern = str(tmp_path / "lake" / "*.csv")
    line = one_error(capsys, "audit", pattern, *ROLES, "--records-out", str(part))
    assert str(part) in line
    assert part.read_text(encoding="utf-8") == ROWS


def test_two_outputs_on_one_file_are_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = write(tmp_path / "out.txt", "old")
    both = ("--json", str(target), "--html", str(target))
    line = one_error(capsys, "audit", str(data), *ROLES, *both)
    assert "--html" in line and "--json" in line and "same file" in line


def test_advise_and_dp_outputs_that_are_the_input_are_refused(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(data)
    advise = ("advise", str(data), "--qi", "zip", "-k", "2", "--hierarchy", "zip=prefix")
    for option in ("--json", "--html", "--out"):
        line = one_error(capsys, *advise, option, str(data))
        assert f"{option} {data}" in line
    dp = ("dp", str(data), *ROLES, "--epsilon", "1")
    for option in ("--json", "--out"):
        line = one_error(capsys, *dp, option, str(data))
        assert f"{option} {data}" in line
    assert digest(data) == before


def test_policy_file_outputs_that_are_an_input_are_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(data)
    single = write(
        tmp_path / "single.toml",
        'inputs = ["data.csv"]\nquasi_identifiers = ["zip"]\njson = "./data.csv"\n',
    )
    assert "overwrite the input" in one_error(capsys, "audit", "--config", str(single))
    other = write(tmp_path / "other.csv", ROWS)
    datasets = write(
        tmp_path / "datasets.toml",
        'quasi_identifiers = ["zip"]\n'
        '[[datasets]]\nname = "a"\ninputs = ["data.csv"]\nhtml = "other.csv"\n'
        '[[datasets]]\nname = "b"\ninputs = ["other.csv"]\n',
    )
    line = one_error(capsys, "audit", "--config", str(datasets))
    assert "dataset 'a': html" in line and "other.csv" in line
    # A dataset's default report, <name>.json beside the summary, counts too.
    named = write(
        tmp_path / "named.toml",
        'quasi_identifiers = ["zip"]\njson = "summary.json"\n'
        '[[datasets]]\nname = "data.csv"\ninputs = ["data.csv.json"]\n',
    )
    write(tmp_path / "data.csv.json", ROWS)
    assert "overwrite the input" in one_error(capsys, "audit", "--config", str(named))
    assert digest(data) == before and other.read_text(encoding="utf-8") == ROWS


def test_dataset_name_cannot_write_outside_the_reports_folder(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write(
        tmp_path / "policy.toml",
        'quasi_identifiers = ["zip"]\njson = "reports/summary.json"\n'
        '[[datasets]]\nname = "../../x"\ninputs = ["data.csv"]\n',
    )
    (tmp_path / "reports").mkdir()  # a folder that does not exist is refused (issue 12)
    code, _, err = run(capsys, "audit", "--config", str(policy), "--quiet")
    assert code == 0, err
    written = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert written == ["_.._x.json", "summary.json"]
    assert not (tmp_path.parent / "x.json").exists()
    summary = json.loads((tmp_path / "reports" / "summary.json").read_text(encoding="utf-8"))
    assert summary["datasets"][0]["name"] == "../../x"


# -- writing: special files, symlinks, failures, temporaries -------------------------


def test_json_to_a_fifo_writes_into_it(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--json", str(fifo))
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # not replaced by a regular file
    assert json.loads(received[0])["rows"] == 4


def test_json_to_dev_null_leaves_it_a_device(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--json", "/dev/null")
    assert code == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_json_through_a_symlink_replaces_the_file_it_names(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = write(tmp_path / "reports" / "real.json", "old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--json", str(link))
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert json.loads(real.read_text(encoding="utf-8"))["rows"] == 4


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_full_disk_is_exit_2_naming_the_path(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_error(capsys, "audit", str(data), *ROLES, "--json", "/dev/full")
    assert "/dev/full" in line and "cannot write" in line
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["audit", "--help"]])
def test_help_or_version_to_a_full_disk_is_exit_2(argv: list[str]) -> None:
    """argparse ignores a failed write of its help or version: it exited 0."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = subprocess.run(
            [sys.executable, "-m", "anonaudit", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "anonaudit: error: cannot write the output: [Errno 28] No space left on device\n"
    )


def test_a_usage_error_without_stderr_is_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process with no stderr (``pythonw``): argparse ignored the failed write of the
    usage error; the parser's own write must not raise either (the helper's review)."""
    monkeypatch.setattr(sys, "stderr", None)
    assert main(["audit", "--no-such-option"]) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_exit_2_and_keeps_the_old_file(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ro"
    old = write(folder / "report.json", "old report")
    folder.chmod(0o500)
    try:
        line = one_error(capsys, "audit", str(data), *ROLES, "--json", str(old))
        assert str(old) in line and "cannot write" in line
        assert old.read_text(encoding="utf-8") == "old report"
        assert sorted(p.name for p in folder.iterdir()) == ["report.json"]
    finally:
        folder.chmod(0o700)


def test_stale_temporaries_of_dead_runs_are_removed(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    out = tmp_path / "out"
    stale = write(out / f".anonaudit-tmp-report.json-{int(dead.stdout)}-abc123", "x" * 1000)
    alive = write(out / f".anonaudit-tmp-other.json-{os.getppid()}-def456", "in progress")
    unrelated = write(out / ".hidden-1-2", "not ours")
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--json", str(out / "report.json"))
    assert code == 0, err
    assert not stale.exists()
    assert alive.exists() and unrelated.exists()
    assert (out / "report.json").exists()


# -- CSV: one writer, quoted, defused on every line ----------------------------------


HOSTILE = ["x\r=cmd|' /C calc'!A0", "a\n+SUM(1)", "b\r\n@cmd", "p,q", 'say "hi"', "-3", "=1+1"]


def test_csv_quotes_line_breaks_and_defuses_every_line() -> None:
    text = table_to_csv(pa.table({"v": HOSTILE, "n": list(range(len(HOSTILE)))}))
    cells = [row[0] for row in csv.reader(io.StringIO(text, newline=""))][1:]
    assert len(cells) == len(HOSTILE)
    for cell in cells:
        for line in cell.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            assert not line.startswith(("=", "+", "@", "\t")), cell
    assert cells[0] == "x\r'=cmd|' /C calc'!A0"
    assert cells[3:6] == ["p,q", 'say "hi"', "-3"]
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert frame["v"].tolist() == cells and frame["n"].tolist() == [str(i) for i in range(7)]


def test_records_file_defuses_after_a_carriage_return(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "in.csv", 'zip,age\n"x\r=cmd",30\n"x\r=cmd",30\n')
    out = tmp_path / "records.csv"
    code, _, err = run(capsys, "audit", str(source), "--qi", "zip,age", "--records-out", str(out))
    assert code == 0, err
    with out.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    assert [row[1] for row in rows[1:]] == ["x\r'=cmd", "x\r'=cmd"]


# -- exit status 3 for bugs; wrong types in policy files -----------------------------


def test_unexpected_exception_is_exit_3_with_the_traceback_in_a_file(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("boom\nsecond line")

    monkeypatch.setattr(anonaudit.cli.commands, "audit_config", broken)
    line = one_error(capsys, "audit", str(data), *ROLES, code=3)
    assert line.startswith("anonaudit: internal error: ZeroDivisionError: boom (traceback ")
    path = Path(line.split("traceback written to ")[1].split(";")[0])
    try:
        assert "Traceback" in path.read_text(encoding="utf-8")
    finally:
        path.unlink()
    with pytest.raises(ZeroDivisionError):
        main(["audit", str(data), *ROLES, "--debug"])


@pytest.mark.parametrize(
    ("text", "key", "expected", "found"),
    [
        ('[thresholds]\nk = "5"', "thresholds.k", "a whole number", "'5'"),
        ('[thresholds]\nt = "0.2"', "thresholds.t", "a number", "'0.2'"),
        ("[thresholds]\nrecursive = 3", "thresholds.recursive", "[c, l]", "3"),
        ("[thresholds]\nrecursive = [3]", "thresholds.recursive", "[c, l]", "[3]"),
        ('[thresholds]\nrecursive = ["a", 2]', "thresholds.recursive", "[c, l]", "['a', 2]"),
        ("[thresholds]\nalpha = [1]", "thresholds.alpha", "a number", "[1]"),
        ('quasi_identifiers = ["zip", ["a"]]', "quasi_identifiers[1]", "a string", "['a']"),
        ("inputs = [1]", "inputs[0]", "a string", "1"),
        ("hierarchy = { zip = 5 }", "hierarchy.zip", "a string", "5"),
        ("filter = [1]", "filter[0]", "a string", "1"),
        ("ground_distance = { s = 1 }", "ground_distance.s", "a string", "1"),
        ('order = { s = "a,b" }', "order.s", "a list of strings", "'a,b'"),
        ("order = { s = [1, 2] }", "order.s[0]", "a string", "1"),
        ("[[datasets]]\nname = 3", "datasets[0].name", "a string", "3"),
    ],
)
def test_policy_value_of_the_wrong_type(
    tmp_path: Path,
    text: str,
    key: str,
    expected: str,
    found: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    policy = write(tmp_path / "policy.toml", text + "\n")
    line = one_error(capsys, "audit", "--config", str(policy))
    assert f"{policy}: " in line
    assert f"{key} must be {expected}" in line and f"found {found} (" in line


# What each key accepts, as docs/policy-files.md documents it; the test draws anything else.
ACCEPTS = {
    "k": "whole",
    "entropy_l": "number",
    "t": "number",
    "recursive": "pair",
    "inputs": "texts",
    "quasi_identifiers": "texts",
    "filter": "texts",
    "sep": "text",
    "advise": "bool",
    "max_classes": "whole",
    "hierarchy": "text table",
    "generalize": "whole table",
    "order": "texts table",
    "suda": "bool or whole",
}
THRESHOLD_KEYS = {"k", "entropy_l", "t", "recursive"}

scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=5),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text("abc", min_size=1, max_size=3), inner, max_size=3),
    ),
    max_leaves=6,
)


def _accepts(kind: str, value: Any) -> bool:
    def whole(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def texts(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(x, str) for x in v)

    def table(v: Any, test: Any) -> bool:
        return isinstance(v, dict) and all(test(x) for x in v.values())

    return {
        "whole": whole,
        "number": number,
        "pair": lambda v: isinstance(v, list) and len(v) == 2 and number(v[0]) and whole(v[1]),
        "texts": texts,
        "text": lambda v: isinstance(v, str),
        "bool": lambda v: isinstance(v, bool),
        "text table": lambda v: table(v, lambda x: isinstance(x, str)),
        "whole table": lambda v: table(v, whole),
        "texts table": lambda v: table(v, texts),
        "bool or whole": lambda v: isinstance(v, int),
    }[kind](value)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # a JSON string is a TOML basic string, but for DEL
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return "{" + ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(sorted(ACCEPTS)), value=values)
def test_any_wrong_typed_policy_value_is_one_line_and_exit_2(key: str, value: Any) -> None:
    assume(not _accepts(ACCEPTS[key], value))
    table = "[thresholds]\n" if key in THRESHOLD_KEYS else ""
    with tempfile.TemporaryDirectory() as folder:
        policy = write(Path(folder) / "policy.toml", f"{table}{key} = {_toml(value)}\n")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["audit", "--config", str(policy)])
    lines = err.getvalue().splitlines()
    assert code == 2, err.getvalue()
    assert len(lines) == 1 and lines[0].startswith(f"anonaudit: error: {policy}: ")
    assert key in lines[0] and " must be " in lines[0] and "found " in lines[0]


def test_generalize_level_that_is_not_ascii_digits(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_error(capsys, "audit", str(data), *ROLES, "--hierarchy", "zip=prefix",
                     "--generalize", "zip=²")  # fmt: skip
    assert "--generalize zip=²" in line and "whole number" in line


def test_order_file_that_is_not_utf8(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    order = write(tmp_path / "order.txt", "flu\nk\xe4se\n".encode("latin-1"))
    line = one_error(capsys, "audit", str(data), *ROLES, "--order", f"disease=@{order}")
    assert str(order) in line and "UTF-8" in line
    line = one_error(capsys, "audit", str(data), *ROLES, "--order", f"disease=@{order}.missing")
    assert f"{order}.missing" in line


def test_sampling_fraction_too_small_to_mean_a_population(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_error(capsys, "audit", str(data), *ROLES, "--sampling-fraction", "1e-300")
    assert "--sampling-fraction 1e-300" in line
    assert math.isfinite(1e-12)  # the smallest accepted is a plain number
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--sampling-fraction", "1e-12")
    assert code == 0, err


# -- damaged inputs: never a partial read ----------------------------------------------


def test_truncated_gzip_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"{i % 900:05d},{i % 70},flu\n" for i in range(20000))
    whole = gzip.compress(("zip,age,disease\n" + rows).encode("utf-8"))
    for cut in (8, len(whole) // 2):
        path = write(tmp_path / "cut.csv.gz", whole[: len(whole) - cut])
        line = one_error(capsys, "audit", str(path), *ROLES, "--quiet")
        assert str(path) in line and "truncated" in line


@pytest.mark.parametrize(
    ("text", "line_number"),
    [
        ('zip,age,disease\n02134,30,flu\n02134,30,"cold\n', 3),
        ('zip,age,disease\n02134,30,"flu\n02139,40,cold\n02139,40,flu\n', 2),
        ('zip,age,disease\n02134,30,flu\n02134,30,"co""ld', 3),
    ],
)
def test_unclosed_quote_in_the_last_field_is_an_error(
    tmp_path: Path, text: str, line_number: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "open.csv", text)
    line = one_error(capsys, "audit", str(path), "--qi", "zip", "--quiet")
    assert f"{path}, line {line_number}:" in line and "never closed" in line


def test_closed_quotes_at_the_end_are_fine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in ('zip,d\n1,"x"\n2,"y""z"', 'zip,d\n1,"x"\n2,"a\nb"\n', 'zip,d\n1,x\n2,"q"\n'):
        path = write(tmp_path / "closed.csv", text)
        code, _, err = run(capsys, "audit", str(path), "--qi", "zip", "--sensitive", "d", "--quiet")
        assert code == 0, (text, err)


def test_parquet_with_a_corrupt_magic_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"zip": ["02134", "02139"], "age": ["30", "40"]}), path)
    damaged = bytearray(path.read_bytes())
    damaged[:4] = b"XXXX"
    path.write_bytes(bytes(damaged))
    line = one_error(capsys, "audit", str(path), "--qi", "zip", "--quiet")
    assert f"{path}, byte 0:" in line and "PAR1" in line


# -- limits and edge cases -------------------------------------------------------------


def test_header_longer_than_64_kib_is_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [f"column_{i:06d}" for i in range(8000)]  # about 110 KB of header
    row = ",".join("x" for _ in names)
    path = write(tmp_path / "wide.csv", ",".join(names) + f"\n{row}\n{row}\n")
    code, out, err = run(capsys, "audit", str(path), "--qi", names[-1], "--json", "-", "--quiet")
    assert code == 0, err
    assert json.loads(out)["rows"] == 2


@pytest.mark.parametrize("mark", ["\f", "\v", "\u2028", "\x85"])
def test_header_names_with_breaks_that_are_not_line_ends(
    tmp_path: Path, mark: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "odd.csv", f"a{mark}b,c\n1,2\n1,2\n")
    code, out, err = run(capsys, "audit", str(path), "--qi", f"a{mark}b,c", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["quasi_identifiers"] == [f"a{mark}b", "c"]


def test_choose_counts_from_one(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_error(capsys, "advise", str(data), "--qi", "zip", "--hierarchy", "zip=prefix",
                     "--out", str(tmp_path / "o.csv"), "--choose", "0")  # fmt: skip
    assert "--choose" in line and "(got 0)" in line


def test_order_with_a_value_listed_twice(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_error(capsys, "audit", str(data), *ROLES, "--order", "disease=flu,cold,flu")
    assert "--order disease" in line and "'flu' twice" in line


def test_nulls_drop_with_a_null_in_every_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "nulls.csv", "zip,age\n,30\n02134,\n")
    line = one_error(capsys, "audit", str(path), "--qi", "zip,age", "--nulls", "drop")
    assert "every record has a null quasi-identifier" in line


# -- datasets whose files differ (issues 12 and 15) ---------------------------------------

ARRESTS = "age,sex,released\n30,M,yes\n30,M,no\n40,F,yes\n40,F,no\n"
WAGE = "age,wage,released\n30,100,yes\n50,200,no\n"
AUDITED = ("--qi", "age,sex", "--sensitive", "released")


@pytest.mark.parametrize("wage_name", ["wage.csv", "a_wage.csv"])  # after, then before
def test_folder_of_csvs_lacking_an_audited_column_names_each_file(
    tmp_path: Path, wage_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "dir" / "arrests.csv", ARRESTS)
    wage = write(tmp_path / "dir" / wage_name, WAGE)
    line = one_error(capsys, "audit", str(tmp_path / "dir"), *AUDITED, "--quiet")
    assert f"{wage} lacks sex" in line and "arrests" not in line
    assert "--missing-columns null" in line


def test_missing_columns_null_reads_nulls_and_reports_each_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "dir" / "arrests.csv", ARRESTS)
    wage = write(tmp_path / "dir" / "wage.csv", WAGE)
    folder = str(tmp_path / "dir")
    code, out, err = run(capsys, "audit", folder, *AUDITED, "--missing-columns", "null",
                         "--json", "-", "--quiet")  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    files = {f["name"]: f["null_columns"] for f in report["sources"][0]["files"]}
    assert files == {str(tmp_path / "dir" / "arrests.csv"): [], str(wage): ["sex"]}
    assert report["rows"] == 6 and report["nulls"]["per_column"]["sex"] == 2
    code, out, err = run(capsys, "audit", folder, *AUDITED, "--missing-columns", "null")
    assert code == 0, err
    assert f"{wage}: no column sex; read as null" in out
    policy = write(tmp_path / "policy.toml", 'missing_columns = "null"\n')
    code, _, err = run(capsys, "audit", folder, *AUDITED, "--config", str(policy), "--quiet")
    assert code == 0, err


def test_parquet_partition_lacking_an_audited_column_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lake = tmp_path / "lake"
    (lake / "day=1").mkdir(parents=True)
    (lake / "day=2").mkdir()
    pq.write_table(pa.table({"age": ["30", "40"], "sex": ["M", "F"]}), lake / "day=1" / "a.parquet")
    pq.write_table(pa.table({"age": ["30", "50"]}), lake / "day=2" / "b.parquet")
    line = one_error(capsys, "audit", str(lake), "--qi", "age,sex,day", "--quiet")
    assert f"{lake / 'day=2' / 'b.parquet'} lacks sex" in line
    code, out, err = run(capsys, "audit", str(lake), "--qi", "age,sex,day",
                         "--missing-columns", "null", "--json", "-")  # fmt: skip
    assert code == 0, err
    assert [f["null_columns"] for f in json.loads(out)["sources"][0]["files"]] == [[], ["sex"]]


def test_unclosed_quote_in_a_folders_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "dir" / "a.csv", ROWS)
    bad = write(tmp_path / "dir" / "b.csv", 'zip,age,disease\n02134,30,flu\n02134,30,"cold\n')
    line = one_error(capsys, "audit", str(tmp_path / "dir"), *ROLES, "--quiet")
    assert f"{bad}, line 3:" in line and "never closed" in line


# -- the all-null refusal is for the input only -------------------------------------------


def test_suppression_that_empties_a_qi_is_not_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "q.csv", "q0,q1,s\na,,x\na,,x\nb,z,x\n")
    code, out, err = run(capsys, "audit", str(path), "--qi", "q0,q1", "-k", "2", "--json", "-")
    assert code == 1, err
    assert json.loads(out)["k_anonymity"]["k"] == 1


def test_all_null_qi_under_wildcard_is_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "q.csv", "q0,q1\na,\na,\nb,\n")
    line = one_error(capsys, "audit", str(path), "--qi", "q0,q1")
    assert "quasi-identifier 'q1' is null in every row" in line
    code, out, err = run(capsys, "audit", str(path), "--qi", "q0,q1", "--nulls", "wildcard",
                         "--json", "-")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["k_anonymity"]["k"] == 1  # b matches only itself


# -- Parquet and compressed files the reader cannot take as they are ----------------------


def test_parquet_columns_differing_only_in_case_are_two_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "case.parquet"
    pq.write_table(pa.table({"Age": ["1", "1", "2"], "age": ["3", "4", "4"]}), path)
    code, out, err = run(capsys, "audit", str(path), "--qi", "Age,age", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["k_anonymity"]["classes"] == 3


def test_nested_parquet_column_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"zip": ["1", "2"], "addr": [{"a": 1}, {"a": 2}]}), path)
    for target in (path, tmp_path):
        line = one_error(capsys, "audit", str(target), "--qi", "zip,addr", "--quiet")
        assert f"{path}: column 'addr' is nested" in line


def test_column_typed_differently_in_two_files_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pq.write_table(pa.table({"zip": [2134, 2139]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"zip": ["02134", "x"]}), tmp_path / "b.parquet")
    line = one_error(capsys, "audit", str(tmp_path), "--qi", "zip", "--quiet")
    assert f"{tmp_path / 'b.parquet'}: column 'zip' is string here but int64" in line
    # Integers of two widths agree as text.
    pq.write_table(pa.table({"zip": pa.array([2134, 2139], pa.int32())}), tmp_path / "b.parquet")
    code, out, err = run(capsys, "audit", str(tmp_path), "--qi", "zip", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["k_anonymity"]["k"] == 2


def test_corrupt_bz2_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import bz2

    whole = bz2.compress(ROWS.encode("utf-8") * 50)
    for name, data in (("cut.csv.bz2", whole[:40]), ("garbage.csv.bz2", b"not bz2 at all")):
        path = write(tmp_path / name, data)
        line = one_error(capsys, "audit", str(path), *ROLES, "--quiet")
        assert str(path) in line and "damaged or truncated" in line


def test_a_field_longer_than_a_block_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("anonaudit.sources.csv._BLOCK_BYTES", 1024)
    long = "x" * 20_000
    rows = "".join(f"{i % 3},{long if i == 40 else 'y'}\n" for i in range(100))
    path = write(tmp_path / "long.csv", "zip,note\n" + rows)
    code, out, err = run(capsys, "audit", str(path), "--qi", "zip", "--sensitive", "note",
                         "--json", "-")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["rows"] == 100
    monkeypatch.setattr("anonaudit.sources.csv._MAX_BLOCK_BYTES", 4096)
    line = one_error(capsys, "audit", str(path), "--qi", "zip", "--quiet")
    assert f"{path}, after record 40: a record is longer than 0.00390625 MiB" in line


# -- named pipes: one pass is read as a stream, two are refused ---------------------------


def _fifo_with(tmp_path: Path, name: str, data: bytes) -> tuple[Path, threading.Thread]:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True)
    writer.start()
    return fifo, writer


@pytest.mark.parametrize("name", ["pipe.csv", "pipe.csv.gz"])
def test_a_fifo_is_read_as_a_stream(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ROWS.encode("utf-8")
    fifo, writer = _fifo_with(tmp_path, name, gzip.compress(data) if name.endswith("gz") else data)
    code, out, err = run(capsys, "audit", str(fifo), *ROLES, "--json", "-")
    writer.join(timeout=30)
    assert code == 0, err
    assert json.loads(out)["rows"] == 4


def test_a_fifo_with_a_bad_row_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo, writer = _fifo_with(tmp_path, "pipe.csv", b"zip,age\n1,2\n1,2,3\n")
    line = one_error(capsys, "audit", str(fifo), "--qi", "zip")
    writer.join(timeout=30)
    assert f"{fifo}, record 3: expected 2 fields, found 3" in line


def test_a_fifo_is_refused_where_two_passes_are_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # nobody writes: a read would wait forever
    out = str(tmp_path / "out.csv")
    line = one_error(capsys, "audit", str(fifo), *ROLES, "--records-out", out)
    assert f"{fifo}: is a pipe" in line and "--records-out" in line
    line = one_error(capsys, "advise", str(fifo), "--qi", "zip", "-k", "2",
                     "--hierarchy", "zip=prefix", "--out", out)  # fmt: skip
    assert f"{fifo}: is a pipe" in line and "--out" in line
    assert not Path(out).exists()


# -- object storage that never answers ----------------------------------------------------


def test_storage_that_never_answers_times_out_naming_the_url(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # accept every connection, never answer
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.getsockname()[1]}"
    # In a child process: the S3 client reconnects to the silent server while the
    # request is abandoned, and the connections it leaves die with the process (in this
    # one they ran the test session out of file descriptors).
    try:
        child = subprocess.run(
            [sys.executable, "-m", "anonaudit", "audit", "s3://bucket/visits", "--qi", "zip",
             "--storage-option", f"endpoint_url={endpoint}",
             "--storage-option", "anonymous=true",
             "--storage-option", "connect_timeout=1",
             "--storage-option", "read_timeout=0.5"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert child.returncode == 2, child.stderr
        assert "Traceback" not in child.stderr
        (line,) = child.stderr.splitlines()
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()
        server.close()
    assert line.startswith(f"anonaudit: error: s3://bucket/visits: the storage at {endpoint} ")
    assert "did not answer in time" in line and "read_timeout=SECONDS" in line
    line = one_error(capsys, "audit", "s3://bucket/visits", "--qi", "zip",
                     "--storage-option", "read_timeout=soon")  # fmt: skip
    assert "--storage-option read_timeout=soon" in line


def test_integers_beyond_2_to_the_53_in_a_numeric_sa_are_distinct(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2**53 and 2**53 + 1 are one float but two numbers: ranked exactly, not refused."""
    big = 2**53
    data = tmp_path / "big.csv"
    data.write_text(f"q,s\na,{big}\na,{big + 1}\nb,{big}\nb,{big + 2}\n", encoding="utf-8")
    for distance in ("ordered", "numeric"):
        code, out, err = run(
            capsys, "audit", str(data), "--qi", "q", "--sensitive", "s", "--t-distance", distance
        )
        assert code == 0, err
        assert "t-closeness" in out
    data.write_text("q,s\na,1\nb,1.0\n", encoding="utf-8")
    code, _, err = run(
        capsys, "audit", str(data), "--qi", "q", "--sensitive", "s", "--t-distance", "ordered"
    )
    assert code == 2 and "'s' writes one number in two ways" in err


# The audit run in a child process that stops itself (SIGSTOP) at a chosen point of the
# report's writing, so that the test kills it there, on a loaded machine as on an idle
# one: "write" halfway through writing the temporary file, "rename" once it is whole,
# just before it is renamed over the report. A writer that never writes a temporary
# file and renames it never stops, and the test fails.
_PAUSED_WRITER = """
import builtins, os, runpy, signal, sys

point, target = sys.argv[1], os.path.realpath(sys.argv[2])
real_open, real_replace = builtins.open, os.replace

def pause():
    os.kill(os.getpid(), signal.SIGSTOP)

class HalfThenPause:
    def __init__(self, stream):
        self.stream = stream
    def write(self, text):
        half = len(text) // 2
        self.stream.write(text[:half])
        self.stream.flush()
        pause()
        return half + self.stream.write(text[half:])
    def __getattr__(self, name):
        return getattr(self.stream, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self.stream.__exit__(*exc)

def open_(file, *args, **kwargs):
    stream = real_open(file, *args, **kwargs)
    name = os.path.basename(str(file))
    beside = os.path.dirname(os.path.realpath(file)) == os.path.dirname(target)
    if point == "write" and beside and name.startswith(".anonaudit-tmp-"):
        return HalfThenPause(stream)
    return stream

def replace(source, destination, *args, **kwargs):
    if point == "rename" and os.path.realpath(destination) == target:
        pause()
    return real_replace(source, destination, *args, **kwargs)

builtins.open, os.replace = open_, replace
sys.argv = ["anonaudit", *sys.argv[3:]]
runpy.run_module("anonaudit", run_name="__main__", alter_sys=True)
"""


def _killed_at(point: str, out: Path, args: list[str]) -> Path:
    """Run the audit writing ``out``, SIGKILL it once it stops at ``point``; return the
    temporary file it was writing."""
    process = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_WRITER, point, str(out), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600  # however loaded the machine: it stops or ends
    while True:
        pid, status = os.waitpid(process.pid, os.WUNTRACED | os.WNOHANG)
        if pid or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not pid:
        process.kill()
        process.wait()
        pytest.fail(f"the run neither stopped at {point!r} nor ended in 600 s")
    if not os.WIFSTOPPED(status):
        process.returncode = os.waitstatus_to_exitcode(status)
        pytest.fail(f"the run never stopped at {point!r} (exit {process.returncode})")
    temporaries = list(out.parent.glob(f".anonaudit-tmp-{out.name}-{process.pid}-*"))
    assert len(temporaries) == 1, "the report is written to a temporary file beside it"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return temporaries[0]


def test_a_report_killed_while_written_is_the_old_or_the_new_never_a_mix(
    tmp_path: Path,
) -> None:
    """SIGKILL halfway through writing a report that replaces a good one, and once it
    is written whole but not yet renamed: the old report stays, whole. Deterministic:
    the run stops itself at those points and is killed there."""
    data = tmp_path / "ids.csv"
    pd.DataFrame({"id": [f"id{i:05d}" for i in range(2_000)], "s": ["x", "y"] * 1_000}).to_csv(
        data, index=False
    )
    out = tmp_path / "report.json"
    args = ["audit", str(data), "--qi", "id", "--sensitive", "s", "--json", str(out)]
    args += ["--max-classes", "0", "--exit-zero", "--quiet"]
    subprocess.run([sys.executable, "-m", "anonaudit", *args], check=True, capture_output=True)
    new = out.read_bytes()
    old = b'{"old": true}\n'
    sizes = {}
    for point in ("write", "rename"):
        out.write_bytes(old)
        temporary = _killed_at(point, out, args)
        assert out.read_bytes() == old, point
        sizes[point] = temporary.stat().st_size  # what the killed run left
    assert 0 < sizes["write"] < len(new) == sizes["rename"]  # halfway; whole, not renamed
    # a run that ends writes the new report whole, and removes the dead runs' temporaries
    subprocess.run([sys.executable, "-m", "anonaudit", *args], check=True, capture_output=True)
    written = out.read_bytes()
    assert len(written) == len(new)  # only the time differs
    assert json.loads(written).keys() == json.loads(new).keys()
    assert list(tmp_path.glob(".anonaudit-tmp-*")) == []


def test_long_analyses_are_refused_up_front_past_max_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Estimated before anything runs: subsets x classes, nodes x classes, listed rows."""
    data = tmp_path / "wide.csv"
    names = [f"q{i}" for i in range(20)]
    rows = [",".join(names)]
    rows += [",".join(str((r * (i + 3)) % 7) for i in range(20)) for r in range(50)]
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    qi = ["--qi", ",".join(names)]
    message = one_error(capsys, "audit", str(data), *qi, "--suda", "20")
    # 1,048,575 subsets, each costing its 7 classes and the overhead of 100 more
    assert "--suda 20 over 20 QIs and 7 classes would take about 112,197,525" in message
    assert "--max-work 112197525" in message
    one_error(capsys, "audit", str(data), *qi, "--qi-analysis", "20", "--max-work", "1000")
    code, out, _ = run(capsys, "audit", str(data), *qi, "--qi-analysis", "2", "--max-work", "0")
    assert code == 0 and "qi analysis (210 subsets of up to 2 QIs)" in out
    ids = tmp_path / "ids.csv"
    ids.write_text("id\n" + "\n".join(f"u{i}" for i in range(300)) + "\n", encoding="utf-8")
    listing = ["audit", str(ids), "--qi", "id", "-k", "2", "--max-classes", "0"]
    message = one_error(capsys, *listing, "--json", str(tmp_path / "r.json"), "--max-work", "1000")
    assert "--max-classes 0 (all 300 classes below k listed" in message


def test_long_analyses_show_their_progress(tmp_path: Path) -> None:
    """SUDA, the QI analysis and the advice search each count their steps as they run."""
    import anonaudit
    from anonaudit.progress import Progress

    names = [f"q{i}" for i in range(5)]
    frame = pd.DataFrame(
        {n: [str((r * (i + 2)) % 4) for r in range(60)] for i, n in enumerate(names)}
    )
    frame["s"] = [str(r % 3) for r in range(60)]
    stream = io.StringIO()
    anonaudit.audit(
        frame,
        Roles(names, ["s"]),
        AuditOptions(
            policy=anonaudit.Policy(k=2),
            hierarchies={"q0": "prefix", "q1": "prefix"},
            analyses=Analyses(suda=True, qi_analysis=2, advise=True),
        ),
        engine=EngineOptions(progress=Progress(stream, interval=0.0, when="always")),
    )
    lines = stream.getvalue().splitlines()
    # the last line of each: every subset of the five QIs; those of up to 2 and the 5 drops
    assert any(line.startswith("anonaudit: SUDA: 31 of 31 QI subsets, ") for line in lines)
    assert any(line.startswith("anonaudit: QI analysis: 20 of 20 QI subsets, ") for line in lines)
    searched = [line for line in lines if line.startswith("anonaudit: advice search: ")]
    assert searched and all("of at most 4 lattice nodes" in line for line in searched)
    assert not any("ETA" in line for line in searched)  # a pruned search has no honest ETA
    quiet = io.StringIO()
    anonaudit.audit(
        frame,
        Roles(names),
        AuditOptions(analyses=Analyses(suda=True)),
        engine=EngineOptions(progress=Progress(quiet, interval=0.0)),
    )
    assert quiet.getvalue() == ""  # not a terminal: a batch job's stderr stays clean
