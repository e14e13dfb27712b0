"""The release ledger and the linkage commands against hostile files, names and races.

Another application's database given as ``--ledger`` is refused untouched; a ledger of a
newer anonaudit, a changed or damaged one is refused with one line (exit 2); outputs never
replace an input, SQLite's side files included; the check of a release against the ledger
and its record are one transaction (tested with real processes); ``dp --out`` writes the
release before its cost is recorded and removes it when the record fails; names are
printed with their control characters escaped; DP parameters are checked alike by every
command.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import resource
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from ganta import HOSPITAL_A, HOSPITAL_B

from anonaudit.cli import main
from anonaudit.errors import InputError
from anonaudit.files import printable
from anonaudit.linkage import Ledger
from anonaudit.linkage.ledger import APPLICATION_ID, _failure

ROLES = ["--qi", "zip,age", "--sensitive", "disease"]
_TIMEOUT = 120  # seconds: every process a test starts is bounded


def _write(frame: pd.DataFrame, path: Path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def _state(path: Path) -> tuple[str, int]:
    """The file's SHA-256 and its modification time (ns): what must not change."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    lines = [line for line in err.strip().splitlines() if "warning:" not in line]
    assert len(lines) == 1, err
    return lines[0]


def _foreign(path: Path, script: str) -> None:
    connection = sqlite3.connect(path)
    connection.executescript(script)
    connection.close()


_FOREIGN = {
    "another application's database": "CREATE TABLE users (id INTEGER, name TEXT);"
    "INSERT INTO users VALUES (1, 'ada');",
    "one with its own releases table": "CREATE TABLE releases (id INTEGER, version TEXT);"
    "INSERT INTO releases VALUES (1, '1.0');",
    "one with its own meta table": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
    "INSERT INTO meta VALUES ('owner', 'app');",
    "one with both": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta VALUES ('schema_version', '7');"
    "CREATE TABLE releases (id INTEGER, tag TEXT);",
    "one with another application id": "PRAGMA application_id = 42; CREATE TABLE t (x);",
}


def _hostile_file(kind: str, path: Path) -> None:
    if kind == "an empty file":
        path.write_bytes(b"")
    elif kind == "a text file":
        path.write_text("not a database\n", encoding="utf-8")
    else:
        _foreign(path, _FOREIGN[kind])


@pytest.mark.parametrize("kind", [*_FOREIGN, "an empty file", "a text file"])
@pytest.mark.parametrize("command", ["audit", "compose", "dp", "ledger"])
def test_a_file_that_is_no_ledger_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, command: str
) -> None:
    app = tmp_path / "app.db"
    _hostile_file(kind, app)
    os.utime(app, ns=(1_000_000_000, 1_000_000_000))
    before = _state(app)
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    ledger = ["--ledger", str(app), "--dataset", "city", "--quiet"]
    argv = {
        "audit": ["audit", a, *ROLES, *ledger],
        "compose": ["compose", a, b, "--id", "pid", *ROLES, *ledger],
        "dp": ["dp", a, *ROLES, "--epsilon", "1", "--delta", "1e-6", *ledger],
        "ledger": ["ledger", str(app)],
    }[command]
    assert main(argv) == 2
    line = _one_line_error(capsys)
    assert str(app) in line and "not a release ledger" in line, line
    assert _state(app) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "app.db", "b.csv"]


def test_a_new_ledger_is_marked_and_an_older_one_recognised_and_marked(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    Ledger.open(path).close()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    # A ledger of an older anonaudit (no application id): recognised by its tables.
    connection.execute("PRAGMA application_id = 0")
    connection.commit()
    connection.close()
    with Ledger.open(path) as ledger:
        assert ledger.meta()["schema_version"] == "6"
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    connection.close()


def _recorded_ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.sqlite"
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    argv = ["audit", a, *ROLES, "--id", "pid", "--ledger", str(path), "--dataset", "city"]
    assert main([*argv, "--quiet"]) == 0
    return path


def _tamper(path: Path, script: str) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.executescript(script)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("UPDATE meta SET value = '99' WHERE key = 'schema_version'", "schema version 99"),
        ("UPDATE meta SET value = 'three' WHERE key = 'schema_version'", "schema version is"),
        ("ALTER TABLE releases RENAME COLUMN epsilon TO eps", "lacks the columns epsilon"),
        ("ALTER TABLE retirements RENAME COLUMN reason TO why", "lacks the columns reason"),
    ],
)
def test_a_newer_or_changed_ledger_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, message: str
) -> None:
    path = _recorded_ledger(tmp_path)
    _tamper(path, script)
    before = _state(path)
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    argv = ["audit", b, *ROLES, "--ledger", str(path), "--dataset", "city", "--quiet"]
    assert main(argv) == 2
    line = _one_line_error(capsys)
    assert str(path) in line and message in line, line
    assert _state(path) == before
    assert main(["ledger", str(path)]) == 2
    assert message in _one_line_error(capsys)


