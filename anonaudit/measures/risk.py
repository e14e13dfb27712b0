"""Re-identification risk under the prosecutor model.

The prosecutor knows the target is in the released table and knows their QI values;
picking one record of the target's equivalence class at random re-identifies them with
probability ``1 / f_E`` for a class of size ``f_E`` (El Emam & Dankar 2008,
"Protecting Privacy Using k-Anonymity", JAMIA 15(5); the prosecutor risk measures of
ARX, Prasser et al. 2014). Over the N records of a table with C classes:

* highest risk ``1 / min f_E`` (the record-level maximum);
* average risk ``(1/N) sum_records 1/f_E = C / N``;
* lowest risk ``1 / max f_E``;
* records at risk: records whose risk exceeds a threshold;
* sample uniques: records alone in their class (``f_E = 1``).

Its declaration as a measure of the audit (:data:`MEASURE`) closes the
module; :mod:`anonaudit.report.sections.risk` shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ParameterError
from anonaudit.measures._classes import TOLERANCE, records_in
from anonaudit.measures.base import Context, Measure
from anonaudit.settings.names import Judged

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from anonaudit.classtable import ClassTable

__all__ = ["MEASURE", "RISK_BANDS", "ProsecutorRisk", "RiskResult", "prosecutor_risk"]


#: Upper edges of the risk bands the report counts records in.
RISK_BANDS = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0)


@dataclass(frozen=True)
class RiskResult:
    """Result of :func:`prosecutor_risk`.

    Attributes
    ----------
    highest, average, lowest : float
        Record-level prosecutor risk.
    threshold : float
        Records whose risk exceeds this are "at risk".
    records_at_risk : int
        Records with risk above ``threshold``.
    records_at_risk_fraction : float
        The same as a share of all records.
    sample_uniques : int
        Records in classes of size 1.
    sample_uniques_fraction : float
        The same as a share of all records.
    bands : dict of float to int
        Records whose risk is at most each edge of :data:`RISK_BANDS` and above the
        previous edge.
    max_highest : float or None
        Largest highest risk the policy allows.
    frequencies : numpy.ndarray
        Per class (``table.classes`` order), the records it matches: its size, or under
        the ``wildcard`` null policy the records compatible with it (``f_k``).
    """

    highest: float
    average: float
    lowest: float
    threshold: float
    records_at_risk: int
    records_at_risk_fraction: float
    sample_uniques: int
    sample_uniques_fraction: float
    bands: dict[float, int]
    max_highest: float | None
    frequencies: NDArray[Any] = field(repr=False, compare=False)

    @property
    def per_class(self) -> NDArray[Any]:
        """Per class, the prosecutor risk of each of its records, ``1 / f_k`` (computed
        when asked: the class table may hold tens of millions of classes)."""
        return 1.0 / self.frequencies

    @property
    def passed(self) -> bool | None:
        """Whether ``highest <= max_highest``; ``None`` without that threshold."""
        return None if self.max_highest is None else self.highest <= self.max_highest + TOLERANCE


def prosecutor_risk(
    table: ClassTable,
    *,
    threshold: float = 0.2,
    max_highest: float | None = None,
    fk: NDArray[Any] | None = None,
) -> RiskResult:
    """Prosecutor re-identification risk of every record (El Emam & Dankar 2008).

    Parameters
    ----------
    table : ClassTable
        The class table.
    threshold : float
        Risk above which a record counts as at risk (0.2: classes smaller than 5).
    max_highest : float, optional
        Policy bound on the highest risk, in (0, 1].
    fk : numpy.ndarray, optional
        Per class, the records matching it, when that is not its size (the
        ``wildcard`` null policy, :func:`~anonaudit.measures.wildcard.class_frequencies`):
        a record's risk is then ``1 / fk`` and the average ``(1/N) sum size / fk``.

    Returns
    -------
    RiskResult

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.classtable import ClassTable
    >>> t = ClassTable.from_frame(pd.DataFrame({"q": ["a", "b"], "count": [1, 4]}),
    ...                           quasi_identifiers=["q"])
    >>> r = prosecutor_risk(t)
    >>> r.highest, r.average, r.lowest, r.sample_uniques
    (1.0, 0.4, 0.25, 1)
    """
    for name, value in (("risk threshold", threshold), ("max risk", max_highest)):
        if value is not None and not 0 < value <= 1:
            raise ParameterError(f"{name} must lie in (0, 1] (got {value!r})")
    sizes = table.classes.sizes
    frequencies = sizes if fk is None else fk
    rows = int(sizes.sum())
    risk = 1.0 / frequencies
    at_risk = records_in(sizes, risk > threshold + TOLERANCE)
    uniques = records_in(sizes, frequencies == 1)
    edges = np.array((0.0, *RISK_BANDS))
    band = np.clip(
        np.searchsorted(edges, risk - TOLERANCE, side="left") - 1, 0, len(RISK_BANDS) - 1
    )
    per_band = np.bincount(band, weights=sizes, minlength=len(RISK_BANDS)).astype(np.int64)
    return RiskResult(
        highest=float(risk.max()),
        average=float((sizes / frequencies).sum()) / rows,
        lowest=float(risk.min()),
        threshold=float(threshold),
        records_at_risk=at_risk,
        records_at_risk_fraction=at_risk / rows,
        sample_uniques=uniques,
        sample_uniques_fraction=uniques / rows,
        bands={edge: int(n) for edge, n in zip(RISK_BANDS, per_band, strict=True)},
        max_highest=max_highest,
        frequencies=frequencies,
    )


class ProsecutorRisk(Measure[RiskResult]):
    """The prosecutor risk of every record (:func:`prosecutor_risk`)."""

    key = "risk"
    judged = Judged.RISK
    position = 50
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "singling_out": ("sample uniques", "re-identification risk")
    }
    thresholds = ("max_risk",)

    def compute(self, context: Context, sensitive: str | None) -> RiskResult:
        return prosecutor_risk(
            context.table,
            threshold=context.risk_threshold,
            max_highest=context.policy.max_risk,
            fk=context.wildcard_sizes,
        )

    def passed(self, result: RiskResult) -> bool | None:
        return result.passed

    def failing(self, result: RiskResult, table: ClassTable) -> NDArray[Any]:
        """The classes whose records' risk ``1 / f`` exceeds the bound."""
        assert result.max_highest is not None
        return 1.0 / table.classes.sizes > result.max_highest + TOLERANCE


MEASURE = ProsecutorRisk()
