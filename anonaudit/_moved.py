"""The modules that moved in 0.2, under their old paths until 0.3.

``import anonaudit.policy`` (or any path of :data:`MOVED`) gives the module at its new
path, with a ``DeprecationWarning`` naming it; the module is the same object, so a
monkeypatch through either path patches both. The finder is installed by
``import anonaudit`` and answers only for the old paths listed here.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install"]

#: Old module path -> new module path.
MOVED = {
    "anonaudit.batch": "anonaudit.cli.batch",
    "anonaudit.commands": "anonaudit.cli.commands",
    "anonaudit.config": "anonaudit.cli.config",
    "anonaudit.csvfile": "anonaudit.files",
    "anonaudit.dp.artefact": "anonaudit.report.dp",
    "anonaudit.dp.cli": "anonaudit.cli.dp",
    "anonaudit.explain": "anonaudit.report.explain",
    "anonaudit.generalization": "anonaudit.measures.generalization",
    "anonaudit.hierarchy": "anonaudit.settings.hierarchy",
    "anonaudit.identifiers": "anonaudit.measures.identifiers",
    "anonaudit.linkage.cli": "anonaudit.cli.linkage",
    "anonaudit.linkage.html": "anonaudit.report.linkage_html",
    "anonaudit.linkage.report": "anonaudit.report.linkage",
    "anonaudit.loading": "anonaudit.engines.load",
    "anonaudit.margins": "anonaudit.measures.margins",
    "anonaudit.measures.charts": "anonaudit.report.charts",
    "anonaudit.measures.present": "anonaudit.report.kit",
    "anonaudit.options": "anonaudit.settings.options",
    "anonaudit.policy": "anonaudit.settings.policy",
    "anonaudit.rows": "anonaudit.engines.records",
    "anonaudit.util": "anonaudit.files",
    "anonaudit.vocabulary": "anonaudit.settings.names",
    "anonaudit.work": "anonaudit.settings.work",
}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED` and loads the module at its new one."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a placeholder, replaced by the moved module in exec_module

    def exec_module(self, module: ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(
            f"{module.__name__} moved to {new}; the old path stops working in 0.3",
            DeprecationWarning,
            stacklevel=2,
        )
        # The import system returns what sys.modules holds under the name once this
        # returns: the moved module itself.
        sys.modules[module.__name__] = importlib.import_module(new)


_FINDER = _Finder()


def install() -> None:
    """Answer imports of the old paths (once per process)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
