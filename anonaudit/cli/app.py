"""The command line: argument parsing and exit codes, nothing else.

Exit status: 0 every threshold met (or none set, or ``--exit-zero``); 1 a threshold
violated; 2 a usage or input error, reported as one line on stderr (a traceback only
with ``--debug``); 3 an internal error (a bug), one line naming the file the traceback
was written to.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import importlib
import logging
import os
import re
import shlex
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from anonaudit import __version__
from anonaudit.errors import AnonauditError, ParameterError
from anonaudit.files import printable
from anonaudit.settings.catalog import DP_OPTIONS, GROUPS, OPTIONS, TABLES_OPTIONS, Option, dp_flag
from anonaudit.settings.names import (
    ADDITIVE,
    DISTANCE_INPUTS,
    NEIGHBOURING,
    SIDECAR_SUFFIX,
)
from anonaudit.settings.policy import threshold_fields

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_VIOLATION",
    "assignments",
    "columns",
    "levels",
    "main",
]

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
#: The status of a process killed by SIGPIPE (128 + 13), what ``cat`` or ``grep`` give.
EXIT_BROKEN_PIPE = 141
#: Where each command runs, imported only when it is asked for: building the parser
#: imports nothing heavy, so --help and --version start at once.
COMMANDS = {
    "audit": "anonaudit.cli.commands:run_audit",
    "advise": "anonaudit.cli.commands:run_advise",
    "dp": "anonaudit.cli.commands:run_dp",
    "compose": "anonaudit.cli.linkage:run",
    "diff": "anonaudit.cli.linkage:run",
    "ledger": "anonaudit.cli.linkage:run",
    "tables": "anonaudit.cli.tables:run",
    "reconstruct": "anonaudit.cli.reconstruct:run",
}


def levels(texts: Sequence[str]) -> dict[str, int]:
    """``--generalize`` values (``age=2,zip=1``, or ``age=2 zip=1`` as ``advise`` prints
    them) as a level per column, refusing a level that is not a whole number.

    >>> levels(["age=2,zip=1", "sex=1"])
    {'age': 2, 'zip': 1, 'sex': 1}
    """
    items = [item for text in texts for item in text.replace(",", " ").split()]
    result = {}
    for column, level in assignments(items, "--generalize", "COL").items():
        if not re.fullmatch("[0-9]+", level):
            raise ParameterError(
                f"--generalize {column}={level}: the level must be a whole number such as 2"
            )
        result[column] = int(level)
    return result


class _Parser(argparse.ArgumentParser):
    """The parser of every command: options are matched whole (``--sa`` is refused, not
    taken for ``--sampling-fraction``), and an error is one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse exits 2 already; keep it one line
        self.exit(EXIT_ERROR, f"anonaudit: error: {message} (see --help)\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """Write ``message`` (help, version, usage) and let a failed write raise: argparse
        ignores it, and ``anonaudit --version > /dev/full`` exited 0."""
        stream = file or sys.stderr
        if message and stream is not None:  # no stderr at all (pythonw): nothing to write to
            stream.write(message)


def columns(text: str) -> list[str]:
    """The column names of a comma-separated option value."""
    return [name.strip() for name in text.split(",") if name.strip()]


def assignments(items: Sequence[str], option: str, key: str = "COLUMN") -> dict[str, str]:
    """``COLUMN=VALUE`` option values as a mapping, refusing any other form."""
    result = {}
    for item in items:
        column, eq, value = item.partition("=")
        if not eq or not column or not value:
            raise ParameterError(f"{option} takes {key}=VALUE (got {item!r})")
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
    _addcolumns(a)
    _add_thresholds(a.add_argument_group("thresholds"))
    groups = _add_declared(a, "audit")
    for each in DISTANCE_INPUTS:
        groups["measures"].add_argument(
            each.flag, action="append", default=[], metavar=each.metavar, help=each.help
        )
    _add_dp_options(
        a.add_argument_group("differential privacy (see: anonaudit dp --help)"), "audit"
    )
    r = groups["input and output"]
    r.add_argument(
        "--id",
        metavar="COL",
        help="the office's record id column: --records-out writes it first; --ledger keeps "
        "it with the release, to compose later releases with this one",
    )
    r.add_argument("--config", metavar="FILE", help="TOML policy file; options override it")
    r.add_argument("--exit-zero", action="store_true", help="exit 0 even when a threshold fails")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    _add_ledger_options(
        a.add_argument_group("release ledger"),
        ledger="check the release against the earlier releases of --dataset in this ledger "
        "(differencing; composition with --id) and record it if the audit passes (SQLite)",
    )
    _add_dp_command(commands)
    _add_advise_command(commands, a)
    _add_linkage_commands(commands)
    _add_tables_command(commands)
    _add_reconstruct_command(commands)
    return parser


def _add_thresholds(group: argparse._ArgumentGroup) -> None:
    """The policy's thresholds, shared by ``audit`` and ``advise``."""
    for threshold in threshold_fields():
        flag, kind, text = (threshold.metadata[key] for key in ("flag", "kind", "help"))
        if kind == "pair":
            group.add_argument(flag, metavar="C,L", help=text)
        else:
            group.add_argument(flag, type=int if kind == "whole" else float, help=text)


def _addcolumns(parser: argparse.ArgumentParser) -> None:
    """INPUT files and column roles, shared by the subcommands."""
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="CSV or Parquet files, directories, globs, s3:// (or other fsspec) URLs, Delta tables",
    )
    parser.add_argument(
        "--qi",
        action="append",
        default=[],
        metavar="COLS",
        help="quasi-identifier columns, comma-separated (repeatable)",
    )
    parser.add_argument(
        "--sensitive",
        action="append",
        default=[],
        metavar="COLS",
        help="sensitive columns, comma-separated (repeatable)",
    )


