"""Distinction and separation of QI subsets (anonaudit.measures.qi_analysis).

Published constants: ARX's ``TestRiskQuasiIdentifiers.testWithDefinedDataSet`` (five
records, hand-computed by its authors). Properties compare with the definitions of
Motwani & Xu (2007) evaluated on the raw records, and the drop analysis with class
tables built from the raw records without each QI.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from strategies import wide_rows

from anonaudit import Analyses, AuditOptions, ReadOptions, Roles, audit, load
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.errors import ParameterError
from anonaudit.measures._subsets import default_max_subset_size
from anonaudit.measures.k_anonymity import k_anonymity
from anonaudit.measures.qi_analysis import qi_analysis

SETTINGS = settings(max_examples=60, deadline=None)
ADULT = Path(__file__).parent.parent / "sample_data" / "adult" / "adult.csv"

ARX = pd.DataFrame(
    {
        "age": ["20", "30", "40", "20", "40"],
        "sex": ["Female", "Female", "Female", "Male", "Male"],
        "state": ["CA", "CA", "TX", "NY", "CA"],
    }
)


def table_of(frame: pd.DataFrame) -> ClassTable:
    counted = frame.astype(object).where(frame.notna(), None).assign(count=1)
    return ClassTable.from_frame(counted, quasi_identifiers=list(frame.columns))


def test_arx_constants() -> None:
    """ARX's hand-computed distinction and separation of every subset.

    ARX lists ``[sex, age]``; it now orders each subset by column (``[age, sex]``), which
    puts that subset before ``[age, state]`` in the text tie-break.
    """
    entries = qi_analysis(table_of(ARX)).entries
    assert [(e.qi, e.distinction) for e in entries] == [
        (("sex",), 0.4),
        (("state",), 0.6),
        (("age",), 0.6),
        (("sex", "state"), 0.8),
        (("age", "sex"), 1.0),
        (("age", "state"), 1.0),
        (("age", "sex", "state"), 1.0),
    ]
    assert [e.separation for e in entries] == pytest.approx([0.6, 0.7, 0.8, 0.9, 1, 1, 1])


def test_drops_by_hand() -> None:
    """Without age: F-CA 2, F-TX 1, M-NY 1, M-CA 1; without sex: 20-CA, 30-CA, 40-TX,
    20-NY, 40-CA all unique; without state: F-20, F-30, F-40, M-20, M-40 all unique."""
    result = qi_analysis(table_of(ARX))
    assert [(d.dropped, d.k, d.uniques, d.uniques_fraction) for d in result.drops] == [
        ("age", 1, 3, 0.6),
        ("sex", 1, 5, 1.0),
        ("state", 1, 5, 1.0),
    ]
    assert (result.k, result.uniques, result.uniques_fraction) == (1, 5, 1.0)


def test_one_qi_dropped_leaves_everyone_together() -> None:
    result = qi_analysis(table_of(ARX[["sex"]]))
    assert [(d.dropped, d.k, d.uniques) for d in result.drops] == [("sex", 5, 0)]


def test_single_record() -> None:
    """One record: distinction 1; separation undefined, reported 0 as ARX does."""
    entry = qi_analysis(table_of(ARX.head(1))).entries[0]
    assert (entry.distinction, entry.separation) == (1.0, 0.0)


def test_max_size() -> None:
    result = qi_analysis(table_of(ARX), max_size=1)
    assert result.max_size == 1 and [len(e.qi) for e in result.entries] == [1, 1, 1]
    assert qi_analysis(table_of(ARX), max_size=7).max_size == 3
    assert default_max_subset_size(10) == 10 and default_max_subset_size(11) == 3
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ParameterError, match="largest QI subset"):
            qi_analysis(table_of(ARX), max_size=bad)  # type: ignore[arg-type]


def test_adult_drops_match_tables_built_without_the_qi() -> None:
    """Marginals of the 9-QI class table equal class tables read from the raw rows."""
    qi = ["sex", "age", "race", "marital-status", "education", "native-country"]
    qi += ["workclass", "occupation", "salary-class"]
    result = qi_analysis(load(ADULT, Roles(qi), reading=ReadOptions(sep=";")), max_size=1)
    for drop in result.drops:
        rest = load(
            ADULT, Roles([q for q in qi if q != drop.dropped]), reading=ReadOptions(sep=";")
        )
        k = k_anonymity(rest)
        assert drop.k == k.k
        assert drop.uniques == k.histogram.get(1, 0)
    assert result.rows == 30162
    assert [e.qi for e in result.entries][:2] == [("salary-class",), ("sex",)]


@SETTINGS
@given(wide_rows(max_size=15))
def test_definitions_on_raw_records(rows: list[tuple[str | None, ...]]) -> None:
    """Distinction and separation as defined, on the raw records; bounds and monotony."""
    att = len(rows[0])
    frame = pd.DataFrame(rows, columns=[f"q{i}" for i in range(att)])
    result = qi_analysis(table_of(frame))
    n = len(rows)
    by_qi = {e.qi: e for e in result.entries}
    assert len(by_qi) == 2**att - 1
    for size in range(1, att + 1):
        for subset in combinations(range(att), size):
            keys = [tuple(row[p] for p in subset) for row in rows]
            entry = by_qi[tuple(f"q{p}" for p in subset)]
            assert entry.distinction == pytest.approx(len(set(keys)) / n)
            pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
            differ = sum(keys[i] != keys[j] for i, j in pairs)
            assert entry.separation == pytest.approx(differ / len(pairs) if pairs else 0.0)
            assert 0 < entry.distinction <= 1 and 0 <= entry.separation <= 1
            for smaller in combinations(subset, size - 1):
                if smaller:
                    sub = by_qi[tuple(f"q{p}" for p in smaller)]
                    assert sub.distinction <= entry.distinction + 1e-12
                    assert sub.separation <= entry.separation + 1e-12
    order = [(len(e.qi), e.distinction, e.separation) for e in result.entries]
    assert order == sorted(order)


def test_audit_json_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = audit(ARX, Roles(list(ARX.columns)), AuditOptions(analyses=Analyses(qi_analysis=True)))
    data = report.to_dict()
    assert data["qi_analysis"][0] == {"qi": ["sex"], "distinction": 0.4, "separation": 0.6}
    assert data["qi_analysis_summary"]["without"][0] == {
        "qi": "age",
        "k": 1,
        "sample_uniques": 3,
        "sample_uniques_fraction": 0.6,
    }
    path = tmp_path / "arx.csv"
    ARX.to_csv(path, index=False)
    out = tmp_path / "report.json"
    assert (
        main(["audit", str(path), "--qi", "age,sex,state", "--qi-analysis", "--json", str(out)])
        == 0
    )
    assert len(json.loads(out.read_text())["qi_analysis"]) == 7
    assert "qi analysis (7 subsets of up to 3 QIs)" in capsys.readouterr().out
    assert (
        main(["audit", str(path), "--qi", "age,sex", "--qi-analysis", "1", "--json", str(out)]) == 0
    )
    assert json.loads(out.read_text())["qi_analysis_summary"]["max_subset_size"] == 1
