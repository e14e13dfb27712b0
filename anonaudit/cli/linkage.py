"""The linkage subcommands: ``compose``, ``diff`` and ``ledger`` (``ledger FILE retire``).

Wired into :mod:`anonaudit.cli` by :func:`add_commands` and :func:`run`. Exit status: 0
done; 1 a disclosure found with ``--fail-on-disclosure``; 2 bad input (one line).

Every run that records in a ledger names its dataset (``--dataset``, or for ``audit`` the
policy file's ``[ledger] dataset`` or ``name``): :func:`ledger_name`, :func:`audit_dataset`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from anonaudit.classtable import ClassTable
from anonaudit.cli import dp as dp_cli
from anonaudit.cli.app import assignments, levels
from anonaudit.cli.config import AuditConfig
from anonaudit.dp.accounting import Budget
from anonaudit.dp.budgets import Recorded
from anonaudit.dp.companion import DPReport
from anonaudit.engines.load import load
from anonaudit.engines.records import read_records
from anonaudit.errors import ParameterError
from anonaudit.files import (
    atomic_write_text,
    printable,
    refuse_folders,
    refuse_overwriting,
    side_files,
)
from anonaudit.linkage.composition import Releases, compose, generalized_releases, read_releases
from anonaudit.linkage.differencing import difference
from anonaudit.linkage.history import fingerprint_inputs, refuse_repeated_ids
from anonaudit.linkage.ledger import BudgetSetting, Ledger
from anonaudit.measures.generalization import is_builtin
from anonaudit.report.json import dumps
from anonaudit.report.linkage import (
    composition_summary,
    composition_to_dict,
    differencing_summary,
    differencing_to_dict,
    ledger_summary,
    ledger_to_dict,
)
from anonaudit.report.linkage_html import composition_html, differencing_html
from anonaudit.settings.options import LedgerOptions, ReadOptions, Roles
from anonaudit.sources.base import file_sha256, open_source
from anonaudit.sources.csv import CsvOptions

__all__ = [
    "audit_dataset",
    "ledger_name",
    "ledger_options",
    "record_dp_release",
    "release_parameters",
    "run",
]

_OK, _DISCLOSED = 0, 1
#: Why a ledger run needs a dataset's name: the releases of one dataset are attacked and
#: accounted together, and a file's own hash would make each file a dataset of its own.
_UNNAMED = (
    "--ledger needs the name of the dataset the release belongs to (the releases of one "
    "dataset are checked against each other)"
)


def run(args: argparse.Namespace, command: str) -> int:
    """Run ``args.command`` (one of :data:`COMMANDS`); returns the exit status."""
    if args.command == "ledger":
        return _run_ledger(args)
    qi = [c.strip() for item in args.qi for c in item.split(",") if c.strip()]
    sensitive = [c.strip() for item in args.sensitive for c in item.split(",") if c.strip()]
    if not qi:
        raise ParameterError("name the quasi-identifiers with --qi COL1,COL2,...")
    if not sensitive:
        raise ParameterError("name the sensitive column with --sensitive COL")
    inputs = args.releases if args.command == "compose" else [args.old, args.new]
    hierarchies, generalizations = _generalizations(args) if args.command == "compose" else ({}, [])
    if args.ledger:
        ledger_name(args.dataset)
    if args.command == "compose" and args.dp_epsilon is not None:
        dp_cli.guarantee(
            args.dp_epsilon,
            args.dp_delta,
            epsilon_flag="--dp-epsilon",
            delta_flag="--dp-delta",
        )
    read = [*inputs, *(spec for spec in hierarchies.values() if not is_builtin(spec))]
    outputs = [("--json", args.json), ("--html", args.html), ("--ledger", args.ledger)]
    refuse_overwriting(outputs, read)
    refuse_folders(outputs)
    if args.ledger:
        Ledger.check(args.ledger)
    csv = CsvOptions(args.sep, args.encoding, tuple(args.na) if args.na else ("",))
    if args.command == "compose":
        roles = {"id": args.id, "quasi_identifiers": qi, "sensitive": sensitive, "csv": csv}
        releases = (
            generalized_releases(inputs[0], generalizations, hierarchies=hierarchies, **roles)
            if generalizations
            else read_releases(inputs, **roles)
        )
        document, text, html, disclosed, tables = _compose(args, releases, command)
    else:
        document, text, html, disclosed, tables = _diff(args, inputs, qi, sensitive, csv, command)
    if args.ledger:
        _record(args, inputs, tables, qi, sensitive, csv)
    if args.html:
        atomic_write_text(Path(args.html), html)
    if args.json == "-":
        print(dumps(document))
    else:
        if args.json:
            atomic_write_text(Path(args.json), dumps(document))
        if not args.quiet:
            print(text)
    return _DISCLOSED if disclosed and args.fail_on_disclosure else _OK


def _generalizations(args: argparse.Namespace) -> tuple[dict[str, str], list[dict[str, int]]]:
    """``--hierarchy`` and each ``--generalize`` (``age=2,zip=1``, or ``age=2 zip=1`` as
    advise prints it), parsed as the audit parses them, and checked to go with one INPUT."""

    if args.generalize:
        if len(args.releases) != 1:
            raise ParameterError(
                f"--generalize makes the releases of one INPUT; give one input file "
                f"(got {len(args.releases)})"
            )
        if args.ledger:
            raise ParameterError(
                "--generalize releases are hypothetical and --ledger records published "
                "files; write the releases to files to record them"
            )
    elif args.hierarchy:
        raise ParameterError("--hierarchy goes with --generalize COL=LEVEL,...")
    releases = [levels([text]) for text in args.generalize]
    return assignments(args.hierarchy, "--hierarchy"), releases


def _compose(
    args: argparse.Namespace, releases: Releases, command: str
) -> tuple[dict[str, Any], str, str, bool, list[ClassTable]]:
    results = {
        name: compose(
            releases,
            name,
            dp_epsilon=args.dp_epsilon,
            dp_delta=args.dp_delta,
            dp_mechanism=args.dp_mechanism,
        )
        for name in releases.sensitive
    }
    sources = tuple(dict.fromkeys(releases.table.sources))  # releases of one input: once
    document = composition_to_dict(results, sources, id=args.id)
    html = composition_html(results, sources, id=args.id, command=command) if args.html else ""
    disclosed = any(result.disclosed_records for result in results.values())
    tables = [releases.release(i) for i in range(len(releases.names))]
    return document, composition_summary(results, id=args.id), html, disclosed, tables


def _diff(
    args: argparse.Namespace,
    inputs: list[str],
    qi: list[str],
    sa: list[str],
    csv: CsvOptions,
    command: str,
) -> tuple[dict[str, Any], str, str, bool, list[ClassTable]]:
    if args.max_classes < 0:
        raise ParameterError("--max-classes must be >= 0 (0 lists every class)")
    redact = args.redact is not False  # redacted unless --show-values
    old, new = (
        load(
            path,
            Roles(qi, sa),
            reading=ReadOptions(sep=csv.sep, encoding=csv.encoding, na_values=csv.na_values),
        )
        for path in inputs
    )
    limit = None if args.max_classes == 0 else args.max_classes
    results = {name: difference(old, new, name, max_classes=limit) for name in sa}
    sources = [*old.sources, *new.sources]
    document = differencing_to_dict(results, sources, redact=redact)
    html = differencing_html(results, sources, redact=redact, command=command) if args.html else ""
    disclosed = any(result.disclosed_records for result in results.values())
    return document, differencing_summary(results, redact=redact), html, disclosed, [old, new]


def _record(
    args: argparse.Namespace,
    inputs: Sequence[str],
    tables: Sequence[ClassTable],
    qi: list[str],
    sa: list[str],
    csv: CsvOptions,
) -> None:
    """Record each input in the ledger, unless it holds that file for that recipient.

    ``compose``'s releases carry the office's record id: their records are kept too
    (read with ``csv``), so a later ``audit --ledger --id`` composes with them.
    """
    dataset = ledger_name(args.dataset)
    found = []
    for path in inputs:  # read before the ledger is locked
        if not Path(path).is_file():
            raise ParameterError(f"--ledger fingerprints files; {printable(path)} is not a file")
        id = getattr(args, "id", None)
        records = None
        if id is not None:
            records = read_records([open_source(path, csv=csv)], [id, *qi, *sa])
            refuse_repeated_ids(records, path)
        found.append((file_sha256(path), records))
    # Which files the ledger holds already, and the record of the others: one transaction,
    # so that two runs recording the same file record it once.
    with Ledger.open(args.ledger) as ledger, ledger.transaction():
        for path, table, (fingerprint, records) in zip(inputs, tables, found, strict=True):
            known = ledger.releases(dataset, args.recipient, retired=False)
            if any(entry.fingerprint == fingerprint for entry in known):
                continue
            ledger.record(
                dataset=dataset,
                fingerprint=fingerprint,
                source=path,
                quasi_identifiers=qi,
                sensitive=sa,
                table=table,
                recipient=args.recipient,
                records=records,
            )


def ledger_options(config: AuditConfig) -> LedgerOptions | None:
    """``anonaudit audit --ledger``'s ledger: ``config.ledger``'s ``file``, the dataset
    (:func:`audit_dataset`), the ``recipient`` and the office's record ``id``; ``None``
    without a ledger."""
    settings = config.ledger
    if not settings:
        return None
    return LedgerOptions(
        settings["file"], audit_dataset(config), settings.get("recipient"), settings.get("id")
    )


def ledger_name(name: str | None) -> str:
    """The dataset a ``compose``, ``diff`` or ``dp`` run records under: ``--dataset``.

    Raises
    ------
    ParameterError
        No ``--dataset`` (or an empty one).
    """
    if not name:
        raise ParameterError(f"{_UNNAMED}: add --dataset NAME")
    return name


def audit_dataset(config: AuditConfig) -> str:
    """The dataset ``audit --ledger`` records under: ``--dataset``, else the policy
    file's ``[ledger] dataset``, else its ``name``.

    Raises
    ------
    ParameterError
        None of them: checked before the audit runs.
    """
    name: str | None = config.ledger.get("dataset") or config.name
    if not name:
        raise ParameterError(
            f'{_UNNAMED}: add --dataset NAME, or dataset = "NAME" in the policy file\'s '
            "[ledger] table"
        )
    return name


def record_dp_release(
    args: argparse.Namespace,
    report: DPReport,
    write: Callable[[], Sequence[Path]] | None = None,
) -> None:
    """Record ``anonaudit dp``'s release in ``--ledger``, refusing it past ``--budget``.

    The dataset is ``--dataset`` (required: :func:`ledger_name`); the recorded
    class table is the one the release was made from (the ledger is internal). The
    budget check, ``write`` (which writes the release's files and returns their paths)
    and the record are one transaction: a release past the budget is never written, and
    when the record fails (a full disk, say), the files ``write`` wrote are removed, so
    that no release is published without its cost recorded, nor charged unwritten.
    """
    inputs = [str(path) for path in args.inputs]
    dataset, fingerprint = ledger_name(args.dataset), fingerprint_inputs(inputs)
    given = _budget(args.budget)
    release = report.release
    written: list[Path] = []
    with Ledger.open(args.ledger) as ledger:
        try:
            with ledger.transaction():
                parameters = release_parameters(report)
                recorded = Recorded.from_parameters(release.mechanism, release.cost, parameters)
                for budget in _budgets(ledger, dataset, given, args.ledger, recorded):
                    ledger.check_budget(recorded, budget)
                if write is not None:
                    written.extend(write())
                ledger.record(
                    dataset=dataset,
                    fingerprint=fingerprint,
                    source=",".join(inputs),
                    quasi_identifiers=release.original.quasi_identifiers,
                    sensitive=release.original.sensitive,
                    table=release.original,
                    mechanism=release.mechanism,
                    cost=release.cost,
                    recipient=args.recipient,
                    parameters=parameters,
                )
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            raise


def release_parameters(report: DPReport) -> dict[str, Any]:
    """What the ledger keeps of a DP release to rebuild its privacy loss: the relation
    it is stated for, the privacy unit, the noise scale, the δ it was stated at and the
    sensitivities (:attr:`~anonaudit.linkage.ledger.LedgerEntry.parameters`)."""
    release, s = report.release, report.release.sensitivity
    return {
        "neighbouring": s.neighbouring,
        "privacy_unit": report.privacy_unit,
        "noise_scale": release.noise_scale,
        "stated_delta": release.delta,
        "domain": release.domain,
        "sensitivity": {
            "l0": s.l0,
            "l1": s.l1,
            "l2": s.l2,
            "linf": s.linf,
            "max_contributions": s.max_contributions,
        },
    }


def _budget(text: str | None) -> Budget | None:
    """``--budget EPS[,DELTA]``: :func:`anonaudit.cli.dp.budget`."""
    return dp_cli.budget(text)


def _budgets(
    ledger: Ledger, dataset: str, given: Budget | None, path: str, recorded: Recorded
) -> list[BudgetSetting]:
    """The budgets a release of ``dataset`` must fit: the one the ledger holds for the
    dataset, and a ``--budget`` given below it (stated in the same relation and unit).

    A dataset's budget is stored in the ledger the first time ``--budget`` names one,
    stated for the relation and privacy unit of the release that names it (``recorded``);
    from then on it bounds every release of the dataset, with ``--budget`` or without.
    A ``--budget`` above it is refused: raising a budget is an act of its own, recorded
    with its reason (``anonaudit ledger FILE budget DATASET --set ... --reason ...``).
    """
    stored = ledger.budget(dataset)
    if stored is None and given is not None:
        stored = ledger.set_budget(
            dataset,
            given.epsilon,
            given.delta,
            "the first --budget of anonaudit dp",
            relation=recorded.neighbouring or "add-remove",
            unit=recorded.privacy_unit,
        )
    if stored is None:
        return []
    if given is not None and (given.epsilon > stored.epsilon or given.delta > stored.delta):
        raise ParameterError(
            f"--budget {given.epsilon:g},{given.delta:g} is above the budget the ledger holds "
            f"for {printable(dataset)!r} ({stored.describe()}, set {stored.time}: "
            f"{printable(stored.reason)}); to raise it, run anonaudit ledger {printable(path)} "
            f"budget {printable(dataset)} --set EPS[,DELTA] --reason TEXT"
        )
    if given is None or (given.epsilon, given.delta) == (stored.epsilon, stored.delta):
        return [stored]
    return [stored, replace(stored, epsilon=given.epsilon, delta=given.delta, reason="--budget")]


def _run_ledger(args: argparse.Namespace) -> int:
    if not Path(args.file).is_file():
        raise ParameterError(f"{printable(args.file)}: no such ledger; check the path")
    if getattr(args, "action", None) == "budget":
        budget = dp_cli.budget(args.set)
        if budget is None:
            raise ParameterError("--set takes EPS[,DELTA], such as 2 or 1,1e-6")
        with Ledger.open(args.file, create=False) as ledger:
            stored = ledger.budget(args.budget_dataset)
            unit = args.unit or (stored.unit if stored else "record")
            setting = ledger.set_budget(
                args.budget_dataset,
                budget.epsilon,
                budget.delta,
                args.reason,
                relation=args.relation or (stored.relation if stored else "add-remove"),
                unit=None if unit == "record" else unit,
            )
        print(
            f"budget of {printable(setting.dataset)}: {printable(setting.describe())}, "
            f"set {setting.time}: {printable(setting.reason)}"
        )
        return _OK
    if getattr(args, "action", None) == "retire":
        with Ledger.open(args.file, create=False) as ledger:
            entry = ledger.retire(args.release, dataset=args.retire_dataset, reason=args.reason)
        print(
            f"retired release #{entry.id} of {printable(entry.dataset)} "
            f"({printable(entry.source)}) at {entry.retired}: "
            f"{printable(entry.retired_reason or '')}"
        )
        return _OK
    refuse_overwriting([("--json", args.json)], [args.file, *side_files(args.file)])
    refuse_folders([("--json", args.json)])
    with Ledger.open(args.file, create=False) as ledger:
        document = ledger_to_dict(ledger, dataset=args.dataset, recipient=args.recipient)
    if args.json == "-":
        print(dumps(document))
        return _OK
    if args.json:
        atomic_write_text(Path(args.json), dumps(document))
    print(ledger_summary(document))
    return _OK
