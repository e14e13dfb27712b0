"""Benchmark: the attacker's intervals of ``anonaudit tables`` against a naive baseline.

What it measures
----------------
Count tables drawn with a fixed seed (a gamma-Poisson mixture of mean 70 per cell of
the common table, so that about 2.7% of the finest cells are 1 or 2), published with
every margin and subtotal, cells below a threshold suppressed, timed through
:func:`anonaudit.tables.system.build`, :func:`~anonaudit.tables.system.reduce` and
:func:`anonaudit.tables.attack.attack` (the arithmetic a pencil settles, the published
cells other published cells imply set aside, the rest split into connected components,
one HiGHS model each with its objective changed in place, solving only the bounds no
solution seen settles, the components in a pool of processes when there are several
large ones). ``--case``:

* ``2d`` (the default): the issue's table, ``--size`` x ``--size`` cells with margins
  (200 x 200 = 40,000 cells, 1,095 suppressed), flat code lists, the cells of 1 or 2
  suppressed and nothing else (the pattern an unaided export has);
* ``3d``: a three-dimensional table of 117,649 cells, each dimension a two-level
  hierarchy (4 groups of 11 codes under the total, so 44 leaves and 49 codes), cells of
  1 or 2 suppressed and each completed to a hypercube of suppressed cells within its
  groups (the cell, the next leaf of its group in every dimension, every corner between:
  the secondary pattern of tau-Argus's hypercube method, crude but protective, so that
  the arithmetic alone settles little);
* ``linked``: that table and four tables of the same people sharing its dimensions (its
  three two-dimensional margins and one one-dimensional, 124,901 cells in all), each
  protected as if published alone (its smallest 2% of cells, then hypercubes): a margin
  suppressed in one table and published in another is the linked-tables problem;
* ``million``: the three-dimensional table at 10^6 cells (9 groups of 10 leaves a
  dimension, 100 codes).

Printed: cells, suppressed cells, the common table and its components, seconds (best of
``--repeat``), the peak resident memory of this process before and after the audit and
of the worker processes, the load average before and after, and the naive baseline: one
fresh linear program per bound per suppressed cell over the whole table (scipy's
``linprog``, HiGHS too), as an auditor without the structure would. ``--naive-cells N``
times it on N suppressed cells spread over the table and scales to all of them (the
printed figure says so), checking that both give the same intervals there;
``--naive-cells 0`` runs it on every one (hours beyond the 2-D case), ``--no-naive``
skips it. It always exits 0.

How to run
----------
From the repository root::

    python benchmarks/bench_tables.py                    # 2-D, 40,000 cells
    python benchmarks/bench_tables.py --size 500         # 2-D, 250,000 cells
    python benchmarks/bench_tables.py --case 3d
    python benchmarks/bench_tables.py --case linked
    python benchmarks/bench_tables.py --case million --no-naive
    python benchmarks/bench_tables.py --case 3d --workers 1   # one process
    python benchmarks/bench_tables.py --case 3d --no-naive --whole  # and the whole audit

``--whole`` also times the whole audit as ``anonaudit tables --true-values`` runs it (the
primary rules, the attack, the groups of suppressed cells, the coalitions and the narrow
intervals on the true values) and its JSON report.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best_of

from anonaudit.published import Dimension, PublishedTable, TableSet
from anonaudit.report.tables import tables_json
from anonaudit.tables.attack import attack
from anonaudit.tables.audit import audit_tables
from anonaudit.tables.rules import Rules
from anonaudit.tables.system import System, build, reduce

#: Cells of 1 or 2 are suppressed (a threshold rule of 3).
THRESHOLD = 3
#: A linked table protected alone suppresses its smallest cells: this share of them.
LINKED_SHARE = 0.02


@dataclass(frozen=True)
class Case:
    """A benchmark case: per dimension its groups and leaves per group (0 groups: a
    flat code list), the tables (dimensions kept), and whether suppressions are
    completed to hypercubes."""

    dimensions: tuple[tuple[int, int], ...]
    tables: tuple[tuple[int, ...], ...]
    hypercubes: bool = True


CASES = {
    "3d": Case(((4, 11),) * 3, ((0, 1, 2),)),
    "linked": Case(((4, 11),) * 3, ((0, 1, 2), (0, 1), (0, 2), (1, 2), (0,))),
    "million": Case(((9, 10),) * 3, ((0, 1, 2),)),
}
#: Suppressed cells the naive baseline is timed on by default.
NAIVE_CELLS = {"2d": 40, "3d": 10, "linked": 10, "million": 1}


def dimension(name: str, groups: int, leaves: int) -> Dimension:
    """``groups`` codes of ``leaves`` leaves each under the total (flat if no groups)."""
    if groups == 0:
        return Dimension.flat(name, [f"{name}{i}" for i in range(leaves)])
    parents = {f"{name}{g}": "Total" for g in range(groups)}
    parents |= {f"{name}{g}.{i}": f"{name}{g}" for g in range(groups) for i in range(leaves)}
    return Dimension(name, parents, "Total")


def membership(dim: Dimension) -> np.ndarray:
    """``codes x leaves``: 1 where a code sums a leaf."""
    matrix = np.zeros((len(dim.codes), len(dim.leaves)))
    for k, code in enumerate(dim.codes):
        matrix[k, list(dim.leaves_under(code))] = 1
    return matrix


def hypercubes(values: np.ndarray, hidden: np.ndarray, dims: Sequence[Dimension]) -> np.ndarray:
    """``hidden`` with every hidden cell of leaves completed to a hypercube: in each
    dimension the next leaf of its group (cyclically) too, and every corner between."""
    positions = [{code: k for k, code in enumerate(d.codes)} for d in dims]
    partner = []
    leaf = np.ones(values.shape, dtype=bool)
    for axis, (dim, position) in enumerate(zip(dims, positions, strict=True)):
        mate = np.full(len(dim.codes), -1)
        groups: dict[str, list[int]] = {}
        for code in dim.leaves:
            groups.setdefault(dim.parents[code], []).append(position[code])
        for members in groups.values():
            mate[members] = np.roll(members, -1)
        partner.append(mate)
        shape = [1] * values.ndim
        shape[axis] = -1
        leaf &= (mate >= 0).reshape(shape)
    primary = np.argwhere(hidden & leaf)
    result = hidden.copy()
    for corner in itertools.product((False, True), repeat=values.ndim):
        result[
            tuple(
                np.where(c, partner[axis][primary[:, axis]], primary[:, axis])
                for axis, c in enumerate(corner)
            )
        ] = True
    return result


def publish(
    name: str, cube: np.ndarray, dims: Sequence[Dimension], keep: Sequence[int], case: Case
) -> tuple[PublishedTable, np.ndarray]:
    """The table of ``cube`` over the dimensions ``keep`` with every margin, protected,
    and its true values cell for cell."""
    values = cube
    for axis in range(len(dims) - 1, -1, -1):
        if axis in keep:
            values = np.moveaxis(np.tensordot(membership(dims[axis]), values, (1, axis)), 0, axis)
        else:
            values = values.sum(axis=axis)
    kept = [dims[k] for k in keep]
    threshold = THRESHOLD
    if len(keep) < len(dims):  # a linked table, protected alone: its smallest cells
        threshold = float(np.quantile(values, LINKED_SHARE))
    hidden = (values > 0) & (values < threshold)
    if case.hypercubes:
        hidden = hypercubes(values, hidden, kept)
    codes = tuple(
        np.asarray(d.codes)[i.ravel()] for d, i in zip(kept, np.indices(values.shape), strict=True)
    )
    flat, mask = values.ravel(), hidden.ravel()
    table = PublishedTable(
        name,
        "count",
        tuple(d.name for d in kept),
        codes,
        np.where(mask, 0.0, flat),
        np.where(mask, np.inf, flat),
        np.where(mask, "suppressed", "published"),
        np.where(mask, "x", flat.astype(np.int64).astype(str)),
    )
    return table, flat.astype(np.float64)


def tables(case: Case, seed: int = 0) -> tuple[TableSet, dict[str, np.ndarray]]:
    """The case's tables, drawn with ``seed``, and their true values by table name."""
    rng = np.random.default_rng(seed)
    names = "rc" if len(case.dimensions) == 2 else "abcdefgh"
    dims = [dimension(n, g, k) for n, (g, k) in zip(names, case.dimensions, strict=False)]
    cube = rng.poisson(rng.gamma(1.0, 70, size=tuple(len(d.leaves) for d in dims)))
    made = [
        publish("t_" + "".join(dims[k].name for k in keep), cube, dims, keep, case)
        for keep in case.tables
    ]
    published = TableSet(tuple(t for t, _ in made), {d.name: d for d in dims})
    return published, {t.name: values for t, values in made}