def _add_declared(
    parser: argparse.ArgumentParser, command: str
) -> dict[str, argparse._ArgumentGroup]:
    """The options of ``command`` declared in :data:`~anonaudit.settings.catalog.OPTIONS`,
    each in its group (made here, in :data:`~anonaudit.settings.catalog.GROUPS` order),
    its value stored under its key; returns the groups, by name."""
    groups = {name: parser.add_argument_group(name) for name in GROUPS}
    exclusive: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for option in OPTIONS:
        if option.flag is None or command not in option.commands:
            continue
        group: argparse._ArgumentGroup = groups[option.group]
        if option.replaces is not None:  # one of two: the second joins the first's group
            if option.replaces not in exclusive:
                exclusive[option.key] = group.add_mutually_exclusive_group()
            group = exclusive.get(option.replaces) or exclusive[option.key]
        group.add_argument(option.flag, **_argument(option, command))
        if option.kind == "show":  # the older spellings, --redact and --no-redact
            group.add_argument(
                "--redact",
                dest=option.key,
                action=argparse.BooleanOptionalAction,
                help=argparse.SUPPRESS,
            )
    return groups


def _argument(option: Option, command: str) -> dict[str, Any]:
    """How argparse reads ``option`` (:data:`~anonaudit.settings.catalog.Kind`): a
    value, a flag, or a repeated option, stored under the option's key; ``None`` when
    the command line does not give it."""
    argument: dict[str, Any] = {"dest": option.key, "help": option.help_for(command)}
    if option.metavar is not None:
        argument["metavar"] = option.metavar
    if option.choices is not None:
        argument["choices"] = option.choices
    kind = option.kind
    if kind == "whole":
        argument["type"] = int
    elif kind == "number":
        argument["type"] = float
    elif kind == "boolean":
        argument.update(action="store_true", default=None)
    elif kind == "show":
        argument.update(action="store_false", default=None)
    elif kind == "size":
        argument.update(nargs="?", const=True, type=int)
    elif kind in ("texts", "columns", "mapping", "paths", "levels"):
        argument["action"] = "append"
    return argument


def _add_dp_command(commands: Any) -> None:
    d = commands.add_parser(
        "dp",
        help="release the class table under differential privacy, beside the audit",
        description="Release the class table of INPUT under (epsilon, delta)-differential "
        "privacy and contrast it with what the syntactic release lets an attacker learn. "
        "--out writes what may be published; --json and the figures printed under 'Internal' "
        "are computed from the exact data and are not for publication. Warnings (a nearly "
        "empty release, epsilon above 2, delta at or above 1/n) go to stderr. "
        "Exit 0: released; 2: error (including a release that would not be private).",
    )
    _addcolumns(d)
    _add_dp_options(d.add_argument_group("privacy"), "dp")
    r = _add_declared(d, "dp")["input and output"]
    r.add_argument(
        "--out",
        metavar="PATH",
        help="write the publishable release: the released class table as CSV, and beside it "
        f"PATH with suffix {SIDECAR_SUFFIX} (how it was made; public facts only)",
    )
    r.add_argument(
        "--json",
        metavar="PATH|-",
        help="write the JSON report, publishable 'release' and 'internal' parts; - for stdout",
    )
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    ledger = d.add_argument_group("release ledger")
    _add_ledger_options(ledger)
    ledger.add_argument(
        "--budget",
        metavar="EPS[,DELTA]",
        help="with --ledger: the dataset's privacy budget; stored in the ledger the first "
        "time, after which it bounds every release of the dataset (raise it with "
        "anonaudit ledger FILE budget)",
    )


