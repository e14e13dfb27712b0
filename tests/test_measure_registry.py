"""The measure registry: every measure declared once, and a new one shown everywhere.

A measure is a module of :mod:`anonaudit.measures` with a ``MEASURE``, an optional
analysis one with an ``ANALYSIS``; the audit, the verdicts, the suppression advice and
the three reports loop over the registries. The last tests add a measure the package
does not have (the largest class's share of the records), first bare (one module of
maths, shown by the generic section) and then with its own section, and an optional
analysis (the records in classes of exactly k, when the policy sets k), and check that
the audit computes them and every report shows them, with no other change.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from numpy.typing import NDArray

import anonaudit.measures
from anonaudit import AuditOptions, Policy, Roles, audit
from anonaudit.classtable import ClassTable
from anonaudit.measures import (
    ANALYSES,
    MEASURES,
    Analysis,
    Context,
    Measure,
    Setting,
    in_order,
)
from anonaudit.report import explain, sections
from anonaudit.report.criteria import criteria
from anonaudit.report.kit import (
    Audited,
    Fact,
    Layout,
    MeasureView,
    Options,
    VerdictRow,
    _share,
)
from anonaudit.report.schema import report_schema, shipped_schema
from anonaudit.report.sections import (
    AnalysisSection,
    MeasureSection,
    analysis_section,
    explained,
    section,
)
from anonaudit.report.text import summary
from anonaudit.settings.names import Judged, Verdict
from anonaudit.settings.policy import Policy as PolicyType

RECORDS = pd.DataFrame(
    {
        "zip": ["02139", "02139", "02139", "02138", "02138", "02141"],
        "age": ["30", "30", "30", "40", "40", "50"],
        "disease": ["flu", "cold", "flu", "flu", "flu", "cancer"],
    }
)


def test_every_measure_module_is_registered_once() -> None:
    modules = [
        importlib.import_module(f"anonaudit.measures.{m.name}")
        for m in pkgutil.iter_modules(anonaudit.measures.__path__)
    ]
    declared = [m.MEASURE for m in modules if hasattr(m, "MEASURE")]
    assert sorted(m.key for m in declared) == sorted(m.key for m in MEASURES)
    assert [m.key for m in MEASURES] == [
        "k_anonymity",
        "l_diversity",
        "t_closeness",
        "disclosure",
        "risk",
    ]
    for attribute in ("key", "position", "judged"):
        values = [getattr(m, attribute) for m in MEASURES]
        assert len(set(values)) == len(values), attribute
    anchors = [section(m).anchor for m in MEASURES]
    assert len(set(anchors)) == len(anchors)


def test_every_analysis_module_is_registered_once() -> None:
    modules = [
        importlib.import_module(f"anonaudit.measures.{m.name}")
        for m in pkgutil.iter_modules(anonaudit.measures.__path__)
    ]
    declared = [m.ANALYSIS for m in modules if hasattr(m, "ANALYSIS")]
    assert sorted(a.key for a in declared) == sorted(a.key for a in ANALYSES)
    assert [a.key for a in ANALYSES] == [
        "population",
        "individual",
        "linkage",
        "qi_analysis",
        "suda",
    ]
    for attribute in ("key", "position"):
        values = [getattr(a, attribute) for a in ANALYSES]
        assert len(set(values)) == len(values), attribute
    measures = {m.key for m in MEASURES}
    extended = [analysis_section(a).extends for a in ANALYSES]
    assert all(key is None or key in measures for key in extended)


def test_each_measure_names_real_thresholds_and_explains_itself() -> None:
    policy_fields = {f.name for f in dataclasses.fields(PolicyType)}
    claimed = [name for m in MEASURES for name in m.thresholds]
    assert sorted(claimed) == sorted(policy_fields)  # every threshold judged by one measure
    for m in MEASURES:
        shown = section(m)
        assert shown.key == m.key and shown.about in explained() and shown.usage.strip()
        assert f"JSON `{m.key}" in shown.usage


def test_in_order_groups_the_measures_of_each_sensitive_attribute() -> None:
    order = [(m.key, sa) for m, sa in in_order(["a", "b"])]
    assert order == [
        ("k_anonymity", None),
        ("l_diversity", "a"),
        ("t_closeness", "a"),
        ("disclosure", "a"),
        ("l_diversity", "b"),
        ("t_closeness", "b"),
        ("disclosure", "b"),
        ("risk", None),
    ]
    assert [(m.key, sa) for m, sa in in_order([])] == [("k_anonymity", None), ("risk", None)]


def test_verdicts_and_masks_come_from_the_measures() -> None:
    report = audit(
        RECORDS, Roles(["zip", "age"], ["disease"]), AuditOptions(policy=Policy(k=2, l=2))
    )
    assert [(v.judged, v.passed, v.sensitive) for v in report.verdicts()] == [
        (Judged.DIRECT_IDENTIFIERS, True, None),  # the inputs were searched: none undeclared
        (Judged.K_ANONYMITY, False, None),
        (Judged.L_DIVERSITY, False, "disease"),
    ]
    k = anonaudit.measures.k_anonymity.MEASURE
    mask = k.failing(report.k_anonymity, report.table)
    assert mask is not None
    assert int(report.table.classes.sizes[mask].sum()) == 1  # the one record of 02141
    advice = report.suppression
    assert advice is not None and advice.passed
    assert [m.measure for m in advice.measures] == ["k-anonymity", "l-diversity of disease"]


# -- a measure the package does not have --------------------------------------------------

LARGEST = explain.Measure(
    name="largest class share",
    anchor="about-largest-class",
    slug="largest-class-share",
    summary="The share of the records in the largest class [@sweeney].",
    definition="max over classes E of |E| / n.",
    citations=(explain.SWEENEY,),
    protects="Nothing by itself: it says how unevenly the records are spread.",
    misses="every attack on small classes.",
)


@dataclass(frozen=True)
class LargestResult:
    """The share of the records in the largest class."""

    share: float
    passed: bool | None = None


class LargestClass(Measure[LargestResult]):
    """A measure without parameters, declared as a new module of anonaudit.measures
    would declare it: its maths and nothing on how it is shown."""

    key = "largest_class"
    judged = Judged.K_ANONYMITY
    position = 60

    def compute(self, context: Context, sensitive: str | None) -> LargestResult:
        sizes = context.table.classes.sizes
        return LargestResult(float(sizes.max()) / float(sizes.sum()))

    def passed(self, result: LargestResult) -> bool | None:
        return result.passed

    def failing(self, result: LargestResult, table: ClassTable) -> NDArray[Any] | None:
        return None


class LargestClassSection(MeasureSection[LargestResult]):
    """Its own section, as a module of anonaudit.report.sections would declare it."""

    key = "largest_class"
    anchor = "largest-class"
    about = LARGEST
    usage = "JSON `largest_class`."
    schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {"share": {"$ref": "#/$defs/real"}},
        "required": ["share"],
        "additionalProperties": False,
    }

    def title(self, sensitive: str | None) -> str:
        return "Largest class"

    def summary(self, result: LargestResult) -> list[str]:
        return [f"largest class: {result.share:.4g} of the records"]

    def to_json(self, result: LargestResult, layout: Layout) -> dict[str, Any]:
        return {"share": result.share}

    def verdict_rows(
        self, result: LargestResult, audited: Audited, anchor: str
    ) -> list[VerdictRow]:
        return []

    def view(
        self, result: LargestResult, audited: Audited, options: Options, anchor: str
    ) -> MeasureView:
        return MeasureView(
            lead="How unevenly the records are spread over the classes.",
            about=LARGEST.anchor,
            facts=(Fact("largest class", _share(result.share)),),
            charts=(),
            outcome="No threshold.",
            listing=None,
        )


def _add_section(monkeypatch: pytest.MonkeyPatch, key: str, shown: object) -> None:
    """``shown`` as the SECTION of a module anonaudit.report.sections.<key>, as adding
    that file would make it."""
    module = types.ModuleType(f"anonaudit.report.sections.{key}")
    module.SECTION = shown  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    sections._declared.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_sections() -> Iterator[None]:
    """Sections are looked up once per key: forget those a test added."""
    sections._declared.cache_clear()
    yield
    sections._declared.cache_clear()


@pytest.fixture
def with_largest(monkeypatch: pytest.MonkeyPatch) -> LargestClass:
    measure = LargestClass()
    monkeypatch.setattr(anonaudit.measures, "MEASURES", (*MEASURES, measure))
    return measure


@pytest.fixture
def with_largest_section(
    monkeypatch: pytest.MonkeyPatch, with_largest: LargestClass
) -> LargestClass:
    _add_section(monkeypatch, "largest_class", LargestClassSection())
    return with_largest


def test_a_bare_measure_is_computed_and_shown_everywhere(with_largest: LargestClass) -> None:
    """One module of maths is a measure: the generic section prints its fields."""
    jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs it")
    report = audit(RECORDS, Roles(["zip", "age"], ["disease"]))
    assert report.result(with_largest) == LargestResult(0.5)
    lines = summary(report).splitlines()
    line = lines.index("largest class: share 0.5, passed none")
    assert lines[line - 1].startswith("risk (prosecutor)")
    document = report.to_dict()
    assert document["largest_class"] == {"share": 0.5, "passed": None}
    assert list(document).index("largest_class") == list(document).index("risk") + 1
    page = report.to_html()
    assert '<section id="largest-class"' in page and "largest class</h2>" in page
    assert "<dd>0.5</dd>" in page.replace("\n", "") or ">0.5<" in page
    jsonschema.validate(document, report_schema())
    # it judges nothing: no verdict but the search for direct identifiers, which passes
    assert report.verdicts() == [Verdict(Judged.DIRECT_IDENTIFIERS, True)]
    assert report.passed is None


def test_a_bare_measure_that_judges_gets_a_verdict_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Judging(LargestClass):
        def compute(self, context: Context, sensitive: str | None) -> LargestResult:
            return LargestResult(super().compute(context, sensitive).share, passed=False)

    monkeypatch.setattr(anonaudit.measures, "MEASURES", (*MEASURES, Judging()))
    report = audit(RECORDS, Roles(["zip", "age"], ["disease"]))
    assert report.passed is False
    assert "largest class: share 0.5, passed no  [FAIL]" in summary(report).splitlines()
    page = report.to_html()
    assert "largest class: fails the policy." in page


def test_a_measure_with_its_own_section_is_shown_by_it(
    with_largest_section: LargestClass,
) -> None:
    report = audit(RECORDS, Roles(["zip", "age"], ["disease"]))
    lines = summary(report).splitlines()
    line = lines.index("largest class: 0.5 of the records")
    assert lines[line - 1].startswith("risk (prosecutor)")
    document = report.to_dict()
    assert document["largest_class"] == {"share": 0.5}
    page = report.to_html()
    assert '<section id="largest-class"' in page and "Largest class</h2>" in page
    assert "50%" in page and '<h3 id="about-largest-class">' in page


def test_a_new_measure_is_described_by_the_schema_written_from_it(
    with_largest_section: LargestClass,
) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs it")
    document = audit(RECORDS, Roles(["zip", "age"], ["disease"])).to_dict()
    written = report_schema()
    assert written["$defs"]["largest_class"] == LargestClassSection.schema
    assert "largest_class" in written["$defs"]["audit"]["required"]
    jsonschema.validate(document, written)
    with pytest.raises(jsonschema.ValidationError, match="largest_class"):
        jsonschema.validate(document, shipped_schema())  # until the file is rewritten
    document["largest_class"] = {"share": "half"}
    with pytest.raises(jsonschema.ValidationError, match="half"):
        jsonschema.validate(document, written)


def test_a_new_measure_gets_its_page_in_the_docs(with_largest_section: LargestClass) -> None:
    assert LARGEST in explained()
    assert np.isclose(with_largest_section.compute(_context(), None).share, 0.5)


def _context() -> Context:
    table = ClassTable.from_frame(RECORDS.assign(count=1), quasi_identifiers=["zip", "age"])
    return Context(table, Policy(), 0.2, {})


# -- an optional analysis the package does not have ---------------------------------------


@dataclass(frozen=True)
class AtKResult:
    """The records in classes of exactly ``k`` records."""

    k: int
    records: int


class AtK(Analysis[AtKResult]):
    """An analysis asked by an option (the policy's k), declared as a new module would."""

    key = "at_k"
    position = 60

    def asked(self, setting: Setting) -> bool:
        return setting.options.policy.k is not None

    def compute(self, setting: Setting) -> AtKResult:
        k, sizes = setting.options.policy.k, setting.table.classes.sizes
        assert k is not None
        return AtKResult(k, int(sizes[sizes == k].sum()))


class AtKSection(AnalysisSection[AtKResult]):
    """Its section."""

    key = "at_k"
    template = "sections/measure.html.j2"
    anchor = "at-k"
    title = "Records at k"
    properties: ClassVar[Mapping[str, Any]] = {
        "at_k": {
            "type": "object",
            "properties": {"k": {"type": "integer"}, "records": {"type": "integer"}},
            "required": ["k", "records"],
            "additionalProperties": False,
        }
    }

    def summary(self, result: AtKResult, audited: Audited) -> list[str]:
        return [f"at k: {result.records} records in classes of exactly {result.k}"]

    def to_json(self, result: AtKResult, audited: Audited, layout: Layout) -> dict[str, Any]:
        return {"at_k": {"k": result.k, "records": result.records}}

    def view(self, result: AtKResult, audited: Audited, options: Options) -> MeasureView:
        return MeasureView(
            lead="The records a suppression of one more record per class would expose.",
            about="about",
            facts=(Fact("records in classes of exactly k", str(result.records)),),
            charts=(),
            outcome="No threshold.",
            listing=None,
        )


@pytest.fixture
def with_at_k(monkeypatch: pytest.MonkeyPatch) -> AtK:
    analysis = AtK()
    monkeypatch.setattr(anonaudit.measures, "ANALYSES", (*ANALYSES, analysis))
    _add_section(monkeypatch, "at_k", AtKSection())
    return analysis


def test_a_new_analysis_is_computed_and_shown_when_asked(with_at_k: AtK) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs it")
    roles = Roles(["zip", "age"], ["disease"])
    report = audit(RECORDS, roles, AuditOptions(policy=Policy(k=2)))
    assert report.analyses["at_k"] == AtKResult(2, 2)
    assert "at k: 2 records in classes of exactly 2" in summary(report).splitlines()
    document = report.to_dict()
    assert document["at_k"] == {"k": 2, "records": 2}
    written = report_schema()
    assert written["$defs"]["audit"]["properties"]["at_k"] == AtKSection.properties["at_k"]
    jsonschema.validate(document, written)
    with pytest.raises(jsonschema.ValidationError, match="at_k"):
        jsonschema.validate(document, shipped_schema())  # until the file is rewritten
    page = report.to_html()
    assert '<section id="at-k"' in page and "Records at k</h2>" in page
    assert report.verdicts() == [  # it judges nothing
        Verdict(Judged.DIRECT_IDENTIFIERS, True),
        Verdict(Judged.K_ANONYMITY, False),
    ]


def test_an_analysis_without_a_section_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anonaudit.measures, "ANALYSES", (*ANALYSES, AtK()))
    with pytest.raises(LookupError, match=r"'at_k' has no anonaudit\.report\.sections module"):
        analysis_section(AtK())


