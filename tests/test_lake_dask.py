"""The Dask engine on a real ``LocalCluster`` (2 worker processes, 1 thread each).

Its class table, and so every measure and the provenance, equals the local engine's;
a worker killed in the middle of an audit costs a retry, not records; a worker that
dies on every attempt, an unreadable file or an unreachable scheduler is a clear error.
"""

from __future__ import annotations

import gc
import io
import json
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lake_data import (
    QI,
    SA,
    DyingSource,
    S3Server,
    SlowDataset,
    free_port,
    need,
    rows_of,
    seaweedfs,
    write_partitioned,
)

import anonaudit
from anonaudit import AuditOptions, EngineOptions, ReadOptions, Roles
from anonaudit.cli import main
from anonaudit.engines import dask as dask_engine
from anonaudit.engines import local
from anonaudit.errors import EngineError, InputError, MalformedFileError
from anonaudit.progress import Progress
from anonaudit.sources.base import open_source

ROLES: dict[str, Any] = {"quasi_identifiers": [*QI, "day"], "sensitive": SA}  # of the engines
AUDITED = Roles(**ROLES)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    dask = need("dask")
    distributed = need("distributed")
    need("dask.dataframe")
    # One retry per task: a worker killed once is survived, one that dies again is not.
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True
        ) as cluster,
        distributed.Client(cluster) as running,
    ):
        yield running


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dask") / "visits"
    write_partitioned(str(root))
    return root


def report_of(lake: Path, engine: EngineOptions | None = None) -> dict[str, Any]:
    options = AuditOptions(policy=anonaudit.Policy(k=2, l=2))
    report = anonaudit.audit(lake, AUDITED, options, engine=engine)
    document = report.to_dict(max_classes=None)
    document.pop("audited_at")
    return document


def test_dask_audit_equals_the_local_audit(client: Any, lake: Path) -> None:
    stream = io.StringIO()
    progress = Progress(stream, interval=0.0, when="always")
    on_dask = report_of(lake, EngineOptions(engine="dask", scheduler=client, progress=progress))
    assert on_dask == report_of(lake)  # measures, violating classes, sources, coverage
    assert stream.getvalue().splitlines()[-1].startswith("anonaudit: read: 6/6 parts, ")


