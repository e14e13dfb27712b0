"""The optimal partition selection weighed against the stability threshold (issue 25, 8).

Desfontaines, Voss, Gipson & Mandayam 2022 ("Differentially private partition
selection", PoPETs 2022(4), Theorem 1) keep a key of n people with the largest
probability π_n that (ε, δ)-DP allows. ``benchmarks/bench_partition.py`` implements it
as the candidate it measures against the threshold the release uses today; these tests
check that the candidate is the paper's mechanism (worked examples by hand, the closed
form, the DP inequalities, its sampled δ), so that the comparison is fair, and pin the
finding docs/dp.md reports: π_n beats the threshold when only the keys are released,
and loses once the kept keys' counts need noise of their own.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_dp_claims import event

from anonaudit.classtable import ClassTable
from anonaudit.dp import DPOptions, PrivacyGuarantee, release

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_partition import keep, keep_probabilities

pytest.importorskip("opendp")


def steps_to_one(epsilon: float, delta: float) -> int:
    """A bound on the n where π_n reaches 1: ``2 ln(1/δ) / ε + 3`` (the paper's two
    crossovers: ``ln(tanh(ε/2) / δ) / ε + 1`` steps up, then at most
    ``ln(1 + (e^ε - 1) / δ) / ε`` more)."""
    return math.ceil(2 * math.log(1 / delta) / epsilon) + 3


def closed_form(n: int, epsilon: float, delta: float) -> float:
    """π_n as Theorem 1 states it: ``δ (e^{nε} - 1) / (e^ε - 1)`` up to the first
    crossover ``n1 = 1 + floor(ln(1 + tanh(ε/2) (1/δ - 1)) / ε)``, then
    ``1 - π_n = e^{-mε} (1 - π_{n1} + c) - c`` with ``m = n - n1`` and
    ``c = δ / (e^ε - 1)``, capped at 1."""
    n1 = 1 + math.floor(math.log1p(math.tanh(epsilon / 2) * (1 / delta - 1)) / epsilon)
    if n <= n1:
        return delta * math.expm1(n * epsilon) / math.expm1(epsilon)
    first = delta * math.expm1(n1 * epsilon) / math.expm1(epsilon)
    c = delta / math.expm1(epsilon)
    return min(1.0, 1 - (math.exp(-(n - n1) * epsilon) * (1 - first + c) - c))


# -- the paper's mechanism -----------------------------------------------------------


def test_worked_example_epsilon_ln2() -> None:
    """ε = ln 2, δ = 0.1, from the recurrence by hand: π_1 = min(0 + 0.1, 1 - (1 - 0.1)/2)
    = 0.1; π_2 = min(2(0.1) + 0.1, 1 - (1 - 0.1 - 0.1)/2 = 0.6) = 0.3; π_3 = min(0.7,
    1 - (1 - 0.3 - 0.1)/2 = 0.7) = 0.7 (both bounds meet); π_4 = min(1.5, 1 - 0.2/2) =
    0.9; π_5 = min(1.9, 1 - 0/2) = 1."""
    pi = keep_probabilities(math.log(2), 0.1, 7)
    assert pi.tolist() == pytest.approx([0.0, 0.1, 0.3, 0.7, 0.9, 1.0, 1.0, 1.0], abs=1e-12)


def test_worked_example_epsilon_ln3_through_both_crossovers() -> None:
    """ε = ln 3, δ = 0.05. Up to the first crossover (n1 = 1 + floor(ln(1 + 0.5 · 19) /
    ln 3) = 3, tanh(ln(3)/2) = 1/2): δ (3^n - 1) / 2 = 0.05, 0.2, 0.65. Then
    1 - π_n = 3^-m (1 - 0.65 + 0.025) - 0.025 = 0.1 (m = 1), 1/60 (m = 2) and below 0
    (m = 3): π_4 = 0.9, π_5 = 59/60, π_6 = 1."""
    pi = keep_probabilities(math.log(3), 0.05, 6)
    assert pi.tolist() == pytest.approx([0, 0.05, 0.2, 0.65, 0.9, 59 / 60, 1.0], abs=1e-12)
    assert [closed_form(n, math.log(3), 0.05) for n in range(1, 7)] == pytest.approx(
        pi[1:].tolist(), abs=1e-12
    )


@given(
    epsilon=st.floats(0.01, 5.0),
    exponent=st.floats(1.0, 12.0),
)
def test_keep_probabilities_are_the_paper_s_optimum(epsilon: float, exponent: float) -> None:
    """For any ε and δ: π_0 = 0, π_1 = δ, π_n never decreases, meets both DP inequalities
    between n - 1 and n people (``π_n <= e^ε π_{n-1} + δ`` and ``1 - π_{n-1} <= e^ε (1 -
    π_n) + δ``), equals Theorem 1's closed form, and reaches 1 by the crossover bound."""
    delta = 10.0**-exponent
    largest = steps_to_one(epsilon, delta)
    pi = keep_probabilities(epsilon, delta, largest)
    grow = math.exp(epsilon)
    assert pi[0] == 0.0 and pi[1] == pytest.approx(delta, rel=1e-12)
    assert (np.diff(pi) >= 0).all() and (pi <= 1).all()
    slack = 1e-12 * np.maximum(pi[1:], delta)
    assert (pi[1:] <= grow * pi[:-1] + delta + slack).all()
    assert (1 - pi[:-1] <= grow * (1 - pi[1:]) + delta + 1e-12).all()
    assert pi[-1] == 1.0
    expected = [closed_form(n, epsilon, delta) for n in range(1, largest + 1)]
    assert pi[1:].tolist() == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_a_key_of_one_person_is_kept_at_the_stated_delta() -> None:
    """Sampled (as tests/test_dp_claims.py samples the releases): a key that exists
    because of one person is kept with probability π_1 = δ, and never without them.
    P[kept] <= δ is not refuted, δ/2 is (the test has the power to catch a wrong δ),
    and the rate is not below δ either (the candidate is not handicapped)."""
    n, delta = 200_000, 0.01
    pi = keep_probabilities(1.0, delta, 1)
    kept = keep(np.full(n, pi[1]))
    without = keep(np.full(n, pi[0]))
    assert not without.any()
    assert not event(kept, without).refutes(0.0, delta)
    assert event(kept, without).refutes(0.0, delta / 2)
    assert abs(kept.mean() - delta) < 5 * math.sqrt(delta * (1 - delta) / n)


