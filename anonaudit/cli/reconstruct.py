"""``anonaudit reconstruct``: how many records published count tables give back.

The tables are read as ``anonaudit tables`` reads them (:func:`anonaudit.cli.tables.
reading_of`), reconstructed group by group (:func:`anonaudit.tables.reconstruct.
reconstruct`) and reported; exit 0 when nobody is given back, 1 when somebody is
(:attr:`~anonaudit.tables.reconstruct.Reconstruction.discloses`), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from anonaudit.cli.tables import TableSettings, input_files, reading_of, table_settings
from anonaudit.errors import InputError, OptionError, ParameterError, SourceNotFoundError
from anonaudit.files import atomic_write_text, printable, refuse_folders, refuse_overwriting
from anonaudit.published import TableSet
from anonaudit.report.kit import dumps
from anonaudit.report.reconstruct import reconstruct_summary, reconstruct_to_dict
from anonaudit.sources.published import read_tables
from anonaudit.tables.reconstruct import (
    BesideDP,
    Linkage,
    Reconstruction,
    beside_dp,
    link,
    reconstruct,
)

__all__ = ["run"]

_NONE, _DISCLOSED = 0, 1


def run(args: argparse.Namespace, command: str) -> int:
    """Run ``anonaudit reconstruct`` (:func:`anonaudit.cli.app.main` handles errors)."""
    settings, names = table_settings(args)
    outputs = [("--json", args.json), ("--html", args.html)]
    refuse_overwriting(outputs, input_files(args, settings))
    refuse_folders(outputs)
    tables = read_tables(args.tables, reading_of(settings, names, args))
    try:
        result = reconstruct(
            tables,
            group=args.group,
            sensitive=args.sensitive,
            count_budget=args.count_budget,
            draws=args.draws,
            seed=args.seed,
            workers=args.workers,
            class_table=bool(settings.get("class_table")),
            subsets=bool(settings.get("smallest_subset")),
        )
        dp = _beside_dp(settings, names, args.workers, tables, result)
        linkage = _linkage(settings, args, result)
    except OptionError as error:
        raise ParameterError(error.worded("--" + error.option.replace("_", "-"))) from None
    document = reconstruct_to_dict(
        result, show_values=bool(args.show_values), dp=dp, linkage=linkage
    )  # once: the JSON, the summary and the HTML page are each made from it
    if args.json == "-":
        sys.stdout.write(dumps(document))
    else:
        if args.json:
            atomic_write_text(args.json, dumps(document))
        sys.stdout.write(reconstruct_summary(document))
    if args.html:
        from anonaudit.report.reconstruct_html import reconstruct_html

        atomic_write_text(args.html, reconstruct_html(document, command=command))
    return _DISCLOSED if result.discloses else _NONE


def _beside_dp(
    settings: TableSettings,
    names: dict[str, str],
    workers: int,
    tables: TableSet,
    result: Reconstruction,
) -> BesideDP | None:
    """With ``--dp-epsilon``: the tables released under DP (OpenDP's secure noise) and
    reconstructed beside the exact ones. Messages name each setting where it was given
    (``names``: its flag, or its key in the policy file's ``[tables]``)."""
    epsilon = settings.get("dp_epsilon")
    if epsilon is None:
        for key in ("dp_delta", "dp_mechanism", "dp_confidence"):
            if settings.get(key) is not None:
                given = names[key]
                epsilon_name = "--dp-epsilon E" if given.startswith("--") else "[tables] dp_epsilon"
                raise ParameterError(f"{given} describes the DP release of {epsilon_name}")
        return None
    confidence = float(_given(settings, "dp_confidence", 0.99))
    if not 0 < confidence < 1:
        raise ParameterError(
            f"{names['dp_confidence']} must lie strictly between 0 and 1 (got {confidence:g})"
        )
    try:
        return beside_dp(
            tables,
            result,
            epsilon=float(epsilon),
            delta=float(_given(settings, "dp_delta", 0.0)),
            mechanism=_given(settings, "dp_mechanism", "discrete-laplace"),
            confidence=confidence,
            workers=workers,
        )
    except OptionError as error:  # epsilon's or delta's range
        raise ParameterError(error.worded(names.get(f"dp_{error.option}", error.option))) from None
    except ParameterError as error:
        raise ParameterError(f"{names['dp_epsilon']}: {error}") from None


def _given(settings: TableSettings, key: str, default: object) -> Any:
    """The setting ``key``, or ``default`` when it is not given (a 0 is given)."""
    value = settings.get(key)
    return default if value is None else value


def _linkage(
    settings: TableSettings, args: argparse.Namespace, result: Reconstruction
) -> Linkage | None:
    """With ``--population FILE``: the reconstructed records linked to the identified
    table, by its columns that are the group or a dimension of the tables."""
    name = settings.get("identified")
    if name is None:
        return None
    from anonaudit.engines.load import load
    from anonaudit.settings.options import ReadOptions, Roles
    from anonaudit.sources.inputs import open_inputs

    reading = ReadOptions(sep=args.sep, encoding=args.encoding or "utf-8")
    try:  # opened as the load below opens it: CSV, Parquet, a folder of files
        (source,) = open_inputs(name, **reading.keywords())
        header = source.columns
    except SourceNotFoundError:
        raise InputError(f"--population {printable(name)}: no such file") from None
    known = [*([result.group] if result.group else []), *result.dimensions]
    columns = [c for c in header if c in known]
    if not columns:
        raise InputError(
            f"--population {printable(name)}: no column is the group or a dimension of the "
            f"tables ({', '.join(known)}); its columns are {', '.join(header)}"
        )
    return link(result, load(name, Roles(columns), reading=reading))
