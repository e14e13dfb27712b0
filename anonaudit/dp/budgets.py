"""A dataset's budget over its recorded releases: one relation, one unit, composed tightly.

A privacy budget means something only for one neighbouring relation and one privacy
unit (:mod:`anonaudit.dp.sensitivity`): "ε 2 under add-remove, one person" bounds what
an attacker learns of a person's presence; "ε 2 under replace" only of a present
person's value. Releases stated for other relations or units are *converted* into the
budget's where a sound conversion exists, and count as infinite where none does
(:func:`convert`):

* the same relation and unit: as recorded;
* a release stated per person (``--privacy-unit COL``) bounds each of that person's
  records too: a budget per record takes it as recorded (a change of one record is a
  change of one person's records);
* add-remove to replace: a replace change is one removal and one addition. For a
  histogram over a public domain the count vector moves by the replace sensitivity
  (``||Δx||_1 <= 2m``, ``||Δx||_2 <= √2 m``), so the release's own noise is accounted
  on those shifts, exactly; otherwise (a stability threshold over observed keys) by group
  privacy, (2ε, (1 + e^ε) δ) and 4ρ (:func:`~anonaudit.dp.accounting.group_of_two`);
* replace to add-remove: none. A replace guarantee says nothing of presence, and
  randomized response publishes every class size exactly (5 with a person, 4 without):
  the release counts as infinite under add-remove;
* a budget per person from a release per record (or per another unit): none, since a
  person's records are unbounded; infinite.

Converted costs compose by the privacy-loss-distribution (PLD) accountant of Google's
``dp-accounting`` (Koskela, Jälkö & Honkela 2020, "Computing tight differential privacy
guarantees using FFT", AISTATS; Doroshenko et al. 2022): each release contributes the
PLD of its noise on its worst neighbouring pair, or for a release known only by its ε
the pair that dominates every ε-DP mechanism (Kairouz, Oh & Viswanath 2015, Theorem
3.4). A stability threshold's δ is a probability of infinite loss; these add to the δ
at which the composed PLD is read (a sound bound: the pairs (noise PLD, infinite mass δ)
dominate each release, and dominating pairs compose; Zhu, Dong & Wang 2022, "Optimal
accounting of differential privacy via characteristic function", AISTATS, Theorem 10).
The plain sum (pure ε added, Gaussian ρ added and converted by zCDP) is kept as the
bound where it is tighter, so the total is never above it.

Example: 100 releases at ε = 0.1 known only by their ε total 10 by the sum, 4.77 at
δ = 1e-6 by PLD:

>>> release = Recorded("any", PrivacyCost(epsilon=0.1), "add-remove", None, 1, None)
>>> spend = compose([release] * 100, relation="add-remove", unit=None, delta=1e-6)
>>> round(spend.epsilon_sum, 2), round(spend.epsilon, 2), spend.method
(10.0, 4.77, 'pld')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anonaudit.dp.accounting import PrivacyCost, group_of_two, loss_distribution, sequential
from anonaudit.dp.sensitivity import histogram_sensitivity
from anonaudit.settings.names import ADDITIVE, NEIGHBOURING, Mechanism

__all__ = ["Converted", "Recorded", "Spend", "compose", "convert", "stated_delta", "unit_name"]

_LAPLACE = ("discrete-laplace", "laplace")
#: A release's PLD: mechanism (``None``: any ε-DP mechanism), scale, per-cell shifts.
_Spec = tuple[Mechanism | None, float, tuple[int, ...]]


def unit_name(unit: str | None) -> str:
    """A privacy unit as printed: ``one record``, or ``one value of COL``."""
    return "one record" if unit is None else f"one value of {unit}"


@dataclass(frozen=True)
class Recorded:
    """A DP release as a budget sees it: what rebuilds its privacy loss.

    Attributes
    ----------
    mechanism : str
        Its mechanism (``"any"``: known only by its cost).
    cost : PrivacyCost
        What it spent, in its own relation and unit.
    neighbouring : {"add-remove", "replace"} or None
        The relation it is stated for; ``None`` when not recorded (ledgers before
        schema 5).
    privacy_unit : str or None
        The column naming a person, or ``None``: one record.
    max_contributions : int
        Records one unit may have.
    noise_scale : float or None
        The noise scale (``b``, ``σ``); ``None`` when not recorded.
    public_domain : bool
        Whether every count of a public domain was released (no stability threshold).
    stated_delta : float
        The δ it was stated at (its threshold's, or its Gaussian noise's).
    """

    mechanism: Mechanism | str
    cost: PrivacyCost
    neighbouring: str | None
    privacy_unit: str | None
    max_contributions: int
    noise_scale: float | None
    public_domain: bool = False
    stated_delta: float = 0.0

    @classmethod
    def from_parameters(
        cls, mechanism: str, cost: PrivacyCost, parameters: Mapping[str, Any] | None
    ) -> Recorded:
        """From a ledger entry's mechanism, cost and parameters (schema 5)."""
        p = parameters or {}
        sensitivity = p.get("sensitivity") or {}
        scale = p.get("noise_scale")
        return cls(
            mechanism=mechanism,
            cost=cost,
            neighbouring=p.get("neighbouring"),
            privacy_unit=p.get("privacy_unit"),
            max_contributions=int(sensitivity.get("max_contributions", 1)),
            noise_scale=None if scale is None else float(scale),
            public_domain=p.get("domain") == "public",
            stated_delta=float(p.get("stated_delta", cost.delta)),
        )


