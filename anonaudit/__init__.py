"""anonaudit: audit tabular data for re-identification risk.

Load data into a class table (counts per quasi-identifier tuple and sensitive value),
compute every syntactic anonymity measure from it, and read the results::

    >>> import anonaudit
    >>> report = anonaudit.audit("data.csv", quasi_identifiers=["zip", "age"],
    ...                          sensitive=["disease"],
    ...                          policy=anonaudit.Policy(k=5))  # doctest: +SKIP
    >>> report.k_anonymity.k  # doctest: +SKIP

Syntactic anonymity measures one table against stated attacks; it is not a privacy
guarantee. See docs/limitations.md.
"""

from __future__ import annotations

__version__ = "0.1.0"

from anonaudit.audit import AuditReport, audit, audit_table, load
from anonaudit.checks import (
    DisclosureResult,
    KAnonymityResult,
    LDiversityResult,
    RiskResult,
    TClosenessResult,
)
from anonaudit.classtable import ClassTable
from anonaudit.errors import (
    AnonauditError,
    BudgetError,
    ColumnError,
    EngineError,
    HierarchyError,
    InputError,
    MalformedFileError,
    MissingDependencyError,
    OutputError,
    ParameterError,
    PolicyViolationError,
    PrivacyWarning,
    SourceNotFoundError,
    StorageError,
)
from anonaudit.hierarchy import GroundDistance, Hierarchy
from anonaudit.policy import Policy

__all__ = [
    "AnonauditError",
    "AuditReport",
    "BudgetError",
    "ClassTable",
    "ColumnError",
    "DisclosureResult",
    "EngineError",
    "GroundDistance",
    "Hierarchy",
    "HierarchyError",
    "InputError",
    "KAnonymityResult",
    "LDiversityResult",
    "MalformedFileError",
    "MissingDependencyError",
    "OutputError",
    "ParameterError",
    "Policy",
    "PolicyViolationError",
    "PrivacyWarning",
    "RiskResult",
    "SourceNotFoundError",
    "StorageError",
    "TClosenessResult",
    "__version__",
    "audit",
    "audit_table",
    "load",
]
