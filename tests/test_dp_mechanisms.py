"""Statistical tests of the noise OpenDP draws through :mod:`anonaudit.dp.mechanisms`.

OpenDP's samplers read the operating system's secure generator and cannot be seeded, so
these tests do not compare fixed draws. Each draws enough samples (one vector call) to
estimate the quantity tested within a few standard errors, and accepts at six standard
errors (or a p-value of 1e-7): a false failure is rarer than one in a hundred million
runs, while a noise scale off by 10% fails (30% for the Kolmogorov-Smirnov shape test),
as the scale-sensitivity assertion beside each test checks.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from scipy import stats

from anonaudit.dp.mechanisms import (
    NoiseDistribution,
    add_noise,
    randomized_response,
    require_opendp,
    rr_keep_probability,
)
from anonaudit.errors import MissingDependencyError, ParameterError

pytest.importorskip("opendp")

N = 100_000
Z = 6.0  # standard errors accepted


def _variance_ok(samples: np.ndarray, variance: float) -> bool:
    """Sample variance within Z standard errors of ``variance`` (se from the 4th moment)."""
    centred = samples - samples.mean()
    se = math.sqrt(max((centred**4).mean() - variance**2, 0.0) / len(samples))
    return abs(centred.var() - variance) <= Z * se


@pytest.mark.parametrize(
    ("mechanism", "scale"),
    [("discrete-laplace", 2.0), ("discrete-gaussian", 3.0), ("laplace", 2.0), ("gaussian", 3.0)],
)
def test_variance_matches_the_scale(mechanism: str, scale: float) -> None:
    noise = NoiseDistribution(mechanism, scale)  # type: ignore[arg-type]
    zeros = np.zeros(30_000, dtype=np.int64)
    samples = add_noise(zeros, mechanism=mechanism, scale=scale)  # type: ignore[arg-type]
    assert samples.dtype == (np.int64 if noise.discrete else np.float64)
    assert _variance_ok(samples.astype(float), noise.variance)
    # the test has power: the variance of a 10% larger scale is rejected
    wrong = NoiseDistribution(mechanism, scale * 1.1)  # type: ignore[arg-type]
    assert not _variance_ok(samples.astype(float), wrong.variance)


def _pmf(mechanism: str, scale: float, values: np.ndarray) -> np.ndarray:
    z, p = NoiseDistribution(mechanism, scale).support()  # type: ignore[arg-type]
    return np.where(np.abs(values) <= z[-1], p[np.clip(values - z[0], 0, len(z) - 1)], 0.0)


@pytest.mark.parametrize(
    ("mechanism", "scale"), [("discrete-laplace", 1.5), ("discrete-gaussian", 2.0)]
)
def test_discrete_noise_follows_its_pmf(mechanism: str, scale: float) -> None:
    """Chi-square goodness of fit against the exact pmf, |z| > 6 pooled."""
    samples = add_noise(np.zeros(N, dtype=np.int64), mechanism=mechanism, scale=scale)  # type: ignore[arg-type]
    inner = np.arange(-6, 7)
    observed = np.r_[[np.count_nonzero(samples == v) for v in inner], (np.abs(samples) > 6).sum()]

    def p_value(s: float) -> float:
        p = _pmf(mechanism, s, inner)
        expected = np.r_[p, 1 - p.sum()] * N
        return float(stats.chisquare(observed, expected).pvalue)

    assert p_value(scale) > 1e-7
    assert p_value(scale * 1.1) < 1e-7


@pytest.mark.parametrize(("mechanism", "scale"), [("laplace", 2.0), ("gaussian", 3.0)])
def test_continuous_noise_follows_its_distribution(mechanism: str, scale: float) -> None:
    samples = add_noise(np.zeros(20_000), mechanism=mechanism, scale=scale)  # type: ignore[arg-type]
    law = stats.laplace if mechanism == "laplace" else stats.norm
    assert stats.kstest(samples, law(scale=scale).cdf).pvalue > 1e-7
    # KS has less power than the variance test above: it is shown a scale 30% off
    assert stats.kstest(samples, law(scale=scale * 1.3).cdf).pvalue < 1e-7


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_discrete_laplace_likelihood_ratio_is_e_to_the_epsilon(epsilon: float) -> None:
    """Neighbouring counts 0 and 1: P[M(0) <= 0] / P[M(1) <= 0] = e^eps exactly
    (the two-sided geometric's ratio is e^eps at every output <= 0)."""
    scale = 1 / epsilon
    at_zero = add_noise(np.zeros(N, dtype=np.int64), mechanism="discrete-laplace", scale=scale)
    at_one = add_noise(np.ones(N, dtype=np.int64), mechanism="discrete-laplace", scale=scale)
    p0, p1 = (at_zero <= 0).mean(), (at_one <= 0).mean()
    log_ratio = math.log(p0 / p1)
    se = math.sqrt((1 - p0) / (N * p0) + (1 - p1) / (N * p1))
    assert abs(log_ratio - epsilon) <= Z * se
    assert abs(log_ratio - epsilon * 1.1) > Z * se  # a scale 10% too small is caught
    # and no single output is more than e^eps more likely under one neighbour
    for output in range(-3, 4):
        a, b = np.count_nonzero(at_zero == output), np.count_nonzero(at_one == output)
        ratio_se = math.sqrt(1 / a + 1 / b)
        assert abs(math.log(a / b)) <= epsilon + Z * ratio_se


def test_randomized_response_keeps_with_the_stated_probability() -> None:
    epsilon, k, n = math.log(4), 3, 2500
    keep = rr_keep_probability(epsilon, k)
    assert keep == pytest.approx(4 / 6)
    own = randomized_response(np.array([0]), np.array([n]), categories=k, epsilon=epsilon)[0]
    other = randomized_response(np.array([1]), np.array([n]), categories=k, epsilon=epsilon)[0]
    assert own.sum() == other.sum() == n
    share = own[0] / n
    assert abs(share - keep) <= Z * math.sqrt(keep * (1 - keep) / n)
    # the likelihood ratio of reporting 0 from true 0 vs true 1 is e^eps
    log_ratio = math.log(own[0] / other[0])
    assert abs(log_ratio - epsilon) <= Z * math.sqrt(1 / own[0] + 1 / other[0])


def test_noise_distribution_formulas_agree_with_the_pmf() -> None:
    noise = NoiseDistribution("discrete-laplace", 1.7)
    z, p = noise.support()
    assert noise.variance == pytest.approx((p * z**2).sum(), rel=1e-9)
    assert noise.mean_absolute_error == pytest.approx((p * np.abs(z)).sum(), rel=1e-9)
    assert noise.probability_within(2) == pytest.approx(p[np.abs(z) <= 2].sum(), rel=1e-9)
    gaussian = NoiseDistribution("discrete-gaussian", 10.0)
    assert gaussian.variance == pytest.approx(100, rel=1e-6)  # CKS20: just below sigma^2
    assert gaussian.variance <= 100
    assert NoiseDistribution("laplace", 2.0).within(0.95) == math.ceil(2 * math.log(20) - 0.5)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ParameterError, match="positive number"):
        add_noise(np.zeros(3), mechanism="laplace", scale=0)
    with pytest.raises(ParameterError, match="randomized response has its own function"):
        add_noise(np.zeros(3), mechanism="randomized-response", scale=1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="at least two values"):
        rr_keep_probability(1.0, 1)


def test_opendp_features_are_left_as_found() -> None:
    from opendp.mod import GLOBAL_FEATURES

    had = "contrib" in GLOBAL_FEATURES
    GLOBAL_FEATURES.discard("contrib")
    try:
        add_noise(np.zeros(2, dtype=np.int64), mechanism="discrete-laplace", scale=1.0)
        assert "contrib" not in GLOBAL_FEATURES
        GLOBAL_FEATURES.add("contrib")
        add_noise(np.zeros(2, dtype=np.int64), mechanism="discrete-laplace", scale=1.0)
        assert "contrib" in GLOBAL_FEATURES
    finally:
        (GLOBAL_FEATURES.add if had else GLOBAL_FEATURES.discard)("contrib")


def test_missing_opendp_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "anonaudit\[dp\]"'):
        require_opendp()
