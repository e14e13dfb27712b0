"""The options of a DP release, grouped in small frozen objects, validated once.

A release is configured the way OpenDP's context API configures one
(``opendp.context.Context.compositor(data, privacy_unit=dp.unit_of(contributions=1),
privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6), ...)``): by what it guarantees and whom
it protects, then by how it is made. Each group is a frozen dataclass that checks its
values when it is made, with the one message of a bad option of :mod:`anonaudit.settings.options`
(``NAME must REQUIREMENT (got VALUE)``, an :class:`~anonaudit.errors.OptionError`):

- :class:`PrivacyGuarantee`: the (ε, δ) the release must meet (OpenDP's
  ``dp.loss_of(epsilon=..., delta=...)``);
- :class:`PrivacyUnit`: what one person is (a row, or the rows sharing a value of a unit
  column, at most ``contributions`` of them) and which datasets count as neighbours
  (OpenDP's ``dp.unit_of(contributions=..., identifier=...)``);
- :class:`DPOptions`: both, with the mechanism, the public domain, the SA randomized
  response randomizes, the caller's budget, the largest domain and the post-processing.

:func:`~anonaudit.dp.companion` and :func:`~anonaudit.dp.release` take a
:class:`DPOptions`, :func:`~anonaudit.dp.load_bounded` and
:func:`~anonaudit.dp.bound_contributions` a :class:`PrivacyUnit`. The flat keyword
arguments of earlier versions (``epsilon=``, ``max_contributions=``, ``privacy_unit=``,
...) are mapped onto these objects in one place (:func:`from_keywords`) and keep working
with a :class:`DeprecationWarning` until 0.3.

The name :class:`PrivacyGuarantee` (not OpenDP's "privacy loss") keeps apart the bound a
release must meet from the privacy loss random variable it has
(:class:`anonaudit.dp.plrv.PrivacyLoss`, :attr:`anonaudit.dp.DPReport.privacy_loss`).

Examples
--------
>>> options = DPOptions(PrivacyGuarantee(1.0, 1e-6),
...                     unit=PrivacyUnit(column="patient", contributions=3))
>>> options.guarantee.delta, options.unit.contributions, options.mechanism
(1e-06, 3, 'discrete-laplace')
>>> PrivacyGuarantee(0.0)
Traceback (most recent call last):
...
anonaudit.errors.OptionError: epsilon must be a positive number from 1e-06 to 100 (got 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from anonaudit.dp.accounting import Budget
from anonaudit.dp.domain import MAX_CELLS, PublicDomain
from anonaudit.dp.sensitivity import MAX_CONTRIBUTIONS
from anonaudit.errors import OptionError, ParameterError
from anonaudit.errors import number as _number
from anonaudit.errors import one_of as _one_of
from anonaudit.errors import require as _require
from anonaudit.settings.names import (
    MECHANISMS,
    NEIGHBOURING,
    POSTPROCESS,
    Mechanism,
    Neighbouring,
    Postprocess,
)
from anonaudit.settings.options import EngineOptions, ReadOptions, Roles
from anonaudit.settings.options import from_keywords as audit_keywords

__all__ = [
    "EPSILON_RANGE",
    "MIN_DELTA",
    "DPOptions",
    "Keywords",
    "PrivacyGuarantee",
    "PrivacyUnit",
    "check_keywords",
    "from_keywords",
]

#: Accepted range of ε: below, the noise swamps any count; above, no attacker is bounded
#: (``e^ε`` overflows a double near ε = 709).
EPSILON_RANGE = (1e-6, 100.0)
#: Smallest δ accepted (above 0): smaller values are below what the noise tails resolve.
MIN_DELTA = 1e-100


@dataclass(frozen=True)
class PrivacyGuarantee:
    """The (ε, δ)-differential privacy a release must meet.

    OpenDP's context states it as ``privacy_loss=dp.loss_of(epsilon=..., delta=...)``
    (``opendp.context.loss_of``): the largest privacy loss allowed. ε is the total of the
    release; δ the additive slack of the ε bound on the probability of every output
    (the chance that a posterior bound at ε fails may be larger:
    :attr:`~anonaudit.dp.release.Release.value_failure`).

    Parameters
    ----------
    epsilon : float
        Total ε, from ``1e-06`` to 100 (:data:`EPSILON_RANGE`); common choices lie
        between 0.1 and 2.
    delta : float, optional
        δ, in ``[1e-100, 1)`` or 0 (:data:`MIN_DELTA`); ``None`` or 0 asks for pure
        ε-DP, which needs a public domain for every QI and SA. Choose it well below
        ``1/n`` for ``n`` records, e.g. ``1e-6``.

    Examples
    --------
    >>> PrivacyGuarantee(1.0).pure, PrivacyGuarantee(1.0, 1e-6).pure
    (True, False)
    >>> PrivacyGuarantee(1.0, 1.5)
    Traceback (most recent call last):
    ...
    anonaudit.errors.OptionError: delta must be 0 or lie in [1e-100, 1) (got 1.5)
    """

    epsilon: float
    delta: float | None = None

    def __post_init__(self) -> None:
        low, high = EPSILON_RANGE
        epsilon, delta = self.epsilon, self.delta
        _require(_number(epsilon) and low <= epsilon <= high, "epsilon",
                 f"be a positive number from {low:g} to {high:g}", epsilon)  # fmt: skip
        if delta is not None:
            ok = _number(delta) and (delta == 0 or MIN_DELTA <= delta < 1)
            _require(ok, "delta", f"be 0 or lie in [{MIN_DELTA:g}, 1)", delta)

    @property
    def pure(self) -> bool:
        """Whether pure ε-DP is asked for (δ ``None`` or 0)."""
        return not self.delta


@dataclass(frozen=True, kw_only=True)
class PrivacyUnit:
    """What the guarantee protects: one person, and which datasets are neighbours.

    OpenDP's context states the unit as ``privacy_unit=dp.unit_of(contributions=m)``
    (``opendp.context.unit_of``): its ``identifier=`` names the column of a person's id,
    as ``column`` does here, and its ``changes=m`` (instead of ``contributions=m``) asks
    for replace neighbours, as ``neighbouring="replace"`` does here.

    Parameters
    ----------
    column : str, optional
        The column identifying a person who may have several rows (a patient id).
        :func:`~anonaudit.dp.load_bounded` reads it once and keeps at most
        ``contributions`` rows of each person; it is never released. ``None``: a person is
        a row, or the table given is bounded already.
    contributions : int
        ``m``, the records one person may have, from 1 to 1,000,000. The sensitivity of
        the released counts scales with it (:mod:`anonaudit.dp.sensitivity`).
    neighbouring : {"add-remove", "replace"}, optional
        Neighbouring datasets: one person added or removed (the number of records is
        private), or one person's records replaced (the number is public). ``None``: the
        mechanism's own, ``add-remove`` for additive noise and ``replace`` of the value for
        randomized response.

    Examples
    --------
    >>> PrivacyUnit(column="patient", contributions=3)
    PrivacyUnit(column='patient', contributions=3, neighbouring=None)
    >>> PrivacyUnit(contributions=0)
    Traceback (most recent call last):
    ...
    anonaudit.errors.OptionError: contributions must be a whole number from 1 to 1,000,000 (got 0)
    """

    column: str | None = None
    contributions: int = 1
    neighbouring: Neighbouring | None = None

    def __post_init__(self) -> None:
        column, m = self.column, self.contributions
        if column is not None:
            _require(isinstance(column, str) and column != "", "column",
                     "be a column name", column)  # fmt: skip
        whole = isinstance(m, int) and not isinstance(m, bool)
        _require(whole and 1 <= m <= MAX_CONTRIBUTIONS, "contributions",
                 f"be a whole number from 1 to {MAX_CONTRIBUTIONS:,}", m)  # fmt: skip
        if self.neighbouring is not None:
            _one_of(self.neighbouring, "neighbouring", NEIGHBOURING)


#: Why ``postprocess="unbiased"`` is refused (:class:`DPOptions` and
#: :func:`~anonaudit.dp.release.release`, which knows the table's columns).
UNBIASED_NEEDS_A_DOMAIN = (
    "--postprocess unbiased keeps the negative noisy counts of an additive release over a "
    "public domain; declare --public-domain for every QI and SA (domain= in Python), or keep "
    "the default clamp"
)


@dataclass(frozen=True)
class DPOptions:
    """How a class table is released under differential privacy.

    Parameters
    ----------
    guarantee : PrivacyGuarantee
        The (ε, δ) to meet.
    unit : PrivacyUnit
        Whom it protects (default: one row, add-remove neighbours).
    mechanism : str
        ``discrete-laplace`` (default), ``discrete-gaussian``, ``laplace``,
        ``gaussian`` (the continuous ones are rounded afterwards) or
        ``randomized-response`` (:data:`~anonaudit.dp.mechanisms.MECHANISMS`).
    domain : PublicDomain, optional
        Declared values of the QIs and SAs: with every one declared, every cell of their
        product is released (pure ε-DP possible); otherwise the observed combinations
        above a stability threshold, which needs δ.
    sensitive : str, optional
        The SA that randomized response randomizes (default: the only SA).
    budget : Budget, optional
        Refuse (:class:`~anonaudit.errors.BudgetError`) a release that does not fit it.
    max_cells : int
        Largest public domain accepted (cells of the product).
    postprocess : {"clamp", "unbiased"}
        What becomes of the rounded noisy counts over a public domain: negatives set to
        0 (``clamp``, default), or kept so that every count's mean is the true count
        (``unbiased``: needs an additive mechanism and a public domain).

    Raises
    ------
    OptionError
        A value out of its range or not one of its choices.
    ParameterError
        Options that contradict each other (randomized response with add-remove
        neighbours, ``unbiased`` without a public domain).

    Examples
    --------
    >>> DPOptions(PrivacyGuarantee(1.0), mechanism="exponential")
    Traceback (most recent call last):
    ...
    anonaudit.errors.OptionError: unknown mechanism 'exponential'; choose one of \
