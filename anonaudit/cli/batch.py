"""Audit runs from settings: one audit, or every ``[[datasets]]`` table of a policy file.

A batch job audits each dataset on its own (an error in one does not stop the others),
writes each dataset's JSON (and HTML) report, and sums the run up in one JSON summary
whose ``exit_status`` is the worst of the datasets': 2 if any could not be audited,
else 1 if any violated its policy, else 0.

A dataset that fails leaves no report of an earlier run at its paths, which a reader
would take for today's: its JSON report becomes a failure record
(``{"status": "failed", "error": ...}``, :func:`failure_to_dict`), its HTML report a
short page saying it failed and why, and its ``records_out`` file is removed.
"""

from __future__ import annotations

import datetime as _dt
import html as _html
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonaudit import __version__
from anonaudit.auditing import audit
from anonaudit.cli.config import AuditConfig
from anonaudit.errors import AnonauditError
from anonaudit.files import atomic_write_text, file_name
from anonaudit.report.kit import dumps
from anonaudit.settings.names import DISTANCE_INPUTS, SCHEMA_VERSION
from anonaudit.sources import open_inputs

if TYPE_CHECKING:
    from anonaudit.dp.options import DPOptions
    from anonaudit.progress import Progress
    from anonaudit.results import AuditReport
    from anonaudit.settings.options import LedgerOptions
    from anonaudit.sources.base import Source

__all__ = [
    "DatasetResult",
    "audit_config",
    "audit_datasets",
    "failure_to_dict",
    "open_config_inputs",
    "output_paths",
    "read_paths",
    "report_path",
    "reports_folder",
    "summary_to_dict",
    "write_config_records",
]

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2


def audit_config(
    config: AuditConfig,
    *,
    progress: Progress | None = None,
    scheduler: Any = None,
    dp: DPOptions | None = None,
    ledger: LedgerOptions | None = None,
) -> AuditReport:
    """Run the audit ``config`` describes (with the DP companion ``dp`` and the release
    ledger ``ledger``, as :func:`anonaudit.audit` takes them).

    Parameters
    ----------
    config : AuditConfig
        Inputs, roles, thresholds, reading and engine settings.
    progress : Progress, optional
        Where to report progress of long scans.
    scheduler : distributed.Client or str, optional
        For the Dask engine: overrides ``config.scheduler``.
    """
    return audit(
        config.inputs,
        config.roles(),
        config.options(),
        reading=config.reading(),
        engine=config.engine_options(progress=progress, scheduler=scheduler),
        dp=dp,
        ledger=ledger,
    )


def write_config_records(
    config: AuditConfig, report: AuditReport, *, progress: Progress | None = None
) -> int | None:
    """Write ``config.records_out``, if set: every record of the inputs with its measures.

    The inputs are re-read as :func:`audit_config` read them
    (:func:`anonaudit.engines.records.write_records`). Returns the records written, or ``None``.
    """
    if config.records_out is None:
        return None
    from anonaudit.engines.records import write_records

    sources = open_config_inputs(config)
    return write_records(sources, report, config.records_out, progress=progress)


def open_config_inputs(config: AuditConfig) -> list[Source]:
    """The inputs of ``config``, opened as :func:`audit_config` reads them, to read again."""
    return open_inputs(config.inputs, **config.reading().keywords())


@dataclass(frozen=True)
class DatasetResult:
    """How one dataset of a run went.

    Attributes
    ----------
    name : str
        The dataset's name in the policy file.
    exit_status : int
        0 passed (or no thresholds), 1 a threshold violated, 2 not audited.
    report : AuditReport or None
        The audit; ``None`` when it could not run.
    error : str or None
        Why it could not run (one line).
    json, html : str or None
        Where its reports were written (for a dataset not audited, its failure
        records: :func:`failure_to_dict` and a failure page).
    """

    name: str
    exit_status: int
    report: AuditReport | None = None
    error: str | None = None
    json: str | None = None
    html: str | None = None


