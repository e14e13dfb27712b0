"""The names the options take, in one light module the command line can import.

Each set of names (population models, null policies, mechanisms, ...) is defined here
once, with its type, and re-exported by the module that implements it; the ground
distances' names are their modules' (:data:`anonaudit.distances.DISTANCES`, found
without importing them).
Building the argument parser from them imports nothing heavy, so ``anonaudit --help``
and ``--version`` start in a fraction of a second (``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "ADDITIVE",
    "DEFAULT_MAX_ROWS",
    "DISCRETE",
    "DISTANCE_INPUTS",
    "ENGINES",
    "FORMATS",
    "MARGIN_WORDS",
    "MARKERS",
    "MECHANISMS",
    "MIN_COMBINATIONS",
    "MISSING_COLUMNS",
    "NEIGHBOURING",
    "NULL_POLICIES",
    "POPULATION_MODELS",
    "POSTPROCESS",
    "REDACTED",
    "ROUNDING_METHODS",
    "SCHEMA_VERSION",
    "SELF_AUDIT_CONFIDENCE",
    "SELF_AUDIT_SAMPLES",
    "SIDECAR_SUFFIX",
    "TABLE_LAYOUTS",
    "DistanceInput",
    "Judged",
    "Mechanism",
    "MissingColumns",
    "Neighbouring",
    "NullPolicy",
    "PopulationModel",
    "Postprocess",
    "RoundingMethod",
    "TableLayout",
    "Verdict",
]


@dataclass(frozen=True)
class DistanceInput:
    """What a ground distance (:mod:`anonaudit.distances`) takes per SA on the command
    line, ``--KEY COL=VALUE`` (repeatable), and in policy files, a ``[KEY]`` table of
    column to value. The QIs' ``--hierarchy`` is the hierarchical distance's input too.

    Attributes
    ----------
    key : str
        The policy files' key; dashed, the flag (``ground_distance``, ``--ground-distance``).
    keyword : str
        Its name among the flat settings of :func:`anonaudit.settings.options.from_keywords`, and
        among an SA's inputs (:meth:`anonaudit.distances.base.Distance.from_inputs`).
    metavar, help : str
        The flag's value and help, as ``--help`` shows them.
    path : bool
        A file, read relative to the policy file that names it, rather than a list of
        values (``V1,V2,...``, or ``@FILE`` with one value a line).
    implies : str or None
        The distance that, on the command line and in policy files, an SA given this
        input is measured with unless ``--t-distance`` names another (in Python, a
        distance's :attr:`~anonaudit.distances.base.Distance.implied_by` says it).
    """

    key: str
    keyword: str
    metavar: str
    help: str
    path: bool = False
    implies: str | None = None

    @property
    def flag(self) -> str:
        """The command-line option: ``--order``."""
        return "--" + self.key.replace("_", "-")


#: Every input of a ground distance the command line and policy files take, besides
#: the hierarchies: the options of their ``--help``, in order.
DISTANCE_INPUTS = (
    DistanceInput(
        "order",
        "orders",
        "COL=V1,V2,...|COL=@FILE",
        "order of an SA's values for the ordered distance",
        implies="ordered",
    ),
    DistanceInput(
        "ground_distance",
        "ground_distances",
        "COL=FILE",
        "ground-distance matrix CSV for an SA (implies matrix distance)",
        path=True,
    ),
)

PopulationModel: TypeAlias = Literal["dankar", "pitman", "zayatz", "snb"]
#: The population uniqueness models (:mod:`anonaudit.measures.population`).
POPULATION_MODELS: tuple[PopulationModel, ...] = ("dankar", "pitman", "zayatz", "snb")

NullPolicy: TypeAlias = Literal["value", "drop", "wildcard"]
#: What a null quasi-identifier value means (:mod:`anonaudit.measures.wildcard`).
NULL_POLICIES: tuple[NullPolicy, ...] = ("value", "drop", "wildcard")

MissingColumns: TypeAlias = Literal["error", "null"]
#: What a dataset's file lacking an audited column means: an error, or nulls.
MISSING_COLUMNS: tuple[MissingColumns, ...] = ("error", "null")

#: The formats of a dataset's files (:mod:`anonaudit.sources.dataset`).
FORMATS = ("parquet", "csv", "delta")

#: Where the class table is built (:class:`anonaudit.settings.options.EngineOptions`).
ENGINES = ("local", "dask", "spark")

#: Codes named like a margin or a total (compared in lower case, trimmed): a frequency
#: table's margin rows (:mod:`anonaudit.measures.margins`), a published table's totals
#: (:mod:`anonaudit.sources.published`).
MARGIN_WORDS = frozenset(
    {"total", "totals", "all", "sum", "overall", "grand total", "gesamt", "insgesamt", "totaal"}
    | {"ensemble", "totale", "todos", "total general", "alle", "subtotal", "sub-total"}
)
#: Combinations of the other columns over which a margin's arithmetic must hold for a
#: value not named like one (fewer could hold by chance: 10 = 6 + 4).
MIN_COMBINATIONS = 3

TableLayout: TypeAlias = Literal["auto", "long", "wide"]
#: How a published table is laid out (:mod:`anonaudit.sources.published`): one row per
#: cell, a cross-tab, or found from the file.
TABLE_LAYOUTS: tuple[TableLayout, ...] = ("auto", "long", "wide")
RoundingMethod: TypeAlias = Literal["nearest", "random"]
#: How a published table's values were rounded to their base (:mod:`anonaudit.sources.published`).
ROUNDING_METHODS: tuple[RoundingMethod, ...] = ("nearest", "random")
#: The texts a published table's suppressed cells show unless told (compared trimmed,
#: case-sensitive): ``x`` (Statistics Canada: suppressed for confidentiality), ``c``
#: (confidential: Eurostat's flag, the UK statistical service's ``[c]`` without its
#: brackets), ``..`` and ``...`` (not available: a reader cannot tell them from a
#: suppression), ``*`` and the empty cell. Not ``-``, which many offices print for a nil
#: (a true zero): add it where it marks a suppression.
MARKERS: tuple[str, ...] = ("x", "X", "c", "C", "..", "...", "*", "")

Mechanism: TypeAlias = Literal[
    "discrete-laplace", "discrete-gaussian", "laplace", "gaussian", "randomized-response"
]
#: Every DP mechanism, by the name the API and the command line use.
MECHANISMS: tuple[Mechanism, ...] = (
    "discrete-laplace",
    "discrete-gaussian",
    "laplace",
    "gaussian",
    "randomized-response",
)
#: Mechanisms that add noise to a vector of counts (all but randomized response).
ADDITIVE: tuple[Mechanism, ...] = MECHANISMS[:4]
#: Mechanisms whose noise is whole numbers: counts stay counts.
DISCRETE: tuple[Mechanism, ...] = MECHANISMS[:2]

Postprocess: TypeAlias = Literal["clamp", "unbiased"]
#: Post-processing of noisy counts over a public domain (:mod:`anonaudit.dp.release`).
POSTPROCESS: tuple[Postprocess, ...] = ("clamp", "unbiased")

#: What a redacted report shows in place of a quasi-identifier value (``--redact``).
#: Failing classes the HTML report shows per table on the page.
DEFAULT_MAX_ROWS = 25

REDACTED = "[redacted]"

#: What a suppressed record shows in every quasi-identifier: ARX's convention, which
#: ``anonaudit advise --out`` writes and :func:`anonaudit.audit` reads back. A record
#: whose every QI is ``*`` is suppressed: counted apart, in no equivalence class, and
#: matched against no population table.
SUPPRESSED = "*"

#: The version of the JSON reports' contract (semver: new keys are minor changes); the
#: JSON Schema (``anonaudit/schema/report.schema.json``) states the same.
SCHEMA_VERSION = "2.4"

#: The suffix of the sidecar written beside a DP release (:mod:`anonaudit.report.dp`).
SIDECAR_SUFFIX = ".release.json"

Neighbouring: TypeAlias = Literal["add-remove", "replace"]
#: The neighbouring relations of the DP guarantees (:mod:`anonaudit.dp.sensitivity`).
NEIGHBOURING: tuple[Neighbouring, ...] = ("add-remove", "replace")
#: Releases of each neighbouring dataset the DP self-audit draws unless told
#: (:mod:`anonaudit.dp.selfaudit`, ``anonaudit dp --self-audit``).
SELF_AUDIT_SAMPLES = 100_000
#: ... and the probability that each bound it reports holds.
SELF_AUDIT_CONFIDENCE = 0.99


class Judged(enum.Enum):
    """What a verdict of an audit judges: one measure (per SA for some), or an attack
    across releases (:meth:`anonaudit.AuditReport.verdicts`)."""

    DIRECT_IDENTIFIERS = "direct identifiers"
    K_ANONYMITY = "k-anonymity"
    L_DIVERSITY = "l-diversity"
    T_CLOSENESS = "t-closeness"
    DISCLOSURE = "disclosure"
    RISK = "re-identification risk"
    K_MAP = "k-map"
    COMPOSITION = "composition"
    DIFFERENCING = "differencing"


@dataclass(frozen=True)
class Verdict:
    """One threshold group of a policy, judged.

    Attributes
    ----------
    judged : Judged
        The measure or attack.
    passed : bool
    sensitive : str or None
        The SA, for measures and attacks judged per SA.

    Examples
    --------
    >>> Verdict(Judged.L_DIVERSITY, False, "disease").name
    'l-diversity of disease'
    """

    judged: Judged
    passed: bool
    sensitive: str | None = None

    @property
    def name(self) -> str:
        """How reports name it: ``"k-anonymity"``, ``"l-diversity of disease"``."""
        kind = self.judged.value
        return kind if self.sensitive is None else f"{kind} of {self.sensitive}"
