"""The command line: argument parsing and exit codes, nothing else.

Exit status: 0 every threshold met (or none set, or ``--exit-zero``); 1 a threshold
violated; 2 a usage or input error, reported as one line on stderr (a traceback only
with ``--debug``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anonaudit import __version__
from anonaudit.audit import audit
from anonaudit.checks import DISTANCES
from anonaudit.config import AuditConfig, read_config
from anonaudit.engines.local import Progress
from anonaudit.errors import AnonauditError, ParameterError
from anonaudit.report.json import dumps, report_to_dict
from anonaudit.report.text import summary
from anonaudit.util import atomic_write_text

__all__ = ["main"]

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 already; keep it one line
        self.exit(EXIT_ERROR, f"anonaudit: error: {message} (see --help)\n")


def _columns(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _assignments(items: Sequence[str], option: str) -> dict[str, str]:
    result = {}
    for item in items:
        column, eq, value = item.partition("=")
        if not eq or not column or not value:
            raise ParameterError(f"{option} takes COLUMN=VALUE (got {item!r})")
        result[column.strip()] = value.strip()
    return result


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="anonaudit", description="Audit tabular data for re-identification risk.")
    parser.add_argument("--version", action="version", version=f"anonaudit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    a = commands.add_parser(
        "audit",
        help="measure k-anonymity, l-diversity, t-closeness, disclosure and risk",
        description="Measure every syntactic anonymity measure of INPUT files and judge "
        "them against thresholds. Exit 0: all met; 1: a threshold violated; 2: error.",
    )
    a.add_argument("inputs", nargs="*", metavar="INPUT", help="CSV or Parquet files")
    a.add_argument(
        "--qi",
        action="append",
        default=[],
        metavar="COLS",
        help="quasi-identifier columns, comma-separated (repeatable)",
    )
    a.add_argument(
        "--sensitive",
        action="append",
        default=[],
        metavar="COLS",
        help="sensitive columns, comma-separated (repeatable)",
    )
    g = a.add_argument_group("thresholds")
    g.add_argument("-k", type=int, help="smallest class size (k-anonymity)")
    g.add_argument("-l", type=int, help="distinct sensitive values per class (l-diversity)")
    g.add_argument("--entropy-l", type=float, help="entropy l-diversity")
    g.add_argument("--recursive", metavar="C,L", help="recursive (c,l)-diversity")
    g.add_argument("-t", type=float, help="t-closeness: largest EMD between class and table")
    g.add_argument("--alpha", type=float, help="largest share of one value in a class")
    g.add_argument("--beta", type=float, help="basic beta-likeness")
    g.add_argument("--delta", type=float, help="delta-disclosure privacy")
    g.add_argument("--max-risk", type=float, help="largest prosecutor risk of a record")
    m = a.add_argument_group("measures")
    m.add_argument(
        "--t-distance",
        metavar="DIST|COL=DIST,...",
        help=f"EMD ground distance: {', '.join(DISTANCES)} (default equal)",
    )
    m.add_argument(
        "--hierarchy",
        action="append",
        default=[],
        metavar="COL=FILE",
        help="ARX hierarchy file for an SA (implies hierarchical distance)",
    )
    m.add_argument(
        "--order",
        action="append",
        default=[],
        metavar="COL=V1,V2,...|COL=@FILE",
        help="order of an SA's values for the ordered distance",
    )
    m.add_argument(
        "--ground-distance",
        action="append",
        default=[],
        metavar="COL=FILE",
        help="ground-distance matrix CSV for an SA (implies matrix distance)",
    )
    m.add_argument("--risk-threshold", type=float, help="risk above which a record is at risk")
    m.add_argument(
        "--nulls",
        choices=("value", "drop"),
        help="null QI values: a value of their own (default) or drop the records",
    )
    r = a.add_argument_group("input and output")
    r.add_argument("--sep", help="CSV separator (sniffed when omitted)")
    r.add_argument("--encoding", help="CSV encoding (default utf-8)")
    r.add_argument(
        "--na",
        action="append",
        metavar="TEXT",
        help="cell text read as null (repeatable; default: only the empty cell)",
    )
    r.add_argument("--json", metavar="PATH|-", help="write the JSON report; - for stdout")
    r.add_argument("--max-classes", type=int, help="violating classes listed per measure")
    r.add_argument("--config", metavar="FILE", help="TOML policy file; options override it")
    r.add_argument("--exit-zero", action="store_true", help="exit 0 even when a threshold fails")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _config(args: argparse.Namespace) -> AuditConfig:
    config = read_config(args.config) if args.config else AuditConfig()
    if args.inputs:
        config.inputs = list(args.inputs)
    if args.qi:
        config.quasi_identifiers = [c for item in args.qi for c in _columns(item)]
    if args.sensitive:
        config.sensitive = [c for item in args.sensitive for c in _columns(item)]
    for name in ("k", "l", "entropy_l", "t", "alpha", "beta", "delta", "max_risk"):
        if getattr(args, name) is not None:
            config.thresholds[name] = getattr(args, name)
    if args.recursive:
        c, _, l = args.recursive.partition(",")
        try:
            config.thresholds["recursive"] = (float(c), int(l))
        except ValueError:
            raise ParameterError(
                f"--recursive takes C,L such as 3,2 (got {args.recursive!r})"
            ) from None
    if args.t_distance:
        if "=" in args.t_distance:
            config.t_distance = _assignments(args.t_distance.split(","), "--t-distance")
        else:
            config.t_distance = args.t_distance
    config.hierarchy.update(_assignments(args.hierarchy, "--hierarchy"))
    config.ground_distance.update(_assignments(args.ground_distance, "--ground-distance"))
    for column, value in _assignments(args.order, "--order").items():
        if value.startswith("@"):
            lines = Path(value[1:]).read_text(encoding="utf-8").splitlines()
            config.order[column] = [line.strip() for line in lines if line.strip()]
        else:
            config.order[column] = _columns(value)
    for name in ("nulls", "sep", "encoding", "risk_threshold", "json", "max_classes"):
        if getattr(args, name) is not None:
            setattr(config, name, getattr(args, name))
    if args.na is not None:
        config.na_values = list(args.na)
    _validate(config)
    return config


def _validate(config: AuditConfig) -> None:
    if not config.inputs:
        raise ParameterError("name at least one INPUT file (or inputs in --config)")
    if not config.quasi_identifiers:
        raise ParameterError("name the quasi-identifiers with --qi COL1,COL2,...")
    distances = (
        [config.t_distance]
        if isinstance(config.t_distance, str)
        else list((config.t_distance or {}).values())
    )
    for distance in distances:
        if distance not in DISTANCES:
            raise ParameterError(
                f"unknown --t-distance {distance!r}; choose one of {', '.join(DISTANCES)}"
            )
    k = config.thresholds.get("k")
    if k is not None and k < 1:
        raise ParameterError(f"-k must be at least 1 (got {k})")
    t = config.thresholds.get("t")
    if t is not None and not 0 <= t <= 1:
        raise ParameterError(f"-t must lie between 0 and 1 (got {t})")
    if config.max_classes < 0:
        raise ParameterError("--max-classes must be >= 0 (0 lists every class)")


def _run_audit(args: argparse.Namespace) -> int:
    config = _config(args)
    report = audit(
        config.inputs,
        quasi_identifiers=config.quasi_identifiers,
        sensitive=config.sensitive,
        policy=config.policy(),
        distance=config.t_distance,
        hierarchies=config.hierarchy,
        orders=config.order,
        ground_distances=config.ground_distance,
        nulls="drop" if config.nulls == "drop" else "value",
        risk_threshold=config.risk_threshold,
        sep=config.sep,
        encoding=config.encoding,
        na_values=config.na_values,
        progress=None if args.quiet else Progress(sys.stderr),
    )
    limit = None if config.max_classes == 0 else config.max_classes
    if config.json == "-":
        print(dumps(report_to_dict(report, max_classes=limit)))
    else:
        if config.json:
            atomic_write_text(Path(config.json), dumps(report_to_dict(report, max_classes=limit)))
        print(summary(report))
    if report.passed is False and not args.exit_zero:
        return EXIT_VIOLATION
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version, usage errors: argparse already printed
        return int(exit_.code or 0)
    try:
        return _run_audit(args)
    except (AnonauditError, OSError) as exc:
        if args.debug:
            raise
        print(f"anonaudit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("anonaudit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
