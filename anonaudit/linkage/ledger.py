"""The release ledger: what was released, to whom, and what it spent.

Linkage and composition attacks combine releases; an office can only reason about them
if it keeps a record of every release. The ledger is one SQLite file recording, per
release: a fingerprint of the input (SHA-256 of its bytes), the QIs and SAs, the
transformation, the exact class table released (or the one the DP release was made
from), the DP mechanism and its cost (ε, δ, ρ), the recipient and the time; and, when the
office gives its own record id, the release's records (id, QIs as released, SAs), so
that a later release can be composed with it (:mod:`anonaudit.linkage.history`).

A release recorded by mistake (a file whose record ids repeat, say) is **retired**, not
deleted (:meth:`Ledger.retire`, ``anonaudit ledger FILE retire DATASET RELEASE --reason
TEXT``): the ledger keeps it, with when and why it was retired, and later audits no
longer attack with it (composition, differencing). Its privacy cost still counts
(:meth:`Ledger.spent`): whatever was published stays published.

The ledger is **internal**: it holds exact class tables and is never to be published;
its ``meta`` table says so. Concurrent writers are safe: the file is in WAL mode, every
write is one ``BEGIN IMMEDIATE`` transaction, and a busy writer waits (busy timeout)
instead of failing.

Spend composes sequentially (:func:`anonaudit.dp.accounting.sequential`; McSherry 2009,
Theorem 3): releases of the same dataset add their ε, ρ and δ. A release made without a
DP mechanism (an exact class table) is not differentially private at all: it counts as
ε = inf, so a budget check over a dataset with such a release always fails.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import Budget, PrivacyCost, sequential
from anonaudit.errors import BudgetError, InputError

__all__ = ["LEDGER_NOTE", "Ledger", "LedgerEntry"]

#: What the ``meta`` table says of the file.
LEDGER_NOTE = "internal: holds the exact class table of every release; do not publish"
_SCHEMA_VERSION = "3"  # 2: the records column; 3: the retirements table
_BUSY_SECONDS = 60.0
_COUNT = "__anonaudit_count__"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    dataset TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    source TEXT NOT NULL,
    quasi_identifiers TEXT NOT NULL,
    sensitive TEXT NOT NULL,
    transformation TEXT,
    class_table BLOB,
    mechanism TEXT,
    epsilon REAL,
    delta REAL,
    rho REAL,
    recipient TEXT,
    records BLOB
);
CREATE INDEX IF NOT EXISTS releases_dataset ON releases (dataset, recipient);
CREATE TABLE IF NOT EXISTS retirements (
    release INTEGER PRIMARY KEY REFERENCES releases (id),
    time TEXT NOT NULL,
    reason TEXT NOT NULL
);
"""
_FIELDS = (
    "id, releases.time, dataset, fingerprint, source, quasi_identifiers, sensitive, "
    "transformation, mechanism, epsilon, delta, rho, recipient, retirements.time, "
    "retirements.reason"
)
_FROM = "FROM releases LEFT JOIN retirements ON retirements.release = releases.id"


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release.

    Attributes
    ----------
    id : int
        Its number in the ledger.
    time : str
        When it was recorded (UTC, ISO 8601).
    dataset : str
        The data it was made from: releases of one dataset compose.
    fingerprint : str
        SHA-256 of the input file's bytes.
    source : str
        The input as named when recorded.
    quasi_identifiers, sensitive : tuple of str
        Column roles.
    transformation : mapping or None
        How the input was transformed (generalization levels, suppression).
    mechanism : str or None
        The DP mechanism; ``None`` for an exact (syntactic) release.
    epsilon, delta, rho : float
        Its DP cost (0 for an exact release, whose :attr:`cost` is infinite).
    recipient : str or None
        Who received it.
    retired : str or None
        When it was retired (UTC, ISO 8601; :meth:`Ledger.retire`); ``None`` while it
        is in force.
    retired_reason : str or None
        Why it was retired.
    """

    id: int
    time: str
    dataset: str
    fingerprint: str
    source: str
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    transformation: Mapping[str, Any] | None
    mechanism: str | None
    epsilon: float
    delta: float
    rho: float
    recipient: str | None
    retired: str | None = None
    retired_reason: str | None = None

    @property
    def cost(self) -> PrivacyCost:
        """What the release spent; ε = inf when it was not differentially private."""
        if self.mechanism is None:
            return PrivacyCost(epsilon=math.inf)
        return PrivacyCost(epsilon=self.epsilon, rho=self.rho, delta=self.delta)

    def describe(self) -> str:
        """One line naming the release: number, time, recipient, source and cost."""
        cost = "not DP" if self.mechanism is None else f"{self.mechanism} epsilon {self.epsilon:g}"
        if self.rho:
            cost += f" rho {self.rho:g}"
        if self.delta:
            cost += f" delta {self.delta:g}"
        to = f" to {self.recipient}" if self.recipient else ""
        retired = f", retired {self.retired}" if self.retired else ""
        return f"#{self.id} ({self.time}{to}, {self.source}, {cost}{retired})"


class Ledger:
    """A release ledger in one SQLite file; open it with :meth:`open`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = tempfile.mkdtemp()
    >>> ledger = Ledger.open(pathlib.Path(folder, "ledger.sqlite"))
    >>> _ = ledger.record(dataset="visits", fingerprint="ab", source="q1.csv",
    ...     quasi_identifiers=["zip"], sensitive=["dx"],
    ...     mechanism="discrete-laplace", cost=PrivacyCost(epsilon=0.5))
    >>> _ = ledger.record(dataset="visits", fingerprint="cd", source="q2.csv",
    ...     quasi_identifiers=["zip"], sensitive=["dx"],
    ...     mechanism="discrete-laplace", cost=PrivacyCost(epsilon=0.5))
    >>> ledger.spent("visits").epsilon
    1.0
    >>> ledger.close()
    """

    def __init__(self, connection: sqlite3.Connection, path: str) -> None:
        self._connection = connection
        self.path = path

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Ledger:
        """Open the ledger at ``path``, creating it (and its tables) if needed.

        Raises
        ------
        InputError
            ``path`` is not a ledger (another SQLite file, or not SQLite at all).
        """
        name = os.fspath(path)
        try:
            connection = sqlite3.connect(name, timeout=_BUSY_SECONDS, isolation_level=None)
            connection.execute(f"PRAGMA busy_timeout = {int(_BUSY_SECONDS * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            ledger = cls(connection, name)
            with ledger._write() as cursor:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        cursor.execute(statement)
                columns = {row[1] for row in cursor.execute("PRAGMA table_info(releases)")}
                if "records" not in columns:  # a version 1 ledger
                    cursor.execute("ALTER TABLE releases ADD COLUMN records BLOB")
                # An older ledger has gained what it lacked (the retirements table, by
                # the schema above): it is of this version now.
                cursor.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version' "
                    "AND CAST(value AS INTEGER) < ?",
                    (_SCHEMA_VERSION, int(_SCHEMA_VERSION)),
                )
                now = datetime.now(UTC).isoformat(timespec="seconds")
                for key, value in (
                    ("note", LEDGER_NOTE),
                    ("schema_version", _SCHEMA_VERSION),
                    ("created", now),
                ):
                    cursor.execute(
                        "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value)
                    )
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{name}: not a release ledger ({exc})") from None
        return ledger

    def close(self) -> None:
        """Close the file."""
        self._connection.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``): no upgrade deadlock."""
        cursor = self._connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            yield cursor
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        cursor.execute("COMMIT")

    def meta(self) -> dict[str, str]:
        """The ``meta`` table: ``note``, ``schema_version``, ``created``."""
        return dict(self._connection.execute("SELECT key, value FROM meta").fetchall())

    def record(
        self,
        *,
        dataset: str,
        fingerprint: str,
        source: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str],
        table: ClassTable | None = None,
        transformation: Mapping[str, Any] | None = None,
        mechanism: str | None = None,
        cost: PrivacyCost | None = None,
        recipient: str | None = None,
        budget: Budget | None = None,
        records: pa.Table | None = None,
    ) -> int:
        """Record one release; returns its number.

        ``mechanism`` and ``cost`` describe a DP release (both or neither); without them
        the release is an exact one, not differentially private. With ``budget``, the
        release is refused (:class:`~anonaudit.errors.BudgetError`, nothing recorded)
        when it would take ``dataset``'s total past it; the check and the record are one
        transaction, so two jobs cannot both spend the last of a budget.

        ``records`` are the release's records, its first column the office's record id
        and then the QIs (as released) and SAs, kept for composition with later releases
        (:meth:`records`).
        """
        if (mechanism is None) != (cost is None):
            raise ValueError("give both mechanism and cost for a DP release, or neither")
        cost = cost or PrivacyCost()
        row = (
            datetime.now(UTC).isoformat(timespec="seconds"),
            dataset,
            fingerprint,
            source,
            json.dumps(list(quasi_identifiers)),
            json.dumps(list(sensitive)),
            None if transformation is None else json.dumps(dict(transformation)),
            None if table is None else _table_bytes(table),
            mechanism,
            cost.epsilon,
            cost.delta,
            cost.rho,
            recipient,
            None if records is None else _arrow_bytes(records),
        )
        with self._write() as cursor:
            if budget is not None:
                self.check_budget(cost, budget, dataset=dataset)
            cursor.execute(
                "INSERT INTO releases (time, dataset, fingerprint, source, quasi_identifiers, "
                "sensitive, transformation, class_table, mechanism, epsilon, delta, rho, "
                "recipient, records) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            return int(cursor.lastrowid or 0)

    def releases(
        self,
        dataset: str | None = None,
        recipient: str | None = None,
        *,
        retired: bool = True,
    ) -> tuple[LedgerEntry, ...]:
        """The recorded releases, oldest first; of one dataset and recipient if given.

        With ``retired=False``, only those in force: not retired (:meth:`retire`).
        """
        query, args = f"SELECT {_FIELDS} {_FROM}", []
        where = [] if retired else ["retirements.release IS NULL"]
        if dataset is not None:
            where.append("dataset = ?")
            args.append(dataset)
        if recipient is not None:
            where.append("recipient = ?")
            args.append(recipient)
        if where:
            query += " WHERE " + " AND ".join(where)
        rows = self._connection.execute(query + " ORDER BY id", args).fetchall()
        return tuple(_entry(row) for row in rows)

    def retire(self, release: int, *, dataset: str, reason: str) -> LedgerEntry:
        """Retire release number ``release`` of ``dataset``: recorded, not deleted.

        Later audits no longer attack with it (``release_history`` of
        :mod:`anonaudit.linkage.history` reads ``releases(retired=False)``), and its file
        may be recorded again; its privacy cost still counts (:meth:`spent`). The time
        and ``reason`` are kept beside the release, which stays as it was.

        Returns
        -------
        LedgerEntry
            The release, retired.

        Raises
        ------
        InputError
            No such release of ``dataset``, one retired already, or an empty ``reason``.
        """
        if not reason.strip():
            raise InputError("--reason is empty; say why the release is retired")
        with self._write() as cursor:
            row = cursor.execute(
                f"SELECT {_FIELDS} {_FROM} WHERE id = ? AND dataset = ?", (release, dataset)
            ).fetchone()
            if row is None:
                raise InputError(
                    f"{self.path}: no release #{release} of dataset {dataset!r}; list them "
                    f"with anonaudit ledger {self.path} --dataset {dataset}"
                )
            entry = _entry(row)
            if entry.retired is not None:
                raise InputError(
                    f"{self.path}: release #{release} of {dataset!r} was retired already, "
                    f"at {entry.retired} ({entry.retired_reason})"
                )
            now = datetime.now(UTC).isoformat(timespec="seconds")
            cursor.execute(
                "INSERT INTO retirements (release, time, reason) VALUES (?, ?, ?)",
                (release, now, reason.strip()),
            )
        return replace(entry, retired=now, retired_reason=reason.strip())

    def class_table(self, release: int) -> ClassTable | None:
        """The class table recorded with release number ``release`` (``None`` if none)."""
        row = self._connection.execute(
            "SELECT class_table FROM releases WHERE id = ?", (release,)
        ).fetchone()
        if row is None:
            raise KeyError(f"no release #{release} in {self.path}")
        return None if row[0] is None else _table_from_bytes(row[0])

    def records(self, release: int) -> pa.Table | None:
        """The records kept with release number ``release`` (``None`` if none were).

        The first column is the office's record id, named as when recorded.
        """
        row = self._connection.execute(
            "SELECT records FROM releases WHERE id = ?", (release,)
        ).fetchone()
        if row is None:
            raise KeyError(f"no release #{release} in {self.path}")
        return None if row[0] is None else _read_arrow(row[0])

    def has_records(self, release: int) -> bool:
        """Whether release number ``release`` was recorded with its records."""
        row = self._connection.execute(
            "SELECT records IS NOT NULL FROM releases WHERE id = ?", (release,)
        ).fetchone()
        return bool(row and row[0])

    def spent(self, dataset: str | None = None, recipient: str | None = None) -> PrivacyCost:
        """What the releases (of ``dataset``, to ``recipient``) spent, composed sequentially.

        Retired releases count too: what was published stays published.
        """
        return sequential(PrivacyCost(), *(e.cost for e in self.releases(dataset, recipient)))

    def check_budget(
        self,
        cost: PrivacyCost,
        budget: Budget,
        *,
        dataset: str | None = None,
        recipient: str | None = None,
    ) -> None:
        """Refuse a new release of ``cost`` that, with those recorded, exceeds ``budget``.

        Raises
        ------
        BudgetError
            Naming the recorded releases that spent the budget.
        """
        entries = self.releases(dataset, recipient)
        spent = budget.spent + tuple(entry.cost for entry in entries)
        try:
            Budget(budget.epsilon, budget.delta, spent).spend(cost)
        except BudgetError as exc:
            shown = "; ".join(entry.describe() for entry in entries[-10:])
            more = f" (and {len(entries) - 10} earlier)" if len(entries) > 10 else ""
            spent_by = f"; spent by {shown}{more}" if entries else ""
            raise BudgetError(f"{exc}{spent_by}") from None


def _entry(row: tuple[Any, ...]) -> LedgerEntry:
    return LedgerEntry(
        id=int(row[0]),
        time=row[1],
        dataset=row[2],
        fingerprint=row[3],
        source=row[4],
        quasi_identifiers=tuple(json.loads(row[5])),
        sensitive=tuple(json.loads(row[6])),
        transformation=None if row[7] is None else json.loads(row[7]),
        mechanism=row[8],
        epsilon=float(row[9] or 0.0),
        delta=float(row[10] or 0.0),
        rho=float(row[11] or 0.0),
        recipient=row[12],
        retired=row[13],
        retired_reason=row[14],
    )


def _table_bytes(table: ClassTable) -> bytes:
    """The class table as a compressed Arrow IPC stream, its roles in the schema metadata."""
    data = table.keys.append_column(_COUNT, pa.array(table.counts, pa.int64()))
    roles = {
        "quasi_identifiers": json.dumps(list(table.quasi_identifiers)),
        "sensitive": json.dumps(list(table.sensitive)),
    }
    return _arrow_bytes(data.replace_schema_metadata(roles))


def _arrow_bytes(data: pa.Table) -> bytes:
    """``data`` as a zstd-compressed Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(sink, data.schema, options=options) as writer:
        writer.write_table(data)
    return bytes(sink.getvalue().to_pybytes())


def _read_arrow(blob: bytes) -> pa.Table:
    with pa.ipc.open_stream(pa.py_buffer(blob)) as reader:  # closed, as every reader
        return reader.read_all()


def _table_from_bytes(blob: bytes) -> ClassTable:
    data = _read_arrow(blob)
    metadata = data.schema.metadata or {}
    qi = tuple(json.loads(metadata[b"quasi_identifiers"]))
    sa = tuple(json.loads(metadata[b"sensitive"]))
    counts = np.asarray(data.column(_COUNT).to_numpy(), dtype=np.int64)
    return ClassTable(qi, sa, data.drop_columns([_COUNT]).replace_schema_metadata(None), counts)
