"""Policy files: the TOML a batch job keeps beside its data.

Every key mirrors a long command-line option (dashes become underscores); options on
the command line override the file. Paths are relative to the file. Example::

    inputs = ["export.csv"]
    quasi_identifiers = ["sex", "age", "zip"]
    sensitive = ["diagnosis"]
    sep = ";"

    [thresholds]
    k = 5
    l = 2
    entropy_l = 1.5
    recursive = [3.0, 2]      # c, l
    t = 0.2

    [t_distance]              # or: t_distance = "equal"
    diagnosis = "hierarchical"

    [hierarchy]
    diagnosis = "hierarchies/diagnosis.csv"
    age = "interval:5,10,20"  # a QI: a file or a built-in (not relative to the file)

    [generalize]              # audit the data as it would be generalized
    age = 2

``advise = true`` adds the lattice search (``--advise``) to the audit, and
``suppression_limit = 0.02`` bounds the records it may suppress and ``max_results = 10``
the transformations it lists (0: all; also the defaults of ``anonaudit advise``).

Several datasets, each with its own roles and thresholds, are ``[[datasets]]`` tables;
every top-level key is their default (``thresholds`` and ``storage_options`` are
refined key by key), except the outputs: the top-level ``json`` is the run's summary,
and each dataset writes its own ``json``/``html`` (default ``<name>.json`` beside the
summary) and ``records_out`` (none by default; not allowed at the top level)::

    sensitive = ["diagnosis"]
    json = "reports/summary.json"
    storage_options = { endpoint_url = "http://127.0.0.1:8333" }
    [thresholds]
    k = 5

    [[datasets]]
    name = "visits"
    inputs = ["s3://lake/visits/"]
    filter = ["day=2024-01-02"]
    quasi_identifiers = ["zip", "age", "day"]
    [datasets.thresholds]
    k = 10
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonaudit.checks.population import PopulationModel
from anonaudit.errors import InputError, ParameterError, SourceNotFoundError
from anonaudit.generalization import is_builtin
from anonaudit.policy import Policy
from anonaudit.sources.storage import is_url

__all__ = ["AuditConfig", "read_config"]

_THRESHOLDS = ("k", "l", "entropy_l", "recursive", "t", "alpha", "beta", "delta", "max_risk")
_TOP: dict[str, type | tuple[type, ...]] = {
    "inputs": list,
    "quasi_identifiers": list,
    "sensitive": list,
    "thresholds": dict,
    "t_distance": (str, dict),
    "hierarchy": dict,
    "generalize": dict,
    "order": dict,
    "ground_distance": dict,
    "nulls": str,
    "sep": str,
    "encoding": str,
    "na_values": list,
    "risk_threshold": (int, float),
    "population_size": (int, float),
    "sampling_fraction": (int, float),
    "population_model": str,
    "weights": str,
    "qi_analysis": (bool, int),
    "suda": (bool, int),
    "advise": bool,
    "suppression_limit": (int, float),
    "max_results": int,
    "json": str,
    "html": str,
    "records_out": str,
    "max_classes": int,
    "format": str,
    "filter": list,
    "storage_options": dict,
    "delta_version": int,
    "engine": str,
    "scheduler": str,
    "name": str,
    "datasets": list,
}
# Keys a [[datasets]] table does not inherit from the top level: its own outputs.
_OWN = ("json", "html", "records_out", "name", "datasets")


@dataclass
class AuditConfig:
    """Settings of one audit, from a policy file and/or the command line."""

    inputs: list[str] = field(default_factory=list)
    quasi_identifiers: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)
    thresholds: dict[str, Any] = field(default_factory=dict)
    t_distance: str | dict[str, str] | None = None
    hierarchy: dict[str, str] = field(default_factory=dict)
    generalize: dict[str, int] = field(default_factory=dict)
    order: dict[str, list[str]] = field(default_factory=dict)
    ground_distance: dict[str, str] = field(default_factory=dict)
    nulls: str = "value"
    sep: str | None = None
    encoding: str = "utf-8"
    na_values: list[str] = field(default_factory=lambda: [""])
    risk_threshold: float = 0.2
    population_size: float | None = None
    sampling_fraction: float | None = None
    population_model: PopulationModel = "dankar"
    weights: str | None = None
    qi_analysis: bool | int | None = None
    suda: bool | int | None = None
    advise: bool = False
    suppression_limit: float = 0.0
    max_results: int = 10
    json: str | None = None
    html: str | None = None
    records_out: str | None = None
    max_classes: int = 100
    format: str | None = None
    filter: list[str] = field(default_factory=list)
    storage_options: dict[str, str] = field(default_factory=dict)
    delta_version: int | None = None
    engine: str = "local"
    scheduler: str | None = None
    name: str | None = None
    datasets: list[AuditConfig] = field(default_factory=list)

    def reading(self) -> dict[str, Any]:
        """How the inputs are opened: the keyword arguments :func:`anonaudit.rows.open_inputs`
        takes, which :func:`anonaudit.load` and :func:`anonaudit.audit` take too."""
        return {
            "sep": self.sep,
            "encoding": self.encoding,
            "na_values": self.na_values,
            "format": self.format,
            "filter": self.filter,
            "storage_options": self.storage_options,
            "delta_version": self.delta_version,
        }

    def policy(self) -> Policy:
        """The thresholds as a :class:`Policy`."""
        values = dict(self.thresholds)
        if values.get("recursive") is not None:
            c, l = values["recursive"]
            values["recursive"] = (float(c), int(l))
        return Policy(**values)


def read_config(path: str | Path) -> AuditConfig:
    """Read and validate a TOML policy file.

    Raises
    ------
    InputError
        Unparseable TOML, an unknown key, or a value of the wrong type (named).
    """
    path = Path(path)
    if not path.exists():
        raise SourceNotFoundError(f"{path}: no such policy file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    config = _settings(data, path)
    tables = data.get("datasets", [])
    if tables and "records_out" in data:
        raise InputError(
            f"{path}: records_out names one file; with [[datasets]], set it in each dataset"
        )
    if not all(isinstance(table, dict) for table in tables):
        raise InputError(f"{path}: 'datasets' must be [[datasets]] tables")
    inherited = {key: value for key, value in data.items() if key not in _OWN}
    for number, table in enumerate(tables, start=1):
        if "datasets" in table:
            raise InputError(f"{path}: dataset {number} holds 'datasets'; they do not nest")
        merged = copy.deepcopy({**inherited, **table})  # no dataset shares a mutable value
        for key in ("thresholds", "storage_options"):  # a dataset refines these tables
            if isinstance(table.get(key), dict) and isinstance(inherited.get(key), dict):
                merged[key] = {**inherited[key], **table[key]}
        dataset = _settings(merged, path)
        dataset.name = dataset.name or f"dataset{number}"
        config.datasets.append(dataset)
    names = [dataset.name for dataset in config.datasets]
    for name in {n for n in names if names.count(n) > 1}:
        raise InputError(f"{path}: two datasets are named {name!r}; names must differ")
    return config


def _settings(data: dict[str, Any], path: Path) -> AuditConfig:
    """One audit's settings from a TOML table, paths made relative to ``path``."""
    config = AuditConfig()
    for key, value in data.items():
        expected = _TOP.get(key)
        if expected is None:
            raise InputError(f"{path}: unknown key {key!r}; known keys: {', '.join(_TOP)}")
        if not isinstance(value, expected):
            raise InputError(f"{path}: {key!r} has the wrong type ({type(value).__name__})")
        if key != "datasets":
            setattr(config, key, value)
    for key in config.thresholds:
        if key not in _THRESHOLDS:
            raise ParameterError(
                f"{path}: unknown threshold {key!r}; known: {', '.join(_THRESHOLDS)}"
            )
    base = path.parent
    config.inputs = [p if is_url(p) else str(base / p) for p in config.inputs]
    config.storage_options = {k: str(v) for k, v in config.storage_options.items()}
    config.hierarchy = {
        c: p if is_builtin(p) else str(base / p) for c, p in config.hierarchy.items()
    }
    for column, level in config.generalize.items():
        if isinstance(level, bool) or not isinstance(level, int):
            raise InputError(f"{path}: generalize.{column} must be a whole number (a level)")
    config.ground_distance = {sa: str(base / p) for sa, p in config.ground_distance.items()}
    if config.json not in (None, "-"):
        config.json = str(base / config.json)
    if config.html is not None:
        config.html = str(base / config.html)
    if config.records_out is not None:
        config.records_out = str(base / config.records_out)
    return config
