"""A new release judged against the earlier releases of its dataset, kept in a ledger.

``anonaudit audit --ledger FILE --dataset NAME`` runs, beside the single-table audit,
the two attacks that need earlier releases, automatically:

* **differencing** (:func:`~anonaudit.linkage.differencing.difference`) against the latest
  earlier exact release of the dataset coded the same way (same QIs, same
  transformation, and most of the new release's records in classes the old one has:
  :data:`SAME_CODING`), from the class table the ledger kept of it: a class whose
  histogram changed in one value only discloses that value for the records added or
  removed;
* **composition** (:func:`~anonaudit.linkage.composition.compose`; Ganta,
  Kasiviswanathan & Smith 2008) with every earlier exact release of the dataset that
  was recorded with its records (the office's record id, ``--id``): an attacker who
  knows a target's QIs intersects the values of the target's classes.

Retired releases (:meth:`~anonaudit.linkage.ledger.Ledger.retire`) are not attacked
with. Only exact (syntactic) releases are: a DP release's ledger entry holds the
table it was made from, which was never published, and its cost is accounted for by
the budget instead (:meth:`~anonaudit.linkage.ledger.Ledger.check_budget`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.classtable import ClassTable
from anonaudit.errors import InputError
from anonaudit.files import printable
from anonaudit.linkage.composition import Composition, compose, read_releases
from anonaudit.linkage.differencing import Differencing, difference
from anonaudit.linkage.ledger import Ledger, LedgerEntry
from anonaudit.settings.names import Judged, Verdict
from anonaudit.sources.base import file_sha256

__all__ = [
    "SAME_CODING",
    "ReleaseHistory",
    "fingerprint_inputs",
    "refuse_repeated_ids",
    "release_history",
    "repeated_ids",
]

#: Differencing compares two releases coded alike: below this share of the new
#: release's records in classes the old one has too, they are taken to be coded
#: differently (two generalizations of a table share few classes; a month's growth
#: shares most) and the differencing is not run.
SAME_CODING = 0.5


@dataclass(frozen=True)
class ReleaseHistory:
    """A release against the earlier releases of its dataset (:func:`release_history`).

    Attributes
    ----------
    dataset : str
        The dataset, as the ledger names it.
    earlier : tuple of LedgerEntry
        The earlier exact releases of the dataset over the same QIs, oldest first.
    composed_with : tuple of LedgerEntry
        Those of them composed with this release (recorded with their records).
    composition : dict of str to Composition
        Per SA, the composition attack on this release and ``composed_with``; empty
        when it was not assessed.
    differenced_with : LedgerEntry or None
        The release this one was differenced against.
    differencing : dict of str to Differencing
        Per SA, the differencing attack against ``differenced_with``.
    not_checked : tuple of str
        What could not be assessed, and why, in a sentence each.
    recorded : int or None
        The number the ledger gave this release, once recorded.
    """

    dataset: str
    earlier: tuple[LedgerEntry, ...]
    composed_with: tuple[LedgerEntry, ...]
    composition: dict[str, Composition] = field(repr=False)
    differenced_with: LedgerEntry | None
    differencing: dict[str, Differencing] = field(repr=False)
    not_checked: tuple[str, ...]
    recorded: int | None = None

    @property
    def composed_names(self) -> str:
        """The releases composed with this one, as reports name them: ``"#1, #2"``."""
        return ", ".join(f"#{entry.id}" for entry in self.composed_with)

    @property
    def differenced_name(self) -> str:
        """The release differenced against, as reports name it (``""`` if none)."""
        return "" if self.differenced_with is None else f"#{self.differenced_with.id}"

    def verdicts(self) -> list[Verdict]:
        """A verdict per SA and attack run: passed when it disclosed no record.

        The composition fails on the records it discloses that no release disclosed
        alone (:attr:`Composition.newly_disclosed_records`); a class of one value in a
        release is l-diversity's finding.
        """
        return [
            *(
                Verdict(Judged.COMPOSITION, r.newly_disclosed_records == 0, sa)
                for sa, r in self.composition.items()
            ),
            *(
                Verdict(Judged.DIFFERENCING, r.disclosed_records == 0, sa)
                for sa, r in self.differencing.items()
            ),
        ]


def release_history(
    ledger: Ledger,
    table: ClassTable,
    *,
    dataset: str,
    fingerprint: str,
    records: pa.Table | None = None,
    transformation: Mapping[str, Any] | None = None,
    max_classes: int | None = 100,
) -> ReleaseHistory:
    """Attack ``table`` with the earlier exact releases of ``dataset`` in ``ledger``.

    Parameters
    ----------
    ledger : Ledger
        The release ledger.
    table : ClassTable
        The new release's class table, QIs as released.
    dataset : str
        The dataset its releases are recorded under.
    fingerprint : str
        The new release's fingerprint: an earlier entry with the same one is this very
        release, recorded before, and is not attacked with itself.
    records : pyarrow.Table, optional
        The new release's records: the office's record id first, then the QIs (as
        released) and SAs. Without them, composition is not assessed.
    transformation : mapping, optional
        How the release was made from the input (as recorded in the ledger): the
        differencing compares releases coded alike.
    max_classes : int or None
        Disclosing classes listed by the differencing (``None``: all).

    Returns
    -------
    ReleaseHistory
    """
    qi, sa = table.quasi_identifiers, table.sensitive
    earlier = tuple(
        entry
        for entry in ledger.releases(dataset, retired=False)
        if entry.mechanism is None
        and entry.fingerprint != fingerprint
        and entry.quasi_identifiers == qi
    )
    not_checked: list[str] = []
    if not earlier:
        not_checked.append(
            f"the ledger holds no earlier release of {dataset!r} over these "
            "quasi-identifiers: composition and differencing were not assessed"
        )
    alike = [entry for entry in earlier if _transformation(entry) == dict(transformation or {})]
    differenced_with = alike[-1] if alike else None
    old = None if differenced_with is None else ledger.class_table(differenced_with.id)
    differencing = (
        {}
        if old is None
        else {
            name: difference(old, table, name, max_classes=max_classes)
            for name in sa
            if name in old.sensitive
        }
    )
    if earlier and old is None:
        not_checked.append(
            "no earlier release was coded the same way (same transformation): "
            "differencing was not assessed"
        )
    shared = min((_shared(result) for result in differencing.values()), default=0.0)
    if differenced_with is not None and not differencing:
        not_checked.append(
            f"release #{differenced_with.id} has none of this release's sensitive columns: "
            "differencing was not assessed"
        )
        differenced_with = None
    elif differenced_with is not None and shared < SAME_CODING:
        not_checked.append(
            f"only {shared:.0%} of this release's records are in classes release "
            f"#{differenced_with.id} also has: the two are coded differently (another "
            "generalization), so differencing was not assessed"
        )
        differenced_with, differencing = None, {}
    composed_with = tuple(entry for entry in earlier if ledger.has_records(entry.id))
    composition: dict[str, Composition] = {}
    if earlier and records is None:
        not_checked.append(
            "this release's record ids were not given (--id): composition with earlier "
            "releases was not assessed"
        )
    elif earlier and not composed_with:
        not_checked.append(
            "no earlier release was recorded with its record ids (--id): composition "
            "was not assessed"
        )
    elif records is not None and composed_with:
        composition = _compose(ledger, composed_with, records, table)
    return ReleaseHistory(
        dataset=dataset,
        earlier=earlier,
        composed_with=composed_with,
        composition=composition,
        differenced_with=differenced_with,
        differencing=differencing,
        not_checked=tuple(not_checked),
    )


def _shared(result: Differencing) -> float:
    """The share of the new release's records in classes the old release has too."""
    total = int(result.new_sizes.sum())
    return 1.0 if total == 0 else int(result.new_sizes[result.old_sizes > 0].sum()) / total


