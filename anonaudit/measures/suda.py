"""Special uniques: minimal sample uniques, SUDA and DIS-SUDA scores.

A *minimal sample unique* (MSU) of a record is a set of QIs on which the record is the
only one with its values, while it shares its values on every proper subset with some
other record (Elliot, Manning & Ford 2002, "A computational algorithm for handling the
special uniques problem", Int. J. Uncertainty, Fuzziness and Knowledge-Based Systems
10(5), 493-509). Because uniqueness is inherited by supersets, a unique set is minimal
when none of its subsets one QI smaller is unique. A record with an MSU is unique on all
QIs, and records of one equivalence class share their values, so MSUs are computed per
class of size 1 on the class table: for subsets ``S`` in increasing size the records of
each group over ``S`` are the summed sizes of the classes in it
(:class:`~anonaudit.measures._subsets.SubsetClasses`); a class of size 1 is unique on
``S`` when its group has one record. SUDA2 (Manning, Haglin & Keane 2008, "A recursive
search algorithm for statistical disclosure assessment", Data Min. Knowl. Disc. 16,
165-196) finds the same MSUs by a recursive search over the records.

Scores, as sdcMicro's ``suda2`` computes them (``src/Suda2.h``, ``R/suda2.R``)
-----------------------------------------------------------------------------
With ``ATT`` the number of QIs, each MSU of size ``k`` adds a weight to its record's
*SUDA score*:

* ``original_scores=True`` (sdcMicro's default since 5.0.2, "as described by Elliot et
  al."): ``(ATT - k)!``, i.e. ``prod_{i=k}^{ATT-1} (ATT - i)``. The IHSN practice guide
  (Benschop, Machingauta & Welch, "Statistical Disclosure Control: A Practice Guide",
  section "Calculating SUDA scores") writes ``prod_{i=k}^{M} (ATT - i)`` with ``M``
  the largest MSU size searched; that is ``(ATT - k)! / (ATT - M - 1)!``, the same
  ranking scaled by a constant, and equal to sdcMicro's for ``M = ATT - 1``. The
  weight here never depends on ``max_msu_size``, so a score found with a limit is a
  lower bound of the full score.
* ``original_scores=False`` (the IHSN C++ implementation's scores, sdcMicro's
  ``original_scores=FALSE``): ``(2**(ATT-k) - 1) * k! * (ATT-k)! / ATT!``.

The *DIS-SUDA score* spreads the file-level DIS probability over the special uniques
(Elliot & Manning 2003, "Using DIS to modify the classification of special uniques";
Skinner & Elliot 2002, "A measure of disclosure risk for microdata", J. R. Stat. Soc. B
64(4), 855-867). With ``U`` sample uniques, ``P`` records in classes of size 2 and the
sampling fraction ``f`` (sdcMicro's ``DisFraction``, default 0.01):

``DIS = U f / (U f + P (1 - f))`` (Skinner & Elliot's estimate of the probability that a
unique match is correct), ``Q = 1 + (8 - ATT) / 20``, ``A = sum_j s_j**-Q`` over the
records with a score ``s_j > 0``, and for such a record
``dis_i = 1 / (1 + (U / DIS - U) / (s_i**Q * A))``; 0 for a record without MSU.

The *attribute contribution* of a QI is the share (in percent) of the total score carried
by the MSUs that contain it (an MSU counts for each of its QIs, so the shares add up to
more than 100): sdcMicro's ``attribute_contributions``.

Differences from sdcMicro
-------------------------
* sdcMicro searches every MSU size; ``max_msu_size`` bounds the search here.
* sdcMicro's ``suda2`` never puts a missing value in an MSU (items equal to its
  ``missing`` code are skipped); here a null QI value is a value like any other unless
  the audit drops such records (``nulls="drop"``), as in every other check.
* With one or two QIs sdcMicro pads the data with constant columns, so ``ATT`` is 3;
  here ``ATT`` is always the number of QIs.
* sdcMicro counts ``U`` only among records alone in their bucket of its 16-bit hash and
  holds ``DIS`` and ``Q`` in single precision. Whenever ``U > 0``, ``U / DIS - U`` equals
  ``P (1 - f) / f`` whatever ``U`` is, so the DIS-SUDA scores agree to single
  precision; the ``dis`` reported here uses the true ``U``.

Its declaration as an optional analysis (:data:`ANALYSIS`) closes the
module; :mod:`anonaudit.report.sections.suda` shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ParameterError
from anonaudit.measures._subsets import SubsetAnalysis, SubsetClasses, default_max_subset_size
from anonaudit.measures.base import Setting
from anonaudit.measures.population import resolve_population
from anonaudit.progress import Steps
from anonaudit.settings.work import check_memory

if TYPE_CHECKING:
    from anonaudit.progress import Steps
    from anonaudit.settings.options import AuditOptions

__all__ = [
    "ANALYSIS",
    "DEFAULT_DIS_FRACTION",
    "DIS_BANDS",
    "SpecialUniques",
    "SudaRecord",
    "SudaResult",
    "suda",
    "suda_weights",
]


#: sdcMicro's default ``DisFraction``.
DEFAULT_DIS_FRACTION = 0.01


#: Records listed with their MSUs by default.
DEFAULT_TOP = 10


#: Upper edges of the DIS-SUDA bands records are counted in: sdcMicro's
#: ``print.suda2`` intervals ``== 0``, ``(0, 0.1]``, ..., ``(0.6, 0.7]``, ``> 0.7``.
DIS_BANDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0)


@dataclass(frozen=True)
class SudaRecord:
    """A sample unique with its MSUs.

    Attributes
    ----------
    class_id : int
        Its class in ``table.classes`` (the class holds this one record).
    values : tuple of (str or None)
        Its QI values, in QI order.
    score, dis_score : float
        SUDA and DIS-SUDA scores.
    msus : tuple of tuple of str
        The QI sets that make it unique on their own, smallest first.
    """

    class_id: int
    values: tuple[str | None, ...]
    score: float
    dis_score: float
    msus: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class SudaResult:
    """Result of :func:`suda`.

    Per-class arrays are aligned with ``table.classes`` (length C); a record's value is
    its class's, 0 for every class of two or more records.

    Attributes
    ----------
    quasi_identifiers : tuple of str
        The QIs (``ATT`` of them).
    max_msu_size : int
        Largest MSU searched.
    complete : bool
        Whether every MSU size was searched (``max_msu_size == ATT``); otherwise scores
        are lower bounds of sdcMicro's.
    original_scores : bool
        Which weights scored the MSUs (see the module notes).
    dis_fraction : float
        The sampling fraction ``f`` of the DIS estimate.
    scores, dis_scores : numpy.ndarray
        SUDA and DIS-SUDA score per class (``float64``).
    msu_counts : numpy.ndarray
        MSUs per class (``int64``).
    msus_by_size : dict of int to int
        Number of MSUs of each size found (sizes 1..max_msu_size).
    sample_uniques : int
        Records alone in their class (``U``).
    special_uniques : int
        Sample uniques that are unique on a proper subset of the QIs, i.e. have an MSU
        smaller than all QIs (Elliot, Manning & Ford 2002; within ``max_msu_size``). A
        record unique only on every QI at once has one MSU, all of them, and is not
        special.
    pairs : int
        Records in classes of size 2 (``P``).
    dis : float
        Skinner & Elliot's probability that a unique match is correct.
    attribute_contributions : dict of str to float
        Per QI, percent of the total score carried by MSUs containing it.
    dis_bands : dict of float to int
        Records whose DIS-SUDA score is at most each edge of :data:`DIS_BANDS` and above
        the previous edge (the first band holds the records scoring 0).
    top : tuple of SudaRecord
        The highest-scoring records, highest first, with their MSUs.
    """

    quasi_identifiers: tuple[str, ...]
    max_msu_size: int
    complete: bool
    original_scores: bool
    dis_fraction: float
    scores: NDArray[Any]
    dis_scores: NDArray[Any]
    msu_counts: NDArray[Any]
    msus_by_size: dict[int, int]
    sample_uniques: int
    special_uniques: int
    pairs: int
    dis: float
    attribute_contributions: dict[str, float]
    dis_bands: dict[float, int]
    top: tuple[SudaRecord, ...]


def suda_weights(att: int, *, original_scores: bool = True) -> NDArray[Any]:
    """The score of one MSU of each size ``k = 1..att`` (index ``k - 1``), as sdcMicro.

    ``(att - k)!`` (Elliot et al.), or with ``original_scores=False`` the IHSN weights
    ``(2**(att-k) - 1) k! (att-k)! / att!``.

    >>> suda_weights(4).tolist(), suda_weights(4, original_scores=False).tolist()
    ([6.0, 2.0, 1.0, 1.0], [1.75, 0.5, 0.25, 0.0])
    """
    sizes = range(1, att + 1)
    if original_scores:
        return np.array([float(math.factorial(att - k)) for k in sizes])
    return np.array(
        [(2.0 ** (att - k) - 1.0) / math.comb(att, k) for k in sizes],
    )


def suda(
    table: ClassTable,
    *,
    max_msu_size: int | None = None,
    dis_fraction: float = DEFAULT_DIS_FRACTION,
    original_scores: bool = True,
    top: int = DEFAULT_TOP,
    steps: Steps | None = None,
) -> SudaResult:
    """Find the minimal sample uniques and score every record (SUDA, DIS-SUDA).

    Parameters
    ----------
    table : ClassTable
        The class table of the audited data.
    max_msu_size : int, optional
        Largest MSU to search (>= 1; larger means all QIs). By default every size up
        to 10 QIs, else 3 (:func:`~anonaudit.measures.qi_analysis.default_max_subset_size`).
    dis_fraction : float
        Sampling fraction ``f`` in (0, 1] for the DIS estimate (sdcMicro's
        ``DisFraction``).
    original_scores : bool
        Score MSUs by ``(ATT - k)!`` (sdcMicro's default) or by the IHSN weights.
    top : int
        Records to list with their MSUs.
    steps : Steps, optional
        Called once per QI subset searched (a progress display).

    Returns
    -------
    SudaResult

    Examples
    --------
    The practice guide's example (records 3, 5, 7 and 8 are special uniques):

    >>> import pandas as pd
    >>> rows = [("Urban", "Female", "Secondary incomplete", "Employed"),
    ...         ("Urban", "Female", "Primary incomplete", "Non-LF"),
    ...         ("Urban", "Male", "Secondary complete", "Employed"),
    ...         ("Rural", "Female", "Secondary complete", "Unemployed"),
    ...         ("Urban", "Female", "Primary complete", "Non-LF"),
    ...         ("Urban", "Male", "Post-secondary", "Unemployed"),
    ...         ("Urban", "Female", "Secondary incomplete", "Non-LF")]
    >>> frame = pd.DataFrame(rows, columns=["res", "sex", "edu", "lab"])
    >>> frame["count"] = [2, 1, 2, 1, 1, 1, 2]
    >>> t = ClassTable.from_frame(frame, quasi_identifiers=["res", "sex", "edu", "lab"])
    >>> r = suda(t)
    >>> [(rec.values[0], rec.score, rec.msus) for rec in r.top[:1]]
    [('Rural', 12.0, (('res',), ('sex', 'edu'), ('sex', 'lab'), ('edu', 'lab')))]
    """
    qi = table.quasi_identifiers
    att = len(qi)
    limit = _check(max_msu_size, dis_fraction, top, att)
    classes = table.classes
    subsets = SubsetClasses(classes)
    weights = suda_weights(att, original_scores=original_scores)
    candidates = np.flatnonzero(classes.sizes == 1)  # only sample uniques have MSUs
    _check_memory(att, limit, len(candidates), len(classes))
    scores = np.zeros(len(classes))
    counts = np.zeros(len(classes), dtype=np.int64)
    contributions = np.zeros(att)
    by_size: dict[int, int] = {}
    found: list[tuple[tuple[int, ...], NDArray[Any]]] = []  # (QI positions, class ids)
    previous: dict[tuple[int, ...], NDArray[Any]] = {}
    for width in range(1, limit + 1):
        current: dict[tuple[int, ...], NDArray[Any]] = {}
        for positions in combinations(range(att), width):
            index, sizes = subsets.group(positions)
            unique = sizes[index[candidates]] == 1
            minimal = unique.copy()
            if width > 1:
                for left_out in positions:
                    minimal &= ~previous[tuple(p for p in positions if p != left_out)]
            current[positions] = unique
            ids = candidates[minimal]
            scores[ids] += weights[width - 1]
            counts[ids] += 1
            contributions[list(positions)] += weights[width - 1] * len(ids)
            by_size[width] = by_size.get(width, 0) + len(ids)
            if len(ids):
                found.append((positions, ids))
            if steps is not None:
                steps()
        previous = current
    sample_uniques = len(candidates)
    pairs = 2 * int(np.count_nonzero(classes.sizes == 2))
    dis = _dis(sample_uniques, pairs, dis_fraction)
    dis_scores = _dis_scores(scores, sample_uniques, pairs, dis, att)
    total = float(scores.sum())
    return SudaResult(
        quasi_identifiers=qi,
        max_msu_size=limit,
        complete=limit == att,
        original_scores=original_scores,
        dis_fraction=float(dis_fraction),
        scores=scores,
        dis_scores=dis_scores,
        msu_counts=counts,
        msus_by_size=by_size,
        sample_uniques=sample_uniques,
        # An MSU of every QI is a record's only MSU (any other would be a subset of it).
        special_uniques=int(np.count_nonzero(counts)) - by_size.get(att, 0),
        pairs=pairs,
        dis=dis,
        attribute_contributions={
            name: 100.0 * float(c) / total if total else 0.0
            for name, c in zip(qi, contributions, strict=True)
        },
        dis_bands=_bands(dis_scores, classes.sizes),
        top=_top(table, scores, dis_scores, found, top),
    )


def _bands(dis_scores: NDArray[Any], sizes: NDArray[Any]) -> dict[float, int]:
    """Records per DIS-SUDA band (a class's records share its score)."""
    band = np.searchsorted(np.array(DIS_BANDS), dis_scores, side="left")
    counts = np.bincount(band, weights=sizes, minlength=len(DIS_BANDS))
    return {edge: int(n) for edge, n in zip(DIS_BANDS, counts, strict=True)}


def _top(
    table: ClassTable,
    scores: NDArray[Any],
    dis_scores: NDArray[Any],
    found: list[tuple[tuple[int, ...], NDArray[Any]]],
    top: int,
) -> tuple[SudaRecord, ...]:
    """The ``top`` highest-scoring classes (ties by QI values) with their MSUs."""
    classes = table.classes
    scored = np.flatnonzero(scores > 0)
    order = np.lexsort((classes.rank[scored], -scores[scored]))
    chosen = scored[order[:top]]
    msus: dict[int, list[tuple[str, ...]]] = {int(c): [] for c in chosen}
    for positions, ids in found:  # found is ordered by size, then by QI positions
        for class_id in ids[np.isin(ids, chosen)]:
            msus[int(class_id)].append(tuple(table.quasi_identifiers[p] for p in positions))
    values = classes.keys.take(pa.array(chosen, pa.int64())).to_pylist()
    return tuple(
        SudaRecord(
            class_id=int(c),
            values=tuple(row[name] for name in table.quasi_identifiers),
            score=float(scores[c]),
            dis_score=float(dis_scores[c]),
            msus=tuple(msus[int(c)]),
        )
        for c, row in zip(chosen, values, strict=True)
    )


def _dis(uniques: int, pairs: int, f: float) -> float:
    """Skinner & Elliot (2002): ``U f / (U f + P (1 - f))``; 0 without sample uniques."""
    if uniques == 0:
        return 0.0
    return uniques * f / (uniques * f + pairs * (1.0 - f))


def _dis_scores(
    scores: NDArray[Any], uniques: int, pairs: int, dis: float, att: int
) -> NDArray[Any]:
    """sdcMicro's DIS-SUDA: ``1 / (1 + (U/DIS - U) / (s**Q * sum s_j**-Q))`` where ``s > 0``."""
    result = np.zeros(len(scores))
    scored = scores > 0
    if not scored.any():
        return result
    q = 1.0 + (8.0 - att) / 20.0
    adjust = float(np.sum(scores[scored] ** -q))
    odds = uniques / dis - uniques  # = P (1 - f) / f
    result[scored] = 1.0 / (1.0 + odds / (scores[scored] ** q * adjust))
    return result


#: Bytes one QI subset's flags take beyond one per sample unique (the array, its key).
_SUBSET_BYTES = 256


def memory_needed(att: int, limit: int, candidates: int, classes: int) -> int:
    """Bytes the search of MSUs up to ``limit`` QIs of ``att`` holds at its widest.

    The flags of every subset of one size and of the size below (a byte per sample
    unique each), and the grouping of one subset (8 bytes per class, a few times).

    >>> memory_needed(20, 20, 10_000, 10_000) > 3 * 1024**3
    True
    """
    widest = max(math.comb(att, width) + math.comb(att, width - 1) for width in range(1, limit + 1))
    return widest * (candidates + _SUBSET_BYTES) + 32 * classes


def _check_memory(att: int, limit: int, candidates: int, classes: int) -> None:
    """Refuse, before it starts, a search that would take more memory than there is.

    ``--max-work`` bounds the time; with it lifted (``--max-work 0``), a search of 20
    QIs over many sample uniques would otherwise run until memory ran out.
    """
    check_memory(
        f"SUDA of MSUs up to {limit} of {att} QIs over {candidates:,} sample uniques",
        memory_needed(att, limit, candidates, classes),
        None,
        "ask for smaller MSUs (--suda N with a smaller N), audit fewer QIs, or run where "
        "more memory is free",
    )


def _check(max_msu_size: int | None, f: float, top: int, att: int) -> int:
    if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1:
        raise ParameterError(f"the DIS sampling fraction must be in (0, 1] (got {f!r})")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ParameterError(f"the number of top SUDA records must be >= 0 (got {top!r})")
    if max_msu_size is None:
        return default_max_subset_size(att)
    if (
        isinstance(max_msu_size, bool)
        or not isinstance(max_msu_size, (int, np.integer))
        or max_msu_size < 1
    ):
        raise ParameterError(
            f"the largest MSU size must be a whole number >= 1 (got {max_msu_size!r})"
        )
    return min(int(max_msu_size), att)


class SpecialUniques(SubsetAnalysis[SudaResult]):
    """SUDA (:func:`suda`), with ``--suda``; DIS estimated at the
    sampling fraction of the population, when one is given."""

    key = "suda"
    position = 50
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"singling_out": ("SUDA",)}
    option = "--suda"
    label = "SUDA"

    def requested(self, options: AuditOptions) -> bool | int | None:
        return options.analyses.suda

    def run(self, setting: Setting, max_size: int | None, steps: Steps | None) -> SudaResult:
        sampled = setting.options.population
        fraction = (
            resolve_population(setting.table.rows, sampled.size, sampled.sampling_fraction)[1]
            if sampled.given
            else DEFAULT_DIS_FRACTION
        )
        return suda(setting.table, max_msu_size=max_size, dis_fraction=fraction, steps=steps)


ANALYSIS = SpecialUniques()
