"""Population risk: ARX's published constants on Adult, hand-computable tables, the
[0, 1] invariant, and ``anonaudit audit --population-size/--sampling-fraction``.

The Adult constants are ARX's ``TestRiskMetrics.testDecisionRule2`` and
``testAverageRisk2`` (arx-deidentifier/arx, ``src/test/org/deidentifier/arx/test/``),
computed on ``data/adult.csv`` with all nine columns as QIs and
``ARXPopulationModel.create(n, pi)``, i.e. ``N = n / pi``. ARX asserts four digits;
we hold our estimates to 1e-6.
"""

from __future__ import annotations

import decimal
import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from adult_data import ADULT_CSV as ADULT
from adult_data import ADULT_QIS as QIS
from hypothesis import given, settings
from hypothesis import strategies as st

import anonaudit
from anonaudit import AuditOptions, PopulationOptions, Roles
from anonaudit.cli import main
from anonaudit.errors import ParameterError
from anonaudit.measures.population import (
    journalist_risk,
    marketer_risk,
    population_uniqueness,
)


@pytest.fixture(scope="module")
def adult_sizes() -> np.ndarray:
    frame = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)
    return frame.groupby(QIS).size().to_numpy()


# (sampling fraction, ARX's Dankar estimate, the model ARX's rule chose)
ARX_DANKAR = [
    (0.1, 0.27684993883653597, "pitman"),
    (0.01, 0.1446083531167384, "pitman"),
    (1.0, 0.5142895033485844, "none"),
]


@pytest.mark.parametrize(("fraction", "expected", "model"), ARX_DANKAR)
def test_dankar_reproduces_arx_on_adult(
    adult_sizes: np.ndarray, fraction: float, expected: float, model: str
) -> None:
    result = population_uniqueness(adult_sizes, sampling_fraction=fraction)
    assert result.uniques_fraction == pytest.approx(expected, abs=1e-6)
    assert result.model_used == model


def test_zayatz_reproduces_arx_on_adult(adult_sizes: np.ndarray) -> None:
    # ARX's alternative constant at pi = 0.1 (if its Pitman had not converged), and its
    # Dankar result at pi = 0.2, where its SNB does not converge and the rule falls
    # back to Zayatz.
    for fraction, expected in ((0.1, 0.3207402393466189), (0.2, 0.3577099234829125)):
        result = population_uniqueness(adult_sizes, sampling_fraction=fraction, model="zayatz")
        assert result.model_used == "zayatz"
        assert result.uniques_fraction == pytest.approx(expected, abs=1e-6)


def test_dankar_at_one_fifth_picks_the_published_snb(adult_sizes: np.ndarray) -> None:
    # Chen & McNulty's SNB converges here and lies below Zayatz, so the rule picks it:
    # 0.319459 where ARX (whose SNB code does not converge) reports Zayatz's 0.357710.
    result = population_uniqueness(adult_sizes, sampling_fraction=0.2)
    assert result.model_used == "snb"
    assert result.snb == pytest.approx(0.3194593754, abs=1e-6)
    assert result.zayatz is not None and result.snb is not None
    assert result.snb < result.zayatz
    assert "SNB, below Zayatz" in result.reason


def test_population_size_and_fraction_agree(adult_sizes: np.ndarray) -> None:
    by_size = population_uniqueness(adult_sizes, population_size=301_620)
    by_fraction = population_uniqueness(adult_sizes, sampling_fraction=0.1)
    assert by_size.uniques_fraction == pytest.approx(by_fraction.uniques_fraction, abs=1e-12)
    assert by_size.sampling_fraction == pytest.approx(0.1)


def test_usa_population_is_pitman_and_below_sample_uniqueness(adult_sizes: np.ndarray) -> None:
    result = population_uniqueness(adult_sizes, population_size=318_900_000)
    assert result.model_used == "pitman"
    assert 0 < result.uniques_fraction < result.sample_uniques / result.sample_size


def test_prosecutor_average_reproduces_arx_on_adult(adult_sizes: np.ndarray) -> None:
    # ARX TestRiskMetrics.testAverageRisk2: 0.6465751607983555 before anonymization.
    assert marketer_risk(adult_sizes).average == pytest.approx(0.6465751607983555, abs=1e-12)
    journalist = journalist_risk(adult_sizes)
    assert journalist.highest == 1.0
    assert journalist.average == pytest.approx(0.6465751607983555, abs=1e-12)


