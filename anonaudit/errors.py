"""Exceptions and warnings raised by anonaudit.

Every error a user can cause derives from :class:`AnonauditError` and also from the
builtin exception it means, so ``except ValueError`` keeps working::

    AnonauditError
     ├── InputError (ValueError)          bad data or a bad file
     │    ├── SourceNotFoundError (FileNotFoundError)
     │    ├── ColumnError (KeyError)      unknown, duplicate or all-null column
     │    ├── MalformedFileError          empty, header only, ragged rows, bad bytes
     │    ├── StorageError                object storage unreachable, credentials rejected
     │    └── HierarchyError              a hierarchy or ground-distance file that does not fit
     ├── OutputError (OSError)            a report or output file that cannot be written
     ├── ParameterError (ValueError)      a threshold or option out of range
     │    └── BudgetError                 releases that would spend more privacy budget than allowed
     ├── MissingDependencyError (ImportError)  an optional extra is not installed
     ├── EngineError (RuntimeError)       a distributed engine lost work it could not redo
     └── PolicyViolationError             raised by ``AuditReport.raise_for_violations``

    PrivacyWarning (UserWarning)          a result that is weaker than it looks

The command line prints ``str(error)`` as one line and exits with status 2 for every
error except :class:`PolicyViolationError` (status 1); any other exception is a bug,
reported as an internal error with status 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "AnonauditError",
    "BudgetError",
    "ColumnError",
    "EngineError",
    "HierarchyError",
    "InputError",
    "MalformedFileError",
    "MissingDependencyError",
    "OptionError",
    "OutputError",
    "ParameterError",
    "PolicyViolationError",
    "PrivacyWarning",
    "SourceNotFoundError",
    "StorageError",
    "number",
    "one_of",
    "require",
    "texts",
]


class AnonauditError(Exception):
    """Base class of every error anonaudit raises on purpose."""

    def __str__(self) -> str:
        # KeyError quotes its message; we want the plain sentence everywhere.
        return str(self.args[0]) if self.args else self.__class__.__name__


class InputError(AnonauditError, ValueError):
    """The input data, or a file describing it, cannot be audited as given."""


class SourceNotFoundError(InputError, FileNotFoundError):
    """An input path does not exist."""


class ColumnError(InputError, KeyError):
    """A named column is missing, duplicated, or holds nothing but nulls."""


class MalformedFileError(InputError):
    """A file is empty, has no data rows, has ragged rows or undecodable bytes."""


class StorageError(InputError):
    """Object storage cannot be reached, rejects the credentials, or fails to serve a file."""


class HierarchyError(InputError):
    """A generalization hierarchy or ground-distance matrix does not fit the data."""


class OutputError(AnonauditError, OSError):
    """An output file cannot be written: a folder, a full disk, a read-only folder.

    A file already at the path is left as it was.
    """


class ParameterError(AnonauditError, ValueError):
    """A threshold or option is out of its range or unknown."""


class OptionError(ParameterError):
    """An option out of its range or not one of its choices: the one message of a bad
    option, naming it, what it must be, and the value given.

    Parameters
    ----------
    option : str
        The option's name in the Python API (``sampling_fraction``).
    value : object
        The value given.
    requirement : str, optional
        What the value must do: ``"lie in (0, 1]"``.
    choices : sequence of str, optional
        The values allowed, for an option that names one of them.
    says : str, optional
        A sentence of its own, with ``{label}`` and ``{value}`` where the option's name
        and the value go (``"{label} {value} would make ..."``).

    Examples
    --------
    >>> str(OptionError("sampling_fraction", 2.0, requirement="lie in (0, 1]"))
    'sampling_fraction must lie in (0, 1] (got 2.0)'
    >>> str(OptionError("engine", "ray", choices=("local", "dask")))
    "unknown engine 'ray'; choose one of local, dask"
    >>> OptionError("engine", "ray", choices=("local", "dask")).worded("--engine")
    "unknown --engine 'ray'; choose one of local, dask"
    """

    def __init__(
        self,
        option: str,
        value: object,
        *,
        requirement: str | None = None,
        choices: Sequence[str] = (),
        says: str | None = None,
    ) -> None:
        self.option, self.value = option, value
        self.requirement, self.choices, self.says = requirement, tuple(choices), says
        super().__init__(self.worded(option))

    def worded(self, label: str) -> str:
        """The message with the option called ``label`` (a command-line flag, say)."""
        if self.says is not None:
            return self.says.format(label=label, value=self.value)
        if self.requirement is None:
            return f"unknown {label} {self.value!r}; choose one of {', '.join(self.choices)}"
        return f"{label} must {self.requirement} (got {self.value!r})"


class BudgetError(ParameterError):
    """A set of differentially private releases would exceed the privacy budget.

    Raised by :meth:`anonaudit.dp.Budget.spend`; the message states what the releases
    cost, what the budget allows and what remains.
    """


class MissingDependencyError(AnonauditError, ImportError):
    """An optional extra needed for this feature is not installed.

    The message carries the ``pip install`` command that installs it.
    """


class EngineError(AnonauditError, RuntimeError):
    """A distributed engine could not finish: workers died more often than it retries.

    Raised instead of returning a class table that would cover only part of the data.
    """


class PolicyViolationError(AnonauditError):
    """The audited data violates at least one threshold of the policy.

    Raised only on request, by :meth:`anonaudit.AuditReport.raise_for_violations`.
    """


class PrivacyWarning(UserWarning):
    """A computed result protects less than its value suggests."""


# The checks of option values: each raises the one message of a bad option.


def require(ok: bool, name: str, requirement: str, value: object) -> None:
    """Raise the one message of a bad option: ``NAME must REQUIREMENT (got VALUE)``."""
    if not ok:
        raise OptionError(name, value, requirement=requirement)


def texts(value: Sequence[str] | str, name: str) -> tuple[str, ...]:
    """A sequence of column names or texts as a tuple; a lone string is refused.

    Raises
    ------
    OptionError
        ``value`` is one text, or holds something else than texts (named ``name``).
    """
    require(not isinstance(value, str), name, "be a list of texts, not one text", value)
    items = tuple(value)
    for item in items:
        require(isinstance(item, str), f"every item of {name}", "be a text", item)
    return items


def one_of(value: object, name: str, allowed: Sequence[str]) -> None:
    """Refuse ``value`` unless it is one of ``allowed`` (:class:`OptionError` naming
    them)."""
    if value not in allowed:
        raise OptionError(name, value, choices=allowed)


def number(value: object) -> bool:
    """Whether ``value`` is a finite real number (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
