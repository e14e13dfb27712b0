"""``anonaudit tables`` from the command line: exit codes, reports, policy, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonaudit.cli import main

EDU = """education \\ race,Black,White,Other,Total
HS,3,x,x,40
Bachelors,12,20,x,45
Masters,x,15,2,29
Total,27,65,22,114
"""

SAFE = """education \\ race,Black,White,Total
HS,x,x,45
Bachelors,x,x,52
Total,51,46,97
"""


@pytest.fixture
def edu(tmp_path: Path) -> Path:
    path = tmp_path / "edu.csv"
    path.write_text(EDU)
    return path


def test_a_disclosing_table_fails_with_its_proofs(
    edu: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tables", str(edu)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("anonaudit tables: FAIL")
    assert "4 disclosed exactly by the published cells" in out
    assert "edu.csv: education=HS, race=Other] = [" in out
    assert "2 sensitive cells published as they are" in out
    # redacted: no published figure quoted, no value given back
    assert "(40)" not in out and "give its value:" not in out


def test_show_values_prints_the_values_and_the_json_report(
    edu: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    assert main(["tables", str(edu), "--show-values", "--json", str(report)]) == 1
    assert "give its value: 7" in capsys.readouterr().out  # HS, Other = 40 - 3 - 30
    document = json.loads(report.read_text())
    assert document["counts"]["exact"] == 4 and not document["redacted"]
    cells = {(i["cell"], i["lower"], i["upper"]) for i in document["intervals"]}
    assert ("education=HS, race=Other", 7.0, 7.0) in cells


def test_json_to_stdout_is_the_document_alone(
    edu: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tables", str(edu), "--json", "-"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["command"] == "tables" and document["redacted"]
    assert "intervals" not in document


def test_a_safe_table_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "safe.csv"
    path.write_text(SAFE)
    assert main(["tables", str(path), "--threshold", "5"]) == 0
    assert capsys.readouterr().out.startswith("anonaudit tables: PASS")


def test_the_policy_file_sets_the_rules_and_the_command_line_wins(
    edu: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[tables]\nthreshold = 2\ncoalition = 0\n")
    assert main(["tables", str(edu), "--config", str(policy), "--json", "-"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["rules"]["threshold"] == 2 and document["counts"]["published"] == 0
    argv = ["tables", str(edu), "--config", str(policy), "--threshold", "10", "--json", "-"]
    assert main(argv) == 1
    assert json.loads(capsys.readouterr().out)["rules"]["threshold"] == 10
    policy.write_text("[tables]\nthreshhold = 2\n")
    assert main(["tables", str(edu), "--config", str(policy)]) == 2
    assert "[tables] has no setting 'threshhold'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["tables", "reconstruct"])
def test_a_report_path_in_the_policy_file_is_refused_not_dropped(
    edu: Path, tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reports' paths are the command line's (--json, --html): a policy file naming
    one is told so, rather than read and silently ignored."""
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[tables]\nhtml = "{tmp_path / "page.html"}"\n')
    assert main([command, str(edu), "--config", str(policy)]) == 2
    assert "[tables] has no setting 'html'" in capsys.readouterr().err
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dominance", "2"], "--dominance takes N,K such as 2,85"),
        (["--rounding", "five"], "--rounding takes BASE[:nearest|random]"),
        (["--threshold", "-1"], "threshold"),
        (["--true-values", "nope.csv=x.csv"], "--true-values nope.csv=...: no table"),
        (["--population", "other.csv=A"], "--population names no table given"),
    ],
)
def test_bad_settings_are_one_line_errors(
    edu: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tables", str(edu), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_contradicting_tables_are_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(EDU.replace("Masters,x,15,2,29", "Masters,x,15,2,30"))
    assert main(["tables", str(path)]) == 2
    err = capsys.readouterr().err
    assert "do not add up" in err and err.count("\n") == 1


def test_true_values_check_the_protection_of_suppressed_cells(
    edu: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = tmp_path / "truth.csv"
    truth.write_text(
        EDU.replace("HS,3,x,x,40", "HS,3,30,7,40")
        .replace("Bachelors,12,20,x,45", "Bachelors,12,20,13,45")
        .replace("Masters,x,15,2,29", "Masters,12,15,2,29")
    )
    argv = ["tables", str(edu), "--true-values", f"edu.csv={truth}", "--json", "-"]
    assert main(argv) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["counts"]["exact"] == 4


def _experience(path: Path, extra: int) -> None:
    """Women by education, race and insurance, with under 20 years' experience (extra 0)
    or under 21 (extra: three women with exactly 20 years, Black, HS, uninsured)."""
    counts = {
        ("HS", "Black", "yes"): 22, ("HS", "Black", "no"): 31,
        ("HS", "White", "yes"): 27, ("HS", "White", "no"): 35,
        ("BA", "Black", "yes"): 24, ("BA", "Black", "no"): 21,
        ("BA", "White", "yes"): 38, ("BA", "White", "no"): 40,
    }  # fmt: skip
    counts[("HS", "Black", "no")] += extra
    lines = ["education,race,insured,count"]
    for e in ("HS", "BA", "Total"):
        for r in ("Black", "White", "Total"):
            for i in ("yes", "no", "Total"):
                total = sum(
                    v
                    for (a, b, c), v in counts.items()
                    if e in (a, "Total") and r in (b, "Total") and i in (c, "Total")
                )
                lines.append(f"{e},{r},{i},{total}")
    path.write_text("\n".join(lines) + "\n")


def test_nested_populations_disclose_by_differencing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: two tables of women with under 20 and under 21 years' experience, each
    safe alone, give by subtraction the insurance status of the three with exactly 20."""
    under20, under21 = tmp_path / "under20.csv", tmp_path / "under21.csv"
    _experience(under20, 0)
    _experience(under21, 3)
    for path in (under20, under21):
        assert main(["tables", str(path)]) == 0
    capsys.readouterr()
    argv = ["tables", str(under20), str(under21), "--population", "under20.csv=lt20"]
    argv += ["--population", "under21.csv=lt21", "--within", "lt20=lt21", "--json", "-"]
    assert main(argv) == 1
    document = json.loads(capsys.readouterr().out)
    texts = [f["text"] for f in document["findings"] if f["kind"] == "differencing"]
    assert (
        "in the difference of the two tables: everyone in education=HS, race=Black has "
        "insured=no" in texts
    )
    assert main([*argv[:-2], "--within", "lt20=nobody"]) == 2
    assert "no table counts the population nobody" in capsys.readouterr().err


def test_a_table_of_sums_is_judged_on_its_contributors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Turnover by region: one enterprise makes 900 of the North's 1,000 (the (2, 85)
    rule: 900 + 60 of 1,000 > 85%); grouped into one holding, two enterprises of the
    South are one contributor too."""
    micro = tmp_path / "enterprises.csv"
    micro.write_text(
        "region,value,group\nNorth,900,a\nNorth,60,b\nNorth,40,c\n"
        "South,300,d\nSouth,290,d\nSouth,280,e\nSouth,270,f\n"
    )
    table = tmp_path / "turnover.csv"
    table.write_text("region,turnover\nNorth,1000\nSouth,1140\nTotal,2140\n")
    argv = ["tables", str(table), "--kind", "sum", "--contributions", f"turnover.csv={micro}"]
    argv += ["--holding", "group", "--json", "-"]
    assert main(argv) == 1
    document = json.loads(capsys.readouterr().out)
    published = {tuple(f["cells"]): f["rule"] for f in document["findings"]}
    assert published[("region=North",)] == "dominance"
    assert ("region=South",) not in published  # 590 of 1,140 for the holding: 52%
    assert main([*argv[:2], "--contributions", f"turnover.csv={micro}"]) == 2
    assert "the table counts units" in capsys.readouterr().err
