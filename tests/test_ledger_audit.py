"""``anonaudit audit --ledger``: a release judged against the earlier ones of its dataset.

Composition (Ganta, Kasiviswanathan & Smith 2008) with the earlier releases kept with
their record ids, differencing against the latest one coded alike, both from the ledger,
in the JSON report, the summary, the HTML report and the exit status; the release is
recorded only when the audit passes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from ganta import HOSPITAL_A, HOSPITAL_B
from hypothesis import given, settings
from hypothesis import strategies as st

from anonaudit import Analyses, AuditOptions
from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.linkage import Ledger
from anonaudit.linkage.history import release_history

ROLES = ["--qi", "zip,age", "--sensitive", "disease"]


def _write(frame: pd.DataFrame, path: Path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def _audit(
    capsys: pytest.CaptureFixture[str], path: str, ledger: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    """Audit ``path`` as a release of dataset ``city``; the exit status and the JSON."""
    status = main(
        ["audit", path, *ROLES, "--ledger", str(ledger), "--dataset", "city", *extra,
         "--json", "-", "--quiet"]
    )  # fmt: skip
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return status, document


def test_the_second_hospital_release_composes_with_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    ledger = tmp_path / "ledger.sqlite"

    status, first = _audit(capsys, a, ledger, "--id", "pid", "-l", "3")
    assert status == 0
    releases = first["releases"]
    assert releases["recorded_as"] == 1 and releases["earlier"] == []
    assert releases["composition"] == {} and releases["differencing"] == {}
    assert any("no earlier release of 'city'" in gap for gap in releases["not_checked"])

    status, second = _audit(capsys, b, ledger, "--id", "pid", "-l", "3")
    assert status == 1  # each hospital is 3-diverse, yet together they disclose Alice's
    releases = second["releases"]
    assert releases["recorded_as"] is None  # a failing release is not recorded
    assert [entry["id"] for entry in releases["earlier"]] == [1]
    assert releases["composed_with"] == [1]
    composed = releases["composition"]["disease"]
    assert (composed["records"], composed["disclosed_records"]) == (2, 1)
    assert composed["newly_disclosed_records"] == 1  # no release alone disclosed it
    assert [r["distinct_l"] for r in composed["releases"]] == [3, 6]
    assert releases["differenced_with"] is None  # coded differently: ages <30 and <35
    assert any("coded differently" in gap for gap in releases["not_checked"])
    # first the columns' own check (none left undeclared), then the ledger's
    assert second["verdicts"][0] == {"measure": "direct identifiers", "passed": True}
    verdicts = {v["measure"]: v["passed"] for v in second["verdicts"][1:]}
    assert verdicts == {"l-diversity of disease": True, "composition of disease": False}
    linkability = second["criteria"]["linkability"]
    assert linkability["passed"] is False and "composition of disease" in linkability["measures"]
    assert "composition of disease" in second["criteria"]["inference"]["measures"]
    with Ledger.open(ledger) as opened:
        assert [entry.source for entry in opened.releases()] == [a]


def test_a_month_later_the_differencing_discloses_the_newcomers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jan = pd.DataFrame(
        {"pid": range(8), "zip": ["130"] * 4 + ["148"] * 4,
         "age": ["30-39"] * 8, "dx": ["flu", "flu", "hiv", "hiv"] * 2}
    )  # fmt: skip
    # February: two newcomers in zip 130, both with hiv; one record of 148 changed
    # nothing (a flu record left and another came).
    feb = pd.concat(
        [
            jan[jan.pid != 4],
            pd.DataFrame(
                {"pid": [8, 9, 10], "zip": ["130", "130", "148"],
                 "age": ["30-39"] * 3, "dx": ["hiv", "hiv", "flu"]}
            ),
        ]
    )  # fmt: skip
    first, second = _write(jan, tmp_path / "jan.csv"), _write(feb, tmp_path / "feb.csv")
    ledger = tmp_path / "ledger.sqlite"
    roles = ["--qi", "zip,age", "--sensitive", "dx"]
    assert main(["audit", first, *roles, "--ledger", str(ledger), "--dataset", "visits",
                 "-k", "2", "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()
    html = tmp_path / "feb.html"
    status = main(
        ["audit", second, *roles, "--ledger", str(ledger), "--dataset", "visits", "-k", "2",
         "--json", "-", "--quiet", "--html", str(html), "--redact"]
    )  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert status == 1
    releases = document["releases"]
    assert releases["differenced_with"] == 1
    differencing = releases["differencing"]["dx"]
    assert differencing["classes_changed"] == 1  # zip 148 has the same histogram
    assert (differencing["disclosing_classes"], differencing["disclosed_records"]) == (1, 2)
    [listed] = differencing["disclosing"]["classes"]
    assert (listed["value"], listed["change"], listed["old_size"], listed["new_size"]) == (
        "hiv", 2, 4, 6,
    )  # fmt: skip
    assert set(listed["quasi_identifiers"].values()) == {"[redacted]"}
    # Without --id the composition is not assessed, and the report says why.
    assert any("--id" in gap for gap in releases["not_checked"])
    assert releases["composition"] == {}
    text = html.read_text(encoding="utf-8")
    assert 'id="releases"' in text and "Differencing of dx against #1" in text
    assert "differencing of dx" in text  # its row in the verdict
    section = text.split('id="releases"')[1].split("</section>")[0]
    assert "<td>130</td>" not in section and "<td>[redacted]</td>" in section

    # The summary on stdout says the same; the attack is judged with no threshold set.
    assert main(["audit", second, *roles, "--ledger", str(ledger), "--dataset", "visits"]) == 1
    out = capsys.readouterr().out
    assert "differencing of dx against #1: 1 of 2 classes changed" in out
    assert "disclosing it for 2 records  [FAIL]" in out
    assert "this one not recorded, as the audit failed" in out


def test_a_release_already_in_the_ledger_is_not_attacked_with_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    ledger = tmp_path / "ledger.sqlite"
    assert _audit(capsys, a, ledger, "--id", "pid")[1]["releases"]["recorded_as"] == 1
    status, again = _audit(capsys, a, ledger, "--id", "pid")
    assert status == 0
    assert again["releases"]["earlier"] == [] and again["releases"]["recorded_as"] is None
    # To another recipient, the same file is a release of its own.
    status, sent = _audit(capsys, a, ledger, "--id", "pid", "--recipient", "insurer")
    assert sent["releases"]["recorded_as"] == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--count", "n"], "frequency table (--count)"),
        (["--ledger", "missing/ledger.sqlite"], "folder"),
    ],
)
def test_refusals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    data = HOSPITAL_A.assign(n=1)
    path = _write(data, tmp_path / "a.csv")
    args = ["audit", path, *ROLES, "--ledger", str(tmp_path / "l.sqlite"), "--id", "pid"]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


_NAME_IT = 'add --dataset NAME, or dataset = "NAME" in the policy file\'s [ledger] table'


def test_ledger_without_a_dataset_name_for_several_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_A.assign(pid=HOSPITAL_A.pid + 100), tmp_path / "b.csv")
    assert main(["audit", a, b, *ROLES, "--ledger", str(tmp_path / "l.sqlite")]) == 2
    assert _NAME_IT in capsys.readouterr().err


def test_a_monthly_release_without_a_dataset_name_is_refused_not_waved_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each file its own dataset (its hash) checked nothing: February's differencing
    against January was never run, and February passed and was recorded."""
    jan = pd.DataFrame({"zip": ["130"] * 4 + ["148"] * 4, "age": ["30-39"] * 8,
                        "disease": ["flu", "flu", "hiv", "hiv"] * 2})  # fmt: skip
    feb = pd.concat([jan, jan.head(1).assign(disease="hiv")])
    ledger = tmp_path / "ledger.sqlite"
    for month, data in (("jan", jan), ("feb", feb)):
        path = _write(data, tmp_path / f"{month}.csv")
        assert main(["audit", path, *ROLES, "--ledger", str(ledger), "--quiet"]) == 2
        err = capsys.readouterr().err
        [line] = err.splitlines()
        assert line.endswith(_NAME_IT) and "Traceback" not in err
    assert not ledger.exists()  # refused before the audit ran, nothing recorded
    # Named, February's differencing against January fails it.
    for month, expected in (("jan", 0), ("feb", 1)):
        path = str(tmp_path / f"{month}.csv")
        named = [*ROLES, "--ledger", str(ledger), "--dataset", "visits", "--quiet"]
        assert main(["audit", path, *named]) == expected
    capsys.readouterr()


