"""The commands ``audit``, ``advise`` and ``dp``: options to configuration, run, outputs.

:mod:`anonaudit.cli` parses the command line and imports this module only to run one
of these commands (the linkage commands run in :mod:`anonaudit.cli.linkage`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonaudit import __version__
from anonaudit.cli.app import EXIT_OK, EXIT_VIOLATION, assignments, columns, levels
from anonaudit.cli.batch import (
    audit_config,
    audit_datasets,
    open_config_inputs,
    output_paths,
    read_paths,
    reports_folder,
    summary_to_dict,
)
from anonaudit.cli.config import AuditConfig, read_config
from anonaudit.engines.local import engine_limits
from anonaudit.errors import OptionError, ParameterError
from anonaudit.files import (
    atomic_write_text,
    printable_lines,
    read_lines,
    refuse_folders,
    refuse_listing_folder,
    refuse_overwriting,
)
from anonaudit.progress import Progress
from anonaudit.report.kit import dumps
from anonaudit.report.text import summary
from anonaudit.settings.catalog import OPTIONS, Option
from anonaudit.settings.names import DISTANCE_INPUTS, DistanceInput
from anonaudit.settings.options import EngineOptions, ReadOptions, Roles
from anonaudit.settings.policy import threshold_fields
from anonaudit.settings.work import LISTED_CLASS_WORK, check_work, put_limits
from anonaudit.sources import require_rereadable

if TYPE_CHECKING:
    from anonaudit.results import AuditReport

__all__ = ["run_advise", "run_audit", "run_dp"]


def _config(args: argparse.Namespace) -> AuditConfig:
    """The run's settings: the policy file, options over it; checked before any input is read."""
    config = read_config(args.config) if args.config else AuditConfig()
    choose = getattr(args, "choose", None)
    if choose is not None and choose < 1:
        raise ParameterError(f"--choose counts the listed transformations from 1 (got {choose})")
    if config.datasets:
        _dataset_configs(config, args)
    else:
        _override(config, args)
        _validate(config)
    # In force for the whole run, [[datasets]] included (cli.app.main runs each command in
    # a context of its own): the audit's reads, and the records written after it.
    put_limits(
        engine_limits(
            EngineOptions(
                memory_limit=getattr(args, "memory_limit", None) or config.memory_limit,
                temp_dir=getattr(args, "temp_dir", None) or config.temp_dir,
            )
        )
    )
    refuse_overwriting(
        [
            *output_paths(config),
            ("--out", getattr(args, "out", None)),
            ("--listings-dir", config.listings_dir),
            ("--ledger", config.ledger.get("file")),
        ],
        [*read_paths(config), *([args.config] if args.config else [])],
    )
    refuse_listing_folder(
        "--listings-dir",
        config.listings_dir,
        [*read_paths(config), *([args.config] if args.config else [])],
    )
    refuse_folders(
        [
            *output_paths(config),
            ("--out", getattr(args, "out", None)),
            ("--ledger", config.ledger.get("file")),
        ]
    )
    for dataset in config.datasets or [config]:
        if dataset.records_out and dataset.count:
            raise ParameterError(
                "--records-out writes one line per record, and the rows of a frequency "
                "table (--count) stand for many: drop one of them (the report lists classes)"
            )
        if dataset.records_out:
            require_rereadable(dataset.inputs, "--records-out")
    if getattr(args, "out", None):
        require_rereadable(config.inputs, "--out")
    if config.ledger.get("id") is not None:
        require_rereadable(config.inputs, "--ledger with --id")
    return config


def _dataset_configs(config: AuditConfig, args: argparse.Namespace) -> None:
    """Options over each ``[[datasets]]`` table of the policy file, but not its outputs."""
    if args.inputs:
        raise ParameterError(
            "INPUT files and [[datasets]] in --config do not mix; drop the INPUTs "
            "or use a policy file without datasets"
        )
    if args.html:
        raise ParameterError("with [[datasets]], set html per dataset in the policy file")
    if args.records_out:
        raise ParameterError("with [[datasets]], set records_out per dataset in the policy file")
    for dataset in config.datasets:
        own = dataset.json, dataset.html
        _override(dataset, args)
        dataset.json, dataset.html = own
        _validate(dataset)
    if args.json is not None:
        config.json = args.json


