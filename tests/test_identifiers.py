"""Direct identifiers (issue 12, item 2): found by name (HIPAA Safe Harbor), by value
patterns and by uniqueness, reported in the summary, the JSON and the HTML, and left out
of ``advise --out`` unless kept."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import Roles
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.identifiers import HIPAA_IDENTIFIERS, by_name, by_uniqueness, by_values, luhn


def test_the_safe_harbor_list_has_its_18_identifiers() -> None:
    assert len(HIPAA_IDENTIFIERS) == 18
    found = by_name(["PatientName", "street_address", "e-mail", "SSN", "MRN", "vin", "age"])
    assert set(found) == {"PatientName", "street_address", "e-mail", "SSN", "MRN", "vin"}
    assert "(H) medical record numbers" in found["MRN"]
    assert by_name(["zipper_size", "template", "skip"]) == {}  # whole words only


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (["ann@example.org", "b.c@mail.co.uk"], "e-mail addresses"),
        (["+44 20 7946 0958", "(617) 555-0100"], "telephone numbers"),
        (["078-05-1120", "219-09-9999"], "US social security numbers"),
        (["AB123456C", "JG 12 34 56 A"], "UK national insurance numbers"),
        (["4111 1111 1111 1111", "5500-0000-0000-0004"], "payment card numbers"),
        (["192.168.0.1", "2001:db8::1"], "IP addresses"),
        (["https://example.org/u/1", "www.example.com/x"], "URLs"),
        (["123e4567-e89b-42d3-a456-426614174000"], "UUIDs"),
        (["1984-02-29", "31/12/1970"], "full dates"),
    ],
)
def test_values_that_look_like_identifiers(values: list[str], kind: str) -> None:
    reason = by_values("c", [*values, None])
    assert reason is not None and kind in reason


def test_ordinary_values_and_the_luhn_check() -> None:
    assert by_values("age", ["34", "51", "29"]) is None
    assert by_values("dx", ["flu", "cold"]) is None
    assert by_values("card", ["4111111111111112"]) is None  # fails the Luhn check
    assert luhn("79927398713") and not luhn("79927398710")
    assert by_uniqueness(95, 100) is not None and by_uniqueness(90, 100) is None
    assert by_uniqueness(50, 50) is None  # too few records to judge


def _frame(n: int = 200) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "patient_id": [f"P{i:05d}" for i in range(n)],
            "uuid": [f"123e4567-e89b-42d3-a456-{i:012d}" for i in range(n)],
            "age": [str(30 + i % 5) for i in range(n)],
            "notes": ["=cmd <b>x</b>"] * n,
            "dx": ["flu", "cold"] * (n // 2),
        }
    )


def test_a_uuid_quasi_identifier_and_an_undeclared_patient_id_are_flagged() -> None:
    report = anonaudit.audit(_frame(), Roles(["uuid", "age"], ["dx"]))
    found = {i.column: i for i in report.identifiers}
    assert set(found) == {"uuid", "patient_id"}
    assert found["uuid"].declared_role == "quasi-identifier"
    assert any("UUIDs" in r for r in found["uuid"].reasons)
    assert any("200 distinct values in 200 records" in r for r in found["uuid"].reasons)
    assert found["patient_id"].declared_role == "not audited"
    assert any("(R)" in r for r in found["patient_id"].reasons)
    # The three renderings say the same.
    document = report.to_dict()
    assert [i["column"] for i in document["identifiers"]] == ["uuid", "patient_id"]
    text = anonaudit.report.summary(report)
    assert "patient_id" in text and "may identify a person directly" in text
    page = report.to_html()
    assert 'id="identifiers"' in page and "patient_id" in page
    # A class table alone has no other columns to look at.
    assert [
        i.column for i in anonaudit.audit(report.table, Roles(["uuid", "age"], ["dx"])).identifiers
    ] == ["uuid"]


def test_no_identifier_no_section() -> None:
    frame = pd.DataFrame({"age": ["30", "31"] * 100, "dx": ["flu", "cold"] * 100})
    report = anonaudit.audit(frame, Roles(["age"], ["dx"]))
    assert report.identifiers == ()
    assert 'id="identifiers"' not in report.to_html()


def test_a_hostile_column_name_is_escaped() -> None:
    frame = _frame().rename(columns={"patient_id": "<script>id</script>"})
    page = anonaudit.audit(frame, Roles(["age"], ["dx"])).to_html()
    assert "<script>id" not in page and "&lt;script&gt;id" in page


def test_advise_out_leaves_undeclared_columns_out_unless_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "patients.csv"
    _frame().to_csv(data, index=False)
    argv = ["advise", str(data), "--qi", "age", "--sensitive", "dx", "-k", "2"]
    argv += ["--hierarchy", "age=interval:10"]
    out = tmp_path / "release.csv"
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    with out.open(encoding="utf-8") as stream:
        assert next(csv.reader(stream)) == ["age", "dx"]
    assert "--out leaves out patient_id, uuid, notes" in capsys.readouterr().err
    assert main([*argv, "--out", str(out), "--keep", "notes", "--quiet"]) == 0
    with out.open(encoding="utf-8") as stream:
        assert next(csv.reader(stream)) == ["age", "notes", "dx"]
    assert main([*argv, "--out", str(out), "--keep", "nope", "--quiet"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main([*argv, "--keep", "notes"]) == 2


def test_the_json_report_lists_identifiers(tmp_path: Path) -> None:
    data, report = tmp_path / "patients.csv", tmp_path / "r.json"
    _frame().to_csv(data, index=False)
    argv = ["audit", str(data), "--qi", "age", "--sensitive", "dx", "--json", str(report)]
    assert main([*argv, "--quiet"]) == 0
    listed = json.loads(report.read_text(encoding="utf-8"))["identifiers"]
    assert {i["column"]: i["declared_role"] for i in listed} == {
        "patient_id": "not audited",
        "uuid": "not audited",
    }


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from(["x", "y", None])),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_distinct_values_are_counted_alike_before_and_after_the_classes(
    rows: list[tuple[str | None, str | None]], classes_first: bool
) -> None:
    """``ClassTable.distinct`` reuses the classes' codes when it can, and counts alike."""
    keys = pa.table(
        {
            "q": pa.array([q for q, _ in rows], pa.string()),
            "r": pa.array([r for _, r in rows], pa.string()),
        }
    )
    table = ClassTable(("q", "r"), (), keys, np.ones(len(rows), dtype=np.int64))
    if classes_first:
        _ = table.classes
    for name in ("q", "r"):
        assert table.distinct(name) == len(pc.unique(keys.column(name)))


def test_the_first_values_of_a_column_of_many_come_from_a_prefix() -> None:
    from anonaudit.identifiers import _first_distinct

    column = pa.chunked_array([[f"v{i % 50_000}" for i in range(200_000)]])
    for n in (1, 7, 10_000, 50_000, 60_000):
        assert _first_distinct(column, n) == pc.unique(column).slice(0, n)
