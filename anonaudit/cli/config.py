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

A ``[dp]`` table adds the differential-privacy companion, as ``--dp-epsilon`` and its
options do (``public_domain`` values as on the command line, ``@FILE`` relative to the
policy file)::

    [dp]
    epsilon = 1.0
    delta = 1e-6

A ``[ledger]`` table judges the release against the earlier releases of its dataset in a
release ledger and records it when it passes (``--ledger``, ``--dataset``, ``--recipient``
and ``--id``; the file relative to the policy file; one dataset, not ``[[datasets]]``)::

    [ledger]
    file = "releases.sqlite"
    dataset = "visits"
    id = "pid"

The reports are redacted by default: the quasi-identifier values of the classes they list
read ``[redacted]``; ``redact = false`` (or ``--show-values``) shows them, and the report's
notice says so. ``allow_identifiers = ["staff_id"]`` names columns that may identify
people directly and are released knowingly (``--allow-identifier``): any other column
detected as a direct identifier and declared neither QI nor sensitive fails the audit.
``listings_dir = "listings"`` writes every
listing of classes in full beside the reports (``--listings-dir``), which otherwise hold
at most ``max_classes`` classes per listing.

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonaudit.errors import InputError, SourceNotFoundError
from anonaudit.measures.generalization import is_builtin
from anonaudit.measures.population import PopulationModel
from anonaudit.settings.names import DISTANCE_INPUTS
from anonaudit.settings.options import (
    AuditOptions,
    EngineOptions,
    Keywords,
    ReadOptions,
    Roles,
    from_keywords,
)
from anonaudit.settings.policy import Policy, threshold_fields
from anonaudit.settings.work import DEFAULT_MAX_WORK
from anonaudit.sources.storage import is_url

if TYPE_CHECKING:
    from anonaudit.progress import Progress

__all__ = ["AuditConfig", "read_config"]


class _SchemaError(Exception):
    """A value of a policy file that does not fit the schema (the message, without the file)."""


@dataclass(frozen=True)
class _Value:
    """A leaf of the schema: a value of one kind, e.g. a whole number."""

    expected: str
    plural: str
    test: Callable[[Any], bool]

    def check(self, value: Any, key: str) -> None:
        if not self.test(value):
            raise _SchemaError(_mismatch(key, self.expected, value))


@dataclass(frozen=True)
class _Items:
    """A list, or with ``table`` a table of any keys, whose every item is ``item``."""

    item: _Value | _Items | _Table
    table: bool = False

    @property
    def expected(self) -> str:
        return f"a {'table' if self.table else 'list'} of {self.item.plural}"

    @property
    def plural(self) -> str:
        return f"{'tables' if self.table else 'lists'} of {self.item.plural}"

    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, dict if self.table else list):
            raise _SchemaError(_mismatch(key, self.expected, value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for name, item in items:
            self.item.check(item, f"{key}.{name}" if self.table else f"{key}[{name}]")


@dataclass(frozen=True)
class _Table:
    """A table of known keys, each with its own schema."""

    keys: Mapping[str, _Value | _Items | _Table]
    expected = "a table"
    plural = "tables"

    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, dict):
            raise _SchemaError(_mismatch(key, self.expected, value))
        for name, item in value.items():
            schema = self.keys.get(name)
            if schema is None:
                where = f" in {key}" if key else ""
                raise _SchemaError(
                    f"unknown key {name!r}{where}; known keys: {', '.join(self.keys)}"
                )
            schema.check(item, f"{key}.{name}" if key else name)


def _mismatch(key: str, expected: str, value: Any) -> str:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    top = key.split(".")[0].split("[")[0]
    return f"wrong type for {top!r}: {key} must be {expected}, found {shown} ({_kind(value)})"


_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "a whole number"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "a table"),
)


def _kind(value: Any) -> str:
    """The TOML kind of a parsed value, as a policy file's author names it."""
    return next((name for kind, name in _KINDS if isinstance(value, kind)), "a date or time")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TEXT = _Value("a string", "strings", lambda v: isinstance(v, str))
