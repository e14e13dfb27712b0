"""How much work a long analysis would take, checked before it starts.

The QI analysis and SUDA visit every subset of the QIs up to a size, each over every
class; the advice search audits lattice nodes; a listing of every class writes one row
per class. Each grows fast with its parameters (20 QIs have 1,048,575 subsets), so
:func:`check_work` refuses, before any of it runs, an analysis whose estimate exceeds a
limit the user can raise (``--max-work``, ``max_work`` in a policy file), instead of
running for minutes or exhausting memory.
"""

from __future__ import annotations

import math
from typing import Protocol

from anonaudit.errors import ParameterError

__all__ = [
    "DEFAULT_MAX_WORK",
    "LISTED_CLASS_WORK",
    "SUBSET_OVERHEAD",
    "Steps",
    "check_work",
    "subsets",
]

#: Units of work allowed by default: about a minute of SUDA on the 2-core development
#: machine (measured: 20 QIs, 1,048,575 subsets of 7 classes, about 120 s).
DEFAULT_MAX_WORK = 50_000_000
#: What visiting one QI subset costs beyond its classes, in classes (the same run).
SUBSET_OVERHEAD = 100
#: Units of work one class listed in a JSON report counts for (about 1 KB written).
LISTED_CLASS_WORK = 1_000


class Steps(Protocol):
    """Counts the steps of a long analysis as they are done (a progress display).

    :meth:`anonaudit.engines.local.Progress.steps` makes one; an analysis calls it once
    per step (a QI subset, a lattice node) and never needs to know what it displays.
    """

    def __call__(self, count: int = 1) -> None:
        """Count ``count`` more steps done."""


def subsets(n: int, max_size: int) -> int:
    """Non-empty subsets of ``n`` items with at most ``max_size`` items.

    >>> subsets(20, 20), subsets(9, 3)
    (1048575, 129)
    """
    return sum(math.comb(n, size) for size in range(1, min(n, max_size) + 1))


def check_work(what: str, amount: int, limit: int | None, unit: str) -> None:
    """Refuse ``what`` when its estimated ``amount`` of work exceeds ``limit``.

    ``None`` sets no limit.

    Raises
    ------
    ParameterError
        Naming the analysis, the estimate and how to raise the limit.

    Examples
    --------
    >>> check_work("--suda 20 over 20 QIs", 10**12, 200_000_000, "checks")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonaudit.errors.ParameterError: --suda 20 over 20 QIs would take about ... --max-work ...
    """
    if limit is not None and amount > limit:
        raise ParameterError(
            f"{what} would take about {amount:,} {unit}, more than the limit of {limit:,}; "
            f"ask for less (a smaller size), or raise the limit with --max-work {amount} "
            "(max_work in a policy file)"
        )
