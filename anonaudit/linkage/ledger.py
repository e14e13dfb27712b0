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
instead of failing. A check and the record it allows are one transaction too
(:meth:`Ledger.transaction`): two audits of one dataset are checked and recorded one
after the other, each against the releases the other recorded.

A ledger is **created only where no file exists** (built beside it and linked into
place, so a concurrent run never sees it half made); an existing file is used only when
it is an anonaudit ledger: its header carries :data:`APPLICATION_ID` (``PRAGMA
application_id``), or, for a ledger of an older anonaudit, its ``meta`` table holds a
schema version and its ``releases`` table the ledger's columns. Anything else (another
application's database, an empty file, a ledger of a newer anonaudit, one whose tables
were changed) is refused untouched, as is a ledger that cannot be written (read-only,
locked past the wait, no space), with a message saying which.

Spend composes sequentially (McSherry 2009, Theorem 3): releases of the same dataset
compose, tightly by privacy-loss distributions (:mod:`anonaudit.dp.budgets`). A dataset's
budget is stated for one neighbouring relation and one privacy unit (schema 6); each
release's cost is converted into them where a sound conversion exists and counts as
infinite where none does (a replace release under an add-remove budget). A release made
without a DP mechanism (an exact class table) is not differentially private at all: it
counts as ε = inf, so a budget check over a dataset with such a release always fails.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import Budget, PrivacyCost, sequential
from anonaudit.dp.budgets import Recorded, Spend, compose, stated_delta, unit_name
from anonaudit.errors import BudgetError, InputError, ParameterError
from anonaudit.files import printable
from anonaudit.settings.names import NEIGHBOURING

__all__ = [
    "APPLICATION_ID",
    "LEDGER_NOTE",
    "BudgetSetting",
    "Ledger",
    "LedgerEntry",
]

#: The SQLite header's application id of an anonaudit ledger (``PRAGMA application_id``):
#: the bytes ``anAL``.
APPLICATION_ID = 0x616E414C

