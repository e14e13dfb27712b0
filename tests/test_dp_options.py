"""The DP companion's option objects (anonaudit.dp.options): validation once, with the
bad value named; the privacy unit of a bounded table; and the flat keyword arguments of
earlier versions, which still work, warn, and release what the new form releases."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.typing import NDArray

from anonaudit import EngineOptions, ReadOptions, Roles
from anonaudit.classtable import ClassTable
from anonaudit.dp import (
    Budget,
    DPOptions,
    DPReport,
    PrivacyGuarantee,
    PrivacyUnit,
    PublicDomain,
    Release,
    bound_contributions,
    companion,
    load_bounded,
    release,
)
from anonaudit.dp.mechanisms import DISCRETE, rr_keep_probability
from anonaudit.errors import OptionError, ParameterError
from anonaudit.report.json import dp_to_dict

pytest.importorskip("opendp")

TABLE = ClassTable.from_frame(
    pd.DataFrame(
        {"zip": ["a", "a", "b", "c"], "d": ["flu", "cold", "flu", "cold"], "count": [5, 5, 9, 1]}
    ),
    quasi_identifiers=["zip"],
    sensitive=["d"],
)
DOMAIN = PublicDomain.of({"zip": ["a", "b", "c", "d"], "d": ["flu", "cold", "cough"]})
VISITS = "id,zip,d\n" + "p1,a,flu\n" * 4 + "p2,a,cold\np2,b,flu\np3,b,flu\n"


# -- validation: once, when an option object is made, naming the bad value ----------------


EPSILON = "epsilon must be a positive number from 1e-06 to 100"
DELTA = "delta must be 0 or lie in [1e-100, 1)"
CONTRIBUTIONS = "contributions must be a whole number from 1 to 1,000,000"
ONE = PrivacyGuarantee(1.0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: PrivacyGuarantee(-1.0), f"{EPSILON} (got -1.0)"),
        (lambda: PrivacyGuarantee(math.inf), f"{EPSILON} (got inf)"),
        (lambda: PrivacyGuarantee(math.nan), f"{EPSILON} (got nan)"),
        (lambda: PrivacyGuarantee(True), f"{EPSILON} (got True)"),
        (lambda: PrivacyGuarantee("1"), f"{EPSILON} (got '1')"),
        (lambda: PrivacyGuarantee(1.0, 1.0), f"{DELTA} (got 1.0)"),
        (lambda: PrivacyGuarantee(1.0, -1e-6), f"{DELTA} (got -1e-06)"),
        (lambda: PrivacyUnit(contributions=0), f"{CONTRIBUTIONS} (got 0)"),
        (lambda: PrivacyUnit(contributions=2.0), f"{CONTRIBUTIONS} (got 2.0)"),
        (lambda: PrivacyUnit(contributions=True), f"{CONTRIBUTIONS} (got True)"),
        (lambda: PrivacyUnit(column=""), "column must be a column name (got '')"),
        (lambda: PrivacyUnit(column=3), "column must be a column name (got 3)"),
        (
            lambda: PrivacyUnit(neighbouring="swap"),
            "unknown neighbouring 'swap'; choose one of add-remove, replace",
        ),
        (lambda: DPOptions(1.0), "guarantee must be a PrivacyGuarantee(epsilon, delta) (got 1.0)"),
        (
            lambda: DPOptions(ONE, unit=3),
            "unit must be a PrivacyUnit(column=..., contributions=...) (got 3)",
        ),
        (
            lambda: DPOptions(ONE, mechanism="exponential"),
            "unknown mechanism 'exponential'; choose one of discrete-laplace, ",
        ),
        (
            lambda: DPOptions(ONE, postprocess="round"),
            "unknown postprocess 'round'; choose one of clamp, unbiased",
        ),
        (lambda: DPOptions(ONE, max_cells=0), "max_cells must be a whole number >= 1 (got 0)"),
        (
            lambda: DPOptions(ONE, domain={"zip": ["a"]}),
            "domain must be a PublicDomain (got {'zip': ['a']})",
        ),
        (lambda: DPOptions(ONE, sensitive=["d"]), "sensitive must be a column name (got ['d'])"),
        (lambda: DPOptions(ONE, budget=2.0), "budget must be a Budget (got 2.0)"),
    ],
)
def test_a_bad_option_is_named_with_its_value(make: Callable[[], object], message: str) -> None:
    with pytest.raises(OptionError) as caught:
        make()
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, ParameterError) and isinstance(caught.value, ValueError)


def test_options_that_contradict_each_other_are_refused_when_made() -> None:
    with pytest.raises(ParameterError, match="not whether a record is present"):
        DPOptions(
            PrivacyGuarantee(1.0),
            mechanism="randomized-response",
            domain=DOMAIN,
            unit=PrivacyUnit(neighbouring="add-remove"),
        )
    with pytest.raises(ParameterError, match="--public-domain"):
        DPOptions(PrivacyGuarantee(1.0, 1e-6), postprocess="unbiased")
    with pytest.raises(ParameterError, match="--public-domain"):
        DPOptions(
            PrivacyGuarantee(1.0),
            domain=DOMAIN,
            mechanism="randomized-response",
            postprocess="unbiased",
        )


def test_option_objects_are_frozen_with_the_defaults_of_before() -> None:
    options = DPOptions(PrivacyGuarantee(1.0))
    assert options.unit == PrivacyUnit() == PrivacyUnit(contributions=1)
    assert (options.mechanism, options.domain, options.sensitive, options.budget) == (
        "discrete-laplace",
        None,
        None,
        None,
    )
    assert (options.postprocess, options.epsilon, options.delta) == ("clamp", 1.0, 0.0)
    assert PrivacyGuarantee(1.0).pure and PrivacyGuarantee(1.0, 0.0).pure
    assert not PrivacyGuarantee(1.0, 1e-6).pure
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.mechanism = "laplace"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.guarantee.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        PrivacyUnit("id")  # type: ignore[misc]  # keyword-only, as OpenDP's unit_of
    with pytest.raises(TypeError):
        DPOptions(PrivacyGuarantee(1.0), PrivacyUnit())  # type: ignore[misc]


# -- the privacy unit and bounded tables -----------------------------------------------------


@pytest.fixture
def visits(tmp_path: Path) -> Path:
    path = tmp_path / "visits.csv"
    path.write_text(VISITS, encoding="utf-8")
    return path


def test_a_bounded_table_brings_its_unit(visits: Path) -> None:
    unit = PrivacyUnit(column="id", contributions=2, neighbouring="replace")
    bounded = load_bounded(visits, Roles(["zip"], ["d"]), unit)
    assert bounded.unit == unit
    assert (bounded.privacy_unit, bounded.max_contributions) == ("id", 2)
    # the table's unit, its neighbouring relation too, when the options name none
    report = companion(bounded, DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN))
    assert report.privacy_unit == "id" and report.bounded_records == 2
    s = report.release.sensitivity
    assert (s.neighbouring, s.max_contributions, s.l1) == ("replace", 2, 4)
    # the options' relation wins; their unit may repeat the table's
    again = PrivacyUnit(column="id", contributions=2, neighbouring="add-remove")
    report = companion(bounded, DPOptions(PrivacyGuarantee(1.0), unit=again, domain=DOMAIN))
    assert report.release.sensitivity.neighbouring == "add-remove"
    r = release(bounded, DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN))
    assert r.sensitivity.max_contributions == 2 and r.original is bounded.table


def test_a_unit_that_does_not_fit_the_table_is_refused(visits: Path) -> None:
    bounded = load_bounded(visits, Roles(["zip"], ["d"]), PrivacyUnit(column="id"))
    other = DPOptions(PrivacyGuarantee(1.0), unit=PrivacyUnit(column="pid"), domain=DOMAIN)
    with pytest.raises(ParameterError, match=r"bounded to 1 rows of each 'id'.* of each 'pid'"):
        companion(bounded, other)
    more = DPOptions(
        PrivacyGuarantee(1.0), unit=PrivacyUnit(column="id", contributions=3), domain=DOMAIN
    )
    with pytest.raises(ParameterError, match="bounded to 1 rows"):
        release(bounded, more)
    # a plain class table has no unit column: it is bounded as the data is read
    with pytest.raises(ParameterError, match=r"'id' is bounded as the data is read: load_bounded"):
        companion(TABLE, DPOptions(PrivacyGuarantee(1.0), unit=PrivacyUnit(column="id")))
    with pytest.raises(ParameterError, match="name the column identifying them"):
        load_bounded(visits, Roles(["zip"], ["d"]), PrivacyUnit(contributions=2))
    with pytest.raises(ParameterError, match="weights"):
        load_bounded(visits, Roles(["zip"], ["d"], weights="w"), PrivacyUnit(column="id"))
    with pytest.raises(TypeError, match="needs the roles and the unit"):
        load_bounded(visits, Roles(["zip"], ["d"]))


def test_load_bounded_reads_with_the_reading_options(tmp_path: Path) -> None:
    path = tmp_path / "visits.csv"
    path.write_text(VISITS.replace(",", ";").replace("p3;b;flu", "p3;b;NA"), encoding="utf-8")
    bounded = load_bounded(
        path,
        Roles(["zip"], ["d"]),
        PrivacyUnit(column="id", contributions=2),
        reading=ReadOptions(sep=";", na_values=["NA"]),
        engine=EngineOptions(),
    )
    assert bounded.table.rows == 5
    assert bounded.table.sensitive_counts("d").values.count(None) == 1


def test_a_frequency_table_can_be_bounded(tmp_path: Path) -> None:
    path = tmp_path / "counts.csv"
    path.write_text("id,zip,n\np1,a,4\np2,a,1\np2,b,1\n", encoding="utf-8")
    bounded = load_bounded(path, Roles(["zip"], count="n"), PrivacyUnit(column="id"))
    assert (bounded.table.rows, bounded.dropped_records, bounded.units) == (2, 4, 2)


# -- the flat keyword arguments of earlier versions ------------------------------------------

SEED = 20240611


def seeded_noise(values: NDArray[Any], *, mechanism: str, scale: float) -> NDArray[Any]:
    """Stand-in noise for OpenDP's, which reads the operating system's secure generator
    and cannot be seeded: the same inputs get the same noise."""
    rng = np.random.default_rng([SEED, len(values), int(scale * 1000)])
    if mechanism in DISCRETE:
        return np.asarray(values, np.int64) + np.rint(rng.laplace(0, scale, len(values))).astype(
            np.int64
        )
    return np.asarray(values, np.float64) + rng.normal(0, scale, len(values))


def seeded_response(
    codes: NDArray[Any], counts: NDArray[Any], *, categories: int, epsilon: float
) -> NDArray[Any]:
    """Stand-in randomized response, seeded likewise."""
    rng = np.random.default_rng([SEED, len(codes), categories])
    values = np.repeat(codes, counts)
    kept = rng.random(len(values)) < rr_keep_probability(epsilon, categories)
    reports = np.where(kept, values, rng.integers(0, categories, len(values)))
    result = np.zeros((len(codes), categories), dtype=np.int64)
    np.add.at(result, (np.repeat(np.arange(len(codes)), counts), reports), 1)
    return result


def seeded_coin(probabilities: NDArray[Any]) -> NDArray[Any]:
    """Stand-in for the randomized threshold's secure coin, seeded likewise."""
    p = np.asarray(probabilities)
    return np.random.default_rng([SEED, len(p)]).random(p.shape) < p


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("anonaudit.dp.release")
    monkeypatch.setattr(module, "add_noise", seeded_noise)
    monkeypatch.setattr(module, "randomized_response", seeded_response)
    monkeypatch.setattr(module, "bernoulli", seeded_coin)


