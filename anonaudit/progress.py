"""Progress of a long scan or analysis, written to a terminal or a log: what is done,
the elapsed time and an estimate of what remains (:class:`Progress`)."""

from __future__ import annotations

import sys
import time
from typing import Literal, Protocol, TextIO

__all__ = ["Progress", "Steps"]


class Steps(Protocol):
    """Counts the steps of a long analysis as they are done (a progress display).

    :meth:`Progress.steps` makes one; an analysis calls it once
    per step (a QI subset, a lattice node) and never needs to know what it displays.
    """

    def __call__(self, count: int = 1) -> None:
        """Count ``count`` more steps done."""


class Progress:
    """Progress of a long scan or analysis: what is done, elapsed time and an ETA.

    A scan counts parts, bytes and rows (:meth:`start`); an analysis counts its steps
    (:meth:`steps`: QI subsets for SUDA, lattice nodes for the advice search). Short
    work stays silent: the first line appears once it has run ``interval`` seconds. On
    a terminal one line is rewritten in place; elsewhere (a log file, with
    ``when="always"``) a line is written every ``interval`` seconds.

    Parameters
    ----------
    stream : file, optional
        Where to write; ``None`` writes nothing.
    interval : float
        Seconds between updates.
    when : {"terminal", "always"}
        Write only when ``stream`` is a terminal (the default: a batch job's captured
        stderr stays clean), or always.

    Examples
    --------
    >>> import io
    >>> progress = Progress(io.StringIO(), when="always")
    >>> progress.start(parts=4, size_bytes=400 * 1024 * 1024)
    >>> progress.advance(1_000)
    >>> progress.part_done(100 * 1024 * 1024)
    >>> progress.status().split(", ")[:3]
    ['1/4 parts', '100.0 MiB of 400.0 MiB', '1,000 rows']
    >>> step = progress.steps("SUDA", 129, "QI subsets")
    >>> step(43)
    >>> progress.status().split(", ")[0]
    'SUDA: 43 of 129 QI subsets'
    """

    def __init__(
        self,
        stream: TextIO | None = sys.stderr,
        interval: float = 1.0,
        *,
        when: Literal["terminal", "always"] = "terminal",
    ) -> None:
        self.terminal = stream is not None and stream.isatty()
        self.stream = stream if when == "always" or self.terminal else None
        self.interval = interval
        self._started = self._last = time.monotonic()
        self._parts = self._parts_done = 0
        self._size: int | None = None
        self._bytes_done = self._rows = 0
        self._spoken = False
        self._task: tuple[str, int, str, bool] | None = None
        self._steps = 0

    def start(self, *, parts: int, size_bytes: int | None) -> None:
        """Begin a scan of ``parts`` parts holding ``size_bytes`` bytes (``None``: unknown)."""
        self._restart(None)
        self._parts, self._size = parts, size_bytes
        self._parts_done = self._bytes_done = self._rows = 0

    def steps(self, what: str, total: int, unit: str, *, exact: bool = True) -> Steps:
        """Begin an analysis of ``total`` steps; return the function that counts them.

        ``exact=False`` makes ``total`` an upper bound (a pruned search): the line then
        says "of at most" and gives no ETA. :meth:`finish` ends it.
        """
        self._restart((what, total, unit, exact))

        def step(count: int = 1) -> None:
            self._steps += count
            self._maybe_write()

        return step

    def _restart(self, task: tuple[str, int, str, bool] | None) -> None:
        self._started = self._last = time.monotonic()
        self._spoken = False
        self._task, self._steps = task, 0

    def advance(self, rows: int) -> None:
        """Count ``rows`` more records read."""
        self._rows += rows
        self._maybe_write()

    def part_done(self, size_bytes: int | None) -> None:
        """Count one more part read, of ``size_bytes`` bytes."""
        self._parts_done += 1
        self._bytes_done += size_bytes or 0
        self._maybe_write()

    def finish(self) -> None:
        """Write the final state, if a line was written before."""
        if self.stream is not None and self._spoken:
            self._write(final=True)

    def status(self) -> str:
        """The progress so far, as one line of text."""
        elapsed = time.monotonic() - self._started
        if self._task is not None:
            what, total, unit, exact = self._task
            items = [f"{what}: {self._steps:,} of {'' if exact else 'at most '}{total:,} {unit}"]
            items.append(f"{_clock(elapsed)} elapsed")
            if exact and 0 < self._steps < total:
                items.append(f"ETA {_clock(elapsed * (total - self._steps) / self._steps)}")
            return ", ".join(items)
        items = []
        if self._parts > 1:
            items.append(f"{self._parts_done}/{self._parts} parts")
        if self._size:
            items.append(f"{_size(self._bytes_done)} of {_size(self._size)}")
        items.append(f"{self._rows:,} rows")
        items.append(f"{_clock(elapsed)} elapsed")
        done, total = (
            (self._bytes_done, self._size) if self._size else (self._parts_done, self._parts)
        )
        if 0 < done < total:
            items.append(f"ETA {_clock(elapsed * (total - done) / done)}")
        return ", ".join(items)

    def _maybe_write(self) -> None:
        now = time.monotonic()
        if self.stream is not None and now - self._last >= self.interval:
            self._last = now
            self._write(final=False)

    def _write(self, *, final: bool) -> None:
        assert self.stream is not None
        self._spoken = True
        verb = "" if self._task is not None else "read: " if final else "reading: "
        line = f"anonaudit: {verb}{self.status()}"
        if self.terminal:
            end = "\n" if final else ""
            self.stream.write(f"\r{line}\x1b[K{end}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _size(count: int) -> str:
    """``count`` bytes in a readable unit.

    >>> _size(512), _size(3 * 1024 * 1024), _size(5 * 1024**3)
    ('512 B', '3.0 MiB', '5.0 GiB')
    """
    if count < 1024:
        return f"{count} B"
    value = count / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GiB"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
