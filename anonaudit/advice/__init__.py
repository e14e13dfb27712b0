"""Advice on how to pass a policy: what to suppress, what to generalize.

Advice is computed from the class table and checked by auditing the table as it would
be, with the audit the caller passes in (:class:`~anonaudit.advice.audit.Auditor`); the
data itself is never changed. :func:`anonaudit.advise` searches with the audit itself.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from anonaudit.advice.audit import Audit, Auditor
from anonaudit.advice.lattice import Advice, Transformation, qi_hierarchies, search
from anonaudit.advice.suppression import (
    MeasureSuppression,
    SuppressionAdvice,
    suppression_advice,
)

__all__ = [
    "Advice",
    "Audit",
    "Auditor",
    "MeasureSuppression",
    "SuppressionAdvice",
    "Transformation",
    "qi_hierarchies",
    "search",
    "suppression_advice",
]


def __getattr__(name: str) -> Any:
    """``advise``, which moved above the advice (it runs the audit), with a warning."""
    if name != "advise":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        "anonaudit.advice.advise moved to anonaudit.advise (anonaudit.auditing.advise); "
        "the old path stops working in 0.3",
        DeprecationWarning,
        stacklevel=2,
    )
    return importlib.import_module("anonaudit.auditing").advise
