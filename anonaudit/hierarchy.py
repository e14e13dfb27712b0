"""Generalization hierarchies and ground-distance matrices read from files.

A hierarchy file is in ARX's format: one line per leaf value, the leaf first and its
ancestors after it, the most general last (``leaf;parent;...;*``). Every line has the
same number of fields. A ground-distance file is a square CSV matrix whose header row
and first column name the SA values.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anonaudit.errors import HierarchyError, SourceNotFoundError

__all__ = ["GroundDistance", "Hierarchy"]


def _read_rows(path: Path, sep: str | None) -> list[list[str]]:
    if not path.exists():
        raise SourceNotFoundError(f"{path}: no such file; check the path")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is not a value
    except UnicodeDecodeError as exc:
        raise HierarchyError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise HierarchyError(f"{path}: the file is empty")
    delimiter = sep or max(";,\t|", key=lines[0].count)
    return [[cell.strip() for cell in row] for row in csv.reader(lines, delimiter=delimiter)]


@dataclass(frozen=True)
class Hierarchy:
    """A value generalization hierarchy with all leaves at the same depth.

    Attributes
    ----------
    levels : tuple of tuple of str
        ``levels[j][i]`` is leaf i generalized to level j (level 0 is the leaf itself).
    name : str
        Where it came from, for messages.
    """

    levels: tuple[tuple[str, ...], ...]
    name: str = "<hierarchy>"

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[str]], *, name: str = "<hierarchy>") -> Hierarchy:
        """Build from rows ``[leaf, parent, ..., root]``.

        A single root is added above the last level when that level has several values.
        """
        if not rows:
            raise HierarchyError(f"{name}: the hierarchy has no rows")
        width = len(rows[0])
        for number, row in enumerate(rows, start=1):
            if len(row) != width:
                raise HierarchyError(
                    f"{name}, line {number}: {len(row)} fields where line 1 has {width}; "
                    "every leaf needs the same number of levels"
                )
        leaves = [row[0] for row in rows]
        if len(set(leaves)) != len(leaves):
            twice = next(v for v in leaves if leaves.count(v) > 1)
            raise HierarchyError(f"{name}: leaf {twice!r} is listed twice")
        levels = [tuple(row[j] for row in rows) for j in range(width)]
        if len(set(levels[-1])) > 1:
            levels.append(("*",) * len(rows))
        return cls(tuple(levels), name)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], *, sep: str | None = None) -> Hierarchy:
        """Read an ARX-format hierarchy file (separator sniffed among ``; , TAB |``)."""
        path = Path(path)
        return cls.from_rows(_read_rows(path, sep), name=str(path))

    @property
    def height(self) -> int:
        """Number of levels above the leaves (H in Li et al. 2007)."""
        return len(self.levels) - 1

    def ancestors(self, values: Sequence[str]) -> NDArray[Any]:
        """Node ids of each value's ancestors.

        Returns an ``(len(values), height + 1)`` int array; column j holds a dense id of
        the level-j node, unique within the level. Nodes are identified by their whole
        path to the root, so equal labels under different parents stay apart.

        Raises
        ------
        HierarchyError
            A value that is not a leaf of the hierarchy (named in the message).
        """
        position = {leaf: i for i, leaf in enumerate(self.levels[0])}
        rows = []
        for value in values:
            if value not in position:
                raise HierarchyError(
                    f"{self.name}: value {value!r} of the data is not in the hierarchy; "
                    "add a line for it"
                )
            rows.append(position[value])
        result = np.empty((len(values), len(self.levels)), dtype=np.int64)
        for j in range(len(self.levels)):
            paths = list(zip(*self.levels[j:], strict=True))
            ids: dict[tuple[str, ...], int] = {}
            result[:, j] = [ids.setdefault(paths[r], len(ids)) for r in rows]
        return result


@dataclass(frozen=True)
class GroundDistance:
    """An arbitrary ground distance between SA values, for EMD solved with POT.

    Attributes
    ----------
    values : tuple of str
        The SA values, in matrix order.
    matrix : numpy.ndarray
        ``matrix[i, j]`` is the distance from ``values[i]`` to ``values[j]``; non-negative,
        zero on the diagonal. Li et al. (2007) normalize ground distances to [0, 1].
    name : str
        Where it came from, for messages.
    """

    values: tuple[str, ...]
    matrix: NDArray[Any]
    name: str = "<ground distance>"

    def __post_init__(self) -> None:
        m = len(self.values)
        if self.matrix.shape != (m, m):
            raise HierarchyError(f"{self.name}: the matrix must be {m} x {m} for {m} values")
        if (self.matrix < 0).any() or np.any(np.diag(self.matrix) != 0):
            raise HierarchyError(f"{self.name}: distances must be >= 0 with a zero diagonal")
        if self.matrix.max(initial=0) > 1:
            raise HierarchyError(f"{self.name}: distances must lie in [0, 1] (Li et al. 2007)")

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], *, sep: str | None = None) -> GroundDistance:
        """Read a matrix file: header ``;v1;v2;...``, then rows ``vi;d(i,1);d(i,2);...``."""
        path = Path(path)
        rows = _read_rows(path, sep)
        header = rows[0][1:]
        body = rows[1:]
        if [row[0] for row in body] != header:
            raise HierarchyError(f"{path}: the first column must list the header's values in order")
        try:
            matrix = np.array([[float(x) for x in row[1:]] for row in body], dtype=float)
        except ValueError as exc:
            raise HierarchyError(f"{path}: {exc}") from None
        return cls(tuple(header), matrix, str(path))

    def submatrix(self, values: Sequence[str]) -> NDArray[Any]:
        """The distances among ``values`` (which must all be in the matrix)."""
        index = {v: i for i, v in enumerate(self.values)}
        missing = [v for v in values if v not in index]
        if missing:
            raise HierarchyError(
                f"{self.name}: value {missing[0]!r} of the data is not in the matrix; add it"
            )
        pick = [index[v] for v in values]
        return self.matrix[np.ix_(pick, pick)]
