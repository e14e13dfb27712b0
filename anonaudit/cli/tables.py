"""``anonaudit tables``: published tables read, audited jointly, reported.

The settings come from the command line over the policy file's ``[tables]`` table
(:data:`~anonaudit.settings.catalog.TABLES_OPTIONS`); exit 0 when the tables may go out
as they are, 1 when they disclose, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from anonaudit.cli.app import assignments
from anonaudit.cli.config import relative_to
from anonaudit.errors import InputError, OptionError, ParameterError
from anonaudit.files import atomic_write_text, printable, refuse_folders, refuse_overwriting
from anonaudit.published import PublishedTable, TableSet
from anonaudit.report.kit import dumps
from anonaudit.report.tables import tables_summary, tables_to_dict
from anonaudit.report.tables_html import tables_html
from anonaudit.settings.catalog import TABLES_OPTIONS
from anonaudit.sources.csv import CsvOptions
from anonaudit.sources.published import (
    TableOptions,
    read_contributions,
    read_table,
    read_tables,
)
from anonaudit.tables.audit import audit_tables
from anonaudit.tables.rules import Rules

__all__ = ["TableSettings", "input_files", "reading_of", "run", "table_settings"]

_OK, _FAIL = 0, 1

#: The command line's settings over the policy file's ``[tables]``, by key.
TableSettings: TypeAlias = dict[str, Any]


def run(args: argparse.Namespace, command: str) -> int:
    """Run ``anonaudit tables`` (:func:`anonaudit.cli.app.main` handles errors)."""
    settings, names = table_settings(args)
    outputs = [("--json", args.json), ("--html", args.html)]
    refuse_overwriting(outputs, input_files(args, settings))
    refuse_folders(outputs)
    rules = _rules(settings, names)
    populations = dict(settings.get("populations") or {})
    reading = reading_of(settings, names, args)
    per_table = []
    for path in args.tables:
        keys = [
            k for k in dict.fromkeys((path, Path(path).name, Path(path).stem)) if k in populations
        ]
        population = populations[keys[0]] if keys else ""
        for key in keys:
            del populations[key]
        per_table.append(replace(reading, population=population))
    if populations:
        unknown = ", ".join(sorted(populations))
        raise ParameterError(f"--population names no table given: {printable(unknown)}")
    tables = _with_contributions(read_tables(args.tables, per_table), settings, reading)
    values = _true_values(settings.get("values") or {}, reading, tables)
    nested = dict(settings.get("nested") or {})
    for child, parent in nested.items():
        for name in (child, parent):
            if name not in tables.populations:
                raise ParameterError(
                    f"--within {printable(child)}={printable(parent)}: no table counts the "
                    f"population {printable(name)} (name them with --population TABLE=NAME)"
                )
    audit = audit_tables(tables, rules, values=values, nested=nested)
    show = bool(args.show_values)
    document = tables_to_dict(audit, show_values=show)
    if args.html:
        atomic_write_text(args.html, tables_html(document, command=command))
    if args.json == "-":
        sys.stdout.write(dumps(document))
    else:
        if args.json:
            atomic_write_text(args.json, dumps(document))
        sys.stdout.write(tables_summary(document))
    return _OK if audit.passed else _FAIL


def input_files(args: argparse.Namespace, settings: TableSettings) -> list[str]:
    """Every file the command reads: the tables, the policy file, and every file its
    settings name (the catalog's path settings: hierarchies, contributions, true values,
    an identified table), so that no output replaces one."""
    named: list[str] = []
    for option in TABLES_OPTIONS:
        value = settings.get(option.key)
        if option.path in (None, "output") or value is None:
            continue
        named += list(value.values()) if isinstance(value, dict) else [str(value)]
    return [*args.tables, *([args.config] if args.config else []), *named]


def table_settings(args: argparse.Namespace) -> tuple[TableSettings, dict[str, str]]:
    """The command line's settings over the policy file's ``[tables]`` (``anonaudit
    tables`` and ``anonaudit reconstruct``): values by key, the paths of the file
    relative to its folder, and each key's name for messages."""
    table: dict[str, Any] = {}
    base = Path.cwd()
    if args.config:
        path = Path(args.config)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise InputError(f"{printable(str(path))}: no such policy file") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{printable(str(path))}: not valid TOML: {exc}") from None
        table = data.get("tables", {})
        if not isinstance(table, dict):
            raise InputError(f"{printable(str(path))}: [tables] must be a table")
        known = {o.key for o in TABLES_OPTIONS}
        for key in table:
            if key not in known:
                raise InputError(
                    f"{printable(str(path))}: [tables] has no setting {key!r}; the settings "
                    f"are {', '.join(sorted(known))}"
                )
        base = path.parent
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    for option in TABLES_OPTIONS:
        given = getattr(args, option.key, None)
        names[option.key] = option.flag or option.key
        if given is None and option.key in table:
            given, names[option.key] = table[option.key], f"[tables] {option.key}"
            if option.path is not None:
                given = relative_to(given, option, base)
        elif given is not None and option.kind == "mapping":
            given = assignments(given, option.flag or option.key, option.metavar or "KEY")
        values[option.key] = given
    return values, names


