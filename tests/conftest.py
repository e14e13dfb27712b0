"""Test tiers: every test is marked by what it needs, so a tier can be run alone.

* ``unit``: functions on in-memory data (class tables, checks, accountants);
* ``integration``: the command line and the reports end to end, on small files;
* ``lake``: a real S3-compatible server, Dask cluster, Delta or Spark (``test_lake_*``);
* ``browser``: the HTML report in Chromium (tests that use the ``browser`` fixture);
* ``slow``: statistical tests that sample mechanisms many times (``test_dp_claims``), and
  the command line run many times over (``test_cli_exit``).

``unit``, ``integration`` and ``slow`` split every test (a slow test is in neither of
the others); ``lake`` and ``browser`` are added on top. ``python -m pytest -m unit`` runs
the fast tier, ``-m "not slow"`` all but the statistical tests; the README's command and
CI run every tier (``.ci/run``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: Modules that exercise the command line or render reports end to end.
INTEGRATION = frozenset(
    {
        "test_advice_report",
        "test_api_equals_cli",
        "test_bad_input",
        "test_cli",
        "test_cli_exit",
        "test_docs",
        "test_dp_cli",
        "test_html",
        "test_html_browser",
        "test_html_dp",
        "test_linkage_html",
        "test_quickstart",
        "test_records_out",
        "test_report_bounds",
        "test_robustness",
        "test_schema",
        "test_startup",
        "test_tables_report",
    }
)
#: Modules of statistical tests: each samples a mechanism hundreds of thousands of times;
#: and the command line run many times over (``test_cli_exit``).
SLOW = frozenset({"test_cli_exit", "test_dp_claims"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every collected test with its tiers."""
    for item in items:
        module = Path(str(item.fspath)).stem
        lake = module.startswith("test_lake_")
        if module in SLOW:
            item.add_marker("slow")
        else:
            item.add_marker("integration" if lake or module in INTEGRATION else "unit")
        if lake:
            item.add_marker("lake")
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker("browser")
