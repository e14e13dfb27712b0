"""The front door: everything in ``anonaudit.__all__`` exists, and nothing public is missing."""

from __future__ import annotations

import anonaudit


def test_all_names_exist_once() -> None:
    # Their order is ruff's RUF022 (isort-style), checked by the linter.
    names = anonaudit.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(anonaudit, name), name


def test_public_classes_and_functions_are_exported() -> None:
    public = {
        name
        for name, value in vars(anonaudit).items()
        if not name.startswith("_") and (isinstance(value, type) or callable(value))
    }
    assert public <= set(anonaudit.__all__)


def test_errors_mean_their_builtins() -> None:
    assert issubclass(anonaudit.ColumnError, KeyError)
    assert issubclass(anonaudit.SourceNotFoundError, FileNotFoundError)
    assert issubclass(anonaudit.ParameterError, ValueError)
    assert issubclass(anonaudit.PrivacyWarning, UserWarning)
