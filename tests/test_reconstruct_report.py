"""The reports of ``anonaudit reconstruct`` (issue 27): the JSON document against its
JSON Schema (anonaudit/schema/reconstruct.schema.json) with every option, and the HTML
page built from it: redacted by default, values escaped, never more than the document,
the same bytes for the same run."""

from __future__ import annotations

import html as markup
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from census_tables import blocks, publish
from test_reconstruct import SMALL, register, write

from anonaudit.cli import main
from anonaudit.report.reconstruct_html import reconstruct_html
from anonaudit.settings.names import SCHEMA_VERSION

jsonschema = pytest.importorskip("jsonschema", reason="the [test] extra installs jsonschema")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    text = (resources.files("anonaudit") / "schema" / "reconstruct.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def _errors(schema: dict[str, Any], document: object) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [error.message for error in validator.iter_errors(document)]


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    cubes = blocks(6, sizes=(3, 9), ages=SMALL, races=3, seed=4)
    register(cubes, tmp_path)
    return [str(write(t, tmp_path)) for t in publish(cubes).tables]


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--show-values"],
        ["--sensitive", "race", "--smallest-subset", "--show-values"],
        ["--population", "register.csv", "--dp-epsilon", "2"],
        ["--count-budget", "0", "--draws", "3"],
    ],
)
def test_every_document_is_valid_against_the_schema(
    schema: dict[str, Any],
    files: list[str],
    extra: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = Path(files[0]).parent
    extra = [str(folder / e) if e.endswith(".csv") else e for e in extra]
    assert main(["reconstruct", *files, "--group", "block", *extra, "--json", "-"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["schema_version"] == SCHEMA_VERSION
    assert _errors(schema, document) == [], extra
    assert ("cells" in document["groups"][0]) == ("--show-values" in extra)


def test_the_schema_refuses_what_the_document_never_holds(
    schema: dict[str, Any], files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reconstruct", *files, "--group", "block", "--json", "-"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert _errors(schema, {**document, "records_of": 1})  # an unknown key
    group = {**document["groups"][0], "method": "guess"}
    assert _errors(schema, {**document, "groups": [group]})
    assert _errors(schema, {k: v for k, v in document.items() if k != "dp"})


def test_the_page_is_redacted_escaped_and_holds_the_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cubes = blocks(3, sizes=(3, 6), ages=SMALL, races=2, seed=2)
    tables = publish(cubes)
    paths = []
    for t in tables.tables:  # a race code a browser would read as markup
        path = write(t, tmp_path)
        path.write_text(path.read_text().replace("race1", "<b>&race"))
        paths.append(str(path))
    page = tmp_path / "page.html"
    argv = ["reconstruct", *paths, "--group", "block", "--json", str(tmp_path / "r.json")]
    assert main([*argv, "--html", str(page)]) == 1
    html = page.read_text()
    assert "<b>&race" not in html and "race=" not in html  # redacted: no cell
    assert "Redacted report." in html and "Content-Security-Policy" in html
    document = json.loads((tmp_path / "r.json").read_text())
    assert html == reconstruct_html(document, command=_command(html))  # built from it
    assert main([*argv, "--html", str(page)]) == 1
    assert page.read_text() == html  # the same bytes
    shown = tmp_path / "shown.html"
    assert main([*argv[:-2], "--show-values", "--html", str(shown)]) == 1
    values = shown.read_text()
    assert "race=&lt;b&gt;&amp;race" in values and "<b>&race" not in values
    assert "What this report holds." in values
    capsys.readouterr()


def _command(html: str) -> str:
    """The command line a page printed (to rebuild it from the JSON document)."""
    start = html.index('<pre class="command"><code>') + len('<pre class="command"><code>')
    return markup.unescape(html[start : html.index("</code>", start)])


def test_html_beside_an_input_is_refused(
    files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reconstruct", *files, "--group", "block", "--html", files[0]]) == 2
    assert "--html" in capsys.readouterr().err
