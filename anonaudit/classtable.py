"""The class table: the one aggregate every syntactic measure is computed from.

For quasi-identifiers ``Q1..Qa`` and sensitive attributes ``S1..Sb`` the class table
holds, for every combination ``(q1..qa, s1..sb)`` present in the data, the number of
records with it. An *equivalence class* (Samarati & Sweeney 1998) is the set of records
sharing one QI tuple; its size and its distribution of each SA are marginals of this
table, so k-anonymity, l-diversity, t-closeness and the disclosure and risk measures
never need the raw rows again.

Class tables are mergeable: the table of a union of record sets is the sum of their
tables (:meth:`ClassTable.merge`), which is what lets engines aggregate per file,
batch or partition and combine the partials. Memory grows with the number of distinct
combinations, not with the number of records.

Values are strings (or null); a null QI value forms its own class value unless the
audit drops such records (or counts it as a wildcard: :mod:`anonaudit.measures.wildcard`).

A table built with a weight column (survey weights, ``--weights``) also holds, per
combination, the sum of its records' weights; summed per class that is ``F_k``, the
estimated number of people in the population sharing the class's QI values (Benedetti
& Franconi 1998; sdcMicro's ``freqCalc``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.errors import ColumnError, InputError

__all__ = [
    "ClassTable",
    "Classes",
    "SensitiveCounts",
    "SourceStats",
    "sum_within_classes",
    "to_string_batch",
    "to_text_batch",
    "whole_numbers",
]

_COUNT = "__anonaudit_count__"
_WEIGHT = "__anonaudit_weight__"
#: Tables of at least this many rows encode their columns in parallel, one per core.
_PARALLEL_ROWS = 100_000
# _distinct_values: each prefix of codes searched is this many times the last.
_PREFIX_GROWTH = 16
#: Where :meth:`SensitiveCounts.class_local` keeps its arrays (in the instance's dict).
_CLASS_LOCAL = "_class_local_arrays"


@dataclass(frozen=True)
class SourceStats:
    """How many records one input contributed to a class table.

    Attributes
    ----------
    name : str
        Path, URL or frame description.
    format : str
        ``"csv"``, ``"parquet"``, ``"delta"``, ``"pandas"``, ``"arrow"``, ``"spark"`` or
        ``"counts"``.
    rows : int
        Records read from it (after any filter).
    size_bytes : int or None
        Size in storage, where it is a file or a dataset of files.
    files : tuple of SourceStats
        For a dataset (directory, glob, URL prefix, Delta table): every file read and the
        records it gave, so a report states what it covered. Empty for a single file.
    filter : str or None
        The row or partition selection applied to a dataset.
    version : int or None
        The table version read (Delta).
    sha256 : str or None
        The SHA-256 of the file's bytes as stored (compressed, for a compressed file),
        lowercase hex, taken while the audit read them: a report states it and never
        reads the file itself. ``None`` means not hashed: an in-memory frame, a file in
        object storage (a URL), a dataset (each of its ``files`` carries its own), or an
        input no engine hashed.
    """

    name: str
    format: str
    rows: int
    size_bytes: int | None = None
    files: tuple[SourceStats, ...] = ()
    filter: str | None = None
    version: int | None = None
    sha256: str | None = None


@dataclass(frozen=True, eq=False)
class _CodedKeys:
    """Text key columns held as codes: each column's values and each row's code into them.

    What :meth:`ClassTable.from_coded` counts: the keys as text are taken from the
    values only when read (a listing, a generalization, a report), and only for the
    rows then kept, never for the rows a subset has dropped by then.
    """

    names: tuple[str, ...]
    values: tuple[pa.Array, ...]
    codes: tuple[NDArray[Any], ...]

    def select(self, names: Sequence[str]) -> _CodedKeys:
        """These keys restricted to the columns ``names``, in that order."""
        at = [self.names.index(name) for name in names]
        return _CodedKeys(
            tuple(names), tuple(self.values[i] for i in at), tuple(self.codes[i] for i in at)
        )

    def equal(self, name: str, value: str | None) -> NDArray[Any] | None:
        """Which rows hold ``value`` (``None``: null) in column ``name``, a boolean mask;
        ``None`` when no row does."""
        at = self.names.index(name)
        values = self.values[at]
        if value is None:
            found = len(values) - 1 if values.null_count else -1  # null comes last
        else:
            found = pc.index(values, value).as_py()
        return None if found < 0 else np.asarray(self.codes[at] == found)

    def codes_of(self, name: str, rows: NDArray[Any] | None) -> tuple[pa.Array, NDArray[Any]]:
        """Column ``name``'s values and the codes of the rows marked in ``rows`` (a
        boolean mask; ``None``: every row)."""
        at = self.names.index(name)
        codes = self.codes[at]
        return self.values[at], codes if rows is None else codes[rows]

    def at(self, name: str, rows: NDArray[Any]) -> pa.Array:
        """Column ``name``'s values at the rows numbered ``rows``."""
        at = self.names.index(name)
        return self.values[at].take(pa.array(self.codes[at][rows]))

    def table(self, rows: NDArray[Any]) -> pa.Table:
        """The rows marked in ``rows`` (a boolean mask), as a table of text columns."""
        every = bool(rows.all())
        return pa.table(
            [
                values.take(pa.array(codes if every else codes[rows]))
                for values, codes in zip(self.values, self.codes, strict=True)
            ],
            names=list(self.names),
        )


def _filtered(source: pa.Table | _CodedKeys, rows: NDArray[Any]) -> pa.Table:
    """The rows of ``source`` marked in the boolean mask ``rows``, as a table."""
    if isinstance(source, _CodedKeys):
        return source.table(rows)
    return source if rows.all() else source.filter(pa.array(rows))


class _LazyKeys:
    """Keys filtered from a larger table's the first time they are read.

    An instance made without ``keys`` holds ``_pending_keys``: the first table's keys
    (a table, or :class:`_CodedKeys` not yet taken as text) and a mask of the rows it
    keeps. Audits of a subset read its codes, not its keys; a listing, a generalization
    or a report reads the keys, filtered once then.
    """

    if not TYPE_CHECKING:  # mypy would take it as a licence for any attribute name

        def __getattr__(self, name: str) -> Any:
            """The pending :attr:`keys`, filtered (called only when no attribute is set)."""
            if name == "keys" and "_pending_keys" in self.__dict__:
                return self._materialize_keys()
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def _pending(cls, keys: tuple[pa.Table | _CodedKeys, NDArray[Any]], **fields: Any) -> Self:
        """An instance of ``fields`` without keys: they are ``keys`` (a table, or keys
        held as codes, and a mask of its rows), taken the first time they are read."""
        instance = object.__new__(cls)
        instance.__dict__.update(fields, _pending_keys=keys)
        return instance

    def _materialize_keys(self) -> pa.Table:
        """Filter the pending keys from the first table's, once, and keep them."""
        pending = self.__dict__.get("_pending_keys")
        if pending is not None:  # set before the pending filter goes: a reader sees either
            source, rows = pending
            self.__dict__["keys"] = _filtered(source, rows)
            self.__dict__.pop("_pending_keys", None)
        keys: pa.Table = self.__dict__["keys"]
        return keys

    def _pending_rows(
        self, keep: NDArray[Any], rows: NDArray[Any]
    ) -> tuple[pa.Table | _CodedKeys, NDArray[Any]]:
        """What a part of these keys (the rows ``rows``, marked in ``keep``) is pending on:
        the first table's keys, never filtered yet, and a mask of their rows."""
        pending = self.__dict__.get("_pending_keys")
        if pending is None:
            return self.__dict__["keys"], keep
        source, parent_rows = pending  # a part of a part: one filter of the first keys
        if len(rows) == len(keep):  # all of its rows
            return source, parent_rows
        if len(parent_rows) == len(keep):  # pending on all of the first keys' rows
            return source, keep
        source_rows = np.zeros(len(parent_rows), dtype=bool)
        source_rows[np.flatnonzero(parent_rows)[rows]] = True
        return source, source_rows

    def __getstate__(self) -> dict[str, Any]:
        """What pickling or copying keeps: the keys filtered, never the first table's."""
        self._materialize_keys()
        return dict(self.__dict__)