def _add_advise_command(commands: Any, audit: argparse.ArgumentParser) -> None:
    v = commands.add_parser(
        "advise",
        help="search the generalization lattice for the least loss that passes the policy",
        description="Search every combination of hierarchy levels of the QIs (with a "
        "suppression limit) and list the Pareto-best transformations that pass the policy, "
        "with their information loss; --out writes one. The input is never modified. "
        "Exit 0: a transformation passes; 1: none does; 2: error.",
    )
    _addcolumns(v)
    _add_thresholds(v.add_argument_group("thresholds"))
    for each in DISTANCE_INPUTS:
        v.add_argument(each.flag, action="append", default=[], metavar=each.metavar)
    r = _add_declared(v, "advise")["input and output"]
    r.add_argument(
        "--out",
        metavar="PATH",
        help="write the data transformed by the chosen transformation (CSV, or Parquet "
        "for .parquet); suppressed records show * in every QI",
    )
    r.add_argument(
        "--choose", type=int, metavar="N", help="with --out: the N-th listed (default 1)"
    )
    r.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="COLS",
        help="with --out: also write these columns, neither QI nor sensitive (repeatable); "
        "the others are left out, as they may identify people directly",
    )
    r.add_argument("--config", metavar="FILE", help="TOML policy file; options override it")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    # The audit's other settings keep their defaults, so the policy file is read alike.
    own = vars(v.parse_known_args([])[0])
    v.set_defaults(
        **{k: val for k, val in vars(audit.parse_known_args([])[0]).items() if k not in own}
    )


def _add_dp_options(group: argparse._ArgumentGroup, command: str) -> None:
    """Add the DP companion's options of ``command`` to ``group``
    (:data:`~anonaudit.settings.catalog.DP_OPTIONS`), each stored as ``dp_<key>``;
    ``anonaudit dp`` requires ``--epsilon``."""
    for option in DP_OPTIONS:
        if command in option.commands:
            argument = _argument(option, command)
            argument["dest"] = f"dp_{option.key}"
            if option.key == "epsilon":
                argument["required"] = command == "dp"
            group.add_argument(dp_flag(option, command), **argument)


def _add_tables_command(commands: Any) -> None:
    """Add ``tables`` (:data:`~anonaudit.settings.catalog.TABLES_OPTIONS`)."""
    t = commands.add_parser(
        "tables",
        help="audit published tables (counts, sums, suppressed cells) jointly",
        description="Audit aggregate tables as a statistical office would: the primary "
        "rules on every cell (threshold, dominance, p%, singletons, group attributes), "
        "then what an attacker proves of every suppressed cell from every published cell "
        "of every table of the same population together, each finding with a certificate "
        "in published cells. Reports are redacted unless --show-values. Exit 0: the "
        "tables may go out as they are; 1: they disclose; 2: error.",
    )
    _add_published(t, "tables")


