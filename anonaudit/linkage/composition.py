"""Composition (intersection) attack across independent releases, and its DP counterpart.

Ganta, Kasiviswanathan & Smith (2008), "Composition attacks and auxiliary information in
data privacy", KDD, Section 2: two organizations (their example: two hospitals) release
k-anonymous or l-diverse tables over overlapping populations. An attacker who knows a
target's QI values, and that the target is in both releases, finds the target's class in
each release; the target's sensitive value is then among the values of every one of those
classes: the *intersection* of their value sets. Each release can be l-diverse on its own
while the intersection holds a single value.

What the attacker computes, per combination of classes (one class in each release the
target is in):

* the **consistent set**: the values present in every one of its classes; the true value
  is in it whenever the person's value is the same in every release (records whose value
  differs between releases are counted apart, ``changed_records``, and left out);
* the **posterior** from the published class distributions, assuming the classes are
  independent evidence about the value given it (naive Bayes, the rule Ganta et al.
  apply to their probabilistic releases): ``p(s | c_1..c_r) ∝ π(s) ∏_i p_i(s | c_i) / π_i(s)``,
  with ``π_i`` release i's distribution of the SA and ``π`` the pooled distribution of
  all releases. With one shared prior this is the normalized
  ``∏_i p(s | c_i) / π(s)^(r-1)``. A value outside the consistent set gets 0.

The office's record ids (never published) are used only to know which records are in
several releases and which class combination each one falls in; the attacker never
needs them. The ids are joined once, in DuckDB, and the result aggregated per
combination of classes (:func:`read_releases`): memory grows with the combinations,
not with the records. Releases not yet published can be given as generalizations of one
record-level input (:func:`generalized_releases`): "what if I publish both?".

The DP counterpart (:func:`dp_composition`): the same r releases each made with the
DP companion at (ε, δ) compose sequentially (``anonaudit.dp.accounting.sequential``:
pure ε adds to rε, zCDP ρ adds, δ adds). A present person's value changing is a
*replace* pair, two add-remove steps (``anonaudit.dp.release.value_guarantee``), so the
attacker's posterior on the value is bounded by
``anonaudit.dp.contrast.posterior_bound(π(s), ε_value)`` at the composed ε of the replace
pair (2rε for Laplace noise).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable, SourceStats, to_string_batch
from anonaudit.dp.accounting import Accounting, account, mechanism_cost, noise_scale, sequential
from anonaudit.dp.contrast import posterior_bound
from anonaudit.dp.mechanisms import ADDITIVE, Mechanism
from anonaudit.dp.sensitivity import histogram_sensitivity
from anonaudit.engines.local import connect
from anonaudit.engines.records import read_records, recode_columns
from anonaudit.errors import AnonauditError, ColumnError, InputError, ParameterError
from anonaudit.hierarchy import Hierarchy
from anonaudit.measures._matching import common_class_ids
from anonaudit.measures.generalization import Generalization, qi_hierarchy
from anonaudit.sources.base import (
    Source,
    fingerprint_now,
    open_source,
    require_columns,
)
from anonaudit.sources.csv import CsvOptions, CsvSource

__all__ = [
    "COMBINATION_RULE",
    "Composition",
    "DPComposition",
    "ReleaseDiversity",
    "Releases",
    "compose",
    "dp_composition",
    "generalized_releases",
    "read_releases",
]

#: How :func:`compose` combines the class distributions, as reports state it.
COMBINATION_RULE = (
    "p(s | c_1..c_r) proportional to pi(s) * prod_i p_i(s | c_i) / pi_i(s): the classes as "
    "independent evidence (naive Bayes); pi_i is release i's SA distribution, pi the pooled one"
)


def _presence(index: int) -> str:
    return f"#{index}"


def _column(index: int, name: str) -> str:
    return f"#{index}:{name}"


@dataclass(frozen=True)
class Releases:
    """Several releases of overlapping records, joined on the office's record id.

    Attributes
    ----------
    names : tuple of str
        The releases, in the order given.
    quasi_identifiers, sensitive : tuple of str
        The columns of each release.
    table : ClassTable
        The joint class table: counts per combination of (for each release i) whether
        the record is in it (QI ``#i``, ``"1"`` or ``"0"``), its QI values there
        (``#i:<QI>``, null when absent) and its SA values there (SA ``#i:<SA>``).
    """

    names: tuple[str, ...]
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    table: ClassTable

    def present(self, index: int) -> NDArray[Any]:
        """Whether each row of :attr:`table` is in release ``index``."""
        column = self.table.keys.column(_presence(index))
        return np.asarray(pc.equal(column, "1").to_numpy(zero_copy_only=False), dtype=bool)

    def release(self, index: int) -> ClassTable:
        """Release ``index``'s own class table (a marginal of the joint one)."""
        own = [_column(index, name) for name in (*self.quasi_identifiers, *self.sensitive)]
        keep = pa.array(self.present(index))
        keys = self.table.keys.select(own).filter(keep)
        keys = keys.rename_columns([*self.quasi_identifiers, *self.sensitive])
        counts = self.table.counts[self.present(index)]
        sources = self.table.sources[index : index + 1]
        return ClassTable(self.quasi_identifiers, self.sensitive, keys, counts, sources).merge()


def read_releases(
    sources: Sequence[Any],
    *,
    id: str,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    csv: CsvOptions | None = None,
    names: Sequence[str] | None = None,
) -> Releases:
    """Read several releases and join them on the record id ``id``, in DuckDB.

    Parameters
    ----------
    sources : sequence of path or frame
        At least two releases (CSV or Parquet files, or frames), each with ``id``, the
        QI columns as released (generalized values, ``*`` for suppressed) and the SAs.
    id : str
        The office's own record id, never published: links a record across releases.
    quasi_identifiers, sensitive : sequence of str
        Column roles, the same in every release.
    csv : CsvOptions, optional
        Separator, encoding and null markers for CSV files.
    names : sequence of str, optional
        What to call each release (:attr:`Releases.names` and messages); by default the
        name of its source.

    Returns
    -------
    Releases

    Raises
    ------
    InputError
        A release names a record id twice (the file and the id are named), or a column
        is missing.
    """
    qi, sa = tuple(quasi_identifiers), tuple(sensitive)
    if len(sources) < 2:
        raise ParameterError("composition needs at least two releases")
    if names is not None and len(names) != len(sources):
        raise ParameterError(f"{len(names)} names for {len(sources)} releases")
    if not sa:
        raise ParameterError("name the sensitive column with --sensitive COL")
    if id in qi or id in sa:
        raise ParameterError(f"the id column {id!r} is also a quasi-identifier or sensitive")
    columns = [id, *qi, *sa]
    inner = ["id", *(f"q{j}" for j in range(len(qi))), *(f"s{j}" for j in range(len(sa)))]
    connection = connect()
    connection.execute("SET preserve_insertion_order = false")
    stats = []
    try:
        for index, obj in enumerate(sources):
            source = open_source(obj, csv=csv)
            require_columns(source, columns)
            rows = _scan(connection, f"r{index}", source, columns, inner)
            if rows is None:  # not a file DuckDB reads as anonaudit does: stream it
                rows = _load(connection, f"r{index}", source.batches(columns), columns, inner)
            where = source.info.name if names is None else names[index]
            _refuse_blank_ids(connection, f"r{index}", where, id)
            _refuse_repeated_ids(connection, f"r{index}", where, id)
            info = source.info
            digest = fingerprint_now(source)
            stats.append(SourceStats(info.name, info.format, rows, info.size_bytes, sha256=digest))
        keys, counts = _joint(connection, len(sources), qi, sa)
    finally:
        connection.close()
    presence = [_presence(i) for i in range(len(sources))]
    own_qi = [_column(i, name) for i in range(len(sources)) for name in qi]
    own_sa = [_column(i, name) for i in range(len(sources)) for name in sa]
    table = ClassTable((*presence, *own_qi), tuple(own_sa), keys, counts, tuple(stats))
    return Releases(tuple(s.name for s in stats) if names is None else tuple(names), qi, sa, table)


def generalized_releases(
    source: Any,
    generalizations: Sequence[Mapping[str, int]],
    *,
    id: str,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]],
    csv: CsvOptions | None = None,
) -> Releases:
    """Releases of one input, each with its QIs generalized to one set of hierarchy levels.

    "What if I publish both of these generalizations?": every record of ``source``
    appears in every release, its QI values replaced by their ancestors at the levels
    of that release (:meth:`Generalization.recode_maps
    <anonaudit.measures.generalization.Generalization.recode_maps>`, applied to whole columns in
    Arrow), and the releases are joined as :func:`read_releases` joins published files.
    The input is read once and held in memory as text, the QI columns once more per
    release.

    Parameters
    ----------
    source : path or frame
        The record-level input, with ``id``, the QIs and the SAs.
    generalizations : sequence of mapping of str to int
        One release each: the level of each QI named (others stay at level 0), as
        ``--generalize`` and ``anonaudit advise`` give them.
    id : str
        The office's record id.
    quasi_identifiers, sensitive : sequence of str
        Column roles.
    hierarchies : mapping
        Per QI generalized, its hierarchy: an ARX file, ``interval:W1,W2,...``,
        ``prefix[:N]`` or a :class:`~anonaudit.hierarchy.Hierarchy`
        (:func:`~anonaudit.measures.generalization.qi_hierarchy`).
    csv : CsvOptions, optional
        Separator, encoding and null markers for a CSV input.

    Returns
    -------
    Releases
        Named ``"<input> generalized to age=2, zip=1"``; each release's source is the
        input.

    Raises
    ------
    ParameterError
        Fewer than two generalizations, or a level out of its hierarchy's range or for a
        QI without one.
    ColumnError
        A hierarchy for a column that is not a QI, or a missing column.
    HierarchyError
        A value of the input that is not a leaf of its QI's hierarchy.

    Examples
    --------
    Each release hides one QI; each is 2-diverse, yet together they single out two
    records' values:

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"pid": [1, 2, 3, 4], "age": ["31", "37", "31", "37"],
    ...     "zip": ["1301", "1301", "1302", "1302"], "dx": ["flu", "hiv", "cold", "flu"]})
    >>> releases = generalized_releases(frame, [{"age": 1}, {"zip": 1}], id="pid",
    ...     quasi_identifiers=["age", "zip"], sensitive=["dx"],
    ...     hierarchies={"age": "interval:10", "zip": "prefix"})
    >>> releases.names
    ('<pandas.DataFrame> generalized to age=1', '<pandas.DataFrame> generalized to zip=1')
    >>> result = compose(releases, "dx")
    >>> [release.distinct_l for release in result.releases], result.disclosed_records
    ([2, 2], 2)
    """
    qi, sa = tuple(quasi_identifiers), tuple(sensitive)
    if len(generalizations) < 2:
        raise ParameterError("composition needs at least two releases: give two generalizations")
    for name in hierarchies:
        if name not in qi:
            raise ColumnError(f"a hierarchy is given for {name!r}, which is not a quasi-identifier")
    opened = open_source(source, csv=csv)
    columns = list(dict.fromkeys([id, *qi, *sa]))  # read_releases refuses an id among them
    records = read_records([opened], columns)
    built = {
        name: qi_hierarchy(spec, pc.unique(records.column(name)).to_pylist(), column=name)
        for name, spec in hierarchies.items()
    }
    releases, names = [], []
    for levels in generalizations:
        releases.append(recode_columns(records, Generalization(built, dict(levels)).recode_maps()))
        label = ", ".join(f"{name}={level}" for name, level in levels.items())
        names.append(f"{opened.info.name} " + (f"generalized to {label}" if label else "as it is"))
    joined = read_releases(
        releases, id=id, quasi_identifiers=qi, sensitive=sa, csv=csv, names=names
    )
    info = opened.info
    stats = SourceStats(
        info.name, info.format, records.num_rows, info.size_bytes, sha256=fingerprint_now(opened)
    )
    return replace(joined, table=replace(joined.table, sources=(stats,) * len(releases)))


