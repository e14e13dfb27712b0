"""The option objects of the Python API (issue 11, :mod:`anonaudit.settings.options`).

Each object refuses a bad value when it is made, with the one message of a bad option
(:class:`~anonaudit.errors.OptionError`: ``NAME must ... (got VALUE)`` or ``unknown NAME
VALUE; choose one of ...``); the flat keyword arguments of 0.1 still work until 0.3, warn
and audit exactly as the objects they map onto (:func:`~anonaudit.settings.options.from_keywords`);
and a policy file maps onto the same objects as the equivalent call.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import (
    Analyses,
    AuditOptions,
    EngineOptions,
    EqualDistance,
    HierarchicalDistance,
    MatrixDistance,
    NumericDistance,
    OrderedDistance,
    Policy,
    PopulationOptions,
    ReadOptions,
    Roles,
)
from anonaudit.cli.config import read_config
from anonaudit.errors import OptionError, ParameterError
from anonaudit.progress import Progress
from anonaudit.settings.options import Distance, from_keywords

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
CLINIC = SAMPLE / "clinic.csv"
DIAGNOSES = SAMPLE / "clinic_hierarchy_diagnosis.csv"
#: clinic.csv's incomes from lowest to highest (thousands).
INCOMES = [str(n) for n in [*range(20, 125, 5), 300]]


# -- (a) a bad value: the one message, naming the value ------------------------------------

#: A bad value per option: the call, then the option (as named in the message, which
#: ends with the field's name: ``sampling_fraction``, ``population_model``) and the value
#: the message must show; where two readings fit, any of them.
REFUSED: list[tuple[str, Callable[[], object], list[tuple[str, object]]]] = [
    ("roles-lone-qi", lambda: Roles("zip"), [("quasi_identifiers", "zip")]),
    ("roles-lone-sa", lambda: Roles(["zip"], "dx"), [("sensitive", "dx")]),
    ("roles-no-qi", lambda: Roles([]), [("quasi_identifiers", []), ("quasi_identifiers", ())]),
    (
        "roles-duplicate",
        lambda: Roles(["zip", "age"], ["zip"]),
        [("sensitive", "zip"), ("quasi_identifiers", "zip"), ("columns", "zip")],
    ),
    ("read-format", lambda: ReadOptions(format="xlsx"), [("format", "xlsx")]),
    ("read-missing", lambda: ReadOptions(missing_columns="skip"), [("missing_columns", "skip")]),
    ("read-delta-negative", lambda: ReadOptions(delta_version=-1), [("delta_version", -1)]),
    ("read-delta-text", lambda: ReadOptions(delta_version="1"), [("delta_version", "1")]),
    ("engine", lambda: EngineOptions(engine="ray"), [("engine", "ray")]),
    (
        "population-size-and-fraction",
        lambda: PopulationOptions(size=1000, sampling_fraction=0.1),
        [("size", 1000), ("sampling_fraction", 0.1)],
    ),
    ("population-k-map-alone", lambda: PopulationOptions(k_map=3), [("k_map", 3)]),
    ("population-model", lambda: PopulationOptions(model="poisson"), [("model", "poisson")]),
    ("population-size", lambda: PopulationOptions(size=0), [("size", 0)]),
    (
        "population-fraction",
        lambda: PopulationOptions(sampling_fraction=2.0),
        [("sampling_fraction", 2.0)],
    ),
    ("analyses-qi-analysis", lambda: Analyses(qi_analysis=0), [("qi_analysis", 0)]),
    ("analyses-suda", lambda: Analyses(suda=-1), [("suda", -1)]),
    ("analyses-limit", lambda: Analyses(suppression_limit=1.0), [("suppression_limit", 1.0)]),
    ("audit-nulls", lambda: AuditOptions(nulls="maybe"), [("nulls", "maybe")]),
    ("audit-distance-name", lambda: AuditOptions(distances="ordered"), [("distances", "ordered")]),
    (
        "audit-distance-names",
        lambda: AuditOptions(distances={"dx": "ordered"}),
        [("distances", {"dx": "ordered"})],
    ),
    ("audit-policy", lambda: AuditOptions(policy={"k": 2}), [("policy", {"k": 2})]),
    ("ordered-twice", lambda: OrderedDistance(["low", "high", "low"]), [("order", "low")]),
]


@pytest.mark.parametrize(("make", "named"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_bad_value_is_refused_with_the_one_message(
    make: Callable[[], object], named: list[tuple[str, object]]
) -> None:
    with pytest.raises(OptionError) as caught:
        make()
    error = caught.value
    assert isinstance(error, ParameterError) and isinstance(error, ValueError)
    assert any(error.option.endswith(option) and error.value == value for option, value in named), (
        error.option,
        error.value,
    )
    assert str(error) == error.worded(error.option)  # the template, nothing else
    assert repr(error.value) in str(error)


def test_the_message_is_worded_with_the_option_or_its_choices() -> None:
    with pytest.raises(OptionError) as fraction:
        PopulationOptions(sampling_fraction=2.0)
    assert str(fraction.value) == "sampling_fraction must lie in (0, 1] (got 2.0)"
    with pytest.raises(OptionError) as engine:
        EngineOptions(engine="ray")
    assert str(engine.value) == "unknown engine 'ray'; choose one of local, dask, spark"


def test_good_values_are_kept_as_immutable_sequences() -> None:
    roles = Roles(["zip", "age"], ["dx"], weights="w")
    assert roles == Roles(("zip", "age"), ("dx",), weights="w")
    assert roles.columns == ("zip", "age", "dx")
    reading = ReadOptions(filter="day=1", na_values=["", "NA"])
    assert (reading.filter, reading.na_values) == (("day=1",), ("", "NA"))
    assert OrderedDistance(["low", "high"]).order == ("low", "high")
    with pytest.raises(AttributeError):
        roles.weights = "v"  # type: ignore[misc]
    options = AuditOptions(distances=NumericDistance())
    assert options.distance_for("any") == NumericDistance()
    assert AuditOptions().distance_for("any") == EqualDistance()


# -- (b) the flat keyword arguments of 0.1: deprecated, same report ------------------------


def comparable(report: anonaudit.AuditReport) -> dict[str, Any]:
    """The JSON report without what changes from one run to the next."""
    document = report.to_dict(max_classes=None)
    del document["audited_at"]
    if "search" in document:  # the advice search's duration
        del document["search"]["seconds"]
    return document


def deprecated_call(function: Callable[..., Any], *args: Any, **keywords: Any) -> tuple[Any, str]:
    """``function(*args, **keywords)``, which must warn once, that its flat keywords are
    deprecated: the result and the warning's text."""
    with pytest.warns(DeprecationWarning) as record:
        result = function(*args, **keywords)
    assert len(record) == 1, [str(w.message) for w in record]
    warning = record[0]
    assert warning.filename == __file__  # it points at the caller's line
    message = str(warning.message)
    name = function.__name__
    assert message.startswith(f"{name}(") and "is deprecated" in message
    assert "0.3" in message
    for keyword in keywords:
        assert f"{keyword}=" in message, (keyword, message)
    return result, message


