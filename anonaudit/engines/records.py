"""The second pass over the rows: each record with its class, in input order.

The audit itself never keeps a record: it aggregates the input into a class table
(:mod:`anonaudit.classtable`). Two outputs need the records again, one by one and in the
order of the input: ``--records-out`` (:func:`write_records`: every record with the size
of its equivalence class and its risk, what a privacy officer opens in a spreadsheet)
and ``anonaudit advise --out`` (:func:`write_transformed`: the input as it would look
after a generalization and suppression). Both re-read the inputs with the very sources
the class table was built from (:func:`open_inputs`), so every value is the text the
class table saw (same separator, encoding, ``na_values``, number-to-text conversion).

Finding a record's class is a lookup of its QI tuple among the class keys, done per
batch and vectorized (:class:`KeyIndex`): each QI value becomes its position among that
column's distinct key values (``pyarrow.compute.index_in``, nulls matching nulls), the
positions are packed into one integer per tuple, and the integers are found in a hash
index of the keys' ones (``pandas.Index.get_indexer``). Memory stays one batch plus the
keys.

Outputs are written atomically (:func:`anonaudit.files.atomic_path`) with pyarrow's
streaming writers; CSV cells that a spreadsheet would run as a formula are defused
exactly as every anonaudit CSV is (:func:`anonaudit.files.defuse`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from numpy.typing import NDArray

from anonaudit.classtable import to_string_batch
from anonaudit.engines.local import check_columns, total_size
from anonaudit.errors import ColumnError, InputError, ParameterError
from anonaudit.files import atomic_path, defuse
from anonaudit.progress import Progress
from anonaudit.sources.base import Source, parts_of
from anonaudit.sources.formats import of_file

if TYPE_CHECKING:
    from anonaudit.classtable import ClassTable

__all__ = [
    "AuditedRecords",
    "KeyIndex",
    "Recode",
    "class_ids",
    "read_records",
    "recode_columns",
    "record_batches",
    "write_records",
    "write_transformed",
]

#: Per QI, raw value -> generalized value (null stays null unless mapped).
Recode = Mapping[str, Mapping[str | None, str | None]]


class AuditedRecords(Protocol):
    """What the records pass reads of an audit (an
    :class:`~anonaudit.results.AuditReport` is one).

    Attributes
    ----------
    table : ClassTable
        The class table audited.
    quasi_identifiers, sensitive : tuple of str
        Its columns.
    null_policy : str
        ``"drop"`` when records with a null QI were left out of the audit.
    recode : Recode or None
        Per QI, raw value -> generalized value, when the audit generalized the input.
    """

    @property
    def table(self) -> ClassTable: ...

    @property
    def quasi_identifiers(self) -> tuple[str, ...]: ...

    @property
    def sensitive(self) -> tuple[str, ...]: ...

    @property
    def null_policy(self) -> str: ...

    @property
    def recode(self) -> Recode | None: ...

    def record_columns(self) -> dict[str, NDArray[Any]]:
        """The audit's measures of each class's records, aligned with
        ``table.classes``, in the order the records file writes them."""
        ...


# Packed tuple keys stay below this bound; wider products are re-numbered first.
_KEY_BOUND = 2**62


def _numbered_batches(
    sources: Sequence[Source], columns: Sequence[str], progress: Progress | None = None
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``(source position, batch)`` over every source in turn, plain string columns."""
    if progress is not None:
        flat = [part for source in sources for part in parts_of(source)]
        progress.start(parts=len(flat), size_bytes=total_size(flat))
    for position, source in enumerate(sources):
        for part in parts_of(source):
            for batch in part.batches(columns):
                if progress is not None:
                    progress.advance(batch.num_rows)
                yield position, to_string_batch(batch, columns)
            if progress is not None:
                progress.part_done(part.info.size_bytes)
    if progress is not None:
        progress.finish()


