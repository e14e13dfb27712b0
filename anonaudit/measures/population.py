"""Population risk: how many sample uniques are unique in the population, and the
journalist and marketer re-identification risks.

The released table is a sample of ``n`` records from a population of ``N``; the
sampling fraction is ``pi = n / N``. A record alone in its class in the sample (a
*sample unique*) need not be alone in the population. The estimators below take only
the class-size frequencies of the sample, ``c_j`` = number of classes of size ``j``
(``u = sum c_j`` classes, ``n = sum j c_j`` records), and estimate the number of
*population uniques* among the ``N`` people.

Models
------
``pitman``
    Pitman's two-parameter (``theta``, ``alpha``) partition model (Pitman 1996,
    "Some developments of the Blackwell-MacQueen urn scheme"), fitted by maximum
    likelihood as proposed by Hoshino (2001), "Applying Pitman's sampling formula to
    microdata disclosure risk assessment", J. Official Statistics 17(4). The ML
    equations (Hoshino eq. 9) are

    ``sum_{i=1}^{u-1} 1/(theta + i alpha) = sum_{i=1}^{n-1} 1/(theta + i)``,
    ``sum_{i=1}^{u-1} i/(theta + i alpha) = sum_{j>=2} c_j sum_{i=1}^{j-1} 1/(i - alpha)``,

    written with digamma functions and solved with :func:`scipy.optimize.root`; the
    population uniques are ``Gamma(theta + 1) / Gamma(theta + alpha) * N**alpha``.
``zayatz``
    Zayatz (1991), "Estimation of the percent of unique population elements on a
    microdata file using the sample", US Census Bureau SRD report 91/08: the share of
    sample uniques that are population uniques is
    ``P(1) = (c_1/u) h_1 / sum_j (c_j/u) h_j`` with ``h_j`` the hypergeometric
    probability that a population class of size ``j`` shows exactly one record in a
    sample of ``n`` out of ``N``; population uniques ``c_1 P(1) / pi``. Computed from
    the ratios ``h_j / h_1`` as compensated sums of ``log1p`` terms, within about 1e-14
    relative of exact arithmetic at any ``N`` (log-gamma differences lost 1e-8 at 10**8).
``snb``
    The shifted negative binomial model of Chen & McNulty (1998), "Estimation of
    sampling disclosure risk", ASA Proceedings of the Section on Survey Research
    Methods: population class sizes follow ``P(F=j) = Gamma(j+a-1) / (Gamma(a) (j-1)!)
    b**a (1-b)**(j-1)``, ``j >= 1``; with ``d = (1-pi)(1-b)`` the expected sample class
    counts are ``E c_1 = K pi b**a (1-d)**-a (1 + a d/(1-d))`` and
    ``E c_2 = K a pi**2 b**a (1-b)/2 (1-d)**-(a+2) (2 - (1-a) d)``, solved for
    ``(a, b)`` by matching ``c_1`` and ``c_2``. ``K``, the number of non-empty
    population classes, is Shlosser's estimator in the form of Haas, Naughton,
    Seshadri & Stokes (1995), "Sampling-based estimation of the number of distinct
    values of an attribute", VLDB (their ``D_Sh3``). Population uniques ``K b**a``.
``dankar``
    The decision rule of Dankar, El Emam, Neisa & Roffey (2012), "Estimating the
    re-identification risk of clinical data sets", BMC Med Inform Decis Mak 12:66, as
    ARX applies it: for ``pi <= 0.1`` Pitman (Zayatz if Pitman does not converge); above
    0.1 the smaller of Zayatz and SNB (Zayatz if SNB does not converge).

An estimate is *valid* when the solver converged to admissible parameters and the
count lies in ``(0, N]``; an invalid one is reported as ``None``. With no sample
uniques every estimate is 0; with ``pi = 1`` the sample is the population and every
model returns the sample uniques.

Differences from ARX
--------------------
Pitman and Zayatz reproduce ARX's published constants on the Adult data to 1e-11.
ARX's SNB code differs from Chen & McNulty (it multiplies by ``(1-d)**(a+2)`` in
``E c_2`` where the model divides, and misplaces the ``-1`` of Shlosser's
``(1+pi)**j - 1``); its solver then fails on Adult at ``pi = 0.2`` and ARX's Dankar
rule falls back to Zayatz (0.357710), while the published SNB converges here to 0.319459
and the rule picks it. Journalist and marketer risk follow ARX without a population
table: see :func:`journalist_risk`.

Its declaration as an optional analysis (:data:`ANALYSIS`) closes the
module; :mod:`anonaudit.report.sections.population` shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ParameterError
from anonaudit.measures._classes import TOLERANCE, records_in
from anonaudit.measures.base import Analysis, Setting
from anonaudit.settings.names import POPULATION_MODELS, PopulationModel

__all__ = [
    "ANALYSIS",
    "POPULATION_MODELS",
    "JournalistRisk",
    "MarketerRisk",
    "PopulationModel",
    "PopulationRisk",
    "PopulationRisks",
    "PopulationUniqueness",
    "journalist_risk",
    "marketer_risk",
    "population_uniqueness",
    "resolve_population",
]


#: Dankar et al.'s threshold between Pitman and Zayatz/SNB.
DANKAR_THRESHOLD = 0.1


@dataclass(frozen=True)
class PopulationUniqueness:
    """Result of :func:`population_uniqueness`.

    Attributes
    ----------
    model : str
        The model asked for (``dankar``, ``pitman``, ``zayatz`` or ``snb``).
    model_used : str
        The estimate reported: ``pitman``, ``zayatz`` or ``snb``; ``none`` when no
        estimate applies (no sample uniques, sampling fraction 1) or converged.
    reason : str
        Why ``model_used`` was chosen.
    uniques : float
        Estimated population uniques (people alone in their class in the population).
    uniques_fraction : float
        ``uniques / population_size``, in [0, 1].
    population_size, sampling_fraction : float
        ``N`` and ``pi = n / N``.
    sample_size, sample_uniques : int
        ``n`` and ``c_1``.
    pitman, zayatz, snb : float or None
        Each model's ``uniques_fraction``; ``None`` when it did not converge.
    """

    model: PopulationModel
    model_used: Literal["pitman", "zayatz", "snb", "none"]
    reason: str
    uniques: float
    uniques_fraction: float
    population_size: float
    sampling_fraction: float
    sample_size: int
    sample_uniques: int
    pitman: float | None
    zayatz: float | None
    snb: float | None


@dataclass(frozen=True)
class JournalistRisk:
    """Journalist re-identification risk (El Emam 2013; ARX ``RiskModelSampleSummary``).

    Attributes
    ----------
    highest : float
        ``1 / min F_j`` over the classes.
    average : float
        Success rate ``max(u / sum F_j, (1/n) sum f_j / F_j)``.
    threshold : float
        Records whose risk ``1 / F_j`` exceeds this are at risk.
    records_at_risk : int
    records_at_risk_fraction : float
    basis : str
        Where the population class sizes ``F_j`` came from.
    """

    highest: float
    average: float
    threshold: float
    records_at_risk: int
    records_at_risk_fraction: float
    basis: str


@dataclass(frozen=True)
class MarketerRisk:
    """Marketer re-identification risk: the expected share of records re-identified
    when every record is matched, ``(1/n) sum f_j / F_j`` (ARX ``RiskModelSampleSummary``).

    Attributes
    ----------
    average : float
    basis : str
        Where the population class sizes ``F_j`` came from.
    """

    average: float
    basis: str


_SAMPLE_BASIS = "sample class sizes (no population table: an upper bound, as ARX)"


_GIVEN_BASIS = "population class sizes given"


def _sizes(table: ClassTable | ArrayLike) -> NDArray[np.int64]:
    if isinstance(table, ClassTable):
        sizes = np.asarray(table.classes.sizes, dtype=np.int64)
    else:
        sizes = np.asarray(table, dtype=np.int64)
    if sizes.ndim != 1 or sizes.size == 0 or (sizes < 1).any():
        raise ParameterError("class sizes must be a non-empty list of positive integers")
    return sizes


def _population_sizes(
    sizes: NDArray[np.int64], population_sizes: ArrayLike | None
) -> tuple[NDArray[np.float64], str]:
    if population_sizes is None:
        return sizes.astype(np.float64), _SAMPLE_BASIS
    big = np.asarray(population_sizes, dtype=np.float64)
    if big.shape != sizes.shape or (big < sizes).any():
        raise ParameterError(
            "population_sizes must give one size per class, each at least the sample size"
        )
    return big, _GIVEN_BASIS


def journalist_risk(
    table: ClassTable | ArrayLike,
    *,
    threshold: float = 0.2,
    population_sizes: ArrayLike | None = None,
) -> JournalistRisk:
    """Journalist risk: the attacker does not know whether the target is in the sample,
    so a match is one of ``F_j`` people in the population.

    Definitions of ARX's ``RiskModelSampleSummary`` (after El Emam, "Guide to the
    De-Identification of Personal Health Information", 2013). Without
    ``population_sizes`` (a population table), ``F_j = f_j``: ARX's choice, an upper
    bound equal to the prosecutor risk. A sampling fraction does not enter here; it
    drives :func:`population_uniqueness`.

    Parameters
    ----------
    table : ClassTable or array of int
        The class table, or its class sizes ``f_j``.
    threshold : float
        Risk above which a record is at risk.
    population_sizes : array of float, optional
        ``F_j`` per class, in the order of ``table``'s classes.

    Examples
    --------
    >>> r = journalist_risk([1, 4], population_sizes=[2, 8])
    >>> r.highest, r.average, r.records_at_risk
    (0.5, 0.2, 1)
    """
    if not 0 < threshold <= 1:
        raise ParameterError(f"risk threshold must lie in (0, 1] (got {threshold!r})")
    sizes = _sizes(table)
    big, basis = _population_sizes(sizes, population_sizes)
    rows = int(sizes.sum())
    at_risk = records_in(sizes, 1.0 / big > threshold + TOLERANCE)
    return JournalistRisk(
        highest=float(1.0 / big.min()),
        average=float(max(len(sizes) / big.sum(), float((sizes / big).sum()) / rows)),
        threshold=float(threshold),
        records_at_risk=at_risk,
        records_at_risk_fraction=at_risk / rows,
        basis=basis,
    )


def marketer_risk(
    table: ClassTable | ArrayLike, *, population_sizes: ArrayLike | None = None
) -> MarketerRisk:
    """Marketer risk ``(1/n) sum_j f_j / F_j`` (ARX ``RiskModelSampleSummary``).

    Without ``population_sizes``, ``F_j = f_j`` and the risk is ``u / n``, the
    prosecutor average.

    Examples
    --------
    >>> marketer_risk([1, 4]).average
    0.4
    """
    sizes = _sizes(table)
    big, basis = _population_sizes(sizes, population_sizes)
    return MarketerRisk(average=float((sizes / big).sum()) / int(sizes.sum()), basis=basis)


def resolve_population(
    n: int, population_size: float | None, sampling_fraction: float | None
) -> tuple[float, float]:
    """``(N, pi)`` from one of the population size ``N >= n`` or the fraction ``n / N``.

    Raises
    ------
    ParameterError
        Both or neither given, or a value out of range (named).
    """
    if population_size is not None and sampling_fraction is not None:
        raise ParameterError("give population_size or sampling_fraction, not both")
    if population_size is not None:
        if not math.isfinite(population_size) or population_size < n:
            raise ParameterError(
                f"population size must be at least the {n:,} records audited "
                f"(got {population_size!r})"
            )
        return float(population_size), n / population_size
    if sampling_fraction is not None:
        if not math.isfinite(sampling_fraction) or not 0 < sampling_fraction <= 1:
            raise ParameterError(
                f"sampling fraction must lie in (0, 1] (got {sampling_fraction!r})"
            )
        return n / sampling_fraction, float(sampling_fraction)
    raise ParameterError("give population_size or sampling_fraction")


#: Below this, ``exp`` of a log-ratio underflows: later classes weigh nothing.
_NEGLIGIBLE_LOG = -1000.0


#: Terms of the log-ratio sums computed per numpy call.
_CHUNK = 1 << 16


def _zayatz(values: NDArray[np.int64], counts: NDArray[np.int64], n: int, big: float) -> float:
    """Zayatz's population uniques ``c_1 P(1) / pi`` (Zayatz 1991, SRD report 91/08).

    ``P(1) = c_1 h_1 / sum_j c_j h_j``, with ``h_j = j C(N-j, n-1) / C(N, n)`` the
    hypergeometric probability that a population class of size ``j`` shows exactly one
    record in a sample of ``n`` out of ``N``. Only the ratios enter,

    ``h_j / h_1 = j prod_{i=1}^{j-1} (N-n+1-i) / (N-i)``,

    so ``P(1) = c_1 / sum_j c_j (h_j / h_1)``. The products are summed as logarithms
    (:func:`_log_hypergeometric_ratios`), not as differences of log-gamma values of
    size ``N ln N``, whose rounding reached 1e-8 relative at ``N = 10**8``: the
    estimate is now within about 1e-14 relative of exact rational arithmetic.

    Parameters
    ----------
    values, counts : array of int
        The distinct sample class sizes ``j`` (ascending, ``1`` among them) and ``c_j``.
    n : int
        The sample size ``sum_j j c_j``.
    big : float
        The population size ``N``; the probabilities use the nearest integer.

    Returns
    -------
    float
        The estimated number of population uniques.
    """
    logs = _log_hypergeometric_ratios(values, n, round(big))
    weights = [
        float(c) * float(j) * math.exp(s) for j, c, s in zip(values, counts, logs, strict=True)
    ]
    c1 = float(counts[values == 1].sum())
    return c1 * (c1 / math.fsum(weights)) * (big / n)


def _log_hypergeometric_ratios(values: NDArray[np.int64], n: int, total: int) -> list[float]:
    """``ln prod_{i=1}^{j-1} (1 - (n-1)/(N-i))`` for each ``j`` of ascending ``values``.

    Each factor is taken as ``log1p(-(n-1)/(N-i))`` (correct to an ulp), each run of
    terms summed exactly by :func:`math.fsum` and the runs by Neumaier's compensated
    sum, so the absolute error is a few ulps of the sum itself. Once the sum falls
    below ``_NEGLIGIBLE_LOG`` (or a factor is 0, ``j > N - n + 1``) larger classes get
    ``-inf``: their weight underflows anyway.
    """
    out: list[float] = []
    total_f, step = float(total), float(n - 1)
    last = total - n + 1  # the factor at i = N - n + 1 is 0
    high, low, done = 0.0, 0.0, 1  # terms i < done summed into high + low
    for j in (int(v) for v in values):
        if j - 1 >= last or high + low < _NEGLIGIBLE_LOG:
            out.append(-math.inf)
            continue
        while done < j and high + low >= _NEGLIGIBLE_LOG:
            stop = min(j, done + _CHUNK)
            i = np.arange(done, stop, dtype=np.float64)
            part = math.fsum(np.log1p(-step / (total_f - i)).tolist())
            total_ = high + part  # Neumaier's compensated addition
            if abs(high) >= abs(part):
                low += (high - total_) + part
            else:
                low += (part - total_) + high
            high, done = total_, stop
        out.append(high + low if done >= j else -math.inf)
    return out


def _pitman(
    values: NDArray[np.int64], counts: NDArray[np.int64], n: int, big: float
) -> float | None:
    from scipy import optimize, special

    u = float(counts.sum())
    many = values != 1

    def first(t: float, a: float) -> float:  # sum 1/(t+ia), i<u  minus  sum 1/(t+i), i<n
        lhs = (special.digamma(t / a + u) - special.digamma(t / a + 1)) / a
        return float(lhs - (special.digamma(t + n) - special.digamma(t + 1)))

    def equations(x: NDArray[np.float64]) -> list[float]:
        t, a = float(x[0]), float(x[1])
        lhs1 = (special.digamma(t / a + u) - special.digamma(t / a + 1)) / a
        lhs2 = ((u - 1) - t * lhs1) / a  # sum i/(t+ia) = ((u-1) - t sum 1/(t+ia)) / a
        rhs2 = float(
            (counts[many] * (special.digamma(values[many] - a) - special.digamma(1 - a))).sum()
        )
        return [first(t, a), float(lhs2 - rhs2)]

    c1 = float(counts[values == 1].sum())
    alpha0 = min(max(c1 / u, 0.05), 0.95)
    try:  # theta from the first equation at alpha0, then both together
        theta0 = optimize.brentq(lambda t: first(t, alpha0), 1e-9, 1e12)
    except ValueError:
        theta0 = 1.0
    with np.errstate(all="ignore"):
        solution = optimize.root(equations, [theta0, alpha0], method="hybr")
    t, a = (float(v) for v in solution.x)
    if not solution.success or not (0 < a < 1 and t > -a) or not np.all(np.isfinite(solution.x)):
        return None
    residual = np.abs(equations(solution.x))
    if not np.all(residual <= 1e-8 * max(1.0, u)):
        return None
    with np.errstate(all="ignore"):
        uniques = float(np.exp(special.gammaln(t + 1) - special.gammaln(t + a) + a * np.log(big)))
    return uniques if 0 < uniques <= big else None


def _shlosser(values: NDArray[np.int64], counts: NDArray[np.int64], pi: float) -> float:
    """Shlosser's estimate of the non-empty population classes (Haas et al. 1995, D_Sh3)."""
    q, j, c = pi, values.astype(np.float64), counts.astype(np.float64)
    u, c1 = c.sum(), c[values == 1].sum()
    top = (j * q * q * (1 - q * q) ** (j - 1) * c).sum()
    # (1-q)^j ((1+q)^j - 1) written so that large classes neither overflow nor give 0 * inf
    bottom = (((1 - q * q) ** j - (1 - q) ** j) * c).sum()
    ratio = ((1 - q) ** j * c).sum() / (j * q * (1 - q) ** (j - 1) * c).sum()
    return float(u + c1 * top / bottom * ratio * ratio) if bottom > 0 else float(u)


