"""The JSON Schema of the reports (anonaudit/schema/report.schema.json) holds for real reports.

The schema lists every key (``additionalProperties: false``) except under ``dp``, so a key
added to a report without its description here fails these tests.
"""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs jsonschema")

from anonaudit.cli import main  # noqa: E402
from anonaudit.cli.config import read_config  # noqa: E402
from anonaudit.errors import InputError, OptionError  # noqa: E402
from anonaudit.measures import ANALYSES, MEASURES  # noqa: E402
from anonaudit.report.json import SCHEMA_VERSION  # noqa: E402
from anonaudit.report.schema import dumps, policy_schema, report_schema  # noqa: E402
from anonaudit.report.sections import analysis_section, section  # noqa: E402
from anonaudit.settings.catalog import OPTIONS  # noqa: E402
from anonaudit.settings.names import DISTANCE_INPUTS  # noqa: E402
from anonaudit.settings.policy import threshold_fields  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "sample_data" / "clinic.csv"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    text = (resources.files("anonaudit") / "schema" / "report.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _errors(schema: dict[str, Any], document: object, kind: str | None = None) -> list[str]:
    """Validation errors of ``document`` against the schema, or against one of its kinds."""
    target = schema if kind is None else {"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]}
    validator = jsonschema.Draft202012Validator(target)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
        for e in validator.iter_errors(document)
    ]


def _valid(schema: dict[str, Any], document: object, kind: str) -> None:
    """``document`` is of ``kind`` and valid against the whole schema (exactly one kind)."""
    assert _errors(schema, document, kind) == []
    assert _errors(schema, document) == []


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def test_the_shipped_schema_is_written_from_the_code(schema: dict[str, Any]) -> None:
    """Each measure's entry (with the keys the analyses extending it add), each
    analysis's keys and the policy's thresholds are declared in the code; the shipped
    file holds what they declare (python -m anonaudit.report.schema rewrites it)."""
    written = report_schema()
    assert schema == written, "run: python -m anonaudit.report.schema"
    assert dumps(written) == (
        resources.files("anonaudit") / "schema" / "report.schema.json"
    ).read_text("utf-8")
    for measure in MEASURES:
        added = {
            key: value
            for its in map(analysis_section, ANALYSES)
            if its.extends == measure.key
            for key, value in its.properties.items()
        }
        entry = schema["$defs"][measure.key]
        declared = section(measure).schema
        assert entry == {**declared, "properties": {**declared["properties"], **added}}
        assert measure.key in schema["$defs"]["audit"]["required"]
    for its in map(analysis_section, ANALYSES):
        extended = schema["$defs"][its.extends or "audit"]
        for key, value in its.properties.items():
            assert extended["properties"][key] == value
            assert key not in extended["required"]
    assert list(schema["$defs"]["policy"]["properties"]) == [f.name for f in threshold_fields()]


def test_the_schema_is_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_describes_the_current_schema_version(schema: dict[str, Any]) -> None:
    for kind in ("audit", "advise", "summary", "dp_report"):
        assert schema["$defs"][kind]["properties"]["schema_version"]["const"] == SCHEMA_VERSION


def test_the_schema_ships_with_the_package() -> None:
    assert (ROOT / "anonaudit" / "schema" / "report.schema.json").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schema/*.json"' in pyproject


@pytest.mark.parametrize("path", sorted((ROOT / "reports").glob("*.json")), ids=lambda p: p.name)
def test_committed_reports_validate(schema: dict[str, Any], path: Path) -> None:
    _valid(schema, _load(path), "audit")


@pytest.fixture(scope="module")
def full_audit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An audit with every optional part: population, individual risk, QI analysis, SUDA,
    a generalization, suppression, the advice and the DP companion."""
    out = tmp_path_factory.mktemp("schema") / "full.json"
    args = [
        "audit", str(CLINIC), "--qi", "zip,age,sex", "--sensitive", "diagnosis,income",
        "-k", "2", "-l", "2", "-t", "0.5", "--alpha", "0.9", "--max-risk", "0.5",
        "--t-distance", "income=numeric", "--population-size", "10000", "--qi-analysis",
        "--suda", "--hierarchy", "zip=prefix", "--generalize", "zip=1", "--advise",
        "--suppression-limit", "0.1", "--dp-epsilon", "1", "--dp-delta", "1e-6",
        "--json", str(out), "--exit-zero", "--quiet",
    ]  # fmt: skip
    assert main(args) == 0
    return _load(out)


def test_an_audit_with_every_part_validates(
    schema: dict[str, Any], full_audit: dict[str, Any]
) -> None:
    for key in ("dp", "search", "advice", "suda", "qi_analysis", "generalization"):
        assert full_audit.get(key) is not None, key
    assert {"population", "journalist", "marketer", "individual"} <= full_audit["risk"].keys()
    _valid(schema, full_audit, "audit")


def test_wildcard_nulls_and_an_empty_sensitive_list_validate(
    schema: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "wild.json"
    args = ["audit", str(CLINIC), "--qi", "zip,age", "--nulls", "wildcard", "--json", str(out)]
    assert main([*args, "--sampling-fraction", "0.1", "--quiet"]) == 0
    report = _load(out)
    assert report["nulls"]["policy"] == "wildcard"
    assert report["sensitive"] == []
    _valid(schema, report, "audit")


def test_an_advise_report_validates(schema: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "advice.json"
    args = ["advise", str(CLINIC), "--qi", "zip,age,sex", "--sensitive", "diagnosis"]
    args += ["-k", "2", "--hierarchy", "zip=prefix", "--suppression-limit", "0.1"]
    args += ["--json", str(out), "--quiet"]
    assert main(args) == 0
    report = _load(out)
    assert report["advice"]
    _valid(schema, report, "advise")


def test_a_datasets_summary_and_its_reports_validate(
    schema: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "policy.toml").write_text(
        f"""
quasi_identifiers = ["zip", "age", "sex"]
sensitive = ["diagnosis"]
json = "summary.json"
[thresholds]
k = 2

[[datasets]]
name = "clinic"
inputs = [{json.dumps(str(CLINIC))}]

[[datasets]]
name = "missing"
inputs = ["no-such-file.csv"]
""",
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(tmp_path / "policy.toml"), "--quiet"]) == 2
    summary = _load(tmp_path / "summary.json")
    assert [d["name"] for d in summary["datasets"]] == ["clinic", "missing"]
    assert summary["datasets"][1]["error"]
    _valid(schema, summary, "summary")
    _valid(schema, _load(tmp_path / "clinic.json"), "audit")


def test_a_dp_report_validates(schema: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "dp.json"
    args = ["dp", str(CLINIC), "--qi", "sex", "--sensitive", "diagnosis", "--epsilon", "1"]
    args += ["--public-domain", "sex=F,M", "--delta", "1e-6", "--json", str(out), "--quiet"]
    assert main(args) == 0
    _valid(schema, _load(out), "dp_report")


def test_an_undocumented_key_fails(schema: dict[str, Any], full_audit: dict[str, Any]) -> None:
    assert _errors(schema, full_audit | {"surprise": 1}, "audit")
    nested = json.loads(json.dumps(full_audit))
    nested["k_anonymity"]["surprise"] = 1
    assert _errors(schema, nested, "audit")
    missing = {key: value for key, value in full_audit.items() if key != "risk"}
    assert _errors(schema, missing)


def test_infinity_is_a_string(schema: dict[str, Any], full_audit: dict[str, Any]) -> None:
    changed = json.loads(json.dumps(full_audit))
    changed["risk"]["highest"] = "inf"
    assert _errors(schema, changed, "audit") == []
    changed["risk"]["highest"] = "Infinity"
    assert _errors(schema, changed, "audit")


def test_the_shipped_policy_schema_is_written_from_the_catalog() -> None:
    written = policy_schema()
    shipped = (resources.files("anonaudit") / "schema" / "policy.schema.json").read_text("utf-8")
    assert dumps(written) == shipped, "run: python -m anonaudit.report.schema"
    jsonschema.Draft202012Validator.check_schema(written)
    assert set(written["properties"]) == {o.key for o in OPTIONS} | {
        each.key for each in DISTANCE_INPUTS
    } | {"datasets"}


@pytest.mark.parametrize("name", ["adult_policy.toml", "adult_policy_impossible.toml"])
def test_the_sample_policy_files_hold_to_the_policy_schema(name: str) -> None:
    document = tomllib.loads((ROOT / "sample_data" / name).read_text(encoding="utf-8"))
    jsonschema.validate(document, policy_schema())


def test_the_policy_schema_refuses_what_the_settings_refuse(tmp_path: Path) -> None:
    for text, pattern in (
        ('sepp = ";"\n', "sepp"),
        ('nulls = "never"\n', "never"),
        ("[thresholds]\nk = 2.5\n", "2.5"),
        ("[[datasets]]\nengine = 3\n", "3"),
    ):
        path = tmp_path / "p.toml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises((InputError, OptionError)):  # read, or made into options
            config = read_config(path)
            config.options(), config.engine_options()
            for dataset in config.datasets:
                dataset.options(), dataset.engine_options()
        with pytest.raises(jsonschema.ValidationError, match=pattern):
            jsonschema.validate(tomllib.loads(text), policy_schema())
