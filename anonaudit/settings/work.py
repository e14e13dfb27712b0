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
import os
import re
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from anonaudit.errors import ParameterError

__all__ = [
    "DEFAULT_MAX_WORK",
    "LISTED_CLASS_WORK",
    "SUBSET_OVERHEAD",
    "Limits",
    "available_memory",
    "check_memory",
    "check_work",
    "limits",
    "memory_budget",
    "parse_size",
    "put_limits",
    "scoped_limits",
    "subsets",
]

#: Units of work allowed by default: about a minute of SUDA on the 2-core development
#: machine (measured: 20 QIs, 1,048,575 subsets of 7 classes, about 120 s).
DEFAULT_MAX_WORK = 50_000_000
#: What visiting one QI subset costs beyond its classes, in classes (the same run).
SUBSET_OVERHEAD = 100
#: Units of work one class listed in a JSON report counts for (about 1 KB written).
LISTED_CLASS_WORK = 1_000


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


_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*")


def parse_size(text: str) -> int | None:
    """Bytes in a size written as DuckDB reads one (``"4GB"``, ``"500 MiB"``); ``None`` if not.

    >>> parse_size("4GB"), parse_size("1.5 GiB"), parse_size("lots")
    (4000000000, 1610612736, None)
    """
    found = _SIZE.fullmatch(text)
    if found is None or found.group(2).lower() not in _UNITS:
        return None
    return int(float(found.group(1)) * _UNITS[found.group(2).lower()])


def _meminfo(key: str) -> int | None:
    """A line of ``/proc/meminfo`` in bytes (``MemAvailable``), ``None`` where there is none."""
    try:
        with open("/proc/meminfo", encoding="ascii") as stream:
            for line in stream:
                name, _, value = line.partition(":")
                if name == key:
                    return int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _mapped() -> int:
    """The address space this process maps now (``VmSize``), in bytes; 0 if unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return 0


def available_memory() -> int:
    """Bytes of memory this process can still take, as well as can be told.

    The machine's available memory (``MemAvailable`` of ``/proc/meminfo``, else its
    physical memory), and below that what an address-space limit (``ulimit -v``,
    ``RLIMIT_AS``) leaves beside what the process already maps.
    """
    free = _meminfo("MemAvailable")
    if free is None:
        try:
            free = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            free = 1 << 62
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        free = min(free, max(soft - _mapped(), 0))
    return free


def memory_budget(memory_limit: str | None = None) -> int:
    """Bytes one read or analysis may plan to take: :func:`available_memory`, or less.

    ``memory_limit`` is the ``--memory-limit`` given (DuckDB's units), which lowers it.
    """
    budget = available_memory()
    given = parse_size(memory_limit) if memory_limit else None
    return budget if given is None else min(budget, given)


def check_memory(what: str, needed: int, memory_limit: str | None, advice: str) -> None:
    """Refuse ``what`` when it would need more than :func:`memory_budget` bytes.

    Raises
    ------
    ParameterError
        Naming ``what``, the estimate and the memory there is, then ``advice``.
    """
    budget = memory_budget(memory_limit)
    if needed > budget:
        raise ParameterError(
            f"{what} would need about {_gib(needed)} of memory, more than the "
            f"{_gib(budget)} available; {advice}"
        )


def _gib(size: int) -> str:
    return f"{size / 1024**3:.1f} GiB" if size >= 1024**3 else f"{size / 1024**2:.0f} MiB"


# The memory limit of aggregation and reads, in force while a load runs (EngineOptions'
# memory_limit and temp_dir, put in force by anonaudit.engines.local.limits_in_force):
# values only, so that the sources, below the engine, read it too.
@dataclass(frozen=True)
class Limits:
    """How much memory DuckDB's aggregation may take before it spills, and where to.

    Attributes
    ----------
    memory_limit : str or None
        DuckDB's ``memory_limit``, such as ``"4GB"``; ``None`` keeps DuckDB's default
        (80% of the machine's memory).
    temp_dir : str or None
        Where DuckDB spills the hash table when it outgrows ``memory_limit``; ``None``
        uses the system's temporary directory (``TMPDIR``, else ``/tmp``).
    """

    memory_limit: str | None = None
    temp_dir: str | None = None


_LIMITS: ContextVar[Limits] = ContextVar("anonaudit_limits", default=Limits())  # noqa: B039 (frozen)


def limits() -> Limits:
    """The :class:`Limits` in force: those of the load running in this context
    (:func:`anonaudit.engines.local.limits_in_force`), else none."""
    return _LIMITS.get()


def put_limits(value: Limits) -> None:
    """Put ``value`` in force for the rest of this context (the command line runs each
    command in a context of its own: :func:`anonaudit.cli.app.main`)."""
    _LIMITS.set(value)


@contextmanager
def scoped_limits(value: Limits) -> Iterator[None]:
    """Put ``value`` in force in this context until the block ends;
    :func:`anonaudit.engines.local.limits_in_force` checks it first."""
    token = _LIMITS.set(value)
    try:
        yield
    finally:
        _LIMITS.reset(token)