def test_cli_with_a_scheduler_address(
    client: Any, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["audit", str(lake), "--qi", "zip,age,sex,day", "--sensitive", "diagnosis"]
    argv += ["--json", "-", "--quiet", "--filter", "day>=2024-01-02"]
    assert main([*argv, "--engine", "dask", "--scheduler", client.scheduler.address]) == 0
    on_dask = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    here = json.loads(capsys.readouterr().out)
    assert on_dask.pop("audited_at") and here.pop("audited_at")
    assert on_dask == here


def test_workers_read_object_storage(client: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    with seaweedfs(tmp_path_factory.mktemp("seaweedfs-dask")) as s3:
        server: S3Server = s3
        write_partitioned(f"{server.bucket}/visits", server.filesystem())
        url = f"s3://{server.bucket}/visits"
        reading = ReadOptions(storage_options=server.options())
        on_dask = EngineOptions(engine="dask", scheduler=client)
        remote = anonaudit.load(url, AUDITED, reading=reading, engine=on_dask)
        assert rows_of(remote) == rows_of(anonaudit.load(url, AUDITED, reading=reading))
        assert remote.sources == anonaudit.load(url, AUDITED, reading=reading).sources


def test_a_worker_killed_mid_audit_is_retried(client: Any, lake: Path) -> None:
    source = SlowDataset(open_source(lake), delay=0.5)
    pids = client.run(os.getpid)
    outcome: dict[str, Any] = {}

    def audit() -> None:
        try:
            outcome["table"] = dask_engine.build_class_table([source], **ROLES, scheduler=client)
        except BaseException as exc:  # reported by the assertions below
            outcome["error"] = exc

    worker = threading.Thread(target=audit)
    worker.start()
    deadline = time.monotonic() + 60
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = [address for address, tasks in client.processing().items() if tasks]
        victim = busy[0] if busy else None
        time.sleep(0.05)
    assert victim is not None, "no task started within 60 s"
    os.kill(pids[victim], signal.SIGKILL)
    worker.join(timeout=240)
    assert not worker.is_alive()
    assert "error" not in outcome, outcome.get("error")
    expected = local.build_class_table([open_source(lake)], **ROLES)
    assert rows_of(outcome["table"]) == rows_of(expected)
    assert outcome["table"].sources == expected.sources
    client.wait_for_workers(2, timeout=120)


def test_an_unreadable_file_names_itself(client: Any, tmp_path: Path) -> None:
    root = tmp_path / "visits"
    write_partitioned(str(root))
    broken = root / "day=2024-01-03" / "part-0.parquet"
    broken.write_bytes(b"PAR1 not a parquet file at all PAR1")
    with pytest.raises(MalformedFileError, match=rf"{broken}: cannot read"):
        anonaudit.load(root, AUDITED, engine=EngineOptions(engine="dask", scheduler=client))


def test_unreachable_scheduler(capsys: pytest.CaptureFixture[str], lake: Path) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    code = main(["audit", str(lake), "--qi", "zip", "--engine", "dask", "--scheduler", address])
    err = capsys.readouterr().err
    assert code == 2
    assert f"cannot reach the Dask scheduler at {address}" in err
    assert err.count("\n") == 1


def test_a_worker_that_always_dies_fails_the_audit(client: Any, lake: Path) -> None:
    sources = [open_source(lake), DyingSource("poison.parquet")]
    with pytest.raises(EngineError, match=r"Dask workers died while running .*not complete"):
        dask_engine.build_class_table(sources, **ROLES, scheduler=client)
    client.wait_for_workers(2, timeout=120)


def test_scheduler_that_is_not_an_address(capsys: pytest.CaptureFixture[str], lake: Path) -> None:
    need("distributed")
    code = main(["audit", str(lake), "--qi", "zip", "--engine", "dask", "--scheduler", "garbage"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("anonaudit: error: --scheduler garbage: not a Dask scheduler address")
    assert err.count("\n") == 1


def test_a_corrupt_partition_is_one_line_naming_it(
    client: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "visits"
    write_partitioned(str(root))
    broken = root / "day=2024-01-03" / "part-0.parquet"
    damaged = bytearray(broken.read_bytes())
    damaged[8:200] = b"\xff" * 192  # the pages, not the footer: the worker finds it
    broken.write_bytes(bytes(damaged))
    address = client.scheduler.address
    code = main(["audit", str(root), "--qi", "zip", "--engine", "dask", "--scheduler", address])
    err = capfd.readouterr().err
    assert code == 2, err
    assert err.startswith(f"anonaudit: error: {broken}: cannot read")
    assert err.count("\n") == 1


def test_a_partition_lacking_an_audited_column_is_named_on_dask(
    client: Any, tmp_path: Path
) -> None:
    (tmp_path / "day=1").mkdir()
    (tmp_path / "day=2").mkdir()
    pq.write_table(pa.table({"zip": ["1", "2"], "sex": ["F", "M"]}), tmp_path / "day=1" / "a.pq")
    pq.write_table(pa.table({"zip": ["1", "3"]}), tmp_path / "day=2" / "b.pq")
    roles, on_dask = Roles(["zip", "sex"]), EngineOptions(engine="dask", scheduler=client)
    with pytest.raises(anonaudit.ColumnError, match=rf"{tmp_path / 'day=2' / 'b.pq'} lacks sex"):
        anonaudit.load(tmp_path, roles, engine=on_dask)
    null = ReadOptions(missing_columns="null")
    table = anonaudit.load(tmp_path, roles, reading=null, engine=on_dask)
    assert table.rows == 4 and table.null_counts()["sex"] == 2
    assert [f.null_columns for f in table.sources[0].files] == [(), ("sex",)]


def test_a_frequency_table_on_dask_equals_the_local_engine(client: Any, tmp_path: Path) -> None:
    """``--count``: each partition's counts are summed on the workers, zero cells dropped."""
    root = tmp_path / "freq"
    root.mkdir()
    (root / "a.csv").write_text("q,s,n\na,x,3\nb,y,0\nc,x,2\n", encoding="utf-8")
    (root / "b.csv").write_text("q,s,n\na,x,4\nb,x,1\nc,y,0\n", encoding="utf-8")
    roles, on_dask = Roles(["q"], ["s"], count="n"), EngineOptions(engine="dask", scheduler=client)
    local = anonaudit.load(root, roles)
    remote = anonaudit.load(root, roles, engine=on_dask)
    assert remote.rows == local.rows == 10
    assert (
        sorted(remote.classes.sizes.tolist()) == sorted(local.classes.sizes.tolist()) == [1, 2, 7]
    )
    assert [s.rows for s in remote.sources[0].files] == [5, 5]
    (root / "b.csv").write_text("q,s,n\na,x,-4\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"b\.csv: count column 'n' holds '-4'"):
        anonaudit.load(root, roles, engine=on_dask)


class _LateLoop:
    """``distributed.Client`` whose event loop fails to start the first ``late`` times,
    as ``LoopRunner`` fails on a saturated machine (``assert loop is not None``)."""

    def __init__(self, late: int) -> None:
        self.late, self.made = late, 0

    def __call__(self, address: str, timeout: str) -> str:
        self.made += 1
        assert self.made > self.late
        return address


def test_a_client_whose_loop_starts_late_is_made_again() -> None:
    late = _LateLoop(late=1)
    stub = type("Distributed", (), {"Client": late})
    assert dask_engine._client("tcp://127.0.0.1:1", stub) == "tcp://127.0.0.1:1"
    assert late.made == 2
    with pytest.raises(EngineError, match=r"could not start its event loop within 10 s"):
        dask_engine._client("tcp://127.0.0.1:1", type("Distributed", (), {"Client": _LateLoop(2)}))


@pytest.mark.parametrize("address", ["garbage", "tcp://127.0.0.1:{port}"])
def test_a_client_that_failed_to_start_is_collected_at_once(address: str) -> None:
    """A failed client left to the garbage collector could be collected inside the next
    client's start, under ``LoopRunner``'s class-wide lock that its ``__del__`` takes
    again: the process hung (CI, after the unreachable scheduler's test). None is left."""
    distributed = need("distributed")
    address = address.format(port=free_port())
    gc.collect()
    gc.disable()
    try:
        with pytest.raises(EngineError, match=re.escape(address)):
            dask_engine._client(address, distributed)
        left = [
            kept
            for kept in gc.get_objects()
            if isinstance(kept, distributed.Client) and kept._start_arg == address
        ]
    finally:
        gc.enable()
    assert left == []
