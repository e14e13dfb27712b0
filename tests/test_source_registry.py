"""The source-format registry: every format declared once, in the module that reads it.

CSV, Parquet and Delta each end their module with a ``FORMAT``
(:class:`anonaudit.sources.base.Format`); :mod:`anonaudit.sources.formats` collects
them, in the order of :data:`anonaudit.settings.names.FORMATS` (the command line's
``--format`` choices). ``open_source`` and the datasets look formats up there: a single
file by its suffix, a directory's format inferred from its files', its files filtered
by format, a Delta table recognised. The last tests declare a format the package does
not have and find it used by each of those, with no other change; and no module of
``anonaudit/sources/`` imports one that imports it back.
"""

from __future__ import annotations

import ast
import gzip
import importlib
import json
import pkgutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest
from lake_data import rows_of

import anonaudit
import anonaudit.sources
from anonaudit import Roles
from anonaudit.classtable import to_text_batch
from anonaudit.errors import OptionError, ParameterError, SourceNotFoundError
from anonaudit.settings.names import FORMATS
from anonaudit.sources import base, csv, dataset, formats, inputs, options, parts, protocol
from anonaudit.sources.csv import CsvSource
from anonaudit.sources.dataset import open_dataset
from anonaudit.sources.formats import Format, named, of_file, registered
from anonaudit.sources.options import CsvOptions, DatasetOptions
from anonaudit.sources.parquet import ParquetSource
from anonaudit.sources.storage import resolve

SOURCES = Path(anonaudit.sources.__file__).parent
RECORDS = pd.DataFrame(
    {
        "zip": ["02139", "02139", "02138", "02138", "02141"],
        "disease": ["flu", "cold", "flu", "flu", "cancer"],
    }
)
ROLES = Roles(["zip"], ["disease"])


def _read(source: protocol.Source) -> dict[str, list[object]]:
    """Every column of ``source``, as text."""
    return pa.Table.from_batches(list(source.batches(source.columns))).to_pydict()


# --- the registry ------------------------------------------------------------------


def test_the_names_are_the_command_lines_formats_in_order() -> None:
    assert tuple(registered()) == FORMATS == ("parquet", "csv", "delta")
    for name, declared in registered().items():
        module = importlib.import_module(f"anonaudit.sources.{name}")
        assert module.FORMAT is declared is named(name)
        assert declared.name == name and declared.title


def test_every_format_a_module_declares_is_registered() -> None:
    declared = {}
    for info in pkgutil.iter_modules([str(SOURCES)]):
        module = importlib.import_module(f"anonaudit.sources.{info.name}")
        if isinstance(getattr(module, "FORMAT", None), Format):
            declared[module.FORMAT.name] = module.FORMAT
    assert declared == dict(registered())
    assert sorted(declared) == ["csv", "delta", "parquet"]


def test_each_format_declares_its_suffixes_and_how_it_opens() -> None:
    parquet, csv_format, delta = (registered()[name] for name in ("parquet", "csv", "delta"))
    assert parquet.suffixes == (".parquet", ".pq", ".parq")
    assert csv_format.suffixes == (".csv", ".tsv", ".txt")
    assert delta.suffixes == ()
    assert [fmt.name for fmt in registered().values() if fmt.fallback] == ["csv"]
    assert parquet.open_file is not None and csv_format.open_file is not None
    assert delta.open_file is None
    assert delta.is_table is not None and delta.open_table is not None
    assert parquet.is_table is None and csv_format.is_table is None
    every = [suffix for fmt in registered().values() for suffix in fmt.suffixes]
    assert len(every) == len(set(every))  # no suffix is two formats'


def test_a_file_name_gives_its_format() -> None:
    assert [of_file(name).name for name in ("a.parquet", "a.pq", "B.PARQ")] == ["parquet"] * 3
    assert [of_file(name).name for name in ("a.csv", "a.TSV", "a.txt")] == ["csv"] * 3
    # no format claims these: the fallback reads them, as before the registry
    assert [of_file(name).name for name in ("a.dat", "a.csv.gz", "stdin")] == ["csv"] * 3
    assert of_file("/data/x.parquet/part.pq").name == "parquet"
    assert of_file("/data/x.parquet/part").name == "csv"


def test_an_unknown_name_is_refused_listing_the_formats() -> None:
    with pytest.raises(
        OptionError, match=r"unknown format 'orc'; choose one of parquet, csv, delta"
    ):
        named("orc")


