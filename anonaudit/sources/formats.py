"""The formats of input files, each declared by the module that reads it: the registry.

A format's module ends with ``FORMAT``, a :class:`~anonaudit.sources.protocol.Format`: its
name, its file suffixes and how a file of it (or, for Delta, a table) is opened. This
module collects them in :data:`DECLARED`; :func:`anonaudit.sources.open_source` and the
datasets (:mod:`anonaudit.sources.dataset`) look formats up here, by name
(:func:`named`) or by a file's suffix (:func:`of_file`), and name none themselves. The
names are :data:`anonaudit.settings.names.FORMATS`, in the same order: the command line
lists those without importing pyarrow (``tests/test_source_registry.py`` checks that the
two agree).

Examples
--------
>>> tuple(registered())
('parquet', 'csv', 'delta')
>>> of_file("visits.PQ").name, of_file("visits.tsv").name, of_file("visits.csv.gz").name
('parquet', 'csv', 'csv')
>>> named("orc")
Traceback (most recent call last):
...
anonaudit.errors.OptionError: unknown format 'orc'; choose one of parquet, csv, delta
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from anonaudit.errors import InputError, OptionError
from anonaudit.sources.csv import FORMAT as CSV
from anonaudit.sources.delta import FORMAT as DELTA
from anonaudit.sources.parquet import FORMAT as PARQUET
from anonaudit.sources.protocol import Format

__all__ = ["DECLARED", "Format", "named", "of_file", "registered"]


def _declared(formats: Iterable[Format]) -> Mapping[str, Format]:
    """``formats`` by name, in order; checked to have distinct names and one fallback
    at most."""
    by_name: dict[str, Format] = {}
    for fmt in formats:
        if fmt.name in by_name:
            raise ValueError(f"two formats are named {fmt.name!r}")
        by_name[fmt.name] = fmt
    fallbacks = [fmt.name for fmt in by_name.values() if fmt.fallback]
    if len(fallbacks) > 1:
        raise ValueError(f"formats {', '.join(fallbacks)} are all the fallback; one at most")
    return MappingProxyType(by_name)


#: Every format, by name, in the order of :data:`anonaudit.settings.names.FORMATS`
#: (read through :func:`registered`).
DECLARED: Mapping[str, Format] = _declared([PARQUET, CSV, DELTA])


def registered() -> Mapping[str, Format]:
    """Every format by name, in order: :data:`DECLARED`, read when called (a test may
    declare a format of its own there).

    Returns
    -------
    Mapping of str to Format
        The formats, by their names.
    """
    return DECLARED


def named(name: str) -> Format:
    """The format called ``name``.

    Parameters
    ----------
    name : str
        As ``--format`` gives it: ``"csv"``.

    Returns
    -------
    Format
        Its declaration.

    Raises
    ------
    OptionError
        No format has that name (the message lists those that do).
    """
    formats = registered()
    if name not in formats:
        raise OptionError("format", name, choices=tuple(formats))
    return formats[name]


def of_file(name: str) -> Format:
    """The format a single file called ``name`` is opened as.

    The first format that opens files and claims the name's suffix
    (:meth:`~anonaudit.sources.protocol.Format.claims`); else the fallback format, which
    reads any file (CSV: a ``.dat`` file, a compressed file, a pipe).

    Parameters
    ----------
    name : str
        The file's name or path.

    Returns
    -------
    Format
        A format whose ``open_file`` is set.

    Raises
    ------
    InputError
        No format claims the suffix, and none is the fallback.
    """
    formats = [fmt for fmt in registered().values() if fmt.open_file is not None]
    claimed = next((fmt for fmt in formats if fmt.claims(name)), None)
    chosen = claimed or next((fmt for fmt in formats if fmt.fallback), None)
    if chosen is None:
        raise InputError(f"{name}: no format reads this file; check its suffix")
    return chosen
