"""A dataset's privacy budget is stored in the ledger, and raising it is a recorded act.

Issue 25, item 2: a ``--budget`` given once bounds every later DP release of the dataset
(with a ``--budget`` or without); a higher ``--budget`` is refused, naming how to raise
the stored one; ``anonaudit ledger FILE budget DATASET --set ... --reason ...`` sets it,
and the ledger lists every budget set, with its time and reason.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from anonaudit.cli import main
from anonaudit.errors import ParameterError
from anonaudit.linkage.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "sample_data" / "clinic.csv"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The clinic table with a public domain for every column: pure epsilon-DP."""
    frame = pd.read_csv(CLINIC, dtype=str)[["sex", "diagnosis"]]
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)
    return path


def _dp(ledger: Path, data: Path, epsilon: str, *extra: str) -> int:
    argv = ["dp", str(data), "--qi", "sex", "--sensitive", "diagnosis", "--epsilon", epsilon]
    argv += ["--public-domain", "sex=F,M", "--public-domain"]
    argv += ["diagnosis=" + ",".join(sorted(pd.read_csv(data)["diagnosis"].unique()))]
    return main([*argv, "--ledger", str(ledger), "--dataset", "visits", "--quiet", *extra])


def test_the_first_budget_is_stored_and_bounds_every_later_release(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", "--budget", "2") == 0
    with Ledger.open(ledger) as book:
        stored = book.budget("visits")
    assert stored is not None and (stored.epsilon, stored.delta) == (2.0, 0.0)
    capsys.readouterr()
    # a higher --budget is refused, naming how to raise the stored one; nothing recorded
    assert _dp(ledger, data, "1", "--budget", "10") == 2
    error = capsys.readouterr().err
    assert "above the budget the ledger holds for 'visits' (epsilon 2" in error
    assert "anonaudit ledger" in error and "budget visits --set" in error
    # without --budget the stored budget still bounds the release: 1 + 1 fits, a third not
    assert _dp(ledger, data, "1") == 0
    assert _dp(ledger, data, "1") == 2
    assert "more than" in capsys.readouterr().err
    with Ledger.open(ledger) as book:
        assert len(book.releases("visits")) == 2
        assert book.spent("visits").epsilon == pytest.approx(2.0)


def test_raising_a_budget_is_recorded_with_its_reason(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", "--budget", "1") == 0
    assert _dp(ledger, data, "1") == 2  # the stored budget is spent
    capsys.readouterr()
    raise_it = ["ledger", str(ledger), "budget", "visits", "--set", "3"]
    assert main([*raise_it, "--reason", "approved by the board, 2026-11"]) == 0
    assert "budget of visits: epsilon 3, delta 0" in capsys.readouterr().out
    assert _dp(ledger, data, "1") == 0
    # below what was spent is refused; no reason is a usage error
    assert main(["ledger", str(ledger), "budget", "visits", "--set", "1", "--reason", "x"]) == 2
    assert "below what its releases spent" in capsys.readouterr().err
    assert main(["ledger", str(ledger), "budget", "visits", "--set", "4"]) == 2
    capsys.readouterr()
    # the listing shows every budget set, the last in force
    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(b["epsilon"], b["reason"]) for b in document["budgets"]] == [
        (1.0, "the first --budget of anonaudit dp"),
        (3.0, "approved by the board, 2026-11"),
    ]
    assert main(["ledger", str(ledger)]) == 0
    listing = capsys.readouterr().out
    assert "budget of visits: epsilon 1, delta 0" in listing and "(replaced)" in listing
    assert "epsilon 3, delta 0" in listing and "(in force): approved by the board" in listing


def test_a_budget_cannot_be_set_without_a_reason(tmp_path: Path) -> None:
    with Ledger.open(tmp_path / "l.sqlite") as book, pytest.raises(ParameterError, match="why"):
        book.set_budget("visits", 1.0, 0.0, "  ")


def test_a_ledger_of_version_3_gains_the_budgets_table(data: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1") == 0
    with sqlite3.connect(ledger) as connection:  # as anonaudit 0.1 left it
        connection.execute("DROP TABLE budgets")
        connection.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    connection.close()
    assert _dp(ledger, data, "1", "--budget", "5") == 0
    with Ledger.open(ledger) as book:
        assert book.meta()["schema_version"] == "6"
        stored = book.budget("visits")
        assert stored is not None and stored.epsilon == 5.0
        assert len(book.releases("visits")) == 2


def test_releases_under_two_relations_are_not_one_total(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25, item 1: randomized response (replace: class sizes exact) at epsilon 1
    and discrete Laplace (add-remove) at epsilon 1 are not "epsilon 2": for a present
    person's value they total 1 + 2 = 3 (an add-remove release counts twice for a
    change of one person's records); under add-remove there is no finite total."""
    ledger = tmp_path / "ledger.sqlite"
    rr = ["--mechanism", "randomized-response"]
    assert _dp(ledger, data, "1", *rr) == 0
    assert _dp(ledger, data, "1") == 0
    with Ledger.open(ledger) as book:
        entries = book.releases("visits")
        assert [e.parameters["neighbouring"] for e in entries] == ["replace", "add-remove"]  # type: ignore[index]
        assert entries[1].parameters["sensitivity"]["l1"] == 1  # type: ignore[index]
    capsys.readouterr()
    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    relations = document["spent_by_relation"]["visits"]
    assert relations["replace"]["epsilon_at_delta"] == 1.0
    assert relations["add-remove"]["epsilon_at_delta"] == 1.0
    total = document["a_present_persons_value"]["visits"]
    assert total["relation"] == "replace" and total["epsilon_at_delta"] == 3.0
    assert "no finite total" in total["add_remove"]
    assert main(["ledger", str(ledger)]) == 0
    listing = capsys.readouterr().out
    assert "under replace neighbours: 1 release(s), epsilon 1 (pure)" in listing
    assert "under add-remove neighbours: 1 release(s), epsilon 1 (pure)" in listing
    assert "for a present person's value (replace): epsilon 3" in listing


def test_a_gaussian_release_is_listed_as_epsilon_at_its_delta(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", "--delta", "1e-6", "--mechanism", "discrete-gaussian") == 0
    capsys.readouterr()
    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    spent = document["spent_by_relation"]["visits"]["add-remove"]
    assert spent["delta"] == 1e-6 and spent["rho"] > 0
    # epsilon at the stated delta, not "epsilon 0": by privacy-loss distributions, the
    # release's own 1 (its exact curve, within dp-accounting's pessimistic rounding); the
    # zCDP and Renyi conversions of the recorded rho are sound and a little above
    assert spent["method"] == "pld"
    assert 0.99 <= spent["epsilon_at_delta"] <= 1.0 + 1e-3
    assert 1.0 <= spent["epsilon_sum"] < 1.2
