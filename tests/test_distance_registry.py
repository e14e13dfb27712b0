"""The ground-distance registry: every distance declared in its module, and a new one
used everywhere by name.

A ground distance of t-closeness is a module of :mod:`anonaudit.distances` with a
``DISTANCE``; the option objects, the t-closeness check, the command line, the policy
files, the reports, the JSON Schema and the docs find it there. The last tests add a
distance the package does not have (every two values at 1/2) and check that an audit
measures with it by name, in Python and on the command line, with no other change.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd
import pytest

import anonaudit
import anonaudit.distances
from anonaudit import AuditOptions, EqualDistance, Roles, audit
from anonaudit.cli import main
from anonaudit.cli.app import _parser
from anonaudit.cli.config import _DATASET
from anonaudit.distances import CLASSES, DEFAULT, DISTANCES, Distance, named, registered
from anonaudit.errors import OptionError
from anonaudit.measures import t_closeness as checks
from anonaudit.report import explain
from anonaudit.report.schema import shipped_schema
from anonaudit.report.text import summary
from anonaudit.report.views import describe_call
from anonaudit.settings import names as vocabulary
from anonaudit.settings.options import KEYWORDS, from_keywords

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from anonaudit.classtable import SensitiveCounts

RECORDS = pd.DataFrame(
    {
        "zip": ["02139", "02139", "02139", "02138", "02138", "02141"],
        "disease": ["flu", "cold", "flu", "flu", "flu", "cancer"],
    }
)
ROLES = Roles(["zip"], ["disease"])


def _modules() -> list[str]:
    return [
        m.name
        for m in pkgutil.iter_modules(anonaudit.distances.__path__)
        if not m.name.startswith("_") and m.name != "base"
    ]


def test_every_module_is_a_distance_of_its_name() -> None:
    assert sorted(DISTANCES) == sorted(_modules())
    assert DISTANCES == ("equal", "ordered", "numeric", "hierarchical", "matrix")
    assert len(set(DISTANCES)) == len(DISTANCES)
    for name in DISTANCES:
        declared = importlib.import_module(f"anonaudit.distances.{name}").DISTANCE
        assert issubclass(declared, Distance) and declared.name == name
        assert registered()[name] is declared is named(name)
        assert declared.definition.strip() and declared.__doc__
    assert list(registered()) == list(DISTANCES)
    assert named(DEFAULT)() == EqualDistance() == AuditOptions().distance_for("any")


def test_the_old_names_are_the_registry() -> None:
    assert checks.DISTANCES == DISTANCES
    assert dict(anonaudit.settings.options.DISTANCE_CLASSES) == dict(CLASSES)
    for kind in registered().values():
        assert getattr(anonaudit, kind.__name__) is kind
        assert getattr(anonaudit.settings.options, kind.__name__) is kind
    with pytest.raises(AttributeError):
        anonaudit.settings.options.ManhattanDistance  # noqa: B018


def test_the_schema_the_command_line_and_the_docs_list_the_registry() -> None:
    schema = shipped_schema()["$defs"]["t_closeness"]["properties"]["distance"]
    assert schema == {"enum": list(DISTANCES)}
    audit_parser = _subparser("audit")
    (t_distance,) = [a for a in audit_parser._actions if "--t-distance" in a.option_strings]
    assert t_distance.help == f"EMD ground distance: {', '.join(DISTANCES)} (default equal)"
    for kind in registered().values():
        assert kind.definition in explain.T_CLOSENESS.definition
    left_out = [k.name for k in registered().values() if k.nulls_left_out]
    assert ", ".join(left_out[:-1]) + " and " + left_out[-1] in explain.T_CLOSENESS.definition


def test_every_input_of_a_distance_is_an_option_a_policy_key_and_a_keyword() -> None:
    keywords = {each.keyword for each in vocabulary.DISTANCE_INPUTS}
    for each in vocabulary.DISTANCE_INPUTS:
        for command in ("audit", "advise"):
            flags = [f for a in _subparser(command)._actions for f in a.option_strings]
            assert each.flag in flags, (command, each.flag)
        assert each.key in _DATASET and each.keyword in KEYWORDS
        assert each.implies is None or each.implies in DISTANCES
    for kind in registered().values():  # what makes a distance the default is an input
        assert kind.implied_by is None or kind.implied_by in keywords | {"hierarchies"}


def test_listing_the_distances_imports_no_distance() -> None:
    code = (
        "import sys, anonaudit.cli.app; anonaudit.cli.app._parser(); "
        "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'anonaudit.distances.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['anonaudit.distances.base']"


def _subparser(command: str) -> Any:
    (commands,) = [a for a in _parser()._actions if a.dest == "command"]
    return commands.choices[command]


# -- a distance the package does not have -------------------------------------------------


@dataclass(frozen=True)
class HalvedDistance(Distance):
    """Every two different values at distance 1/2, as a new module would declare it: the
    equal distance's EMD (Li, Li & Venkatasubramanian 2007), halved."""

    name: ClassVar[str] = "halved"
    definition: ClassVar[str] = "Halved distance: ¼ Σ |p_i − q_i|."
    nulls_left_out: ClassVar[bool] = False

    def emd(self, counts: SensitiveCounts) -> tuple[NDArray[Any], int]:
        per_class, excluded = EqualDistance().emd(counts)
        return per_class / 2, excluded