def test_a_policy_file_names_the_dataset_by_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(HOSPITAL_A, tmp_path / "a.csv")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        'name = "city"\ninputs = ["a.csv"]\nquasi_identifiers = ["zip", "age"]\n'
        'sensitive = ["disease"]\n[ledger]\nfile = "l.sqlite"\n',
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(policy), "--quiet"]) == 0
    with Ledger.open(tmp_path / "l.sqlite") as ledger:
        assert [entry.dataset for entry in ledger.releases()] == ["city"]
    policy.write_text(
        'inputs = ["a.csv"]\nquasi_identifiers = ["zip", "age"]\nsensitive = ["disease"]\n'
        '[ledger]\nfile = "l.sqlite"\n',
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(policy), "--quiet"]) == 2
    assert _NAME_IT in capsys.readouterr().err


def test_a_version_1_ledger_gains_the_records_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE releases (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL,
            dataset TEXT NOT NULL, fingerprint TEXT NOT NULL, source TEXT NOT NULL,
            quasi_identifiers TEXT NOT NULL, sensitive TEXT NOT NULL, transformation TEXT,
            class_table BLOB, mechanism TEXT, epsilon REAL, delta REAL, rho REAL,
            recipient TEXT);
        INSERT INTO releases (time, dataset, fingerprint, source, quasi_identifiers,
            sensitive) VALUES ('2026-01-01', 'd', 'ab', 'q1.csv', '["zip"]', '["dx"]');
        """
    )
    connection.close()
    with Ledger.open(path) as ledger:
        assert ledger.meta()["schema_version"] == "6"
        [entry] = ledger.releases()
        assert ledger.records(entry.id) is None and not ledger.has_records(entry.id)
        kept = pa.table({"pid": ["1"], "zip": ["130"], "dx": ["flu"]})
        number = ledger.record(
            dataset="d", fingerprint="cd", source="q2.csv", quasi_identifiers=["zip"],
            sensitive=["dx"], records=kept,
        )  # fmt: skip
        assert ledger.records(number) == kept


_VALUES = st.sampled_from(["a", "b", "c"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["z1", "z2", "z3"]), _VALUES), min_size=1, max_size=30))
def test_a_release_published_twice_discloses_nothing_new(rows: list[tuple[str, str]]) -> None:
    """The same release again: differencing finds no change, composition nothing new."""
    records = pa.table(
        {
            "pid": [str(i) for i in range(len(rows))],
            "zip": [zip_ for zip_, _ in rows],
            "dx": [value for _, value in rows],
        }
    )
    table = ClassTable.from_frame(
        records.drop_columns(["pid"]).to_pandas().assign(count=1),
        quasi_identifiers=["zip"],
        sensitive=["dx"],
    )
    with Ledger.open(":memory:") as ledger:
        ledger.record(
            dataset="d", fingerprint="earlier", source="jan.csv", quasi_identifiers=["zip"],
            sensitive=["dx"], table=table, records=records,
        )  # fmt: skip
        history = release_history(ledger, table, dataset="d", fingerprint="now", records=records)
    assert history.differencing["dx"].classes_changed == 0
    composed = history.composition["dx"]
    assert composed.records == len(rows) and composed.newly_disclosed_records == 0
    single_valued = {z for z, _ in rows if len({v for zz, v in rows if zz == z}) == 1}
    assert composed.disclosed_records == sum(z in single_valued for z, _ in rows)
    assert all(verdict.passed for verdict in history.verdicts())


def test_a_policy_file_names_the_ledger_relative_to_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "office"
    folder.mkdir()
    _write(HOSPITAL_A, folder / "a.csv")
    _write(HOSPITAL_B, folder / "b.csv")
    policy = folder / "policy.toml"
    for name in ("a", "b"):
        policy.write_text(
            f'inputs = ["{name}.csv"]\nquasi_identifiers = ["zip", "age"]\n'
            'sensitive = ["disease"]\n'
            '[ledger]\nfile = "releases.sqlite"\ndataset = "city"\nid = "pid"\n',
            encoding="utf-8",
        )
        status = main(["audit", "--config", str(policy), "--quiet"])
    assert status == 1  # the second hospital: Alice disclosed by the composition
    assert "composition of disease with #1" in capsys.readouterr().out
    assert (folder / "releases.sqlite").is_file()
    with Ledger.open(folder / "releases.sqlite") as ledger:
        [entry] = ledger.releases("city")
        assert entry.source.endswith("a.csv") and ledger.has_records(entry.id)


def test_ledger_options_without_a_ledger_or_with_datasets_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(HOSPITAL_A, tmp_path / "a.csv")
    assert main(["audit", path, *ROLES, "--dataset", "city"]) == 2
    assert "add --ledger FILE" in capsys.readouterr().err
    policy = tmp_path / "policy.toml"
    policy.write_text(
        'quasi_identifiers = ["zip", "age"]\n[ledger]\nfile = "l.sqlite"\n'
        '[[datasets]]\nname = "a"\ninputs = ["a.csv"]\n',
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(policy)]) == 2
    assert "with [[datasets]] run anonaudit audit on each" in capsys.readouterr().err


def test_suppression_advice_leaves_the_attacks_across_releases_to_the_ledger() -> None:
    """A release failing differencing: no class of it alone accounts for the failure, so
    the suppression advice names only the measures of the table itself."""
    import functools
    from dataclasses import replace

    from anonaudit import Policy, audit_table
    from anonaudit.advice.suppression import suppression_advice

    def table(rows: list[tuple[str, str, int]]) -> ClassTable:
        frame = pd.DataFrame(rows, columns=["zip", "dx", "count"])
        return ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["dx"])

    old = table([("130", "flu", 2), ("130", "hiv", 2), ("148", "flu", 1)])
    new = table([("130", "flu", 2), ("130", "hiv", 3), ("148", "flu", 1)])
    with Ledger.open(":memory:") as ledger:
        ledger.record(
            dataset="d", fingerprint="jan", source="jan.csv", quasi_identifiers=["zip"],
            sensitive=["dx"], table=old,
        )  # fmt: skip
        history = release_history(ledger, new, dataset="d", fingerprint="feb")
    check = functools.partial(
        audit_table, options=AuditOptions(policy=Policy(k=2), analyses=Analyses(suppression=False))
    )
    report = replace(check(new), history=history)
    verdicts = {verdict.name: verdict.passed for verdict in report.verdicts()}
    assert verdicts == {"k-anonymity": False, "differencing of dx": False}
    advice = suppression_advice(report, check)
    assert [m.measure for m in advice.measures] == ["k-anonymity"]
    assert (advice.classes, advice.records) == (1, 1)  # zip 148, a class of one


def test_an_earlier_release_of_other_sensitive_columns_is_not_differenced() -> None:
    frame = pd.DataFrame({"zip": ["130", "148"], "dx": ["flu", "hiv"], "count": [3, 4]})
    new = ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["dx"])
    other = ClassTable.from_frame(
        frame.rename(columns={"dx": "income"}), quasi_identifiers=["zip"], sensitive=["income"]
    )
    with Ledger.open(":memory:") as ledger:
        ledger.record(
            dataset="d", fingerprint="jan", source="jan.csv", quasi_identifiers=["zip"],
            sensitive=["income"], table=other,
        )  # fmt: skip
        history = release_history(ledger, new, dataset="d", fingerprint="feb")
    assert history.differenced_with is None and history.differencing == {}
    assert any("none of this release's sensitive columns" in gap for gap in history.not_checked)
    assert history.verdicts() == []


def test_releases_recorded_by_compose_are_composed_with_later_audits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    ledger = tmp_path / "ledger.sqlite"
    compose = ["compose", a, b, "--id", "pid", *ROLES, "--ledger", str(ledger)]
    assert main([*compose, "--dataset", "city", "--quiet"]) == 0
    later = HOSPITAL_B.assign(pid=HOSPITAL_B.pid.where(HOSPITAL_B.pid != 25, 26))
    status, document = _audit(capsys, _write(later, tmp_path / "c.csv"), ledger, "--id", "pid")
    releases = document["releases"]
    assert releases["composed_with"] == [1, 2]  # compose kept both releases' records
    assert releases["composition"]["disease"]["newly_disclosed_records"] == 1  # Alice
    assert status == 1


def _repeating(tmp_path: Path) -> str:
    """Hospital A with patient p5's id given to another record too."""
    data = HOSPITAL_A.assign(pid=[f"p{i}" for i in HOSPITAL_A.pid])
    data.loc[1, "pid"] = "p5"
    return _write(data, tmp_path / "repeating.csv")