def same_release(old: Release, new: Release) -> None:
    for field in dataclasses.fields(Release):
        a, b = getattr(old, field.name), getattr(new, field.name)
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b), field.name
        elif isinstance(a, ClassTable):
            assert a.keys.equals(b.keys) and np.array_equal(a.counts, b.counts), field.name
        else:
            assert a == b, field.name


def same_report(old: DPReport, new: DPReport) -> None:
    same_release(old.release, new.release)
    assert json.dumps(dp_to_dict(old), sort_keys=True) == json.dumps(
        dp_to_dict(new), sort_keys=True
    )


#: The same release asked for in the old form and in the new.
CASES = [
    (
        {"epsilon": 1.0, "domain": DOMAIN},
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN),
    ),
    (
        {"epsilon": 0.5, "delta": 1e-6, "mechanism": "discrete-gaussian"},
        DPOptions(PrivacyGuarantee(0.5, 1e-6), mechanism="discrete-gaussian"),
    ),
    (
        {
            "epsilon": 2.0,
            "delta": 1e-6,
            "mechanism": "gaussian",
            "domain": DOMAIN,
            "neighbouring": "replace",
            "max_contributions": 2,
            "postprocess": "unbiased",
        },
        DPOptions(
            PrivacyGuarantee(2.0, 1e-6),
            unit=PrivacyUnit(neighbouring="replace", contributions=2),
            mechanism="gaussian",
            domain=DOMAIN,
            postprocess="unbiased",
        ),
    ),
    (
        {"epsilon": 1.0, "mechanism": "randomized-response", "domain": DOMAIN, "sensitive": "d"},
        DPOptions(
            PrivacyGuarantee(1.0), mechanism="randomized-response", domain=DOMAIN, sensitive="d"
        ),
    ),
    (
        {
            "epsilon": 1.0,
            "mechanism": "laplace",
            "domain": DOMAIN,
            "budget": Budget(epsilon=2.0),
            "max_cells": 12,
        },
        DPOptions(
            PrivacyGuarantee(1.0),
            mechanism="laplace",
            domain=DOMAIN,
            budget=Budget(epsilon=2.0),
            max_cells=12,
        ),
    ),
]


