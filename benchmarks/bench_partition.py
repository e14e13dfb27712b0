"""Benchmark: which observed keys a DP release keeps, and the error of its counts.

Issue 25, item 8. Observed keys (a release without a public domain,
:func:`anonaudit.dp.release.release`) are kept by a stability threshold on their noisy
count. This benchmark measures, on the UCI Adult data, what the release does now, a
randomized threshold, against the two rules it was chosen over: the whole-number
threshold it used before, and the optimal partition selection of Desfontaines, Voss,
Gipson & Mandayam ("Differentially private partition selection", PoPETs 2022(4),
Theorem 1).

What it compares
----------------
Observed keys are the QI combinations of the data (class table over ``--qis``), one
record per person (``max_contributions = 1``, add-remove), each release at a total
(ε, δ). Every count gets noise at ε (discrete Laplace; discrete Gaussian at ε and δ/2)
and the selection spends the keys' δ (all of δ for Laplace noise, δ/2 for Gaussian):

* **randomized** (today, the product's own :func:`~anonaudit.dp.release.release`): a
  key is kept when its noisy count reaches τ, the smallest whole threshold whose δ
  fits, and with probability q when it is τ − 1, q chosen so that the keys' δ is the
  δ allowed (:func:`~anonaudit.dp.accounting.stability_threshold`);
* **whole** (before): the same noise and τ, a key kept only when its noisy count
  reaches τ; its δ is what τ alone spends (the "spent" column, a share of the δ allowed);
* **optimal + counts**: a key with n records is kept with the paper's optimal
  probability π_n (:func:`keep_probabilities`) at ε·``share`` and the selection's δ,
  drawn from the operating system's secure generator
  (:func:`~anonaudit.dp.mechanisms.bernoulli`); a kept key's count then needs noise of
  its own, at ε·(1 − ``share``) (and δ/2 for Gaussian noise, calibrated on the Gaussian
  curve, :func:`~anonaudit.dp.accounting.noise_scale`). Sequential composition: the
  total is the same (ε, δ).

Printed per row, in two tables: the true keys; the keys released (mean over ``--runs``
releases) and the mean absolute error of the counts over *all* true keys, an
unreleased key counting as 0 (so a dropped key of n records costs n). The first table
sets the randomized threshold beside the whole one, sampled and in expectation (exact,
from the noise's distribution: no sampling error). The second sets the optimal
selection at each share beside the randomized threshold, with the ratios, and ends
with the paper's own comparison, keys only (no counts released), in expectation: the
randomized threshold on noise at the whole ε against π_n at the whole ε.

Measured on the 2-core development machine: see docs/dp.md ("Partition selection").
The load average is printed before and after; it does not change the counts, only the
time taken (about a minute for the defaults).

How to run
----------
From the repository root::

    python benchmarks/bench_partition.py
    python benchmarks/bench_partition.py --runs 50 --data sample_data/adult/adult.csv

The Adult data (``;``-separated) is read from ``--data`` (default
``/work/shared/data/adult/adult.csv``, then ``sample_data/adult/adult.csv``); without it
the benchmark prints why and exits 0.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonaudit.classtable import ClassTable
from anonaudit.dp import DPOptions, PrivacyGuarantee, Release, add_noise, release
from anonaudit.dp.accounting import delta_threshold, noise_scale
from anonaudit.dp.mechanisms import Mechanism, NoiseDistribution, bernoulli

ROOT = Path(__file__).resolve().parents[1]
DATA = (Path("/work/shared/data/adult/adult.csv"), ROOT / "sample_data" / "adult" / "adult.csv")
QI_SETS = (
    ("sex", "race", "education"),
    ("sex", "age", "race", "marital-status"),
    ("age", "education", "occupation"),
)
SETTINGS: tuple[tuple[Mechanism, float, float], ...] = (
    ("discrete-laplace", 0.1, 1e-6),
    ("discrete-laplace", 0.5, 1e-6),
    ("discrete-laplace", 1.0, 1e-6),
    ("discrete-laplace", 1.0, 1e-9),
    ("discrete-laplace", 2.0, 1e-6),
    ("discrete-gaussian", 1.0, 1e-6),
)
SHARES = (0.5, 0.75, 0.9)


def keep_probabilities(epsilon: float, delta: float, largest: int) -> NDArray[Any]:
    """π_0, ..., π_largest: the optimal (ε, δ)-DP chance of keeping a key of n people.

    Desfontaines, Voss, Gipson & Mandayam 2022, "Differentially private partition
    selection", PoPETs 2022(4), Theorem 1, as its recurrence: ``π_0 = 0`` and

        π_n = min(e^ε π_{n-1} + δ,  1 - e^{-ε} (1 - π_{n-1} - δ),  1),

    the largest value the two DP inequalities between n - 1 and n people allow
    (``π_n <= e^ε π_{n-1} + δ`` and ``1 - π_{n-1} <= e^ε (1 - π_n) + δ``). Its closed
    form: ``δ (e^{nε} - 1) / (e^ε - 1)`` up to the first crossover, then
    ``1 - π_n = e^{-mε} (1 - π_{n1} + δ / (e^ε - 1)) - δ / (e^ε - 1)``, then 1.

    >>> [round(float(p), 6) for p in keep_probabilities(math.log(2), 0.1, 6)]
    [0.0, 0.1, 0.3, 0.7, 0.9, 1.0, 1.0]
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"need epsilon > 0 and 0 < delta < 1 (got {epsilon!r}, {delta!r})")
    grow, shrink = math.exp(epsilon), math.exp(-epsilon)
    pi = np.ones(largest + 1)
    pi[0] = 0.0
    for n in range(1, largest + 1):
        previous = float(pi[n - 1])
        pi[n] = min(grow * previous + delta, 1 - shrink * (1 - previous - delta), 1.0)
        if pi[n] == 1.0:
            break  # the rest stay 1
    return pi


