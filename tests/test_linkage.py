"""Linkability (anonaudit.linkage): composition, differencing, population linkage, ledger."""

from __future__ import annotations

import json
import math
import multiprocessing as mp
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ganta import HOSPITAL_A, HOSPITAL_B
from hypothesis import given, settings
from hypothesis import strategies as st

from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.dp.accounting import (
    PrivacyCost,
    mechanism_cost,
    noise_scale,
    sequential,
)
from anonaudit.dp.budgets import Recorded
from anonaudit.dp.contrast import posterior_bound
from anonaudit.errors import BudgetError, InputError
from anonaudit.linkage import (
    LEDGER_NOTE,
    Ledger,
    compose,
    delta_presence,
    difference,
    dp_composition,
    k_map,
    population_linkage,
    read_releases,
    unique_matches,
)
from anonaudit.linkage.ledger import BudgetSetting

ROLES = {"id": "pid", "quasi_identifiers": ["zip", "age"], "sensitive": ["disease"]}


def test_ganta_hospitals_alice_is_disclosed() -> None:
    releases = read_releases([HOSPITAL_A, HOSPITAL_B], **ROLES)
    result = compose(releases, "disease", dp_epsilon=1.0)
    assert [r.distinct_l for r in result.releases] == [3, 6]  # each release on its own
    assert result.records == 2  # Alice (pid 1) and pid 5 are in both
    assert result.disclosed_records == 1  # Alice: {AIDS, Cold, Ulcer, Flu} ∩ B's class = {AIDS}
    assert sorted(result.candidates.tolist()) == [1, 3]
    assert result.max_posterior == 1.0
    # pid 5: {Cancer, Heart disease, Flu}. With the pooled prior pi (20 records) and each
    # release's own prior, score(s) = pi(s) * prod_i p_i(s|c_i) / pi_i(s):
    # Cancer 3/20 * (1/4)/(1/8) * (1/6)/(2/12) = 0.3, Heart disease 0.3,
    # Flu 4/20 * (2/4)/(3/8) * (1/6)/(1/12) = 8/15: posterior 8/15 / (17/15) = 8/17.
    assert sorted(result.posterior.tolist()) == pytest.approx([8 / 17, 1.0])
    assert (result.candidates <= result.smallest_class).all()


def test_ganta_dp_counterpart() -> None:
    releases = read_releases([HOSPITAL_A, HOSPITAL_B], **ROLES)
    dp = compose(releases, "disease", dp_epsilon=1.0).dp
    assert dp is not None
    assert dp.accounting.epsilon == 2.0  # pure epsilon adds over the two releases
    assert dp.value_epsilon == 4.0  # a present person's value: replace pair, 2 eps each
    prior_flu = 4 / 20  # the largest pooled prior
    assert dp.posterior_bound == pytest.approx(float(posterior_bound(prior_flu, 4.0)))


def test_records_in_one_release_and_changed_values() -> None:
    b = HOSPITAL_B.copy()
    b.loc[b.pid == 5, "disease"] = "Flu"  # pid 5's value differs between releases
    releases = read_releases([HOSPITAL_A, b], **ROLES)
    result = compose(releases, "disease")
    assert (result.records, result.changed_records, result.disclosed_records) == (1, 1, 1)
    assert result.dp is None
    own = releases.release(1)
    assert own.rows == 12 and own.quasi_identifiers == ("zip", "age")


def test_three_releases_and_repeated_id() -> None:
    c = pd.DataFrame(
        {
            "pid": [5, 6],
            "zip": ["1*", "1*"],
            "age": ["*", "*"],
            "disease": ["Cancer", "Heart disease"],
        }
    )
    result = compose(read_releases([HOSPITAL_A, HOSPITAL_B, c], **ROLES), "disease")
    # pid 5 in all three: {Cancer, HD, Flu} ∩ B's {...} ∩ {Cancer, HD} = {Cancer, HD};
    # pid 6 in A and C: {Cancer, HD, Flu} ∩ {Cancer, HD}.
    assert result.records == 3
    assert sorted(result.candidates.tolist()) == [1, 2, 2]
    twice = pd.concat([c, c])
    with pytest.raises(InputError, match=r"'pid' repeats 2 ids \(4 records share an id\)"):
        read_releases([HOSPITAL_A, twice], **ROLES)


