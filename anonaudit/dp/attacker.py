"""Two attackers against each release, and the leakage measures that compare them.

The *uninformed* attacker knows a target's quasi-identifiers and that the target is in
the data: after the syntactic release their belief about the target's sensitive value S
is ``p(s | class)``. The *informed* attacker also knows every other record exactly: the
attacker differential privacy's guarantee is stated against (Dwork, McSherry, Nissim &
Smith 2006; Kasiviswanathan & Smith 2014, "On the 'semantics' of differential privacy: a
Bayesian formulation", J. Priv. Confidentiality 6(1), which bounds this attacker's
posterior by ``p e^ε / (1 + p (e^ε - 1))``).

* Against the exact class table the informed attacker subtracts the known records from
  the target's class and is left with the target's value: posterior 1 for every record
  (:func:`informed_syntactic` computes it with the same Bayes update as below, the
  release's likelihood being 1 for the true counts and 0 for any other).
* Against a DP release (:func:`informed_dp`) the attacker knows the other records'
  counts ``o = x - e_s`` in the target's class and sees the released counts ``y`` of
  that class. Hypothesis ``v`` for the target's values gives counts ``o + e_v``, and
  ``posterior(v) ∝ prior(v) · P[y | o + e_v]`` with the exact likelihood of the
  released, post-processed output. Only two cells differ between hypotheses, so with
  ``f(y | x)`` the likelihood of one cell and ``R_c = f(y_c | x_c + 1) / f(y_c | x_c)``
  the posterior on the true hypothesis ``s`` is
  ``prior(s) / (prior(s) + f(y_s | x_s - 1) / f(y_s | x_s) · Σ_{v≠s} prior(v) R_v)``,
  one vectorised pass over the cells. Randomized response is not cell by cell: its
  likelihood is that of the class's report counts under the k-ary channel
  (:func:`_log_rr_pmf`).

The attacker's prior is the table's distribution of the hypotheses (the table's ``p(s)``
for one sensitive attribute; with several, of the tuple of sensitive values, summed to
the posterior of the one attacked). Every record of a (class, value) cell shares one
posterior; summaries weigh cells by their records (:class:`PosteriorSummary`).

Leakage measures:

* :func:`equivalent_epsilon`: the ε whose posterior bound a posterior ``π`` from a prior
  ``p`` reaches, ``ln[π (1 - p) / (p (1 - π))]`` (the bound inverted; infinite at
  ``π = 1``), and :func:`equal_gain`, the noise of a DP release that allows no more.
* :func:`pml_over_priors`: pointwise maximal leakage (Saeidian, Cervia, Oechtering &
  Skoglund 2023, "Pointwise maximal leakage", IEEE Trans. Inf. Theory 69(12),
  Definition 1) of the syntactic release, the class table read as the channel
  ``P(class | s)``, maximised over a family of priors (the (ε, 𝒫)-PML guarantees of
  Saeidian, Cervia, Oechtering & Skoglund, "Rethinking disclosure prevention with
  pointwise maximal leakage", J. Priv. Confidentiality, arXiv:2303.07782).
* :func:`disclosure`: the disclosure theorem of that paper: an outcome whose leakage is
  at most ε can disclose only features ``U`` of S with min-entropy ``H∞(P_U) <= ε``; no
  non-constant feature has less than ``ε* = ln(1 / (1 - p_min))``, so leakage below ε*
  discloses nothing. An ε-DP release leaks at most ε about one person's value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import optimize, special

from anonaudit.classtable import ClassTable
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.mechanisms import NoiseDistribution, rr_keep_probability
from anonaudit.dp.release import Postprocess, Release, value_guarantee
from anonaudit.dp.sensitivity import histogram_sensitivity

__all__ = [
    "Disclosure",
    "EqualGain",
    "PosteriorSummary",
    "disclosure",
    "equal_gain",
    "equivalent_epsilon",
    "informed_dp",
    "informed_syntactic",
    "pml_over_priors",
    "uninformed_syntactic",
]

_TOLERANCE = 1e-9  # slack, in nats, when comparing a posterior with its ε-DP bound

LogLikelihood = Callable[[NDArray[Any], NDArray[Any]], NDArray[Any]]
#: ``P(R = k)`` or ``P(R <= k)`` of the rounded noise, per whole ``k``.
Density = Callable[[NDArray[Any]], NDArray[Any]]


@dataclass(frozen=True)
class PosteriorSummary:
    """One attacker's posterior on each record's true value, over the records.

    Attributes
    ----------
    records : int
        Records attacked.
    median, p90, p99, max : float
        Record-weighted percentiles and the largest posterior.
    share_above_half : float
        Share of records whose true value the attacker believes more likely than not.
    share_above_bound : float
        Share whose posterior exceeds the ε-DP bound at their value's prior (0 for any
        pure ε-DP release; with δ > 0 only on events of probability about δ).
    epsilon : float
        The ε of that bound.
    """

    records: int
    median: float
    p90: float
    p99: float
    max: float
    share_above_half: float
    share_above_bound: float
    epsilon: float


def _summarize(
    posterior: NDArray[Any], prior: NDArray[Any], weights: NDArray[Any], epsilon: float
) -> PosteriorSummary:
    """Record-weighted summary of per-cell posteriors (each cell's records share one)."""
    order = np.argsort(posterior, kind="stable")
    value, weight = posterior[order], weights[order].astype(float)
    total = weight.sum()
    cumulative = np.cumsum(weight)

    def quantile(q: float) -> float:
        return float(value[min(np.searchsorted(cumulative, q * total), len(value) - 1)])

    above = equivalent_epsilon(posterior, prior) > epsilon + _TOLERANCE  # above the bound
    return PosteriorSummary(
        records=int(total),
        median=quantile(0.5),
        p90=quantile(0.9),
        p99=quantile(0.99),
        max=float(value[-1]),
        share_above_half=float(weights[posterior > 0.5].sum() / total),
        share_above_bound=float(weights[above].sum() / total),
        epsilon=epsilon,
    )


@dataclass(frozen=True)
class _Cells:
    """The cells a Bayes update runs over: per cell its class, the attacked SA's value
    code, the prior of the hypothesis it stands for, and true and released counts.

    ``absent`` is the likelihood ratio ``R`` of a hypothesis that has no cell (a value
    not observed in the class, over observed combinations), whose prior mass is what
    ``code_prior`` leaves; 0 when every hypothesis has a cell.
    """

    group: NDArray[Any]
    code: NDArray[Any]
    prior: NDArray[Any]
    true: NDArray[Any]
    released: NDArray[Any]
    code_prior: NDArray[Any]
    absent: float


def _posterior(cells: _Cells, loglik: LogLikelihood) -> NDArray[Any]:
    """Informed posterior on the true value of each cell holding records (module docstring)."""
    x, y = cells.true, cells.released
    with np.errstate(divide="ignore", invalid="ignore"):
        base = loglik(y, x)
        ratio = np.exp(loglik(y, x + 1) - base)
        codes = len(cells.code_prior)
        groups = int(cells.group.max()) + 1
        key = cells.group * codes + cells.code
        mass: NDArray[Any] = np.bincount(key, weights=cells.prior * ratio, minlength=groups * codes)
        if cells.absent > 0:
            listed = np.bincount(key, weights=cells.prior, minlength=groups * codes)
            left = np.tile(cells.code_prior, groups) - listed
            mass = mass + cells.absent * np.maximum(left, 0.0)
        per_group = mass.reshape(groups, codes).sum(axis=1)
        target = x > 0
        down = np.exp(loglik(y[target], x[target] - 1) - base[target])
        own = cells.prior[target] * ratio[target]
        prior = cells.prior[target]
        same = np.maximum(mass[key[target]] - own, 0.0)
        every = np.maximum(per_group[cells.group[target]] - own, 0.0)
        return np.asarray((prior + down * same) / (prior + down * every))


def uninformed_syntactic(table: ClassTable, sensitive: str, *, epsilon: float) -> PosteriorSummary:
    """The attacker who knows only a target's class: ``p(s | class)`` on each true value.

    Parameters
    ----------
    table : ClassTable
        The syntactic release (the exact class table).
    sensitive : str
        The SA.
    epsilon : float
        The ε whose posterior bound :attr:`PosteriorSummary.share_above_bound` uses.
    """
    counts = table.sensitive_counts(sensitive)
    prior = counts.prior()
    return _summarize(counts.posterior(), prior[counts.codes], counts.counts, epsilon)


def informed_syntactic(table: ClassTable, sensitive: str, *, epsilon: float) -> PosteriorSummary:
    """The attacker who knows every other record, against the exact class table.

    The likelihood of the released table is 1 for the true counts and 0 otherwise, so
    subtracting the known records leaves the target's value: posterior 1 for every
    record, whatever k, l or t.

    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["a", "a"], "d": ["flu", "cold"], "count": [60, 60]}),
    ...     quasi_identifiers=["zip"], sensitive=["d"])
    >>> s = informed_syntactic(t, "d", epsilon=1.0)
    >>> s.median, s.share_above_half
    (1.0, 1.0)
    """
    counts = table.sensitive_counts(sensitive)
    prior = counts.prior()
    cells = _Cells(
        group=counts.class_ids,
        code=counts.codes,
        prior=prior[counts.codes],
        true=counts.counts,
        released=counts.counts,
        code_prior=prior,
        absent=0.0,  # a value not in the class: released count 0, never 0 with the target
    )

    def exact(y: NDArray[Any], x: NDArray[Any]) -> NDArray[Any]:
        return np.where(y == x, 0.0, -np.inf)

    return _summarize(_posterior(cells, exact), prior[counts.codes], counts.counts, epsilon)


def informed_dp(
    release: Release,
    sensitive: str,
    *,
    domain: PublicDomain | None,
    postprocess: Postprocess = "clamp",
) -> PosteriorSummary:
    """The attacker who knows every other record, simulated on the actual DP release.

    Parameters
    ----------
    release : Release
        The DP release; its bound is at :attr:`~anonaudit.dp.release.Release.value_epsilon`.
    sensitive : str
        The attacked SA.
    domain : PublicDomain or None
        The declared values (a public-domain release: every declared value is a
        candidate; the table's prior gives undeclared-in-data values weight 0).
    postprocess : {"clamp", "unbiased"}
        How the release post-processed its counts: with ``clamp`` a released 0 means
        a noisy count of at most 0 (the noise's CDF).

    Returns
    -------
    PosteriorSummary
        Over the released records: a record outside the public domain is not released.

    Notes
    -----
    Likelihood of one released cell ``y`` given a true count ``x``: ``P(x + Z = y)``
    for integer noise (:meth:`~anonaudit.dp.mechanisms.NoiseDistribution.support`), or
    ``P(round(x + Z) = y)`` from the CDF for continuous noise; a clamped 0 is
    ``P(x + Z <= 0)``. Over observed combinations a cell with no record is never
    released, and a cell with records is released as its noisy count when that reaches
    the threshold τ, or is ``τ - 1`` and kept with probability q
    (``q P(x + Z = τ - 1)``), and is absent otherwise
    (``P(x + Z < τ - 1) + (1 - q) P(x + Z = τ - 1)``).
    """
    if release.mechanism == "randomized-response":
        return _informed_rr(release)
    cells = (
        _observed_cells(release, sensitive)
        if release.domain == "observed"
        else _public_cells(release, sensitive, domain)
    )
    target = cells.true > 0
    return _summarize(
        _posterior(cells, _loglik(release, postprocess)),
        cells.code_prior[cells.code[target]],
        cells.true[target],
        release.value_epsilon,
    )


def released_prior(
    release: Release, sensitive: str, *, domain: PublicDomain | None
) -> NDArray[Any]:
    """The distribution of ``sensitive`` over the records ``release`` counts: the prior of
    :func:`informed_dp`'s attacker, at whose largest value the ε-DP posterior bound is
    stated. A public-domain release leaves out the records outside its domain; the
    others count every record of the table.

    Parameters
    ----------
    release : Release
        The DP release.
    sensitive : str
        The SA.
    domain : PublicDomain or None
        The public domain the release covered, if any.

    Returns
    -------
    numpy.ndarray
        One share per value of the SA (its sorted values; the domain's, for a
        public-domain release).
    """
    if release.mechanism == "randomized-response" or release.domain == "observed":
        return release.original.sensitive_counts(sensitive).prior()
    return _public_cells(release, sensitive, domain).code_prior


def _public_cells(release: Release, sensitive: str, domain: PublicDomain | None) -> _Cells:
    """Every cell of the domain in the classes that hold records; hypotheses: SA tuples."""
    if domain is None:
        raise ValueError("a public-domain release needs its domain to be attacked")
    table = release.original
    sizes = [len(domain.values[c]) for c in table.sensitive]
    per_class = math.prod(sizes)
    true = release.true_counts.reshape(-1, per_class)
    released = release.released_counts.reshape(-1, per_class)
    held = np.flatnonzero(true.sum(axis=1) > 0)
    true, released = true[held], released[held]
    stride = math.prod(sizes[table.sensitive.index(sensitive) + 1 :])
    slot_code = np.arange(per_class) // stride % len(domain.values[sensitive])
    slot_prior = true.sum(axis=0) / true.sum()
    code_prior = np.bincount(slot_code, weights=slot_prior, minlength=len(domain.values[sensitive]))
    return _Cells(
        group=np.repeat(np.arange(len(held)), per_class),
        code=np.tile(slot_code, len(held)),
        prior=np.tile(slot_prior, len(held)),
        true=true.ravel(),
        released=released.ravel(),
        code_prior=code_prior,
        absent=0.0,
    )


def _observed_cells(release: Release, sensitive: str) -> _Cells:
    """The observed combinations; a hypothesis with no cell stays unreleased (``absent``)."""
    table = release.original
    frame = table.keys.select(list(table.sensitive)).to_pandas()
    tuple_id = frame.groupby(list(table.sensitive), dropna=False, sort=False).ngroup().to_numpy()
    code, _ = pd.factorize(frame[sensitive], use_na_sentinel=False)
    true = release.true_counts
    total = true.sum()
    tuple_prior = np.bincount(tuple_id, weights=true) / total
    noise = release.noise
    assert noise is not None  # observed: additive
    at, below = _rounded_noise(noise)
    return _Cells(
        group=table.classes.index,
        code=code,
        prior=tuple_prior[tuple_id],
        true=true,
        released=release.released_counts,
        code_prior=np.bincount(code, weights=true) / total,
        # a count of 1 unreleased, over f(0 | 0) = 1
        absent=float(_dropped(release, at, below, np.array(1))),
    )


def _dropped(release: Release, at: Density, below: Density, x: NDArray[Any]) -> NDArray[Any]:
    """``P(a cell of count x is not kept)`` by the release's threshold τ and its q."""
    threshold, keep_below = release.threshold, release.keep_below
    assert threshold is not None and keep_below is not None  # observed: thresholded
    return np.asarray(below(threshold - 2 - x) + (1 - keep_below) * at(threshold - 1 - x))


def _loglik(release: Release, postprocess: Postprocess) -> LogLikelihood:
    """``log P(released = y | true = x)`` per cell, vectorised (see :func:`informed_dp`)."""
    noise = release.noise
    assert noise is not None  # additive mechanisms only
    at, below = _rounded_noise(noise)
    threshold, keep_below = release.threshold, release.keep_below

    def loglik(y: NDArray[Any], x: NDArray[Any]) -> NDArray[Any]:
        if threshold is not None and keep_below is not None:  # observed: thresholded
            kept = at(y - x) * np.where(y == threshold - 1, keep_below, 1.0)
            p = np.where(
                x <= 0,  # a cell with no record is never released
                (y == 0).astype(float),
                np.where(y == 0, _dropped(release, at, below, x), kept),
            )
        elif postprocess == "clamp":
            p = np.where(y == 0, below(-x), at(y - x))
        else:
            p = at(y - x)
        return np.asarray(np.log(p))

    return loglik


def _rounded_noise(noise: NoiseDistribution) -> tuple[Density, Density]:
    """``P(R = k)`` and ``P(R <= k)`` for the noise rounded to a whole number ``R``."""
    if noise.discrete:
        z, p = noise.support()
        cdf = np.cumsum(p)
        last = len(z) - 1

        def at(k: NDArray[Any]) -> NDArray[Any]:
            i = np.asarray(k) - z[0]
            return np.where((i >= 0) & (i <= last), p[np.clip(i, 0, last)], 0.0)

        def below(k: NDArray[Any]) -> NDArray[Any]:
            i = np.asarray(k) - z[0]
            return np.where(i < 0, 0.0, cdf[np.clip(i, 0, last)])

        return at, below
    scale = noise.scale
    if noise.mechanism == "laplace":

        def smooth_cdf(x: NDArray[Any]) -> NDArray[Any]:  # P(Z <= x) for Z ~ Laplace(0, b)
            half = 0.5 * np.exp(-np.abs(x) / scale)
            return np.asarray(np.where(x < 0, half, 1 - half))

    else:

        def smooth_cdf(x: NDArray[Any]) -> NDArray[Any]:
            return np.asarray(special.ndtr(x / scale))

    def interval(k: NDArray[Any]) -> NDArray[Any]:  # P(k - 1/2 <= Z < k + 1/2), tails kept exact
        k = np.asarray(k, dtype=float)
        upper = smooth_cdf(0.5 - k) - smooth_cdf(-0.5 - k)  # symmetric: P(Z > x) = cdf(-x)
        lower = smooth_cdf(k + 0.5) - smooth_cdf(k - 0.5)
        return np.asarray(np.where(k > 0, upper, lower))

    def cumulative(k: NDArray[Any]) -> NDArray[Any]:
        return smooth_cdf(np.asarray(k, dtype=float) + 0.5)

    return interval, cumulative


def _informed_rr(release: Release) -> PosteriorSummary:
    """Randomized response: ``posterior(v) ∝ prior(v) Σ_w M[v, w] P_o(r - e_w)``.

    With ``M = q J + λ I`` (``q`` the chance of reporting one given other value,
    ``λ = keep - q``) that is ``prior(v) (q H + λ h_v)`` with ``h_w = P_o(r - e_w)`` the
    chance that the other records report ``r`` minus one ``w`` and ``H = Σ_w h_w``.
    One loop per (class, value) cell, not per record.
    """
    classes = int(release.class_ids.max()) + 1
    true = release.true_counts.reshape(classes, -1)
    reports = release.released_counts.reshape(classes, -1)
    k = true.shape[1]
    prior = true.sum(axis=0) / true.sum()
    keep = 1 - release.noise_scale
    other = (1 - keep) / (k - 1)
    lam = keep - other
    groups, values = np.nonzero(true)
    posterior = np.empty(len(groups))
    unit = np.eye(k, dtype=np.int64)
    for i, (g, s) in enumerate(zip(groups.tolist(), values.tolist(), strict=True)):
        others = true[g] - unit[s]
        log_h = np.array([_log_rr_pmf(others, reports[g] - unit[w], lam, k) for w in range(k)])
        h = np.exp(log_h - log_h.max())
        weight = prior * (other * h.sum() + lam * h)
        posterior[i] = weight[s] / weight.sum()
    return _summarize(posterior, prior[values], true[groups, values], release.value_epsilon)


def _log_rr_pmf(others: NDArray[Any], reports: NDArray[Any], lam: float, k: int) -> float:
    """``log P(the records with true counts others report the counts reports)`` under
    k-ary randomized response.

    Each record reports its own value with probability ``λ`` and otherwise a value drawn
    uniformly (which may be its own). Summing over ``T_u``, the truthful reports of value
    ``u``, and ``m = N - Σ T_u`` uniform ones:
    ``Σ_τ λ^τ (1 - λ)^{N-τ} (N-τ)! k^{-(N-τ)} [z^τ] Π_u Σ_t C(o_u, t) z^t / (r_u - t)!``,
    a product of polynomials with positive coefficients, summed in log space.
    """
    n = int(others.sum())
    if reports.min() < 0 or int(reports.sum()) != n:
        return -math.inf
    log_poly = np.zeros(1)
    for o_u, r_u in zip(others.tolist(), reports.tolist(), strict=True):
        t = np.arange(min(o_u, r_u) + 1)
        coefficients = (
            special.gammaln(o_u + 1)
            - special.gammaln(t + 1)
            - special.gammaln(o_u - t + 1)
            - special.gammaln(r_u - t + 1)
        )
        top_a, top_b = log_poly.max(), coefficients.max()
        product = np.convolve(np.exp(log_poly - top_a), np.exp(coefficients - top_b))
        with np.errstate(divide="ignore"):
            log_poly = np.log(product) + top_a + top_b
    truthful = np.arange(len(log_poly))
    uniform = n - truthful
    terms = (
        log_poly
        + truthful * math.log(lam)
        + uniform * math.log1p(-lam)
        + special.gammaln(uniform + 1)
        - uniform * math.log(k)
    )
    return float(special.logsumexp(terms))


def equivalent_epsilon(
    posterior: NDArray[Any] | float, prior: NDArray[Any] | float
) -> NDArray[Any]:
    """The ε whose posterior bound from ``prior`` is ``posterior``: ``ln[π(1-p) / (p(1-π))]``.

    The inverse of :func:`~anonaudit.dp.contrast.posterior_bound`; infinite when the
    posterior is 1 (no finite ε allows certainty from a prior below 1).

    >>> round(float(equivalent_epsilon(0.75, 0.5)), 4)  # coin-flip randomized response
    1.0986
    """
    pi = np.asarray(posterior, dtype=float)
    p = np.asarray(prior, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.log(pi) + np.log1p(-p) - np.log(p) - np.log1p(-pi)
    return np.asarray(np.where(p >= 1, 0.0, odds))  # a certain prior: nothing to learn


@dataclass(frozen=True)
class EqualGain:
    """A DP release with the same mechanism whose attacker gain equals the syntactic one.

    Attributes
    ----------
    epsilon : float
        The ε (of learning a present person's value) whose posterior bound equals the
        syntactic release's largest attacker gain.
    noise_scale : float
        ``b``, ``σ``, or for randomized response the chance of reporting another value.
    within : int or None
        Each count within ±this of the truth with probability ``confidence`` (additive
        noise only: :meth:`~anonaudit.dp.mechanisms.NoiseDistribution.within`).
    confidence : float
        0.95.
    """

    epsilon: float
    noise_scale: float
    within: int | None
    confidence: float


def equal_gain(release: Release, epsilon: float, *, confidence: float = 0.95) -> EqualGain | None:
    """The noise of ``release``'s mechanism at the value-ε ``epsilon``.

    ``None`` when ``epsilon`` is infinite (no DP release allows certainty) or 0 (the
    syntactic release teaches nothing; no finite noise matches it).

    Laplace noise: ``b = ||Δx||_1 / ε`` with the replace L1 bound ``2m``; Gaussian noise:
    the σ whose replace pair has ε at the release's δ
    (:attr:`~anonaudit.dp.release.Release.value_epsilon`'s rule), by bisection;
    randomized response: the report ε is ``ε / m``.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        return None
    m = release.sensitivity.max_contributions
    mechanism = release.mechanism
    if mechanism == "randomized-response":
        k = len(release.true_counts) // (int(release.class_ids.max()) + 1)
        return EqualGain(epsilon, 1 - rr_keep_probability(epsilon / m, k), None, confidence)
    if mechanism in ("discrete-laplace", "laplace"):
        scale = histogram_sensitivity("replace", max_contributions=m).l1 / epsilon
    else:
        pair = histogram_sensitivity("replace", max_contributions=m)

        def gap(log_scale: float) -> float:
            value, _, _ = value_guarantee(
                mechanism, math.exp(log_scale), m, release.delta, threshold=None
            )
            return value - epsilon

        # bracket around the classical calibration: scale = l2 √(2 ln(1.25/δ)) / ε
        guess = math.log(pair.l2 * math.sqrt(2 * math.log(1.25 / release.delta)) / epsilon)
        low, high = guess - 1, guess + 1
        while gap(low) < 0:
            low -= 1
        while gap(high) > 0:
            high += 1
        scale = math.exp(optimize.brentq(gap, low, high, xtol=1e-10))
    return EqualGain(
        epsilon, scale, NoiseDistribution(mechanism, scale).within(confidence), confidence
    )


def pml_over_priors(table: ClassTable, sensitive: str, *, factor: float) -> NDArray[Any]:
    """Per class, its pointwise maximal leakage maximised over a family of priors.

    The class table is the channel ``P(class | s) = n(class, s) / n(s)``; under prior
    ``Q`` the class leaks ``ℓ_Q = ln max_s P(class | s) / Σ_s Q(s) P(class | s)``
    (Saeidian et al. 2023, Definition 1 and Theorem 1). The family is every prior
    ``Q(s) ∝ w_s p(s)`` with weights ``w_s`` in ``[1, factor]``: within a factor of
    the table's ``p``, renormalised. The smallest ``Σ Q P(class | ·)`` puts weight
    ``factor`` on the values least likely to give the class (a linear-fractional
    minimum, reached at a vertex: a prefix in ascending ``P(class | s)``), so the
    maximum is found exactly by scanning those prefixes. ``factor = 1`` gives the leakage
    at the table's prior, ``ln max_s p(s | class) / p(s)``.

    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["a", "a", "b"], "d": ["flu", "cold", "flu"], "count": [1, 1, 2]}),
    ...     quasi_identifiers=["zip"], sensitive=["d"])
    >>> [round(float(v), 4) for v in pml_over_priors(t, "d", factor=1.0)]
    [0.6931, 0.2877]
    """
    if not factor >= 1:
        raise ValueError(f"the prior factor must be at least 1 (got {factor!r})")
    counts = table.sensitive_counts(sensitive)
    prior = counts.prior()
    channel = counts.counts / counts.totals[counts.codes]  # P(class | s)
    order = np.lexsort((channel, counts.class_ids))
    group, like, p = counts.class_ids[order], channel[order], prior[counts.codes[order]]
    start = np.r_[True, group[1:] != group[:-1]]
    first = np.flatnonzero(start)

    def within_class(values: NDArray[Any]) -> NDArray[Any]:  # inclusive prefix sums per class
        total = np.cumsum(values)
        before = np.repeat(total[first] - values[first], np.diff(np.r_[first, len(values)]))
        return np.asarray(total - before)

    weighted, mass = within_class(p * like), within_class(p)
    n_classes = counts.n_classes
    gives = np.bincount(group, weights=p * like, minlength=n_classes)
    absent = 1 - np.bincount(group, weights=p, minlength=n_classes)  # values not in the class
    # prefix k = 0 (only the absent values weighted), then each prefix of the sorted entries
    empty = gives / (factor * absent + 1 - absent)
    a, b = weighted, absent[group] + mass
    ratio = (factor * a + gives[group] - a) / (factor * b + 1 - b)
    smallest = np.minimum(empty, _class_min(ratio, group, n_classes))
    return np.asarray(np.log(counts.per_class_max(channel) / smallest))


def _class_min(values: NDArray[Any], group: NDArray[Any], n_classes: int) -> NDArray[Any]:
    result = np.full(n_classes, np.inf)
    np.minimum.at(result, group, values)
    return result


@dataclass(frozen=True)
class Disclosure:
    """The disclosure theorem applied to one measured leakage.

    Attributes
    ----------
    leakage : float
        The release's largest leakage about S, in nats.
    epsilon_star : float
        ``ln(1 / (1 - p_min))``: a leakage below it discloses no feature of S.
    discloses_nothing : bool
        ``leakage < epsilon_star``.
    features : tuple of (str or None)
        The values ``v`` whose feature "is S equal to v?" has min-entropy
        ``-ln max(p_v, 1 - p_v)`` at most the leakage: it may be disclosed.
    """

    leakage: float
    epsilon_star: float
    discloses_nothing: bool
    features: tuple[str | None, ...]


def disclosure(values: tuple[str | None, ...], prior: NDArray[Any], leakage: float) -> Disclosure:
    """What a release leaking ``leakage`` nats may disclose about S with prior ``prior``.

    >>> d = disclosure(("flu", "cold"), np.array([0.9, 0.1]), 0.1)
    >>> round(d.epsilon_star, 4), d.discloses_nothing, d.features
    (0.1054, True, ())
    """
    present = prior > 0
    with np.errstate(divide="ignore"):  # one value known to all: nothing to disclose, ε* = ∞
        epsilon_star = float(-np.log1p(-prior[present].min()))
    entropy = -np.log(np.maximum(prior, 1 - prior))
    features = tuple(
        v for v, h, ok in zip(values, entropy, present, strict=True) if ok and h <= leakage
    )
    return Disclosure(leakage, epsilon_star, leakage < epsilon_star, features)
