"""``anonaudit tables`` on the published tables of ``sample_data/tables/`` (made from the
bundled microdata by ``sample_data/make_tables.py``, a threshold rule of 10 and nothing
more): what a per-table check misses and the joint audit finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonaudit.cli import main

TABLES = Path(__file__).resolve().parents[1] / "sample_data" / "tables"


def _document(capsys: pytest.CaptureFixture[str], *names: str) -> dict[str, object]:
    assert main(["tables", *(str(TABLES / n) for n in names), "--json", "-"]) == 1
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_adult_by_sex_and_overall_give_back_more_together(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Education by race for everyone, for women and for men: alone, 5, 1 and 1 cells
    are given back; together 19, as a woman's cell is everyone's less the men's."""
    names = [f"adult_education_race{s}.csv" for s in ("", "_women", "_men")]
    alone = [_document(capsys, n)["counts"]["exact"] for n in names]  # type: ignore[index]
    joint = _document(capsys, *names)
    assert alone == [5, 1, 1]
    assert joint["counts"]["exact"] == 19  # type: ignore[index]
    crossing = [
        f
        for f in joint["findings"]  # type: ignore[attr-defined]
        if f["kind"] == "exact"
        and f["table"].endswith("_women.csv")
        and any("adult_education_race.csv:" in p for p in f["proofs"])
    ]
    assert crossing  # a woman's cell proved with the table of everyone


def test_titanic_tables_give_back_the_first_class_women_who_died(
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = sorted(p.name for p in TABLES.glob("titanic_*.csv"))
    assert main(["tables", *(str(TABLES / n) for n in names), "--show-values"]) == 1
    out = capsys.readouterr().out
    assert (
        "Class=1st, Sex=Female, Survived=No: published as x, but the published cells "
        "give its value: 4" in out
    )
    assert "everyone in Class=2nd, Age=Child has Survived=Yes" in out
