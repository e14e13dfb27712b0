"""Accounting against known values, OpenDP's own privacy maps and dp-accounting's PLDs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from anonaudit.dp.accounting import (
    Budget,
    PrivacyCost,
    account,
    calibrate,
    gaussian_delta,
    gaussian_epsilon,
    mechanism_cost,
    noise_scale,
    parallel,
    pld_epsilon,
    renyi_curve,
    sequential,
    zcdp_for_epsilon,
    zcdp_to_epsilon,
)
from anonaudit.dp.contrast import posterior_bound
from anonaudit.dp.mechanisms import NoiseDistribution
from anonaudit.dp.plrv import privacy_loss
from anonaudit.errors import BudgetError, ParameterError

FIFTY_HISTOGRAMS = sequential(*[mechanism_cost("discrete-gaussian", scale=10.0, l1=1, l2=1.0)] * 50)


def test_fifty_discrete_gaussian_histograms() -> None:
    """50 histograms, sigma = 10, L2 sensitivity 1 (Canonne, Kamath & Steinke 2020)."""
    assert FIFTY_HISTOGRAMS.rho == pytest.approx(0.25, rel=1e-12)
    assert FIFTY_HISTOGRAMS.epsilon_at(1e-6) == pytest.approx(3.5423, abs=5e-5)
    assert zcdp_to_epsilon(0.25, 1e-6) == pytest.approx(3.5423, abs=5e-5)
    # the exact Gaussian profile of the composition (one Gaussian with mu = sqrt(50)/10)
    assert gaussian_epsilon(1e-6, mu=math.sqrt(50) / 10) == pytest.approx(3.3076, abs=5e-5)
    # the conversion is tighter than rho + 2 sqrt(rho ln 1/delta) = 3.967
    assert zcdp_to_epsilon(0.25, 1e-6) < 0.25 + 2 * math.sqrt(0.25 * math.log(1e6))


def test_posterior_bound_known_value() -> None:
    assert float(posterior_bound(0.01, 1.0)) == pytest.approx(0.02672, abs=5e-6)
    assert float(posterior_bound(0.5, 0.0)) == pytest.approx(0.5)
    assert float(posterior_bound(1.0, 3.0)) == pytest.approx(1.0)


def test_zcdp_inverse_and_monotone() -> None:
    for epsilon in (0.1, 1.0, 5.0):
        rho = zcdp_for_epsilon(epsilon, 1e-6)
        assert zcdp_to_epsilon(rho, 1e-6) == pytest.approx(epsilon, rel=1e-9)
    values = [zcdp_to_epsilon(r, 1e-5) for r in (0.01, 0.1, 1.0, 10.0)]
    assert values == sorted(values)


def test_gaussian_delta_matches_the_definition() -> None:
    """delta(eps) = P[N(mu/2... )]: compare with the integral of (p - e^eps q)_+."""
    sigma, shift, epsilon = 1.3, 1.0, 0.7

    def integrand(x: float) -> float:
        p = stats.norm.pdf(x, 0, sigma)
        q = stats.norm.pdf(x, shift, sigma)
        return max(0.0, p - math.exp(epsilon) * q)

    numeric = integrate.quad(integrand, -20, 20, limit=200)[0]
    assert gaussian_delta(epsilon, mu=shift / sigma) == pytest.approx(numeric, rel=1e-7)


def test_costs_match_opendp_privacy_maps() -> None:
    dp = pytest.importorskip("opendp.prelude")
    from anonaudit.dp.mechanisms import opendp_contrib

    with opendp_contrib(dp):
        vector = dp.vector_domain(dp.atom_domain(T="i64"))
        laplace = dp.m.make_laplace(vector, dp.l1_distance(T="i64"), scale=2.5)
        gaussian = dp.m.make_gaussian(vector, dp.l2_distance(T="i64"), scale=3.0)
    assert mechanism_cost("discrete-laplace", scale=2.5, l1=2, l2=2.0).epsilon == pytest.approx(
        laplace.map(2)
    )
    assert mechanism_cost("discrete-gaussian", scale=3.0, l1=1, l2=1.0).rho == pytest.approx(
        gaussian.map(1)
    )


def test_sequential_and_parallel_composition() -> None:
    a, b = PrivacyCost(epsilon=0.5), PrivacyCost(epsilon=0.25, rho=0.01, delta=1e-9)
    assert sequential(a, b) == PrivacyCost(epsilon=0.75, rho=0.01, delta=1e-9)
    assert parallel(a, b) == PrivacyCost(epsilon=0.5, rho=0.01, delta=1e-9)
    assert sequential() == PrivacyCost()
    # pure costs need no delta; a Gaussian part needs delta above the failure probability
    assert a.epsilon_at(0.0) == 0.5 and a.pure
    assert math.isinf(b.epsilon_at(1e-9))
    assert b.epsilon_at(1e-6) > 0.25


def test_budget_refuses_releases_that_exceed_it() -> None:
    budget = Budget(epsilon=1.0).spend(PrivacyCost(epsilon=0.4), PrivacyCost(epsilon=0.4))
    assert budget.remaining() == pytest.approx(0.2)
    with pytest.raises(BudgetError, match=r"cost epsilon 1\.2.*budget's 1 \(0\.2 remains\)"):
        budget.spend(PrivacyCost(epsilon=0.4))
    # parallel releases over disjoint data cost their maximum and fit
    Budget(epsilon=1.0).spend(parallel(*[PrivacyCost(epsilon=0.9)] * 100))
    # a Gaussian release cannot fit a pure budget
    with pytest.raises(BudgetError, match="inf"):
        Budget(epsilon=10.0).spend(PrivacyCost(rho=0.01))
    with pytest.raises(BudgetError, match="at delta 1e-06"):
        Budget(epsilon=3.0, delta=1e-6).spend(FIFTY_HISTOGRAMS)
    assert isinstance(BudgetError("x"), ValueError)


def test_noise_scale_and_calibration() -> None:
    assert noise_scale("discrete-laplace", epsilon=0.5, l1=2, l2=2.0) == 4.0
    # Gaussian noise on the exact curve (Balle & Wang 2018): delta(1) is exactly 1e-6,
    # with less noise than the zCDP conversion needs
    sigma = noise_scale("gaussian", epsilon=1.0, delta=1e-6, l1=1, l2=1.0)
    assert gaussian_delta(1.0, mu=1 / sigma) == pytest.approx(1e-6, rel=1e-6)
    assert mechanism_cost("gaussian", scale=sigma, l1=1, l2=1.0).epsilon_at(1e-6) > 1.05
    with pytest.raises(ParameterError, match="--delta"):
        noise_scale("gaussian", epsilon=1.0, l1=1, l2=1.0)
    # "counts within +-5 with 95% probability": the largest scale that does it
    c = calibrate("discrete-laplace", within=5, confidence=0.95)
    assert c.within == 5
    assert NoiseDistribution("discrete-laplace", c.scale).probability_within(5) >= 0.95
    assert NoiseDistribution("discrete-laplace", c.scale * 1.01).probability_within(5) < 0.95
    assert c.epsilon == pytest.approx(1 / c.scale)
    back = calibrate("discrete-laplace", epsilon=c.epsilon)
    assert back.scale == pytest.approx(c.scale) and back.within == 5
    g = calibrate("gaussian", within=10, delta=1e-6)
    assert g.within == 10 and 0 < g.epsilon < 5
    with pytest.raises(ParameterError, match="exactly one"):
        calibrate("laplace")


def test_renyi_curve() -> None:
    orders = [1.5, 2.0, 10.0]
    assert renyi_curve(PrivacyCost(rho=0.1), orders).tolist() == pytest.approx([0.15, 0.2, 1.0])
    assert renyi_curve(PrivacyCost(epsilon=1.0), orders).tolist() == pytest.approx([0.75, 1, 1])
    a = account(FIFTY_HISTOGRAMS, delta=1e-6)
    assert a.rho == pytest.approx(0.25) and a.epsilon == pytest.approx(3.5423, abs=5e-5)
    assert dict(a.renyi)[2.0] == pytest.approx(0.5)


def test_pld_accounting_is_tighter_and_composes_randomized_response() -> None:
    pytest.importorskip("dp_accounting")
    tight = pld_epsilon("discrete-gaussian", scale=10.0, shifts=[1] * 50, delta=1e-6)
    assert tight is not None
    # 50 discrete Gaussian histograms: within a hair of the exact continuous Gaussian
    assert tight == pytest.approx(3.3076, abs=0.01)
    assert pld_epsilon("discrete-laplace", scale=2.0, shifts=[1], delta=0.0) == pytest.approx(0.5)
    # three reports of one person: the PLD objects are composed (3 eps), not one event
    eps = pld_epsilon("randomized-response", scale=0.5, shifts=[1, 1, 1], delta=0.0, categories=4)
    assert eps == pytest.approx(1.5, rel=1e-3)
    a = account(
        mechanism_cost("gaussian", scale=1.0, l1=1, l2=1.0),
        delta=1e-5,
        mechanism="gaussian",
        scale=1.0,
        shifts=[1],
    )
    assert a.epsilon_exact_gaussian is not None and a.epsilon_pld is not None
    assert a.epsilon_pld == pytest.approx(a.epsilon_exact_gaussian, abs=0.01)
    assert a.epsilon_exact_gaussian < a.epsilon


@pytest.mark.parametrize(
    ("mechanism", "scale", "shifts"),
    [
        ("discrete-laplace", 1.0, [1]),
        ("laplace", 0.5, [1]),
        ("randomized-response", 0.8, [1, 1]),
        ("discrete-gaussian", 2.0, [1, 1]),
        ("gaussian", 1.5, [1]),
    ],
)
def test_privacy_loss_random_variable(mechanism: str, scale: float, shifts: list[int]) -> None:
    loss = privacy_loss(mechanism, scale=scale, shifts=shifts, categories=3)  # type: ignore[arg-type]
    assert loss.probabilities.sum() == pytest.approx(1.0)
    assert loss.mean >= 0
    if loss.kl_bound is not None:  # pure mechanisms: |L| <= eps and KL <= eps (e^eps - 1)
        assert np.abs(loss.losses).max() <= loss.epsilon + 1e-12
        assert loss.mean <= loss.kl_bound
        assert loss.delta(loss.epsilon) == pytest.approx(0.0, abs=1e-12)
    profile = [d for _, d in loss.profile([0.0, 0.5, 1.0, 2.0])]
    assert profile == sorted(profile, reverse=True)
    if "gaussian" in mechanism:  # the mean of the Gaussian PLRV is rho
        assert loss.mean == pytest.approx(sum(s * s for s in shifts) / (2 * scale**2), rel=1e-6)


def test_laplace_profile_matches_the_integral() -> None:
    b, shift = 1.0, 2

    def density(x: float, centre: float) -> float:
        return math.exp(-abs(x - centre) / b) / (2 * b)

    loss = privacy_loss("laplace", scale=b, shifts=[shift])
    for epsilon in (0.0, 0.5, 1.5):
        numeric = integrate.quad(
            lambda x, e=epsilon: max(0.0, density(x, 0) - math.exp(e) * density(x, shift)),
            -40,
            40,
            points=[0, shift],
            limit=200,
        )[0]
        assert loss.delta(epsilon) == pytest.approx(numeric, rel=1e-6)