def _ground(tmp_path: Path) -> Path:
    """A ground-distance matrix for ``sex``: F and M at distance 1 (none ships)."""
    path = tmp_path / "sex_distance.csv"
    path.write_text(";F;M\nF;0;1\nM;1;0\n", encoding="utf-8")
    return path


def test_audit_with_flat_keywords_warns_and_reports_as_the_objects(tmp_path: Path) -> None:
    ground = _ground(tmp_path)
    policy = Policy(k=2, l=2, t=0.3)
    old, message = deprecated_call(
        anonaudit.audit,
        CLINIC,
        quasi_identifiers=["zip", "age"],
        sensitive=["diagnosis", "income", "sex"],
        policy=policy,
        distance={"income": "ordered"},
        orders={"income": INCOMES},
        hierarchies={"zip": "prefix", "diagnosis": str(DIAGNOSES)},
        ground_distances={"sex": str(ground)},
        generalize={"zip": 1},
        sampling_fraction=0.1,
        suda=2,
        qi_analysis=True,
        sep=",",
    )
    new = anonaudit.audit(
        CLINIC,
        Roles(["zip", "age"], ["diagnosis", "income", "sex"]),
        AuditOptions(
            policy=policy,
            distances={
                "income": OrderedDistance(INCOMES),
                "diagnosis": HierarchicalDistance(str(DIAGNOSES)),
                "sex": MatrixDistance(str(ground)),
            },
            hierarchies={"zip": "prefix"},
            generalize={"zip": 1},
            population=PopulationOptions(sampling_fraction=0.1),
            analyses=Analyses(suda=2, qi_analysis=True),
        ),
        reading=ReadOptions(sep=","),
    )
    assert "pass Roles, AuditOptions, ReadOptions, EngineOptions" in message
    # what the comparison covers: each distance, the generalization, population, SUDA
    assert {sa: r.distance for sa, r in new.t_closeness.items()} == {
        "diagnosis": "hierarchical",
        "income": "ordered",
        "sex": "matrix",
    }
    assert new.generalization is not None and new.population is not None
    assert new.suda is not None and new.qi_analysis is not None
    assert comparable(old) == comparable(new)


