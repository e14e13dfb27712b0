"""The companion audits itself: an empirical lower bound on the ε (and δ) of its releases.

A release's claim speaks of every pair of neighbouring datasets ``D, D'`` and every set
of outputs ``E``:

    P[M(D) in E] <= e^ε P[M(D') in E] + δ.

:func:`self_audit` runs :func:`~anonaudit.dp.release.release`, the very function
``anonaudit dp`` publishes with, on the worst-case neighbours of a release's mechanism
and relation, draws ``N`` releases of each and bounds from below what the samples show.
This is black-box testing of differential privacy as StatDP (Ding, Wang, Wang, Zhang &
Kifer 2018, "Detecting violations of differential privacy", CCS), DP-Sniper (Bichsel,
Steffen, Bogunovic & Vechev 2021, "DP-Sniper: black-box discovery of differential
privacy violations using classifiers", IEEE S&P), Delta-Siege (Lokna, Paradis, Dimitrov
& Vechev 2023, "Group and attack: auditing differential privacy", CCS) and DP-Auditorium
(Kong, Muñoz Medina, Ribero & Syed 2024, "DP-Auditorium: a large-scale library for
auditing differential privacy", IEEE S&P) do it:

1. *Neighbours*. Add-remove: one person's ``m`` records in one cell, against the table
   without them; over the observed combinations both a combination only that person
   makes (absent without them: the stability threshold's δ) and one others make too
   (the noise's ε). Replace: the person's records moved from one cell of their class to
   another. Randomized response: one person's reports, their value changed. The cells
   partition the records and each gets its own noise, so one release of a table of
   ``N`` classes, each holding one copy of the pair, is ``N`` independent releases of
   it: class ``q``'s cells have, in the table with every person, the distribution they
   have in the neighbour without person ``q`` only.
2. *Events*, picked on the first half of the samples: thresholds on the released count
   of the cell the person is in, and for two cells on the count of the cell they leave
   or on the difference of the two, ``{x >= t1 and y <= t2}`` in either direction.
3. *Bounds*, on the second half: one-sided Clopper-Pearson intervals
   (:func:`clopper_pearson`), each at level ``1 - α/2``, give
   ``p_low <= P[M(D) in E]`` and ``p_up >= P[M(D') in E]``, so with probability at least
   ``1 - α`` (the ``confidence``)

       ε >= ln((p_low - δ) / p_up)   and   δ(ε) >= p_low - e^ε p_up

   for the stated ``ε`` and ``δ`` (Jagielski, Ullman & Oprea 2020, "Auditing
   differentially private machine learning: how private is private SGD?", NeurIPS).
   The event was chosen on other samples, so no correction for the search is due.

What it is: evidence from the product's own code, with OpenDP's secure samplers, that
the claim is not too small. A release that adds less noise than it states, or shows a
combination one person makes more often than its δ, gives a bound above the claim
(:attr:`SelfAudit.refuted`); ``tests/test_dp_selfaudit.py`` plants both faults. What it
is not: a proof. A bound below the claim does not show that the claim holds: only these
pairs and events were tried (not a person spreading their records over several
combinations only they make), and a δ of 1e-6 or a small ε is beyond what a few hundred
thousand samples resolve.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from anonaudit.classtable import ClassTable
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.mechanisms import Mechanism
from anonaudit.dp.options import DPOptions, PrivacyGuarantee, PrivacyUnit
from anonaudit.dp.release import DomainKind, Release, release
from anonaudit.dp.sensitivity import Neighbouring
from anonaudit.errors import ParameterError
from anonaudit.settings.names import SELF_AUDIT_CONFIDENCE, SELF_AUDIT_SAMPLES

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_SAMPLES",
    "MIN_SAMPLES",
    "AuditBound",
    "SelfAudit",
    "checked_samples",
    "clopper_pearson",
    "self_audit",
]

#: Releases of each neighbouring dataset drawn by default (about 1 s per 100,000 noisy
#: counts and 9 s per 100,000 randomized reports on the 2-core development machine).
DEFAULT_SAMPLES = SELF_AUDIT_SAMPLES
#: Probability that each reported bound holds.
DEFAULT_CONFIDENCE = SELF_AUDIT_CONFIDENCE
#: Fewest samples accepted: half of them pick the event, half bound it.
MIN_SAMPLES = 1_000
#: Most thresholds tried per statistic (quantiles of the first half beyond that).
_MAX_THRESHOLDS = 200
_Q, _S, _COUNT = "q", "s", "count"


@dataclass(frozen=True)
class _Pair:
    """One worst-case pair, per copy: the records of each of its cells in ``D`` and ``D'``.

    ``base`` counts records of other people in every cell of the pair (``None``: the
    release's stability threshold, so that without the person the threshold decides
    whether the cell is shown).
    """

    name: str
    first: str
    second: str
    with_person: tuple[int, ...]
    without: tuple[int, ...]
    base: int | None = 0


#: The worst-case pairs sampled, by the release's kind of domain and relation; each
#: count of the person's is multiplied by ``m``, the records one person may have.
_PAIRS: dict[tuple[DomainKind, Neighbouring], tuple[_Pair, ...]] = {
    ("public", "add-remove"): (
        _Pair("one person added to a cell", "with the person", "without", (1,), (0,)),
    ),
    ("public", "replace"): (
        _Pair("one person's value changed", "value a", "value b", (1, 0), (0, 1)),
    ),
    ("observed", "add-remove"): (
        _Pair("a combination only the person makes", "with the person", "without", (1,), (0,)),
        _Pair("a combination others make too", "with the person", "without", (1,), (0,), None),
    ),
    ("observed", "replace"): (
        _Pair(
            "one person's value changed, no one else in either combination",
            "value a",
            "value b",
            (1, 0),
            (0, 1),
        ),
        _Pair(
            "one person's value changed, others in both combinations",
            "value a",
            "value b",
            (1, 0),
            (0, 1),
            None,
        ),
    ),
    ("local", "replace"): (
        _Pair("one person's reported value changed", "value a", "value b", (1, 0), (0, 1)),
    ),
}


@dataclass(frozen=True)
class AuditBound:
    """One lower bound and the event that gives it.

    Attributes
    ----------
    value : float
        The lower bound (0 when no event showed one).
    event : str
        The event and the two datasets, in words.
    hits, trials : int
        How often the event happened on the first dataset's second-half samples.
    hits_other, trials_other : int
        ... and on the other dataset's.
    """

    value: float
    event: str
    hits: int
    trials: int
    hits_other: int
    trials_other: int


@dataclass(frozen=True)
class SelfAudit:
    """What sampling the release code on worst-case neighbours showed.

    Attributes
    ----------
    mechanism : str
        The release's mechanism.
    neighbouring : {"add-remove", "replace"}
        The relation of the pairs.
    domain : {"public", "observed", "local"}
        The release's kind of domain, which the pairs follow.
    epsilon, delta : float
        The claim: the (ε, δ) the release states.
    epsilon_lower : AuditBound
        An empirical lower bound on ε at the stated δ.
    delta_lower : AuditBound
        An empirical lower bound on δ at the stated ε.
    confidence : float
        Each bound holds with at least this probability.
    samples : int
        Releases drawn of each dataset of each pair.
    pairs : tuple of str
        The pairs sampled, in words.
    """

    mechanism: Mechanism
    neighbouring: Neighbouring
    domain: DomainKind
    epsilon: float
    delta: float
    epsilon_lower: AuditBound
    delta_lower: AuditBound
    confidence: float
    samples: int
    pairs: tuple[str, ...]

    @property
    def refuted(self) -> bool:
        """Whether the samples show the claim is false: a bound above the claim."""
        return self.epsilon_lower.value > self.epsilon or self.delta_lower.value > self.delta

    @property
    def share(self) -> float:
        """The ε lower bound as a share of the claimed ε."""
        return self.epsilon_lower.value / self.epsilon


def clopper_pearson(
    hits: ArrayLike, trials: ArrayLike, alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One-sided Clopper-Pearson bounds on a binomial probability.

    The lower bound is at most ``p`` with probability at least ``1 - alpha``, and so is
    the upper bound at least ``p`` (Clopper & Pearson 1934, "The use of confidence or
    fiducial limits illustrated in the case of the binomial", Biometrika 26(4)): the
    ``alpha`` and ``1 - alpha`` quantiles of ``Beta(k, n - k + 1)`` and
    ``Beta(k + 1, n - k)``; 0 for no hit, 1 for all hits.

    >>> low, high = clopper_pearson([0, 50, 100], 100, 0.025)
    >>> low.round(4).tolist(), high.round(4).tolist()
    ([0.0, 0.3983, 0.9638], [0.0362, 0.6017, 1.0])
    """
    k = np.asarray(hits, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    low = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
    high = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def checked_samples(samples: object, *, name: str = "the self-audit") -> int:
    """``samples`` if it is a whole number of at least :data:`MIN_SAMPLES`.

    Raises
    ------
    ParameterError
        Naming ``name`` (the flag, on the command line), the least and the value given.

    >>> checked_samples(10, name="--self-audit")
    Traceback (most recent call last):
    ...
    anonaudit.errors.ParameterError: --self-audit draws at least 1,000 releases of each ...
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < MIN_SAMPLES:
        raise ParameterError(
            f"{name} draws at least {MIN_SAMPLES:,} releases of each dataset (half pick the "
            f"event, half bound it); got {samples!r}"
        )
    return samples


def self_audit(
    made: Release,
    options: DPOptions,
    *,
    samples: int = DEFAULT_SAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> SelfAudit:
    """Sample the release code on worst-case neighbours and bound its ε and δ from below.

    Parameters
    ----------
    made : Release
        The release whose claim is audited: its mechanism, (ε, δ), neighbouring
        relation, contribution bound and kind of domain.
    options : DPOptions
        The options it was made with: its post-processing, and for randomized response
        the number of declared values.
    samples : int
        Releases of each dataset of each pair (half pick the event, half bound it).
    confidence : float
        Probability that each bound holds (Clopper-Pearson, Bonferroni over its two
        intervals).

    Returns
    -------
    SelfAudit

    Raises
    ------
    ParameterError
        Fewer than :data:`MIN_SAMPLES` samples, or a confidence outside (0, 1).

    Examples
    --------
    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame({"zip": ["a"], "d": ["x"], "count": [3]}),
    ...                           quasi_identifiers=["zip"], sensitive=["d"])
    >>> options = DPOptions(PrivacyGuarantee(1.0),
    ...                     domain=PublicDomain.of({"zip": ["a", "b"], "d": ["x", "y"]}))
    >>> audit = self_audit(release(t, options), options, samples=20_000)
    >>> 0.7 < audit.epsilon_lower.value <= 1.0, audit.refuted
    (True, False)
    """
    checked_samples(samples)
    if not 0 < confidence < 1:
        raise ParameterError(
            f"the self-audit's confidence must lie strictly between 0 and 1 (got {confidence!r})"
        )
    pairs = _PAIRS[made.domain, made.sensitivity.neighbouring]
    events = [
        event for pair in pairs for event in _events(pair, *_sample(made, options, pair, samples))
    ]
    epsilon, delta = made.epsilon, made.delta
    alpha = (1 - confidence) / 2  # each bound rests on two intervals

    def epsilon_bound(low: NDArray[np.float64], high: NDArray[np.float64]) -> NDArray[Any]:
        gain = low - delta
        return np.where(gain > 0, np.log(np.maximum(gain, 1e-300) / high), 0.0).clip(min=0)

    def delta_bound(low: NDArray[np.float64], high: NDArray[np.float64]) -> NDArray[Any]:
        return np.maximum(low - math.exp(epsilon) * high, 0.0)

    return SelfAudit(
        mechanism=made.mechanism,
        neighbouring=made.sensitivity.neighbouring,
        domain=made.domain,
        epsilon=epsilon,
        delta=delta,
        epsilon_lower=_bound(events, epsilon_bound, samples, alpha),
        delta_lower=_bound(events, delta_bound, samples, alpha),
        confidence=confidence,
        samples=samples,
        pairs=tuple(pair.name for pair in pairs),
    )


def _sample(
    made: Release, options: DPOptions, pair: _Pair, copies: int
) -> tuple[NDArray[Any], NDArray[Any]]:
    """``copies`` releases of each dataset of ``pair``, made by :func:`release` with the
    options ``made`` was made with: the released counts of each copy's cells, one row a
    copy, on ``D`` and on ``D'``."""
    m = made.sensitivity.max_contributions
    base = made.threshold if pair.base is None else pair.base
    assert base is not None  # a pair with others in its cells is sampled with a threshold
    width = len(pair.with_person)
    if made.domain == "local":  # every declared value of the randomized SA is reported
        assert options.domain is not None  # release() refuses randomized response without
        width = len(options.domain.values[made.original.sensitive[0]])
    values = [str(v) for v in range(width)]
    domain = {
        "public": PublicDomain.of({_Q: [str(q) for q in range(copies)], _S: values}),
        "observed": None,
        "local": PublicDomain.of({_S: values}),
    }[made.domain]
    synthetic = DPOptions(
        PrivacyGuarantee(made.epsilon, made.delta),
        unit=PrivacyUnit(contributions=m, neighbouring=made.sensitivity.neighbouring),
        mechanism=made.mechanism,
        domain=domain,
        postprocess=options.postprocess,
        max_cells=copies * width,
    )
    grids = []
    for records in (pair.with_person, pair.without):
        cells = np.zeros(width, dtype=np.int64)
        cells[: len(records)] = [base + m * n for n in records]
        table = _copies(cells, values, copies)
        grids.append(_released(release(table, synthetic), table, domain, values, copies))
    return grids[0], grids[1]


