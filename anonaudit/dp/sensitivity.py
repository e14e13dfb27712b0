"""Neighbouring datasets and the sensitivity of the released counts.

Differential privacy (Dwork, McSherry, Nissim & Smith 2006, "Calibrating noise to
sensitivity in private data analysis", TCC) compares a mechanism's output on two
*neighbouring* datasets. Two relations are in use (:data:`NEIGHBOURING`):

* ``add-remove``: one dataset is the other plus one privacy unit's records (unbounded
  DP). The number of records is itself private.
* ``replace``: one privacy unit's records are replaced by others (bounded DP); the number
  of records is public.

A *privacy unit* is what the guarantee protects: by default one row; with
``--privacy-unit COL`` one person, whose rows are first bounded to at most ``m``
(:mod:`anonaudit.dp.bounding`).

The release is a histogram: the class table, one count per cell (QI tuple, SA values).
Each record lies in exactly one cell, so the cells partition the records and releasing
all of them is parallel composition (McSherry 2009, "Privacy integrated queries", SIGMOD,
Theorem 4): the whole vector costs what one count costs. Derivation of the change of
the count vector ``x`` when one unit with at most ``m`` records changes:

* add-remove: the unit's records add 1 to at most ``m`` cells, at most ``m`` in total,
  so ``||Δx||_0 <= m``, ``||Δx||_1 <= m``, ``||Δx||_2 <= m`` (all in one cell),
  ``||Δx||_∞ <= m``. For ``m = 1``: one cell changes by one.
* replace: ``Δx = a - r`` with ``a, r >= 0`` and ``||a||_1, ||r||_1 <= m``, so
  ``||Δx||_1 <= 2m``, ``||Δx||_2² = ||a||² + ||r||² - 2 a·r <= 2m²`` (``√2 m``),
  ``||Δx||_∞ <= m`` and ``||Δx||_0 <= 2m``.

Every statistic derived from the released class table (class sizes, the class-size
histogram, each class's SA histogram, the table's SA distribution, k, l and t of the
noisy table) is post-processing and costs nothing more (Dwork & Roth 2014, "The
algorithmic foundations of differential privacy", Proposition 2.1).

Randomized response changes one record's report at a time; its neighbouring relation is
``replace`` restricted to the sensitive value, and a unit with ``m`` records makes ``m``
reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anonaudit.errors import ParameterError
from anonaudit.settings.names import NEIGHBOURING, Neighbouring

__all__ = [
    "MAX_CONTRIBUTIONS",
    "NEIGHBOURING",
    "Neighbouring",
    "Sensitivity",
    "cells_sensitivity",
    "histogram_sensitivity",
]

#: Largest contribution bound accepted: beyond it the noise would drown every count.
MAX_CONTRIBUTIONS = 1_000_000


@dataclass(frozen=True)
class Sensitivity:
    """How far the count vector moves between neighbouring datasets.

    Attributes
    ----------
    neighbouring : {"add-remove", "replace"}
        The relation.
    max_contributions : int
        ``m``, records one privacy unit may have.
    l0, l1, l2, linf : float
        Bounds on ``||Δx||_0``, ``||Δx||_1``, ``||Δx||_2``, ``||Δx||_∞``.
    """

    neighbouring: Neighbouring
    max_contributions: int
    l0: int
    l1: int
    l2: float
    linf: int

    def shifts(self, *, laplace: bool) -> tuple[int, ...]:
        """Per-cell shifts of the worst neighbouring pair, for privacy-loss accounting.

        Laplace noise: the whole L1 change in one cell. Gaussian noise depends only on
        the L2 norm; with integer cells the worst case is ``m`` in one cell (add-remove)
        or ``m`` in each of two cells (replace).
        """
        if laplace:
            return (self.l1,)
        m = self.max_contributions
        return (m,) if self.neighbouring == "add-remove" else (m, m)


def histogram_sensitivity(
    neighbouring: Neighbouring = "add-remove", *, max_contributions: int = 1
) -> Sensitivity:
    """Sensitivity of a histogram whose cells partition the records (module docstring).

    >>> s = histogram_sensitivity("replace")
    >>> s.l1, round(s.l2, 4), s.linf
    (2, 1.4142, 1)
    """
    if neighbouring not in NEIGHBOURING:
        raise ParameterError(
            f"unknown neighbouring relation {neighbouring!r}; choose one of "
            f"{', '.join(NEIGHBOURING)}"
        )
    m = max_contributions
    if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= MAX_CONTRIBUTIONS:
        raise ParameterError(
            f"max_contributions must be a whole number from 1 to {MAX_CONTRIBUTIONS:,} (got {m!r})"
        )
    if neighbouring == "add-remove":
        return Sensitivity(neighbouring, m, l0=m, l1=m, l2=float(m), linf=m)
    return Sensitivity(neighbouring, m, l0=2 * m, l1=2 * m, l2=math.sqrt(2) * m, linf=m)


@dataclass(frozen=True)
class _OnceInEachCell(Sensitivity):
    """One person counted once in each of ``l1`` cells: the worst pair shifts every one
    of them by 1, under Laplace and Gaussian noise alike."""

    def shifts(self, *, laplace: bool) -> tuple[int, ...]:
        return (self.l1,) if laplace else (1,) * self.l1


def cells_sensitivity(cells: int) -> Sensitivity:
    """Sensitivity of count tables that count one person once in each of at most ``cells``
    cells (linked tables whose cells overlap: a cross-tabulation, its margins and totals),
    add-remove: ``||Δx||_0 = ||Δx||_1 = cells``, ``||Δx||_2 = √cells``, ``||Δx||_∞ = 1``.

    Unlike a histogram's (:func:`histogram_sensitivity`, all of one person in one cell),
    the worst pair under Gaussian noise is 1 in each of those cells.

    >>> s = cells_sensitivity(4)
    >>> s.l1, s.l2, s.linf, s.shifts(laplace=False)
    (4, 2.0, 1, (1, 1, 1, 1))
    """
    if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
        raise ParameterError(f"cells must be a whole number >= 1 (got {cells!r})")
    return _OnceInEachCell("add-remove", 1, l0=cells, l1=cells, l2=math.sqrt(cells), linf=1)
