"""The command line: argument parsing and exit codes, nothing else.

Exit status: 0 every threshold met (or none set, or ``--exit-zero``); 1 a threshold
violated; 2 a usage or input error, reported as one line on stderr (a traceback only
with ``--debug``); 3 an internal error (a bug), one line naming the file the traceback
was written to.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shlex
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from anonaudit import __version__
from anonaudit.errors import AnonauditError, ParameterError
from anonaudit.files import printable
from anonaudit.settings.names import (
    ADDITIVE,
    DISTANCE_INPUTS,
    DISTANCES,
    FORMATS,
    MECHANISMS,
    MISSING_COLUMNS,
    NEIGHBOURING,
    NULL_POLICIES,
    POPULATION_MODELS,
    POSTPROCESS,
    SIDECAR_SUFFIX,
)
from anonaudit.settings.policy import threshold_fields
from anonaudit.settings.work import DEFAULT_MAX_WORK

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
        metavar="COL=FILE|SPEC",
        help="ARX hierarchy file for an SA (implies hierarchical distance) or a QI; "
        "for a QI also interval:W1,W2,... (numeric bands) or prefix[:N] (ZIP truncation)",
    )
    m.add_argument(
        "--generalize",
        action="append",
        default=[],
        metavar="COL=LEVEL,...",
        help="audit the data generalized to these levels of the QIs' --hierarchy",
    )
    m.add_argument(
        "--advise",
        action="store_true",
        default=None,
        help="add the least generalizations (of the QIs' --hierarchy) and suppression "
        "that pass the policy, as anonaudit advise finds them",
    )
    m.add_argument(
        "--suppression-limit",
        type=float,
        metavar="F",
        help="with --advise: largest share of records that may be suppressed, in [0, 1) "
        "(default 0)",
    )
    for each in DISTANCE_INPUTS:
        m.add_argument(each.flag, action="append", default=[], metavar=each.metavar, help=each.help)
    m.add_argument("--risk-threshold", type=float, help="risk above which a record is at risk")
    population = m.add_mutually_exclusive_group()
    population.add_argument(
        "--population-size",
        type=float,
        metavar="N",
        help="people in the population the data was sampled from (adds population risk)",
    )
    population.add_argument(
        "--sampling-fraction",
        type=float,
        metavar="F",
        help="share of the population in the data, in (0, 1] (adds population risk)",
    )
    m.add_argument(
        "--population-model",
        choices=POPULATION_MODELS,
        help="population uniqueness estimate (default dankar: Dankar et al.'s rule)",
    )
    m.add_argument(
        "--population",
        metavar="FILE",
        help="the attacker's identified table (voter list, census extract) with the QIs in "
        "the release's coding: adds k-map, delta-presence and unique matches",
    )
    m.add_argument(
        "--k-map",
        type=int,
        metavar="K",
        help="with --population: every class must match at least K of its records",
    )
    m.add_argument(
        "--qi-analysis",
        nargs="?",
        const=True,
        type=int,
        metavar="MAX_SUBSET_SIZE",
        help="which columns identify: distinction and separation of every QI subset up to "
        "this size (default: all subsets up to 10 QIs, else 3), and k without each QI",
    )
    m.add_argument(
        "--suda",
        nargs="?",
        const=True,
        type=int,
        metavar="MAX_MSU_SIZE",
        help="minimal sample uniques up to this size and SUDA / DIS-SUDA scores "
        "(default: all sizes up to 10 QIs, else 3)",
    )
    m.add_argument(
        "--max-work",
        type=int,
        metavar="N",
        help="refuse, before it starts, a QI analysis, SUDA, non-monotone advice search or "
        f"full listing estimated above N units of work (default {DEFAULT_MAX_WORK:,}; "
        "0: no limit)",
    )
    m.add_argument(
        "--nulls",
        choices=NULL_POLICIES,
        help="null QI values: a value of their own (default), drop the records, or "
        "wildcard: a null matches any value when counting class sizes (sdcMicro)",
    )
    _add_allow_identifier(m)
    m.add_argument(
        "--weights",
        metavar="COL",
        help="survey weight column: adds sdcMicro's individual and global risk, with "
        "Fk the sum of each class's weights",
    )

    _add_dp_options(
        a.add_argument_group("differential privacy (see: anonaudit dp --help)"),
        prefix="dp-",
        required=False,
    )
    _add_lake(a.add_argument_group("datasets, object storage and engines"))
    r = a.add_argument_group("input and output")
    _add_reading(r)
    r.add_argument("--json", metavar="PATH|-", help="write the JSON report; - for stdout")
    r.add_argument("--html", metavar="PATH", help="write the HTML report (one self-contained file)")
    r.add_argument(
        "--records-out",
        metavar="PATH",
        help="write every input record with its class size fk and risk, in input order (CSV)",
    )
    r.add_argument(
        "--id",
        metavar="COL",
        help="the office's record id column: --records-out writes it first; --ledger keeps "
        "it with the release, to compose later releases with this one",
    )
    _add_show_values(r, "the HTML and JSON reports and the listings")
    r.add_argument(
        "--max-classes",
        type=int,
        help="classes listed per measure in the JSON and embedded per listing in the HTML "
        "(default 100; 0 = all)",
    )
    r.add_argument(
        "--listings-dir",
        metavar="DIR",
        help="write every listing of classes in full as CSV files in DIR, linked from the "
        "HTML report",
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


def _add_reading(group: argparse._ArgumentGroup) -> None:
    """CSV reading options, shared by the subcommands."""
    group.add_argument("--sep", help="CSV separator (sniffed when omitted; tab or \\t: a tab)")
    group.add_argument("--encoding", help="CSV encoding (default utf-8)")
    group.add_argument(
        "--na",
        action="append",
        metavar="TEXT",
        help="cell text read as null (repeatable; default: only the empty cell)",
    )
    group.add_argument(
        "--decimal-comma",
        action="append",
        metavar="COLS",
        help="columns whose numbers are written with a decimal comma (1.234,5 or 1 234,5), "
        "read as 1234.5 (comma-separated, repeatable)",
    )
    group.add_argument(
        "--count",
        metavar="COL",
        help="the input is a frequency table: each row stands for COL records "
        "(a whole number), as in an export with one row per group and its count",
    )


def _add_allow_identifier(group: argparse._ArgumentGroup) -> None:
    """``--allow-identifier``: columns released knowingly although they may identify
    people directly (:attr:`anonaudit.Roles.allowed_identifiers`)."""
    group.add_argument(
        "--allow-identifier",
        action="append",
        metavar="COLS",
        help="a column that may identify people directly and is released knowingly "
        "(repeatable, or comma-separated); any other column detected as a direct "
        "identifier, neither QI nor sensitive, fails the audit and is never written",
    )


def _add_show_values(group: argparse._ArgumentGroup, where: str) -> None:
    """``--show-values``: the data values of small classes in ``where``, which are
    redacted by default (``--redact`` and ``--no-redact`` stay as older spellings)."""
    group.add_argument(
        "--show-values",
        dest="redact",
        action="store_false",
        default=None,
        help=f"show the quasi-identifier values of the classes listed in {where} "
        "(default: redacted, as [redacted]; a report is a document people share)",
    )
    group.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        help=argparse.SUPPRESS,
    )


def _add_lake(group: argparse._ArgumentGroup) -> None:
    """Dataset selection, object storage, Delta versions and the engine."""
    group.add_argument(
        "--format", choices=FORMATS, help="format of a directory's or URL's files (inferred)"
    )
    group.add_argument(
        "--filter",
        action="append",
        metavar="EXPR",
        help="keep rows/partitions where EXPR holds, e.g. day=2024-01-02, day>=2024-01-01, "
        "region in eu,us (repeatable: all must hold)",
    )
    group.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="object-storage setting, e.g. endpoint_url=http://127.0.0.1:8333 (repeatable)",
    )
    group.add_argument("--delta-version", type=int, metavar="N", help="Delta table version")
    group.add_argument(
        "--missing-columns",
        choices=MISSING_COLUMNS,
        help="a dataset's file lacking an audited column: an error (default) or read as null",
    )
    group.add_argument(
        "--engine",
        choices=("local", "dask", "spark"),
        help="build the class table here, on Dask or on Spark",
    )
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler (tcp://host:8786) or Spark master (spark://host:7077, local[4])",
    )
    group.add_argument(
        "--temp-dir",
        metavar="DIR",
        help="where the local engine spills its hash table when it outgrows --memory-limit "
        "(default: the system's temporary directory)",
    )
    group.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="memory the local engine's aggregation may take before it spills to disk, "
        "e.g. 4GB (default: 80%% of the machine's memory)",
    )


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
    _add_dp_options(d.add_argument_group("privacy"), required=True)
    u = d.add_argument_group("privacy unit")
    u.add_argument(
        "--privacy-unit",
        metavar="COL",
        help="column identifying a person with several rows; bounds each person's rows",
    )
    u.add_argument(
        "--max-contributions",
        type=int,
        metavar="M",
        help="rows kept per person with --privacy-unit (default 1)",
    )
    r = d.add_argument_group("input and output")
    _add_reading(r)
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
        help="with --ledger: refuse a release that would take the dataset's total past this",
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
    s = v.add_argument_group("search")
    s.add_argument(
        "--hierarchy",
        action="append",
        default=[],
        metavar="COL=FILE|SPEC",
        help="hierarchy of a QI to generalize: ARX file, interval:W1,W2,... or prefix[:N] "
        "(repeatable); for an SA, an ARX file for the hierarchical t-closeness distance",
    )
    s.add_argument(
        "--suppression-limit",
        type=float,
        metavar="F",
        help="largest share of records that may be suppressed, in [0, 1) (default 0, "
        "or suppression_limit in --config)",
    )
    s.add_argument(
        "--max-results",
        type=int,
        metavar="N",
        help="transformations of the Pareto front to list (default 10, or max_results in "
        "--config; 0 = all)",
    )
    s.add_argument("--t-distance", metavar="DIST|COL=DIST,...", help="as for audit")
    for each in DISTANCE_INPUTS:
        s.add_argument(each.flag, action="append", default=[], metavar=each.metavar)
    s.add_argument("--nulls", choices=("value", "drop"), help="null QI values (as for audit)")
    _add_lake(v.add_argument_group("datasets, object storage and engines"))
    r = v.add_argument_group("input and output")
    _add_reading(r)
    r.add_argument("--json", metavar="PATH|-", help="write the advice as JSON; - for stdout")
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
    _add_allow_identifier(r)
    r.add_argument(
        "--html",
        metavar="PATH",
        help="write the HTML audit report of INPUT with the transformations that pass",
    )
    _add_show_values(r, "the HTML report")
    r.add_argument("--config", metavar="FILE", help="TOML policy file; options override it")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    # The audit's other settings keep their defaults, so the policy file is read alike.
    own = vars(v.parse_known_args([])[0])
    v.set_defaults(
        **{k: val for k, val in vars(audit.parse_known_args([])[0]).items() if k not in own}
    )


def _add_dp_options(group: argparse._ArgumentGroup, *, prefix: str = "", required: bool) -> None:
    """Add the release options to ``group``, as ``--{prefix}epsilon`` and so on."""
    group.add_argument(
        f"--{prefix}epsilon",
        dest="dp_epsilon",
        type=float,
        required=required,
        metavar="E",
        help="total privacy budget epsilon of the DP release",
    )
    group.add_argument(
        f"--{prefix}delta",
        dest="dp_delta",
        type=float,
        metavar="D",
        help="delta (e.g. 1e-6): needed for Gaussian noise and to release observed "
        "QI combinations; without it the release is pure epsilon-DP over --public-domain",
    )
    group.add_argument(
        f"--{prefix}mechanism",
        dest="dp_mechanism",
        choices=MECHANISMS,
        help="noise (default discrete-laplace)",
    )
    group.add_argument(
        f"--{prefix}neighbouring",
        dest="dp_neighbouring",
        choices=NEIGHBOURING,
        help="neighbouring datasets: add or remove one unit (default), or replace one",
    )
    group.add_argument(
        "--public-domain",
        dest="public_domain",
        action="append",
        default=[],
        metavar="COL=V1,V2,...|COL=@FILE",
        help="public values of a QI or SA (repeatable); with every column declared, the "
        "release covers their cartesian product under pure epsilon-DP",
    )
    group.add_argument(
        f"--{prefix}rr-sensitive",
        dest="dp_rr_sensitive",
        metavar="COL",
        help="the SA that randomized response randomizes (default: the only SA)",
    )
    group.add_argument(
        f"--{prefix}postprocess",
        dest="dp_postprocess",
        choices=POSTPROCESS,
        help="noisy counts over a public domain: clamp (default) sets negatives to 0, which "
        "biases empty cells upwards (+0.43 at epsilon 1); unbiased keeps them, so that "
        "counts and their sums are unbiased",
    )


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
    _add_show_values(f, "the reports and the summary (the value each discloses stays)")
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
        help="none: list the releases; retire: see anonaudit ledger FILE retire --help",
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
    command = shlex.join(["anonaudit", *(sys.argv[1:] if argv is None else argv)])
    try:
        module, name = COMMANDS[args.command].split(":")
        run: Callable[[argparse.Namespace, str], int]
        run = getattr(importlib.import_module(module), name)
        return run(args, command)
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
    sys.exit(main())