def test_a_declaration_is_checked() -> None:
    def opener(path: Path, csv: CsvOptions | None) -> protocol.Source:
        raise AssertionError("not called")

    with pytest.raises(ValueError, match="suffix 'orc' is not"):
        Format("orc", "ORC", suffixes=("orc",), open_file=opener)
    with pytest.raises(ValueError, match=r"suffix '\.ORC' is not"):
        Format("orc", "ORC", suffixes=(".ORC",), open_file=opener)
    with pytest.raises(ValueError, match="give is_table and open_table together"):
        Format("lake", "Lake", is_table=lambda where, options: True)
    with pytest.raises(ValueError, match="a fallback format must open files"):
        Format("lake", "Lake", fallback=True, is_table=lambda w, o: True, open_table=_never)
    with pytest.raises(ValueError, match="opens neither files nor tables"):
        Format("orc", "ORC", suffixes=(".orc",))
    other_csv = Format("csv2", "CSV", suffixes=(".csv2",), open_file=opener, fallback=True)
    with pytest.raises(ValueError, match="csv, csv2 are all the fallback"):
        formats._declared([*registered().values(), other_csv])
    with pytest.raises(ValueError, match="two formats are named 'csv'"):
        formats._declared([*registered().values(), registered()["csv"]])


def _never(where: object, options: object) -> protocol.Source:
    raise AssertionError("not called")


# --- single files --------------------------------------------------------------------


def test_a_parq_file_opens_as_parquet(tmp_path: Path) -> None:
    path = tmp_path / "visits.PARQ"
    pq.write_table(pa.Table.from_pandas(RECORDS, preserve_index=False), path)
    source = anonaudit.sources.open_source(path)
    assert isinstance(source, ParquetSource)
    assert source.info.format == "parquet"
    assert _read(source) == RECORDS.to_dict("list")


def test_a_tsv_file_opens_as_csv(tmp_path: Path) -> None:
    path = tmp_path / "visits.tsv"
    RECORDS.to_csv(path, sep="\t", index=False)
    source = anonaudit.sources.open_source(path)
    assert isinstance(source, CsvSource)
    assert (source.info.format, source.sep, source.columns) == ("csv", "\t", ("zip", "disease"))
    assert _read(source) == RECORDS.to_dict("list")


def test_a_file_no_format_claims_opens_as_csv(tmp_path: Path) -> None:
    plain, packed = tmp_path / "visits.dat", tmp_path / "visits.csv.gz"
    RECORDS.to_csv(plain, index=False)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        source = anonaudit.sources.open_source(path)
        assert isinstance(source, CsvSource)
        assert _read(source) == RECORDS.to_dict("list")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SourceNotFoundError, match=r"no-such\.pq: no such file; check the path"):
        anonaudit.sources.open_source(tmp_path / "no-such.pq")


# --- datasets -----------------------------------------------------------------------


def test_a_directory_holding_a_delta_log_is_a_delta_table(tmp_path: Path) -> None:
    is_table = registered()["delta"].is_table
    assert is_table is not None
    (tmp_path / "plain").mkdir()
    (tmp_path / "table" / "_delta_log").mkdir(parents=True)
    assert not is_table(resolve(tmp_path / "plain"), DatasetOptions())
    assert is_table(resolve(tmp_path / "table"), DatasetOptions())
    assert is_table(resolve(tmp_path / "plain"), DatasetOptions(delta_version=0))


def test_a_directory_of_two_formats_is_refused_naming_them(tmp_path: Path) -> None:
    RECORDS.to_csv(tmp_path / "a.csv", index=False)
    pq.write_table(pa.Table.from_pandas(RECORDS, preserve_index=False), tmp_path / "b.pq")
    with pytest.raises(ParameterError, match=r"holds both Parquet and CSV files; pick one"):
        open_dataset(tmp_path)


# --- a format of the test's own --------------------------------------------------------


class JsonLinesSource:
    """A file of JSON objects, one a line: the format the package does not have."""

    def __init__(self, path: Path) -> None:
        self.table = pajson.read_json(path)
        self.columns = tuple(self.table.column_names)
        self.info = protocol.SourceInfo(name=str(path), format="jsonl")

    def batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        for batch in self.table.to_batches():
            yield to_text_batch(batch, columns)


def _open_json_lines(path: Path, csv: CsvOptions | None) -> JsonLinesSource:
    return JsonLinesSource(path)


JSON_LINES = Format("jsonl", "JSON lines", suffixes=(".jsonl",), open_file=_open_json_lines)


@pytest.fixture
def with_json_lines(monkeypatch: pytest.MonkeyPatch) -> Format:
    monkeypatch.setattr(formats, "DECLARED", {**formats.DECLARED, "jsonl": JSON_LINES})
    return JSON_LINES


