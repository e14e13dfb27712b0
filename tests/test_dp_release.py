"""Releases, refusals, public domains, contribution bounding, contrast and utility."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonaudit import Roles
from anonaudit.classtable import ClassTable
from anonaudit.dp import (
    Budget,
    DPOptions,
    PrivacyGuarantee,
    PrivacyUnit,
    PublicDomain,
    bound_contributions,
    companion,
    contrast,
    histogram_sensitivity,
    load_bounded,
    posterior_curve,
    release,
)
from anonaudit.dp.accounting import delta_threshold
from anonaudit.errors import BudgetError, ColumnError, ParameterError, SourceNotFoundError
from anonaudit.measures.k_anonymity import k_anonymity

pytest.importorskip("opendp")

# Classes over zip: a = {flu x5, cold x5}, b = {flu x9} (homogeneous), c = {cold x1}.
FRAME = pd.DataFrame(
    {
        "zip": ["a", "a", "b", "c"],
        "d": ["flu", "cold", "flu", "cold"],
        "count": [5, 5, 9, 1],
    }
)
TABLE = ClassTable.from_frame(FRAME, quasi_identifiers=["zip"], sensitive=["d"])
DOMAIN = PublicDomain.of({"zip": ["a", "b", "c", "d"], "d": ["flu", "cold", "cough"]})


def test_pure_release_needs_a_public_domain() -> None:
    message = r"never pure epsilon-DP.*--public-domain.*--delta"
    one = PrivacyGuarantee(1.0)
    with pytest.raises(ParameterError, match=message):
        release(TABLE, DPOptions(one))
    partial = PublicDomain.of({"zip": ["a", "b", "c"]})
    with pytest.raises(ParameterError, match="of 'd'"):
        release(TABLE, DPOptions(one, domain=partial))
    with pytest.raises(ParameterError, match="--delta"):
        release(TABLE, DPOptions(one, domain=DOMAIN, mechanism="discrete-gaussian"))
    with pytest.raises(ParameterError, match="discrete-laplace or discrete-gaussian"):
        release(TABLE, DPOptions(PrivacyGuarantee(1.0, 1e-6), mechanism="laplace"))
    with pytest.raises(ParameterError, match="positive number"):
        release(TABLE, DPOptions(PrivacyGuarantee(0.0), domain=DOMAIN))
    with pytest.raises(ParameterError, match="unknown mechanism"):
        release(TABLE, DPOptions(one, domain=DOMAIN, mechanism="exponential"))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="12 cells, more than the 10 allowed"):
        release(TABLE, DPOptions(one, domain=DOMAIN, max_cells=10))


@pytest.mark.parametrize("mechanism", ["discrete-laplace", "laplace", "gaussian"])
def test_public_domain_release_covers_every_cell(mechanism: str) -> None:
    delta = 1e-6 if mechanism == "gaussian" else None
    r = release(TABLE, DPOptions(PrivacyGuarantee(2.0, delta), domain=DOMAIN, mechanism=mechanism))  # type: ignore[arg-type]
    assert r.domain == "public" and r.cells == 12 and r.threshold is None
    assert r.true_counts.sum() == TABLE.rows and len(r.released_counts) == 12
    assert r.released_counts.dtype == np.int64 and r.released_counts.min() >= 0
    assert set(r.table.keys.column("zip").to_pylist()) <= {"a", "b", "c", "d"}
    assert r.table.rows == r.released_counts.sum()
    assert r.cost.epsilon_at(delta or 0.0) <= 2.0 * (1 + 1e-9)
    # class ids of the cells follow the row-major numbering (zip slowest)
    assert r.class_ids.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    frame = r.to_frame()
    assert frame.column_names == ["zip", "d", "count"]
    assert sum(r.sa_distribution("d").values()) == r.table.rows
    assert sum(n * size for size, n in r.size_histogram.items()) == r.table.rows


def test_values_outside_the_domain_are_left_out() -> None:
    narrow = PublicDomain.of({"zip": ["a", "b"], "d": ["flu", "cold"]})
    r = release(TABLE, DPOptions(PrivacyGuarantee(1.0), domain=narrow))
    assert r.outside_domain == 1 and r.true_counts.sum() == TABLE.rows - 1


def test_observed_release_uses_a_stability_threshold() -> None:
    big = ClassTable.from_frame(
        pd.DataFrame({"zip": ["x", "y"], "d": ["flu", "flu"], "count": [100_000, 1]}),
        quasi_identifiers=["zip"],
        sensitive=["d"],
    )
    for mechanism in ("discrete-laplace", "discrete-gaussian"):
        r = release(big, DPOptions(PrivacyGuarantee(1.0, 1e-9), mechanism=mechanism))  # type: ignore[arg-type]
        assert r.domain == "observed" and r.threshold is not None and r.threshold > 10
        assert r.cost.delta <= (1e-9 if mechanism == "discrete-laplace" else 5e-10)
        assert r.cost.epsilon_at(1e-9) <= 1.0 * (1 + 1e-9)
        # the large class is always released, the singleton (almost) never
        assert r.table.keys.column("zip").to_pylist() == ["x"]
        assert abs(int(r.table.counts[0]) - 100_000) < 200
    # the threshold is the smallest whose exact delta fits: one unit less would break it;
    # the chance of keeping a cell one below it spends the rest of delta, exactly
    r = release(big, DPOptions(PrivacyGuarantee(1.0, 1e-9)))
    assert r.threshold is not None and r.keep_below is not None
    exact = {"scale": 1.0, "l0": 1, "linf": 1}
    stated = delta_threshold(
        "discrete-laplace", threshold=r.threshold, keep_below=r.keep_below, **exact
    )
    assert stated == r.cost.delta <= 1e-9 and r.cost.delta == pytest.approx(1e-9, rel=1e-12)
    assert delta_threshold("discrete-laplace", threshold=r.threshold, **exact) < 1e-9
    assert delta_threshold("discrete-laplace", threshold=r.threshold - 1, **exact) > 1e-9


def test_replace_neighbours_double_the_l1_sensitivity() -> None:
    add = histogram_sensitivity("add-remove", max_contributions=3)
    swap = histogram_sensitivity("replace", max_contributions=3)
    assert (add.l1, add.l2, add.l0, add.linf) == (3, 3.0, 3, 3)
    assert (swap.l1, swap.l0, swap.linf) == (6, 6, 3) and swap.l2 == pytest.approx(3 * math.sqrt(2))
    swap = PrivacyUnit(neighbouring="replace")
    r = release(TABLE, DPOptions(PrivacyGuarantee(1.0), unit=swap, domain=DOMAIN))
    assert r.noise_scale == 2.0
    with pytest.raises(ParameterError, match="neighbouring"):
        histogram_sensitivity("swap")  # type: ignore[arg-type]


def test_budget_is_checked_before_any_noise() -> None:
    options = DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN)
    spent = Budget(epsilon=1.5).spend(release(TABLE, options).cost)
    with pytest.raises(BudgetError, match=r"more than the budget's 1\.5"):
        release(TABLE, DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, budget=spent))


def test_randomized_response_keeps_the_classes() -> None:
    rr = DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, mechanism="randomized-response")
    r = release(TABLE, rr)
    assert r.sensitivity.neighbouring == "replace" and r.cost.epsilon == 1.0
    assert r.noise_scale == pytest.approx(1 - math.e / (math.e + 2))
    # QI values and class sizes are released exactly; only the value is randomized
    assert sorted(r.table.classes.sizes.tolist()) == sorted(TABLE.classes.sizes.tolist())
    assert r.cells == TABLE.rows
    with pytest.raises(ParameterError, match="--public-domain d="):
        release(TABLE, DPOptions(PrivacyGuarantee(1.0), mechanism="randomized-response"))
    with pytest.raises(ParameterError, match="not whether a record is present"):
        release(
            TABLE,
            DPOptions(
                PrivacyGuarantee(1.0),
                domain=DOMAIN,
                mechanism="randomized-response",
                unit=PrivacyUnit(neighbouring="add-remove"),
            ),
        )


def test_contribution_bounding(tmp_path: Path) -> None:
    rows = "id,zip,d\n" + "p1,a,flu\n" * 4 + "p2,a,cold\np2,b,flu\np3,b,flu\n"
    path = tmp_path / "visits.csv"
    path.write_text(rows, encoding="utf-8")
    roles = Roles(["zip"], ["d"])
    bounded = load_bounded(path, roles, PrivacyUnit(column="id", contributions=1))
    assert bounded.units == 3 and bounded.table.rows == 3 and bounded.dropped_records == 4
    assert bounded.table.quasi_identifiers == ("zip",)
    two = load_bounded(path, roles, PrivacyUnit(column="id", contributions=2))
    assert two.table.rows == 5
    report = companion(two, DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN))
    assert report.privacy_unit == "id" and report.bounded_records == 2
    assert report.release.sensitivity.l1 == 2 and report.release.noise_scale == 2.0
    with pytest.raises(ColumnError, match="empty"):
        bound_contributions(
            ClassTable.from_frame(
                pd.DataFrame({"id": [None, "x"], "zip": ["a", "b"], "count": [1, 1]}),
                quasi_identifiers=["id", "zip"],
            ),
            PrivacyUnit(column="id"),
        )
    with pytest.raises(Exception, match="never released"):
        load_bounded(path, Roles(["id"]), PrivacyUnit(column="id"))


def test_contrast_against_the_dp_bound() -> None:
    c = contrast(TABLE, "d", epsilon=1.0)
    prior_flu = 14 / 20
    assert c.max_posterior == 1.0 and c.min_entropy == 0.0
    assert c.disclosed_classes == 2 and c.disclosed_records == 10  # b (flu) and c (cold)
    assert c.max_pml == pytest.approx(math.log(1 / (6 / 20)))  # c: cold, prior 6/20
    bound = prior_flu * math.e / (1 + prior_flu * (math.e - 1))
    assert c.dp_posterior_bound == pytest.approx(bound)
    # b (flu: 1.0 > bound(0.7) = 0.864) and c (cold: 1.0 > bound(0.3) = 0.538); a is within
    assert c.classes_above_bound == 2 and c.records_above_bound == 10
    assert len(c.scatter.class_ids) == 3 and c.scatter.posterior.max() == 1.0
    assert c.scatter.prior[0] == pytest.approx(6 / 20)  # the most leaking first
    curve = posterior_curve(1.0)
    assert curve.prior[0] == 0 and curve.prior[-1] == 1 and np.all(np.diff(curve.bound) >= 0)


def test_companion_report_and_reader_measures() -> None:
    report = companion(TABLE, DPOptions(PrivacyGuarantee(4.0), domain=DOMAIN))
    assert report.epsilon == 4.0 and report.accounting.rho is None
    released = report.measures.released
    assert released is not None and released.k == k_anonymity(report.release.table).k
    assert report.measures.original.k == 1 and report.measures.original.distinct_l["d"] == 1
    u = report.utility
    assert u.cells == 12 and u.classes == 3
    assert u.classes_hidden + u.classes_released - u.classes_fabricated == u.classes
    assert u.expected_within == 0 and 0 <= u.share_within <= 1  # b = 1/4: P(Z != 0) < 5%
    assert u.expected_rmse == pytest.approx(math.sqrt(report.release.noise.variance))  # type: ignore[union-attr]
    assert report.privacy_loss.epsilon == 4.0
    assert report.profile[0] == (0.0, pytest.approx(report.privacy_loss.delta(0.0)))
    gaussian = companion(
        TABLE, DPOptions(PrivacyGuarantee(1.0, 1e-6), domain=DOMAIN, mechanism="gaussian")
    )
    assert gaussian.accounting.rho is not None and gaussian.accounting.epsilon_exact_gaussian
    # calibrated on the exact Gaussian curve: the stated epsilon is that curve's
    assert gaussian.epsilon == pytest.approx(1.0)
    assert gaussian.accounting.epsilon_exact_gaussian == pytest.approx(1.0, rel=1e-6)


def test_public_domain_parsing(tmp_path: Path) -> None:
    (tmp_path / "zips.txt").write_text("a\nb\n\nc\n", encoding="utf-8")
    d = PublicDomain.parse(["zip=@zips.txt", "d= flu , cold"], base=tmp_path)
    assert d.values == {"zip": ("a", "b", "c"), "d": ("flu", "cold")}
    assert d.missing(["zip", "d", "age"]) == ["age"]
    with pytest.raises(ParameterError, match="COL=v1"):
        PublicDomain.parse(["zip"])
    with pytest.raises(ParameterError, match="twice"):
        PublicDomain.parse(["zip=a", "zip=b"])
    with pytest.raises(ParameterError, match="repeats 'a'"):
        PublicDomain.parse(["zip=a,a"])
    with pytest.raises(SourceNotFoundError, match="no such domain file"):
        PublicDomain.parse(["zip=@missing.txt"], base=tmp_path)


def test_public_domain_from_an_arx_hierarchy_file(tmp_path):
    # Issue 6: "a hierarchy file can serve too": its leaves are the declared values.
    from anonaudit.dp.domain import PublicDomain

    hierarchy = tmp_path / "diagnosis.csv"
    hierarchy.write_text("flu;respiratory;*\ncold;respiratory;*\nulcer;digestive;*\n")
    domain = PublicDomain.parse([f"diagnosis=@{hierarchy}", "sex=F,M"])
    assert domain.values["diagnosis"] == ("flu", "cold", "ulcer")
    assert domain.size(["diagnosis", "sex"]) == 6


# 200 x 100 = 20,000 public cells, one record: 19,999 empty cells
WIDE = PublicDomain.of({"zip": [f"z{i}" for i in range(200)], "d": [f"v{i}" for i in range(100)]})
ONE = ClassTable.from_frame(
    pd.DataFrame({"zip": ["z0"], "d": ["v0"], "count": [1]}),
    quasi_identifiers=["zip"],
    sensitive=["d"],
)


def test_clamping_biases_empty_cells_and_unbiased_does_not() -> None:
    # Discrete Laplace of scale b = 1 (epsilon 1), q = e^-1: P(Z = z) = (1-q)/(1+q) q^|z|,
    # so E[max(Z, 0)] = q / (1 - q^2) = 0.4255 (Inusah & Kozubowski 2006) and E[Z] = 0.
    q = math.exp(-1.0)
    expected = {"clamp": q / (1 - q**2), "unbiased": 0.0}
    for postprocess, mean in expected.items():
        r = release(ONE, DPOptions(PrivacyGuarantee(1.0), domain=WIDE, postprocess=postprocess))  # type: ignore[arg-type]
        empty = r.released_counts[r.true_counts == 0]
        assert len(empty) == 19_999
        standard_error = empty.std(ddof=1) / math.sqrt(len(empty))
        assert abs(empty.mean() - mean) < 4 * standard_error, postprocess
    # unbiased keeps negative counts; the released class table holds the positive ones
    assert r.released_counts.min() < 0
    assert r.table.counts.min() > 0 and r.table.rows == r.released_counts.clip(0).sum()


def test_unbiased_needs_an_additive_release_over_a_public_domain() -> None:
    with pytest.raises(ParameterError, match="unknown postprocess 'round'"):
        release(TABLE, DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, postprocess="round"))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="--public-domain"):
        release(TABLE, DPOptions(PrivacyGuarantee(1.0, 1e-6), postprocess="unbiased"))
    with pytest.raises(ParameterError, match="--public-domain"):
        release(
            TABLE,
            DPOptions(
                PrivacyGuarantee(1.0),
                domain=DOMAIN,
                mechanism="randomized-response",
                postprocess="unbiased",
            ),
        )


def test_the_publishable_table_lists_every_non_zero_count() -> None:
    from anonaudit.report.dp import postprocessing, released_frame, sidecar

    for postprocess in ("clamp", "unbiased"):
        options = DPOptions(PrivacyGuarantee(1.0), domain=DOMAIN, postprocess=postprocess)  # type: ignore[arg-type]
        report = companion(TABLE, options)
        frame = released_frame(report)
        assert frame.column_names == ["zip", "d", "count"]
        counts = report.release.released_counts
        assert sorted(frame.column("count").to_pylist()) == sorted(counts[counts != 0].tolist())
        assert postprocessing(report)["name"] == postprocess
        assert sidecar(report)["postprocessing"] == postprocessing(report)
    observed = companion(TABLE, DPOptions(PrivacyGuarantee(1.0, 1e-6)))
    assert postprocessing(observed)["name"] == "none"
    assert released_frame(observed).equals(observed.release.to_frame())


def test_gaussian_threshold_with_replace_and_several_contributions_fits_its_budget() -> None:
    """The L2 bound of a replace pair is sqrt(2) m, not rounded up: no spurious refusal."""
    big = ClassTable.from_frame(
        pd.DataFrame({"zip": ["x", "y"], "d": ["flu", "flu"], "count": [10_000, 2]}),
        quasi_identifiers=["zip"],
        sensitive=["d"],
    )
    r = release(
        big,
        DPOptions(
            PrivacyGuarantee(1.0, 1e-6),
            mechanism="discrete-gaussian",
            unit=PrivacyUnit(neighbouring="replace", contributions=2),
        ),
    )
    assert r.cost.epsilon_at(1e-6) <= 1.0 * (1 + 1e-9) and r.cost.delta <= 5e-7
    assert r.value_epsilon == pytest.approx(r.cost.epsilon_at(1e-6), rel=0.2)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (lambda: PrivacyGuarantee(1e300), "epsilon must be a positive number from"),
        (lambda: PrivacyGuarantee(1e-300), "epsilon must be a positive number from"),
        (lambda: PrivacyGuarantee(1.0, 1e-320), r"delta must be 0 or lie in \[1e-100, 1\)"),
        (lambda: PrivacyUnit(contributions=2**63 - 1), "from 1 to 1,000,000"),
    ],
)
def test_parameters_at_the_edges_are_range_errors(
    options: Callable[[], object], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        options()
