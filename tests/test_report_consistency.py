"""One source of truth (issue 12, item 3): the summary, the JSON report and the HTML
report of one audit state the same figures."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anonaudit.cli import main


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], str]:
    """Summary, JSON and HTML of an audit with a population, an ordered SA and DP."""
    folder = tmp_path_factory.mktemp("consistency")
    rng = np.random.default_rng(3)
    n = 600
    frame = pd.DataFrame(
        {
            "zip": rng.choice(["021", "022", "023", "024"], n),
            "age": rng.choice([str(a) for a in range(20, 40)], n),
            "grade": rng.choice(["low", "mid", "high"], n, p=[0.7, 0.2, 0.1]),
        }
    )
    data = folder / "grades.csv"
    frame.to_csv(data, index=False)
    html, document = folder / "r.html", folder / "r.json"
    argv = ["audit", str(data), "--qi", "zip,age", "--sensitive", "grade", "-k", "3", "-l", "2"]
    argv += ["--entropy-l", "1.2", "-t", "0.1", "--order", "grade=low,mid,high"]
    argv += ["--t-distance", "ordered", "--population-size", "100000"]
    argv += ["--dp-epsilon", "1", "--dp-delta", "1e-6", "--exit-zero"]
    argv += ["--html", str(html), "--json", str(document)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--quiet"]) == 0
    return out.getvalue(), json.loads(document.read_text()), html.read_text(encoding="utf-8")


def test_population_risk_is_in_every_report(rendered: tuple[str, dict[str, Any], str]) -> None:
    text, document, page = rendered
    population = document["risk"]["population"]
    assert f"{population['uniques_fraction']:.4%}" in text
    assert 'id="population-risk"' in page and "does not estimate" not in page
    assert f"{population['uniques_fraction'] * 100:.3g}%" in page
    journalist = document["risk"]["journalist"]
    assert f"{journalist['highest'] * 100:.3g}%" in page
    assert 'id="about-population"' in page


def test_the_dp_reader_measures_use_the_audits_ground_distance(
    rendered: tuple[str, dict[str, Any], str],
) -> None:
    _, document, page = rendered
    t = document["t_closeness"]["grade"]["t"]
    assert document["t_closeness"]["grade"]["distance"] == "ordered"
    assert document["dp"]["internal"]["measures"]["original"]["t"]["grade"] == pytest.approx(t)
    row = re.search(r"t of grade \(ordered ground distance\)</th>\s*<td[^>]*>([^<]+)<", page)
    assert row is not None and row.group(1) == f"{t:.3g}"


def test_the_checks_are_counted_alike(rendered: tuple[str, dict[str, Any], str]) -> None:
    text, document, page = rendered
    failed = [v["measure"] for v in document["verdicts"] if not v["passed"]]
    assert "FAIL: " + "; ".join(failed) in text
    total = len(document["verdicts"])
    assert f"{len(failed)} of {total} checks fail" in page or f"all {total} checks pass" in page


def test_no_threshold_says_nothing_was_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.csv"
    data.write_text("zip\n1\n2\n", encoding="utf-8")
    assert main(["audit", str(data), "--qi", "zip", "--html", str(tmp_path / "r.html")]) == 0
    assert "nothing was judged" in capsys.readouterr().out
    assert "nothing was judged" in (tmp_path / "r.html").read_text(encoding="utf-8")