discrete-laplace, discrete-gaussian, laplace, gaussian, randomized-response
    """

    guarantee: PrivacyGuarantee
    _: KW_ONLY
    unit: PrivacyUnit = field(default_factory=PrivacyUnit)
    mechanism: Mechanism = "discrete-laplace"
    domain: PublicDomain | None = None
    sensitive: str | None = None
    budget: Budget | None = None
    max_cells: int = MAX_CELLS
    postprocess: Postprocess = "clamp"

    def __post_init__(self) -> None:
        _require(isinstance(self.guarantee, PrivacyGuarantee), "guarantee",
                 "be a PrivacyGuarantee(epsilon, delta)", self.guarantee)  # fmt: skip
        _require(isinstance(self.unit, PrivacyUnit), "unit",
                 "be a PrivacyUnit(column=..., contributions=...)", self.unit)  # fmt: skip
        _one_of(self.mechanism, "mechanism", MECHANISMS)
        _one_of(self.postprocess, "postprocess", POSTPROCESS)
        if self.domain is not None:
            _require(isinstance(self.domain, PublicDomain), "domain",
                     "be a PublicDomain", self.domain)  # fmt: skip
        if self.sensitive is not None:
            _require(isinstance(self.sensitive, str), "sensitive",
                     "be a column name", self.sensitive)  # fmt: skip
        if self.budget is not None:
            _require(isinstance(self.budget, Budget), "budget", "be a Budget", self.budget)
        cells = self.max_cells
        whole = isinstance(cells, int) and not isinstance(cells, bool)
        _require(whole and cells >= 1, "max_cells", "be a whole number >= 1", cells)
        local = self.mechanism == "randomized-response"
        if local and self.unit.neighbouring == "add-remove":
            raise ParameterError(
                "randomized response protects each record's sensitive value (neighbouring "
                "'replace'), not whether a record is present; use an additive mechanism"
            )
        if self.postprocess == "unbiased" and (local or self.domain is None):
            raise ParameterError(UNBIASED_NEEDS_A_DOMAIN)

    @property
    def epsilon(self) -> float:
        """The guarantee's ε."""
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        """The guarantee's δ (0 for pure ε-DP)."""
        return float(self.guarantee.delta or 0.0)