@st.composite
def _releases(draw: st.DrawFn) -> list[pd.DataFrame]:
    n = draw(st.integers(2, 30))
    values = draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n))
    frames = []
    for _ in range(draw(st.integers(2, 3))):
        keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        ids = [i for i in range(n) if keep[i]] or [0]
        frames.append(
            pd.DataFrame(
                {
                    "pid": ids,
                    "q": [draw(st.sampled_from("xyz")) for _ in ids],
                    "s": [values[i] for i in ids],
                }
            )
        )
    return frames


@settings(max_examples=40, deadline=None)
@given(_releases())
def test_composition_never_widens_the_candidate_set(frames: list[pd.DataFrame]) -> None:
    releases = read_releases(frames, id="pid", quasi_identifiers=["q"], sensitive=["s"])
    result = compose(releases, "s")
    assert (result.candidates >= 1).all()  # the true value is always consistent
    assert (result.candidates <= result.smallest_class).all()
    assert ((result.posterior > 0) & (result.posterior <= 1 + 1e-12)).all()
    assert result.disclosed_records == int(result.combination_records[result.candidates == 1].sum())


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 20), st.floats(0.01, 5.0))
def test_dp_total_is_the_accountants(releases: int, epsilon: float) -> None:
    result = dp_composition(releases, epsilon=epsilon, prior=np.array([0.25, 0.75]))
    scale = noise_scale("discrete-laplace", epsilon=epsilon, l1=1, l2=1.0)
    each = mechanism_cost("discrete-laplace", scale=scale, l1=1, l2=1.0)
    assert result.accounting.cost == sequential(*[each] * releases)
    assert result.accounting.epsilon == pytest.approx(releases * epsilon)
    assert result.value_epsilon == pytest.approx(2 * releases * epsilon)
    assert result.posterior_bound == pytest.approx(
        float(posterior_bound(0.75, 2 * releases * epsilon))
    )


def test_dp_gaussian_composes_in_zcdp() -> None:
    one = dp_composition(1, epsilon=1.0, delta=1e-6, mechanism="gaussian", prior=np.ones(2) / 2)
    four = dp_composition(4, epsilon=1.0, delta=1e-6, mechanism="gaussian", prior=np.ones(2) / 2)
    assert four.accounting.cost.rho == pytest.approx(4 * one.accounting.cost.rho)
    assert four.accounting.delta == 4e-6
    assert one.accounting.epsilon < four.accounting.epsilon < 4 * one.accounting.epsilon + 1


def _table(rows: list[tuple[str, str, int]]) -> ClassTable:
    frame = pd.DataFrame(rows, columns=["zip", "dx", "count"])
    return ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["dx"])


def test_differencing_by_hand() -> None:
    old = _table(
        [
            ("130", "flu", 2),
            ("130", "hiv", 2),
            ("140", "flu", 3),
            ("140", "cold", 1),
            ("150", "flu", 2),
            ("150", "cold", 2),
        ]
    )
    new = _table(
        [
            ("130", "flu", 2),
            ("130", "hiv", 3),  # +1 hiv: disclosed
            ("140", "flu", 4),
            ("140", "cold", 2),  # two values changed: not
            ("150", "flu", 2),
            ("150", "cold", 2),  # unchanged
            ("160", "cold", 3),
        ]
    )  # a new class of one value: 3 disclosed
    result = difference(old, new, "dx")
    assert (result.classes, result.classes_changed, result.disclosing_classes) == (4, 3, 2)
    assert result.disclosed_records == 4
    listing = result.listing
    assert listing["zip"].tolist() == ["160", "130"]  # most records first
    assert listing["value"].tolist() == ["cold", "hiv"]
    assert listing["change"].tolist() == [3, 1]
    assert listing[["old_size", "new_size"]].values.tolist() == [[0, 3], [4, 5]]
    removed = difference(new, old, "dx", max_classes=1)
    assert removed.listing["change"].tolist() == [-3] and removed.disclosed_records == 4


