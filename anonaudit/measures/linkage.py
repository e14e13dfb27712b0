"""Linking a release to an identified population table: k-map, δ-presence, unique matches.

The attacker holds an identified table of the population (a voter list, a registry)
coded as the release is: the same QI columns, generalized and suppressed alike. A
release class matches the population records with the same QI tuple.

* **k-map** (Sweeney 2002; El Emam & Dankar 2008, "Protecting privacy using
  k-anonymity", JAMIA 15(5)): every release class matches at least k population
  records, so a released record can be linked to no fewer than k identified people.
  The table's k-map is the smallest match count. ARX (``KMap`` with a research subset)
  checks ``pcount >= k`` per class, with ``pcount`` the population records of the class.
* **δ-presence** (Nergiz, Atzori & Clifton 2007, "Hiding the presence of individuals
  from shared databases", SIGMOD): for each population class, the share of its people
  who are in the release, ``released / population``, is the attacker's probability
  that a person of the class is in the release; a table is (δmin, δmax)-present when
  every share lies in ``[δmin, δmax]``. As ARX's ``DPresence``, a population class with
  no released record has share 0.
* **unique matches**: released records whose class matches exactly one population
  record: linked to a name with certainty.

All three are pure functions of the two class tables.

Its declaration as an optional analysis (:data:`ANALYSIS`) closes the
module; :mod:`anonaudit.report.sections.linkage` shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ColumnError, ParameterError
from anonaudit.measures._matching import common_class_ids
from anonaudit.measures.base import Analysis, Setting
from anonaudit.settings.names import Judged

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from anonaudit.classtable import Classes, ClassTable

__all__ = [
    "ANALYSIS",
    "DeltaPresenceResult",
    "KMapResult",
    "PopulationLinkage",
    "PopulationTableLinkage",
    "UniqueMatchResult",
    "delta_presence",
    "k_map",
    "population_linkage",
    "unique_matches",
]


@dataclass(frozen=True)
class _Matches:
    """Per release class its population count; per population class its released count."""

    release_sizes: NDArray[Any]
    population_of_release: NDArray[Any]
    population_sizes: NDArray[Any]
    release_of_population: NDArray[Any]


def _match(release: ClassTable, population: ClassTable) -> _Matches:
    qi = list(release.quasi_identifiers)
    for name in qi:
        if name not in population.quasi_identifiers:
            raise ColumnError(
                f"the population table has no quasi-identifier {name!r}; "
                f"its quasi-identifiers are: {', '.join(population.quasi_identifiers)}"
            )
    own, other = release.classes, _classes_over(population, qi)
    distinct, (release_ids, population_ids) = common_class_ids([own.keys, other.keys])
    count = distinct.num_rows
    in_population = np.zeros(count, dtype=np.int64)
    in_population[population_ids] = other.sizes
    in_release = np.zeros(count, dtype=np.int64)
    in_release[release_ids] = own.sizes
    return _Matches(
        release_sizes=own.sizes,
        population_of_release=in_population[release_ids],
        population_sizes=other.sizes,
        release_of_population=in_release[population_ids],
    )


def _classes_over(population: ClassTable, columns: Sequence[str]) -> Classes:
    """``population``'s classes over ``columns`` (some of its quasi-identifiers)."""
    if list(population.quasi_identifiers) == list(columns):
        return population.classes
    keys = population.keys.select(list(columns))
    return ClassTable(tuple(columns), (), keys, population.counts).merge().classes


@dataclass(frozen=True)
class KMapResult:
    """Result of :func:`k_map`.

    Attributes
    ----------
    k : int
        Smallest number of population records a release class matches (0 when a
        release class matches none: the population does not cover the release).
    threshold : int or None
        The K asked for.
    classes : int
        Release classes.
    classes_below, records_below : int
        Release classes (records) matching fewer than ``threshold`` population records
        (0 without a threshold).
    unmatched_classes, unmatched_records : int
        Release classes (records) matching no population record.
    matches : numpy.ndarray
        Population records matched by each release class (ids of ``release.classes``).
    """

    k: int
    threshold: int | None
    classes: int
    classes_below: int
    records_below: int
    unmatched_classes: int
    unmatched_records: int
    matches: NDArray[Any] = field(repr=False)

    @property
    def passed(self) -> bool | None:
        """Whether every release class matches at least ``threshold`` population records."""
        return None if self.threshold is None else self.k >= self.threshold


def k_map(release: ClassTable, population: ClassTable, *, k: int | None = None) -> KMapResult:
    """Measure k-map: the fewest population records any release class matches.

    Parameters
    ----------
    release : ClassTable
        The release's class table.
    population : ClassTable
        The attacker's identified population, coded as the release (same QI columns and
        generalization).
    k : int, optional
        The K each release class must match; counts the classes and records below it.

    Returns
    -------
    KMapResult
    """
    return _k_map(_match(release, population), k)


