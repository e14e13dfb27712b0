"""Zayatz's estimate cross-checked against ARX itself (skipped when ``../shared`` is absent).

``../shared/peers/arx/arx-audit risk`` prints ARX 3.9.2's population-uniqueness figures
(``RiskModelPopulationUniqueness``, population ``N = n / pi``). On a table of 2,000
records whose class sizes are 1, 2, 3, 5 and 17, anonaudit's Zayatz estimate must equal
ARX's to 1e-12 relative at N = 10**4, 10**6 and 10**8 (issue 23: it was 1.1e-8 off at
10**8). At N = 10**10 ARX's own figure is 7e-7 from exact arithmetic, so it is not a
reference there (tests/test_population.py holds ours to exact rationals).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from anonaudit.measures.population import population_uniqueness

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ARX_AUDIT = SHARED / "peers" / "arx" / "arx-audit"
JAVA = shutil.which("java")

pytestmark = [
    pytest.mark.skipif(not ARX_AUDIT.is_file(), reason="../shared (ARX's driver) is not present"),
    pytest.mark.skipif(JAVA is None, reason="java is not installed"),
]

SIZES = {17: 2, 5: 20, 3: 80, 2: 250, 1: 1126}  # 2,000 records, 1,478 classes
FRACTIONS = ("0.2", "0.002", "2e-5")  # N = 10**4, 10**6, 10**8


def test_zayatz_equals_arx(tmp_path: Path) -> None:
    data, out = tmp_path / "classes.csv", tmp_path / "arx.json"
    lines, label = ["q;s"], 0
    for size, count in SIZES.items():
        for _ in range(count):
            lines += [f"c{label};x"] * size
            label += 1
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = [str(ARX_AUDIT), "risk", "--file", str(data), "--sep", ";", "--qi", "q"]
    command += ["--sensitive", "s", "--fractions", ",".join(FRACTIONS), "--json", str(out)]
    subprocess.run(
        command,
        check=True,
        capture_output=True,
        timeout=600,
    )
    arx = json.loads(out.read_text(encoding="utf-8"))["population_uniqueness"]
    table = [size for size, count in SIZES.items() for _ in range(count)]
    for fraction in FRACTIONS:
        figures = arx[fraction]
        ours = population_uniqueness(
            table, population_size=figures["population_size"], model="zayatz"
        )
        assert ours.uniques == pytest.approx(figures["zayatz_uniques"], rel=1e-12), fraction
