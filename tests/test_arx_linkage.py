"""k-map and delta-presence cross-checked against ARX itself (skipped when ``../shared`` is absent).

``tests/arx/ArxLinkage.java`` asks ARX 3.9.2 (the jars in ``../shared/peers/arx``) for its
own verdicts on the data as is, at given hierarchy levels: ``KMap(k, subset)`` and
``DPresence(dmin, dmax, subset)`` with the release as the research subset of the population,
a suppression limit of 0 and a one-node lattice (see ``tests/arx/README.md``). anonaudit must
agree: k-map holds for K exactly when its smallest match count is at least K, ARX suppresses
exactly anonaudit's ``records_below`` released records, and delta-presence holds for
(dmin, dmax) exactly when anonaudit's shares all lie in ``[dmin, dmax]``. ARX's own class
counts (released and population records per class) must equal anonaudit's.

The cases pin each boundary: a K equal to the k-map and one above it, a delta bound equal to
a share and the next float past it, and population classes that nothing in the release
matches (they do not count for k-map and have share 0 for delta-presence).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import anonaudit
from anonaudit import AuditOptions, PopulationOptions, ReadOptions, Roles
from anonaudit.cli import main
from anonaudit.linkage import PopulationLinkage

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ARX_JARS = SHARED / "peers" / "arx" / "jars"
ARX_DATA = SHARED / "data" / "arx"
ADULT = SHARED / "data" / "adult"
PROGRAM = Path(__file__).resolve().parent / "arx" / "ArxLinkage.java"
JAVA = shutil.which("java")

pytestmark = [
    pytest.mark.skipif(
        not (ARX_JARS.is_dir() and ARX_DATA.is_dir() and ADULT.is_dir()),
        reason="../shared (ARX's jars and data) is not present",
    ),
    pytest.mark.skipif(JAVA is None, reason="java is not installed"),
]


@dataclass(frozen=True)
class Case:
    """A population, a release (rows of it), QIs at hierarchy levels, and what to ask."""

    name: str
    population: Path
    qis: tuple[str, ...]
    rows: tuple[int, ...]
    ks: tuple[int, ...]
    deltas: tuple[tuple[float, float], ...]
    hierarchies: dict[str, Path] = field(default_factory=dict)
    levels: dict[str, int] = field(default_factory=dict)
    release_file: bool = False  # ARX matches a release CSV; else it is given the row numbers


def _below(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _above(x: float) -> float:
    return math.nextafter(x, math.inf)


def _arx_hierarchies(*qis: str) -> dict[str, Path]:
    return {qi: ARX_DATA / f"test_hierarchy_{qi}.csv" for qi in qis}


def _adult_hierarchies(*qis: str) -> dict[str, Path]:
    return {qi: ADULT / f"adult_hierarchy_{qi}.csv" for qi in qis}


ADULT_ROWS = 30162
EVERY_7TH = tuple(range(0, ADULT_ROWS, 7))
EVERY_3RD = tuple(range(1, ADULT_ROWS, 3))

CASES = [
    # ARX's 7-row test table as is: every class one person; 3 released.
    Case(
        "arx-test-as-is",
        ARX_DATA / "test.csv",
        ("age", "gender", "zipcode"),
        rows=(0, 1, 4),
        ks=(1, 2),
        deltas=((0.0, 1.0), (0.5, 1.0), (0.0, 0.5)),
    ),
    # Generalized to the 4-digit zip: released 2 of the 4 in 8193*; three classes of one
    # person are not released (k-map ignores them, delta-presence gives them share 0).
    Case(
        "arx-test-generalized",
        ARX_DATA / "test.csv",
        ("age", "gender", "zipcode"),
        rows=(3, 4),
        ks=(1, 2, 4, 5),
        deltas=((0.0, 1.0), (0.0, 0.5), (0.0, _below(0.5)), (0.5, 1.0), (_above(0.0), 1.0)),
        hierarchies=_arx_hierarchies("age", "gender", "zipcode"),
        levels={"age": 2, "gender": 1, "zipcode": 1},
    ),
    # Li, Li & Venkatasubramanian's 9 records, zip to 3 digits and age to decades: three
    # classes of 3; released 2, 1 and 1 of them (shares 2/3, 1/3, 1/3). A release file.
    Case(
        "t-closeness-table",
        ARX_DATA / "test2.csv",
        ("ZIPCode", "Age"),
        rows=(0, 1, 3, 6),
        ks=(1, 3, 4),
        deltas=(
            (1 / 3, 2 / 3),
            (_above(1 / 3), 1.0),
            (0.0, _below(2 / 3)),
            (0.3, 0.7),
            (0.34, 1.0),
        ),
        hierarchies={
            "ZIPCode": ARX_DATA / "test2_hierarchy_ZIPCode.csv",
            "Age": ARX_DATA / "test2_hierarchy_Age.csv",
        },
        levels={"ZIPCode": 2, "Age": 1},
        release_file=True,
    ),
    # Adult (30,162) as population, every 7th record released; age, sex, race as is.
    Case(
        "adult-as-is",
        ADULT / "adult.csv",
        ("age", "sex", "race"),
        rows=EVERY_7TH,
        ks=(1, 2, 3, 5),
        deltas=((0.0, 1.0), (0.0, 0.99), (0.01, 1.0)),
        hierarchies=_adult_hierarchies("age"),
    ),
    # ... age in 20-year bands: k-map 3.
    Case(
        "adult-age-20y",
        ADULT / "adult.csv",
        ("age", "sex", "race"),
        rows=EVERY_7TH,
        ks=(1, 3, 4, 10),
        deltas=((0.0, 1.0), (0.05, 0.3), (0.0, 0.5)),
        hierarchies=_adult_hierarchies("age"),
        levels={"age": 3},
    ),
    # ... age suppressed: 10 classes, every one released in part (shares 10/87 to 90/601).
    Case(
        "adult-age-suppressed",
        ADULT / "adult.csv",
        ("age", "sex", "race"),
        rows=EVERY_7TH,
        ks=(1, 87, 88, 1000),
        deltas=(
            (10 / 87, 90 / 601),
            (_above(10 / 87), 1.0),
            (0.0, _below(90 / 601)),
            (0.1, 0.2),
            (0.12, 0.2),
        ),
        hierarchies=_adult_hierarchies("age"),
        levels={"age": 4},
    ),
    # Every 3rd Adult record as a release file, four QIs at several levels: k-map 3,
    # shares 1/9 to 2/3.
    Case(
        "adult-release-file",
        ADULT / "adult.csv",
        ("age", "sex", "race", "marital-status"),
        rows=EVERY_3RD,
        ks=(1, 3, 4, 20),
        deltas=((0.0, 1.0), (1 / 9, 2 / 3), (0.2, 0.5), (0.0, 0.4), (0.12, 1.0)),
        hierarchies=_adult_hierarchies("age", "race", "marital-status"),
        levels={"age": 2, "race": 1, "marital-status": 1},
        release_file=True,
    ),
]


def _release_frame(case: Case) -> pd.DataFrame:
    population = pd.read_csv(case.population, sep=";", dtype=str, keep_default_na=False)
    return population.iloc[list(case.rows)]


def _arx_args(case: Case, folder: Path) -> list[str]:
    """ArxLinkage's options for one case."""
    folder.mkdir(parents=True, exist_ok=True)
    args = ["--population", str(case.population), "--sep", ";", "--qi", ",".join(case.qis)]
    if case.release_file:
        release = folder / "release.csv"
        _release_frame(case).to_csv(release, sep=";", index=False)
        args += ["--release", str(release)]
    else:
        rows = folder / "rows.txt"
        rows.write_text("\n".join(map(str, case.rows)) + "\n", encoding="utf-8")
        args += ["--rows", f"@{rows}"]
    for qi, path in case.hierarchies.items():
        args += ["--hierarchy", f"{qi}={path}"]
    if case.levels:
        args += ["--levels", ",".join(f"{qi}={level}" for qi, level in case.levels.items())]
    args += ["--k", ",".join(map(str, case.ks))]
    args += ["--delta", ",".join(f"{lo!r}:{hi!r}" for lo, hi in case.deltas)]
    return [*args, "--classes"]