def _rules(settings: dict[str, Any], names: dict[str, str]) -> Rules:
    """The primary rules' parameters, each refused by its flag or key."""
    keywords: dict[str, Any] = {
        o.keyword: settings[o.key]
        for o in TABLES_OPTIONS
        if o.keyword is not None and settings[o.key] is not None
    }
    dominance = settings.get("dominance")
    if dominance is not None:
        n, comma, k = str(dominance).partition(",")
        try:
            keywords["dominance_n"], keywords["dominance_k"] = int(n), float(k)
        except ValueError:
            raise ParameterError(
                f"{names['dominance']} takes N,K such as 2,85 (got {dominance!r})"
            ) from None
        if not comma:
            raise ParameterError(f"{names['dominance']} takes N,K such as 2,85")
    try:
        return Rules(**keywords)
    except OptionError as error:
        label = names.get(error.option, "--dominance" if "dominance" in error.option else "")
        raise ParameterError(error.worded(label or error.option)) from None


def reading_of(
    settings: TableSettings, names: dict[str, str], args: argparse.Namespace
) -> TableOptions:
    """How every table is read (``anonaudit tables`` and ``anonaudit reconstruct``)."""
    rounding, method = settings.get("rounding"), "nearest"
    base_value: int | None = None
    if rounding is not None:
        text, _, method = str(rounding).partition(":")
        method = method or "nearest"
        try:
            base_value = int(text)
        except ValueError:
            raise ParameterError(
                f"{names['rounding']} takes BASE[:nearest|random] such as 5:random "
                f"(got {rounding!r})"
            ) from None
    hierarchies = dict(settings.get("hierarchies") or {})
    options: dict[str, Any] = {
        "layout": settings.get("layout") or "auto",
        "kind": settings.get("kind") or "count",
        "dimensions": tuple(
            c.strip() for d in settings.get("dimensions") or () for c in d.split(",")
        ),
        "value": settings.get("value"),
        "less_than_includes_zero": bool(settings.get("less_than_includes_zero")),
        "rounding": base_value,
        "rounding_method": method,
        "hierarchies": hierarchies,
        "csv": CsvOptions(sep=args.sep, encoding=args.encoding or "utf-8"),
    }
    if settings.get("markers"):
        options["markers"] = tuple(settings["markers"])
    try:
        return TableOptions(**options)
    except OptionError as error:
        flag = {"rounding_method": "rounding"}.get(error.option, error.option)
        raise ParameterError(error.worded(names.get(flag, flag))) from None


def _named(tables: TableSet, name: str, flag: str) -> PublishedTable:
    """The table ``name`` (as given, or its file name) of ``tables``."""
    for table in tables.tables:
        if name in (table.name, Path(table.name).name):
            return table
    raise ParameterError(
        f"{flag} {printable(name)}=...: no table of that name; the tables are "
        f"{', '.join(printable(t.name) for t in tables.tables)}"
    )


def _with_contributions(
    tables: TableSet, settings: TableSettings, reading: TableOptions
) -> TableSet:
    """``tables`` with the contributors of the tables of sums given microdata."""
    given = settings.get("contributions") or {}
    filled = {t.name: t for t in tables.tables}
    for name, path in given.items():
        table = _named(tables, name, "--contributions")
        if table.kind != "sum":
            raise ParameterError(
                f"--contributions {printable(name)}=...: the table counts units; "
                "contributions are for a table of sums (--kind sum)"
            )
        contributors = read_contributions(
            path,
            table,
            tables.dimensions,
            settings.get("contribution_value") or "value",
            settings.get("holding"),
            settings.get("weight"),
            csv=reading.csv,
        )
        filled[table.name] = contributors.fill(table)
    return TableSet(tuple(filled[t.name] for t in tables.tables), tables.dimensions)


def _true_values(
    given: dict[str, str], reading: TableOptions, tables: TableSet
) -> dict[str, NDArray[np.float64]]:
    """The unsuppressed tables behind published ones, cell for cell: ``--true-values
    TABLE=FILE`` read like the table, every cell published."""
    result = {}
    for name, path in given.items():
        table = _named(tables, name, "--true-values")
        truth, _ = read_table(path, reading)
        key = {
            tuple(str(c[i]) for c in truth.codes): float(truth.lower[i])
            for i in np.flatnonzero(truth.exact)
        }
        values = np.empty(len(table))
        for i in range(len(table)):
            codes = tuple(str(c[i]) for c in table.codes)
            if codes not in key:
                raise InputError(
                    f"{printable(path)}: has no published value for {table.label(i)}; the "
                    "true values must give every cell of the table"
                )
            values[i] = key[codes]
        result[table.name] = values
    return result