#: What the ``meta`` table says of the file.
LEDGER_NOTE = "internal: holds the exact class table of every release; do not publish"
_SCHEMA_VERSION = "6"  # 2: records; 3: retirements; 4: budgets; 5: parameters of DP
# releases; 6: a budget's relation and unit
_BUSY_SECONDS = 60.0
#: The columns of the ``releases`` table of every version (version 2 added ``records``).
_RELEASE_COLUMNS = frozenset(
    ("id", "time", "dataset", "fingerprint", "source", "quasi_identifiers", "sensitive",
     "transformation", "class_table", "mechanism", "epsilon", "delta", "rho", "recipient")
)  # fmt: skip
_RETIREMENT_COLUMNS = frozenset(("release", "time", "reason"))
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
    records BLOB,
    parameters TEXT
);
CREATE INDEX IF NOT EXISTS releases_dataset ON releases (dataset, recipient);
CREATE TABLE IF NOT EXISTS retirements (
    release INTEGER PRIMARY KEY REFERENCES releases (id),
    time TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS budgets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    time TEXT NOT NULL,
    reason TEXT NOT NULL,
    relation TEXT NOT NULL DEFAULT 'add-remove',
    unit TEXT
);
"""
_FIELDS = (
    "id, releases.time, dataset, fingerprint, source, quasi_identifiers, sensitive, "
    "transformation, mechanism, epsilon, delta, rho, recipient, retirements.time, "
    "retirements.reason, parameters"
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
    parameters : mapping or None
        For a DP release recorded since schema 5, what rebuilds its privacy loss: the
        neighbouring relation it is stated for (``neighbouring``), the privacy unit,
        the noise scale, the δ it was stated at and the sensitivities (``l0``, ``l1``,
        ``l2``, ``linf``, ``max_contributions``).
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
    parameters: Mapping[str, Any] | None = None

    @property
    def cost(self) -> PrivacyCost:
        """What the release spent; ε = inf when it was not differentially private."""
        if self.mechanism is None:
            return PrivacyCost(epsilon=math.inf)
        return PrivacyCost(epsilon=self.epsilon, rho=self.rho, delta=self.delta)

    @property
    def recorded(self) -> Recorded:
        """The release as a budget sees it (:class:`~anonaudit.dp.budgets.Recorded`)."""
        return Recorded.from_parameters(self.mechanism or "exact", self.cost, self.parameters)

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


@dataclass(frozen=True)
class BudgetSetting:
    """A privacy budget set for a dataset in the ledger.

    Attributes
    ----------
    dataset : str
        The dataset whose releases it bounds (every recipient's).
    epsilon, delta : float
        The total its releases may spend, composed sequentially.
    time : str
        When it was set (UTC, ISO 8601).
    reason : str
        Why, as given when it was set.
    relation : {"add-remove", "replace"}
        The neighbouring relation it is stated for: ``replace`` bounds only what is
        learnt of a present person's value, not whether they are in the data.
    unit : str or None
        The privacy unit it is stated for: a column naming a person, or ``None``: one
        record.
    """

    dataset: str
    epsilon: float
    delta: float
    time: str
    reason: str
    relation: str = "add-remove"
    unit: str | None = None

    def describe(self) -> str:
        """``epsilon E, delta D under R neighbours, one record``."""
        return (
            f"epsilon {self.epsilon:g}, delta {self.delta:g} under {self.relation} "
            f"neighbours, {unit_name(self.unit)}"
        )


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

    def __init__(
        self, connection: sqlite3.Connection, path: str, *, wait: float = _BUSY_SECONDS
    ) -> None:
        self._connection = connection
        self.path = path
        self._wait = wait

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        wait: float = _BUSY_SECONDS,
    ) -> Ledger:
        """Open the ledger at ``path``, creating it if no file is there (and ``create``).

        An existing file is checked before it is opened for writing: it must be an
        anonaudit ledger of this version or an older one (an older one is then brought
        to this version). Anything else is left untouched.

        Parameters
        ----------
        path : path
            The ledger file.
        create : bool
            Create the ledger when no file is at ``path``; otherwise refuse.
        wait : float
            Seconds to wait for another process's write to finish (busy timeout).

        Raises
        ------
        InputError
            ``path`` is not a ledger (another SQLite file, an empty file, not SQLite at
            all), a ledger of a newer anonaudit or a damaged one, or it cannot be
            written: read-only, locked by another process past ``wait``, no space.
        """
        name = os.fspath(path)
        if name != ":memory:":  # ":memory:": a ledger of this process only (tests, trials)
            if not os.path.lexists(name):
                if not create:
                    raise InputError(f"{printable(name)}: no such ledger; check the path")
                _create(name)
            _recognise(name)  # another run's ledger, or a file that appeared meanwhile
        try:
            connection = sqlite3.connect(name, timeout=wait, isolation_level=None)
        except sqlite3.Error as exc:
            raise _failure(name, exc, wait) from None
        ledger = cls(connection, name, wait=wait)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                connection.execute("PRAGMA journal_mode = WAL")
            ledger._upgrade()
        except BaseException:
            connection.close()
            raise
        return ledger

    @staticmethod
    def check(path: str | os.PathLike[str]) -> None:
        """Refuse, before any input is read, a file at ``path`` that :meth:`open` would
        refuse as no ledger of this anonaudit; nothing is created or written.

        Raises
        ------
        InputError
            As :meth:`open`.
        """
        name = os.fspath(path)
        if name != ":memory:" and os.path.lexists(name):
            _recognise(name)

    def _upgrade(self) -> None:
        """Bring a ledger of an older version to this one (nothing when it is of this one)."""
        marked = self._run(lambda: self._connection.execute("PRAGMA application_id").fetchone())
        tables = self._run(
            lambda: {
                row[0]
                for row in self._connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
        )
        version = self.meta().get("schema_version") if "meta" in tables else None
        current = {"retirements", "budgets"} <= tables
        if version == _SCHEMA_VERSION and marked[0] == APPLICATION_ID and current:
            return
        with self._write() as cursor:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    cursor.execute(statement)
            columns = {row[1] for row in cursor.execute("PRAGMA table_info(releases)")}
            if "records" not in columns:  # a version 1 ledger
                cursor.execute("ALTER TABLE releases ADD COLUMN records BLOB")
            if "parameters" not in columns:  # before version 5
                cursor.execute("ALTER TABLE releases ADD COLUMN parameters TEXT")
            columns = {row[1] for row in cursor.execute("PRAGMA table_info(budgets)")}
            if "relation" not in columns:  # before version 6: budgets were add-remove, per record
                cursor.execute(
                    "ALTER TABLE budgets ADD COLUMN relation TEXT NOT NULL DEFAULT 'add-remove'"
                )
                cursor.execute("ALTER TABLE budgets ADD COLUMN unit TEXT")
            # An older ledger has gained what it lacked (the retirements and budgets
            # tables, by the schema above): it is of this version now.
            cursor.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version' "
                "AND CAST(value AS INTEGER) < ?",
                (_SCHEMA_VERSION, int(_SCHEMA_VERSION)),
            )
            _fill_meta(cursor)
            cursor.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def close(self) -> None:
        """Close the file."""
        self._connection.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``): no upgrade deadlock.

        Inside :meth:`transaction`, part of it (committed with it).
        """
        cursor = self._connection.cursor()
        if self._connection.in_transaction:
            yield cursor
            return
        self._run(lambda: cursor.execute("BEGIN IMMEDIATE"))
        try:
            yield cursor
            self._run(lambda: cursor.execute("COMMIT"))
        except BaseException:
            if self._connection.in_transaction:
                with suppress(sqlite3.Error):  # rolled back already
                    cursor.execute("ROLLBACK")
            raise
        finally:
            cursor.close()

    @contextmanager
    def transaction(self) -> Iterator[Ledger]:
        """Hold the ledger's write lock across a check and the record it allows.

        Everything read and recorded in the block is one ``BEGIN IMMEDIATE``
        transaction: another process's check and record of the same ledger wait until
        it is committed (or rolled back, when the block raises), and then see this one's
        releases. Keep the block short: other writers wait for it.

        Raises
        ------
        InputError
            The ledger cannot be written (read-only, locked past the wait, no space);
            nothing in the block is recorded.
        """
        with self._write():
            yield self

    def _run(self, operation: Any) -> Any:
        """``operation()``, an error of SQLite turned into one line naming the ledger."""
        try:
            return operation()
        except sqlite3.Error as exc:
            raise _failure(self.path, exc, self._wait) from None

    def meta(self) -> dict[str, str]:
        """The ``meta`` table: ``note``, ``schema_version``, ``created``."""
        rows = self._run(lambda: self._connection.execute("SELECT key, value FROM meta").fetchall())
        return {str(key): str(value) for key, value in rows}

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
        budget: BudgetSetting | None = None,
        records: pa.Table | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> int:
        """Record one release; returns its number.

        ``mechanism`` and ``cost`` describe a DP release (both or neither); without them
        the release is an exact one, not differentially private. With ``budget``, the
        release is refused (:class:`~anonaudit.errors.BudgetError`, nothing recorded)
        when it would take ``dataset``'s total past it (:meth:`check_budget`); the check
        and the record are one transaction, so two jobs cannot both spend the last of a
        budget. A DP release recorded without ``parameters`` has no known relation: under
        an add-remove budget it counts as infinite.

        ``records`` are the release's records, its first column the office's record id
        and then the QIs (as released) and SAs, kept for composition with later releases
        (:meth:`records`). ``parameters`` are a DP release's (see
        :attr:`LedgerEntry.parameters`).
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
            None if parameters is None else json.dumps(dict(parameters)),
        )
        with self._write() as cursor:
            if budget is not None:
                spends = cost if mechanism else PrivacyCost(epsilon=math.inf)
                self.check_budget(
                    Recorded.from_parameters(mechanism or "exact", spends, parameters), budget
                )
            self._run(
                lambda: cursor.execute(
                    "INSERT INTO releases (time, dataset, fingerprint, source, "
                    "quasi_identifiers, sensitive, transformation, class_table, mechanism, "
                    "epsilon, delta, rho, recipient, records, parameters) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
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
        rows = self._run(lambda: self._connection.execute(query + " ORDER BY id", args).fetchall())
        return tuple(self._entry(row) for row in rows)

    def _entry(self, row: tuple[Any, ...]) -> LedgerEntry:
        try:
            return _entry(row)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise self._damaged(row[0], exc) from None

    def _damaged(self, release: object, exc: BaseException) -> InputError:
        reason = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return InputError(
            f"{printable(self.path)}: release #{printable(str(release))} is damaged "
            f"({reason}); the ledger cannot be used: restore it from a backup"
        )

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
            row = self._run(
                lambda: cursor.execute(
                    f"SELECT {_FIELDS} {_FROM} WHERE id = ? AND dataset = ?", (release, dataset)
                ).fetchone()
            )
            path, name = printable(self.path), printable(repr(dataset))
            if row is None:
                raise InputError(
                    f"{path}: no release #{release} of dataset {name}; list them "
                    f"with anonaudit ledger {path} --dataset {printable(dataset)}"
                )
            entry = self._entry(row)
            if entry.retired is not None:
                raise InputError(
                    f"{path}: release #{release} of {name} was retired already, "
                    f"at {printable(entry.retired)} ({printable(entry.retired_reason or '')})"
                )
            now = datetime.now(UTC).isoformat(timespec="seconds")
            self._run(
                lambda: cursor.execute(
                    "INSERT INTO retirements (release, time, reason) VALUES (?, ?, ?)",
                    (release, now, reason.strip()),
                )
            )
        return replace(entry, retired=now, retired_reason=reason.strip())

    def class_table(self, release: int) -> ClassTable | None:
        """The class table recorded with release number ``release`` (``None`` if none)."""
        row = self._run(
            lambda: self._connection.execute(
                "SELECT class_table FROM releases WHERE id = ?", (release,)
            ).fetchone()
        )
        if row is None:
            raise KeyError(f"no release #{release} in {self.path}")
        try:
            return None if row[0] is None else _table_from_bytes(row[0])
        except (pa.ArrowException, OSError, ValueError, TypeError, KeyError) as exc:
            raise self._damaged(release, exc) from None

    def records(self, release: int) -> pa.Table | None:
        """The records kept with release number ``release`` (``None`` if none were).

        The first column is the office's record id, named as when recorded.
        """
        row = self._run(
            lambda: self._connection.execute(
                "SELECT records FROM releases WHERE id = ?", (release,)
            ).fetchone()
        )
        if row is None:
            raise KeyError(f"no release #{release} in {self.path}")
        try:
            return None if row[0] is None else _read_arrow(row[0])
        except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
            raise self._damaged(release, exc) from None

    def has_records(self, release: int) -> bool:
        """Whether release number ``release`` was recorded with its records."""
        row = self._run(
            lambda: self._connection.execute(
                "SELECT records IS NOT NULL FROM releases WHERE id = ?", (release,)
            ).fetchone()
        )
        return bool(row and row[0])

    def budget(self, dataset: str) -> BudgetSetting | None:
        """The budget of ``dataset`` in force: the last one set (``None``: none set)."""
        budgets = self.budgets(dataset)
        return budgets[-1] if budgets else None

    def budgets(self, dataset: str | None = None) -> list[BudgetSetting]:
        """Every budget set (of ``dataset``), oldest first: the budgets' history."""
        query = "SELECT dataset, epsilon, delta, time, reason, relation, unit FROM budgets"
        arguments: tuple[str, ...] = ()
        if dataset is not None:
            query, arguments = query + " WHERE dataset = ?", (dataset,)
        rows = self._run(
            lambda: self._connection.execute(query + " ORDER BY id", arguments).fetchall()
        )
        return [BudgetSetting(*row) for row in rows]

    def set_budget(
        self,
        dataset: str,
        epsilon: float,
        delta: float,
        reason: str,
        *,
        relation: str = "add-remove",
        unit: str | None = None,
    ) -> BudgetSetting:
        """Set the budget of ``dataset`` (the first time, or to raise or lower it): recorded
        with the time and ``reason``, and kept in the budgets' history.

        Parameters
        ----------
        dataset : str
            The dataset.
        epsilon, delta : float
            The total its releases may spend.
        reason : str
            Why it is set.
        relation : {"add-remove", "replace"}
            The neighbouring relation the budget is stated for.
        unit : str or None
            The privacy unit it is stated for: a column naming a person, or ``None``: one
            record.

        Raises
        ------
        ParameterError
            No reason given, an unknown relation, or a budget below what the dataset's
            releases spent in that relation and unit.
        """
        if not reason.strip():
            raise ParameterError("say why the budget is set (--reason TEXT)")
        if relation not in NEIGHBOURING:
            raise ParameterError(
                f"a budget is stated for one of {', '.join(NEIGHBOURING)} neighbours "
                f"(got {relation!r})"
            )
        Budget(epsilon, delta)  # checks the values
        now = datetime.now(UTC).isoformat(timespec="seconds")
        setting = BudgetSetting(dataset, float(epsilon), float(delta), now, reason, relation, unit)
        spent = self.spend(setting)
        if spent.epsilon > epsilon * (1 + 1e-9):
            raise ParameterError(
                f"a budget of {setting.describe()} for {printable(dataset)!r} is below what "
                f"its releases spent: {_spent_text(spent)}"
            )
        with self._write() as cursor:
            cursor.execute(
                "INSERT INTO budgets (dataset, epsilon, delta, time, reason, relation, unit) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (dataset, setting.epsilon, setting.delta, now, reason, relation, unit),
            )
        return setting

    def spent(self, dataset: str | None = None, recipient: str | None = None) -> PrivacyCost:
        """What the releases (of ``dataset``, to ``recipient``) spent, their costs added as
        recorded, whatever their relations (the plain sum; :meth:`spend` states a total).

        Retired releases count too: what was published stays published.
        """
        return sequential(PrivacyCost(), *(e.cost for e in self.releases(dataset, recipient)))

    def spend(
        self,
        budget: BudgetSetting,
        *,
        recipient: str | None = None,
        adding: Sequence[Recorded] = (),
    ) -> Spend:
        """What the releases of ``budget``'s dataset (to ``recipient``), and ``adding``,
        spent in the budget's relation and unit at its δ (:func:`~anonaudit.dp.budgets.
        compose`). Retired releases count too."""
        entries = self.releases(budget.dataset, recipient)
        return compose(
            [*(e.recorded for e in entries), *adding],
            relation=budget.relation,
            unit=budget.unit,
            delta=budget.delta,
        )

    def spent_by_relation(
        self, dataset: str | None = None, recipient: str | None = None
    ) -> dict[str, dict[str, Spend]]:
        """What the DP releases spent, per dataset and per the neighbouring relation
        each was stated for (``unrecorded``: before schema 5, their costs added as
        recorded): releases under different relations are not one total. Each is
        stated at the sum of its releases' δ, for the privacy unit they share (else one
        record)."""
        groups: dict[str, dict[str, list[Recorded]]] = {}
        for entry in self.releases(dataset, recipient):
            if entry.mechanism is not None:
                recorded = entry.recorded
                relation = recorded.neighbouring or "unrecorded"
                groups.setdefault(entry.dataset, {}).setdefault(relation, []).append(recorded)
        return {
            name: {
                relation: compose(
                    releases,
                    relation=None if relation == "unrecorded" else relation,
                    unit=_shared_unit(releases),
                    delta=stated_delta(releases, relation),
                )
                for relation, releases in sorted(relations.items())
            }
            for name, relations in sorted(groups.items())
        }

    def present_value(
        self, dataset: str | None = None, recipient: str | None = None
    ) -> dict[str, Spend]:
        """For each dataset with DP releases under more than one relation, their total
        for a present person's value (``replace``, one record; an add-remove release
        converted, :func:`~anonaudit.dp.budgets.convert`), at their stated δ. There is
        no total under add-remove: a release stated for replace does not protect
        presence."""
        groups: dict[str, list[Recorded]] = {}
        for entry in self.releases(dataset, recipient):
            if entry.mechanism is not None:
                groups.setdefault(entry.dataset, []).append(entry.recorded)
        return {
            name: compose(
                releases,
                relation="replace",
                unit=None,
                delta=stated_delta(releases, "replace"),
            )
            for name, releases in sorted(groups.items())
            if len({r.neighbouring for r in releases}) > 1
        }

    def check_budget(
        self,
        new: Recorded,
        budget: BudgetSetting,
        *,
        recipient: str | None = None,
    ) -> Spend:
        """Refuse a new release ``new`` that, with those recorded of ``budget``'s dataset
        (to ``recipient``), exceeds ``budget`` in its relation and unit.

        Returns
        -------
        Spend
            The total with ``new``, within the budget.

        Raises
        ------
        BudgetError
            Naming the total, how it was composed, what has no cost in the budget's
            relation and unit, and the recorded releases that spent the budget.
        """
        spent = self.spend(budget, recipient=recipient, adding=[new])
        if spent.epsilon <= budget.epsilon * (1 + 1e-9):
            return spent
        entries = self.releases(budget.dataset, recipient)
        shown = "; ".join(entry.describe() for entry in entries[-10:])
        more = f" (and {len(entries) - 10} earlier)" if len(entries) > 10 else ""
        spent_by = f"; spent by {shown}{more}" if entries else ""
        raise BudgetError(
            f"these releases would cost {_spent_text(spent)}, more than the budget of "
            f"{printable(budget.dataset)!r} ({budget.describe()}); lower epsilon or release "
            f"less{spent_by}"
        )


def _shared_unit(releases: Sequence[Recorded]) -> str | None:
    """The privacy unit every release is stated for, else ``None`` (one record)."""
    units = {r.privacy_unit for r in releases}
    return units.pop() if len(units) == 1 else None


def _spent_text(spent: Spend) -> str:
    """``epsilon 2.3 at delta 1e-06 (PLD)``, or what has no cost in the relation."""
    if spent.uncovered:
        return f"epsilon inf under {spent.relation} neighbours: " + "; ".join(
            dict.fromkeys(spent.uncovered)
        )
    at = f" at delta {spent.delta:g}" if spent.delta else ""
    if spent.delta_spent >= spent.delta > 0 or (spent.delta_spent > 0 and not spent.delta):
        return (
            f"epsilon inf{at} under {spent.relation} neighbours: the releases' own delta "
            f"(their thresholds', {spent.delta_spent:.3g} together) leaves none of the "
            "budget's delta for the noise"
        )
    how = "privacy-loss distributions" if spent.method == "pld" else "the sum"
    return f"epsilon {spent.epsilon:.4g}{at} under {spent.relation} neighbours ({how})"


def _entry(row: tuple[Any, ...]) -> LedgerEntry:
    """A row of :data:`_FIELDS` as an entry; raises ValueError or TypeError when damaged."""
    for column, value in zip(("epsilon", "delta", "rho"), row[9:12], strict=True):
        if value is not None and not isinstance(value, int | float):
            raise ValueError(f"its {column} is {type(value).__name__}, not a number")
        if value is not None and (math.isnan(value) or value < 0):
            raise ValueError(f"its {column} is {value!r}")
    for column, value in zip(("time", "dataset", "fingerprint", "source"), row[1:5], strict=True):
        if not isinstance(value, str):
            raise ValueError(f"its {column} is {type(value).__name__}, not text")
    roles = [json.loads(row[5]), json.loads(row[6])]
    if not all(isinstance(r, list) and all(isinstance(c, str) for c in r) for r in roles):
        raise ValueError("its quasi_identifiers or sensitive is not a list of column names")
    transformation = None if row[7] is None else json.loads(row[7])
    if transformation is not None and not isinstance(transformation, dict):
        raise ValueError("its transformation is not a JSON object")
    parameters = None if row[15] is None else json.loads(row[15])
    if parameters is not None and not isinstance(parameters, dict):
        raise ValueError("its parameters are not a JSON object")
    return LedgerEntry(
        id=int(row[0]),
        time=row[1],
        dataset=row[2],
        fingerprint=row[3],
        source=row[4],
        quasi_identifiers=tuple(roles[0]),
        sensitive=tuple(roles[1]),
        transformation=transformation,
        mechanism=row[8],
        epsilon=float(row[9] or 0.0),
        delta=float(row[10] or 0.0),
        rho=float(row[11] or 0.0),
        recipient=row[12],
        retired=row[13],
        retired_reason=row[14],
        parameters=parameters,
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


def _fill_meta(cursor: sqlite3.Cursor) -> None:
    """The ``meta`` rows a ledger lacks: its note, schema version and creation time."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    rows = (("note", LEDGER_NOTE), ("schema_version", _SCHEMA_VERSION), ("created", now))
    for key, value in rows:
        cursor.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _create(name: str) -> None:
    """Make a new, empty ledger at ``name``, where no file is.

    It is built in a temporary file beside ``name`` and hard-linked into place, which
    fails if a file appeared there meanwhile (another run created the ledger: that one
    is used). A run never sees a ledger half made, nor an empty file it would refuse.
    """
    folder = os.path.dirname(os.path.abspath(name))
    try:
        handle, temporary = tempfile.mkstemp(prefix=".anonaudit-tmp-ledger-", dir=folder)
    except FileNotFoundError:
        raise InputError(
            f"{printable(name)}: the folder {printable(folder)} does not exist; create it first "
            "or give another path for the ledger"
        ) from None
    except OSError as exc:
        raise InputError(
            f"{printable(name)}: cannot create the ledger ({exc.strerror}): the folder "
            f"{printable(folder)} is read-only or cannot be written; nothing was recorded"
        ) from None
    os.close(handle)
    try:
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute("PRAGMA journal_mode = WAL")
            cursor = connection.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    cursor.execute(statement)
            _fill_meta(cursor)
            cursor.execute("COMMIT")
        finally:
            connection.close()
        with suppress(FileExistsError):  # created meanwhile by another run: that one is used
            os.link(temporary, name)
    except sqlite3.Error as exc:
        raise _failure(name, exc, 0.0) from None
    except OSError as exc:
        raise InputError(
            f"{printable(name)}: cannot create the ledger ({exc.strerror}): the folder "
            f"{printable(folder)} is read-only or cannot be written; nothing was recorded"
        ) from None
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with suppress(FileNotFoundError):
                os.unlink(temporary + suffix)


def _recognise(name: str) -> None:
    """Refuse, without writing to it, a file at ``name`` that is not an anonaudit ledger
    of this version or an older one.

    Read through a read-only connection: the file's bytes and time stay as they were.
    """
    shown = printable(name)
    not_ledger = f"{shown}: not a release ledger"
    advice = "give the path of an anonaudit ledger, or a new path to create one"
    if os.path.isdir(name):
        raise InputError(f"{shown}: this is a folder; give the path of a ledger file")
    try:
        size = os.path.getsize(name)
    except OSError as exc:
        raise InputError(f"{shown}: cannot read the ledger ({exc.strerror})") from None
    if size == 0:
        raise InputError(f"{not_ledger} (an empty file); it was left as it was: {advice}")
    uri = "file:" + urllib.parse.quote(os.path.abspath(name)) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise _failure(name, exc, 0.0) from None
    try:
        marked = connection.execute("PRAGMA application_id").fetchone()[0]
        tables = {
            row[0]: row[1] for row in connection.execute("SELECT name, type FROM sqlite_master")
        }
        if marked not in (0, APPLICATION_ID):
            raise InputError(
                f"{not_ledger} (an SQLite database of another application, id {marked}); "
                f"it was left as it was: {advice}"
            )
        releases = (
            {row[1] for row in connection.execute("PRAGMA table_info(releases)")}
            if tables.get("releases") == "table"
            else set()
        )
        meta: dict[Any, Any] = {}
        if tables.get("meta") == "table":
            columns = {row[1] for row in connection.execute("PRAGMA table_info(meta)")}
            if {"key", "value"} <= columns:
                meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        version = meta.get("schema_version")
        # A ledger of an older anonaudit has no application id: its tables tell.
        if marked == 0 and (version is None or not releases.issuperset(_RELEASE_COLUMNS)):
            raise InputError(
                f"{not_ledger} (an SQLite database of another application: no anonaudit "
                f"ledger tables); it was left as it was: {advice}"
            )
        try:
            number = int(str(version))
        except ValueError:
            number = 0
        if number < 1:
            raise InputError(
                f"{shown}: the ledger's schema version is {printable(repr(version))}, not a "
                "version anonaudit wrote; the ledger is damaged: restore it from a backup"
            )
        if number > int(_SCHEMA_VERSION):
            raise InputError(
                f"{shown}: a ledger of schema version {number}, written by a newer anonaudit; "
                f"this one reads versions up to {_SCHEMA_VERSION}: upgrade anonaudit"
            )
        lacking = sorted(_RELEASE_COLUMNS - releases)
        if lacking:
            raise InputError(
                f"{shown}: the ledger's releases table lacks the columns "
                f"{printable(', '.join(lacking))}; it was changed outside anonaudit or is "
                "damaged: restore it from a backup"
            )
        if tables.get("retirements") == "table":
            kept = {row[1] for row in connection.execute("PRAGMA table_info(retirements)")}
            if not kept.issuperset(_RETIREMENT_COLUMNS):
                raise InputError(
                    f"{shown}: the ledger's retirements table lacks the columns "
                    f"{', '.join(sorted(_RETIREMENT_COLUMNS - kept))}; it was changed outside "
                    "anonaudit or is damaged: restore it from a backup"
                )
    except sqlite3.Error as exc:
        raise _failure(name, exc, 0.0) from None
    finally:
        connection.close()


def _failure(name: str, exc: sqlite3.Error, wait: float) -> InputError:
    """One line naming the ledger and what is wrong with it, for an error of SQLite."""
    shown, text = printable(name), str(exc).lower()
    reason = printable(str(exc))
    if "not a database" in text:
        return InputError(
            f"{shown}: not a release ledger (not an SQLite database); it was left as it was: "
            "give the path of an anonaudit ledger, or a new path to create one"
        )
    if "readonly" in text or "read-only" in text:
        return InputError(
            f"{shown}: the ledger is read-only ({reason}); nothing was recorded: make the "
            "file and its folder writable, or record in another ledger"
        )
    if "locked" in text or "busy" in text:
        return InputError(
            f"{shown}: the ledger is locked by another process (waited {wait:g} s); nothing "
            "was recorded: run again when the other run has finished"
        )
    if "full" in text or "i/o error" in text:
        return InputError(
            f"{shown}: cannot write the ledger ({reason}: no space left, or a file size "
            "limit); nothing was recorded: free some space and run again"
        )
    if "unable to open" in text or "cannot open" in text:
        folder = printable(os.path.dirname(os.path.abspath(name)))
        return InputError(
            f"{shown}: cannot open the ledger ({reason}): SQLite writes its -wal and -shm "
            f"files beside it, and the folder {folder} is read-only or cannot be written: "
            "make it writable, or record in a ledger elsewhere"
        )
    if "malformed" in text or "corrupt" in text:
        return InputError(f"{shown}: the ledger is damaged ({reason}); restore it from a backup")
    return InputError(f"{shown}: cannot use the ledger ({reason})")