def test_all_unique_table() -> None:
    # Zayatz: every class has size 1, so every sample unique is a population unique
    # (P(1) = 1) and the population uniques are c1 / pi = N. Pitman's alpha runs to
    # its boundary (no class of size 2 or more), so the rule falls back to Zayatz.
    result = population_uniqueness([1, 1, 1, 1], sampling_fraction=0.05)
    assert result.model_used == "zayatz"
    assert result.pitman is None
    assert result.uniques == pytest.approx(80.0)
    assert result.uniques_fraction == pytest.approx(1.0)
    assert "Pitman did not converge" in result.reason


def test_sampling_fraction_one_gives_sample_uniques() -> None:
    result = population_uniqueness([1, 1, 2, 5], sampling_fraction=1.0)
    assert result.uniques == 2.0
    assert result.uniques_fraction == pytest.approx(2 / 9)
    assert result.reason == "sampling fraction 1: the sample is the population"


def test_no_sample_uniques_gives_zero() -> None:
    result = population_uniqueness([2, 3, 4], sampling_fraction=0.01)
    assert (result.uniques, result.model_used) == (0.0, "none")
    assert (result.pitman, result.zayatz, result.snb) == (0.0, 0.0, 0.0)


def test_shlosser_with_a_large_class_matches_exact_arithmetic() -> None:
    # A class of 5,000 records made (1 + q)^j overflow and the estimate NaN; the
    # rewritten denominator must equal Haas et al.'s D_Sh3 computed in exact rationals.
    from fractions import Fraction

    from anonaudit.measures.population import _shlosser

    sizes = {1: 3, 2: 1, 5000: 1}
    q = Fraction(3, 10)
    top = sum(j * q * q * (1 - q * q) ** (j - 1) * c for j, c in sizes.items())
    bottom = sum((1 - q) ** j * ((1 + q) ** j - 1) * c for j, c in sizes.items())
    ratio = sum((1 - q) ** j * c for j, c in sizes.items()) / sum(
        j * q * (1 - q) ** (j - 1) * c for j, c in sizes.items()
    )
    exact = sum(sizes.values()) + sizes[1] * top / bottom * ratio * ratio
    values = np.array(list(sizes), dtype=np.int64)
    counts = np.array(list(sizes.values()), dtype=np.int64)
    assert _shlosser(values, counts, 0.3) == pytest.approx(float(exact), rel=1e-12)


def test_zayatz_by_hand() -> None:
    # Sizes [1, 2], n = 3, N = 6: h_1 = P(1 of 1 drawn) = 3/6, h_2 = P(1 of 2 drawn)
    # = 2 * 4 * 3 / (2 * 20) = 0.6. P(1) = (1/2 * 0.5) / (1/2 * 0.5 + 1/2 * 0.6) = 5/11,
    # uniques = 1 * 5/11 / 0.5 = 10/11.
    result = population_uniqueness([1, 2], population_size=6, model="zayatz")
    assert result.uniques == pytest.approx(10 / 11, abs=1e-12)


# Zayatz to 1e-12 relative against exact arithmetic (issue 23: the log-gamma form was
# off by 1.1e-8 at N = 10**8 and by 1e-6 at 10**9). Reference: Zayatz's definition
# h_j = j C(N-j, n-1) / C(N, n) in Fractions where C(N, n) is small enough, otherwise
# the exact ratio h_j / h_1 = j prod_{i<j} (N-n+1-i) / (N-i), itself checked against
# the definition below.
_ZAYATZ_SHAPE = {17: 0.02, 5: 0.05, 3: 0.12, 2: 0.25}  # share of records per class size