@dataclass(frozen=True)
class Classes(_LazyKeys):
    """The equivalence classes of a class table.

    Attributes
    ----------
    index : numpy.ndarray
        For each row of the class table, the id (0..C-1) of its class.
    sizes : numpy.ndarray
        Records per class, ``int64``, length C.
    keys : pyarrow.Table
        The QI values of each class (C rows, string columns). Kept in Arrow: turning
        millions of keys into Python strings would cost more than the audit; checks
        convert only the classes they list.
    weights : numpy.ndarray or None
        ``F_k``: the sum of the survey weights of each class's records (``float64``,
        length C); ``None`` when the table has no weight column.
    """

    index: NDArray[Any]
    sizes: NDArray[Any]
    keys: pa.Table
    weights: NDArray[Any] | None = None

    def __len__(self) -> int:
        return len(self.sizes)

    @cached_property
    def rank(self) -> NDArray[Any]:
        """Each class's position when classes are sorted by QI values (nulls last).

        A canonical tie-breaker for listings, independent of the engine's output order.
        """
        order = pc.sort_indices(
            self.keys, sort_keys=[(name, "ascending") for name in self.keys.column_names]
        ).to_numpy()
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank


@dataclass(frozen=True)
class SensitiveCounts:
    """One SA's distribution per class, as a sparse class-by-value matrix.

    Entries are sorted by class id, then by value, so that per-class float sums
    (:meth:`per_class_sum`) do not depend on the order the engine returned rows in;
    values are sorted too (null last). Every class has at least one entry.

    Attributes
    ----------
    name : str
        The sensitive column.
    values : tuple of (str or None)
        The distinct values; a value's code is its position. ``None`` is the null value.
    class_ids, codes, counts : numpy.ndarray
        One entry per (class, value) present: class id, value code, number of records.
    class_sizes : numpy.ndarray
        Records per class (length C).
    totals : numpy.ndarray
        Records per value over the whole table (length m).
    """

    name: str
    values: tuple[str | None, ...]
    class_ids: NDArray[Any]
    codes: NDArray[Any]
    counts: NDArray[Any]
    class_sizes: NDArray[Any]
    totals: NDArray[Any]

    @property
    def rows(self) -> int:
        """Total number of records."""
        return int(self.totals.sum())

    @property
    def nulls(self) -> int:
        """Records whose value is null."""
        return int(self.totals[self.values.index(None)]) if None in self.values else 0

    @property
    def n_classes(self) -> int:
        """Number of equivalence classes."""
        return len(self.class_sizes)

    def prior(self) -> NDArray[Any]:
        """``p(s)``: each value's share of the whole table (length m)."""
        return np.asarray(self.totals / self.totals.sum())

    def posterior(self) -> NDArray[Any]:
        """``p(s | E)``: each entry's share of its class, what the class reveals."""
        return np.asarray(self.counts / self.class_sizes[self.class_ids])

    def distinct_per_class(self) -> NDArray[Any]:
        """Number of distinct values in each class."""
        if self.one_each:
            return np.ones(self.n_classes, dtype=np.intp)
        return np.bincount(self.class_ids, minlength=self.n_classes)

    def per_class_sum(self, weights: NDArray[Any]) -> NDArray[Any]:
        """Sum ``weights`` (one per entry) within each class (:func:`sum_within_classes`)."""
        return sum_within_classes(self.class_ids, weights, self.n_classes, self.one_each)

    def per_class_max(self, values: NDArray[Any], *, consume: bool = False) -> NDArray[Any]:
        """Largest of ``values`` (one per entry) within each class, as ``float64``.

        Each class's entries are consecutive and it has at least one: a reduction
        between the classes' first entries, in entry order. With ``consume`` the caller
        no longer needs ``values``: where every class has one entry they are the result
        itself (``float64`` values are not copied).
        """
        if not self.n_classes:
            return np.full(0, -np.inf)
        if self.one_each:
            return np.asarray(values).astype(np.float64, copy=not consume)
        return np.maximum.reduceat(np.asarray(values, dtype=np.float64), self._starts)

    @cached_property
    def one_each(self) -> bool:
        """Whether every class has one entry (as where a QI is unique per record): the
        per-class reductions are then the entries themselves, in order (each class has
        at least one entry, and they are sorted by class)."""
        return len(self.counts) == self.n_classes

    @cached_property
    def _starts(self) -> NDArray[Any]:
        """Each class's first entry (the entries are sorted by class)."""
        distinct = self.class_local("distinct", self.distinct_per_class)
        starts = np.zeros(self.n_classes, dtype=np.int64)
        np.cumsum(distinct[:-1], out=starts[1:])
        return starts

    def class_local(self, key: Hashable, compute: Callable[[], NDArray[Any]]) -> NDArray[Any]:
        """A per-class array that depends on each class's own entries alone, computed once.

        The checks keep here what they compute class by class (distinct values, entropy,
        recursive c, the largest share): the suppression advice re-audits subsets of the
        table round after round, and a subset that keeps whole classes
        (:meth:`ClassTable.without_classes`) takes these arrays at its classes instead of
        computing them again (the same entries in the same order give the same floats).

        Parameters
        ----------
        key : hashable
            What the array is, such as ``"entropy"`` or ``("recursive_c", 2)``.
        compute : callable
            Computes it from this distribution, when it is not known yet.

        Returns
        -------
        numpy.ndarray
            Length :attr:`n_classes`, read-only: every later caller shares it.
        """
        cache: dict[Hashable, NDArray[Any]] = self.__dict__.setdefault(_CLASS_LOCAL, {})
        found = cache.get(key)
        if found is None:
            found = cache[key] = _held(compute())
        return found