def audit_datasets(
    datasets: Sequence[AuditConfig],
    *,
    reports_dir: str | Path | None = None,
    progress: Progress | None = None,
    scheduler: Any = None,
    redact: bool = True,
    command: str | None = None,
) -> list[DatasetResult]:
    """Audit every dataset in turn and write its reports.

    Parameters
    ----------
    datasets : sequence of AuditConfig
        One named configuration per dataset (:attr:`AuditConfig.datasets`).
    reports_dir : path, optional
        Where a dataset without its own ``json`` writes ``<name>.json``; ``None``
        writes none for it.
    progress, scheduler
        As for :func:`audit_config`.
    redact, command
        For HTML reports (:meth:`AuditReport.save_html`).

    Returns
    -------
    list of DatasetResult
        In the order given. Errors a dataset raises are recorded, not raised, and its
        outputs of an earlier run replaced: the JSON report by :func:`failure_to_dict`,
        the HTML report by a page saying it failed, ``records_out`` removed.
    """
    from anonaudit.report.json import report_to_dict

    results = []
    for config in datasets:
        name = config.name or "dataset"
        json = report_path(config, reports_dir)
        try:
            report = audit_config(config, progress=progress, scheduler=scheduler)
            write_config_records(config, report, progress=progress)
            if json is not None:
                limit = None if config.max_classes == 0 else config.max_classes
                atomic_write_text(Path(json), dumps(report_to_dict(report, max_classes=limit)))
            if config.html is not None:
                report.save_html(config.html, redact=redact, command=command)
        except (AnonauditError, OSError) as exc:
            results.append(_failed(config, name, json, str(exc)))
            continue
        status = EXIT_VIOLATION if report.passed is False else EXIT_OK
        results.append(DatasetResult(name, status, report, json=json, html=config.html))
    return results