def _add_reconstruct_command(commands: Any) -> None:
    """Add ``reconstruct``: the tables read as ``tables`` reads them."""
    r = commands.add_parser(
        "reconstruct",
        help="how many records published count tables give back, proved",
        description="Rebuild the records behind published count tables, group by group "
        "(a block, a ward: --group), as the US Census Bureau rebuilt its 2010 census from "
        "its tables: the cells of the full cross-classification that every table "
        "consistent with the published cells forces to one value, the groups all of whose "
        "records are given back (proved), the records unique in the reconstruction, and "
        "each rate beside a reconstruction drawn at random from the margins. Reports are "
        "redacted unless --show-values. Exit 0: nobody given back; 1: a group reconstructed, "
        "a record unique in the reconstruction or a sensitive value known; 2: error.",
    )
    g = r.add_argument_group("reconstruction")
    g.add_argument(
        "--group",
        metavar="DIM",
        help="the dimension every table is split by (a block): each of its codes is "
        "solved alone (default: all the tables as one group)",
    )
    g.add_argument(
        "--sensitive",
        metavar="DIM",
        help="also count the records whose DIM is known from the others",
    )
    g.add_argument(
        "--count-budget",
        type=int,
        default=20_000,
        metavar="N",
        help="count a group's possible tables (posterior per record) when at most N "
        "partial tables are visited (default 20,000; 0: never)",
    )
    g.add_argument(
        "--draws",
        type=int,
        default=20,
        metavar="N",
        help="random reconstructions per group for the chance baseline (default 20)",
    )
    g.add_argument("--seed", type=int, default=0, metavar="N", help="the baseline's seed (0)")
    g.add_argument(
        "--workers", type=int, default=1, metavar="N", help="processes solving groups (1)"
    )
    _add_published(r, "reconstruct")


def _add_published(parser: argparse.ArgumentParser, command: str) -> None:
    """The published tables of ``command``, how they are read and its rules (the
    options of :data:`~anonaudit.settings.catalog.TABLES_OPTIONS` it takes), and the
    reports."""
    parser.add_argument("tables", nargs="+", metavar="TABLE", help="the tables (CSV files)")
    options = [o for o in TABLES_OPTIONS if command in o.commands]
    headings = {"measures": "rules"}  # the others' groups are their headings
    groups = {
        name: parser.add_argument_group(headings.get(name, name))
        for name in GROUPS
        if any(o.group == name for o in options) or name == "input and output"
    }
    for option in options:
        groups[option.group].add_argument(option.flag or option.key, **_argument(option, command))
    io = groups["input and output"]
    io.add_argument("--sep", metavar="SEP", help="the files' separator (default: found)")
    io.add_argument("--encoding", metavar="NAME", help="the files' encoding (default utf-8)")
    io.add_argument("--json", metavar="FILE", help="write the JSON report ('-': stdout)")
    io.add_argument("--html", metavar="FILE", help="write the HTML report (one page)")
    io.add_argument("--show-values", action="store_true", help="print the values in the reports")
    io.add_argument("--config", metavar="FILE", help="TOML policy file: its [tables] table")
    io.add_argument("--debug", action="store_true", help="show tracebacks")


