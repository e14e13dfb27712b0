"""The layers of the package are its folders, checked: no module imports a higher layer.

From the bottom (docs/architecture.md draws them):

0. the ground floor: ``errors``, ``files``, ``progress``, ``classtable``, ``hierarchy``,
   ``settings/`` (policy, options, catalog, names, work: values), ``distances/``;
1. ``sources/``: the only code that opens inputs;
2. ``engines/``: the only code that iterates record batches into a class table;
3. ``measures/``: one module per measure, functions of the class table;
4. ``advice/``, ``dp/``, ``linkage/``, ``tables/``: what combines measures;
5. ``results`` (the :class:`AuditReport`) and ``auditing`` (the run);
6. ``report/``: every renderer; computes nothing;
7. ``cli/`` and ``__main__``: the command line.

A module's layer is read from its path: nothing here lists a module. Every import
counts, those under ``if TYPE_CHECKING:`` too: a module-level or typing import of a
higher layer fails. An import made inside a function runs only when called; the few
that reach up (``AuditReport.to_json`` and ``to_html`` calling the renderers) are
counted, and there may be at most :data:`UPWARD_CALLS` of them.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "anonaudit"
#: The floors, from the bottom: the top-level modules and folders on each.
FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "errors files progress classtable hierarchy published settings distances _moved",
        "sources",
        "engines",
        "measures",
        "advice dp linkage tables",
        "results auditing",
        "report",
        "cli __main__",
    )
)
#: Modules a module may import inside a function from a higher layer, in all the package.
UPWARD_CALLS = 2
#: The front door: ``anonaudit/__init__.py`` imports what it exports when first read.
FRONT = ""


def layer(module: str) -> int | None:
    """The floor of ``anonaudit.<module>`` (``module`` without the package prefix);
    ``None`` for the front door and for a name on no floor."""
    top = module.split(".")[0]
    return next((number for number, names in enumerate(FLOORS) if top in names), None)


def imports(path: Path) -> list[tuple[str, bool]]:
    """The anonaudit modules ``path`` imports, each with whether the import is made
    inside a function (and so only when called)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_function = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        late = id(node) in in_function
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "anonaudit":  # a module of the package, or a front-door name
                found += [
                    (alias.name if alias.name in _modules() else FRONT, late)
                    for alias in node.names
                    if alias.name != "__version__"  # a constant of the front door
                ]
            elif node.module.startswith("anonaudit."):
                base = node.module.removeprefix("anonaudit.")
                found += [(base, late)]
        elif isinstance(node, ast.Import):
            found += [
                (alias.name.removeprefix("anonaudit."), late)
                for alias in node.names
                if alias.name.startswith("anonaudit.")
            ]
    return found


@functools.cache
def _modules() -> dict[str, Path]:
    """Every module of the package by its name under ``anonaudit.``."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        found[module.removesuffix("__init__").rstrip(".")] = path
    return found


def upward_imports() -> tuple[list[str], list[str]]:
    """Every module importing a higher layer's: at module level or for typing, and
    inside a function, as ``"importer -> imported"`` (a pair once however often)."""
    eager: set[str] = set()
    late: set[str] = set()
    for module, path in sorted(_modules().items()):
        if module == FRONT:
            continue
        own = layer(module)
        assert own is not None, f"anonaudit/{path.name}: on no floor of tests/test_layers.py"
        for imported, in_function in imports(path):
            theirs = layer(imported)
            if imported == FRONT:
                theirs = len(FLOORS)  # the front door is above every floor
            assert theirs is not None, f"anonaudit.{module} imports anonaudit.{imported}"
            if theirs > own:
                (late if in_function else eager).add(f"anonaudit.{module} -> {imported}")
    return sorted(eager), sorted(late)


def test_no_module_imports_a_higher_layer() -> None:
    eager, late = upward_imports()
    assert not eager, "imports of a higher layer: " + ", ".join(eager)
    assert len(late) <= UPWARD_CALLS, "in-function imports of a higher layer: " + ", ".join(late)


def test_every_module_is_on_a_floor() -> None:
    for module in _modules():
        assert module == FRONT or layer(module) is not None, module


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from anonaudit.report.json import dumps\n"
        "if TYPE_CHECKING:\n    from anonaudit.cli import main\n"
        "def f():\n    from anonaudit.auditing import audit\n",
        encoding="utf-8",
    )
    assert sorted(imports(module)) == [("auditing", True), ("cli", False), ("report.json", False)]
    assert (layer("report.json") or 0) > (layer("measures.risk") or 0)
    assert layer("settings.policy") == 0
    assert layer("nowhere") is None
