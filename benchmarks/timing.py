"""The one timer the benchmarks share: the best of a few runs, in this process."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(repeat: int, work: Callable[[], T]) -> tuple[float, T]:
    """The shortest ``time.perf_counter`` time of ``repeat`` (at least 1) runs of
    ``work``, and the result of the last run."""
    best = float("inf")
    for _ in range(max(repeat, 1) - 1):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    start = time.perf_counter()
    result = work()
    return min(best, time.perf_counter() - start), result
