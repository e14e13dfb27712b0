"""``python -m anonaudit``."""

import sys

from anonaudit.cli import main

sys.exit(main())
