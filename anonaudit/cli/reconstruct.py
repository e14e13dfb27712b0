"""``anonaudit reconstruct``: how many records published count tables give back.

The tables are read as ``anonaudit tables`` reads them (:func:`anonaudit.cli.tables.
reading_options`), reconstructed group by group (:func:`anonaudit.tables.reconstruct.
reconstruct`) and reported; exit 0 when no group is reconstructed, 1 when some group
is, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys

from anonaudit.cli.tables import _settings, reading_options
from anonaudit.errors import OptionError, ParameterError
from anonaudit.files import atomic_write_text, refuse_folders, refuse_overwriting
from anonaudit.published import TableSet
from anonaudit.report.reconstruct import (
    reconstruct_json,
    reconstruct_summary,
    reconstruct_to_dict,
)
from anonaudit.sources.published import read_tables
from anonaudit.tables.reconstruct import BesideDP, Reconstruction, beside_dp, reconstruct

__all__ = ["run"]

_NONE, _RECONSTRUCTED = 0, 1


def run(args: argparse.Namespace, command: str) -> int:
    """Run ``anonaudit reconstruct`` (:func:`anonaudit.cli.app.main` handles errors)."""
    del command
    outputs = [("--json", args.json)]
    refuse_overwriting(outputs, [*args.tables, *([args.config] if args.config else [])])
    refuse_folders(outputs)
    tables = read_tables(args.tables, reading_options(args))
    try:
        result = reconstruct(
            tables,
            group=args.group,
            sensitive=args.sensitive,
            count_budget=args.count_budget,
            draws=args.draws,
            seed=args.seed,
            workers=args.workers,
            class_table=bool(_settings(args)[0].get("class_table")),
        )
        dp = _beside_dp(args, tables, result)
    except OptionError as error:
        raise ParameterError(error.worded("--" + error.option.replace("_", "-"))) from None
    show = bool(args.show_values)
    if args.json == "-":
        sys.stdout.write(reconstruct_json(result, show_values=show, dp=dp))
    else:
        if args.json:
            atomic_write_text(args.json, reconstruct_json(result, show_values=show, dp=dp))
        document = reconstruct_to_dict(result, show_values=show, dp=dp)
        sys.stdout.write(reconstruct_summary(document))
    return _RECONSTRUCTED if result.reconstructed else _NONE


def _beside_dp(
    args: argparse.Namespace, tables: TableSet, result: Reconstruction
) -> BesideDP | None:
    """With ``--dp-epsilon``: the tables released under DP (OpenDP's secure noise) and
    reconstructed beside the exact ones."""
    settings, _, _ = _settings(args)
    epsilon = settings.get("dp_epsilon")
    if epsilon is None:
        for key in ("dp_delta", "dp_mechanism", "dp_confidence"):
            if settings.get(key) is not None:
                flag = "--" + key.replace("_", "-")
                raise ParameterError(f"{flag} describes the DP release of --dp-epsilon E")
        return None
    try:
        return beside_dp(
            tables,
            result,
            epsilon=float(epsilon),
            delta=float(settings.get("dp_delta") or 0.0),
            mechanism=settings.get("dp_mechanism") or "discrete-laplace",
            confidence=float(settings.get("dp_confidence") or 0.99),
            workers=args.workers,
        )
    except ParameterError as error:
        raise ParameterError(f"--dp-epsilon: {error}") from None
