"""Command-line options of the DP companion, shared by ``anonaudit dp`` and ``audit``.

``anonaudit dp`` names them plainly (``--epsilon``); ``anonaudit audit`` prefixes them
(``--dp-epsilon``), since the audit's ``--delta`` is delta-disclosure. Both store them
under the same names, so :func:`options` reads either, with a policy file's ``[dp]``
table, into one :class:`~anonaudit.dp.options.DPOptions`: the one place the command line
is mapped onto the option objects. :func:`release_warnings` lists what ``anonaudit dp``
warns about a release.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import Budget
from anonaudit.dp.bounding import BoundedTable
from anonaudit.dp.companion import DPReport, companion
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.options import DPOptions, PrivacyGuarantee, PrivacyUnit
from anonaudit.errors import OptionError, ParameterError

__all__ = [
    "EPSILON_WARNING",
    "NEARLY_EMPTY",
    "DPOptions",
    "budget",
    "guarantee",
    "options",
    "release_warnings",
    "run",
]

#: ``anonaudit dp`` warns above this ε: ε-DP lets an attacker's odds on any person grow
#: by up to ``e^ε`` (7.4 at ε = 2).
EPSILON_WARNING = 2.0
#: ... and when the released classes hold fewer than this share of the records.
NEARLY_EMPTY = 0.01


#: The options' names in the Python API, by the ``args`` attribute that sets them.
_ATTRIBUTES = {
    "epsilon": "dp_epsilon",
    "delta": "dp_delta",
    "mechanism": "dp_mechanism",
    "neighbouring": "dp_neighbouring",
    "sensitive": "dp_rr_sensitive",
    "postprocess": "dp_postprocess",
    "column": "privacy_unit",
    "contributions": "max_contributions",
}
#: ... their flags in ``anonaudit dp``; ``anonaudit audit`` prefixes the first six with
#: ``dp-`` and has no privacy unit.
_FLAGS = {
    "epsilon": "--epsilon",
    "delta": "--delta",
    "mechanism": "--mechanism",
    "neighbouring": "--neighbouring",
    "sensitive": "--rr-sensitive",
    "postprocess": "--postprocess",
    "column": "--privacy-unit",
    "contributions": "--max-contributions",
}
#: ... and their keys in a policy file's ``[dp]`` table.
_KEYS = {"sensitive": "rr_sensitive"}


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
    relative to the policy file's folder (``base``). ``anonaudit dp``'s ``--privacy-unit``
    and ``--max-contributions`` make the :class:`~anonaudit.dp.options.PrivacyUnit`.

    Returns
    -------
    DPOptions

    Raises
    ------
    ParameterError
        A value an option refuses, named by its flag (``--epsilon``, ``--dp-epsilon``) or
        its ``[dp]`` key, or no epsilon at all.
    """
    table = dict(policy or {})
    prefix = "" if getattr(args, "command", "dp") == "dp" else "--dp-"
    labels: dict[str, str] = {}

    def pick(name: str, default: Any = None) -> Any:
        value = getattr(args, _ATTRIBUTES[name], None)
        flag = _FLAGS[name]
        labels[name] = f"{prefix}{flag[2:]}" if prefix else flag
        if value is None and _KEYS.get(name, name) in table:
            labels[name] = f"[dp] {_KEYS.get(name, name)}"
            return table[_KEYS.get(name, name)]
        return value if value is not None else default

    if args.public_domain:
        domain = PublicDomain.parse(args.public_domain)
    elif table.get("public_domain"):
        items = [f"{column}={text}" for column, text in table["public_domain"].items()]
        domain = PublicDomain.parse(items, base=base)
    else:
        domain = None
    epsilon = pick("epsilon")
    if epsilon is None:
        raise ParameterError("the policy file's [dp] table needs epsilon (or give --dp-epsilon)")
    try:
        unit = PrivacyUnit(
            column=pick("column"),
            contributions=pick("contributions", 1),
            neighbouring=pick("neighbouring"),
        )
        return DPOptions(
            PrivacyGuarantee(epsilon, pick("delta")),
            unit=unit,
            mechanism=pick("mechanism", "discrete-laplace"),
            domain=domain,
            sensitive=pick("sensitive"),
            postprocess=pick("postprocess", "clamp"),
        )
    except OptionError as error:
        raise ParameterError(error.worded(labels.get(error.option, error.option))) from None


def guarantee(
    epsilon: float,
    delta: float | None,
    *,
    epsilon_flag: str = "--epsilon",
    delta_flag: str = "--delta",
) -> PrivacyGuarantee:
    """ε and δ checked as every command checks them, named by the command's flags.

    The one validation of DP parameters (:class:`~anonaudit.dp.options.PrivacyGuarantee`:
    ε in :data:`~anonaudit.dp.options.EPSILON_RANGE`, δ 0 or in
    ``[MIN_DELTA, 1)``), used by ``dp``, ``audit --dp-epsilon`` and ``compose
    --dp-epsilon``.

    Raises
    ------
    ParameterError
        Naming the flag, its range and the value given.

    Examples
    --------
    >>> guarantee(float("nan"), 0.0, epsilon_flag="--dp-epsilon")
    Traceback (most recent call last):
    ...
    anonaudit.errors.ParameterError: --dp-epsilon must be a positive number from 1e-06 ...
    """
    try:
        return PrivacyGuarantee(epsilon, delta)
    except OptionError as error:
        flag = epsilon_flag if error.option == "epsilon" else delta_flag
        raise ParameterError(error.worded(flag)) from None


def budget(text: str | None, flag: str = "--budget") -> Budget | None:
    """``--budget EPS[,DELTA]`` as a :class:`~anonaudit.dp.accounting.Budget`.

    ε and δ lie in the ranges of one release (:func:`guarantee`): a budget of ``1e400``
    (infinite) or ``nan`` would let every release through.

    Raises
    ------
    ParameterError
        Not two numbers, or one out of its range.

    Examples
    --------
    >>> budget("3,1e-5").epsilon
    3.0
    >>> budget("1e400")
    Traceback (most recent call last):
    ...
    anonaudit.errors.ParameterError: --budget epsilon must be a positive number from ...
    """
    if text is None:
        return None
    epsilon, _, delta = text.partition(",")
    try:
        values = float(epsilon), float(delta or 0.0)
    except ValueError:
        raise ParameterError(
            f"{flag} takes EPSILON or EPSILON,DELTA, such as 3 or 3,1e-5 (got {text!r})"
        ) from None
    guarantee(*values, epsilon_flag=f"{flag} epsilon", delta_flag=f"{flag} delta")
    return Budget(epsilon=values[0], delta=values[1])


def run(data: ClassTable | BoundedTable, opts: DPOptions) -> DPReport:
    """Run :func:`~anonaudit.dp.companion.companion` with the parsed options."""
    return companion(data, opts)


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