def _override(config: AuditConfig, args: argparse.Namespace) -> None:
    """Command-line options over the policy file's settings."""
    ledger = {
        key: getattr(args, option, None)
        for key, option in (("file", "ledger"), ("dataset", "dataset"), ("recipient", "recipient"))
    }
    config.ledger = config.ledger | {key: value for key, value in ledger.items() if value}
    if getattr(args, "id", None) is not None and config.ledger:
        config.ledger["id"] = args.id
    if args.inputs:
        config.inputs = list(args.inputs)
    if args.qi:
        config.quasi_identifiers = [c for item in args.qi for c in columns(item)]
    if args.sensitive:
        config.sensitive = [c for item in args.sensitive for c in columns(item)]
    for threshold in threshold_fields():
        value = getattr(args, threshold.name)
        if value is None:
            continue
        if threshold.metadata["kind"] == "pair":
            c, _, l = value.partition(",")
            try:
                value = (float(c), int(l))
            except ValueError:
                flag = threshold.metadata["flag"]
                raise ParameterError(f"{flag} takes C,L such as 3,2 (got {value!r})") from None
        config.thresholds[threshold.name] = value
    for option in OPTIONS:
        value = getattr(args, option.key, None) if option.flag is not None else None
        if value is not None:
            setattr(config, option.key, _given(option, value, getattr(config, option.key)))
            if option.replaces is not None:  # one of two: the other is cleared
                setattr(config, option.replaces, None)
    if config.sep in ("tab", "\\t"):  # a tab is hard to type in a shell
        config.sep = "\t"
    implied: dict[str, str] = {}
    for each in DISTANCE_INPUTS:
        given = config.distance_inputs.setdefault(each.key, {})
        for column, value in assignments(getattr(args, each.key), each.flag).items():
            given[column] = _distance_input(each, value)
        if each.implies is not None:
            implied |= dict.fromkeys(given, each.implies)
    if implied and not isinstance(config.t_distance, str):  # an order implies ordered
        config.t_distance = {**implied, **(config.t_distance or {})}


def _given(option: Option, value: Any, current: Any) -> Any:
    """``option``'s value as the command line gives it (see
    :func:`anonaudit.cli.app._argument`), laid over the policy file's ``current``: a
    repeated ``KEY=VALUE`` option adds to the file's table, any other replaces."""
    flag = option.flag or option.key
    if option.kind == "columns":
        return [column for item in value for column in columns(item)]
    if option.kind == "texts":
        return list(value)
    if option.kind == "mapping":
        return {**current, **assignments(value, flag, key="KEY")}
    if option.kind == "paths":
        return {**current, **assignments(value, flag)}
    if option.kind == "levels":
        return {**current, **levels(value)}
    if option.kind == "distance" and "=" in value:
        return assignments(value.split(","), flag)
    return value


def _require_roles(inputs: Sequence[object], qi: Sequence[str], *, where: str) -> None:
    """Refuse a run without input or quasi-identifiers; ``where`` says where else to name them."""
    if not inputs:
        raise ParameterError(f"name at least one INPUT file{where}")
    if not qi:
        raise ParameterError("name the quasi-identifiers with --qi COL1,COL2,...")


def _distance_input(each: DistanceInput, value: str) -> str | list[str]:
    """A ground distance's input for one SA as the command line gives it: a path, or its
    values (``V1,V2,...``, or ``@FILE`` with one a line)."""
    if each.path:
        return value
    return read_lines(value[1:], each.flag, each.key) if value.startswith("@") else columns(value)


#: The command-line names of the options, for their messages (:class:`OptionError`).
_FLAGS = {
    **{threshold.name: threshold.metadata["flag"] for threshold in threshold_fields()},
    **{option.keyword or option.key: option.flag for option in OPTIONS if option.flag},
    **{option.key: option.flag for option in OPTIONS if option.flag},
    **{each.key: each.flag for each in DISTANCE_INPUTS},
    "t-closeness distance": "--t-distance",
}


