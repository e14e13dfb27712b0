"""The command line (the top layer): argv and policy files onto settings, the run, the
outputs written and the exit code. ``anonaudit`` is :func:`main`."""

from anonaudit.cli.app import main

__all__ = ["main"]