_WHOLE = _Value("a whole number", "whole numbers", _whole)
_NUMBER = _Value("a number", "numbers", _number)
_BOOLEAN = _Value("true or false", "booleans", lambda v: isinstance(v, bool))
_TEXTS = _Items(_TEXT)
_PATHS = _Items(_TEXT, table=True)
_SIZE = _Value("true, false or a whole number", "", lambda v: isinstance(v, int))
_SCALAR = _Value(
    "a string, number or boolean",
    "strings, numbers or booleans",
    lambda v: isinstance(v, (str, int, float)),
)
_PAIR = _Value(
    "[c, l]: a number and a whole number, such as [3.0, 2]",
    "",
    lambda v: isinstance(v, list) and len(v) == 2 and _number(v[0]) and _whole(v[1]),
)
#: The ``[thresholds]`` keys: the policy's thresholds, each with the type of its kind.
_THRESHOLDS = _Table(
    {
        threshold.name: {"whole": _WHOLE, "number": _NUMBER, "pair": _PAIR}[
            threshold.metadata["kind"]
        ]
        for threshold in threshold_fields()
    }
)
_DATASET: dict[str, _Value | _Items | _Table] = {
    "inputs": _TEXTS,
    "quasi_identifiers": _TEXTS,
    "sensitive": _TEXTS,
    "thresholds": _THRESHOLDS,
    "t_distance": _Value(
        "a string or a table of strings",
        "",
        lambda v: isinstance(v, str) or (isinstance(v, dict) and all(map(_TEXT.test, v.values()))),
    ),
    "hierarchy": _PATHS,
    "generalize": _Items(_WHOLE, table=True),
    **{each.key: _PATHS if each.path else _Items(_TEXTS, table=True) for each in DISTANCE_INPUTS},
    "nulls": _TEXT,
    "sep": _TEXT,
    "encoding": _TEXT,
    "na_values": _TEXTS,
    "risk_threshold": _NUMBER,
    "population_size": _NUMBER,
    "sampling_fraction": _NUMBER,
    "population": _TEXT,
    "k_map": _WHOLE,
    "max_work": _WHOLE,
    "population_model": _TEXT,
    "weights": _TEXT,
    "count": _TEXT,
    "allow_identifiers": _TEXTS,
    "decimal_comma": _TEXTS,
    "qi_analysis": _SIZE,
    "suda": _SIZE,
    "advise": _BOOLEAN,
    "suppression_limit": _NUMBER,
    "max_results": _WHOLE,
    "json": _TEXT,
    "html": _TEXT,
    "records_out": _TEXT,
    "max_classes": _WHOLE,
    "redact": _BOOLEAN,
    "listings_dir": _TEXT,
    "format": _TEXT,
    "filter": _TEXTS,
    "storage_options": _Items(_SCALAR, table=True),
    "delta_version": _WHOLE,
    "missing_columns": _TEXT,
    "engine": _TEXT,
    "scheduler": _TEXT,
    "temp_dir": _TEXT,
    "memory_limit": _TEXT,
    "name": _TEXT,
    "ledger": _Table({"file": _TEXT, "dataset": _TEXT, "recipient": _TEXT, "id": _TEXT}),
    "dp": _Table(
        {
            "epsilon": _NUMBER,
            "delta": _NUMBER,
            "mechanism": _TEXT,
            "neighbouring": _TEXT,
            "public_domain": _Items(_TEXT, table=True),
            "rr_sensitive": _TEXT,
            "postprocess": _TEXT,
        }
    ),
}
# The whole file: a dataset's keys, and the [[datasets]] tables, which do not nest.
_SCHEMA = _Table({**_DATASET, "datasets": _Items(_Table(_DATASET))})
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
    #: The ground distances' inputs (:data:`anonaudit.settings.names.DISTANCE_INPUTS`) by key,
    #: then by SA: ``{"order": {"income": ["low", "high"]}, "ground_distance": {...}}``.
    distance_inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    nulls: str = "value"
    sep: str | None = None
    encoding: str = "utf-8"
    na_values: list[str] = field(default_factory=lambda: [""])
    risk_threshold: float = 0.2
    population_size: float | None = None
    sampling_fraction: float | None = None
    population: str | None = None
    k_map: int | None = None
    max_work: int = DEFAULT_MAX_WORK
    population_model: PopulationModel = "dankar"
    weights: str | None = None
    count: str | None = None
    allow_identifiers: list[str] = field(default_factory=list)
    decimal_comma: list[str] = field(default_factory=list)
    qi_analysis: bool | int | None = None
    suda: bool | int | None = None
    advise: bool = False
    suppression_limit: float = 0.0
    max_results: int = 10
    json: str | None = None
    html: str | None = None
    records_out: str | None = None
    max_classes: int = 100
    redact: bool = True
    listings_dir: str | None = None
    format: str | None = None
    filter: list[str] = field(default_factory=list)
    storage_options: dict[str, str] = field(default_factory=dict)
    delta_version: int | None = None
    missing_columns: str = "error"
    engine: str = "local"
    scheduler: str | None = None
    temp_dir: str | None = None
    memory_limit: str | None = None
    name: str | None = None
    ledger: dict[str, str] = field(default_factory=dict)
    dp: dict[str, Any] = field(default_factory=dict)
    datasets: list[AuditConfig] = field(default_factory=list)

    def reading(self) -> ReadOptions:
        """How the inputs are read, as :func:`anonaudit.load` and
        :func:`anonaudit.sources.open_inputs` take it."""
        return self._keywords().reading

    def roles(self) -> Roles:
        """The columns' roles."""
        return Roles(**self._keywords().roles)

    def engine_options(
        self, *, progress: Progress | None = None, scheduler: Any = None
    ) -> EngineOptions:
        """Where the class table is built; ``scheduler`` overrides :attr:`scheduler`."""
        return replace(
            self._keywords().engine, scheduler=scheduler or self.scheduler, progress=progress
        )

    def options(self) -> AuditOptions:
        """What the audit measures and judges."""
        return self._keywords().audit

    def policy(self) -> Policy:
        """The thresholds as a :class:`Policy`."""
        values = dict(self.thresholds)
        for threshold in threshold_fields():
            pair = values.get(threshold.name)
            if threshold.metadata["kind"] == "pair" and pair is not None:
                values[threshold.name] = (float(pair[0]), int(pair[1]))
        return Policy(**values)

    def _keywords(self) -> Keywords:
        """The settings as option objects: the one mapping of policy-file keys and
        command-line options onto them (:func:`anonaudit.settings.options.from_keywords`)."""
        settings = {
            "quasi_identifiers": self.quasi_identifiers,
            "sensitive": self.sensitive,
            "weights": self.weights,
            "count": self.count,
            "allowed_identifiers": self.allow_identifiers,
            "sep": self.sep,
            "encoding": self.encoding,
            "na_values": self.na_values,
            "format": self.format,
            "filter": self.filter,
            "storage_options": self.storage_options,
            "delta_version": self.delta_version,
            "missing_columns": self.missing_columns,
            "decimal_comma": self.decimal_comma,
            "engine": self.engine,
            "policy": self.policy(),
            "distance": self.t_distance,
            "hierarchies": self.hierarchy,
            **{each.keyword: self.distance_inputs.get(each.key, {}) for each in DISTANCE_INPUTS},
            "nulls": self.nulls,
            "risk_threshold": self.risk_threshold,
            "population_size": self.population_size,
            "sampling_fraction": self.sampling_fraction,
            "population_model": self.population_model,
            "population_table": self.population,
            "k_map": self.k_map,
            "generalize": self.generalize or None,
            "qi_analysis": self.qi_analysis,
            "suda": self.suda,
            "advise": self.advise,
            "suppression_limit": self.suppression_limit,
            "max_results": self.max_results or None,
            "max_work": self.max_work or None,
        }
        return from_keywords(
            settings, quasi_identifiers=self.quasi_identifiers, sensitive=self.sensitive
        )


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
    try:
        _SCHEMA.check(data, "")
    except _SchemaError as exc:
        raise InputError(f"{path}: {exc}") from None
    config = _settings(data, path)
    tables = data.get("datasets", [])
    if tables and "records_out" in data:
        raise InputError(
            f"{path}: records_out names one file; with [[datasets]], set it in each dataset"
        )
    inherited = {key: value for key, value in data.items() if key not in _OWN}
    for number, table in enumerate(tables, start=1):
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
    """One audit's settings from a TOML table (checked against the schema), paths made
    relative to ``path``."""
    config = AuditConfig()
    inputs = {each.key: each for each in DISTANCE_INPUTS}
    base = path.parent
    for key, value in data.items():
        if key in inputs:  # relative to the policy file if a path
            paths = inputs[key].path
            config.distance_inputs[key] = {
                sa: str(base / v) if paths else v for sa, v in value.items()
            }
        elif key != "datasets":
            setattr(config, key, value)
    config.inputs = [p if is_url(p) else str(base / p) for p in config.inputs]
    config.storage_options = {k: str(v) for k, v in config.storage_options.items()}
    config.hierarchy = {
        c: p if is_builtin(p) else str(base / p) for c, p in config.hierarchy.items()
    }
    if config.population is not None and not is_url(config.population):
        config.population = str(base / config.population)
    if config.json not in (None, "-"):
        config.json = str(base / config.json)
    if config.html is not None:
        config.html = str(base / config.html)
    if config.records_out is not None:
        config.records_out = str(base / config.records_out)
    if config.listings_dir is not None:
        config.listings_dir = str(base / config.listings_dir)
    if "file" in config.ledger:
        config.ledger = config.ledger | {"file": str(base / config.ledger["file"])}
    return config
