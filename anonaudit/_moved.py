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

__all__ = ["GATHERED", "MOVED", "install"]

#: Old module path -> new module path.
MOVED = {
    "anonaudit.batch": "anonaudit.cli.batch",
    "anonaudit.commands": "anonaudit.cli.commands",
    "anonaudit.config": "anonaudit.cli.config",
    "anonaudit.checks._classes": "anonaudit.measures._classes",
    "anonaudit.checks._matching": "anonaudit.measures._matching",
    "anonaudit.checks._subsets": "anonaudit.measures._subsets",
    "anonaudit.checks.disclosure": "anonaudit.measures.disclosure",
    "anonaudit.checks.emd": "anonaudit.measures.emd",
    "anonaudit.checks.individual": "anonaudit.measures.individual",
    "anonaudit.checks.kanonymity": "anonaudit.measures.k_anonymity",
    "anonaudit.checks.ldiversity": "anonaudit.measures.l_diversity",
    "anonaudit.checks.linkage": "anonaudit.measures.linkage",
    "anonaudit.checks.population": "anonaudit.measures.population",
    "anonaudit.checks.qi_analysis": "anonaudit.measures.qi_analysis",
    "anonaudit.checks.risk": "anonaudit.measures.risk",
    "anonaudit.checks.suda": "anonaudit.measures.suda",
    "anonaudit.checks.tcloseness": "anonaudit.measures.t_closeness",
    "anonaudit.checks.utility": "anonaudit.measures.utility",
    "anonaudit.checks.wildcard": "anonaudit.measures.wildcard",
    "anonaudit.csvfile": "anonaudit.files",
    "anonaudit.dp.artefact": "anonaudit.report.dp",
    "anonaudit.dp.cli": "anonaudit.cli.dp",
    "anonaudit.explain": "anonaudit.report.explain",
    "anonaudit.generalization": "anonaudit.measures.generalization",
    "anonaudit.identifiers": "anonaudit.measures.identifiers",
    "anonaudit.linkage.cli": "anonaudit.cli.linkage",
    "anonaudit.linkage.population": "anonaudit.measures.linkage",
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


#: Old packages whose names now live in several modules: name -> its module.
GATHERED = {
    "anonaudit.checks": {
        **dict.fromkeys(
            ("DISTANCES", "TClosenessResult", "t_closeness"), "anonaudit.measures.t_closeness"
        ),
        **dict.fromkeys(
            ("DisclosureResult", "attribute_disclosure"), "anonaudit.measures.disclosure"
        ),
        **dict.fromkeys(("KAnonymityResult", "k_anonymity"), "anonaudit.measures.k_anonymity"),
        **dict.fromkeys(("LDiversityResult", "l_diversity"), "anonaudit.measures.l_diversity"),
        **dict.fromkeys(("RiskResult", "prosecutor_risk"), "anonaudit.measures.risk"),
        **dict.fromkeys(
            (
                "POPULATION_MODELS",
                "JournalistRisk",
                "MarketerRisk",
                "PopulationUniqueness",
                "journalist_risk",
                "marketer_risk",
                "population_uniqueness",
            ),
            "anonaudit.measures.population",
        ),
    }
}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED` and loads the module at its new one."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED and fullname not in GATHERED:
            return None
        # An old package: its submodules' old paths are found by this finder too.
        return importlib.util.spec_from_loader(fullname, self, is_package=fullname in GATHERED)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a placeholder, replaced by the moved module in exec_module

    def exec_module(self, module: ModuleType) -> None:
        names = GATHERED.get(module.__name__)
        if names is not None:
            warnings.warn(
                f"{module.__name__} moved to anonaudit.measures, one module per measure; "
                "the old path stops working in 0.3",
                DeprecationWarning,
                stacklevel=2,
            )
            for name, new in names.items():
                setattr(module, name, getattr(importlib.import_module(new), name))
            setattr(module, "__all__", sorted(names))  # noqa: B010 (a module built here)
            return
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
