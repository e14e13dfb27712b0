"""The measures and optional analyses an audit reports, one module each: the registries.

Every module of this package that defines ``MEASURE`` (a
:class:`~anonaudit.measures.base.Measure`) is a measure of the audit: :func:`audit_table`
computes it, :meth:`AuditReport.verdicts` judges it, the suppression advice suppresses
the classes failing it, and the text, JSON and HTML reports show it, in the order of
:attr:`~anonaudit.measures.base.Measure.position` (through its section,
:mod:`anonaudit.report.sections`, or a generic one). Every module that defines
``ANALYSIS`` (a :class:`~anonaudit.measures.base.Analysis`) is an optional analysis:
the same, when the audit's options ask for it. Adding a measure is adding its module
(and its tests): nothing else lists it. The other modules hold what measures share
(classes failing a rule, subsets of the QIs, nulls as wildcards), the information loss,
the generalization of QIs, the direct identifiers and the margins of frequency tables.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from anonaudit.measures.base import Analysis, Context, Measure, Setting

__all__ = [
    "ANALYSES",
    "MEASURES",
    "Analysis",
    "Context",
    "Measure",
    "Setting",
    "analyses",
    "by_key",
    "in_order",
    "registered",
]


def _declared(name: str) -> Iterator[object]:
    """The ``name`` of every module of this package (``None`` where it has none)."""
    for module in pkgutil.iter_modules(__path__):
        yield getattr(importlib.import_module(f"{__name__}.{module.name}"), name, None)


#: Every measure of the audit, in the order reports show them.
MEASURES: tuple[Measure[Any], ...] = tuple(
    sorted((m for m in _declared("MEASURE") if isinstance(m, Measure)), key=lambda m: m.position)
)

#: Every optional analysis of the audit, in the order reports show them.
ANALYSES: tuple[Analysis[Any], ...] = tuple(
    sorted((a for a in _declared("ANALYSIS") if isinstance(a, Analysis)), key=lambda a: a.position)
)


def registered() -> tuple[Measure[Any], ...]:
    """:data:`MEASURES`, read when called (a test may add a measure to it)."""
    return MEASURES


def analyses() -> tuple[Analysis[Any], ...]:
    """:data:`ANALYSES`, read when called (a test may add an analysis to it)."""
    return ANALYSES


def in_order(
    sensitive: Sequence[str], measures: Sequence[Measure[Any]] | None = None
) -> Iterator[tuple[Measure[Any], str | None]]:
    """Each measure with its SA (``None`` for a measure of the whole table), in report
    order: the measures per SA are taken together, SA by SA, where the first of them
    stands among the others.

    >>> order = [(m.key, sa) for m, sa in in_order(["disease", "income"])]
    >>> order[:5]  # doctest: +NORMALIZE_WHITESPACE
    [('k_anonymity', None), ('l_diversity', 'disease'), ('t_closeness', 'disease'),
     ('disclosure', 'disease'), ('l_diversity', 'income')]
    """
    measures = registered() if measures is None else measures
    per_sa = [m for m in measures if m.per_sensitive]
    shown = False
    for measure in measures:
        if not measure.per_sensitive:
            yield measure, None
        elif not shown:
            shown = True
            for sa in sensitive:
                for each in per_sa:
                    yield each, sa


def by_key(
    sensitive: Sequence[str], value: Callable[[Measure[Any], str | None], Any]
) -> dict[str, Any]:
    """``value(measure, sa)`` for every measure, keyed as :attr:`AuditReport.results` is:
    by the measure's key, then by SA for a measure per SA (an empty dict without SAs)."""
    found: dict[str, Any] = {measure.key: {} for measure in registered()}
    for measure, sa in in_order(sensitive):
        if sa is None:
            found[measure.key] = value(measure, None)
        else:
            found[measure.key][sa] = value(measure, sa)
    return found
