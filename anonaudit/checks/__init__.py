"""Checks: pure functions of a :class:`~anonaudit.classtable.ClassTable`.

One module per family; each returns a frozen result holding the measured value, the
threshold asked for and the offending equivalence classes. No check reads raw rows.
"""

from __future__ import annotations

from anonaudit.checks.disclosure import DisclosureResult, attribute_disclosure
from anonaudit.checks.kanonymity import KAnonymityResult, k_anonymity
from anonaudit.checks.ldiversity import LDiversityResult, l_diversity
from anonaudit.checks.population import (
    POPULATION_MODELS,
    JournalistRisk,
    MarketerRisk,
    PopulationUniqueness,
    journalist_risk,
    marketer_risk,
    population_uniqueness,
)
from anonaudit.checks.risk import RiskResult, prosecutor_risk
from anonaudit.checks.tcloseness import DISTANCES, TClosenessResult, t_closeness

__all__ = [
    "DISTANCES",
    "POPULATION_MODELS",
    "DisclosureResult",
    "JournalistRisk",
    "KAnonymityResult",
    "LDiversityResult",
    "MarketerRisk",
    "PopulationUniqueness",
    "RiskResult",
    "TClosenessResult",
    "attribute_disclosure",
    "journalist_risk",
    "k_anonymity",
    "l_diversity",
    "marketer_risk",
    "population_uniqueness",
    "prosecutor_risk",
    "t_closeness",
]
