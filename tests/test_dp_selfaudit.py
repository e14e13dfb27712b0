"""The companion audits itself (:mod:`anonaudit.dp.selfaudit`).

The self-audit samples :func:`anonaudit.dp.release` on worst-case neighbours and bounds
the ε (and δ) of its claim from below. Each test holds a claim the release really meets
to a bound at or below it, and shows the bound has the power to refute a false one: with
a planted fault in the release code (the noise drawn at half its scale; the stability
threshold chosen for three times the stated δ), which the release's own accounting does
not notice, the bound lands above the claim.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from anonaudit.classtable import ClassTable
from anonaudit.cli import main
from anonaudit.dp import (
    DPOptions,
    PrivacyGuarantee,
    PrivacyUnit,
    PublicDomain,
    SelfAudit,
    release,
    self_audit,
)
from anonaudit.dp.mechanisms import add_noise
from anonaudit.dp.selfaudit import MIN_SAMPLES, clopper_pearson
from anonaudit.errors import ParameterError
from anonaudit.report.schema import report_schema

pytest.importorskip("opendp")

#: The module, not the function of the same name that ``anonaudit.dp`` exports.
RELEASE = importlib.import_module("anonaudit.dp.release")
CLINIC = Path(__file__).resolve().parents[1] / "sample_data" / "clinic.csv"
DOMAIN = PublicDomain.of({"zip": ["a", "b"], "d": ["x", "y", "z"]})


def table() -> ClassTable:
    frame = pd.DataFrame({"zip": ["a", "a", "b"], "d": ["x", "y", "x"], "count": [3, 1, 4]})
    return ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])


def audit(options: DPOptions, samples: int = 20_000) -> SelfAudit:
    return self_audit(release(table(), options), options, samples=samples)


def halved_noise(values: Any, *, mechanism: Any, scale: float) -> Any:
    """The planted fault: the noise drawn at half the scale the release states."""
    return add_noise(values, mechanism=mechanism, scale=scale / 2)


def test_clopper_pearson_bounds_are_the_exact_binomial_tails() -> None:
    """At the lower bound, k or more hits have probability alpha; at the upper bound, k or
    fewer do (Clopper & Pearson 1934)."""
    hits, n, alpha = np.array([1, 7, 50, 99]), 100, 0.005
    low, high = clopper_pearson(hits, n, alpha)
    assert stats.binom.sf(hits - 1, n, low) == pytest.approx(alpha)
    assert stats.binom.cdf(hits, n, high) == pytest.approx(alpha)
    assert clopper_pearson(0, n, alpha)[0] == 0.0 and clopper_pearson(n, n, alpha)[1] == 1.0


@pytest.mark.parametrize(
    "options",
    [
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN),
        DPOptions(PrivacyGuarantee(0.5), domain=DOMAIN, unit=PrivacyUnit(neighbouring="replace")),
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, unit=PrivacyUnit(contributions=3)),
        DPOptions(PrivacyGuarantee(2.0), domain=DOMAIN, postprocess="unbiased"),
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, mechanism="laplace"),
        DPOptions(PrivacyGuarantee(1.0, 0.05), domain=DOMAIN, mechanism="gaussian"),
        DPOptions(PrivacyGuarantee(1.0, 1e-3), domain=DOMAIN, mechanism="discrete-gaussian"),
        DPOptions(PrivacyGuarantee(1.0, 0.05)),
        DPOptions(PrivacyGuarantee(1.0, 1e-6), unit=PrivacyUnit(neighbouring="replace")),
        DPOptions(PrivacyGuarantee(1.0, 1e-3), mechanism="discrete-gaussian"),
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, mechanism="randomized-response"),
    ],
    ids=[
        "discrete-laplace",
        "replace",
        "three-records",
        "unbiased",
        "laplace",
        "gaussian",
        "discrete-gaussian",
        "observed",
        "observed-replace",
        "observed-gaussian",
        "randomized-response",
    ],
)
def test_the_lower_bounds_stay_below_a_true_claim(options: DPOptions) -> None:
    """Every mechanism, relation and kind of domain: the bounds never exceed the claim."""
    found = audit(options, samples=4_000 if options.mechanism == "randomized-response" else 20_000)
    assert not found.refuted
    assert 0 <= found.epsilon_lower.value <= found.epsilon
    assert 0 <= found.delta_lower.value <= found.delta
    assert (found.epsilon, found.delta) == (options.epsilon, options.delta)
    assert found.epsilon_lower.trials == found.delta_lower.trials == found.samples // 2


def test_discrete_laplace_reaches_nine_tenths_of_its_claim() -> None:
    """The bound is tight: at ε = 1 with 100,000 releases of each dataset it reaches 0.9
    of the claim (0.97 in the benchmark), on the event the theory says is tight."""
    found = audit(DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN), samples=100_000)
    assert 0.9 <= found.share <= 1.0
    assert found.epsilon_lower.event.startswith("one person added to a cell: ")
    assert (found.epsilon_lower.trials, found.confidence) == (50_000, 0.99)


def test_the_delta_of_a_key_only_one_person_makes_is_seen() -> None:
    """Observed combinations at a large δ: a combination only the person makes is shown
    with the threshold's δ, which the δ bound approaches from below."""
    options = DPOptions(PrivacyGuarantee(1.0, 0.05))
    made = release(table(), options)
    found = self_audit(made, options, samples=40_000)
    shown = made.cost.delta  # the chance that a count of 1 is kept: exact for one record
    assert 0.8 * shown <= found.delta_lower.value <= shown <= found.delta
    assert found.delta_lower.event.startswith("a combination only the person makes")


