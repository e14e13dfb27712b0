"""Small helpers with no privacy logic: atomic file output."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_text"]


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary file beside ``path`` to write, renamed to ``path`` on success.

    A reader never sees a half-written file, and an existing file is replaced only once
    the new content is complete; if the block raises, the temporary file is removed and
    ``path`` is left as it was. Missing parent folders are created. For writers that
    take a path (pyarrow's CSV and Parquet writers).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (:func:`atomic_path`)."""
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as stream:
        stream.write(text)
        if not text.endswith("\n"):
            stream.write("\n")


def _mode_for(path: Path) -> int:
    """The mode a new file would get (``mkstemp`` makes 0600): keep an existing file's."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