def record_batches(sources: Sequence[Source], columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
    """Stream ``columns`` of every record of ``sources``, in input order.

    Values are plain strings (or null), exactly as the class table saw them: the
    sources' own batches, with dictionaries decoded.

    Raises
    ------
    ColumnError
        A source without one of ``columns`` (named, with the columns it has).
    """
    check_columns(sources, columns, ())
    for _, batch in _numbered_batches(sources, columns):
        yield batch


def read_records(sources: Sequence[Source], columns: Sequence[str]) -> pa.Table:
    """Every record's ``columns`` as text, in input order, held in memory
    (:func:`record_batches`, collected).

    Raises
    ------
    ColumnError
        A source without one of ``columns``.
    """
    schema = pa.schema([pa.field(name, pa.string()) for name in columns])
    return pa.Table.from_batches(list(record_batches(sources, columns)), schema=schema)


class KeyIndex:
    """Find QI tuples among the rows of a keys table, batch by batch.

    Built once from the keys (e.g. ``report.table.classes.keys``), then
    :meth:`lookup` maps each record of a batch to the row of ``keys`` with its QI
    tuple. Nulls match nulls. Memory: the keys' distinct values per column and one
    ``int64`` per key row.

    Parameters
    ----------
    keys : pyarrow.Table
        One row per QI tuple, with string columns ``quasi_identifiers`` (other
        columns are ignored).
    quasi_identifiers : sequence of str
        The columns to match on.
    recode : mapping, optional
        Per QI, raw value -> generalized value, applied to the records (not to
        ``keys``) before the lookup; a value it does not list stays as it is.

    Examples
    --------
    >>> keys = pa.table({"zip": ["1", "2", None], "sex": ["F", "M", "F"]})
    >>> batch = pa.record_batch({"zip": ["2", None, "1", "3"], "sex": ["M", "F", "M", "F"]})
    >>> KeyIndex(keys, ["zip", "sex"]).lookup(batch).tolist()
    [1, 2, -1, -1]
    """

    def __init__(
        self, keys: pa.Table, quasi_identifiers: Sequence[str], recode: Recode | None = None
    ) -> None:
        if not quasi_identifiers:
            raise ParameterError("name at least one quasi-identifier column")
        for name in quasi_identifiers:
            if name not in keys.column_names:
                raise ColumnError(f"the keys table has no column {name!r}")
        self.quasi_identifiers = tuple(quasi_identifiers)
        self._recode = {
            name: _mapping_arrays(mapping)
            for name, mapping in (recode or {}).items()
            if name in self.quasi_identifiers and mapping
        }
        self._values = [
            pc.unique(keys.column(name).combine_chunks().cast(pa.string()))
            for name in self.quasi_identifiers
        ]
        codes = [
            pc.index_in(keys.column(name), value_set=values, skip_nulls=False)
            .to_numpy(zero_copy_only=False)
            .astype(np.int64)
            for name, values in zip(self.quasi_identifiers, self._values, strict=True)
        ]
        # The packing plan: before column j, either keep packing, or (when the product
        # of widths would overflow) re-number the packed prefixes by their rank among
        # the keys' distinct ones. Records follow the same plan in lookup().
        self._plan: list[pd.Index | None] = []
        packed, bound = codes[0], max(len(self._values[0]), 1)
        for column, values in zip(codes[1:], self._values[1:], strict=True):
            width = max(len(values), 1)
            if bound * width >= _KEY_BOUND:
                prefixes, packed = np.unique(packed, return_inverse=True)
                self._plan.append(pd.Index(prefixes))
                bound = len(prefixes)
            else:
                self._plan.append(None)
            packed, bound = packed * width + column, bound * width
        # A hash index of the distinct packed keys (pandas keeps its hash table between
        # lookups), and the first row of ``keys`` holding each.
        distinct, self._first = np.unique(packed, return_index=True)
        self._packed = pd.Index(distinct)

    def lookup(self, batch: pa.RecordBatch | pa.Table) -> NDArray[Any]:
        """For each record of ``batch``, the row of ``keys`` with its QI tuple, or -1.

        Parameters
        ----------
        batch : pyarrow.RecordBatch or pyarrow.Table
            Records holding the QI columns (text, as a source yields them).

        Returns
        -------
        numpy.ndarray
            ``int64``, one per record; -1 where no key row matches (a record dropped
            for a null QI, a tuple suppressed or never seen).
        """
        strings = to_string_batch(batch, self.quasi_identifiers)
        found = np.ones(strings.num_rows, dtype=bool)
        packed = np.zeros(strings.num_rows, dtype=np.int64)
        for j, (name, values) in enumerate(zip(self.quasi_identifiers, self._values, strict=True)):
            array = strings.column(j)
            if name in self._recode:
                array = _apply(array, *self._recode[name])
            position = pc.index_in(array, value_set=values, skip_nulls=False)
            found &= position.is_valid().to_numpy(zero_copy_only=False)
            code = position.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            if j == 0:
                packed = code
                continue
            prefixes = self._plan[j - 1]
            if prefixes is not None:
                packed = prefixes.get_indexer(pd.Index(packed, copy=False))
                found &= packed >= 0
            packed = packed * max(len(values), 1) + code
        position = self._packed.get_indexer(pd.Index(packed, copy=False))
        found &= position >= 0
        result = np.full(len(found), -1, dtype=np.int64)
        result[found] = self._first[position[found]]
        return result


def _mapping_arrays(mapping: Mapping[str | None, str | None]) -> tuple[pa.Array, pa.Array]:
    """A recoding as two aligned arrays: the values it lists and what they become."""
    return pa.array(list(mapping), pa.string()), pa.array(list(mapping.values()), pa.string())


def _apply(array: pa.Array, sources: pa.Array, targets: pa.Array) -> pa.Array:
    """``array`` with each value listed in ``sources`` replaced by its target."""
    position = pc.index_in(array, value_set=sources, skip_nulls=False)
    listed = position.is_valid()
    return pc.if_else(listed, targets.take(position), array)


def recode_columns(table: pa.Table, recode: Recode) -> pa.Table:
    """``table`` with each column ``recode`` names replaced by its recoding.

    A value the recoding does not list stays as it is (a null stays null unless mapped).

    Examples
    --------
    >>> table = pa.table({"age": ["31", "37", None], "dx": ["flu", "hiv", "flu"]})
    >>> recode_columns(table, {"age": {"31": "30-39", "37": "30-39"}}).column("age").to_pylist()
    ['30-39', '30-39', None]
    """
    for name, mapping in recode.items():
        recoded = _apply(table.column(name).combine_chunks(), *_mapping_arrays(mapping))
        table = table.set_column(table.column_names.index(name), name, recoded)
    return table


def class_ids(
    batch: pa.RecordBatch,
    quasi_identifiers: Sequence[str],
    keys: pa.Table,
    recode: Recode | None = None,
) -> NDArray[Any]:
    """For each record of ``batch``, the row of ``keys`` matching its QI tuple, or -1.

    A one-off :meth:`KeyIndex.lookup`; to look up many batches against the same keys,
    build one :class:`KeyIndex` and reuse it.

    Parameters
    ----------
    batch : pyarrow.RecordBatch
        Records with the QI columns.
    quasi_identifiers : sequence of str
        The columns to match on.
    keys : pyarrow.Table
        A table of QI tuples, such as ``report.table.classes.keys``.
    recode : mapping, optional
        Per QI, raw value -> generalized value, applied to the records first.

    Returns
    -------
    numpy.ndarray
        ``int64`` row numbers of ``keys``; nulls match nulls; -1 where none matches.
    """
    return KeyIndex(keys, quasi_identifiers, recode).lookup(batch)


def release_records(sources: Sequence[Source], report: AuditedRecords, id_column: str) -> pa.Table:
    """The records as ``report`` audited them: ``id_column``, the QIs, the SAs.

    The QIs are generalized as in the audit (``report.recode``), and records
    with a null QI are left out when the audit dropped them (``null_policy="drop"``),
    so the records and ``report.table`` describe the same release. The records are
    held in memory as text (for the release ledger, :mod:`anonaudit.linkage.history`).

    Raises
    ------
    ColumnError
        A source without ``id_column`` (or another column).
    ParameterError
        ``id_column`` is also a QI or an SA.
    """
    qi, sa = report.quasi_identifiers, report.sensitive
    if id_column in qi or id_column in sa:
        raise ParameterError(
            f"the id column {id_column!r} is also a quasi-identifier or sensitive column"
        )
    records = read_records(sources, [id_column, *qi, *sa])
    if report.recode is not None:
        records = recode_columns(records, report.recode)
    if report.null_policy == "drop":
        valid = [pc.is_valid(records.column(name)) for name in qi]
        records = records.filter(functools.reduce(pc.and_, valid))
    return records


def write_records(
    sources: Sequence[Source],
    report: AuditedRecords,
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, NDArray[Any] | Sequence[float]] | None = None,
    recode: Recode | None = None,
    progress: Progress | None = None,
    id_column: str | None = None,
) -> int:
    """Write every input record with its class size and risk, in input order (CSV).

    Columns: ``id_column`` (when given: the input's record identifier, as read, so the
    rows can be joined back to the records), ``source`` (the input's name; only with
    several inputs), ``record`` (the record's 1-based position in its input; for a
    dataset, among the records its files give in order, after any filter), the QI
    values as read, ``fk`` (the size
    of the record's equivalence class; under ``nulls="wildcard"`` the records it
    matches: the audit's own ``report.risk.frequencies``), ``prosecutor_risk``
    (``1 / fk``, ``report.risk.per_class``: the probability that an attacker who knows
    the record is in the file
    picks it from its class: El Emam & Dankar 2008, "Protecting Privacy Using
    k-Anonymity", JAMIA 15(5); :mod:`anonaudit.measures.risk`), then the report's other
    per-record measures (``report.record_columns()``), then ``columns``. A
    record left out of the audit (``--nulls drop``) gets empty measures. Text cells
    that start with ``= + - @``, a tab or a carriage return are written with a leading
    apostrophe (:func:`anonaudit.files.defuse`).

    Parameters
    ----------
    sources : sequence of Source
        The audited inputs, opened with :func:`open_inputs` as the audit opened them.
    report : AuditedRecords
        The audit of those inputs (an :class:`~anonaudit.results.AuditReport`).
    path : path
        The CSV to write (replaced atomically; never one of the inputs).
    columns : mapping of str to array, optional
        More per-class measures (e.g. ``Fk``, individual risk, SUDA score), each
        aligned with ``report.table.classes``: one value per class.
    recode : mapping, optional
        Per QI, raw value -> generalized value, when the audited table is a
        generalization of the input; by default ``report.recode`` (the
        records' values are written as read).
    progress : Progress, optional
        Where to report the pass over the inputs.
    id_column : str, optional
        A column of the inputs to write first, as read (a patient or row number). It
        identifies people directly, so keep the records file as private as the input.

    Returns
    -------
    int
        Records written.

    Raises
    ------
    ParameterError
        A column not aligned with the classes, a name used twice, or ``path`` being
        an input.
    ColumnError
        An input without ``id_column`` or a QI.
    InputError
        The records found per class differ from the class sizes: the inputs changed
        since the audit, or the audited table is a generalization and ``recode`` is
        missing. ``path`` is then left as it was.
    """
    qi = list(report.quasi_identifiers)
    classes = report.table.classes
    sizes = classes.sizes.astype(np.int64)
    measures: dict[str, NDArray[Any]] = {}
    for name, values in [*report.record_columns().items(), *(columns or {}).items()]:
        array = np.asarray(values)
        if array.shape != (len(classes),):
            raise ParameterError(
                f"records column {name!r} has {array.size} values; "
                f"it needs one per class ({len(classes)})"
            )
        if name in measures:
            raise ParameterError(f"records column {name!r} is given twice")
        measures[name] = array
    several = len(sources) > 1
    ids = [] if id_column is None else [id_column]
    header = [*ids, *(["source"] if several else []), "record", *qi, *measures]
    for name in {name for name in header if header.count(name) > 1}:
        raise ParameterError(
            f"column {name!r} would appear twice in the records file; rename the QI or measure"
        )
    _refuse_input(sources, path)
    check_columns(sources, [*ids, *qi], ())
    if recode is None:
        recode = report.recode
    index = KeyIndex(classes.keys, qi, recode)
    source_names = pa.array([source.info.name for source in sources], pa.string())
    schema = pa.schema(
        [(name, pa.string()) for name in header[: header.index("record")]]
        + [("record", pa.int64())]
        + [(name, pa.string()) for name in qi]
        + [(name, pa.from_numpy_dtype(values.dtype)) for name, values in measures.items()]
    )
    written = [0] * len(sources)
    found = np.zeros(len(classes), dtype=np.int64)
    with _csv_writer(path, schema, ",") as write:
        for position, read in _numbered_batches(sources, [*ids, *qi], progress):
            batch = read.select(qi)
            rows, start = batch.num_rows, written[position]
            class_of = index.lookup(batch)
            dropped = class_of < 0
            found += np.bincount(class_of[~dropped], minlength=len(classes))
            arrays: list[pa.Array] = [read.column(0)] if ids else []
            if several:
                arrays.append(source_names.take(pa.array(np.full(rows, position))))
            arrays.append(pa.array(np.arange(start + 1, start + rows + 1, dtype=np.int64)))
            arrays.extend(batch.columns)
            arrays.extend(
                pa.array(values[np.where(dropped, 0, class_of)], mask=dropped)
                for values in measures.values()
            )
            write(pa.RecordBatch.from_arrays(arrays, schema=schema))
            written[position] += rows
        if not np.array_equal(found, sizes):
            raise InputError(
                f"{path}: not written; the inputs now hold other records than the audit "
                "read (changed since?), or the audited table is not theirs (a generalization "
                "needs its recoding)"
            )
    return sum(written)