@dataclass(frozen=True)
class ClassTable(_LazyKeys):
    """Record counts per (QI tuple, SA values) combination.

    Build one with :func:`anonaudit.engines.build_class_table` (from files or frames) or
    :meth:`from_frame` (from a frame of counts); combine partial tables with
    :meth:`merge`.

    Attributes
    ----------
    quasi_identifiers : tuple of str
        QI column names.
    sensitive : tuple of str
        SA column names (may be empty).
    keys : pyarrow.Table
        One row per distinct combination; string columns ``quasi_identifiers + sensitive``.
    counts : numpy.ndarray
        Records per row of ``keys`` (``int64``, all positive).
    sources : tuple of SourceStats
        Where the records came from.
    weights : numpy.ndarray or None
        The sum of the survey weights of the records of each row of ``keys``
        (``float64``, non-negative); ``None`` when no weight column was read.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    keys: pa.Table
    counts: NDArray[Any]
    sources: tuple[SourceStats, ...] = field(default=())
    weights: NDArray[Any] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        expected = list(self.quasi_identifiers) + list(self.sensitive)
        if self.keys.column_names != expected:
            raise ValueError(f"class table columns {self.keys.column_names} != {expected}")
        if len(self.counts) != self.keys.num_rows:
            raise ValueError("class table keys and counts differ in length")
        if self.weights is not None and len(self.weights) != self.keys.num_rows:
            raise ValueError("class table keys and weights differ in length")

    # -- construction ---------------------------------------------------------------

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame | pa.Table,
        *,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        count: str = "count",
        weight: str | None = None,
        source: SourceStats | None = None,
    ) -> ClassTable:
        """Make a class table from a frame of counts, summing repeated combinations.

        Parameters
        ----------
        frame : pandas.DataFrame or pyarrow.Table
            Columns ``quasi_identifiers``, ``sensitive`` and ``count``. Values are turned
            into strings; a Spark ``groupBy(...).count()`` collected to pandas fits.
        quasi_identifiers, sensitive : sequence of str
            Column roles.
        count : str
            Name of the count column.
        weight : str, optional
            Name of a column holding each row's sum of survey weights (non-negative
            numbers); the table then carries :attr:`weights`.
        source : SourceStats, optional
            Provenance; by default one source named ``"<counts>"``.

        Examples
        --------
        >>> import pandas as pd
        >>> t = ClassTable.from_frame(
        ...     pd.DataFrame({"zip": ["1", "1", "2"], "count": [2, 3, 4]}),
        ...     quasi_identifiers=["zip"])
        >>> t.rows, t.classes.sizes.tolist()
        (9, [5, 4])
        """
        table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame)
        columns = list(quasi_identifiers) + list(sensitive)
        for name in [*columns, count, *([weight] if weight is not None else [])]:
            if name not in table.column_names:
                raise ColumnError(f"counts frame: no column named {name!r}")
        keys = pa.Table.from_batches([to_string_batch(table, columns)])
        counts = np.asarray(table.column(count).to_numpy(zero_copy_only=False), dtype=np.int64)
        if len(counts) and counts.min() < 0:
            raise InputError("counts frame: counts must not be negative")
        weights = None
        if weight is not None:
            weights = np.asarray(
                table.column(weight).to_numpy(zero_copy_only=False), dtype=np.float64
            )
            bad = ~np.isfinite(weights) | (weights < 0)
            if bad.any():
                raise InputError(
                    f"counts frame: weight column {weight!r} holds {weights[bad][0]!r}; "
                    "weights must be non-negative numbers"
                )
        summed: list[tuple[str | None, NDArray[Any]]] = [(count, counts)]
        if weights is not None:
            summed.append((weight, weights))
        for column, values in summed:
            with np.errstate(over="ignore"):  # a sum of inf is refused below
                total = float(np.sum(values, dtype=np.float64))
            if not total <= 2**53:
                raise InputError(  # int64 would wrap (three counts of 2^62), floats go inf
                    f"counts frame: column {column!r} adds up to more than 2^53, more than can "
                    "be summed exactly; check the column, or scale its values down"
                )
        stats = source or SourceStats(name="<counts>", format="counts", rows=int(counts.sum()))
        raw = cls(tuple(quasi_identifiers), tuple(sensitive), keys, counts, (stats,), weights)
        return raw.merge()

    @classmethod
    def from_coded(
        cls,
        records: pa.Table | Mapping[str, Sequence[pa.DictionaryArray]],
        *,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        sources: tuple[SourceStats, ...] = (),
    ) -> ClassTable:
        """Count the records of a table whose columns are dictionary-coded strings.

        The records are grouped by their codes, never by their strings: each chunk's
        dictionary is placed among the column's values (each distinct value hashed once
        per chunk it occurs in), each record's codes, so translated, are packed into one
        integer, and equal integers are counted (by direct addressing when the packed
        range is small). The codes found are kept, so that finding the classes and the
        SA distributions later hashes no value again.

        Parameters
        ----------
        records : pyarrow.Table or mapping
            One row per record; columns ``quasi_identifiers + sensitive``, typed
            ``dictionary<int32, string>`` (as :meth:`CsvSource.read_coded
            <anonaudit.sources.csv.CsvSource.read_coded>` reads them), or, by column
            name, the column's chunks: dictionary arrays of text, whose codes may be of
            any integer type (each chunk's own).
        quasi_identifiers, sensitive : sequence of str
            Column roles.
        sources : tuple of SourceStats
            Where the records came from.

        Returns
        -------
        ClassTable
            Its rows in the order of their packed codes.

        Examples
        --------
        >>> coded = pa.table({"q": pa.array(["a", "b", "a", None]).dictionary_encode()})
        >>> t = ClassTable.from_coded(coded, quasi_identifiers=["q"])
        >>> t.keys.column("q").to_pylist(), t.counts.tolist()
        (['a', 'b', None], [2, 1, 1])
        """
        columns = [*quasi_identifiers, *sensitive]
        dictionaries, codes = [], []
        for name in columns:
            chunks = records.column(name).chunks if isinstance(records, pa.Table) else records[name]
            values, placed = _translated(chunks)
            dictionaries.append(values)
            codes.append(placed)
        lengths = {sum(len(chunk) for chunk in column) for column in codes}
        if len(lengths) > 1:
            raise ValueError(f"coded columns differ in length: {sorted(lengths)}")
        rows = lengths.pop() if lengths else 0
        widths = [max(len(dictionary), 1) for dictionary in dictionaries]
        strides = [int(np.prod(widths[i + 1 :], dtype=object)) for i in range(len(widths))]
        if strides and strides[0] * widths[0] < 2**62:  # each record's codes, packed
            narrow = strides[0] * widths[0] < 2**31  # then 4 bytes a record, not 8
            key: NDArray[Any] = np.zeros(rows, dtype=np.int32 if narrow else np.int64)
            for i, column_codes in enumerate(codes):
                if i:
                    key *= widths[i]  # in place: the key's type holds the packed range
                start = 0
                for chunk in column_codes:
                    key[start : start + len(chunk)] += chunk()
                    start += len(chunk)
            del codes
            groups, counts = _sum_sorted(key, None, bound=strides[0] * widths[0], distinct=False)
            per_group: list[NDArray[Any]] = []
            for width in widths[:0:-1]:  # unpacked from the last column back
                groups, code = np.divmod(groups, width)
                per_group.insert(0, code)
            per_group.insert(0, groups)
        else:  # too many codes to pack (or no column): grouped column by column
            flat = [
                np.concatenate([chunk() for chunk in c]) if c else np.zeros(0, np.int64)
                for c in codes
            ]
            del codes
            first, index = _combine(flat, widths, ordered=False)
            counts = np.bincount(index, minlength=len(first)).astype(np.int64)
            per_group = [column[first].astype(np.int64) for column in flat]
        for i, group in enumerate(per_group):  # a dictionary may hold values no record has
            present = np.bincount(group, minlength=len(dictionaries[i])) > 0
            if not present.all():
                dictionaries[i] = dictionaries[i].filter(pa.array(present))
                per_group[i] = (np.cumsum(present) - 1)[group]
        table = cls._pending(
            (
                _CodedKeys(tuple(columns), tuple(dictionaries), tuple(per_group)),
                np.ones(len(counts), dtype=bool),
            ),
            quasi_identifiers=tuple(quasi_identifiers),
            sensitive=tuple(sensitive),
            counts=counts,
            sources=sources,
            weights=None,
        )
        known = table._encodings
        for name, dictionary, group in zip(columns, dictionaries, per_group, strict=True):
            if name in table.sensitive:  # the values are sorted already (_translated)
                known["sorted", name] = (tuple(dictionary.to_pylist()), group)
            else:
                known["group", name] = (max(len(dictionary), 1), group)
        return table

    def merge(self, *others: ClassTable) -> ClassTable:
        """Sum this table and ``others`` into one table with unique combinations.

        The result is the class table of the union of the underlying records, whatever
        the order of the parts (a property the tests check). Weights are summed too;
        weighted and unweighted tables do not merge.
        """
        for other in others:
            if (other.quasi_identifiers, other.sensitive) != (
                self.quasi_identifiers,
                self.sensitive,
            ):
                raise ValueError("cannot merge class tables over different columns")
        parts = [self, *others]
        weighted = self.weights is not None
        if any((part.weights is not None) != weighted for part in parts):
            raise ValueError("cannot merge a weighted class table with an unweighted one")
        columns = list(self.quasi_identifiers) + list(self.sensitive)
        stacked = pa.concat_tables(
            [
                part.keys.append_column(_COUNT, pa.array(part.counts, pa.int64()))
                if part.weights is None
                else part.keys.append_column(
                    _COUNT, pa.array(part.counts, pa.int64())
                ).append_column(_WEIGHT, pa.array(part.weights, pa.float64()))
                for part in parts
            ]
        )
        sums = [(_COUNT, "sum"), (_WEIGHT, "sum")] if weighted else [(_COUNT, "sum")]
        summed = stacked.group_by(columns, use_threads=False).aggregate(sums)
        positive = pc.greater(summed.column(f"{_COUNT}_sum"), 0)
        summed = summed.filter(positive)
        return ClassTable(
            self.quasi_identifiers,
            self.sensitive,
            summed.select(columns),
            summed.column(f"{_COUNT}_sum").to_numpy().astype(np.int64, copy=False),
            tuple(stats for part in parts for stats in part.sources),
            summed.column(f"{_WEIGHT}_sum").to_numpy().astype(np.float64) if weighted else None,
        )

    # -- views ----------------------------------------------------------------------

    @property
    def rows(self) -> int:
        """Number of records aggregated."""
        return int(self.counts.sum())

    def __len__(self) -> int:
        """Number of distinct (QI, SA) combinations."""
        return len(self.counts)

    def recode(
        self, recoders: Mapping[str, Callable[[list[str | None]], list[str | None]]]
    ) -> ClassTable:
        """This table with the values of some columns replaced, equal rows summed.

        Each of ``recoders`` maps its column's distinct values (a list) to their new
        values, in order; it sees each value once, however many rows hold it. Rows that
        become equal are summed by :meth:`merge`, so the result is the class table of
        the recoded records. No recoder: this table.

        >>> t = ClassTable.from_frame(
        ...     pd.DataFrame({"q": ["1,5", "1.5", "2"], "count": [1, 2, 3]}),
        ...     quasi_identifiers=["q"])
        >>> comma = {"q": lambda values: [v.replace(",", ".") for v in values]}
        >>> sorted(t.recode(comma).classes.sizes.tolist())
        [3, 3]
        """
        if not recoders:
            return self
        keys = self.keys
        for column, recode in recoders.items():
            encoded = pc.dictionary_encode(keys.column(column).combine_chunks())
            dictionary = encoded.dictionary
            recoded = pa.array(recode(dictionary.to_pylist()), type=dictionary.type)
            position = keys.column_names.index(column)
            keys = keys.set_column(position, column, recoded.take(encoded.indices))
        return ClassTable(
            self.quasi_identifiers, self.sensitive, keys, self.counts, self.sources, self.weights
        ).merge()

    def subset(self, keep: NDArray[Any]) -> ClassTable:
        """This table with only the rows (combinations) marked in ``keep``, a boolean mask.

        Equal to building the table from the kept rows, but cheaper when this table's
        classes and value codes are known already: the subset's classes are some of
        this table's, in the same order, and its codes are this table's, renumbered.
        When ``keep`` takes or leaves whole classes (as dropping null QIs does), the
        classes' sizes, weights and SA distributions are this table's too. Its
        :attr:`keys` are filtered the first time they are read (a listing, a
        generalization, a report): an audit needs only the codes.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self),):
            raise ValueError(f"a subset mask needs {len(self)} entries (got {keep.shape})")
        rows = np.flatnonzero(keep)
        parent: Classes | None = self.__dict__.get("classes")
        if parent is None:
            return self._rows(keep, rows)
        kept = parent.index[rows]
        per_class = np.bincount(kept, minlength=len(parent))
        total = np.bincount(parent.index, minlength=len(parent))
        whole = bool(np.all((per_class == 0) | (per_class == total)))
        return self._rows(keep, rows, (parent, per_class > 0, kept, whole))

    def without_suppressed(self, marker: str) -> tuple[ClassTable, int]:
        """This table without its suppressed records, and how many they were.

        A record is suppressed when its every QI is ``marker``
        (:data:`~anonaudit.settings.names.SUPPRESSED`, ``*``: ARX's convention for a
        suppressed record kept in place, and what ``anonaudit advise --out`` writes).
        Such records are not an equivalence class.

        >>> t = ClassTable.from_frame(
        ...     pd.DataFrame({"a": ["*", "x", "*"], "b": ["*", "*", "y"], "n": [4, 2, 3]}),
        ...     quasi_identifiers=["a", "b"], count="n")
        >>> kept, suppressed = t.without_suppressed("*")
        >>> kept.rows, suppressed
        (5, 4)
        """
        starred = np.ones(len(self), dtype=bool)
        for name in self.quasi_identifiers:
            equal = self._equal(name, marker)
            if equal is None:
                return self, 0
            starred &= equal
        if not starred.any():
            return self, 0
        return self.subset(~starred), int(self.counts[starred].sum())

    def _coded(self) -> tuple[_CodedKeys, NDArray[Any] | None] | None:
        """The keys this table's are pending on, while they are codes (:class:`_CodedKeys`),
        and the mask of its rows among theirs (``None``: all of them); else ``None``."""
        pending = self.__dict__.get("_pending_keys")
        if pending is None or not isinstance(pending[0], _CodedKeys):
            return None
        source, rows = pending
        return source, None if len(rows) == len(self) else rows

    def _values_at(self, name: str, rows: NDArray[Any]) -> pa.Array:
        """Column ``name``'s values at the rows numbered ``rows``, read from the codes
        while the keys are not taken as text (:class:`_CodedKeys`)."""
        coded = self._coded()
        if coded is not None:
            source, kept = coded
            return source.at(name, rows if kept is None else np.flatnonzero(kept)[rows])
        return self.keys.column(name).take(pa.array(rows)).combine_chunks()

    def _equal(self, name: str, value: str | None) -> NDArray[Any] | None:
        """Which rows hold ``value`` (``None``: null) in column ``name``, a boolean mask;
        ``None`` when no row does. Read from the codes while the keys are not taken as
        text (:class:`_CodedKeys`)."""
        coded = self._coded()
        if coded is not None:
            source, rows = coded
            equal = source.equal(name, value)
            if equal is not None and rows is not None:
                equal = equal[rows]
        else:
            column = self.keys.column(name)
            if value is None:
                nulls = column.is_null() if column.null_count else None
                equal = None if nulls is None else nulls.to_numpy(zero_copy_only=False)
            else:
                found = pc.fill_null(pc.equal(column, value), False)
                equal = found.to_numpy(zero_copy_only=False) if pc.any(found).as_py() else None
        return None if equal is None or not equal.any() else np.asarray(equal)

    def without_classes(self, drop: NDArray[Any]) -> ClassTable:
        """This table without the equivalence classes marked in ``drop`` (all their rows).

        The :meth:`subset` of the other classes' rows, at the cost of the classes kept:
        their sizes, weights and SA distributions are this table's, and class ``i`` of
        the result is the ``i``-th class not dropped. Suppression advice re-audits such
        tables round after round.

        Parameters
        ----------
        drop : numpy.ndarray of bool
            One entry per class of :attr:`classes`.

        Returns
        -------
        ClassTable

        Examples
        --------
        >>> t = ClassTable.from_frame(
        ...     pd.DataFrame({"q": ["a", "b", "c"], "count": [5, 1, 2]}), quasi_identifiers=["q"])
        >>> rest = t.without_classes(t.classes.sizes < 2)
        >>> rest.rows, rest.classes.sizes.tolist(), rest.keys.column("q").to_pylist()
        (7, [5, 2], ['a', 'c'])
        """
        classes = self.classes
        present = ~np.asarray(drop, dtype=bool)
        if present.shape != (len(classes),):
            raise ValueError(f"a class mask needs {len(classes)} entries (got {present.shape})")
        keep = present[classes.index]
        rows = np.flatnonzero(keep)
        return self._rows(keep, rows, (classes, present, classes.index[rows], True))

    def _rows(
        self,
        keep: NDArray[Any],
        rows: NDArray[Any],
        known: tuple[Classes, NDArray[Any], NDArray[Any], bool] | None = None,
    ) -> ClassTable:
        """The :meth:`subset` of the rows ``rows`` (marked in ``keep``), keys not filtered.

        ``known``, when this table's classes are: those classes, which of them have a
        row kept, each kept row's class, and whether every class is kept whole.
        """
        table = ClassTable._pending(
            self._pending_rows(keep, rows),
            quasi_identifiers=self.quasi_identifiers,
            sensitive=self.sensitive,
            counts=self.counts[rows],
            sources=self.sources,
            weights=None if self.weights is None else self.weights[rows],
        )
        cached = self.__dict__
        if "_nulls" in cached or "_pending_keys" not in cached:
            table.__dict__["_nulls"] = {
                name: None if mask is None else mask[rows] for name, mask in self._nulls.items()
            }
        carried: Mapping[str, SensitiveCounts] = {}
        if known is not None:
            parent, present, kept, whole = known
            if whole:
                carried = cached.get("_sensitive_counts", {})
            table._take_classes(parent, present, kept, whole, carried)
        encodings = table._encodings
        for key, (values, codes) in cached.get("_encodings", {}).items():
            # Grouping codes are not carried (their width is no bound), nor the sorted
            # codes of an SA whose distributions are.
            if key[0] == "sorted" and key[1] not in carried:
                encodings[key] = _compact(values, codes[rows])
        return table

    def _take_classes(
        self,
        parent: Classes,
        present: NDArray[Any],
        kept: NDArray[Any],
        whole: bool,
        sensitive_counts: Mapping[str, SensitiveCounts],
    ) -> None:
        """Set the classes of this subset of a table with classes ``parent``: those
        marked ``present``, renumbered in order; ``kept`` is each row's class among
        ``parent``. Classes kept ``whole`` keep their sizes, weights (the float sums
        too: the same records added in the same order) and ``sensitive_counts``."""
        ids = np.flatnonzero(present)
        renumber = np.cumsum(present)
        renumber -= 1  # in place: one array of classes, not two
        index = renumber[kept]
        del renumber
        if whole:
            sizes = parent.sizes[ids]
            weights = None if parent.weights is None else parent.weights[ids]
        else:
            sizes = np.bincount(index, weights=self.counts, minlength=len(ids)).astype(np.int64)
            weights = (
                None
                if self.weights is None
                else np.bincount(index, weights=self.weights, minlength=len(ids))
            )
        classes = Classes._pending(
            parent._pending_rows(present, ids), index=index, sizes=sizes, weights=weights
        )
        if "rank" in parent.__dict__:  # the kept classes' order by QI values
            order = np.argsort(parent.rank[ids], kind="stable")
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            classes.__dict__["rank"] = rank
        self.__dict__["classes"] = classes
        if sensitive_counts:
            self.__dict__["_sensitive_counts"] = {
                name: self._kept_entries(counts, present, sizes, ids)
                for name, counts in sensitive_counts.items()
            }

    @staticmethod
    def _kept_entries(
        counts: SensitiveCounts,
        present: NDArray[Any],
        sizes: NDArray[Any],
        ids: NDArray[Any],
    ) -> SensitiveCounts:
        """``counts`` restricted to the classes marked ``present``, whole, renumbered in
        order (sizes ``sizes``): what :meth:`_make_sensitive_counts` finds on their
        rows, entries in the same order (class, then value). ``ids`` are the kept
        classes: the per-class arrays ``counts`` knows (:meth:`SensitiveCounts.class_local`)
        are taken at them."""
        # Each class's entries are consecutive: repeat its verdict (and new id) over them.
        distinct = counts.class_local("distinct", counts.distinct_per_class)
        entries = np.repeat(present, distinct)
        values, codes = _compact(counts.values, counts.codes[entries])
        kept = counts.counts[entries]
        result = SensitiveCounts(
            name=counts.name,
            values=values,
            class_ids=np.repeat(np.arange(len(ids), dtype=np.int64), distinct[ids]),
            codes=codes,
            counts=kept,
            class_sizes=sizes,
            totals=np.bincount(codes, weights=kept, minlength=len(values)).astype(np.int64),
        )
        known: dict[Hashable, NDArray[Any]] = counts.__dict__.get(_CLASS_LOCAL, {})
        if known:  # each class keeps its entries, in order: its values are the same
            result.__dict__[_CLASS_LOCAL] = {
                key: _held(_taken(array, ids)) for key, array in known.items()
            }
        return result

    def _know_unique(self, name: str) -> None:
        """Record that QI ``name`` differs in every row (the engine checked it): every
        row is then a class of its own, found without hashing the column's values."""
        if name not in self.quasi_identifiers:
            raise ValueError(f"{name!r} is not a quasi-identifier of this class table")
        self._encodings["group", name] = (len(self), np.arange(len(self), dtype=np.int64))

    @cached_property
    def _encodings(self) -> dict[tuple[str, str], tuple[Any, NDArray[Any]]]:
        """Per-row codes of columns, computed once: ``("sorted", name)`` holds
        :func:`_encode`'s sorted values and codes, ``("group", name)`` the number of
        distinct values and codes numbering them in any order: of first appearance
        (:func:`_group_codes`, :meth:`_know_unique`) or of sorted values
        (:meth:`from_coded`)."""
        return {}

    def _encode_all(self, keys: Sequence[tuple[str, str]]) -> list[tuple[Any, NDArray[Any]]]:
        """The encodings ``keys`` (see :attr:`_encodings`), computed at most once each.

        Columns of a large table are encoded in parallel, one per core: Arrow hashes a
        column without holding the GIL.
        """
        import os
        from concurrent.futures import ThreadPoolExecutor

        cache = self._encodings
        missing = [key for key in dict.fromkeys(keys) if key not in cache]
        if not missing:
            return [cache[key] for key in keys]
        coded = self._coded()
        if coded is not None:  # a subset of a table counted by codes: its codes, renumbered
            source, rows = coded
            for kind, name in missing:
                values, codes = source.codes_of(name, rows)
                present, codes = _renumbered(codes, len(values))
                if kind == "sorted":  # the values are sorted already (_translated)
                    kept = values if present is None else values.filter(pa.array(present))
                    cache[kind, name] = (tuple(kept.to_pylist()), codes)
                else:
                    width = len(values) if present is None else int(present.sum())
                    cache[kind, name] = (max(width, 1), codes)
            return [cache[key] for key in keys]
        table = self.keys  # read once: a subset's are filtered on first read

        def encode(key: tuple[str, str]) -> tuple[Any, NDArray[Any]]:
            column = table.column(key[1])
            return _encode(column) if key[0] == "sorted" else _group_codes(column)

        workers = min(len(missing), os.cpu_count() or 1) if len(self) >= _PARALLEL_ROWS else 1
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                cache.update(zip(missing, pool.map(encode, missing), strict=True))
        else:
            cache.update((key, encode(key)) for key in missing)
        return [cache[key] for key in keys]

    def distinct(self, name: str) -> int:
        """The number of distinct values of column ``name`` (null counts as one).

        Reuses the codes the equivalence classes were found with, when they were;
        otherwise counts without keeping codes.
        """
        cached = self._encodings.get(("group", name))
        if cached is not None:
            return int(cached[0])
        return int(pc.count_distinct(self.keys.column(name), mode="all").as_py())

    def _distinct_values(self, name: str) -> pa.Array | pa.ChunkedArray:
        """Each distinct value of column ``name`` once (null included), in no set order.

        Read from the codes the table knows (:class:`_CodedKeys`, or the codes the
        classes or the SA distributions were computed with: :attr:`_encodings`), at the
        row where each first appears (found in a prefix of the rows when it holds them
        all), so the column is not hashed again; a column whose values differ in every
        row is returned as it is, not copied.
        """
        coded = self._coded()
        if coded is not None:
            source, rows = coded
            values, codes = source.codes_of(name, rows)
            if rows is None:  # every value of the dictionary is some row's
                return values
            return values.filter(pa.array(np.bincount(codes, minlength=len(values)) > 0))
        known = self.__dict__.get("_encodings", {})
        if ("group", name) in known:
            width, codes = known["group", name]
        elif ("sorted", name) in known:
            values, codes = known["sorted", name]
            width = len(values)
        else:
            return pc.unique(self.keys.column(name))
        if width == len(codes):  # a value of its own in every row
            return self.keys.column(name)
        # A few values are likely all in a short prefix: a prefix that holds them has
        # their first rows. Prefixes grow up to a sixteenth of the rows (what a search
        # that fails costs), then every row is read.
        prefix = 2 * max(int(width), 1)
        while prefix <= len(codes) // _PREFIX_GROWTH:
            where = np.unique(codes[:prefix], return_index=True)[1]
            if len(where) >= width:
                return self._values_at(name, np.sort(where))
            prefix *= _PREFIX_GROWTH
        return self._values_at(name, _first_rows(codes, int(width)))

    def _encoded(self, *names: str) -> list[tuple[tuple[str | None, ...], NDArray[Any]]]:
        """The :func:`_encode` (sorted values, codes) of columns ``names``, once each."""
        return self._encode_all([("sorted", name) for name in names])

    @cached_property
    def classes(self) -> Classes:
        """The equivalence classes (distinct QI tuples), their sizes and QI values."""
        if not self.quasi_identifiers:
            index = np.zeros(len(self), dtype=np.int64)
            first = np.zeros(1 if len(self) else 0, dtype=np.int64)
        else:
            # Grouping needs no sorted values (the numbering follows first appearance
            # whatever the codes). A QI the engine found unique per row comes first:
            # then no other column is hashed.
            known = self._encodings
            names = sorted(
                self.quasi_identifiers,
                key=lambda name: known.get(("group", name), (None,))[0] != len(self),
            )
            if known.get(("group", names[0]), (None,))[0] != len(self):
                # All needed, at once; on a table large enough to encode in parallel, the
                # SAs' codes too (their distributions need them next): one pool of
                # columns, shared out evenly, rather than a second pool for the SAs.
                parallel = len(self) >= _PARALLEL_ROWS
                self._encode_all(
                    [("group", name) for name in names]
                    + [("sorted", name) for name in self.sensitive if parallel]
                )
            qi = []
            for name in names:
                qi.extend(self._encode_all([("group", name)]))
                if qi[-1][0] == len(self):
                    break
            if len(self) and qi[-1][0] == len(self):
                # A QI unique per row (an identifier): every row is a class of its own,
                # and the classes' keys are the table's own (not copied). Its codes, in
                # order of first appearance, are the rows' numbers: they are the index.
                # Codes of its sorted values (a table counted by codes) number the rows
                # in another order: then the rows' numbers are.
                codes = qi[-1][1]
                rows = codes if _ascending(codes) else np.arange(len(self), dtype=np.int64)
                return self._classes(
                    _read_only(rows),
                    self.counts.astype(np.int64, copy=False),
                    self.weights,
                    (np.ones(len(self), dtype=bool), rows),
                )
            # Codes below known widths spare a pass over each column.
            first, index = _combine([codes for _, codes in qi], [width for width, _ in qi])
        sizes = np.bincount(index, weights=self.counts, minlength=len(first)).astype(np.int64)
        weights = (
            None
            if self.weights is None
            else np.bincount(index, weights=self.weights, minlength=len(first))
        )
        firsts = np.zeros(len(self), dtype=bool)  # ascending: classes number first rows
        firsts[first] = True
        return self._classes(index, sizes, weights, (firsts, first))

    def _classes(
        self,
        index: NDArray[Any],
        sizes: NDArray[Any],
        weights: NDArray[Any] | None,
        first: tuple[NDArray[Any], NDArray[Any]],
    ) -> Classes:
        """Classes whose keys are the QI columns of each class's first row (``first``: a
        mask of those rows and their numbers, ascending), taken when first read: see
        _LazyKeys."""
        source, rows = self._pending_rows(*first)
        keys = (source.select(list(self.quasi_identifiers)), rows)
        return Classes._pending(keys, index=index, sizes=sizes, weights=weights)

    def sensitive_counts(self, name: str) -> SensitiveCounts:
        """The distribution of sensitive column ``name`` in every class."""
        if name not in self.sensitive:
            raise ColumnError(f"{name!r} is not a sensitive column of this class table")
        return self._sensitive_counts[name]

    @cached_property
    def _sensitive_counts(self) -> dict[str, SensitiveCounts]:
        self._encode_all([("sorted", name) for name in self.sensitive])  # at once
        return {name: self._make_sensitive_counts(name) for name in self.sensitive}

    def _make_sensitive_counts(self, name: str) -> SensitiveCounts:
        classes = self.classes
        ((values, codes),) = self._encoded(name)
        totals = np.bincount(codes, weights=self.counts, minlength=len(values)).astype(np.int64)
        m = max(len(values), 1)
        # Each class's entries in value order: the engine returns groups in a parallel,
        # run-dependent order, and float sums over a class must not depend on it. Rows
        # repeat (class, value) across the other SAs, if any: their counts are summed.
        paired = classes.index * m + codes
        pairs, counts = _sum_sorted(
            paired, self.counts, bound=len(classes) * m, distinct=len(self.sensitive) == 1
        )
        if pairs is paired:  # rows in order of class and value already: entries are rows
            class_ids, codes = _read_only(classes.index), _read_only(codes)
        else:
            class_ids, codes = np.divmod(pairs, m)
        del paired, pairs
        return SensitiveCounts(
            name=name,
            values=values,
            class_ids=class_ids,
            codes=codes,
            counts=counts,
            class_sizes=classes.sizes,
            totals=totals,
        )

    def null_counts(self) -> dict[str, int]:
        """Records with a null value, per audited column."""
        return {
            name: 0 if mask is None else int(self.counts[mask].sum())
            for name, mask in self._nulls.items()
        }

    @cached_property
    def _nulls(self) -> dict[str, NDArray[Any] | None]:
        """Per column (in :attr:`keys` order), which rows hold a null; ``None`` when none
        does. A :meth:`subset` takes its rows of these."""
        return {
            name: self._equal(name, None) for name in (*self.quasi_identifiers, *self.sensitive)
        }

    def without_null_quasi_identifiers(self) -> ClassTable:
        """This table without the records that have a null in any QI."""
        keep = np.ones(len(self), dtype=bool)
        for name in self.quasi_identifiers:
            mask = self._nulls[name]
            if mask is not None:
                keep &= ~mask
        return self.subset(keep)


