"""Files: safe output, the one CSV writer, and small text helpers.

Outputs never replace an input (:func:`refuse_overwriting`), regular files are replaced
atomically, and special files (``/dev/null``, a FIFO, a terminal) are written to
directly (:func:`atomic_path`). Numbers written with a decimal comma are read by
:func:`from_decimal_comma`.

CSV output is safe to open in a spreadsheet (:func:`csv_writer`). A cell that starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by spreadsheet
programs as a formula (CSV injection; OWASP, "CSV Injection"). Such text cells are
written with a leading apostrophe, which spreadsheets show as text, and so is every line
of a cell that spans lines (a reader that splits lines on a bare carriage return would
otherwise start a cell there); numbers such as ``-3`` are left as they are. Every text
cell is quoted, so a separator, quote, line feed or carriage return in a value stays
inside its cell. A null is an empty cell. pyarrow is imported when a CSV is written, so
that the command line's parsing loads none of it.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from anonaudit.errors import (
    AnonauditError,
    InputError,
    OutputError,
    ParameterError,
    SourceNotFoundError,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "atomic_path",
    "atomic_write_text",
    "csv_writer",
    "defuse",
    "file_name",
    "from_decimal_comma",
    "printable",
    "printable_lines",
    "refuse_folders",
    "refuse_listing_folder",
    "refuse_overwriting",
    "side_files",
    "table_to_csv",
]

# Temporary files are ".anonaudit-tmp-<name>-<pid>-<random>": recognisable, and those
# of a process that died before renaming them are removed by the next process's first
# write beside them.
_TEMPORARY = ".anonaudit-tmp-"
_TEMPORARY_PID = re.compile(re.escape(_TEMPORARY) + r".*-(\d+)-[^-]+")
#: The folders this process has cleared of dead runs' temporary files already.
_CLEARED: set[Path] = set()
_NAME_CHARS = 100  # of the target's name in a temporary name: stays below NAME_MAX
_SPECIAL_FOLDERS = ("/dev/", "/proc/")  # /dev/stdout, /proc/self/fd/1: never renamed over


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A path to write that becomes ``path`` on success, for writers that take a path.

    For a regular file (or a new one), a temporary file beside it, renamed over it once
    the block completes: a reader never sees a half-written file, and if the block
    raises, the temporary file is removed and ``path`` is left as it was. A symlink is
    followed: the file it points at is replaced, the link stays. A device, FIFO or
    terminal (``/dev/null``, ``/dev/stdout``) is written to directly: renaming over it
    would replace it. Missing parent folders are created.

    Raises
    ------
    OutputError
        ``path`` is a folder, or cannot be written (full disk, read-only folder, no
        permission); a regular file at ``path`` is then left as it was.
    """
    path = Path(path)
    with _naming(path, every=True):
        mode = path.stat().st_mode if path.exists() else None
        if mode is not None and stat.S_ISDIR(mode):
            raise OutputError(f"{path}: this is a folder; give the path of a file to write")
        direct = (mode is not None and not stat.S_ISREG(mode)) or str(path.absolute()).startswith(
            _SPECIAL_FOLDERS
        )
        if not direct:
            target = Path(os.path.realpath(path))  # through symlinks, to the file they name
            target.parent.mkdir(parents=True, exist_ok=True)
            _remove_stale_temporaries(target.parent)
            prefix = f"{_TEMPORARY}{target.name[:_NAME_CHARS]}-{os.getpid()}-"
            handle, temporary = tempfile.mkstemp(prefix=prefix, dir=target.parent)
            os.close(handle)
    if direct:
        try:
            with _naming(path):
                yield path
        finally:
            _release_fifo(path)
        return
    try:
        with _naming(path):
            yield Path(temporary)
        with _naming(path, every=True):
            os.chmod(temporary, _mode_for(target))
            os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, ending with a newline) to ``path`` as :func:`atomic_path` does.

    Raises
    ------
    OutputError
        ``path`` cannot be written; a file there is left as it was.
    """
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as stream:
        stream.write(text)
        if not text.endswith("\n"):
            stream.write("\n")


def refuse_overwriting(
    outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
    inputs: Iterable[str | os.PathLike[str]],
) -> None:
    """Refuse, before anything is read, outputs that would replace an input or each other.

    An output replaces an input when both name the same file, however spelled (``./``,
    ``..``, a symlink or a hard link), or when it lies in an input folder or matches an
    input glob. URLs and ``-`` (stdout) are never files here. A ``--ledger`` output
    stands for its SQLite side files too (:func:`side_files`: ``-wal``, ``-shm``,
    ``-journal``), which SQLite writes beside it.

    Parameters
    ----------
    outputs : iterable of (str, path or None)
        What writes each output (an option such as ``"--json"``) and its path; ``None``
        and ``"-"`` are skipped.
    inputs : iterable of path
        Every file the run reads: data files, folders, globs, policy and hierarchy files.

    Raises
    ------
    ParameterError
        Naming the output and the input it would replace, or the two outputs.
    """
    sources = [os.fspath(source) for source in inputs]
    reader = _reader(sources)
    written: dict[Path, str] = {}
    expanded: list[tuple[str, str | os.PathLike[str] | None]] = []
    for option, output in outputs:
        expanded.append((option, output))
        if option == "--ledger" and output is not None:  # SQLite writes beside it too
            label = f"{option} {os.fspath(output)}, whose SQLite side file"
            expanded.extend((label, side) for side in side_files(output))
    for option, output in expanded:
        if output is None or os.fspath(output) == "-" or "://" in os.fspath(output):
            continue
        target = Path(os.path.realpath(output))
        source = reader(target)
        if source is not None:
            raise ParameterError(
                f"{option} {os.fspath(output)}: this would overwrite the input {source}; "
                "write the output to another path"
            )
        if target in written:
            raise ParameterError(
                f"{option} {os.fspath(output)}: {written[target]} writes the same file; "
                "give each output its own path"
            )
        written[target] = f"{option} {os.fspath(output)}"


def refuse_folders(outputs: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Refuse, before anything is read, an output file path that cannot become a file.

    A path that names a folder (an existing one, or one written with a trailing slash,
    ``--html out/``, which would otherwise become a file called ``out``), or a file in
    a folder that does not exist (``--html reports/a.html`` with no ``reports``): a
    mistyped folder is not created silently. Nor a socket or a block device, nor a FIFO
    that no reader opens within :data:`FIFO_READER_WAIT` seconds (writing to it would
    wait forever); paths in ``/dev/`` and ``/proc/`` (``/dev/stdout``) are left alone.

    Raises
    ------
    ParameterError
        Naming the option, the path and what to do.
    """
    for option, output in outputs:
        if output is None or os.fspath(output) in ("-", "") or "://" in os.fspath(output):
            continue
        text = os.fspath(output)
        if text.endswith(("/", os.sep)) or Path(text).is_dir():
            exists = "" if Path(text).is_dir() else " (that does not exist)"
            raise ParameterError(
                f"{option} {text}: this names a folder{exists}; give the path of a file to write"
            )
        folder = Path(text).parent
        if not folder.is_dir():
            raise ParameterError(
                f"{option} {text}: the folder {folder} does not exist; create it first "
                f"(mkdir -p {folder}) or write elsewhere"
            )
        try:  # a FIFO nobody reads would block the write forever; a socket cannot be opened
            mode = os.stat(text).st_mode
        except OSError:
            continue
        if str(Path(text).absolute()).startswith(_SPECIAL_FOLDERS):  # /dev/stdout, /dev/null
            continue
        if stat.S_ISSOCK(mode) or stat.S_ISBLK(mode):
            raise ParameterError(
                f"{option} {text}: this is a socket or a device, not a regular file; give "
                "the path of a file to write, or - for standard output"
            )
        if stat.S_ISFIFO(mode) and not _read_fifo(text):
            raise ParameterError(
                f"{option} {text}: this is a FIFO that nobody reads (waited "
                f"{FIFO_READER_WAIT:g} s); start its reader first, or give the path of a "
                "regular file, or - for standard output"
            )


