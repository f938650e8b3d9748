from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator import crosstab as crosstab_module
from estimator.crosstab import (
    coverage_study,
    crosstab,
    joint_response_matrix,
    odds_at_phi,
    phi_of,
    simplex_mle,
    weakest,
)
from estimator.randomized_response import ForcedResponse, Mirrored

COINS = ForcedResponse().response_matrix
DIRECT = np.eye(2)


def k_rr(k: int, epsilon: float) -> np.ndarray:
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return np.full((k, k), (1 - keep) / (k - 1)) + np.eye(k) * (keep - (1 - keep) / (k - 1))


def log_likelihood(counts, pi, joint):
    return float(np.sum(counts * np.log(joint @ pi)))


def test_examples_in_docstrings_run():
    assert doctest.testmod(crosstab_module).failed == 0


def test_joint_matrix_is_the_probability_of_each_pair_of_reports():
    m1, m2 = k_rr(3, 1.0), Mirrored(0.8).response_matrix
    joint = joint_response_matrix(m1, m2)
    for r1, r2, x1, x2 in np.ndindex(3, 2, 3, 2):
        assert joint[r1 * 2 + r2, x1 * 2 + x2] == pytest.approx(m1[r1, x1] * m2[r2, x2])
    np.testing.assert_allclose(joint.sum(axis=0), 1.0)
    np.testing.assert_allclose(
        np.linalg.inv(joint), np.kron(np.linalg.inv(m1), np.linalg.inv(m2)), atol=1e-12
    )


def test_expected_counts_give_back_the_true_table_exactly():
    truth = np.array([0.2, 0.05, 0.1, 0.15, 0.3, 0.2])
    m1, m2 = k_rr(3, math.log(3)), COINS
    counts = np.round(1_000_000 * joint_response_matrix(m1, m2) @ truth)
    tab = crosstab(counts.reshape(3, 2), m1, m2)
    np.testing.assert_allclose(tab.estimate_unbiased.ravel(), truth, atol=1e-6)
    np.testing.assert_allclose(tab.estimate.ravel(), truth, atol=1e-6)
    assert tab.phi is None and tab.odds_ratio is None
    assert tab.n == 1_000_000


def test_covariance_of_the_unbiased_table_matches_simulated_surveys():
    # 4000 seeded surveys of n = 2000: each cell's variance within 15 % of the formula
    # (5 sd of a variance estimated from 4000 draws is 11 %).
    rng = np.random.default_rng(5)
    truth = np.array([0.4, 0.1, 0.2, 0.3])
    joint = joint_response_matrix(COINS, COINS)
    counts = rng.multinomial(2000, joint @ truth, size=4000)
    estimates = (counts / 2000) @ np.linalg.inv(joint).T
    np.testing.assert_allclose(estimates.mean(axis=0), truth, atol=0.01)
    formula = crosstab(np.round(2000 * joint @ truth).reshape(2, 2), COINS, COINS).covariance
    np.testing.assert_allclose(estimates.var(axis=0) / np.diag(formula), 1.0, atol=0.15)


def test_direct_questions_give_the_sample_table_phi_and_odds_ratio():
    counts = np.array([[40, 10], [20, 30]])
    tab = crosstab(counts, DIRECT, DIRECT)
    np.testing.assert_allclose(tab.estimate, counts / 100)
    a, b, c, d = 40, 10, 20, 30
    assert tab.phi.estimate == pytest.approx((a * d - b * c) / math.sqrt(50 * 50 * 60 * 40))
    assert tab.odds_ratio.estimate == pytest.approx(a * d / (b * c))
    assert tab.phi.ci_low < tab.phi.estimate < tab.phi.ci_high
    assert tab.odds_ratio.ci_low < tab.odds_ratio.estimate < tab.odds_ratio.ci_high


def test_simplex_mle_maximises_the_likelihood_when_the_unbiased_table_is_negative():
    rng = np.random.default_rng(9)
    joint = joint_response_matrix(COINS, COINS)
    counts = np.array([325.0, 175.0, 175.0, 325.0])
    assert np.any(np.linalg.solve(joint, counts / 1000) < 0)
    mle = simplex_mle(joint, counts)
    assert np.all(mle >= 0) and mle.sum() == pytest.approx(1.0)
    best = log_likelihood(counts, mle, joint)
    for other in rng.dirichlet(np.ones(4), size=500):
        assert log_likelihood(counts, other, joint) <= best + 1e-9


def test_simplex_mle_is_the_unbiased_table_when_that_is_a_distribution():
    joint = joint_response_matrix(COINS, COINS)
    counts = np.array([290.0, 210.0, 215.0, 285.0])
    np.testing.assert_allclose(
        simplex_mle(joint, counts), np.linalg.solve(joint, counts / 1000), atol=1e-12
    )


