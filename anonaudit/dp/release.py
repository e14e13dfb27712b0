"""Differentially private release of the class table.

The released statistic is the class table itself: one count per cell (QI tuple, SA
values). The cells partition the records, so noise on every cell is one histogram
release whose sensitivity is that of a single count (:mod:`anonaudit.dp.sensitivity`).
The statistics the syntactic checks rest on are its marginals and come free as
post-processing (:class:`Release` lists them): class sizes, the class-size histogram,
each class's SA histogram and the table's SA distribution. Post-processing also makes
the counts whole (rounded) and, by default, non-negative (negatives set to 0, which biases
empty cells upwards; ``postprocess="unbiased"`` keeps them), and recomputes k, l and t
on the released table (:mod:`anonaudit.dp.utility`).

Which cells are released (:data:`DomainKind`):

* ``public``: every cell of the cartesian product of declared values
  (:class:`~anonaudit.dp.domain.PublicDomain`), empty cells included: pure ε-DP with
  Laplace noise.
* ``observed``: only the cells present in the data, each noised and kept when its noisy
  count reaches a stability threshold τ (Korolova, Kenthapadi, Mishra & Ntoulas 2009,
  "Releasing search queries and clicks privately", WWW; Wilson et al. 2020,
  "Differentially private SQL with bounded user contribution", PoPETs; Rogers 2023, "A
  unifying privacy analysis framework for unknown domain algorithms in differential
  privacy"), or is ``τ - 1`` and a secure coin of probability q says so
  (:func:`~anonaudit.dp.mechanisms.bernoulli`). A cell that exists only because of one
  unit is released only when its noise pushes it that far, which happens with
  probability at most δ. This is (ε, δ)-DP, never pure ε-DP, and needs ``delta``. τ is
  the smallest threshold whose exact δ (:func:`~anonaudit.dp.accounting.delta_threshold`,
  computed from the noise actually sampled) fits and q spends the rest of δ: by a
  Neyman-Pearson argument the best rule that keeps a cell by its noisy count
  (:func:`~anonaudit.dp.accounting.stability_threshold`). OpenDP's own privacy map of
  ``make_laplace_threshold`` / ``make_gaussian_threshold`` understates δ in 0.16
  (opendp/opendp#2922) and is not used. The noise is drawn for the whole vector at once
  and the threshold applied afterwards.

The guarantee is stated for the chosen neighbouring relation. Learning the value of a
person who is in the data is a different pair of datasets: the same people, that
person's value changed (``replace``; two add-remove steps). :attr:`Release.value_epsilon`
and :attr:`Release.value_delta` state the release's guarantee for that pair, which is
what bounds an attacker's posterior on a present person's value
(:mod:`~anonaudit.dp.contrast`).

Randomized response (``mechanism="randomized-response"``) is the local model: every
record reports one sensitive value, randomized, and the QI values and class sizes are
released exactly as they are. It protects the sensitive value of each record (ε-DP for
a change of that value, in the local model), not membership nor the QI combinations,
and needs the SA's values declared; a record whose value is not declared (or is null)
is refused, since leaving it out would change a class size exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray
from scipy import special

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import (
    Budget,
    PrivacyCost,
    StabilityThreshold,
    delta_threshold,
    gaussian_epsilon,
    mechanism_cost,
    noise_scale,
    stability_threshold,
)
from anonaudit.dp.bounding import BoundedTable, resolve_unit
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.mechanisms import (
    ADDITIVE,
    DISCRETE,
    Mechanism,
    NoiseDistribution,
    add_noise,
    bernoulli,
    randomized_response,
    rr_keep_probability,
)
from anonaudit.dp.options import (
    EPSILON_RANGE,
    INSTEAD,
    MIN_DELTA,
    RELEASE_KEYWORDS,
    UNBIASED_NEEDS_A_DOMAIN,
    DPOptions,
    check_keywords,
    from_keywords,
)
from anonaudit.dp.plrv import privacy_loss
from anonaudit.dp.sensitivity import Sensitivity, histogram_sensitivity
from anonaudit.errors import ParameterError
from anonaudit.settings.names import POSTPROCESS, Postprocess
from anonaudit.settings.options import deprecated

__all__ = [
    "EPSILON_RANGE",
    "MIN_DELTA",
    "POSTPROCESS",
    "DomainKind",
    "Postprocess",
    "Release",
    "by_key",
    "calibrate",
    "release",
    "value_guarantee",
]

DomainKind: TypeAlias = Literal["public", "observed", "local"]
_COUNT = "count"


@dataclass(frozen=True)
class Release:
    """A differentially private class table and how it was made.

    Attributes
    ----------
    mechanism : str
        One of :data:`~anonaudit.dp.mechanisms.MECHANISMS`.
    epsilon, delta : float
        The (ε, δ) asked for (δ = 0: pure ε-DP).
    noise_scale : float
        ``b`` (Laplace), ``σ`` (Gaussian), or for randomized response the probability
        that a record reports another value than its own.
    sensitivity : Sensitivity
        Neighbouring relation, contribution bound and norms of the change.
    domain : {"public", "observed", "local"}
        Which cells were released: every cell of a public domain, the observed cells
        above a threshold, or (randomized response, the local model) the observed QI
        combinations with their exact sizes and randomized sensitive values.
    cells : int
        Counts that received noise (or records randomized, for randomized response).
    threshold : int or None
        Stability threshold τ (``observed`` only): a cell is kept when its noisy count
        reaches it.
    keep_below : float or None
        q (``observed`` only): the chance that a cell whose noisy count is ``τ - 1`` is
        kept, which brings the keys' δ up to the δ allowed
        (:func:`~anonaudit.dp.accounting.stability_threshold`).
    outside_domain : int
        Records whose values are not in the public domain, left out. Not released:
        do not publish it.
    cost : PrivacyCost
        What the release spent.
    value_epsilon, value_delta : float
        The (ε, δ) for telling apart two datasets that differ only in the sensitive
        values of one person who is in both (``replace`` of that person's records): what
        bounds an attacker's posterior on a present person's value. Under add-remove
        with Laplace noise that is twice the stated ε.
    value_failure : float
        The chance that the posterior bound at ``value_epsilon`` fails: the pair's
        ``P[L > value_epsilon]`` plus the keys' δ (:func:`value_guarantee`); 0 when no
        output breaks it.
    table : ClassTable
        The released class table (non-negative whole counts; zero cells left out).
    original : ClassTable
        The class table it was made from (kept for comparison; never released).
    true_counts, released_counts : numpy.ndarray
        Per released cell (every cell of the domain, the observed cells, or per
        (class, SA value) for randomized response), before and after the release.
    class_ids : numpy.ndarray
        Each of those cells' equivalence class, for class-level comparisons.
    """

    mechanism: Mechanism
    epsilon: float
    delta: float
    noise_scale: float
    sensitivity: Sensitivity
    domain: DomainKind
    cells: int
    threshold: int | None
    keep_below: float | None
    outside_domain: int
    cost: PrivacyCost
    value_epsilon: float
    value_delta: float
    value_failure: float
    table: ClassTable = field(repr=False)
    original: ClassTable = field(repr=False)
    true_counts: NDArray[Any] = field(repr=False)
    released_counts: NDArray[Any] = field(repr=False)
    class_ids: NDArray[Any] = field(repr=False)

    @property
    def noise(self) -> NoiseDistribution | None:
        """The noise added to each count (``None`` for randomized response)."""
        if self.mechanism not in ADDITIVE:
            return None
        return NoiseDistribution(self.mechanism, self.noise_scale)

    # -- statistics derived by post-processing ---------------------------------------

    @property
    def class_sizes(self) -> NDArray[Any]:
        """Released records per equivalence class of the released table."""
        return self.table.classes.sizes

    @property
    def size_histogram(self) -> dict[int, int]:
        """Class size -> number of classes of that size, in the released table."""
        values, counts = np.unique(self.class_sizes, return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts, strict=True)}

    def sa_distribution(self, sensitive: str) -> dict[str | None, int]:
        """The released table's count of each value of ``sensitive``."""
        counts = self.table.sensitive_counts(sensitive)
        return {v: int(n) for v, n in zip(counts.values, counts.totals, strict=True)}

    def to_frame(self) -> pa.Table:
        """The released class table as QI, SA and ``count`` columns, ordered by its key
        columns (nulls last): the same release reads the same whatever the order of the
        input's records or the entry point (:func:`by_key`)."""
        frame = self.table.keys.append_column(_COUNT, pa.array(self.table.counts, pa.int64()))
        return by_key(frame, [*self.table.quasi_identifiers, *self.table.sensitive])


def by_key(frame: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``frame``'s rows ordered by ``columns`` (ascending, nulls last): the order of
    every published release, which must not tell the order records arrived in.

    >>> by_key(pa.table({"a": ["b", None, "a"], "count": [1, 2, 3]}), ["a"]).to_pydict()
    {'a': ['a', 'b', None], 'count': [3, 1, 2]}
    """
    return frame.sort_by([(name, "ascending") for name in columns])


def release(
    table: ClassTable | BoundedTable, options: DPOptions | None = None, **keywords: Any
) -> Release:
    """Release ``table`` under (ε, δ)-differential privacy.

    Parameters
    ----------
    table : ClassTable or BoundedTable
        The class table, bounded already when one person has several rows: a
        :class:`~anonaudit.dp.bounding.BoundedTable`
        (:func:`~anonaudit.dp.bounding.load_bounded`) brings its privacy unit, or the
        ``options.unit.contributions`` states the bound a class table respects.
    options : DPOptions
        The guarantee (ε, and δ: ``None`` or 0 asks for pure ε-DP, which needs
        ``options.domain`` for every QI and SA), the privacy unit, the mechanism, the
        public domain (every cell of the product of the declared values is released),
        the SA randomized response randomizes, a budget to fit, the largest domain, and
        the post-processing of the rounded noisy counts over a public domain: ``clamp``
        sets negatives to 0, ``unbiased`` keeps them, so that each count's mean is the
        true count (:func:`_postprocess`). Either way :attr:`Release.table` holds the
        positive counts and :attr:`Release.released_counts` every cell's. ``unbiased``
        needs a public domain for every QI and SA: observed combinations are kept above a
        threshold and randomized response reports are never negative. Randomized response
        is always ``replace`` of the value.
    **keywords
        The flat keyword arguments of earlier versions (``epsilon=``, ``delta=``,
        ``mechanism=``, ``domain=``, ``neighbouring=``, ``max_contributions=``,
        ``sensitive=``, ``budget=``, ``max_cells=``, ``postprocess=``), deprecated: they
        stop working in 0.3.

    Returns
    -------
    Release

    Raises
    ------
    ParameterError
        Pure ε-DP asked for without a public domain (the message names ``--delta`` and
        ``--public-domain``), ``unbiased`` without a public domain for every column, a
        public domain larger than ``max_cells``, or a unit column with a class table that
        was not bounded by it.
    BudgetError
        The release does not fit ``options.budget``.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.dp.options import PrivacyGuarantee
    >>> t = ClassTable.from_frame(pd.DataFrame({"zip": ["a", "b"], "count": [40, 2]}),
    ...                           quasi_identifiers=["zip"])
    >>> r = release(t, DPOptions(PrivacyGuarantee(1.0, 1e-6)))
    >>> r.domain, r.threshold, r.epsilon, r.delta
    ('observed', 15, 1.0, 1e-06)
    """
    if keywords:
        if options is not None:
            raise TypeError("give DPOptions or the deprecated keyword arguments, not both")
        check_keywords("release", keywords, RELEASE_KEYWORDS)
        deprecated("release", list(keywords), INSTEAD["release"])
        options = from_keywords("release", keywords, RELEASE_KEYWORDS).options
    if not isinstance(options, DPOptions):
        raise TypeError(
            "release() needs its options: release(table, DPOptions(PrivacyGuarantee(epsilon, "
            "delta), ...))"
        )
    data, unit, _ = resolve_unit(table, options.unit)
    epsilon, delta = options.epsilon, options.delta
    mechanism, domain, budget = options.mechanism, options.domain, options.budget
    columns = [*data.quasi_identifiers, *data.sensitive]
    if options.postprocess == "unbiased" and domain is not None and domain.missing(columns):
        raise ParameterError(UNBIASED_NEEDS_A_DOMAIN)
    if mechanism == "randomized-response":
        return _randomized_response(
            data, epsilon, domain, unit.contributions, options.sensitive, budget
        )
    sensitivity = histogram_sensitivity(
        unit.neighbouring or "add-remove", max_contributions=unit.contributions
    )
    missing = domain.missing(columns) if domain is not None else columns
    if missing and delta == 0:
        raise ParameterError(
            "the set of QI combinations in the data is private, so releasing the observed "
            "combinations is never pure epsilon-DP. Either declare the public values of "
            f"{', '.join(repr(c) for c in missing)} (--public-domain COL=v1,v2,... or "
            "COL=@FILE; domain= in Python) to release every combination of them, or allow "
            "a delta (--delta with anonaudit dp, --dp-delta with anonaudit audit, e.g. 1e-6) "
            "to release the observed combinations above a "
            "stability threshold"
        )
    if domain is not None and not missing:
        return _public(
            data,
            domain,
            columns,
            epsilon,
            delta,
            mechanism,
            sensitivity,
            budget,
            options.max_cells,
            options.postprocess,
        )
    return _observed(data, epsilon, delta, mechanism, sensitivity, budget)


def _spend(budget: Budget | None, epsilon: float, delta: float, cost: PrivacyCost) -> None:
    """Check the calibration against the target, then against the caller's budget."""
    Budget(epsilon=epsilon, delta=delta).spend(cost)
    if budget is not None:
        budget.spend(cost)


def _public(
    table: ClassTable,
    domain: PublicDomain,
    columns: list[str],
    epsilon: float,
    delta: float,
    mechanism: Mechanism,
    sensitivity: Sensitivity,
    budget: Budget | None,
    max_cells: int,
    postprocess: Postprocess,
) -> Release:
    n_cells = domain.size(columns)
    if n_cells > max_cells:
        raise ParameterError(
            f"the public domain has {n_cells:,} cells, more than the {max_cells:,} allowed; "
            "declare fewer values (coarser QIs) or raise max_cells"
        )
    scale, cost = calibrate(mechanism, sensitivity, epsilon, delta)
    _spend(budget, epsilon, delta, cost)
    value_epsilon, value_delta, value_failure = value_guarantee(
        mechanism, scale, sensitivity.max_contributions, delta, threshold=None
    )
    cell = domain.cell_index(table.keys, columns)
    inside = cell >= 0
    true = np.bincount(cell[inside], weights=table.counts[inside], minlength=n_cells)
    true = true.astype(np.int64)
    released = _postprocess(add_noise(true, mechanism=mechanism, scale=scale), postprocess)
    nonzero = np.flatnonzero(released > 0)  # a class table holds no negative count
    released_table = _table(table, domain.cell_keys(nonzero, columns), released[nonzero])
    qi_cells = domain.size(list(table.quasi_identifiers))
    return Release(
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        noise_scale=scale,
        sensitivity=sensitivity,
        domain="public",
        cells=n_cells,
        threshold=None,
        keep_below=None,
        outside_domain=int(table.counts[~inside].sum()),
        cost=cost,
        value_epsilon=value_epsilon,
        value_delta=value_delta,
        value_failure=value_failure,
        table=released_table,
        original=table,
        true_counts=true,
        released_counts=released,
        class_ids=np.arange(n_cells, dtype=np.int64) // (n_cells // qi_cells),
    )


def _observed(
    table: ClassTable,
    epsilon: float,
    delta: float,
    mechanism: Mechanism,
    sensitivity: Sensitivity,
    budget: Budget | None,
) -> Release:
    if mechanism not in DISCRETE:
        raise ParameterError(
            f"releasing observed combinations uses a stability threshold on integer noise; "
            f"choose discrete-laplace or discrete-gaussian (got {mechanism}), or declare "
            "--public-domain for every QI and SA"
        )
    laplace = mechanism == "discrete-laplace"
    # Laplace: all of delta for the threshold; Gaussian: half for it, half for the noise
    threshold_delta = delta if laplace else delta / 2
    scale, shared = calibrate(mechanism, sensitivity, epsilon, delta - threshold_delta)
    s = sensitivity
    rule = stability_threshold(mechanism, scale=scale, l0=s.l0, linf=s.linf, delta=threshold_delta)
    cost = PrivacyCost(
        epsilon=shared.epsilon,
        rho=shared.rho,
        delta=rule.delta,
        profile=None if shared.profile is None else (epsilon, shared.profile[1] + rule.delta),
    )
    _spend(budget, epsilon, delta, cost)
    value_epsilon, value_delta, value_failure = value_guarantee(
        mechanism, scale, s.max_contributions, delta - rule.delta, threshold=rule
    )
    true = table.counts
    noisy = add_noise(true, mechanism=mechanism, scale=scale)
    # a coin for every cell, used at τ - 1 only: as many draws whatever the counts
    coin = bernoulli(np.full(len(noisy), rule.keep_below))
    kept = (noisy >= rule.threshold) | ((noisy == rule.threshold - 1) & coin)
    released = np.where(kept, noisy, 0).astype(np.int64)
    keep = released > 0
    keys = table.keys.filter(pa.array(keep))
    released_table = _table(
        table, {c: keys.column(c).to_pylist() for c in keys.column_names}, released[keep]
    )
    return Release(
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        noise_scale=scale,
        sensitivity=sensitivity,
        domain="observed",
        cells=len(true),
        threshold=rule.threshold,
        keep_below=rule.keep_below,
        outside_domain=0,
        cost=cost,
        value_epsilon=value_epsilon,
        value_delta=value_delta,
        value_failure=value_failure,
        table=released_table,
        original=table,
        true_counts=true,
        released_counts=released,
        class_ids=table.classes.index,
    )


def calibrate(
    mechanism: Mechanism, sensitivity: Sensitivity, epsilon: float, delta: float
) -> tuple[float, PrivacyCost]:
    """The noise scale for (ε, δ) and its cost.

    Laplace noise is pure ε-DP. Gaussian noise is calibrated on the exact Gaussian curve
    (:func:`~anonaudit.dp.accounting.noise_scale`), and the cost carries that tight
    ``(ε, δ)`` beside its ρ-zCDP (which composes). For the discrete Gaussian the scale
    is then checked on the discrete noise's own exact privacy-loss distribution
    (:mod:`~anonaudit.dp.plrv`), on the worst pair ``sensitivity`` names
    (:meth:`~anonaudit.dp.sensitivity.Sensitivity.shifts`), and widened by 0.1% steps
    until it holds there too.

    Parameters
    ----------
    mechanism : Mechanism
        The noise.
    sensitivity : Sensitivity
        How far the released counts move between neighbouring datasets.
    epsilon, delta : float
        The guarantee.

    Returns
    -------
    scale : float
        The noise's scale.
    cost : PrivacyCost
        What the release spends.
    """
    s = sensitivity
    scale = noise_scale(mechanism, epsilon=epsilon, delta=delta, l1=s.l1, l2=s.l2)
    if mechanism == "discrete-gaussian":
        shifts = s.shifts(laplace=False)
        while privacy_loss(mechanism, scale=scale, shifts=shifts).delta(epsilon) > delta:
            scale *= 1.001
    cost = mechanism_cost(mechanism, scale=scale, l1=s.l1, l2=s.l2)
    if cost.rho:
        cost = PrivacyCost(rho=cost.rho, profile=(epsilon, delta))
    return scale, cost


def value_guarantee(
    mechanism: Mechanism,
    scale: float,
    max_contributions: int,
    delta: float,
    *,
    threshold: StabilityThreshold | None,
) -> tuple[float, float, float]:
    """(ε, δ) for one present person's values changed: the ``replace`` pair, and the
    chance that a posterior bound at that ε fails.

    Laplace noise: ``ε = ||Δx||_1 / b`` with the replace L1 bound ``2m`` (Dwork et al.
    2006), twice the add-remove ε. Gaussian noise: the ε of the replace pair's exact
    privacy curve at ``delta`` (the δ the noise may use): Balle & Wang 2018, Theorem 8
    for the continuous Gaussian, the exact privacy-loss distribution for the discrete one.
    A stability threshold (τ and its q) adds its δ for the replace pair (cells of the
    changed values that exist in one dataset only).

    The third figure is what an (ε, δ) guarantee does not state: the chance that the
    pair's privacy loss exceeds ε, ``P[L > ε]``, plus the keys' δ. An attacker's
    posterior odds grow by at most ``e^ε`` on every output whose loss is at most ε
    (Kasiviswanathan & Smith 2014, "On the 'semantics' of differential privacy: a
    Bayesian formulation", Journal of Privacy and Confidentiality 6(1)), so the bound
    fails with that chance, which may exceed δ (``δ(ε) <= P[L > ε]``; Meiser 2018,
    IACR ePrint 2018/277). 0 for Laplace noise, whose loss never exceeds ε.
    """
    pair = histogram_sensitivity("replace", max_contributions=max_contributions)
    keys = (
        0.0
        if threshold is None
        else delta_threshold(
            mechanism,
            scale=scale,
            threshold=threshold.threshold,
            l0=pair.l0,
            linf=pair.linf,
            keep_below=threshold.keep_below,
        )
    )
    if mechanism in ("discrete-laplace", "laplace"):
        return pair.l1 / scale, keys, keys
    if delta <= 0:
        return math.inf, keys, keys
    if mechanism == "gaussian":
        mu = pair.l2 / scale
        epsilon = gaussian_epsilon(delta, mu=mu)
        # The loss of the Gaussian pair is N(mu^2 / 2, mu^2) (Balle & Wang 2018).
        tail = float(special.ndtr((mu * mu / 2 - epsilon) / mu))
        return epsilon, delta + keys, min(1.0, tail + keys)
    loss = privacy_loss(mechanism, scale=scale, shifts=pair.shifts(laplace=False))
    epsilon = loss.epsilon_for(delta)
    return epsilon, delta + keys, min(1.0, loss.tail(epsilon) + keys)


def _randomized_response(
    table: ClassTable,
    epsilon: float,
    domain: PublicDomain | None,
    max_contributions: int,
    sensitive: str | None,
    budget: Budget | None,
) -> Release:
    if sensitive is None:
        if len(table.sensitive) != 1:
            raise ParameterError(
                "randomized response randomizes one sensitive column; name it "
                f"(sensitive=..., --rr-sensitive) among {', '.join(table.sensitive) or 'none'}"
            )
        sensitive = table.sensitive[0]
    if sensitive not in table.sensitive:
        raise ParameterError(f"{sensitive!r} is not a sensitive column of the table")
    if domain is None or sensitive not in domain.values:
        raise ParameterError(
            f"randomized response reports one of the declared values of {sensitive!r}: "
            f"declare them with --public-domain {sensitive}=v1,v2,... (domain= in Python)"
        )
    sensitivity = histogram_sensitivity("replace", max_contributions=max_contributions)
    per_report = epsilon / max_contributions
    values = domain.values[sensitive]
    keep = rr_keep_probability(per_report, len(values))
    cost = PrivacyCost(epsilon=per_report * max_contributions)
    _spend(budget, epsilon, 0.0, cost)
    counts = table.sensitive_counts(sensitive)
    code = domain.cell_index(
        pa.table({sensitive: pa.array(counts.values, pa.string())}), [sensitive]
    )[counts.codes]
    inside = code >= 0
    if not inside.all():
        undeclared = sorted(
            {"null" if (v := counts.values[i]) is None else repr(v) for i in counts.codes[~inside]}
        )
        raise ParameterError(
            f"{int(counts.counts[~inside].sum()):,} records have a value of {sensitive!r} "
            f"that is not declared ({', '.join(undeclared[:5])}"
            f"{', ...' if len(undeclared) > 5 else ''}): leaving them out would change a "
            "class size exactly, which no randomization covers. Declare every value "
            f"(--public-domain {sensitive}=...), or map them to a declared value such as "
            "'other' before the release"
        )
    n_classes, k = counts.n_classes, len(values)
    true = np.zeros((n_classes, k), dtype=np.int64)
    np.add.at(true, (counts.class_ids, code), counts.counts)
    reports = randomized_response(code, counts.counts, categories=k, epsilon=per_report)
    released = np.zeros((n_classes, k), dtype=np.int64)
    np.add.at(released, counts.class_ids, reports)
    class_ids, codes = np.nonzero(released)
    keys = table.classes.keys.take(pa.array(class_ids))
    columns: dict[str, list[str | None]] = {
        c: keys.column(c).to_pylist() for c in table.quasi_identifiers
    }
    columns[sensitive] = [values[i] for i in codes.tolist()]
    original = ClassTable.from_frame(
        table.keys.append_column(_COUNT, pa.array(table.counts, pa.int64())),
        quasi_identifiers=table.quasi_identifiers,
        sensitive=[sensitive],
    )
    return Release(
        mechanism="randomized-response",
        epsilon=epsilon,
        delta=0.0,
        noise_scale=1 - keep,
        sensitivity=sensitivity,
        domain="local",
        cells=int(counts.counts.sum()),
        threshold=None,
        keep_below=None,
        outside_domain=0,
        cost=cost,
        value_epsilon=cost.epsilon,
        value_delta=0.0,
        value_failure=0.0,
        table=_table(original, columns, released[class_ids, codes]),
        original=original,
        true_counts=true.ravel(),
        released_counts=released.ravel(),
        class_ids=np.repeat(np.arange(n_classes, dtype=np.int64), k),
    )


def _postprocess(noisy: NDArray[Any], postprocess: Postprocess) -> NDArray[Any]:
    """Whole counts, rounded, then ``clamp``-ed or left ``unbiased`` (post-processing).

    ``clamp`` sets negative counts to 0, as readers expect of a count, which biases
    every empty cell upwards by ``E[max(Z, 0)]``: ``q / (1 - q²)`` with ``q = e^{-1/b}``
    for discrete Laplace noise of scale ``b`` (0.43 records at ε = 1), a bias that adds
    up over the empty cells of a sum (Zhu, Van Hentenryck & Fioretto 2021, "Bias and
    variance of post-processing in differential privacy", AAAI). ``unbiased`` keeps the
    negative counts: the noise is symmetric with mean 0 and rounding keeps that symmetry,
    so every released count, and every sum of them, has the true count as its mean.
    Either is a function of the noisy counts alone, so costs no privacy.
    """
    whole = np.rint(noisy)
    if postprocess == "clamp":
        whole = np.maximum(whole, 0)
    return np.asarray(whole, dtype=np.int64)


def _table(
    like: ClassTable, columns: dict[str, list[str | None]], counts: NDArray[Any]
) -> ClassTable:
    """A class table with ``like``'s roles from key columns and counts."""
    names = [*like.quasi_identifiers, *like.sensitive]
    frame = pa.table(
        {name: pa.array(columns[name], pa.string()) for name in names}
        | {_COUNT: pa.array(counts, pa.int64())}
    )
    return ClassTable.from_frame(
        frame,
        quasi_identifiers=like.quasi_identifiers,
        sensitive=like.sensitive,
        count=_COUNT,
    )
