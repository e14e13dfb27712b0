"""Command-line options of the DP companion, shared by ``anonaudit dp`` and ``audit``.

``anonaudit dp`` names them plainly (``--epsilon``); ``anonaudit audit`` prefixes them
(``--dp-epsilon``), since the audit's ``--delta`` is delta-disclosure. Both store them
under the same names, so :func:`options` reads either. :func:`release_warnings` lists what
``anonaudit dp`` warns about a release.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonaudit.classtable import ClassTable
from anonaudit.dp.bounding import BoundedTable
from anonaudit.dp.companion import DPReport, companion
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.mechanisms import MECHANISMS, Mechanism
from anonaudit.dp.release import POSTPROCESS, Postprocess
from anonaudit.dp.sensitivity import NEIGHBOURING, Neighbouring
from anonaudit.errors import ParameterError

__all__ = [
    "EPSILON_WARNING",
    "NEARLY_EMPTY",
    "DPOptions",
    "options",
    "release_warnings",
    "run",
]

#: ``anonaudit dp`` warns above this ε: ε-DP lets an attacker's odds on any person grow
#: by up to ``e^ε`` (7.4 at ε = 2).
EPSILON_WARNING = 2.0
#: ... and when the released classes hold fewer than this share of the records.
NEARLY_EMPTY = 0.01


@dataclass(frozen=True)
class DPOptions:
    """The parsed release options."""

    epsilon: float
    delta: float | None
    mechanism: Mechanism
    neighbouring: Neighbouring | None
    domain: PublicDomain | None
    sensitive: str | None
    postprocess: Postprocess


def options(
    args: argparse.Namespace,
    *,
    policy: Mapping[str, Any] | None = None,
    base: Path | None = None,
) -> DPOptions:
    """Read the options :func:`add_options` added, over a policy file's ``[dp]`` table.

    Options given on the command line win; ``policy`` (the ``[dp]`` table: ``epsilon``,
    ``delta``, ``mechanism``, ``neighbouring``, ``public_domain = { COL = "v1,v2" }`` or
    ``"@FILE"``, ``rr_sensitive``, ``postprocess``) fills the rest. ``base`` resolves
    ``@FILE`` domains: the command line's relative to the working folder, the policy's
    relative to the policy file's folder (``base``).
    """
    table = dict(policy or {})

    def pick(name: str, key: str, default: Any = None) -> Any:
        value = getattr(args, name)
        return value if value is not None else table.get(key, default)

    mechanism = pick("dp_mechanism", "mechanism", "discrete-laplace")
    postprocess = pick("dp_postprocess", "postprocess", "clamp")
    neighbouring = pick("dp_neighbouring", "neighbouring")
    for key, value, allowed in (
        ("mechanism", mechanism, MECHANISMS),
        ("postprocess", postprocess, POSTPROCESS),
        ("neighbouring", neighbouring, (None, *NEIGHBOURING)),
    ):
        if value not in allowed:
            raise ParameterError(
                f"[dp] {key} must be one of {', '.join(a for a in allowed if a)} "
                f"(got {value!r})"
            )
    if args.public_domain:
        domain = PublicDomain.parse(args.public_domain)
    elif table.get("public_domain"):
        items = [f"{column}={text}" for column, text in table["public_domain"].items()]
        domain = PublicDomain.parse(items, base=base)
    else:
        domain = None
    epsilon = pick("dp_epsilon", "epsilon")
    if epsilon is None:
        raise ParameterError("the policy file's [dp] table needs epsilon (or give --dp-epsilon)")
    return DPOptions(
        epsilon=epsilon,
        delta=pick("dp_delta", "delta"),
        mechanism=mechanism,
        neighbouring=neighbouring,
        domain=domain,
        sensitive=pick("dp_rr_sensitive", "rr_sensitive"),
        postprocess=postprocess,
    )


def run(data: ClassTable | BoundedTable, opts: DPOptions) -> DPReport:
    """Run :func:`~anonaudit.dp.companion.companion` with the parsed options."""
    return companion(
        data,
        epsilon=opts.epsilon,
        delta=opts.delta,
        mechanism=opts.mechanism,
        domain=opts.domain,
        neighbouring=opts.neighbouring,
        sensitive=opts.sensitive,
        postprocess=opts.postprocess,
    )


def release_warnings(report: DPReport) -> list[str]:
    """What ``anonaudit dp`` warns about ``report``, one line each.

    * An empty release, or one whose released classes hold fewer than
      :data:`NEARLY_EMPTY` of the records: the noise or the threshold hid nearly all.
    * ε above :data:`EPSILON_WARNING`.
    * δ at or above ``1/n`` (``n`` records released from): a mechanism that publishes
      each record in full with probability δ meets such a δ and still exposes about
      ``δ n`` people (Dwork & Roth 2014, "The algorithmic foundations of differential
      privacy", Section 2.3).
    """
    r = report.release
    found = []
    n = r.original.rows
    share = report.utility.records_in_released_classes / n if n else 0.0
    if not r.table.rows:
        found.append(
            "the release is empty: no cell was released; raise --epsilon (or --delta, which "
            "lowers the threshold), or coarsen the QIs into fewer, larger classes"
        )
    elif share < NEARLY_EMPTY:
        found.append(
            f"the release is nearly empty: its classes hold {share:.2%} of the {n:,} records "
            f"(under {NEARLY_EMPTY:.0%}); raise --epsilon (or --delta), or coarsen the QIs"
        )
    if r.epsilon > EPSILON_WARNING:
        found.append(
            f"epsilon {r.epsilon:g} is above {EPSILON_WARNING:g}: an attacker's odds on a "
            f"person may grow {math.exp(r.epsilon):,.3g}-fold; common choices lie between "
            "0.1 and 2"
        )
    if n and r.delta >= 1 / n:
        found.append(
            f"delta {r.delta:g} is at or above 1/n = 1/{n:,} records: a release that "
            "publishes records in full with probability delta would meet it; choose delta "
            "well below 1/n, e.g. 1e-6"
        )
    return found