def test_audit_table_with_flat_keywords_warns_and_reports_as_the_objects() -> None:
    table = anonaudit.load(CLINIC, Roles(["zip", "age", "sex"], ["diagnosis", "income"]))
    diagnoses = sorted(pd.read_csv(DIAGNOSES, sep=";", header=None)[0])
    old, _ = deprecated_call(
        anonaudit.audit_table,
        table,
        policy=Policy(k=3, t=0.4),
        distance="ordered",
        orders={"income": INCOMES, "diagnosis": diagnoses},
        population_size=2410,
        population_model="pitman",
        advise_suppression=False,
        suda=True,
    )
    new = anonaudit.audit_table(
        table,
        AuditOptions(
            policy=Policy(k=3, t=0.4),
            distances={"income": OrderedDistance(INCOMES), "diagnosis": OrderedDistance(diagnoses)},
            population=PopulationOptions(size=2410, model="pitman"),
            analyses=Analyses(suppression=False, suda=True),
        ),
    )
    assert new.passed is False and new.suppression is None
    assert comparable(old) == comparable(new)


def test_load_with_flat_keywords_warns_and_reads_as_the_objects(tmp_path: Path) -> None:
    path = tmp_path / "clinic.csv"
    path.write_text(CLINIC.read_text(encoding="utf-8").replace(",", ";"), encoding="utf-8")
    old, message = deprecated_call(
        anonaudit.load,
        path,
        quasi_identifiers=["zip", "age"],
        sensitive=["income"],
        sep=";",
        na_values=["", "300"],
        decimal_comma=["income"],
        count=None,
    )
    new = anonaudit.load(
        path,
        Roles(["zip", "age"], ["income"]),
        reading=ReadOptions(sep=";", na_values=["", "300"], decimal_comma=["income"]),
    )
    assert "pass Roles, ReadOptions, EngineOptions" in message
    assert new.null_counts()["income"] == 2  # the empty field and the marker
    assert comparable(anonaudit.audit_table(old)) == comparable(anonaudit.audit_table(new))


@pytest.mark.parametrize("function", ["audit", "load"])
def test_the_flat_engine_keywords_still_work(function: str) -> None:
    """``engine="dask", scheduler=...`` was the way to pick an engine: the flat ``engine=``
    is a deprecated keyword too, not an :class:`EngineOptions` given alongside."""
    call = getattr(anonaudit, function)
    progress = Progress(io.StringIO(), interval=0.0, when="always")
    old, _ = deprecated_call(
        call, CLINIC, quasi_identifiers=["zip"], engine="local", progress=progress
    )
    new = call(CLINIC, Roles(["zip"]), engine=EngineOptions(engine="local", progress=progress))
    if function == "load":
        old, new = anonaudit.audit_table(old), anonaudit.audit_table(new)
    assert comparable(old) == comparable(new)