def _snb(
    values: NDArray[np.int64], counts: NDArray[np.int64], pi: float, big: float
) -> float | None:
    from scipy import optimize, special

    c1 = float(counts[values == 1].sum())
    c2 = float(counts[values == 2].sum())
    if c2 == 0:  # the second moment equation has no admissible solution
        return None
    k = _shlosser(values, counts, pi)

    def equations(x: NDArray[np.float64]) -> list[float]:
        # a = exp(x0) > 0 and b = logistic(x1) in (0, 1): the solver cannot leave them
        a, b = np.exp(np.float64(x[0])), np.float64(special.expit(x[1]))
        d = (1 - pi) * (1 - b)
        e1 = k * pi * b**a * (1 - d) ** -a * (1 + a * d / (1 - d))
        e2 = k * a * pi * pi * b**a * (1 - b) / 2 * (1 - d) ** -(a + 2) * (2 - (1 - a) * d)
        return [float(e1 / c1 - 1), float(e2 / c2 - 1)]

    for a0 in (0.1, 0.5, 1.0, 2.0):
        for b0 in (0.01, 0.1, 0.5, 0.9):
            start = [math.log(a0), float(special.logit(b0))]
            with np.errstate(all="ignore"):
                solution = optimize.root(equations, start, method="hybr")
                residual = np.abs(equations(solution.x))
            if solution.success and np.all(residual <= 1e-9):
                a, b = math.exp(float(solution.x[0])), float(special.expit(solution.x[1]))
                uniques = k * b**a
                return uniques if 0 < uniques <= big else None
    return None


