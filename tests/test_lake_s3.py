"""Object storage for real: a SeaweedFS S3 server started on 127.0.0.1 for this module.

A partitioned dataset (and a Delta table) is written to it, audited by ``s3://`` URL and
compared with the audit of the same files on local disk; credentials come from the AWS
environment variables or from ``--storage-option``. Unreachable endpoints, rejected
credentials and missing paths are one-line errors with exit status 2.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest
from lake_data import (
    DAYS,
    QI,
    SA,
    S3Server,
    free_port,
    need,
    rows_of,
    seaweedfs,
    whole_table,
    write_partitioned,
)

import anonaudit
from anonaudit import ReadOptions, Roles
from anonaudit.cli import main
from anonaudit.errors import SourceNotFoundError, StorageError

ROLES = ("--qi", "zip,age,sex,day", "--sensitive", "diagnosis", "-k", "2", "-l", "2")


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with seaweedfs(tmp_path_factory.mktemp("seaweedfs")) as server:
        write_partitioned(f"{server.bucket}/visits", server.filesystem())
        yield server


@pytest.fixture
def aws_environment(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3.secret)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(["audit", *argv, "--json", "-", "--quiet", "--max-classes", "0"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else {}, err


def without_provenance(report: dict[str, Any]) -> dict[str, Any]:
    for key in ("audited_at", "sources", "coverage"):
        report.pop(key)
    return report


def test_audit_by_url_equals_the_local_audit(
    s3: S3Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], aws_environment: None
) -> None:
    url = f"s3://{s3.bucket}/visits"
    code, remote, err = run_json(capsys, url, *ROLES)
    assert err == ""
    local = tmp_path / "visits"
    write_partitioned(str(local))
    code_local, expected, _ = run_json(capsys, str(local), *ROLES)
    assert code == code_local == 1
    files = remote["sources"][0]["files"]
    assert [f["name"].removeprefix(url) for f in files] == [
        f["name"].removeprefix(str(local)) for f in expected["sources"][0]["files"]
    ]
    assert [f["rows"] for f in files] == [f["rows"] for f in expected["sources"][0]["files"]]
    assert remote["coverage"] == expected["coverage"]
    assert without_provenance(remote) == without_provenance(expected)


def test_storage_options_and_a_partition_filter(s3: S3Server) -> None:
    table = anonaudit.load(
        f"s3://{s3.bucket}/visits/",
        Roles(QI, SA),
        reading=ReadOptions(filter="day=2024-01-03", storage_options=s3.options()),
    )
    expected = anonaudit.load(whole_table(DAYS[2:]), Roles(QI, SA))
    assert rows_of(table) == rows_of(expected)
    assert all(
        f.name.startswith(f"s3://{s3.bucket}/visits/day=2024-01-03/")
        for f in table.sources[0].files
    )


def test_glob_in_a_url(s3: S3Server) -> None:
    table = anonaudit.load(
        f"s3://{s3.bucket}/visits/day=*/part-0.parquet",
        Roles(["zip", "day"]),
        reading=ReadOptions(storage_options=s3.options()),
    )
    assert len(table.sources[0].files) == len(DAYS)
    assert sorted({key for key in table.keys.column("day").to_pylist()}) == list(DAYS)


def test_delta_table_on_s3(s3: S3Server) -> None:
    deltalake = need("deltalake")
    options = {
        "AWS_ENDPOINT_URL": s3.endpoint,
        "AWS_ACCESS_KEY_ID": s3.key,
        "AWS_SECRET_ACCESS_KEY": s3.secret,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }
    uri = f"s3://{s3.bucket}/delta-visits"
    everything = whole_table()
    first = everything.slice(0, 1000)
    deltalake.write_deltalake(uri, first, partition_by=["day"], storage_options=options)
    deltalake.write_deltalake(
        uri, everything.slice(1000), partition_by=["day"], mode="append", storage_options=options
    )
    roles = Roles([*QI, "day"], SA)
    latest = anonaudit.load(uri, roles, reading=ReadOptions(storage_options=s3.options()))
    old = anonaudit.load(
        uri, roles, reading=ReadOptions(storage_options=s3.options(), delta_version=0)
    )
    assert rows_of(latest) == rows_of(anonaudit.load(everything, roles))
    assert rows_of(old) == rows_of(anonaudit.load(first, roles))
    assert (latest.sources[0].version, old.sources[0].version) == (1, 0)


def test_fsspec_urls(tmp_path: Path) -> None:
    fsspec = need("fsspec")
    memory = fsspec.filesystem("memory")
    write_partitioned("/lake-test/visits", pafs.PyFileSystem(pafs.FSSpecHandler(memory)))
    try:
        table = anonaudit.load("memory://lake-test/visits", Roles([*QI, "day"]))
        expected = anonaudit.load(whole_table(), Roles([*QI, "day"]))
        assert rows_of(table) == rows_of(expected)
        assert table.sources[0].files[0].name.startswith("memory://")
    finally:
        memory.rm("/lake-test", recursive=True)


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["audit", *argv, "--qi", "zip", "--quiet"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    return err


def test_rejected_credentials(s3: S3Server, capsys: pytest.CaptureFixture[str]) -> None:
    err = error_line(
        capsys,
        f"s3://{s3.bucket}/visits",
        "--storage-option", f"endpoint_url={s3.endpoint}",
        "--storage-option", f"access_key_id={s3.key}",
        "--storage-option", "secret_access_key=wrong",
    )  # fmt: skip
    assert "the storage rejected the credentials" in err
    assert "AWS_ACCESS_KEY_ID" in err


def test_unreachable_endpoint(capsys: pytest.CaptureFixture[str], aws_environment: None) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    err = error_line(capsys, "s3://lake/visits", "--storage-option", f"endpoint_url={endpoint}")
    assert f"s3://lake/visits: cannot reach the storage at {endpoint}" in err


def test_missing_paths(s3: S3Server) -> None:
    options = s3.options()
    with pytest.raises(SourceNotFoundError, match=r"no such file, directory or bucket"):
        anonaudit.load(
            f"s3://{s3.bucket}/nothing-here",
            Roles(QI),
            reading=ReadOptions(storage_options=options),
        )
    with pytest.raises(SourceNotFoundError, match=r"no such file, directory or bucket"):
        anonaudit.load(
            "s3://no-such-bucket/visits", Roles(QI), reading=ReadOptions(storage_options=options)
        )


def test_storage_option_errors(s3: S3Server) -> None:
    with pytest.raises(anonaudit.ParameterError, match=r"unknown S3 storage option 'colour'"):
        anonaudit.load(
            "s3://lake/x", Roles(QI), reading=ReadOptions(storage_options={"colour": "red"})
        )
    with pytest.raises(anonaudit.ParameterError, match=r"applies to object-storage URLs"):
        anonaudit.load(".", Roles(QI), reading=ReadOptions(storage_options={"region": "x"}))
    assert issubclass(StorageError, anonaudit.InputError)


# -- a server that drips its answers -----------------------------------------------------


class DripProxy:
    """A TCP proxy on 127.0.0.1 in front of the S3 server that drips every answer back.

    Requests pass at once; each answer is sent ``chunk`` bytes every ``pause`` seconds
    (a few hundred bytes a second: enough for the S3 client's ``request_timeout``,
    which only gives up when nothing comes). Every loop ends by ``lifetime`` at most.
    """

    def __init__(self, port: int, chunk: int = 64, pause: float = 0.1, lifetime: float = 90):
        self.target = ("127.0.0.1", port)
        self.chunk, self.pause = chunk, pause
        self.deadline = time.monotonic() + lifetime
        self.stopped = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.5)
        self.endpoint = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _running(self) -> bool:
        return not self.stopped.is_set() and time.monotonic() < self.deadline

    def _accept(self) -> None:
        while self._running():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            server = socket.create_connection(self.target, timeout=10)
            for source, sink, drip in ((client, server, False), (server, client, True)):
                threading.Thread(target=self._pipe, args=(source, sink, drip), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, drip: bool) -> None:
        source.settimeout(0.5)
        try:
            while self._running():
                try:
                    data = source.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    break
                step = self.chunk if drip else len(data)
                for start in range(0, len(data), step):
                    if not self._running():
                        return
                    sink.sendall(data[start : start + step])
                    if drip:
                        time.sleep(self.pause)
        except OSError:
            pass
        finally:
            source.close()
            sink.close()

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


@pytest.fixture
def drip(s3: S3Server) -> Iterator[DripProxy]:
    rows = b"".join(b"%d,%d\n" % (i % 10, i % 7) for i in range(20_000))
    with s3.filesystem().open_output_stream(f"{s3.bucket}/slow/table.csv") as stream:
        stream.write(b"zip,age\n" + rows)
    proxy = DripProxy(int(s3.endpoint.rsplit(":", 1)[1]))
    yield proxy
    proxy.close()


@pytest.mark.parametrize("path", ["slow/table.csv", "visits"])
def test_a_server_that_drips_its_answers(s3: S3Server, drip: DripProxy, path: str) -> None:
    """Every GET answered a few bytes at a time: exit 2 naming the URL, in bounded time."""
    url = f"s3://{s3.bucket}/{path}"
    environment = dict(
        os.environ,
        AWS_ACCESS_KEY_ID=s3.key,
        AWS_SECRET_ACCESS_KEY=s3.secret,
        AWS_ENDPOINT_URL=drip.endpoint,
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "anonaudit", "audit", url, "--qi", "zip,age", "--quiet",
         "--storage-option", "read_timeout=2"],
        env=environment, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert time.monotonic() - started < 45
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"anonaudit: error: {url}: the storage")
    assert "did not answer in time" in lines[0] and "read_timeout" in lines[0]
    assert drip.endpoint in lines[0]
