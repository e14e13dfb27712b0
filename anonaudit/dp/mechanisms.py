"""Noise mechanisms: OpenDP's samplers on whole vectors, and the noise they add.

Every random number of :mod:`anonaudit.dp` comes from OpenDP (a dependency of anonaudit),
whose samplers are exact and draw from the operating system's secure generator, so the
released numbers do not leak through floating-point artefacts (Mironov 2012, "On
significance of the least significant bits for differential privacy", CCS). The one
exception, the coin of the randomized stability threshold (:func:`bernoulli`), is drawn
from the same secure generator through :mod:`secrets`, exactly. numpy's generators are
never used for a release.

Mechanisms, by name (:data:`MECHANISMS`):

* ``discrete-laplace``: the two-sided geometric distribution on the integers,
  ``P(Z = z) ∝ exp(-|z| / b)`` (Ghosh, Roughgarden & Sundararajan 2009, "Universally
  utility-maximizing privacy mechanisms", STOC; Inusah & Kozubowski 2006, "A discrete
  analogue of the Laplace distribution", J. Stat. Plan. Inference 136). Adding it to
  integer counts of L1 sensitivity Δ gives ``Δ / b``-DP.
* ``discrete-gaussian``: ``P(Z = z) ∝ exp(-z² / (2σ²))`` on the integers (Canonne,
  Kamath & Steinke 2020, "The discrete Gaussian for differential privacy", NeurIPS).
  Counts of L2 sensitivity Δ get ``Δ² / (2σ²)``-zCDP (their Theorem 4).
* ``laplace``: the Laplace distribution with scale b, for real-valued statistics (Dwork,
  McSherry, Nissim & Smith 2006, "Calibrating noise to sensitivity in private data
  analysis", TCC). OpenDP samples it exactly on a fine grid; ``Δ / b``-DP.
* ``gaussian``: the normal distribution with standard deviation σ for real-valued
  statistics; ``Δ² / (2σ²)``-zCDP (Bun & Steinke 2016, "Concentrated differential
  privacy: simplifications, extensions, and lower bounds", TCC, Proposition 1.6).
* ``randomized-response``: each record reports its own sensitive value with probability
  ``e^ε / (e^ε + k - 1)`` and each of the other k - 1 values otherwise (Warner 1965,
  "Randomized response: a survey technique for eliminating evasive answer bias", JASA
  60(309); the k-ary form of Kairouz, Oh & Viswanath 2014). ε-DP in the local model.

Speed (measured on the 2-core development machine, ``benchmarks/bench_dp.py``): about
9 s per million discrete Laplace draws and 15 s per million discrete Gaussian draws when
a whole vector goes to OpenDP in one call (``T="i64"`` vectors); a call per cell would add
Python overhead to every draw. Randomized response has no vector form in OpenDP and runs
one call per record (about 0.16 ms each).

OpenDP's mechanism constructors refuse to run unless the ``"contrib"`` feature is
enabled (``opendp.prelude.enable_features``), a process-wide setting. :func:`opendp_contrib`
enables it only while a constructor runs and removes it again unless the caller had
enabled it, so importing or using anonaudit never changes what the rest of a program may
do with OpenDP.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from anonaudit.errors import MissingDependencyError, ParameterError
from anonaudit.settings.names import ADDITIVE, DISCRETE, MECHANISMS, Mechanism

__all__ = [
    "ADDITIVE",
    "DISCRETE",
    "MECHANISMS",
    "Mechanism",
    "NoiseDistribution",
    "add_noise",
    "bernoulli",
    "opendp_contrib",
    "randomized_response",
    "require_opendp",
    "rr_keep_probability",
]


_INSTALL = 'pip install "anonaudit[dp]"'
#: Discrete distributions are summed over ``|z| <= _TAIL_SCALES * scale + 1``; the mass
#: left out is below exp(-40) (Laplace) or exp(-800) (Gaussian).
_TAIL_SCALES = 40


def require_opendp() -> ModuleType:
    """Import ``opendp.prelude``, or explain how to install it.

    Raises
    ------
    MissingDependencyError
        OpenDP is not installed; the message carries the install command.
    """
    try:
        import opendp.prelude as dp
    except ImportError:
        raise MissingDependencyError(
            f"differential privacy needs OpenDP; install it with: {_INSTALL}"
        ) from None
    return dp


@contextmanager
def opendp_contrib(dp: ModuleType) -> Iterator[None]:
    """Enable OpenDP's ``"contrib"`` feature for the block, restoring the previous state."""
    from opendp.mod import GLOBAL_FEATURES

    had = "contrib" in GLOBAL_FEATURES
    dp.enable_features("contrib")
    try:
        yield
    finally:
        if not had:
            dp.disable_features("contrib")


