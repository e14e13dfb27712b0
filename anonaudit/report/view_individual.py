"""The view of the "Individual and global risk (sdcMicro)" section.

:func:`individual_view` lays out an :class:`~anonaudit.checks.individual.IndividualRisk`
in plain words: what ``F_k`` is, where it came from (a weight column, or the uniform
weight ``N / n``), the expected number of re-identifications and the classes whose
records are above the risk threshold. Nothing here computes beyond formatting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anonaudit.measures.present import (
    Fact,
    Listing,
    Options,
    _count,
    _listing,
    _plural,
    _real,
    _share,
)

if TYPE_CHECKING:
    from anonaudit.auditing import AuditReport
    from anonaudit.checks.individual import IndividualRisk

__all__ = ["IndividualView", "individual_view"]


@dataclass(frozen=True)
class IndividualView:
    """The section's content.

    Attributes
    ----------
    basis : str
        Where the estimated population frequencies ``F_k`` came from, in a sentence.
    nulls : str or None
        How null QI values were counted, when they count as wildcards.
    facts : tuple of Fact
        The global and highest risk, records at risk.
    outcome : str
        The records above the threshold, or that none is.
    listing : Listing or None
        The classes above the threshold, highest risk first.
    """

    basis: str
    nulls: str | None
    facts: tuple[Fact, ...]
    outcome: str
    listing: Listing | None


def individual_view(
    result: IndividualRisk, report: AuditReport, options: Options
) -> IndividualView:
    """The view of ``result``, the individual risk of ``report``."""
    if result.weights is not None:
        basis = (
            f"Fₖ is the sum of the survey weights (column {result.weights}) of the class's "
            f"records; together they stand for {_real(result.population_size)} people."
        )
    elif result.basis == "survey weights":
        basis = (
            "Fₖ is the sum of the survey weights of the class's records; together they "
            f"stand for {_real(result.population_size)} people."
        )
    else:
        basis = (
            "No weight column was given, so every record stands for the same number of "
            f"people, N / n ({result.basis.removeprefix('uniform N/n = ')}), as in a simple "
            f"random sample of {_real(result.population_size)} people: Fₖ = fₖ × N / n."
        )
    nulls = (
        "Null quasi-identifier values count as wildcards here: fₖ and Fₖ include every "
        "record a null could stand for, as sdcMicro counts them."
        if report.null_policy == "wildcard"
        else None
    )
    facts = (
        Fact(
            "expected re-identifications (sum of the individual risks)",
            f"{result.expected_reidentifications:,.2f} of {report.rows:,} records",
        ),
        Fact("global risk (their share of the records)", _share(result.global_risk)),
        Fact("highest individual risk of a record", _share(result.highest)),
        Fact(
            f"records at risk (above {_share(result.threshold)})",
            f"{result.records_at_risk:,} ({_share(result.records_at_risk_fraction)})",
        ),
        Fact("estimated population (sum of the weights)", _real(result.population_size)),
        Fact("method", "sdcMicro indivRisk, approximation (Franconi & Polettini 2004)"),
    )
    frame = result.at_risk
    listing = None
    outcome = f"No record has an individual risk above {_share(result.threshold)}."
    if len(frame):
        outcome = (
            f"{_plural(result.records_at_risk, 'record')} "
            f"({_share(result.records_at_risk_fraction)}) in {_plural(len(frame), 'class')} "
            f"have an individual risk above {_share(result.threshold)}."
        )
        listing = _listing(
            frame,
            report,
            options,
            measures=(
                ("size", "records", _count),
                ("fk", "fₖ", _count),
                ("Fk", "Fₖ", _real),
                ("risk", "individual risk", _share),
            ),
            caption="Classes above the individual risk threshold, highest risk first",
            name="individual-risk",
        )
    return IndividualView(basis=basis, nulls=nulls, facts=facts, outcome=outcome, listing=listing)
