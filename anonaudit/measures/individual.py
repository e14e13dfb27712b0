"""Individual and global re-identification risk from survey weights (sdcMicro, mu-Argus).

A sample record whose QI values are shared by ``f_k`` records of the sample (its
class's *sample frequency*) is shared by some unknown number of people in the
population. Survey weights say how many people each record stands for, so the sum of
the weights of a class's records, ``F_k``, estimates its *population frequency*. The
*individual risk* of a record is the probability that an intruder who matches it to
a person of the population picks the right one, ``E[1 / F | f_k]``, the population
frequency ``F`` given a negative binomial posterior with success probability
``p_k = f_k / F_k`` (Benedetti & Franconi 1998, "Statistical and technological
solutions for controlled data dissemination", Pre-proceedings of New Techniques and
Technologies for Statistics; Franconi & Polettini 2004, "Individual risk estimation in
mu-Argus: a review", Privacy in Statistical Databases, LNCS 3050, 262-272).

The formulas are those of sdcMicro's ``indivRisk`` with ``method = "approx"``, the
default of its ``measure_risk`` (Templ, Kowarik & Meindl 2015, "Statistical disclosure
control for micro-data using the R package sdcMicro", J. Statistical Software 67(4)):

* ``f_k = 1``: ``r_k = p_k / (1 - p_k) * log(1 / p_k)``;
* ``f_k = 2``: ``r_k = p_k / (1 - p_k) - (p_k / (1 - p_k))**2 * log(1 / p_k)``;
* ``f_k > 2``: ``r_k = p_k / (f_k - (1 - p_k))``, Franconi & Polettini's
  approximation of the series for larger classes (sdcMicro applies it from
  ``f_k = 3``);
* ``F_k = f_k`` (the class holds its whole population): ``r_k = 1 / f_k``.

They are evaluated in the equivalent forms ``p_k / (1 - p_k) = f_k / (F_k - f_k)`` and
``log(1 / p_k) = log1p((F_k - f_k) / f_k)``, which keep their precision as ``F_k``
approaches ``f_k``. Weights below 1 can make ``F_k < f_k`` (``p_k > 1``), outside the
model; such a class is treated as ``F_k = f_k`` (risk ``1 / f_k``), where sdcMicro
would extrapolate the formulas.

*Global risk* (sdcMicro's ``measure_risk``): the expected number of
re-identifications is the sum of the individual risks over the records,
``sum_k f_k r_k``; the global risk is that number divided by the ``n`` records.

Without a weight column but with a population size ``N`` (or sampling fraction
``pi = n / N``), every record gets the weight ``N / n`` of a simple random sample
(the Horvitz-Thompson design weight ``1 / pi``), so ``F_k = f_k N / n``. (sdcMicro's
``measure_risk`` without weights treats the file as the population, ``r_k = 1 / f_k``:
the prosecutor risk, which anonaudit reports anyway.)

Under the ``wildcard`` null policy ``f_k`` and ``F_k`` count every record compatible
with the class (:mod:`anonaudit.measures.wildcard`), as sdcMicro's ``freqCalc`` does.

Its declaration as an optional analysis (:data:`ANALYSIS`) closes the
module; :mod:`anonaudit.report.sections.individual` shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ParameterError
from anonaudit.measures._classes import TOLERANCE, FailingClasses, records_in
from anonaudit.measures.base import Analysis, Setting
from anonaudit.measures.population import resolve_population
from anonaudit.measures.wildcard import NullPolicy, class_frequencies

__all__ = ["ANALYSIS", "IndividualRisk", "SdcMicroRisk", "individual_risk", "sdcmicro_risk"]


@dataclass(frozen=True)
class IndividualRisk:
    """Result of :func:`individual_risk`.

    Attributes
    ----------
    method : str
        ``"approx"``: sdcMicro's ``indivRisk`` approximation.
    basis : str
        Where ``F_k`` came from: ``"survey weights"``, or ``"uniform N/n = ..."``.
    weights : str or None
        The weight column, when known.
    population_size : float
        The sum of the records' weights: the population they stand for.
    expected_reidentifications : float
        ``sum_k f_k r_k``, the expected number of records re-identified.
    global_risk : float
        ``expected_reidentifications / n``, in [0, 1].
    highest : float
        The largest individual risk of a record.
    threshold : float
        Records whose risk exceeds this are at risk.
    records_at_risk : int
    records_at_risk_fraction : float
    risk, fk, Fk : numpy.ndarray
        Per class, aligned with ``table.classes``: the individual risk ``r_k`` of its
        records, their sample frequency ``f_k`` and estimated population frequency
        ``F_k`` (under the wildcard policy, over the compatible records).
    at_risk : pandas.DataFrame
        The classes above ``threshold`` (QI values, ``size``, ``fk``, ``Fk``,
        ``risk``), highest risk first.
    failing : FailingClasses
        The same classes as a mask over the classes, listed on demand.
    """

    method: str
    basis: str
    weights: str | None
    population_size: float
    expected_reidentifications: float
    global_risk: float
    highest: float
    threshold: float
    records_at_risk: int
    records_at_risk_fraction: float
    risk: NDArray[Any] = field(repr=False, compare=False)
    fk: NDArray[Any] = field(repr=False, compare=False)
    Fk: NDArray[Any] = field(repr=False, compare=False)
    failing: FailingClasses = field(repr=False, compare=False)

    @property
    def at_risk(self) -> pd.DataFrame:
        """The classes at risk listed (built on first use; see :attr:`failing`)."""
        return self.failing.frame


def sdcmicro_risk(fk: NDArray[Any], Fk: NDArray[Any]) -> NDArray[Any]:
    """sdcMicro's ``indivRisk`` (``method = "approx"``) for sample frequencies ``fk``
    and estimated population frequencies ``Fk`` (module docstring).

    Examples
    --------
    sdcMicro's ``tests/testthat/test_indivRisk.R`` (weighted, no missing values):

    >>> sdcmicro_risk(np.array([3, 1, 2]), np.array([108.0, 45.5, 100.0])).round(8)
    array([0.01369863, 0.08579129, 0.01877883])
    """
    f = np.asarray(fk, dtype=np.float64)
    big = np.asarray(Fk, dtype=np.float64)
    if f.shape != big.shape or (f < 1).any():
        raise ParameterError("fk must be positive and give one value per Fk")
    whole = big <= f * (1 + TOLERANCE)  # F_k = f_k: the class is its whole population
    excess = np.where(whole, 1.0, big - f)  # F_k - f_k, kept positive where unused
    odds = f / excess  # p / (1 - p)
    log_inverse = np.log1p(excess / f)  # log(1 / p)
    with np.errstate(over="ignore", invalid="ignore"):
        risk = np.select(
            [f == 1, f == 2],
            [odds * log_inverse, odds - odds * odds * log_inverse],
            default=f / (f * big - big + f),  # p / (f - (1 - p)), multiplied by F
        )
    return np.where(whole, 1.0 / f, risk)


def individual_risk(
    table: ClassTable,
    *,
    nulls: NullPolicy = "value",
    threshold: float = 0.2,
    population_size: float | None = None,
    sampling_fraction: float | None = None,
    weight_column: str | None = None,
) -> IndividualRisk:
    """Individual risk of every record and the global risk (sdcMicro ``measure_risk``).

    Parameters
    ----------
    table : ClassTable
        The class table; with :attr:`ClassTable.weights` (a ``--weights`` column),
        ``F_k`` is the sum of the class's weights.
    nulls : {"value", "drop", "wildcard"}
        How null QI values count in ``f_k`` and ``F_k``
        (:func:`~anonaudit.measures.wildcard.class_frequencies`).
    threshold : float
        Risk above which a record is at risk, in (0, 1].
    population_size, sampling_fraction : float, optional
        Without weights, one of them sets the uniform weight ``N / n``; ignored when
        the table has weights.
    weight_column : str, optional
        The name of the weight column, for the report.

    Returns
    -------
    IndividualRisk

    Examples
    --------
    Two classes of 1 and 3 records, weights 4 and 10 per record:

    >>> import pandas as pd
    >>> t = ClassTable.from_frame(
    ...     pd.DataFrame({"q": ["a", "b"], "count": [1, 3], "w": [4.0, 30.0]}),
    ...     quasi_identifiers=["q"], weight="w")
    >>> r = individual_risk(t)
    >>> round(r.highest, 6), round(r.expected_reidentifications, 6)
    (0.462098, 0.604955)
    """
    if not 0 < threshold <= 1:
        raise ParameterError(f"risk threshold must lie in (0, 1] (got {threshold!r})")
    classes = table.classes
    sizes = classes.sizes
    rows = int(sizes.sum())
    if rows == 0:
        raise ParameterError("the class table holds no records")
    fk, grossed = class_frequencies(table, nulls=nulls)
    if grossed is not None and classes.weights is not None:
        basis, population = "survey weights", float(classes.weights.sum())
    else:
        if population_size is None and sampling_fraction is None:
            raise ParameterError(
                "the individual risk needs survey weights (--weights) or a population size "
                "or sampling fraction"
            )
        weight = resolve_population(rows, population_size, sampling_fraction)[0] / rows
        grossed = fk * weight
        basis, population = f"uniform N/n = {weight:.6g}", rows * weight
    risk = sdcmicro_risk(fk, grossed)
    expected = float((sizes * risk).sum())
    mask = risk > threshold + TOLERANCE
    at_risk = records_in(sizes, mask)
    measures = {"fk": fk, "Fk": grossed, "risk": risk}
    return IndividualRisk(
        method="approx",
        basis=basis,
        weights=weight_column if classes.weights is not None else None,
        population_size=population,
        expected_reidentifications=expected,
        global_risk=expected / rows,
        highest=float(risk.max()),
        threshold=float(threshold),
        records_at_risk=at_risk,
        records_at_risk_fraction=at_risk / rows,
        risk=risk,
        fk=fk,
        Fk=grossed,
        failing=FailingClasses(classes, mask, measures, worst_first="risk", descending=True),
    )


class SdcMicroRisk(Analysis[IndividualRisk]):
    """sdcMicro's individual and global risk (:mod:`anonaudit.measures.individual`), with
    survey weights or a population size or sampling fraction."""

    key = "individual"
    position = 20
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "singling_out": ("individual risk (sdcMicro)",)
    }

    def asked(self, setting: Setting) -> bool:
        return setting.table.weights is not None or setting.options.population.given

    def compute(self, setting: Setting) -> IndividualRisk:
        options = setting.options
        return individual_risk(
            setting.table,
            nulls=options.nulls,
            threshold=options.risk_threshold,
            population_size=options.population.size,
            sampling_fraction=options.population.sampling_fraction,
            weight_column=setting.weights,
        )


ANALYSIS = SdcMicroRisk()