def test_a_release_with_repeated_ids_is_refused_before_it_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    args = ["audit", _repeating(tmp_path), *ROLES, "--ledger", str(ledger), "--dataset", "city"]
    assert main([*args, "--id", "pid", "--quiet"]) == 2
    err = capsys.readouterr().err
    [line] = err.splitlines()
    assert "id column 'pid' repeats 1 id (2 records share an id)" in line
    assert "p5" not in line  # the column and a count, no id value
    assert "nothing was recorded" in line and "Traceback" not in err
    with Ledger.open(ledger) as opened:
        assert opened.releases() == ()
    # compose --ledger refuses it too, before recording either release
    b = _write(HOSPITAL_B.assign(pid=[f"p{i}" for i in HOSPITAL_B.pid]), tmp_path / "b.csv")
    compose = ["compose", _repeating(tmp_path), b, "--id", "pid", *ROLES]
    assert main([*compose, "--ledger", str(ledger), "--dataset", "city", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'pid' repeats 1 id" in err and "p5" not in err
    with Ledger.open(ledger) as opened:
        assert opened.releases() == ()


def _bad_release(ledger: Path, tmp_path: Path) -> None:
    """Record, as anonaudit did before it refused them, a release whose ids repeat."""
    records = pa.Table.from_pandas(
        pd.read_csv(_repeating(tmp_path), dtype=str)[["pid", "zip", "age", "disease"]],
        preserve_index=False,
    )
    table = ClassTable.from_frame(
        HOSPITAL_A.drop(columns="pid").assign(count=1),
        quasi_identifiers=["zip", "age"],
        sensitive=["disease"],
    )
    with Ledger.open(ledger) as opened:
        opened.record(
            dataset="city", fingerprint="bad", source="repeating.csv",
            quasi_identifiers=["zip", "age"], sensitive=["disease"], table=table,
            records=records,
        )  # fmt: skip


def test_a_recorded_release_with_repeated_ids_is_retired_and_later_audits_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    _bad_release(ledger, tmp_path)
    b = _write(HOSPITAL_B.assign(pid=[f"p{i}" for i in HOSPITAL_B.pid]), tmp_path / "b.csv")
    args = ["audit", b, *ROLES, "--ledger", str(ledger), "--dataset", "city", "--id", "pid"]
    assert main([*args, "--quiet"]) == 2  # the earlier release cannot be composed with
    [line] = capsys.readouterr().err.splitlines()
    assert f"anonaudit ledger {ledger} retire city 1 --reason TEXT" in line
    assert "p5" not in line

    assert main(["ledger", str(ledger), "retire", "city", "1", "--reason", "ids repeat"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("retired release #1 of city (repeating.csv) at ")
    assert out.rstrip().endswith(": ids repeat")

    status, document = _audit(capsys, b, ledger, "--id", "pid")
    assert status == 0
    releases = document["releases"]
    assert releases["earlier"] == [] and releases["recorded_as"] == 2
    assert any("no earlier release of 'city'" in gap for gap in releases["not_checked"])

    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    listed = json.loads(capsys.readouterr().out)
    first, second = listed["releases"]
    assert first["retired"]["reason"] == "ids repeat" and first["retired"]["time"]
    assert second["retired"] is None
    assert main(["ledger", str(ledger)]) == 0
    text = capsys.readouterr().out
    assert f"RETIRED {first['retired']['time']}: ids repeat" in text
    with Ledger.open(ledger) as opened:  # recorded, not deleted; its cost still counts
        assert [entry.id for entry in opened.releases("city")] == [1, 2]
        assert [entry.id for entry in opened.releases("city", retired=False)] == [2]
        assert opened.records(1) is not None


@pytest.mark.parametrize(
    ("retire", "message"),
    [
        (["city", "7", "--reason", "x"], "no release #7 of dataset 'city'"),
        (["town", "1", "--reason", "x"], "no release #1 of dataset 'town'"),
        (["city", "1", "--reason", " "], "--reason is empty"),
        (["city", "1"], "--reason"),
    ],
)
def test_retire_refusals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], retire: list[str], message: str
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    _bad_release(ledger, tmp_path)
    assert main(["ledger", str(ledger), "retire", *retire]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_release_is_retired_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = tmp_path / "ledger.sqlite"
    _bad_release(ledger, tmp_path)
    assert main(["ledger", str(ledger), "retire", "city", "1", "--reason", "first"]) == 0
    assert main(["ledger", str(ledger), "retire", "city", "1", "--reason", "again"]) == 2
    err = capsys.readouterr().err
    assert "was retired already" in err and "(first)" in err


def test_a_version_2_ledger_gains_the_retirements(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    with Ledger.open(path) as ledger:
        ledger.record(
            dataset="d", fingerprint="ab", source="q1.csv", quasi_identifiers=["zip"],
            sensitive=["dx"],
        )  # fmt: skip
    connection = sqlite3.connect(path)  # as version 2 left it: no retirements table
    connection.executescript(
        "DROP TABLE retirements; UPDATE meta SET value = '2' WHERE key = 'schema_version';"
    )
    connection.close()
    with Ledger.open(path) as ledger:
        assert ledger.meta()["schema_version"] == "6"
        [entry] = ledger.releases()
        assert entry.retired is None and entry.source == "q1.csv"
        retired = ledger.retire(entry.id, dataset="d", reason="test")
        assert retired.retired is not None and ledger.releases(retired=False) == ()


def _months(tmp_path: Path) -> tuple[str, str]:
    """January, and February with one newcomer in each of 7 classes, all with hiv:
    7 classes changed in one value only."""
    jan = pd.DataFrame(
        [(f"Z{z}", "30-39", dx) for z in range(7) for dx in ("flu", "flu", "hiv", "hiv")],
        columns=["zip", "age", "disease"],
    )
    feb = pd.concat([jan, pd.DataFrame({"zip": [f"Z{z}" for z in range(7)],
                                        "age": "30-39", "disease": "hiv"})])  # fmt: skip
    return _write(jan, tmp_path / "jan.csv"), _write(feb, tmp_path / "feb.csv")


def _notice_and_rows(html: str) -> tuple[int, int, int]:
    """The notice's count of rows of QI values, the page's table rows holding one, and
    the rows of its CSV downloads holding one (the QI values here are ``Z0`` to ``Z6``)."""
    import base64
    import re

    match = re.search(r"This report contains ([\d,]+) rows? of", html)
    assert match, "no notice"
    token = re.compile(r"\bZ\d\b")
    page = [row for row in re.findall(r"<tr>.*?</tr>", html, flags=re.S) if token.search(row)]
    downloads = [
        base64.b64decode(data).decode("utf-8")
        for data in re.findall(r'href="data:text/csv;[^,"]*base64,([A-Za-z0-9+/=]+)"', html)
    ]
    csv_rows = [line for text in downloads for line in text.splitlines() if token.search(line)]
    return int(match.group(1).replace(",", "")), len(page), len(csv_rows)


def test_the_notice_counts_the_disclosing_classes_the_report_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit's HTML report with a ledger lists the disclosing classes of the
    differencing with their QI values: its notice counts them (it said 0)."""
    jan, feb = _months(tmp_path)
    ledger = tmp_path / "ledger.sqlite"
    named = [*ROLES, "--ledger", str(ledger), "--dataset", "city", "--quiet"]
    assert main(["audit", jan, *named]) == 0
    html = tmp_path / "feb.html"
    assert main(["audit", feb, *named, "--html", str(html), "--show-values"]) == 1
    capsys.readouterr()
    text = html.read_text(encoding="utf-8")
    section = text.split('id="releases"')[1].split("</section>")[0]
    assert section.count("<td>Z") == 7  # the 7 disclosing classes, values shown
    notice, page, downloads = _notice_and_rows(text)
    assert notice == page == downloads == 7

    # anonaudit diff's page says the same of the same classes
    diff = tmp_path / "diff.html"
    shown = ["--quiet", "--show-values"]
    assert main(["diff", jan, feb, *ROLES[:4], "--html", str(diff), *shown]) == 0
    assert _notice_and_rows(diff.read_text(encoding="utf-8")) == (7, 7, 7)
    # ... and, capped, counts and names the cap it was given
    assert main(["diff", jan, feb, *ROLES[:4], "--html", str(diff), "--quiet",
                 "--max-classes", "3", "--show-values"]) == 0  # fmt: skip
    capped = diff.read_text(encoding="utf-8")
    assert _notice_and_rows(capped) == (3, 3, 3)
    assert "(1 listing capped at 3 rows)" in capped
