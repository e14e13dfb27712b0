"""The Python API gives the report the command line gives, DP companion and ledger included.

``anonaudit audit ... --dp-epsilon ... --ledger ...`` and ``anonaudit.audit(...,
dp=DPOptions(...), ledger=LedgerOptions(...))`` run the same code: these tests run both
on two successive releases of the same records (the second judged against the first in
the ledger: differencing and composition by record id, and not recorded as it fails) and
compare the JSON reports, key by key, and what each left in its ledger. The DP noise is
set to zero for the comparison (the noise is drawn afresh by each run, from a secure
source); everything else is the code as it runs.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.typing import NDArray

import anonaudit
from anonaudit import AuditOptions, DPOptions, LedgerOptions, Policy, PrivacyGuarantee, Roles
from anonaudit.cli import main
from anonaudit.linkage.ledger import Ledger
from anonaudit.report.json import dumps, report_to_dict

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "sample_data" / "adult" / "adult.csv"
QI = ["sex", "age", "race", "marital-status"]
#: Keys whose values differ between any two runs: the times of the audit and of the
#: earlier release it is judged against, and durations.
VOLATILE = {"audited_at", "seconds", "time"}


#: A time in a text (an earlier release is named by its source and time).
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")


def _without_volatile(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: _without_volatile(v) for k, v in document.items() if k not in VOLATILE}
    if isinstance(document, list):
        return [_without_volatile(v) for v in document]
    if isinstance(document, str):
        return TIME.sub("<time>", document)
    return document


def _differing(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths where two JSON documents differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            found
            for key in sorted(set(a) | set(b))
            for found in _differing(a.get(key), b.get(key), f"{path}/{key}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            f
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for f in _differing(x, y, f"{path}/{i}")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def _no_noise(values: NDArray[Any], *, mechanism: str, scale: float) -> NDArray[Any]:
    return np.asarray(values).copy()


def _no_coin(probabilities: NDArray[Any]) -> NDArray[Any]:
    """The randomized threshold's coin, made deterministic: heads only when certain."""
    return np.asarray(probabilities) >= 1


@pytest.fixture
def releases(tmp_path: Path) -> tuple[Path, Path]:
    """Two releases of the Adult sample with the office's record ids: the second adds
    some records to the first."""
    records = pd.read_csv(ADULT, sep=";").reset_index().rename(columns={"index": "rid"})
    first, second = tmp_path / "r1.csv", tmp_path / "r2.csv"
    records.iloc[:2000].to_csv(first, index=False)
    records.iloc[:2040].to_csv(second, index=False)
    return first, second


def _ledger_rows(path: Path) -> list[tuple[Any, ...]]:
    with Ledger.open(path) as ledger:
        return [
            (e.id, e.dataset, e.fingerprint, e.source, e.quasi_identifiers, e.sensitive)
            for e in ledger.releases("adult", None, retired=True)
        ]


def test_the_api_gives_the_report_of_the_command_line(
    releases: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # anonaudit.dp exports a function named release: the module is found by its path
    module = importlib.import_module("anonaudit.dp.release")
    monkeypatch.setattr(module, "add_noise", _no_noise)
    monkeypatch.setattr(module, "bernoulli", _no_coin)
    ledger = tmp_path / "ledger.sqlite"
    from_cli = []
    for number, release in enumerate(releases, start=1):
        out = tmp_path / f"cli{number}.json"
        status = main(
            [
                "audit",
                str(release),
                "--qi",
                ",".join(QI),
                "--sensitive",
                "salary-class",
                "-k",
                "1",
                "--allow-identifier",
                "rid",
                "--dp-epsilon",
                "1",
                "--dp-delta",
                "1e-6",
                "--ledger",
                str(ledger),
                "--dataset",
                "adult",
                "--id",
                "rid",
                "--json",
                str(out),
                "--quiet",
            ]
        )
        assert status in (0, 1)
        from_cli.append(json.loads(out.read_text(encoding="utf-8")))
    cli_ledger = _ledger_rows(ledger)
    ledger.unlink()

    from_api = []
    for release in releases:
        report = anonaudit.audit(
            release,
            Roles(QI, ["salary-class"], allowed_identifiers=["rid"]),
            AuditOptions(policy=Policy(k=1)),
            dp=DPOptions(PrivacyGuarantee(1.0, 1e-6)),
            ledger=LedgerOptions(ledger, "adult", id="rid"),
        )
        from_api.append(json.loads(dumps(report_to_dict(report, max_classes=100))))
    assert _ledger_rows(ledger) == cli_ledger
    # the first release recorded; the second, judged by it, fails (differencing) and is not
    assert len(cli_ledger) == 1

    for cli, api in zip(from_cli, from_api, strict=True):
        assert "dp" in api and "releases" in api
        differing = _differing(_without_volatile(api), _without_volatile(cli))
        assert not differing, differing[:10]
    second = from_api[1]["releases"]
    assert second["differencing"] and second["composition"]


def test_a_ledger_in_the_api_is_refused_before_any_input_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(anonaudit.AnonauditError, match="a-folder"):
        anonaudit.audit(
            tmp_path / "missing.csv",
            Roles(["zip"], []),
            ledger=LedgerOptions(folder, "visits"),
        )


def test_two_frames_released_through_the_api_are_two_releases(tmp_path: Path) -> None:
    """A frame has no file to fingerprint: each audit of one is a release of its own,
    judged against the earlier ones (a file audited twice is recorded once)."""
    records = pd.read_csv(ADULT, sep=";").reset_index().rename(columns={"index": "rid"})
    ledger = LedgerOptions(tmp_path / "ledger.sqlite", "adult", id="rid")
    roles = Roles(QI, ["salary-class"], allowed_identifiers=["rid"])
    first = anonaudit.audit(records.iloc[:500], roles, ledger=ledger)
    second = anonaudit.audit(records.iloc[500:1000], roles, ledger=ledger)
    assert first.history is not None and first.history.recorded == 1
    assert second.history is not None and second.history.recorded == 2
    path = tmp_path / "r.csv"
    records.iloc[:300].to_csv(path, index=False)
    of_file = LedgerOptions(tmp_path / "ledger.sqlite", "adult-file", id="rid")
    once = anonaudit.audit(path, roles, ledger=of_file).history
    twice = anonaudit.audit(path, roles, ledger=of_file).history
    assert once is not None and once.recorded == 3
    assert twice is not None and twice.recorded is None  # the same bytes: recorded once
