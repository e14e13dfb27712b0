"""Option values checked where they are made: the one message of a bad option
(``NAME must REQUIREMENT (got VALUE)``, :class:`~anonaudit.errors.OptionError`) and the
checks every option object and ground distance shares."""

from __future__ import annotations

import math
from collections.abc import Sequence

from anonaudit.errors import OptionError

__all__ = ["number", "one_of", "require", "texts"]


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