def _validate(config: AuditConfig) -> None:
    """Refuse settings that cannot run, before any input is read: the command line's
    own rules here, every option's through the option objects, worded with its flag."""
    _require_roles(config.inputs, config.quasi_identifiers, where=" (or inputs in --config)")
    if config.max_classes < 0:
        raise ParameterError("--max-classes must be >= 0 (0 lists every class)")
    if config.max_results < 0:
        raise ParameterError(f"--max-results takes a number >= 0 (got {config.max_results})")
    try:
        config.roles(), config.reading(), config.engine_options(), config.options()
    except OptionError as error:
        raise ParameterError(error.worded(_FLAGS.get(error.option, error.option))) from None


def run_audit(args: argparse.Namespace, command: str) -> int:
    """``anonaudit audit``: the audit of the inputs or of each dataset of a policy file."""
    config = _config(args)
    progress = None if args.quiet else Progress(sys.stderr)
    if config.datasets:
        if args.dp_epsilon is not None or config.dp:
            raise ParameterError(
                "--dp-epsilon and [dp] release one table; with [[datasets]] run "
                "anonaudit dp on each dataset instead"
            )
        if args.ledger or config.ledger or any(d.ledger for d in config.datasets):
            raise ParameterError(
                "--ledger records one release; with [[datasets]] run anonaudit audit on each "
                "dataset instead"
            )
        return _run_datasets(config, args, command, progress)
    if args.redact and not (config.html or config.json):
        raise ParameterError(
            "--redact applies to the HTML and JSON reports; add --html PATH or --json PATH"
        )
    if config.ledger and "file" not in config.ledger:
        raise ParameterError(
            "--dataset, --recipient and [ledger] go with a ledger file; add --ledger FILE"
        )
    if args.id is not None and not (config.records_out or config.ledger):
        raise ParameterError(
            "--id names the office's record id for --records-out or --ledger; "
            "add --records-out PATH or --ledger FILE"
        )
    if config.ledger.get("id") is not None and config.count:
        raise ParameterError(
            "--id reads each record's id, and the rows of a frequency table (--count) stand "
            "for many records: drop --id (the ledger then checks differencing only)"
        )
    ledger = None
    if config.ledger:  # named before the audit runs
        from anonaudit.cli.linkage import ledger_options

        ledger = ledger_options(config)
    if args.suppression_limit is not None and not config.advise:
        raise ParameterError("--suppression-limit bounds the search of --advise; add --advise")
    dp_options = None
    if args.dp_epsilon is not None or config.dp:
        from anonaudit.cli import dp as dp_cli

        base = Path(args.config).parent if args.config else None
        dp_options = dp_cli.options(args, policy=config.dp, base=base)
    report = audit_config(config, progress=progress, dp=dp_options, ledger=ledger)
    limit = None if config.max_classes == 0 else config.max_classes
    if limit is None and config.json:  # every failing class listed: bounded up front
        listed = int(report.k_anonymity.failing.mask.sum())
        check_work(
            f"--max-classes 0 (all {listed:,} classes below k listed in the JSON report)",
            listed * LISTED_CLASS_WORK,
            config.max_work or None,
            f"units ({LISTED_CLASS_WORK:,} per listed class; --listings-dir writes them as CSV)",
        )
    bounds: dict[str, Any] = {"redact": config.redact, "max_classes": limit}
    listings = config.listings_dir
    if config.json:
        from anonaudit.report.json import report_to_dict

        document = dumps(report_to_dict(report, **bounds, listings_dir=listings))
        if config.json == "-":
            print(document)
        else:
            atomic_write_text(Path(config.json), document)
    if config.json != "-":
        print(printable_lines(summary(report)))
    if config.html or listings:
        from anonaudit.report.html import save_html, write_listings

        if config.html:
            save_html(report, config.html, command=command, **bounds, listings_dir=listings)
        else:
            write_listings(report, listings, redact=config.redact)
    if config.records_out:
        from anonaudit.engines.records import write_records

        sources = open_config_inputs(config)
        write_records(sources, report, config.records_out, id_column=args.id, progress=progress)
    if report.passed is False and not args.exit_zero:
        return EXIT_VIOLATION
    return EXIT_OK