def _zayatz_table(n: int) -> dict[int, int]:
    sizes = {j: max(1, int(n * share) // j) for j, share in _ZAYATZ_SHAPE.items()}
    sizes[1] = n - sum(j * c for j, c in sizes.items())
    return sizes


def _zayatz_exact(sizes: dict[int, int], population: int, *, by_comb: bool) -> Fraction:
    n = sum(j * c for j, c in sizes.items())

    def weight(j: int) -> Fraction:  # h_j / h_1
        if by_comb:
            return Fraction(j * math.comb(population - j, n - 1), math.comb(population - 1, n - 1))
        ratio = Fraction(j)
        for i in range(1, j):
            ratio *= Fraction(population - n + 1 - i, population - i)
        return ratio

    c1 = sizes[1]
    total = sum(c * weight(j) for j, c in sizes.items())
    return c1 * Fraction(c1) / total * Fraction(population, n)


def _zayatz_of(sizes: dict[int, int], population: int) -> float:
    from anonaudit.measures.population import _zayatz

    values = np.array(sorted(sizes), dtype=np.int64)
    counts = np.array([sizes[int(v)] for v in values], dtype=np.int64)
    return _zayatz(values, counts, int((values * counts).sum()), float(population))


def _relative_error(value: float, exact: Fraction) -> float:
    return abs(float((Fraction(value) - exact) / exact))


def test_zayatz_exact_reference_forms_agree() -> None:
    for population in (1_000, 10**6, 10**10):
        sizes = _zayatz_table(200)
        assert _zayatz_exact(sizes, population, by_comb=True) == _zayatz_exact(
            sizes, population, by_comb=False
        )


@pytest.mark.parametrize(
    ("population", "fraction"),
    [
        (population, fraction)
        for population in (10**3, 10**6, 10**8, 10**10)
        for fraction in (1e-5, 1e-3, 0.01, 0.1, 0.5, 0.9)
        if fraction * population >= 100  # room for the table's shape
    ],
)
def test_zayatz_within_1e_12_of_exact_arithmetic(population: int, fraction: float) -> None:
    n = round(fraction * population)
    sizes = _zayatz_table(n)
    exact = _zayatz_exact(sizes, population, by_comb=n <= 2_000)
    assert _relative_error(_zayatz_of(sizes, population), exact) <= 1e-12


def test_zayatz_at_a_population_of_1e8_through_the_api() -> None:
    sizes = _zayatz_table(2_000)
    table = [j for j, c in sizes.items() for _ in range(c)]
    result = population_uniqueness(table, population_size=10**8, model="zayatz")
    exact = _zayatz_exact(sizes, 10**8, by_comb=True)
    assert _relative_error(result.uniques, exact) <= 1e-12
    assert result.zayatz is not None
    assert _relative_error(result.zayatz, exact / 10**8) <= 1e-12


def test_zayatz_with_a_large_class_against_50_digit_decimals() -> None:
    # A class of 100,000 at N = 10**10, n = 10**6: its weight h_j / h_1 = j e^-10 is a
    # product of 99,999 factors, computed here with 50 significant digits.
    sizes = {1: 290_000, 2: 100_000, 7: 30_000, 100_000: 3}
    population = 10**10
    n = sum(j * c for j, c in sizes.items())
    assert n == 10**6
    with decimal.localcontext() as context:
        context.prec = 50
        weights = {}
        for j, c in sizes.items():
            ratio = Decimal(j)
            for i in range(1, j):
                ratio *= Decimal(population - n + 1 - i) / Decimal(population - i)
            weights[j] = c * ratio
        total = sum(weights.values())
        exact = Decimal(sizes[1]) ** 2 / total * population / n
    assert weights[100_000] > Decimal("1e-5") * total  # the large class counts
    assert abs(Decimal(_zayatz_of(sizes, population)) / exact - 1) <= Decimal("1e-12")


def test_journalist_and_marketer_with_population_sizes() -> None:
    journalist = journalist_risk([1, 4], population_sizes=[2, 8], threshold=0.2)
    assert journalist.highest == 0.5
    assert journalist.average == pytest.approx(max(2 / 10, (1 / 2 + 4 / 8) / 5))
    assert journalist.records_at_risk == 1
    assert marketer_risk([1, 4], population_sizes=[2, 8]).average == pytest.approx(0.2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sampling_fraction": 0.0}, r"sampling fraction must lie in \(0, 1\] \(got 0.0\)"),
        ({"sampling_fraction": 1.5}, r"sampling fraction must lie in \(0, 1\]"),
        ({"population_size": 2}, r"population size must be at least the 3 records"),
        ({"population_size": 10, "sampling_fraction": 0.5}, "not both"),
        ({}, "give population_size or sampling_fraction"),
        ({"sampling_fraction": 0.5, "model": "chao"}, "population model must be one of"),
    ],
)
def test_bad_values(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        population_uniqueness([1, 2], **kwargs)  # type: ignore[arg-type]


def test_bad_population_sizes() -> None:
    with pytest.raises(ParameterError, match="at least the sample size"):
        journalist_risk([1, 4], population_sizes=[2, 3])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=40),
    st.floats(0.001, 1.0),
    st.sampled_from(["dankar", "pitman", "zayatz", "snb"]),
)
def test_estimates_lie_in_unit_interval(sizes: list[int], fraction: float, model: str) -> None:
    result = population_uniqueness(sizes, sampling_fraction=fraction, model=model)  # type: ignore[arg-type]
    assert 0.0 <= result.uniques_fraction <= 1.0
    for estimate in (result.pitman, result.zayatz, result.snb):
        assert estimate is None or 0.0 <= estimate <= 1.0


