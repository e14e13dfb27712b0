"""The primary rules: which cells of a published table an office must protect, and how much.

A statistical office decides cell by cell, on the *true* values, which cells may not be
published as they are (the *primary* or *sensitive* cells), and for each the protection
it needs: how far from the true value an attacker's interval must reach above it (the
upper protection level) and below it (the lower one). The attacker's arithmetic
(:mod:`anonaudit.tables.attack`) then checks that what a reader can prove of each
sensitive cell is at least that wide. The rules, in the order that names a cell's rule
when several flag it (:data:`RULES`):

==============  ==================================================================  =======
rule            a cell is sensitive when                                            tables
==============  ==================================================================  =======
``threshold``   ``0 < count < threshold``; ``0 < contributors < min_contributors``  both
``coalition``   ``1 <= units <= coalition + 1``: a coalition of the others can      both
                subtract itself and single out the last one
``dominance``   ``x1 + ... + xn > k/100 X``                                         sums
``p_percent``   ``X - x1 - ... - x(c+1) < p/100 x1``                                sums
``pq``          ``X - x1 - ... - x(c+1) < p/q x1``                                  sums
``group``       its group (the other dimensions' codes) lies in it, all but a       counts
                coalition of at most ``coalition`` members
``zero``        a zero in a non-empty group (counts); a zero sum of contributions   both
                (sums): sensitive only under ``zeros="sensitive"``
``assumed``     suppressed, and its true value was not given                        both
==============  ==================================================================  =======

(``X`` is the cell's sum, ``x1 >= x2 >= ...`` its contributions, the contributors of one
holding summed into one first, and ``c`` the coalition size.) The definitions are those of
Hundepool et al., *Statistical Disclosure Control*, Wiley 2012, chapter 4 (section 4.2,
"Disclosure control concepts for magnitude tabular data", table of sensitivity rules and
table of upper protection levels) and chapter 5 (section 5.2, "Disclosure risks" of
frequency tables: group attribute and within-group disclosure), as kept in the SDC
handbook's current text (sdcTools/HandbookSDC); the ``group`` rule with a coalition is
Lupp & Langsrud 2021 ("Suppression of directly-disclosive cells in frequency tables",
UNECE/Eurostat Expert Meeting on Statistical Data Confidentiality), as implemented by
Statistics Norway in SSBtools' ``FindDisclosiveCells`` and GaussSuppression's
``SuppressDirectDisclosure`` (their ``coalition``, 1 by default).

**True values.** The rules are applied to the true values, which the audit has only when
the user gives them: the contributions behind a magnitude table (its microdata), or the
unsuppressed counts (``values``). A cell published as it is has its value; a suppressed
or rounded cell whose true value was not given cannot be judged: it is not
``evaluated``, and a suppressed one is reported as *unknown, assumed sensitive* (rule
``assumed``, protection 0: without its value only an exact disclosure can be judged).

**Redaction.** :meth:`PrimaryResult.reason` and :meth:`GroupDisclosure.describe` print no
number of the data unless ``redact=False``; a group disclosure resting on an unpublished
value is not spelled out either. The structured fields hold everything, and the renderer
decides.

Examples
--------
A cell of contributions 100, 50 and 9 fails the p% rule (``159 - 100 - 50 = 9 < 10``)
and needs 1 of protection (``10/100 * 100 - 9``); one of 40, 30, 20 and 10 passes:

>>> import numpy as np
>>> from anonaudit.published import Dimension, PublishedTable
>>> sums = np.array([159.0, 100.0])
>>> table = PublishedTable(
...     "turnover", "sum", ("sector",), (np.array(["mining", "retail"]),), sums, sums,
...     np.array(["published", "published"]), np.array(["159", "100"]),
...     contributions=(np.array([100.0, 50.0, 9.0]), np.array([40.0, 30.0, 20.0, 10.0])))
>>> sector = Dimension.flat("sector", ["mining", "retail"])
>>> result = primary_rules(table, {"sector": sector}, rules=Rules(dominance_k=95))
>>> result.rule.tolist(), result.upper_protection.tolist()
(['p_percent', ''], [1.0, 0.0])
>>> print(result.reason(0))  # doctest: +NORMALIZE_WHITESPACE
the contributions beyond the 2 largest are less than 10% of the largest: the second
largest contributor can estimate the largest within 10% (p% rule)
>>> print(result.reason(0, redact=False))  # doctest: +NORMALIZE_WHITESPACE
the contributions beyond the 2 largest sum to 9, less than 10% of the largest (100): the
second largest contributor can estimate the largest within 10% (p% rule)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from anonaudit.errors import InputError, number, one_of, require
from anonaudit.published import Dimension, Kind, PublishedTable

__all__ = [
    "CONTRIBUTORS",
    "RULES",
    "ZERO_POLICIES",
    "GroupDisclosure",
    "Outcome",
    "PrimaryResult",
    "Rule",
    "Rules",
    "coalition_rule",
    "dominance_rule",
    "group_disclosures",
    "p_percent_rule",
    "primary_rules",
    "threshold_rule",
]

#: A primary rule, by name.
Rule = Literal["threshold", "coalition", "dominance", "p_percent", "pq", "group", "zero", "assumed"]
#: The rules, in the order that names a cell's rule when several flag it.
RULES: tuple[Rule, ...] = (
    "threshold",
    "coalition",
    "dominance",
    "p_percent",
    "pq",
    "group",
    "zero",
    "assumed",
)
#: Who counts as one contributor of a magnitude cell.
Contributor = Literal["holding", "unit"]
CONTRIBUTORS: tuple[Contributor, ...] = ("holding", "unit")
#: What a zero is: nothing, a finding, or a sensitive cell.
ZeroPolicy = Literal["ignore", "report", "sensitive"]
ZERO_POLICIES: tuple[ZeroPolicy, ...] = ("ignore", "report", "sensitive")

Mask = NDArray[np.bool_]
Floats = NDArray[np.float64]


# --------------------------------------------------------------------------- options


def _whole(value: object, name: str, least: int) -> None:
    require(
        isinstance(value, int) and not isinstance(value, bool) and value >= least,
        name,
        f"be a whole number of at least {least}",
        value,
    )


@dataclass(frozen=True)
class Rules:
    """The primary rules' parameters (the future ``[tables]`` policy table, one key each).

    Parameters
    ----------
    threshold : int, default 10
        Count tables: a cell counting ``0 < n < threshold`` units is sensitive (0 or 1:
        no threshold). The default is a policy choice: it is ACRO's (SACRO's output
        checker, ``safe_threshold: 10`` in its ``default.yaml``), the usual threshold for
        counts released from confidential data.
    min_contributors : int, default 3
        Magnitude tables: a cell with ``0 < n < min_contributors`` contributors is
        sensitive. 3 is the handbook's normal choice (Hundepool et al. 2012, section 4.2,
        "Minimum frequency rule": one contributor is disclosed by the cell, and each of
        two by the other).
    dominance_n, dominance_k : int and float, default 2 and 85
        The (n, k)-dominance rule: sensitive when the ``n`` largest contributions exceed
        ``k`` percent of the cell (``k = 100``: never). (2, 85) is a policy choice
        (issue 26's default); ACRO uses (2, 90), and the handbook's rule of
        correspondence ``k = 100 * 100 / (100 + p)`` pairs p = 10 with k = 90.9.
    p : float, default 10
        The p% rule: sensitive when the contributions beyond the largest ``coalition + 1``
        sum to less than ``p`` percent of the largest (0: never). 10 is ACRO's default
        (``safe_pratio_p: 0.10``) and the handbook's worked example (section 4.2,
        Example 2).
    q : float, optional
        The (p, q) prior-posterior rule, applied when given: the rest is known beforehand
        to within ``q`` percent, and the cell is sensitive when the rest is less than
        ``p/q`` of the largest; ``q = 100`` is the p% rule.
    coalition : int, default 1
        How many units may pool what they know of themselves (Lupp & Langsrud 2021,
        ``coalition = 1`` by default there too): a cell of at most ``coalition + 1``
        units, or a group all but at most ``coalition`` of whose members fall in one
        cell, is sensitive; the p% and pq rules subtract the ``coalition + 1`` largest
        (Hundepool et al. 2012, section 4.2, the p% rule for coalitions, footnote to the
        table of sensitivity rules).
    safety_range : float, default 0
        The protection the frequency rules (threshold, coalition, group, zero) ask for,
        in percent of the cell's value, above and below. 0, the handbook's
        recommendation when a frequency rule alone judges a cell (section 4.2, "upper
        protection levels": "a protection level of zero should be enough"), asks only
        that the cell is not disclosed exactly.
    contributor : {"holding", "unit"}, default "holding"
        Who is one contributor of a magnitude cell: a holding (the contributions of the
        units of one enterprise group summed into one before ranking, the handbook's
        "Holdings", section 4.2; a unit without a holding is its own), or each unit.
    zeros : {"report", "sensitive", "ignore"}, default "report"
        A zero in a count table's non-empty group discloses that nobody in the group has
        that value, and a zero sum over contributors that each contributed zero (the
        zeros "giving values away" of sdcTools/UserSupport#194 and #115). ``report``
        lists them as findings and leaves the cells publishable (zeros are data an office
        usually publishes, and a zero that leaves the whole group in one category is
        already the ``group`` rule's); ``sensitive`` makes them sensitive (ACRO's
        ``zeros_are_disclosive``, τ-ARGUS's "zero unsafe"); ``ignore`` says nothing.

    Raises
    ------
    OptionError
        A parameter out of its range, named.

    Examples
    --------
    >>> Rules(p=15, q=50).q
    50
    >>> Rules(dominance_k=120)
    Traceback (most recent call last):
    ...
    anonaudit.errors.OptionError: dominance_k must lie in (0, 100] (got 120)
    """

    threshold: int = 10
    min_contributors: int = 3
    dominance_n: int = 2
    dominance_k: float = 85.0
    p: float = 10.0
    q: float | None = None
    coalition: int = 1
    safety_range: float = 0.0
    contributor: Contributor = "holding"
    zeros: ZeroPolicy = "report"

    def __post_init__(self) -> None:
        _whole(self.threshold, "threshold", 0)
        _whole(self.min_contributors, "min_contributors", 0)
        _whole(self.dominance_n, "dominance_n", 1)
        _whole(self.coalition, "coalition", 0)
        k = self.dominance_k
        require(number(k) and 0 < k <= 100, "dominance_k", "lie in (0, 100]", k)
        require(number(self.p) and 0 <= self.p <= 100, "p", "lie in [0, 100]", self.p)
        if self.q is not None:
            require(number(self.q) and 0 < self.q <= 100, "q", "lie in (0, 100]", self.q)
        require(
            number(self.safety_range) and self.safety_range >= 0,
            "safety_range",
            "be a percentage of at least 0",
            self.safety_range,
        )
        one_of(self.contributor, "contributor", CONTRIBUTORS)
        one_of(self.zeros, "zeros", ZERO_POLICIES)


# --------------------------------------------------------------------------- the rules


@dataclass(frozen=True, eq=False)
class Outcome:
    """What one rule says of each cell.

    Attributes
    ----------
    sensitive : array of bool
        The cells the rule flags.
    protection : array of float
        The upper protection level each flagged cell needs (0 elsewhere).
    """

    sensitive: Mask
    protection: Floats


def _outcome(sensitive: Mask, protection: Floats) -> Outcome:
    return Outcome(sensitive, np.where(sensitive, protection, 0.0))


def threshold_rule(
    sizes: ArrayLike, values: ArrayLike, *, minimum: int, safety_range: float = 0.0
) -> Outcome:
    """The threshold (minimum frequency) rule.

    A cell of ``0 < n < minimum`` units (a count table's count, a magnitude cell's
    contributors) is sensitive (Hundepool et al. 2012, section 4.2, table of sensitivity
    rules: "the cell frequency is less than a pre-specified minimum frequency n"; an empty
    cell discloses no one). Its protection is ``safety_range`` percent of its value (the
    "minimum frequency range" of τ-ARGUS, 0 by the handbook's recommendation).

    Examples
    --------
    >>> threshold_rule([0, 3, 10], [0, 3, 10], minimum=10).sensitive.tolist()
    [False, True, False]
    """
    n = np.asarray(sizes, dtype=np.float64)
    sensitive = (n > 0) & (n < minimum)
    return _outcome(sensitive, safety_range / 100 * np.asarray(values, dtype=np.float64))


def coalition_rule(
    sizes: ArrayLike, values: ArrayLike, *, coalition: int, safety_range: float = 0.0
) -> Outcome:
    """Singletons and coalitions: a cell of ``1 <= n <= coalition + 1`` units.

    A contributor alone in a cell is disclosed by it; of two, each learns the other's
    value by subtracting its own; of ``c + 1``, a coalition of ``c`` pooling theirs
    learns the last one's (Hundepool et al. 2012, section 4.2, Examples 1, 1b and 1c:
    the minimum frequency ``c + 2`` for coalitions of ``c``; Lupp & Langsrud 2021 for
    counts, where the last unit is singled out). With ``coalition = 0`` only singletons.
    Protection as for the threshold rule.

    Examples
    --------
    >>> coalition_rule([1, 2, 3], [1, 2, 3], coalition=1).sensitive.tolist()
    [True, True, False]
    """
    n = np.asarray(sizes, dtype=np.float64)
    sensitive = (n >= 1) & (n <= coalition + 1)
    return _outcome(sensitive, safety_range / 100 * np.asarray(values, dtype=np.float64))


def dominance_rule(top: ArrayLike, total: ArrayLike, *, k: float) -> Outcome:
    """The (n, k)-dominance rule, on the sum ``top`` of a cell's ``n`` largest contributions.

    Sensitive when ``x1 + ... + xn > k/100 X`` (Hundepool et al. 2012, section 4.2,
    table of sensitivity rules), compared as ``100 (x1 + ... + xn) > k X`` so that a cell
    on the boundary stays on it; upper protection ``100/k (x1 + ... + xn) - X`` (table of
    upper protection levels). Meaningful for non-negative contributions only.

    Examples
    --------
    Contributions 100, 50 and 10 under (2, 85): ``150 / 160 = 93.75% > 85%``, and the
    cell needs ``100/85 * 150 - 160 = 16.47`` of protection:

    >>> outcome = dominance_rule([150.0], [160.0], k=85)
    >>> outcome.sensitive.tolist(), outcome.protection.round(2).tolist()
    ([True], [16.47])
    """
    x = np.asarray(top, dtype=np.float64)
    total_ = np.asarray(total, dtype=np.float64)
    return _outcome(100 * x > k * total_, 100 / k * x - total_)


def p_percent_rule(largest: ArrayLike, rest: ArrayLike, *, p: float, q: float = 100.0) -> Outcome:
    """The p% rule, and the (p, q) prior-posterior rule when ``q < 100``.

    ``rest`` is the cell's sum less its largest contributions (the two largest, or the
    ``c + 1`` largest for a coalition of ``c``): what the second largest contributor
    (or the coalition) does not know when it estimates the largest, ``x1``, by
    subtracting its own from the cell. Sensitive when ``rest < p/100 x1`` (the estimate
    is within ``p`` percent), or ``rest < p/q x1`` when the rest is known beforehand to
    within ``q`` percent (Hundepool et al. 2012, section 4.2, "p%-rule" and "The
    (p,q)-rule", with the coalition form of the footnote to the table of sensitivity
    rules), compared as ``q rest < p x1``; upper protection ``p/q x1 - rest`` (table of
    upper protection levels; Example 5 derives it).

    Examples
    --------
    Contributions 100, 50 and 9 under p = 10: ``9 < 10``, protection ``10 - 9 = 1``;
    100, 50 and 10 sit on the boundary (``10 < 10`` is false) and pass:

    >>> outcome = p_percent_rule([100.0, 100.0], [9.0, 10.0], p=10)
    >>> outcome.sensitive.tolist(), outcome.protection.tolist()
    ([True, False], [1.0, 0.0])
    """
    x1 = np.asarray(largest, dtype=np.float64)
    r = np.asarray(rest, dtype=np.float64)
    return _outcome(q * r < p * x1, p / q * x1 - r)


# --------------------------------------------------------------------------- contributions


@dataclass(frozen=True, eq=False)
class _Summary:
    """Per cell: its sum, contributors, largest, top-n sum, rest, and negatives."""

    total: Floats
    contributors: NDArray[np.int64]
    largest: Floats
    dominant: Floats
    rest: Floats
    negative: Mask


def _summary(table: PublishedTable, rules: Rules) -> _Summary:
    """The contributions of each cell, holdings merged, ranked once (vectorized)."""
    n = len(table)
    sizes = np.fromiter((len(c) for c in table.contributions), dtype=np.int64, count=n)
    cell = np.repeat(np.arange(n, dtype=np.int64), sizes)
    flat = (
        np.concatenate([np.asarray(c, dtype=np.float64) for c in table.contributions])
        if sizes.sum()
        else np.zeros(0)
    )
    if not np.all(np.isfinite(flat)):
        bad = int(cell[np.flatnonzero(~np.isfinite(flat))[0]])
        raise InputError(
            f"{table.name}: cell {table.label(bad)} has a contribution that is not a number"
        )
    negative = np.bincount(cell, weights=flat < 0, minlength=n) > 0
    if rules.contributor == "holding" and table.holdings:
        cell, flat = _merge_holdings(table, cell, flat, sizes)
    contributors = np.bincount(cell, minlength=n).astype(np.int64)
    order = np.lexsort((-flat, cell))
    ranked_cell, ranked = cell[order], flat[order]
    starts = np.cumsum(contributors) - contributors
    rank = np.arange(len(ranked)) - starts[ranked_cell]

    def top(m: int) -> Floats:
        keep = rank < m
        return _sums(ranked_cell[keep], ranked[keep], n)

    total = _sums(cell, flat, n)
    return _Summary(
        total=total,
        contributors=contributors,
        largest=top(1),
        dominant=top(rules.dominance_n),
        rest=total - top(rules.coalition + 1),
        negative=negative,
    )


def _merge_holdings(
    table: PublishedTable, cell: NDArray[np.int64], flat: Floats, sizes: NDArray[np.int64]
) -> tuple[NDArray[np.int64], Floats]:
    """The contributions of one holding in one cell summed into one; ``""`` is no holding."""
    lengths = [len(h) for h in table.holdings]
    if len(lengths) != len(table) or lengths != sizes.tolist():
        raise InputError(
            f"{table.name}: holdings must name one holding per contribution, cell by cell"
        )
    holding = np.concatenate([np.asarray(h, dtype=str) for h in table.holdings])
    names, code = np.unique(holding, return_inverse=True)
    own = np.arange(len(holding), dtype=np.int64) + len(names)
    code = np.where(holding == "", own, code)
    base = len(names) + len(holding)
    pairs, inverse = np.unique(cell * base + code, return_inverse=True)
    return pairs // base, _sums(inverse, flat, len(pairs))


def _sums(index: NDArray[np.int64], weights: ArrayLike, size: int) -> Floats:
    """The sum of ``weights`` per value of ``index`` in ``range(size)``."""
    return np.asarray(np.bincount(index, weights=weights, minlength=size), dtype=np.float64)


# --------------------------------------------------------------------------- groups


@dataclass(frozen=True)
class GroupDisclosure:
    """A group of a count table that discloses an attribute of its members.

    The *group* is a combination of the other dimensions' codes; within it, the cells of
    one dimension's categories (the children of one code, ``parent``) sum to the
    group's count. Hundepool et al. 2012, section 5.2: *group attribute disclosure*
    when the group lies in one category (``outside == 0``), *within-group disclosure*
    when all but a few members do, who learn, by subtracting themselves, that the rest
    are in it (Lupp & Langsrud 2021: ``outside <= coalition``); and a zero in the group
    discloses that none of its members has that category (``kind == "zero"``).

    Attributes
    ----------
    kind : {"group", "zero"}
        The members are in ``category`` (all but ``outside`` of them), or none is.
    cell : int
        The cell of ``category`` in the group.
    total : int or None
        The group's own cell (its count), when the table has it.
    dimension : str
        The dimension whose category is disclosed.
    group : tuple of (str, str)
        The group: the other dimensions' ``(name, code)``.
    parent : str
        The code of ``dimension`` the categories are children of: ``""`` for the
        dimension's total (the usual case), else a subtotal of its hierarchy.
    category : str
        The cell's code of ``dimension``.
    outside : int
        Members of the group not in the cell (the coalition that learns it; for a zero,
        the whole group). A value of the data.
    public : bool
        Whether the finding rests on published values only (anyone can read it off the
        table), or on true values of unpublished cells.
    """

    kind: Literal["group", "zero"]
    cell: int
    total: int | None
    dimension: str
    group: tuple[tuple[str, str], ...]
    parent: str
    category: str
    outside: int
    public: bool

    @property
    def where(self) -> str:
        """The group named by its codes, its parent category included (``the whole
        table`` for a one-dimensional table's total)."""
        codes = [f"{name}={code}" for name, code in self.group]
        if self.parent:
            codes.append(f"{self.dimension}={self.parent}")
        return ", ".join(codes) if codes else "the whole table"

    def describe(self, *, redact: bool = True) -> str:
        """One line: what the group discloses.

        Redacted, it names no count, and a finding that rests on an unpublished value
        says only where it is.
        """
        if redact and not self.public:
            return (
                f"a {self.kind} disclosure of {self.dimension} in {self.where}; its details "
                "rest on unpublished values"
            )
        if self.kind == "zero":
            return f"nobody in {self.where} has {self.dimension}={self.category}"
        if self.outside == 0:
            return f"everyone in {self.where} has {self.dimension}={self.category}"
        others = "a few" if redact else str(self.outside)
        return (
            f"all but {others} in {self.where} have {self.dimension}={self.category}; "
            "those others, subtracting themselves, learn it of the rest"
        )


def _combine(columns: Sequence[NDArray[np.int64]], n: int) -> NDArray[np.int64]:
    """One small integer per distinct combination of the columns' values."""
    key = np.zeros(n, dtype=np.int64)
    for column in columns:
        key = key * (int(column.max(initial=0)) + 1) + column
        key = np.unique(key, return_inverse=True)[1].astype(np.int64)
    return key


def group_disclosures(
    table: PublishedTable,
    dimensions: Mapping[str, Dimension],
    values: ArrayLike,
    known: ArrayLike,
    *,
    coalition: int,
    zeros: bool = True,
) -> tuple[GroupDisclosure, ...]:
    """Group attribute disclosures of a count table (Hundepool et al. 2012, section 5.2).

    Along each dimension, the cells whose codes are the children of one code and whose
    other codes agree form a group; its count is its own cell's (the parent code's) when
    that is known, else the sum of all its children when each is known. A cell of ``x``
    in a group of ``T`` discloses its category of the ``x`` members when ``x > 0`` and
    ``T - x <= coalition``: with ``T - x = 0`` the whole group is in it (group attribute
    disclosure), else the ``T - x`` others, each knowing its own category, learn it of
    the rest (within-group disclosure; Lupp & Langsrud 2021, SSBtools'
    ``FindDisclosiveCells``, which flags the largest cell of such a group). A zero in a
    group of ``T > 0`` discloses that nobody in it has the category (sdcTools/UserSupport
    #194), listed when ``zeros``. Codes with a single child are skipped: the hierarchy
    alone tells that child's count. Groups with an unknown count are left to the
    attacker's arithmetic.

    Parameters
    ----------
    table : PublishedTable
        A count table.
    dimensions : mapping of str to Dimension
        The code lists of its dimensions.
    values, known : arrays
        Each cell's true count, and whether it is known.
    coalition : int
        The largest coalition assumed.
    zeros : bool
        Whether zeros are listed.

    Returns
    -------
    tuple of GroupDisclosure
        By cell, then dimension.
    """
    n = len(table)
    value = np.asarray(values, dtype=np.float64)
    is_known = np.asarray(known, dtype=bool)
    exact = table.exact
    indices: list[NDArray[np.int64]] = []
    for name, codes in zip(table.dimensions, table.codes, strict=True):
        position = {code: i for i, code in enumerate(dimensions[name].codes)}
        distinct, inverse = np.unique(codes, return_inverse=True)
        unknown = [str(c) for c in distinct if str(c) not in position]
        if unknown:
            raise InputError(
                f"{table.name}: {name} has codes not in its code list ({', '.join(unknown[:5])})"
            )
        lookup = np.array([position[str(c)] for c in distinct], dtype=np.int64)
        indices.append(lookup[inverse] if n else np.zeros(0, dtype=np.int64))
    found: list[tuple[int, int, GroupDisclosure]] = []
    for j, name in enumerate(table.dimensions):
        dimension = dimensions[name]
        other = _combine([c for i, c in enumerate(indices) if i != j], n)
        width = len(dimension.codes)
        position = {code: i for i, code in enumerate(dimension.codes)}
        parent = np.array(
            [position.get(dimension.parents.get(code, ""), -1) for code in dimension.codes],
            dtype=np.int64,
        )
        children = np.bincount(parent[parent >= 0], minlength=width)
        own = indices[j]
        up = parent[own]
        members = np.flatnonzero((up >= 0) & (children[np.maximum(up, 0)] > 1))
        keys = np.concatenate([other[members] * width + up[members], other * width + own])
        family_keys, inverse = np.unique(keys, return_inverse=True)
        family, as_total = inverse[: len(members)], inverse[len(members) :]
        families = len(family_keys)
        total_cell = np.full(families, -1, dtype=np.int64)
        total_cell[as_total] = np.arange(n)
        size = np.bincount(family, minlength=families)
        m_known = is_known[members]
        known_size = _sums(family, m_known, families)
        exact_size = _sums(family, exact[members], families)
        summed = _sums(family, np.where(m_known, value[members], 0.0), families)
        has_total = total_cell >= 0
        safe_total = np.maximum(total_cell, 0)
        total_known = has_total & is_known[safe_total]
        complete = size == children[family_keys % width]
        decided = total_known | (complete & (known_size == size))
        count = np.where(total_known, value[safe_total], summed)
        public = (has_total & exact[safe_total]) | (complete & (exact_size == size))
        t = count[family]
        x = value[members]
        judged = decided[family] & m_known
        grouped = judged & (x > 0) & (t - x <= coalition)
        zero = judged & (x == 0) & (t > 0) if zeros else np.zeros(len(members), dtype=bool)
        for m in np.flatnonzero(grouped | zero):
            cell, f = int(members[m]), int(family[m])
            found.append(
                (
                    cell,
                    j,
                    GroupDisclosure(
                        kind="group" if grouped[m] else "zero",
                        cell=cell,
                        total=int(total_cell[f]) if has_total[f] else None,
                        dimension=name,
                        group=tuple(
                            (table.dimensions[i], str(table.codes[i][cell]))
                            for i in range(len(table.dimensions))
                            if i != j
                        ),
                        parent=_parent_label(dimension, int(family_keys[f] % width)),
                        category=str(table.codes[j][cell]),
                        outside=round(float(t[m] - x[m])),
                        public=bool(exact[cell] and public[f]),
                    ),
                )
            )
    return tuple(finding for _, _, finding in sorted(found, key=lambda item: item[:2]))


def _parent_label(dimension: Dimension, code: int) -> str:
    """The parent code, or ``""`` for the dimension's total (the usual case)."""
    name = dimension.codes[code]
    return "" if name == dimension.total else name


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True, eq=False)
class PrimaryResult:
    """The primary rules applied to one table, cell by cell.

    Attributes
    ----------
    table : str
        The table's name.
    kind : {"count", "sum"}
        Counts or sums.
    rules : Rules
        The parameters applied.
    evaluated : array of bool
        Cells the rules could judge: their true value is known (and, for a magnitude
        table, their contributions).
    suppressed : array of bool
        Cells the table suppressed.
    values : array of float
        Each cell's true value (0 where not ``evaluated``).
    contributors : array of int
        Units in the cell: a count table's count, a magnitude cell's contributors
        (holdings merged); 0 where not ``evaluated``.
    largest, dominant, rest : arrays of float
        Magnitude cells: the largest contribution, the sum of the ``dominance_n``
        largest, and the sum less the ``coalition + 1`` largest (0 for counts).
    negative : array of bool
        Magnitude cells with a negative contribution: the dominance, p% and pq rules
        are not applied to them (they are meaningful for non-negative contributions
        only, Hundepool et al. 2012, section 4.2, "Negative contributions", which
        suggests the frequency rules instead).
    failed : mapping of Rule to array of bool
        The cells each rule flags (under ``zeros="report"`` the zero rule's cells are
        flagged but not sensitive).
    sensitive : array of bool
        Cells to protect: flagged by a rule, or suppressed and not evaluated.
    rule : array of str
        The first rule of :data:`RULES` that makes each sensitive cell sensitive (``""``
        elsewhere).
    upper_protection, lower_protection : array of float
        The protection each sensitive cell needs above and below its true value: the
        largest its rules ask for (0 when not sensitive). The lower equals the upper
        ("out of symmetry considerations", Hundepool et al. 2012, section 4.2), at
        most the value itself (a count or a sum of non-negative contributions is never
        below 0, which every reader knows).
    group_disclosures : tuple of GroupDisclosure
        A count table's groups that disclose an attribute (and its zeros, unless
        ``zeros="ignore"``).
    """

    table: str
    kind: Kind
    rules: Rules
    evaluated: Mask
    suppressed: Mask
    values: Floats
    contributors: NDArray[np.int64]
    largest: Floats
    dominant: Floats
    rest: Floats
    negative: Mask
    failed: Mapping[Rule, Mask]
    sensitive: Mask
    rule: NDArray[np.str_]
    upper_protection: Floats
    lower_protection: Floats
    group_disclosures: tuple[GroupDisclosure, ...]

    def __len__(self) -> int:
        return len(self.sensitive)

    @property
    def sensitive_cells(self) -> NDArray[np.intp]:
        """The sensitive cells' positions."""
        return np.flatnonzero(self.sensitive)

    @cached_property
    def _findings(self) -> dict[int, list[GroupDisclosure]]:
        by_cell: dict[int, list[GroupDisclosure]] = {}
        for finding in self.group_disclosures:
            by_cell.setdefault(finding.cell, []).append(finding)
        return by_cell

    def reason(self, i: int, *, redact: bool = True) -> str:
        """Why cell ``i`` is sensitive (or not), in one line.

        Redacted (the default), the line names the rule and its parameters but no value
        of the data; ``redact=False`` adds the cell's numbers.
        """
        if not self.evaluated[i]:
            if self.suppressed[i]:
                return (
                    "unknown, assumed sensitive: it was suppressed and its true value was "
                    "not given (give the unsuppressed table or the microdata to check it)"
                )
            return "not checked: " + (
                "its true value was not given"
                if self.kind == "count"
                else "the rules need the cell's contributions (give the microdata)"
            )
        if not self.sensitive[i]:
            if self.failed["zero"][i]:
                return f"not sensitive; reported: {self._zero(i, redact)}"
            return "not sensitive under the primary rules"
        return self._explain(str(self.rule[i]), i, redact)

    def _explain(self, rule: str, i: int, redact: bool) -> str:
        rules = self.rules
        units = "units" if self.kind == "count" else "contributors"
        size = int(self.contributors[i])
        if rule == "threshold":
            minimum = rules.threshold if self.kind == "count" else rules.min_contributors
            counted = f"fewer than {minimum}" if redact else f"{size}, fewer than {minimum}"
            return f"{counted} {units} (threshold rule, minimum {minimum})"
        if rule == "coalition":
            if rules.coalition == 0:
                alone = "singled out by it" if self.kind == "count" else "the cell is its value"
                return f"a single {units[:-1]}: {alone} (singleton rule)"
            counted = f"at most {rules.coalition + 1}" if redact else str(size)
            learns = "singles out" if self.kind == "count" else "learns the value of"
            return (
                f"{counted} {units}: a coalition of the others (at most {rules.coalition}) "
                f"{learns} the last one (singleton and coalition rule)"
            )
        if rule == "dominance":
            share = "" if redact else f" ({100 * self.dominant[i] / self.values[i]:.4g}%)"
            return (
                f"the {rules.dominance_n} largest contributions exceed {rules.dominance_k:g}% "
                f"of the cell{share} (({rules.dominance_n}, {rules.dominance_k:g})-dominance rule)"
            )
        if rule in ("p_percent", "pq"):
            return self._p_percent(rule, i, redact)
        if rule == "group":
            finding = next(f for f in self._findings[i] if f.kind == "group")
            return f"{finding.describe(redact=redact)} (group attribute disclosure)"
        return self._zero(i, redact)

    def _p_percent(self, rule: str, i: int, redact: bool) -> str:
        rules = self.rules
        q = 100.0 if rule == "p_percent" else float(rules.q or 100.0)
        part = f"{rules.p:g}%" if rule == "p_percent" else f"{rules.p:g}/{q:g}"
        known = "" if rule == "p_percent" else f", the rest being known within {q:g}%"
        beyond = f"beyond the {rules.coalition + 1} largest"
        attacker = {
            0: "a reader of the cell alone",
            1: "the second largest contributor",
        }.get(rules.coalition, f"the {rules.coalition} next largest contributors together")
        if redact:
            amount = f"are less than {part} of the largest"
        else:
            amount = (
                f"sum to {self.rest[i]:g}, less than {part} of the largest ({self.largest[i]:g})"
            )
        name = "p% rule" if rule == "p_percent" else "(p, q) rule"
        return (
            f"the contributions {beyond} {amount}{known}: {attacker} can estimate the "
            f"largest within {rules.p:g}% ({name})"
        )

    def _zero(self, i: int, redact: bool) -> str:
        if self.kind == "sum":
            return (
                "a zero sum over its contributors: each of them contributed 0 "
                "(sdcTools/UserSupport#194)"
            )
        finding = next(f for f in self._findings[i] if f.kind == "zero")
        return f"{finding.describe(redact=redact)} (a zero in a non-empty group)"


# --------------------------------------------------------------------------- the run


def _true_values(table: PublishedTable, values: ArrayLike | None) -> tuple[Mask, Floats]:
    """Which cells' true values are known, and the values (0 elsewhere)."""
    n = len(table)
    if values is None:
        exact = (table.lower == table.upper) & np.isfinite(table.upper)
        return exact, np.where(exact, table.lower, 0.0)
    given = np.asarray(values, dtype=np.float64)
    if given.shape != (n,):
        raise InputError(
            f"{table.name}: the true values must be one per cell ({n}); got shape {given.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(given) | ((given < 0) & (table.kind == "count")))
    if len(bad):
        raise InputError(
            f"{table.name}: cell {table.label(int(bad[0]))} has true value {float(given[bad[0]])}; "
            "give a finite value (a count is never negative)"
        )
    return np.ones(n, dtype=bool), given


def primary_rules(
    table: PublishedTable,
    dimensions: Mapping[str, Dimension],
    *,
    rules: Rules | None = None,
    values: ArrayLike | None = None,
) -> PrimaryResult:
    """Apply the primary rules to every cell of a published table.

    Parameters
    ----------
    table : PublishedTable
        The table (its margins included: every cell is judged).
    dimensions : mapping of str to Dimension
        The code lists of its dimensions (``TableSet.dimensions``), for the groups of a
        count table.
    rules : Rules, optional
        The parameters (``Rules()``'s defaults when not given).
    values : array of float, optional
        The true value of every cell (the unsuppressed table). Without them, a cell's
        value is known when it is published as it is; a magnitude table's values are its
        contributions' sums when it has contributions, and must agree with ``values``.

    Returns
    -------
    PrimaryResult
        Per cell: evaluated, sensitive, the rule, the protection levels; the group
        disclosures.

    Raises
    ------
    InputError
        ``values`` not one finite value per cell (a negative count), contributions that
        are not numbers, holdings not aligned with the contributions, or contributions
        whose sums disagree with ``values``.
    """
    rules = Rules() if rules is None else rules
    n = len(table)
    known, value = _true_values(table, values)
    failed: dict[Rule, Mask] = {rule: np.zeros(n, dtype=bool) for rule in RULES}
    protection: dict[Rule, Floats] = {rule: np.zeros(n) for rule in RULES}
    nothing: Floats = np.zeros(n)
    summary = _Summary(
        nothing, np.zeros(n, dtype=np.int64), nothing, nothing, nothing, np.zeros(n, dtype=bool)
    )
    findings: tuple[GroupDisclosure, ...] = ()
    spread = rules.safety_range

    def apply(rule: Rule, outcome: Outcome, where: Mask) -> None:
        failed[rule] = outcome.sensitive & where
        protection[rule] = np.where(failed[rule], outcome.protection, 0.0)

    if table.kind == "count":
        evaluated = known
        sizes = np.where(known, value, 0.0)
        summary = replace(summary, contributors=np.rint(sizes).astype(np.int64))
        findings = group_disclosures(
            table,
            dimensions,
            value,
            known,
            coalition=rules.coalition,
            zeros=rules.zeros != "ignore",
        )
        for finding in findings:
            failed[finding.kind][finding.cell] = True
        threshold = threshold_rule(sizes, value, minimum=rules.threshold, safety_range=spread)
        apply("threshold", threshold, evaluated)
    elif table.contributions:
        summary = _summary(table, rules)
        differ = ~np.isclose(value, summary.total, rtol=1e-9, atol=1e-9)
        if values is not None and differ.any():
            raise InputError(
                f"{table.name}: cell {table.label(int(np.flatnonzero(differ)[0]))}: the true "
                "value given and the sum of its contributions differ; give one or the other"
            )
        evaluated, value = np.ones(n, dtype=bool), summary.total
        sizes = summary.contributors.astype(np.float64)
        threshold = threshold_rule(
            sizes, value, minimum=rules.min_contributors, safety_range=spread
        )
        apply("threshold", threshold, evaluated)
        concentration = ~summary.negative
        apply(
            "dominance", dominance_rule(summary.dominant, value, k=rules.dominance_k), concentration
        )
        apply("p_percent", p_percent_rule(summary.largest, summary.rest, p=rules.p), concentration)
        if rules.q is not None:
            pq = p_percent_rule(summary.largest, summary.rest, p=rules.p, q=rules.q)
            apply("pq", pq, concentration)
        if rules.zeros != "ignore":
            failed["zero"] = concentration & (summary.contributors > 0) & (value == 0)
    else:
        evaluated = np.zeros(n, dtype=bool)
        sizes = nothing
    value = np.where(evaluated, value, 0.0)
    apply(
        "coalition",
        coalition_rule(sizes, value, coalition=rules.coalition, safety_range=spread),
        evaluated,
    )
    frequency = spread / 100 * value
    protection["group"] = np.where(failed["group"], frequency, 0.0)
    protection["zero"] = np.where(failed["zero"], frequency, 0.0)
    failed["assumed"] = ~evaluated & table.suppressed
    making: list[Rule] = [r for r in RULES if r != "zero" or rules.zeros == "sensitive"]
    sensitive = np.logical_or.reduce([failed[r] for r in making])
    named = np.select([failed[r] for r in making], making, default="").astype(np.str_)
    upper = np.max(np.stack([protection[r] for r in making]), axis=0)
    upper = np.where(sensitive, np.maximum(upper, 0.0), 0.0)
    return PrimaryResult(
        table=table.name,
        kind=table.kind,
        rules=rules,
        evaluated=evaluated,
        suppressed=table.suppressed,
        values=value,
        contributors=np.where(evaluated, summary.contributors, 0).astype(np.int64),
        largest=summary.largest,
        dominant=summary.dominant,
        rest=summary.rest,
        negative=summary.negative,
        failed=failed,
        sensitive=sensitive,
        rule=named,
        upper_protection=upper,
        lower_protection=np.minimum(upper, np.maximum(value, 0.0)),
        group_disclosures=findings,
    )