def population_uniqueness(
    table: ClassTable | ArrayLike,
    *,
    population_size: float | None = None,
    sampling_fraction: float | None = None,
    model: PopulationModel = "dankar",
) -> PopulationUniqueness:
    """Estimate the population uniques from the sample's class sizes.

    Parameters
    ----------
    table : ClassTable or array of int
        The class table, or its class sizes.
    population_size : float, optional
        ``N``, at least the number of records ``n``.
    sampling_fraction : float, optional
        ``n / N`` in (0, 1]; give this or ``population_size``.
    model : {"dankar", "pitman", "zayatz", "snb"}
        The estimate to report; ``dankar`` chooses by Dankar et al.'s rule.

    Returns
    -------
    PopulationUniqueness

    Examples
    --------
    Every record unique, and the file is the whole population:

    >>> r = population_uniqueness([1, 1, 1, 1], sampling_fraction=1.0)
    >>> r.uniques, r.uniques_fraction, r.model_used
    (4.0, 1.0, 'none')
    """
    if model not in POPULATION_MODELS:
        raise ParameterError(
            f"population model must be one of {', '.join(POPULATION_MODELS)} (got {model!r})"
        )
    sizes = _sizes(table)
    n = int(sizes.sum())
    big, pi = resolve_population(n, population_size, sampling_fraction)
    values, counts = np.unique(sizes, return_counts=True)
    c1 = int(counts[values == 1].sum())

    def result(
        used: Literal["pitman", "zayatz", "snb", "none"],
        reason: str,
        uniques: float,
        estimates: Sequence[float | None],
    ) -> PopulationUniqueness:
        return PopulationUniqueness(
            model=model,
            model_used=used,
            reason=reason,
            uniques=float(uniques),
            uniques_fraction=min(max(float(uniques) / big, 0.0), 1.0),
            population_size=big,
            sampling_fraction=pi,
            sample_size=n,
            sample_uniques=c1,
            pitman=estimates[0],
            zayatz=estimates[1],
            snb=estimates[2],
        )

    if c1 == 0:
        return result("none", "no sample uniques, so no population uniques", 0.0, (0.0,) * 3)
    if pi >= 1 - 1e-12:
        fraction = c1 / big
        return result(
            "none",
            "sampling fraction 1: the sample is the population",
            float(c1),
            (fraction,) * 3,
        )
    zayatz = _zayatz(values, counts, n, big)  # always defined: c_1 > 0 makes h_1 > 0
    counts_ = {
        "pitman": _pitman(values, counts, n, big),
        "zayatz": zayatz,
        "snb": _snb(values, counts, pi, big),
    }
    estimates = tuple(None if v is None else v / big for v in counts_.values())
    if model != "dankar":
        value = counts_[model]
        if value is None:
            return result("none", f"the {model} model did not converge", 0.0, estimates)
        return result(model, f"{model} model asked for", value, estimates)
    pitman, snb = counts_["pitman"], counts_["snb"]
    if pi <= DANKAR_THRESHOLD:
        if pitman is not None:
            return result("pitman", f"sampling fraction {pi:.4g} <= 0.1: Pitman", pitman, estimates)
        return result(
            "zayatz",
            f"sampling fraction {pi:.4g} <= 0.1: Pitman did not converge, Zayatz",
            zayatz,
            estimates,
        )
    if snb is not None and snb <= zayatz:
        return result("snb", f"sampling fraction {pi:.4g} > 0.1: SNB, below Zayatz", snb, estimates)
    why = "below SNB" if snb is not None else "SNB did not converge"
    return result("zayatz", f"sampling fraction {pi:.4g} > 0.1: Zayatz, {why}", zayatz, estimates)


@dataclass(frozen=True)
class PopulationRisks:
    """Population uniqueness, with the journalist and marketer risk of the same table."""

    uniqueness: PopulationUniqueness
    journalist: JournalistRisk
    marketer: MarketerRisk


class PopulationRisk(Analysis[PopulationRisks]):
    """Population uniqueness, journalist and marketer risk
    (:mod:`anonaudit.measures.population`), with a population size or sampling fraction."""

    key = "population"
    position = 10
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"singling_out": ("population uniqueness",)}

    def asked(self, setting: Setting) -> bool:
        return setting.options.population.given

    def compute(self, setting: Setting) -> PopulationRisks:
        sampled, table = setting.options.population, setting.table
        return PopulationRisks(
            population_uniqueness(
                table,
                population_size=sampled.size,
                sampling_fraction=sampled.sampling_fraction,
                model=sampled.model,
            ),
            journalist_risk(table, threshold=setting.options.risk_threshold),
            marketer_risk(table),
        )


ANALYSIS = PopulationRisk()
