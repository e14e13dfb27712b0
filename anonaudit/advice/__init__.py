"""Advice on how to pass a policy: what to suppress, what to generalize.

Advice is computed from the class table and checked by auditing the table as it would
be; the data itself is never changed.
"""

from __future__ import annotations

from anonaudit.advice.lattice import Advice, Transformation, advise, qi_hierarchies
from anonaudit.advice.suppression import (
    MeasureSuppression,
    SuppressionAdvice,
    suppression_advice,
)

__all__ = [
    "Advice",
    "MeasureSuppression",
    "SuppressionAdvice",
    "Transformation",
    "advise",
    "qi_hierarchies",
    "suppression_advice",
]