# --------------------------------------------------------------------------- flat keywords

#: The flat keyword arguments :func:`~anonaudit.dp.companion` and
#: :func:`~anonaudit.dp.release` took before :class:`DPOptions`.
RELEASE_KEYWORDS = (
    "epsilon",
    "delta",
    "mechanism",
    "domain",
    "neighbouring",
    "max_contributions",
    "sensitive",
    "budget",
    "max_cells",
    "postprocess",
)
#: ... :func:`~anonaudit.dp.bound_contributions` before :class:`PrivacyUnit`.
BOUND_KEYWORDS = ("privacy_unit", "max_contributions")
#: ... :func:`~anonaudit.dp.load_bounded` before Roles, PrivacyUnit, ReadOptions and
#: EngineOptions.
LOAD_BOUNDED_KEYWORDS = (
    "quasi_identifiers",
    "sensitive",
    *BOUND_KEYWORDS,
    "sep",
    "encoding",
    "na_values",
    "progress",
    "decimal_comma",
)
#: What to pass instead, for the deprecation warnings.
INSTEAD = {
    "release": "pass DPOptions(PrivacyGuarantee(epsilon, delta), unit=PrivacyUnit(...), ...)",
    "bound_contributions": "pass PrivacyUnit(column=..., contributions=...)",
    "load_bounded": "pass Roles, PrivacyUnit(column=..., contributions=...), ReadOptions, "
    "EngineOptions",
}
#: The old keyword of each option an object now holds, for the messages of bad values.
_OLD_NAMES = {"contributions": "max_contributions", "column": "privacy_unit"}
#: The keywords of :class:`DPOptions` beside its guarantee and unit.
_RELEASE_REST = ("mechanism", "domain", "sensitive", "budget", "max_cells", "postprocess")
#: The keywords of :class:`~anonaudit.settings.options.ReadOptions` and
#: :class:`~anonaudit.settings.options.EngineOptions` that ``load_bounded`` took.
_READING = ("sep", "encoding", "na_values", "progress", "decimal_comma")


