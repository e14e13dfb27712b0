"""Safe by default: a green verdict means the file may go out as it is.

Each test here failed on the code before the change that made the default safe:
direct identifiers passed the audit, the default reports showed the values of small
classes, a release written by ``advise --out`` failed its own audit, and the DP
release's row order followed the input's.
"""

from __future__ import annotations

import base64
import csv
import json
import re
import urllib.parse
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit.cli import main
from anonaudit.dp.release import by_key, release

# -- direct identifiers fail the verdict ---------------------------------------------------

FIRST = ["Anna", "Ben", "Chloe", "David", "Emma", "Farid", "Greta", "Hugo", "Ines", "Jonas"]
LAST = ["Meyer", "Okafor", "Silva", "Nguyen", "Kowalski", "Dubois", "Rossi", "Tanaka"]


def _clinic(path: Path, rows: int = 240) -> Path:
    """A clinic export with direct identifiers beside its QIs and SA (deterministic)."""
    with path.open("w", newline="", encoding="utf-8") as out:
        w = csv.writer(out)
        w.writerow(
            ["full_name", "email", "phone", "mrn", "sex", "age", "insurance", "chcond", "notes"]
        )
        for i in range(rows):
            first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
            w.writerow(
                [
                    f"{first} {last} {i}",
                    f"{first.lower()}.{last.lower()}{i}@example.org",
                    f"+1 (555) {100 + i % 900:03d}-{1000 + i:04d}",
                    f"MRN{100000 + i}",
                    "FM"[i % 2],
                    ["20-39", "40-59", "60+"][i % 3],
                    ["public", "private"][(i // 6) % 2],
                    ["none", "asthma", "diabetes"][(i // 2) % 3],
                    "follow-up",
                ]
            )
    return path


AUDIT = ["--qi", "sex,age,insurance", "--sensitive", "chcond", "-k", "5"]


def test_a_file_full_of_direct_identifiers_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _clinic(tmp_path / "clinic.csv")
    out = tmp_path / "audit.json"
    html = tmp_path / "audit.html"
    assert main(["audit", str(data), *AUDIT, "--json", str(out), "--html", str(html)]) == 1
    report = json.loads(out.read_text())
    assert report["passed"] is False
    assert report["verdicts"][0] == {"measure": "direct identifiers", "passed": False}
    failing = {i["column"] for i in report["identifiers"] if i["fails"]}
    assert {"full_name", "email", "phone", "mrn"} <= failing
    singling_out = report["criteria"]["singling_out"]
    assert singling_out["measures"][0] == "direct identifiers"
    assert singling_out["passed"] is False
    page = html.read_text()
    assert "The data meets the policy" not in page
    assert "The data does not meet the policy" in page
    assert "FAIL direct identifier: email" in capsys.readouterr().out


def test_identifiers_declared_or_allowed_pass(tmp_path: Path) -> None:
    data = _clinic(tmp_path / "clinic.csv")
    allowed = ["--allow-identifier", "full_name,email", "--allow-identifier", "phone,mrn"]
    assert main(["audit", str(data), *AUDIT, *allowed]) == 0
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'inputs = ["{data.name}"]\nquasi_identifiers = ["sex", "age", "insurance"]\n'
        'sensitive = ["chcond"]\n'
        'allow_identifiers = ["full_name", "email", "phone", "mrn"]\n[thresholds]\nk = 5\n'
    )
    assert main(["audit", "--config", str(policy)]) == 0
    # One left out of the allowed list fails again, naming it.
    partial = ["--allow-identifier", "full_name,email,phone"]
    report = anonaudit.audit(
        data,
        anonaudit.Roles(["sex", "age", "insurance"], ["chcond"], allowed_identifiers=["email"]),
        anonaudit.AuditOptions(policy=anonaudit.Policy(k=5)),
    )
    assert [i.column for i in report.undeclared_identifiers] == ["full_name", "phone", "mrn"]
    assert main(["audit", str(data), *AUDIT, *partial]) == 1


def test_advise_out_refuses_to_keep_an_identifier_not_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _clinic(tmp_path / "clinic.csv")
    out = tmp_path / "out.csv"
    args = ["advise", str(data), "--qi", "sex,age,insurance", "--sensitive", "chcond", "-k", "5"]
    args += ["--hierarchy", "age=prefix:1", "--out", str(out), "--keep", "email"]
    json_report = tmp_path / "advice.json"
    assert main([*args, "--json", str(json_report)]) == 2
    printed = capsys.readouterr()
    assert printed.err.count("\n") == 1 and "--allow-identifier email" in printed.err
    assert printed.out == ""  # refused before the advice is printed or written
    assert not out.exists() and not json_report.exists()
    assert main([*args, "--allow-identifier", "email"]) == 0
    with out.open(newline="") as f:
        assert next(csv.reader(f)) == ["email", "sex", "age", "insurance", "chcond"]


# -- redacted by default -------------------------------------------------------------------


def _small_classes(path: Path) -> tuple[Path, list[str]]:
    """Large classes of common values, and three small classes whose every QI value is a
    token no other record has: if a token shows anywhere, a small class showed."""
    tokens = []
    with path.open("w", newline="", encoding="utf-8") as out:
        w = csv.writer(out)
        w.writerow(["sex", "age", "postcode", "insurance", "chcond"])
        for i in range(240):
            w.writerow(
                [
                    "FM"[i % 2],
                    ["30", "40"][(i // 2) % 2],
                    ["1000", "2000"][(i // 4) % 2],
                    ["public", "private"][(i // 8) % 2],
                    ["none", "asthma", "diabetes"][i % 3],
                ]
            )
        for c, size in enumerate((1, 2, 2)):
            token = [f"qv{c}age", f"qv{c}pc", f"qv{c}ins"]
            tokens += token
            for j in range(size):
                w.writerow(["F", *token, ["hiv", "cancer"][j]])
    return path, tokens


def _everything_written(folder: Path) -> str:
    """Every output file's text, with the base64 data: URIs (embedded CSV downloads,
    images) decoded and URL-encoded ones unquoted."""
    texts = []
    for file in sorted(folder.rglob("*")):
        if not file.is_file():
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        texts.append(text)
        for encoded in re.findall(r"base64,([A-Za-z0-9+/=]+)", text):
            texts.append(base64.b64decode(encoded).decode("utf-8", errors="replace"))
        texts.append(urllib.parse.unquote(text))
    return "\n".join(texts)


@pytest.mark.parametrize(
    "extra", [[], ["--suda", "--qi-analysis"], ["--dp-epsilon", "1", "--dp-delta", "1e-6"]]
)
def test_no_output_shows_a_small_class_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    data, tokens = _small_classes(tmp_path / "visits.csv")
    out = tmp_path / "out"
    out.mkdir()
    args = ["audit", str(data), "--qi", "sex,age,postcode,insurance", "--sensitive", "chcond"]
    args += ["-k", "5", "-l", "2", "-t", "0.2", "--exit-zero", *extra]
    args += ["--json", str(out / "a.json"), "--html", str(out / "a.html")]
    args += ["--listings-dir", str(out / "listings")]
    assert main(args) == 0
    written = _everything_written(out) + capsys.readouterr().out
    shown = [token for token in tokens if token in written]
    assert shown == []
    notice = json.loads((out / "a.json").read_text())["contents"]
    assert notice["redacted"] is True
    # The same run asked to show the values shows them: the scan has power.
    assert main([*args, "--show-values"]) == 0
    written = _everything_written(out)
    assert all(token in written for token in tokens)
    assert json.loads((out / "a.json").read_text())["contents"]["redacted"] is False
    page = (out / "a.html").read_text()
    assert "redacted: no" in page
    # The t-closeness chart's legend names classes: the notice counts it.
    assert re.search(r"shows data values in \d+ other places? \(chart legends", page)


def test_the_python_api_redacts_by_default(tmp_path: Path) -> None:
    data, tokens = _small_classes(tmp_path / "visits.csv")
    report = anonaudit.audit(
        data,
        anonaudit.Roles(["sex", "age", "postcode", "insurance"], ["chcond"]),
        anonaudit.AuditOptions(policy=anonaudit.Policy(k=5, l=2)),
    )
    for text in (report.to_json(), report.to_html()):
        assert not [token for token in tokens if token in text]
    assert all(token in report.to_json(redact=False) for token in tokens)


# -- what advise --out writes passes its own audit ---------------------------------------


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[list[str]], int, float]:
    rows = draw(st.integers(20, 80))
    records = [
        [
            draw(st.sampled_from(["F", "M"])),
            str(draw(st.integers(20, 29))),
            draw(st.sampled_from(["a1", "a2", "b1", "b2", "b3"])),
            draw(st.sampled_from(["x", "y", "z"])),
        ]
        for _ in range(rows)
    ]
    return records, draw(st.integers(2, 6)), draw(st.sampled_from([0.0, 0.05, 0.2, 0.5]))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(drawn=_tables())
def test_auditing_what_advise_wrote_gives_the_advice_row(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[list[list[str]], int, float]
) -> None:
    records, k, limit = drawn
    folder = tmp_path_factory.mktemp("advise")
    data = folder / "data.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sex", "age", "area", "sa"])
        w.writerows(records)
    area = folder / "area.csv"
    area.write_text("a1;a;*\na2;a;*\nb1;b;*\nb2;b;*\nb3;b;*\n")
    out, advice = folder / "out.csv", folder / "advice.json"
    roles = ["--qi", "sex,age,area", "--sensitive", "sa", "-k", str(k)]
    code = main(
        [
            "advise",
            str(data),
            *roles,
            "--hierarchy",
            f"area={area}",
            "--hierarchy",
            "age=interval:5,10",
            "--hierarchy",
            "sex=prefix:1",
            "--suppression-limit",
            str(limit),
            "--out",
            str(out),
            "--json",
            str(advice),
            "--quiet",
        ]
    )
    assert code in (0, 1), code
    chosen = json.loads(advice.read_text())["advice"]
    if not chosen:
        assert code == 1 and not out.exists()
        return
    row = chosen[0]
    audited = folder / "audit.json"
    assert main(["audit", str(out), *roles, "--json", str(audited), "--exit-zero"]) == 0
    report = json.loads(audited.read_text())
    assert report["suppressed_records"] == row["suppressed"]
    assert report["rows"] + report["suppressed_records"] == len(records)
    assert report["k_anonymity"]["k"] == row["measures"]["k"]
    assert report["k_anonymity"]["classes"] == row["measures"]["classes"]
    assert report["passed"] is True


def test_suppressed_records_meet_no_population(tmp_path: Path) -> None:
    release = tmp_path / "release.csv"
    release.write_text("sex,age\n" + "F,30\n" * 8 + "*,*\n" * 3)
    population = tmp_path / "population.csv"
    population.write_text("sex,age\n" + "F,30\n" * 8 + "M,40\n" * 20)
    report = anonaudit.audit(
        release,
        anonaudit.Roles(["sex", "age"]),
        anonaudit.AuditOptions(
            policy=anonaudit.Policy(k=5),
            population=anonaudit.PopulationOptions(table=str(population), k_map=5),
        ),
    )
    assert report.suppressed_records == 3
    assert report.rows == 8
    assert report.k_anonymity.k == 8
    assert report.linkage is not None and report.linkage.k_map.k == 8
    assert report.passed is True


# -- the DP release is ordered by key, whatever the input's order -----------------------------


def test_the_dp_release_is_ordered_by_key_whatever_the_input_order() -> None:
    frame = pa.table(
        {
            "sex": ["M", "F", "M", "F"],
            "age": ["40", "30", "30", "40"],
            "count": [700, 900, 1100, 1300],
        }
    )
    released = []
    for order in ([0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]):
        table = anonaudit.ClassTable.from_frame(
            frame.take(pa.array(order)), quasi_identifiers=["sex", "age"], count="count"
        )
        options = anonaudit.DPOptions(
            guarantee=anonaudit.PrivacyGuarantee(epsilon=1.0, delta=1e-6)
        )  # observed combinations, all far above the threshold
        out = release(table, options).to_frame()
        assert out.equals(by_key(out, ["sex", "age"]))
        released.append(out.select(["sex", "age"]).to_pylist())
    assert released[0] == released[1] == released[2]


# -- a frequency table's margins are never counted twice -----------------------------------


def _cross_tab(path: Path, *, wide: bool) -> Path:
    """Education by race with a Total row (and, wide, a Total column), as offices export."""
    cells = {("HS", "White"): 310, ("HS", "Black"): 41, ("HS", "Asian"): 3}
    cells |= {("College", "White"): 205, ("College", "Black"): 30, ("College", "Asian"): 12}
    cells |= {("Graduate", "White"): 98, ("Graduate", "Black"): 7, ("Graduate", "Asian"): 9}
    races = ["White", "Black", "Asian"]
    totals = {r: sum(n for (_, race), n in cells.items() if race == r) for r in races}
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        if wide:
            w.writerow(["education", *races, "Total"])
            for edu in ("HS", "College", "Graduate"):
                row = [cells[edu, r] for r in races]
                w.writerow([edu, *row, sum(row)])
            w.writerow(["Total", *totals.values(), sum(totals.values())])
        else:
            w.writerow(["education", "race", "count"])
            w.writerows([e, r, n] for (e, r), n in cells.items())
            w.writerows(["Total", r, n] for r, n in totals.items())
    return path


def test_a_total_row_is_refused_naming_it_and_read_once_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _cross_tab(tmp_path / "long.csv", wide=False)
    args = ["audit", str(data), "--qi", "education,race", "--count", "count", "-k", "5"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "education 'Total' is the sum of the other education values" in err
    assert "--filter 'education!=Total'" in err
    out = tmp_path / "a.json"
    assert main([*args, "--filter", "education!=Total", "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    assert report["rows"] == 715  # each person once
    assert report["k_anonymity"]["k"] == 3


def test_a_wide_cross_tab_with_totals_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _cross_tab(tmp_path / "wide.csv", wide=True)
    assert main(["audit", str(data), "--qi", "education", "--count", "Total", "-k", "5"]) == 2
    assert "Total" in capsys.readouterr().err


def test_tables_without_margins_are_read_as_they_are() -> None:
    from anonaudit.measures.margins import margin_values

    titanic = Path(__file__).resolve().parents[1] / "sample_data" / "titanic.csv"
    header = titanic.read_text().splitlines()[0].split(",")
    count = header[-1]
    table = anonaudit.load(titanic, anonaudit.Roles(header[:-2], [header[-2]], count=count))
    assert margin_values(table) == []


@given(
    st.lists(st.integers(1, 50), min_size=6, max_size=6),
    st.sampled_from(["Total", "All", "X9"]),
)
def test_a_margin_row_added_by_arithmetic_is_found(counts: list[int], name: str) -> None:
    from anonaudit.measures.margins import margin_values

    rows = [("a", s, n) for s, n in zip("pqr", counts[:3], strict=True)]
    rows += [("b", s, n) for s, n in zip("pqr", counts[3:], strict=True)]
    rows += [("c", "p", 1), ("c", "q", 2), ("c", "r", 3)]
    total = {s: sum(n for _, t, n in rows if t == s) for s in "pqr"}
    rows += [(name, s, n) for s, n in total.items()]
    frame = pa.table(
        {"g": [r[0] for r in rows], "s": [r[1] for r in rows], "n": [r[2] for r in rows]}
    )
    table = anonaudit.ClassTable.from_frame(frame, quasi_identifiers=["g", "s"], count="n")
    assert name in {m.value for m in margin_values(table) if m.column == "g"}


@pytest.mark.parametrize(
    ("thresholds", "passed"), [([], None), (["-k", "2"], False), (["-k", "1"], True)]
)
def test_singling_out_is_not_passed_on_the_identifier_check_alone(
    tmp_path: Path, thresholds: list[str], passed: bool | None
) -> None:
    """Every record unique and no threshold on the classes: singling out is not judged
    (it said "pass" from the identifier check alone, beside "nothing was judged")."""
    data = tmp_path / "uniq.csv"
    data.write_text("sex,age,diag\nF,31,flu\nM,32,cold\nF,33,hiv\nM,34,flu\n")
    out = tmp_path / "r.json"
    argv = ["audit", str(data), "--qi", "sex,age", "--sensitive", "diag", "--json", str(out)]
    assert main([*argv, *thresholds]) == (1 if passed is False else 0)
    singling_out = json.loads(out.read_text())["criteria"]["singling_out"]
    assert singling_out["passed"] is passed
    unjudged = [s for s in singling_out["not_checked"] if "no threshold on the classes" in s]
    assert bool(unjudged) == (passed is None)