def write_transformed(
    sources: Sequence[Source],
    path: str | os.PathLike[str],
    *,
    quasi_identifiers: Sequence[str],
    recode: Recode,
    suppressed: pa.Table | None = None,
    suppressed_value: str = "*",
    columns: Sequence[str] | None = None,
) -> int:
    """Write the input as it would look after a generalization and suppression.

    Every column of the input (or the QIs and ``columns``), in its order and as text
    (as the audit reads it: typed Parquet values become their text, ``na_values``
    become nulls); each QI value
    replaced by its generalization (``recode``; a value it does not list stays as
    read); records whose generalized QI tuple is a row of ``suppressed`` get
    ``suppressed_value`` in every QI (ARX's convention: a suppressed record keeps its
    row, its QIs show ``*``). The input is never modified.

    Parameters
    ----------
    sources : sequence of Source
        The inputs (:func:`open_inputs`); all must have the first one's columns.
    path : path
        Where to write: Parquet when it ends in ``.parquet``, else CSV with the
        input's separator (a comma for non-CSV inputs), header first, nulls as empty
        cells, formula-looking text defused (:func:`anonaudit.files.defuse`; use
        Parquet for the exact values). Replaced atomically; never one of the inputs.
    quasi_identifiers : sequence of str
        The QI columns.
    recode : mapping
        Per QI, raw value -> generalized value (``Generalization.recode_maps()``).
    suppressed : pyarrow.Table, optional
        Generalized QI tuples (columns ``quasi_identifiers``) whose records are
        suppressed.
    suppressed_value : str
        What a suppressed record shows in each QI.
    columns : sequence of str, optional
        The columns written besides the QIs (the sensitive ones and those the caller
        chose to keep); ``None`` writes every column. A column the audit did not judge
        may identify a person directly (:mod:`anonaudit.measures.identifiers`), so
        ``anonaudit advise --out`` writes only the QIs, SAs and ``--keep`` columns.

    Returns
    -------
    int
        Records written.
    """
    if not sources:
        raise InputError("no input given; name at least one file")
    header = list(sources[0].columns)
    for source in sources[1:]:
        if sorted(source.columns) != sorted(header):
            raise ColumnError(
                f"{source.info.name}: its columns differ from those of "
                f"{sources[0].info.name}; write the inputs one at a time"
            )
    qi = list(quasi_identifiers)
    check_columns(sources, qi, () if columns is None else list(columns))
    if columns is not None:
        header = [name for name in header if name in qi or name in columns]
    _refuse_input(sources, path)
    maps = {name: _mapping_arrays(recode[name]) for name in qi if recode.get(name)}
    index = None if suppressed is None else KeyIndex(suppressed, qi)
    star = pa.scalar(suppressed_value, pa.string())
    schema = pa.schema([(name, pa.string()) for name in header])
    parquet = of_file(Path(path).name).name == "parquet"  # the suffix says, as for inputs
    sep = getattr(sources[0], "sep", ",")
    written = 0
    output = _parquet_writer(path, schema) if parquet else _csv_writer(path, schema, sep)
    with output as write:
        for _, batch in _numbered_batches(sources, header):
            arrays = dict(zip(header, batch.columns, strict=True))
            for name in maps:
                arrays[name] = _apply(arrays[name], *maps[name])
            if index is not None:
                generalized = pa.RecordBatch.from_arrays([arrays[name] for name in qi], names=qi)
                hidden = pa.array(index.lookup(generalized) >= 0)
                for name in qi:
                    arrays[name] = pc.if_else(hidden, star, arrays[name])
            write(pa.RecordBatch.from_arrays([arrays[name] for name in header], schema=schema))
            written += batch.num_rows
    return written