def _k_map(matched: _Matches, k: int | None) -> KMapResult:
    if k is not None and k < 1:
        raise ParameterError(f"the k of k-map must be at least 1 (got {k})")
    found = matched.population_of_release
    below = found < k if k is not None else np.zeros(len(found), dtype=bool)
    none = found == 0
    return KMapResult(
        k=int(found.min()) if len(found) else 0,
        threshold=k,
        classes=len(found),
        classes_below=int(below.sum()),
        records_below=int(matched.release_sizes[below].sum()),
        unmatched_classes=int(none.sum()),
        unmatched_records=int(matched.release_sizes[none].sum()),
        matches=found,
    )


@dataclass(frozen=True)
class DeltaPresenceResult:
    """Result of :func:`delta_presence`.

    Attributes
    ----------
    min, max : float
        Smallest and largest share ``released / population`` over the population
        classes (nan for an empty population).
    classes : int
        Population classes.
    shares : numpy.ndarray
        The share of each population class (ids of ``population.classes``).
    """

    min: float
    max: float
    classes: int
    shares: NDArray[Any] = field(repr=False)

    def passed(self, delta_min: float, delta_max: float) -> bool:
        """Whether the table is (``delta_min``, ``delta_max``)-present."""
        return bool(delta_min <= self.min and self.max <= delta_max)


def delta_presence(release: ClassTable, population: ClassTable) -> DeltaPresenceResult:
    """Measure δ-presence: per population class, the share of its people released.

    Release records whose class the population lacks have no share (k-map counts them
    as unmatched).
    """
    return _delta_presence(_match(release, population))


def _delta_presence(matched: _Matches) -> DeltaPresenceResult:
    shares = matched.release_of_population / matched.population_sizes
    empty = len(shares) == 0
    return DeltaPresenceResult(
        min=math.nan if empty else float(shares.min()),
        max=math.nan if empty else float(shares.max()),
        classes=len(shares),
        shares=shares,
    )


@dataclass(frozen=True)
class UniqueMatchResult:
    """Result of :func:`unique_matches`.

    Attributes
    ----------
    records : int
        Release records whose class matches exactly one population record.
    classes : int
        Release classes that do.
    """

    records: int
    classes: int


def unique_matches(release: ClassTable, population: ClassTable) -> UniqueMatchResult:
    """Count the released records linked to exactly one identified person."""
    return _unique_matches(_match(release, population))


def _unique_matches(matched: _Matches) -> UniqueMatchResult:
    unique = matched.population_of_release == 1
    return UniqueMatchResult(
        records=int(matched.release_sizes[unique].sum()), classes=int(unique.sum())
    )


@dataclass(frozen=True)
class PopulationLinkage:
    """k-map, δ-presence and unique matches of a release against one population table."""

    k_map: KMapResult
    delta_presence: DeltaPresenceResult
    unique_matches: UniqueMatchResult


def population_linkage(
    release: ClassTable, population: ClassTable, *, k: int | None = None
) -> PopulationLinkage:
    """All three population measures from one match of the tables.

    :func:`k_map` (with ``k``), :func:`delta_presence` and :func:`unique_matches`.

    Examples
    --------
    >>> import pandas as pd
    >>> release = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["13*", "14*"], "count": [2, 1]}), quasi_identifiers=["zip"])
    >>> population = ClassTable.from_frame(pd.DataFrame(
    ...     {"zip": ["13*", "14*", "15*"], "count": [4, 1, 9]}), quasi_identifiers=["zip"])
    >>> result = population_linkage(release, population, k=3)
    >>> result.k_map.k, result.k_map.records_below
    (1, 1)
    >>> result.delta_presence.min, result.delta_presence.max
    (0.0, 1.0)
    >>> result.unique_matches.records
    1
    """
    matched = _match(release, population)
    return PopulationLinkage(
        k_map=_k_map(matched, k),
        delta_presence=_delta_presence(matched),
        unique_matches=_unique_matches(matched),
    )


class PopulationTableLinkage(Analysis[PopulationLinkage]):
    """k-map, δ-presence and unique matches (:mod:`anonaudit.measures.linkage`) against the
    population table of the options; k-map judged when the policy sets it."""

    key = "linkage"
    position = 30
    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "linkability": ("k-map", "delta-presence", "unique matches")
    }
    unassessed: ClassVar[Mapping[str, str]] = {
        "linkability": "no auxiliary table was given: linkability to public data was not "
        "assessed (--population FILE)"
    }
    judged = Judged.K_MAP

    def asked(self, setting: Setting) -> bool:
        return setting.population is not None

    def compute(self, setting: Setting) -> PopulationLinkage:
        assert setting.population is not None
        return population_linkage(
            setting.table, setting.population, k=setting.options.population.k_map
        )

    def passed(self, result: PopulationLinkage) -> bool | None:
        return result.k_map.passed

    def failing(self, result: PopulationLinkage, table: ClassTable) -> NDArray[Any]:
        """The classes matching fewer population records than the policy asks."""
        return result.k_map.matches < (result.k_map.threshold or 0)


ANALYSIS = PopulationTableLinkage()
