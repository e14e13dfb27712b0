"""``python -m anonaudit``."""

from anonaudit.cli import entry

entry()