def _transformation(entry: LedgerEntry) -> dict[str, Any]:
    return dict(entry.transformation or {})


def _compose(
    ledger: Ledger,
    entries: Sequence[LedgerEntry],
    records: pa.Table,
    table: ClassTable,
) -> dict[str, Composition]:
    """Compose ``records`` with the kept records of ``entries``, per SA they share."""
    id = records.column_names[0]
    tables, names = [], []
    for entry in entries:
        kept = ledger.records(entry.id)
        if kept is not None:
            ids, _ = repeated_ids(kept)
            if ids:
                raise InputError(
                    f"{ledger.path}: release #{entry.id} of {entry.dataset!r} repeats "
                    f"{ids:,} record ids in its id column {kept.column_names[0]!r}, so it "
                    "cannot be composed with; retire it: anonaudit ledger "
                    f"{ledger.path} retire {entry.dataset} {entry.id} --reason TEXT"
                )
            tables.append(kept.rename_columns([id, *kept.column_names[1:]]))
            names.append(f"release #{entry.id} ({entry.source}, {entry.time})")
    shared = [name for name in table.sensitive if all(name in t.column_names for t in tables)]
    if not shared:
        return {}
    columns = [id, *table.quasi_identifiers, *shared]
    releases = read_releases(
        [*(t.select(columns) for t in tables), records.select(columns)],
        id=id,
        quasi_identifiers=table.quasi_identifiers,
        sensitive=shared,
        names=[*names, "this release"],
    )
    return {name: compose(releases, name) for name in shared}


def repeated_ids(records: pa.Table) -> tuple[int, int]:
    """How many ids of ``records`` (its first column) occur more than once, and in how
    many records; null ids are not counted.

    >>> repeated_ids(pa.table({"pid": ["1", "2", "2", "3", "3", "3", None, None]}))
    (2, 5)
    """
    ids = records.column(0)
    known = pa.table({"id": ids}).filter(pc.is_valid(ids))
    counts = known.group_by("id").aggregate([("id", "count")])
    repeated = counts.column("id_count").to_numpy()
    repeated = repeated[repeated > 1]
    return len(repeated), int(repeated.sum())


def refuse_repeated_ids(records: pa.Table, source: str) -> None:
    """Refuse to record a release whose record ids (``records``' first column) repeat:
    no later release could be composed with it. The message names the column and counts
    the ids, and prints none of them (a report may redact such values).

    Raises
    ------
    InputError
        An id shared by several records.
    """
    ids, shared = repeated_ids(records)
    if ids:
        raise InputError(
            f"{printable(source)}: the id column {printable(repr(records.column_names[0]))} "
            f"repeats {ids:,} "
            f"{'id' if ids == 1 else 'ids'} ({shared:,} records share an id); each record "
            "of a release needs its own id: fix the file, nothing was recorded"
        )


def fingerprint_inputs(inputs: Sequence[str]) -> str:
    """A release's fingerprint: the SHA-256 of its input files, comma-separated (empty
    for an input that is not a file)."""
    return ",".join(file_sha256(path) if Path(path).is_file() else "" for path in inputs)