def add_noise(values: NDArray[Any], *, mechanism: Mechanism, scale: float) -> NDArray[Any]:
    """Add one draw of ``mechanism``'s noise with ``scale`` to every element of ``values``.

    The vector goes to OpenDP in one call. Discrete mechanisms return ``int64``; the
    continuous ones return ``float64`` (round them as post-processing).

    Parameters
    ----------
    values : numpy.ndarray
        Integer counts (discrete mechanisms) or real values.
    mechanism : {"discrete-laplace", "discrete-gaussian", "laplace", "gaussian"}
        The noise distribution.
    scale : float
        ``b`` of the Laplace distributions, ``σ`` of the Gaussian ones (> 0).

    Returns
    -------
    numpy.ndarray
        The noisy values, aligned with ``values``.

    Examples
    --------
    >>> noisy = add_noise(np.array([10, 20]), mechanism="discrete-laplace", scale=1.0)
    >>> noisy.dtype, noisy.shape
    (dtype('int64'), (2,))
    """
    if mechanism not in ADDITIVE:
        raise ParameterError(
            f"add_noise takes one of {', '.join(ADDITIVE)} (got {mechanism!r}); "
            "randomized response has its own function"
        )
    if not (math.isfinite(scale) and scale > 0):
        raise ParameterError(f"the noise scale must be a positive number (got {scale!r})")
    if len(values) == 0:
        return np.asarray(values, dtype=np.int64 if mechanism in DISCRETE else np.float64)
    dp = require_opendp()
    laplace = mechanism in ("discrete-laplace", "laplace")
    discrete = mechanism in DISCRETE
    atom = dp.atom_domain(T="i64") if discrete else dp.atom_domain(T=float, nan=False)
    kind = "i64" if discrete else float
    metric = dp.l1_distance(T=kind) if laplace else dp.l2_distance(T=kind)
    make = dp.m.make_laplace if laplace else dp.m.make_gaussian
    with opendp_contrib(dp):
        measurement = make(dp.vector_domain(atom), metric, scale=float(scale))
    dtype = np.int64 if discrete else np.float64
    return np.asarray(measurement(np.asarray(values, dtype=dtype).tolist()), dtype=dtype)


def bernoulli(probabilities: NDArray[Any]) -> NDArray[Any]:
    """One secure Bernoulli draw per probability, never more likely than it.

    A 64-bit integer ``r`` from the operating system's secure generator
    (:func:`secrets.token_bytes`) per element is true when ``r < floor(p 2^64)``: with
    probability exactly ``floor(p 2^64) / 2^64``, at most ``p`` and within ``2^-64`` of
    it; ``p >= 1`` is always true. One vectorised call, whatever the probabilities.

    >>> bernoulli(np.array([0.0, 1.0])).tolist()
    [False, True]
    """
    p = np.asarray(probabilities, dtype=np.float64)
    draws = np.frombuffer(secrets.token_bytes(8 * p.size), dtype=np.uint64).reshape(p.shape)
    below = np.floor(np.ldexp(np.where(p < 1, np.maximum(p, 0.0), 0.0), 64)).astype(np.uint64)
    return np.asarray((p >= 1) | (draws < below))