class AtKInRiskSection(AtKSection):
    """The same section, its fragment a part of the risk measure's entry."""

    extends = "risk"


def test_a_new_analysis_extending_a_measure_is_described_in_that_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs it")
    monkeypatch.setattr(anonaudit.measures, "ANALYSES", (*ANALYSES, AtK()))
    _add_section(monkeypatch, "at_k", AtKInRiskSection())
    report = audit(RECORDS, Roles(["zip", "age"], ["disease"]), AuditOptions(policy=Policy(k=2)))
    document = report.to_dict()
    assert document["risk"]["at_k"] == {"k": 2, "records": 2} and "at_k" not in document
    written = report_schema()
    assert written["$defs"]["risk"]["properties"]["at_k"] == AtKSection.properties["at_k"]
    assert "at_k" not in written["$defs"]["audit"]["properties"]
    jsonschema.validate(document, written)
    with pytest.raises(jsonschema.ValidationError, match="at_k"):
        jsonschema.validate(document, shipped_schema())  # until the file is rewritten


class AtKSinglesOut(AtK):
    """The same analysis, backing a WP216 criterion, and saying so when it did not run."""

    criteria: ClassVar[Mapping[str, tuple[str, ...]]] = {"singling_out": ("records at k",)}
    unassessed: ClassVar[Mapping[str, str]] = {"singling_out": "no k: records at k not counted"}


