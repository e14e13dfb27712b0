"""Which columns identify: distinction and separation of QI subsets (Motwani & Xu).

Motwani, R. & Xu, Y. (2007). "Efficient algorithms for masking and finding
quasi-identifiers". Proc. VLDB Conference (Secure Data Management workshop),
definitions of alpha-distinct and alpha-separating attribute sets. For a set ``S`` of
attributes of a table of ``n`` records, with ``f_g`` the number of records in each
group ``g`` of records sharing their values on ``S``:

* *distinction* ``= |groups| / n`` (the ``alpha`` such that ``S`` becomes a key after
  removing a ``1 - alpha`` fraction of the records, in the form ARX computes it);
* *separation* ``= 1 - sum_g f_g (f_g - 1) / (n (n - 1))``: the share of the
  ``n (n - 1) / 2`` record pairs that differ on at least one attribute of ``S``.

Both are 1 for a key (every record alone in its group). ARX (``RiskModelAttributes``
and ``QuasiIdentifierRisk``, Prasser & Zitzmann) reports them for every non-empty subset
of the QIs, each subset listed in the order of its columns, sorted by subset size, then
distinction, then separation (ascending), then the subset's text ``"[a, b]"``; it
reports 0 where ``n = 1`` makes separation undefined. :func:`qi_analysis` does the same
up to a maximum subset size, from the class table: the groups over ``S`` are unions of
the equivalence classes over all QIs, so only their counts are summed.

Beside the subsets, the analysis drops each QI in turn and reports the k (smallest
class) and the share of sample uniques left on the other QIs: how much each column on
its own contributes to making people unique.

Its declaration as an optional analysis (:data:`ANALYSIS`) closes the
module; :mod:`anonaudit.report.sections.qi_analysis` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ParameterError
from anonaudit.measures._subsets import SubsetAnalysis, SubsetClasses, default_max_subset_size
from anonaudit.measures.base import Setting
from anonaudit.progress import Steps

if TYPE_CHECKING:
    from anonaudit.progress import Steps
    from anonaudit.settings.options import AuditOptions

__all__ = ["ANALYSIS", "QIAnalysis", "QIDrop", "QIRisk", "QuasiIdentifierAnalysis", "qi_analysis"]


@dataclass(frozen=True)
class QIRisk:
    """Distinction and separation of one subset of the QIs.

    Attributes
    ----------
    qi : tuple of str
        The subset, in the order of the QI columns.
    distinction : float
        Groups over ``qi`` per record, in (0, 1].
    separation : float
        Share of record pairs that differ on ``qi``, in [0, 1] (0 for one record).
    """

    qi: tuple[str, ...]
    distinction: float
    separation: float


@dataclass(frozen=True)
class QIDrop:
    """The table without one QI.

    Attributes
    ----------
    dropped : str
        The QI left out.
    k : int
        Smallest class over the other QIs (the number of records when none is left).
    uniques : int
        Records alone in their class over the other QIs.
    uniques_fraction : float
        ``uniques / n``.
    """

    dropped: str
    k: int
    uniques: int
    uniques_fraction: float


@dataclass(frozen=True)
class QIAnalysis:
    """Result of :func:`qi_analysis`.

    Attributes
    ----------
    quasi_identifiers : tuple of str
        All QIs.
    max_size : int
        Largest subset analysed.
    rows : int
        Records.
    entries : tuple of QIRisk
        Every non-empty subset of at most ``max_size`` QIs, sorted as ARX sorts them
        (size, distinction, separation, then the text of the subset).
    k : int
        Smallest class over all QIs.
    uniques : int
        Sample uniques over all QIs.
    uniques_fraction : float
        ``uniques / rows``.
    drops : tuple of QIDrop
        One per QI, in QI order: k and sample uniques without it.
    """

    quasi_identifiers: tuple[str, ...]
    max_size: int
    rows: int
    entries: tuple[QIRisk, ...]
    k: int
    uniques: int
    uniques_fraction: float
    drops: tuple[QIDrop, ...]

    @property
    def most_identifying(self) -> QIDrop:
        """The QI whose removal leaves the fewest sample uniques (first in QI order on
        ties)."""
        return min(self.drops, key=lambda d: d.uniques)


def qi_analysis(
    table: ClassTable, *, max_size: int | None = None, steps: Steps | None = None
) -> QIAnalysis:
    """Distinction and separation (Motwani & Xu 2007) of every subset of the QIs.

    Parameters
    ----------
    table : ClassTable
        The class table of the audited data.
    max_size : int, optional
        Largest subset to analyse (>= 1; larger values mean all QIs). By default
        :func:`default_max_subset_size`: every subset up to 10 QIs, else up to 3.
    steps : Steps, optional
        Called once per QI subset grouped (a progress display), the subsets of every
        size up to ``max_size`` and then the one without each QI.

    Returns
    -------
    QIAnalysis

    Examples
    --------
    ARX's hand-computed example (``TestRiskQuasiIdentifiers``):

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": ["20", "30", "40", "20", "40"],
    ...                       "sex": ["F", "F", "F", "M", "M"],
    ...                       "state": ["CA", "CA", "TX", "NY", "CA"], "count": 1})
    >>> t = ClassTable.from_frame(frame, quasi_identifiers=["age", "sex", "state"])
    >>> [(e.qi, e.distinction, round(e.separation, 9)) for e in qi_analysis(t).entries[:3]]
    [(('sex',), 0.4, 0.6), (('state',), 0.6, 0.7), (('age',), 0.6, 0.8)]
    """
    qi = table.quasi_identifiers
    size = _check_max_size(max_size, len(qi))
    subsets = SubsetClasses(table.classes)
    n = subsets.rows
    entries = []
    for width in range(1, size + 1):
        for positions in combinations(range(len(qi)), width):
            sizes = subsets.group(positions)[1]
            entries.append(
                QIRisk(
                    qi=tuple(qi[i] for i in positions),
                    distinction=len(sizes) / n,
                    separation=_separation(sizes, n),
                )
            )
            if steps is not None:
                steps()
    entries.sort(key=lambda e: (len(e.qi), e.distinction, e.separation, _text(e.qi)))
    drops = []
    for position, name in enumerate(qi):
        sizes = subsets.group([i for i in range(len(qi)) if i != position])[1]
        uniques = int(np.count_nonzero(sizes == 1))
        drops.append(QIDrop(name, int(sizes.min()), uniques, uniques / n))
        if steps is not None:
            steps()
    sizes = table.classes.sizes
    uniques = int(np.count_nonzero(sizes == 1))
    return QIAnalysis(
        quasi_identifiers=qi,
        max_size=size,
        rows=n,
        entries=tuple(entries),
        k=int(sizes.min()),
        uniques=uniques,
        uniques_fraction=uniques / n,
        drops=tuple(drops),
    )


def _separation(sizes: NDArray[Any], n: int) -> float:
    """``1 - sum f (f - 1) / (n (n - 1))``; 0 for a single record, as ARX."""
    if n < 2:
        return 0.0
    same = int(np.sum(sizes * (sizes - 1)))  # ordered pairs within groups, exact
    return 1.0 - same / (n * (n - 1))


def _text(subset: tuple[str, ...]) -> str:
    """The subset as ARX prints it (Java's ``List.toString``), its last tie-breaker."""
    return "[" + ", ".join(subset) + "]"


def _check_max_size(max_size: int | None, n_qi: int) -> int:
    if max_size is None:
        return default_max_subset_size(n_qi)
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or max_size < 1:
        raise ParameterError(
            f"the largest QI subset to analyse must be a whole number >= 1 (got {max_size!r})"
        )
    return min(int(max_size), n_qi)


class QuasiIdentifierAnalysis(SubsetAnalysis[QIAnalysis]):
    """The QI analysis (:func:`qi_analysis`), with
    ``--qi-analysis``."""

    key = "qi_analysis"
    position = 40
    option = "--qi-analysis"
    label = "QI analysis"

    def requested(self, options: AuditOptions) -> bool | int | None:
        return options.analyses.qi_analysis

    def run(self, setting: Setting, max_size: int | None, steps: Steps | None) -> QIAnalysis:
        return qi_analysis(setting.table, max_size=max_size, steps=steps)

    def extra_steps(self, n_qi: int) -> int:
        """One step per QI left out."""
        return n_qi


ANALYSIS = QuasiIdentifierAnalysis()
