"""The privacy loss random variable of a mechanism, its mean, and its privacy profile.

For neighbouring inputs ``D`` and ``D'`` and an output ``o`` drawn from the mechanism on
``D``, the privacy loss is ``L = ln P[M(D) = o] / P[M(D') = o]`` (Dinur & Nissim 2003;
Dwork & Rothblum 2016, "Concentrated differential privacy"). Everything the accountant
says is a property of its distribution:

* pure ε-DP: ``|L| <= ε`` always;
* its mean is the KL divergence ``KL(M(D) || M(D'))`` (the expected privacy loss, or
  KL privacy), at most ``ε tanh(ε / 2)`` for an ε-DP mechanism, a bound that binary
  randomized response and the discrete Laplace mechanism reach (Bun & Steinke 2016,
  "Concentrated differential privacy: simplifications, extensions, and lower bounds",
  TCC, Proposition 3.3);
* ``P[L > ε']`` is the tail of probabilistic DP: how often the loss exceeds ``ε'``
  (Machanavajjhala et al. 2008, "Privacy: theory meets practice on the map", ICDE;
  Meiser 2018, "Approximate and probabilistic differential privacy definitions", IACR
  ePrint 2018/277). It is not δ: ``δ(ε') <= P[L > ε']``;
* the privacy profile ``δ(ε') = E[(1 - e^{ε' - L})_+]`` is the smallest δ for which the
  mechanism is (ε', δ)-DP (Balle, Barthe & Gaboardi 2018, "Privacy amplification by
  subsampling", NeurIPS, Section 3).

The neighbouring pair is the worst one for the released vector (:meth:`~anonaudit.dp.
sensitivity.Sensitivity.shifts`): Laplace noise with the whole L1 change in one cell,
Gaussian noise with the change spread as the sensitivity says. Distributions are exact
for the discrete mechanisms and randomized response (sums over the integer support),
closed-form for the Laplace and Gaussian profiles, and binned for plotting the
continuous distributions. A stability threshold's δ is not part of this variable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from anonaudit.dp.accounting import gaussian_delta
from anonaudit.dp.mechanisms import Mechanism, NoiseDistribution, rr_keep_probability
from anonaudit.errors import ParameterError

__all__ = ["PrivacyLoss", "privacy_loss"]

_BINS = 200
#: Largest product of support lengths convolved directly (about 0.1 s).
_DIRECT_CONVOLUTION = 10_000_000


@dataclass(frozen=True)
class PrivacyLoss:
    """Distribution of the privacy loss of one release on its worst neighbouring pair.

    Attributes
    ----------
    mechanism : str
        The mechanism.
    scale : float
        Its noise scale (per-report ε for randomized response).
    shifts : tuple of int
        Per-cell change between the neighbours (reports, for randomized response).
    losses, probabilities : numpy.ndarray
        Values of L (ascending; bin centres for continuous noise) and their probabilities.
    mean : float
        ``E[L]``, the KL divergence between the outputs on the two neighbours.
    epsilon : float
        Largest value of L: the pure ε, or ``inf`` for Gaussian noise.
    categories : int
        Values of the randomized attribute (randomized response only).
    """

    mechanism: Mechanism
    scale: float
    shifts: tuple[int, ...]
    losses: NDArray[Any] = field(repr=False)
    probabilities: NDArray[Any] = field(repr=False)
    mean: float
    epsilon: float
    categories: int = 2

    @property
    def kl_bound(self) -> float | None:
        """``ε tanh(ε / 2)``, the tight bound on the mean for ε-DP (Bun & Steinke 2016,
        Proposition 3.3); ``None`` without a pure ε."""
        return None if math.isinf(self.epsilon) else self.epsilon * math.tanh(self.epsilon / 2)

    def tail(self, epsilon: float) -> float:
        """``P[L > epsilon]``: how often the privacy loss exceeds ``epsilon``.

        The Gaussian loss is normal with mean ``μ²/2`` and variance ``μ²`` (Balle & Wang
        2018, Lemma 3); the Laplace loss has an atom of 1/2 at its largest value ``ε``;
        discrete losses are summed.
        """
        if self.mechanism == "gaussian":
            mu = _l2(self.shifts) / self.scale
            return float(special.ndtr((mu * mu / 2 - epsilon) / mu))
        if self.mechanism == "laplace":
            b, shift = self.scale, sum(self.shifts)
            if epsilon >= self.epsilon:
                return 0.0
            if epsilon < -self.epsilon:
                return 1.0
            # L = (|x - Δ| - |x|) / b with x ~ Lap(0, b): L > e iff x < (Δ - e b) / 2
            cut = (shift - epsilon * b) / 2
            return float(1 - 0.5 * math.exp(-cut / b))
        return float(self.probabilities[self.losses > epsilon * (1 + 1e-12)].sum())

    def epsilon_for(self, delta: float) -> float:
        """Smallest ``ε'`` with :meth:`delta` at most ``delta``: the profile inverted."""
        if not 0 < delta < 1:
            raise ParameterError(f"delta must lie strictly between 0 and 1 (got {delta!r})")
        if self.delta(0.0) <= delta:
            return 0.0
        low, high = 0.0, 1.0
        while self.delta(high) > delta:
            low, high = high, high * 2
        for _ in range(100):
            mid = (low + high) / 2
            low, high = (low, mid) if self.delta(mid) <= delta else (mid, high)
        return high

    def delta(self, epsilon: float) -> float:
        """The privacy profile: smallest δ with (``epsilon``, δ)-DP for this pair."""
        if self.mechanism == "gaussian":
            return gaussian_delta(epsilon, mu=_l2(self.shifts) / self.scale)
        if self.mechanism == "laplace":  # atoms at ±ε and a linear part between
            return float(max(0.0, -math.expm1((epsilon - self.epsilon) / 2)))
        terms = -np.expm1(np.minimum(epsilon - self.losses, 0.0))
        return float(max(0.0, (self.probabilities * terms).sum()))

    def profile(self, epsilons: Sequence[float]) -> tuple[tuple[float, float], ...]:
        """``(ε', δ(ε'))`` pairs, for plotting the privacy profile."""
        return tuple((float(e), self.delta(float(e))) for e in epsilons)


