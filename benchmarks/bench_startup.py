"""Start-up time of the command line against the interpreter's own, and the time a file of
an audit of many small files in one process.

Start-up: whole processes, as a user runs them: ``python -c pass`` (the floor); the
imports every audit needs (numpy, pyarrow, and the pandas pyarrow imports on its first
conversion of Python or numpy values: ``pyarrow + pandas``); ``anonaudit --version``,
``anonaudit --help``, ``anonaudit audit --help``; the full audit of a 3-row CSV file
(``audit tiny.csv --qi age,sex --sensitive dx -k 1``); the Adult quick-start audit
without the advice search (the README's policy, ``advise`` off, no reports written).
Each runs ``--repeat`` times (default 5) after an untimed run; the best and the median
are printed, with the best's difference to and ratio over ``python -c pass``. Targets:
``--version`` and ``--help`` under 0.3 s (issue 11); the 3-row audit within 0.3 s of
``python -c pass`` (issue 28, goal 3).

The batch (issue 28, goal 3: at most 30 ms a file): ``--files`` CSV files of ``--rows``
records each (QIs ``age`` and ``sex``, SA ``dx``) are written to a temporary folder and
audited in one process, three ways, each timed once:

* ``anonaudit audit --config policy.toml --quiet``, a policy file with one
  ``[[datasets]]`` table a file (docs/policy-files.md), the summaries printed;
* the same with ``--json summary.json``, which also writes each dataset's JSON report
  beside the summary;
* :func:`anonaudit.audit` called in a loop in one Python process.

Each is printed as the whole process's wall time over the files (start-up included),
and the loop's time a file for the Python API (imports and a first audit excluded).

The runs write and read bytecode caches as a user's do: ``PYTHONDONTWRITEBYTECODE`` is
taken out of their environment (with it, every run compiles anonaudit's sources again,
about 0.35 s of the audit), and one untimed run of each fills the caches first.

    python benchmarks/bench_startup.py [--repeat 5] [--files 1000] [--rows 20]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The children's environment: bytecode caches written and read, as a user's are.
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: The 3-row file of the start-up audit.
TINY = "age,sex,dx\n30,F,flu\n40,M,cold\n30,F,flu\n"
#: The Python API's loop over the files named on its command line; prints the loop's
#: seconds (a first audit, not timed, fills the caches).
API_LOOP = """
import sys, time
import anonaudit
paths = sys.argv[1:]
roles = anonaudit.Roles(["age", "sex"], ["dx"])
options = anonaudit.AuditOptions(policy=anonaudit.Policy(k=2))
anonaudit.audit(paths[0], roles, options)
start = time.perf_counter()
for path in paths:
    anonaudit.audit(path, roles, options)
print(time.perf_counter() - start)
"""


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def run(argv: list[str]) -> tuple[float, str]:
    """The wall time of one run of ``argv`` (which must exit 0 or 1), and its stdout."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, cwd=ROOT, env=ENVIRONMENT, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit status {done.returncode}")
    return seconds, done.stdout


def walls(argv: list[str], repeat: int) -> list[float]:
    """The wall times of ``repeat`` runs of ``argv``, after one untimed run that fills the
    bytecode caches."""
    run(argv)
    return [run(argv)[0] for _ in range(repeat)]


def startup(folder: Path, repeat: int) -> None:
    policy = (ROOT / "sample_data" / "adult_policy.toml").read_text(encoding="utf-8")
    sample = (ROOT / "sample_data").as_posix()
    no_advice = folder / "policy.toml"
    no_advice.write_text(
        policy.replace("advise = true", "advise = false")
        .replace('inputs = ["adult/', f'inputs = ["{sample}/adult/')
        .replace('= "adult/', f'= "{sample}/adult/'),
        encoding="utf-8",
    )
    tiny = folder / "tiny.csv"
    tiny.write_text(TINY, encoding="utf-8")
    python = [sys.executable]
    cli = [sys.executable, "-m", "anonaudit"]
    runs = {
        "python -c pass": [*python, "-c", "pass"],
        "pyarrow + pandas": [
            *python,
            "-c",
            "import pyarrow as pa, pyarrow.compute, pyarrow.csv; pa.scalar(1)",
        ],
        "anonaudit --version": [*cli, "--version"],
        "anonaudit --help": [*cli, "--help"],
        "anonaudit audit --help": [*cli, "audit", "--help"],
        "3-row full audit": [
            *cli,
            "audit",
            str(tiny),
            *("--qi", "age,sex", "--sensitive", "dx", "-k", "1", "--quiet"),
        ],
        "Adult quick-start audit, no advise": [
            *cli,
            *("audit", "--config", str(no_advice), "--exit-zero", "--quiet"),
        ],
    }
    print(f"start-up: best and median of {repeat}; {load()}, {os.cpu_count()} cores")
    floor = None
    for name, argv in runs.items():
        times = walls(argv, repeat)
        best = min(times)
        floor = floor or best
        print(
            f"  {name:36s} {best:6.3f} s (median {statistics.median(times):6.3f})"
            f"  +{best - floor:6.3f} s, {best / floor:5.1f}x python -c pass"
        )
    print(f"  {load()} at the end")


def write_files(folder: Path, files: int, rows: int) -> list[Path]:
    """``files`` CSV files of ``rows`` random records each, and the policy file
    ``policy.toml`` auditing each as one of its ``[[datasets]]``."""
    draw = random.Random(28)
    paths = []
    policy = ['quasi_identifiers = ["age", "sex"]', 'sensitive = ["dx"]', "[thresholds]", "k = 2"]
    for number in range(files):
        path = folder / f"part-{number:05d}.csv"
        records = [
            f"{draw.randint(20, 60)},{draw.choice('FM')},{draw.choice(['flu', 'cold', 'ok'])}"
            for _ in range(rows)
        ]
        path.write_text("\n".join(["age,sex,dx", *records]) + "\n", encoding="utf-8")
        paths.append(path)
        policy += ["", "[[datasets]]", f'name = "{path.stem}"', f'inputs = ["{path.as_posix()}"]']
    (folder / "policy.toml").write_text("\n".join(policy) + "\n", encoding="utf-8")
    return paths


def batch(folder: Path, files: int, rows: int) -> None:
    paths = write_files(folder, files, rows)
    reports = folder / "reports"
    reports.mkdir()
    cli = [sys.executable, "-m", "anonaudit", "audit", "--config", str(folder / "policy.toml")]
    print(f"batch: {files:,} files of {rows} records in one process; {load()}")
    run([sys.executable, "-m", "anonaudit", "--version"])  # the bytecode caches
    for name, argv in {
        "policy file, summaries printed": [*cli, "--quiet"],
        "policy file, JSON reports written": [
            *cli,
            *("--quiet", "--json", str(reports / "summary.json")),
        ],
    }.items():
        seconds, _ = run(argv)
        print(f"  {name:36s} {seconds:7.2f} s, {seconds / files * 1e3:5.1f} ms a file  ({load()})")
    seconds, out = run([sys.executable, "-c", API_LOOP, *map(str, paths)])
    loop = float(out)
    print(
        f"  {'anonaudit.audit in a loop':36s} {seconds:7.2f} s, {seconds / files * 1e3:5.1f} ms "
        f"a file; the loop {loop / files * 1e3:5.1f} ms a file  ({load()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        startup(Path(folder), args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        batch(Path(folder), args.files, args.rows)


if __name__ == "__main__":
    main()
