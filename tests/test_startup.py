"""A plain audit imports only what it uses (issue 28, goal 3: tiny files).

Each run is a fresh interpreter, whose modules are read from ``sys.modules`` as it exits:
an audit of a 3-row CSV file without DP, ledger, advice or HTML options imports none of
the differential-privacy, linkage, advice or published-tables code, and none of SciPy,
DuckDB (the local engine counts a small file by its codes), Jinja2, POT, OpenDP,
dp-accounting, HiGHS or pyarrow's datasets. A regression guard, not a timing: the time
is ``benchmarks/bench_startup.py``'s (docs/performance.md).

pandas is not on the list: pyarrow imports it the first time an array is built from
Python or numpy values (``pa.array``, ``to_numpy``), which the class table does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Packages and modules a plain audit never needs.
HEAVY = (
    "scipy",
    "duckdb",
    "jinja2",
    "ot",
    "opendp",
    "dp_accounting",
    "highspy",
    "pyarrow.dataset",
    "anonaudit.dp",
    "anonaudit.linkage",
    "anonaudit.advice",
    "anonaudit.tables",
    "anonaudit.report.html",
)

#: Writes the modules loaded at exit to the file named by the first argument.
_RECORD = """
import atexit, json, os, sys
out = sys.argv.pop(1)

def record():
    with open(out, "w", encoding="utf-8") as stream:
        json.dump(sorted(sys.modules), stream)

atexit.register(record)
_exit = os._exit


def recorded_exit(code):  # the command ends with os._exit, skipping atexit
    record()
    _exit(code)


os._exit = recorded_exit
"""
#: Runs the arguments as ``python -m anonaudit`` would.
_COMMAND = (
    _RECORD
    + """
import runpy
sys.argv[0] = "anonaudit"
runpy.run_module("anonaudit", run_name="__main__", alter_sys=True)
"""
)
#: The Python API's audit of the file named by the argument.
_API = (
    _RECORD
    + """
import anonaudit
report = anonaudit.audit(sys.argv[1], anonaudit.Roles(["age", "sex"], ["dx"]))
assert report.k_anonymity.k == 1
"""
)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.csv"
    path.write_text("age,sex,dx\n30,F,flu\n40,M,cold\n30,F,flu\n", encoding="utf-8")
    return path


def _loaded(code: str, *args: str, out: Path) -> list[str]:
    """The modules a fresh interpreter running ``code`` with ``args`` has loaded at exit."""
    done = subprocess.run(
        [sys.executable, "-c", code, str(out), *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(out.read_text(encoding="utf-8"))
    return modules


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY)]


@pytest.mark.parametrize("output", [[], ["--json", "-"]], ids=["summary", "json"])
def test_a_plain_audit_imports_nothing_heavy(tiny: Path, tmp_path: Path, output: list[str]) -> None:
    argv = ["audit", str(tiny), "--qi", "age,sex", "--sensitive", "dx", "-k", "1", "--quiet"]
    modules = _loaded(_COMMAND, *argv, *output, out=tmp_path / "modules.json")
    assert "anonaudit.auditing" in modules  # the audit ran
    assert _heavy(modules) == []


def test_the_api_audit_loads_no_renderer(tiny: Path, tmp_path: Path) -> None:
    modules = _loaded(_API, str(tiny), out=tmp_path / "modules.json")
    assert _heavy(modules) == []
    assert [m for m in modules if m.startswith(("anonaudit.report", "anonaudit.cli"))] == []
