"""The companion report: one DP release of the class table, contrasted with the audit.

:func:`companion` releases the class table (:mod:`~anonaudit.dp.release`), states its
cost (:mod:`~anonaudit.dp.accounting`), describes its privacy loss
(:mod:`~anonaudit.dp.plrv`), measures what the noise costs
(:mod:`~anonaudit.dp.utility`) and sets, per sensitive attribute, what the syntactic
release lets an attacker believe beside the ε-DP bound (:mod:`~anonaudit.dp.contrast`).
The result is one frozen :class:`DPReport`, rendered by :mod:`anonaudit.report.json`
(the ``dp`` section) and ready for an HTML section: :attr:`DPReport.curve` and each
:attr:`~anonaudit.dp.contrast.SensitiveContrast.scatter` are the prior-posterior chart,
:attr:`DPReport.profile` the δ(ε) chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import Accounting, account
from anonaudit.dp.attacker import released_prior
from anonaudit.dp.bounding import BoundedTable, resolve_unit
from anonaudit.dp.contrast import (
    AttackerContrast,
    PosteriorCurve,
    SensitiveContrast,
    attacker_contrast,
    contrast,
    posterior_curve,
)
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.options import (
    INSTEAD,
    RELEASE_KEYWORDS,
    DPOptions,
    check_keywords,
    from_keywords,
)
from anonaudit.dp.plrv import PrivacyLoss, privacy_loss
from anonaudit.dp.release import Postprocess, Release, release
from anonaudit.dp.selfaudit import SelfAudit
from anonaudit.dp.utility import ReaderMeasures, Utility, reader_measures, utility
from anonaudit.settings.options import deprecated

__all__ = ["DPReport", "companion"]

_PROFILE_POINTS = 41


@dataclass(frozen=True)
class DPReport:
    """A differentially private release beside the syntactic one.

    Attributes
    ----------
    release : Release
        The released class table and how it was made.
    accounting : Accounting
        Its cost: pure ε, ρ-zCDP, ε at δ by each method, the Rényi curve.
    privacy_loss : PrivacyLoss
        The privacy loss random variable on the worst neighbouring pair.
    profile : tuple of (float, float)
        ``(ε', δ(ε'))`` points of the privacy profile, the keys' δ included (an output
        showing a combination one person's records alone make has infinite loss).
    infinite_loss : float
        The chance of an output whose privacy loss is infinite: over the observed
        combinations, one that one person's records alone make shown (the stability
        threshold's δ, :func:`~anonaudit.dp.accounting.delta_threshold`); 0 over a
        public domain.
    utility : Utility
        Expected and observed error; classes hidden and fabricated.
    measures : ReaderMeasures
        k, l and t of the original table and of the released one.
    contrast : dict of str to SensitiveContrast
        Per SA: posterior, ε-DP posterior bound, pointwise maximal leakage, min-entropy,
        all at the ε of learning a present person's value
        (:attr:`~anonaudit.dp.release.Release.value_epsilon`).
    curve : PosteriorCurve
        The ε-DP posterior bound against the prior at that ε, for the chart.
    attackers : dict of str to AttackerContrast
        Per SA: the attacker who knows the QIs and the one who knows every other record,
        against both releases; equivalent ε, PML over priors, disclosure threshold.
    privacy_unit : str or None
        The column identifying a person, when contributions were bounded.
    bounded_records : int
        Records removed by contribution bounding (not released).
    domain : PublicDomain or None
        The declared public values the release was asked to cover.
    postprocess : {"clamp", "unbiased"}
        The post-processing asked for (:func:`~anonaudit.dp.release.release`).
    self_audit : SelfAudit or None
        What sampling the release code on worst-case neighbours showed of its claim
        (:func:`~anonaudit.dp.selfaudit.self_audit`), when it was asked for.
    """

    release: Release
    accounting: Accounting
    privacy_loss: PrivacyLoss
    profile: tuple[tuple[float, float], ...]
    infinite_loss: float
    utility: Utility
    measures: ReaderMeasures
    contrast: dict[str, SensitiveContrast]
    curve: PosteriorCurve
    attackers: dict[str, AttackerContrast]
    privacy_unit: str | None = None
    bounded_records: int = 0
    domain: PublicDomain | None = None
    postprocess: Postprocess = "clamp"
    self_audit: SelfAudit | None = None

    @property
    def epsilon(self) -> float:
        """Total ε at the release's δ."""
        return self.accounting.epsilon


