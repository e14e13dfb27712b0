"""How checks list their offending classes: worst first, deterministic, name-safe."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import AuditOptions, Roles
from anonaudit.classtable import Classes
from anonaudit.measures._classes import FailingClasses


def test_ties_are_ordered_by_size_then_qi_values_with_nulls_last() -> None:
    frame = pd.DataFrame({"q": ["b", "a", None, None, "c", "c", "c"], "s": ["x"] * 7})
    report = anonaudit.audit(frame, Roles(["q"], ["s"]), AuditOptions(policy=anonaudit.Policy(k=5)))
    listed = report.k_anonymity.violating
    assert listed["q"].tolist() == ["a", "b", None, "c"]
    assert listed["size"].tolist() == [1, 1, 2, 3]


def test_listing_does_not_depend_on_input_order() -> None:
    frame = pd.DataFrame({"q": list("abcabd"), "r": list("xyzzyx"), "s": list("uvuvuv")})
    policy = anonaudit.Policy(k=2, t=0.0)
    first = anonaudit.audit(frame, Roles(["q", "r"], ["s"]), AuditOptions(policy=policy))
    shuffled = frame.sample(frac=1.0, random_state=3)  # reproducible shuffle for the test
    second = anonaudit.audit(shuffled, Roles(["q", "r"], ["s"]), AuditOptions(policy=policy))
    assert first.to_dict()["k_anonymity"] == second.to_dict()["k_anonymity"]
    listed = [r.t_closeness["s"].violating for r in (first, second)]
    assert listed[0][["q", "r", "size"]].equals(listed[1][["q", "r", "size"]])
    # Sums may differ in the last bit with the order rows arrive in.
    assert listed[0]["distance"].to_numpy() == pytest.approx(listed[1]["distance"].to_numpy())


def test_a_qi_named_like_a_measure_keeps_its_values() -> None:
    frame = pd.DataFrame({"size": ["S", "S", "L"], "s": ["x", "y", "x"]})
    report = anonaudit.audit(
        frame, Roles(["size"], ["s"]), AuditOptions(policy=anonaudit.Policy(k=2))
    )
    listed = report.k_anonymity.violating
    assert listed.columns.tolist() == ["size", "size_"]
    assert listed.iloc[0].tolist() == ["L", 1]
    entry = report.to_dict(redact=False)["k_anonymity"]["violating"]["classes"][0]
    assert entry == {"quasi_identifiers": {"size": "L"}, "size_": 1}
    hidden = report.to_dict()["k_anonymity"]["violating"]["classes"][0]  # redacted by default
    assert hidden == {"quasi_identifiers": {"size": "[redacted]"}, "size_": 1}


@settings(max_examples=60, deadline=None)
@given(
    classes=st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from("abcd")),
            st.sampled_from("xyz"),
            st.integers(1, 4),
            st.sampled_from([0.0, -0.0, 0.5, 1.0, math.inf]),
            st.booleans(),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda c: c[:2],
    ),
    limit=st.integers(1, 12),
    worst_first=st.sampled_from(["size", "m"]),
    descending=st.booleans(),
)
def test_the_first_classes_of_a_listing_are_found_without_listing_the_rest(
    classes: list[tuple[str | None, str, int, float, bool]],
    limit: int,
    worst_first: str,
    descending: bool,
) -> None:
    """A report's few classes (``head``) are the full listing's first rows: ties on the
    measure and the size broken by the QI values (nulls last), as the full sort does."""
    q1, q2, sizes, measure, failing = (list(column) for column in zip(*classes, strict=True))
    keys = pa.table({"q1": pa.array(q1, pa.string()), "q2": pa.array(q2, pa.string())})
    found = Classes(index=np.arange(len(classes)), sizes=np.array(sizes, dtype=np.int64), keys=keys)
    listing = FailingClasses(
        found, np.array(failing), {"m": np.array(measure)}, worst_first, descending
    )
    first = listing.head(limit)
    assert listing.count == sum(failing)
    pd.testing.assert_frame_equal(first, listing.frame.head(limit))
    assert listing.head(limit).equals(first)  # from the full listing, once it is built


def test_listed_values_are_computed_when_read_never_held() -> None:
    """The columns a listing shows that the check computed for it alone (entropy l,
    beta, delta) are computed again when a report lists the classes: the result holds
    none of them (on 10^7 classes, 80 MB each), and what is read is what the check
    measured."""
    import gc
    import weakref

    from anonaudit.classtable import ClassTable
    from anonaudit.measures.disclosure import attribute_disclosure
    from anonaudit.measures.l_diversity import l_diversity

    frame = pd.DataFrame(
        {
            "q": ["a", "a", "b", "b", "b", "c"],
            "s": ["x", "y", "x", "x", "z", "z"],
            "count": [1, 3, 2, 2, 1, 4],
        }
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["q"], sensitive=["s"])
    shown = attribute_disclosure(table, "s", alpha=0.5, beta=0.1, delta=0.5)
    diverse = l_diversity(table, "s", l=2, entropy_l=1.5)
    for result, name in ((shown, "beta"), (shown, "delta"), (diverse, "entropy_l")):
        first = result.failing.measures[name]
        held = weakref.ref(first)
        again = result.failing.measures[name]
        assert again is not first and np.array_equal(again, first)
        del first
        gc.collect()
        assert held() is None
    listing = shown.failing.frame
    assert listing["beta"].max() == pytest.approx(shown.beta)
    assert listing["delta"].max() == shown.delta == math.inf
    assert diverse.failing.frame["entropy_l"].min() == pytest.approx(diverse.entropy)