@pytest.mark.parametrize(
    ("script", "command"),
    [
        ("UPDATE releases SET class_table = x'00112233'", "audit"),  # garbage blob
        ("UPDATE releases SET class_table = x''", "audit"),  # empty blob
        ("UPDATE releases SET records = x'deadbeef'", "audit --id"),
        ("UPDATE releases SET quasi_identifiers = '[\"zip\",'", "ledger"),  # invalid JSON
        ("UPDATE releases SET sensitive = '{}'", "ledger"),
        ("UPDATE releases SET epsilon = 'lots'", "ledger"),  # text in a number column
        ("UPDATE releases SET transformation = '[1'", "audit"),
    ],
)
def test_a_damaged_ledger_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, command: str
) -> None:
    path = _recorded_ledger(tmp_path)
    _tamper(path, script)
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    if command == "ledger":
        argv = ["ledger", str(path)]
    else:
        argv = ["audit", b, *ROLES, "--ledger", str(path), "--dataset", "city", "--quiet"]
        argv += ["--id", "pid"] if command == "audit --id" else ["-k", "1"]
    assert main(argv) == 2
    line = _one_line_error(capsys)
    assert str(path) in line and "release #1 is damaged" in line, line


def test_an_input_that_is_a_side_file_of_the_ledger_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    for suffix in ("-wal", "-shm", "-journal"):
        data = tmp_path / f"ledger.sqlite{suffix}"
        _write(HOSPITAL_A, data)
        before = _state(data)
        for argv in (
            ["audit", str(data), *ROLES],
            ["dp", str(data), *ROLES, "--epsilon", "1", "--delta", "1e-6"],
            ["compose", str(data), _write(HOSPITAL_B, tmp_path / "b.csv"), "--id", "pid",
             *ROLES],
        ):  # fmt: skip
            assert main([*argv, "--ledger", str(ledger), "--dataset", "d", "--quiet"]) == 2
            line = _one_line_error(capsys)
            assert "would overwrite the input" in line and str(data) in line, line
            assert _state(data) == before
        data.unlink()
    assert not ledger.exists()


def test_a_json_output_that_is_a_side_file_of_the_ledger_listed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _recorded_ledger(tmp_path)
    assert main(["ledger", str(path), "--json", f"{path}-wal"]) == 2
    assert "would overwrite the input" in _one_line_error(capsys)


