"""Benchmark: which observed keys a DP release keeps, and the error of its counts.

Issue 25, item 8 asked whether the optimal partition selection of Desfontaines, Voss,
Gipson & Mandayam ("Differentially private partition selection", PoPETs 2022(4),
Theorem 1) should replace the stability threshold that keeps observed keys today
(:func:`anonaudit.dp.release.release` without a public domain) when each person
contributes one record. This benchmark measures both on the UCI Adult data.

What it compares
----------------
Observed keys are the QI combinations of the data (class table over ``--qis``), one
record per person (``max_contributions = 1``, add-remove), each release at a total
(ε, δ):

* **threshold** (today, the product's own :func:`~anonaudit.dp.release.release`): every
  count gets noise at ε (discrete Laplace; discrete Gaussian at ε and δ/2) and a key is
  kept when its noisy count reaches the stability threshold τ whose δ (the chance that a
  key one person makes is kept) fits (all of δ for Laplace noise, δ/2 for Gaussian).
  The noisy count decides the selection, so the selection costs nothing extra.
* **optimal + counts** (the candidate): a key with n records is kept with the paper's
  optimal probability π_n (:func:`keep_probabilities`) at ε·``share`` and the
  selection's δ (δ for Laplace noise, δ/2 for Gaussian), drawn from the operating
  system's secure generator (:func:`keep`); a kept key's count then needs noise of its
  own, at ε·(1 − ``share``) (and δ/2 for Gaussian noise, calibrated on the Gaussian
  curve, :func:`~anonaudit.dp.accounting.noise_scale`). Sequential composition: the
  total is the same (ε, δ).

Printed per row: the true keys; the keys released (mean over ``--runs`` releases) and
the mean absolute error of the counts over *all* true keys, an unreleased key counting
as 0 (so a dropped key of n records costs n), each for the threshold and for the
candidate at each share, with the candidate/threshold ratios. The last columns give
the paper's own comparison, keys only (no counts released), in expectation: the
threshold's noise at the whole ε against π_n at the whole ε.

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
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonaudit.classtable import ClassTable
from anonaudit.dp import DPOptions, PrivacyGuarantee, add_noise, release
from anonaudit.dp.accounting import noise_scale
from anonaudit.dp.mechanisms import Mechanism, NoiseDistribution

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


def keep(probabilities: NDArray[Any]) -> NDArray[Any]:
    """One secure Bernoulli draw per probability, never above it.

    A 64-bit integer ``r`` from the operating system's generator
    (:func:`secrets.token_bytes`) keeps when ``r < floor(p 2^64)``: exactly
    ``floor(p 2^64) / 2^64 <= p``, within ``2^-64`` below ``p``; ``p = 1`` always keeps.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    draws = np.frombuffer(secrets.token_bytes(8 * len(p)), dtype=np.uint64)
    below = np.floor(np.ldexp(np.where(p < 1, p, 0.0), 64)).astype(np.uint64)
    return (p >= 1) | (draws < below)


@dataclass(frozen=True)
class Outcome:
    """Mean keys released and mean absolute error over all true keys, over the runs."""

    keys: float
    error: float


def threshold_release(
    table: ClassTable, mechanism: Mechanism, epsilon: float, delta: float, runs: int
) -> Outcome:
    """Today's release (the product's own code), ``runs`` times."""
    options = DPOptions(PrivacyGuarantee(epsilon, delta), mechanism=mechanism)
    keys, errors = [], []
    for _ in range(runs):
        r = release(table, options)
        keys.append(int((r.released_counts > 0).sum()))
        errors.append(float(np.abs(r.released_counts - r.true_counts).mean()))
    return Outcome(float(np.mean(keys)), float(np.mean(errors)))


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
    keys, errors = [], []
    for _ in range(runs):
        noisy = add_noise(counts, mechanism=mechanism, scale=scale)
        released = np.where(keep(pi), np.maximum(noisy, 0), 0)
        keys.append(int((released > 0).sum()))
        errors.append(float(np.abs(released - counts).mean()))
    return Outcome(float(np.mean(keys)), float(np.mean(errors)))


def keys_only(
    table: ClassTable, mechanism: Mechanism, epsilon: float, delta: float
) -> tuple[float, float]:
    """Expected keys kept when only the keys are released (the paper's comparison):
    today's threshold on noise at the whole ε, and π_n at the whole ε and its δ."""
    counts = table.counts
    r = release(table, DPOptions(PrivacyGuarantee(epsilon, delta), mechanism=mechanism))
    assert r.threshold is not None and r.noise is not None
    noise: NoiseDistribution = r.noise
    threshold = float(sum(noise.tail(r.threshold - int(n)) for n in counts))
    selection_delta = delta if mechanism == "discrete-laplace" else delta / 2
    optimal = float(keep_probabilities(epsilon, selection_delta, int(counts.max()))[counts].sum())
    return threshold, optimal


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
    print("opt@s: optimal selection at s*eps, counts at (1-s)*eps; x: ratio to the threshold")
    head = "".join(f" | opt@{s:<4} keys   MAE  keys x  MAE x" for s in SHARES)
    print(
        f"{'QIs':<30} {'mechanism':<17} {'eps':>3} {'delta':>5} {'true':>5} | "
        f"threshold keys   MAE{head} | keys only: threshold optimal"
    )
    for qis in QI_SETS:
        frame = records.groupby(list(qis)).size().reset_index(name="count")
        table = ClassTable.from_frame(frame, quasi_identifiers=list(qis))
        for mechanism, epsilon, delta in SETTINGS:
            old = threshold_release(table, mechanism, epsilon, delta, args.runs)
            line = (
                f"{','.join(qis):<30} {mechanism:<17} {epsilon:3.1f} {delta:5.0e} "
                f"{len(table):5d} | {old.keys:14.0f} {old.error:5.2f}"
            )
            for share in SHARES:
                new = optimal_release(table, mechanism, epsilon, delta, share, args.runs)
                line += (
                    f" | {new.keys:14.0f} {new.error:5.2f} "
                    f"{ratio(new.keys, old.keys):>7} {ratio(new.error, old.error):>5}"
                )
            threshold, optimal = keys_only(table, mechanism, epsilon, delta)
            print(f"{line} | {threshold:20.0f} {optimal:7.0f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
