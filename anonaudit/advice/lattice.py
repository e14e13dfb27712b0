"""The least generalization (and suppression) that passes a policy: a lattice search.

Full-domain generalization (Samarati 2001, "Protecting respondents' identities in
microdata release", IEEE TKDE 13(6); LeFevre, DeWitt & Ramakrishnan 2005, "Incognito:
efficient full-domain k-anonymity", SIGMOD) recodes every value of a quasi-identifier
(QI) to the same level of its hierarchy. A *node* of the generalization lattice is one
level per QI that has a hierarchy (the other QIs stay as they are); node ``a`` is a
generalization of ``b`` when ``a >= b`` level by level. Generalizing merges equivalence
classes and never splits one.

Suppression (ARX semantics, Prasser, Kohlmayer et al. 2014, "ARX - A comprehensive tool
for anonymizing biomedical data", AMIA): the records of the classes that fail the policy
at a node are suppressed (removed, or written as ``*`` in every QI) when they are at
most ``suppression_limit`` of all records; the node *passes* when the audit of the
remaining records (:func:`anonaudit.auditing.audit_table`) passes. The classes are those
:func:`anonaudit.advice.suppression.suppression_advice` names (for t-closeness, beta and
delta, whose table distribution moves with suppression, iterated to a fixed point where
ARX keeps the input's distribution). A node that suppresses every record does not pass.

Evaluation on the class table
-----------------------------
A node is never evaluated on rows. For each QI the distinct values of the class table
are mapped once to the ids of their ancestors (:meth:`Hierarchy.ancestors`); a node's
classes are the distinct combinations of those integer codes over the class table's
classes, its class sizes one ``bincount``. The QIs are split in two halves of about as
many level combinations each; per half and levels, the distinct combinations of its
codes are numbered once, so a node's classes are the distinct pairs of two numbers.
They are grouped from the classes of a node below already evaluated (generalizing
merges classes), kept as those pairs, rather than from every class of the table. k
and the highest risk are judged on the class sizes alone. When the policy sets
l-diversity, t-closeness, disclosure or recursive thresholds the node's class table
is built with the codes standing for the generalized values (checks depend only on
the partition and the sensitive values, so every measure equals that of the
generalized table) and the audit itself judges it.

Pruning with monotonicity
-------------------------
A criterion is *monotone* when every generalization of a passing node passes; then a
passing node marks its generalizations as passing and a failing node its
specializations as failing without evaluating them (Flash, Kohlmayer, Prasser, Eckert,
Kemper & Kuhn 2012, "Flash: efficient, stable and optimal k-anonymity", PASSAT: chains
of unknown nodes from the bottom up, binary-searched). Without suppression every
criterion of :class:`~anonaudit.settings.policy.Policy` is monotone: merging classes keeps the
smallest class size from shrinking (k, highest risk), never loses a distinct value
(distinct l), mixes distributions, and the class entropy (Machanavajjhala et al. 2007,
"l-Diversity: privacy beyond k-anonymity", ACM TKDD 1(1), monotonicity of entropy and
recursive (c,l)-diversity), the EMD to the table's distribution (convex in the class
distribution: Li, Li & Venkatasubramanian 2007, "t-Closeness", ICDE, generalization
property), the largest share (alpha), the relative gain (beta) and the bounded log-ratio
(delta) of a mixture are no worse than those of its parts; the table's distribution
does not change. With suppression only k, the highest risk and distinct l stay monotone
(the records in failing classes can only become fewer); entropy and recursive l, t,
alpha, beta and delta are not (a failing class merged with a passing one may fail, and
suppression changes the table's distribution t, beta and delta compare with), so every
node is evaluated.

The front
---------
Among the passing nodes, :func:`search` returns those that are Pareto-optimal on four
losses, all to be minimized: the discernibility metric DM* (Bayardo & Agrawal 2005,
"Data privacy through optimal k-anonymization", ICDE: ``sum |E|^2`` over kept classes
plus ``n`` per suppressed record), the average class size ``records / classes`` of the
kept records (C_AVG of LeFevre, DeWitt & Ramakrishnan 2006, "Mondrian multidimensional
k-anonymity", ICDE, without the constant ``1/k``), the generalization height (sum of
levels) and the number of suppressed records. A node is on the front when no other
passing node is at least as good on all four and better on one. Without suppression a
passing generalization of a passing node is dominated by it (same suppression, DM* and
C_AVG no smaller, greater height), so only the minimal passing nodes, which the search
evaluates anyway, are candidates. With suppression a generalization may suppress fewer
records and so be on the front: the losses of every passing node are computed (counted
in :attr:`Advice.measured`), even where its verdict was inferred.

Each listed transformation is then materialized with
:meth:`anonaudit.measures.generalization.Generalization.apply`, its failing classes suppressed,
and audited with :func:`anonaudit.auditing.audit_table`: the reported measures and the
information loss (:func:`anonaudit.measures.utility.information_loss`) are the audit's own.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.advice.suppression import advice_and_audit
from anonaudit.classtable import ClassTable, _combine
from anonaudit.errors import ColumnError, HierarchyError, ParameterError
from anonaudit.hierarchy import Hierarchy
from anonaudit.measures._classes import TOLERANCE
from anonaudit.measures.generalization import Generalization, qi_hierarchy
from anonaudit.measures.utility import InformationLoss, information_loss
from anonaudit.progress import Steps
from anonaudit.settings.options import Analyses, AuditOptions
from anonaudit.settings.policy import Policy
from anonaudit.settings.work import check_work

if TYPE_CHECKING:  # anonaudit.auditing imports this package
    from anonaudit.advice.audit import Audit, Auditor, Check

__all__ = ["MAX_NODES", "Advice", "Blocker", "Transformation", "qi_hierarchies", "search"]

#: Largest lattice :func:`search` searches; more nodes than this is a sign of too many
#: generalizable QIs or too deep hierarchies.
MAX_NODES = 2_000_000

# Criteria whose failing records can only become fewer when classes merge: monotone
# with suppression as well.
_MONOTONE_WITH_SUPPRESSION = frozenset({"k", "l", "max_risk"})
# Criteria decided by class sizes alone.
_SIZE_CRITERIA = frozenset({"k", "max_risk"})
#: Classes of the node groupings kept to coarsen later nodes from, in all (everything
#: dropped when exceeded): about 24 bytes each.
_CACHED = 4_000_000
#: Ids of the class table's classes in halves of the QIs kept (:meth:`_Lattice._half`),
#: in all (oldest dropped first): 8 bytes each.
_HALF_IDS = 8_000_000
#: A node's pair numbers spanning at most this many times (the classes grouped + 64)
#: are summed by direct addressing; wider ones are numbered first.
_DIRECT_GROUPING = 16
#: Candidates compared with the front at once when finding it.
_FRONT_BLOCK = 256

_UNKNOWN, _PASS, _FAIL = 0, 1, 2


@dataclass(frozen=True)
class Transformation:
    """One passing transformation: the levels, what is suppressed, and its audit.

    Attributes
    ----------
    levels : dict of str to int
        Hierarchy level per generalizable QI (0: the value as it is).
    suppressed : int
        Records suppressed (in classes failing the policy after generalization).
    suppressed_classes : pyarrow.Table
        The generalized QI tuples of the suppressed classes (one row each), what
        :func:`anonaudit.engines.records.write_transformed` replaces by ``*``.
    generalization : Generalization
        The recoding; ``generalization.recode_maps()`` gives value -> generalized value.
    report : Audit
        The audit of the generalized table without the suppressed records.
    information_loss : InformationLoss
        DM*, average class size, height, precision and suppressed records.
    """

    levels: dict[str, int]
    suppressed: int
    suppressed_classes: pa.Table = field(repr=False)
    generalization: Generalization = field(repr=False)
    report: Audit = field(repr=False)
    information_loss: InformationLoss

    @property
    def height(self) -> int:
        """Sum of the levels."""
        return sum(self.levels.values())

    @property
    def passed(self) -> bool:
        """Whether the audit of the transformed table meets the policy."""
        return bool(self.report.passed)


@dataclass(frozen=True)
class Blocker:
    """A threshold that no transformation can meet: it fails on the whole table as one class.

    Attributes
    ----------
    measure : str
        The threshold, e.g. ``"recursive (3,2)-diversity of salary-class"``.
    reason : str
        Why, from the whole table's distribution of the sensitive attribute.
    """

    measure: str
    reason: str


@dataclass(frozen=True)
class Advice:
    """Result of :func:`search`: the Pareto-best transformations and how they were found.

    Attributes
    ----------
    policy : Policy
        The thresholds searched for.
    suppression_limit : float
        Largest share of records that may be suppressed.
    hierarchies : dict of str to int
        Height of the hierarchy of each generalizable QI, in search order.
    nodes : int
        Nodes in the lattice (product of ``height + 1``).
    evaluated : int
        Nodes whose verdict was computed.
    pruned : int
        Nodes whose verdict was inferred by monotonicity (``nodes - evaluated``).
    measured : int
        Passing nodes whose verdict was inferred but whose losses were computed for the
        front anyway (with suppression; see the module notes).
    passing : int
        Nodes that pass.
    monotone : bool
        Whether the criteria allowed pruning.
    front : int
        Transformations on the Pareto front (some may not be listed).
    seconds : float
        Time of the search and of auditing the listed transformations.
    transformations : tuple of Transformation
        The front, least DM* first (then fewest suppressed, lowest height), at most
        ``max_results`` of it.
    blocked_by : tuple of Blocker
        The thresholds that fail even when every QI is generalized to one value
        (:func:`blocked_by`): whatever the hierarchies and the suppression limit, no
        transformation passes while one of them is set.
    """

    policy: Policy
    suppression_limit: float
    hierarchies: dict[str, int]
    nodes: int
    evaluated: int
    pruned: int
    measured: int
    passing: int
    monotone: bool
    front: int
    seconds: float
    transformations: tuple[Transformation, ...]
    blocked_by: tuple[Blocker, ...]

    @property
    def passed(self) -> bool:
        """Whether some transformation passes."""
        return self.passing > 0


@dataclass(frozen=True)
class _Verdict:
    """A node's verdict and the sizes behind its losses."""

    passed: bool
    suppressed: int
    kept_sizes: NDArray[Any]