def _encode(column: pa.ChunkedArray) -> tuple[tuple[str | None, ...], NDArray[Any]]:
    """The distinct values of a string column, sorted (null last), and each row's code.

    Codes follow the sorted values, not the order rows arrived in, so results do not
    depend on the engine's output order.
    """
    encoded = pc.dictionary_encode(column.combine_chunks(), null_encoding="encode")
    order = pc.sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    values = tuple(encoded.dictionary.take(pa.array(order)).to_pylist())
    return values, rank[encoded.indices.to_numpy(zero_copy_only=False)]


@dataclass(frozen=True)
class _Chunk:
    """One chunk of a dictionary column, its codes translated to the column's values.

    Attributes
    ----------
    indices : pyarrow.Array
        The chunk's codes into its own dictionary (null where the record's value is).
    places : numpy.ndarray
        Each entry of the chunk's dictionary's place among the column's values, and
        last the place of null.
    """

    indices: pa.Array
    places: NDArray[Any]

    def __len__(self) -> int:
        return len(self.indices)

    def __call__(self) -> NDArray[Any]:
        """The chunk's records' places among the column's values (``int64``)."""
        indices = self.indices
        if indices.null_count:
            indices = pc.fill_null(indices, len(self.places) - 1)
        return np.asarray(self.places[indices.to_numpy(zero_copy_only=False)])


