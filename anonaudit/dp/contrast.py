"""What an attacker learns: the syntactic release beside the ε-DP bound.

For one sensitive attribute S with table distribution ``p(s)`` (the attacker's prior for a
target picked from the table) and an equivalence class with distribution
``p(s | class)`` (the attacker's belief once the target's QI values place them in that
class):

* the *posterior* ``p(s | class)`` is what k-anonymity, l-diversity and t-closeness let
  the attacker believe; 1.0 is the homogeneity attack (Machanavajjhala et al. 2007);
* under ε-DP the attacker's odds on any value can grow at most by ``e^ε`` (Kasiviswanathan
  & Smith 2014, "On the 'semantics' of differential privacy: a Bayesian formulation",
  J. Priv. Confidentiality 6(1)), so the posterior is at most
  ``p e^ε / (1 + p (e^ε - 1))`` from a prior ``p`` (:func:`posterior_bound`). The ε is
  that of learning the value of a person who is in the data: a *replace* pair, two
  add-remove steps (:attr:`~anonaudit.dp.release.Release.value_epsilon`). With δ > 0 the
  release is (ε, δ)-DP: the probability of any outcome grows at most by ``e^ε``, plus an
  additive δ; the bound then holds on the outputs whose privacy loss is at most ε
  (:meth:`~anonaudit.dp.plrv.PrivacyLoss.tail` gives how often it is not);
* the *pointwise maximal leakage* of the class (Saeidian, Cervia, Oechtering & Skoglund
  2023, "Pointwise maximal leakage", IEEE Trans. Inf. Theory 69(12), Definition 1) is
  ``ℓ(S → class) = ln max_s p(class | s) / p(class) = ln max_s p(s | class) / p(s)``, in
  the same unit as ε: an ε-DP release leaks at most ε about any one value;
* the *min-entropy* of the posterior, ``-ln max_s p(s | class)``, is the attacker's
  remaining uncertainty in nats (Smith 2009, "On the foundations of quantitative
  information flow", FoSSaCS); a value is disclosed when it reaches 0.

The posterior above is the *uninformed* attacker's. :class:`AttackerContrast` sets it
beside the *informed* attacker DP is stated against, who knows every other record
(:mod:`~anonaudit.dp.attacker`): against the exact class table that attacker is certain of
every record's value, against the DP release no more than the bound allows (pure ε-DP).
It adds the ε each class of the syntactic release amounts to, the noise a DP release
would need to allow no more, the leakage over a family of priors and the disclosure
theorem's threshold.

Chart data: :class:`PosteriorCurve` is the bound as a function of the prior for the
chosen ε, and :attr:`SensitiveContrast.scatter` places each class's most revealing
value (prior, posterior) on the same axes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.dp.attacker import (
    Disclosure,
    EqualGain,
    PosteriorSummary,
    disclosure,
    equal_gain,
    equivalent_epsilon,
    informed_dp,
    informed_syntactic,
    pml_over_priors,
    uninformed_syntactic,
)
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.release import Postprocess, Release
from anonaudit.dp.sensitivity import Neighbouring

__all__ = [
    "AttackerContrast",
    "PosteriorCurve",
    "ScatterPoints",
    "SensitiveContrast",
    "attacker_contrast",
    "contrast",
    "posterior_bound",
    "posterior_curve",
]


def posterior_bound(prior: NDArray[Any] | float, epsilon: float) -> NDArray[Any]:
    """Largest posterior an ε-DP release allows from ``prior``: ``p e^ε / (1 + p (e^ε - 1))``.

    >>> round(float(posterior_bound(0.01, 1.0)), 5)
    0.02672
    """
    p = np.asarray(prior, dtype=float)
    if math.isinf(epsilon):
        return np.where(p > 0, 1.0, 0.0)
    growth = math.expm1(epsilon)
    return np.asarray(p * (growth + 1) / (1 + p * growth))


@dataclass(frozen=True)
class PosteriorCurve:
    """The ε-DP posterior bound at each prior (the chart's curve).

    Attributes
    ----------
    epsilon : float
        The ε.
    prior, bound : numpy.ndarray
        Points of the curve, priors ascending over (0, 1] (log-spaced below 0.01).
    """

    epsilon: float
    prior: NDArray[Any] = field(repr=False)
    bound: NDArray[Any] = field(repr=False)


def posterior_curve(epsilon: float, *, points: int = 101) -> PosteriorCurve:
    """:func:`posterior_bound` on a grid of priors, for plotting."""
    prior = np.unique(np.r_[np.geomspace(1e-4, 1e-2, points // 4), np.linspace(0, 1, points)])
    return PosteriorCurve(epsilon, prior, posterior_bound(prior, epsilon))


@dataclass(frozen=True)
class ScatterPoints:
    """Per class, the value with the largest leakage: its prior and posterior.

    Attributes
    ----------
    class_ids : numpy.ndarray
        The classes (ids of ``ClassTable.classes``), most leaking first.
    values : tuple of (str or None)
        The sensitive value of each point.
    prior, posterior : numpy.ndarray
        ``p(s)`` and ``p(s | class)``.
    size : numpy.ndarray
        Records in the class.
    above_bound : numpy.ndarray
        Whether the point's posterior exceeds the ε-DP bound at its prior (bool).
    """

    class_ids: NDArray[Any]
    values: tuple[str | None, ...]
    prior: NDArray[Any]
    posterior: NDArray[Any]
    size: NDArray[Any]
    above_bound: NDArray[Any]


@dataclass(frozen=True)
class SensitiveContrast:
    """Attacker's knowledge of one SA: the syntactic release beside ε-DP.

    Attributes
    ----------
    sensitive : str
        The SA.
    epsilon : float
        The ε of the DP release compared with.
    max_posterior : float
        Largest ``p(s | class)`` (1.0: some class is homogeneous).
    dp_posterior_bound : float
        Largest ε-DP posterior bound over the table's values, at their priors.
    max_pml : float
        Largest pointwise maximal leakage ``ln p(s | class) / p(s)`` over classes.
    min_entropy : float
        Smallest min-entropy of a class's posterior (0: a value is disclosed).
    disclosed_classes, disclosed_records : int
        Classes with min-entropy 0, and their records.
    classes_above_bound, records_above_bound : int
        Classes in which some value's posterior exceeds the ε-DP bound at its prior.
    posterior, pml, entropy : numpy.ndarray
        Per class (aligned with ``ClassTable.classes``): largest posterior, leakage,
        min-entropy.
    scatter : ScatterPoints
        Chart points, at most ``max_points``.
    """

    sensitive: str
    epsilon: float
    max_posterior: float
    dp_posterior_bound: float
    max_pml: float
    min_entropy: float
    disclosed_classes: int
    disclosed_records: int
    classes_above_bound: int
    records_above_bound: int
    posterior: NDArray[Any] = field(repr=False)
    pml: NDArray[Any] = field(repr=False)
    entropy: NDArray[Any] = field(repr=False)
    scatter: ScatterPoints = field(repr=False)


def contrast(
    table: ClassTable,
    sensitive: str,
    *,
    epsilon: float,
    dp_prior: NDArray[Any] | None = None,
    max_points: int = 2000,
) -> SensitiveContrast:
    """Compare what the syntactic release of ``table`` reveals about ``sensitive`` with ε-DP.

    Parameters
    ----------
    table : ClassTable
        The data as the syntactic checks see it.
    sensitive : str
        The SA.
    epsilon : float
        The ε of the DP release.
    dp_prior : numpy.ndarray, optional
        The SA's distribution over the records the DP release counts
        (:func:`~anonaudit.dp.attacker.released_prior`; by default the table's): the
        ε-DP bound (:attr:`SensitiveContrast.dp_posterior_bound`) is stated at its
        largest value, as a public-domain release leaves out the records outside its
        domain and its attacker's prior is over the others.
    max_points : int
        Scatter points kept (the most leaking classes).

    Examples
    --------
    A homogeneous class (everyone has flu) next to the ε = 1 bound:

    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["a", "a", "b"], "d": ["flu", "cold", "flu"], "count": [1, 1, 2]}),
    ...     quasi_identifiers=["zip"], sensitive=["d"])
    >>> c = contrast(t, "d", epsilon=1.0)
    >>> c.max_posterior, round(c.max_pml, 4), c.disclosed_classes
    (1.0, 0.6931, 1)
    """
    counts = table.sensitive_counts(sensitive)
    prior = counts.prior()
    entry_prior = prior[counts.codes]
    entry_posterior = counts.posterior()
    entry_pml = np.log(entry_posterior / entry_prior)
    exceeds = entry_posterior > posterior_bound(entry_prior, epsilon) * (1 + 1e-12)
    posterior = counts.per_class_max(entry_posterior)
    pml = counts.per_class_max(entry_pml)
    entropy = -np.log(posterior)
    above = counts.per_class_max(exceeds.astype(float)) > 0
    disclosed = posterior >= 1.0
    sizes = counts.class_sizes
    return SensitiveContrast(
        sensitive=sensitive,
        epsilon=epsilon,
        max_posterior=float(posterior.max()),
        dp_posterior_bound=float(
            posterior_bound((prior if dp_prior is None else dp_prior).max(), epsilon)
        ),
        max_pml=float(pml.max()),
        min_entropy=float(max(0.0, entropy.min())),
        disclosed_classes=int(disclosed.sum()),
        disclosed_records=int(sizes[disclosed].sum()),
        classes_above_bound=int(above.sum()),
        records_above_bound=int(sizes[above].sum()),
        posterior=posterior,
        pml=pml,
        entropy=np.maximum(entropy, 0.0),
        scatter=_scatter(
            counts.values,
            counts.class_ids,
            entry_pml,
            entry_prior,
            entry_posterior,
            counts.codes,
            sizes,
            exceeds,
            max_points,
        ),
    )


def _scatter(
    values: tuple[str | None, ...],
    class_ids: NDArray[Any],
    entry_pml: NDArray[Any],
    entry_prior: NDArray[Any],
    entry_posterior: NDArray[Any],
    codes: NDArray[Any],
    sizes: NDArray[Any],
    exceeds: NDArray[Any],
    max_points: int,
) -> ScatterPoints:
    """Per class the entry of largest leakage; the ``max_points`` most leaking classes."""
    order = np.lexsort((-entry_pml, class_ids))
    first = order[np.r_[True, np.diff(class_ids[order]) != 0]] if len(order) else order
    chosen = first[np.lexsort((-sizes[class_ids[first]], -entry_pml[first]))][:max_points]
    return ScatterPoints(
        class_ids=class_ids[chosen],
        values=tuple(values[i] for i in codes[chosen].tolist()),
        prior=entry_prior[chosen],
        posterior=entry_posterior[chosen],
        size=sizes[class_ids[chosen]],
        above_bound=exceeds[chosen],
    )


#: Default family of priors for :attr:`AttackerContrast.max_pml_family`: every prior
#: within a factor 2 of the table's.
PRIOR_FACTOR = 2.0


@dataclass(frozen=True)
class AttackerContrast:
    """Two attackers against the syntactic and the DP release of one SA, side by side.

    Attributes
    ----------
    sensitive : str
        The SA.
    epsilon, delta : float
        The (ε, δ) of learning the value of a person who is in the data
        (:attr:`~anonaudit.dp.release.Release.value_epsilon`, ``value_delta``).
    neighbouring : {"add-remove", "replace"}
        The relation the release's stated ε is for.
    uninformed, informed : PosteriorSummary
        The syntactic release: the attacker who knows only the target's class
        (``p(s | class)``), and the one who knows every other record (always 1).
    dp_informed : PosteriorSummary
        The DP release, the attacker who knows every other record, simulated on the
        released counts with their exact likelihood.
    equivalent_epsilon : numpy.ndarray
        Per class (aligned with ``ClassTable.classes``): the largest, over its values,
        ``ln[π (1 - p) / (p (1 - π))]``, the ε whose bound its posterior reaches
        (``inf`` where a value is certain).
    max_equivalent_epsilon : float
        The largest.
    infinite_classes, infinite_records : int
        Classes whose equivalent ε is infinite, and their records.
    equal_gain : EqualGain or None
        The same mechanism's noise at ``max_equivalent_epsilon``; ``None`` when that is
        infinite (no DP release allows certainty) or 0.
    prior_factor : float
        The family of priors: every prior within this factor of the table's.
    max_pml_family : float
        Largest pointwise maximal leakage of the syntactic release over that family.
    syntactic_disclosure, dp_disclosure : Disclosure
        The disclosure theorem at each release's leakage: the largest PML at the
        table's prior (the attacker who knows the QIs), and ε (an ε-DP release leaks at
        most ε, to every attacker).
    informed_leakage : float
        The leakage of the syntactic release to the attacker DP is stated against, who
        knows every other record: the exact table gives them each present person's
        value (posterior 1, an infinite ε), a leakage of ``ln(1 / p)`` for a value of
        prior ``p``; the largest, over the values present, ``ln(1 / p_min)``.
    """

    sensitive: str
    epsilon: float
    delta: float
    neighbouring: Neighbouring
    uninformed: PosteriorSummary
    informed: PosteriorSummary
    dp_informed: PosteriorSummary
    equivalent_epsilon: NDArray[Any] = field(repr=False)
    max_equivalent_epsilon: float
    infinite_classes: int
    infinite_records: int
    equal_gain: EqualGain | None
    prior_factor: float
    max_pml_family: float
    syntactic_disclosure: Disclosure
    dp_disclosure: Disclosure
    informed_leakage: float


def attacker_contrast(
    release: Release,
    sensitive: str,
    *,
    domain: PublicDomain | None,
    postprocess: Postprocess = "clamp",
    prior_factor: float = PRIOR_FACTOR,
) -> AttackerContrast:
    """Both attackers against both releases of ``sensitive``, and the leakages.

    Parameters
    ----------
    release : Release
        The DP release; its :attr:`~anonaudit.dp.release.Release.original` is the
        syntactic release.
    sensitive : str
        The SA.
    domain : PublicDomain or None
        The public domain the release covered, if any.
    postprocess : {"clamp", "unbiased"}
        The release's post-processing.
    prior_factor : float
        The family of priors for :attr:`AttackerContrast.max_pml_family`.

    Examples
    --------
    A class of 60 flu and 60 cold (k = 120) is certain to the informed attacker:

    >>> import pandas as pd
    >>> from anonaudit.dp.options import DPOptions, PrivacyGuarantee
    >>> from anonaudit.dp.release import release as dp_release
    >>> t = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["a", "a"], "d": ["flu", "cold"], "count": [60, 60]}),
    ...     quasi_identifiers=["zip"], sensitive=["d"])
    >>> domain = PublicDomain.of({"zip": ["a"], "d": ["flu", "cold"]})
    >>> r = dp_release(t, DPOptions(PrivacyGuarantee(1.0), domain=domain))
    >>> c = attacker_contrast(r, "d", domain=domain)
    >>> c.uninformed.max, c.informed.median, c.epsilon, c.dp_informed.share_above_bound
    (0.5, 1.0, 2.0, 0.0)
    """
    table, epsilon = release.original, release.value_epsilon
    counts = table.sensitive_counts(sensitive)
    prior = counts.prior()
    per_class = counts.per_class_max(equivalent_epsilon(counts.posterior(), prior[counts.codes]))
    infinite = np.isinf(per_class)
    largest = float(per_class.max())
    leakage = float(pml_over_priors(table, sensitive, factor=1.0).max())
    return AttackerContrast(
        sensitive=sensitive,
        epsilon=epsilon,
        delta=release.value_delta,
        neighbouring=release.sensitivity.neighbouring,
        uninformed=uninformed_syntactic(table, sensitive, epsilon=epsilon),
        informed=informed_syntactic(table, sensitive, epsilon=epsilon),
        dp_informed=informed_dp(release, sensitive, domain=domain, postprocess=postprocess),
        equivalent_epsilon=per_class,
        max_equivalent_epsilon=largest,
        infinite_classes=int(infinite.sum()),
        infinite_records=int(counts.class_sizes[infinite].sum()),
        equal_gain=equal_gain(release, largest),
        prior_factor=prior_factor,
        max_pml_family=float(pml_over_priors(table, sensitive, factor=prior_factor).max()),
        syntactic_disclosure=disclosure(counts.values, prior, leakage),
        dp_disclosure=disclosure(counts.values, prior, epsilon),
        informed_leakage=float(-np.log(prior[prior > 0].min())),
    )