def _copies(cells: NDArray[Any], values: list[str], copies: int) -> ClassTable:
    """``copies`` classes (QI ``q``), each with ``cells[v]`` records of SA value ``v``."""
    present = np.flatnonzero(cells)
    frame = pa.table(
        {
            _Q: np.repeat(np.arange(copies), len(present)).astype(str),
            _S: np.tile(np.asarray(values)[present], copies),
            _COUNT: np.tile(cells[present], copies),
        }
    )
    return ClassTable.from_frame(frame, quasi_identifiers=[_Q], sensitive=[_S])


def _released(
    r: Release, table: ClassTable, domain: PublicDomain | None, values: list[str], copies: int
) -> NDArray[Any]:
    """The released count of each copy's cells, one row a copy (0: not released)."""
    if r.domain == "public" and domain is not None:
        keys = pa.table(
            {
                _Q: np.repeat(np.arange(copies), len(values)).astype(str),
                _S: np.tile(np.asarray(values), copies),
            }
        )
        cells = domain.cell_index(keys, [_Q, _S])
        return np.asarray(r.released_counts[cells]).reshape(copies, -1)
    grid = np.zeros((copies, len(values)), dtype=np.int64)
    if r.domain == "local":  # (class, declared value), by class id
        grid[_ints(table.classes.keys.column(_Q))] = r.released_counts.reshape(-1, len(values))
    else:  # the observed combinations, by row of the table
        keys = table.keys
        grid[_ints(keys.column(_Q)), _ints(keys.column(_S))] = r.released_counts
    return grid