@dataclass(frozen=True)
class Outcome:
    """Mean keys released and mean absolute error over all true keys."""

    keys: float
    error: float


def measure(true: NDArray[Any], runs: list[NDArray[Any]]) -> Outcome:
    """The :class:`Outcome` of released counts (one array a run) of the keys ``true``."""
    return Outcome(
        float(np.mean([(released > 0).sum() for released in runs])),
        float(np.mean([np.abs(released - true).mean() for released in runs])),
    )


def threshold_releases(
    table: ClassTable, mechanism: Mechanism, epsilon: float, delta: float, runs: int
) -> tuple[Outcome, Outcome, Release]:
    """The whole-number threshold and today's randomized one, ``runs`` times each, and
    today's last release (its τ, q, noise scale and δ).

    Today's release is the product's own; the whole-number threshold is the rule it
    applied before, on fresh noise of the same scale and the same τ.
    """
    options = DPOptions(PrivacyGuarantee(epsilon, delta), mechanism=mechanism)
    whole, randomized = [], []
    for _ in range(runs):
        r = release(table, options)
        assert r.threshold is not None  # observed keys
        randomized.append(r.released_counts)
        noisy = add_noise(r.true_counts, mechanism=mechanism, scale=r.noise_scale)
        whole.append(np.where(noisy >= r.threshold, noisy, 0))
    return measure(table.counts, whole), measure(table.counts, randomized), r


def expected(
    counts: NDArray[Any], noise: NoiseDistribution, threshold: int, keep_below: float
) -> Outcome:
    """The exact expectation of :func:`measure` for a threshold τ that keeps a noisy
    count of τ − 1 with probability ``keep_below``, from the noise's distribution."""
    z, p = noise.support()
    values, keys = np.unique(counts, return_counts=True)
    noisy = values[:, None] + z[None, :]
    kept = np.where(noisy >= threshold, 1.0, np.where(noisy == threshold - 1, keep_below, 0.0))
    error = kept * np.abs(z) + (1 - kept) * values[:, None]
    return Outcome(
        float(keys @ (kept * p).sum(axis=1)), float(keys @ (error * p).sum(axis=1) / len(counts))
    )


def optimal_release(
    table: ClassTable,
    mechanism: Mechanism,
    epsilon: float,
    delta: float,
    share: float,
    runs: int,
) -> Outcome:
    """The candidate: π_n at ε·share, counts noised at the rest, ``runs`` times.

    δ is split as today's release splits it: all to the selection with Laplace noise,
    half to the selection and half to the counts with Gaussian noise.
    """
    counts = table.counts
    laplace = mechanism == "discrete-laplace"
    selection_delta = delta if laplace else delta / 2
    pi = keep_probabilities(share * epsilon, selection_delta, int(counts.max()))[counts]
    scale = noise_scale(
        mechanism, epsilon=(1 - share) * epsilon, delta=delta - selection_delta, l1=1, l2=1.0
    )
    released = [
        np.where(
            bernoulli(pi), np.maximum(add_noise(counts, mechanism=mechanism, scale=scale), 0), 0
        )
        for _ in range(runs)
    ]
    return measure(counts, released)