def _write_json_lines(path: Path) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in RECORDS.to_dict("records")))


def test_a_new_format_is_looked_up_by_name_and_suffix(with_json_lines: Format) -> None:
    assert tuple(registered()) == (*FORMATS, "jsonl")
    assert named("jsonl") is of_file("rows.JSONL") is with_json_lines
    assert of_file("rows.jsonl.gz").name == "csv"


def test_a_new_format_opens_its_files_and_is_audited(
    with_json_lines: Format, tmp_path: Path
) -> None:
    path = tmp_path / "visits.jsonl"
    _write_json_lines(path)
    source = anonaudit.sources.open_source(path)
    assert isinstance(source, JsonLinesSource)
    assert _read(source) == RECORDS.to_dict("list")
    assert rows_of(anonaudit.load(path, ROLES)) == rows_of(anonaudit.load(RECORDS, ROLES))


def test_without_its_declaration_the_new_suffix_is_read_as_csv(tmp_path: Path) -> None:
    path = tmp_path / "visits.jsonl"
    _write_json_lines(path)
    assert isinstance(anonaudit.sources.open_source(path), CsvSource)


def test_a_dataset_knows_a_new_format_by_its_suffix(
    with_json_lines: Format, tmp_path: Path
) -> None:
    RECORDS.to_csv(tmp_path / "a.csv", index=False)
    RECORDS.to_csv(tmp_path / "c.dat", index=False)
    _write_json_lines(tmp_path / "b.jsonl")
    with pytest.raises(ParameterError, match=r"holds both CSV and JSON lines files; pick one"):
        open_dataset(tmp_path)
    # --format csv reads the files without another format's suffix: not b.jsonl
    opened = open_dataset(tmp_path, options=DatasetOptions(format="csv"))
    assert [Path(part.info.name).name for part in opened.parts()] == ["a.csv", "c.dat"]
    unclaimed = tmp_path / "unclaimed"
    unclaimed.mkdir()
    (unclaimed / "c.bin").write_bytes(b"zip\n02139\n")
    with pytest.raises(
        SourceNotFoundError, match=r"no \.parquet or \.csv or \.jsonl files \(found e\.g\. c\.bin\)"
    ):
        open_dataset(unclaimed)


def test_without_its_declaration_a_dataset_of_the_new_suffix_has_no_format(
    tmp_path: Path,
) -> None:
    _write_json_lines(tmp_path / "b.jsonl")
    with pytest.raises(SourceNotFoundError, match=r"no \.parquet or \.csv files \(found e\.g\."):
        open_dataset(tmp_path)


# --- the old paths and the import graph -----------------------------------------------


def test_the_names_stay_where_other_code_imports_them() -> None:
    assert base.open_source is inputs.open_source is anonaudit.sources.open_source
    for name in protocol.__all__:
        assert getattr(base, name) is getattr(protocol, name)
    assert csv.CsvOptions is options.CsvOptions
    assert dataset.DatasetOptions is options.DatasetOptions is anonaudit.sources.DatasetOptions
    assert dataset.FragmentSource is parts.FragmentSource
    assert dataset.DatasetSource is parts.DatasetSource is anonaudit.sources.DatasetSource


def _imported(path: Path, modules: set[str]) -> set[str]:
    """The modules of ``anonaudit/sources/`` that ``path`` imports: at module level, in
    a function or under ``if TYPE_CHECKING:`` alike (``__init__`` for a package name)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "anonaudit.sources":
                found |= {a.name if a.name in modules else "__init__" for a in node.names}
            elif node.module.startswith("anonaudit.sources."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("anonaudit.sources."):
                    found.add(alias.name.split(".")[2])
    return found & modules


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of ``graph`` (its modules in order, the first again last), or ``None``."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for target in sorted(graph[module]):
            if (found := visit(target, [*path, module])) is not None:
                return found
        done.add(module)
        return None

    return next((c for m in sorted(graph) if (c := visit(m, [])) is not None), None)


def test_no_module_of_sources_imports_one_that_imports_it_back() -> None:
    modules = {path.stem for path in SOURCES.glob("*.py")}
    graph = {module: _imported(SOURCES / f"{module}.py", modules) for module in modules}
    assert "protocol" in graph["csv"] and "formats" in graph["dataset"]  # the graph is read
    assert _circle(graph) is None, " -> ".join(_circle(graph) or [])
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert not any("base" in graph[module] for module in modules - {"__init__"})