def _translated(column: Iterable[pa.DictionaryArray]) -> tuple[pa.Array, list[_Chunk]]:
    """A dictionary-coded string column's distinct values, sorted (a null value last if
    records hold one), and its chunks, each with its dictionary placed among those
    values."""
    chunks = [chunk for chunk in column if len(chunk)]
    dictionaries = [chunk.dictionary.cast(pa.string()) for chunk in chunks]
    values = pc.unique(pa.concat_arrays(dictionaries)) if chunks else pa.array([], pa.string())
    # Sorted: records packed in this order come out grouped by class with each class's
    # SA values in order, as the SA distributions want them (nothing to sort there).
    values = values.take(pc.sort_indices(values))
    if any(chunk.indices.null_count for chunk in chunks) and not values.null_count:
        values = pa.concat_arrays([values, pa.nulls(1, pa.string())])
    nulls = np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))
    null = int(nulls[0]) if len(nulls) else -1  # -1: no record's value is null
    placed = []
    for chunk, dictionary in zip(chunks, dictionaries, strict=True):
        places = pc.index_in(dictionary, value_set=values, skip_nulls=False)
        places = places.to_numpy(zero_copy_only=False).astype(np.int64)
        placed.append(_Chunk(chunk.indices, np.append(places, null)))
    return values, placed