def test_audit_api(adult_sizes: np.ndarray) -> None:
    frame = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)
    report = anonaudit.audit(
        frame, Roles(QIS), AuditOptions(population=PopulationOptions(sampling_fraction=0.01))
    )
    assert report.population is not None and report.marketer is not None
    assert report.population.uniques_fraction == pytest.approx(0.1446083531167384, abs=1e-6)
    assert report.marketer.average == pytest.approx(0.6465751607983555)
    plain = anonaudit.audit(frame.head(50), Roles(QIS))
    assert plain.population is None and "population" not in plain.to_dict()["risk"]


def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    argv = ["audit", str(ADULT), "--sep", ";", "--qi", ",".join(QIS), "--quiet"]
    assert main([*argv, "--population-size", "301620", "--json", str(out)]) == 0
    assert "risk (population, pitman): 27.6850% of the population" in capsys.readouterr().out
    risk = json.loads(out.read_text())["risk"]
    assert json.loads(out.read_text())["schema_version"] == "2.4"
    assert risk["population"]["model"] == "pitman"
    assert risk["population"]["uniques_fraction"] == pytest.approx(0.27684993883653597, abs=1e-6)
    assert risk["population"]["sampling_fraction"] == pytest.approx(0.1)
    assert set(risk["population"]["estimates"]) == {"pitman", "zayatz", "snb"}
    assert risk["journalist"]["highest"] == 1.0
    assert risk["marketer"]["average"] == pytest.approx(0.6465751607983555)
    assert main([*argv, "--sampling-fraction", "0.2", "--population-model", "zayatz",
                 "--json", str(out)]) == 0  # fmt: skip
    population = json.loads(out.read_text())["risk"]["population"]
    assert population["uniques_fraction"] == pytest.approx(0.3577099234829125, abs=1e-6)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--sampling-fraction", "0"], "--sampling-fraction must lie in (0, 1] (got 0.0)"),
        (["--sampling-fraction", "2"], "--sampling-fraction must lie in (0, 1] (got 2.0)"),
        (["--population-size", "-5"], "--population-size must be a positive number"),
        (["--population-size", "5"], "population size must be at least the 6 records"),
        (["--population-size", "10", "--sampling-fraction", "0.5"], "not allowed with"),
        (["--population-model", "chao", "--sampling-fraction", "0.5"], "invalid choice"),
    ],
)
def test_cli_bad_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    data = tmp_path / "d.csv"
    data.write_text("zip,age\n1,2\n1,2\n3,4\n5,6\n5,6\n7,8\n")
    assert main(["audit", str(data), "--qi", "zip,age", "--quiet", *options]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_policy_file_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.csv"
    data.write_text("zip,age\n1,2\n1,2\n3,4\n5,6\n5,6\n7,8\n")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        'inputs = ["d.csv"]\nquasi_identifiers = ["zip", "age"]\n'
        'sampling_fraction = 0.5\npopulation_model = "zayatz"\n'
    )
    assert main(["audit", "--config", str(policy), "--json", "-", "--quiet"]) == 0
    population = json.loads(capsys.readouterr().out)["risk"]["population"]
    assert (population["model"], population["sampling_fraction"]) == ("zayatz", 0.5)
    # an option on the command line replaces the file's population setting
    assert main(["audit", "--config", str(policy), "--population-size", "600", "--json", "-",
                 "--quiet"]) == 0  # fmt: skip
    population = json.loads(capsys.readouterr().out)["risk"]["population"]
    assert population["sampling_fraction"] == pytest.approx(0.01)
    policy.write_text(policy.read_text().replace('"zayatz"', '"chao"'))
    assert main(["audit", "--config", str(policy), "--quiet"]) == 2
    assert "unknown --population-model 'chao'; choose one of dankar" in capsys.readouterr().err