def _ints(column: pa.ChunkedArray) -> NDArray[Any]:
    """Whole numbers written as text, as numbers."""
    return np.asarray(pc.cast(column, pa.int64()).to_numpy())


@dataclass(frozen=True)
class _Event:
    """The events ``{x >= t1 and y <= t2}`` of one statistic in one direction.

    ``x``, ``y``: the statistic (times ``sign``) on the dataset the event favours;
    ``x_other``, ``y_other``: on the other one. ``sign = -1`` turns the events into
    ``{x <= -t1 and y >= -t2}`` of the statistic as released.
    """

    pair: str
    x_name: str
    y_name: str | None
    sign: int
    favoured: str
    other: str
    x: NDArray[Any]
    y: NDArray[Any]
    x_other: NDArray[Any]
    y_other: NDArray[Any]

    def thresholds(self, part: slice) -> tuple[NDArray[Any], NDArray[Any]]:
        """The thresholds tried: the values ``part`` of the samples takes."""
        return (
            _candidates(np.concatenate([self.x[part], self.x_other[part]])),
            _candidates(np.concatenate([self.y[part], self.y_other[part]])),
        )

    def hits(
        self, part: slice, tx: NDArray[Any], ty: NDArray[Any]
    ) -> tuple[NDArray[Any], NDArray[Any]]:
        """How often each event ``(tx[i], ty[j])`` happened on ``part`` of the samples of
        the favoured dataset and of the other."""
        return (
            _grid(self.x[part], self.y[part], tx, ty),
            _grid(self.x_other[part], self.y_other[part], tx, ty),
        )

    def words(self, t1: int, t2: int) -> str:
        """The event ``(t1, t2)`` in words."""
        up, down = (">=", "<=") if self.sign > 0 else ("<=", ">=")
        text = f"{self.x_name} {up} {self.sign * t1}"
        if self.y_name is not None:
            text += f" and {self.y_name} {down} {self.sign * t2}"
        return f"{self.pair}: {text}, {self.favoured} against {self.other}"