def _compact(
    values: tuple[str | None, ...], codes: NDArray[Any]
) -> tuple[tuple[str | None, ...], NDArray[Any]]:
    """``values`` and ``codes`` without the values no code refers to (as :func:`_encode`)."""
    present, codes = _renumbered(codes, len(values))
    if present is None:
        return values, codes
    return tuple(v for v, p in zip(values, present, strict=True) if p), codes


def _renumbered(codes: NDArray[Any], width: int) -> tuple[NDArray[Any] | None, NDArray[Any]]:
    """Which of ``width`` values some code of ``codes`` refers to (``None``: all of
    them), and the codes renumbered over those values, in order."""
    present = np.bincount(codes, minlength=width) > 0
    if present.all():
        return None, codes
    renumber = np.cumsum(present) - 1
    return present, renumber[codes]


def _group_codes(column: pa.ChunkedArray) -> tuple[int, NDArray[Any]]:
    """A string column's number of distinct values (null included) and each row's code.

    Codes follow first appearance, unsorted: enough to group rows, and much cheaper
    than :func:`_encode` for a column of millions of distinct values.
    """
    encoded = pc.dictionary_encode(column.combine_chunks(), null_encoding="encode")
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return max(len(encoded.dictionary), 1), codes


def _ascending(keys: NDArray[Any]) -> bool:
    """Whether ``keys`` are strictly ascending."""
    return len(keys) < 2 or bool(np.all(keys[1:] > keys[:-1]))


