"""delta-disclosure as anonaudit, ARX and pycanon define it (issue 23, "Confusing").

anonaudit follows Brickell & Shmatikov (2008, KDD, Definition 6): ``|ln(p_E(s) / p(s))|
< delta`` for every class and *every value of the table*, so a class lacking a value is
infinitely far. ARX (``DDisclosurePrivacy``) takes ``|log2(p_E(s) / p(s))|`` over the
values present in a class, failing a class when it is ``>= d``; pycanon
(``delta_disclosure``) the natural log over present values. The worked tables below are
computed by hand; the help and the explanation must state the conversion
``delta = ln(2) * d_ARX``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import pytest

from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.measures.disclosure import attribute_disclosure
from anonaudit.report import explain
from anonaudit.report.sections.disclosure import SECTION

LN2 = math.log(2)


def _table(rows: Sequence[tuple[str, str, int]]) -> ClassTable:
    frame = pd.DataFrame(list(rows), columns=["q", "s", "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])


def _arx_passes(classes: dict[str, dict[str, int]], d: float) -> bool:
    """ARX's test as its documentation and DDisclosurePrivacy define it: every present
    value of every class has ``|log2(p_E / p)| < d``."""
    totals: dict[str, int] = {}
    for counts in classes.values():
        for value, count in counts.items():
            totals[value] = totals.get(value, 0) + count
    n = sum(totals.values())
    return all(
        abs(math.log2((count / sum(counts.values())) / (totals[value] / n))) < d
        for counts in classes.values()
        for value, count in counts.items()
    )


# Every class lacks or holds values as follows. Table: x 6/12, y 3/12, z 3/12.
#   A = {x: 3, y: 1}        x 3/4 : 1/2 = 3/2, y 1/4 : 1/4 = 1; lacks z
#   B = {x: 1, y: 2, z: 1}  x 1/4 : 1/2 = 1/2, y 1/2 : 1/4 = 2, z 1
#   C = {x: 2, z: 2}        x 1, z 1/2 : 1/4 = 2; lacks y
# Over present values: A ln(3/2), B ln 2, C ln 2, so pycanon's delta = ln 2 = 0.693 and
# ARX's delta = log2(2) = 1. Ours is inf: A and C lack a value.
LACKING = {"A": {"x": 3, "y": 1}, "B": {"x": 1, "y": 2, "z": 1}, "C": {"x": 2, "z": 2}}

# Every class holds every value. Table: x 4/9, y 3/9, z 2/9.
#   B = {x: 1, y: 2, z: 1}  x 1/4 : 4/9 = 9/16, y 1/2 : 1/3 = 3/2, z 1/4 : 2/9 = 9/8
#   D = {x: 3, y: 1, z: 1}  x 3/5 : 4/9 = 27/20, y 1/5 : 1/3 = 3/5, z 1/5 : 2/9 = 9/10
# B's largest |ln| is ln(16/9) = 0.575, D's ln(5/3) = 0.511: ours = pycanon's = ln(16/9),
# ARX's = log2(16/9) = 0.830, and ln(16/9) = ln 2 * log2(16/9).
HOLDING = {"B": {"x": 1, "y": 2, "z": 1}, "D": {"x": 3, "y": 1, "z": 1}}


def _rows(classes: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    return [(q, s, c) for q, counts in classes.items() for s, c in counts.items()]


def test_a_class_lacking_a_value_is_infinite_here_finite_in_arx_and_pycanon() -> None:
    result = attribute_disclosure(_table(_rows(LACKING)), "s")
    assert result.delta == math.inf
    assert result.delta_present == pytest.approx(LN2, rel=1e-15)  # pycanon's figure
    assert result.delta_arx == pytest.approx(1.0, rel=1e-15)  # ARX's figure
    # ARX's d = 1.1 passes every class; its conversion ln 2 * 1.1 = 0.762 here fails
    # exactly the classes that lack a value, A and C (B's ln 2 = 0.693 is below it).
    assert _arx_passes(LACKING, 1.1)
    ours = attribute_disclosure(_table(_rows(LACKING)), "s", delta=LN2 * 1.1)
    assert ours.passed is False
    assert sorted(ours.violating["q"]) == ["A", "C"]
    assert list(ours.violating["delta"]) == [math.inf, math.inf]


def test_where_every_value_is_present_ours_is_ln2_times_arx() -> None:
    result = attribute_disclosure(_table(_rows(HOLDING)), "s")
    assert result.delta == pytest.approx(math.log(16 / 9), rel=1e-14)
    assert result.delta_present == result.delta  # pycanon's, the same figure
    assert result.delta_arx == pytest.approx(math.log2(16 / 9), rel=1e-14)
    assert result.delta == pytest.approx(LN2 * result.delta_arx, rel=1e-14)
    # ARX's bound d gives ARX's verdict as delta = ln 2 * d here, on both sides of
    # ARX's 0.830 and of D's log2(5/3) = 0.737.
    for d in (0.5, 0.7, 0.75, 0.8, 0.82, 0.84, 0.9, 1.0, 2.0):
        ours = attribute_disclosure(_table(_rows(HOLDING)), "s", delta=LN2 * d).passed
        assert ours is _arx_passes(HOLDING, d), d


def test_the_help_states_the_definition_and_the_conversion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["audit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    start = text.index("--delta DELTA delta-disclosure")
    help_text = text[start : text.index("--max-risk", start)]
    for phrase in (
        "Brickell & Shmatikov",
        "|ln(class share / table share)| < DELTA for every value of the table",
        "a class lacking a value fails",
        "ARX's d is log2",
        "pycanon's delta ln",
        "DELTA = ln(2) * d = 0.693 d",
    ):
        assert phrase in help_text, phrase
    assert f"{LN2:.3f}" == "0.693"


def test_the_explanation_states_the_definition_and_the_conversion() -> None:
    about = SECTION.about
    assert about is explain.DISCLOSURE
    for phrase in (
        "every value of the table",
        "ARX’s δ-disclosure uses log base 2",
        "pycanon the natural log",
        "ln 2 · δ_ARX",
        "δ = ln 2 · d ≈ 0.693 d",
        "a class lacking a value fails here at any δ",
    ):
        assert phrase in about.definition, phrase
    assert "delta_arx" in SECTION.usage and "delta_present" in SECTION.usage
