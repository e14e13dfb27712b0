"""k-anonymity.

Sweeney, L. (2002). "k-anonymity: a model for protecting privacy". International
Journal of Uncertainty, Fuzziness and Knowledge-Based Systems 10(5), 557-570.
A table is k-anonymous when every record is indistinguishable from at least k-1 others
on the quasi-identifiers, i.e. every equivalence class has at least k records; the
table's k is its smallest class size.

Its declaration as a measure of the audit (:data:`MEASURE`) closes the
module; :mod:`anonaudit.report.sections.k_anonymity` shows it.
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
from anonaudit.measures._classes import FailingClasses, records_in
from anonaudit.measures.base import ClassMeasure, Context
from anonaudit.settings.names import Judged

__all__ = ["MEASURE", "KAnonymity", "KAnonymityResult", "k_anonymity"]


@dataclass(frozen=True)
class KAnonymityResult:
    """Result of :func:`k_anonymity`.

    Attributes
    ----------
    k : int
        Size of the smallest equivalence class.
    classes : int
        Number of equivalence classes.
    rows : int
        Number of records.
    histogram : dict of int to int
        Class size -> number of classes of that size, ascending by size.
    threshold : int or None
        The ``k`` the policy asks for.
    violating : pandas.DataFrame
        Classes smaller than the threshold (QI values and ``size``), smallest first.
    failing : FailingClasses
        The same classes as a mask over the classes, listed on demand.
    violating_records : int
        Records in those classes.
    """

    k: int
    classes: int
    rows: int
    histogram: dict[int, int]
    threshold: int | None
    failing: FailingClasses = field(repr=False)
    violating_records: int

    @property
    def violating(self) -> pd.DataFrame:
        """The failing classes listed (built on first use; see :attr:`failing`)."""
        return self.failing.frame

    @property
    def passed(self) -> bool | None:
        """Whether the threshold is met; ``None`` without a threshold."""
        return None if self.threshold is None else self.k >= self.threshold


def k_anonymity(
    table: ClassTable, *, k: int | None = None, fk: NDArray[Any] | None = None
) -> KAnonymityResult:
    """Measure k-anonymity (Sweeney 2002) and list the classes smaller than ``k``.

    Parameters
    ----------
    table : ClassTable
        The class table of the audited data.
    k : int, optional
        Required smallest class size (>= 1).
    fk : numpy.ndarray, optional
        Per class, the records it is indistinguishable from, when that is not its size:
        the ``wildcard`` null policy's frequencies
        (:func:`~anonaudit.measures.wildcard.class_frequencies`). ``k`` and the histogram
        are then over ``fk``, and the listed classes show it beside their size.

    Returns
    -------
    KAnonymityResult

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.classtable import ClassTable
    >>> t = ClassTable.from_frame(pd.DataFrame({"zip": ["a", "b"], "count": [3, 1]}),
    ...                           quasi_identifiers=["zip"])
    >>> r = k_anonymity(t, k=2)
    >>> r.k, r.passed, r.violating_records
    (1, False, 1)
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ParameterError(f"k must be a whole number >= 1 (got {k!r})")
    classes = table.classes
    sizes = classes.sizes
    frequencies = sizes if fk is None else fk
    measures = {} if fk is None else {"fk": fk}
    values, counts = np.unique(frequencies, return_counts=True)
    mask = frequencies < k if k is not None else np.zeros(len(sizes), dtype=bool)
    return KAnonymityResult(
        k=int(frequencies.min()),
        classes=len(sizes),
        rows=table.rows,
        histogram={int(v): int(c) for v, c in zip(values, counts, strict=True)},
        threshold=None if k is None else int(k),
        failing=FailingClasses(
            classes, mask, measures, worst_first="size" if fk is None else "fk", descending=False
        ),
        violating_records=records_in(sizes, mask),
    )


class KAnonymity(ClassMeasure[KAnonymityResult]):
    """k-anonymity of the whole table (:func:`k_anonymity`)."""

    key = "k_anonymity"
    judged = Judged.K_ANONYMITY
    position = 10
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"singling_out": ("k-anonymity",)}
    thresholds = ("k",)

    def compute(self, context: Context, sensitive: str | None) -> KAnonymityResult:
        return k_anonymity(context.table, k=context.policy.k, fk=context.wildcard_sizes)


MEASURE = KAnonymity()
