"""Frequency tables (``--count COL``): each row stands for that many records.

A published frequency table (one row per group and its count) is the class table
itself, so its audit must equal the audit of the records it counts, expanded one row
per record; the count column is checked like any input (a bad value is exit 2 naming
the file, the column and the value).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import AuditOptions, Roles
from anonaudit.cli import main
from anonaudit.report.json import report_to_dict

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "titanic.csv"
QI, SA = ["Class", "Sex", "Age"], ["Survived"]


def expanded(frequencies: pd.DataFrame, count: str) -> pd.DataFrame:
    """One row per record counted by ``frequencies``."""
    rows = frequencies.loc[frequencies.index.repeat(frequencies[count])]
    return rows.drop(columns=[count]).reset_index(drop=True)


def figures(report: anonaudit.AuditReport) -> dict[str, object]:
    """The report's figures, without what says where the records came from."""
    document = report_to_dict(report)
    for key in ("sources", "audited_at", "coverage", "identifiers"):
        document.pop(key, None)
    return document


def test_titanic_counts_audit_as_the_records_they_count(tmp_path: Path) -> None:
    """R's Titanic table (2,201 people in 32 cells, some empty) against its records."""
    table = pd.read_csv(SAMPLE, dtype=str)
    records = tmp_path / "records.csv"
    expanded(table.astype({"Freq": int}), "Freq").to_csv(records, index=False)
    options = AuditOptions(policy=anonaudit.Policy(k=5, l=2))
    from_counts = anonaudit.audit(SAMPLE, Roles(QI, SA, count="Freq"), options)
    from_records = anonaudit.audit(records, Roles(QI, SA), options)
    assert from_counts.rows == 2201 and len(from_counts.table.classes) == 14
    # the one girl in first class is a sample unique, and her class tells she survived
    assert from_counts.k_anonymity.k == 1
    assert figures(from_counts) == figures(from_records)
    assert from_counts.sources[0].rows == 2201  # records, not the file's 32 rows
    # the count column is not scanned as a possible direct identifier
    assert all(found.column != "Freq" for found in from_counts.identifiers)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from("ab"), st.sampled_from("xyz"), st.sampled_from("uv"), st.integers(0, 4)
        ),
        min_size=1,
        max_size=12,
    ).filter(lambda rows: sum(r[3] for r in rows) > 0)
)
def test_any_frequency_table_audits_as_its_records(rows: list[tuple[str, str, str, int]]) -> None:
    """Repeated groups, zero counts and any order: the same class table and figures."""
    table = pd.DataFrame(rows, columns=["q0", "q1", "s", "n"])
    options = AuditOptions(policy=anonaudit.Policy(k=2, l=2, t=0.3))
    from_counts = anonaudit.audit(
        table.astype({"n": str}), Roles(["q0", "q1"], ["s"], count="n"), options
    )
    from_records = anonaudit.audit(expanded(table, "n"), Roles(["q0", "q1"], ["s"]), options)
    assert figures(from_counts) == figures(from_records)


def test_frequency_table_on_the_command_line_and_in_a_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["audit", str(SAMPLE), "--qi", "Class,Sex,Age", "--sensitive", "Survived"]
    out = tmp_path / "r.json"
    assert main([*args, "--count", "Freq", "-k", "5", "--json", str(out), "--quiet"]) == 1
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["rows"] == 2201 and document["k_anonymity"]["k"] == 1
    policy = tmp_path / "p.toml"
    policy.write_text(
        f'inputs = ["{SAMPLE.as_posix()}"]\nquasi_identifiers = ["Class", "Sex", "Age"]\n'
        'sensitive = ["Survived"]\ncount = "Freq"\n[thresholds]\nk = 5\n',
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["audit", "--config", str(policy)]) == 1
    assert capsys.readouterr().out.startswith("anonaudit: 2,201 records, 14 equivalence classes")


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        ("", "count column 'n' is empty in row 2; every row needs a count (or drop --count)"),
        ("2.5", "count column 'n' holds '2.5' in row 2; counts must be whole numbers, 0 or more"),
        ("-1", "count column 'n' holds '-1' in row 2; counts must be whole numbers, 0 or more"),
        (
            "many",
            "count column 'n' holds 'many' in row 2, not a number; counts must be whole numbers, "
            "0 or more",
        ),
        ("inf", "count column 'n' holds 'inf' in row 2; counts must be whole numbers, 0 or more"),
    ],
)
def test_a_bad_count_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str, said: str
) -> None:
    path = tmp_path / "f.csv"
    path.write_text(f"q,s,n\na,x,3\nb,y,{cell}\n", encoding="utf-8")
    assert main(["audit", str(path), "--qi", "q", "--count", "n"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"anonaudit: error: {path}: {said}"


def test_a_bad_count_past_the_first_block_is_named_by_its_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "f.csv"
    rows = "".join(f"a{i % 7},x,{i % 5}\n" for i in range(300_000))
    path.write_text(f"q,s,n\n{rows}b,y,2.5\nc,y,oops\n", encoding="utf-8")
    assert main(["audit", str(path), "--qi", "q", "--count", "n"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"anonaudit: error: {path}: count column 'n' holds ")
    assert re.search(r"holds '(2\.5' in row 300,001|oops' in row 300,002, not a number);", err)


def test_counts_all_zero_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not "the QI is null in every row" (what a table of no records said before)."""
    path = tmp_path / "f.csv"
    path.write_text("q,s,n\na,x,0\nb,y,0\n", encoding="utf-8")
    assert main(["audit", str(path), "--qi", "q", "--sensitive", "s", "--count", "n"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"anonaudit: error: {path}: every count in --count n is 0, so the table holds no "
        "records; check the count column"
    )


def test_whole_counts_written_as_decimals_are_read(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_text("q,n\na,3.0\nb, 2 \nb,0\nc,0\n", encoding="utf-8")
    report = anonaudit.audit(path, Roles(["q"], count="n"))
    # "c" counts no record: it is no class at all
    assert report.rows == 5 and sorted(report.table.classes.sizes.tolist()) == [2, 3]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--weights", "w"], "--weights and --count cannot be combined"),
        (["--records-out", "out.csv"], "--records-out writes one line per record"),
        (["--engine", "spark"], "--count needs the local or the Dask engine"),
    ],
)
def test_count_refuses_what_it_cannot_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    path = tmp_path / "f.csv"
    path.write_text("q,n,w\na,3,1.5\n", encoding="utf-8")
    extra = [str(tmp_path / e) if e.endswith(".csv") else e for e in extra]
    assert main(["audit", str(path), "--qi", "q", "--count", "n", *extra]) == 2
    assert said in capsys.readouterr().err


def test_count_column_named_as_a_role_or_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "f.csv"
    path.write_text("q,n\na,3\n", encoding="utf-8")
    assert main(["audit", str(path), "--qi", "q,n", "--count", "n"]) == 2
    assert "count column 'n' is also a quasi-identifier" in capsys.readouterr().err
    assert main(["audit", str(path), "--qi", "q", "--count", "m"]) == 2
    assert "'m'" in capsys.readouterr().err