def failure_to_dict(name: str, error: str) -> dict[str, Any]:
    """What a failed dataset's JSON report holds instead of a report.

    ``status`` is ``"failed"`` (a report has no ``status``), with ``name``,
    ``exit_status`` 2, ``error`` (one line) and the run's time.

    >>> failure_to_dict("visits", "visits: no such file")["status"]
    'failed'
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "status": "failed",
        "name": name,
        "exit_status": EXIT_ERROR,
        "error": error,
        "audited_at": _dt.datetime.now(_dt.UTC).isoformat(),
    }


def _failure_page(name: str, error: str) -> str:
    """A short HTML page saying that dataset ``name`` could not be audited, and why."""
    title, when = _html.escape(name), _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8">'
        f"<title>{title}: not audited</title></head>\n<body>\n"
        f"<h1>{title}: the audit failed</h1>\n"
        f"<p>The run of {when} could not audit this dataset (exit status 2); no measure "
        "was computed, and this page replaces the report of any earlier run.</p>\n"
        f"<pre>{_html.escape(error)}</pre>\n"
        f"<p>anonaudit {_html.escape(__version__)}</p>\n</body>\n</html>\n"
    )


def _failed(config: AuditConfig, name: str, json: str | None, error: str) -> DatasetResult:
    """Record a dataset that failed, and replace its outputs of an earlier run.

    The JSON report becomes :func:`failure_to_dict`, the HTML report a failure page,
    and the ``records_out`` file is removed. An output that cannot be replaced is
    removed; one that cannot be removed either is named in the error.
    """
    problems = []
    written: dict[str, str | None] = {"json": None, "html": None}
    markers = {
        "json": (json, dumps(failure_to_dict(name, error))),
        "html": (config.html, _failure_page(name, error)),
    }
    for key, (path, text) in markers.items():
        if path is None or path == "-":
            continue
        try:
            atomic_write_text(Path(path), text)
            written[key] = path
        except (AnonauditError, OSError):
            problems += _remove(path)
    if config.records_out is not None and config.records_out != "-":
        problems += _remove(config.records_out)
    if problems:
        error += f"; and {', '.join(problems)} of an earlier run could not be removed"
    return DatasetResult(name, EXIT_ERROR, error=error, json=written["json"], html=written["html"])


def _remove(path: str) -> list[str]:
    """Remove the regular file at ``path`` (through a symlink); ``[path]`` if it stays."""
    target = Path(os.path.realpath(path))
    try:
        if target.is_file():
            target.unlink()
    except OSError:
        return [path]
    return []


def reports_folder(config: AuditConfig) -> Path | None:
    """Where the datasets of ``config`` without their own ``json`` write their reports.

    The folder of the run's summary (``config.json``); ``None`` when the summary goes
    to stdout or nowhere.
    """
    return None if config.json in (None, "-") else Path(str(config.json)).parent


def report_path(dataset: AuditConfig, reports_dir: str | Path | None) -> str | None:
    """The JSON report a dataset writes: its own ``json``, else ``<name>.json`` in ``reports_dir``.

    The name is made a safe file name (:func:`anonaudit.files.file_name`), so that
    ``name = "../../x"`` writes inside ``reports_dir``.

    >>> report_path(AuditConfig(name="../../x"), "reports")
    'reports/_.._x.json'
    """
    json: str | None = dataset.json
    if json is not None or reports_dir is None:
        return json
    return str(Path(reports_dir) / f"{file_name(dataset.name or 'dataset')}.json")


def output_paths(config: AuditConfig) -> list[tuple[str, str | None]]:
    """Every file an audit of ``config`` writes, each with the setting that names it.

    For :func:`anonaudit.files.refuse_overwriting`, with :func:`read_paths`.
    """
    if not config.datasets:
        return [
            ("--json", config.json),
            ("--html", config.html),
            ("--records-out", config.records_out),
        ]
    outputs: list[tuple[str, str | None]] = [("json", config.json)]
    reports_dir = reports_folder(config)
    for dataset in config.datasets:
        label = f"dataset {dataset.name!r}:"
        outputs += [
            (f"{label} json", report_path(dataset, reports_dir)),
            (f"{label} html", dataset.html),
            (f"{label} records_out", dataset.records_out),
        ]
    return outputs


def read_paths(config: AuditConfig) -> list[str]:
    """Every file, folder or glob an audit of ``config`` reads: inputs, hierarchies,
    matrices and the population table."""
    return [
        path
        for dataset in config.datasets or [config]
        for path in (
            *dataset.inputs,
            *dataset.hierarchy.values(),
            *(
                path
                for each in DISTANCE_INPUTS
                if each.path
                for path in dataset.distance_inputs.get(each.key, {}).values()
            ),
            *([dataset.population] if dataset.population else []),
        )
    ]


def summary_to_dict(results: Sequence[DatasetResult]) -> dict[str, Any]:
    """The run's JSON summary: one entry per dataset, and the worst exit status.

    Each entry has ``name``, ``exit_status``, ``passed`` (``null`` without thresholds
    or when not audited), ``failed`` (the violated measures), ``rows``, ``coverage``,
    ``report`` and ``html`` (paths written) and ``error``.
    """
    from anonaudit.report.json import coverage

    entries = []
    for result in results:
        report = result.report
        entries.append(
            {
                "name": result.name,
                "exit_status": result.exit_status,
                "passed": None if report is None else report.passed,
                "failed": []
                if report is None
                else [v.name for v in report.verdicts() if not v.passed],
                "rows": None if report is None else report.rows,
                "coverage": None if report is None else coverage(report.sources),
                "report": result.json,
                "html": result.html,
                "error": result.error,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "anonaudit_version": __version__,
        "audited_at": _dt.datetime.now(_dt.UTC).isoformat(),
        "exit_status": max((r.exit_status for r in results), default=EXIT_OK),
        "datasets": entries,
    }