def _scan(
    connection: duckdb.DuckDBPyConnection,
    name: str,
    source: Source,
    columns: list[str],
    inner: list[str],
) -> int | None:
    """Load a CSV file into the DuckDB table ``name`` with DuckDB's own parallel reader.

    Only where it reads what anonaudit's reader reads
    (:meth:`~anonaudit.sources.csv.CsvSource.duckdb_scan`); ``None`` when the file does
    not qualify, DuckDB reports an error, or the file has no data rows: :func:`_load`
    then streams it, and its messages name the line.
    """
    scan = source.duckdb_scan() if isinstance(source, CsvSource) else None
    if scan is None:
        return None
    picked = ", ".join(
        f"c{source.columns.index(column)} AS {alias}"
        for column, alias in zip(columns, inner, strict=True)
    )
    try:
        connection.execute(f"CREATE TABLE {name} AS SELECT {picked}, true AS p FROM {scan}")
    except duckdb.Error:
        connection.execute(f"DROP TABLE IF EXISTS {name}")
        return None
    row = connection.execute(f"SELECT count(*) FROM {name}").fetchone()
    rows = int(row[0]) if row else 0
    if rows == 0:
        connection.execute(f"DROP TABLE {name}")
        return None
    return rows


def _load(
    connection: duckdb.DuckDBPyConnection,
    name: str,
    batches: Iterator[pa.RecordBatch],
    columns: list[str],
    inner: list[str],
) -> int:
    """Stream text ``batches`` into the DuckDB table ``name`` (columns renamed ``inner``)."""
    schema = pa.schema([pa.field(column, pa.string()) for column in inner])
    failure: list[BaseException] = []

    def converted() -> Iterator[pa.RecordBatch]:
        try:
            for batch in batches:
                text = to_string_batch(batch, columns)
                yield pa.RecordBatch.from_arrays(text.columns, schema=schema)
        except BaseException as exc:  # DuckDB sees only that the stream failed
            failure.append(exc)
            raise

    reader = pa.RecordBatchReader.from_batches(schema, converted())
    connection.register("reader", reader)
    try:
        connection.execute(f"CREATE TABLE {name} AS SELECT *, true AS p FROM reader")
    except duckdb.Error as exc:
        if failure:
            raise (
                failure[0]
                if isinstance(failure[0], AnonauditError)
                else InputError(f"cannot read input: {failure[0]}")
            ) from None
        raise InputError(f"cannot read input: {exc}") from None
    finally:
        connection.unregister("reader")
        reader.close()  # and the batches it streams: no reader outlives its use
    row = connection.execute(f"SELECT count(*) FROM {name}").fetchone()
    return int(row[0]) if row else 0


