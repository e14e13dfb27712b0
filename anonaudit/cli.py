"""The command line: argument parsing and exit codes, nothing else.

Exit status: 0 every threshold met (or none set, or ``--exit-zero``); 1 a threshold
violated; 2 a usage or input error, reported as one line on stderr (a traceback only
with ``--debug``); 3 an internal error (a bug), one line naming the file the traceback
was written to.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import sys
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from anonaudit import __version__
from anonaudit.auditing import audit_table
from anonaudit.batch import (
    audit_config,
    audit_datasets,
    open_config_inputs,
    output_paths,
    read_paths,
    reports_folder,
    summary_to_dict,
)
from anonaudit.checks import DISTANCES
from anonaudit.checks.population import POPULATION_MODELS
from anonaudit.checks.wildcard import NULL_POLICIES
from anonaudit.config import AuditConfig, read_config
from anonaudit.dp import artefact
from anonaudit.dp import cli as dp_cli
from anonaudit.dp.bounding import load_bounded
from anonaudit.dp.utility import reader_measures
from anonaudit.engines.local import Progress, set_limits
from anonaudit.errors import AnonauditError, InputError, ParameterError
from anonaudit.linkage import cli as linkage_cli
from anonaudit.loading import load
from anonaudit.report.html import save_html, write_listings
from anonaudit.report.json import (
    SCHEMA_VERSION,
    advice_to_dict,
    dp_to_dict,
    dumps,
    report_to_dict,
)
from anonaudit.report.text import advice_summary, dp_summary, summary
from anonaudit.rows import write_records, write_transformed
from anonaudit.sources import require_rereadable
from anonaudit.sources.base import MISSING_COLUMNS
from anonaudit.sources.dataset import FORMATS
from anonaudit.util import atomic_write_text, refuse_folders, refuse_overwriting
from anonaudit.work import DEFAULT_MAX_WORK, LISTED_CLASS_WORK, check_work

__all__ = ["main"]

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
#: The status of a process killed by SIGPIPE (128 + 13), what ``cat`` or ``grep`` give.
EXIT_BROKEN_PIPE = 141
# Below this, the population the data is a sample of would be over a trillion times
# larger than the sample: a typo rather than a survey.
_SMALLEST_SAMPLING_FRACTION = 1e-12


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 already; keep it one line
        self.exit(EXIT_ERROR, f"anonaudit: error: {message} (see --help)\n")


def _columns(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _assignments(items: Sequence[str], option: str, key: str = "COLUMN") -> dict[str, str]:
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
    _add_columns(a)
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
    m.add_argument(
        "--weights",
        metavar="COL",
        help="survey weight column: adds sdcMicro's individual and global risk, with "
        "Fk the sum of each class's weights",
    )

    dp_cli.add_options(
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
        help="--records-out: write the input's column COL (a record identifier) first",
    )
    r.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        help="HTML and JSON reports: replace the QI values of listed classes by [redacted] "
        "(--no-redact overrides redact = true in --config)",
    )
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
    _add_dp_command(commands)
    _add_advise_command(commands, a)
    linkage_cli.add_commands(commands)
    return parser


def _add_thresholds(group: argparse._ArgumentGroup) -> None:
    """The policy's thresholds, shared by ``audit`` and ``advise``."""
    group.add_argument("-k", type=int, help="smallest class size (k-anonymity)")
    group.add_argument("-l", type=int, help="distinct sensitive values per class (l-diversity)")
    group.add_argument("--entropy-l", type=float, help="entropy l-diversity")
    group.add_argument("--recursive", metavar="C,L", help="recursive (c,l)-diversity")
    group.add_argument("-t", type=float, help="t-closeness: largest EMD between class and table")
    group.add_argument("--alpha", type=float, help="largest share of one value in a class")
    group.add_argument("--beta", type=float, help="basic beta-likeness")
    group.add_argument("--delta", type=float, help="delta-disclosure privacy")
    group.add_argument("--max-risk", type=float, help="largest prosecutor risk of a record")


