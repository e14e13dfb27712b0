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

import numpy as np

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import Accounting, Budget, account
from anonaudit.dp.bounding import BoundedTable
from anonaudit.dp.contrast import (
    AttackerContrast,
    PosteriorCurve,
    SensitiveContrast,
    attacker_contrast,
    contrast,
    posterior_curve,
)
from anonaudit.dp.domain import MAX_CELLS, PublicDomain
from anonaudit.dp.mechanisms import Mechanism
from anonaudit.dp.plrv import PrivacyLoss, privacy_loss
from anonaudit.dp.release import Postprocess, Release, release
from anonaudit.dp.sensitivity import Neighbouring
from anonaudit.dp.utility import ReaderMeasures, Utility, reader_measures, utility

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
        ``(ε', δ(ε'))`` points of the privacy profile.
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
    """

    release: Release
    accounting: Accounting
    privacy_loss: PrivacyLoss
    profile: tuple[tuple[float, float], ...]
    utility: Utility
    measures: ReaderMeasures
    contrast: dict[str, SensitiveContrast]
    curve: PosteriorCurve
    attackers: dict[str, AttackerContrast]
    privacy_unit: str | None = None
    bounded_records: int = 0
    domain: PublicDomain | None = None
    postprocess: Postprocess = "clamp"

    @property
    def epsilon(self) -> float:
        """Total ε at the release's δ."""
        return self.accounting.epsilon


def companion(
    data: ClassTable | BoundedTable,
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
    postprocess: Postprocess = "clamp",
) -> DPReport:
    """Release ``data`` under DP and contrast it with the syntactic measures.

    Parameters
    ----------
    data : ClassTable or BoundedTable
        The class table; a :class:`~anonaudit.dp.bounding.BoundedTable` brings its
        privacy unit and contribution bound.
    epsilon, delta, mechanism, domain, neighbouring, max_contributions, sensitive, budget,
    max_cells, postprocess
        As for :func:`~anonaudit.dp.release.release`; ``max_contributions`` is taken
        from a BoundedTable.

    Returns
    -------
    DPReport

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.dp.domain import PublicDomain
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["a", "a", "b"], "d": ["flu", "cold", "flu"], "count": [5, 5, 9]}),
    ...     quasi_identifiers=["zip"], sensitive=["d"])
    >>> report = companion(t, epsilon=1.0,
    ...                    domain=PublicDomain.of({"zip": ["a", "b"], "d": ["flu", "cold"]}))
    >>> report.epsilon, report.release.cells, report.contrast["d"].max_posterior
    (1.0, 4, 1.0)
    """
    unit = None
    dropped = 0
    if isinstance(data, BoundedTable):
        unit, dropped, max_contributions = (
            data.privacy_unit,
            data.dropped_records,
            data.max_contributions,
        )
        data = data.table
    result = release(
        data,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        domain=domain,
        neighbouring=neighbouring,
        max_contributions=max_contributions,
        sensitive=sensitive,
        budget=budget,
        max_cells=max_cells,
        postprocess=postprocess,
    )
    if mechanism == "randomized-response":
        m = result.sensitivity.max_contributions
        scale, shifts = epsilon / m, (1,) * m
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
    top = max(2 * accounting.epsilon, 1.0) if np.isfinite(accounting.epsilon) else 2 * epsilon
    return DPReport(
        release=result,
        accounting=accounting,
        privacy_loss=loss,
        profile=loss.profile(np.linspace(0, top, _PROFILE_POINTS).tolist()),
        utility=utility(result),
        measures=reader_measures(result),
        contrast={
            sa: contrast(result.original, sa, epsilon=result.value_epsilon)
            for sa in result.original.sensitive
        },
        curve=posterior_curve(result.value_epsilon),
        attackers={
            sa: attacker_contrast(result, sa, domain=domain, postprocess=postprocess)
            for sa in result.original.sensitive
        },
        privacy_unit=unit,
        bounded_records=dropped,
        domain=domain,
        postprocess=postprocess,
    )