def _refuse_blank_ids(
    connection: duckdb.DuckDBPyConnection, table: str, where: str, id: str
) -> None:
    """Refuse a release whose ids are empty or carry spaces around them: such records
    would silently join nothing (ids are compared as text)."""
    row = connection.execute(
        f"SELECT count(*) FILTER (WHERE id IS NULL OR trim(id) = ''), "
        f"count(*) FILTER (WHERE id IS NOT NULL AND trim(id) <> '' AND trim(id) <> id) "
        f"FROM {table}"
    ).fetchone()
    empty, spaced = (int(row[0]), int(row[1])) if row else (0, 0)
    if empty:
        raise InputError(
            f"{where}: the id column {id!r} is empty in {empty:,} "
            f"{'record' if empty == 1 else 'records'}; every record of a release needs its "
            "id to be composed with the others (fill it, or leave the records out)"
        )
    if spaced:
        raise InputError(
            f"{where}: the id column {id!r} has spaces around {spaced:,} "
            f"{'id' if spaced == 1 else 'ids'}; ids are compared as text, so they would "
            "join nothing: trim them in the export"
        )


def _refuse_repeated_ids(
    connection: duckdb.DuckDBPyConnection, table: str, where: str, id: str
) -> None:
    """Refuse a release whose ids repeat, counting them: no id is printed (a report may
    redact such values)."""
    row = connection.execute(
        "SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM "
        f"{table} WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1)"
    ).fetchall()
    ids, shared = (int(row[0][0]), int(row[0][1])) if row else (0, 0)
    if ids:
        raise InputError(
            f"{where}: the id column {id!r} repeats {ids:,} {'id' if ids == 1 else 'ids'} "
            f"({shared:,} records share an id); each record of a release needs its own id"
        )


