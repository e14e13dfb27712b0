"""The publishable release: the released class table as CSV and a sidecar of public facts.

``anonaudit dp --out release.csv`` writes two files, both meant to be published:

* ``release.csv``: the released class table, one row per released cell, the QI and SA
  columns then ``count`` (:func:`released_frame`, written by
  :func:`anonaudit.files.table_to_csv`);
* ``release.release.json`` (:func:`sidecar_path`): how the table was made, so that a
  reader can interpret it (:func:`sidecar`): mechanism, ε, δ, noise scale, neighbouring
  relation, privacy unit and contributions, which cells were released, the stability
  threshold, the bound on each count's noise, the post-processing, and the OpenDP and
  anonaudit versions.

Every fact in the sidecar follows from the parameters of the release and the noise
distribution alone, never from the exact data: it holds no k, l or t of the data, no
contrast, no count of hidden classes, true counts, records left out or combinations
observed. Those stay in the internal report (``--json``, the ``internal`` part of
:func:`anonaudit.report.json.dp_to_dict`). Publishing a function of the released counts
and of public parameters costs no privacy (post-processing; Dwork & Roth 2014, "The
algorithmic foundations of differential privacy", Proposition 2.1).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from anonaudit import __version__
from anonaudit.dp.companion import DPReport
from anonaudit.dp.mechanisms import ADDITIVE
from anonaudit.dp.release import by_key
from anonaudit.files import atomic_write_text, table_to_csv
from anonaudit.report.kit import dumps
from anonaudit.settings.names import SIDECAR_SUFFIX

__all__ = [
    "SIDECAR_SUFFIX",
    "postprocessing",
    "protects",
    "released_frame",
    "sidecar",
    "sidecar_path",
    "write",
]

#: What replaces the CSV's suffix in the sidecar's name: ``release.csv`` gets
#: ``release.release.json``.
_COUNT = "count"


def sidecar_path(path: Path) -> Path:
    """The sidecar written beside the CSV ``path`` (:data:`SIDECAR_SUFFIX`).

    >>> sidecar_path(Path("out/release.csv")).as_posix()
    'out/release.release.json'
    """
    return path.with_suffix(SIDECAR_SUFFIX)


def _additive_public(report: DPReport) -> bool:
    return report.release.domain == "public" and report.release.mechanism in ADDITIVE


def released_frame(report: DPReport) -> pa.Table:
    """The released class table: QI, SA and ``count`` columns, zero counts left out.

    With ``postprocess="unbiased"`` the negative counts are listed too; they are not in
    :attr:`~anonaudit.dp.release.Release.table`, which holds only positive counts, so they
    are named from the public domain.
    """
    r = report.release
    if report.postprocess != "unbiased":
        return r.to_frame()
    if report.domain is None:  # release() refuses "unbiased" without a public domain
        raise ValueError("an unbiased release has a public domain; this report has none")
    columns = [*r.original.quasi_identifiers, *r.original.sensitive]
    cells = np.flatnonzero(r.released_counts)
    keys = report.domain.cell_keys(cells, columns)
    frame = pa.table(
        {c: pa.array(keys[c], pa.string()) for c in columns}
        | {_COUNT: pa.array(r.released_counts[cells], pa.int64())}
    )
    return by_key(frame, columns)


def postprocessing(report: DPReport) -> dict[str, str]:
    """What was done to the noisy counts before release: ``name`` and ``description``.

    ``clamp`` and ``unbiased`` apply to additive noise over a public domain
    (:func:`~anonaudit.dp.release.release`); counts kept above a stability threshold, and
    randomized response's reports, are never negative and are released as drawn
    (``none``).
    """
    if not _additive_public(report):
        return {"name": "none", "description": "counts released as drawn"}
    if report.postprocess == "unbiased":
        return {
            "name": "unbiased",
            "description": "rounded to whole numbers; negative counts kept, so that each "
            "count and every sum of counts is unbiased",
        }
    return {
        "name": "clamp",
        "description": "rounded to whole numbers; negative counts set to 0, which biases "
        "empty cells upwards",
    }


def _domain(report: DPReport) -> dict[str, Any]:
    r = report.release
    declared = report.domain.values if report.domain is not None else {}
    if r.mechanism == "randomized-response":
        sa = r.original.sensitive[0]
        return {
            "kind": r.domain,
            "description": f"the classes of the data with their sizes, exactly; each "
            f"record's {sa} reported by randomized response among the declared values",
            "values": {sa: list(declared[sa])},
        }
    if r.domain == "public":
        columns = [*r.original.quasi_identifiers, *r.original.sensitive]
        return {
            "kind": r.domain,
            "description": "every combination of the declared values; a combination "
            "absent from the table was released as 0",
            "values": {c: list(declared[c]) for c in columns},
        }
    return {
        "kind": r.domain,
        "description": "observed combinations above a threshold",
        "values": None,
    }


def sidecar(report: DPReport) -> dict[str, Any]:
    """The public facts of the release, as the sidecar and the JSON ``release`` part hold them.

    Keys: ``anonaudit_version``, ``opendp_version``, ``mechanism``, ``epsilon``,
    ``delta``, ``noise_scale`` (b, σ, or randomized response's probability of reporting
    another value), ``neighbouring``, ``privacy_unit`` (a column, or null: one record),
    ``max_contributions``, ``quasi_identifiers``, ``sensitive``, ``domain`` (``kind``,
    ``description``, ``values``: the declared values, or null for observed
    combinations), ``threshold`` (τ, observed combinations only: a combination is kept
    when its noisy count reaches it), ``keep_below`` (q, observed combinations only: the
    chance that one whose noisy count is ``τ - 1`` is kept), ``error`` (the noise
    added to each count lies within ±``within`` with probability ``confidence``; null for
    randomized response), ``postprocessing`` (:func:`postprocessing`) and
    ``protects`` (:func:`protects`).
    """
    r, u = report.release, report.utility
    return {
        "anonaudit_version": __version__,
        "opendp_version": metadata.version("opendp"),
        "mechanism": r.mechanism,
        "epsilon": r.epsilon,
        "delta": r.delta,
        "noise_scale": r.noise_scale,
        "neighbouring": r.sensitivity.neighbouring,
        "privacy_unit": report.privacy_unit,
        "max_contributions": r.sensitivity.max_contributions,
        "quasi_identifiers": list(r.original.quasi_identifiers),
        "sensitive": list(r.original.sensitive),
        "domain": _domain(report),
        "threshold": r.threshold,
        "keep_below": r.keep_below,
        "error": None
        if u.expected_within is None
        else {"within": u.expected_within, "confidence": u.confidence},
        "postprocessing": postprocessing(report),
        "protects": protects(report),
    }


def protects(report: DPReport) -> dict[str, Any]:
    """What the release's guarantee covers, machine-readable: whether a person's
    ``membership`` (their records present or not: add-remove neighbours only), the
    ``class_sizes`` (noisy counts; randomized response publishes them exactly) and the
    ``sensitive_values`` of a present person are protected, and in words (``note``).

    >>> from types import SimpleNamespace as N
    >>> rr = N(release=N(mechanism="randomized-response", sensitivity=N(neighbouring="replace")))
    >>> {k: v for k, v in protects(rr).items() if k != "note"}
    {'membership': False, 'class_sizes': False, 'sensitive_values': True}
    """
    r = report.release
    local = r.mechanism == "randomized-response"
    membership = r.sensitivity.neighbouring == "add-remove" and not local
    note = (
        "the local model: each record's sensitive value is randomized; the classes, their "
        "sizes and so every person's presence are published exactly, unprotected"
        if local
        else "add-remove: a person's presence and values are protected"
        if membership
        else "replace: a present person's values are protected; the number of records, and "
        "so a person's presence, is not"
    )
    return {
        "membership": membership,
        "class_sizes": not local,
        "sensitive_values": True,
        "note": note,
    }


def write(report: DPReport, path: Path) -> Path:
    """Write the released table to ``path`` as CSV and the sidecar beside it, atomically.

    Returns
    -------
    Path
        The sidecar's path (:func:`sidecar_path`).
    """
    side = sidecar_path(path)
    atomic_write_text(path, table_to_csv(released_frame(report)))
    atomic_write_text(side, dumps(sidecar(report)))
    return side