def _add_columns(parser: argparse.ArgumentParser) -> None:
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
    _add_columns(d)
    dp_cli.add_options(d.add_argument_group("privacy"), required=True)
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
        f"PATH with suffix {artefact.SIDECAR_SUFFIX} (how it was made; public facts only)",
    )
    r.add_argument(
        "--json",
        metavar="PATH|-",
        help="write the JSON report, publishable 'release' and 'internal' parts; - for stdout",
    )
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    ledger = d.add_argument_group("release ledger")
    linkage_cli.add_ledger_options(ledger)
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
    _add_columns(v)
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
    s.add_argument("--order", action="append", default=[], metavar="COL=V1,...|COL=@FILE")
    s.add_argument("--ground-distance", action="append", default=[], metavar="COL=FILE")
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
    r.add_argument(
        "--html",
        metavar="PATH",
        help="write the HTML audit report of INPUT with the transformations that pass",
    )
    r.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        help="HTML report: QI values of listed classes hidden (--no-redact overrides --config)",
    )
    r.add_argument("--config", metavar="FILE", help="TOML policy file; options override it")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    # The audit's other settings keep their defaults, so the policy file is read alike.
    own = vars(v.parse_known_args([])[0])
    v.set_defaults(
        **{k: val for k, val in vars(audit.parse_known_args([])[0]).items() if k not in own}
    )


def _config(args: argparse.Namespace) -> AuditConfig:
    """The run's settings: the policy file, options over it; checked before any input is read."""
    config = read_config(args.config) if args.config else AuditConfig()
    choose = getattr(args, "choose", None)
    if choose is not None and choose < 1:
        raise ParameterError(f"--choose counts the listed transformations from 1 (got {choose})")
    if config.datasets:
        _dataset_configs(config, args)
    else:
        _override(config, args)
        _validate(config)
    set_limits(  # for the whole run, [[datasets]] included
        memory_limit=getattr(args, "memory_limit", None) or config.memory_limit,
        temp_dir=getattr(args, "temp_dir", None) or config.temp_dir,
    )
    refuse_overwriting(
        [
            *output_paths(config),
            ("--out", getattr(args, "out", None)),
            ("--listings-dir", config.listings_dir),
        ],
        [*read_paths(config), *([args.config] if args.config else [])],
    )
    refuse_folders([*output_paths(config), ("--out", getattr(args, "out", None))])
    for dataset in config.datasets or [config]:
        if dataset.records_out and dataset.count:
            raise ParameterError(
                "--records-out writes one line per record, and the rows of a frequency "
                "table (--count) stand for many: drop one of them (the report lists classes)"
            )
        if dataset.records_out:
            require_rereadable(dataset.inputs, "--records-out")
    if getattr(args, "out", None):
        require_rereadable(config.inputs, "--out")
    return config


def _dataset_configs(config: AuditConfig, args: argparse.Namespace) -> None:
    """Options over each ``[[datasets]]`` table of the policy file, but not its outputs."""
    if args.inputs:
        raise ParameterError(
            "INPUT files and [[datasets]] in --config do not mix; drop the INPUTs "
            "or use a policy file without datasets"
        )
    if args.html:
        raise ParameterError("with [[datasets]], set html per dataset in the policy file")
    if args.records_out:
        raise ParameterError("with [[datasets]], set records_out per dataset in the policy file")
    for dataset in config.datasets:
        own = dataset.json, dataset.html
        _override(dataset, args)
        dataset.json, dataset.html = own
        _validate(dataset)
    if args.json is not None:
        config.json = args.json