def _joint(
    connection: duckdb.DuckDBPyConnection, releases: int, qi: tuple[str, ...], sa: tuple[str, ...]
) -> tuple[pa.Table, NDArray[Any]]:
    """The full outer join of the releases on the id, counted per combination of classes."""
    joined = "r0"
    for index in range(1, releases):
        earlier = ", ".join(f"r{i}.id" for i in range(index))
        joined += f" FULL OUTER JOIN r{index} ON coalesce({earlier}) = r{index}.id"
    select = []
    for index in range(releases):
        select.append(f"CASE WHEN r{index}.p THEN '1' ELSE '0' END AS \"{_presence(index)}\"")
    for index in range(releases):
        select += [f'r{index}.q{j} AS "{_column(index, n)}"' for j, n in enumerate(qi)]
    for index in range(releases):
        select += [f'r{index}.s{j} AS "{_column(index, n)}"' for j, n in enumerate(sa)]
    query = f"SELECT {', '.join(select)}, count(*) AS n FROM {joined} GROUP BY ALL"
    result = connection.sql(query).to_arrow_table()
    counts = result.column("n").to_numpy().astype(np.int64)
    return result.drop_columns(["n"]), counts


@dataclass(frozen=True)
class ReleaseDiversity:
    """One release on its own.

    Attributes
    ----------
    name : str
        The release.
    records, classes : int
        Its records and equivalence classes.
    distinct_l : int
        Its distinct l-diversity (fewest distinct SA values in a class).
    """

    name: str
    records: int
    classes: int
    distinct_l: int