def ratio(new: float, old: float) -> str:
    """``new / old`` to two decimals, or ``-`` when ``old`` is 0."""
    return f"{new / old:.2f}" if old else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, help="the Adult CSV (;-separated)")
    parser.add_argument("--runs", type=int, default=20, help="releases per measurement (mean)")
    args = parser.parse_args(argv)
    path = args.data or next((p for p in DATA if p.is_file()), None)
    if path is None or not path.is_file():
        tried = args.data or " or ".join(str(p) for p in DATA)
        print(f"bench_partition: skipped, the Adult data is not at {tried} (give --data PATH)")
        return 0
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    records = pd.read_csv(path, sep=";", dtype=str)
    print(f"{path}: {len(records):,} records, one per person; {args.runs} releases per figure")
    print("keys: keys released (mean); MAE: mean absolute error over all true keys")
    setting = f"{'QIs':<30} {'mechanism':<17} {'eps':>3} {'delta':>5} {'true':>5}"
    print("\n1. whole-number threshold (before) and randomized threshold (today)")
    print("   spent: the whole threshold's delta / the delta allowed; x: randomized / whole")
    print(
        f"{setting} {'tau':>4} {'q':>5} {'spent':>5} | whole keys   MAE | randomized keys"
        "   MAE keys x MAE x | expected: whole keys   MAE randomized keys   MAE"
    )
    second = []
    for qis in QI_SETS:
        frame = records.groupby(list(qis)).size().reset_index(name="count")
        table = ClassTable.from_frame(frame, quasi_identifiers=list(qis))
        for mechanism, epsilon, delta in SETTINGS:
            whole, randomized, r = threshold_releases(table, mechanism, epsilon, delta, args.runs)
            noise = r.noise
            assert noise is not None and r.threshold is not None and r.keep_below is not None
            spent = delta_threshold(
                mechanism, scale=r.noise_scale, threshold=r.threshold, l0=1, linf=1
            )
            exact_whole = expected(table.counts, noise, r.threshold, 0.0)
            exact = expected(table.counts, noise, r.threshold, r.keep_below)
            row = f"{','.join(qis):<30} {mechanism:<17} {epsilon:3.1f} {delta:5.0e} {len(table):5d}"
            print(
                f"{row} {r.threshold:4d} {r.keep_below:5.3f} {spent / r.cost.delta:5.2f} | "
                f"{whole.keys:10.0f} {whole.error:5.2f} | {randomized.keys:15.0f} "
                f"{randomized.error:5.2f} {ratio(randomized.keys, whole.keys):>6} "
                f"{ratio(randomized.error, whole.error):>5} | {exact_whole.keys:16.1f} "
                f"{exact_whole.error:5.3f} {exact.keys:15.1f} {exact.error:5.3f}"
            )
            line = f"{row} | {randomized.keys:15.0f} {randomized.error:5.2f}"
            for share in SHARES:
                new = optimal_release(table, mechanism, epsilon, delta, share, args.runs)
                line += (
                    f" | {new.keys:14.0f} {new.error:5.2f} "
                    f"{ratio(new.keys, randomized.keys):>7} {ratio(new.error, randomized.error):>5}"
                )
            selection_delta = delta if mechanism == "discrete-laplace" else delta / 2
            pi = keep_probabilities(epsilon, selection_delta, int(table.counts.max()))
            second.append(f"{line} | {exact.keys:21.0f} {pi[table.counts].sum():7.0f}")
    print("\n2. optimal selection at s*eps, counts at (1-s)*eps (opt@s), against the")
    print("   randomized threshold; x: ratio to the randomized threshold")
    head = "".join(f" | opt@{s:<4} keys   MAE  keys x  MAE x" for s in SHARES)
    print(f"{setting} | randomized keys   MAE{head} | keys only: randomized optimal")
    print("\n".join(second))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
