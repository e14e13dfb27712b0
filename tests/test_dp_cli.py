"""End-to-end tests of ``anonaudit dp`` and ``anonaudit audit --dp-epsilon``."""

from __future__ import annotations

import csv
import json
import math
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
    document: dict[str, Any] = json.loads(out_json.read_text(encoding="utf-8"))
    public, report = document["release"], document["internal"]
    assert public["mechanism"] == "discrete-laplace" and public["epsilon"] == 1.0
    assert public["delta"] == 0.0 and public["noise_scale"] == 1.0
    assert report["accounting"]["rho"] is None and report["accounting"]["epsilon"] == 1.0
    c = report["contrast"]["disease"]
    # a present person's value: replace neighbours, two add-remove steps, so 2 epsilon
    assert c["max_posterior"] == 1.0 and c["epsilon"] == 2.0
    e2 = math.exp(2.0)
    assert c["dp_posterior_bound"] == pytest.approx(0.5 * e2 / (1 + 0.5 * (e2 - 1)))
    assert c["max_pml"] > 0
    assert report["domain"] == {
        "kind": "public",
        "cells": 27,
        "threshold": None,
        "keep_below": None,
    }
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
    document = json.loads(out)
    public, report = document["release"], document["internal"]
    assert document["schema_version"] and public["domain"]["kind"] == "observed"
    assert public["domain"]["values"] is None and public["threshold"] > 1
    assert 0 <= public["keep_below"] < 1
    assert report["domain"]["threshold"] == public["threshold"]
    assert report["domain"]["keep_below"] == public["keep_below"]
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
    document = json.loads(out)
    public, report = document["release"], document["internal"]
    assert public["privacy_unit"] == "person" and public["max_contributions"] == 1
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
    # the sidecar says, machine-readable, what the local model leaves unprotected
    out_path = tmp_path / "rr.csv"
    code, _, err = run(
        capsys,
        "dp", str(data), *ROLES, "--epsilon", "1", "--mechanism", "randomized-response",
        "--public-domain", "disease=flu,cold,cancer", "--out", str(out_path), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    protects = json.loads(out_path.with_suffix(".release.json").read_text("utf-8"))["protects"]
    assert (protects["membership"], protects["class_sizes"]) == (False, False)
    assert protects["sensitive_values"] is True and "unprotected" in protects["note"]


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
    assert report["dp"]["release"]["epsilon"] == 0.5
    dp = report["dp"]["internal"]
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


# -- the publishable release (--out), post-processing and warnings ------------------------

# keys of the sidecar; none of them is computed from the exact data
SIDECAR_KEYS = {
    "anonaudit_version", "opendp_version", "mechanism", "epsilon", "delta", "noise_scale",
    "neighbouring", "privacy_unit", "max_contributions", "quasi_identifiers", "sensitive",
    "domain", "threshold", "keep_below", "error", "postprocessing", "protects",
}  # fmt: skip
INTERNAL_KEYS = {
    "cells", "outside_domain", "not_released", "bounded_records", "released", "utility",
    "measures", "contrast", "classes_hidden", "true_counts", "k",
}  # fmt: skip


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def test_out_writes_the_table_and_a_sidecar_of_public_facts(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_csv, out_json = tmp_path / "release.csv", tmp_path / "dp.json"
    code, out, err = run(
        capsys,
        "dp", str(data), *ROLES, "--epsilon", "1", *domain(tmp_path),
        "--out", str(out_csv), "--json", str(out_json), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    sidecar = json.loads((tmp_path / "release.release.json").read_text(encoding="utf-8"))
    assert set(sidecar) == SIDECAR_KEYS and not keys_of(sidecar) & INTERNAL_KEYS
    assert sidecar["mechanism"] == "discrete-laplace" and sidecar["epsilon"] == 1.0
    assert sidecar["delta"] == 0.0 and sidecar["noise_scale"] == 1.0
    assert sidecar["neighbouring"] == "add-remove" and sidecar["max_contributions"] == 1
    assert sidecar["privacy_unit"] is None and sidecar["threshold"] is None
    assert sidecar["keep_below"] is None
    assert sidecar["opendp_version"].startswith("0.16")
    protects = sidecar["protects"]  # add-remove with noisy counts: all of it
    assert (protects["membership"], protects["class_sizes"], protects["sensitive_values"]) == (
        True,
        True,
        True,
    )
    assert sidecar["domain"]["kind"] == "public"
    assert sidecar["domain"]["values"] == {
        "zip": ["02134", "02139", "=HYPERLINK(1)"],
        "age": ["30", "40", "50"],
        "disease": ["flu", "cold", "cancer"],
    }
    # discrete Laplace of scale 1: P(|Z| <= 3) = 1 - 2 e^-4 / (1 + e^-1) >= 0.95
    assert sidecar["error"] == {"within": 3, "confidence": 0.95}
    assert sidecar["postprocessing"]["name"] == "clamp"
    # the JSON report: the same public facts, and the internal figures labelled as such
    document = json.loads(out_json.read_text(encoding="utf-8"))
    assert document["release"] == sidecar
    assert document["internal"]["note"] == "internal: computed from the exact data; do not publish"
    assert document["internal"]["not_released"]["outside_domain"] == 0
    # the stdout summary labels the two parts, in that order
    assert out.index("Publishable:") < out.index("Internal (do not publish):")
    assert out.index("post-processing: clamp") < out.index("Internal")
    assert out.index("Internal") < out.index("attacker who knows the QIs")


def _wide(tmp_path: Path, rows: list[str]) -> list[str]:
    """A data file over 200 public zips and its roles and domain options."""
    path = tmp_path / "wide.csv"
    path.write_text("zip,disease\n" + "\n".join(rows) + "\n", encoding="utf-8")
    zips = ",".join(f"z{i}" for i in range(200))
    return [
        str(path), "--qi", "zip", "--sensitive", "disease",
        "--public-domain", f"zip={zips}", "--public-domain", "disease=flu,cold,cancer",
    ]  # fmt: skip


def test_unbiased_postprocessing_keeps_negative_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _wide(tmp_path, ["z0,flu", "z0,cold", "z1,flu"])
    out_csv = tmp_path / "release.csv"
    code, out, err = run(
        capsys, "dp", *args, "--epsilon", "1", "--postprocess", "unbiased",
        "--out", str(out_csv), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert "post-processing: unbiased" in out
    sidecar = json.loads(out_csv.with_suffix(".release.json").read_text(encoding="utf-8"))
    assert sidecar["postprocessing"]["name"] == "unbiased"
    with out_csv.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    counts = [int(row["count"]) for row in rows]
    # 597 empty cells, each negative with probability e^-1 / (1 + e^-1) = 0.27
    assert min(counts) < 0 and 0 not in counts
    # observed combinations are kept above a threshold: nothing to unbias
    code, out, err = run(
        capsys, "dp", str(tmp_path / "wide.csv"), "--qi", "zip", "--sensitive", "disease",
        "--epsilon", "1", "--delta", "1e-6", "--postprocess", "unbiased",
    )  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--public-domain" in err and "clamp" in err


def warning_lines(err: str) -> list[str]:
    lines = err.splitlines()
    assert all(line.startswith("anonaudit: warning: ") for line in lines), err
    return lines


def test_warns_of_an_empty_release(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 6 records, threshold about 28 at delta 1e-12: no cell reaches it
    code, _, err = run(
        capsys, "dp", str(data), *ROLES, "--epsilon", "1", "--delta", "1e-12", "--quiet"
    )
    assert code == 0
    [line] = warning_lines(err)
    assert "the release is empty" in line


def test_warns_of_a_nearly_empty_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 995 of the 1,000 records lie outside the public domain: at most 0.5% can be released
    args = _wide(tmp_path, ["elsewhere,flu"] * 995 + ["z0,flu"] * 5)
    code, _, err = run(capsys, "dp", *args, "--epsilon", "1", "--quiet")
    assert code == 0
    [line] = warning_lines(err)
    assert "nearly empty" in line and "of the 1,000 records (under 1%)" in line


def test_warns_of_a_large_epsilon(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # add-remove with Laplace noise: a present person's value moves at twice --epsilon
    code, _, err = run(
        capsys, "dp", str(data), *ROLES, "--epsilon", "1", *domain(tmp_path), "--quiet"
    )
    assert code == 0 and err == ""
    code, _, err = run(
        capsys, "dp", str(data), *ROLES, "--epsilon", "1.5", *domain(tmp_path), "--quiet"
    )
    assert code == 0
    [line] = warning_lines(err)
    assert "epsilon 3 for learning a present person's value (with --epsilon 1.5)" in line
    assert "may grow 20.1-fold" in line


def test_a_release_refused_by_its_budget_warns_of_nothing(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = ["--ledger", str(tmp_path / "l.sqlite"), "--dataset", "visits", "--quiet"]
    refused = ["--epsilon", "1.5", "--budget", "1", *domain(tmp_path), *ledger]
    code, _, err = run(capsys, "dp", str(data), *ROLES, *refused)
    assert code == 2
    assert "warning" not in err and "more than" in err


def test_warns_of_a_delta_at_or_above_one_over_n(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gaussian = ("--mechanism", "discrete-gaussian", *domain(tmp_path), "--quiet")
    # n = 6 records: 1/n = 0.1667
    code, _, err = run(capsys, "dp", str(data), *ROLES, "--epsilon", "1", "--delta", "0.1",
                       *gaussian)  # fmt: skip
    assert code == 0 and err == ""
    code, _, err = run(capsys, "dp", str(data), *ROLES, "--epsilon", "1", "--delta", "0.2",
                       *gaussian)  # fmt: skip
    assert code == 0
    lines = warning_lines(err)
    assert any("delta 0.2 is at or above 1/n = 1/6 records" in line for line in lines)


# -- options mapped onto DPOptions: a bad value is named by its flag or [dp] key -------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["dp", "--epsilon", "-1", "--delta", "1e-6"],
            "--epsilon must be a positive number from 1e-06 to 100 (got -1.0)",
        ),
        (
            ["dp", "--epsilon", "1", "--delta", "2"],
            "--delta must be 0 or lie in [1e-100, 1) (got 2.0)",
        ),
        (
            ["dp", "--epsilon", "1", "--delta", "1e-6", "--privacy-unit", "person",
             "--max-contributions", "0"],
            "--max-contributions must be a whole number from 1 to 1,000,000 (got 0)",
        ),
        (
            ["audit", "--dp-epsilon", "1000", "--dp-delta", "1e-6"],
            "--dp-epsilon must be a positive number from 1e-06 to 100 (got 1000.0)",
        ),
    ],
)  # fmt: skip
def test_a_bad_dp_option_is_named_by_its_flag(
    data: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    command, *options = argv
    code, out, err = run(capsys, command, str(data), *ROLES, *options, "--quiet")
    assert code == 2 and out == ""
    assert err == f"anonaudit: error: {message}\n"


def test_a_bad_dp_value_of_a_policy_file_is_named_by_its_key(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[dp]\nepsilon = 1.0\nmechanism = "exponential"\n', encoding="utf-8")
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--config", str(policy), "--quiet")
    assert code == 2
    assert err.startswith("anonaudit: error: unknown [dp] mechanism 'exponential'; choose one of")
    policy.write_text("[dp]\nepsilon = 0.0\n", encoding="utf-8")
    code, _, err = run(capsys, "audit", str(data), *ROLES, "--config", str(policy), "--quiet")
    assert code == 2
    assert err == (
        "anonaudit: error: [dp] epsilon must be a positive number from 1e-06 to 100 (got 0.0)\n"
    )
