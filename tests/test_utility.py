"""Information loss: DM* / DM, C_AVG and Sweeney's precision on hand-computed tables,
and the bounds n <= DM <= n**2 as a property."""

from __future__ import annotations

import pandas as pd
import pytest
from arx_test_table import ARX_HIERARCHIES, arx_table
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import AuditOptions, ClassTable, Hierarchy, Policy, Roles
from anonaudit.errors import ParameterError
from anonaudit.measures.generalization import Generalization
from anonaudit.measures.utility import information_loss


def table(sizes: list[int]) -> ClassTable:
    frame = pd.DataFrame({"q": [f"v{i}" for i in range(len(sizes))], "count": sizes})
    return ClassTable.from_frame(frame, quasi_identifiers=["q"])


def test_dm_star_and_c_avg_by_hand() -> None:
    # Classes of 2, 3 and 5: DM* = 4 + 9 + 25 = 38; C_AVG = (10 / 3) / 2.
    loss = information_loss(table([2, 3, 5]), k=2)
    assert loss.discernibility == 38
    assert loss.average_class_size == pytest.approx(10 / 3 / 2)
    assert loss.height == 0 and loss.precision == 1.0 and loss.suppressed == 0
    assert information_loss(table([2, 3, 5])).average_class_size == pytest.approx(10 / 3)


def test_suppressed_records_cost_the_table_size_each() -> None:
    # Bayardo & Agrawal: 2 suppressed records out of n = 12 cost 12 each.
    loss = information_loss(table([4, 6]), k=3, suppressed=2)
    assert loss.discernibility == 16 + 36 + 12 * 2
    assert loss.average_class_size == pytest.approx((10 / 2) / 3)
    # Each suppressed record counts at the top of the one QI's hierarchy: 1 - 2 / 12.
    assert loss.precision == pytest.approx(1 - 2 / 12)


def test_arx_table_precision_by_hand() -> None:
    # Node (age 1 of 2, gender 1 of 1, zipcode 2 of 5), classes 2, 2, 3 (see
    # test_generalization): Prec = 1 - (1/2 + 1/1 + 2/5) / 3, DM* = 4 + 4 + 9.
    g = Generalization(ARX_HIERARCHIES, {"age": 1, "gender": 1, "zipcode": 2})
    loss = information_loss(g.apply(arx_table()), k=2, generalization=g)
    assert loss.precision == pytest.approx(1 - (0.5 + 1 + 0.4) / 3)
    assert loss.discernibility == 17
    assert loss.average_class_size == pytest.approx(7 / 3 / 2)
    assert loss.height == 4


def test_everything_at_the_top_has_precision_zero_and_dm_n_squared() -> None:
    g = Generalization(ARX_HIERARCHIES, {"age": 2, "gender": 1, "zipcode": 5})
    loss = information_loss(g.apply(arx_table()), generalization=g)
    assert loss.precision == 0.0
    assert loss.discernibility == 49


def test_the_audit_reports_utility_of_the_audited_table() -> None:
    report = anonaudit.audit(
        arx_table(),
        Roles(["age", "gender", "zipcode"]),
        AuditOptions(
            policy=Policy(k=2),
            hierarchies=ARX_HIERARCHIES,
            generalize={"age": 1, "gender": 1, "zipcode": 2},
        ),
    )
    assert report.utility.discernibility == 17
    assert report.utility.k == 2
    assert report.to_dict()["utility"] == {
        "discernibility": 17.0,
        "average_class_size": pytest.approx(7 / 6),
        "k": 2,
        "height": 4,
        "precision": pytest.approx(1 - 1.9 / 3),
        "suppressed": 0,
    }


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 0}, "k must be a whole number"),
        ({"suppressed": -1}, "suppressed must be >= 0"),
        ({"suppressed": 1.5}, "suppressed must be a whole number"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        information_loss(table([1]), **kwargs)  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=30), st.integers(0, 40))
def test_dm_lies_between_n_and_n_squared(sizes: list[int], suppressed: int) -> None:
    n = sum(sizes) + suppressed
    loss = information_loss(table(sizes), suppressed=suppressed)
    assert n <= loss.discernibility <= n * n
    assert 0.0 <= loss.precision <= 1.0


def test_height_zero_hierarchy_level_is_no_loss() -> None:
    flat = Hierarchy.from_rows([["a", "*"]], name="flat")
    g = Generalization({"q": flat}, {"q": 0})
    frame = pd.DataFrame({"q": ["a"], "count": [3]})
    assert (
        information_loss(
            ClassTable.from_frame(frame, quasi_identifiers=["q"]), generalization=g
        ).precision
        == 1.0
    )