@pytest.mark.usefixtures("seeded")
@pytest.mark.parametrize(("keywords", "options"), CASES)
def test_old_keywords_warn_and_release_what_the_new_form_releases(
    keywords: dict[str, Any], options: DPOptions
) -> None:
    names = ", ".join(f"{name}=" for name in keywords)
    with pytest.warns(DeprecationWarning, match=rf"release\({names}\) is deprecated") as caught:
        old = release(TABLE, **keywords)
    assert "stops working in 0.3" in str(caught[0].message)
    assert "DPOptions(PrivacyGuarantee(epsilon, delta)" in str(caught[0].message)
    assert caught[0].filename == __file__  # the caller's line, where the fix goes
    same_release(old, release(TABLE, options))
    with pytest.warns(DeprecationWarning, match=rf"companion\({names}\) is deprecated") as caught:
        old_report = companion(TABLE, **keywords)
    assert caught[0].filename == __file__
    same_report(old_report, companion(TABLE, options))


@pytest.mark.usefixtures("seeded")
def test_old_bounding_keywords_warn_and_bound_as_the_new_form(visits: Path) -> None:
    with pytest.warns(DeprecationWarning, match=r"load_bounded\(quasi_identifiers=, ") as caught:
        old = load_bounded(
            visits,
            quasi_identifiers=["zip"],
            sensitive=["d"],
            privacy_unit="id",
            max_contributions=2,
            sep=",",
            encoding="utf-8",
            na_values=[""],
            progress=None,
            decimal_comma=[],
        )
    assert caught[0].filename == __file__
    new = load_bounded(visits, Roles(["zip"], ["d"]), PrivacyUnit(column="id", contributions=2))
    assert old.table.keys.equals(new.table.keys) and np.array_equal(
        old.table.counts, new.table.counts
    )
    assert (old.unit, old.units, old.dropped_records) == (new.unit, new.units, new.dropped_records)
    raw = ClassTable.from_frame(
        pd.DataFrame({"id": ["a", "a", "b"], "zip": ["1", "2", "1"], "count": [3, 1, 1]}),
        quasi_identifiers=["id", "zip"],
    )
    with pytest.warns(
        DeprecationWarning, match=r"bound_contributions\(privacy_unit=, max_contributions=\)"
    ):
        old = bound_contributions(raw, privacy_unit="id", max_contributions=2)
    new = bound_contributions(raw, PrivacyUnit(column="id", contributions=2))
    assert old == new
    # as before, companion() takes m from a bounded table, not from max_contributions=
    options = DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN)
    with pytest.warns(
        DeprecationWarning, match=r"companion\(epsilon=, domain=, max_contributions="
    ):
        old_report = companion(new, epsilon=1.0, domain=DOMAIN, max_contributions=5)
    same_report(old_report, companion(new, options))
    assert old_report.release.sensitivity.max_contributions == 2


