"""The names the options take, in one light module the command line can import.

Each set of names (distances, population models, null policies, mechanisms, ...) is
defined here once, with its type, and re-exported by the module that implements it.
Building the argument parser from them imports nothing heavy, so ``anonaudit --help``
and ``--version`` start in a fraction of a second (``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "ADDITIVE",
    "DISTANCES",
    "FORMATS",
    "MECHANISMS",
    "MISSING_COLUMNS",
    "NEIGHBOURING",
    "NULL_POLICIES",
    "POPULATION_MODELS",
    "POSTPROCESS",
    "REDACTED",
    "SCHEMA_VERSION",
    "SIDECAR_SUFFIX",
    "Judged",
    "Mechanism",
    "MissingColumns",
    "Neighbouring",
    "NullPolicy",
    "PopulationModel",
    "Postprocess",
    "Verdict",
]

#: The ground distances of t-closeness (:func:`anonaudit.checks.t_closeness`), by name.
DISTANCES = ("equal", "ordered", "numeric", "hierarchical", "matrix")

PopulationModel: TypeAlias = Literal["dankar", "pitman", "zayatz", "snb"]
#: The population uniqueness models (:mod:`anonaudit.checks.population`).
POPULATION_MODELS: tuple[PopulationModel, ...] = ("dankar", "pitman", "zayatz", "snb")

NullPolicy: TypeAlias = Literal["value", "drop", "wildcard"]
#: What a null quasi-identifier value means (:mod:`anonaudit.checks.wildcard`).
NULL_POLICIES: tuple[NullPolicy, ...] = ("value", "drop", "wildcard")

MissingColumns: TypeAlias = Literal["error", "null"]
#: What a dataset's file lacking an audited column means: an error, or nulls.
MISSING_COLUMNS: tuple[MissingColumns, ...] = ("error", "null")

#: The formats of a dataset's files (:mod:`anonaudit.sources.dataset`).
FORMATS = ("parquet", "csv", "delta")

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

Postprocess: TypeAlias = Literal["clamp", "unbiased"]
#: Post-processing of noisy counts over a public domain (:mod:`anonaudit.dp.release`).
POSTPROCESS: tuple[Postprocess, ...] = ("clamp", "unbiased")

#: What a redacted report shows in place of a quasi-identifier value (``--redact``).
REDACTED = "[redacted]"

#: The version of the JSON reports' contract (semver: new keys are minor changes); the
#: JSON Schema (``anonaudit/schema/report.schema.json``) states the same.
SCHEMA_VERSION = "2.3"

#: The suffix of the sidecar written beside a DP release (:mod:`anonaudit.dp.artefact`).
SIDECAR_SUFFIX = ".release.json"

Neighbouring: TypeAlias = Literal["add-remove", "replace"]
#: The neighbouring relations of the DP guarantees (:mod:`anonaudit.dp.sensitivity`).
NEIGHBOURING: tuple[Neighbouring, ...] = ("add-remove", "replace")


class Judged(enum.Enum):
    """What a verdict of an audit judges: one measure (per SA for some), or an attack
    across releases (:meth:`anonaudit.AuditReport.verdicts`)."""

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
