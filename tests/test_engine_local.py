"""The local engine's DuckDB connection."""

from __future__ import annotations

from anonaudit.engines.local import connect


def test_the_engine_never_draws_duckdbs_progress_bar_on_stdout() -> None:
    # DuckDB prints a progress bar to stdout for long queries, which broke `--json -`.
    connection = connect()
    setting = connection.execute("SELECT current_setting('enable_progress_bar')").fetchone()
    assert setting == (False,)
