"""Information loss of a (generalized, suppressed) class table.

How much a release costs its users, in the measures ARX and the k-anonymity literature
report beside the privacy measures. For a table of ``n`` records of which ``s`` are
suppressed, whose ``n - s`` remaining records fall in equivalence classes of sizes
``f_1 .. f_C``:

* **discernibility** ``DM = sum_i f_i**2 + n * s``: every record is charged the size of
  its class, a suppressed record the size of the whole table (Bayardo & Agrawal 2005,
  "Data privacy through optimal k-anonymization", ICDE, the discernibility metric
  ``C_DM``; ARX's "non-monotonic discernability"). Without suppression it is
  ``DM* = sum_i f_i**2`` (El Emam et al. 2009, "A globally optimal k-anonymity method
  for the de-identification of health data", JAMIA 16(5), eq. for DM*). It lies between
  ``n`` (every record unique) and ``n**2`` (one class, or everything suppressed).
* **average class size** ``C_AVG = ((n - s) / C) / k`` (LeFevre, DeWitt & Ramakrishnan
  2006, "Mondrian multidimensional k-anonymity", ICDE, Section 4): 1 when classes are
  exactly as large as k-anonymity needs; without a ``k``, ``(n - s) / C``.
* **generalization height**: the sum of the levels of the generalization (the node's
  height in the lattice of Samarati 2001), 0 for the data as it is.
* **precision** ``Prec = 1 - (sum_QI sum_records h / |DGH|) / (n * |QI|)`` (Sweeney
  2002, "Achieving k-anonymity privacy protection using generalization and
  suppression", IJUFKS 10(5), Definition "precision metric Prec"), where ``h`` is the
  level a record's value is generalized to and ``|DGH|`` the height of the QI's
  hierarchy. Under a full-domain generalization every record of a QI has the same
  ``h``; a suppressed record counts as generalized to the top of every hierarchy
  (``h / |DGH| = 1``), as ARX's precision metric counts it. A QI without a hierarchy is
  at level 0 (``h = 0``). 1 is the data as it is, 0 everything generalized to ``*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from anonaudit.classtable import ClassTable
from anonaudit.errors import ParameterError

if TYPE_CHECKING:
    from anonaudit.measures.generalization import Generalization

__all__ = ["InformationLoss", "information_loss"]


@dataclass(frozen=True)
class InformationLoss:
    """Result of :func:`information_loss`.

    Attributes
    ----------
    discernibility : float
        ``DM``: sum of squared class sizes plus ``n`` per suppressed record (``DM*``
        when nothing is suppressed).
    average_class_size : float
        ``C_AVG``: records per class divided by ``k`` (records per class without ``k``).
    height : int
        Sum of the generalization levels (0 without generalization).
    precision : float
        Sweeney's ``Prec`` in [0, 1] (1 without generalization or suppression).
    suppressed : int
        Records suppressed (not in the table).
    k : int or None
        The ``k`` that ``average_class_size`` is relative to.
    """

    discernibility: float
    average_class_size: float
    height: int
    precision: float
    suppressed: int
    k: int | None = None


def information_loss(
    table: ClassTable,
    *,
    k: int | None = None,
    suppressed: int = 0,
    generalization: Generalization | None = None,
) -> InformationLoss:
    """Information loss of ``table`` (see the module docstring for the formulas).

    Parameters
    ----------
    table : ClassTable
        The released class table (generalized already, without the suppressed records).
    k : int, optional
        The k of the policy, for ``C_AVG``.
    suppressed : int
        Records removed from the release; they count in ``n``.
    generalization : Generalization, optional
        The generalization ``table`` results from, for the height and precision.

    Returns
    -------
    InformationLoss

    Examples
    --------
    Classes of 2 and 3 records and 1 record suppressed out of 6: ``DM = 4 + 9 + 6``,
    ``C_AVG = (5 / 2) / 2``, ``Prec = 1 - (1 * 2) / (6 * 2)``.

    >>> import pandas as pd
    >>> t = ClassTable.from_frame(pd.DataFrame({"q": ["a", "b"], "z": "x", "count": [2, 3]}),
    ...                           quasi_identifiers=["q", "z"])
    >>> loss = information_loss(t, k=2, suppressed=1)
    >>> loss.discernibility, loss.average_class_size, round(loss.precision, 4)
    (19.0, 1.25, 0.8333)
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ParameterError(f"k must be a whole number >= 1 (got {k!r})")
    if isinstance(suppressed, bool) or not isinstance(suppressed, (int, np.integer)):
        raise ParameterError(f"suppressed must be a whole number of records (got {suppressed!r})")
    if suppressed < 0:
        raise ParameterError(f"suppressed must be >= 0 (got {suppressed})")
    sizes = table.classes.sizes.astype(float)
    kept = float(sizes.sum())
    total = kept + suppressed
    if total == 0:
        raise ParameterError("information loss of an empty table is undefined")
    per_class = kept / len(sizes) if len(sizes) else 0.0
    levels = {} if generalization is None else generalization.levels
    hierarchies = {} if generalization is None else generalization.hierarchies
    share = sum(
        level / hierarchies[qi].height for qi, level in levels.items() if level
    )  # sum over QIs of h / |DGH| for a kept record; each suppressed record counts |QI|
    attributes = len(table.quasi_identifiers)
    generalized = kept * share + suppressed * attributes
    return InformationLoss(
        discernibility=float(np.dot(sizes, sizes)) + total * suppressed,
        average_class_size=per_class / k if k is not None else per_class,
        height=0 if generalization is None else generalization.height(),
        precision=1.0 - generalized / (total * attributes),
        suppressed=int(suppressed),
        k=None if k is None else int(k),
    )