@pytest.fixture(scope="module")
def arx(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """ARX's answers for every case, from one JVM (a line of JSON per case)."""
    folder = tmp_path_factory.mktemp("arx")
    args = [str(JAVA), "-cp", f"{ARX_JARS}/*", str(PROGRAM)]
    for number, case in enumerate(CASES):
        args += [*(["--and"] if number else []), *_arx_args(case, folder / case.name)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(CASES), done.stdout[-3000:]
    return {case.name: json.loads(line) for case, line in zip(CASES, lines, strict=True)}


@dataclass(frozen=True)
class Ours:
    release: Path
    population_rows: int
    per_k: dict[int, PopulationLinkage]
    keys: list[tuple[str, ...]]  # release classes, in anonaudit's order


def _ours(case: Case, folder: Path) -> Ours:
    folder.mkdir(parents=True, exist_ok=True)
    release = folder / "release.csv"
    _release_frame(case).to_csv(release, sep=";", index=False)
    release_table = anonaudit.load(release, Roles(case.qis), reading=ReadOptions(sep=";"))
    population_table = anonaudit.load(
        case.population, Roles(case.qis), reading=ReadOptions(sep=";")
    )
    per_k = {}
    keys = []
    for k in case.ks:
        report = anonaudit.audit_table(
            release_table,
            AuditOptions(
                hierarchies={qi: str(path) for qi, path in case.hierarchies.items()},
                generalize=case.levels or None,
                population=PopulationOptions(table=population_table, k_map=k),
            ),
        )
        assert report.linkage is not None
        per_k[k] = report.linkage
        rows = report.table.classes.keys.to_pylist()
        keys = [tuple(str(row[qi]) for qi in case.qis) for row in rows]
    return Ours(release, population_table.rows, per_k, keys)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ours]:
    folder = tmp_path_factory.mktemp("ours")
    return {c.name: _ours(c, folder / c.name) for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_k_map_verdicts_agree_with_arx(
    case: Case, arx: dict[str, dict[str, Any]], ours: dict[str, Ours]
) -> None:
    theirs = arx[case.name]
    assert (theirs["population_rows"], theirs["subset_rows"]) == (
        ours[case.name].population_rows,
        len(case.rows),
    )
    verdicts = []
    for answer in theirs["k_map"]:
        k = answer["k"]
        mine = ours[case.name].per_k[k].k_map
        assert mine.passed is (mine.k >= k)
        assert answer["holds"] is mine.passed, f"K={k}: ARX {answer['holds']}, k-map {mine.k}"
        assert answer["records_failing"] == mine.records_below, f"K={k}"
        verdicts.append(mine.passed)
    assert True in verdicts and False in verdicts  # each case holds for some K, fails for one


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_delta_presence_verdicts_agree_with_arx(
    case: Case, arx: dict[str, dict[str, Any]], ours: dict[str, Ours]
) -> None:
    presence = ours[case.name].per_k[case.ks[0]].delta_presence
    verdicts = []
    for (lo, hi), answer in zip(case.deltas, arx[case.name]["delta_presence"], strict=True):
        assert (answer["dmin"], answer["dmax"]) == (lo, hi)  # the bounds reached ARX exactly
        mine = presence.passed(lo, hi)
        assert answer["holds"] is mine, f"({lo!r}, {hi!r}): ARX {answer['holds']}, ours {mine}"
        verdicts.append(mine)
    assert True in verdicts and False in verdicts


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_class_counts_agree_with_arx(
    case: Case, arx: dict[str, dict[str, Any]], ours: dict[str, Ours]
) -> None:
    classes = arx[case.name]["classes"]
    linkage = ours[case.name].per_k[case.ks[0]]
    # population classes: ARX groups the whole population, released or not
    assert classes["count"] == linkage.delta_presence.classes
    assert (classes["delta_min"], classes["delta_max"]) == (
        linkage.delta_presence.min,
        linkage.delta_presence.max,
    )
    shares = Counter(c["released"] / c["population"] for c in classes["list"])
    assert shares == Counter(linkage.delta_presence.shares.tolist())
    # release classes: population records matched, class by class
    released = {tuple(c["key"]): c["population"] for c in classes["list"] if c["released"]}
    assert released == dict(zip(ours[case.name].keys, linkage.k_map.matches.tolist(), strict=True))
    assert classes["min_population_of_released"] == linkage.k_map.k


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cli_json_agrees_with_arx(
    case: Case, arx: dict[str, dict[str, Any]], ours: dict[str, Ours], tmp_path: Path
) -> None:
    """The command line, end to end, at the first K for which ARX says k-map fails."""
    theirs = arx[case.name]
    failing = next(a for a in theirs["k_map"] if not a["holds"])
    out = tmp_path / "report.json"
    args = ["audit", str(ours[case.name].release), "--sep", ";", "--qi", ",".join(case.qis)]
    args += ["--population", str(case.population), "--k-map", str(failing["k"])]
    for qi, path in case.hierarchies.items():
        args += ["--hierarchy", f"{qi}={path}"]
    if case.levels:
        args += ["--generalize", ",".join(f"{qi}={level}" for qi, level in case.levels.items())]
    assert main([*args, "--json", str(out), "--quiet"]) == 1  # the policy fails: k-map
    risk = json.loads(out.read_text(encoding="utf-8"))["risk"]
    assert risk["k_map"]["k"] == theirs["classes"]["min_population_of_released"]
    assert risk["k_map"]["passed"] is False
    assert risk["k_map"]["records_below"] == failing["records_failing"]
    assert (risk["delta_presence"]["min"], risk["delta_presence"]["max"]) == (
        theirs["classes"]["delta_min"],
        theirs["classes"]["delta_max"],
    )
    unique = sum(c["released"] for c in theirs["classes"]["list"] if c["population"] == 1)
    assert risk["linkage"]["unique_matches"] == unique