@dataclass(frozen=True)
class _Grouping:
    """The classes of a node: per half of the QIs, each class's id at the node's levels.

    ``ids[h]`` numbers each class among the distinct codes of half ``h`` at its levels
    ``at[h]``; ``representatives[h]`` is a class of the class table with each id, and
    ``sizes`` each class's size (a float holding a whole number).
    """

    at: tuple[tuple[int, ...], ...]
    ids: tuple[NDArray[Any], ...]
    representatives: tuple[NDArray[Any], ...]
    sizes: NDArray[Any]


class _Lattice:
    """Integer codes of the class table's classes at every level of every QI."""

    def __init__(self, table: ClassTable, hierarchies: Mapping[str, Hierarchy]) -> None:
        self.table = table
        self.base = table.classes
        self.names = [name for name in table.quasi_identifiers if name in hierarchies]
        self.codes: dict[str, NDArray[Any]] = {}
        for name in table.quasi_identifiers:
            column = self.base.keys.column(name)
            hierarchy = hierarchies.get(name)
            self.codes[name] = _level_codes(name, column, hierarchy)
        self.heights = tuple(self.codes[name].shape[1] - 1 for name in self.names)
        # Per QI and level: the codes as one contiguous column, and a bound on them.
        self.columns = {
            name: [np.ascontiguousarray(c) for c in codes.T] for name, codes in self.codes.items()
        }
        self.widths = {
            name: [int(c.max()) + 1 if len(c) else 1 for c in columns]
            for name, columns in self.columns.items()
        }
        # The QIs in halves, each with the positions of its generalizable QIs in a node;
        # per half and its levels, the ids of the class table's classes (``_half``).
        self._halves = [
            (half, tuple(i for i, name in enumerate(self.names) if name in half))
            for half in _halves({name: codes.shape[1] for name, codes in self.codes.items()})
        ]
        self._half_ids: dict[tuple[int, tuple[int, ...]], tuple[NDArray[Any], NDArray[Any]]] = {}
        self._half_total = 0
        self._base_sizes = self.base.sizes.astype(np.float64)
        # Groupings of evaluated nodes: a node's classes coarsen those of any node below
        # it, so they are grouped from the smallest cached grouping below rather than
        # from every base class. The cached nodes are also the columns of a matrix,
        # completed when it is searched.
        self._cached: list[_Grouping] = []
        self._lengths: list[int] = []
        self._position: dict[tuple[int, ...], int] = {}
        self._cached_total = 0
        self._nodes: list[tuple[int, ...]] = []
        self._matrix = np.zeros(
            (len(self.names), 0), dtype=np.min_scalar_type(max(self.heights, default=0))
        )

    def sizes(self, levels: tuple[int, ...]) -> NDArray[Any]:
        """The sizes of the classes at the node ``levels`` (floats, in no particular order)."""
        source = self._below(levels)
        below = None if source is None else self._cached[source]
        at = tuple(tuple(map(levels.__getitem__, positions)) for _, positions in self._halves)
        # Per half: each class grouped (of ``below``, or of the table) by its id at the
        # node's levels, and a class of the table with each id.
        parts: list[tuple[NDArray[Any], NDArray[Any]]] = []
        for half, level in enumerate(at):
            if below is not None and below.at[half] == level:
                parts.append((below.ids[half], below.representatives[half]))
                continue
            ids, representatives = self._half(half, level)
            if below is not None:
                ids = ids[below.representatives[half]][below.ids[half]]
            parts.append((ids, representatives))
        pair, bound = parts[0][0], len(parts[0][1])
        for ids, representatives in parts[1:]:
            pair, bound = pair * len(representatives) + ids, bound * len(representatives)
        numbers = None
        if bound > _DIRECT_GROUPING * (len(pair) + 64):
            numbers, pair = np.unique(pair, return_inverse=True)
        totals = np.bincount(pair, weights=self._base_sizes if below is None else below.sizes)
        present = (totals > 0).nonzero()[0]
        sizes = totals[present]
        pair = present if numbers is None else numbers[present]
        ids_at_node = []
        for _, representatives in reversed(parts[1:]):
            pair, ids = np.divmod(pair, len(representatives))
            ids_at_node.append(ids)
        ids_at_node.append(pair)
        grouping = _Grouping(
            at,
            tuple(reversed(ids_at_node)),
            tuple(representatives for _, representatives in parts),
            sizes,
        )
        self._cache(levels, grouping)
        return sizes

    def _half(self, half: int, at: tuple[int, ...]) -> tuple[NDArray[Any], NDArray[Any]]:
        """Each base class's id among the distinct codes of ``half`` at its levels ``at``,
        and a base class with each id.

        The ids one level lower in a QI number a finer partition: the ids at ``at``
        number the distinct codes at ``at`` of their representatives, from the nearest
        ids kept below (or the base classes) up, one level at a time.
        """
        found = self._half_ids.get((half, at))
        if found is not None:
            return found
        names, positions = self._halves[half]
        steps = [at]
        while (half, steps[-1]) not in self._half_ids and any(steps[-1]):
            lower = steps[-1]
            q = next(q for q, level in enumerate(lower) if level)
            steps.append((*lower[:q], lower[q] - 1, *lower[q + 1 :]))
        ids, first = self._half_ids.get((half, steps[-1]), (None, np.arange(len(self.base))))
        for step in reversed(steps if ids is None else steps[:-1]):
            level = dict(zip((self.names[i] for i in positions), step, strict=True))
            representatives, index = _combine(
                (self.columns[name][level.get(name, 0)][first] for name in names),
                (self.widths[name][level.get(name, 0)] for name in names),
                ordered=False,
            )
            ids, first = index if ids is None else index[ids], first[representatives]
            self._half_ids[half, step] = (ids, first)
            self._half_total += len(ids)
            while self._half_total > _HALF_IDS:  # drop the oldest
                self._half_total -= len(self._half_ids.pop(next(iter(self._half_ids)))[0])
        assert ids is not None
        return ids, first

    def _below(self, levels: tuple[int, ...]) -> int | None:
        """The cached grouping with the fewest classes among the nodes one level below
        ``levels`` in a QI, or else among all nodes below it; None if there is none."""
        below = [
            self._position[p]
            for i in range(len(levels))
            if levels[i] and (p := (*levels[:i], levels[i] - 1, *levels[i + 1 :])) in self._position
        ]
        if not below and self._nodes:
            added = self._nodes[self._matrix.shape[1] :]
            if added:
                new = np.array(added, dtype=self._matrix.dtype).T
                self._matrix = np.concatenate([self._matrix, new], axis=1)
            node = np.array(levels, dtype=self._matrix.dtype)[:, None]
            below = np.flatnonzero((self._matrix <= node).all(axis=0)).tolist()
        return min(below, key=self._lengths.__getitem__, default=None)

    def _cache(self, levels: tuple[int, ...], grouping: _Grouping) -> None:
        """Keep the grouping of the node ``levels`` to coarsen later nodes from."""
        size = len(grouping.sizes)
        self._cached_total += size
        if self._cached_total > _CACHED:  # start afresh
            self._cached.clear()
            self._lengths.clear()
            self._position.clear()
            self._nodes.clear()
            self._matrix = self._matrix[:, :0]
            self._cached_total = size
        self._position[levels] = len(self._cached)
        self._cached.append(grouping)
        self._lengths.append(size)
        self._nodes.append(levels)

    def coded_table(self, levels: Sequence[int]) -> ClassTable:
        """The node's class table, with each QI value replaced by its code at the node."""
        level = dict(zip(self.names, levels, strict=True))
        keys = {}
        for name in self.table.quasi_identifiers:
            at = level.get(name, 0)
            labels = pa.array(np.arange(self.widths[name][at])).cast(pa.string())
            keys[name] = labels.take(self.codes[name][self.base.index, at])
        for name in self.table.sensitive:
            keys[name] = self.table.keys.column(name)
        raw = ClassTable(
            self.table.quasi_identifiers,
            self.table.sensitive,
            pa.table(keys),
            self.table.counts,
            self.table.sources,
        )
        return raw.merge()


