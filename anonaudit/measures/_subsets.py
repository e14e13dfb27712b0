"""What the analyses over subsets of the QIs share: :class:`SubsetAnalysis`."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from anonaudit.checks.qi_analysis import default_max_subset_size
from anonaudit.measures.base import Analysis, Result, Setting
from anonaudit.settings.work import SUBSET_OVERHEAD, check_work, subsets

if TYPE_CHECKING:
    from anonaudit.settings.options import AuditOptions
    from anonaudit.settings.work import Steps

__all__ = ["SubsetAnalysis"]


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
