"""Moved to :mod:`anonaudit.checks.linkage`, below the measures that use it.

k-map, δ-presence and unique matches against an identified population table. The old
import path keeps working until 0.3: each name read from here is the one of
:mod:`anonaudit.checks.linkage`, with a ``DeprecationWarning`` (:mod:`anonaudit.linkage`
exports them too, without one).
"""

import warnings
from typing import Any

from anonaudit.checks import linkage

__all__ = linkage.__all__


def __getattr__(name: str) -> Any:
    """``anonaudit.checks.linkage``'s ``name``, with a ``DeprecationWarning``."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"anonaudit.linkage.population.{name} is anonaudit.checks.linkage.{name} (also "
        "exported by anonaudit.linkage); the old path stops working in 0.3",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(linkage, name)