def _override(config: AuditConfig, args: argparse.Namespace) -> None:
    """Command-line options over the policy file's settings."""
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
    for column, level in _assignments(
        [item for text in args.generalize for item in text.split(",")], "--generalize", "COL"
    ).items():
        if not re.fullmatch("[0-9]+", level):
            raise ParameterError(
                f"--generalize {column}={level}: the level must be a whole number such as 2"
            )
        config.generalize[column] = int(level)
    config.ground_distance.update(_assignments(args.ground_distance, "--ground-distance"))
    for column, value in _assignments(args.order, "--order").items():
        config.order[column] = _order_file(value[1:]) if value.startswith("@") else _columns(value)
    if config.order and not isinstance(config.t_distance, str):  # an order implies its distance
        config.t_distance = {**dict.fromkeys(config.order, "ordered"), **(config.t_distance or {})}
    for name in ("nulls", "sep", "encoding", "risk_threshold", "json", "html", "max_classes"):
        if getattr(args, name) is not None:
            setattr(config, name, getattr(args, name))
    if config.sep in ("tab", "\\t"):  # a tab is hard to type in a shell
        config.sep = "\t"
    for name in ("redact", "listings_dir"):
        if getattr(args, name) is not None:
            setattr(config, name, getattr(args, name))
    if args.records_out is not None:
        config.records_out = args.records_out
    if args.population_size is not None:  # one population option replaces the other
        config.population_size, config.sampling_fraction = args.population_size, None
    if args.sampling_fraction is not None:
        config.population_size, config.sampling_fraction = None, args.sampling_fraction
    if args.population_model is not None:
        config.population_model = args.population_model
    if args.population is not None:
        config.population = args.population
    if args.k_map is not None:
        config.k_map = args.k_map
    if args.max_work is not None:
        config.max_work = args.max_work
    if args.weights is not None:
        config.weights = args.weights
    if args.count is not None:
        config.count = args.count
    if args.decimal_comma is not None:
        config.decimal_comma = [c for item in args.decimal_comma for c in _columns(item)]
    for name in ("qi_analysis", "suda", "advise", "suppression_limit", "max_results"):
        if getattr(args, name, None) is not None:
            setattr(config, name, getattr(args, name))
    if args.na is not None:
        config.na_values = list(args.na)
    for name in (
        "format",
        "delta_version",
        "missing_columns",
        "engine",
        "scheduler",
        "temp_dir",
        "memory_limit",
    ):
        if getattr(args, name) is not None:
            setattr(config, name, getattr(args, name))
    if args.filter is not None:
        config.filter = list(args.filter)
    config.storage_options.update(_assignments(args.storage_option, "--storage-option", key="KEY"))