def privacy_loss(
    mechanism: Mechanism, *, scale: float, shifts: Sequence[int], categories: int = 2
) -> PrivacyLoss:
    """The privacy loss random variable of ``mechanism`` for neighbours ``shifts`` apart.

    Parameters
    ----------
    mechanism : str
        One of the mechanisms.
    scale : float
        Noise scale; for randomized response the ε of one report.
    shifts : sequence of int
        Change of each affected cell (for randomized response: one entry per report).
    categories : int
        Values of the randomized attribute (randomized response).

    Examples
    --------
    Discrete Laplace with b = 1 and one count changing by one: ``|L| <= 1`` and
    ``E[L] = KL`` reaches the tight bound ``tanh(1/2)``.

    >>> loss = privacy_loss("discrete-laplace", scale=1.0, shifts=[1])
    >>> loss.epsilon, round(loss.mean, 4), round(loss.kl_bound, 4)
    (1.0, 0.4621, 0.4621)
    """
    shifts = tuple(int(s) for s in shifts)
    if not shifts or min(shifts) < 1:
        raise ParameterError(f"shifts must be whole numbers >= 1 (got {shifts!r})")
    if mechanism == "randomized-response":
        losses, probs = _randomized_response(scale, len(shifts), categories)
    elif mechanism == "discrete-laplace":
        z, p = NoiseDistribution(mechanism, scale).support()
        delta = sum(shifts)
        losses, probs = (np.abs(z - delta) - np.abs(z)) / scale, p
    elif mechanism == "discrete-gaussian":
        if len(set(shifts)) != 1:
            raise ParameterError("the discrete Gaussian loss needs equal shifts")
        z, p = NoiseDistribution(mechanism, scale).support()
        total, pmf = z, p
        for _ in shifts[1:]:
            total = np.arange(total[0] + z[0], total[-1] + z[-1] + 1)
            pmf = _convolve(pmf, p)
        m, c = shifts[0], len(shifts)
        losses, probs = (c * m * m - 2 * m * total) / (2 * scale**2), pmf
    elif mechanism == "laplace":
        losses, probs = _laplace(scale, sum(shifts))
    elif mechanism == "gaussian":
        mu = _l2(shifts) ** 2 / (2 * scale**2)
        edges = mu + math.sqrt(2 * mu) * np.linspace(-8, 8, _BINS + 1)
        losses = (edges[1:] + edges[:-1]) / 2
        probs = np.diff(special.ndtr((edges - mu) / math.sqrt(2 * mu)))
    else:
        raise ParameterError(f"unknown mechanism {mechanism!r}")
    losses, probs = _merge(np.asarray(losses, float), np.asarray(probs, float))
    return PrivacyLoss(
        mechanism=mechanism,
        scale=scale,
        shifts=shifts,
        losses=losses,
        probabilities=probs,
        mean=_mean(mechanism, scale, shifts, losses, probs),
        epsilon=math.inf if "gaussian" in mechanism else float(losses.max()),
        categories=categories,
    )


