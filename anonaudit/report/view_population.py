"""The view of the "Population risk" section, and its caveats.

:func:`population_view` lays out population uniqueness
(:class:`~anonaudit.checks.population.PopulationUniqueness`) with journalist and marketer
risk, when the audit was given a population size or sampling fraction.
:func:`population_caveats` are the warnings the summary, the JSON report and this
section share: models that disagree by orders of magnitude (Dankar et al. 2012 found
their errors to differ widely by data set), and an estimate of population uniques larger
than the number of combinations of the quasi-identifier values seen, which no
population can have.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from anonaudit.measures.present import Fact, _plural, _real, _share

if TYPE_CHECKING:
    from anonaudit.auditing import AuditReport
    from anonaudit.checks.population import PopulationUniqueness

__all__ = ["PopulationView", "population_caveats", "population_view"]

#: Estimates further apart than this factor get a caveat.
_DISAGREEMENT = 100.0


@dataclass(frozen=True)
class PopulationView:
    """The section's content: the population ``facts``, the journalist and marketer
    ``risks`` and the ``caveats``."""

    facts: tuple[Fact, ...]
    risks: tuple[Fact, ...]
    caveats: tuple[str, ...]


def population_caveats(report: AuditReport) -> list[str]:
    """Warnings on the population estimates of ``report`` (none without them)."""
    p = report.population
    if p is None:
        return []
    caveats = []
    estimates = {m: v for m, v in (("pitman", p.pitman), ("zayatz", p.zayatz), ("snb", p.snb))}
    positive = {m: v for m, v in estimates.items() if v is not None and v > 0}
    if len(positive) >= 2:
        low, high = min(positive, key=positive.__getitem__), max(positive, key=positive.__getitem__)
        if positive[high] > _DISAGREEMENT * positive[low]:
            caveats.append(
                f"the models disagree by a factor of {positive[high] / positive[low]:,.0f} "
                f"({low} {_share(positive[low])}, {high} {_share(positive[high])} of the "
                "population unique): treat the estimate as an order of magnitude at best"
            )
    combinations = math.prod(
        len(pc.unique(report.table.keys.column(qi))) for qi in report.quasi_identifiers
    )
    if p.uniques > combinations:
        caveats.append(
            f"the estimate of {_real(p.uniques)} population uniques exceeds the "
            f"{combinations:,} combinations of the quasi-identifier values in the data, "
            "each of which can hold one unique at most: the model does not fit this data"
        )
    return caveats


def population_view(population: PopulationUniqueness, report: AuditReport) -> PopulationView:
    """The view of ``population`` and of the journalist and marketer risk of ``report``."""
    p, j, m = population, report.journalist, report.marketer
    estimates = ", ".join(
        f"{name} {'did not converge' if value is None else _share(value)}"
        for name, value in (("Pitman", p.pitman), ("Zayatz", p.zayatz), ("SNB", p.snb))
    )
    facts = (
        Fact("population size (N)", _real(p.population_size)),
        Fact("sampling fraction (n / N)", _real(p.sampling_fraction)),
        Fact("sample uniques", f"{p.sample_uniques:,}"),
        Fact(
            f"estimated population uniques ({p.model_used})",
            f"{_real(p.uniques)} ({_share(p.uniques_fraction)} of the population)",
        ),
        Fact("why this model", p.reason),
        Fact("each model's share of the population unique", estimates),
    )
    risks: tuple[Fact, ...] = ()
    if j is not None and m is not None:
        risks = (
            Fact("journalist risk: highest", _share(j.highest)),
            Fact("journalist risk: average", _share(j.average)),
            Fact(
                f"journalist risk: records above {_share(j.threshold)}",
                f"{_plural(j.records_at_risk, 'record')} ({_share(j.records_at_risk_fraction)})",
            ),
            Fact("marketer risk (expected share re-identified)", _share(m.average)),
            Fact("population class sizes", j.basis),
        )
    return PopulationView(facts=facts, risks=risks, caveats=tuple(population_caveats(report)))