def _order_file(path: str) -> list[str]:
    """The values listed in an ``--order COL=@FILE`` file, one a line (UTF-8)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(
            f"--order @{path}: byte {exc.start} is not valid UTF-8; save the file as UTF-8"
        ) from None
    except OSError as exc:
        raise InputError(f"--order @{path}: cannot read the file ({exc.strerror})") from None
    return [line.strip() for line in lines if line.strip()]


def _require_roles(inputs: Sequence[object], qi: Sequence[str], *, where: str) -> None:
    """Refuse a run without input or quasi-identifiers; ``where`` says where else to name them."""
    if not inputs:
        raise ParameterError(f"name at least one INPUT file{where}")
    if not qi:
        raise ParameterError("name the quasi-identifiers with --qi COL1,COL2,...")


def _validate(config: AuditConfig) -> None:
    _require_roles(config.inputs, config.quasi_identifiers, where=" (or inputs in --config)")
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
    for column, values in config.order.items():
        for value in {v for v in values if values.count(v) > 1}:
            raise ParameterError(
                f"--order {column} lists {value!r} twice; list each value once, in order"
            )
    k = config.thresholds.get("k")
    if k is not None and k < 1:
        raise ParameterError(f"-k must be at least 1 (got {k})")
    t = config.thresholds.get("t")
    if t is not None and not 0 <= t <= 1:
        raise ParameterError(f"-t must lie between 0 and 1 (got {t})")
    if config.max_classes < 0:
        raise ParameterError("--max-classes must be >= 0 (0 lists every class)")
    size, fraction = config.population_size, config.sampling_fraction
    if size is not None and fraction is not None:
        raise ParameterError("give population_size or sampling_fraction, not both")
    if size is not None and not (math.isfinite(size) and size >= 1):
        raise ParameterError(f"--population-size must be a positive number of people (got {size})")
    if fraction is not None and not (math.isfinite(fraction) and 0 < fraction <= 1):
        raise ParameterError(f"--sampling-fraction must lie in (0, 1] (got {fraction})")
    if fraction is not None and fraction < _SMALLEST_SAMPLING_FRACTION:
        raise ParameterError(
            f"--sampling-fraction {fraction} would make the population more than "
            f"{1 / _SMALLEST_SAMPLING_FRACTION:.0e} times the data; give the share of the "
            "population in the data, or --population-size"
        )
    if config.population_model not in POPULATION_MODELS:
        raise ParameterError(
            f"unknown population model {config.population_model!r}; "
            f"choose one of {', '.join(POPULATION_MODELS)}"
        )
    if config.engine not in ("local", "dask", "spark"):
        raise ParameterError(f"unknown engine {config.engine!r}; choose local, dask or spark")
    if config.nulls not in NULL_POLICIES:
        raise ParameterError(
            f"unknown nulls policy {config.nulls!r}; choose one of {', '.join(NULL_POLICIES)}"
        )
    if config.max_results < 0:
        raise ParameterError(f"--max-results takes a number >= 0 (got {config.max_results})")
    limit = config.suppression_limit
    if not (math.isfinite(limit) and 0 <= limit < 1):
        raise ParameterError(f"--suppression-limit must lie in [0, 1) (got {limit})")
    for option, size in (("--qi-analysis", config.qi_analysis), ("--suda", config.suda)):
        if not isinstance(size, bool) and size is not None and size < 1:
            raise ParameterError(f"{option} takes a largest subset size >= 1 (got {size})")


def _run_audit(args: argparse.Namespace, command: str) -> int:
    config = _config(args)
    progress = None if args.quiet else Progress(sys.stderr)
    if config.datasets:
        if args.dp_epsilon is not None or config.dp:
            raise ParameterError(
                "--dp-epsilon and [dp] release one table; with [[datasets]] run "
                "anonaudit dp on each dataset instead"
            )
        return _run_datasets(config, args, command, progress)
    if args.redact and not (config.html or config.json):
        raise ParameterError(
            "--redact applies to the HTML and JSON reports; add --html PATH or --json PATH"
        )
    if args.id is not None and not config.records_out:
        raise ParameterError("--id names the first column of the records file; add --records-out")
    if args.suppression_limit is not None and not config.advise:
        raise ParameterError("--suppression-limit bounds the search of --advise; add --advise")
    report = audit_config(config, progress=progress)
    if args.dp_epsilon is not None or config.dp:
        base = Path(args.config).parent if args.config else None
        dp_options = dp_cli.options(args, policy=config.dp, base=base)
        dp = dp_cli.run(report.table, dp_options)
        # A reader's t of the data is the audit's: measured with the audit's ground distances.
        sa_files = {c: h for c, h in config.hierarchy.items() if c in config.sensitive}
        measure = partial(
            audit_table,
            distance=config.t_distance,
            hierarchies=sa_files,
            orders=config.order,
            ground_distances=config.ground_distance,
            advise_suppression=False,
        )
        measures = reader_measures(dp.release, lambda table: measure(table).t_closeness)
        report = replace(report, dp=replace(dp, measures=measures))
    limit = None if config.max_classes == 0 else config.max_classes
    if limit is None and config.json:  # every failing class listed: bounded up front
        listed = int(report.k_anonymity.failing.mask.sum())
        check_work(
            f"--max-classes 0 (all {listed:,} classes below k listed in the JSON report)",
            listed * LISTED_CLASS_WORK,
            config.max_work or None,
            f"units ({LISTED_CLASS_WORK:,} per listed class; --listings-dir writes them as CSV)",
        )
    bounds: dict[str, Any] = {"redact": config.redact, "max_classes": limit}
    listings = config.listings_dir
    document = report_to_dict(report, **bounds, listings_dir=listings) if config.json else {}
    if config.json == "-":
        print(dumps(document))
    else:
        if config.json:
            atomic_write_text(Path(config.json), dumps(document))
        print(summary(report))
    if config.html:
        save_html(report, config.html, command=command, **bounds, listings_dir=listings)
    elif listings:
        write_listings(report, listings, redact=config.redact)
    if config.records_out:
        sources = open_config_inputs(config)
        write_records(sources, report, config.records_out, id_column=args.id, progress=progress)
    if report.passed is False and not args.exit_zero:
        return EXIT_VIOLATION
    return EXIT_OK


def _run_datasets(
    config: AuditConfig, args: argparse.Namespace, command: str, progress: Progress | None
) -> int:
    summary_path = None if config.json in (None, "-") else Path(config.json)
    results = audit_datasets(
        config.datasets,
        reports_dir=reports_folder(config),
        progress=progress,
        redact=config.redact or any(dataset.redact for dataset in config.datasets),
        command=command,
    )
    document = summary_to_dict(results)
    if config.json == "-":
        print(dumps(document))
    else:
        if summary_path is not None:
            atomic_write_text(summary_path, dumps(document))
        for result in results:
            print(f"== {result.name} ==")
            if result.report is not None:
                print(summary(result.report))
            else:
                print(f"anonaudit: error: {result.error}")
    for result in results:
        if result.error is not None:
            print(f"anonaudit: error: {result.name}: {result.error}", file=sys.stderr)
    worst = max(result.exit_status for result in results)
    if worst == EXIT_VIOLATION and args.exit_zero:
        return EXIT_OK
    return worst


def _run_dp(args: argparse.Namespace) -> int:
    qi = [c for item in args.qi for c in _columns(item)]
    sensitive = [c for item in args.sensitive for c in _columns(item)]
    _require_roles(args.inputs, qi, where="")
    sidecar = artefact.sidecar_path(Path(args.out)) if args.out else None
    outputs = [
        ("--out", args.out),
        ("--out (sidecar)", sidecar),
        ("--json", args.json),
        ("--ledger", args.ledger),
    ]
    refuse_overwriting(outputs, args.inputs)
    refuse_folders(outputs)
    if args.max_contributions is not None and not args.privacy_unit:
        raise ParameterError("--max-contributions bounds the rows of a --privacy-unit; add it")
    if args.count is not None and args.privacy_unit:
        raise ParameterError(
            "--privacy-unit bounds each person's rows, and a frequency table (--count) "
            "has none: drop one of them"
        )
    reading: dict[str, Any] = {
        "quasi_identifiers": qi,
        "sensitive": sensitive,
        "sep": args.sep,
        "encoding": args.encoding or "utf-8",
        "na_values": args.na if args.na is not None else ("",),
        "progress": None if args.quiet else Progress(sys.stderr),
        "decimal_comma": [c for item in args.decimal_comma or () for c in _columns(item)],
    }
    data = (
        load_bounded(
            args.inputs,
            privacy_unit=args.privacy_unit,
            max_contributions=args.max_contributions or 1,
            **reading,
        )
        if args.privacy_unit
        else load(args.inputs, **reading, count=args.count)
    )
    if args.budget is not None and not args.ledger:
        raise ParameterError("--budget is checked against a ledger; add --ledger FILE")
    report = dp_cli.run(data, dp_cli.options(args))
    for warning in dp_cli.release_warnings(report):
        print(f"anonaudit: warning: {warning}", file=sys.stderr)
    if args.ledger:  # before any output: a release past the budget is never written
        linkage_cli.record_dp_release(args, report)
    if args.out:
        artefact.write(report, Path(args.out))
    document = {"schema_version": SCHEMA_VERSION, "anonaudit_version": __version__}
    document |= dp_to_dict(report)
    if args.json == "-":
        print(dumps(document))
    else:
        if args.json:
            atomic_write_text(Path(args.json), dumps(document))
        print(dp_summary(report))
    return EXIT_OK


def _run_advise(args: argparse.Namespace, command: str) -> int:
    config = _config(args)
    if config.datasets:
        raise ParameterError("advise takes one dataset; use a policy file without [[datasets]]")
    if args.choose is not None and not args.out:
        raise ParameterError("--choose picks the transformation --out writes; add --out PATH")
    if args.keep and not args.out:
        raise ParameterError("--keep names columns --out writes; add --out PATH")
    if args.redact and not config.html:
        raise ParameterError("--redact applies to the HTML report; add --html PATH")
    if args.out and config.nulls == "drop":
        raise ParameterError(
            "--out writes every record, and --nulls drop left those with a null QI out of the "
            "search; use --nulls value with --out"
        )
    # The audit builds the class table once, searches it and audits the input as released.
    report = audit_config(
        replace(config, advise=True), progress=None if args.quiet else Progress(sys.stderr)
    )
    advice = report.advice
    if advice is None:  # audit_config(advise=True) always searches
        raise AssertionError("the audit returned no advice")
    document = {"schema_version": SCHEMA_VERSION, "anonaudit_version": __version__}
    document |= advice_to_dict(advice)
    if config.json == "-":
        print(dumps(document))
    else:
        if config.json:
            atomic_write_text(Path(config.json), dumps(document))
        print(advice_summary(advice))
    if config.html:  # the audit of the input, as `anonaudit audit` reports it, with the advice
        save_html(report, config.html, redact=config.redact, command=command)
    if args.out and advice.transformations:
        choose = args.choose or 1
        if not 1 <= choose <= len(advice.transformations):
            raise ParameterError(
                f"--choose {choose}: pick one of the {len(advice.transformations)} listed"
            )
        chosen = advice.transformations[choose - 1]
        sources = open_config_inputs(config)
        kept = [*config.sensitive, *(c for item in args.keep for c in _columns(item))]
        written = write_transformed(
            sources,
            args.out,
            quasi_identifiers=config.quasi_identifiers,
            recode=chosen.generalization.recode_maps(),
            suppressed=chosen.suppressed_classes if chosen.suppressed else None,
            columns=kept,
        )
        left = [c for c in sources[0].columns if c not in {*config.quasi_identifiers, *kept}]
        if left:
            print(
                f"anonaudit: warning: --out leaves out {', '.join(left)}: neither "
                "quasi-identifier nor sensitive, so not judged by the audit (a column may "
                "identify people directly); --keep COL writes one",
                file=sys.stderr,
            )
        if not args.quiet:
            print(f"anonaudit: wrote {written:,} records to {args.out}", file=sys.stderr)
    return EXIT_OK if advice.passed else EXIT_VIOLATION


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version, usage errors: argparse already printed
        return int(exit_.code or 0)
    command = shlex.join(["anonaudit", *(sys.argv[1:] if argv is None else argv)])
    try:
        if args.command == "advise":
            return _run_advise(args, command)
        if args.command in linkage_cli.COMMANDS:
            return linkage_cli.run(args)
        return _run_dp(args) if args.command == "dp" else _run_audit(args, command)
    except BrokenPipeError:  # the reader left (| head): stop quietly, as Unix tools do
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (AnonauditError, OSError) as exc:
        if args.debug:
            raise
        print(f"anonaudit: error: {exc}", file=sys.stderr)
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
