"""Where data lives: local paths and object-storage URLs -> a pyarrow filesystem and a path.

``s3://`` (and ``s3a://``) URLs use pyarrow's native S3 client; every other URL scheme
fsspec knows (``gs://``, ``az://``, ``abfs://``, ``memory://``, ...) goes through fsspec, so
its package (``gcsfs``, ``adlfs``, ...) must be installed. Credentials come from the usual
environment variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``) or from storage options, which
win over them. For S3 the options are::

    endpoint_url       an S3-compatible endpoint, e.g. http://127.0.0.1:8333
    region             the bucket's region (default us-east-1 with an endpoint_url)
    access_key_id      the key pair, and a temporary session token
    secret_access_key
    session_token
    anonymous          true: send no credentials (public buckets)
    connect_timeout    seconds to wait for a connection (default 10)
    read_timeout       seconds to wait for an answer to a request (default 60); a
                       request must also be done within it, plus a second per MiB it
                       reads (:class:`BoundedHandler`): a server that drips its answer
                       byte by byte does not hold the audit up for ever

For other schemes the options are passed to the fsspec filesystem as they are.
"""

from __future__ import annotations

import io
import math
import os
import queue
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from anonaudit.errors import ParameterError, SourceNotFoundError, StorageError

__all__ = [
    "BoundedHandler",
    "Location",
    "StorageOptions",
    "is_url",
    "resolve",
    "storage_error",
]

_T = TypeVar("_T")

#: Storage options as given: ``--storage-option KEY=VALUE`` pairs.
StorageOptions = Mapping[str, str]

_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?P<rest>.*)$")
_S3_SCHEMES = ("s3", "s3a")
_S3_KEYS = {
    "endpoint_url": "endpoint_url",
    "endpoint": "endpoint_url",
    "region": "region",
    "access_key_id": "access_key_id",
    "aws_access_key_id": "access_key_id",
    "secret_access_key": "secret_access_key",
    "aws_secret_access_key": "secret_access_key",
    "session_token": "session_token",
    "aws_session_token": "session_token",
    "anonymous": "anonymous",
    "connect_timeout": "connect_timeout",
    "read_timeout": "read_timeout",
    "request_timeout": "read_timeout",
}
_TIMEOUTS = {"connect_timeout": 10.0, "read_timeout": 60.0}
_ENVIRONMENT = {
    "endpoint_url": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
}
_TRUE = ("1", "true", "yes", "on")


def is_url(location: str) -> bool:
    """Whether ``location`` is a URL (``scheme://...``) rather than a local path.

    >>> is_url("s3://bucket/events"), is_url("exports/events.csv")
    (True, False)
    """
    match = _URL.match(location)
    return match is not None and match["scheme"].lower() != "file"


@dataclass(frozen=True)
class Location:
    """A resolved data location.

    Attributes
    ----------
    name : str
        The location as the user gave it (for messages and reports).
    filesystem : pyarrow.fs.FileSystem
        The filesystem holding it; picklable, so Dask workers can read from it.
    path : str
        The path inside ``filesystem`` (for S3: ``bucket/key``).
    scheme : str
        ``"file"``, ``"s3"`` or the fsspec protocol.
    s3 : dict of str to str
        For S3, the effective options (see the module docstring), else empty.
    """

    name: str
    filesystem: pafs.FileSystem
    path: str
    scheme: str
    s3: dict[str, str] = field(default_factory=dict)

    def child(self, path: str) -> str:
        """The user-facing name of ``path`` inside this location's filesystem.

        Relative when the location was given as a relative local path, like it.
        """
        if self.scheme != "file":
            return f"{self.scheme}://{path}"
        return path if os.path.isabs(self.name) else os.path.relpath(path)


def resolve(location: str | os.PathLike[str], options: StorageOptions | None = None) -> Location:
    """Resolve ``location`` to a filesystem and a path.

    Parameters
    ----------
    location : str or os.PathLike
        A local path, ``file://`` URL or object-storage URL.
    options : mapping of str to str, optional
        Storage options (see the module docstring).

    Returns
    -------
    Location

    Raises
    ------
    ParameterError
        An unknown S3 option, or options given for a local path.
    StorageError
        The URL's scheme needs a package that is not installed.
    """
    text = os.fspath(location)
    options = dict(options or {})
    match = _URL.match(text)
    scheme = match["scheme"].lower() if match else "file"
    if scheme == "file":
        if options:
            raise ParameterError(
                f"{text}: --storage-option applies to object-storage URLs, not local paths"
            )
        local = match["rest"] if match else text
        return Location(
            text, pafs.LocalFileSystem(), str(Path(local).expanduser().absolute()), "file"
        )
    assert match is not None
    if scheme in _S3_SCHEMES:
        s3 = _s3_options(options)
        return Location(text, _s3_filesystem(s3), match["rest"].strip("/"), "s3", s3)
    return _fsspec_location(text, scheme, options)