def test_keep_never_exceeds_its_probability() -> None:
    """A probability of 0 never keeps, 1 always keeps, and tiny ones are drawn at 2^-64
    resolution, rounded down."""
    assert not keep(np.zeros(1000)).any()
    assert keep(np.ones(1000)).all()
    assert not keep(np.full(1000, 2.0**-65)).any()


# -- the finding: the threshold stays -------------------------------------------------


def half_kept(keep_at: list[float]) -> int:
    """The smallest n whose key is kept at least half the time."""
    return next(n for n, p in enumerate(keep_at) if p >= 0.5)


def threshold_keep(epsilon: float, delta: float, largest: int) -> list[float]:
    """P[a key of n people is kept] by today's release of observed keys (the product's
    threshold and noise, one record per person), n = 0..largest."""
    table = ClassTable.from_frame(pd.DataFrame({"q": ["a"], "count": [1]}), quasi_identifiers=["q"])
    r = release(table, DPOptions(PrivacyGuarantee(epsilon, delta)))
    assert r.threshold is not None and r.noise is not None
    return [r.noise.tail(r.threshold - n) for n in range(largest + 1)]


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (2.0, 1e-6)])
def test_optimal_selection_wins_for_keys_alone_and_loses_with_counts(
    epsilon: float, delta: float
) -> None:
    """The paper's comparison (keys only, both at ε): π_n keeps a key at least half the
    time from no more people than the threshold does. Once the kept keys' counts need
    noise of their own, the selection gets part of ε only, and from half of it on it
    needs more people than the threshold, whose noisy count selects for free."""
    largest = steps_to_one(epsilon / 2, delta)
    today = half_kept(threshold_keep(epsilon, delta, largest))
    assert half_kept(list(keep_probabilities(epsilon, delta, largest))) <= today
    assert half_kept(list(keep_probabilities(epsilon / 2, delta, largest))) > today
