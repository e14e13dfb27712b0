"""The differential-privacy section of the HTML report: shown only with a DP companion,
its facts in words, the contrast per SA, the prior-posterior and privacy-profile charts
with their alt text, escaping and redaction. The page in a browser: test_html_browser.py."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape
from test_html import ADULT, ADULT_POLICY, ADULT_QI, HOSTILE, SCRIPT, hostile_frame

import anonaudit
from anonaudit import dp
from anonaudit.cli import main

pytest.importorskip("opendp")

IMAGE_SA = '"><img src=x onerror="window.pwned = 3">'


@pytest.fixture(scope="module")
def adult() -> anonaudit.AuditReport:
    occupation = anonaudit.HierarchicalDistance(ADULT / "adult_hierarchy_occupation.csv")
    return anonaudit.audit(
        ADULT / "adult.csv",
        anonaudit.Roles(ADULT_QI, ["salary-class", "occupation"]),
        anonaudit.AuditOptions(policy=ADULT_POLICY, distances={"occupation": occupation}),
    )


@pytest.fixture(scope="module")
def adult_dp(adult: anonaudit.AuditReport) -> anonaudit.AuditReport:
    options = dp.DPOptions(dp.PrivacyGuarantee(1.0, 1e-6))
    return replace(adult, dp=dp.companion(adult.table, options))


@pytest.fixture(scope="module")
def page(adult_dp: anonaudit.AuditReport) -> str:
    return adult_dp.to_html()


def dp_section(page: str) -> str:
    return page.split('<section id="dp"')[1].split("</section>")[0]


def svgs(html: str) -> list[str]:
    return re.findall(r"<svg [^>]*>.*?</svg>", html, flags=re.S)


def test_the_section_appears_only_with_a_dp_companion(
    adult: anonaudit.AuditReport, page: str
) -> None:
    plain = adult.to_html()
    assert '<section id="dp"' not in plain and 'href="#dp"' not in plain
    assert "Differential privacy" not in plain
    assert '<section id="dp"' in page
    assert '<li><a href="#dp">Differential privacy</a></li>' in page  # table of contents
    # after the measures, before the explanations
    assert page.index('<section id="risk"') < page.index('<section id="dp"')
    assert page.index('<section id="dp"') < page.index('<section id="about"')
    for anchor in ("dp-release", "dp-accounting", "dp-contrast", "dp-utility", "dp-loss"):
        assert f'id="{anchor}"' in page
    # the sections before it are unchanged
    before = page.split("<main>")[1].split('<section id="dp"')[0]
    assert before == plain.split("<main>")[1].split('<section id="about"')[0]


def test_the_release_in_plain_words(adult_dp: anonaudit.AuditReport, page: str) -> None:
    section = dp_section(page)
    assert adult_dp.dp is not None
    r = adult_dp.dp.release
    assert "discrete Laplace noise (two-sided geometric) on each count" in section
    assert '<th scope="row">ε (epsilon), the privacy budget</th><td>1</td>' in section
    assert "<td>10⁻⁶</td>" in section  # delta
    assert "noise scale b</th><td>1 (standard deviation 1.36)</td>" in section
    assert "<td>add-remove</td>" in section
    assert "whether someone is in the data at all is protected" in section
    assert "Combinations thresholded" in section
    assert f"only when its noisy count reached {r.threshold}" in section
    assert "This is why the release is (ε, δ)-DP and not pure ε-DP" in section
    assert (
        "grows at most by a factor e^ε = 2.72 (ε = 1), plus an additive δ = 10⁻⁶ when one "
        "record is added or removed" in section
    )
    assert "chance the guarantee" not in section and "except with a probability" not in section
    assert "δ (delta), added to the e^ε bound on the probability of any outcome" in section
    assert "For the privacy office only." in section
    assert "total ε at δ = 10⁻⁶</th><td>1</td>" in section
    assert "δ spent on the threshold" in section
    assert "ρ, zero-concentrated" not in section  # no Gaussian noise: no zCDP figure


def test_the_contrast_per_sensitive_attribute(page: str) -> None:
    section = dp_section(page)
    assert (
        "Someone who knows a person&#39;s quasi-identifiers (sex, age, race, marital-status) "
        "can be 100% sure of their salary-class in 1,114 groups (5,648 records)." in section
    )
    # learning a present person's value: ε = 2 (two add-remove steps); prior 24.9% of
    # >50K, bound e² p / (1 + p (e² - 1)) = 71%; largest prior 75.1%: 95.7%
    assert (
        "To learn the salary-class of a person who is in the data (a change of that "
        "person&#39;s value: two add-remove steps) the DP release gives ε = 2" in section
    )
    assert "raises a 24.9% prior to at most 71%" in section
    # observed keys: the bound fails when a key of the changed values shows (the keys' δ)
    assert (
        "nobody&#39;s salary-class can be believed above 95.7%, except with probability " in section
    )
    assert "“Armed-Forces” goes from 0.0298% of the whole table to 33.3% of the group" in section
    assert "a leakage of 7.02 nats, where an ε = 2 release allows at most 2 nats" in section
    table = section.split("<caption>What an attacker believes")[1].split("</table>")[0]
    assert '<a href="#dp-salary-class">salary-class</a>' in table
    assert '<a href="#dp-occupation">occupation</a>' in table
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</th>(.*?)</tr>", table)
    cells = {label: re.findall(r"<td class=\"num\">(.*?)</td>", rest) for label, rest in rows}
    quasi = "knows the quasi-identifiers, syntactic release: median / largest posterior"
    assert cells[quasi] == ["80% / 100%", "15.8% / 100%"]
    assert cells["groups where it is 100%"] == ["1,114 (5,648 records)", "581 (623 records)"]
    informed = "knows every other record, syntactic release: median posterior, records above 50%"
    assert cells[informed] == ["100%, 100%", "100%, 100%"]
    assert cells["largest leakage, ln(posterior / prior), in nats"] == ["1.39", "7.02"]
    assert cells["largest posterior an ε-DP release allows"] == ["95.7%", "53.3%"]
    breaks = cells["chance an output breaks that bound (its privacy loss exceeds ε)"]
    assert breaks == ["2 × 10⁻⁶"] * 2  # the keys' δ of the value pair (l0 = 2): Laplace noise
    assert cells["ε to learn a present person&#39;s value"] == ["2", "2"]
    assert cells["neighbouring relation of the stated ε"] == ["add-remove", "add-remove"]
    assert cells["DP release: records above 50%, records above the bound"][1] == "0%, 0%"
    qi_only = "syntactic release as an ε, attacker who knows the QIs (largest over groups)"
    assert cells[qi_only] == ["∞", "∞"]
    assert cells["syntactic release as an ε, attacker who knows every other record"] == ["∞"] * 2
    assert (
        cells["DP noise at equal attacker gain (95% error bound)"]
        == ["none: no DP release allows certainty"] * 2
    )
    # ε* = ln(1 / (1 - p_min)): p(>50K) = 24.9%, p(Armed-Forces) = 0.0298%
    assert cells["ε* = ln(1 / (1 − p_min)): leakage below it discloses nothing"] == [
        "0.286",
        "0.000298",
    ]


def test_utility_and_the_measures_a_reader_computes(
    adult_dp: anonaudit.AuditReport, page: str
) -> None:
    assert adult_dp.dp is not None
    u, released = adult_dp.dp.utility, adult_dp.dp.measures.released
    assert released is not None
    section = dp_section(page)
    assert "noise the mechanism adds to one count</th><td>within ±3 with 95% probability" in section
    assert f"groups hidden (records in the data, none released)</th><td>{u.classes_hidden:,}" in (
        section
    )
    assert "groups fabricated (released, none in the data)</th><td>0 (impossible" in section
    table = section.split("<caption>The measures of the data beside")[1].split("</table>")[0]
    assert (
        f'<tr><th scope="row">k (smallest group)</th><td class="num">1</td>'
        f'<td class="num">{released.k:,}</td></tr>' in table
    )
    assert "t of occupation (equal ground distance)" in table


def test_charts_carry_alt_text(page: str) -> None:
    charts = svgs(dp_section(page))
    assert len(charts) == 2 + 1  # prior-posterior per SA; privacy profile
    assert len(svgs(page)) == 6 + 3
    ids = ["dp-salary-class-posterior", "dp-occupation-posterior", "dp-profile"]
    for chart, chart_id in zip(charts, ids, strict=True):
        assert 'role="img"' in chart
        assert f'aria-labelledby="{chart_id}-title {chart_id}-desc"' in chart
        assert f'<title id="{chart_id}-title">' in chart
        assert f'<desc id="{chart_id}-desc">' in chart
    posterior = charts[0]
    desc = re.search(r"<desc [^>]*>(.*?)</desc>", posterior, re.S)
    assert desc
    assert "The curve is the most an ε = 2 release allows: a prior of 1% to at most 6.95%" in (
        desc.group(1)
    )
    assert "1,690 groups" in desc.group(1) and "lie above the curve" in desc.group(1)
    assert "&gt;50K: 24.9% to 100% in 78 groups (92 records)" in desc.group(1)
    assert posterior.count("<circle") > 20  # the scatter (points at one spot drawn once)
    assert posterior.count("<path") == 2  # the diagonal and the curve
    assert "stroke-dasharray" in posterior  # the dashed diagonal
    assert "ε′ 0: δ 0.462" in charts[2] and "this release: ε = 1" in charts[2]


def test_no_profile_chart_without_points(adult_dp: anonaudit.AuditReport) -> None:
    assert adult_dp.dp is not None
    page = replace(adult_dp, dp=replace(adult_dp.dp, profile=())).to_html()
    assert "dp-profile" not in page
    assert len(svgs(dp_section(page))) == 2


def test_the_page_stays_self_contained_and_small(page: str) -> None:
    assert len(page.encode("utf-8")) < 1_000_000
    assert not re.search(r'(src|href|action)="(?!#|data:text/csv;)', page)
    for forbidden in ("<link", "<script", "<iframe", "@import", "url(", "http://", "https://"):
        assert forbidden not in page
    levels = [int(level) for level in re.findall(r"<h([1-6])[ >]", page)]
    assert all(b <= a + 1 for a, b in itertools.pairwise(levels))
    assert "<th>" not in page


# -- other releases -------------------------------------------------------------------


def small_table(sensitive: str = "diagnosis") -> anonaudit.ClassTable:
    frame = pd.DataFrame(
        {
            "zip": ["a", "a", "a", "b", "b", "b"],
            sensitive: ["flu", "cold", "flu", "flu", "flu", "flu"],
        }
    )
    return anonaudit.load(frame, anonaudit.Roles(["zip"], [sensitive]))


def with_dp(table: anonaudit.ClassTable, options: dp.DPOptions) -> str:
    report = anonaudit.audit_table(table, anonaudit.AuditOptions(policy=anonaudit.Policy(k=2)))
    return replace(report, dp=dp.companion(table, options)).to_html()


def test_a_public_domain_release_says_pure_epsilon() -> None:
    domain = dp.PublicDomain.of({"zip": ["a", "b", "c"], "diagnosis": ["flu", "cold"]})
    section = dp_section(
        with_dp(small_table(), dp.DPOptions(dp.PrivacyGuarantee(0.5), domain=domain))
    )
    assert "Combinations from a public domain" in section
    assert "(6 cells), empty ones included" in section
    assert "0 (pure ε-DP)" in section and "total ε (pure ε-DP)</th><td>0.5</td>" in section
    assert "except with a probability" not in section
    assert "empty cells can come out positive" in section
    assert "100% sure of their diagnosis in 1 group (3 records)" in section


def test_gaussian_noise_states_rho_and_the_exact_figures() -> None:
    domain = dp.PublicDomain.of({"zip": ["a", "b"], "diagnosis": ["flu", "cold"]})
    section = dp_section(
        with_dp(
            small_table(),
            dp.DPOptions(
                dp.PrivacyGuarantee(1.0, 1e-6), mechanism="discrete-gaussian", domain=domain
            ),
        )
    )
    assert "discrete Gaussian noise on each count" in section
    assert "noise scale σ" in section
    assert "ρ, zero-concentrated DP (zCDP) of the Gaussian noise" in section
    assert "ε at δ by the continuous Gaussian curve" in section
    assert "exact Gaussian" not in section
    assert "largest privacy loss</th><td>unbounded (Gaussian noise: see δ)" in section
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        assert "privacy-loss distributions" not in section
    else:
        assert "ε at δ by privacy-loss distributions (dp-accounting)" in section


def test_randomized_response_and_withheld_records() -> None:
    domain = dp.PublicDomain.of({"diagnosis": ["flu", "cold", "fever"]})
    section = dp_section(
        with_dp(
            small_table(),
            dp.DPOptions(dp.PrivacyGuarantee(1.0), mechanism="randomized-response", domain=domain),
        )
    )
    assert "randomized response on each record&#39;s value (local model)" in section
    assert "Randomized response: the quasi-identifier values and the size of every group" in (
        section
    )
    assert "chance that a record reports another value than its own" in section
    assert "(a change of that person&#39;s value: one replace step) the DP release gives ε = 1" in (
        section
    )
    assert "Not released" not in section
    # a public domain that leaves out zip "b": its 3 records are withheld
    domain = dp.PublicDomain.of({"zip": ["a"], "diagnosis": ["flu", "cold"]})
    section = dp_section(
        with_dp(small_table(), dp.DPOptions(dp.PrivacyGuarantee(1.0), domain=domain))
    )
    assert "Not released: 3 records whose values are not among the declared ones" in section
    assert "do not publish them" in section


# -- escaping and redaction -----------------------------------------------------------


def test_every_value_in_the_section_is_escaped() -> None:
    frame = hostile_frame().rename(columns={"diagnosis": IMAGE_SA})
    table = anonaudit.load(frame, anonaudit.Roles(["zip", "<b>age</b>"], [IMAGE_SA]))
    report = anonaudit.audit_table(table, anonaudit.AuditOptions(policy=anonaudit.Policy(k=2)))
    options = dp.DPOptions(dp.PrivacyGuarantee(1.0, 1e-6))
    page = replace(report, dp=dp.companion(table, options)).to_html()
    section = dp_section(page)
    assert "<img" not in page and "<script" not in page and "<i>flu</i>" not in page
    assert escape(IMAGE_SA) in section  # the SA's name: headings, tables, charts
    assert "&lt;i&gt;flu&lt;/i&gt;" in section  # its values: sentences, chart tooltips
    assert "&lt;b&gt;age&lt;/b&gt;" in section  # the QI names in the sentences
    redacted = replace(report, dp=dp.companion(table, options)).to_html(redact=True)
    for value in HOSTILE:
        assert value not in redacted and escape(value) not in redacted
    assert SCRIPT not in dp_section(redacted)


def test_cli_writes_the_dp_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.csv"
    pd.DataFrame(
        {"zip": ["1", "1", "2", "2", "2"], "dx": ["flu", "cold", "flu", "flu", "cold"]}
    ).to_csv(data, index=False)
    target = tmp_path / "report.html"
    argv = ["audit", str(data), "--qi", "zip", "--sensitive", "dx", "--quiet"]
    argv += ["--dp-epsilon", "1", "--public-domain", "zip=1,2", "--public-domain", "dx=flu,cold"]
    assert main([*argv, "--html", str(target)]) == 0
    page = target.read_text(encoding="utf-8")
    assert '<section id="dp"' in page and "Combinations from a public domain" in page
    assert "--dp-epsilon 1" in page  # the command that reproduces it
    capsys.readouterr()