def _s3_options(options: Mapping[str, str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, value in options.items():
        canonical = _S3_KEYS.get(key.lower())
        if canonical is None:
            known = ", ".join(sorted(set(_S3_KEYS.values())))
            raise ParameterError(f"unknown S3 storage option {key!r}; known options: {known}")
        result[canonical] = value
    for key, names in _ENVIRONMENT.items():
        for name in names:
            if key not in result and os.environ.get(name):
                result[key] = os.environ[name]
    if "endpoint_url" in result and "region" not in result:
        result["region"] = "us-east-1"
    return result


def _s3_filesystem(s3: Mapping[str, str]) -> pafs.FileSystem:
    kwargs: dict[str, Any] = {
        "access_key": s3.get("access_key_id"),
        "secret_key": s3.get("secret_access_key"),
        "session_token": s3.get("session_token"),
        "region": s3.get("region"),
        "anonymous": s3.get("anonymous", "").lower() in _TRUE,
        "connect_timeout": _seconds(s3, "connect_timeout"),
        "request_timeout": _seconds(s3, "read_timeout"),
    }
    endpoint = s3.get("endpoint_url")
    if endpoint:
        scheme, _, host = endpoint.rpartition("://")
        kwargs["endpoint_override"] = host.rstrip("/")
        kwargs["scheme"] = scheme or "https"
    if bool(kwargs["access_key"]) != bool(kwargs["secret_key"]):
        raise ParameterError(
            "S3 credentials need both access_key_id and secret_access_key (one was given)"
        )
    s3fs = pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})
    return pafs.PyFileSystem(BoundedHandler(s3fs, kwargs["request_timeout"], endpoint or "S3"))


#: Seconds a request may take beyond ``read_timeout`` for each MiB it reads.
SECONDS_PER_MIB = 1.0
#: Seconds spent ending a request that took too long (its client retries on new connections).
_ENDING = 30.0


class BoundedHandler(pafs.FileSystemHandler):  # type: ignore[misc]
    """A filesystem whose every request is done within a time, or fails as timed out.

    The S3 client's ``request_timeout`` gives up on a request only when no byte comes
    for that long: a server that sends a few bytes a second holds it for ever. Here
    each call (a listing, a file's size, a read) runs on a thread of its own, and the
    caller waits for it ``seconds`` plus :data:`SECONDS_PER_MIB` per MiB read, then
    raises :class:`TimeoutError` naming the endpoint (the thread is left to end with
    the server's answer).

    Parameters
    ----------
    filesystem : pyarrow.fs.FileSystem
        The filesystem doing the requests.
    seconds : float
        The time any request may take (``read_timeout``).
    endpoint : str
        What the requests go to, for the message.
    """

    def __init__(self, filesystem: pafs.FileSystem, seconds: float, endpoint: str) -> None:
        self.filesystem = filesystem
        self.seconds = seconds
        self.endpoint = endpoint

    def __reduce__(self) -> tuple[Any, ...]:
        return BoundedHandler, (self.filesystem, self.seconds, self.endpoint)

    def bounded(self, what: str, call: Callable[[], _T], size: int = 0) -> _T:
        """``call()``, or :class:`TimeoutError` once it took longer than its time."""
        limit = self.seconds + SECONDS_PER_MIB * size / 1024**2
        answers: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

        def run() -> None:
            try:
                answers.put((True, call()))
            except BaseException as exc:  # handed to the caller
                answers.put((False, exc))

        worker = threading.Thread(target=run, name="anonaudit-storage", daemon=True)
        worker.start()
        try:
            done, value = answers.get(timeout=limit)
        except queue.Empty:
            deadline = time.monotonic() + _ENDING
            while worker.is_alive() and time.monotonic() < deadline:  # the client retries
                _abandon(self.endpoint)
                worker.join(0.1)
            raise TimeoutError(
                f"{what}: the request to {self.endpoint} timed out: not done in {limit:g} s "
                "(read_timeout)"
            ) from None
        if not done:
            raise value
        return value  # type: ignore[no-any-return]

    def get_type_name(self) -> str:
        return f"bounded-{self.filesystem.type_name}"

    def equals(self, other: Any) -> bool:
        return isinstance(other, BoundedHandler) and other.filesystem.equals(self.filesystem)

    def normalize_path(self, path: str) -> str:
        return str(self.filesystem.normalize_path(path))

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.bounded(paths[0] if paths else "", lambda: self.filesystem.get_file_info(paths))

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.bounded(selector.base_dir, lambda: self.filesystem.get_file_info(selector))

    def open_input_stream(self, path: str) -> pa.NativeFile:
        stream = self.bounded(path, lambda: self.filesystem.open_input_stream(path))
        return pa.PythonFile(_BoundedFile(self, path, stream), mode="r")

    def open_input_file(self, path: str) -> pa.NativeFile:
        file = self.bounded(path, lambda: self.filesystem.open_input_file(path))
        return pa.PythonFile(_BoundedFile(self, path, file), mode="r")

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise OSError("anonaudit only reads object storage")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = _refuse
    delete_file = move = copy_file = open_output_stream = open_append_stream = _refuse