def test_old_keywords_name_a_bad_value_by_the_old_name() -> None:
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(
            OptionError,
            match=r"^max_contributions must be a whole number from 1 to 1,000,000 \(got 0\)$",
        ),
    ):
        release(TABLE, epsilon=1.0, domain=DOMAIN, max_contributions=0)
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(
            OptionError, match=r"^epsilon must be a positive number from 1e-06 to 100 \(got 0\.0\)$"
        ),
    ):
        companion(TABLE, epsilon=0.0, domain=DOMAIN)
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(OptionError, match=r"^privacy_unit must be a column name \(got ''\)$"),
    ):
        bound_contributions(TABLE, privacy_unit="")
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(OptionError, match="unknown mechanism 'x'"),
    ):
        release(TABLE, epsilon=1.0, mechanism="x")  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning), pytest.raises(ParameterError, match="never pure"):
        release(TABLE, epsilon=1.0)  # refused by the release, as before


def test_old_and_new_forms_do_not_mix() -> None:
    options = DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN)
    with pytest.raises(TypeError, match="not both"):
        release(TABLE, options, epsilon=1.0)
    with pytest.raises(TypeError, match="not both"):
        companion(TABLE, options, domain=DOMAIN)
    with pytest.raises(TypeError, match="not both"):
        bound_contributions(TABLE, PrivacyUnit(column="zip"), max_contributions=2)
    with pytest.raises(TypeError, match="not both"):
        load_bounded("x.csv", Roles(["zip"]), privacy_unit="id")
    # refused as Python refuses arguments, before any warning: nothing to migrate
    with pytest.raises(TypeError, match="missing required keyword argument: 'epsilon'"):
        release(TABLE, delta=1e-6)
    with pytest.raises(TypeError, match="missing required keyword argument: 'privacy_unit'"):
        load_bounded("x.csv", quasi_identifiers=["zip"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'epsilon_'"):
        release(TABLE, epsilon_=1.0)
    with pytest.raises(TypeError, match="needs its options"):
        companion(TABLE)
    with pytest.raises(TypeError, match="needs its options"):
        release(TABLE, PrivacyGuarantee(1.0))  # type: ignore[arg-type]
