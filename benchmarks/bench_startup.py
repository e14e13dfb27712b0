"""Start-up time of the command line, against the interpreter's own in the same run.

Whole processes, as a user runs them: ``python -c pass`` (the floor), ``anonaudit
--version``, ``anonaudit --help``, ``anonaudit audit --help``, and the Adult quick-start
audit without the advice search (the README's policy, ``advise`` off, no reports
written). Each is the median of ``--repeat`` runs; the ratios are to ``python -c pass``.
Targets (issue 11): --version and --help under 0.3 s, the audit under 1.5 s.

The runs write and read bytecode caches as a user's do: ``PYTHONDONTWRITEBYTECODE`` is
taken out of their environment (with it, every run compiles anonaudit's sources again,
about 0.35 s of the audit), and one untimed run of each fills the caches first.

    python benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: The children's environment: bytecode caches written and read, as a user's are.
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(argv: list[str], repeat: int) -> float:
    """The median wall time of ``repeat`` runs of ``argv`` (each must exit 0), after one
    untimed run that fills the bytecode caches."""
    times = []
    for run in range(repeat + 1):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=ENVIRONMENT)
        if run:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    policy = (ROOT / "sample_data" / "adult_policy.toml").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as folder:
        no_advice = Path(folder) / "policy.toml"
        no_advice.write_text(
            policy.replace("advise = true", "advise = false")
            .replace('inputs = ["adult/', f'inputs = ["{(ROOT / "sample_data").as_posix()}/adult/')
            .replace('= "adult/', f'= "{(ROOT / "sample_data").as_posix()}/adult/'),
            encoding="utf-8",
        )
        python = [sys.executable]
        cli = [sys.executable, "-m", "anonaudit"]
        runs = {
            "python -c pass": [*python, "-c", "pass"],
            "anonaudit --version": [*cli, "--version"],
            "anonaudit --help": [*cli, "--help"],
            "anonaudit audit --help": [*cli, "audit", "--help"],
            "Adult quick-start audit, no advise": [
                *cli,
                "audit",
                "--config",
                str(no_advice),
                "--exit-zero",
                "--quiet",
            ],
        }
        floor = None
        print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores, median of {repeat}")
        for name, argv in runs.items():
            seconds = wall(argv, repeat)
            floor = floor or seconds
            print(f"{name:38s} {seconds:6.3f} s  {seconds / floor:6.1f}x python -c pass")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