def test_a_population_table_given_by_path_is_read_alike(tmp_path: Path) -> None:
    release = tmp_path / "release.csv"
    pd.read_csv(CLINIC, dtype=str).head(40).to_csv(release, index=False)
    old, _ = deprecated_call(
        anonaudit.audit,
        release,
        quasi_identifiers=["zip", "age", "sex"],
        population_table=str(CLINIC),
        k_map=2,
    )
    new = anonaudit.audit(
        release,
        Roles(["zip", "age", "sex"]),
        AuditOptions(population=PopulationOptions(table=str(CLINIC), k_map=2)),
    )
    assert new.linkage is not None
    assert comparable(old) == comparable(new)


def test_the_deprecation_is_an_error_when_warnings_are(tmp_path: Path) -> None:
    """Under ``-W error`` (this suite's setting) the old form fails loudly, as CI should."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning, match=r"audit\(quasi_identifiers=\)"):
            anonaudit.audit(CLINIC, quasi_identifiers=["zip"])


# -- (c) objects and flat keywords together, unknown keywords ------------------------------


def test_objects_and_flat_keywords_together_are_a_type_error() -> None:
    roles = Roles(["zip"], ["diagnosis"])
    table = anonaudit.load(CLINIC, roles)
    with pytest.raises(TypeError, match="not both"):
        anonaudit.audit(CLINIC, roles, policy=Policy(k=2))
    with pytest.raises(TypeError, match="not both"):
        anonaudit.audit(CLINIC, options=AuditOptions(), quasi_identifiers=["zip"])
    with pytest.raises(TypeError, match="not both"):
        anonaudit.audit(CLINIC, reading=ReadOptions(), quasi_identifiers=["zip"])
    with pytest.raises(TypeError, match="not both"):
        anonaudit.audit_table(table, AuditOptions(), policy=Policy(k=2))
    with pytest.raises(TypeError, match="not both"):
        anonaudit.load(CLINIC, roles, sep=",")
    with pytest.raises(TypeError, match="not both"):
        anonaudit.load(CLINIC, engine=EngineOptions(), quasi_identifiers=["zip"])


@pytest.mark.parametrize("function", ["audit", "load"])
def test_an_unknown_keyword_is_a_type_error(function: str) -> None:
    call = getattr(anonaudit, function)
    with pytest.raises(TypeError, match="colour"):
        call(CLINIC, colour="red")
    with pytest.raises(TypeError):
        call(CLINIC, Roles(["zip"]), colour="red")


def test_an_unknown_keyword_of_audit_table_is_a_type_error() -> None:
    table = anonaudit.load(CLINIC, Roles(["zip"], ["diagnosis"]))
    with pytest.raises(TypeError, match="colour"):
        anonaudit.audit_table(table, colour="red")
    with pytest.raises(TypeError):
        anonaudit.audit_table(table, AuditOptions(), colour="red")


def test_audit_table_takes_no_keyword_of_reading_or_roles() -> None:
    """``sep=`` or ``quasi_identifiers=`` never were keywords of ``audit_table``: the class
    table is read already, and saying otherwise is an error, not a setting ignored."""
    table = anonaudit.load(CLINIC, Roles(["zip"], ["diagnosis"]))
    with pytest.raises(TypeError, match="sep"):
        anonaudit.audit_table(table, sep=";")
    with pytest.raises(TypeError, match="quasi_identifiers"):
        anonaudit.audit_table(table, quasi_identifiers=["age"])


def test_load_takes_no_keyword_of_the_audit() -> None:
    with pytest.raises(TypeError, match="policy"):
        anonaudit.load(CLINIC, quasi_identifiers=["zip"], policy=Policy(k=2))


# -- (d) from_keywords: distance, hierarchies, orders and ground distances ------------------

NAMES = ("equal", "ordered", "numeric", "hierarchical", "matrix")
SENSITIVE = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), unique=True, max_size=4)


@st.composite
def flat_distances(draw: st.DrawFn) -> tuple[list[str], dict[str, Any]]:
    """SAs, and the flat ``distance``, ``hierarchies``, ``orders`` and
    ``ground_distances`` of 0.1 for some of them (and a QI hierarchy)."""
    sensitive = draw(SENSITIVE)
    some = st.lists(st.sampled_from(sensitive), unique=True) if sensitive else st.just([])
    flat: dict[str, Any] = {}
    which = draw(st.sampled_from(["none", "one", "per SA"]))
    if which == "one":
        flat["distance"] = draw(st.sampled_from(NAMES))
    elif which == "per SA":
        flat["distance"] = {sa: draw(st.sampled_from(NAMES)) for sa in draw(some)}
    hierarchies: dict[str, Any] = {sa: f"h_{sa}.csv" for sa in draw(some)}
    if draw(st.booleans()):
        hierarchies["q"] = "prefix"
    if hierarchies:
        flat["hierarchies"] = hierarchies
    if orders := {sa: [f"{sa}1", f"{sa}2", f"{sa}3"] for sa in draw(some)}:
        flat["orders"] = orders
    if grounds := {sa: f"m_{sa}.csv" for sa in draw(some)}:
        flat["ground_distances"] = grounds
    return sensitive, flat


def documented(sa: str, flat: Mapping[str, Any]) -> Distance | None:
    """The distance of ``sa`` as ``from_keywords`` documents it; ``None``: refused."""
    hierarchies = flat.get("hierarchies", {})
    grounds = flat.get("ground_distances", {})
    distance = flat.get("distance")
    default = "hierarchical" if sa in hierarchies else "matrix" if sa in grounds else "equal"
    name = distance if isinstance(distance, str) else (distance or {}).get(sa, default)
    if name == "hierarchical":
        return HierarchicalDistance(hierarchies[sa]) if sa in hierarchies else None
    if name == "matrix":
        return MatrixDistance(grounds[sa]) if sa in grounds else None
    if name == "ordered":
        return OrderedDistance(flat.get("orders", {}).get(sa))
    return NumericDistance() if name == "numeric" else EqualDistance()


@settings(max_examples=200, deadline=None)
@given(flat_distances())
def test_from_keywords_maps_the_flat_distances_as_documented(
    drawn: tuple[list[str], dict[str, Any]],
) -> None:
    sensitive, flat = drawn
    expected = {sa: documented(sa, flat) for sa in sensitive}
    if None in expected.values():  # a hierarchical or matrix distance without its file
        with pytest.raises(ParameterError, match=r"(hierarchical|matrix) distance for '\w'"):
            from_keywords(flat, quasi_identifiers=["q"], sensitive=sensitive)
        return
    options = from_keywords(flat, quasi_identifiers=["q"], sensitive=sensitive).audit
    assert options.distances == expected
    for sa in sensitive:
        assert options.distance_for(sa).name == expected[sa].name  # type: ignore[union-attr]
    # QI hierarchies stay hierarchies (for generalize and advise); an SA's is its distance
    hierarchies = flat.get("hierarchies", {})
    assert options.hierarchies == {c: h for c, h in hierarchies.items() if c == "q"}


def test_from_keywords_maps_the_rest_onto_each_object() -> None:
    population = object()
    split = from_keywords(
        {
            "quasi_identifiers": ["q"],
            "sensitive": ["s"],
            "weights": "w",
            "sep": ";",
            "filter": "day=1",
            "engine": "dask",
            "scheduler": "tcp://host:8786",
            "policy": Policy(k=2),
            "nulls": "drop",
            "risk_threshold": 0.1,
            "population_size": 500,
            "population_model": "zayatz",
            "population_table": population,
            "k_map": 3,
            "generalize": {"q": 1},
            "advise_suppression": False,
            "qi_analysis": 2,
            "suda": True,
            "advise": True,
            "suppression_limit": 0.05,
            "max_results": None,
            "max_work": None,
        },
        quasi_identifiers=["q"],
        sensitive=["s"],
    )
    assert Roles(**split.roles) == Roles(["q"], ["s"], weights="w")
    assert split.reading == ReadOptions(sep=";", filter=["day=1"])
    assert split.engine == EngineOptions(engine="dask", scheduler="tcp://host:8786")
    assert split.audit == AuditOptions(
        policy=Policy(k=2),
        nulls="drop",
        risk_threshold=0.1,
        distances={"s": EqualDistance()},
        generalize={"q": 1},
        population=PopulationOptions(size=500, model="zayatz", table=population, k_map=3),
        analyses=Analyses(
            suppression=False,
            qi_analysis=2,
            suda=True,
            advise=True,
            suppression_limit=0.05,
            max_results=None,
            max_work=None,
        ),
    )


def test_from_keywords_refuses_what_no_sa_or_name_means() -> None:
    with pytest.raises(ParameterError, match="'x', which is not a sensitive column"):
        from_keywords({"distance": {"x": "ordered"}}, quasi_identifiers=["q"], sensitive=["s"])
    with pytest.raises(ParameterError, match="'x', which is not a sensitive column"):
        from_keywords(
            {"ground_distances": {"x": "m.csv"}}, quasi_identifiers=["q"], sensitive=["s"]
        )
    with pytest.raises(OptionError, match="'manhattan'"):
        from_keywords({"distance": "manhattan"}, quasi_identifiers=["q"], sensitive=["s"])
    with pytest.raises(TypeError, match="colour"):
        from_keywords({"colour": "red"}, quasi_identifiers=["q"], sensitive=["s"])


# -- (e) a policy file maps onto the same objects ------------------------------------------


def test_a_policy_file_maps_onto_the_objects_of_the_equivalent_call(tmp_path: Path) -> None:
    ground = _ground(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f"""
