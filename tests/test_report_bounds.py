"""Reports are documents people e-mail: their size is bounded whatever the data's, they
say what they hold from the data, and a policy file can redact them by default
(issue 12, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from anonaudit.cli import main

MB = 2**20


def _uuids(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` distinct random version-4-looking UUIDs, built with numpy (fast)."""
    digits = np.frombuffer(b"0123456789abcdef", dtype="S1")
    hexes = digits[rng.integers(0, 16, size=(n, 32))]
    hexes[:, 12] = b"4"
    dashed = np.insert(hexes, [8, 12, 16, 20], b"-", axis=1)
    return pa.array(dashed.view("S36").ravel().astype(str))


@pytest.fixture(scope="module")
def million(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000,000 records, each with its own UUID: every class fails k-anonymity."""
    rng = np.random.default_rng(12)
    n = 1_000_000
    table = pa.table(
        {
            "id": _uuids(rng, n),
            "age": pa.array(rng.integers(18, 90, n).astype(str)),
            "gender": pa.array(np.array(["F", "M"])[rng.integers(0, 2, n)]),
            "diagnosis": pa.array(np.array(["flu", "cold", "asthma"])[rng.integers(0, 3, n)]),
        }
    )
    path = tmp_path_factory.mktemp("million") / "patients.csv"
    pacsv.write_csv(table, path)
    return path


def test_a_million_unique_ids_give_reports_under_2_mb(million: Path, tmp_path: Path) -> None:
    html, document, listings = tmp_path / "r.html", tmp_path / "r.json", tmp_path / "full"
    argv = ["audit", str(million), "--qi", "id,age,gender", "--sensitive", "diagnosis"]
    argv += ["-k", "5", "--html", str(html), "--json", str(document), "--show-values"]
    assert main([*argv, "--listings-dir", str(listings), "--quiet"]) == 1
    assert html.stat().st_size < 2 * MB
    assert document.stat().st_size < 2 * MB
    page = html.read_text(encoding="utf-8")
    assert "This report contains 200 rows of quasi-identifier values from the data" in page
    assert "(2 listings capped at 100 rows); redacted: no." in page
    assert 'href="../full/k-anonymity.csv"' in page or 'href="full/k-anonymity.csv"' in page
    report = json.loads(document.read_text(encoding="utf-8"))
    assert report["contents"]["quasi_identifier_rows"] == 200
    assert report["contents"]["listings_capped"] == 2
    assert report["k_anonymity"]["violating"]["count"] == 1_000_000
    # The file beside the report holds every failing class.
    full = pacsv.read_csv(listings / "k-anonymity.csv")
    assert full.num_rows == 1_000_000
    ids = pacsv.read_csv(million, convert_options=pacsv.ConvertOptions(include_columns=["id"]))
    assert set(full.column("id").to_pylist()) == set(ids.column("id").to_pylist())


def _small(tmp_path: Path) -> Path:
    data = tmp_path / "clinic.csv"
    data.write_text("zip,diagnosis\n02134,flu\n02139,cold\n02139,flu\n", encoding="utf-8")
    return data


def test_a_policy_file_redacts_both_reports_and_no_redact_overrides(tmp_path: Path) -> None:
    data = _small(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'inputs = ["{data.name}"]\nquasi_identifiers = ["zip"]\nsensitive = ["diagnosis"]\n'
        'redact = true\njson = "r.json"\nhtml = "r.html"\n[thresholds]\nk = 2\n',
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(policy), "--quiet"]) == 1
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    document = (tmp_path / "r.json").read_text(encoding="utf-8")
    for text in (page, document):
        assert "02134" not in text and "[redacted]" in text
    assert "redacted: yes" in page
    assert json.loads(document)["contents"]["redacted"] is True
    assert main(["audit", "--config", str(policy), "--no-redact", "--quiet"]) == 1
    assert "02134" in (tmp_path / "r.json").read_text(encoding="utf-8")
    assert "redacted: no." in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_listings_dir_without_html_and_bounded_json(tmp_path: Path) -> None:
    data = _small(tmp_path)
    listings, document = tmp_path / "lists", tmp_path / "r.json"
    argv = ["audit", str(data), "--qi", "zip", "-k", "3", "--json", str(document)]
    argv += ["--max-classes", "1", "--listings-dir", str(listings)]
    assert main([*argv, "--show-values"]) == 1
    report = json.loads(document.read_text(encoding="utf-8"))
    assert report["k_anonymity"]["violating"]["truncated"] is True
    assert report["contents"]["listings_dir"] == str(listings)
    rows = (listings / "k-anonymity.csv").read_text(encoding="utf-8-sig").splitlines()
    assert rows == ['"zip","size"', '"02134","1"', '"02139","2"']
    # without --show-values the listings are redacted too
    assert main(argv) == 1
    rows = (listings / "k-anonymity.csv").read_text(encoding="utf-8-sig").splitlines()
    assert rows == ['"zip","size"', '"[redacted]","1"', '"[redacted]","2"']


def test_listings_dir_may_not_be_an_input_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _small(tmp_path)
    argv = ["audit", str(tmp_path), "--format", "csv", "--qi", "zip", "-k", "3"]
    assert main([*argv, "--listings-dir", str(tmp_path)]) == 2
    assert "--listings-dir" in capsys.readouterr().err