@pytest.mark.parametrize(
    "options",
    [
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN),
        DPOptions(PrivacyGuarantee(0.3), domain=DOMAIN, unit=PrivacyUnit(neighbouring="replace")),
        DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, mechanism="laplace"),
        DPOptions(PrivacyGuarantee(1.0, 1e-6)),
    ],
    ids=["discrete-laplace", "replace", "laplace", "observed"],
)
def test_a_planted_fault_halving_the_noise_is_caught(
    options: DPOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release draws its noise at half the scale it states: its ε doubles while its
    accounting still states the claim, and the lower bound lands above the claim.

    80,000 releases a dataset: with 20,000, the replace case's bound (ε 0.3 claimed, 0.6
    drawn) fell below the claim once in 40 runs (0.18: the half that picks the event
    picked a poor one). With 80,000 it lay between 0.42 and 0.58 in 61 runs: above the
    claim every time, but not always 1.5 times it, as the other cases are (they reach at
    least 1.66 for a claim of 1)."""
    monkeypatch.setattr(RELEASE, "add_noise", halved_noise)
    made = release(table(), options)
    assert made.cost.epsilon == options.epsilon  # the accounting does not notice
    found = self_audit(made, options, samples=80_000)
    assert found.refuted
    margin = 1.0 if options.unit.neighbouring == "replace" else 1.5
    assert found.epsilon_lower.value > margin * options.epsilon


def test_a_planted_threshold_fault_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stability threshold chosen for three times the δ the release states, with the
    check of the cost against the claim skipped: a combination only one person makes is
    shown more often than δ, and the δ bound, at the stated ε, lands above it."""
    chosen = RELEASE.stability_threshold

    def lenient(mechanism: Any, *, delta: float, **keywords: Any) -> Any:
        return chosen(mechanism, delta=3 * delta, **keywords)

    monkeypatch.setattr(RELEASE, "stability_threshold", lenient)
    monkeypatch.setattr(RELEASE, "_spend", lambda *arguments: None)
    options = DPOptions(PrivacyGuarantee(1.0, 0.02))
    made = release(table(), options)
    assert made.delta == 0.02
    found = self_audit(made, options, samples=20_000)
    assert found.refuted
    assert found.delta_lower.value > options.delta
    assert found.delta_lower.event.startswith("a combination only the person makes")
    # shown more often than delta, and never without the person: no epsilon covers it
    assert found.epsilon_lower.value > options.epsilon and found.epsilon_lower.hits_other == 0


def test_bad_samples_and_confidence_are_refused() -> None:
    options = DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN)
    made = release(table(), options)
    with pytest.raises(ParameterError, match=f"at least {MIN_SAMPLES:,} releases"):
        self_audit(made, options, samples=10)
    with pytest.raises(ParameterError, match="strictly between 0 and 1"):
        self_audit(made, options, confidence=1.0)


# -- the command line --------------------------------------------------------------


def dp(tmp_path: Path, *extra: str) -> list[str]:
    args = ["dp", str(CLINIC), "--qi", "sex", "--sensitive", "diagnosis", "--epsilon", "1"]
    diagnoses = "bronchitis,flu,gastric ulcer,gastritis,pneumonia,stomach cancer"
    domain = ["--public-domain", "sex=F,M", "--public-domain", f"diagnosis={diagnoses}"]
    return [*args, *domain, "--quiet", *extra]


def test_the_flag_shows_the_bounds_in_the_summary_and_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dp.json"
    assert main(dp(tmp_path, "--delta", "1e-6", "--self-audit", "4000", "--json", str(out))) == 0
    printed = capsys.readouterr().out
    assert "Self-audit (the release code run on worst-case neighbours, 4,000 releases" in printed
    assert "(claimed 1), delta >= 0 at epsilon 1 (claimed 1e-06)" in printed
    assert "not refuted" in printed
    document = json.loads(out.read_text(encoding="utf-8"))
    found = document["self_audit"]
    assert found["claim"] == {"epsilon": 1.0, "delta": 1e-6}
    assert found["samples"] == 4_000 and found["confidence"] == 0.99
    assert 0 < found["epsilon_lower_bound"]["value"] <= 1 and not found["refuted"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = report_schema()
    target = {"$ref": "#/$defs/dp_report", "$defs": schema["$defs"]}
    jsonschema.validate(document, target)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document | {"self_audit": found | {"surprise": 1}}, target)


def test_without_the_flag_there_is_no_self_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dp.json"
    assert main(dp(tmp_path, "--json", str(out))) == 0
    assert "Self-audit" not in capsys.readouterr().out
    assert "self_audit" not in json.loads(out.read_text(encoding="utf-8"))


def test_the_help_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dp", "--help"]) == 0
    assert "--self-audit [N]" in capsys.readouterr().out


def test_the_flag_alone_draws_the_default_and_a_small_n_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from anonaudit.cli import dp as dp_cli

    asked: list[int] = []
    real = dp_cli.self_audit

    def counted(made: Any, options: DPOptions, *, samples: int) -> SelfAudit:
        asked.append(samples)
        return real(made, options, samples=MIN_SAMPLES)

    monkeypatch.setattr(dp_cli, "self_audit", counted)
    assert main(dp(tmp_path, "--self-audit")) == 0
    assert asked == [100_000]
    capsys.readouterr()
    assert main(dp(tmp_path, "--self-audit", "10")) == 2
    err = capsys.readouterr().err
    assert "--self-audit draws at least 1,000 releases of each dataset" in err
    assert "got 10" in err


def test_a_refuted_claim_is_warned_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RELEASE, "add_noise", halved_noise)
    assert main(dp(tmp_path, "--self-audit", "20000")) == 0
    out, err = capsys.readouterr()
    assert "REFUTED: the release is less private than it states" in out
    assert "warning: the self-audit refutes the release's claim: sampling the release" in err