def _halves(levels: Mapping[str, int]) -> list[list[str]]:
    """The QIs (with their numbers of levels) in two halves with about as many
    combinations of levels each: the most levels first, each to the half with fewer
    combinations so far. One half when there is one QI."""
    halves: list[list[str]] = [[], []]
    combinations = [1, 1]
    for name in sorted(levels, key=lambda name: -levels[name]):
        half = combinations.index(min(combinations))
        halves[half].append(name)
        combinations[half] *= levels[name]
    return [half for half in halves if half]


def _level_codes(name: str, column: pa.ChunkedArray, hierarchy: Hierarchy | None) -> NDArray[Any]:
    """``(classes, height + 1)`` ids of each class's value at every level of ``hierarchy``.

    A null value stays null at every level: its own id. Without a hierarchy, one column.
    """
    encoded = pc.dictionary_encode(column.combine_chunks(), null_encoding="encode")
    values: list[str | None] = encoded.dictionary.to_pylist()
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    if hierarchy is None:
        return np.asarray(indices, dtype=np.int64).reshape(-1, 1)
    present = [v for v in values if v is not None]
    _check_tree(name, hierarchy, present)
    ancestors = hierarchy.ancestors(present)
    table = np.empty((len(values), ancestors.shape[1]), dtype=np.int64)
    null_id = ancestors.max(axis=0, initial=-1) + 1
    rows = iter(ancestors)
    for i, value in enumerate(values):
        table[i] = null_id if value is None else next(rows)
    return np.asarray(table[indices])


