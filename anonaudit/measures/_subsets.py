"""Class tables over subsets of the quasi-identifiers, from the full class table.

The equivalence classes over a subset ``S`` of the QIs are unions of the classes over
all QIs: group the classes by their values on ``S`` and sum their sizes. No raw record
is read again; the cost per subset is linear in the number of classes.

The analyses over QI subsets (QI analysis, SUDA) share :class:`SubsetAnalysis`: the
size asked, the work refused beforehand above the limit, the progress shown.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from anonaudit.measures.base import Analysis, Result, Setting
from anonaudit.settings.work import SUBSET_OVERHEAD, check_work, subsets

if TYPE_CHECKING:
    from anonaudit.progress import Steps
    from anonaudit.settings.options import AuditOptions

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import Classes, _combine, _encode

__all__ = [
    "DEFAULT_LARGE_MAX_SIZE",
    "FULL_POWER_SET_QIS",
    "SubsetAnalysis",
    "SubsetClasses",
    "default_max_subset_size",
]

#: Up to this many QIs the default analyses every subset (``2**10 - 1`` of them);
#: above it, subsets of up to :data:`DEFAULT_LARGE_MAX_SIZE` QIs.
FULL_POWER_SET_QIS = 10


#: Default largest subset analysed when there are more than ``FULL_POWER_SET_QIS`` QIs.
DEFAULT_LARGE_MAX_SIZE = 3


def default_max_subset_size(n_qi: int) -> int:
    """The largest subset analysed by default: all of them up to
    :data:`FULL_POWER_SET_QIS` QIs (as ARX), else :data:`DEFAULT_LARGE_MAX_SIZE`."""
    return n_qi if n_qi <= FULL_POWER_SET_QIS else DEFAULT_LARGE_MAX_SIZE


@dataclass(frozen=True)
class SubsetClasses:
    """The classes of a table, ready to be regrouped by subsets of its QIs.

    Attributes
    ----------
    classes : Classes
        The equivalence classes over all QIs.
    """

    classes: Classes

    @cached_property
    def codes(self) -> tuple[NDArray[Any], ...]:
        """Per QI, each class's value as an integer code (null is a value of its own)."""
        return tuple(_encode(column)[1] for column in self.classes.keys.columns)

    @property
    def rows(self) -> int:
        """Number of records."""
        return int(self.classes.sizes.sum())

    def group(self, subset: Sequence[int]) -> tuple[NDArray[Any], NDArray[Any]]:
        """Group the classes by their values on the QIs at positions ``subset``.

        Returns
        -------
        index : numpy.ndarray
            For each class, the id of its group (a class over ``subset``).
        sizes : numpy.ndarray
            Records per group, ``int64``. The empty subset gives one group of all
            records.
        """
        if not subset:
            index = np.zeros(len(self.classes), dtype=np.int64)
        else:
            index = _combine(self.codes[i] for i in subset)[1]
        sizes = np.bincount(index, weights=self.classes.sizes).astype(np.int64)
        return index, sizes


class SubsetAnalysis(Analysis[Result]):
    """An analysis that visits the QI subsets up to a size its option asks (``True``:
    the default size), refused beforehand above the work limit, with its progress shown.

    Attributes
    ----------
    option : str
        Its command-line option, for the refusal.
    label : str
        What the progress display calls it.
    """

    option: str
    label: str

    @abstractmethod
    def requested(self, options: AuditOptions) -> bool | int | None:
        """The size ``options`` ask for: ``None`` or ``False`` (not asked), ``True`` (the
        default size) or a size."""

    @abstractmethod
    def run(self, setting: Setting, max_size: int | None, steps: Steps | None) -> Result:
        """The result over subsets of up to ``max_size`` QIs (``None``: the default)."""

    def extra_steps(self, n_qi: int) -> int:
        """Steps it takes beside one per subset (by default none)."""
        return 0

    def asked(self, setting: Setting) -> bool:
        requested = self.requested(setting.options)
        return requested is not None and requested is not False

    def _asked_size(self, options: AuditOptions) -> int | None:
        """The size asked (``None``: the default)."""
        requested = self.requested(options)
        assert requested is not None and requested is not False
        return None if requested is True else requested

    def _size(self, setting: Setting) -> int:
        """The largest QI subset it visits."""
        asked, n_qi = self._asked_size(setting.options), len(setting.table.quasi_identifiers)
        return default_max_subset_size(n_qi) if asked is None else min(asked, n_qi)

    def check(self, setting: Setting) -> None:
        """Refuse it, before it starts, when estimated above the work limit."""
        size, classes = self._size(setting), len(setting.table.classes)
        n_qi = len(setting.table.quasi_identifiers)
        check_work(
            f"{self.option} {size} over {n_qi} QIs and {classes:,} classes",
            subsets(n_qi, size) * (classes + SUBSET_OVERHEAD),
            setting.options.analyses.max_work,
            "class-subset checks",
        )

    def compute(self, setting: Setting) -> Result:
        max_size, progress = self._asked_size(setting.options), setting.progress
        if progress is None:
            return self.run(setting, max_size, None)
        n_qi = len(setting.table.quasi_identifiers)
        total = subsets(n_qi, self._size(setting)) + self.extra_steps(n_qi)
        result = self.run(setting, max_size, progress.steps(self.label, total, "QI subsets"))
        progress.finish()
        return result
