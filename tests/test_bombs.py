"""Bombs: small inputs that decode to far more than memory, refused before it runs out.

Each runs ``anonaudit audit`` in a subprocess under an address-space limit
(``RLIMIT_AS``, 3 GiB), so that a failure cannot take the machine down, and expects
exit status 2 with one line naming the file (or the analysis) and what to do.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

LIMIT = 3 * 1024**3  # bytes of address space the audit runs in
SECONDS = 120  # a bomb is refused in seconds; a hang or a slow death fails the test


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def audit_limited(*argv: str) -> tuple[int, str]:
    """``anonaudit audit argv`` in a subprocess under :data:`LIMIT`: its exit status and stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "anonaudit", "audit", *argv, "--quiet"],
        preexec_fn=_limited,
        capture_output=True,
        text=True,
        timeout=SECONDS,
        check=False,
    )
    return done.returncode, done.stderr


def one_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("anonaudit: error: ")
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def gzip_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1.5 GiB decoded from about 1.5 MiB: one record of 1.5 GiB, then a short one."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.csv.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"a" * (1 << 24)
    with open(path, "wb") as stream:
        stream.write(packer.compress(b"zip,age\n"))
        for _ in range(96):
            stream.write(packer.compress(chunk))
        stream.write(packer.compress(b",1\nb,2\n"))
        stream.write(packer.flush())
    assert path.stat().st_size < 2 * 1024**2
    return path


def test_gzip_bomb_of_one_huge_record(gzip_bomb: Path) -> None:
    line = one_error(*audit_limited(str(gzip_bomb), "--qi", "zip,age", "-k", "2"))
    assert f"{gzip_bomb}, after record 0: a record is longer than" in line
    assert "the memory there is" in line and "split the field" in line


def test_gzip_bomb_with_a_memory_limit(gzip_bomb: Path) -> None:
    """``--memory-limit`` lowers the largest record read, whatever the machine has."""
    code, err = audit_limited(
        str(gzip_bomb), "--qi", "zip", "--weights", "age", "--memory-limit", "200MB"
    )
    line = one_error(code, err)
    assert "a record is longer than 16 MiB, the most anonaudit reads at once" in line


def test_parquet_dictionary_bomb(tmp_path: Path) -> None:
    """A 1 MiB value in the dictionary, referred to 20,000 times: 20 GiB from a few KiB."""
    path = tmp_path / "bomb.parquet"
    values = pa.DictionaryArray.from_arrays(
        pa.array([0] * 20_000, pa.int32()), pa.array(["x" * (1 << 20)])
    )
    table = pa.table({"zip": values, "age": pa.array(["1"] * 20_000)})
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 16 * 1024
    for target in (path, tmp_path):  # the file, and the folder as a dataset
        line = one_error(*audit_limited(str(target), "--qi", "zip,age", "-k", "2"))
        assert f"{path}: column 'zip' decodes to 19.5 GiB in 20,000 rows" in line
        assert "memory there is" in line


def test_parquet_row_group_decompressing_beyond_memory(tmp_path: Path) -> None:
    """The footer's uncompressed sizes are checked before a row group is read."""
    path = tmp_path / "plain.parquet"
    rows = 40_000
    table = pa.table({"zip": [f"{'x' * 1000}{i % 7}" for i in range(rows)]})
    pq.write_table(table, path, compression="zstd", use_dictionary=False)
    assert path.stat().st_size < 1024**2
    code, err = audit_limited(str(path), "--qi", "zip", "-k", "2", "--memory-limit", "100MB")
    line = one_error(code, err)
    assert f"{path}: row group 1 decompresses to 38 MiB" in line
    assert "smaller row groups" in line


def test_suda_without_a_work_limit_beyond_memory(tmp_path: Path) -> None:
    """--suda 20 over 20 QIs of 20,000 sample uniques, --max-work 0: refused at once."""
    path = tmp_path / "wide.csv"
    rng = random.Random(1)
    names = [f"q{i}" for i in range(20)]
    lines = [",".join(str(rng.randrange(10)) for _ in names) for _ in range(20_000)]
    path.write_text(",".join(names) + "\n" + "\n".join(lines) + "\n")
    code, err = audit_limited(str(path), "--qi", ",".join(names), "--suda", "20", "--max-work", "0")
    line = one_error(code, err)
    assert "SUDA of MSUs up to 20 of 20 QIs over 20,000 sample uniques would need about" in line
    assert "--suda N" in line