def _check_tree(name: str, hierarchy: Hierarchy, values: Sequence[str]) -> None:
    """Refuse a hierarchy whose label at one level has two parents among ``values``.

    The written table shows labels, so two leaves with the same label at a level must
    share the levels above it; otherwise generalizing further would split a class and
    the search's monotonicity (and its agreement with the audit of the output) fails.
    """
    position = {leaf: i for i, leaf in enumerate(hierarchy.levels[0])}
    rows = [position[v] for v in values if v in position]
    for j in range(1, hierarchy.height):
        parent: dict[str, str] = {}
        for r in rows:
            label, above = hierarchy.levels[j][r], hierarchy.levels[j + 1][r]
            if parent.setdefault(label, above) != above:
                raise HierarchyError(
                    f"{hierarchy.name}: {name} value {label!r} at level {j} has two parents, "
                    f"{parent[label]!r} and {above!r}; give every value one parent"
                )


def qi_hierarchies(
    table: ClassTable, specs: Mapping[str, str | os.PathLike[str] | Hierarchy]
) -> dict[str, Hierarchy]:
    """Build the hierarchy of each QI in ``specs`` over its values in ``table``.

    Parameters
    ----------
    table : ClassTable
        The class table of the data.
    specs : mapping
        Per QI, an ARX hierarchy file, a built-in (``interval:W1,W2,...``, ``prefix[:N]``)
        or a :class:`Hierarchy` (:func:`anonaudit.measures.generalization.qi_hierarchy`).

    Returns
    -------
    dict of str to Hierarchy
    """
    result = {}
    for name, spec in specs.items():
        if name not in table.quasi_identifiers:
            raise ColumnError(f"a hierarchy is given for {name!r}, which is not a quasi-identifier")
        values = pc.unique(table.classes.keys.column(name)).to_pylist()
        result[name] = qi_hierarchy(spec, values, column=name)
    return result


