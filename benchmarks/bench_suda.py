"""Benchmark: SUDA and the QI analysis on the Adult data, against per-record baselines.

What it measures
----------------
On ``sample_data/adult/adult.csv`` (30,162 records) with ARX's 9 quasi-identifiers
(sex, age, race, marital-status, education, native-country, workclass, occupation,
salary-class), each timed with ``time.perf_counter``, best of ``--repeat``:

* ``load``: building the class table from the CSV (19,502 classes), the cost every audit
  pays before any check;
* ``suda`` with every MSU size (511 attribute subsets) and with ``--max-msu-size``;
* ``qi_analysis`` of all 511 subsets;
* the baseline: the same MSU search on the raw records, as a tool without a class table
  does it (pandas ``groupby(...).transform("size")`` on the 30,162 rows per subset, a
  record unique where its group has one row, minimal where no subset one column smaller
  is unique). Its per-record scores are compared with the class-table scores read per
  record: they must be equal.

Printed: each time, the ratio of the baseline to ``suda``, and of ``suda`` to ``load``.
The script always exits 0: it is a benchmark, not a test.

How to run
----------
From the repository root::

    python benchmarks/bench_suda.py
    python benchmarks/bench_suda.py --repeat 5 --max-msu-size 4
"""

from __future__ import annotations

import argparse
import os
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonaudit import ReadOptions, Roles, load
from anonaudit.measures.qi_analysis import qi_analysis
from anonaudit.measures.suda import suda, suda_weights

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from adult_data import ADULT_CSV as ADULT
from adult_data import ADULT_QIS as QI
from timing import best_of


def raw_record_scores(frame: pd.DataFrame, max_size: int) -> np.ndarray:
    """SUDA scores per record, searching MSUs on the raw records (the baseline)."""
    att = len(frame.columns)
    weights = suda_weights(att)
    codes = frame.apply(lambda column: pd.factorize(column, use_na_sentinel=False)[0])
    scores = np.zeros(len(frame))
    previous: dict[tuple[int, ...], np.ndarray] = {}
    for width in range(1, max_size + 1):
        current = {}
        for subset in combinations(range(att), width):
            columns = [codes.columns[i] for i in subset]
            sizes = codes.groupby(columns, sort=False)[columns[0]].transform("size")
            unique = sizes.to_numpy() == 1
            minimal = unique.copy()
            if width > 1:
                for left_out in subset:
                    minimal &= ~previous[tuple(p for p in subset if p != left_out)]
            current[subset] = unique
            scores[minimal] += weights[width - 1]
        previous = current
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-msu-size", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    t_load, table = best_of(
        args.repeat, lambda: load(ADULT, Roles(QI), reading=ReadOptions(sep=";"))
    )
    t_full, full = best_of(args.repeat, lambda: suda(table))
    t_limited, _ = best_of(args.repeat, lambda: suda(table, max_msu_size=args.max_msu_size))
    t_qi, analysis = best_of(args.repeat, lambda: qi_analysis(table))
    frame = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)[QI]
    t_raw, raw = best_of(args.repeat, lambda: raw_record_scores(frame, len(QI)))

    keys = table.classes.keys.to_pandas()
    keys["class_id"] = np.arange(len(keys))
    per_record = frame.merge(keys, how="left", on=QI)["class_id"].to_numpy()
    agree = np.array_equal(full.scores[per_record], raw)

    print(f"records {table.rows:,}, classes {len(table.classes):,}, QIs {len(QI)}")
    print(f"load (class table from CSV)          {t_load:8.3f} s")
    print(f"suda, every MSU size (511 subsets)   {t_full:8.3f} s")
    print(f"suda, MSUs of up to {args.max_msu_size} QIs            {t_limited:8.3f} s")
    print(f"qi_analysis, 511 subsets             {t_qi:8.3f} s  ({len(analysis.entries)} entries)")
    print(f"baseline: MSUs on the raw records    {t_raw:8.3f} s")
    print(f"ratio baseline / suda                {t_raw / t_full:8.2f}x")
    print(f"ratio suda / load                    {t_full / t_load:8.2f}x")
    print(f"scores equal to the baseline's       {agree}")
    print(
        f"special uniques {full.special_uniques:,} of {full.sample_uniques:,} sample uniques; "
        f"MSUs by size {full.msus_by_size}"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
