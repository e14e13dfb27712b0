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
    read_timeout       seconds to wait for an answer to a request (default 60)

For other schemes the options are passed to the fsspec filesystem as they are.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

from anonaudit.errors import ParameterError, SourceNotFoundError, StorageError

__all__ = ["Location", "StorageOptions", "is_url", "resolve", "storage_error"]

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
    return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})


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