def search(
    table: ClassTable,
    *,
    audit: Auditor,
    hierarchies: Mapping[str, Hierarchy],
    policy: Policy,
    suppression_limit: float = 0.0,
    max_results: int | None = 10,
    options: AuditOptions | None = None,
    prune: bool = True,
    max_work: int | None = None,
    steps: Steps | None = None,
) -> Advice:
    """Search the generalization lattice for the Pareto-best passing transformations.

    Parameters
    ----------
    table : ClassTable
        The class table of the data (records with null QIs already dropped if wanted).
    audit : Auditor
        Audits a class table under options (:func:`anonaudit.auditing.audit_table`,
        which :func:`anonaudit.auditing.advise` passes): how each transformation is
        judged.
    hierarchies : mapping of str to Hierarchy
        Per generalizable QI, its hierarchy (:func:`anonaudit.measures.generalization.qi_hierarchy`
        builds them from files and built-in specs). QIs not named are never generalized.
    policy : Policy
        The thresholds to meet (at least one).
    suppression_limit : float
        Largest share of the records, in [0, 1), that may be suppressed.
    max_results : int or None
        Transformations of the front to materialize and list (``None``: all).
    options : AuditOptions, optional
        The audit's options: the nodes are audited with its t-closeness distances and
        risk threshold (and ``policy``; nothing else of it applies to a node).
    prune : bool
        Infer verdicts by monotonicity where it holds (``False`` evaluates every node,
        the baseline the benchmark and the tests compare with).
    max_work : int, optional
        Refuse a search that must audit every node (a policy not monotone under
        suppression) when nodes times classes exceed this (:mod:`anonaudit.settings.work`).

    steps : Steps, optional
        Called once per lattice node evaluated (a progress display); the lattice's
        node count bounds them.
    Returns
    -------
    Advice
        See the module notes for the front; ``advice.passed`` is False when no node
        passes.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonaudit.hierarchy import Hierarchy
    >>> t = ClassTable.from_frame(
    ...     pd.DataFrame({"age": ["31", "32", "47", "48"], "count": [2, 1, 1, 2]}),
    ...     quasi_identifiers=["age"])
    >>> h = Hierarchy.from_rows([["31", "30-39"], ["32", "30-39"],
    ...                          ["47", "40-49"], ["48", "40-49"]])
    >>> from anonaudit.auditing import audit_table
    >>> advice = search(t, audit=audit_table, hierarchies={"age": h}, policy=Policy(k=3))
    >>> [(x.levels, x.report.k_anonymity.k) for x in advice.transformations]
    [({'age': 1}, 3)]
    """
    started = time.perf_counter()
    options = options or AuditOptions()
    _check_arguments(table, hierarchies, policy, suppression_limit, max_results, options)
    lattice = _Lattice(table, hierarchies)
    nodes = int(np.prod([h + 1 for h in lattice.heights]))
    if nodes > MAX_NODES:
        raise ParameterError(
            f"the lattice has {nodes:,} nodes (more than {MAX_NODES:,}); give hierarchies "
            "for fewer QIs or use shallower ones"
        )
    active = set(policy.active())
    monotone = prune and (suppression_limit == 0 or active <= _MONOTONE_WITH_SUPPRESSION)
    if not monotone:
        check_work(
            f"advise over {nodes:,} lattice nodes with a policy that is not monotone under "
            f"suppression ({len(lattice.base.sizes):,} classes)",
            nodes * len(lattice.base.sizes),
            max_work,
            "node-class evaluations",
        )
    judge = _Judge(lattice, policy, suppression_limit, _checker(audit, policy, options), steps)
    search = _search(lattice.heights, judge, monotone=monotone)
    verdicts, evaluated = search
    passing = _passing(verdicts)
    measured = 0
    if suppression_limit > 0:  # inferred passes: their losses are needed for the front
        for node in passing:
            if node not in judge.cache:
                judge(node)
                measured += 1
    candidates = [node for node in passing if node in judge.cache]
    front = _front(candidates, judge.cache, table.rows)
    listed = front if max_results is None else front[:max_results]
    transformations = tuple(
        _materialize(table, lattice, hierarchies, node, policy, _checker(audit, policy, options))
        for node in listed
    )
    return Advice(
        policy=policy,
        suppression_limit=suppression_limit,
        hierarchies=dict(zip(lattice.names, lattice.heights, strict=True)),
        nodes=nodes,
        evaluated=evaluated,
        pruned=nodes - evaluated,
        measured=measured,
        passing=int((verdicts == _PASS).sum()),
        monotone=monotone,
        front=len(front),
        seconds=time.perf_counter() - started,
        transformations=transformations,
        blocked_by=blocked_by(table, policy, _checker(audit, policy, options)),
    )


