"""Helpers shared by the checks: per-class reductions and offending-class frames."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from anonaudit.classtable import Classes

__all__ = ["TOLERANCE", "offending_classes"]

#: Relative slack for comparing a float measure with its threshold, so that a balanced
#: three-value class (entropy l = exp(ln 3), which may round to 2.9999999999999996)
#: meets ``entropy_l=3``.
TOLERANCE = 1e-9


def offending_classes(
    classes: Classes,
    mask: np.ndarray,
    measures: Mapping[str, np.ndarray],
    *,
    worst_first: str,
    descending: bool,
) -> pd.DataFrame:
    """The classes selected by ``mask`` with their QI values, size and measures.

    Parameters
    ----------
    classes : Classes
        The equivalence classes.
    mask : numpy.ndarray of bool
        Which classes to list (length C).
    measures : mapping of str to numpy.ndarray
        Per-class values to show beside the QI values (each length C).
    worst_first : str
        Column to sort by, worst first; ties broken by class size, smallest first, then
        by the QI values, so listings do not depend on the engine's output order.
    descending : bool
        Whether larger values of ``worst_first`` are worse.

    Returns
    -------
    pandas.DataFrame
        QI columns, ``size``, then the measures; index reset.
    """
    listed = classes.keys.filter(pa.array(mask))
    # Object columns with None for null: the same under pandas 2 and 3 (whose string
    # dtype would turn a null QI value into NaN).
    frame = pd.DataFrame(
        {
            name: pd.Series(listed.column(name).to_pylist(), dtype=object)
            for name in listed.column_names
        }
    )
    frame["size"] = classes.sizes[mask]
    for name, values in measures.items():
        frame[name] = values[mask]
    if len(frame):
        qi = list(classes.keys.column_names)
        keys = ([worst_first] if worst_first == "size" else [worst_first, "size"]) + qi
        order = [not descending] + [True] * (len(keys) - 1)
        frame = frame.sort_values(keys, ascending=order, kind="stable").reset_index(drop=True)
    return frame
