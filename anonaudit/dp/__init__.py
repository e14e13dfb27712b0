"""The differential-privacy companion: the audited statistics released under DP.

The syntactic measures say what one table lets an attacker learn under stated attacks;
differential privacy bounds what any attacker learns about any one person. This package
releases the class table under (ε, δ)-DP and sets the two side by side::

    >>> import anonaudit
    >>> from anonaudit import dp
    >>> table = anonaudit.load("clinic.csv",
    ...                        anonaudit.Roles(["sex"], ["diagnosis"]))  # doctest: +SKIP
    >>> report = dp.companion(
    ...     table, dp.DPOptions(dp.PrivacyGuarantee(epsilon=1.0, delta=1e-6)))  # doctest: +SKIP
    >>> report.contrast["diagnosis"].max_posterior  # doctest: +SKIP

A release is configured as OpenDP's context API configures one: the guarantee
(:class:`PrivacyGuarantee`, OpenDP's ``dp.loss_of(epsilon=..., delta=...)``), the privacy
unit (:class:`PrivacyUnit`, OpenDP's ``dp.unit_of(contributions=...)``, with the column
identifying a person) and the rest, together one :class:`DPOptions`
(:mod:`~anonaudit.dp.options`).

Modules, one concept each: :mod:`~anonaudit.dp.options` (what a release is asked for),
:mod:`~anonaudit.dp.mechanisms` (OpenDP noise), :mod:`~anonaudit.dp.sensitivity`
(neighbouring relations), :mod:`~anonaudit.dp.domain` (public domains),
:mod:`~anonaudit.dp.bounding` (one person, several rows),
:mod:`~anonaudit.dp.release`, :mod:`~anonaudit.dp.accounting`,
:mod:`~anonaudit.dp.plrv` (privacy loss), :mod:`~anonaudit.dp.utility`,
:mod:`~anonaudit.dp.contrast` and :mod:`~anonaudit.dp.companion`, which runs them all;
:mod:`~anonaudit.dp.selfaudit` samples the release code on worst-case neighbours and
bounds its ε from below.

OpenDP, which draws the noise, is one of anonaudit's own dependencies (``pip install
anonaudit``; the ``dp`` extra is kept as an alias); should it be missing, drawing noise
raises :class:`~anonaudit.errors.MissingDependencyError` with the command that installs
it. :mod:`~anonaudit.report.dp` writes the publishable release (CSV and sidecar).
"""

from __future__ import annotations

from anonaudit.dp.accounting import (
    Accounting,
    Budget,
    Calibration,
    PrivacyCost,
    account,
    calibrate,
    gaussian_delta,
    gaussian_epsilon,
    mechanism_cost,
    noise_scale,
    parallel,
    pld_epsilon,
    renyi_curve,
    sequential,
    zcdp_for_epsilon,
    zcdp_to_epsilon,
)
from anonaudit.dp.bounding import BoundedTable, bound_contributions, load_bounded
from anonaudit.dp.companion import DPReport, companion
from anonaudit.dp.contrast import (
    PosteriorCurve,
    ScatterPoints,
    SensitiveContrast,
    contrast,
    posterior_bound,
    posterior_curve,
)
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.mechanisms import MECHANISMS, Mechanism, NoiseDistribution, add_noise
from anonaudit.dp.options import DPOptions, PrivacyGuarantee, PrivacyUnit
from anonaudit.dp.plrv import PrivacyLoss, privacy_loss
from anonaudit.dp.release import Release, release
from anonaudit.dp.selfaudit import AuditBound, SelfAudit, self_audit
from anonaudit.dp.sensitivity import NEIGHBOURING, Neighbouring, Sensitivity, histogram_sensitivity
from anonaudit.dp.utility import Measures, ReaderMeasures, Utility, reader_measures, utility

__all__ = [
    "MECHANISMS",
    "NEIGHBOURING",
    "Accounting",
    "AuditBound",
    "BoundedTable",
    "Budget",
    "Calibration",
    "DPOptions",
    "DPReport",
    "Measures",
    "Mechanism",
    "Neighbouring",
    "NoiseDistribution",
    "PosteriorCurve",
    "PrivacyCost",
    "PrivacyGuarantee",
    "PrivacyLoss",
    "PrivacyUnit",
    "PublicDomain",
    "ReaderMeasures",
    "Release",
    "ScatterPoints",
    "SelfAudit",
    "SensitiveContrast",
    "Sensitivity",
    "Utility",
    "account",
    "add_noise",
    "bound_contributions",
    "calibrate",
    "companion",
    "contrast",
    "gaussian_delta",
    "gaussian_epsilon",
    "histogram_sensitivity",
    "load_bounded",
    "mechanism_cost",
    "noise_scale",
    "parallel",
    "pld_epsilon",
    "posterior_bound",
    "posterior_curve",
    "privacy_loss",
    "reader_measures",
    "release",
    "renyi_curve",
    "self_audit",
    "sequential",
    "utility",
    "zcdp_for_epsilon",
    "zcdp_to_epsilon",
]
