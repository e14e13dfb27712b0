"""Command-line options of the DP companion, shared by ``anonaudit dp`` and ``audit``.

``anonaudit dp`` names them plainly (``--epsilon``); ``anonaudit audit`` prefixes them
(``--dp-epsilon``), since the audit's ``--delta`` is delta-disclosure. Both store them
under the same names, so :func:`options` reads either.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from anonaudit.classtable import ClassTable
from anonaudit.dp.bounding import BoundedTable
from anonaudit.dp.companion import DPReport, companion
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.mechanisms import MECHANISMS, Mechanism
from anonaudit.dp.sensitivity import NEIGHBOURING, Neighbouring

__all__ = ["DPOptions", "add_options", "options", "run"]


def add_options(group: argparse._ArgumentGroup, *, prefix: str = "", required: bool) -> None:
    """Add the release options to ``group``, as ``--{prefix}epsilon`` and so on."""
    group.add_argument(
        f"--{prefix}epsilon",
        dest="dp_epsilon",
        type=float,
        required=required,
        metavar="E",
        help="total privacy budget epsilon of the DP release",
    )
    group.add_argument(
        f"--{prefix}delta",
        dest="dp_delta",
        type=float,
        metavar="D",
        help="delta (e.g. 1e-6): needed for Gaussian noise and to release observed "
        "QI combinations; without it the release is pure epsilon-DP over --public-domain",
    )
    group.add_argument(
        f"--{prefix}mechanism",
        dest="dp_mechanism",
        choices=MECHANISMS,
        default="discrete-laplace",
        help="noise (default discrete-laplace)",
    )
    group.add_argument(
        f"--{prefix}neighbouring",
        dest="dp_neighbouring",
        choices=NEIGHBOURING,
        help="neighbouring datasets: add or remove one unit (default), or replace one",
    )
    group.add_argument(
        "--public-domain",
        dest="public_domain",
        action="append",
        default=[],
        metavar="COL=V1,V2,...|COL=@FILE",
        help="public values of a QI or SA (repeatable); with every column declared, the "
        "release covers their cartesian product under pure epsilon-DP",
    )
    group.add_argument(
        f"--{prefix}rr-sensitive",
        dest="dp_rr_sensitive",
        metavar="COL",
        help="the SA that randomized response randomizes (default: the only SA)",
    )


@dataclass(frozen=True)
class DPOptions:
    """The parsed release options."""

    epsilon: float
    delta: float | None
    mechanism: Mechanism
    neighbouring: Neighbouring | None
    domain: PublicDomain | None
    sensitive: str | None


def options(args: argparse.Namespace, *, base: Path | None = None) -> DPOptions:
    """Read the options :func:`add_options` added; ``base`` resolves ``@FILE`` domains."""
    return DPOptions(
        epsilon=args.dp_epsilon,
        delta=args.dp_delta,
        mechanism=args.dp_mechanism,
        neighbouring=args.dp_neighbouring,
        domain=PublicDomain.parse(args.public_domain, base=base) if args.public_domain else None,
        sensitive=args.dp_rr_sensitive,
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
    )