@dataclass(frozen=True)
class DPComposition:
    """The same releases made with the DP companion: the composed guarantee.

    Attributes
    ----------
    mechanism : str
        The noise of each release.
    releases : int
        How many releases compose.
    epsilon, delta : float
        Each release's (ε, δ) (add-remove neighbours).
    accounting : Accounting
        The sequential composition of the releases' costs, stated at ``releases · δ``:
        pure ε, zCDP ρ, the (ε, δ) conversion and the Rényi curve.
    value_epsilon : float
        The composed ε of a present person's value changing (the replace pair, at
        ``releases · δ``): ``2 · releases · ε`` for Laplace noise.
    posterior_bound : float
        The largest posterior on a value this allows, over the SA's values at their
        pooled prior (``posterior_bound(π(s), value_epsilon)``).
    """

    mechanism: Mechanism
    releases: int
    epsilon: float
    delta: float
    accounting: Accounting
    value_epsilon: float
    posterior_bound: float


def dp_composition(
    releases: int,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: Mechanism = "discrete-laplace",
    prior: NDArray[Any],
) -> DPComposition:
    """What ``releases`` DP releases at (ε, δ) each guarantee together.

    Each release is a histogram over a public domain with one record per person (L1 = 1
    between add-remove neighbours), noised for (ε, δ) with :func:`noise_scale`; the costs
    compose with :func:`~anonaudit.dp.accounting.sequential` and are stated at the summed
    δ.

    Examples
    --------
    >>> import numpy as np
    >>> result = dp_composition(2, epsilon=1.0, prior=np.array([0.5, 0.5]))
    >>> result.accounting.epsilon, result.value_epsilon, round(result.posterior_bound, 4)
    (2.0, 4.0, 0.982)
    """
    if mechanism not in ADDITIVE:
        raise ParameterError(
            f"composition is accounted for {', '.join(ADDITIVE)} (got {mechanism!r})"
        )
    if releases < 1:
        raise ParameterError(f"need at least one release (got {releases})")
    add_remove = histogram_sensitivity("add-remove")
    replace = histogram_sensitivity("replace")
    scale = noise_scale(mechanism, epsilon=epsilon, delta=delta, l1=add_remove.l1, l2=add_remove.l2)
    cost = mechanism_cost(mechanism, scale=scale, l1=add_remove.l1, l2=add_remove.l2)
    value = mechanism_cost(mechanism, scale=scale, l1=replace.l1, l2=replace.l2)
    total_delta = releases * delta
    value_epsilon = sequential(*[value] * releases).epsilon_at(total_delta)
    bound = posterior_bound(prior[prior > 0], value_epsilon)
    return DPComposition(
        mechanism=mechanism,
        releases=releases,
        epsilon=epsilon,
        delta=delta,
        accounting=account(sequential(*[cost] * releases), delta=total_delta),
        value_epsilon=value_epsilon,
        posterior_bound=float(bound.max()) if len(bound) else math.nan,
    )


