"""Privacy accounting: what releases cost, how costs compose, and noise for a target.

A release's cost is a :class:`PrivacyCost` with three parts, each composing by addition
over releases of the same data (sequential composition) and by maximum over releases of
disjoint data (parallel composition; McSherry 2009, "Privacy integrated queries",
Theorems 3 and 4):

* ``epsilon``: pure ε-DP (Dwork, McSherry, Nissim & Smith 2006);
* ``rho``: ρ-zero-concentrated DP (Bun & Steinke 2016, "Concentrated differential
  privacy: simplifications, extensions, and lower bounds", TCC), where Gaussian noise
  composes tightly;
* ``delta``: a probability of failure that adds up (the stability threshold).

The total becomes (ε, δ)-DP through zCDP: ε-DP implies ε²/2-zCDP (Bun & Steinke 2016,
Proposition 1.4), zCDP costs add (their Lemma 2.3), and ρ-zCDP implies (ε, δ)-DP with the
conversion of Canonne, Kamath & Steinke 2020 ("The discrete Gaussian for differential
privacy", Corollary 13), tighter than ``ρ + 2 √(ρ ln 1/δ)``. Tighter still for Gaussian
noise is the exact privacy profile of Balle & Wang 2018 ("Improving the Gaussian
mechanism for differential privacy: analytical calibration and optimal denoising",
ICML, Theorem 8), and for any mechanism the privacy-loss distribution (PLD) accountant
of Google's ``dp-accounting`` (Koskela, Jälkö & Honkela 2020; Doroshenko et al. 2022),
which composes the releases of a ledger (:mod:`anonaudit.dp.budgets`).

Rényi DP (Mironov 2017, "Rényi differential privacy", CSF) is reported as a curve
``ε(α)``: ρ-zCDP is (α, αρ)-RDP for every α > 1, ε-DP is (α, min(ε, αε²/2))-RDP, and an
(α, ε(α))-RDP mechanism is (ε(α) + ln(1/δ) / (α - 1), δ)-DP (Mironov 2017,
Proposition 3).

Example: 50 discrete Gaussian histograms with σ = 10 and L2 sensitivity 1 cost
ρ = 50 / (2 · 10²) = 0.25; at δ = 1e-6 the zCDP conversion gives ε = 3.5423 and the
exact Gaussian profile ε = 3.3076:

>>> cost = sequential(*[mechanism_cost("discrete-gaussian", scale=10.0, l1=1, l2=1.0)] * 50)
>>> round(cost.rho, 12), round(cost.epsilon_at(1e-6), 4)
(0.25, 3.5423)
>>> round(gaussian_epsilon(1e-6, mu=math.sqrt(50) / 10), 4)
3.3076
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from anonaudit.dp.mechanisms import ADDITIVE, Mechanism, NoiseDistribution, rr_keep_probability
from anonaudit.errors import BudgetError, ParameterError

__all__ = [
    "Accounting",
    "Budget",
    "Calibration",
    "PrivacyCost",
    "StabilityThreshold",
    "account",
    "calibrate",
    "delta_threshold",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "group_of_two",
    "loss_distribution",
    "mechanism_cost",
    "noise_scale",
    "parallel",
    "pld_epsilon",
    "renyi_curve",
    "sequential",
    "stability_threshold",
    "zcdp_for_epsilon",
    "zcdp_to_epsilon",
]

#: Orders (alpha) of the Rényi curve reported by :func:`account`.
RENYI_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0, 128.0, 256.0)
_LAPLACE = ("discrete-laplace", "laplace")


@dataclass(frozen=True)
class PrivacyCost:
    """What a release costs: pure ε, zCDP ρ and a failure probability δ.

    Attributes
    ----------
    epsilon : float
        Pure ε-DP part.
    rho : float
        ρ-zCDP part (Gaussian noise).
    delta : float
        Additive δ of the stability thresholds: the probability of releasing a
        combination that exists because of one unit.
    profile : tuple of (float, float), optional
        A tight ``(ε, δ)`` of this one release, from the exact privacy curve of its
        noise (Gaussian noise calibrated by :func:`noise_scale`). It does not compose:
        :func:`sequential` and :func:`parallel` keep it only for a single cost.
    """

    epsilon: float = 0.0
    rho: float = 0.0
    delta: float = 0.0
    profile: tuple[float, float] | None = None

    @property
    def pure(self) -> bool:
        """Whether this is pure ε-DP (no Gaussian part, no failure probability)."""
        return self.rho == 0 and self.delta == 0

    @property
    def zcdp(self) -> float:
        """The whole cost as ρ-zCDP: ``rho + epsilon² / 2`` (Bun & Steinke 2016, Prop. 1.4)."""
        return self.rho + self.epsilon**2 / 2

    def epsilon_at(self, delta: float) -> float:
        """ε such that this cost is (ε, δ)-DP.

        Pure costs give their ε for every δ; otherwise the zCDP part is converted at
        ``delta - self.delta`` (Canonne, Kamath & Steinke 2020, Corollary 13), and
        ``inf`` when ``delta`` does not exceed the failure probability.
        """
        if self.rho == 0:
            return self.epsilon if delta >= self.delta else math.inf
        tight = self.profile[0] if self.profile and delta >= self.profile[1] else math.inf
        if delta <= self.delta:
            return tight
        return min(
            tight,
            zcdp_to_epsilon(self.zcdp, delta - self.delta),
            renyi_to_epsilon(self, delta - self.delta),
        )


def sequential(*costs: PrivacyCost) -> PrivacyCost:
    """Cost of releasing every one of ``costs`` about the same data: the parts add up."""
    if len(costs) == 1:
        return costs[0]
    return PrivacyCost(
        epsilon=sum(c.epsilon for c in costs),
        rho=sum(c.rho for c in costs),
        delta=sum(c.delta for c in costs),
    )


def group_of_two(cost: PrivacyCost) -> PrivacyCost:
    """``cost`` for two neighbouring steps: what an add-remove guarantee gives for a
    change of one person's records (``replace``, one removal and one addition).

    Group privacy: an (ε, δ)-DP mechanism is (2ε, (1 + e^ε) δ)-DP for datasets two
    steps apart (Dwork & Roth 2014, "The algorithmic foundations of differential
    privacy", Theorem 2.2 and its (ε, δ) form), and ρ-zCDP is 4ρ-zCDP (Bun & Steinke
    2016, Proposition 1.9, k² ρ for a group of k).

    >>> group_of_two(PrivacyCost(epsilon=1.0))
    PrivacyCost(epsilon=2.0, rho=0.0, delta=0.0, profile=None)
    """
    return PrivacyCost(
        epsilon=2 * cost.epsilon,
        rho=4 * cost.rho,
        delta=(1 + math.exp(cost.epsilon)) * cost.delta if cost.delta else 0.0,
    )


def parallel(*costs: PrivacyCost) -> PrivacyCost:
    """Cost of releases about disjoint parts of the data: the largest of each part.

    One privacy unit lies in one part, so only that part's release depends on it
    (McSherry 2009, Theorem 4).
    """
    if len(costs) == 1:
        return costs[0]
    return PrivacyCost(
        epsilon=max((c.epsilon for c in costs), default=0.0),
        rho=max((c.rho for c in costs), default=0.0),
        delta=max((c.delta for c in costs), default=0.0),
    )


def mechanism_cost(mechanism: Mechanism, *, scale: float, l1: float, l2: float) -> PrivacyCost:
    """Cost of one additive release with noise ``scale`` and sensitivities ``l1``, ``l2``.

    Laplace noise (both kinds): ``ε = l1 / b`` (Dwork et al. 2006, Proposition 1;
    Ghosh et al. 2009 for the discrete form). Gaussian noise (both kinds):
    ``ρ = l2² / (2σ²)`` (Bun & Steinke 2016, Proposition 1.6; Canonne, Kamath & Steinke
    2020, Theorem 4 for the discrete Gaussian).

    >>> mechanism_cost("discrete-laplace", scale=2.0, l1=1, l2=1.0)
    PrivacyCost(epsilon=0.5, rho=0.0, delta=0.0, profile=None)
    """
    if mechanism not in ADDITIVE:
        raise ParameterError(f"no additive cost for mechanism {mechanism!r}")
    if mechanism in _LAPLACE:
        return PrivacyCost(epsilon=l1 / scale)
    return PrivacyCost(rho=l2**2 / (2 * scale**2))


def delta_threshold(
    mechanism: Mechanism,
    *,
    scale: float,
    threshold: int,
    l0: int,
    linf: int,
    keep_below: float = 0.0,
) -> float:
    """The δ of releasing only the observed cells whose noisy count reaches ``threshold``
    (and, with probability ``keep_below``, those whose noisy count is ``threshold - 1``).

    ``δ = l0 · P[l∞ + Z kept] = l0 · ((1 - q) P[Z >= τ - l∞] + q P[Z >= τ - 1 - l∞])``
    with ``q = keep_below``, for the integer noise ``Z`` actually sampled
    (:meth:`~anonaudit.dp.mechanisms.NoiseDistribution.tail`). Derivation: of two
    neighbours, the larger has at most ``l0`` cells the other lacks, each of count at
    most ``l∞``; the outputs differ beyond the ε (or ρ) of the shared cells only when one
    of those cells is released, which a union bound puts at ``l0`` times the chance that
    a cell of count ``l∞`` is kept (Korolova, Kenthapadi, Mishra & Ntoulas 2009, WWW;
    Wilson et al. 2020, PoPETs, "Differentially private SQL with bounded user
    contribution", Section 4; Rogers 2023). That chance,
    ``(1 - q) P[c + Z >= τ] + q P[c + Z >= τ - 1]``, grows with the count ``c``, so
    ``l∞`` is the worst. The event is ``noisy >= τ``, the cell kept, and ``>=`` counts:
    OpenDP 0.16's map for ``make_laplace_threshold`` counts only ``> τ``
    (opendp/opendp#2922) and so understates δ; this function is exact for one record
    per unit. With ``l0 = 1`` it is the chance that a cell of count ``linf`` is kept.

    >>> round(delta_threshold("discrete-laplace", scale=1.0, threshold=6, l0=1, linf=1), 5)
    0.00493
    >>> round(delta_threshold("discrete-laplace", scale=1.0, threshold=6, l0=1, linf=1,
    ...                       keep_below=1.0), 5)  # threshold 5
    0.01339
    """
    noise = NoiseDistribution(mechanism, scale)
    at, below = noise.tail(threshold - linf), noise.tail(threshold - 1 - linf)
    return float(min(1.0, l0 * ((1 - keep_below) * at + keep_below * below)))


@dataclass(frozen=True)
class StabilityThreshold:
    """Which observed cells a release keeps: the randomized stability threshold.

    A cell is kept when its noisy count reaches ``threshold``, and with probability
    ``keep_below`` when its noisy count is ``threshold - 1`` (:func:`stability_threshold`).

    Attributes
    ----------
    threshold : int
        τ, the smallest whole threshold whose :func:`delta_threshold` fits.
    keep_below : float
        q, in [0, 1]: the chance that a cell whose noisy count is ``τ - 1`` is kept.
    delta : float
        The exact :func:`delta_threshold` of the rule: at most the δ allowed, and equal
        to it up to rounding.
    """

    threshold: int
    keep_below: float
    delta: float


def stability_threshold(
    mechanism: Mechanism, *, scale: float, l0: int, linf: int, delta: float
) -> StabilityThreshold:
    """The keep rule of observed cells that spends exactly ``delta``: the smallest whole
    threshold τ whose :func:`delta_threshold` is at most ``delta``, and the chance q of
    keeping a cell at ``τ - 1`` that brings the δ up to ``delta``.

    Why this rule. The noisy count of a cell present in both neighbours is released or
    not by post-processing it, which costs nothing beyond its ε (or ρ); only cells one
    unit alone makes cost δ, the chance that they are kept. So the best rule keeps a
    cell with a probability ``f(y)`` of its noisy count ``y`` that maximizes the chance
    of keeping cells of every count ``n > l∞`` subject to
    ``l0 · Σ_y f(y) P[l∞ + Z = y] <= delta``. The integer noises sampled (discrete
    Laplace and Gaussian) are log-concave, so ``P[n + Z = y] / P[l∞ + Z = y]`` does not
    decrease in ``y``, and by the Neyman-Pearson lemma (Neyman & Pearson 1933, "On the
    problem of the most efficient tests of statistical hypotheses", Phil. Trans. R. Soc.
    A 231; for all ``n > l∞`` at once, Karlin & Rubin 1956, "The theory of decision
    procedures for distributions with monotone likelihood ratio", Ann. Math. Statist.
    27) the best ``f`` is 1 from a cut up, 0 below
    it and a probability at the cut, with the constraint met exactly: here ``f = 1`` for
    ``y >= τ`` and ``q`` at ``y = τ - 1``. A whole threshold alone (Wilson et al. 2020)
    spends a share of ``delta`` between ``P[Z >= τ - l∞] / P[Z >= τ - 1 - l∞]``
    (``e^{-ε}`` for Laplace noise and one record per unit) and 1: 55-85% at ε 0.5 to 2
    and δ 1e-6 or 1e-9 with Laplace noise. The optimal partition selection
    of Desfontaines, Voss, Gipson & Mandayam (2022, "Differentially private partition
    selection", PoPETs, Theorem 1) keeps more cells for ``delta`` by selecting on the
    true count, but a release that publishes the kept cells' counts must then noise
    them separately, splitting ε; ``benchmarks/bench_partition.py`` measured it losing
    (docs/dp.md, "Partition selection").

    q solves ``delta_threshold(..., keep_below=q) = delta``, and is lowered if rounding
    put the δ computed above ``delta``: the stated δ is an upper bound.

    >>> t = stability_threshold("discrete-laplace", scale=1.0, l0=1, linf=1, delta=0.01)
    >>> t.threshold, round(t.keep_below, 4), round(t.delta, 12)
    (6, 0.5995, 0.01)
    """
    if not 0 < delta < 1:
        raise ParameterError(f"a stability threshold needs 0 < delta < 1 (got {delta!r})")

    def spent(threshold: int, keep_below: float = 0.0) -> float:
        return delta_threshold(
            mechanism, scale=scale, threshold=threshold, l0=l0, linf=linf, keep_below=keep_below
        )

    low, high = linf + 1, linf + 2
    while spent(high) > delta:
        low, high = high, linf + 2 * (high - linf)
    while low < high:
        mid = (low + high) // 2
        if spent(mid) <= delta:
            high = mid
        else:
            low = mid + 1
    noise = NoiseDistribution(mechanism, scale)
    at = l0 * noise.tail(low - linf)
    step = l0 * (noise.tail(low - 1 - linf) - noise.tail(low - linf))  # l0 P[Z = τ-1-l∞]
    keep_below = min(1.0, max(0.0, (delta - at) / step)) if step > 0 else 0.0
    while (excess := spent(low, keep_below) - delta) > 0:  # rounding: 0 fits, by the search
        keep_below = max(0.0, keep_below - 2 * excess / step)
    return StabilityThreshold(low, keep_below, spent(low, keep_below))


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """ε such that ρ-zCDP implies (ε, δ)-DP (Canonne, Kamath & Steinke 2020, Cor. 13).

    ``ε = inf over α > 1 of αρ + (ln(1/δ) + (α - 1) ln(1 - 1/α) - ln α) / (α - 1)``.

    >>> round(zcdp_to_epsilon(0.25, 1e-6), 4)
    3.5423
    """
    if rho < 0 or not 0 < delta < 1:
        raise ParameterError(f"need rho >= 0 and 0 < delta < 1 (got {rho!r}, {delta!r})")
    if rho == 0:
        return 0.0
    log_inv = math.log(1 / delta)

    def bound(alpha: float) -> float:
        return float(
            alpha * rho
            + (log_inv + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)) / (alpha - 1)
        )

    best = 1 + math.sqrt(log_inv / rho)
    result = optimize.minimize_scalar(
        bound, bounds=(1 + 1e-9, 10 * best + 10), method="bounded", options={"xatol": 1e-10}
    )
    simple = rho + 2 * math.sqrt(rho * log_inv)
    return float(max(0.0, min(result.fun, simple)))


def zcdp_for_epsilon(epsilon: float, delta: float) -> float:
    """Largest ρ whose (ε, δ) conversion (:func:`zcdp_to_epsilon`) is at most ``epsilon``.

    >>> round(zcdp_for_epsilon(3.5423, 1e-6), 3)
    0.25
    """
    if not epsilon > 0 or not 0 < delta < 1:
        raise ParameterError(
            f"calibrating Gaussian noise needs epsilon > 0 and 0 < delta < 1 "
            f"(got {epsilon!r}, {delta!r})"
        )
    high = epsilon
    while zcdp_to_epsilon(high, delta) < epsilon:
        high *= 2
    return float(
        optimize.brentq(lambda rho: zcdp_to_epsilon(rho, delta) - epsilon, 0, high, xtol=1e-14)
    )


def gaussian_delta(epsilon: float, *, mu: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with ``mu = sensitivity / σ``.

    ``δ = Φ(μ/2 - ε/μ) - e^ε Φ(-μ/2 - ε/μ)`` (Balle & Wang 2018, Theorem 8); ``k``
    Gaussian releases compose into one with ``μ √k``.
    """
    if mu <= 0:
        return 0.0
    a = special.log_ndtr(mu / 2 - epsilon / mu)
    b = epsilon + special.log_ndtr(-mu / 2 - epsilon / mu)
    return float(max(0.0, math.exp(a) * -math.expm1(b - a))) if a > b else 0.0


def gaussian_mu(epsilon: float, delta: float) -> float:
    """Largest ``μ = sensitivity / σ`` whose exact Gaussian curve gives (ε, δ)-DP.

    The analytic Gaussian mechanism of Balle & Wang 2018 (Algorithm 1): solve
    :func:`gaussian_delta` ``(ε; μ) = δ`` for μ, which δ increases with.

    >>> round(gaussian_mu(1.0, 1e-5), 4)
    0.2681
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ParameterError(f"need epsilon > 0 and 0 < delta < 1 (got {epsilon!r}, {delta!r})")
    high = 1.0
    while gaussian_delta(epsilon, mu=high) < delta:
        high *= 2
    return float(
        optimize.brentq(lambda mu: gaussian_delta(epsilon, mu=mu) - delta, 0, high, xtol=1e-14)
    )


def gaussian_epsilon(delta: float, *, mu: float) -> float:
    """Smallest ε with :func:`gaussian_delta` at most ``delta``.

    >>> round(gaussian_epsilon(1e-6, mu=math.sqrt(50) / 10), 4)
    3.3076
    """
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie strictly between 0 and 1 (got {delta!r})")
    if gaussian_delta(0.0, mu=mu) <= delta:
        return 0.0
    high = 1.0
    while gaussian_delta(high, mu=mu) > delta:
        high *= 2
    return float(optimize.brentq(lambda e: gaussian_delta(e, mu=mu) - delta, 0, high, xtol=1e-12))


def renyi_curve(cost: PrivacyCost, orders: Sequence[float] = RENYI_ORDERS) -> NDArray[Any]:
    """``ε(α)`` of the Rényi DP the cost implies, for each order α (Mironov 2017).

    ρ-zCDP gives ``αρ``; pure ε gives ``min(ε, αε²/2)``; Rényi costs add.
    """
    alpha = np.asarray(orders, dtype=float)
    pure = np.minimum(cost.epsilon, alpha * cost.epsilon**2 / 2)
    return np.asarray(alpha * cost.rho + pure)


def renyi_to_epsilon(cost: PrivacyCost, delta: float) -> float:
    """Best (ε, δ) over the orders of :func:`renyi_curve` (Mironov 2017, Proposition 3)."""
    alpha = np.asarray(RENYI_ORDERS)
    return float((renyi_curve(cost) + math.log(1 / delta) / (alpha - 1)).min())


def loss_distribution(
    mechanism: Mechanism | None,
    *,
    scale: float,
    shifts: Sequence[int] = (1,),
    categories: int = 2,
) -> Any:
    """The privacy-loss distribution (dp-accounting's, pessimistic) of one release.

    Each shifted cell contributes one PLD (the cell's noise on neighbouring inputs
    ``x`` and ``x + shift``); the PLDs are composed. For randomized response ``scale``
    is the per-report ε and ``shifts`` holds one entry per report: dp-accounting's
    randomized-response event ignores a repetition count, so the reports' PLDs are
    composed here instead. ``mechanism=None`` is any ε-DP mechanism with ε = ``scale``
    (one per entry of ``shifts``): the pair that dominates every ε-DP mechanism
    (Kairouz, Oh & Viswanath 2015, "The composition theorem for differential privacy",
    ICML, Theorem 3.4; Murtagh & Vadhan 2016 for different ε).

    The distributions are discretized pessimistically: ε read from their composition
    is an upper bound (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022,
    "Connect the dots: tighter discrete approximations of privacy loss
    distributions", PoPETs).
    """
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    def one(shift: int) -> Any:
        if mechanism is None:
            return pld.from_privacy_parameters(common.DifferentialPrivacyParameters(scale, 0.0))
        if mechanism == "discrete-laplace":
            return pld.from_discrete_laplace_mechanism(1 / scale, sensitivity=int(shift))
        if mechanism == "laplace":
            return pld.from_laplace_mechanism(scale, sensitivity=shift)
        if mechanism == "discrete-gaussian":
            return pld.from_discrete_gaussian_mechanism(scale, sensitivity=int(shift))
        if mechanism == "gaussian":
            return pld.from_gaussian_mechanism(scale, sensitivity=shift)
        keep = rr_keep_probability(scale, categories)
        return pld.from_randomized_response((1 - keep) * categories / (categories - 1), categories)

    parts = [one(shift).self_compose(n) for shift, n in Counter(shifts).items()]
    total = parts[0]
    for part in parts[1:]:
        total = total.compose(part)
    return total


def pld_epsilon(
    mechanism: Mechanism,
    *,
    scale: float,
    shifts: Sequence[int],
    delta: float,
    categories: int = 2,
) -> float:
    """Tight ε at ``delta`` from privacy-loss distributions (:func:`loss_distribution`)."""
    total = loss_distribution(mechanism, scale=scale, shifts=shifts, categories=categories)
    return float(total.get_epsilon_for_delta(delta))


@dataclass(frozen=True)
class Accounting:
    """The total cost of a release, in every currency anonaudit reports.

    Attributes
    ----------
    cost : PrivacyCost
        The composed cost.
    delta : float
        The δ at which ``epsilon`` is stated (0 for pure ε-DP).
    epsilon : float
        Total ε at ``delta``: the pure ε, or the zCDP/RDP conversion.
    rho : float or None
        Total ρ-zCDP where Gaussian noise is used, else ``None``.
    epsilon_exact_gaussian : float or None
        The exact Gaussian profile (Balle & Wang 2018) at ``delta`` for Gaussian noise
        without failure probability: tight for ``gaussian``, an approximation for the
        discrete Gaussian (whose own curve differs slightly).
    epsilon_pld : float or None
        ε at ``delta`` from dp-accounting's privacy-loss distributions, when installed.
    renyi : tuple of (float, float)
        ``(α, ε(α))`` points of the Rényi DP curve.
    """

    cost: PrivacyCost
    delta: float
    epsilon: float
    rho: float | None
    epsilon_exact_gaussian: float | None
    epsilon_pld: float | None
    renyi: tuple[tuple[float, float], ...]


def account(
    cost: PrivacyCost,
    *,
    delta: float = 0.0,
    mechanism: Mechanism | None = None,
    scale: float | None = None,
    shifts: Sequence[int] = (),
    categories: int = 2,
) -> Accounting:
    """State ``cost`` at ``delta`` by every method that applies.

    ``mechanism``, ``scale`` and ``shifts`` (see :func:`pld_epsilon`) add the exact
    Gaussian and PLD figures for a single mechanism.
    """
    exact = None
    pld_value = None
    if mechanism is not None and scale is not None and delta > cost.delta:
        if mechanism in ("gaussian", "discrete-gaussian") and cost.delta == 0:
            mu = math.sqrt(sum(s * s for s in shifts)) / scale
            exact = gaussian_epsilon(delta, mu=mu)
        if cost.delta == 0:
            pld_value = pld_epsilon(
                mechanism, scale=scale, shifts=shifts, delta=delta, categories=categories
            )
    curve = renyi_curve(cost)
    return Accounting(
        cost=cost,
        delta=delta,
        epsilon=cost.epsilon_at(delta),
        rho=cost.zcdp if cost.rho > 0 else None,
        epsilon_exact_gaussian=exact,
        epsilon_pld=pld_value,
        renyi=tuple((a, float(e)) for a, e in zip(RENYI_ORDERS, curve, strict=True)),
    )


def noise_scale(
    mechanism: Mechanism, *, epsilon: float, delta: float = 0.0, l1: float, l2: float
) -> float:
    """The noise scale that makes one release (ε, δ)-DP.

    Laplace noise: ``b = l1 / ε``. Gaussian noise: ``σ = l2 / μ`` with μ from the exact
    Gaussian curve (:func:`gaussian_mu`; Balle & Wang 2018), tighter than a zCDP
    conversion. That curve is exact for continuous Gaussian noise; for the discrete
    Gaussian, :func:`anonaudit.dp.release.release` checks the scale on the discrete
    noise's own exact curve and widens it if needed.

    >>> noise_scale("discrete-laplace", epsilon=0.5, l1=1, l2=1.0)
    2.0
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ParameterError(f"epsilon must be a positive number (got {epsilon!r})")
    if mechanism in _LAPLACE:
        return l1 / epsilon
    if mechanism not in ADDITIVE:
        raise ParameterError(f"no noise scale for mechanism {mechanism!r}")
    if not 0 < delta < 1:
        raise ParameterError(
            f"{mechanism} noise is never pure epsilon-DP: give delta between 0 and 1 "
            f"(--delta with anonaudit dp, --dp-delta with anonaudit audit, e.g. 1e-6; "
            f"got {delta!r}), or choose discrete-laplace"
        )
    return l2 / gaussian_mu(epsilon, delta)


@dataclass(frozen=True)
class Calibration:
    """A noise scale, what it costs and how accurate it keeps the counts.

    Attributes
    ----------
    mechanism : str
        The mechanism.
    scale : float
        Its noise scale (b or σ).
    epsilon, delta : float
        The (ε, δ) it gives one release with the stated sensitivity.
    within : int
        Each count is off by at most this, with probability ``confidence``.
    confidence : float
        The probability ``within`` refers to.
    """

    mechanism: Mechanism
    scale: float
    epsilon: float
    delta: float
    within: int
    confidence: float


def calibrate(
    mechanism: Mechanism,
    *,
    l1: float = 1,
    l2: float = 1.0,
    epsilon: float | None = None,
    delta: float = 0.0,
    within: int | None = None,
    confidence: float = 0.95,
) -> Calibration:
    """Find the noise for a target (ε, δ), or for a target accuracy.

    Give exactly one of ``epsilon`` (the scale then follows from :func:`noise_scale`)
    and ``within`` ("counts within ±N with ``confidence`` probability": the largest
    scale that keeps ``P(|Z| <= N) >= confidence``, and the ε it costs).

    Examples
    --------
    >>> c = calibrate("discrete-laplace", epsilon=1.0)
    >>> c.scale, c.within
    (1.0, 3)
    >>> c = calibrate("discrete-laplace", within=3)
    >>> round(c.scale, 3), round(c.epsilon, 3)
    (1.202, 0.832)
    """
    if (epsilon is None) == (within is None):
        raise ParameterError("give exactly one of epsilon and within")
    if epsilon is not None:
        scale = noise_scale(mechanism, epsilon=epsilon, delta=delta, l1=l1, l2=l2)
    else:
        assert within is not None
        if within < 0:
            raise ParameterError(f"within must be >= 0 (got {within!r})")
        scale = _largest_scale(mechanism, within, confidence)
        epsilon = mechanism_cost(mechanism, scale=scale, l1=l1, l2=l2).epsilon_at(delta)
        if not math.isfinite(epsilon):
            raise ParameterError(f"{mechanism} noise needs delta between 0 and 1 (got {delta!r})")
    noise = NoiseDistribution(mechanism, scale)
    return Calibration(
        mechanism, scale, float(epsilon), delta, noise.within(confidence), confidence
    )


def _largest_scale(mechanism: Mechanism, within: int, confidence: float) -> float:
    def ok(scale: float) -> bool:
        return NoiseDistribution(mechanism, scale).probability_within(within) >= confidence

    low, high = 1e-3, 1.0
    if not ok(low):
        raise ParameterError(
            f"no {mechanism} noise keeps counts within {within} with probability {confidence}"
        )
    while ok(high):
        low, high = high, high * 2
    for _ in range(60):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if ok(mid) else (low, mid)
    return low


@dataclass(frozen=True)
class Budget:
    """A privacy budget and the costs already spent from it.

    Parameters
    ----------
    epsilon : float
        Total ε allowed.
    delta : float
        Total δ allowed (0: pure ε-DP only).
    spent : tuple of PrivacyCost
        Releases already made.

    Examples
    --------
    >>> budget = Budget(epsilon=1.0).spend(PrivacyCost(epsilon=0.6))
    >>> budget.spend(PrivacyCost(epsilon=0.6))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonaudit.errors.BudgetError: these releases would cost epsilon 1.2, more than ... remains)...
    """

    epsilon: float
    delta: float = 0.0
    spent: tuple[PrivacyCost, ...] = field(default=())

    def __post_init__(self) -> None:
        if not (self.epsilon >= 0 and 0 <= self.delta < 1):
            raise ParameterError(
                f"a budget needs epsilon >= 0 and 0 <= delta < 1 "
                f"(got {self.epsilon!r}, {self.delta!r})"
            )

    @property
    def total(self) -> PrivacyCost:
        """The spent costs, composed sequentially."""
        return sequential(*self.spent)

    def remaining(self) -> float:
        """ε still available at the budget's δ."""
        return max(0.0, self.epsilon - self.total.epsilon_at(self.delta))

    def spend(self, *costs: PrivacyCost) -> Budget:
        """The budget with ``costs`` spent too.

        Raises
        ------
        BudgetError
            The spent and new costs together exceed (ε, δ).
        """
        after = replace(self, spent=self.spent + costs)
        used = after.total.epsilon_at(self.delta)
        if used > self.epsilon * (1 + 1e-9):
            raise BudgetError(
                f"these releases would cost epsilon {used:.4g}"
                + (f" at delta {self.delta:g}" if self.delta else "")
                + f", more than the budget's {self.epsilon:g} ({self.remaining():.4g} remains); "
                "lower epsilon or release less"
            )
        return after