inputs = ["{CLINIC.as_posix()}"]
quasi_identifiers = ["zip", "age"]
sensitive = ["diagnosis", "income", "sex"]
sep = ","
na_values = ["", "n/a"]
nulls = "drop"
risk_threshold = 0.25
sampling_fraction = 0.1
population_model = "snb"
suda = 2
qi_analysis = true
advise = true
suppression_limit = 0.05
max_results = 3

[thresholds]
k = 2
l = 2
t = 0.3

[t_distance]
income = "ordered"

[order]
income = {INCOMES!r}

[hierarchy]
zip = "prefix"
diagnosis = "{DIAGNOSES.as_posix()}"

[ground_distance]
sex = "{ground.name}"

[generalize]
zip = 1
""".replace("'", '"'),
        encoding="utf-8",
    )
    config = read_config(policy)
    roles = Roles(["zip", "age"], ["diagnosis", "income", "sex"])
    reading = ReadOptions(sep=",", na_values=["", "n/a"])
    options = AuditOptions(
        policy=Policy(k=2, l=2, t=0.3),
        nulls="drop",
        risk_threshold=0.25,
        distances={
            "diagnosis": HierarchicalDistance(str(DIAGNOSES)),
            "income": OrderedDistance(INCOMES),
            "sex": MatrixDistance(str(ground)),  # relative to the policy file
        },
        hierarchies={"zip": "prefix"},
        generalize={"zip": 1},
        population=PopulationOptions(sampling_fraction=0.1, model="snb"),
        analyses=Analyses(
            suda=2, qi_analysis=True, advise=True, suppression_limit=0.05, max_results=3
        ),
    )
    assert config.roles() == roles
    assert config.reading() == reading
    assert config.options() == options
    assert config.engine_options() == EngineOptions()
    by_file = anonaudit.audit(
        config.inputs, config.roles(), config.options(), reading=config.reading()
    )
    by_call = anonaudit.audit([str(CLINIC)], roles, options, reading=reading)
    assert by_file.advice is not None and by_file.suda is not None
    assert comparable(by_file) == comparable(by_call)


def test_a_policy_file_without_settings_maps_onto_the_defaults(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('quasi_identifiers = ["zip"]\nsensitive = ["dx"]\n', encoding="utf-8")
    config = read_config(policy)
    assert config.roles() == Roles(["zip"], ["dx"])
    assert config.reading() == ReadOptions()
    assert config.engine_options() == EngineOptions()
    assert config.options() == AuditOptions(distances={"dx": EqualDistance()})
