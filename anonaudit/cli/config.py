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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonaudit.errors import InputError, OptionError, ParameterError, SourceNotFoundError
from anonaudit.measures.generalization import is_builtin
from anonaudit.settings.catalog import DP_OPTIONS, OPTIONS, Option, by_key
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
from anonaudit.sources.storage import is_url

if TYPE_CHECKING:
    from anonaudit.progress import Progress

__all__ = ["AuditConfig", "read_config", "relative_to"]


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
#: A policy file's tables of their own keys (the settings of kind ``table``).
_TABLES: dict[str, _Table] = {
    "thresholds": _THRESHOLDS,
    "ledger": _Table({"file": _TEXT, "dataset": _TEXT, "recipient": _TEXT, "id": _TEXT}),
}
_DISTANCE = _Value(
    "a string or a table of strings",
    "",
    lambda v: isinstance(v, str) or (isinstance(v, dict) and all(map(_TEXT.test, v.values()))),
)


def _schema(option: Option) -> _Value | _Items | _Table:
    """How a policy file writes ``option``'s value (:data:`~anonaudit.settings.catalog.Kind`)."""
    if option.kind == "table":
        return _TABLES[option.key]
    kinds: dict[str, _Value | _Items | _Table] = {
        "text": _TEXT,
        "whole": _WHOLE,
        "number": _NUMBER,
        "boolean": _BOOLEAN,
        "show": _BOOLEAN,
        "size": _SIZE,
        "texts": _TEXTS,
        "columns": _TEXTS,
        "mapping": _Items(_SCALAR, table=True),
        "paths": _PATHS,
        "levels": _Items(_WHOLE, table=True),
        "distance": _DISTANCE,
    }
    return kinds[option.kind]


#: A policy file's [dp] table: the DP companion's settings ``anonaudit audit`` takes.
_TABLES["dp"] = _Table(
    {option.key: _schema(option) for option in DP_OPTIONS if "audit" in option.commands}
)
_DATASET: dict[str, _Value | _Items | _Table] = {
    **{option.key: _schema(option) for option in OPTIONS},
    **{each.key: _PATHS if each.path else _Items(_TEXTS, table=True) for each in DISTANCE_INPUTS},
}
# The whole file: a dataset's keys, and the [[datasets]] tables, which do not nest.
_SCHEMA = _Table({**_DATASET, "datasets": _Items(_Table(_DATASET))})
# Keys a [[datasets]] table does not inherit from the top level: its own outputs.
_OWN = ("json", "html", "records_out", "name", "datasets")
#: The settings by key.
_OPTIONS = by_key()
#: Settings beside those of the catalog: the ground distances' inputs (per key of
#: DISTANCE_INPUTS) and the [[datasets]] of a policy file.
_OTHERS = ("distance_inputs", "datasets")


class AuditConfig:
    """Settings of one audit, from a policy file and/or the command line: a value per
    key of :data:`~anonaudit.settings.catalog.OPTIONS` (read as attributes, its default
    until set), the ground distances' inputs (``distance_inputs``, by key of
    :data:`~anonaudit.settings.names.DISTANCE_INPUTS`) and, for a policy file with
    ``[[datasets]]``, one configuration per dataset (``datasets``).

    >>> config = AuditConfig(sep=";")
    >>> config.sep, config.encoding, config.na_values
    (';', 'utf-8', [''])
    >>> config.sepp = ","
    Traceback (most recent call last):
    ...
    AttributeError: no setting 'sepp'
    """

    def __init__(self, **values: Any) -> None:
        settings = {key: _fresh(option.default) for key, option in _OPTIONS.items()}
        settings |= {"distance_inputs": {}, "datasets": []}
        object.__setattr__(self, "_values", settings)
        for key, value in values.items():
            setattr(self, key, value)

    def __getattr__(self, key: str) -> Any:
        values = self.__dict__.get("_values")
        if values is None or key not in values:
            raise AttributeError(f"no setting {key!r}")
        return values[key]

    def __setattr__(self, key: str, value: Any) -> None:
        if key not in self._values:
            raise AttributeError(f"no setting {key!r}")
        self._values[key] = value

    def __repr__(self) -> str:
        return f"AuditConfig({self._values!r})"

    def replace(self, **changes: Any) -> AuditConfig:
        """A copy with ``changes``."""
        copied = AuditConfig()
        object.__setattr__(copied, "_values", {**copy.deepcopy(self._values), **changes})
        return copied

    def reading(self) -> ReadOptions:
        """How the inputs are read, as :func:`anonaudit.load` and
        :func:`anonaudit.sources.open_inputs` take it."""
        return self.keywords().reading

    def roles(self) -> Roles:
        """The columns' roles."""
        return Roles(**self.keywords().roles)

    def engine_options(
        self, *, progress: Progress | None = None, scheduler: Any = None
    ) -> EngineOptions:
        """Where the class table is built; ``scheduler`` overrides :attr:`scheduler`."""
        engine = self.keywords().engine
        return replace(engine, scheduler=scheduler or engine.scheduler, progress=progress)

    def options(self) -> AuditOptions:
        """What the audit measures and judges."""
        return self.keywords().audit

    def policy(self) -> Policy:
        """The thresholds as a :class:`Policy`."""
        values = dict(self.thresholds)
        for threshold in threshold_fields():
            pair = values.get(threshold.name)
            if threshold.metadata["kind"] == "pair" and pair is not None:
                values[threshold.name] = (float(pair[0]), int(pair[1]))
        return Policy(**values)

    def keywords(self) -> Keywords:
        """The settings as option objects: each setting with a ``keyword`` in the catalog
        through :func:`anonaudit.settings.options.from_keywords`."""
        settings: dict[str, Any] = {
            option.keyword: (self._values[key] or None)
            if option.zero_is_none
            else self._values[key]
            for key, option in _OPTIONS.items()
            if option.keyword is not None
        }
        settings["policy"] = self.policy()
        for each in DISTANCE_INPUTS:
            settings[each.keyword] = self.distance_inputs.get(each.key, {})
        return from_keywords(
            settings, quasi_identifiers=self.quasi_identifiers, sensitive=self.sensitive
        )


def _fresh(value: Any) -> Any:
    """A default as a setting's own value: lists and tables copied."""
    if isinstance(value, tuple):
        return list(value)
    return copy.deepcopy(value)


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
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
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
            option = _OPTIONS[key]
            setattr(config, key, value if option.path is None else relative_to(value, option, base))
    config.storage_options = {k: str(v) for k, v in config.storage_options.items()}
    if "file" in config.ledger:
        config.ledger = config.ledger | {"file": str(base / config.ledger["file"])}
    try:  # a threshold out of its range is the file's, named by its key
        config.policy()
    except OptionError as exc:
        raise InputError(f"{path}: {exc.worded(f'[thresholds] {exc.option}')}") from None
    except ParameterError as exc:
        raise InputError(f"{path}: [thresholds] {exc}") from None
    return config


def relative_to(value: Any, option: Option, base: Path) -> Any:
    """``value`` (a path, a list or a table of them) relative to ``base`` where it is a
    path of the file system (see :data:`~anonaudit.settings.catalog.PathKind`)."""
    if isinstance(value, list):
        return [relative_to(v, option, base) for v in value]
    if isinstance(value, dict):
        return {k: relative_to(v, option, base) for k, v in value.items()}
    kept = {
        "file": False,
        "input": is_url(value),
        "output": value == "-",
        "hierarchy": is_builtin(value),
    }[option.path or "file"]
    return value if kept else str(base / value)
