"""Hypothesis strategies shared by the property tests: raw records and their class tables.

Properties are checked on raw records (one tuple per record), against definitions
computed straight from them; the class table under test is built from the same records
with :func:`class_table`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from hypothesis import strategies as st

from anonaudit.classtable import ClassTable

Row = tuple[str | None, ...]

#: A small alphabet with a null: values collide often, so classes and ties are common.
VALUE = st.sampled_from(["a", "b", "c", None])


def rows(*columns: st.SearchStrategy[str | None], max_size: int = 20) -> st.SearchStrategy:
    """Non-empty lists of records, one value per column drawn from ``columns``."""
    return st.lists(st.tuples(*columns), min_size=1, max_size=max_size)


def wide_rows(
    value: st.SearchStrategy[str | None] = VALUE, *, max_columns: int = 4, max_size: int = 15
) -> st.SearchStrategy:
    """Records of 1 to ``max_columns`` columns (the same width within one example)."""
    return st.integers(1, max_columns).flatmap(
        lambda width: rows(*[value] * width, max_size=max_size)
    )


def class_table(
    records: Sequence[Row],
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    *,
    counts: Sequence[int] | None = None,
) -> ClassTable:
    """The class table of ``records``, whose columns are the QIs then the SAs.

    Each record counts once, or ``counts[i]`` times.
    """
    names = [*quasi_identifiers, *sensitive]
    frame = pd.DataFrame(list(records), columns=names)
    frame["count"] = list(counts) if counts is not None else 1
    return ClassTable.from_frame(
        frame, quasi_identifiers=list(quasi_identifiers), sensitive=list(sensitive)
    )