def blocked_by(table: ClassTable, policy: Policy, check: Check) -> tuple[Blocker, ...]:
    """The thresholds that fail on the table generalized to one class of every record.

    Generalizing merges classes, so the most general transformation possible puts every
    record in one class; suppressing that class suppresses everything, which does not
    pass. A threshold failing there fails at every node. That class has ``n`` records
    (k and the highest risk ``1/n`` hold unless the table is smaller than k) and the
    whole table's distribution of each SA: t-closeness (distance 0; Li, Li &
    Venkatasubramanian 2007), beta-likeness and delta-disclosure (no gain) hold, while
    distinct, entropy and recursive (c,l)-diversity (Machanavajjhala et al. 2007,
    Definitions 3.1-4.2) and (alpha,k)-anonymity's alpha (Wong et al. 2006) are those of
    the table's own distribution. The class is audited with the audit's comparisons.

    Parameters
    ----------
    table : ClassTable
        The class table searched.
    policy : Policy
        The thresholds.
    check : Check
        Audits a class table under ``policy`` and the audit's options.

    Returns
    -------
    tuple of Blocker
        The thresholds that fail there, each with the whole-table cause.
    """
    star = pa.repeat("*", table.keys.num_rows)
    keys = {name: star for name in table.quasi_identifiers}
    for name in table.sensitive:
        keys[name] = table.keys.column(name)
    whole = ClassTable(
        table.quasi_identifiers, table.sensitive, pa.table(keys), table.counts, table.sources
    ).merge()
    report = check(whole)
    n = whole.rows
    found: list[Blocker] = []
    if report.k_anonymity.passed is False:
        found.append(Blocker(f"k-anonymity (k = {policy.k})", f"the table has only {n:,} records"))
    if report.risk.passed is False:
        found.append(
            Blocker(
                f"re-identification risk (at most {policy.max_risk:g})",
                f"the table has only {n:,} records: one class of all of them has risk 1/{n:,}",
            )
        )
    for sa in report.sensitive:
        totals = np.sort(whole.sensitive_counts(sa).totals)[::-1]
        top = f"the whole table's most common {sa} value is {totals[0] / n:.1%} of the records"
        diversity = report.l_diversity[sa]
        verdicts = {**diversity.verdicts, **report.disclosure[sa].verdicts}
        if report.t_closeness[sa].passed is False:
            verdicts["t"] = False
        for name, passed in verdicts.items():
            if not passed:
                found.append(_blocker(name, sa, policy, totals, top, diversity.entropy))
    return tuple(found)