def _run_datasets(
    config: AuditConfig, args: argparse.Namespace, command: str, progress: Progress | None
) -> int:
    summary_path = None if config.json in (None, "-") else Path(config.json)
    results = audit_datasets(
        config.datasets,
        reports_dir=reports_folder(config),
        progress=progress,
        redact=config.redact or any(dataset.redact for dataset in config.datasets),
        command=command,
    )
    document = summary_to_dict(results)
    if config.json == "-":
        print(dumps(document))
    else:
        if summary_path is not None:
            atomic_write_text(summary_path, dumps(document))
        for result in results:
            print(f"== {result.name} ==")
            if result.report is not None:
                print(printable_lines(summary(result.report)))
            else:
                print(f"anonaudit: error: {result.error}")
    for result in results:
        if result.error is not None:
            print(f"anonaudit: error: {result.name}: {result.error}", file=sys.stderr)
    worst = max(result.exit_status for result in results)
    if worst == EXIT_VIOLATION and args.exit_zero:
        return EXIT_OK
    return worst


def _refuse_identifiers(report: AuditReport, written: Sequence[str]) -> None:
    """Refuse to write a column that looks like a direct identifier unless it is allowed
    (``--allow-identifier``) or declared a QI."""
    for found in report.identifiers:
        if (
            found.column in written
            and found.declared_role != "quasi-identifier"
            and found.column not in report.allowed_identifiers
        ):
            raise ParameterError(
                f"--out would write {found.column!r}, which may identify people "
                f"directly ({found.reasons[0]}); leave it out, or add "
                f"--allow-identifier {found.column} to write it knowingly"
            )


def run_dp(args: argparse.Namespace, command: str) -> int:
    """``anonaudit dp``: a differentially private release of the class table."""
    from anonaudit.cli import dp as dp_cli
    from anonaudit.cli import linkage as linkage_cli
    from anonaudit.dp.bounding import load_bounded
    from anonaudit.engines.load import load
    from anonaudit.linkage.ledger import Ledger
    from anonaudit.report import dp as artefact
    from anonaudit.report.json import SCHEMA_VERSION, dp_to_dict
    from anonaudit.report.text import dp_summary

    qi = [c for item in args.qi for c in columns(item)]
    sensitive = [c for item in args.sensitive for c in columns(item)]
    _require_roles(args.inputs, qi, where="")
    sidecar = artefact.sidecar_path(Path(args.out)) if args.out else None
    outputs = [
        ("--out", args.out),
        ("--out (sidecar)", sidecar),
        ("--json", args.json),
        ("--ledger", args.ledger),
    ]
    refuse_overwriting(outputs, args.inputs)
    refuse_folders(outputs)
    if args.ledger:  # named, and the file checked, before any input is read
        linkage_cli.ledger_name(args.dataset)
        Ledger.check(args.ledger)
    if args.dp_max_contributions is not None and not args.dp_privacy_unit:
        raise ParameterError("--max-contributions bounds the rows of a --privacy-unit; add it")
    if args.count is not None and args.dp_privacy_unit:
        raise ParameterError(
            "--privacy-unit bounds each person's rows, and a frequency table (--count) "
            "has none: drop one of them"
        )
    dp_options = dp_cli.options(args)  # every DP option checked before any input is read
    audit_samples = dp_cli.self_audit_samples(args)
    dp_cli.budget(args.budget)
    reading = ReadOptions(
        sep=args.sep,
        encoding=args.encoding or "utf-8",
        na_values=args.na_values if args.na_values is not None else ("",),
        decimal_comma=[c for item in args.decimal_comma or () for c in columns(item)],
    )
    engine = EngineOptions(progress=None if args.quiet else Progress(sys.stderr))
    data = (
        load_bounded(
            args.inputs,
            Roles(qi, sensitive),
            dp_options.unit,
            reading=reading,
            engine=engine,
        )
        if dp_options.unit.column is not None
        else load(
            args.inputs, Roles(qi, sensitive, count=args.count), reading=reading, engine=engine
        )
    )
    if args.budget is not None and not args.ledger:
        raise ParameterError("--budget is checked against a ledger; add --ledger FILE")
    report = dp_cli.run(data, dp_options, audit_samples=audit_samples)
    if args.ledger:
        # The budget checked, the release written, then recorded, in one transaction of
        # the ledger: a release past the budget is never written, and one whose record
        # fails is removed (linkage_cli.record_dp_release).
        out = Path(args.out) if args.out else None
        write = None if out is None else partial(_write_artefact, report, out)
        linkage_cli.record_dp_release(args, report, write)
    elif args.out:
        artefact.write(report, Path(args.out))
    # Only for a release that is made: a refused one's figures were never published.
    for warning in dp_cli.release_warnings(report):
        print(f"anonaudit: warning: {warning}", file=sys.stderr)
    document = {"schema_version": SCHEMA_VERSION, "anonaudit_version": __version__}
    document |= dp_to_dict(report)
    if args.json == "-":
        print(dumps(document))
    else:
        if args.json:
            atomic_write_text(Path(args.json), dumps(document))
        print(printable_lines(dp_summary(report)))
    return EXIT_OK


