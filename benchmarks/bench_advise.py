"""Benchmark: ``anonaudit advise``'s pruned lattice search against exhaustive evaluation.

What it measures
----------------
The UCI Adult extract shipped in ``sample_data/adult/`` (30,162 records) with the nine
QIs ARX uses in its tests (sex, age, race, marital-status, education, native-country,
workclass, occupation, salary-class) and ARX's hierarchies beside the data: a lattice of
2 * 5 * 2 * 3 * 4 * 3 * 3 * 3 * 2 = 12,960 full-domain generalizations. For k = 5
(``--k``) with 0% and 2% suppression (``--limits``):

* ``pruned``: :func:`anonaudit.advise` as the command line runs it (Flash-style
  binary search on chains, verdicts inferred by monotonicity, the losses of inferred
  passes computed where suppression makes them non-monotone);
* ``exhaustive``: the same search with ``prune=False``, every node evaluated, the
  baseline, in the same process.

Both list the first ``--max-results`` transformations of the front (materialized with
the string recoding and audited; included in the time). The class table is loaded once
and not timed. Each run repeats ``--repeat`` times and the best time is shown, with the
nodes evaluated, inferred and measured, the passing nodes, the front's size and the
ratio exhaustive / pruned. The fronts of both runs are compared (they must be equal).

With ``--l L --sensitive COL`` (e.g. ``--l 3 --sensitive occupation``) the policy adds
distinct l-diversity of that column, which leaves the QIs: a policy not monotone under
suppression, so every node is audited in full (suppression rounds included), the path
non-monotone policies take.

How to run
----------
From the repository root::

    python benchmarks/bench_advise.py [--k 5] [--limits 0,0.02] [--repeat 3]
    python benchmarks/bench_advise.py --l 3 --sensitive occupation --limits 0.02 --repeat 1

The script always exits 0: it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from anonaudit import Policy, ReadOptions, Roles, load  # noqa: E402
from anonaudit.auditing import advise  # noqa: E402
from anonaudit.hierarchy import Hierarchy  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from adult_data import ADULT_DIR as ADULT  # noqa: E402
from adult_data import ADULT_QIS as QIS  # noqa: E402
from timing import best_of  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--limits", default="0,0.02", help="suppression limits, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-results", type=int, default=10)
    parser.add_argument("--l", type=int, help="distinct l-diversity of --sensitive too")
    parser.add_argument("--sensitive", help="a column of the nine, audited as the SA")
    args = parser.parse_args()
    if (args.l is None) != (args.sensitive is None) or args.sensitive not in (None, *QIS):
        parser.error(f"--l and --sensitive go together; --sensitive is one of {', '.join(QIS)}")

    qis = [qi for qi in QIS if qi != args.sensitive]
    sensitive = [] if args.sensitive is None else [args.sensitive]
    table = load(ADULT / "adult.csv", Roles(qis, sensitive), reading=ReadOptions(sep=";"))
    hierarchies = {qi: Hierarchy.from_csv(ADULT / f"adult_hierarchy_{qi}.csv") for qi in qis}
    policy = Policy(k=args.k, l=args.l)
    print(
        f"Adult: {table.rows:,} records, {len(table.classes):,} classes, {len(qis)} QIs; "
        f"k = {args.k}" + ("" if args.l is None else f", l = {args.l} of {args.sensitive}")
    )
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    header = (
        f"{'limit':>6} {'run':>10} {'nodes':>6} {'evaluated':>9} {'inferred':>8} "
        f"{'measured':>8} {'passing':>7} {'front':>5} {'seconds':>8}"
    )
    print(header)
    for limit in (float(x) for x in args.limits.split(",")):
        common = {
            "table": table,
            "hierarchies": hierarchies,
            "policy": policy,
            "suppression_limit": limit,
            "max_results": args.max_results,
        }
        timings = {}
        fronts = {}
        for name, prune in (("pruned", True), ("exhaustive", False)):
            work = functools.partial(advise, prune=prune, **common)
            seconds, advice = best_of(args.repeat, work)
            timings[name] = seconds
            fronts[name] = [t.levels for t in advice.transformations]
            print(
                f"{limit:>6.2%} {name:>10} {advice.nodes:>6,} {advice.evaluated:>9,} "
                f"{advice.pruned:>8,} {advice.measured:>8,} {advice.passing:>7,} "
                f"{advice.front:>5} {seconds:>8.2f}"
            )
        same = "same front" if fronts["pruned"] == fronts["exhaustive"] else "FRONTS DIFFER"
        ratio = timings["exhaustive"] / timings["pruned"]
        print(f"{'':>6} exhaustive / pruned = {ratio:.1f}x ({same}); best: {fronts['pruned'][:1]}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
