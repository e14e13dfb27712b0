"""The README's quick start runs as written and the committed report is current."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from anonaudit.cli import main

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = ("audited_at", "anonaudit_version")


def _quickstart_args() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"pip install \. && anonaudit (audit .+)", readme)
    assert command, "the README's quick start command was not found"
    return command.group(1).split()


def _stable(report: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in report.items() if key not in VOLATILE}


def _same(a: object, b: object) -> bool:
    """Equal, floats to 1e-12: the engine aggregates in parallel, so sums may differ
    in the last bit between runs."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_quickstart_regenerates_the_committed_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _quickstart_args()
    target = args.index("--json") + 1
    committed = ROOT / args[target]
    args[target] = str(tmp_path / "report.json")
    monkeypatch.chdir(ROOT)
    assert main(args) == 0
    assert "k-anonymity: k = 1" in capsys.readouterr().out
    fresh = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    current = json.loads(committed.read_text(encoding="utf-8"))
    assert _same(_stable(fresh), _stable(current)), (
        "reports/ is stale: rerun the README's quick start and commit the result"
    )
