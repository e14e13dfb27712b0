"""The contrast compares like with like: every figure names its attacker (issue 25, item 6).

DP is stated against the attacker who knows every other record. For that attacker an
exact table, however k-anonymous, amounts to ε = ∞: subtracting everyone else from the
published counts gives each present person's value, a leakage of ln(1 / p) for a value
of prior p. The figures computed for the attacker who knows only the quasi-identifiers
(an equivalent ε, a leakage in nats) are printed with that attacker named, beside the
figures for the attacker DP is stated against, so that no k-anonymous table reads as a
small finite ε.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from anonaudit.cli import main


@pytest.fixture
def k_anonymous(tmp_path: Path) -> Path:
    """Four classes of 112 records each, two values of the SA in each: k = 112."""
    rows = [(f"z{c}", "flu" if i % 4 else "cold") for c in range(4) for i in range(112)]
    path = tmp_path / "k112.csv"
    pd.DataFrame(rows, columns=["zip", "disease"]).to_csv(path, index=False)
    return path


def test_a_k_anonymous_table_amounts_to_an_infinite_epsilon_for_dps_attacker(
    k_anonymous: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["dp", str(k_anonymous), "--qi", "zip", "--sensitive", "disease", "--epsilon", "1"]
    domain = ["--public-domain", "zip=z0,z1,z2,z3", "--public-domain", "disease=flu,cold"]
    assert main([*argv, *domain, "--json", str(tmp_path / "r.json")]) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if "syntactic release as epsilon" in line]
    assert len(lines) == 2 and all("to the attacker who knows" in line for line in lines)
    informed = next(line for line in lines if "every other record" in line)
    assert "(whom DP is stated against): inf" in informed
    # ln(1 / p_min): cold is 1 in 4 of the records
    assert f"leakage up to {math.log(4):.4g} nats" in informed
    document = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    contrast = document["internal"]["contrast"]["disease"]
    assert contrast["informed_equivalent_epsilon"] == "inf"
    assert contrast["informed_leakage"] == pytest.approx(math.log(4))
    assert contrast["equivalent_epsilon"]["attacker"] == "knows the quasi-identifiers"


def test_the_html_names_the_attacker_of_every_epsilon(k_anonymous: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    argv = ["audit", str(k_anonymous), "--qi", "zip", "--sensitive", "disease", "-k", "100"]
    assert main([*argv, "--dp-epsilon", "1", "--dp-delta", "1e-6", "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "the exact table amounts to ε = ∞" in html
    # every "amounts to ε = <number>" is said of the attacker who knows only the QIs
    for found in re.finditer(r"amounts to ε = [0-9]", html):
        assert "only the quasi-identifiers" in html[found.start() - 200 : found.start()]
    assert "syntactic release as an ε, attacker who knows every other record" in html
