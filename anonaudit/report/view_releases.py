"""The view of the "Earlier releases" section and its rows of the verdict.

:func:`releases_view` lays out a :class:`~anonaudit.linkage.history.ReleaseHistory`: the
earlier releases of the dataset the ledger holds, the composition attack with those
kept with their record ids, and the differencing attack against the latest one coded
alike, with the classes whose change discloses a value (QI values redacted on request).
The two attacks' rows of the verdict are :func:`anonaudit.report.views.verdict_view`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from anonaudit.report.kit import (
    Fact,
    Listing,
    Options,
    _count,
    _plural,
    exact,
    make_listing,
    none_as_null,
    qi_value,
    signed,
    slugs,
)
from anonaudit.report.linkage import fixed

if TYPE_CHECKING:
    from anonaudit.linkage.composition import Composition
    from anonaudit.linkage.differencing import Differencing
    from anonaudit.linkage.history import ReleaseHistory
    from anonaudit.report.reported import Reported

__all__ = [
    "AttackView",
    "ReleasesView",
    "composition_facts",
    "differencing_facts",
    "disclosing_listing",
    "recording",
    "releases_view",
]


@dataclass(frozen=True)
class AttackView:
    """One attack on one SA: a ``title``, its ``facts`` and the disclosing ``listing``."""

    title: str
    anchor: str
    facts: tuple[Fact, ...]
    listing: Listing | None


@dataclass(frozen=True)
class ReleasesView:
    """The section's content: the ledger's ``earlier`` releases (as facts), whether this
    one was ``recorded``, the ``attacks`` and what was ``not_checked``."""

    dataset: str
    recorded: str
    earlier: tuple[Fact, ...]
    attacks: tuple[AttackView, ...]
    not_checked: tuple[str, ...]


def recording(history: ReleaseHistory, report: Reported) -> str:
    """Whether the release was recorded in the ledger, and why not, in a few words."""
    if history.recorded is not None:
        return f"recorded as release #{history.recorded}"
    if report.passed is False:
        return "not recorded, as the audit failed"
    return "not recorded: the ledger holds this file for this dataset and recipient already"


def releases_view(history: ReleaseHistory, report: Reported, options: Options) -> ReleasesView:
    """The view of ``history``, the release ``report`` against the earlier ones."""
    attacks = []
    slug = dict(zip(report.sensitive, slugs(report.sensitive), strict=True))
    for sa, result in history.composition.items():
        attacks.append(
            AttackView(
                f"Composition of {sa} with {history.composed_names}",
                f"composition-{slug[sa]}",
                composition_facts(result),
                None,
            )
        )
    for sa, difference in history.differencing.items():
        listing = disclosing_listing(difference, options) if len(difference.listing) else None
        attacks.append(
            AttackView(
                f"Differencing of {sa} against {history.differenced_name}",
                f"differencing-{slug[sa]}",
                differencing_facts(difference),
                listing,
            )
        )
    return ReleasesView(
        dataset=history.dataset,
        recorded=recording(history, report),
        earlier=tuple(
            Fact(
                f"#{entry.id}",
                f"{entry.time}, {entry.source}"
                + (f", to {entry.recipient}" if entry.recipient else ""),
            )
            for entry in history.earlier
        ),
        attacks=tuple(attacks),
        not_checked=history.not_checked,
    )


def disclosing_listing(result: Differencing, options: Options) -> Listing:
    """The classes of ``result`` changed in one value only, most disclosed records first.

    The first ``options.max_rows`` are on the page and in its CSV download (no more:
    each row holds the sensitive value it discloses), their QI values replaced by
    ``[redacted]`` with ``options.redact``; the ``anonaudit diff`` page and the audit's
    "Earlier releases" section share it.
    """
    frame = result.listing
    qi = [c for c in frame.columns if c not in ("old_size", "new_size", "value", "change")]
    numbers = ["old_size", "new_size", "change"]
    shown = min(options.max_rows, len(frame))
    formats: list[Callable[[Any], str]] = [_count, _count, lambda v: signed(float(v))]

    def text(rows: pd.DataFrame) -> list[list[str | None]]:
        cells = [[qi_value(v, options.redact) for v in rows[c].tolist()] for c in qi]
        return [*cells, [qi_value(v, False) for v in rows["value"].tolist()]]

    def table(limit: int | None) -> pa.Table:
        rows = frame.head(shown if limit is None else limit)
        cells = [*text(rows), *([exact(v) for v in rows[c].tolist()] for c in numbers)]
        names = [*qi, "value", *numbers]
        return pa.Table.from_arrays([pa.array(c, pa.string()) for c in cells], names=names)

    head = frame.head(shown)
    cells = text(head)
    return make_listing(
        caption=f"Classes changed in one value only, most disclosed records first "
        f"({shown:,} of {result.disclosing_classes:,} shown)",
        summary=f"Show the {shown:,} worst of {_plural(result.disclosing_classes, 'class')}"
        if shown < result.disclosing_classes
        else f"Show {'the class' if shown == 1 else f'all {shown:,} classes'}",
        headers=(*qi, f"{result.sensitive} disclosed", "records before", "records after", "change"),
        numeric_from=len(qi) + 1,
        rows=tuple(
            tuple(none_as_null(column[i]) for column in cells)
            + tuple(fmt(head[c].iloc[i]) for c, fmt in zip(numbers, formats, strict=True))
            for i in range(shown)
        ),
        total=result.disclosing_classes,
        table=table,
        name=f"disclosing-{result.sensitive}",
        noun="class",
        options=replace(options, max_classes=max(shown, 1), listings_href=None),
    )


def composition_facts(result: Composition) -> tuple[Fact, ...]:
    """The composition attack's figures, as the ``compose`` page and the audit show them."""
    return (
        Fact(
            "records in two or more releases, with the same value in each", _count(result.records)
        ),
        Fact("of them, disclosed (one consistent value)", _count(result.disclosed_records)),
        Fact(
            "of those, disclosed by the composition alone (each class holds two or more values)",
            _count(result.newly_disclosed_records),
        ),
        Fact("the attacker's largest posterior on a value", fixed(result.max_posterior)),
        Fact("combinations of classes among them", _count(len(result.candidates))),
        Fact(
            "records whose value differs between releases (left out)",
            _count(result.changed_records),
        ),
    )


def differencing_facts(result: Differencing) -> tuple[Fact, ...]:
    """The differencing attack's figures, as the ``diff`` page and the audit show them."""
    return (
        Fact("classes in either release", _count(result.classes)),
        Fact("classes whose size or histogram changed", _count(result.classes_changed)),
        Fact("classes changed in exactly one value", _count(result.disclosing_classes)),
        Fact("records added or removed there: value disclosed", _count(result.disclosed_records)),
    )