@dataclass(frozen=True)
class Composition:
    """Result of :func:`compose` for one sensitive attribute.

    Attributes
    ----------
    sensitive : str
        The SA.
    releases : tuple of ReleaseDiversity
        Each release on its own.
    records : int
        Records in two or more releases, with the same value in each.
    changed_records : int
        Records in two or more releases whose value differs between them (left out).
    disclosed_records : int
        Records whose consistent set holds exactly one value: disclosed.
    newly_disclosed_records : int
        Those of them whose classes each hold two or more values: disclosed by the
        composition, by no release alone.
    max_posterior : float
        The attacker's largest posterior on any value, over the composed records
        (nan when no record is in two releases).
    prior : numpy.ndarray
        The pooled SA distribution ``π`` (over ``values``).
    values : tuple of (str or None)
        The SA's values.
    combination_records : numpy.ndarray
        Per combination of classes: its records.
    candidates : numpy.ndarray
        Per combination: the size of the consistent set.
    smallest_class : numpy.ndarray
        Per combination: the fewest distinct values among its own classes, what the most
        revealing single release tells.
    posterior : numpy.ndarray
        Per combination: the largest posterior on a value.
    dp : DPComposition or None
        The DP counterpart, when asked for.
    """

    sensitive: str
    releases: tuple[ReleaseDiversity, ...]
    records: int
    changed_records: int
    disclosed_records: int
    newly_disclosed_records: int
    max_posterior: float
    prior: NDArray[Any] = field(repr=False)
    values: tuple[str | None, ...] = field(repr=False)
    combination_records: NDArray[Any] = field(repr=False)
    candidates: NDArray[Any] = field(repr=False)
    smallest_class: NDArray[Any] = field(repr=False)
    posterior: NDArray[Any] = field(repr=False)
    dp: DPComposition | None = None


@dataclass(frozen=True)
class _Release:
    """One release's sparse class-by-value table, over the joint table's rows."""

    class_of: NDArray[Any]  # per joint row, its class here (-1: absent)
    pairs: NDArray[Any]  # sorted keys class * m + value
    pair_counts: NDArray[Any]
    sizes: NDArray[Any]
    totals: NDArray[Any]

    def lookup(self, classes: NDArray[Any], values: NDArray[Any], m: int) -> NDArray[Any]:
        """Records of each (class, value), 0 where absent."""
        keys = classes * m + values
        position = np.minimum(np.searchsorted(self.pairs, keys), len(self.pairs) - 1)
        found = self.pairs[position] == keys
        return np.where(found, self.pair_counts[position], 0)