#: A statistic of the released counts of a pair's cells (one row a sample): ``(x, y)``.
_Statistic: TypeAlias = Callable[[NDArray[Any]], tuple[NDArray[Any], NDArray[Any]]]


def _events(pair: _Pair, on_d: NDArray[Any], on_other: NDArray[Any]) -> list[_Event]:
    """The events searched on one pair's samples: thresholds on the count of the cell the
    person is in, and with a second cell on the count of the cell they leave or on the
    difference of the two, each way round."""
    change = np.subtract(pair.with_person, pair.without)
    gains, leaves = int(np.flatnonzero(change > 0)[0]), np.flatnonzero(change < 0)
    zeros = np.zeros(len(on_d), dtype=np.int64)
    person = "the released count of the person's cell"
    statistics: list[tuple[str, str | None, _Statistic]]
    if not leaves.size:
        statistics = [(person, None, lambda grid: (grid[:, gains], zeros))]
    else:
        left = int(leaves[0])
        statistics = [
            (person, "that of the cell they leave", lambda grid: (grid[:, gains], grid[:, left])),
            (
                f"{person} less that of the cell they leave",
                None,
                lambda grid: (grid[:, gains] - grid[:, left], zeros),
            ),
        ]
    events = []
    for x_name, y_name, statistic in statistics:
        (x, y), (x_other, y_other) = statistic(on_d), statistic(on_other)
        names = (pair.name, x_name, y_name)
        events += [
            _Event(*names, 1, pair.first, pair.second, x, y, x_other, y_other),
            _Event(*names, -1, pair.second, pair.first, -x_other, -y_other, -x, -y),
        ]
    return events


