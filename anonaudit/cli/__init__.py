"""The command line (the top layer): argv and policy files onto settings, the run, the
outputs written and the exit code. ``anonaudit`` is :func:`entry`, which runs
:func:`main` and ends the process."""

from anonaudit.cli.app import entry, main

__all__ = ["entry", "main"]
