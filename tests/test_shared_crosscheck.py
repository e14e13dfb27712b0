"""Optional cross-checks on the team's shared data (skipped when ``../shared`` is absent).

The pycanon repository publishes Adult tables anonymized to stated k (and l); their file
names say which. anonaudit must measure exactly those values with pycanon's QIs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import anonaudit
from anonaudit import Roles

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PYCANON = SHARED / "pycanon"
ADULT_QI = ["age", "education", "occupation", "relationship", "sex", "native-country"]

pytestmark = pytest.mark.skipif(not PYCANON.is_dir(), reason="../shared/data is not present")


def _adult_files() -> list[Path]:
    return sorted(PYCANON.glob("*/adult*anonymized*.csv")) if PYCANON.is_dir() else []


@pytest.mark.parametrize("path", _adult_files(), ids=lambda p: p.name)
def test_stated_k_and_l_are_measured_exactly(path: Path) -> None:
    report = anonaudit.audit(path, Roles(ADULT_QI, ["salary-class"]))
    numbers = [int(n) for n in re.findall(r"(?:k|_)(\d+)", path.stem)]
    k = numbers[0]
    assert report.k_anonymity.k == k
    stated_l = re.search(r"_l(\d+)$", path.stem)
    if stated_l:
        assert report.l_diversity["salary-class"].distinct == int(stated_l.group(1))


def test_adult_full_table_against_arx_extract() -> None:
    adult = SHARED / "adult" / "adult.csv"
    report = anonaudit.audit(adult, Roles(["sex", "age", "race"], ["salary-class"]))
    assert report.rows == 30162
    assert report.k_anonymity.classes == len(report.table.classes)
    assert report.k_anonymity.histogram.get(1, 0) == report.risk.sample_uniques


def test_pycanon_agrees_on_k_and_distinct_l() -> None:
    pycanon = pytest.importorskip("pycanon.anonymity")
    import pandas as pd

    path = PYCANON / "l_diversity" / "adult_k10_anonymized_l2.csv"
    frame = pd.read_csv(path, dtype=str)
    report = anonaudit.audit(frame, Roles(ADULT_QI, ["salary-class"]))
    assert report.k_anonymity.k == int(pycanon.k_anonymity(frame, ADULT_QI))
    assert report.l_diversity["salary-class"].distinct == int(
        pycanon.l_diversity(frame, ADULT_QI, ["salary-class"])
    )