def _sum_sorted(
    keys: NDArray[Any], counts: NDArray[Any] | None, *, bound: int, distinct: bool
) -> tuple[NDArray[Any], NDArray[Any]]:
    """The distinct ``keys`` (integers in ``[0, bound)``) ascending, and their ``counts`` summed.

    Parameters
    ----------
    keys : numpy.ndarray
        Integer keys, one per row.
    counts : numpy.ndarray or None
        Each row's count (``int64``); ``None``: 1 for every row (each row is a record).
    bound : int
        An upper bound of ``keys`` (exclusive).
    distinct : bool
        Whether the keys are known to differ in every row (then nothing is summed).

    Returns
    -------
    keys, counts : numpy.ndarray
        The distinct keys ascending, and for each the sum of its rows' counts
        (``int64``; sums of several rows are taken in row order, as floats).

    Notes
    -----
    Keys already strictly ascending are returned as they are. When the range is not
    much wider than the number of keys (8 times, or twice when each row counts one and
    the table of slots holds the counts), each key is placed in its slot of a table of
    ``bound`` slots (linear, several times faster than a comparison sort) and the
    sorted keys are read off the slots in turn; otherwise keys are sorted.
    """
    ascending = _ascending(keys)
    if counts is None and (distinct or ascending):  # each row a key of its own
        counts = np.ones(len(keys), dtype=np.int64)
    if ascending:
        assert counts is not None
        return keys, counts
    if counts is None and bound <= 2 * len(keys) + 1024:  # records, counted in their slots
        sums = np.bincount(keys, minlength=bound)
        slots = np.flatnonzero(sums)
        return slots, sums[slots].astype(np.int64, copy=False)
    if counts is not None and bound <= 8 * len(keys) + 1024:
        present = np.zeros(bound, dtype=bool)
        present[keys] = True
        slots = np.flatnonzero(present)
        if distinct:
            sums = np.empty(bound, dtype=np.int64)  # only the slots present are read
            sums[keys] = counts
        else:
            sums = np.bincount(keys, weights=counts, minlength=bound)
        return slots, sums[slots].astype(np.int64, copy=False)
    if not distinct:
        group, keys = pd.factorize(keys)
        counts = np.bincount(group, weights=counts).astype(np.int64)
    assert counts is not None
    order = np.argsort(keys)
    return keys[order], counts[order]


#: Keys spanning at most this many times the rows are grouped by direct addressing.
_DIRECT_GROUPING = 16
#: The same when groups are numbered in order of first appearance (it takes two tables of
#: ``bound`` slots, one at a time).
_DIRECT_ORDERED = 4


def sum_within_classes(
    class_ids: NDArray[Any], weights: NDArray[Any], n_classes: int, one_each: bool
) -> NDArray[Any]:
    """Sum ``weights`` (one per entry) within each of ``n_classes`` classes, as ``float64``.

    Parameters
    ----------
    class_ids : numpy.ndarray
        Each entry's class.
    weights : numpy.ndarray
        One value per entry.
    n_classes : int
        The number of classes (those without an entry sum to 0).
    one_each : bool
        Whether entry ``i`` is class ``i``'s only one (as where a QI is unique per
        record): each sum is then ``0.0 + weight``, the bits ``numpy.bincount`` gives (a
        negative zero made positive), without its pass over the classes.

    Returns
    -------
    numpy.ndarray
        A new array of ``n_classes`` sums.

    Examples
    --------
    >>> sum_within_classes(np.array([0, 0, 2]), np.array([1.0, 2.0, 4.0]), 3, False).tolist()
    [3.0, 0.0, 4.0]
    >>> sum_within_classes(np.arange(2), np.array([-0.0, 5.0]), 2, True).tolist()
    [0.0, 5.0]
    """
    if one_each:
        return np.asarray(np.add(weights, 0.0, dtype=np.float64))
    return np.bincount(class_ids, weights=weights, minlength=n_classes)


def _read_only(array: NDArray[Any]) -> NDArray[Any]:
    """A read-only view of ``array`` (``array`` itself stays writeable).

    Parameters
    ----------
    array : numpy.ndarray
        Any array.

    Returns
    -------
    numpy.ndarray
        A view of the same data that refuses writes.
    """
    view = array.view()
    view.setflags(write=False)
    return view