def companion(
    data: ClassTable | BoundedTable, options: DPOptions | None = None, **keywords: Any
) -> DPReport:
    """Release ``data`` under DP and contrast it with the syntactic measures.

    Parameters
    ----------
    data : ClassTable or BoundedTable
        The class table; a :class:`~anonaudit.dp.bounding.BoundedTable` brings its
        privacy unit and contribution bound.
    options : DPOptions
        The guarantee, privacy unit, mechanism and the rest, as for
        :func:`~anonaudit.dp.release.release`.
    **keywords
        The flat keyword arguments of earlier versions (``epsilon=``, ``delta=``,
        ``mechanism=``, ``domain=``, ``neighbouring=``, ``max_contributions=`` (taken from
        a BoundedTable), ``sensitive=``, ``budget=``, ``max_cells=``, ``postprocess=``),
        deprecated: they stop working in 0.3.

    Returns
    -------
    DPReport

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.dp.domain import PublicDomain
    >>> from anonaudit.dp.options import PrivacyGuarantee
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["a", "a", "b"], "d": ["flu", "cold", "flu"], "count": [5, 5, 9]}),
    ...     quasi_identifiers=["zip"], sensitive=["d"])
    >>> domain = PublicDomain.of({"zip": ["a", "b"], "d": ["flu", "cold"]})
    >>> report = companion(t, DPOptions(PrivacyGuarantee(1.0), domain=domain))
    >>> report.epsilon, report.release.cells, report.contrast["d"].max_posterior
    (1.0, 4, 1.0)
    """
    if keywords:
        if options is not None:
            raise TypeError("give DPOptions or the deprecated keyword arguments, not both")
        check_keywords("companion", keywords, RELEASE_KEYWORDS)
        deprecated("companion", list(keywords), INSTEAD["release"])
        if isinstance(data, BoundedTable):  # as before: the table's bound, not the keyword
            keywords.pop("max_contributions", None)
        options = from_keywords("companion", keywords, RELEASE_KEYWORDS).options
    if not isinstance(options, DPOptions):
        raise TypeError(
            "companion() needs its options: companion(data, DPOptions(PrivacyGuarantee("
            "epsilon, delta), ...))"
        )
    _, unit, bounded = resolve_unit(data, options.unit)
    result = release(data, options)
    mechanism, domain, postprocess = options.mechanism, options.domain, options.postprocess
    if mechanism == "randomized-response":
        m = result.sensitivity.max_contributions
        scale, shifts = options.epsilon / m, (1,) * m
        assert domain is not None  # release() refuses randomized response without one
        categories = len(domain.values[result.original.sensitive[0]])
    else:
        scale = result.noise_scale
        shifts = result.sensitivity.shifts(laplace=mechanism in ("discrete-laplace", "laplace"))
        categories = 2
    accounting = account(
        result.cost,
        delta=result.delta,
        mechanism=mechanism,
        scale=scale,
        shifts=shifts,
        categories=categories,
    )
    loss = privacy_loss(mechanism, scale=scale, shifts=shifts, categories=categories)
    # Over the observed combinations, an output may show one a single person's records
    # make: its loss is infinite, and that happens with the threshold's δ (the release's
    # δ, cost.delta). The noise's loss variable does not hold that event; the profile
    # and every figure of the loss add it.
    infinite = result.cost.delta if result.domain == "observed" else 0.0
    top = (
        max(2 * accounting.epsilon, 1.0) if np.isfinite(accounting.epsilon) else 2 * options.epsilon
    )
    return DPReport(
        release=result,
        accounting=accounting,
        privacy_loss=loss,
        profile=tuple(
            (e, min(1.0, d + infinite))
            for e, d in loss.profile(np.linspace(0, top, _PROFILE_POINTS).tolist())
        ),
        infinite_loss=infinite,
        utility=utility(result),
        measures=reader_measures(result),
        contrast={
            sa: contrast(
                result.original,
                sa,
                epsilon=result.value_epsilon,
                dp_prior=released_prior(result, sa, domain=domain),
            )
            for sa in result.original.sensitive
        },
        curve=posterior_curve(result.value_epsilon),
        attackers={
            sa: attacker_contrast(result, sa, domain=domain, postprocess=postprocess)
            for sa in result.original.sensitive
        },
        privacy_unit=unit.column,
        bounded_records=bounded.dropped_records if bounded is not None else 0,
        domain=domain,
        postprocess=postprocess,
    )