def _blocker(
    name: str, sa: str, policy: Policy, totals: NDArray[Any], top: str, entropy: float
) -> Blocker:
    """The :class:`Blocker` of the threshold ``name`` (a key of the checks' ``verdicts``)."""
    whole = "even one class holding every record"
    if name == "l":
        return Blocker(
            f"distinct l-diversity of {sa} (l = {policy.l})",
            f"the whole table has only {len(totals)} distinct value(s) of {sa}",
        )
    if name == "entropy_l":
        return Blocker(
            f"entropy l-diversity of {sa} (l = {policy.entropy_l:g})",
            f"the whole table's {sa} has entropy l {entropy:.4g}, and {whole} is no more "
            "diverse than that",
        )
    if name == "c" and policy.recursive is not None:
        c, l = policy.recursive
        tail = int(totals[l - 1 :].sum())
        terms = f"r{l}" if len(totals) <= l else f"r{l} + … + r{len(totals)}"
        bound = c * tail
        return Blocker(
            f"recursive ({c:g},{l})-diversity of {sa}",
            f"{top}: {whole} has r1 = {int(totals[0]):,} ≥ c·({terms}) = {c:g} × {tail:,} "
            + (f"= {bound:,.0f}" if bound.is_integer() else f"= {bound:,.2f}"),
        )
    if name == "alpha":
        return Blocker(f"(α,k)-anonymity of {sa} (α = {policy.alpha:g})", top)
    label = {"t": "t-closeness", "beta": "β-likeness", "delta": "δ-disclosure"}[name]
    return Blocker(f"{label} of {sa} ({name} = {getattr(policy, name):g})", f"it fails for {whole}")


def _check_arguments(
    table: ClassTable,
    hierarchies: Mapping[str, Hierarchy],
    policy: Policy,
    suppression_limit: float,
    max_results: int | None,
    options: AuditOptions,
) -> None:
    if not policy.active():
        raise ParameterError("set at least one threshold (-k, -l, -t, ...) to advise on")
    if not hierarchies:
        raise ParameterError("give a hierarchy for at least one QI (--hierarchy COL=SPEC)")
    for name in hierarchies:
        if name not in table.quasi_identifiers:
            raise ColumnError(
                f"a hierarchy is given for {name!r}, which is not a quasi-identifier "
                f"({', '.join(table.quasi_identifiers)})"
            )
    if not 0 <= suppression_limit < 1:
        raise ParameterError(f"the suppression limit must lie in [0, 1) (got {suppression_limit})")
    if max_results is not None and max_results < 1:
        raise ParameterError(f"max_results must be at least 1 (got {max_results})")


class _Judge:
    """Evaluates nodes, caching each verdict with the sizes of its kept classes."""

    def __init__(
        self,
        lattice: _Lattice,
        policy: Policy,
        suppression_limit: float,
        check: Check,
        steps: Steps | None = None,
    ) -> None:
        self.lattice = lattice
        self.steps = steps
        self.policy = policy
        self.check = check
        self.rows = lattice.table.rows
        self.allowed = int(np.floor(suppression_limit * self.rows + TOLERANCE))
        self.sizes_only = set(policy.active()) <= _SIZE_CRITERIA
        self.cache: dict[tuple[int, ...], _Verdict] = {}

    def __call__(self, node: tuple[int, ...]) -> bool:
        verdict = self.cache.get(node)
        if verdict is None:
            verdict = self.cache[node] = self._evaluate(node)
            if self.steps is not None:
                self.steps()
        return verdict.passed

    def _evaluate(self, node: tuple[int, ...]) -> _Verdict:
        sizes = self.lattice.sizes(node)
        kept = sizes[~_too_small(sizes, self.policy)]
        suppressed = self.rows - int(kept.sum())
        if suppressed > self.allowed or not len(kept):
            return _Verdict(False, suppressed, kept)
        if self.sizes_only:
            return _Verdict(True, suppressed, kept)
        report, kept, suppressed, _ = _suppress(self.lattice.coded_table(node), self.check)
        passed = report is not None and bool(report.passed) and suppressed <= self.allowed
        return _Verdict(passed, suppressed, kept.classes.sizes if kept.rows else sizes)


def _checker(audit: Auditor, policy: Policy, options: AuditOptions) -> Check:
    """The audit of a node's class table under ``policy``, with the audit's t-closeness
    distances and risk threshold, and no suppression advice of its own."""
    node_options = AuditOptions(
        policy=policy,
        risk_threshold=options.risk_threshold,
        distances=options.distances,
        analyses=Analyses(suppression=False),
    )
    return functools.partial(audit, options=node_options)


def _too_small(sizes: NDArray[Any], policy: Policy) -> NDArray[Any]:
    """Classes failing k or the highest-risk bound: the audit's own comparisons.

    k-anonymity (Sweeney 2002) needs ``|E| >= k``; the prosecutor risk ``1/|E|``
    (El Emam & Dankar 2008) must be at most ``max_risk`` (with the audit's tolerance).
    """
    small = sizes < (policy.k or 0)
    if policy.max_risk is not None:
        small |= 1.0 / sizes > policy.max_risk + TOLERANCE
    return small


def _suppress(table: ClassTable, check: Check) -> tuple[Audit | None, ClassTable, int, pa.Table]:
    """Audit ``table``; if it fails, suppress as
    :func:`~anonaudit.advice.suppression.suppression_advice` advises.

    Returns the audit of the kept records (``None`` when suppression cannot pass or
    leaves nothing), their class table, the records suppressed and the QI values of
    the suppressed classes.
    """
    report = check(table)
    if report.passed:
        return report, table, 0, table.classes.keys.slice(0, 0)
    advice, final = advice_and_audit(report, check)
    return final, advice.remaining, advice.records, advice.keys