@settings(max_examples=150, deadline=None)
@given(counts=st.lists(st.integers(0, 40), min_size=4, max_size=4).filter(lambda c: sum(c) > 0))
def test_intervals_contain_the_estimate_and_never_have_zero_width(counts):
    tab = crosstab(np.array(counts).reshape(2, 2), COINS, COINS)
    assert np.all(tab.ci_low <= tab.estimate + 1e-12)
    assert np.all(tab.estimate <= tab.ci_high + 1e-12)
    assert np.all(tab.ci_high - tab.ci_low > 0.01)
    for measure in (tab.phi, tab.odds_ratio):
        assert measure.ci_high > measure.ci_low
        if not math.isnan(measure.estimate):
            assert measure.ci_low <= measure.estimate <= measure.ci_high


def test_an_estimated_empty_cell_makes_the_odds_ratio_interval_reach_infinity():
    tab = crosstab([[325, 175], [175, 325]], COINS, COINS)
    assert tab.estimate[0, 1] == 0 and tab.estimate[1, 0] == 0
    assert tab.phi.estimate == pytest.approx(1.0) and tab.phi.ci_high == 1.0
    assert tab.odds_ratio.estimate == math.inf and tab.odds_ratio.ci_high == math.inf
    assert 1 < tab.odds_ratio.ci_low < math.inf


def test_an_empty_margin_leaves_phi_and_odds_ratio_undefined_over_their_whole_range():
    tab = crosstab([[30, 10], [10, 2]], COINS, COINS)
    assert math.isnan(tab.phi.estimate) and math.isnan(tab.odds_ratio.estimate)
    assert (tab.phi.ci_low, tab.phi.ci_high) == (-1.0, 1.0)
    assert (tab.odds_ratio.ci_low, tab.odds_ratio.ci_high) == (0.0, math.inf)


def test_odds_at_phi_is_increasing_and_reaches_zero_and_infinity():
    table = np.array([0.4, 0.2, 0.1, 0.3])
    values = odds_at_phi(table, np.linspace(-1, 1, 41))
    assert values[0] == 0 and values[-1] == math.inf
    assert np.all(np.diff(values[np.isfinite(values)]) >= 0)
    assert odds_at_phi(table, phi_of(table)) == pytest.approx(0.4 * 0.3 / (0.2 * 0.1))


def test_reports_the_design_cannot_produce_are_flagged():
    assert crosstab([[300, 10], [10, 200]], COINS, COINS).contradicts_design
    assert "contradict" in repr(crosstab([[300, 10], [10, 200]], COINS, COINS))
    assert not crosstab([[290, 210], [215, 285]], COINS, COINS).contradicts_design


def test_repr_shows_the_table_and_the_measures():
    text = repr(crosstab([[290, 210], [215, 285]], COINS, COINS))
    assert "n = 1000" in text and "phi = 0.6" in text and "odds ratio = 16.04" in text


def test_coverage_study_measures_coverage_and_says_where_it_is_weakest():
    # 400 seeded replications: a correct 95 % interval covers in at least 89 % of them
    # with probability 1 − 1e-6.
    rows = coverage_study(
        COINS, COINS, {"phi 0.6": [0.4, 0.1, 0.1, 0.4]}, ns=(1000,), reps=400, seed=3
    )
    (row,) = rows
    assert row.table == "phi 0.6" and row.n == 1000
    assert row.cell_min >= 0.89 and row.phi >= 0.89 and row.odds_ratio >= 0.89
    assert 0 < row.cell_width < 0.3
    worst = weakest(rows)
    assert set(worst) == {"cell_min", "phi", "odds_ratio"}
    assert worst["phi"][1:] == ("phi 0.6", 1000)


def test_coverage_study_refuses_a_table_that_is_not_a_distribution():
    with pytest.raises(ValueError, match="not a joint distribution"):
        coverage_study(COINS, COINS, {"bad": [0.5, 0.5, 0.5, 0.5]}, ns=(50,), reps=10)


@pytest.mark.parametrize(
    ("counts", "m1", "m2", "level", "message"),
    [
        ([[1, 2], [3, 4]], np.ones((2, 3)) / 2, COINS, 0.95, "square"),
        ([[1, 2], [3, 4]], np.array([[0.5, 0.2], [0.4, 0.8]]), COINS, 0.95, "sum to 1"),
        ([[1, 2], [3, 4]], np.full((2, 2), 0.5), COINS, 0.95, "cannot be inverted"),
        ([[1, 2], [3, 4]], np.array([[1.5, 0], [-0.5, 1]]), COINS, 0.95, "probabilities"),
        ([[1, 2, 3], [3, 4, 5]], COINS, COINS, 0.95, "2×2 table"),
        ([[1, -2], [3, 4]], COINS, COINS, 0.95, "whole numbers"),
        ([[1, 2.5], [3, 4]], COINS, COINS, 0.95, "whole numbers"),
        ([[1, math.nan], [3, 4]], COINS, COINS, 0.95, "whole numbers"),
        ([[0, 0], [0, 0]], COINS, COINS, 0.95, "No reports yet"),
        ([[1, 2], [3, 4]], COINS, COINS, 1.5, "level"),
    ],
)
def test_bad_inputs_are_refused(counts, m1, m2, level, message):
    with pytest.raises(ValueError, match=message):
        crosstab(counts, m1, m2, level)
