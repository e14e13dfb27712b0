"""A successful audit exits 0, every time: no reader left open to abort the interpreter.

Also for a program that calls the library and exits: a CSV reader closed early (the
identifier check's sample of the first records) leaves a read ahead under way on
pyarrow's thread, which must not end while the interpreter is torn down.

A pyarrow CSV reader left open at exit (:meth:`anonaudit.sources.csv.CsvSource.head`'s)
made about 2 runs in 16 end with "terminate called without an active exception" and
status 134 after the audit had succeeded. The runs here are cheap (a small file, no
optional analysis), two at a time.
"""

from __future__ import annotations

import subprocess
import sys
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

RUNS = 50


@pytest.mark.slow
def test_fifty_audits_in_a_row_all_exit_0(tmp_path: Path) -> None:
    path = tmp_path / "small.csv"
    rows = [f"1{i % 9}0,{20 + i % 30},{('flu', 'hiv', 'cold')[i % 3]}" for i in range(2_000)]
    path.write_text("zip,age,dx\n" + "\n".join(rows) + "\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "anonaudit", "audit", str(path),
        "--qi", "zip,age", "--sensitive", "dx", "--quiet",
    ]  # fmt: skip

    def run(_: int) -> tuple[int, str]:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        return done.returncode, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, range(RUNS)))
    aborted = [err for status, err in results if status == 134]
    assert not aborted, f"{len(aborted)} of {RUNS} runs aborted: {aborted[0][-300:]}"
    assert {status for status, _ in results} == {0}, {err for _, err in results}


#: Reads the first records of the file named by the first argument and exits, each read
#: slowed so that the read ahead is still under way when the interpreter exits.
_EARLY_STOP = """
import sys, time
import anonaudit.sources.csv as csv_source
from anonaudit.sources import open_source

read = csv_source._WatchedStream.read


def slow(self, size=-1):
    chunk = read(self, size)
    time.sleep(0.5)
    return chunk


csv_source._WatchedStream.read = slow
csv_source._BLOCK_BYTES = 64 * 1024
batches = open_source(sys.argv[1]).batches(["a"])
first = next(batches)
batches.close()
print(first.num_rows)
"""


def test_a_program_that_stops_reading_early_and_exits_does_not_abort(tmp_path: Path) -> None:
    """Before, this exited 134 every time ("PyGILState_Release: ... finalizing"): the
    read ahead ended during the interpreter's tear-down. Now the exit waits for it."""
    path = tmp_path / "big.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(100_000)), "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _EARLY_STOP, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert int(done.stdout) > 0


def test_a_stream_kept_by_an_error_is_not_waited_for_at_exit(tmp_path: Path) -> None:
    """The error's traceback keeps the stream (and its reader) to the tear-down, where the
    main thread lets go of both: the exit waited its whole bound for it (10 s more
    after a malformed file; the helper's review). The reads of such a stream are ended
    when the error is raised, and the exit waits for none but streams not ended."""
    import anonaudit.sources.csv as csv_source
    from anonaudit.errors import MalformedFileError
    from anonaudit.sources import open_source

    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n3,4,5\n", encoding="utf-8")
    before = weakref.WeakSet(csv_source._HELD)  # other tests' streams, if any are left
    with pytest.raises(MalformedFileError) as caught:
        list(open_source(path).batches(["a"]))
    held = [stream for stream in csv_source._HELD if stream not in before]
    assert held, "the traceback keeps the stream"  # (caught is alive)
    assert all(stream.ended for stream in held)
    assert "line 3" in str(caught.value)