def _add_linkage_commands(commands: Any) -> None:
    """Add ``compose``, ``diff`` and ``ledger`` to the CLI's subparsers."""
    c = commands.add_parser(
        "compose",
        help="composition (intersection) attack across releases of overlapping records",
        description="Join RELEASE files on the office's record id and find, for every record "
        "in several releases, the sensitive values consistent with all its classes and the "
        "attacker's posterior (Ganta, Kasiviswanathan & Smith 2008); beside it, what the same "
        "releases made with differential privacy would allow. With --generalize, the releases "
        "are generalizations of one INPUT instead (what if both were published?). Exit 0: "
        "done; 1: a value disclosed with --fail-on-disclosure; 2: error.",
    )
    c.add_argument(
        "releases",
        nargs="+",
        metavar="RELEASE",
        help="release files (CSV, Parquet); with --generalize, the one INPUT they are made of",
    )
    c.add_argument("--id", required=True, metavar="COL", help="the office's record id column")
    _add_linkage_roles(c)
    t = c.add_argument_group("releases made of one input")
    for flag, metavar, text in (
        (
            "--generalize",
            "COL=LEVEL,...",
            "one release: INPUT with these QIs generalized to these levels of their "
            "--hierarchy (repeat: one release each, at least two; levels as advise prints them)",
        ),
        (
            "--hierarchy",
            "COL=FILE|SPEC",
            "hierarchy of a QI to generalize: ARX file, interval:W1,W2,... or prefix[:N]",
        ),
    ):
        t.add_argument(flag, action="append", default=[], metavar=metavar, help=text)
    d = c.add_argument_group("differential privacy counterpart")
    d.add_argument(
        "--dp-epsilon", type=float, default=1.0, metavar="E", help="epsilon of each release (1)"
    )
    d.add_argument("--dp-delta", type=float, default=0.0, metavar="D", help="delta of each (0)")
    d.add_argument("--dp-mechanism", choices=ADDITIVE, default="discrete-laplace")
    _add_linkage_outputs(c)

    f = commands.add_parser(
        "diff",
        help="differencing attack between two successive releases",
        description="Compare the class tables of OLD and NEW class by class: a class whose "
        "sensitive-value histogram changed in exactly one value discloses that value for "
        "every record added or removed. Exit 0: done; 1: a value disclosed with "
        "--fail-on-disclosure; 2: error.",
    )
    f.add_argument("old", metavar="OLD", help="the earlier release")
    f.add_argument("new", metavar="NEW", help="the later release")
    _add_linkage_roles(f)
    f.add_argument(
        "--max-classes",
        type=int,
        default=100,
        metavar="N",
        help="disclosing classes listed (default 100; 0: all)",
    )
    f.add_argument(
        "--show-values",
        dest="redact",
        action="store_false",
        default=None,
        help="show the quasi-identifier values of the classes listed in the reports and the "
        "summary (the value each discloses stays; default: redacted)",
    )
    f.add_argument("--redact", action=argparse.BooleanOptionalAction, help=argparse.SUPPRESS)
    _add_linkage_outputs(f)

    g = commands.add_parser(
        "ledger",
        help="list the releases recorded in a release ledger and what they spent",
        description="List the releases of a ledger (written by --ledger) and the privacy "
        "spent per dataset, composed sequentially. The ledger is internal: do not publish it.",
    )
    g.add_argument("file", metavar="FILE", help="the ledger (SQLite)")
    g.add_argument("--dataset", metavar="NAME", help="only this dataset's releases")
    g.add_argument("--recipient", metavar="NAME", help="only the releases to this recipient")
    g.add_argument("--json", metavar="PATH|-", help="write the listing as JSON; - for stdout")
    g.add_argument("--debug", action="store_true", help="show tracebacks")
    actions = g.add_subparsers(
        dest="action",
        metavar="ACTION",
        parser_class=_Parser,
        help="none: list the releases; retire, budget: see anonaudit ledger FILE ACTION --help",
    )
    retire = actions.add_parser(
        "retire",
        help="retire a release recorded by mistake: kept, but no later audit attacks with it",
        description="Retire RELEASE of DATASET: the ledger keeps it, with the time and "
        "--reason, and lists it as retired; later audits leave it out of composition and "
        "differencing (its privacy cost still counts). Exit 0: retired; 2: error.",
    )
    retire.add_argument("retire_dataset", metavar="DATASET", help="the release's dataset")
    retire.add_argument("release", type=int, metavar="RELEASE", help="its number (#N)")
    retire.add_argument("--reason", required=True, metavar="TEXT", help="why it is retired")
    retire.add_argument("--debug", action="store_true", help="show tracebacks")
    budget = actions.add_parser(
        "budget",
        help="set a dataset's privacy budget (the first time, or to raise or lower it)",
        description="Set the privacy budget of DATASET: every later DP release of it "
        "(anonaudit dp --ledger) must fit, composed with those recorded. The ledger keeps "
        "every budget set, with the time and --reason, and lists them. A budget below "
        "what the dataset's releases spent is refused. Exit 0: set; 2: error.",
    )
    budget.add_argument("budget_dataset", metavar="DATASET", help="the dataset")
    budget.add_argument(
        "--set", required=True, metavar="EPS[,DELTA]", help="the total epsilon (and delta)"
    )
    budget.add_argument(
        "--relation",
        choices=NEIGHBOURING,
        help="the neighbouring relation the budget is stated for (default: the budget's "
        "stored one, else add-remove); releases under another are converted where a "
        "sound conversion exists and count as infinite where none does",
    )
    budget.add_argument(
        "--unit",
        metavar="COLUMN|record",
        help="the privacy unit it is stated for: the column naming a person, or record "
        "(default: the stored one, else record)",
    )
    budget.add_argument("--reason", required=True, metavar="TEXT", help="why it is set")
    budget.add_argument("--debug", action="store_true", help="show tracebacks")