@pytest.fixture
def with_halved(monkeypatch: pytest.MonkeyPatch) -> type[HalvedDistance]:
    monkeypatch.setattr(anonaudit.distances, "CLASSES", {**CLASSES, "halved": HalvedDistance})
    return HalvedDistance


def test_a_new_distance_is_measured_by_name_in_python(with_halved: type[Distance]) -> None:
    equal = audit(RECORDS, ROLES).t_closeness["disease"]
    report = audit(RECORDS, ROLES, AuditOptions(distances={"disease": with_halved()}))
    halved = report.t_closeness["disease"]
    assert (halved.distance, halved.t) == ("halved", pytest.approx(equal.t / 2))
    assert report.to_dict()["t_closeness"]["disease"]["distance"] == "halved"
    assert "  t-closeness (halved): t = " in summary(report)
    assert "distances={'disease': anonaudit.HalvedDistance()}" in describe_call(report)
    flat = from_keywords({"distance": "halved"}, quasi_identifiers=["zip"], sensitive=["disease"])
    assert flat.audit.distance_for("disease") == with_halved()
    assert checks.t_closeness(report.table, "disease", distance="halved").t == halved.t
    assert getattr(anonaudit.settings.options, "HalvedDistance") is with_halved  # noqa: B009


def test_a_new_distance_is_measured_by_name_on_the_command_line(
    with_halved: type[Distance], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.csv"
    RECORDS.to_csv(data, index=False)
    roles = ["--qi", "zip", "--sensitive", "disease"]
    assert main(["audit", str(data), *roles, "--t-distance", "halved", "--json", "-"]) == 0
    entry = json.loads(capsys.readouterr().out)["t_closeness"]["disease"]
    equal = audit(RECORDS, ROLES).t_closeness["disease"].t
    assert (entry["distance"], entry["t"]) == ("halved", pytest.approx(equal / 2))
    assert main(["audit", str(data), *roles, "--t-distance", "manhattan"]) == 2
    assert capsys.readouterr().err == (
        "anonaudit: error: unknown --t-distance 'manhattan'; choose one of equal, ordered, "
        "numeric, hierarchical, matrix, halved\n"
    )


def test_a_distance_needing_an_input_says_which(with_halved: type[Distance]) -> None:
    with pytest.raises(OptionError, match=r"choose one of .*, halved$"):
        named("manhattan")
    needing = [k for k in registered().values() if fields(k) and k.implied_by is not None]
    for kind in needing:  # hierarchical and matrix: their file, named on the command line
        with pytest.raises(anonaudit.ParameterError, match=f"{kind.name} distance for 'd'"):
            kind.from_inputs("d", {})