def _held(array: NDArray[Any]) -> NDArray[Any]:
    """A per-class array as :meth:`SensitiveCounts.class_local` keeps it: read-only, and
    its one value broadcast (no memory a class) when every class has that value, bit for
    bit (a QI unique per record makes the distinct values, the entropy, recursive c and
    alpha of every class the same: on 5x10^7 classes, 400 MB each).

    Parameters
    ----------
    array : numpy.ndarray
        One value per class.

    Returns
    -------
    numpy.ndarray
        Read-only, equal to ``array`` in every value and sign.

    Examples
    --------
    >>> same = _held(np.ones(4))
    >>> same.tolist(), same.strides, same.flags.writeable
    ([1.0, 1.0, 1.0, 1.0], (0,), False)
    >>> _held(np.array([0.0, -0.0])).strides  # the signs differ: kept as it is
    (8,)
    """
    array = np.asarray(array)
    if array.ndim == 1 and len(array) > 1 and array.strides[0] != 0:
        first = array[:1].copy()
        same = bool((array == first[0]).all())
        if same and array.dtype.kind == "f" and first[0] == 0:  # +0.0 and -0.0 are ==
            same = bool((np.signbit(array) == np.signbit(first[0])).all())
        if same:
            return np.broadcast_to(first, array.shape)
    return _read_only(array)


def _taken(array: NDArray[Any], ids: NDArray[Any]) -> NDArray[Any]:
    """``array[ids]``; one value broadcast (:func:`_held`) stays so, not copied out."""
    if array.strides == (0,):
        return np.broadcast_to(array[:1], (len(ids),))
    taken: NDArray[Any] = array[ids]
    return taken


def _first_rows(key: NDArray[Any], bound: int) -> NDArray[Any]:
    """The row where each distinct value of ``key`` first appears, in order of appearance.

    Linear and without hashing: a table of ``bound`` slots keeps each value's first row.

    Parameters
    ----------
    key : numpy.ndarray
        Integers in ``[0, bound)``.
    bound : int
        An upper bound of ``key`` (exclusive).

    Returns
    -------
    numpy.ndarray
        Ascending row numbers (``int64``), one per distinct value: the representative
        rows of a hash factorization (``pandas.factorize``) of ``key``, in its group order.

    Examples
    --------
    >>> _first_rows(np.array([3, 1, 3, 0, 1]), 4).tolist()
    [0, 1, 3]
    """
    rows = len(key)
    slot = np.full(bound, rows, dtype=np.int64)
    np.minimum.at(slot, key, np.arange(rows, dtype=np.int64))
    starts = np.zeros(rows, dtype=bool)
    starts[slot[slot < rows]] = True
    return np.flatnonzero(starts)


def _combine(
    codes: Iterable[NDArray[Any]], widths: Iterable[int] | None = None, *, ordered: bool = True
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Group rows by several code columns at once.

    Returns a row of each group and each row's group id. Codes are packed into one
    int64 key column by column, re-factorizing when the next column would overflow;
    grouping is a hash factorization, linear in the number of rows, with groups
    numbered in order of first appearance and represented by their first row; keys of a
    small range are grouped by direct addressing instead, with the same numbering.
    ``widths``, when known, bound each column's codes (``0 <= code < width``) and spare
    a pass over it. A column that is a function of the columns before it (it splits no
    group, :func:`_determined`) is left out where it would have to be hashed. With
    ``ordered=False`` the numbering and representative rows may be any, and direct
    addressing takes wider ranges.
    """
    key: NDArray[Any] | None = None
    bound = 1
    known = iter(widths) if widths is not None else None
    owned = False  # whether ``key`` is an array of this function's, to update in place
    for column in codes:
        width = next(known) if known is not None else int(column.max()) + 1 if len(column) else 1
        if key is None:
            key, bound = column, width
            continue
        direct = _DIRECT_ORDERED * len(key) + 1024
        if bound <= direct < bound * width and _determined(key, bound, column):
            continue  # the column splits no group (a function of the others): spared
        if bound * width >= 2**62:
            key = pd.factorize(key)[0].astype(np.int64)
            bound = int(key.max()) + 1 if len(key) else 1
            owned = True
        if owned and key.dtype == np.result_type(key, column):
            key *= width
            key += column
        else:  # int64 whatever the codes' type: narrower codes would overflow
            key, owned = np.multiply(key, width, dtype=np.int64) + column, True
        bound *= width
    assert key is not None
    if not ordered and bound <= _DIRECT_GROUPING * len(key) + 1024:
        present = np.zeros(bound, dtype=np.int64)
        present[key] = 1
        index = (np.cumsum(present) - 1)[key]
        some = np.empty(int(present.sum()), dtype=np.int64)
        some[index] = np.arange(len(key), dtype=np.int64)
        return some, index
    if bound <= _DIRECT_ORDERED * len(key) + 1024:
        first = _first_rows(key, bound)
        group = np.empty(bound, dtype=np.int64)
        group[key[first]] = np.arange(len(first), dtype=np.int64)
        return first, group[key]
    index = pd.factorize(key)[0].astype(np.int64)
    first = np.empty(int(index.max()) + 1 if len(index) else 0, dtype=np.int64)
    first[index[::-1]] = np.arange(len(index) - 1, -1, -1, dtype=np.int64)
    return first, index


def _determined(key: NDArray[Any], bound: int, column: NDArray[Any]) -> bool:
    """Whether ``column`` is a function of ``key`` (rows of one key have one value).

    Checked at one row of each key (any), in a few passes and ``bound`` slots: a
    grouping that ``column`` would not split needs no hashing of the packed pairs
    (``pandas.factorize`` of 7M pairs of 10^6 groups: 1.2 to 2.5 s on two shared cores;
    a derived QI, such as a region of a person or the state of a ZIP code).

    >>> _determined(np.array([0, 1, 0]), 2, np.array([5, 7, 5]))
    True
    >>> _determined(np.array([0, 1, 0]), 2, np.array([5, 7, 6]))
    False
    """
    some = np.empty(bound, dtype=np.int64)
    some[key] = np.arange(len(key), dtype=np.int64)
    return bool(np.array_equal(column[some[key]], column))


def to_text_batch(
    batch: pa.RecordBatch | pa.Table, columns: Sequence[str], *, integers: Collection[str] = ()
) -> pa.RecordBatch:
    """Return ``batch`` restricted to ``columns``, each as text (see :class:`Source`).

    String columns stay as they are; dictionary columns stay dictionaries, with their
    values turned into text; typed columns (numbers, dates, ...) become dictionaries
    too, so that only their distinct values are turned into text. Nulls stay nulls.
    Numbers become their shortest decimal text, so a Parquet integer 2134 and a CSV cell
    ``2134`` agree. The columns named in ``integers`` that hold whole numbers
    (:func:`whole_numbers`) stay as they are: their text is their decimal form, taken
    by a reader that wants it later (``pyarrow.compute.cast`` to string, as here).
    """
    arrays = []
    for name in columns:
        array = batch.column(name)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
            array = array.cast(pa.string())
        elif name in integers and whole_numbers(array.type):
            pass
        elif not pa.types.is_string(array.type):
            if not pa.types.is_dictionary(array.type):
                array = pc.dictionary_encode(array)
            array = pa.DictionaryArray.from_arrays(
                array.indices.cast(pa.int32()), _as_string(array.dictionary)
            )
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=list(columns))


def whole_numbers(kind: pa.DataType) -> bool:
    """Whether ``kind`` is an integer type that ``int64`` holds (not ``uint64``)."""
    return bool(pa.types.is_integer(kind)) and kind != pa.uint64()


def to_string_batch(batch: pa.RecordBatch | pa.Table, columns: Sequence[str]) -> pa.RecordBatch:
    """Return ``batch`` restricted to ``columns``, each a plain ``pa.string()`` array.

    As :func:`to_text_batch`, with dictionaries decoded.

    >>> batch = to_string_batch(pa.table({"age": [30, None]}), ["age"])
    >>> batch.column(0).to_pylist()
    ['30', None]
    """
    text = to_text_batch(batch, columns)
    arrays = [
        array.dictionary_decode() if pa.types.is_dictionary(array.type) else array
        for array in text.columns
    ]
    return pa.RecordBatch.from_arrays(arrays, names=list(columns))


def _as_string(array: pa.Array) -> pa.Array:
    if pa.types.is_string(array.type):
        return array
    if pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
        return array.cast(pa.string())
    return pc.cast(array, pa.string())
