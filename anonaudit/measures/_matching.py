"""Matching equivalence classes across class tables by their QI values.

Two tables (two releases, a release and a population) describe the same class when their
QI tuples are equal, nulls included. :func:`common_class_ids` numbers the classes of
several key tables in one code space, so that the comparison is an integer one.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.classtable import ClassTable

__all__ = ["common_class_ids"]


def common_class_ids(keys: Sequence[pa.Table]) -> tuple[pa.Table, list[NDArray[Any]]]:
    """Number the QI tuples of several key tables (same columns) in one code space.

    Parameters
    ----------
    keys : sequence of pyarrow.Table
        String columns, the same names in each; one row per class, or per combination.

    Returns
    -------
    distinct : pyarrow.Table
        The distinct QI tuples over all tables; row ``i`` is the tuple of code ``i``.
    ids : list of numpy.ndarray
        For each table, the code of each of its rows; equal codes, equal QI tuples.
    """
    names = tuple(keys[0].column_names)
    stacked = pa.concat_tables([table.select(list(names)) for table in keys])
    ones = np.ones(stacked.num_rows, dtype=np.int64)
    classes = ClassTable(names, (), stacked, ones).classes
    bounds = np.cumsum([0, *(table.num_rows for table in keys)])
    return classes.keys, [classes.index[a:b] for a, b in itertools.pairwise(bounds)]