def test_listings_are_never_written_over_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(_write(HOSPITAL_A, tmp_path / "k-anonymity.csv"))
    before = _state(data)
    argv = ["audit", str(data), *ROLES, "-k", "5", "--listings-dir", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    line = _one_line_error(capsys)
    assert "--listings-dir" in line and str(data) in line, line
    assert _state(data) == before
    # Spelled otherwise (the folder with ./), the same.
    os.chdir(tmp_path)
    assert main([*argv[:-3], "--listings-dir", ".", "--quiet"]) == 2
    assert _state(data) == before


@pytest.mark.parametrize("command", ["compose", "diff"])
@pytest.mark.parametrize("option", ["--html", "--json"])
def test_compose_and_diff_do_not_create_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, option: str
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    extra = ["--id", "pid"] if command == "compose" else []
    target = tmp_path / "missing" / "report.out"
    assert main([command, a, b, *ROLES, *extra, option, str(target), "--quiet"]) == 2
    line = _one_line_error(capsys)
    assert "does not exist" in line and option in line, line
    assert not (tmp_path / "missing").exists()


# Races: real processes, started together (fork after the imports, a barrier), bounded.


def _run_main(argv: list[str], barrier: Any, queue: Any, delay: float) -> None:
    if delay:  # widen the window between the check against the ledger and the record
        from anonaudit.linkage import history  # the audit imports it when it runs

        check = history.release_history

        def slow(*args: Any, **kwargs: Any) -> Any:
            found = check(*args, **kwargs)
            time.sleep(delay)
            return found

        history.release_history = slow  # type: ignore[assignment]
    barrier.wait(timeout=_TIMEOUT)
    with open(os.devnull, "w") as null:
        sys.stdout = sys.stderr = null
        status = main(argv)
    queue.put(status)


def _together(runs: list[list[str]], delay: float = 0.0) -> list[int]:
    """Run ``main`` with each argv in its own process, all at once; their exit statuses.

    With ``delay``, each process waits that long (seconds) after checking its release
    against the ledger: a race between the check and the record, if any, is then lost
    every time rather than now and then.
    """
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(runs))
    queue = context.Queue()
    processes = [
        context.Process(target=_run_main, args=(argv, barrier, queue, delay)) for argv in runs
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=_TIMEOUT)
        if process.is_alive():
            process.kill()
            pytest.fail("a concurrent run did not finish in time")
    return sorted(queue.get(timeout=5) for _ in runs)


def _months(tmp_path: Path) -> tuple[str, str]:
    """January, and February with two newcomers in zip 130, both with hiv: February
    discloses their value by differencing with January (and January with February)."""
    jan = pd.DataFrame(
        {"zip": ["130"] * 4 + ["148"] * 4, "age": ["30-39"] * 8,
         "dx": ["flu", "flu", "hiv", "hiv"] * 2}
    )  # fmt: skip
    feb = pd.concat([jan, pd.DataFrame({"zip": ["130", "130"], "age": "30-39", "dx": "hiv"})])
    return _write(jan, tmp_path / "jan.csv"), _write(feb, tmp_path / "feb.csv")


def test_concurrent_audits_never_both_record_a_differencing_pair(tmp_path: Path) -> None:
    jan, feb = _months(tmp_path)
    roles = ["--qi", "zip,age", "--sensitive", "dx", "-k", "2", "--dataset", "visits"]
    for trial in range(10):
        ledger = tmp_path / f"ledger{trial}.sqlite"
        Ledger.open(ledger).close()
        statuses = _together(
            [["audit", month, *roles, "--ledger", str(ledger), "--quiet"] for month in (jan, feb)],
            delay=0.2 if trial % 2 else 0.0,
        )
        with Ledger.open(ledger) as opened:
            recorded = opened.releases("visits")
        assert len(recorded) == 1, f"trial {trial}: {[e.source for e in recorded]}"
        assert statuses == [0, 1]  # the second is judged against the first, and fails


def test_concurrent_audits_of_one_file_record_it_once(tmp_path: Path) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    ledger = tmp_path / "new" / "ledger.sqlite"  # created by the runs themselves
    ledger.parent.mkdir()
    argv = ["audit", a, *ROLES, "--id", "pid", "--ledger", str(ledger), "--dataset", "city"]
    statuses = _together([[*argv, "--recipient", "insurer", "--quiet"]] * 10, delay=0.1)
    assert statuses == [0] * 10
    with Ledger.open(ledger) as opened:
        assert len(opened.releases("city", "insurer")) == 1
    assert sorted(p.name for p in ledger.parent.iterdir() if "tmp" in p.name) == []


def test_concurrent_compose_runs_record_each_file_once(tmp_path: Path) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    ledger = tmp_path / "ledger.sqlite"
    argv = ["compose", a, b, "--id", "pid", *ROLES, "--ledger", str(ledger), "--dataset", "c"]
    assert _together([[*argv, "--quiet"]] * 6) == [0] * 6
    with Ledger.open(ledger) as opened:
        assert [entry.source for entry in opened.releases("c")] == [a, b]


# dp --out and the record: both or neither.


def _dp(tmp_path: Path, *extra: str) -> list[str]:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    return ["dp", a, *ROLES, "--epsilon", "1", "--delta", "1e-6", "--dataset", "city",
            "--ledger", str(tmp_path / "ledger.sqlite"), "--quiet", *extra]  # fmt: skip


