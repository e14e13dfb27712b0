"""Partition selection at its optimum for a release that also publishes counts (issue 25, 8).

The release keeps an observed key when its noisy count reaches a whole threshold τ, and
with probability q when it is τ − 1, q spending exactly the δ allowed
(:func:`~anonaudit.dp.accounting.stability_threshold`). These tests sample that rule
on keys of one person, their count and their unit's contributions varied, and check the
exact δ it states (property tests).

Desfontaines, Voss, Gipson & Mandayam 2022 ("Differentially private partition
selection", PoPETs 2022(4), Theorem 1) keep a key of n people with the largest
probability π_n that (ε, δ)-DP allows. ``benchmarks/bench_partition.py`` implements it
as the candidate it measures against the release's threshold; these tests check that
the candidate is the paper's mechanism (worked examples by hand, the closed form, the
DP inequalities, its sampled δ), so that the comparison is fair, and pin the finding
docs/dp.md reports: π_n beats the threshold when only the keys are released, and loses
once the kept keys' counts need noise of their own.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_dp_claims import event

from anonaudit.classtable import ClassTable
from anonaudit.dp import DPOptions, PrivacyGuarantee, PrivacyUnit, release
from anonaudit.dp.accounting import delta_threshold, stability_threshold
from anonaudit.dp.mechanisms import bernoulli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_partition import keep_probabilities

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


# -- the release's randomized threshold -----------------------------------------------


def test_worked_example_of_the_randomized_threshold() -> None:
    """Discrete Laplace with b = 1, one record per person, δ = 0.01. P[Z >= t] =
    e^-t / (1 + e^-1): τ = 6 fits (P[1 + Z >= 6] = e^-5 / 1.3679 = 0.00493) and 5 does
    not (0.01339); q = (0.01 (1 + e^-1) - e^-5) / (e^-4 - e^-5) = 0.0069409 / 0.0115777
    = 0.59951 brings the δ to 0.01, which τ = 6 alone spends only 49% of."""
    rule = stability_threshold("discrete-laplace", scale=1.0, l0=1, linf=1, delta=0.01)
    q = (0.01 * (1 + math.exp(-1)) - math.exp(-5)) / (math.exp(-4) - math.exp(-5))
    assert rule.threshold == 6 and rule.keep_below == pytest.approx(q, rel=1e-12)
    assert rule.keep_below == pytest.approx(0.59951, abs=1e-5)
    assert rule.delta <= 0.01 and rule.delta == pytest.approx(0.01, rel=1e-12)


@given(
    mechanism=st.sampled_from(["discrete-laplace", "discrete-gaussian"]),
    scale=st.floats(0.05, 300.0),
    contributions=st.integers(1, 50),
    replace=st.booleans(),
    exponent=st.floats(1.0, 30.0),
)
def test_the_randomized_threshold_spends_exactly_the_delta_allowed(
    mechanism: str, scale: float, contributions: int, replace: bool, exponent: float
) -> None:
    """For any noise, unit and δ: τ is the smallest whole threshold that fits, q lies in
    [0, 1), and the stated δ is the exact δ of (τ, q), never above the δ allowed and
    equal to it up to rounding."""
    delta = 10.0**-exponent
    l0, linf = (2 if replace else 1) * contributions, contributions
    rule = stability_threshold(mechanism, scale=scale, l0=l0, linf=linf, delta=delta)  # type: ignore[arg-type]
    exact: dict[str, Any] = {"scale": scale, "l0": l0, "linf": linf}
    assert 0 <= rule.keep_below < 1
    assert rule.delta == delta_threshold(
        mechanism,  # type: ignore[arg-type]
        threshold=rule.threshold,
        keep_below=rule.keep_below,
        **exact,
    )
    assert rule.delta <= delta and rule.delta == pytest.approx(delta, rel=1e-9)
    assert delta_threshold(mechanism, threshold=rule.threshold, **exact) <= delta  # type: ignore[arg-type]
    if rule.threshold > linf + 1:
        assert delta_threshold(mechanism, threshold=rule.threshold - 1, **exact) > delta  # type: ignore[arg-type]


@pytest.mark.parametrize(("contributions", "neighbouring"), [(2, "add-remove"), (1, "replace")])
def test_keys_of_one_unit_are_released_at_the_stated_delta(
    contributions: int, neighbouring: str
) -> None:
    """Sampled, as tests/test_dp_claims.py samples the releases: a key that one unit's
    records alone make, at the largest count l∞ they can give it, is released with
    probability δ / l0 (the union bound over the l0 keys a unit may add), both sides,
    where δ is the whole δ allowed; the whole-number threshold's figure is refuted
    (power). Two records per person (l0 = l∞ = 2), and replace (l0 = 2, l∞ = 1)."""
    n, epsilon, delta = 100_000, 2.0, 0.02
    unit = PrivacyUnit(contributions=contributions, neighbouring=neighbouring)  # type: ignore[arg-type]
    frame = pd.DataFrame({"q": [str(i) for i in range(n)], "count": [contributions] * n})
    table = ClassTable.from_frame(frame, quasi_identifiers=["q"])
    r = release(table, DPOptions(PrivacyGuarantee(epsilon, delta), unit=unit))
    assert r.threshold is not None and r.keep_below is not None
    s = r.sensitivity
    assert (s.l0, s.linf) == (2, contributions)
    stated = r.cost.delta
    assert stated <= delta and stated == pytest.approx(delta, rel=1e-12)
    kept = r.released_counts > 0
    per_key = stated / s.l0
    assert not event(kept, np.zeros(n, bool)).refutes(r.cost.epsilon, per_key)
    assert abs(kept.mean() - per_key) < 5 * math.sqrt(per_key * (1 - per_key) / n)
    whole = delta_threshold(
        r.mechanism, scale=r.noise_scale, threshold=r.threshold, l0=1, linf=s.linf
    )
    assert whole < 0.6 * per_key and event(kept, np.zeros(n, bool)).refutes(0.0, whole)


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
    kept = bernoulli(np.full(n, pi[1]))
    without = bernoulli(np.full(n, pi[0]))
    assert not without.any()
    assert not event(kept, without).refutes(0.0, delta)
    assert event(kept, without).refutes(0.0, delta / 2)
    assert abs(kept.mean() - delta) < 5 * math.sqrt(delta * (1 - delta) / n)


def test_bernoulli_never_exceeds_its_probability() -> None:
    """The secure coin of the candidate and of the release's randomized threshold: a
    probability of 0 never keeps, 1 always keeps, and tiny ones are drawn at 2^-64
    resolution, rounded down."""
    assert not bernoulli(np.zeros(1000)).any()
    assert bernoulli(np.ones(1000)).all()
    assert not bernoulli(np.full(1000, 2.0**-65)).any()


# -- the finding: the threshold stays, randomized --------------------------------------


def half_kept(keep_at: list[float]) -> int:
    """The smallest n whose key is kept at least half the time."""
    return next(n for n, p in enumerate(keep_at) if p >= 0.5)


def threshold_keep(epsilon: float, delta: float, largest: int) -> list[float]:
    """P[a key of n people is kept] by today's release of observed keys (the product's
    randomized threshold and noise, one record per person), n = 0..largest."""
    table = ClassTable.from_frame(pd.DataFrame({"q": ["a"], "count": [1]}), quasi_identifiers=["q"])
    r = release(table, DPOptions(PrivacyGuarantee(epsilon, delta)))
    assert r.threshold is not None and r.keep_below is not None
    return [
        delta_threshold(
            r.mechanism,
            scale=r.noise_scale,
            threshold=r.threshold,
            l0=1,
            linf=n,
            keep_below=r.keep_below,
        )
        for n in range(largest + 1)
    ]


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (2.0, 1e-6)])
def test_optimal_selection_wins_for_keys_alone_and_loses_with_counts(
    epsilon: float, delta: float
) -> None:
    """The paper's comparison (keys only, both at ε): π_n keeps a key at least half the
    time from no more people than the threshold does. Once the kept keys' counts need
    noise of their own, the selection gets part of ε only, and from half of it on it
    needs more people than the randomized threshold, whose noisy count selects for
    free: so the release keeps the threshold and spends the rest of δ on its q."""
    largest = steps_to_one(epsilon / 2, delta)
    today = half_kept(threshold_keep(epsilon, delta, largest))
    assert half_kept(list(keep_probabilities(epsilon, delta, largest))) <= today
    assert half_kept(list(keep_probabilities(epsilon / 2, delta, largest))) > today