def _abandon(endpoint: str) -> None:
    """End the connections of an abandoned request to ``endpoint``, so that its thread ends.

    pyarrow's S3 client cannot cancel a request, and finalizes itself at exit (an
    ``atexit`` hook) by waiting for every request under way: for one the server drips,
    as long as the drip lasts. Shutting the process's TCP connections to the endpoint
    down makes the request fail at once. An endpoint given as ``http(s)://host:port``
    is matched by address; AWS's own (no ``endpoint_url``) by its port, 443.
    """
    parsed = urllib.parse.urlsplit(endpoint if "://" in endpoint else "")
    port = parsed.port or (80 if parsed.scheme == "http" else 443)
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parsed.hostname, port)}
    except (OSError, UnicodeError):
        addresses = set()
    try:
        descriptors = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in descriptors:
        for family in (socket.AF_INET, socket.AF_INET6):
            try:
                connection = socket.fromfd(fd, family, socket.SOCK_STREAM)
            except OSError:
                break
            try:
                peer = connection.getpeername()
                if peer[1] == port and (not addresses or peer[0] in addresses):
                    connection.shutdown(socket.SHUT_RDWR)
                    break
            except (OSError, IndexError, TypeError):
                continue
            finally:
                connection.close()


class _BoundedFile(io.RawIOBase):
    """A file of object storage whose every read is bounded (:class:`BoundedHandler`)."""

    def __init__(self, handler: BoundedHandler, path: str, file: pa.NativeFile) -> None:
        super().__init__()
        self._handler, self._path, self._file = handler, path, file

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self._file.seekable())

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._file.seek(offset, whence))

    def tell(self) -> int:
        return int(self._file.tell())

    def size(self) -> int:
        return int(self._handler.bounded(self._path, self._file.size))

    def read(self, size: int | None = -1) -> bytes:
        wanted = -1 if size is None or size < 0 else size
        guess = wanted if wanted >= 0 else self.size() if self.seekable() else 0
        return bytes(self._handler.bounded(self._path, lambda: self._file.read(wanted), guess))

    def readinto(self, buffer: Any) -> int:
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        self._file.close()
        super().close()


def _seconds(s3: Mapping[str, str], key: str) -> float:
    """A timeout of the S3 options, in seconds (its default when not given)."""
    text = s3.get(key)
    if text is None:
        return _TIMEOUTS[key]
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise ParameterError(
            f"--storage-option {key}={text}: give a number of seconds above 0, e.g. {key}=30"
        )
    return seconds


def _fsspec_location(text: str, scheme: str, options: Mapping[str, str]) -> Location:
    try:
        import fsspec
    except ImportError:
        raise StorageError(
            f"{text}: reading {scheme}:// URLs needs fsspec; pip install 'anonaudit[lake]'"
        ) from None
    try:
        filesystem, path = fsspec.core.url_to_fs(text, **options)
    except (ImportError, ValueError) as exc:
        raise StorageError(f"{text}: cannot open {scheme}:// storage: {exc}") from None
    handler = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    return Location(text, handler, str(path), scheme)


_NOT_FOUND = ("NO_SUCH_BUCKET", "NoSuchBucket", "NoSuchKey", "does not exist", "not found")
_UNREACHABLE = (
    "NETWORK_CONNECTION",
    "Couldn't connect",
    "Could not connect",
    "Connection refused",
    "curlCode: 7",
    "curlCode: 6",
    "Could not resolve",
)
_TIMED_OUT = ("curlCode: 28", "Timeout", "timed out")
_DENIED = (
    "ACCESS_DENIED",
    "AccessDenied",
    "InvalidAccessKeyId",
    "INVALID_ACCESS_KEY_ID",
    "SignatureDoesNotMatch",
    "SIGNATURE_DOES_NOT_MATCH",
    "Forbidden",
    "InvalidToken",
    "ExpiredToken",
)


def storage_error(location: Location | str, exc: BaseException) -> Exception:
    """Turn a filesystem exception into a one-line :class:`StorageError` or not-found error.

    The message names the location, what went wrong (unreachable endpoint, rejected
    credentials, missing path) and what to check.
    """
    name = location.name if isinstance(location, Location) else location
    text = " ".join(str(exc).split())
    endpoint = location.s3.get("endpoint_url") if isinstance(location, Location) else None
    where = f" at {endpoint}" if endpoint else ""
    if any(marker in text for marker in _TIMED_OUT):
        return StorageError(
            f"{name}: the storage{where} did not answer in time ({_short(text)}); check the "
            "endpoint and the server, or wait longer with --storage-option "
            "connect_timeout=SECONDS or read_timeout=SECONDS (defaults 10 and 60)"
        )
    if any(marker in text for marker in _UNREACHABLE):
        return StorageError(
            f"{name}: cannot reach the storage{where} ({_short(text)}); check the endpoint "
            "(--storage-option endpoint_url=...) and that the server is running"
        )
    if any(marker in text for marker in _DENIED):
        return StorageError(
            f"{name}: the storage rejected the credentials ({_short(text)}); check "
            "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or --storage-option access_key_id=..."
        )
    if isinstance(exc, FileNotFoundError) or any(marker in text for marker in _NOT_FOUND):
        return SourceNotFoundError(f"{name}: no such file, directory or bucket; check the path")
    return StorageError(f"{name}: cannot read: {_short(text)}")


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
