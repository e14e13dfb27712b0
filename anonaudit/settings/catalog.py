"""Every setting of an audit, declared once: :data:`OPTIONS`.

An :class:`Option` is one setting with everything the outside world sees of it: its
policy-file key, its command-line flag and the commands that take it, the kind of value
it holds, its default, its help, and the keyword of
:func:`anonaudit.settings.options.from_keywords` it becomes, which builds the option
objects (:class:`~anonaudit.settings.options.Roles`,
:class:`~anonaudit.settings.options.ReadOptions`, ...). From this one table:

* the command line's options are built (:mod:`anonaudit.cli.app`);
* a policy file's keys are checked (:mod:`anonaudit.cli.config`), and its paths made
  relative to it;
* the command line's values are laid over a policy file's (:mod:`anonaudit.cli.commands`);
* the settings become option objects (``AuditConfig.keywords``);
* the docs' table of settings is written (``docs/hooks.py``, the policy-files page).

The thresholds are the :class:`~anonaudit.settings.policy.Policy`'s fields, declared
there with their flag and kind; the inputs of the ground distances are
:data:`anonaudit.settings.names.DISTANCE_INPUTS`. This module imports nothing heavy: the
command line's ``--help`` is built from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from anonaudit.distances import DISTANCES
from anonaudit.settings.names import (
    DISCRETE,
    ENGINES,
    FORMATS,
    MECHANISMS,
    MISSING_COLUMNS,
    NEIGHBOURING,
    NULL_POLICIES,
    POPULATION_MODELS,
    POSTPROCESS,
    SELF_AUDIT_CONFIDENCE,
    SELF_AUDIT_SAMPLES,
    TABLE_LAYOUTS,
)
from anonaudit.settings.work import DEFAULT_MAX_WORK

__all__ = [
    "DP_OPTIONS",
    "GROUPS",
    "OPTIONS",
    "TABLES_OPTIONS",
    "Kind",
    "Option",
    "PathKind",
    "by_key",
    "dp_flag",
]

#: The kind of value a setting holds, and so how the command line reads it and a policy
#: file writes it:
#:
#: - ``text``, ``whole``, ``number``: one value (a ``choices`` text is checked on both);
#: - ``boolean``: ``true``/``false``; the flag sets it (``show`` flags clear it);
#: - ``size``: ``true``, ``false`` or a whole number; the flag alone means ``true``;
#: - ``texts``: a list of texts; the flag is repeated, one text each;
#: - ``columns``: a list of column names; the flag is repeated, comma-separated;
#: - ``mapping``: a table of ``KEY = VALUE``; the flag is repeated, ``KEY=VALUE`` each;
#: - ``paths``: a table of ``COLUMN = FILE``; the flag is repeated, ``COLUMN=FILE`` each;
#: - ``levels``: a table of ``COLUMN = LEVEL``; the flag takes ``COL=LEVEL,...``;
#: - ``distance``: a ground distance for every SA (a text) or per SA (a table);
#: - ``table``: a table of its own keys, read by the code that takes it (policy file
#:   only).
Kind: TypeAlias = Literal[
    "text",
    "whole",
    "number",
    "boolean",
    "show",
    "size",
    "texts",
    "columns",
    "mapping",
    "paths",
    "levels",
    "distance",
    "table",
]

#: What a path of a policy file is relative to the file unless it is: ``file`` (always
#: relative), ``input`` (a URL is not), ``output`` (``-``, the standard output, is not),
#: ``hierarchy`` (a built-in hierarchy such as ``interval:5,10`` is not).
PathKind: TypeAlias = Literal["file", "input", "output", "hierarchy"]

#: Groups of the command line's help, in order.
GROUPS = (
    "measures",
    "differential privacy",
    "datasets, object storage and engines",
    "input and output",
)


@dataclass(frozen=True)
class Option:
    """One setting of an audit.

    Attributes
    ----------
    key : str
        Its policy-file key, and its name among a run's settings.
    kind : Kind
        The kind of value it holds.
    help : str
        What it does, as the command line's ``--help`` and the docs say it.
    flag : str or None
        Its command-line flag (``None``: policy file only, or a flag built elsewhere).
    default : object
        Its value when neither the file nor the command line gives one (lists and
        tables are copied).
    metavar : str or None
        The value's name in the command line's help.
    choices : tuple of str or None
        The values it may take.
    group : str
        Its group in the command line's help (one of :data:`GROUPS`).
    commands : tuple of str
        The commands whose flag it is (``audit``, ``advise``).
    keyword : str or None
        The keyword of :func:`~anonaudit.settings.options.from_keywords` it becomes
        (``None``: it is an output or a run setting, not an option of the audit).
    path : PathKind or None
        Whether (and how) its values are paths, relative to the policy file.
    replaces : str or None
        Another setting a command-line value of this one clears (one of two exclusive
        settings, such as a population size and a sampling fraction).
    zero_is_none : bool
        Whether ``0`` (or an empty table) means "none" for the option objects.
    helps : mapping of str to str
        Its help for a command where it differs (by command).
    """

    key: str
    kind: Kind
    help: str
    flag: str | None = None
    default: Any = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    group: str = "measures"
    commands: tuple[str, ...] = ("audit",)
    keyword: str | None = None
    path: PathKind | None = None
    replaces: str | None = None
    zero_is_none: bool = False
    helps: Mapping[str, str] = field(default_factory=dict)

    def help_for(self, command: str) -> str:
        """Its help in ``command``."""
        return self.helps.get(command, self.help)


_OUT = "input and output"
_DP = "differential privacy"
_LAKE = "datasets, object storage and engines"
_BOTH = ("audit", "advise")
_READERS = ("audit", "advise", "dp")

#: Every setting of an audit, in the order of the command line's help.
OPTIONS: tuple[Option, ...] = (
    # -- what is audited: the roles (their flags and the INPUTs are every command's)
    Option(
        "inputs", "texts", "the files, directories, globs or URLs audited", default=(), path="input"
    ),
    Option(
        "quasi_identifiers",
        "columns",
        "quasi-identifier columns",
        default=(),
        keyword="quasi_identifiers",
    ),
    Option("sensitive", "columns", "sensitive columns", default=(), keyword="sensitive"),
    Option("thresholds", "table", "the policy's thresholds (see Policy)", default={}),
    # -- measures
    Option(
        "t_distance",
        "distance",
        f"EMD ground distance: {', '.join(DISTANCES)} (default equal)",
        flag="--t-distance",
        metavar="DIST|COL=DIST,...",
        commands=_BOTH,
        keyword="distance",
        helps={"advise": "as for audit"},
    ),
    Option(
        "hierarchy",
        "paths",
        "ARX hierarchy file for an SA (implies hierarchical distance) or a QI; for a QI "
        "also interval:W1,W2,... (numeric bands) or prefix[:N] (ZIP truncation)",
        flag="--hierarchy",
        default={},
        metavar="COL=FILE|SPEC",
        commands=_BOTH,
        keyword="hierarchies",
        path="hierarchy",
        helps={
            "advise": "hierarchy of a QI to generalize: ARX file, interval:W1,W2,... or "
            "prefix[:N] (repeatable); for an SA, an ARX file for the hierarchical "
            "t-closeness distance"
        },
    ),
    Option(
        "generalize",
        "levels",
        "audit the data generalized to these levels of the QIs' --hierarchy",
        flag="--generalize",
        default={},
        metavar="COL=LEVEL,...",
        keyword="generalize",
        zero_is_none=True,
    ),
    Option(
        "advise",
        "boolean",
        "add the least generalizations (of the QIs' --hierarchy) and suppression that pass "
        "the policy, as anonaudit advise finds them",
        flag="--advise",
        default=False,
        keyword="advise",
    ),
    Option(
        "suppression_limit",
        "number",
        "with --advise: largest share of records that may be suppressed, in [0, 1) (default 0)",
        flag="--suppression-limit",
        default=0.0,
        metavar="F",
        commands=_BOTH,
        keyword="suppression_limit",
        helps={
            "advise": "largest share of records that may be suppressed, in [0, 1) "
            "(default 0, or suppression_limit in --config)"
        },
    ),
    Option(
        "max_results",
        "whole",
        "transformations of the Pareto front to list (default 10, or max_results in "
        "--config; 0 = all)",
        flag="--max-results",
        default=10,
        metavar="N",
        commands=("advise",),
        keyword="max_results",
        zero_is_none=True,
    ),
    Option(
        "risk_threshold",
        "number",
        "risk above which a record is at risk",
        flag="--risk-threshold",
        default=0.2,
        keyword="risk_threshold",
    ),
    Option(
        "population_size",
        "number",
        "people in the population the data was sampled from (adds population risk)",
        flag="--population-size",
        metavar="N",
        keyword="population_size",
        replaces="sampling_fraction",
    ),
    Option(
        "sampling_fraction",
        "number",
        "share of the population in the data, in (0, 1] (adds population risk)",
        flag="--sampling-fraction",
        metavar="F",
        keyword="sampling_fraction",
        replaces="population_size",
    ),
    Option(
        "population_model",
        "text",
        "population uniqueness estimate (default dankar: Dankar et al.'s rule)",
        flag="--population-model",
        default="dankar",
        choices=POPULATION_MODELS,
        keyword="population_model",
    ),
    Option(
        "population",
        "text",
        "the attacker's identified table (voter list, census extract) with the QIs in the "
        "release's coding: adds k-map, delta-presence and unique matches",
        flag="--population",
        metavar="FILE",
        keyword="population_table",
        path="input",
    ),
    Option(
        "k_map",
        "whole",
        "with --population: every class must match at least K of its records",
        flag="--k-map",
        metavar="K",
        keyword="k_map",
    ),
    Option(
        "qi_analysis",
        "size",
        "which columns identify: distinction and separation of every QI subset up to this "
        "size (default: all subsets up to 10 QIs, else 3), and k without each QI",
        flag="--qi-analysis",
        metavar="MAX_SUBSET_SIZE",
        keyword="qi_analysis",
    ),
    Option(
        "suda",
        "size",
        "minimal sample uniques up to this size and SUDA / DIS-SUDA scores (default: all "
        "sizes up to 10 QIs, else 3)",
        flag="--suda",
        metavar="MAX_MSU_SIZE",
        keyword="suda",
    ),
    Option(
        "max_work",
        "whole",
        "refuse, before it starts, a QI analysis, SUDA, non-monotone advice search or full "
        f"listing estimated above N units of work (default {DEFAULT_MAX_WORK:,}; 0: no limit)",
        flag="--max-work",
        default=DEFAULT_MAX_WORK,
        metavar="N",
        keyword="max_work",
        zero_is_none=True,
    ),
    Option(
        "nulls",
        "text",
        "null QI values: a value of their own (default), drop the records, or wildcard: a "
        "null matches any value when counting class sizes (sdcMicro)",
        flag="--nulls",
        default="value",
        choices=NULL_POLICIES,
        commands=_BOTH,
        keyword="nulls",
        helps={"advise": "null QI values (as for audit; not wildcard)"},
    ),
    Option(
        "allow_identifiers",
        "columns",
        "a column that may identify people directly and is released knowingly "
        "(repeatable, or comma-separated); any other column detected as a direct "
        "identifier, neither QI nor sensitive, fails the audit and is never written",
        flag="--allow-identifier",
        default=(),
        metavar="COLS",
        commands=_BOTH,
        keyword="allowed_identifiers",
    ),
    Option(
        "weights",
        "text",
        "survey weight column: adds sdcMicro's individual and global risk, with Fk the sum "
        "of each class's weights",
        flag="--weights",
        metavar="COL",
        keyword="weights",
    ),
    # -- datasets, object storage and engines
    Option(
        "format",
        "text",
        "format of a directory's or URL's files (inferred)",
        flag="--format",
        choices=FORMATS,
        group=_LAKE,
        commands=_BOTH,
        keyword="format",
    ),
    Option(
        "filter",
        "texts",
        "keep rows/partitions where EXPR holds, e.g. day=2024-01-02, day>=2024-01-01, "
        "region in eu,us (repeatable: all must hold)",
        flag="--filter",
        default=(),
        metavar="EXPR",
        group=_LAKE,
        commands=_BOTH,
        keyword="filter",
    ),
    Option(
        "storage_options",
        "mapping",
        "object-storage setting, e.g. endpoint_url=http://127.0.0.1:8333 (repeatable)",
        flag="--storage-option",
        default={},
        metavar="KEY=VALUE",
        group=_LAKE,
        commands=_BOTH,
        keyword="storage_options",
    ),
    Option(
        "delta_version",
        "whole",
        "Delta table version",
        flag="--delta-version",
        metavar="N",
        group=_LAKE,
        commands=_BOTH,
        keyword="delta_version",
    ),
    Option(
        "missing_columns",
        "text",
        "a dataset's file lacking an audited column: an error (default) or read as null",
        flag="--missing-columns",
        default="error",
        choices=MISSING_COLUMNS,
        group=_LAKE,
        commands=_BOTH,
        keyword="missing_columns",
    ),
    Option(
        "engine",
        "text",
        "build the class table here, on Dask or on Spark",
        flag="--engine",
        default="local",
        choices=ENGINES,
        group=_LAKE,
        commands=_BOTH,
        keyword="engine",
    ),
    Option(
        "scheduler",
        "text",
        "Dask scheduler (tcp://host:8786) or Spark master (spark://host:7077, local[4])",
        flag="--scheduler",
        metavar="ADDRESS",
        group=_LAKE,
        commands=_BOTH,
        keyword="scheduler",
    ),
    Option(
        "temp_dir",
        "text",
        "where the local engine spills its hash table when it outgrows --memory-limit "
        "(default: the system's temporary directory)",
        flag="--temp-dir",
        metavar="DIR",
        group=_LAKE,
        commands=_BOTH,
        keyword="temp_dir",
    ),
    Option(
        "memory_limit",
        "text",
        "memory the local engine's aggregation may take before it spills to disk, e.g. 4GB "
        "(default: 80%% of the machine's memory)",
        flag="--memory-limit",
        metavar="SIZE",
        group=_LAKE,
        commands=_BOTH,
        keyword="memory_limit",
    ),
    # -- input and output
    Option(
        "sep",
        "text",
        "CSV separator (sniffed when omitted; tab or \\t: a tab)",
        flag="--sep",
        group=_OUT,
        commands=_READERS,
        keyword="sep",
    ),
    Option(
        "encoding",
        "text",
        "CSV encoding (default utf-8)",
        flag="--encoding",
        default="utf-8",
        group=_OUT,
        commands=_READERS,
        keyword="encoding",
    ),
    Option(
        "na_values",
        "texts",
        "cell text read as null (repeatable; default: only the empty cell)",
        flag="--na",
        default=("",),
        metavar="TEXT",
        group=_OUT,
        commands=_READERS,
        keyword="na_values",
    ),
    Option(
        "decimal_comma",
        "columns",
        "columns whose numbers are written with a decimal comma (1.234,5 or 1 234,5), read "
        "as 1234.5 (comma-separated, repeatable)",
        flag="--decimal-comma",
        default=(),
        metavar="COLS",
        group=_OUT,
        commands=_READERS,
        keyword="decimal_comma",
    ),
    Option(
        "count",
        "text",
        "the input is a frequency table: each row stands for COL records (a whole number), "
        "as in an export with one row per group and its count",
        flag="--count",
        metavar="COL",
        group=_OUT,
        commands=_READERS,
        keyword="count",
    ),
    Option(
        "json",
        "text",
        "write the JSON report; - for stdout",
        flag="--json",
        metavar="PATH|-",
        group=_OUT,
        commands=_BOTH,
        path="output",
        helps={"advise": "write the advice as JSON; - for stdout"},
    ),
    Option(
        "html",
        "text",
        "write the HTML report (one self-contained file)",
        flag="--html",
        metavar="PATH",
        group=_OUT,
        commands=_BOTH,
        path="file",
        helps={"advise": "write the HTML audit report of INPUT with the transformations that pass"},
    ),
    Option(
        "records_out",
        "text",
        "write every input record with its class size fk and risk, in input order (CSV)",
        flag="--records-out",
        metavar="PATH",
        group=_OUT,
        path="file",
    ),
    Option(
        "redact",
        "show",
        "show the quasi-identifier values of the classes listed in the HTML and JSON "
        "reports and the listings (default: redacted, as [redacted]; a report is a "
        "document people share)",
        flag="--show-values",
        default=True,
        group=_OUT,
        commands=_BOTH,
        helps={
            "advise": "show the quasi-identifier values of the classes listed in the HTML "
            "report (default: redacted, as [redacted]; a report is a document people share)"
        },
    ),
    Option(
        "max_classes",
        "whole",
        "classes listed per measure in the JSON and embedded per listing in the HTML "
        "(default 100; 0 = all)",
        flag="--max-classes",
        default=100,
        group=_OUT,
    ),
    Option(
        "listings_dir",
        "text",
        "write every listing of classes in full as CSV files in DIR, linked from the HTML report",
        flag="--listings-dir",
        metavar="DIR",
        group=_OUT,
        path="file",
    ),
    Option("name", "text", "the dataset's name, in a [[datasets]] run's summary", group=_OUT),
    Option(
        "ledger",
        "table",
        "the release ledger: file, dataset, recipient, id",
        default={},
        group=_OUT,
    ),
    Option(
        "dp",
        "table",
        "the differential-privacy companion: epsilon, delta, ...",
        default={},
        group=_OUT,
    ),
)


#: The settings of the differential-privacy companion: the keys of a policy file's
#: ``[dp]`` table, the flags of ``anonaudit dp`` (``anonaudit audit`` prefixes those it
#: takes with ``dp-``: its ``--delta`` is delta-disclosure's), each stored as ``dp_<key>``;
#: the keyword is the name :class:`~anonaudit.dp.options.DPOptions` (or its privacy unit)
#: takes.
DP_OPTIONS: tuple[Option, ...] = (
    Option(
        "epsilon",
        "number",
        "total privacy budget epsilon of the DP release",
        flag="--epsilon",
        metavar="E",
        commands=("dp", "audit"),
        keyword="epsilon",
    ),
    Option(
        "delta",
        "number",
        "delta (e.g. 1e-6): needed for Gaussian noise and to release observed QI "
        "combinations; without it the release is pure epsilon-DP over --public-domain",
        flag="--delta",
        metavar="D",
        commands=("dp", "audit"),
        keyword="delta",
    ),
    Option(
        "mechanism",
        "text",
        "noise (default discrete-laplace)",
        flag="--mechanism",
        default="discrete-laplace",
        choices=MECHANISMS,
        commands=("dp", "audit"),
        keyword="mechanism",
    ),
    Option(
        "neighbouring",
        "text",
        "neighbouring datasets: add or remove one unit (default), or replace one",
        flag="--neighbouring",
        choices=NEIGHBOURING,
        commands=("dp", "audit"),
        keyword="neighbouring",
    ),
    Option(
        "public_domain",
        "paths",
        "public values of a QI or SA (repeatable); with every column declared, the release "
        "covers their cartesian product under pure epsilon-DP",
        flag="--public-domain",
        default={},
        metavar="COL=V1,V2,...|COL=@FILE",
        commands=("dp", "audit"),
    ),
    Option(
        "rr_sensitive",
        "text",
        "the SA that randomized response randomizes (default: the only SA)",
        flag="--rr-sensitive",
        metavar="COL",
        commands=("dp", "audit"),
        keyword="sensitive",
    ),
    Option(
        "postprocess",
        "text",
        "noisy counts over a public domain: clamp (default) sets negatives to 0, which "
        "biases empty cells upwards (+0.43 at epsilon 1); unbiased keeps them, so that "
        "counts and their sums are unbiased",
        flag="--postprocess",
        default="clamp",
        choices=POSTPROCESS,
        commands=("dp", "audit"),
        keyword="postprocess",
    ),
    Option(
        "privacy_unit",
        "text",
        "column identifying a person with several rows; bounds each person's rows",
        flag="--privacy-unit",
        metavar="COL",
        commands=("dp",),
        keyword="column",
    ),
    Option(
        "max_contributions",
        "whole",
        "rows kept per person with --privacy-unit (default 1)",
        flag="--max-contributions",
        default=1,
        metavar="M",
        commands=("dp",),
        keyword="contributions",
    ),
    Option(
        "self_audit",
        "size",
        "also run the release code on worst-case neighbouring datasets, N releases of each "
        f"(default {SELF_AUDIT_SAMPLES:,}), and report an empirical lower bound on epsilon "
        f"beside the claim ({SELF_AUDIT_CONFIDENCE:.0%}% confidence)",
        flag="--self-audit",
        metavar="N",
        commands=("dp",),
    ),
)


_T = ("tables",)
#: How published tables are read: ``anonaudit reconstruct`` reads them as ``tables`` does.
_READ = ("tables", "reconstruct")
_R = ("reconstruct",)
#: The settings of ``anonaudit tables`` (the policy file's ``[tables]`` table): how the
#: tables are read, and the primary rules (:class:`anonaudit.tables.rules.Rules`).
TABLES_OPTIONS: tuple[Option, ...] = (
    Option(
        "threshold",
        "whole",
        "count tables: a cell of 0 < n < N units is sensitive (default 10)",
        flag="--threshold",
        metavar="N",
        commands=_T,
        keyword="threshold",
    ),
    Option(
        "min_contributors",
        "whole",
        "sum tables: a cell of fewer than N contributors is sensitive (default 3)",
        flag="--min-contributors",
        metavar="N",
        commands=_T,
        keyword="min_contributors",
    ),
    Option(
        "dominance",
        "text",
        "the (n,k)-dominance rule: the n largest contributions above "
        "k%% of the cell (default 2,85)",
        flag="--dominance",
        metavar="N,K",
        commands=_T,
    ),
    Option(
        "p",
        "number",
        "the p%% rule: the rest below p%% of the largest (default 10)",
        flag="--p",
        metavar="P",
        commands=_T,
        keyword="p",
    ),
    Option(
        "q",
        "number",
        "the (p,q) rule's q (with --p); q = 100 is the p%% rule",
        flag="--q",
        metavar="Q",
        commands=_T,
        keyword="q",
    ),
    Option(
        "coalition",
        "whole",
        "units that may pool what they know of themselves (default 1)",
        flag="--coalition",
        metavar="N",
        commands=_T,
        keyword="coalition",
    ),
    Option(
        "safety_range",
        "number",
        "the protection the frequency rules ask for, in %% of "
        "the cell's value above and below (default 0: exact disclosure only)",
        flag="--safety-range",
        metavar="PCT",
        commands=_T,
        keyword="safety_range",
    ),
    Option(
        "contributor",
        "text",
        "sum tables: one contributor is a holding (default) or a unit",
        flag="--contributor",
        choices=("holding", "unit"),
        commands=_T,
        keyword="contributor",
    ),
    Option(
        "zeros",
        "text",
        "zeros: report them (default), make them sensitive, or ignore them",
        flag="--zeros",
        choices=("report", "sensitive", "ignore"),
        commands=_T,
        keyword="zeros",
    ),
    Option(
        "layout",
        "text",
        "long (a row per cell), wide (a cross-tab), or auto (default)",
        flag="--layout",
        choices=TABLE_LAYOUTS,
        commands=_READ,
        group=_OUT,
    ),
    Option(
        "kind",
        "text",
        "counts (default) or sums",
        flag="--kind",
        choices=("count", "sum"),
        commands=_T,
        group=_OUT,
    ),
    Option(
        "dimensions",
        "columns",
        "a long table's dimension columns (default: every column but the value)",
        flag="--dimensions",
        metavar="COL,COL",
        commands=_READ,
        group=_OUT,
    ),
    Option(
        "value",
        "text",
        "a long table's value column (default: the last numeric one)",
        flag="--value",
        metavar="COL",
        commands=_READ,
        group=_OUT,
    ),
    Option(
        "markers",
        "texts",
        "a text that marks a suppressed cell (repeatable; replaces the default x, c, .., *, blank)",
        flag="--marker",
        metavar="TEXT",
        commands=_READ,
        group=_OUT,
    ),
    Option(
        "less_than_includes_zero",
        "boolean",
        "a count published as <N may be 0 (default: at least 1)",
        flag="--less-than-includes-zero",
        commands=_READ,
        group=_OUT,
    ),
    Option(
        "rounding",
        "text",
        "every number was rounded to BASE, to the nearest multiple or randomly",
        flag="--rounding",
        metavar="BASE[:nearest|random]",
        commands=_READ,
        group=_OUT,
    ),
    Option(
        "hierarchies",
        "mapping",
        "a dimension's hierarchy file, ARX's format (repeatable)",
        flag="--hierarchy",
        metavar="DIM=FILE",
        commands=_READ,
        group=_OUT,
        path="file",
    ),
    Option(
        "populations",
        "mapping",
        "the population a table counts (repeatable; default: "
        "one population): tables of one population are audited jointly",
        flag="--population",
        metavar="TABLE=NAME",
        commands=_T,
        group=_OUT,
    ),
    Option(
        "nested",
        "mapping",
        "a population within another (repeatable): their tables of the same dimensions "
        "are differenced",
        flag="--within",
        metavar="CHILD=PARENT",
        commands=_T,
        group=_OUT,
    ),
    Option(
        "contributions",
        "mapping",
        "the microdata behind a table of sums: one record per contributor with the "
        "table's dimensions (leaf codes) and --contribution-value (repeatable)",
        flag="--contributions",
        metavar="TABLE=FILE",
        commands=_T,
        group=_OUT,
        path="input",
    ),
    Option(
        "contribution_value",
        "text",
        "the contributions' value column (default: value)",
        flag="--contribution-value",
        metavar="COL",
        commands=_T,
        group=_OUT,
    ),
    Option(
        "holding",
        "text",
        "the contributions' holding (enterprise group) column",
        flag="--holding",
        metavar="COL",
        commands=_T,
        group=_OUT,
    ),
    Option(
        "weight",
        "text",
        "the contributions' survey weight column",
        flag="--weight",
        metavar="COL",
        commands=_T,
        group=_OUT,
    ),
    Option(
        "values",
        "mapping",
        "the unsuppressed table behind a published one, for the "
        "rules and protection levels of its suppressed cells (repeatable)",
        flag="--true-values",
        metavar="TABLE=FILE",
        commands=_T,
        group=_OUT,
        path="input",
    ),
    Option(
        "class_table",
        "boolean",
        "the tables are class-table releases (counts per QI tuple and SA value, the "
        "finest cells only): a combination not listed holds nobody",
        flag="--class-table",
        commands=_R,
        group=_OUT,
    ),
    Option(
        "smallest_subset",
        "boolean",
        "find each reconstructed group's smallest subset of the tables that still gives "
        "it back (up to 2^T checks a group for T tables)",
        flag="--smallest-subset",
        commands=_R,
        group=_OUT,
    ),
    Option(
        "identified",
        "text",
        "an identified table (a register: one row a person) to link the reconstructed "
        "records to, by its columns that are the group or a dimension",
        flag="--population",
        metavar="FILE",
        commands=_R,
        group=_OUT,
        path="input",
    ),
    Option(
        "dp_epsilon",
        "number",
        "also release the tables under epsilon-DP (every cell with noise) and report "
        "what the release still gives back",
        flag="--dp-epsilon",
        metavar="E",
        commands=_R,
        group=_DP,
    ),
    Option(
        "dp_delta",
        "number",
        "the DP release's delta (default 0; above 0 for discrete-gaussian)",
        flag="--dp-delta",
        metavar="D",
        commands=_R,
        group=_DP,
    ),
    Option(
        "dp_mechanism",
        "text",
        "the DP release's noise (default discrete-laplace)",
        flag="--dp-mechanism",
        metavar="NAME",
        choices=DISCRETE,
        commands=_R,
        group=_DP,
    ),
    Option(
        "dp_confidence",
        "number",
        "certify a group of the DP release at this confidence (default 0.99)",
        flag="--dp-confidence",
        metavar="C",
        commands=_R,
        group=_DP,
    ),
)


def dp_flag(option: Option, command: str) -> str:
    """``option``'s flag in ``command``: ``--epsilon`` in ``anonaudit dp``,
    ``--dp-epsilon`` in ``anonaudit audit`` (``--public-domain`` in both)."""
    flag = option.flag or option.key
    if command == "dp" or option.key == "public_domain":
        return flag
    return f"--dp-{flag[2:]}"


def by_key() -> dict[str, Option]:
    """:data:`OPTIONS` by key."""
    return {option.key: option for option in OPTIONS}
