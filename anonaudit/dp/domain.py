"""Public domains: the cells a release covers, declared without looking at the data.

Which QI combinations occur is itself private: a combination that appears only because
one person is in the data gives that person away. A pure ε-DP release therefore covers a
domain fixed in advance, the cartesian product of each column's declared values
(``--public-domain COL=v1,v2,...`` or ``COL=@FILE``), and adds noise to every cell of it,
empty or not (Dwork & Roth 2014, Section 3.3: histogram queries over a data-independent
partition). A record whose value is not declared falls outside every cell and is left
out of the release; how many were left out is not released.

Without a domain, only the observed combinations can be released, and only under
(ε, δ)-DP with a stability threshold (:mod:`anonaudit.dp.release`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from anonaudit.errors import ParameterError
from anonaudit.files import read_lines
from anonaudit.hierarchy import Hierarchy

__all__ = ["MAX_CELLS", "PublicDomain"]

#: Largest number of cells released over a public domain by default (noise for ten
#: million counts takes about 90 s with OpenDP; see benchmarks/bench_dp.py).
MAX_CELLS = 10_000_000


@dataclass(frozen=True)
class PublicDomain:
    """Declared values of the released columns.

    Attributes
    ----------
    values : dict of str to tuple of (str or None)
        Per column, its possible values in a fixed order (``None`` declares the null).

    Examples
    --------
    >>> d = PublicDomain.parse(["sex=F,M", "band=1,2,3"])
    >>> d.size(["sex", "band"])
    6
    """

    values: Mapping[str, tuple[str | None, ...]]

    @classmethod
    def parse(cls, items: Sequence[str], *, base: Path | None = None) -> PublicDomain:
        """Read ``COL=v1,v2,...`` or ``COL=@FILE`` declarations.

        ``FILE`` holds one value a line, or is an ARX hierarchy file
        (``leaf;parent;...;*``), whose leaves are the declared values.

        Parameters
        ----------
        items : sequence of str
            The declarations; a column named twice is an error.
        base : Path, optional
            Folder that relative ``@FILE`` paths are read from.
        """
        values: dict[str, tuple[str | None, ...]] = {}
        for item in items:
            column, eq, text = item.partition("=")
            column = column.strip()
            if not eq or not column or not text.strip():
                raise ParameterError(
                    f"--public-domain takes COL=v1,v2,... or COL=@FILE (got {item!r})"
                )
            if column in values:
                raise ParameterError(f"--public-domain declares {column!r} twice")
            if text.startswith("@"):
                path = (base or Path()) / text[1:]
                declared = read_lines(path, "--public-domain", "domain")
                if any(";" in line for line in declared):  # an ARX hierarchy: its leaves
                    declared = list(Hierarchy.from_csv(path, sep=";").levels[0])
            else:
                declared = [value.strip() for value in text.split(",") if value.strip()]
            values[column] = tuple(declared)
        return cls.of(values)

    @classmethod
    def of(cls, values: Mapping[str, Sequence[str | None]]) -> PublicDomain:
        """Make a domain from a mapping, refusing empty and repeated value lists."""
        checked: dict[str, tuple[str | None, ...]] = {}
        for column, declared in values.items():
            if isinstance(declared, str):
                raise ParameterError(f"the domain of {column!r} is a list of values, not a string")
            seen = tuple(declared)
            if not seen:
                raise ParameterError(f"the public domain of {column!r} declares no value")
            if len(set(seen)) != len(seen):
                repeated = next(v for v in seen if seen.count(v) > 1)
                raise ParameterError(f"the public domain of {column!r} repeats {repeated!r}")
            checked[column] = seen
        return cls(checked)

    def missing(self, columns: Sequence[str]) -> list[str]:
        """The columns among ``columns`` that have no declared values."""
        return [c for c in columns if c not in self.values]

    def size(self, columns: Sequence[str]) -> int:
        """Number of cells of the cartesian product over ``columns``."""
        return math.prod(len(self.values[c]) for c in columns)

    def cell_index(self, keys: pa.Table, columns: Sequence[str]) -> NDArray[Any]:
        """Each row's cell number in the product over ``columns``; -1 outside the domain.

        Cells are numbered in row-major order of the declared values (the first column
        varies slowest), as :meth:`cell_keys` lists them.
        """
        index = np.zeros(keys.num_rows, dtype=np.int64)
        outside = np.zeros(keys.num_rows, dtype=bool)
        for column in columns:
            declared = pd.Index(pd.Series(self.values[column], dtype=object))
            observed = pd.Series(keys.column(column).to_pylist(), dtype=object)
            position = declared.get_indexer(observed)
            outside |= position < 0
            index = index * len(declared) + np.maximum(position, 0)
        return np.where(outside, -1, index)

    def cell_keys(self, cells: NDArray[Any], columns: Sequence[str]) -> dict[str, list[str | None]]:
        """The values of ``cells`` (numbers from :meth:`cell_index`), per column."""
        shape = [len(self.values[c]) for c in columns]
        positions = np.unravel_index(cells, shape) if len(columns) else ()
        return {
            column: [self.values[column][i] for i in position.tolist()]
            for column, position in zip(columns, positions, strict=True)
        }