#: Seconds an output FIFO is given to have a reader (:func:`refuse_folders`).
FIFO_READER_WAIT = 10.0
#: FIFOs found read, each kept open until its output is written (:func:`atomic_path`):
#: its reader would see the end of the data if the last writer closed it before.
_HELD_FIFOS: dict[str, int] = {}


def _read_fifo(path: str) -> bool:
    """Whether the FIFO ``path`` has a reader, waiting up to :data:`FIFO_READER_WAIT` s.

    Opening a FIFO to write without blocking fails until a reader has it open; once one
    does, the descriptor is kept open until the output is written (:func:`_release_fifo`).
    """
    deadline = time.monotonic() + FIFO_READER_WAIT
    while True:
        try:
            handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
            continue
        _release_fifo(path)
        _HELD_FIFOS[os.path.realpath(path)] = handle
        return True


def _release_fifo(path: str | os.PathLike[str]) -> None:
    """Close the descriptor :func:`_read_fifo` kept open on ``path``, if it kept one."""
    handle = _HELD_FIFOS.pop(os.path.realpath(path), None)
    if handle is not None:
        os.close(handle)


#: C0 and C1 control characters, DEL, and the line and paragraph separators: what
#: :func:`printable` escapes.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: Names longer than this are shortened by :func:`printable`.
PRINTABLE_LIMIT = 200