def compose(
    releases: Releases,
    sensitive: str,
    *,
    dp_epsilon: float | None = None,
    dp_delta: float = 0.0,
    dp_mechanism: Mechanism = "discrete-laplace",
) -> Composition:
    """The composition attack on one SA: consistent sets and posteriors per record.

    Parameters
    ----------
    releases : Releases
        The joined releases (:func:`read_releases`).
    sensitive : str
        The SA attacked.
    dp_epsilon, dp_delta, dp_mechanism
        With ``dp_epsilon``, also the DP counterpart (:func:`dp_composition`) of the
        same number of releases at (``dp_epsilon``, ``dp_delta``) each.

    Returns
    -------
    Composition
    """
    if sensitive not in releases.sensitive:
        raise ColumnError(f"{sensitive!r} is not a sensitive column of the releases")
    table, r = releases.table, len(releases.names)
    present = np.stack([releases.present(i) for i in range(r)], axis=1)
    value_keys, value_ids = common_class_ids(
        [table.keys.select([_column(i, sensitive)]).rename_columns(["v"]) for i in range(r)]
    )
    values = tuple(value_keys.column("v").to_pylist())
    m = max(len(values), 1)
    codes = np.stack(value_ids, axis=1)
    own = [_own(releases, i, present[:, i], codes[:, i], m) for i in range(r)]
    prior = sum((o.totals for o in own), np.zeros(m)) / sum(int(o.totals.sum()) for o in own)

    several = present.sum(axis=1) >= 2
    first = np.argmax(present, axis=1)
    first_code = codes[np.arange(len(codes)), first]
    same = np.all(~present | (codes == first_code[:, None]), axis=1)
    counts = table.counts
    composed = several & same
    classes = np.stack([o.class_of for o in own], axis=1)[composed]
    combinations, inverse = np.unique(classes, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    records = np.bincount(inverse, weights=counts[composed], minlength=len(combinations))
    candidates, best = _consistent(combinations, own, prior, m)
    smallest = np.full(len(combinations), np.iinfo(np.int64).max)
    for i, o in enumerate(own):
        distinct = np.bincount(o.pairs // m, minlength=len(o.sizes))
        here = combinations[:, i] >= 0
        smallest[here] = np.minimum(smallest[here], distinct[combinations[here, i]])
    diversity = tuple(
        ReleaseDiversity(
            name=name,
            records=int(o.totals.sum()),
            classes=len(o.sizes),
            distinct_l=int(np.bincount(o.pairs // m, minlength=len(o.sizes)).min())
            if len(o.sizes)
            else 0,
        )
        for name, o in zip(releases.names, own, strict=True)
    )
    dp = None
    if dp_epsilon is not None:
        dp = dp_composition(
            r, epsilon=dp_epsilon, delta=dp_delta, mechanism=dp_mechanism, prior=prior
        )
    return Composition(
        sensitive=sensitive,
        releases=diversity,
        records=int(records.sum()),
        changed_records=int(counts[several & ~same].sum()),
        disclosed_records=int(records[candidates == 1].sum()),
        newly_disclosed_records=int(records[(candidates == 1) & (smallest > 1)].sum()),
        max_posterior=float(best.max()) if len(best) else math.nan,
        prior=prior,
        values=values,
        combination_records=records.astype(np.int64),
        candidates=candidates,
        smallest_class=smallest,
        posterior=best,
        dp=dp,
    )


def _own(
    releases: Releases, index: int, present: NDArray[Any], codes: NDArray[Any], m: int
) -> _Release:
    """Release ``index``'s classes and class-by-value counts, from the joint table."""
    table = releases.table
    keys = table.keys.select([_column(index, name) for name in releases.quasi_identifiers])
    class_keys, (ids,) = common_class_ids([keys.filter(pa.array(present))])
    class_of = np.full(len(present), -1, dtype=np.int64)
    class_of[present] = ids
    counts = table.counts[present]
    pairs, inverse = np.unique(ids * m + codes[present], return_inverse=True)
    return _Release(
        class_of=class_of,
        pairs=pairs,
        pair_counts=np.bincount(inverse.reshape(-1), weights=counts).astype(np.int64),
        sizes=np.bincount(ids, weights=counts, minlength=class_keys.num_rows).astype(np.int64),
        totals=np.bincount(codes[present], weights=counts, minlength=m).astype(np.int64),
    )


def _consistent(
    combinations: NDArray[Any], own: list[_Release], prior: NDArray[Any], m: int
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Per combination of classes: the size of its consistent set and its largest posterior.

    The candidates are the values of the class in the first release the combination is
    in, kept when every other class of the combination holds them too.
    """
    n = len(combinations)
    first = np.argmax(combinations >= 0, axis=1) if n else np.zeros(0, dtype=np.int64)
    owner_parts, value_parts = [], []
    for i, o in enumerate(own):
        mine = np.flatnonzero(first == i)
        start = np.searchsorted(o.pairs, combinations[mine, i] * m)
        end = np.searchsorted(o.pairs, (combinations[mine, i] + 1) * m)
        lengths = end - start
        owner = np.repeat(mine, lengths)
        offset = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        owner_parts.append(owner)
        value_parts.append(o.pairs[np.repeat(start, lengths) + offset] % m)
    owner = np.concatenate(owner_parts).astype(np.int64)
    value = np.concatenate(value_parts).astype(np.int64)
    keep = np.ones(len(owner), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(prior[value])
        for i, o in enumerate(own):
            cls = combinations[owner, i]
            here = cls >= 0
            found = o.lookup(np.where(here, cls, 0), value, m)
            keep &= ~here | (found > 0)
            share = found / o.sizes[np.where(here, cls, 0)] / (o.totals[value] / o.totals.sum())
            score += np.where(here, np.log(np.where(found > 0, share, 1.0)), 0.0)
    owner, score = owner[keep], score[keep]
    candidates = np.bincount(owner, minlength=n).astype(np.int64)
    top = np.full(n, -np.inf)
    np.maximum.at(top, owner, score)
    mass = np.bincount(owner, weights=np.exp(score - top[owner]), minlength=n)
    best = np.where(candidates > 0, 1.0 / np.where(mass > 0, mass, 1.0), 0.0)
    return candidates, best
