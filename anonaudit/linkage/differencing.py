"""Differencing attack between two successive releases of the same table.

An attacker holding two releases of a table that grows or shrinks (monthly extracts)
subtracts them class by class. Where a class's sensitive-value histogram changed in
exactly one value s, every record added to (or removed from) that class between the two
releases has value s: anyone who knows that a person joined (or left) the class learns
their value, however large the class. This is the differencing (or "difference") attack
on successive releases of k-anonymous tables; m-invariance was designed against it
(Xiao & Tao 2007, "m-Invariance: towards privacy preserving re-publication of dynamic
datasets", SIGMOD, Section 2; Byun, Sohn, Bertino & Li 2006, "Secure anonymization for
incremental datasets", SDM workshop).

:func:`difference` compares the two class tables by a full outer join of their sparse
class-by-value count matrices (a class or value absent on one side counts 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable
from anonaudit.errors import ColumnError, ParameterError
from anonaudit.measures._matching import common_class_ids

__all__ = ["Differencing", "difference"]


@dataclass(frozen=True)
class Differencing:
    """Result of :func:`difference` for one sensitive attribute.

    Attributes
    ----------
    sensitive : str
        The SA.
    classes : int
        Classes in either release.
    classes_changed : int
        Classes whose size or histogram changed.
    disclosing_classes : int
        Classes whose histogram changed in exactly one value.
    disclosed_records : int
        Records added or removed in those classes: each one's value is disclosed to an
        attacker who knows it was added or removed.
    old_sizes, new_sizes : numpy.ndarray
        Each class's size in the old and new release (0: absent).
    listing : pandas.DataFrame
        The disclosing classes, most disclosed records first (then by QI values), at most
        ``max_classes`` of them: QI values, ``old_size``, ``new_size``, ``value`` (the
        SA value disclosed) and ``change`` (records of it added, negative if removed).
    """

    sensitive: str
    classes: int
    classes_changed: int
    disclosing_classes: int
    disclosed_records: int
    old_sizes: NDArray[Any] = field(repr=False)
    new_sizes: NDArray[Any] = field(repr=False)
    listing: pd.DataFrame = field(repr=False)


def difference(
    old: ClassTable, new: ClassTable, sensitive: str, *, max_classes: int | None = 100
) -> Differencing:
    """Compare two releases class by class and find the classes that disclose a value.

    Parameters
    ----------
    old, new : ClassTable
        The two releases' class tables, over the same QIs and with ``sensitive``.
    sensitive : str
        The SA compared.
    max_classes : int or None
        Disclosing classes listed (``None``: all).

    Returns
    -------
    Differencing

    Examples
    --------
    >>> import pandas as pd
    >>> old = ClassTable.from_frame(pd.DataFrame({"zip": ["130", "130"],
    ...     "dx": ["flu", "hiv"], "count": [2, 2]}), quasi_identifiers=["zip"],
    ...     sensitive=["dx"])
    >>> new = ClassTable.from_frame(pd.DataFrame({"zip": ["130", "130"],
    ...     "dx": ["flu", "hiv"], "count": [2, 3]}), quasi_identifiers=["zip"],
    ...     sensitive=["dx"])
    >>> result = difference(old, new, "dx")
    >>> result.disclosed_records, result.listing["value"].tolist()
    (1, ['hiv'])
    """
    if old.quasi_identifiers != new.quasi_identifiers:
        raise ColumnError(
            f"the releases have different quasi-identifiers: "
            f"{', '.join(old.quasi_identifiers)} and {', '.join(new.quasi_identifiers)}"
        )
    for table in (old, new):
        if sensitive not in table.sensitive:
            raise ColumnError(f"{sensitive!r} is not a sensitive column of both releases")
    if max_classes is not None and max_classes < 0:
        raise ParameterError(f"max_classes must be >= 0 (got {max_classes})")
    qi = list(old.quasi_identifiers)
    parts = [_pairs(table, sensitive) for table in (old, new)]
    # Full outer join of the two sparse (class, value) matrices: number every
    # (QI tuple, value) pair of either side, then scatter each side's counts.
    pair_keys, pair_ids = common_class_ids([keys for keys, _ in parts])
    n_pairs = pair_keys.num_rows
    before, after = (
        np.bincount(ids, weights=counts, minlength=n_pairs).astype(np.int64)
        for ids, (_, counts) in zip(pair_ids, parts, strict=True)
    )
    class_keys, (class_of,) = common_class_ids([pair_keys.select(qi)])
    n_classes = class_keys.num_rows
    change = after - before
    changed = change != 0
    values_changed = np.bincount(class_of[changed], minlength=n_classes)
    old_sizes = np.bincount(class_of, weights=before, minlength=n_classes).astype(np.int64)
    new_sizes = np.bincount(class_of, weights=after, minlength=n_classes).astype(np.int64)
    disclosing = changed & (values_changed[class_of] == 1)
    rows = np.flatnonzero(disclosing)
    listing = pair_keys.take(pa.array(rows)).to_pandas()
    listing = listing.rename(columns={sensitive: "value"})
    listing["old_size"] = old_sizes[class_of[rows]]
    listing["new_size"] = new_sizes[class_of[rows]]
    listing["change"] = change[rows]
    listing = listing.sort_values(
        by=["change", *qi], key=lambda c: -c.abs() if c.name == "change" else c
    )
    listing = listing.head(max_classes) if max_classes is not None else listing
    return Differencing(
        sensitive=sensitive,
        classes=n_classes,
        classes_changed=int((values_changed > 0).sum()),
        disclosing_classes=len(rows),
        disclosed_records=int(np.abs(change[rows]).sum()),
        old_sizes=old_sizes,
        new_sizes=new_sizes,
        listing=listing[[*qi, "old_size", "new_size", "value", "change"]].reset_index(drop=True),
    )


def _pairs(table: ClassTable, sensitive: str) -> tuple[pa.Table, NDArray[Any]]:
    """Keys (QI values and ``sensitive``) and counts of every (class, value) pair."""
    columns = [*table.quasi_identifiers, sensitive]
    merged = ClassTable(
        table.quasi_identifiers, (sensitive,), table.keys.select(columns), table.counts
    ).merge()
    return merged.keys, merged.counts
