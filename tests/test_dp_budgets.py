"""A dataset's budget: one relation, one unit, composed by privacy-loss distributions.

Issue 25, items 1 and 3. Releases stated for different neighbouring relations or privacy
units are converted into the budget's where a sound conversion exists and count as
infinite where none does; the total is the PLD composition (dp-accounting), never above
the plain sum, checked against an independent accountant (prv-accountant); the totals
are sampled on neighbouring datasets with every other claim, in ``test_dp_claims``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonaudit.cli import main
from anonaudit.dp.accounting import PrivacyCost
from anonaudit.dp.budgets import Recorded, compose, convert
from anonaudit.linkage.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "sample_data" / "clinic.csv"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The clinic table with a person id: a public domain for every column."""
    frame = pd.read_csv(CLINIC, dtype=str)[["sex", "diagnosis"]]
    frame.insert(0, "pid", [str(i // 2) for i in range(len(frame))])
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)
    return path


def _dp(ledger: Path, data: Path, epsilon: str, *extra: str) -> int:
    values = ",".join(sorted(pd.read_csv(data)["diagnosis"].unique()))
    argv = ["dp", str(data), "--qi", "sex", "--sensitive", "diagnosis", "--epsilon", epsilon]
    argv += ["--public-domain", "sex=F,M", "--public-domain", f"diagnosis={values}"]
    return main([*argv, "--ledger", str(ledger), "--dataset", "visits", "--quiet", *extra])


RR = ("--mechanism", "randomized-response")


# -- item 1: one relation, one unit -----------------------------------------------------


def test_a_replace_budget_counts_an_add_remove_release_for_a_change_of_value(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Randomized response at epsilon 1 sets a budget of 2 under replace (its relation);
    a discrete Laplace release at epsilon 1 (add-remove) costs 2 there (its noise on the
    replace sensitivity, one count down and one up), so the pair costs 3 > 2: refused.
    Before, both passed and the ledger printed "spent: epsilon 2"."""
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", *RR, "--budget", "2") == 0
    with Ledger.open(ledger) as book:
        stored = book.budget("visits")
    assert stored is not None and (stored.relation, stored.unit) == ("replace", None)
    capsys.readouterr()
    assert _dp(ledger, data, "1") == 2
    error = capsys.readouterr().err
    assert "would cost epsilon 3 under replace neighbours" in error
    assert "(epsilon 2, delta 0 under replace neighbours, one record)" in error
    # at epsilon 0.5 the Laplace release costs 1 for a change of value: 2 fits
    assert _dp(ledger, data, "0.5") == 0


def test_an_add_remove_budget_has_no_room_for_randomized_response(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Randomized response publishes every class size exactly: under add-remove it has
    no finite epsilon, whatever the budget."""
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", "--budget", "100") == 0
    capsys.readouterr()
    assert _dp(ledger, data, "0.1", *RR) == 2
    error = capsys.readouterr().err
    assert "epsilon inf under add-remove neighbours" in error
    assert "stated for replace neighbours, which do not protect presence" in error
    assert "randomized response publishes every class size exactly" in error
    with Ledger.open(ledger) as book:
        assert len(book.releases("visits")) == 1


def test_a_budget_per_person_refuses_a_release_per_record(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A budget stated per person (``--privacy-unit pid``) cannot take a release stated
    per record (a person's records are unbounded); a budget per record takes a release
    per person as recorded (a record's change is a change of its person's records)."""
    per_person = ("--privacy-unit", "pid", "--max-contributions", "2")
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", *per_person, "--budget", "3") == 0
    with Ledger.open(ledger) as book:
        stored = book.budget("visits")
    assert stored is not None and stored.unit == "pid"
    capsys.readouterr()
    assert _dp(ledger, data, "1") == 2
    assert "stated for one record, not one value of pid" in capsys.readouterr().err
    assert _dp(ledger, data, "1", *per_person) == 0

    other = tmp_path / "other.sqlite"
    assert _dp(other, data, "1", "--budget", "2") == 0
    assert _dp(other, data, "1", *per_person) == 0
    with Ledger.open(other) as book:
        budget = book.budget("visits")
        assert budget is not None and book.spend(budget).epsilon == pytest.approx(2.0)


def test_the_ledger_states_every_total_with_its_relation_and_unit(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anonaudit ledger budget --relation replace`` sets a value-only budget; the
    listing names the relation and the unit beside every total and says what the
    budget has spent, by which accountant, and what has no cost in its relation."""
    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", *RR) == 0
    assert _dp(ledger, data, "1") == 0
    command = ["ledger", str(ledger), "budget", "visits", "--set", "4"]
    assert main([*command, "--relation", "replace", "--reason", "a value-only budget"]) == 0
    assert "epsilon 4, delta 0 under replace neighbours, one record" in capsys.readouterr().out
    # raising it keeps the relation; an add-remove budget over these releases is refused
    assert main([*command[:-1], "5", "--reason", "more"]) == 0
    assert "under replace neighbours" in capsys.readouterr().out
    refused = [*command[:-1], "50", "--relation", "add-remove", "--reason", "x"]
    assert main(refused) == 2
    assert "epsilon inf under add-remove" in capsys.readouterr().err
    assert main(["ledger", str(ledger)]) == 0
    listing = capsys.readouterr().out
    assert "under replace neighbours: 1 release(s), epsilon 1 (pure), one record" in listing
    assert "under add-remove neighbours: 1 release(s), epsilon 1 (pure), one record" in listing
    assert "epsilon 5, delta 0 under replace neighbours, one record, set" in listing
    assert "spent of the budget of visits: epsilon 3 (pure), one record" in listing
    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    spent = document["budget_spent"]["visits"]
    assert (spent["relation"], spent["epsilon_at_delta"], spent["uncovered"]) == (
        "replace",
        3.0,
        [],
    )
    assert document["budgets"][-1]["relation"] == "replace"


def test_a_ledger_of_version_5_gains_the_budgets_relation(data: Path, tmp_path: Path) -> None:
    """Budgets set before schema 6 were checked as add-remove, per record: so they stay."""
    import sqlite3

    ledger = tmp_path / "ledger.sqlite"
    assert _dp(ledger, data, "1", "--budget", "2") == 0
    with sqlite3.connect(ledger) as connection:  # as anonaudit left it before schema 6
        connection.execute("ALTER TABLE budgets DROP COLUMN relation")
        connection.execute("ALTER TABLE budgets DROP COLUMN unit")
        connection.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    connection.close()
    with Ledger.open(ledger) as book:
        assert book.meta()["schema_version"] == "6"
        stored = book.budget("visits")
        assert stored is not None and (stored.relation, stored.unit) == ("add-remove", None)


# -- item 3: composition by privacy-loss distributions ---------------------------------


def _pure(epsilon: float) -> Recorded:
    return Recorded("any", PrivacyCost(epsilon=epsilon), "add-remove", None, 1, None)


def _noise(mechanism: str, scale: float, cost: PrivacyCost) -> Recorded:
    return Recorded(mechanism, cost, "add-remove", None, 1, scale, public_domain=True)


def test_one_hundred_pure_releases_compose_to_the_pld_total() -> None:
    """100 releases at epsilon 0.1: 10 by the sum, 4.77 at delta 1e-6 by PLD; an
    independent accountant (prv-accountant) agrees within its stated error."""
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PureDPMechanism

    spend = compose([_pure(0.1)] * 100, relation="add-remove", unit=None, delta=1e-6)
    assert spend.epsilon_sum == pytest.approx(10.0)
    assert spend.method == "pld" and spend.epsilon == pytest.approx(4.7746, abs=1e-3)
    prv = PRVAccountant(
        prvs=[PureDPMechanism(0.1)], max_self_compositions=[100], eps_error=0.01, delta_error=1e-10
    )
    low, _, high = prv.compute_epsilon(delta=1e-6, num_self_compositions=[100])
    assert low - 1e-3 <= spend.epsilon <= high + 1e-3


def test_a_mixed_sequence_matches_an_independent_accountant() -> None:
    """Laplace, Gaussian and pure releases composed: within prv-accountant's bounds and
    below the sum, which converts the Gaussian part through zCDP."""
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import (
        GaussianMechanism,
        LaplaceMechanism,
        PureDPMechanism,
    )

    sigma, b = 3.0, 2.0
    gaussian = _noise("gaussian", sigma, PrivacyCost(rho=1 / (2 * sigma**2)))
    laplace = _noise("laplace", b, PrivacyCost(epsilon=1 / b))
    releases = [gaussian] * 20 + [laplace] * 10 + [_pure(0.2)] * 5
    spend = compose(releases, relation="add-remove", unit=None, delta=1e-6)
    prv = PRVAccountant(
        prvs=[GaussianMechanism(sigma), LaplaceMechanism(1 / b), PureDPMechanism(0.2)],
        max_self_compositions=[20, 10, 5],
        eps_error=0.01,
        delta_error=1e-10,
    )
    low, _, high = prv.compute_epsilon(delta=1e-6, num_self_compositions=[20, 10, 5])
    assert spend.method == "pld"
    assert low - 1e-3 <= spend.epsilon <= high + 1e-3
    assert spend.epsilon < spend.epsilon_sum


def test_gaussian_releases_compose_below_zcdp() -> None:
    """Gaussian releases composed through zCDP are loose: 10 releases at sigma 10 give
    more by the sum than by PLD, which equals the exact Gaussian curve (mu = sqrt(10)/10)."""
    from anonaudit.dp.accounting import gaussian_epsilon

    sigma = 10.0
    release_ = _noise("gaussian", sigma, PrivacyCost(rho=1 / (2 * sigma**2)))
    spend = compose([release_] * 10, relation="add-remove", unit=None, delta=1e-6)
    exact = gaussian_epsilon(1e-6, mu=math.sqrt(10) / sigma)
    assert spend.epsilon_pld is not None and spend.epsilon < spend.epsilon_sum
    assert exact <= spend.epsilon <= exact * 1.01


costs = st.lists(
    st.one_of(
        st.floats(0.01, 2.0).map(_pure),
        st.floats(0.5, 20.0).map(
            lambda b: _noise("discrete-laplace", b, PrivacyCost(epsilon=1 / b))
        ),
        st.floats(1.0, 20.0).map(lambda s: _noise("gaussian", s, PrivacyCost(rho=1 / (2 * s * s)))),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=20, deadline=None)
@given(costs, st.sampled_from([1e-8, 1e-5, 1e-2]))
def test_the_total_is_never_above_the_sum_nor_below_any_release(
    releases: list[Recorded], delta: float
) -> None:
    total = compose(releases, relation="add-remove", unit=None, delta=delta)
    assert total.epsilon <= total.epsilon_sum * (1 + 1e-12)
    for r in releases:
        alone = compose([r], relation="add-remove", unit=None, delta=delta)
        assert total.epsilon >= alone.epsilon * (1 - 1e-3) - 1e-6
    more = compose([*releases, releases[0]], relation="add-remove", unit=None, delta=delta)
    assert more.epsilon >= total.epsilon * (1 - 1e-3)


def test_conversions_are_refused_where_none_is_sound() -> None:
    rr = Recorded("randomized-response", PrivacyCost(epsilon=1.0), "replace", None, 1, 0.5)
    assert not convert(rr, relation="add-remove", unit=None).covered
    assert convert(rr, relation="replace", unit=None).cost.epsilon == 1.0
    person = Recorded("discrete-laplace", PrivacyCost(epsilon=1.0), "add-remove", "pid", 2, 2.0)
    assert convert(person, relation="add-remove", unit=None).covered
    assert not convert(person, relation="add-remove", unit="hid").covered
    record = _pure(1.0)
    assert not convert(record, relation="add-remove", unit="pid").covered
    # over observed keys (a threshold's delta) add-remove becomes replace by group privacy
    observed = Recorded(
        "discrete-laplace", PrivacyCost(epsilon=1.0, delta=1e-6), "add-remove", None, 1, 1.0
    )
    doubled = convert(observed, relation="replace", unit=None)
    assert doubled.cost.epsilon == 2.0
    assert doubled.delta == pytest.approx((1 + math.e) * 1e-6)
    exact = Recorded("exact", PrivacyCost(epsilon=math.inf), None, None, 1, None)
    assert "not differentially private" in convert(exact, relation="replace", unit=None).how


def test_a_budget_whose_delta_the_thresholds_spend_says_so(tmp_path: Path) -> None:
    """Two observed-key releases, each spending all of delta 1e-6 on its threshold,
    cannot both fit a budget of delta 1e-6: no delta is left for the second."""
    from anonaudit.errors import BudgetError
    from anonaudit.linkage.ledger import BudgetSetting

    observed = Recorded(
        "discrete-laplace", PrivacyCost(epsilon=1.0, delta=1e-6), "add-remove", None, 1, 1.0
    )
    spend = compose([observed] * 2, relation="add-remove", unit=None, delta=1e-6)
    assert math.isinf(spend.epsilon) and spend.delta_spent == pytest.approx(2e-6)
    with Ledger.open(tmp_path / "l.sqlite") as book:
        book.record(
            dataset="d",
            fingerprint="f" * 64,
            source="a.csv",
            quasi_identifiers=["q"],
            sensitive=["s"],
            mechanism="discrete-laplace",
            cost=observed.cost,
            parameters={"neighbouring": "add-remove", "noise_scale": 1.0},
        )
        budget = BudgetSetting("d", 3.0, 1e-6, "", "")
        with pytest.raises(BudgetError, match="leaves none of the budget's delta"):
            book.check_budget(observed, budget)