def rr_keep_probability(epsilon: float, categories: int) -> float:
    """Probability that k-ary randomized response reports the true value.

    ``e^ε / (e^ε + k - 1)``: the ratio of reporting any value for two different true
    values is then at most ``e^ε`` (Warner 1965; Kairouz, Oh & Viswanath 2014).

    >>> round(rr_keep_probability(math.log(3), 2), 4)
    0.75
    """
    if categories < 2:
        raise ParameterError(
            f"randomized response needs at least two values (got {categories}); "
            "declare the sensitive column's values with --public-domain"
        )
    return float(1 / (1 + (categories - 1) * math.exp(-epsilon)))


def randomized_response(
    codes: NDArray[Any], counts: NDArray[Any], *, categories: int, epsilon: float
) -> NDArray[Any]:
    """Randomize every record's value, record by record (the local model).

    Parameters
    ----------
    codes : numpy.ndarray
        For each cell, the value code (0..k-1) its records hold.
    counts : numpy.ndarray
        Records per cell.
    categories : int
        k, the number of values (public).
    epsilon : float
        Each report is ε-DP with respect to the record's value.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(len(codes), categories)``: for each cell, how many of
        its records reported each value.
    """
    keep = rr_keep_probability(epsilon, categories)
    dp = require_opendp()
    with opendp_contrib(dp):
        measurement = dp.m.make_randomized_response(list(range(categories)), keep, T="i64")
    records = np.repeat(np.arange(len(codes)), counts)
    reports = np.fromiter(
        (measurement(int(value)) for value in np.repeat(codes, counts)),
        dtype=np.int64,
        count=len(records),
    )
    result = np.zeros((len(codes), categories), dtype=np.int64)
    np.add.at(result, (records, reports), 1)
    return result


