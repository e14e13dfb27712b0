"""The ground distances of t-closeness, one module each: the registry.

Every module of this package but :mod:`~anonaudit.distances.base` and the private ones
(``_*``) is a ground distance, named as the module, that defines ``DISTANCE``: a
:class:`~anonaudit.distances.base.Distance` subclass declaring its parameters, its EMD
and the inputs that make it an SA's default. The option objects build distances by name
(:func:`named`), the t-closeness check computes whichever it is given, and the command
line, the policy files, the reports, the JSON Schema and the docs list :data:`DISTANCES`:
none of them names a distance. Adding one is adding its module (and its tests).

The names are found without importing the modules (:mod:`pkgutil`), so that the command
line lists them without loading numpy; a module is imported when its distance is first
looked up.

Examples
--------
>>> DISTANCES
('equal', 'ordered', 'numeric', 'hierarchical', 'matrix')
>>> named("ordered")(["low", "high"])
OrderedDistance(order=('low', 'high'))
>>> named("manhattan")
Traceback (most recent call last):
...
anonaudit.errors.OptionError: unknown t-closeness distance 'manhattan'; choose one of equal, \
ordered, numeric, hierarchical, matrix
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from typing import Any

from anonaudit.distances.base import Distance
from anonaudit.errors import OptionError

__all__ = [
    "CLASSES",
    "DEFAULT",
    "DISTANCES",
    "Distance",
    "default",
    "exported",
    "implied",
    "named",
    "registered",
]

#: Where the distances of anonaudit 0.1 stand in lists and messages; any other distance
#: comes after them, by name.
_FIRST = ("equal", "ordered", "numeric", "hierarchical", "matrix")
#: The distance of an SA for which none is named, nor implied by its inputs.
DEFAULT = "equal"


def _modules() -> tuple[str, ...]:
    """The distances' modules, in the order of :data:`DISTANCES`, none imported."""
    found = [
        module.name
        for module in pkgutil.iter_modules(__path__)
        if not module.name.startswith("_") and module.name != "base"
    ]
    place = {name: i for i, name in enumerate(_FIRST)}
    return tuple(sorted(found, key=lambda name: (place.get(name, len(place)), name)))


#: Every ground distance, by name, in the order lists and messages give them.
DISTANCES: tuple[str, ...] = _modules()


def _load(name: str) -> type[Distance]:
    """The ``DISTANCE`` of the module ``name``, checked to be a distance of that name."""
    distance = getattr(importlib.import_module(f"{__name__}.{name}"), "DISTANCE", None)
    if not (isinstance(distance, type) and issubclass(distance, Distance)):
        raise TypeError(f"{__name__}.{name} must define DISTANCE, a Distance subclass")
    if distance.name != name:
        raise TypeError(f"{__name__}.{name}.DISTANCE is named {distance.name!r}, not {name!r}")
    return distance


class _Classes(Mapping[str, type[Distance]]):
    """The distance classes by name, in the order of :data:`DISTANCES`; the modules are
    imported on first use."""

    def __init__(self) -> None:
        self._classes: dict[str, type[Distance]] | None = None

    def _loaded(self) -> dict[str, type[Distance]]:
        if self._classes is None:
            self._classes = {name: _load(name) for name in DISTANCES}
        return self._classes

    def __getitem__(self, name: str) -> type[Distance]:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __repr__(self) -> str:
        return f"<ground distances {', '.join(DISTANCES)}>"


#: The distance classes by the name reports give them (read through :func:`registered`).
CLASSES: Mapping[str, type[Distance]] = _Classes()


def registered() -> Mapping[str, type[Distance]]:
    """:data:`CLASSES`, read when called (a test may add a distance to it)."""
    return CLASSES


def named(name: str) -> type[Distance]:
    """The distance class called ``name``.

    Raises
    ------
    OptionError
        No distance has that name (the message lists those that do).
    """
    classes = registered()
    if name not in classes:
        raise OptionError("t-closeness distance", name, choices=tuple(classes))
    return classes[name]


def implied(inputs: Mapping[str, Any]) -> str:
    """The distance of an SA for which none is named: the first whose
    :attr:`~anonaudit.distances.base.Distance.implied_by` input is among the SA's
    ``inputs`` (a hierarchy implies the hierarchical distance, a matrix the matrix
    distance), else :data:`DEFAULT`."""
    return next((name for name, kind in registered().items() if kind.implied_by in inputs), DEFAULT)


def default() -> Distance:
    """The distance of an SA for which none is given: :data:`DEFAULT`'s."""
    return named(DEFAULT)()


def exported(class_name: str) -> type[Distance] | None:
    """The distance class called ``class_name`` in Python (``"OrderedDistance"``), which
    ``anonaudit`` and :mod:`anonaudit.settings.options` export; ``None`` if there is none."""
    return next((kind for kind in registered().values() if kind.__name__ == class_name), None)
