"""The documentation: every page of the nav exists, the README's links resolve, and the
measure explanations (anonaudit/report/explain.py) feed both the HTML report and the docs.

CI builds the site itself in strict mode (``.ci/run``: ``mkdocs build --strict``); these
tests need no MkDocs, except the one that renders the generated pages.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from anonaudit import Roles
from anonaudit.measures import MEASURES
from anonaudit.report import explain
from anonaudit.report.sections import explained, section

#: What each measure of the registry explains (its section's).
ABOUTS = [about for m in MEASURES if (about := section(m).about) is not None]

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"


def _nav_pages() -> list[str]:
    """The Markdown files the nav of mkdocs.yml names (``- Title: path.md``)."""
    text = MKDOCS.read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return re.findall(r"^\s*- [^\n]*?:\s*([\w./-]+\.md)\s*$", nav, flags=re.MULTILINE)


def _generated() -> set[str]:
    return {f"measures/{m.slug}.md" for m in explained()}


def test_every_nav_page_exists_or_is_generated() -> None:
    pages = _nav_pages()
    assert "index.md" in pages and "architecture.md" in pages
    missing = [p for p in pages if p not in _generated() and not (DOCS / p).is_file()]
    assert missing == []
    assert len(pages) == len(set(pages)), "a page is listed twice"


def test_every_page_is_in_the_nav() -> None:
    pages = set(_nav_pages())
    written = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert written - pages == set()


def test_the_nav_lists_no_measure_page_by_hand() -> None:
    """The measure pages are generated and listed by docs/hooks.py: mkdocs.yml names
    none, and none is written in docs/."""
    pages = _nav_pages()
    assert "measures/index.md" in pages
    assert {p for p in pages if p.startswith("measures/")} == {"measures/index.md"}
    for measure in explained():  # written nowhere: generated from the code
        assert not (DOCS / "measures" / f"{measure.slug}.md").exists()


def test_the_build_is_strict_and_offline() -> None:
    text = MKDOCS.read_text(encoding="utf-8")
    assert re.search(r"^strict: true$", text, flags=re.MULTILINE)
    assert re.search(r"^  font: false$", text, flags=re.MULTILINE)
    assert "docs/hooks.py" in text
    assert "import:" not in text  # no inventory of another site fetched
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "mkdocs build --strict" in run


def _links(markdown: str) -> list[str]:
    """Targets of the Markdown links and images of ``markdown``, outside code."""
    markdown = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    markdown = re.sub(r"`[^`\n]*`", "", markdown)
    return re.findall(r"\]\(([^)\s]+)\)", markdown)


def test_the_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = _links(readme)
    assert "docs/index.md" in links
    for link in links:
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue
        target = link.split("#")[0]
        assert (ROOT / target).exists(), f"README.md links to {link}, which does not exist"


def test_the_readme_is_short_and_names_no_internal_module() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) < 8000
    public = {"anonaudit/report/explain.py", "anonaudit/schema/report.schema.json"}
    internal = set(re.findall(r"anonaudit/[\w/.]+\.\w+", readme)) - public
    internal |= set(re.findall(r"anonaudit\.(?:checks|dp|report|rows|generalization)\.\w+", readme))
    assert internal == set()
    assert 'pip install -e ".[test]" && python -m pytest' in readme
    assert "CC BY 4.0" in readme


def test_the_docs_pages_link_to_files_that_exist() -> None:
    """Relative links between the written pages (the strict build checks them too)."""
    for page in DOCS.rglob("*.md"):
        for link in _links(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", link) or link.startswith("#"):
                continue
            target = (page.parent / link.split("#")[0]).resolve()
            relative = target.relative_to(DOCS.resolve()).as_posix()
            generated = _generated() | {"schema/report.schema.json"}
            assert target.exists() or relative in generated, f"{page.name}: {link}"


# -- anonaudit.report.explain: one text for the report and the docs --------------------------------


def test_measures_are_complete_and_unique() -> None:
    assert len({m.anchor for m in explain.MEASURES}) == len(explain.MEASURES)
    assert len({m.slug for m in explain.MEASURES}) == len(explain.MEASURES)
    for m in explain.MEASURES:
        assert m.citations, m.name
        for text in (m.summary, m.definition, m.protects, m.misses):
            assert text.strip() and text == text.strip(), m.name
        explain.cited(m.summary + m.misses)  # every citation names a reference
    assert len(ABOUTS) == len(MEASURES) and set(ABOUTS) <= set(explained())


def test_the_report_numbers_every_reference_it_cites() -> None:
    about = explain.report_about(ABOUTS)
    keys = [r.key for r in about.references]
    assert keys == ["sweeney", "machanavajjhala", "li", "wong", "cao", "brickell", "elemam"]
    text = "".join(str(e.summary) + str(e.misses) for e in about.measures)
    for number, key in enumerate(keys, start=1):
        assert f'<a href="#ref-{key}" class="cite">[{number}]</a>' in text


def test_html_rendering_escapes_the_text() -> None:
    html = explain.to_html("a < b & *c* [@li]", {"li": 3})
    assert str(html) == 'a &lt; b &amp; <em>c</em> <a href="#ref-li" class="cite">[3]</a>'
    with pytest.raises(KeyError):
        explain.to_html("[@cao]", {"li": 3})


def test_the_html_report_renders_the_explanations(tmp_path: Path) -> None:
    import anonaudit

    report = anonaudit.audit(ROOT / "sample_data" / "clinic.csv", Roles(["zip", "age"], ["sex"]))
    page = report.to_html()
    for measure in ABOUTS:
        assert f'<h3 id="{measure.anchor}">' in page
    for reference in explain.report_about(ABOUTS).references:
        assert f'<li id="{reference.anchor}">{reference.html}</li>' in page


def _hooks() -> ModuleType:
    pytest.importorskip("mkdocs", reason='the [docs] extra installs MkDocs: pip install ".[docs]"')
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_lists_every_measure_page_in_the_nav() -> None:
    hooks = _hooks()  # skips first when MkDocs is not installed
    from mkdocs.utils.yaml import yaml_load

    with MKDOCS.open(encoding="utf-8") as file:
        nav = yaml_load(file)["nav"]
    built = hooks.with_measure_pages(nav)
    (section,) = [entry["Measures"] for entry in built if "Measures" in entry]
    pages = [next(iter(entry.items())) for entry in section]
    generated = [(m.title, f"measures/{m.slug}.md") for m in explained()]
    assert pages[0] == ("Overview", "measures/index.md")
    assert pages[1 : 1 + len(generated)] == generated
    assert ("Population risk", "measures/population-risk.md") in pages
    assert [entry for entry in built if "Measures" not in entry] == [
        entry for entry in nav if "Measures" not in entry
    ]
    with pytest.raises(KeyError, match="Measures"):
        hooks.with_measure_pages([e for e in nav if "Measures" not in e])


def test_the_hook_writes_one_page_per_measure() -> None:
    hooks = _hooks()
    for measure in explained():
        page = hooks.measure_page(measure)
        assert page.startswith("# ")
        for heading in ("## Definition", "## What it protects", "## What it does not protect"):
            assert heading in page
        for reference in measure.references:
            assert reference.lead.split(" (")[0].replace("_", "\\_") in page


def test_the_policy_files_page_lists_every_setting_of_the_catalog() -> None:
    from anonaudit.settings.catalog import OPTIONS

    hooks = _hooks()
    page = (DOCS / "policy-files.md").read_text(encoding="utf-8")
    assert "<!-- settings -->" in page
    table = hooks.on_page_markdown(page, None, None, None)
    for option in OPTIONS:
        if option.kind != "table":
            assert f"| `{option.key}` |" in table, option.key
        if option.flag:
            assert f"`{option.flag}`" in table, option.flag
