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
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonaudit.errors import InputError, ParameterError, SourceNotFoundError
from anonaudit.policy import Policy

__all__ = ["AuditConfig", "read_config"]

_THRESHOLDS = ("k", "l", "entropy_l", "recursive", "t", "alpha", "beta", "delta", "max_risk")
_TOP: dict[str, type | tuple[type, ...]] = {
    "inputs": list,
    "quasi_identifiers": list,
    "sensitive": list,
    "thresholds": dict,
    "t_distance": (str, dict),
    "hierarchy": dict,
    "order": dict,
    "ground_distance": dict,
    "nulls": str,
    "sep": str,
    "encoding": str,
    "na_values": list,
    "risk_threshold": (int, float),
    "json": str,
    "max_classes": int,
}


@dataclass
class AuditConfig:
    """Settings of one audit, from a policy file and/or the command line."""

    inputs: list[str] = field(default_factory=list)
    quasi_identifiers: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)
    thresholds: dict[str, Any] = field(default_factory=dict)
    t_distance: str | dict[str, str] | None = None
    hierarchy: dict[str, str] = field(default_factory=dict)
    order: dict[str, list[str]] = field(default_factory=dict)
    ground_distance: dict[str, str] = field(default_factory=dict)
    nulls: str = "value"
    sep: str | None = None
    encoding: str = "utf-8"
    na_values: list[str] = field(default_factory=lambda: [""])
    risk_threshold: float = 0.2
    json: str | None = None
    max_classes: int = 100

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
    config = AuditConfig()
    for key, value in data.items():
        expected = _TOP.get(key)
        if expected is None:
            raise InputError(f"{path}: unknown key {key!r}; known keys: {', '.join(_TOP)}")
        if not isinstance(value, expected):
            raise InputError(f"{path}: {key!r} has the wrong type ({type(value).__name__})")
        setattr(config, key, value)
    for key in config.thresholds:
        if key not in _THRESHOLDS:
            raise ParameterError(
                f"{path}: unknown threshold {key!r}; known: {', '.join(_THRESHOLDS)}"
            )
    base = path.parent
    config.inputs = [str(base / p) for p in config.inputs]
    config.hierarchy = {sa: str(base / p) for sa, p in config.hierarchy.items()}
    config.ground_distance = {sa: str(base / p) for sa, p in config.ground_distance.items()}
    if config.json not in (None, "-"):
        config.json = str(base / config.json)
    return config