def test_the_criteria_list_what_the_measures_and_analyses_declare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(anonaudit.measures, "ANALYSES", (*ANALYSES, AtKSinglesOut()))
    _add_section(monkeypatch, "at_k", AtKSection())
    roles = Roles(["zip", "age"], ["disease"])
    asked = {c.key: c for c in criteria(audit(RECORDS, roles, AuditOptions(policy=Policy(k=2))))}
    singling = asked["singling_out"]
    assert singling.measures == (
        "direct identifiers",
        "k-anonymity",
        "sample uniques",
        "re-identification risk",
        "records at k",
    )
    assert singling.not_checked == ()
    assert asked["inference"].measures == (
        "l-diversity of disease",
        "t-closeness of disease",
        "disclosure of disease",
    )
    unasked = {c.key: c for c in criteria(audit(RECORDS, roles))}
    assert "records at k" not in unasked["singling_out"].measures
    assert unasked["singling_out"].not_checked[0] == "no k: records at k not counted"
    assert unasked["singling_out"].not_checked[1].startswith("no threshold on the classes")
    assert unasked["singling_out"].passed is None  # the identifier check alone judges nothing
    assert unasked["linkability"].not_checked[0].startswith("no auxiliary table was given")


def test_a_new_analysis_is_absent_when_not_asked(with_at_k: AtK) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs it")
    report = audit(RECORDS, Roles(["zip", "age"], ["disease"]))
    assert "at_k" not in report.analyses
    assert not any(line.startswith("at k:") for line in summary(report).splitlines())
    document = report.to_dict()
    assert "at_k" not in document
    jsonschema.validate(document, report_schema())
    assert 'id="at-k"' not in report.to_html()