@dataclass(frozen=True)
class Converted:
    """A release's cost in a budget's relation and unit (:func:`convert`).

    Attributes
    ----------
    cost : PrivacyCost
        The cost for the plain sum; ε = inf when no conversion exists.
    pld : tuple or None
        ``(mechanism, scale, shifts)`` of :func:`~anonaudit.dp.accounting.
        loss_distribution` (mechanism ``None``: any ε-DP mechanism at ε = scale);
        ``None`` when the release has no PLD here (the sum is then the bound).
    delta : float
        A probability of infinite loss (a stability threshold's), added to the δ.
    how : str
        How it was converted, or why it could not be.
    """

    cost: PrivacyCost
    pld: _Spec | None
    delta: float
    how: str

    @property
    def covered(self) -> bool:
        """Whether the release has a finite cost in the budget's relation and unit."""
        return math.isfinite(self.cost.epsilon)


def _own_pld(r: Recorded, relation: str) -> _Spec | None:
    """The release's noise on its worst pair under ``relation`` (add-remove, or replace
    from add-remove over a public domain, or as stated)."""
    if r.mechanism == "randomized-response":
        m = r.max_contributions
        return (None, r.cost.epsilon / m, (1,) * m)
    if r.mechanism not in ADDITIVE or r.noise_scale is None:
        return (None, r.cost.epsilon, (1,)) if r.cost.pure else None
    mechanism: Mechanism = r.mechanism
    s = histogram_sensitivity(relation, max_contributions=r.max_contributions)  # type: ignore[arg-type]
    return (mechanism, r.noise_scale, s.shifts(laplace=mechanism in _LAPLACE))


def convert(r: Recorded, *, relation: str | None, unit: str | None) -> Converted:
    """``r``'s cost in a budget stated for ``relation`` and ``unit`` (module docstring).

    Parameters
    ----------
    r : Recorded
        The release.
    relation : {"add-remove", "replace"} or None
        The budget's neighbouring relation; ``None``: each release's own, as recorded.
    unit : str or None
        The budget's privacy unit (a column), or ``None``: one record.

    Returns
    -------
    Converted
        With ε = inf and the reason in ``how`` when no sound conversion exists.
    """
    if relation is not None and relation not in NEIGHBOURING:
        raise ValueError(f"unknown relation {relation!r}")
    infinite = PrivacyCost(epsilon=math.inf)
    if not math.isfinite(r.cost.epsilon):
        return Converted(infinite, None, 0.0, "an exact release, not differentially private")
    if unit is not None and r.privacy_unit != unit:
        own = unit_name(r.privacy_unit)
        return Converted(
            infinite,
            None,
            0.0,
            f"stated for {own}, not {unit_name(unit)}: a person's records are unbounded",
        )
    unit_note = "" if r.privacy_unit == unit else f" (stated for {unit_name(r.privacy_unit)})"
    stated = r.neighbouring
    if stated is None and r.mechanism == "randomized-response":
        stated = "replace"
    if stated == relation or relation is None:
        pld = None if stated is None else _own_pld(r, stated)
        return Converted(r.cost, pld, r.cost.delta, "as recorded" + unit_note)
    if relation == "add-remove":
        why = (
            "stated for replace neighbours, which do not protect presence"
            if stated == "replace"
            else "recorded without its neighbouring relation (a ledger before schema 5)"
        )
        if r.mechanism == "randomized-response":
            why += "; randomized response publishes every class size exactly"
        return Converted(infinite, None, 0.0, why)
    # add-remove (or unrecorded, which is at worst add-remove) to replace
    doubled = group_of_two(r.cost)
    if stated == "add-remove" and r.public_domain and r.cost.delta == 0:
        return Converted(
            doubled,
            _own_pld(r, "replace"),
            0.0,
            "a replace change of the histogram: its noise on the replace sensitivity" + unit_note,
        )
    pld = (None, doubled.epsilon, (1,)) if doubled.rho == 0 else None
    return Converted(
        doubled,
        pld,
        doubled.delta,
        "two add-remove steps (group privacy, Dwork & Roth 2014, Theorem 2.2)" + unit_note,
    )


