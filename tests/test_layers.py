"""The layers of the package, checked: no module imports a module of a higher layer.

From the bottom: ``base`` (errors, policy, utilities, texts) -> ``sources`` (reading
files and frames) -> ``classtable`` (the one aggregate) -> ``engines`` (building it) ->
``measures`` (checks, DP, hierarchies: functions of the class table) -> ``advice``
(searches over measures) -> ``results`` (the audit and what it returns, linkability) ->
``report`` (rendering) -> ``cli`` (the command line and batch runs). Imports under
``if TYPE_CHECKING:`` are annotations, not dependencies, and are not counted.

The few upward imports that remain are listed in :data:`KNOWN`, each with its reason;
a new one fails this test, and so does a listed one that has gone (remove it from the
list). docs/architecture.md draws the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "anonaudit"
LAYERS = (
    "base",
    "sources",
    "classtable",
    "engines",
    "measures",
    "advice",
    "results",
    "report",
    "cli",
)
#: Top-level modules and packages by layer (a sub-module may override, below).
TOP = {
    "": "base",  # the package itself: __version__ and the light names it re-exports
    "errors": "base",
    "util": "base",
    "policy": "base",
    "explain": "base",
    "work": "base",
    "vocabulary": "base",
    "options": "base",  # the option objects: validated values, imported by every layer
    "distances": "base",  # the ground distances: option objects with their EMD
    "csvfile": "base",
    "sources": "sources",
    "rows": "results",
    "classtable": "classtable",
    "engines": "engines",
    "checks": "measures",
    "measures": "measures",
    "hierarchy": "base",  # hierarchies and matrices read from files: distances' values
    "generalization": "measures",
    "identifiers": "measures",
    "_common_names": "measures",  # the given names identifiers looks for
    "margins": "measures",  # margins of a frequency table, found on its class table
    "dp": "measures",
    "advice": "advice",
    "loading": "engines",
    "auditing": "results",
    "config": "results",
    "linkage": "results",
    "report": "report",
    "batch": "cli",
    "cli": "cli",
    "commands": "cli",
    "__main__": "cli",
}
SUB = {
    "dp.cli": "cli",
    "dp.artefact": "report",
    "linkage.cli": "cli",
    "linkage.report": "report",
    "linkage.html": "report",
}
#: The package's front door: ``from anonaudit import audit`` is the API, the top layer.
FRONT = {"audit", "audit_table", "load", "AuditReport"}
#: Upward imports that remain, (importer, imported): why each is there.
KNOWN = {
    # AuditReport.to_json / to_html / save_html: convenience methods that call the report
    # layer when used (imported inside them).
    ("auditing", "report.html"): "AuditReport.to_html and DEFAULT_MAX_ROWS",
    ("auditing", "report.json"): "AuditReport.to_dict / to_json",
    # The lattice audits nodes under non-monotone policies with audit_table.
    ("advice.lattice", "auditing"): "node audits; to be passed in by the caller",
}


def layer(module: str) -> str | None:
    """The layer of ``anonaudit.<module>`` (``module`` without the package prefix)."""
    parts = module.split(".")
    for depth in (2, 1):
        key = ".".join(parts[:depth])
        if key in SUB:
            return SUB[key]
    return TOP.get(parts[0])


def imports(path: Path) -> list[str]:
    """The anonaudit modules ``path`` imports, outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "anonaudit":
                names = [a.name for a in node.names]
                found += ["cli" if name in FRONT else "" for name in names]
            elif node.module.startswith("anonaudit."):
                found.append(node.module.removeprefix("anonaudit."))
        elif isinstance(node, ast.Import):
            found += [
                a.name.removeprefix("anonaudit.")
                for a in node.names
                if a.name.startswith("anonaudit.")
            ]
    return found


def upward_imports() -> set[tuple[str, str]]:
    """Every (importer, imported) pair in which the imported module's layer is higher."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        module = module.removesuffix("__init__").rstrip(".")
        own = layer(module)
        assert own is not None, f"anonaudit.{module} has no layer in tests/test_layers.py"
        for imported in imports(path):
            theirs = layer(imported)
            assert theirs is not None, f"anonaudit.{imported} has no layer"
            if LAYERS.index(theirs) > LAYERS.index(own):
                found.add((module, imported))
    return found


def test_no_module_imports_a_higher_layer() -> None:
    found = upward_imports()
    new = sorted(found - set(KNOWN))
    assert not new, "upward imports (see the layers in tests/test_layers.py): " + ", ".join(
        f"anonaudit.{a} -> anonaudit.{b}" for a, b in new
    )
    gone = sorted(set(KNOWN) - found)
    assert not gone, f"no longer imported, remove from KNOWN: {gone}"


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from anonaudit.report.json import dumps\n"
        "if TYPE_CHECKING:\n    from anonaudit.cli import main\n",
        encoding="utf-8",
    )
    assert imports(module) == ["report.json"]
    assert LAYERS.index(layer("report.json") or "") > LAYERS.index(layer("checks.risk") or "")