def _candidates(values: NDArray[Any]) -> NDArray[Any]:
    """The distinct values, or :data:`_MAX_THRESHOLDS` quantiles of them."""
    distinct = np.unique(values)
    if len(distinct) <= _MAX_THRESHOLDS:
        return distinct
    return np.unique(np.quantile(values, np.linspace(0, 1, _MAX_THRESHOLDS), method="lower"))


def _grid(x: NDArray[Any], y: NDArray[Any], tx: NDArray[Any], ty: NDArray[Any]) -> NDArray[Any]:
    """``counts[i, j] = #{x >= tx[i] and y <= ty[j]}`` for sorted thresholds, in one pass.

    >>> _grid(np.array([0, 1, 2]), np.array([0, 0, 1]), np.array([1, 2]), np.array([0, 1]))
    array([[1, 2],
           [0, 1]])
    """
    ix = np.searchsorted(tx, x, side="right")  # x >= tx[i] exactly when i < ix
    iy = np.searchsorted(ty, y, side="left")  # y <= ty[j] exactly when j >= iy
    shape = (len(tx) + 1, len(ty) + 1)
    histogram = np.bincount(ix * shape[1] + iy, minlength=shape[0] * shape[1]).reshape(shape)
    above = np.cumsum(histogram[::-1], axis=0)[::-1][1:]  # rows i: sum over ix > i
    return np.cumsum(above, axis=1)[:, : len(ty)]  # columns j: sum over iy <= j


def _bound(
    events: list[_Event],
    score: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[Any]],
    samples: int,
    alpha: float,
) -> AuditBound:
    """Pick the event whose bound ``score(p_low, p_up)`` is largest on the first half of
    the samples, and bound it on the second half."""
    half = samples // 2
    first = slice(0, half)
    chosen: tuple[float, _Event, int, int] | None = None
    for event in events:
        tx, ty = event.thresholds(first)
        on, off = event.hits(first, tx, ty)
        values = score(clopper_pearson(on, half, alpha)[0], clopper_pearson(off, half, alpha)[1])
        i, j = np.unravel_index(int(np.argmax(values)), values.shape)
        if chosen is None or values[i, j] > chosen[0]:
            chosen = (float(values[i, j]), event, int(tx[i]), int(ty[j]))
    assert chosen is not None  # every pair has events
    _, event, t1, t2 = chosen
    rest, trials = slice(half, None), samples - half
    counts = event.hits(rest, np.array([t1]), np.array([t2]))
    hits, hits_other = int(counts[0][0, 0]), int(counts[1][0, 0])
    low = clopper_pearson(hits, trials, alpha)[0]
    high = clopper_pearson(hits_other, trials, alpha)[1]
    return AuditBound(
        value=float(score(low, high)),
        event=event.words(t1, t2),
        hits=hits,
        trials=trials,
        hits_other=hits_other,
        trials_other=trials,
    )