def _write_artefact(report: Any, out: Path) -> list[Path]:
    """Write ``anonaudit dp``'s release and its sidecar; returns the files written.

    When the second write fails, a release file the first one created is removed.
    """
    from anonaudit.report import dp as artefact

    new = not out.exists()
    try:
        side = artefact.write(report, out)
    except BaseException:
        if new:
            out.unlink(missing_ok=True)
        raise
    return [out, side]


def run_advise(args: argparse.Namespace, command: str) -> int:
    """``anonaudit advise``: the lattice search for the least generalization that passes."""
    from anonaudit.engines.records import write_transformed
    from anonaudit.report.html import save_html
    from anonaudit.report.json import SCHEMA_VERSION, advice_to_dict
    from anonaudit.report.text import advice_summary

    config = _config(args)
    if config.datasets:
        raise ParameterError("advise takes one dataset; use a policy file without [[datasets]]")
    if args.choose is not None and not args.out:
        raise ParameterError("--choose picks the transformation --out writes; add --out PATH")
    if args.keep and not args.out:
        raise ParameterError("--keep names columns --out writes; add --out PATH")
    if args.redact and not config.html:
        raise ParameterError("--redact applies to the HTML report; add --html PATH")
    if args.out and config.nulls == "drop":
        raise ParameterError(
            "--out writes every record, and --nulls drop left those with a null QI out of the "
            "search; use --nulls value with --out"
        )
    # The audit builds the class table once, searches it and audits the input as released.
    report = audit_config(
        config.replace(advise=True), progress=None if args.quiet else Progress(sys.stderr)
    )
    advice = report.advice
    if advice is None:  # audit_config(advise=True) always searches
        raise AssertionError("the audit returned no advice")
    chosen, kept = None, [*config.sensitive, *(c for item in args.keep for c in columns(item))]
    if args.out and advice.transformations:  # refused before anything is printed or written
        choose = args.choose or 1
        if not 1 <= choose <= len(advice.transformations):
            raise ParameterError(
                f"--choose {choose}: pick one of the {len(advice.transformations)} listed"
            )
        chosen = advice.transformations[choose - 1]
        _refuse_identifiers(report, kept)
    document = {"schema_version": SCHEMA_VERSION, "anonaudit_version": __version__}
    document |= advice_to_dict(advice)
    if config.json == "-":
        print(dumps(document))
    else:
        if config.json:
            atomic_write_text(Path(config.json), dumps(document))
        print(printable_lines(advice_summary(advice)))
    if config.html:  # the audit of the input, as `anonaudit audit` reports it, with the advice
        save_html(report, config.html, redact=config.redact, command=command)
    if chosen is not None:
        sources = open_config_inputs(config)
        written = write_transformed(
            sources,
            args.out,
            quasi_identifiers=config.quasi_identifiers,
            recode=chosen.generalization.recode_maps(),
            suppressed=chosen.suppressed_classes if chosen.suppressed else None,
            columns=kept,
        )
        left = [c for c in sources[0].columns if c not in {*config.quasi_identifiers, *kept}]
        if left:
            print(
                f"anonaudit: warning: --out leaves out {', '.join(left)}: neither "
                "quasi-identifier nor sensitive, so not judged by the audit (a column may "
                "identify people directly); --keep COL writes one",
                file=sys.stderr,
            )
        if not args.quiet:
            print(f"anonaudit: wrote {written:,} records to {args.out}", file=sys.stderr)
    return EXIT_OK if advice.passed else EXIT_VIOLATION
