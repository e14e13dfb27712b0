"""The Spark engine against a real local Spark session, compared with the local engine.

Needs pyspark and a Java runtime (the ``spark`` extra; CI installs both and sets
``ANONAUDIT_SPARK_TESTS=required``, which fails these tests rather than skipping them
when either is missing). One ``local[2]`` session, bound to 127.0.0.1 with its web UI
off, serves every test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lake_data import QI, SA, rows_of, write_partitioned, write_text

import anonaudit
from anonaudit import AuditOptions, EqualDistance, ReadOptions, Roles
from anonaudit.classtable import ClassTable
from anonaudit.engines.spark import build_class_table
from anonaudit.errors import ColumnError, ParameterError
from anonaudit.sources import open_inputs

pytestmark = pytest.mark.filterwarnings(
    # pyspark warns on import that it does not fully support pandas 3; it is not used here.
    "ignore:PySpark does not yet fully support pandas:FutureWarning"
)

# Quoted line breaks, a BOM, empty fields quoted and not, "NA", a trailing empty field.
TRICKY = (
    "\ufeffzip,age,sex,diagnosis,ward\n"
    '02134,30,F,flu,"A\nB"\n'
    '02134,30,F,"",A\n'
    "02134,,F,NA,A\n"
    '02139,41,"M",cold,\n'
    '02139,41,M,"say ""hi""",C\n'
    "02139,41,M,cold,C\n"
    ",41,M,flu,C\n"
)


def _spark_required() -> bool:
    return os.environ.get("ANONAUDIT_SPARK_TESTS") == "required"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local Spark session with two cores, on the loopback interface."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        if _spark_required():
            pytest.fail("pyspark is missing: pip install -e '.[spark]'")
        pytest.skip("pyspark is missing: pip install -e '.[spark]'")
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        if _spark_required():
            pytest.fail("no Java runtime: apt-get install default-jre-headless")
        pytest.skip("no Java runtime: apt-get install default-jre-headless")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("anonaudit-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _on_spark(
    spark: Any, inputs: list[str], qi: list[str], sa: list[str], **reading: Any
) -> ClassTable:
    options: dict[str, Any] = {
        "sep": None,
        "encoding": "utf-8",
        "na_values": ("",),
        "format": None,
        "filter": (),
        "storage_options": None,
        "delta_version": None,
        "missing_columns": "error",
    }
    options.update(reading)
    sources = open_inputs(inputs, **options)
    return build_class_table(sources, quasi_identifiers=qi, sensitive=sa, session=spark)


def _same_audit(ours: ClassTable, theirs: ClassTable) -> None:
    assert rows_of(ours) == rows_of(theirs)
    policy = anonaudit.Policy(k=2, l=2, t=0.3)
    a = anonaudit.audit_table(ours, AuditOptions(policy=policy, distances=EqualDistance()))
    b = anonaudit.audit_table(theirs, AuditOptions(policy=policy, distances=EqualDistance()))
    assert (a.k_anonymity.k, a.k_anonymity.classes) == (b.k_anonymity.k, b.k_anonymity.classes)
    for name in ours.sensitive:
        ld, other = a.l_diversity[name], b.l_diversity[name]
        assert (ld.distinct, ld.entropy) == (other.distinct, other.entropy)
        assert a.t_closeness[name].t == b.t_closeness[name].t
    assert (a.risk.highest, a.risk.average) == (b.risk.highest, b.risk.average)
    assert a.passed == b.passed


@pytest.mark.parametrize("na", [("",), ("", "NA"), ("?",)])
def test_spark_reads_a_tricky_csv_as_the_local_engine(
    spark: Any, tmp_path: Path, na: tuple[str, ...]
) -> None:
    path = str(write_text(tmp_path / "tricky.csv", TRICKY))
    qi, sa = ["zip", "age", "sex"], ["diagnosis", "ward"]
    table = _on_spark(spark, [path], qi, sa, na_values=na)
    local = anonaudit.load(path, Roles(qi, sa), reading=ReadOptions(na_values=na))
    _same_audit(table, local)
    assert table.sources == local.sources


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_spark_reads_a_partitioned_dataset_as_the_local_engine(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    root = str(tmp_path / "lake")
    write_partitioned(root, fmt=fmt)
    qi, sa = [*QI, "day"], SA
    table = _on_spark(spark, [root], qi, sa)
    local = anonaudit.load(root, Roles(qi, sa))
    _same_audit(table, local)
    # The records of every file are counted in the same scan.
    assert table.sources == local.sources and len(table.sources[0].files) == 6


def test_spark_dataframe_equals_the_local_engine(spark: Any, tmp_path: Path) -> None:
    root = str(tmp_path / "lake")
    write_partitioned(root)
    frame = spark.read.parquet(root)
    qi = [*QI, "day"]
    table = anonaudit.load(frame, Roles(qi, SA))
    _same_audit(table, anonaudit.load(root, Roles(qi, SA)))
    assert (table.sources[0].format, table.sources[0].rows) == ("spark", 2400)


def test_spark_dataframe_with_nulls_and_no_sensitive_column(spark: Any) -> None:
    rows = [("a", 1, "x"), ("a", 1, None), (None, 2, "x"), ("a", None, "y"), ("a", 1, "x")]
    frame = spark.createDataFrame(rows, "q string, n int, s string")
    table = anonaudit.load(frame, Roles(["q", "n"]))
    assert rows_of(table) == [("a", "1", 3), ("a", None, 1), (None, "2", 1)]


def test_spark_missing_column(spark: Any) -> None:
    frame = spark.createDataFrame([("1",)], "zip string")
    with pytest.raises(ColumnError, match=r"no column named 'age'; the columns are: zip"):
        anonaudit.load(frame, Roles(["zip", "age"]))


def test_spark_refuses_a_filtered_dataset(spark: Any, tmp_path: Path) -> None:
    root = str(tmp_path / "lake")
    write_partitioned(root)
    with pytest.raises(ParameterError, match="--engine spark reads local CSV and Parquet"):
        _on_spark(spark, [root], QI, SA, filter=["day=2024-01-02"])


def test_the_command_line_audits_on_spark_as_on_the_local_engine(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anonaudit audit --engine spark`` runs on Spark (the session the test started)
    and reports what the local engine reports."""
    import json

    from anonaudit.cli import main

    path = str(write_text(tmp_path / "tricky.csv", TRICKY))
    args = ["audit", path, "--qi", "zip,age,sex", "--sensitive", "diagnosis,ward", "-k", "2"]
    reports = {}
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.json"
        assert main([*args, "--engine", engine, "--json", str(out), "--quiet"]) == 1
        reports[engine] = json.loads(out.read_text(encoding="utf-8"))
    capsys.readouterr()
    local, on_spark = reports["local"], reports["spark"]
    assert on_spark["k_anonymity"] == local["k_anonymity"]
    assert on_spark["l_diversity"] == local["l_diversity"]
    assert on_spark["risk"]["highest"] == local["risk"]["highest"]