def test_k_map_delta_presence_by_hand() -> None:
    def table(rows: list[tuple[str | None, int]]) -> ClassTable:
        frame = pd.DataFrame(rows, columns=["zip", "count"])
        return ClassTable.from_frame(frame, quasi_identifiers=["zip"])

    release = table([("13*", 2), ("14*", 1), (None, 1), ("16*", 1)])
    population = table([("13*", 5), ("14*", 1), (None, 4), ("15*", 3)])
    result = k_map(release, population, k=2)
    # matches: 13* -> 5, 14* -> 1, null -> 4 (nulls match nulls), 16* -> 0
    assert sorted(result.matches.tolist()) == [0, 1, 4, 5]
    assert (result.k, result.classes_below, result.records_below) == (0, 2, 2)
    assert (result.unmatched_classes, result.unmatched_records) == (1, 1)
    assert result.passed is False
    presence = delta_presence(release, population)
    # per population class: 2/5, 1/1, 1/4, 0/3
    assert sorted(presence.shares.tolist()) == [0.0, 0.25, 0.4, 1.0]
    assert (presence.min, presence.max) == (0.0, 1.0)
    assert presence.passed(0.0, 1.0) and not presence.passed(0.1, 1.0)
    assert unique_matches(release, population).records == 1
    combined = population_linkage(release, population, k=2)
    assert combined.k_map.k == 0 and combined.unique_matches.classes == 1


def _laplace(epsilon: float) -> Recorded:
    """A discrete Laplace release under add-remove, known by its ε."""
    return Recorded("discrete-laplace", PrivacyCost(epsilon=epsilon), "add-remove", None, 1, None)