def _refuse_input(sources: Sequence[Source], path: str | os.PathLike[str]) -> None:
    """Refuse to write over one of the inputs."""
    target = Path(path).resolve()
    for source in sources:
        for part in parts_of(source):
            name = part.info.name  # a file's path; a URL or a frame's description otherwise
            if "://" not in name and Path(name).resolve() == target:
                raise ParameterError(
                    f"{path}: this is an input file; write the output to another path"
                )


@contextmanager
def _csv_writer(
    path: str | os.PathLike[str], schema: pa.Schema, sep: str
) -> Iterator[Callable[[pa.RecordBatch], None]]:
    """Write batches to a CSV file atomically, header first, formula-looking text defused."""
    safe = pa.schema([(defuse(pa.array([f.name]))[0].as_py(), f.type) for f in schema])
    options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed")
    with (
        atomic_path(path) as temporary,
        pacsv.CSVWriter(str(temporary), safe, write_options=options) as writer,
    ):

        def write(batch: pa.RecordBatch) -> None:
            arrays = [defuse(array) for array in batch.columns]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=safe))

        yield write


@contextmanager
def _parquet_writer(
    path: str | os.PathLike[str], schema: pa.Schema
) -> Iterator[Callable[[pa.RecordBatch], None]]:
    """Write batches to a Parquet file atomically."""
    with atomic_path(path) as temporary, pq.ParquetWriter(str(temporary), schema) as writer:
        yield writer.write_batch
