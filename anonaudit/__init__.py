"""anonaudit: audit tabular data for re-identification risk.

Load data into a class table (counts per quasi-identifier tuple and sensitive value),
compute every syntactic anonymity measure from it, and read the results::

    >>> import anonaudit
    >>> report = anonaudit.audit(
    ...     "data.csv",
    ...     anonaudit.Roles(["zip", "age"], ["disease"]),
    ...     anonaudit.AuditOptions(policy=anonaudit.Policy(k=5)),
    ... )  # doctest: +SKIP
    >>> report.k_anonymity.k  # doctest: +SKIP

Syntactic anonymity measures one table against stated attacks; it is not a privacy
guarantee. See docs/limitations.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING
from typing import Any as _Any

from anonaudit import _moved
from anonaudit.distances import exported as _distance_class
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
from anonaudit.settings.options import (
    Analyses,
    AuditOptions,
    EngineOptions,
    LedgerOptions,
    PopulationOptions,
    ReadOptions,
    Roles,
)
from anonaudit.settings.policy import Policy

__version__ = "0.1.0"

_moved.install()

if TYPE_CHECKING:
    from anonaudit.auditing import advise, audit, audit_table
    from anonaudit.classtable import ClassTable
    from anonaudit.distances.equal import EqualDistance
    from anonaudit.distances.hierarchical import HierarchicalDistance
    from anonaudit.distances.matrix import MatrixDistance
    from anonaudit.distances.numeric import NumericDistance
    from anonaudit.distances.ordered import OrderedDistance
    from anonaudit.dp.options import DPOptions, PrivacyGuarantee, PrivacyUnit
    from anonaudit.engines.load import load
    from anonaudit.hierarchy import GroundDistance, Hierarchy
    from anonaudit.measures.disclosure import DisclosureResult
    from anonaudit.measures.k_anonymity import KAnonymityResult
    from anonaudit.measures.l_diversity import LDiversityResult
    from anonaudit.measures.risk import RiskResult
    from anonaudit.measures.t_closeness import TClosenessResult
    from anonaudit.results import AuditReport

#: Names imported on first use, so that ``import anonaudit`` (and ``anonaudit --help``)
#: loads no heavy dependency (PEP 562 module ``__getattr__``); so is every ground
#: distance's class (``anonaudit.OrderedDistance``), from :mod:`anonaudit.distances`.
_LAZY = {
    "AuditReport": "anonaudit.results",
    "advise": "anonaudit.auditing",
    "audit": "anonaudit.auditing",
    "audit_table": "anonaudit.auditing",
    "load": "anonaudit.engines.load",
    "DisclosureResult": "anonaudit.measures.disclosure",
    "KAnonymityResult": "anonaudit.measures.k_anonymity",
    "LDiversityResult": "anonaudit.measures.l_diversity",
    "RiskResult": "anonaudit.measures.risk",
    "TClosenessResult": "anonaudit.measures.t_closeness",
    "ClassTable": "anonaudit.classtable",
    "DPOptions": "anonaudit.dp.options",
    "PrivacyGuarantee": "anonaudit.dp.options",
    "PrivacyUnit": "anonaudit.dp.options",
    "GroundDistance": "anonaudit.hierarchy",
    "Hierarchy": "anonaudit.hierarchy",
}


def __getattr__(name: str) -> _Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    else:
        value = None if name.startswith("__") else _distance_class(name)
        if value is None:
            raise AttributeError(f"module 'anonaudit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Analyses",
    "AnonauditError",
    "AuditOptions",
    "AuditReport",
    "BudgetError",
    "ClassTable",
    "ColumnError",
    "DPOptions",
    "DisclosureResult",
    "EngineError",
    "EngineOptions",
    "EqualDistance",
    "GroundDistance",
    "HierarchicalDistance",
    "Hierarchy",
    "HierarchyError",
    "InputError",
    "KAnonymityResult",
    "LDiversityResult",
    "LedgerOptions",
    "MalformedFileError",
    "MatrixDistance",
    "MissingDependencyError",
    "NumericDistance",
    "OrderedDistance",
    "OutputError",
    "ParameterError",
    "Policy",
    "PolicyViolationError",
    "PopulationOptions",
    "PrivacyGuarantee",
    "PrivacyUnit",
    "PrivacyWarning",
    "ReadOptions",
    "RiskResult",
    "Roles",
    "SourceNotFoundError",
    "StorageError",
    "TClosenessResult",
    "__version__",
    "advise",
    "audit",
    "audit_table",
    "load",
]