def test_ledger_records_spends_and_refuses(tmp_path: Path) -> None:
    table = _table([("130", "flu", 2), ("130", "hiv", 2)])
    with Ledger.open(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.meta()["note"] == LEDGER_NOTE
        for recipient in ("univ", "univ", "press"):
            ledger.record(
                dataset="visits",
                fingerprint="f" * 64,
                source="q.csv",
                quasi_identifiers=["zip"],
                sensitive=["dx"],
                table=table,
                mechanism="discrete-laplace",
                cost=PrivacyCost(epsilon=0.4),
                recipient=recipient,
                parameters={"neighbouring": "add-remove"},
            )
        first = ledger.releases("visits")[0]
        assert ledger.class_table(first.id).rows == 4  # type: ignore[union-attr]
        assert ledger.spent("visits").epsilon == pytest.approx(1.2)
        assert ledger.spent("visits", "univ").epsilon == pytest.approx(0.8)
        budget = BudgetSetting("visits", 1.0, 0.0, "", "")
        ledger.check_budget(_laplace(0.2), budget, recipient="univ")
        with pytest.raises(BudgetError, match=r"spent by #1 .*univ.*#2"):
            ledger.check_budget(_laplace(0.5), budget)
        # a DP release recorded without its relation has no cost under add-remove
        ledger.record(
            dataset="old",
            fingerprint="f" * 64,
            source="q.csv",
            quasi_identifiers=["zip"],
            sensitive=["dx"],
            mechanism="discrete-laplace",
            cost=PrivacyCost(epsilon=0.1),
        )
        with pytest.raises(BudgetError, match="recorded without its neighbouring relation"):
            ledger.check_budget(_laplace(0.1), replace(budget, dataset="old"))
        ledger.record(
            dataset="visits",
            fingerprint="e" * 64,
            source="exact.csv",
            quasi_identifiers=["zip"],
            sensitive=["dx"],
        )
        assert math.isinf(ledger.spent("visits").epsilon)  # an exact release is not DP


def _insert(path: str, worker: int) -> None:
    with Ledger.open(path) as ledger:
        for i in range(25):
            ledger.record(
                dataset="d",
                fingerprint=f"{worker}-{i}",
                source="s",
                quasi_identifiers=["q"],
                sensitive=["s"],
                mechanism="laplace",
                cost=PrivacyCost(epsilon=0.01),
            )


def test_ledger_concurrent_writers(tmp_path: Path) -> None:
    path = str(tmp_path / "ledger.sqlite")
    context = mp.get_context("spawn")
    workers = [context.Process(target=_insert, args=(path, w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    with Ledger.open(path) as ledger:
        entries = ledger.releases("d")
        assert len(entries) == 100
        assert {e.fingerprint for e in entries} == {f"{w}-{i}" for w in range(4) for i in range(25)}
        assert ledger.spent("d").epsilon == pytest.approx(1.0)


def _write(frame: pd.DataFrame, path: Path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_compose_json_ledger_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    ledger = tmp_path / "ledger.sqlite"
    args = ["compose", a, b, "--id", "pid", "--qi", "zip,age", "--sensitive", "disease"]
    out = tmp_path / "compose.json"
    named = ["--ledger", str(ledger), "--dataset", "city", "--recipient", "x"]
    assert main([*args, "--json", str(out), *named]) == 0
    document = json.loads(out.read_text())["composition"]["disease"]
    assert (document["records"], document["disclosed_records"]) == (2, 1)
    assert document["max_posterior"] == 1.0
    assert [r["distinct_l"] for r in document["releases"]] == [3, 6]
    assert document["dp"]["total"]["epsilon"] == 2.0 and document["dp"]["value_epsilon"] == 4.0
    assert "1 disclosed" in capsys.readouterr().out
    assert main([*args, "--fail-on-disclosure", "--quiet"]) == 1
    assert main([*args[:-2], "--sensitive", "nope"]) == 2
    assert "no column named 'nope'" in capsys.readouterr().err
    assert main([*args, "--json", a]) == 2  # an output over an input
    assert main(["ledger", str(ledger), "--json", "-"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed["releases"]) == 2 and listed["meta"]["note"] == LEDGER_NOTE
    assert main([*args, *named, "--quiet"]) == 0
    with Ledger.open(ledger) as opened:
        assert len(opened.releases()) == 2  # the same files are not recorded twice
        assert {entry.dataset for entry in opened.releases()} == {"city"}


def test_cli_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(
        pd.DataFrame({"zip": ["130"] * 4, "dx": ["flu", "flu", "hiv", "hiv"]}), tmp_path / "old.csv"
    )
    new = _write(
        pd.DataFrame({"zip": ["130"] * 5, "dx": ["flu", "flu", "hiv", "hiv", "hiv"]}),
        tmp_path / "new.csv",
    )
    assert main(["diff", old, new, "--qi", "zip", "--sensitive", "dx", "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)["differencing"]["dx"]
    assert (document["disclosed_records"], document["classes_changed"]) == (1, 1)
    assert document["disclosing"][0]["value"] == "hiv"
    assert (
        main(
            [
                "diff",
                old,
                new,
                "--qi",
                "zip",
                "--sensitive",
                "dx",
                "--fail-on-disclosure",
                "--quiet",
            ]
        )
        == 1
    )
    assert main(["diff", old, new, "--qi", "zip", "--sensitive", "dx", "--max-classes", "-1"]) == 2


def _clinic(tmp_path: Path) -> str:
    frame = pd.DataFrame(
        {"zip": ["a", "b", "c"] * 40, "disease": ["flu", "cold", "flu", "hiv"] * 30}
    )
    return _write(frame, tmp_path / "clinic.csv")


def _dp(data: str, ledger: Path, out: Path, *extra: str) -> list[str]:
    return [
        "dp", data, "--qi", "zip", "--sensitive", "disease", "--epsilon", "1",
        "--public-domain", "zip=a,b,c", "--public-domain", "disease=flu,cold,hiv",
        "--ledger", str(ledger), "--dataset", "clinic", "--out", str(out), "--quiet", *extra,
    ]  # fmt: skip


def test_dp_with_a_ledger_refuses_a_release_past_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ledger = _clinic(tmp_path), tmp_path / "ledger.sqlite"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    assert main(_dp(data, ledger, first, "--budget", "1.5", "--recipient", "x")) == 0
    capsys.readouterr()
    assert main(_dp(data, ledger, second, "--budget", "1.5", "--recipient", "y")) == 2
    err = capsys.readouterr().err
    assert "would cost epsilon 2 under add-remove neighbours (the sum), more than the " in err
    assert "budget of 'clinic' (epsilon 1.5, delta 0 under add-remove neighbours, one" in err
    assert "discrete-laplace" in err and "to x" in err  # the release that spent it
    assert first.exists() and not second.exists()  # nothing written past the budget
    with Ledger.open(ledger) as recorded:
        (entry,) = recorded.releases()
        assert entry.mechanism == "discrete-laplace" and entry.epsilon == 1.0
        assert recorded.spent(entry.dataset).epsilon == 1.0
    assert main(["dp", data, "--qi", "zip", "--epsilon", "1", "--budget", "2"]) == 2
    assert "--budget is checked against a ledger; add --ledger FILE" in capsys.readouterr().err


def _dp_worker(data: str, ledger: str, out: str, queue: mp.Queue) -> None:  # type: ignore[type-arg]
    queue.put(main(_dp(data, Path(ledger), Path(out), "--budget", "1.5")))


def test_two_jobs_cannot_both_spend_the_last_of_a_budget(tmp_path: Path) -> None:
    data, ledger = _clinic(tmp_path), str(tmp_path / "ledger.sqlite")
    context = mp.get_context("spawn")
    queue = context.Queue()
    jobs = [
        context.Process(target=_dp_worker, args=(data, ledger, str(tmp_path / f"{i}.csv"), queue))
        for i in range(3)
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(120)
    assert sorted(queue.get(timeout=10) for _ in jobs) == [0, 2, 2]
    with Ledger.open(ledger) as recorded:
        assert len(recorded.releases()) == 1


def test_audit_with_a_population_table_judges_k_map_and_linkability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """k-map, delta-presence and unique matches by hand, judged and grouped under WP216."""
    release = _write(
        pd.DataFrame({"zip": ["130", "130", "141"], "d": ["flu", "cold", "flu"]}),
        tmp_path / "release.csv",
    )
    voters = _write(
        pd.DataFrame({"zip": ["130"] * 4 + ["141"] + ["152"] * 9}), tmp_path / "voters.csv"
    )
    out = tmp_path / "report.json"
    args = ["audit", release, "--qi", "zip", "--sensitive", "d", "--population", voters]
    assert main([*args, "--k-map", "3", "--json", str(out), "--quiet"]) == 1  # 141: 1 < 3
    report = json.loads(out.read_text(encoding="utf-8"))
    risk = report["risk"]
    assert (risk["k_map"]["k"], risk["k_map"]["passed"]) == (1, False)
    assert (risk["k_map"]["classes_below"], risk["k_map"]["records_below"]) == (1, 1)
    # delta-presence per population class: 130: 2/4, 141: 1/1, 152: 0/9
    assert (risk["delta_presence"]["min"], risk["delta_presence"]["max"]) == (0.0, 1.0)
    assert risk["linkage"]["unique_matches"] == 1  # the record of 141 matches one voter
    linkability = report["criteria"]["linkability"]
    assert linkability["passed"] is False and linkability["verdicts"] == {"k-map": False}
    assert not any("auxiliary table" in gap for gap in linkability["not_checked"])
    assert report["suppression"]["records"] == 1  # suppress 141 and k-map holds
    assert "linkage (population table): k-map k = 1 (policy: k-map >= 3)" in (
        capsys.readouterr().out
    )
    # generalized alike: zip to its first two digits on both sides matches 13*, 14*
    hierarchy = _write(
        pd.DataFrame([["130", "13"], ["141", "14"], ["152", "15"]]), tmp_path / "zip.csv"
    )
    hierarchy_arg = ["--hierarchy", f"zip={hierarchy}", "--generalize", "zip=1"]
    assert main([*args, *hierarchy_arg, "--k-map", "1", "--json", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["risk"]["k_map"]["k"] == 1
    assert main(["audit", release, "--qi", "zip", "--k-map", "2"]) == 2
    assert "give one" in capsys.readouterr().err


def test_a_policy_file_names_the_population_table_relative_to_itself(tmp_path: Path) -> None:
    folder = tmp_path / "policy"
    folder.mkdir()
    _write(pd.DataFrame({"zip": ["130", "141"], "d": ["flu", "cold"]}), folder / "r.csv")
    _write(pd.DataFrame({"zip": ["130", "130", "141", "141"]}), folder / "voters.csv")
    (folder / "policy.toml").write_text(
        'inputs = ["r.csv"]\nquasi_identifiers = ["zip"]\nsensitive = ["d"]\n'
        'population = "voters.csv"\nk_map = 2\njson = "out.json"\n',
        encoding="utf-8",
    )
    assert main(["audit", "--config", str(folder / "policy.toml"), "--quiet"]) == 0
    report = json.loads((folder / "out.json").read_text(encoding="utf-8"))
    assert (report["risk"]["k_map"]["k"], report["risk"]["k_map"]["passed"]) == (2, True)
    assert report["criteria"]["linkability"]["passed"] is True


@pytest.mark.parametrize("command", ["compose", "diff", "dp"])
def test_a_ledger_run_without_a_dataset_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Each file its own dataset (keyed by its hash) would check nothing: ``diff`` would
    record its two snapshots as two datasets."""
    ledger = tmp_path / "ledger.sqlite"
    a = _write(HOSPITAL_A, tmp_path / "a.csv")
    b = _write(HOSPITAL_B, tmp_path / "b.csv")
    roles = ["--qi", "zip,age", "--sensitive", "disease", "--ledger", str(ledger)]
    args = {
        "compose": ["compose", a, b, "--id", "pid", *roles, "--quiet"],
        "diff": ["diff", a, b, *roles, "--quiet"],
        "dp": _dp(_clinic(tmp_path), ledger, tmp_path / "out.csv"),
    }[command]
    unnamed = [x for x in args if x not in ("--dataset", "clinic")]
    assert main(unnamed) == 2
    err = capsys.readouterr().err
    [line] = err.splitlines()
    assert line.endswith("add --dataset NAME") and "Traceback" not in err
    assert not ledger.exists()  # refused before anything was recorded
    assert main([*unnamed, "--dataset", "city"]) == 0
    with Ledger.open(ledger) as opened:
        recorded = opened.releases()
    assert len(recorded) == (1 if command == "dp" else 2)
    assert {entry.dataset for entry in recorded} == {"city"}  # diff: one dataset, not two


@pytest.mark.parametrize(
    ("ids", "said"),
    [(["1", "", "3"], "is empty in 1 record"), (["1", " 2", "3"], "has spaces around 1 id")],
)
def test_compose_refuses_ids_that_would_join_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ids: list[str], said: str
) -> None:
    first = tmp_path / "first.csv"
    first.write_text("pid,zip,dx\n" + "".join(f"{i},130,flu\n" for i in ids))
    second = tmp_path / "second.csv"
    second.write_text("pid,zip,dx\n1,130,flu\n2,130,hiv\n3,130,flu\n")
    args = ["compose", str(first), str(second), "--id", "pid", "--qi", "zip"]
    assert main([*args, "--sensitive", "dx"]) == 2
    assert said in capsys.readouterr().err


def test_a_composition_that_joins_nothing_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.csv"
    first.write_text("pid,zip,dx\n01,130,flu\n02,130,hiv\n")
    second = tmp_path / "second.csv"
    second.write_text("pid,zip,dx\n001,130,flu\n002,130,hiv\n")
    args = ["compose", str(first), str(second), "--id", "pid", "--qi", "zip"]
    assert main([*args, "--sensitive", "dx"]) == 0
    out = capsys.readouterr().out
    assert "composed: 0 records" in out
    assert "ids are compared as text (01 and 001 differ)" in out
