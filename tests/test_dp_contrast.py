"""The two attackers against the syntactic and the DP release (anonaudit.dp.attacker and
AttackerContrast): hand-computed posteriors, brute-force likelihoods, the bound as a
property, and the wording of the contrast in the HTML, text and JSON reports."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import dp
from anonaudit.classtable import ClassTable
from anonaudit.dp.attacker import (
    _log_rr_pmf,
    disclosure,
    equal_gain,
    equivalent_epsilon,
    informed_dp,
    informed_syntactic,
    pml_over_priors,
    uninformed_syntactic,
)
from anonaudit.dp.contrast import attacker_contrast, posterior_bound
from anonaudit.report.json import dp_to_dict
from anonaudit.report.text import dp_summary

pytest.importorskip("opendp")

E = math.e
Q = math.exp(-1)  # discrete Laplace with b = 1


def two_classes() -> ClassTable:
    """Class a: one flu, one cold; class b: two flu. p(flu) = 3/4."""
    frame = pd.DataFrame({"zip": ["a", "a", "b"], "d": ["flu", "cold", "flu"], "count": [1, 1, 2]})
    return ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])


DOMAIN = dp.PublicDomain.of({"zip": ["a", "b"], "d": ["flu", "cold"]})


def k112_table() -> ClassTable:
    """Class a: 56 flu, 56 cold; class b: 100 flu, 12 cold. k = 112, p(flu) = 156/224."""
    frame = pd.DataFrame(
        {"zip": ["a", "a", "b", "b"], "d": ["flu", "cold"] * 2, "count": [56, 56, 100, 12]}
    )
    return ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])


def fixed(released: list[int]) -> dp.Release:
    """A pure ε = 1 discrete Laplace release (b = 1) of two_classes with chosen outputs."""
    result = dp.release(two_classes(), dp.DPOptions(dp.PrivacyGuarantee(1.0), domain=DOMAIN))
    return replace(result, released_counts=np.array(released))


def test_the_informed_posterior_by_hand() -> None:
    # cells (a, flu), (a, cold), (b, flu), (b, cold): true 1, 1, 2, 0; released 2, 0, 2, 1
    result = fixed([2, 0, 2, 1])
    assert result.noise_scale == 1.0 and result.value_epsilon == 2.0
    # target (a, flu): flu keeps (1, 1): P(Z=1) P(Z<=-1); cold gives (0, 2): P(Z=2) P(Z<=-2).
    # P(Z=k) ∝ q^|k|, P(Z<=-k) = q^k / (1+q): the ratio is q^2 / q^4 = e^2.
    a_flu = 0.75 * E**2 / (0.75 * E**2 + 0.25)
    # target (a, cold): cold keeps (1, 1); flu gives (2, 0): P(Z=0) P(Z<=0), ratio q^2
    a_cold = 0.25 * Q**2 / (0.25 * Q**2 + 0.75)
    # target (b, flu) x2: (2, 0) gives P(Z=0) P(Z=1), (1, 1) gives P(Z=1) P(Z=0): the prior
    s = informed_dp(result, "d", domain=DOMAIN)
    assert s.records == 4
    assert s.max == pytest.approx(a_flu, rel=1e-12)
    assert s.median == pytest.approx(0.75, rel=1e-12)
    assert s.p90 == pytest.approx(a_flu, rel=1e-12)
    assert s.share_above_half == 0.75
    # the discrete Laplace reaches the bound at the replace ε = 2, never beyond it
    assert a_flu == pytest.approx(float(posterior_bound(0.75, 2.0)), rel=1e-12)
    assert s.share_above_bound == 0.0
    assert min(a_cold, 0.75, a_flu) == pytest.approx(1 / (1 + 3 * E**2), rel=1e-12)


def test_a_clamped_zero_is_a_cdf() -> None:
    # Discrete Gaussian noise: a released 0 means noisy <= 0 under clamp, exactly 0 unbiased
    result = dp.release(
        two_classes(),
        dp.DPOptions(dp.PrivacyGuarantee(1.0, 1e-3), domain=DOMAIN, mechanism="discrete-gaussian"),
    )
    attacked = replace(result, released_counts=np.array([0, 0, 3, 0]))
    noise = result.noise
    assert noise is not None
    z, p = noise.support()
    pmf = dict(zip(z.tolist(), p.tolist(), strict=True))

    def clamp(y: int, x: int) -> float:
        return sum(v for k, v in pmf.items() if x + k <= 0) if y == 0 else pmf[y - x]

    def exact(y: int, x: int) -> float:
        return pmf[y - x]

    def bayes(prior: float, keep: float, switch: float) -> float:
        return prior * keep / (prior * keep + (1 - prior) * switch)

    for postprocess, f in (("clamp", clamp), ("unbiased", exact)):
        # class a released (0, 0): the target keeps (1, 1) or moves to (0, 2) / (2, 0)
        a_flu = bayes(0.75, f(0, 1) * f(0, 1), f(0, 0) * f(0, 2))
        a_cold = bayes(0.25, f(0, 1) * f(0, 1), f(0, 2) * f(0, 0))
        # class b released (3, 0): (2, 0) against (1, 1)
        b_flu = bayes(0.75, f(3, 2) * f(0, 0), f(3, 1) * f(0, 1))
        s = informed_dp(attacked, "d", domain=DOMAIN, postprocess=postprocess)  # type: ignore[arg-type]
        assert s.max == pytest.approx(max(a_flu, a_cold, b_flu), rel=1e-9)
        assert s.median == pytest.approx(sorted([a_flu, a_cold, b_flu, b_flu])[1], rel=1e-9)
    assert clamp(0, 1) != exact(0, 1)


def test_the_syntactic_release_by_hand() -> None:
    table = two_classes()
    uninformed = uninformed_syntactic(table, "d", epsilon=2.0)
    informed = informed_syntactic(table, "d", epsilon=2.0)
    assert (uninformed.median, uninformed.max, uninformed.share_above_half) == (0.5, 1.0, 0.5)
    assert uninformed.share_above_bound == 0.5  # class b: 100% from 75%; bound at ε = 2: 95.7%
    assert informed.records == 4
    assert (informed.median, informed.p99, informed.share_above_half) == (1.0, 1.0, 1.0)
    assert informed.share_above_bound == 1.0  # every record, even the 50% of class a


def brute_force_observed(result: dp.Release) -> list[tuple[float, int]]:
    """Per original cell: posterior on the true value from the whole likelihood product."""
    table = result.original
    noise = result.noise
    assert noise is not None and result.threshold is not None and result.keep_below is not None
    z, p = noise.support()
    pmf = dict(zip(z.tolist(), p.tolist(), strict=True))
    tau, q = result.threshold, result.keep_below

    def f(y: int, x: int) -> float:  # kept from tau, and at tau - 1 with probability q
        if x == 0:
            return float(y == 0)
        if y == 0:
            below = sum(pr for k, pr in pmf.items() if x + k < tau - 1)
            return below + (1 - q) * pmf.get(tau - 1 - x, 0.0)
        return (q if y == tau - 1 else 1.0) * pmf.get(y - x, 0.0)

    frame = table.keys.to_pandas()
    values = sorted(set(frame["d"]))
    prior = {v: table.counts[frame["d"] == v].sum() / table.rows for v in values}
    out = []
    for i, (zip_, s) in enumerate(zip(frame["zip"], frame["d"], strict=True)):
        rows = frame.index[frame["zip"] == zip_]
        true = {frame["d"][j]: int(table.counts[j]) for j in rows}
        released = {frame["d"][j]: int(result.released_counts[j]) for j in rows}
        weight = {}
        for v in values:
            counts = dict(true)
            counts[s] -= 1
            counts[v] = counts.get(v, 0) + 1
            weight[v] = prior[v] * math.prod(f(released.get(c, 0), n) for c, n in counts.items())
        out.append((weight[s] / sum(weight.values()), int(table.counts[i])))
    return out


def test_thresholded_release_matches_brute_force() -> None:
    frame = pd.DataFrame(
        {
            "zip": ["a", "a", "a", "b", "b", "c"],
            "d": ["flu", "cold", "hiv", "flu", "cold", "flu"],
            "count": [3, 1, 2, 4, 1, 1],
        }
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])
    result = dp.release(table, dp.DPOptions(dp.PrivacyGuarantee(1.0, 0.05)))
    assert result.domain == "observed" and result.threshold is not None
    tau = result.threshold
    assert 0 < (result.keep_below or 0) < 1
    for released in (
        [tau + 1, 0, tau, 0, tau, 0],
        [0, 0, 0, tau + 2, 0, tau],
        [tau - 1, 0, tau, 0, tau - 1, 0],  # two kept by the coin one below the threshold
    ):
        attacked = replace(result, released_counts=np.array(released))
        expected = brute_force_observed(attacked)
        order = np.argsort([q for q, _ in expected], kind="stable")
        s = informed_dp(attacked, "d", domain=None)
        assert s.max == pytest.approx(max(q for q, _ in expected), rel=1e-9)
        weights = np.array([w for _, w in expected])[order]
        values = np.array([q for q, _ in expected])[order]
        median = values[np.searchsorted(np.cumsum(weights), 0.5 * weights.sum())]
        assert s.median == pytest.approx(median, rel=1e-9)
    # a singleton cell released: nobody else could have made it, the posterior is 1
    singled = replace(result, released_counts=np.array([0, 0, 0, 0, 0, tau]))
    assert informed_dp(singled, "d", domain=None).max == 1.0


def test_randomized_response_pmf_against_enumeration() -> None:
    k, keep = 3, 0.6
    other = (1 - keep) / (k - 1)
    lam = keep - other
    others = np.array([2, 1, 0])
    values = [0, 0, 1]
    exact: dict[tuple[int, ...], float] = {}
    for reports in itertools.product(range(k), repeat=len(values)):
        p = math.prod(keep if r == v else other for r, v in zip(reports, values, strict=True))
        key = tuple(np.bincount(reports, minlength=k).tolist())
        exact[key] = exact.get(key, 0.0) + p
    for key, p in exact.items():
        assert math.exp(_log_rr_pmf(others, np.array(key), lam, k)) == pytest.approx(p, rel=1e-12)
    assert _log_rr_pmf(others, np.array([4, 0, 0]), lam, k) == -math.inf


def test_coin_flip_randomized_response() -> None:
    # ε = ln 3 over two values: keep 75%; one class of two records, flu and cold
    frame = pd.DataFrame({"zip": ["a", "a"], "d": ["flu", "cold"], "count": [1, 1]})
    table = ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])
    domain = dp.PublicDomain.of({"d": ["flu", "cold"]})
    result = dp.release(
        table,
        dp.DPOptions(
            dp.PrivacyGuarantee(math.log(3)), mechanism="randomized-response", domain=domain
        ),
    )
    assert result.noise_scale == pytest.approx(0.25)
    # reports (2 flu, 0 cold): the target (flu) and the other (cold) hypotheses
    # flu: others = cold; P(reports) = 3/4 (target says flu) * 1/4 (cold says flu)
    # cold: others = flu; two cold records: 1/4 * 1/4. Prior 1/2 each.
    attacked = replace(result, released_counts=np.array([2, 0]))
    s = informed_dp(attacked, "d", domain=domain)
    flu = (3 / 16) / (3 / 16 + 1 / 16)  # the flu record: 75%, the bound at ε = ln 3
    cold = (1 / 16) / (1 / 16 + 3 / 16)
    assert s.max == pytest.approx(flu) and flu == pytest.approx(
        float(posterior_bound(0.5, math.log(3)))
    )
    assert s.median == pytest.approx(cold)
    assert s.share_above_bound == 0.0


@st.composite
def small_tables(draw: st.DrawFn) -> tuple[ClassTable, list[int]]:
    zips, values = ["a", "b", "c"], ["x", "y", "z"]
    counts = draw(st.lists(st.integers(0, 4), min_size=9, max_size=9).filter(lambda c: sum(c) > 0))
    frame = pd.DataFrame(
        {
            "zip": [z for z in zips for _ in values],
            "d": values * 3,
            "count": counts,
        }
    )
    table = ClassTable.from_frame(frame, quasi_identifiers=["zip"], sensitive=["d"])
    released = draw(st.lists(st.integers(0, 8), min_size=9, max_size=9))
    return table, released


PROPERTY_DOMAIN = dp.PublicDomain.of({"zip": ["a", "b", "c"], "d": ["x", "y", "z"]})


@settings(max_examples=40, deadline=None)
@given(case=small_tables(), mechanism=st.sampled_from(["discrete-laplace", "laplace"]))
def test_pure_dp_never_exceeds_the_bound(
    case: tuple[ClassTable, list[int]], mechanism: str
) -> None:
    table, released = case
    options = dp.DPOptions(dp.PrivacyGuarantee(0.7), domain=PROPERTY_DOMAIN, mechanism=mechanism)  # type: ignore[arg-type]
    result = dp.release(table, options)
    attacked = replace(result, released_counts=np.array(released))
    for postprocess in ("clamp", "unbiased"):
        s = informed_dp(attacked, "d", domain=PROPERTY_DOMAIN, postprocess=postprocess)  # type: ignore[arg-type]
        assert s.share_above_bound == 0.0
        assert s.records == table.rows
        prior = table.sensitive_counts("d").prior().max()
        assert s.max <= float(posterior_bound(prior, result.value_epsilon)) * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(
    posterior=st.floats(0.001, 1.0),
    prior=st.floats(0.001, 0.999),
)
def test_equivalent_epsilon_is_infinite_iff_certain(posterior: float, prior: float) -> None:
    eq = float(equivalent_epsilon(posterior, prior))
    assert math.isinf(eq) == (posterior == 1.0)
    if not math.isinf(eq):  # and it inverts the bound
        assert float(posterior_bound(prior, eq)) == pytest.approx(posterior, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(case=small_tables(), factor=st.floats(1.0, 10.0))
def test_pml_over_the_family_is_at_least_at_the_table_prior(
    case: tuple[ClassTable, list[int]], factor: float
) -> None:
    table, _ = case
    at_table = pml_over_priors(table, "d", factor=1.0)
    family = pml_over_priors(table, "d", factor=factor)
    assert np.all(family >= at_table - 1e-12)
    counts = table.sensitive_counts("d")
    expected = counts.per_class_max(np.log(counts.posterior() / counts.prior()[counts.codes]))
    np.testing.assert_allclose(at_table, expected, rtol=1e-12, atol=1e-12)
    # brute force over the vertices of the family: weights 1 or factor on each value
    channel = np.zeros((counts.n_classes, len(counts.values)))
    channel[counts.class_ids, counts.codes] = counts.counts / counts.totals[counts.codes]
    prior = counts.prior()
    best = np.full(counts.n_classes, -np.inf)
    for w in itertools.product([1.0, factor], repeat=len(prior)):
        q = np.array(w) * prior
        q /= q.sum()
        best = np.maximum(best, np.log(channel.max(axis=1) / (channel @ q)))
    np.testing.assert_allclose(family, best, rtol=1e-9, atol=1e-12)


def test_disclosure_theorem() -> None:
    prior = np.array([0.7, 0.2, 0.1])
    d = disclosure(("flu", "cold", "hiv"), prior, 0.1)
    assert d.epsilon_star == pytest.approx(-math.log(0.9))
    assert d.discloses_nothing and d.features == ()
    d = disclosure(("flu", "cold", "hiv"), prior, 0.25)  # -ln 0.8 = 0.223: "cold?" too
    assert not d.discloses_nothing and d.features == ("cold", "hiv")
    d = disclosure(("flu", "cold", "hiv"), prior, math.log(2))  # every binary feature
    assert d.features == ("flu", "cold", "hiv")


def test_equal_gain() -> None:
    result = fixed([1, 1, 2, 0])
    gain = equal_gain(result, math.log(3))
    assert gain is not None
    assert gain.noise_scale == pytest.approx(2 / math.log(3))  # replace L1 = 2
    assert gain.within == dp.NoiseDistribution("discrete-laplace", 2 / math.log(3)).within(0.95)
    assert equal_gain(result, math.inf) is None
    gaussian = dp.release(
        two_classes(),
        dp.DPOptions(dp.PrivacyGuarantee(1.0, 1e-6), domain=DOMAIN, mechanism="gaussian"),
    )
    gain = equal_gain(gaussian, 3.0)
    assert gain is not None
    assert gaussian.value_epsilon != 3.0
    assert dp.gaussian_epsilon(1e-6, mu=math.sqrt(2) / gain.noise_scale) == pytest.approx(
        3.0, rel=1e-6
    )


def test_attacker_contrast_of_a_k_anonymous_table() -> None:
    # k = 112: the syntactic release passes k-anonymity and still discloses everything
    released = dp.release(k112_table(), dp.DPOptions(dp.PrivacyGuarantee(1.0), domain=DOMAIN))
    c = attacker_contrast(released, "d", domain=DOMAIN)
    assert (c.epsilon, c.delta, c.neighbouring) == (2.0, 0.0, "add-remove")
    assert c.informed.share_above_half == 1.0 and c.informed.median == 1.0
    assert c.uninformed.max == pytest.approx(100 / 112)
    assert c.dp_informed.share_above_bound == 0.0
    p_flu = 156 / 224
    eq_b = math.log((100 / 112) * (1 - p_flu) / (p_flu * (12 / 112)))
    assert c.max_equivalent_epsilon == pytest.approx(eq_b)
    assert c.infinite_classes == 0
    assert c.equal_gain is not None and c.equal_gain.noise_scale == pytest.approx(2 / eq_b)
    assert c.syntactic_disclosure.epsilon_star == pytest.approx(-math.log(1 - 68 / 224))
    assert c.dp_disclosure.leakage == 2.0 and c.dp_disclosure.features == ("cold", "flu")


# -- the reports ----------------------------------------------------------------------


def k112() -> tuple[anonaudit.AuditReport, dp.DPReport]:
    """k = 112 and no group above the ε-DP bound for the attacker who knows the QIs."""
    table = k112_table()
    report = dp.companion(table, dp.DPOptions(dp.PrivacyGuarantee(1.0), domain=DOMAIN))
    audit = anonaudit.audit_table(table, anonaudit.AuditOptions(policy=anonaudit.Policy(k=2)))
    return replace(audit, dp=report), report


FLATTERING = (
    "No group lets an attacker believe more than",
    "more than ε-DP would allow",
    "chance the guarantee",
    "the guarantee may fail",
    "except with a probability",
    "exact Gaussian",
)


def test_no_sentence_makes_k_anonymity_look_stronger() -> None:
    audit, report = k112()
    assert report.measures.original.k == 112 and report.contrast["d"].classes_above_bound == 0
    page = audit.to_html()
    section = page.split('<section id="dp"')[1].split("</section>")[0]
    text = dp_summary(report)
    for claim in FLATTERING:
        assert claim not in page and claim not in text
    assert (
        "Someone who also knows every other record, the attacker differential privacy is "
        "stated against, subtracts them from the group and is left with the person&#39;s d: "
        "after the syntactic release the median posterior on the true value is 100%, above "
        "50% for 100% of records, whatever k, l or t." in section
    )
    assert (
        "To learn the d of a person who is in the data (a change of that person&#39;s value: "
        "two add-remove steps) the DP release gives ε = 2: nobody&#39;s d can be believed "
        "above 94.4%." in section
    )
    assert "0% of records are above the bound" in section
    # the largest gain: class b, 89.3% from 69.6%: ε = ln[π(1-p)/(p(1-π))] = 1.29
    eq = math.log((100 / 112) * (68 / 224) / ((156 / 224) * (12 / 112)))
    b = 2 / eq
    within = dp.NoiseDistribution("discrete-laplace", b).within(0.95)
    assert "For the attacker differential privacy is stated against" in section
    assert "the exact table amounts to ε = ∞" in section
    assert (
        "For the attacker who knows only the quasi-identifiers, the syntactic release "
        f"amounts to ε = {eq:.3g}" in section
    )
    assert f"add noise of scale {b:.3g}, each count within ±{within} with 95% probability" in (
        section
    )
    assert "epsilon 2: no posterior above 0.9443" in text
    assert "(a change of that person's value, two add-remove steps)" in text
    assert "median posterior 1, 100% of records above 1/2" in text


def test_accounting_and_loss_in_words() -> None:
    audit, report = k112()
    section = audit.to_html().split('<section id="dp"')[1].split("</section>")[0]
    assert "(ε, δ)-DP means that the probability of any outcome grows at most by a factor" in (
        section
    )
    # learning a present person's value: replace, L1 2, b = 1
    assert (
        "ε to learn the value of a person who is in the data (a change of that person&#39;s "
        "value: two add-remove steps)</th><td>2</td>" in section
    )
    # Rényi DP of pure ε = 1: min(ε, alpha ε² / 2)
    assert "α 1.25: 0.625, α 1.5: 0.75, α 2: 1, α 3: 1" in section
    # KL of discrete Laplace b = 1 on one add-remove step: reaches ε tanh(ε/2) = 0.462
    assert "mutual-information DP figure</th><td>0.462 nats (at most ε·tanh(ε/2) = 0.462" in (
        section
    )
    assert report.privacy_loss.tail(1.0) == 0.0
    assert "(probabilistic DP), P[L &gt; ε]</th><td>0</td>" in section
    assert "ε = ln 3 ≈ 1.1. From a prior of 50%" in section  # the coin-flip example


def test_json_contrast() -> None:
    _, report = k112()
    c = dp_to_dict(report)["internal"]["contrast"]["d"]
    assert c["epsilon"] == 2.0 and c["neighbouring"] == "add-remove" and c["delta"] == 0.0
    p = 156 / 224
    assert c["dp_posterior_bound"] == pytest.approx(p * E**2 / (1 + p * (E**2 - 1)))
    attackers = c["attackers"]
    assert attackers["syntactic_informed"]["median"] == 1.0
    assert attackers["syntactic_informed"]["share_above_half"] == 1.0
    assert attackers["syntactic_uninformed"]["max"] == pytest.approx(100 / 112)
    assert attackers["dp_informed"]["share_above_bound"] == 0.0
    assert attackers["dp_informed"]["records"] == 224
    eq = c["equivalent_epsilon"]
    assert eq["max"] == pytest.approx(math.log((100 / 112) * (1 - p) / (p * 12 / 112)))
    assert eq["infinite_classes"] == 0
    assert eq["equal_gain"]["noise_scale"] == pytest.approx(2 / eq["max"])
    pml = c["pml"]
    assert pml["syntactic"]["epsilon_star"] == pytest.approx(-math.log(1 - 68 / 224))
    assert pml["syntactic"]["leakage"] == pytest.approx(math.log(0.5 / (68 / 224)))  # a, cold
    assert pml["dp"]["leakage"] == 2.0 and pml["dp"]["features_maybe_disclosed"] == ["cold", "flu"]
    assert pml["max_over_priors"] >= pml["syntactic"]["leakage"]