@dataclass(frozen=True)
class Spend:
    """What releases spent in one relation and unit (:func:`compose`).

    Attributes
    ----------
    relation : str
        The neighbouring relation (``unrecorded``: each release's own, unknown).
    unit : str or None
        The privacy unit (``None``: one record).
    releases : int
        How many releases.
    cost : PrivacyCost
        Their converted costs added (pure ε, ρ and the thresholds' δ).
    delta : float
        The δ at which :attr:`epsilon` is stated.
    epsilon : float
        The total ε at :attr:`delta`: the smaller of the PLD and the plain sum; inf when
        a release has no cost in this relation and unit, or the thresholds' δ reaches
        :attr:`delta`.
    epsilon_sum : float
        The plain sum, converted at :attr:`delta`.
    epsilon_pld : float or None
        The PLD total, when every release has a PLD here.
    delta_spent : float
        The releases' own δ (their thresholds', converted), added: the total is finite
        only below :attr:`delta`.
    uncovered : tuple of str
        Why each release without a finite cost here has none.
    """

    relation: str
    unit: str | None
    releases: int
    cost: PrivacyCost
    delta: float
    epsilon: float
    epsilon_sum: float
    epsilon_pld: float | None
    delta_spent: float
    uncovered: tuple[str, ...]

    @property
    def method(self) -> str:
        """``pld`` or ``sum``: which bound :attr:`epsilon` is."""
        pld = self.epsilon_pld
        return "pld" if pld is not None and pld < self.epsilon_sum else "sum"


def compose(
    releases: Sequence[Recorded], *, relation: str | None, unit: str | None, delta: float
) -> Spend:
    """The releases' total ε at ``delta`` in ``relation`` and ``unit`` (module docstring).

    Examples
    --------
    Randomized response (replace) and a discrete Laplace release (add-remove), each at
    ε = 1, total 3 for a present person's value and have no total under add-remove:

    >>> rr = Recorded("randomized-response", PrivacyCost(epsilon=1.0), "replace", None, 1, 0.6)
    >>> dl = Recorded("discrete-laplace", PrivacyCost(epsilon=1.0), "add-remove", None, 1, 1.0,
    ...               public_domain=True)
    >>> compose([rr, dl], relation="replace", unit=None, delta=0.0).epsilon
    3.0
    >>> compose([rr, dl], relation="add-remove", unit=None, delta=0.0).uncovered[0][:25]
    'stated for replace neighb'
    """
    converted = [convert(r, relation=relation, unit=unit) for r in releases]
    uncovered = tuple(c.how for c in converted if not c.covered)
    total = sequential(PrivacyCost(), *(c.cost for c in converted))
    epsilon_sum = total.epsilon_at(delta)
    epsilon_pld = None
    margin = delta - sum(c.delta for c in converted)
    if not uncovered and converted and margin >= 0:
        specs = [c.pld for c in converted]
        if all(spec is not None for spec in specs):
            epsilon_pld = _pld_total([s for s in specs if s is not None], margin)
    best = epsilon_sum if epsilon_pld is None else min(epsilon_sum, epsilon_pld)
    return Spend(
        relation=relation or "unrecorded",
        unit=unit,
        releases=len(releases),
        cost=total,
        delta=delta,
        epsilon=math.inf if uncovered else best,
        epsilon_sum=epsilon_sum,
        epsilon_pld=epsilon_pld,
        delta_spent=delta - margin,
        uncovered=uncovered,
    )


def _pld_total(specs: Sequence[_Spec], delta: float) -> float:
    """ε at ``delta`` of the composed PLDs (``inf`` where ``delta`` is 0 and a release is
    not pure)."""
    total = None
    for mechanism, scale, shifts in specs:
        if scale == 0:
            continue
        part = loss_distribution(mechanism, scale=scale, shifts=shifts)
        total = part if total is None else total.compose(part)
    if total is None:
        return 0.0
    return float(total.get_epsilon_for_delta(delta))


def stated_delta(releases: Sequence[Recorded], relation: str) -> float:
    """The δ at which to state the releases' total in ``relation``: their stated δ
    added, an add-remove release's as group privacy makes it for ``replace``
    (``(1 + e^ε) δ``, Dwork & Roth 2014, Theorem 2.2)."""
    return sum(
        (1 + math.exp(r.cost.epsilon)) * r.stated_delta
        if relation == "replace" and r.neighbouring == "add-remove"
        else r.stated_delta
        for r in releases
    )
