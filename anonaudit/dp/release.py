"""Differentially private release of the class table.

The released statistic is the class table itself: one count per cell (QI tuple, SA
values). The cells partition the records, so noise on every cell is one histogram
release whose sensitivity is that of a single count (:mod:`anonaudit.dp.sensitivity`).
The statistics the syntactic checks rest on are its marginals and come free as
post-processing (:class:`Release` lists them): class sizes, the class-size histogram,
each class's SA histogram and the table's SA distribution. Post-processing also makes
the counts what users expect, whole and non-negative (rounded, negatives set to 0), and
recomputes k, l and t on the released table (:mod:`anonaudit.dp.utility`).

Which cells are released (:data:`DomainKind`):

* ``public``: every cell of the cartesian product of declared values
  (:class:`~anonaudit.dp.domain.PublicDomain`), empty cells included: pure ε-DP with
  Laplace noise.
* ``observed``: only the cells present in the data, each noised and kept when its noisy
  count reaches a stability threshold τ (Korolova, Kenthapadi, Mishra & Ntoulas 2009,
  "Releasing search queries and clicks privately", WWW; Wilson et al. 2020; Rogers
  2023, "A unifying privacy analysis framework for unknown domain algorithms in
  differential privacy"). A cell that exists only because of one unit is released only
  when its noise pushes it past τ, which happens with probability at most δ. This is
  (ε, δ)-DP, never pure ε-DP, and needs ``delta``. τ and the (ε, δ) are OpenDP's own
  privacy map of ``make_laplace_threshold`` / ``make_gaussian_threshold``; the noise is
  drawn for the whole vector at once and the threshold applied afterwards, which is the
  same distribution as OpenDP's threshold mechanism on a map of counts.

Randomized response (``mechanism="randomized-response"``) is the local model: every
record reports one sensitive value, randomized, and the QI values and class sizes are
released exactly as they are. It protects the sensitive value of each record (ε-DP for
a change of that value), not membership, and needs the SA's values declared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import numpy as np
import pyarrow as pa

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import (
    Budget,
    PrivacyCost,
    mechanism_cost,
    noise_scale,
)
from anonaudit.dp.domain import MAX_CELLS, PublicDomain
from anonaudit.dp.mechanisms import (
    ADDITIVE,
    DISCRETE,
    MECHANISMS,
    Mechanism,
    NoiseDistribution,
    add_noise,
    opendp_contrib,
    randomized_response,
    require_opendp,
    rr_keep_probability,
)
from anonaudit.dp.sensitivity import Neighbouring, Sensitivity, histogram_sensitivity
from anonaudit.errors import ParameterError

__all__ = ["DomainKind", "Release", "release"]

DomainKind: TypeAlias = Literal["public", "observed"]
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
    domain : {"public", "observed"}
        Which cells were released.
    cells : int
        Counts that received noise (or records randomized, for randomized response).
    threshold : int or None
        Stability threshold τ (``observed`` only).
    outside_domain : int
        Records whose values are not in the public domain, left out. Not released:
        do not publish it.
    cost : PrivacyCost
        What the release spent.
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
    outside_domain: int
    cost: PrivacyCost
    table: ClassTable = field(repr=False)
    original: ClassTable = field(repr=False)
    true_counts: np.ndarray = field(repr=False)
    released_counts: np.ndarray = field(repr=False)
    class_ids: np.ndarray = field(repr=False)

    @property
    def noise(self) -> NoiseDistribution | None:
        """The noise added to each count (``None`` for randomized response)."""
        if self.mechanism not in ADDITIVE:
            return None
        return NoiseDistribution(self.mechanism, self.noise_scale)

    # -- statistics derived by post-processing ---------------------------------------

    @property
    def class_sizes(self) -> np.ndarray:
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
        """The released class table as QI, SA and ``count`` columns."""
        return self.table.keys.append_column(_COUNT, pa.array(self.table.counts, pa.int64()))


def release(
    table: ClassTable,
    *,
    epsilon: float,
    delta: float | None = None,
    mechanism: Mechanism = "discrete-laplace",
    domain: PublicDomain | None = None,
    neighbouring: Neighbouring | None = None,
    max_contributions: int = 1,
    sensitive: str | None = None,
    budget: Budget | None = None,
    max_cells: int = MAX_CELLS,
) -> Release:
    """Release ``table`` under (ε, δ)-differential privacy.

    Parameters
    ----------
    table : ClassTable
        The class table (bounded already when one person has several rows:
        :func:`~anonaudit.dp.bounding.load_bounded`).
    epsilon : float
        Total ε of the release (> 0).
    delta : float, optional
        δ; ``None`` or 0 asks for pure ε-DP, which needs ``domain`` for every column.
    mechanism : str
        ``discrete-laplace`` (default), ``discrete-gaussian``, ``laplace``,
        ``gaussian`` (the continuous ones are rounded afterwards) or
        ``randomized-response``.
    domain : PublicDomain, optional
        Declared values of every QI and SA: releases every cell of their product.
    neighbouring : {"add-remove", "replace"}, optional
        Default ``add-remove``; randomized response is always ``replace`` of the value.
    max_contributions : int
        Records one privacy unit may have (``m``); the table must already respect it.
    sensitive : str, optional
        The SA that randomized response randomizes (default: the only SA).
    budget : Budget, optional
        Refuse (:class:`~anonaudit.errors.BudgetError`) when this release does not fit.
    max_cells : int
        Largest public domain accepted.

    Returns
    -------
    Release

    Raises
    ------
    ParameterError
        Pure ε-DP asked for without a public domain (the message names ``--delta`` and
        ``--public-domain``), an unknown mechanism, or parameters out of range.
    BudgetError
        The release does not fit ``budget``.
    """
    if mechanism not in MECHANISMS:
        raise ParameterError(
            f"unknown mechanism {mechanism!r}; choose one of {', '.join(MECHANISMS)}"
        )
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ParameterError(f"epsilon must be a positive number (got {epsilon!r})")
    delta = float(delta or 0.0)
    if not 0 <= delta < 1:
        raise ParameterError(f"delta must lie in [0, 1) (got {delta!r})")
    if mechanism == "randomized-response":
        if neighbouring == "add-remove":
            raise ParameterError(
                "randomized response protects each record's sensitive value (neighbouring "
                "'replace'), not whether a record is present; use an additive mechanism"
            )
        return _randomized_response(table, epsilon, domain, max_contributions, sensitive, budget)
    sensitivity = histogram_sensitivity(
        neighbouring or "add-remove", max_contributions=max_contributions
    )
    columns = [*table.quasi_identifiers, *table.sensitive]
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
            table, domain, columns, epsilon, delta, mechanism, sensitivity, budget, max_cells
        )
    return _observed(table, epsilon, delta, mechanism, sensitivity, budget)


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
) -> Release:
    n_cells = domain.size(columns)
    if n_cells > max_cells:
        raise ParameterError(
            f"the public domain has {n_cells:,} cells, more than the {max_cells:,} allowed; "
            "declare fewer values (coarser QIs) or raise max_cells"
        )
    scale = noise_scale(
        mechanism, epsilon=epsilon, delta=delta, l1=sensitivity.l1, l2=sensitivity.l2
    )
    cost = mechanism_cost(mechanism, scale=scale, l1=sensitivity.l1, l2=sensitivity.l2)
    _spend(budget, epsilon, delta, cost)
    cell = domain.cell_index(table.keys, columns)
    inside = cell >= 0
    true = np.bincount(cell[inside], weights=table.counts[inside], minlength=n_cells)
    true = true.astype(np.int64)
    released = _postprocess(add_noise(true, mechanism=mechanism, scale=scale))
    nonzero = np.flatnonzero(released)
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
        outside_domain=int(table.counts[~inside].sum()),
        cost=cost,
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
    # Laplace: all of delta for the threshold; Gaussian: half for it, half for zCDP
    threshold_delta = delta if laplace else delta / 2
    scale = noise_scale(
        mechanism,
        epsilon=epsilon,
        delta=delta - threshold_delta,
        l1=sensitivity.l1,
        l2=sensitivity.l2,
    )
    threshold, cost = _threshold(laplace, scale, sensitivity, threshold_delta)
    _spend(budget, epsilon, delta, cost)
    true = table.counts
    noisy = add_noise(true, mechanism=mechanism, scale=scale)
    released = np.where(noisy >= threshold, noisy, 0).astype(np.int64)
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
        threshold=threshold,
        outside_domain=0,
        cost=cost,
        table=released_table,
        original=table,
        true_counts=true,
        released_counts=released,
        class_ids=table.classes.index,
    )


def _threshold(
    laplace: bool, scale: float, sensitivity: Sensitivity, delta: float
) -> tuple[int, PrivacyCost]:
    """Smallest threshold τ whose OpenDP privacy map has δ at most ``delta``, and the cost."""
    dp = require_opendp()
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64"))
    s = sensitivity
    if laplace:
        metric = dp.l01inf_distance(dp.absolute_distance(T="i64"))
        d_in = (s.l0, s.l1, s.linf)
        make = dp.m.make_laplace_threshold
    else:
        metric = dp.l02inf_distance(dp.absolute_distance(T="i64"))
        d_in = (s.l0, math.ceil(s.l2), s.linf)  # the integer metric needs a whole L2 bound
        make = dp.m.make_gaussian_threshold

    def privacy(threshold: int) -> tuple[float, float]:
        with opendp_contrib(dp):
            measurement = make(domain, metric, scale=scale, threshold=threshold)
        loss, failure = measurement.map(d_in)
        return float(loss), float(failure)

    low, high = s.linf, max(2 * s.linf, 2)
    while privacy(high)[1] > delta:
        low, high = high, high * 2
    while low < high:
        mid = (low + high) // 2
        if privacy(mid)[1] <= delta:
            high = mid
        else:
            low = mid + 1
    loss, failure = privacy(low)
    cost = (
        PrivacyCost(epsilon=loss, delta=failure)
        if laplace
        else PrivacyCost(rho=loss, delta=failure)
    )
    return low, cost


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
    n_classes, k = counts.n_classes, len(values)
    true = np.zeros((n_classes, k), dtype=np.int64)
    np.add.at(true, (counts.class_ids[inside], code[inside]), counts.counts[inside])
    reports = randomized_response(
        code[inside], counts.counts[inside], categories=k, epsilon=per_report
    )
    released = np.zeros((n_classes, k), dtype=np.int64)
    np.add.at(released, counts.class_ids[inside], reports)
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
        domain="public",
        cells=int(counts.counts[inside].sum()),
        threshold=None,
        outside_domain=int(counts.counts[~inside].sum()),
        cost=cost,
        table=_table(original, columns, released[class_ids, codes]),
        original=original,
        true_counts=true.ravel(),
        released_counts=released.ravel(),
        class_ids=np.repeat(np.arange(n_classes, dtype=np.int64), k),
    )


def _postprocess(noisy: np.ndarray) -> np.ndarray:
    """Whole, non-negative counts: round, then set negatives to 0 (post-processing)."""
    return np.asarray(np.maximum(np.rint(noisy), 0), dtype=np.int64)


def _table(
    like: ClassTable, columns: dict[str, list[str | None]], counts: np.ndarray
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
