"""The audit of published tables: the primary rules, then the attacker over all of them.

:func:`audit_tables` applies the primary rules to every cell of every table
(:mod:`anonaudit.tables.rules`), then, for every population, the attacker's arithmetic
over all its tables together (:mod:`anonaudit.tables.attack`), and reports as findings:

* ``published``: a cell a primary rule makes sensitive, published as it is;
* ``exact``: an unpublished cell the published cells pin to one value (a certificate
  says how);
* ``narrow``: a sensitive cell whose interval is narrower than the protection its rule
  requires, above or below (Hundepool et al., *Statistical Disclosure Control*, Wiley
  2012, section 4.3.2: upper and lower protection levels);
* ``group``: a group of suppressed cells whose sum is published (a margin less its
  published cells) and that fails the rule itself: a sum below the threshold
  (sdcTools/UserSupport#307), or one dominated by its contributors together (#160);
* ``coalition``: a suppressed cell of at most ``coalition + 1`` units whose members,
  each knowing their own contribution, learn another suppressed cell exactly by
  subtracting themselves (the *singleton problem* of Lupp & Langsrud 2021, checked on
  true values: ``values`` must be given);
* ``attribute`` and ``zero``: the group attribute and zero disclosures of the rules;
* ``differencing``: tables of nested populations (a sub-population, one month within a
  quarter, declared with ``nested``) whose difference, cell by cell, is a table of the
  people in one and not the other, each cell's interval proved over the tables of both
  populations together (:func:`_rest_intervals`); the rules are applied to the cells
  known: a small difference
  singles out its people, and a difference whose group lies in one category discloses
  their attribute (Duncan & Lambert 1986's differencing; Hundepool et al. 2012, section
  4.2.3, "disclosure by differencing").

The audit passes when there is no finding but ``zero`` ones under the ``report`` policy.
It is deterministic: the same tables give the same findings, in the same order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from anonaudit.errors import InputError
from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.tables.attack import Interval, attack, attack_last, describe, no_proof
from anonaudit.tables.rules import (
    PrimaryResult,
    Rules,
    dominance_rule,
    p_percent_rule,
    primary_rules,
)
from anonaudit.tables.system import TOLERANCE, Reduced, build, reduce

__all__ = ["FINDINGS", "CellInterval", "Finding", "TablesAudit", "audit_tables"]

FindingKind = Literal[
    "published",
    "exact",
    "narrow",
    "group",
    "coalition",
    "differencing",
    "attribute",
    "zero",
]
#: The kinds of finding, in the order they are reported.
FINDINGS: tuple[FindingKind, ...] = (
    "exact",
    "narrow",
    "group",
    "coalition",
    "differencing",
    "published",
    "attribute",
    "zero",
)


@dataclass(frozen=True)
class Finding:
    """One disclosure the audit found.

    Attributes
    ----------
    kind : str
        One of :data:`FINDINGS`.
    table : str
        The table it is in.
    cells : tuple of str
        The cells concerned, by their codes.
    rule : str
        The primary rule concerned (``""`` when none).
    text : str
        What it discloses, in one line, with no value of the data.
    text_values : str
        The same with the values.
    proofs : tuple of str
        Certificates (bounds proved by combinations of published cells), no values.
    proofs_values : tuple of str
        The same with the published values and the bound.
    fails : bool
        Whether it fails the audit.
    """

    kind: FindingKind
    table: str
    cells: tuple[str, ...]
    rule: str
    text: str
    text_values: str
    proofs: tuple[str, ...] = ()
    proofs_values: tuple[str, ...] = ()
    fails: bool = True


@dataclass(frozen=True)
class CellInterval:
    """What the attacker proves of one unpublished cell.

    Attributes
    ----------
    table, cell : str
        Where it is.
    lower, upper : float
        Its interval (``upper`` may be ``inf``).
    method : str
        ``arithmetic``, ``lp`` or ``integer``.
    """

    table: str
    cell: str
    lower: float
    upper: float
    method: str


@dataclass(frozen=True)
class TablesAudit:
    """The audit of a set of published tables.

    Attributes
    ----------
    tables : TableSet
        The tables as read.
    rules : Rules
        The primary rules applied.
    primary : tuple of PrimaryResult
        Per table, the rules' verdict on each cell.
    intervals : tuple of CellInterval
        Every unpublished cell's interval.
    findings : tuple of Finding
        What discloses, in the order of :data:`FINDINGS`, then table and cell.
    components : int
        Connected components the attacker's programs were split into.
    """

    tables: TableSet
    rules: Rules
    primary: tuple[PrimaryResult, ...]
    intervals: tuple[CellInterval, ...]
    findings: tuple[Finding, ...]
    components: int

    @property
    def passed(self) -> bool:
        """Whether the tables may go out as they are: no finding that fails."""
        return not any(f.fails for f in self.findings)

    def count(self, kind: str) -> int:
        """Findings of one kind."""
        return sum(1 for f in self.findings if f.kind == kind)


def audit_tables(
    tables: TableSet,
    rules: Rules | None = None,
    *,
    values: Mapping[str, ArrayLike] | None = None,
    nested: Mapping[str, str] | None = None,
) -> TablesAudit:
    """Audit published tables jointly (module docstring).

    Parameters
    ----------
    tables : TableSet
        The tables (:func:`anonaudit.sources.published.read_tables`).
    rules : Rules, optional
        The primary rules' parameters.
    values : mapping of str to array, optional
        Per table name, the true value of every cell (the unsuppressed table), for the
        rules and the protection levels of suppressed cells.
    nested : mapping of str to str, optional
        Populations within others: ``{"under 20 years": "under 21 years"}``; their tables
        of the same dimensions are differenced.

    Returns
    -------
    TablesAudit
        The findings, each with its certificate where the attacker's arithmetic is one.
    """
    rules = Rules() if rules is None else rules
    values = values or {}
    primary = tuple(
        primary_rules(t, tables.dimensions, rules=rules, values=values.get(t.name))
        for t in tables.tables
    )
    by_name = {t.name: (t, p) for t, p in zip(tables.tables, primary, strict=True)}
    findings: list[Finding] = []
    for table, result in by_name.values():
        findings += _published(table, result)
        findings += _attributes(table, result)
    intervals: list[CellInterval] = []
    components = 0
    for population in tables.populations:
        for kind in ("count", "sum"):
            chosen = tuple(
                t for t in tables.tables if t.population == population and t.kind == kind
            )
            if not chosen:
                continue
            reduced = reduce(build(TableSet(chosen, tables.dimensions)))
            components += len(set(reduced.component.tolist()))
            found = attack(reduced, prove=_needs_proof(reduced, by_name))
            for interval in found:
                table, result = _where(reduced, interval.row, by_name)
                cell = int(reduced.system.cell[interval.row])
                intervals.append(
                    CellInterval(
                        table.name,
                        table.label(cell),
                        interval.lower,
                        interval.upper,
                        interval.method,
                    )
                )
                findings += _interval_findings(reduced, interval, table, result)
            findings += _coalitions(reduced, found, by_name, rules)
    findings += _groups(tables.tables, tables, rules)
    findings += _differencing(tables, intervals, nested or {}, rules)
    order = {kind: i for i, kind in enumerate(FINDINGS)}
    unique = {(f.kind, f.table, f.cells): f for f in findings}  # a group seen from two rows
    findings = sorted(unique.values(), key=lambda f: (order[f.kind], f.table, f.cells))
    return TablesAudit(
        tables=tables,
        rules=rules,
        primary=primary,
        intervals=tuple(intervals),
        findings=tuple(findings),
        components=components,
    )


def _where(
    reduced: Reduced, row: int, by_name: Mapping[str, tuple[PublishedTable, PrimaryResult]]
) -> tuple[PublishedTable, PrimaryResult]:
    """The table (and its rules' result) of a system row."""
    table = reduced.system.tables.tables[int(reduced.system.table[row])]
    return by_name[table.name]


def _too_narrow(result: PrimaryResult, cell: int, lower: float, upper: float) -> str:
    """Which side of a sensitive cell's interval falls short of its protection level
    (``""``: neither, or the cell's true value is not known)."""
    if not (result.sensitive[cell] and result.evaluated[cell]):
        return ""
    value = float(result.values[cell])
    above = float(result.upper_protection[cell])
    below = float(result.lower_protection[cell])
    short = []
    if above > 0 and upper - value < above - TOLERANCE:
        short.append("above")
    if below > 0 and value - lower < below - TOLERANCE:
        short.append("below")
    return " and ".join(short)


def _needs_proof(
    reduced: Reduced, by_name: Mapping[str, tuple[PublishedTable, PrimaryResult]]
) -> Callable[[int, float, float], bool]:
    def prove(row: int, lower: float, upper: float) -> bool:
        if upper - lower <= TOLERANCE:
            return True
        _, result = _where(reduced, row, by_name)
        return bool(_too_narrow(result, int(reduced.system.cell[row]), lower, upper))

    return prove


def _proofs(reduced: Reduced, interval: Interval) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The interval's certificates, without and with values; one ``=`` line when the
    same published cells prove both bounds (an exact disclosure by arithmetic)."""
    cell = reduced.system.label(interval.row)
    proofs = interval.proofs
    if len(proofs) == 2 and proofs[0].terms == proofs[1].terms:
        plain = describe(reduced, proofs[0], show_values=False).replace(">=", "=", 1)
        full = describe(reduced, proofs[0], show_values=True).replace(">=", "=", 1)
        return (f"[{cell}] {plain}",), (f"[{cell}] {full}",)
    return (
        tuple(f"[{cell}] {describe(reduced, p, show_values=False)}" for p in proofs),
        tuple(f"[{cell}] {describe(reduced, p, show_values=True)}" for p in proofs),
    )


def _interval_findings(
    reduced: Reduced, interval: Interval, table: PublishedTable, result: PrimaryResult
) -> list[Finding]:
    cell = int(reduced.system.cell[interval.row])
    label = table.label(cell)
    plain, full = _proofs(reduced, interval)
    if interval.width <= TOLERANCE:
        return [
            Finding(
                "exact",
                table.name,
                (label,),
                str(result.rule[cell]),
                f"{label}: published as {table.shown[cell]}, but the published cells "
                "give its value exactly",
                f"{label}: published as {table.shown[cell]}, but the published cells "
                f"give its value: {interval.lower:g}",
                plain,
                full,
            )
        ]
    side = _too_narrow(result, cell, interval.lower, interval.upper)
    if not side:
        return []
    return [
        Finding(
            "narrow",
            table.name,
            (label,),
            str(result.rule[cell]),
            f"{label}: the published cells narrow it {side} its value more than the "
            f"{result.rule[cell]} rule allows",
            f"{label}: proved to lie in [{interval.lower:g}, {interval.upper:g}]; the "
            f"{result.rule[cell]} rule asks for {result.upper_protection[cell]:g} above and "
            f"{result.lower_protection[cell]:g} below its value {result.values[cell]:g}",
            plain,
            full,
        )
    ]


def _published(table: PublishedTable, result: PrimaryResult) -> list[Finding]:
    """Sensitive cells published as they are."""
    cells = np.flatnonzero(result.sensitive & table.exact & result.evaluated)
    return [
        Finding(
            "published",
            table.name,
            (table.label(int(c)),),
            str(result.rule[c]),
            f"{table.label(int(c))}: published, but {result.reason(int(c), redact=True)}",
            f"{table.label(int(c))}: published as {table.shown[c]}, but "
            f"{result.reason(int(c), redact=False)}",
        )
        for c in cells
        if result.rule[c] not in ("group", "zero")  # reported with their groups
    ]


def _attributes(table: PublishedTable, result: PrimaryResult) -> list[Finding]:
    """The group attribute and zero disclosures of a count table."""
    zero_fails = result.rules.zeros == "sensitive"
    return [
        Finding(
            "attribute" if g.kind == "group" else "zero",
            table.name,
            (table.label(g.cell),),
            g.kind,
            g.describe(redact=True),
            g.describe(redact=False),
            fails=g.kind == "group" or zero_fails,
        )
        for g in result.group_disclosures
    ]


def _groups(tables: Sequence[PublishedTable], tables_set: TableSet, rules: Rules) -> list[Finding]:
    """Groups of suppressed cells whose sum a published cell gives, failing the rule
    themselves (module docstring): in each table, a published cell whose children along
    one dimension are all in the table, two or more of them suppressed and the rest
    published, gives the suppressed ones' sum."""
    findings = []
    for table in tables:
        index = {tuple(str(c[i]) for c in table.codes): i for i in range(len(table))}
        exact, suppressed = table.exact, table.suppressed  # built once, not per cell
        for k, name in enumerate(table.dimensions):
            children: dict[str, list[str]] = {}
            for code, parent in tables_set.dimensions[name].parents.items():
                children.setdefault(parent, []).append(code)
            for row in np.flatnonzero(exact):
                codes = [str(c[row]) for c in table.codes]
                below = children.get(codes[k], [])
                cells = [index.get((*codes[:k], child, *codes[k + 1 :])) for child in below]
                if len(cells) < 2 or any(c is None for c in cells):
                    continue
                members = [c for c in cells if c is not None]
                hidden = [c for c in members if suppressed[c]]
                shown = [c for c in members if exact[c]]
                if len(hidden) < 2 or len(hidden) + len(shown) != len(members):
                    continue
                total = float(table.lower[row]) - float(table.lower[shown].sum())
                failing = _group_rule(table, hidden, total, rules)
                if failing:
                    findings.append(_group_finding(table, int(row), hidden, total, failing))
    return findings


def _group_finding(
    table: PublishedTable, row: int, hidden: Sequence[int], total: float, failing: str
) -> Finding:
    """The finding of a group of suppressed cells whose published sum fails ``failing``."""
    labels = tuple(table.label(i) for i in hidden)
    where = f"{table.name}: {table.label(row)}"
    return Finding(
        "group",
        table.name,
        labels,
        failing,
        f"the {len(labels)} suppressed cells {'; '.join(labels)} sum to a value [{where}] "
        f"less its published cells gives, and that sum fails the {failing} rule",
        f"the {len(labels)} suppressed cells {'; '.join(labels)} sum to {total:g} "
        f"([{where}] {table.shown[row]} less its published cells), which fails the "
        f"{failing} rule",
    )


def _group_rule(
    table: PublishedTable,
    cells: Sequence[int],
    total: float,
    rules: Rules,
) -> str:
    """The rule a group of suppressed cells, taken as one cell of sum ``total``, fails."""
    if table.kind == "count":
        return "threshold" if 0 < total < rules.threshold else ""
    if not table.contributions:
        return ""
    pooled = np.sort(np.concatenate([table.contributions[c] for c in cells]))[::-1]
    if (pooled < 0).any() or total <= 0:
        return ""
    dominant = np.asarray([pooled[: rules.dominance_n].sum()])
    if dominance_rule(dominant, np.asarray([total]), k=rules.dominance_k).sensitive[0]:
        return "dominance"
    rest = np.asarray([pooled[rules.coalition + 1 :].sum()])
    if p_percent_rule(np.asarray([pooled[0]]), rest, p=rules.p).sensitive[0]:
        return "p_percent"
    return ""


def _differencing(
    tables: TableSet,
    intervals: Sequence[CellInterval],
    nested: Mapping[str, str],
    rules: Rules,
) -> list[Finding]:
    """The rules applied to the difference of each pair of nested tables (module
    docstring)."""
    known = {(i.table, i.cell): (i.lower, i.upper) for i in intervals}
    findings: list[Finding] = []
    for child, parent in sorted(nested.items()):
        for small in (t for t in tables.tables if t.population == child):
            for large in (t for t in tables.tables if t.population == parent):
                if set(small.dimensions) == set(large.dimensions):
                    _check_within(large, small, known)
                    rest = _rest_intervals(tables, large, small)
                    difference = _difference(large, small, rest)
                    findings += _difference_findings(difference, tables, rules)
    return findings


#: The dimension that splits a population into a sub-population and the rest of it
#: (:func:`_rest_intervals`); a NUL starts it, so no table read from a file has it.
_PART = "\x00part"
_SUB, _REST, _BOTH = "sub-population", "rest", "population"


def _rest_intervals(
    tables: TableSet, large: PublishedTable, small: PublishedTable
) -> list[tuple[float, float]]:
    """Per cell of ``large``, the interval of the same cell counted over the rest of its
    population (the people not in ``small``'s), proved over every table of both
    populations together.

    The two populations become one, split by a dimension of two codes (the
    sub-population and the rest): a table of the sub-population is that dimension's
    first code, a table of the population its total, and the rest a table of unknown
    cells. The attacker's intervals of those cells (:func:`attack`) then use every
    equation of both populations at once and that no cell of the rest is negative: the
    difference of two suppression patterns is bounded as tightly as of two published
    cells.
    """
    kind = large.kind
    split = {_PART: Dimension.flat(_PART, [_SUB, _REST], _BOTH)}

    def tagged(table: PublishedTable, code: str, name: str | None = None) -> PublishedTable:
        return dataclasses.replace(
            table,
            name=name or table.name,
            dimensions=(*table.dimensions, _PART),
            codes=(*table.codes, np.full(len(table), code)),
            population=_BOTH,
        )

    unknown = np.full(len(large), np.inf)
    rest = dataclasses.replace(
        tagged(large, _REST, name=f"{large.name} - {small.name}"),
        lower=np.zeros(len(large)),
        upper=unknown,
        state=np.full(len(large), "suppressed"),
        shown=np.full(len(large), "x"),
        contributions=(),
        holdings=(),
    )
    joint = (
        *(tagged(t, _SUB) for t in tables.of_population(small.population).tables),
        *(tagged(t, _BOTH) for t in tables.of_population(large.population).tables),
        rest,
    )
    chosen = tuple(t for t in joint if t.kind == kind)
    system = build(TableSet(chosen, {**tables.dimensions, **split}))
    bounds = [(0.0, math.inf)] * len(large)
    for interval in attack_last(system):
        bounds[int(system.cell[interval.row])] = (interval.lower, interval.upper)
    return bounds


def _check_within(
    large: PublishedTable,
    small: PublishedTable,
    known: Mapping[tuple[str, str], tuple[float, float]],
) -> None:
    """Refuse a sub-population that counts more than its population in some cell.

    Raises
    ------
    InputError
        A cell of the sub-population above the same cell of the population.
    """
    index = _matching(large, small)
    for i, j in index.items():
        if _bounds(large, i, known)[1] < _bounds(small, j, known)[0]:
            raise InputError(
                f"{small.name}: {small.label(j)} counts more than {large.name} does; a "
                "population declared within another cannot (check --within)"
            )


def _matching(large: PublishedTable, small: PublishedTable) -> dict[int, int]:
    """Per cell of ``large``, the cell of ``small`` with the same codes (where there is one)."""
    order = [small.dimensions.index(d) for d in large.dimensions]
    index = {tuple(str(small.codes[k][i]) for k in order): i for i in range(len(small))}
    found = {}
    for i in range(len(large)):
        j = index.get(tuple(str(c[i]) for c in large.codes))
        if j is not None:
            found[i] = j
    return found


def _bounds(
    table: PublishedTable, i: int, known: Mapping[tuple[str, str], tuple[float, float]]
) -> tuple[float, float]:
    """A cell's interval: as published, or as the attacker proved it."""
    if table.exact[i]:
        return float(table.lower[i]), float(table.upper[i])
    return known.get((table.name, table.label(i)), (float(table.lower[i]), math.inf))


def _difference(
    large: PublishedTable, small: PublishedTable, rest: Sequence[tuple[float, float]]
) -> PublishedTable:
    """``large`` less ``small`` cell by cell, each cell's interval ``rest``'s (the cells
    both tables have)."""
    cells, lower, upper, state, shown = [], [], [], [], []
    for i, j in _matching(large, small).items():
        low, high = rest[i]
        cells.append(i)
        lower.append(low)
        upper.append(high)
        state.append("published" if high - low <= TOLERANCE else "suppressed")
        shown.append(f"{large.shown[i]} - {small.shown[j]}")
    rows = np.asarray(cells, dtype=np.int64)
    return PublishedTable(
        f"{large.name} - {small.name}",
        large.kind,
        large.dimensions,
        tuple(c[rows] for c in large.codes),
        np.asarray(lower),
        np.asarray(upper),
        np.asarray(state),
        np.asarray(shown),
        population=f"{large.population} - {small.population}",
    )


def _difference_findings(
    difference: PublishedTable, tables: TableSet, rules: Rules
) -> list[Finding]:
    """What the rules find in a difference: small cells known, group attributes."""
    result = primary_rules(difference, tables.dimensions, rules=rules)
    found = []
    for c in np.flatnonzero(result.sensitive & difference.exact & result.evaluated):
        rule = str(result.rule[c])
        if rule in ("group", "zero"):
            continue
        label = difference.label(int(c))
        found.append(
            Finding(
                "differencing",
                difference.name,
                (label,),
                rule,
                f"{label}: the difference of the two tables singles out a small group "
                f"({result.reason(int(c), redact=True)})",
                f"{label}: {difference.shown[c]} = {difference.lower[c]:g}: "
                f"{result.reason(int(c), redact=False)}",
            )
        )
    for g in result.group_disclosures:
        if g.kind == "group":
            found.append(
                Finding(
                    "differencing",
                    difference.name,
                    (difference.label(g.cell),),
                    "group",
                    "in the difference of the two tables: " + g.describe(redact=True),
                    "in the difference of the two tables: " + g.describe(redact=False),
                )
            )
    return found


#: Coalition cells checked per population at most (each costs one reduction of the
#: system); more are reported as not checked.
MAX_COALITION_CHECKS = 200


def _coalitions(
    reduced: Reduced,
    found: Sequence[Interval],
    by_name: Mapping[str, tuple[PublishedTable, PrimaryResult]],
    rules: Rules,
) -> list[Finding]:
    """Suppressed cells whose few members, knowing themselves, pin another suppressed
    cell (module docstring): the cell's row taken as published at its true value, the
    intervals recomputed, and every cell then exact that was not is a finding."""
    system = reduced.system
    exact_before = {i.row for i in found if i.width <= TOLERANCE}
    small = []
    for interval in found:
        table, result = _where(reduced, interval.row, by_name)
        cell = int(system.cell[interval.row])
        value = float(result.values[cell])
        small_cell = result.evaluated[cell] and 0 < value <= rules.coalition + 1
        if small_cell and interval.row not in exact_before:
            small.append((interval.row, value, table))
    findings = []
    free = reduced.free_matrix.tocsc()
    # Per unpublished cell and component, whether the cell's part there is open (not one
    # value): knowing a cell changes only the components its free cells lie in, so a
    # cell with an open part elsewhere stays open.
    opened = [(i.row, c) for i in found for c, low, high in i.parts if high - low > TOLERANCE]
    open_row = np.asarray([r for r, _ in opened], dtype=np.int64)
    open_component = np.asarray([c for _, c in opened], dtype=np.int64)
    for row, value, table in small[:MAX_COALITION_CHECKS]:
        lower, upper = system.lower.copy(), system.upper.copy()
        lower[row] = upper[row] = value
        known = reduce(dataclasses.replace(system, lower=lower, upper=upper))
        members = table.label(int(system.cell[row]))
        linked = np.zeros(int(reduced.component.max(initial=-1)) + 1, dtype=bool)
        linked[reduced.component[reduced.free_matrix[row].indices]] = True
        nearby = np.diff(free[:, linked[reduced.component]].tocsr().indptr) > 0
        nearby[open_row[~linked[open_component]]] = False
        # In this process: a pool started per check would cost more than it saves.
        for other in attack(known, prove=no_proof, rows=nearby, workers=1):
            if other.width <= TOLERANCE and other.row != row and other.row not in exact_before:
                where = system.label(other.row)
                findings.append(
                    Finding(
                        "coalition",
                        table.name,
                        (members, where),
                        "coalition",
                        f"the few members of {members} (a suppressed cell), each knowing "
                        f"themselves, learn [{where}] exactly by subtraction",
                        f"the {value:g} member(s) of {members}, knowing themselves, learn "
                        f"[{where}] = {other.lower:g} by subtraction",
                    )
                )
    if len(small) > MAX_COALITION_CHECKS:
        findings.append(
            Finding(
                "coalition",
                small[MAX_COALITION_CHECKS][2].name,
                (),
                "coalition",
                f"{len(small) - MAX_COALITION_CHECKS} more small suppressed cells were not "
                f"checked for coalitions (at most {MAX_COALITION_CHECKS} per population)",
                f"{len(small) - MAX_COALITION_CHECKS} more small suppressed cells were not "
                f"checked for coalitions (at most {MAX_COALITION_CHECKS} per population)",
            )
        )
    return findings
