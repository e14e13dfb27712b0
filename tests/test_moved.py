"""The modules that moved in 0.2 answer at their old paths until 0.3, with a warning.

Every old path of :data:`anonaudit._moved.MOVED` imports the module at its new path (the
same object) and warns, naming the new path; :data:`anonaudit._moved.GATHERED` (the old
``anonaudit.checks``) gives each of its names from the module that now holds it.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import anonaudit
from anonaudit._moved import GATHERED, MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_gives_the_moved_module_with_a_warning(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = importlib.import_module(new)
    monkeypatch.delitem(sys.modules, old, raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = importlib.import_module(old)
    assert found is moved
    said = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert f"{old} moved to {new}; the old path stops working in 0.3" in said
    assert importlib.import_module(old) is moved  # once imported, no second warning


def test_the_old_checks_package_gives_each_name_from_its_new_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "anonaudit.checks", raising=False)
    with pytest.warns(DeprecationWarning, match="anonaudit.checks moved to anonaudit.measures"):
        from anonaudit.checks import KAnonymityResult, k_anonymity
    from anonaudit.measures import k_anonymity as module

    assert k_anonymity is module.k_anonymity and KAnonymityResult is module.KAnonymityResult
    checks = sys.modules["anonaudit.checks"]
    for name, new in GATHERED["anonaudit.checks"].items():
        assert getattr(checks, name) is getattr(importlib.import_module(new), name)


def test_advise_at_its_old_path_is_the_one_that_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    import anonaudit.advice
    from anonaudit.auditing import advise

    with pytest.warns(DeprecationWarning, match=r"anonaudit\.advice\.advise moved"):
        assert anonaudit.advice.advise is advise
    assert anonaudit.advise is advise
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = anonaudit.advice.nothing


def test_an_unknown_path_is_not_answered() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"anonaudit\.nowhere"):
        importlib.import_module("anonaudit.nowhere")
    assert anonaudit.__version__