def test_dp_out_failing_to_write_records_no_spend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from anonaudit.errors import OutputError
    from anonaudit.report import dp as artefact

    out = tmp_path / "release.csv"

    def full_disk(report: object, path: Path) -> Path:
        raise OutputError(f"{path}: cannot write (No space left on device)")

    monkeypatch.setattr(artefact, "write", full_disk)
    assert main(_dp(tmp_path, "--out", str(out))) == 2
    assert "No space left" in _one_line_error(capsys)
    with Ledger.open(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.releases() == ()  # no spend charged for a release never written
    assert not out.exists()


class _FullDiskCursor(sqlite3.Cursor):
    """A cursor whose insert of a release fails as on a full disk."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if sql.startswith("INSERT INTO releases"):
            raise sqlite3.OperationalError("database or disk is full")
        return super().execute(sql, parameters)


class _FullDiskConnection(sqlite3.Connection):
    def cursor(self, factory: Any = _FullDiskCursor) -> Any:
        return super().cursor(factory)


def test_dp_out_whose_record_fails_is_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "release.csv"
    connect = sqlite3.connect

    def full_disk(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return connect(*args, **kwargs, factory=_FullDiskConnection)

    command = _dp(tmp_path, "--out", str(out))
    Ledger.open(tmp_path / "ledger.sqlite").close()
    monkeypatch.setattr(sqlite3, "connect", full_disk)
    assert main(command) == 2
    line = _one_line_error(capsys)
    assert "ledger.sqlite" in line and "nothing was recorded" in line, line
    assert not out.exists() and not Path(f"{out}.dp.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("ledger")) == [
        "a.csv"
    ]
    monkeypatch.undo()
    with Ledger.open(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.releases() == ()


def _limited(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_file_size_limit_while_recording_is_one_line(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    Ledger.open(ledger).close()
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    argv = [sys.executable, "-m", "anonaudit", "audit", a, *ROLES, "--id", "pid",
            "--ledger", str(ledger), "--dataset", "city", "--quiet"]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=_TIMEOUT, preexec_fn=_limited(4096)
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert str(ledger) in line and "nothing was recorded" in line, line
    with Ledger.open(ledger) as opened:
        assert opened.releases() == ()


# What a ledger that cannot be written says.


def test_a_ledger_locked_by_another_process_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    Ledger.open(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(InputError) as caught, Ledger.open(path, wait=0.5) as ledger:
            ledger.record(
                dataset="d", fingerprint="ab", source="q.csv", quasi_identifiers=["zip"],
                sensitive=["dx"],
            )  # fmt: skip
    finally:
        holder.kill()
        holder.wait(timeout=_TIMEOUT)
        if holder.stdout is not None:
            holder.stdout.close()
    message = str(caught.value)
    assert "locked by another process (waited 0.5 s)" in message
    assert "not a release ledger" not in message


def test_a_read_only_ledger_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    Ledger.open(path).close()
    try:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.CalledProcessError):
        if os.geteuid() == 0:
            pytest.skip("neither chattr +i nor a non-root user to make the ledger read-only")
        path.chmod(0o444)
    try:
        with pytest.raises(InputError) as caught, Ledger.open(path) as ledger:
            ledger.record(
                dataset="d", fingerprint="ab", source="q.csv", quasi_identifiers=["zip"],
                sensitive=["dx"],
            )  # fmt: skip
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, timeout=10)
        path.chmod(0o644)
    assert "read-only" in str(caught.value) and "not a release ledger" not in str(caught.value)


@pytest.mark.parametrize(
    ("error", "says"),
    [
        ("attempt to write a readonly database", "is read-only"),
        ("database is locked", "locked by another process (waited 60 s)"),
        ("database or disk is full", "no space left"),
        ("disk I/O error", "no space left"),
        ("file is not a database", "not a release ledger"),
        ("database disk image is malformed", "is damaged"),
    ],
)
def test_each_failure_of_sqlite_is_named(error: str, says: str) -> None:
    message = str(_failure("l.sqlite", sqlite3.OperationalError(error), 60.0))
    assert message.startswith("l.sqlite: ") and says in message
    if says != "not a release ledger":
        assert "not a release ledger" not in message


# Names printed: control characters escaped, a huge name shortened.

_HOSTILE = "visits\x1b[2J\x1b]0;owned\x07\r\nforged line\x9b31m"


def test_hostile_names_never_reach_the_terminal_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    huge = "n" * 100_000
    for name in (_HOSTILE, huge):
        argv = ["audit", a, *ROLES, "--ledger", str(ledger), "--dataset", name, "--quiet"]
        assert main([*argv, "--recipient", name]) == 0
    capsys.readouterr()
    assert main(["ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\r" not in out
    assert "forged line" not in out.splitlines()[2][:12]  # no line of its own
    assert "visits\\x1b[2J" in out
    assert len(out) < 5_000 and "(100,000 characters)" in out
    # ... and in an error message naming them
    assert main(["ledger", str(ledger), "retire", _HOSTILE, "7", "--reason", "x"]) == 2
    line = _one_line_error(capsys)
    assert "\x1b" not in line and "\\x1b" in line
    assert main(["ledger", str(ledger), "retire", huge, "7", "--reason", "x"]) == 2
    assert len(_one_line_error(capsys)) < 2_500


def test_printable() -> None:
    assert printable("a\tb\x00c\x7f\u2028") == "a\\tb\\x00c\\x7f\\u2028"
    assert printable("ok é ü 漢") == "ok é ü 漢"
    assert printable("x" * 300, limit=None) == "x" * 300


# DP parameters: one validation for every command.


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1000", "1e308"])
def test_compose_refuses_an_epsilon_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    argv = ["compose", a, b, "--id", "pid", *ROLES, "--dp-epsilon", value, "--quiet"]
    assert main(argv) == 2
    line = _one_line_error(capsys)
    assert "--dp-epsilon must be a positive number from 1e-06 to 100" in line, line


@pytest.mark.parametrize("value", ["-1", "1", "2", "nan", "1e-320"])
def test_compose_refuses_a_delta_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    argv = ["compose", a, b, "--id", "pid", *ROLES, "--dp-delta", value, "--quiet"]
    assert main(argv) == 2
    assert "--dp-delta must be 0 or lie in [1e-100, 1)" in _one_line_error(capsys)


@pytest.mark.parametrize("value", ["0", "-1"])
def test_k_map_is_refused_by_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    argv = ["audit", a, *ROLES, "--population", a, "--k-map", value, "--quiet"]
    assert main(argv) == 2
    assert "--k-map must be a whole number >= 1" in _one_line_error(capsys)


@pytest.mark.parametrize("budget", ["1e400", "nan", "inf", "0", "-1", "1,2", "1,nan", "1e300"])
def test_dp_refuses_a_budget_out_of_range_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], budget: str
) -> None:
    assert main(_dp(tmp_path, "--budget", budget)) == 2
    line = _one_line_error(capsys)
    assert line.startswith("anonaudit: error: --budget "), line
    assert not (tmp_path / "ledger.sqlite").exists()


def test_json_listing_of_a_hostile_name_is_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    argv = ["audit", a, *ROLES, "--ledger", str(ledger), "--dataset", _HOSTILE, "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["releases"][0]["dataset"] == _HOSTILE  # data kept exact; JSON escapes


def test_the_audit_summary_escapes_a_hostile_column_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "e.csv"
    data.write_text("z\x1b[31mip,age,dx\n1,2,a\n1,2,b\n3,4,\x1b[2Jc\n", encoding="utf-8")
    assert main(["audit", str(data), "--qi", "z\x1b[31mip,age", "--sensitive", "dx"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "z\\x1b[31mip" in out


def test_a_read_only_folder_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "shelf"
    folder.mkdir()
    Ledger.open(folder / "ledger.sqlite").close()
    try:
        subprocess.run(["chattr", "+i", str(folder)], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.CalledProcessError):
        if os.geteuid() == 0:
            pytest.skip("neither chattr +i nor a non-root user to make the folder read-only")
        folder.chmod(0o555)
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    try:
        for name in ("ledger.sqlite", "new.sqlite"):
            argv = ["audit", a, *ROLES, "--ledger", str(folder / name), "--dataset", "d"]
            assert main([*argv, "--quiet"]) == 2
            line = _one_line_error(capsys)
            assert f"the folder {folder} is read-only or cannot be written" in line, line
            assert "not a release ledger" not in line
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True, timeout=10)
        folder.chmod(0o755)