def _add_linkage_roles(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qi", action="append", default=[], metavar="COLS", help="QI columns")
    parser.add_argument(
        "--sensitive", action="append", default=[], metavar="COLS", help="sensitive columns"
    )
    r = parser.add_argument_group("reading")
    r.add_argument("--sep", help="CSV separator (sniffed when omitted)")
    r.add_argument("--encoding", default="utf-8", help="CSV encoding (default utf-8)")
    r.add_argument("--na", action="append", metavar="TEXT", help="cell text read as null")


def _add_linkage_outputs(parser: argparse.ArgumentParser) -> None:
    o = parser.add_argument_group("output")
    o.add_argument("--json", metavar="PATH|-", help="write the JSON report; - for stdout")
    o.add_argument("--html", metavar="PATH", help="write the HTML report (one self-contained file)")
    o.add_argument(
        "--fail-on-disclosure", action="store_true", help="exit 1 when a value is disclosed"
    )
    _add_ledger_options(o)
    o.add_argument("--quiet", action="store_true", help="print nothing but errors")
    o.add_argument("--debug", action="store_true", help="show tracebacks")


def _add_ledger_options(
    group: argparse._ArgumentGroup,
    ledger: str = "record the release(s) in this ledger (SQLite)",
) -> None:
    """``--ledger`` (its help ``ledger``), ``--recipient`` and ``--dataset``, as every
    command that records releases takes them."""
    group.add_argument("--ledger", metavar="FILE", help=ledger)
    group.add_argument("--recipient", metavar="NAME", help="who receives the release (ledger)")
    group.add_argument(
        "--dataset",
        metavar="NAME",
        help="the data the release comes from: its releases are checked against each other "
        "(required with --ledger)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version, usage errors: argparse already printed
        return int(exit_.code or 0)
    except BrokenPipeError:  # --help | head
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # --help or --version written to a full disk
        with contextlib.suppress(OSError):
            print(f"anonaudit: error: cannot write the output: {exc}", file=sys.stderr)
        return EXIT_ERROR
    command = shlex.join(["anonaudit", *(sys.argv[1:] if argv is None else argv)])
    try:
        module, name = COMMANDS[args.command].split(":")
        run: Callable[[argparse.Namespace, str], int]
        run = getattr(importlib.import_module(module), name)
        # A context of its own: what the command puts in force (its memory limit) ends
        # with it, however many commands a process runs.
        return contextvars.copy_context().run(run, args, command)
    except BrokenPipeError:  # the reader left (| head): stop quietly, as Unix tools do
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (AnonauditError, OSError) as exc:
        if args.debug:
            raise
        # Control characters of a name echoed in the message are escaped, and a
        # message swollen by a huge name is shortened (its start and end kept).
        print(f"anonaudit: error: {printable(str(exc), limit=2000)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("anonaudit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: never exit 1, which means "policy violated"
        if args.debug:
            raise
        print(f"anonaudit: internal error: {_internal(exc)}", file=sys.stderr)
        return EXIT_INTERNAL


def entry(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``anonaudit`` command: :func:`main`, its output flushed, then the process ends
    with main's exit status and without Python's finalization.

    Every output is written (atomically) and closed by then; what finalization would do
    is join native threads. One of them, a pyarrow CSV reader's read-ahead left running
    when the reader stops early (a sample of the first records), may end during
    finalization and then needs the interpreter being torn down: the process aborted,
    ``terminate called without an active exception``, exit status 134, after a passing
    audit had printed its verdict (7 runs in 200 on a loaded two-core machine; found by
    the helper's trial, traced in the core dump). :func:`main` itself returns, for
    callers in a process of their own.
    """
    code = main(argv)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader left (| head): as main says it
            code = code or EXIT_BROKEN_PIPE
        except (OSError, ValueError) as exc:  # a full disk behind a redirection
            code = code or EXIT_ERROR
            with contextlib.suppress(OSError, ValueError):
                os.write(2, f"anonaudit: error: cannot write the output: {exc}\n".encode())
    os._exit(code)


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's final flush of what is
    left in its buffer does not raise :class:`BrokenPipeError` again on exit (the recipe
    of the Python documentation, "Note on SIGPIPE" in :mod:`signal`)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def _internal(exc: Exception) -> str:
    """One line on an unexpected exception, its traceback saved to a temporary file."""
    text = str(exc).strip()
    what = type(exc).__name__ + (f": {text.splitlines()[0]}" if text else "")
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="anonaudit-traceback-", suffix=".txt", delete=False, encoding="utf-8"
        ) as stream:
            traceback.print_exception(exc, file=stream)
    except OSError as error:
        return f"{what} (traceback not written: {error.strerror}; rerun with --debug)"
    return f"{what} (traceback written to {stream.name}; please report it)"


if __name__ == "__main__":  # pragma: no cover
    entry()
