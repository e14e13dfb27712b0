"""End-to-end tests of ``anonaudit dp`` and ``anonaudit audit --dp-epsilon``."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from anonaudit.cli import main

pytest.importorskip("opendp")

ROWS = [
    ("02134", "30", "flu", "p1"),
    ("02134", "30", "cold", "p2"),
    ("02134", "30", "flu", "p3"),
    ("02139", "40", "flu", "p4"),
    ("02139", "40", "cancer", "p5"),
    ("=HYPERLINK(1)", "50", "cancer", "p5"),
]
ROLES = ("--qi", "zip,age", "--sensitive", "disease")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.csv"
    lines = ["zip,age,disease,person"] + [",".join(f'"{v}"' for v in row) for row in ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "zips.txt").write_text("02134\n02139\n=HYPERLINK(1)\n", encoding="utf-8")
    return path


def domain(tmp_path: Path) -> list[str]:
    return [
        "--public-domain",
        f"zip=@{tmp_path / 'zips.txt'}",
        "--public-domain",
        "age=30,40,50",
        "--public-domain",
        "disease=flu,cold,cancer",
    ]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_pure_release_over_a_public_domain(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_csv, out_json = tmp_path / "released.csv", tmp_path / "dp.json"
    code, out, err = run(
        capsys,
        "dp", str(data), *ROLES, "--epsilon", "1", *domain(tmp_path),
        "--out", str(out_csv), "--json", str(out_json), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert "discrete-laplace" in out and "27 cells of the public domain" in out
    assert "epsilon 1 (pure)" in out
    report: dict[str, Any] = json.loads(out_json.read_text(encoding="utf-8"))
    assert report["mechanism"] == "discrete-laplace" and report["epsilon"] == 1.0
    assert report["delta"] == 0.0 and report["noise_scale"] == 1.0
    assert report["accounting"]["rho"] is None and report["accounting"]["epsilon"] == 1.0
    c = report["contrast"]["disease"]
    assert c["max_posterior"] == 1.0 and c["epsilon"] == 1.0
    assert c["dp_posterior_bound"] == pytest.approx(0.5 * 2.718281828 / (1 + 0.5 * 1.718281828))
    assert c["max_pml"] > 0
    assert report["domain"] == {"kind": "public", "cells": 27, "threshold": None}
    with out_csv.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ["zip", "age", "disease", "count"]
    assert all(int(row[3]) > 0 for row in rows[1:])
    # formula-looking text is defused with a leading apostrophe
    assert {row[0] for row in rows[1:]} <= {"02134", "02139", "'=HYPERLINK(1)"}


def test_observed_release_with_delta_to_stdout(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "dp", str(data), *ROLES, "--epsilon", "1", "--delta", "1e-6",
        "--mechanism", "discrete-gaussian", "--json", "-", "--quiet",
    )  # fmt: skip
    assert code == 0
    report = json.loads(out)
    assert report["schema_version"] and report["domain"]["kind"] == "observed"
    assert report["domain"]["threshold"] > 1
    assert report["accounting"]["rho"] > 0
    assert report["accounting"]["epsilon"] <= 1.0 + 1e-9


def test_refusals_exit_2_with_one_line(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "dp", str(data), *ROLES, "--epsilon", "1")
    assert code == 2 and out == ""
    assert "--delta" in err and "--public-domain" in err and err.count("\n") == 1
    code, _, err = run(
        capsys, "dp", str(data), *ROLES, "--epsilon", "1", "--max-contributions", "2"
    )
    assert code == 2 and "--privacy-unit" in err
    code, _, err = run(
        capsys, "dp", str(data), *ROLES, "--epsilon", "1", "--mechanism", "gaussian",
        *domain(tmp_path),
    )  # fmt: skip
    assert code == 2 and "--delta" in err
    code, _, err = run(capsys, "dp", str(data), *ROLES)
    assert code == 2 and "--epsilon" in err


def test_privacy_unit(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "dp", str(data), *ROLES, "--epsilon", "2", *domain(tmp_path),
        "--privacy-unit", "person", "--max-contributions", "1", "--json", "-", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["privacy_unit"] == "person" and report["max_contributions"] == 1
    assert report["not_released"]["bounded_records"] == 1  # p5's second row


def test_randomized_response(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "dp", str(data), *ROLES, "--epsilon", "1", "--mechanism", "randomized-response",
        "--public-domain", "disease=flu,cold,cancer", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert "records randomized" in out


def test_audit_with_a_dp_section(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "audit.json"
    code, out, err = run(
        capsys,
        "audit", str(data), *ROLES, "-k", "2", "--delta", "5",
        "--dp-epsilon", "0.5", "--dp-delta", "1e-6", "--json", str(path), "--quiet",
    )  # fmt: skip
    assert code == 1, err  # k = 1 < 2, as without --dp-epsilon
    assert "dp: discrete-laplace" in out
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["policy"]["delta"] == 5  # delta-disclosure, not the DP delta
    dp = report["dp"]
    for key in ("mechanism", "epsilon", "delta", "noise_scale", "accounting", "contrast"):
        assert key in dp
    assert dp["epsilon"] == 0.5 and dp["delta"] == 1e-6
    assert set(dp["contrast"]["disease"]) >= {
        "max_posterior", "dp_posterior_bound", "max_pml", "epsilon",
    }  # fmt: skip
    assert "epsilon" in dp["accounting"] and "rho" in dp["accounting"]
    code, out, _ = run(capsys, "audit", str(data), *ROLES, "--json", "-", "--quiet")
    assert code == 0 and "dp" not in json.loads(out)


def test_missing_opendp_prints_the_install_command(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    code, _, err = run(capsys, "dp", str(data), *ROLES, "--epsilon", "1", *domain(tmp_path))
    assert code == 2
    assert 'pip install "anonaudit[dp]"' in err


def test_audit_refusal_names_the_audit_flag(tmp_path, capsys):
    # In `anonaudit audit`, --delta is delta-disclosure: the refusal must name --dp-delta.
    data = tmp_path / "d.csv"
    data.write_text("zip,s\n1,a\n1,b\n2,a\n", encoding="utf-8")
    code = main(["audit", str(data), "--qi", "zip", "--sensitive", "s", "--dp-epsilon", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "--dp-delta" in err and err.count("\n") == 1
