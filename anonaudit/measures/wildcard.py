"""Class frequencies under a null policy, including sdcMicro's wildcard convention.

Three ways to treat a null (missing) quasi-identifier value:

``value`` (the default)
    A null is a value of its own: ``(30, null)`` and ``(30, null)`` share a class,
    ``(30, null)`` and ``(30, F)`` do not. Every record is counted in exactly one class.
``drop``
    Records with a null in any QI are left out of the audit (their number is
    reported).
``wildcard``
    A null stands for *any* value ("a missing value stands for any of the possible
    categories of the variable considered", sdcMicro's ``freqCalc``; Templ, Kowarik &
    Meindl 2015, "Statistical disclosure control for micro-data using the R package
    sdcMicro", J. Statistical Software 67(4)): the sample frequency of a record ``r``
    is the number of records ``s`` that agree with ``r`` on every QI where both are
    non-null,

    ``f_k(r) = #{s : r_j = s_j for every j with r_j and s_j both non-null}``,

    and ``F_k(r)`` is the sum of those records' weights. The relation is symmetric and
    reflexive but not transitive, so the records no longer fall into a partition: a
    record ``(30, null)`` is counted with both ``(30, F)`` and ``(30, M)``, which are not
    counted with each other. Only measures built on ``f_k`` change: k-anonymity's class
    sizes (``k = min f_k``), prosecutor risk (``1 / f_k``) and the individual risk
    (:mod:`anonaudit.measures.individual`). l-diversity, t-closeness and attribute
    disclosure, the population-uniqueness models and journalist and marketer risk
    need a partition of the records and keep the ``value`` classes.

Difference from sdcMicro: with two or more QIs, sdcMicro's ``freqCalc`` does not add
the records whose QIs are *all* null to the ``f_k`` of records without nulls (its
``addAllNAtoKeys = FALSE``, marked "to check"), while it adds them to every other
record's and gives them ``f_k = n``; here the relation is symmetric, so they count for
everyone. Records with at least one non-null QI are counted as sdcMicro counts them
(its ``alpha = 1``, the default).

The frequencies are computed from the class table, never from the records, and
without comparing every pair of classes: classes are grouped by their *null pattern*
(which QIs are non-null); two classes of patterns ``P`` and ``Q`` are compatible when
they agree on the QIs of ``P & Q``, so for each pattern ``P`` and each distinct
intersection ``S = P & Q`` one hash join on the columns of ``S`` adds up the classes of
every such ``Q``. The cost is ``O(patterns x classes)``, linear in the classes for the
few null patterns real data has.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from anonaudit.classtable import Classes, ClassTable, _combine, _encode
from anonaudit.errors import ParameterError
from anonaudit.settings.names import NULL_POLICIES, NullPolicy

__all__ = ["NULL_POLICIES", "NullPolicy", "class_frequencies", "wildcard_sums"]


def class_frequencies(
    table: ClassTable, *, nulls: NullPolicy = "value"
) -> tuple[NDArray[Any], NDArray[Any] | None]:
    """``f_k`` and ``F_k`` of every class of ``table`` under a null policy.

    Parameters
    ----------
    table : ClassTable
        The class table audited (for ``drop``, the table without the null records:
        :meth:`ClassTable.without_null_quasi_identifiers`).
    nulls : {"value", "drop", "wildcard"}
        How null QI values count (module docstring).

    Returns
    -------
    fk : numpy.ndarray
        Per class (``table.classes`` order), the records it matches (``int64``): its
        size, or under ``wildcard`` the records compatible with it.
    Fk : numpy.ndarray or None
        The same sum over the records' weights (``float64``); ``None`` without weights.

    Examples
    --------
    A record with a null in the second QI matches both complete records that share its
    first QI, and each of them matches it:

    >>> import pandas as pd
    >>> t = ClassTable.from_frame(
    ...     pd.DataFrame({"a": ["1", "1", "1", "2"], "b": ["x", "y", None, "x"],
    ...                   "count": [1, 1, 1, 1]}), quasi_identifiers=["a", "b"])
    >>> fk, _ = class_frequencies(t, nulls="wildcard")
    >>> rows = [(r["a"], r["b"]) for r in t.classes.keys.to_pylist()]
    >>> sorted(zip(rows, fk.tolist()), key=str)
    [(('1', 'x'), 2), (('1', 'y'), 2), (('1', None), 3), (('2', 'x'), 1)]
    """
    if nulls not in NULL_POLICIES:
        raise ParameterError(f"nulls must be one of {', '.join(NULL_POLICIES)} (got {nulls!r})")
    classes = table.classes
    if nulls != "wildcard":
        return classes.sizes, classes.weights
    fk = np.rint(wildcard_sums(classes, classes.sizes)).astype(np.int64)
    weights = classes.weights
    return fk, None if weights is None else wildcard_sums(classes, weights)


def wildcard_sums(classes: Classes, values: NDArray[Any]) -> NDArray[Any]:
    """For every class, the sum of ``values`` over the classes compatible with it.

    Two classes are compatible when their QI values agree wherever both are non-null
    (module docstring); a class is compatible with itself.

    Parameters
    ----------
    classes : Classes
        The equivalence classes (distinct QI tuples, nulls included).
    values : numpy.ndarray
        One number per class: its size, or its sum of weights.

    Returns
    -------
    numpy.ndarray
        ``float64``, one sum per class. Without nulls, ``values`` itself.
    """
    values = np.asarray(values, dtype=np.float64)
    keys = classes.keys
    count = len(classes)
    present = np.ones((count, keys.num_columns), dtype=bool)
    codes = []
    for j, name in enumerate(keys.column_names):
        column = keys.column(name)
        present[:, j] = ~column.is_null().to_numpy(zero_copy_only=False)
        codes.append(_encode(column)[1])
    if count == 0 or present.all():
        return values.copy()
    first, pattern = _combine(present[:, j].astype(np.int64) for j in range(keys.num_columns))
    masks = present[first]  # each pattern's non-null QIs
    order = np.argsort(pattern, kind="stable")
    bounds = np.searchsorted(pattern[order], np.arange(len(first) + 1))
    members = [order[bounds[p] : bounds[p + 1]] for p in range(len(first))]
    result = np.zeros(count, dtype=np.float64)
    for p, rows in enumerate(members):
        shared = masks & masks[p]  # S = P & Q for every pattern Q
        _, group = _combine(shared[:, j].astype(np.int64) for j in range(keys.num_columns))
        for s in range(int(group.max()) + 1):
            partners = np.concatenate([members[q] for q in np.flatnonzero(group == s)])
            columns = np.flatnonzero(shared[np.flatnonzero(group == s)[0]])
            if columns.size == 0:  # nothing in common: every partner matches
                result[rows] += values[partners].sum()
                continue
            both = np.concatenate([rows, partners])
            _, key = _combine(codes[j][both] for j in columns)
            sums = np.bincount(key[len(rows) :], weights=values[partners], minlength=len(both))
            result[rows] += sums[key[: len(rows)]]
    return result