def printable(text: str, limit: int | None = PRINTABLE_LIMIT) -> str:
    r"""``text`` safe to print on a terminal: control characters escaped, shortened.

    Every C0 and C1 control character (ESC, carriage return, newline, tab, ...), DEL and
    the Unicode line separators become their Python escapes (``\x1b``, ``\n``), so a
    dataset, column or file name cannot move the cursor, recolour the terminal or forge
    a line of output. A text longer than ``limit`` characters keeps its start and end
    around an ellipsis that says how long it is.

    >>> print(printable("visits\x1b[2J"))
    visits\x1b[2J
    >>> printable("a" * 1000, limit=20)
    'aaaaaaaaaa…aaaaaaaaaa (1,000 characters)'
    """
    text = str(text)
    if limit is not None and len(text) > limit:
        half = max(limit // 2, 1)
        text = f"{text[:half]}…{text[-half:]} ({len(text):,} characters)"
    return _CONTROLS.sub(lambda found: repr(found.group())[1:-1], text)


def printable_lines(text: str) -> str:
    r"""``text`` of several lines, each made :func:`printable` (not shortened): a report
    printed on a terminal, whose names and values come from the data.

    >>> print(printable_lines("k = 2\nzip\x1b[31m: 3 classes"))
    k = 2
    zip\x1b[31m: 3 classes
    """
    return "\n".join(printable(line, limit=None) for line in text.split("\n"))


def side_files(path: str | os.PathLike[str]) -> list[str]:
    """The files SQLite writes beside the database ``path``: its ``-wal``, ``-shm``
    and ``-journal`` files, which outputs and inputs must not be either."""
    name = os.fspath(path)
    return [f"{name}{suffix}" for suffix in ("-wal", "-shm", "-journal")]


#: The names of the listings' files (``k-anonymity.csv``): a slug of letters, digits and
#: dashes (``anonaudit.report.kit``).
_LISTING_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\.csv")


def refuse_listing_folder(
    option: str, folder: str | os.PathLike[str] | None, inputs: Iterable[str | os.PathLike[str]]
) -> None:
    """Refuse, before anything is read, a listings folder holding an input named like a
    listing (``k-anonymity.csv``): writing the listings there could replace it.

    The listings' names are known only once the audit has run, so every input file in
    ``folder`` whose name has their form (lower-case letters, digits and dashes,
    ``.csv``) is refused.

    Raises
    ------
    ParameterError
        Naming ``option``, the folder and the input.
    """
    if folder is None or "://" in os.fspath(folder):
        return
    real = Path(os.path.realpath(folder))
    for source in (os.fspath(each) for each in inputs):
        if "://" in source:
            continue
        matches = glob.glob(source, recursive=True) if glob.has_magic(source) else [source]
        for match in matches:
            path = Path(os.path.realpath(match))
            if path.parent == real and _LISTING_NAME.fullmatch(path.name):
                raise ParameterError(
                    f"{option} {printable(os.fspath(folder))}: the input "
                    f"{printable(match)} is there, named like a listing, and a listing "
                    "written there could replace it; give the listings a folder of their own"
                )


def read_lines(path: str | os.PathLike[str], option: str, noun: str) -> list[str]:
    """The values of a ``COL=@FILE`` list: one a line of a UTF-8 file, blank lines and
    surrounding white space left out.

    Raises
    ------
    SourceNotFoundError
        No such file (``option`` names where it was given, such as ``--order``, and
        ``noun`` what the file lists, such as ``order``).
    InputError
        A byte that is not UTF-8 (its position named), or a file that cannot be read.
    """
    name = os.fspath(path)
    try:
        lines = Path(name).read_text(encoding="utf-8-sig").splitlines()  # BOM left out
    except FileNotFoundError:
        raise SourceNotFoundError(
            f"{option} @{name}: no such {noun} file; check the path"
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{option} @{name}: byte {exc.start} is not valid UTF-8; save the file as UTF-8"
        ) from None
    except OSError as exc:
        raise InputError(f"{option} @{name}: cannot read the file ({exc.strerror})") from None
    return [line.strip() for line in lines if line.strip()]


def file_name(name: str) -> str:
    """``name`` made safe to use as a file name: no folders, no leading dot.

    Every character other than letters, digits, ``-``, ``_`` and ``.`` becomes ``_``.

    >>> file_name("../../etc/passwd")
    '_.._etc_passwd'
    >>> file_name("visits 2024")
    'visits_2024'
    """
    return re.sub(r"[^\w.-]", "_", name, flags=re.ASCII).lstrip(".") or "_"


def _reader(sources: Sequence[str]) -> Callable[[Path], str | None]:
    """The first of ``sources`` (paths, folders or globs; URLs read no file here) whose
    reading reads a file, asked of the file's real path, or ``None``.

    A source reads the file it names and, a folder, every file under it; a glob reads
    the files it matches; each is that file however spelled (its real path) or linked
    (its device and inode). Every source is resolved once, so that checking many
    outputs against many inputs (a policy file of a thousand datasets) takes time in
    proportion to their sum, not their product.
    """
    paths: dict[Path, int] = {}  # by real path, the first source naming the file
    files: dict[tuple[int, int], int] = {}  # the same by device and inode
    folders: dict[Path, int] = {}  # the first source reading every file under the folder
    for index, source in enumerate(sources):
        if "://" in source:
            continue
        magic = glob.has_magic(source)
        for match in glob.glob(source, recursive=True) if magic else [source]:
            real = Path(os.path.realpath(match))
            paths.setdefault(real, index)
            identity = _identity(real)
            if identity is not None:
                files.setdefault(identity, index)
            if not magic and real.is_dir():
                folders.setdefault(real, index)

    def first(target: Path) -> str | None:
        found = [paths.get(target), *(folders.get(f) for f in (target, *target.parents))]
        identity = _identity(target)
        if identity is not None:
            found.append(files.get(identity))
        named = [index for index in found if index is not None]
        return sources[min(named)] if named else None

    return first


def _identity(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at ``path`` (links followed), or ``None`` for none."""
    try:
        status = os.stat(path)
    except OSError:  # no such file
        return None
    return status.st_dev, status.st_ino


@contextmanager
def _naming(path: Path, *, every: bool = False) -> Iterator[None]:
    """Turn an error of the operating system while writing ``path`` into one naming it.

    Unless ``every``, errors naming another file (an input read inside the block) pass
    unchanged.
    """
    try:
        yield
    except OSError as exc:
        if isinstance(exc, AnonauditError):
            raise
        named = exc.filename is not None and str(exc.filename) != str(path)
        if named and not every and not Path(str(exc.filename)).name.startswith(_TEMPORARY):
            raise
        reason = exc.strerror or str(exc).splitlines()[0]
        raise OutputError(
            f"{path}: cannot write ({reason}); any file there is left as it was"
        ) from exc


def _remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files in ``folder`` of anonaudit runs that died before renaming.

    Once a folder a process: a batch writing a thousand reports to one folder lists it
    once, not a thousand times (a run that dies meanwhile is cleared up after by the next).
    """
    if folder in _CLEARED:
        return
    with os.scandir(folder) as entries:
        for entry in entries:
            found = _TEMPORARY_PID.fullmatch(entry.name)
            pid = int(found.group(1)) if found else os.getpid()
            if pid != os.getpid() and not _alive(pid) and entry.is_file(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)
    _CLEARED.add(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:  # another user's process
        return True
    except (ProcessLookupError, OverflowError):
        return False
    return True


def _mode_for(path: Path) -> int:
    """The mode a new file would get (``mkstemp`` makes 0600): keep an existing file's."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


#: A number with a decimal comma: digits, optionally grouped by thousands with a dot, a
#: space, a no-break space, a narrow no-break space or an apostrophe.
_DECIMAL_COMMA = re.compile(
    r"[+-]?(?:\d{1,3}(?:([. \u00a0\u202f'])\d{3})(?:\1\d{3})*|\d+)(?:,\d+)?"
)


def from_decimal_comma(values: Sequence[str | None]) -> list[str | None]:
    """Numbers written with a decimal comma, written with a decimal point instead.

    Grouping separators are dropped; a value that is not such a number is kept.

    >>> from_decimal_comma(["1.234,5", "-0,25", "1 234", "12", "n/a", None, "1,2,3"])
    ['1234.5', '-0.25', '1234', '12', 'n/a', None, '1,2,3']
    """
    converted: list[str | None] = []
    for value in values:
        text = None if value is None else value.strip()
        if text is None or not _DECIMAL_COMMA.fullmatch(text):
            converted.append(value)
            continue
        converted.append(re.sub(r"[. \u00a0\u202f']", "", text).replace(",", "."))
    return converted


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LINE_BREAK = ("\r", "\n")
# A line start (the value's, or after a line break) followed by a formula character.
_FORMULA_LINE = re.compile(r"(^|\r\n|\r|\n)(?=[=+\-@\t\r])")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _safe(value: str) -> str:
    """``value`` with an apostrophe before every line that starts like a formula."""
    if _NUMBER.fullmatch(value):
        return value
    return _FORMULA_LINE.sub(lambda found: found.group(1) + "'", value)


def defuse(array: pa.Array) -> pa.Array:
    """``array`` with its formula-looking text cells defused (see the module).

    Only the distinct values that start with a formula character or hold a line break
    are converted in Python; other arrays (numbers) and other cells are returned as
    they are, nulls included. A dictionary array comes back decoded.

    >>> import pyarrow as pa
    >>> defuse(pa.array(["=1+1", "-2", "a", None, "x\\r=cmd"])).to_pylist()
    ["'=1+1", '-2', 'a', None, "x\\r'=cmd"]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return array
    risky = pc.starts_with(array, _FORMULA_START[0])
    for start in _FORMULA_START[1:]:
        risky = pc.or_(risky, pc.starts_with(array, start))
    for brk in _LINE_BREAK:
        risky = pc.or_(risky, pc.match_substring(array, brk))
    risky = pc.fill_null(risky, False)
    if not pc.any(risky).as_py():
        return array
    found = pc.unique(array.filter(risky))
    fixed = pa.array([_safe(value) for value in found.to_pylist()], array.type)
    return pc.if_else(risky, fixed.take(pc.index_in(array, value_set=found)), array)


@contextmanager
def csv_writer(
    sink: str | os.PathLike[str] | pa.NativeFile, schema: pa.Schema, sep: str = ","
) -> Iterator[Callable[[pa.RecordBatch], None]]:
    """Write record batches of ``schema`` to ``sink`` as CSV, header first.

    Text cells are quoted and defused (:func:`defuse`), header names too; nulls are
    empty cells. Yields the function that writes one batch.

    Parameters
    ----------
    sink : path or pyarrow.NativeFile
        Where to write (a path is created or truncated: write to
        :func:`atomic_path`'s path to replace a file safely).
    schema : pyarrow.Schema
        The batches' schema; dictionary columns are written as their values.
    sep : str
        The field separator.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    safe = pa.schema(
        [
            (
                _safe(field.name),
                field.type.value_type if pa.types.is_dictionary(field.type) else field.type,
            )
            for field in schema
        ]
    )
    options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed")
    with pacsv.CSVWriter(sink, safe, write_options=options) as writer:

        def write(batch: pa.RecordBatch) -> None:
            arrays = [defuse(array) for array in batch.columns]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=safe))

        yield write


def table_to_csv(table: pa.Table) -> str:
    """The table as CSV text with a header row, written by :func:`csv_writer`.

    >>> import pyarrow as pa
    >>> print(table_to_csv(pa.table({"q": ["=1+1", "-2", None], "count": [1, 2, 3]})))
    "q","count"
    "'=1+1",1
    "-2",2
    ,3
    <BLANKLINE>
    """
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with csv_writer(sink, table.schema) as write:
        for batch in table.to_batches():
            write(batch)
    return bytes(sink.getvalue()).decode("utf-8")