@dataclass(frozen=True)
class Keywords:
    """Flat keyword arguments split into option objects (:func:`from_keywords`).

    Attributes
    ----------
    options : DPOptions or None
        With ``epsilon`` among the keywords (``companion`` and ``release``).
    unit : PrivacyUnit
    roles : Roles or None
        With ``quasi_identifiers`` among the keywords (``load_bounded``).
    reading : ReadOptions
    engine : EngineOptions
    """

    options: DPOptions | None
    unit: PrivacyUnit
    roles: Roles | None
    reading: ReadOptions
    engine: EngineOptions


def check_keywords(function: str, keywords: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Refuse, as Python refuses a function's arguments, a keyword ``function`` never took
    or a required one missing (before the deprecation warning: there is nothing to
    migrate)."""
    for name in keywords:
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
    for name in ("epsilon", "privacy_unit", "quasi_identifiers"):
        if name in allowed and name not in keywords:
            raise TypeError(f"{function}() missing required keyword argument: {name!r}")


def from_keywords(function: str, keywords: Mapping[str, Any], allowed: Sequence[str]) -> Keywords:
    """The flat keyword arguments of earlier versions as option objects: the one place
    they are mapped.

    Parameters
    ----------
    function : str
        The function called, for the messages (``"companion"``).
    keywords : mapping
        The keyword arguments given: among :data:`RELEASE_KEYWORDS` (``epsilon`` needed),
        :data:`BOUND_KEYWORDS` or :data:`LOAD_BOUNDED_KEYWORDS` (``privacy_unit`` and
        ``quasi_identifiers`` needed).
    allowed : sequence of str
        The keywords ``function`` took.

    Returns
    -------
    Keywords

    Raises
    ------
    TypeError
        A keyword ``function`` never took, or a required one missing, as for a
        function's arguments.
    OptionError
        A value an option refuses, named by its old keyword (``max_contributions``).

    Examples
    --------
    >>> split = from_keywords("release", {"epsilon": 1.0, "max_contributions": 2},
    ...                       RELEASE_KEYWORDS)
    >>> split.options.guarantee, split.options.unit.contributions
    (PrivacyGuarantee(epsilon=1.0, delta=None), 2)
    """
    check_keywords(function, keywords, allowed)
    given = dict(keywords)
    try:
        unit = PrivacyUnit(
            column=given.get("privacy_unit"),
            contributions=given.get("max_contributions", 1),
            neighbouring=given.get("neighbouring"),
        )
        options = None
        if "epsilon" in allowed:
            guarantee = PrivacyGuarantee(given["epsilon"], given.get("delta"))
            rest = {name: given[name] for name in _RELEASE_REST if name in given}
            options = DPOptions(guarantee, unit=unit, **rest)
        reading = {name: given[name] for name in _READING if name in given}
        split = audit_keywords(reading, quasi_identifiers=(), sensitive=())
    except OptionError as error:
        old = _OLD_NAMES.get(error.option, error.option)
        raise OptionError(
            old, error.value, requirement=error.requirement, choices=error.choices
        ) from None
    roles = None
    if "quasi_identifiers" in allowed:
        roles = Roles(given["quasi_identifiers"], given.get("sensitive", ()))
    return Keywords(
        options=options, unit=unit, roles=roles, reading=split.reading, engine=split.engine
    )
