"""Observed-key releases state their infinite privacy loss (issue 25, item 5).

Over the observed combinations, an output that shows a combination one person's records
alone make has an infinite privacy loss (it is impossible without that person), and that
happens with the stability threshold's δ. The DP companion says so: ``infinite_loss`` on
the report, ``privacy_loss.infinite_with_probability`` in the JSON, the HTML table's
"largest privacy loss" and P[L > ε], and a privacy profile that never falls below it.
The chance is sampled here on the product's own release (each key is one person's), as
``test_dp_claims`` samples the threshold's δ.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.dp import DPOptions, PrivacyGuarantee
from anonaudit.dp.companion import companion
from anonaudit.dp.domain import PublicDomain


def _ones(n: int) -> ClassTable:
    """``n`` combinations of one record each: every key is one person's."""
    frame = pd.DataFrame({"q": [str(i) for i in range(n)], "s": ["x"] * n, "count": [1] * n})
    return ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])


def test_the_stated_chance_of_an_infinite_loss_is_the_sampled_one() -> None:
    n = 20_000
    report = companion(_ones(n), DPOptions(PrivacyGuarantee(1.0, 0.01)))
    stated = report.infinite_loss
    assert stated == report.release.cost.delta > 0
    shown = float((report.release.released_counts > 0).mean())  # an infinite-loss output
    se = math.sqrt(stated * (1 - stated) / n)
    assert abs(shown - stated) < 5 * se
    assert min(d for _, d in report.profile) >= stated  # delta(eps') never below it
    assert report.privacy_loss.tail(report.accounting.epsilon) < stated  # the noise alone


def test_a_public_domain_release_has_no_infinite_loss() -> None:
    table = _ones(50)
    domain = PublicDomain({"q": tuple(str(i) for i in range(50)), "s": ("x",)})
    report = companion(table, DPOptions(PrivacyGuarantee(1.0), domain=domain))
    assert report.infinite_loss == 0.0
    assert report.profile[-1][1] == pytest.approx(0.0, abs=1e-12)


def test_the_json_and_the_html_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.DataFrame({"q": [str(i % 300) for i in range(3000)], "s": ["a", "b"] * 1500})
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    argv = ["dp", str(data), "--qi", "q", "--sensitive", "s", "--epsilon", "1"]
    assert main([*argv, "--delta", "0.01", "--json", "-", "--quiet"]) == 0
    document = json.loads(capsys.readouterr().out)
    internal = document["internal"]
    stated = internal["privacy_loss"]["infinite_with_probability"]
    assert stated == pytest.approx(internal["accounting"]["delta_threshold"]) and stated > 0
    page = tmp_path / "r.html"
    audit = ["audit", str(data), "--qi", "q", "--sensitive", "s", "--dp-epsilon", "1"]
    assert main([*audit, "--dp-delta", "0.01", "--html", str(page), "--quiet"]) == 0
    html = page.read_text(encoding="utf-8")
    assert "infinite with probability" in html and "the infinite loss included" in html
    assert not np.isnan(stated)