@dataclass(frozen=True)
class NoiseDistribution:
    """The noise one mechanism adds to each count, and the error it causes.

    Parameters
    ----------
    mechanism : {"discrete-laplace", "discrete-gaussian", "laplace", "gaussian"}
        The distribution.
    scale : float
        ``b`` (Laplace) or ``σ`` (Gaussian).

    Examples
    --------
    Discrete Laplace with b = 1 has variance ``2 e^{-1} / (1 - e^{-1})² ≈ 1.84``:

    >>> round(NoiseDistribution("discrete-laplace", 1.0).variance, 4)
    1.8413
    """

    mechanism: Mechanism
    scale: float

    def __post_init__(self) -> None:
        if self.mechanism not in ADDITIVE:
            raise ParameterError(f"no additive noise for mechanism {self.mechanism!r}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ParameterError(f"the noise scale must be a positive number (got {self.scale!r})")

    @property
    def discrete(self) -> bool:
        """Whether the noise is an integer."""
        return self.mechanism in DISCRETE

    def support(self) -> tuple[NDArray[Any], NDArray[Any]]:
        """Integers ``z`` and ``P(Z = z)`` over all but a negligible tail (discrete only).

        The discrete Gaussian's normalizing constant has no closed form (Canonne, Kamath
        & Steinke 2020, Section 2); it is summed here.
        """
        if not self.discrete:
            raise ParameterError(f"{self.mechanism} noise is continuous; it has no pmf")
        reach = math.ceil(_TAIL_SCALES * self.scale) + 1
        z = np.arange(-reach, reach + 1)
        if self.mechanism == "discrete-laplace":
            log_weight = -np.abs(z) / self.scale
        else:
            log_weight = -(z.astype(float) ** 2) / (2 * self.scale**2)
        weight = np.exp(log_weight - log_weight.max())
        return z, weight / weight.sum()

    @property
    def variance(self) -> float:
        """Variance of one draw: ``2 e^{-1/b} / (1 - e^{-1/b})²`` for the discrete Laplace,
        ``2 b²`` for the Laplace, ``σ²`` for the Gaussian, summed for the discrete Gaussian
        (slightly below σ²; Canonne, Kamath & Steinke 2020, Proposition 19)."""
        if self.mechanism == "discrete-laplace":
            q = math.exp(-1 / self.scale)
            return 2 * q / (1 - q) ** 2
        if self.mechanism == "laplace":
            return 2 * self.scale**2
        if self.mechanism == "gaussian":
            return self.scale**2
        z, p = self.support()
        return float((p * z.astype(float) ** 2).sum())

    @property
    def mean_absolute_error(self) -> float:
        """``E|Z|``: ``2 e^{-1/b} / (1 - e^{-2/b})`` (discrete Laplace), ``b`` (Laplace),
        ``σ √(2/π)`` (Gaussian), summed for the discrete Gaussian."""
        if self.mechanism == "discrete-laplace":
            q = math.exp(-1 / self.scale)
            return 2 * q / (1 - q * q)
        if self.mechanism == "laplace":
            return self.scale
        if self.mechanism == "gaussian":
            return self.scale * math.sqrt(2 / math.pi)
        z, p = self.support()
        return float((p * np.abs(z)).sum())

    def probability_within(self, n: float) -> float:
        """``P(|Z| <= n)``: the chance that a count is off by at most ``n``.

        For the continuous mechanisms the released count is rounded, so it is within
        ``n`` of the truth when ``|Z| < n + 1/2``.
        """
        if n < 0:
            return 0.0
        if self.mechanism == "discrete-laplace":
            q = math.exp(-1 / self.scale)
            return 1 - 2 * q ** (math.floor(n) + 1) / (1 + q)
        if self.mechanism == "laplace":
            return 1 - math.exp(-(n + 0.5) / self.scale)
        if self.mechanism == "gaussian":
            return float(special.erf((n + 0.5) / (self.scale * math.sqrt(2))))
        z, p = self.support()
        return float(min(1.0, p[np.abs(z) <= n].sum()))

    def tail(self, t: int) -> float:
        """``P(Z >= t)`` for whole ``t``: the exact upper tail of the integer noise.

        Discrete Laplace: ``q^t / (1 + q)`` for ``t >= 1`` with ``q = e^{-1/b}``
        (Inusah & Kozubowski 2006); discrete Gaussian: the pmf summed from ``t`` in log
        space (Canonne, Kamath & Steinke 2020). Below 1, by symmetry.

        >>> round(NoiseDistribution("discrete-laplace", 1.0).tail(5), 5)
        0.00493
        """
        if not self.discrete:
            raise ParameterError(f"{self.mechanism} noise is continuous; tail() is for integers")
        t = int(t)
        if t <= 0:  # symmetric noise: P(Z >= t) = 1 - P(Z >= 1 - t)
            return 1 - self.tail(1 - t)
        if self.mechanism == "discrete-laplace":
            log_q = -1 / self.scale
            return math.exp(t * log_q - math.log1p(math.exp(log_q)))
        reach = math.ceil(_TAIL_SCALES * self.scale) + 1
        z = np.arange(t, t + reach + 1, dtype=float)
        whole = np.arange(-reach, reach + 1, dtype=float)
        log_tail = special.logsumexp(-(z**2) / (2 * self.scale**2))
        log_norm = special.logsumexp(-(whole**2) / (2 * self.scale**2))
        return float(np.exp(log_tail - log_norm))

    def within(self, confidence: float = 0.95) -> int:
        """Smallest whole ``n`` with ``P(|Z| <= n) >= confidence``.

        >>> NoiseDistribution("discrete-laplace", 1.0).within(0.95)
        3
        """
        if not 0 < confidence < 1:
            raise ParameterError(f"confidence must lie strictly between 0 and 1 ({confidence!r})")
        low, high = 0, 1
        while self.probability_within(high) < confidence:
            low, high = high, high * 2
        while low < high:
            mid = (low + high) // 2
            if self.probability_within(mid) >= confidence:
                high = mid
            else:
                low = mid + 1
        return low