def _convolve(a: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """The pmf of a sum: direct for small supports, by FFT for large ones (quadratic
    cost otherwise; FFT rounding, about 1e-16 of the largest mass, is clipped at 0)."""
    if len(a) * len(b) <= _DIRECT_CONVOLUTION:
        return np.convolve(a, b)
    size = len(a) + len(b) - 1
    fft_size = 1 << (size - 1).bit_length()
    product = np.fft.rfft(a, fft_size) * np.fft.rfft(b, fft_size)
    return np.asarray(np.maximum(np.fft.irfft(product, fft_size)[:size], 0.0))


def _l2(shifts: Sequence[int]) -> float:
    return math.sqrt(sum(s * s for s in shifts))


def _mean(
    mechanism: Mechanism,
    scale: float,
    shifts: tuple[int, ...],
    losses: NDArray[Any],
    probs: NDArray[Any],
) -> float:
    """KL divergence: closed forms for the continuous noise, the exact sum otherwise."""
    if mechanism == "gaussian":
        return _l2(shifts) ** 2 / (2 * scale**2)
    if mechanism == "laplace":  # KL(Lap(0, b) || Lap(Δ, b)) = Δ/b + e^{-Δ/b} - 1
        eps = sum(shifts) / scale
        return eps + math.expm1(-eps)
    return float((losses * probs).sum())


def _randomized_response(
    epsilon: float, reports: int, categories: int
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Loss of ``reports`` independent k-ary reports of a value changed to another.

    Each report is the true value (loss +ε), the neighbour's value (-ε) or another (0).
    """
    keep = rr_keep_probability(epsilon, categories)
    other = (1 - keep) / (categories - 1)
    step = np.array([other, 1 - keep - other, keep])  # net -1, 0, +1
    pmf = np.ones(1)
    for _ in range(reports):
        pmf = np.convolve(pmf, step)
    net = np.arange(-reports, reports + 1)
    return net * epsilon, pmf


def _laplace(scale: float, shift: int) -> tuple[NDArray[Any], NDArray[Any]]:
    """Laplace loss ``(|x - Δ| - |x|) / b``: atoms at ±Δ/b and binned values between."""
    eps = shift / scale
    edges = np.linspace(0, shift, _BINS + 1)
    cdf = 1 - 0.5 * np.exp(-edges / scale)  # P(x <= e) for e >= 0
    centres = (edges[1:] + edges[:-1]) / 2
    losses = np.r_[eps, (shift - 2 * centres) / scale, -eps]
    probs = np.r_[0.5, np.diff(cdf), 0.5 * math.exp(-eps)]
    return losses, probs


def _merge(losses: NDArray[Any], probs: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
    """Sort by loss, sum the probabilities of equal losses, drop zero probabilities."""
    keep = probs > 0
    values, inverse = np.unique(np.round(losses[keep], 12), return_inverse=True)
    merged = np.bincount(inverse, weights=probs[keep], minlength=len(values))
    return values, merged / merged.sum() if merged.sum() > 0 else merged
