"""Command-line options of the DP companion, shared by ``anonaudit dp`` and ``audit``.

``anonaudit dp`` names them plainly (``--epsilon``); ``anonaudit audit`` prefixes them
(``--dp-epsilon``), since the audit's ``--delta`` is delta-disclosure. Both store them
under the same names, so :func:`options` reads either, with a policy file's ``[dp]``
table, into one :class:`~anonaudit.dp.options.DPOptions`: the one place the command line
is mapped onto the option objects. :func:`release_warnings` lists what ``anonaudit dp``
warns about a release; :func:`self_audit_samples` reads ``--self-audit [N]``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from anonaudit.classtable import ClassTable
from anonaudit.dp.accounting import Budget
from anonaudit.dp.bounding import BoundedTable
from anonaudit.dp.companion import DPReport, companion
from anonaudit.dp.domain import PublicDomain
from anonaudit.dp.options import DPOptions, PrivacyGuarantee, PrivacyUnit
from anonaudit.dp.selfaudit import checked_samples, self_audit
from anonaudit.errors import OptionError, ParameterError
from anonaudit.settings.catalog import DP_OPTIONS, dp_flag
from anonaudit.settings.names import SELF_AUDIT_SAMPLES

__all__ = [
    "EPSILON_WARNING",
    "NEARLY_EMPTY",
    "DPOptions",
    "budget",
    "guarantee",
    "options",
    "release_warnings",
    "run",
    "self_audit_samples",
]

#: ``anonaudit dp`` warns above this ε: ε-DP lets an attacker's odds on any person grow
#: by up to ``e^ε`` (7.4 at ε = 2).
EPSILON_WARNING = 2.0
#: ... and when the released classes hold fewer than this share of the records.
NEARLY_EMPTY = 0.01


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
    command = getattr(args, "command", "dp")
    values: dict[str, Any] = {}
    labels: dict[str, str] = {}  # an option's name in messages, by its keyword
    for option in DP_OPTIONS:
        given = getattr(args, f"dp_{option.key}", None)
        if option.keyword is None:
            continue
        labels[option.keyword] = dp_flag(option, command)
        if given is None and option.key in table:
            given, labels[option.keyword] = table[option.key], f"[dp] {option.key}"
        values[option.keyword] = option.default if given is None else given

    if args.dp_public_domain:
        domain = PublicDomain.parse(args.dp_public_domain)
    elif table.get("public_domain"):
        items = [f"{column}={text}" for column, text in table["public_domain"].items()]
        domain = PublicDomain.parse(items, base=base)
    else:
        domain = None
    if values["epsilon"] is None:
        raise ParameterError("the policy file's [dp] table needs epsilon (or give --dp-epsilon)")
    try:
        unit = PrivacyUnit(
            column=values["column"],
            contributions=values["contributions"],
            neighbouring=values["neighbouring"],
        )
        return DPOptions(
            PrivacyGuarantee(values["epsilon"], values["delta"]),
            unit=unit,
            mechanism=values["mechanism"],
            domain=domain,
            sensitive=values["sensitive"],
            postprocess=values["postprocess"],
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


def self_audit_samples(args: argparse.Namespace) -> int | None:
    """``--self-audit [N]``: the releases of each neighbouring dataset the self-audit
    draws (:data:`~anonaudit.settings.names.SELF_AUDIT_SAMPLES` for the flag alone), or
    ``None`` when it is not asked for.

    Raises
    ------
    ParameterError
        ``N`` below :data:`~anonaudit.dp.selfaudit.MIN_SAMPLES`, naming the flag.
    """
    given = getattr(args, "dp_self_audit", None)
    if given is None:
        return None
    return checked_samples(SELF_AUDIT_SAMPLES if given is True else given, name="--self-audit")


def run(
    data: ClassTable | BoundedTable, opts: DPOptions, *, audit_samples: int | None = None
) -> DPReport:
    """Run :func:`~anonaudit.dp.companion.companion` with the parsed options, and with
    ``audit_samples`` the self-audit of its release
    (:func:`~anonaudit.dp.selfaudit.self_audit`)."""
    report = companion(data, opts)
    if audit_samples is None:
        return report
    audit = self_audit(report.release, opts, samples=audit_samples)
    return replace(report, self_audit=audit)


def release_warnings(report: DPReport) -> list[str]:
    """What ``anonaudit dp`` warns about ``report``, one line each.

    * An empty release, or one whose released classes hold fewer than
      :data:`NEARLY_EMPTY` of the records: the noise or the threshold hid nearly all.
    * the ε of learning a present person's value above :data:`EPSILON_WARNING`
      (:attr:`~anonaudit.dp.release.Release.value_epsilon`: twice ``--epsilon`` under
      add-remove with Laplace noise), the change the odds on that value grow by.
    * a self-audit that refutes the claim (:attr:`~anonaudit.dp.selfaudit.SelfAudit.refuted`):
      the release code, sampled, is less private than it states.
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
    if r.value_epsilon > EPSILON_WARNING:
        found.append(
            f"epsilon {r.value_epsilon:g} for learning a present person's value (with "
            f"--epsilon {r.epsilon:g}) is above {EPSILON_WARNING:g}: an attacker's odds on a "
            f"person's value may grow {math.exp(r.value_epsilon):,.3g}-fold; common choices "
            "keep it between 0.1 and 2"
        )
    audit = report.self_audit
    if audit is not None and audit.refuted:
        found.append(
            f"the self-audit refutes the release's claim: sampling the release code gave "
            f"epsilon >= {audit.epsilon_lower.value:.3g} (claimed {audit.epsilon:g}), delta "
            f">= {audit.delta_lower.value:.3g} at epsilon {audit.epsilon:g} (claimed "
            f"{audit.delta:g}), each with {audit.confidence:.0%} confidence: the release is "
            "less private than it states; do not publish it, and report the bug"
        )
    if n and r.delta >= 1 / n:
        found.append(
            f"delta {r.delta:g} is at or above 1/n = 1/{n:,} records: a release that "
            "publishes records in full with probability delta would meet it; choose delta "
            "well below 1/n, e.g. 1e-6"
        )
    return found
