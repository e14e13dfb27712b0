"""The sections of the reports, one module per measure or analysis that has its own:
:func:`section` finds the one of a measure (or :class:`GenericSection`), and
:func:`analysis_section` the one of an analysis.

The module ``anonaudit.report.sections.<key>`` shows the measure or analysis of that key
(``SECTION``). The text summary, the JSON report, its schema, the HTML report and the
docs loop over the measures and ask each its section; none of them names a measure.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from anonaudit.measures import analyses, registered
from anonaudit.measures.base import Analysis, Measure
from anonaudit.report import explain
from anonaudit.report.sections.base import (
    AnalysisSection,
    ClassSection,
    GenericSection,
    MeasureSection,
)

__all__ = [
    "AnalysisSection",
    "ClassSection",
    "GenericSection",
    "MeasureSection",
    "analysis_section",
    "explained",
    "section",
]


@functools.cache
def _declared(key: str) -> object | None:
    """The ``SECTION`` of module ``key`` of this package (``None`` without the module)."""
    name = f"{__name__}.{key}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None
    return getattr(module, "SECTION", None)


def section(measure: Measure[Any]) -> MeasureSection[Any]:
    """How the reports show ``measure``: the ``SECTION`` of its module here, or a
    :class:`GenericSection` that prints its result's fields."""
    found = _declared(measure.key)
    return found if isinstance(found, MeasureSection) else GenericSection(measure)


def analysis_section(analysis: Analysis[Any]) -> AnalysisSection[Any]:
    """How the reports show ``analysis``: the ``SECTION`` of its module here.

    Raises
    ------
    LookupError
        The analysis has no section (an analysis is shown only by its own).
    """
    found = _declared(analysis.key)
    if not isinstance(found, AnalysisSection):
        raise LookupError(f"analysis {analysis.key!r} has no anonaudit.report.sections module")
    return found


def explained() -> tuple[explain.Measure, ...]:
    """Every measure the docs explain: :data:`anonaudit.report.explain.MEASURES`, then
    the explanation of each measure and analysis of the registries not among them."""
    abouts = [section(m).about for m in registered()]
    abouts += [analysis_section(a).about for a in analyses()]
    return tuple(dict.fromkeys([*explain.MEASURES, *(a for a in abouts if a is not None)]))
