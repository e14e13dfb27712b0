"""Benchmark: the DP self-audit's lower bounds against the claims, and its power.

What it measures
----------------
:func:`anonaudit.dp.self_audit` samples the product's own release code on worst-case
neighbouring datasets and bounds the claimed ε from below at 99% confidence. Run
``--runs`` times per setting (each run a fresh release and ``--samples`` releases of
each neighbouring dataset), it prints per setting:

* the lower bound as a share of the claim: minimum, median, maximum;
* how many runs gave a bound above the claim (a true claim refuted: should be none)
  and how many reached 0.9 of it; the median lower bound on δ at the claimed ε;
* seconds per run (mean and slowest) and the load average before and after.

The settings: discrete Laplace and Laplace noise over a public domain at ε = 1 (pure
ε-DP: the goal is at least 0.9 of the claim and never above it), discrete Laplace
with replace neighbours, observed combinations (δ = 1e-6), the discrete Gaussian (ε = 1
at δ = 1e-6, not tight at any sample size: the bound is far below) and randomized
response; then two planted faults, each patched into the release code for the run
only: the noise drawn at half the scale the release states (ε doubles; the goal is
caught, a bound above the claim, in at least 99 of 100 runs within 60 s each), and the
stability threshold chosen for three times the stated δ (δ = 0.02).

The pure settings and the halved noise run ``--runs`` times (default 100); the others
``--other-runs`` times (default 20). Randomized response draws ``--rr-samples``
(default 20,000: each report is one OpenDP call).

How to run
----------
From the repository root::

    python benchmarks/bench_selfaudit.py               # about 25 minutes on 2 cores
    python benchmarks/bench_selfaudit.py --runs 10 --other-runs 3
    python benchmarks/bench_selfaudit.py --only observed
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonaudit.classtable import ClassTable
from anonaudit.dp import (
    DPOptions,
    PrivacyGuarantee,
    PrivacyUnit,
    PublicDomain,
    SelfAudit,
    add_noise,
    release,
    self_audit,
)

#: The module, not the function of the same name that ``anonaudit.dp`` exports.
RELEASE = importlib.import_module("anonaudit.dp.release")
DOMAIN = PublicDomain.of({"zip": ["a", "b"], "d": ["x", "y"]})


def table() -> ClassTable:
    frame = pd.DataFrame({"zip": ["a", "b"], "d": ["x", "y"], "count": [3, 4]})
    return ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])


@contextmanager
def unchanged() -> Iterator[None]:
    yield


@contextmanager
def halved_noise() -> Iterator[None]:
    """The noise drawn at half the scale the release states."""
    drawn = RELEASE.add_noise

    def faulty(values: Any, *, mechanism: Any, scale: float) -> Any:
        return add_noise(values, mechanism=mechanism, scale=scale / 2)

    RELEASE.add_noise = faulty
    try:
        yield
    finally:
        RELEASE.add_noise = drawn


@contextmanager
def lenient_threshold() -> Iterator[None]:
    """The stability threshold chosen for three times the stated δ, unchecked."""
    chosen, spend = RELEASE.stability_threshold, RELEASE._spend

    def lenient(mechanism: Any, *, delta: float, **keywords: Any) -> Any:
        return chosen(mechanism, delta=3 * delta, **keywords)

    RELEASE.stability_threshold, RELEASE._spend = lenient, lambda *arguments: None
    try:
        yield
    finally:
        RELEASE.stability_threshold, RELEASE._spend = chosen, spend


Setting = tuple[str, DPOptions, Callable[[], Any], bool]


def settings() -> list[Setting]:
    """Name, options, the fault planted (if any), and whether it runs ``--runs`` times."""
    replace = PrivacyUnit(neighbouring="replace")
    return [
        ("discrete Laplace, eps 1", DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN),
         unchanged, True),
        ("Laplace, eps 1", DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, mechanism="laplace"),
         unchanged, True),
        ("discrete Laplace, replace, eps 1",
         DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, unit=replace), unchanged, False),
        ("observed, discrete Laplace, eps 1, delta 1e-6",
         DPOptions(PrivacyGuarantee(1.0, 1e-6)), unchanged, False),
        ("discrete Gaussian, eps 1, delta 1e-6",
         DPOptions(PrivacyGuarantee(1.0, 1e-6), domain=DOMAIN, mechanism="discrete-gaussian"),
         unchanged, False),
        ("randomized response, eps 1",
         DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, mechanism="randomized-response"),
         unchanged, False),
        ("FAULT halved noise, discrete Laplace, eps 1",
         DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN), halved_noise, True),
        ("FAULT threshold for 3 delta, observed, eps 1, delta 0.02",
         DPOptions(PrivacyGuarantee(1.0, 0.02)), lenient_threshold, False),
    ]  # fmt: skip


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--other-runs", type=int, default=20)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--rr-samples", type=int, default=20_000)
    parser.add_argument("--only", default="", help="the settings whose name holds this text")
    args = parser.parse_args()
    print(f"self-audit at 99% confidence; {os.cpu_count()} CPUs")
    header = (
        f"{'setting':58} {'runs':>4} {'samples':>8} {'min':>6} {'median':>6} {'max':>6} "
        f"{'refuted':>7} {'>=0.9':>5} {'delta':>8} {'s/run':>6} {'max s':>6}  load before -> after"
    )
    print(header)
    for name, options, fault, main_setting in settings():
        if args.only not in name:
            continue
        runs = args.runs if main_setting else args.other_runs
        samples = args.rr_samples if options.mechanism == "randomized-response" else args.samples
        before = load()
        shares, deltas, seconds, refuted = [], [], [], 0
        for _ in range(runs):
            start = time.perf_counter()
            with fault():
                made = release(table(), options)
                found: SelfAudit = self_audit(made, options, samples=samples)
            seconds.append(time.perf_counter() - start)
            shares.append(found.share)
            deltas.append(found.delta_lower.value)
            refuted += found.refuted
        print(
            f"{name:58} {runs:>4} {samples:>8,} {min(shares):>6.3f} "
            f"{statistics.median(shares):>6.3f} {max(shares):>6.3f} {refuted:>7} "
            f"{sum(share >= 0.9 for share in shares):>5} {statistics.median(deltas):>8.2g} "
            f"{statistics.mean(seconds):>6.2f} "
            f"{max(seconds):>6.2f}  {before} -> {load()}",
            flush=True,
        )
    print(
        "min/median/max: the epsilon lower bound over the claimed epsilon; refuted: runs "
        "with a bound above the claimed epsilon or delta; >=0.9: runs reaching 0.9 of the "
        "claimed epsilon; delta: the median lower bound on delta at the claimed epsilon"
    )


if __name__ == "__main__":
    main()