def _nodes(heights: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every node, lowest height first (then in lexicographic order)."""
    every = np.indices([h + 1 for h in heights]).reshape(len(heights), -1)
    order = np.lexsort((*every[::-1], every.sum(axis=0)))
    return map(tuple, every[:, order].T.tolist())


def _search(heights: Sequence[int], judge: _Judge, *, monotone: bool) -> tuple[NDArray[Any], int]:
    """Verdicts of every node (an array over the lattice) and how many were evaluated.

    With ``monotone``, Flash's strategy: from each lowest unknown node a chain of
    unknown nodes up to the top, binary-searched for its lowest passing node; a pass
    marks the node's generalizations (a box above it), a failure its specializations.
    """
    status = np.zeros([h + 1 for h in heights], dtype=np.int8)
    evaluated = 0
    for start in _nodes(heights):
        if status[start] != _UNKNOWN:
            continue
        if not monotone:
            status[start] = _PASS if judge(start) else _FAIL
            evaluated += 1
            continue
        chain = _chain(start, heights, status)
        low, high = 0, len(chain) - 1
        while low <= high:
            middle = (low + high) // 2
            node = chain[middle]
            if status[node] == _UNKNOWN:
                evaluated += 1
                if judge(node):
                    box = status[tuple(slice(level, None) for level in node)]
                    box[box == _UNKNOWN] = _PASS
                    status[node] = _PASS
                else:
                    box = status[tuple(slice(0, level + 1) for level in node)]
                    box[box == _UNKNOWN] = _FAIL
                    status[node] = _FAIL
            if status[node] == _PASS:
                high = middle - 1
            else:
                low = middle + 1
    return status, evaluated


def _chain(
    start: tuple[int, ...], heights: Sequence[int], status: NDArray[Any]
) -> list[tuple[int, ...]]:
    """A path of unknown nodes from ``start`` upwards, raising one level at a time."""
    chain = [start]
    node = start
    while True:
        for q, h in enumerate(heights):
            if node[q] < h:
                above = (*node[:q], node[q] + 1, *node[q + 1 :])
                if status[above] == _UNKNOWN:
                    chain.append(above)
                    node = above
                    break
        else:
            return chain


def _passing(status: NDArray[Any]) -> list[tuple[int, ...]]:
    """The passing nodes, in lexicographic order."""
    return list(map(tuple, np.argwhere(status == _PASS).tolist()))


def _losses(node: tuple[int, ...], verdict: _Verdict, rows: int) -> tuple[float, ...]:
    """The four losses the front minimizes (see the module notes)."""
    kept = verdict.kept_sizes
    dm_star = float(np.square(kept, dtype=np.float64).sum()) + verdict.suppressed * rows
    average = float(kept.sum()) / len(kept)
    return (dm_star, average, float(sum(node)), float(verdict.suppressed))


def _front(
    candidates: Sequence[tuple[int, ...]], cache: Mapping[tuple[int, ...], _Verdict], rows: int
) -> list[tuple[int, ...]]:
    """The non-dominated candidates, least DM* first, then suppressed, height, levels.

    A dominated candidate is dominated by one on the front too (domination is
    transitive), which comes before it in the lexicographic order of the losses: in
    that order, each block of candidates is compared with itself and the front so far.
    """
    if not candidates:
        return []
    losses = np.array([_losses(node, cache[node], rows) for node in candidates])
    order = np.lexsort(losses.T[::-1])
    front = order[:0]
    for start in range(0, len(order), _FRONT_BLOCK):
        block = order[start : start + _FRONT_BLOCK]
        others = np.r_[front, block]
        no_worse = np.ones((len(block), len(others)), dtype=bool)
        better = np.zeros_like(no_worse)
        for loss in losses.T:  # one loss at a time: block x others
            no_worse &= loss[others] <= loss[block, None]
            better |= loss[others] < loss[block, None]
        front = np.r_[front, block[~(no_worse & better).any(axis=1)]]
    found = front.tolist()
    found.sort(key=lambda i: (losses[i, 0], losses[i, 3], losses[i, 2], candidates[i]))
    return [candidates[i] for i in found]


def _materialize(
    table: ClassTable,
    lattice: _Lattice,
    hierarchies: Mapping[str, Hierarchy],
    node: tuple[int, ...],
    policy: Policy,
    check: Check,
) -> Transformation:
    """Generalize ``table`` to ``node`` with the string recoding, suppress, and audit."""
    levels = dict(zip(lattice.names, node, strict=True))
    generalization = Generalization(
        hierarchies={name: hierarchies[name] for name in lattice.names}, levels=levels
    )
    report, kept, suppressed, keys = _suppress(generalization.apply(table), check)
    if report is None:  # the search lists passing nodes only
        raise AssertionError(f"transformation {levels} does not pass after suppression")
    return Transformation(
        levels=levels,
        suppressed=suppressed,
        suppressed_classes=keys,
        generalization=generalization,
        report=report,
        information_loss=information_loss(
            kept, k=policy.k, suppressed=suppressed, generalization=generalization
        ),
    )