def naive(system: System, rows: np.ndarray) -> dict[int, tuple[float, float]]:
    """One fresh LP per bound per cell, over the whole table."""
    a = system.matrix
    exact = system.exact
    a_eq, b_eq = a[exact], system.lower[exact]
    bounded = ~exact & np.isfinite(system.upper)
    a_ub = a[bounded] if bounded.any() else None
    b_ub = system.upper[bounded] if bounded.any() else None
    result = {}
    for row in rows:
        c = np.asarray(a[row].todense()).ravel()
        low = optimize.linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
        high = optimize.linprog(-c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
        top = -high.fun if high.status == 0 else np.inf
        result[int(row)] = (float(np.ceil(low.fun - 1e-7)), float(np.floor(top + 1e-7)))
    return result


def peak_mib() -> float:
    """Peak resident set size of this process in MiB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Workers(threading.Thread):
    """The largest peak resident set size (``VmHWM``, since their start: ``ru_maxrss``
    of a spawned child counts the parent's pages it was forked with) of this process's
    children, sampled every 0.1 s from ``/proc`` until :meth:`stop` (0 elsewhere)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        me = str(os.getpid())
        while not self.done.wait(0.1):
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    if stat.read_text().rsplit(")", 1)[1].split()[1] != me:
                        continue
                    status = (stat.parent / "status").read_text()
                except (OSError, IndexError):
                    continue
                for line in status.splitlines():
                    if line.startswith("VmHWM:"):
                        self.peak = max(self.peak, int(line.split()[1]) / 1024)

    def stop(self) -> float:
        """Stop sampling; the peak in MiB."""
        self.done.set()
        self.join()
        return self.peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", choices=["2d", *CASES], default="2d")
    parser.add_argument("--size", type=int, default=200, help="2d: cells a side, margin included")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: auto)")
    parser.add_argument("--naive-cells", type=int, default=None)
    parser.add_argument("--no-naive", action="store_true")
    parser.add_argument("--repeat", type=int, default=None, help="default 2, 1 for million")
    parser.add_argument(
        "--whole",
        action="store_true",
        help="also time the whole audit (anonaudit tables: rules, attack, groups, "
        "coalitions, narrow intervals on the true values) and its JSON report",
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    case = CASES.get(args.case, Case(((0, args.size - 1),) * 2, ((0, 1),), hypercubes=False))
    published, truth = tables(case)
    cells = sum(len(t) for t in published.tables)
    suppressed = sum(int(t.suppressed.sum()) for t in published.tables)
    shapes = ", ".join(f"{len(t):,} ({' x '.join(t.dimensions)})" for t in published.tables)
    print(f"case {args.case}: {len(published.tables)} table(s) of {shapes} cells")
    print(f"cells: {cells:,}, suppressed: {suppressed:,}, common table: {published.cube_size:,}")
    before = peak_mib()

    def ours() -> tuple[dict[int, tuple[float, float]], int, int, int]:
        reduced = reduce(build(published))
        sizes = np.bincount(reduced.component)
        found = {i.row: (i.lower, i.upper) for i in attack(reduced, workers=args.workers)}
        return found, len(reduced.free), len(sizes), int(sizes.max(initial=0))

    repeat = args.repeat or (1 if args.case == "million" else 2)
    workers = Workers()
    workers.start()
    seconds, (found, free, components, largest) = best_of(repeat, ours)
    worker_peak = workers.stop()
    exact = sum(1 for low, high in found.values() if low == high)
    print(
        f"after the arithmetic: {free:,} cells free in {components:,} components "
        f"(the largest {largest:,})"
    )
    print(f"anonaudit: {seconds:.2f} s (best of {repeat}), {exact:,} cells disclosed exactly")
    pool = f"each worker process at most {worker_peak:,.0f} MiB" if worker_peak else "no pool"
    print(
        f"peak RSS: {before:,.0f} MiB with the tables made, {peak_mib():,.0f} MiB after the "
        f"audit; {pool}"
    )
    if not args.no_naive:
        system = build(published)
        targets = np.flatnonzero(~system.exact)
        n = NAIVE_CELLS[args.case] if args.naive_cells is None else args.naive_cells
        sample = targets if n <= 0 else targets[:: max(1, len(targets) // n)]
        start = time.perf_counter()
        baseline = naive(system, sample)
        spent = time.perf_counter() - start
        scaled = spent * len(targets) / len(sample)
        label = "measured" if len(sample) == len(targets) else f"{len(sample)} cells timed, scaled"
        print(f"naive (one fresh linprog per bound per cell): {scaled:,.1f} s ({label})")
        agree = all(baseline[r] == found[r] for r in baseline)
        print(f"same intervals on the {len(sample)} cells compared: {agree}")
        print(f"ratio naive / anonaudit: {scaled / seconds:,.1f}x")
    if args.whole:
        whole(published, truth, repeat)
    print(f"load average after: {os.getloadavg()}")
    return 0


def whole(published: TableSet, truth: dict[str, np.ndarray], repeat: int) -> None:
    """Time the whole audit, as ``anonaudit tables --true-values ... --json`` runs it."""

    def run() -> tuple[int, int]:
        audited = audit_tables(published, Rules(threshold=THRESHOLD), values=truth)
        return len(audited.findings), len(tables_json(audited, show_values=False))

    seconds, (findings, size) = best_of(repeat, run)
    print(
        f"whole audit with the true values and its JSON report: {seconds:.2f} s "
        f"(best of {repeat}), {findings:,} findings, {size:,} bytes of JSON; "
        f"peak RSS {peak_mib():,.0f} MiB"
    )


if __name__ == "__main__":
    raise SystemExit(main())
