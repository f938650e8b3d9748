from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from estimator import regression
from estimator.randomized_response import ForcedResponse, Mirrored
from estimator.regression import (
    binary_line,
    design_matrix,
    fit,
    log_likelihood,
    score_and_information,
)

FACULTIES = ["Arts", "Law", "Science"]


def simulated_patterns(rng, beta, t, c, n_per_pattern):
    """Faculty × year patterns with known coefficients; reports drawn with the design."""
    faculty = [f for f in FACULTIES for _ in range(4)]
    year = [y for _ in FACULTIES for y in range(1, 5)]
    m = design_matrix({"faculty": faculty, "year": year}, levels={"faculty": FACULTIES})
    q = 1 / (1 + np.exp(-(m.rows @ beta)))
    n = np.full(len(q), n_per_pattern)
    yes = rng.binomial(n, c + t * q)
    return m, yes, n


def expanded(m, yes, n):
    """One row per respondent: the data as an ordinary logistic regression sees them."""
    rows = np.repeat(m.rows, n, axis=0)
    outcome = np.concatenate(
        [np.r_[np.ones(k), np.zeros(m_ - k)] for k, m_ in zip(yes, n, strict=True)]
    )
    return rows, outcome


def test_examples_in_docstrings_run():
    assert doctest.testmod(regression).failed == 0


@pytest.mark.parametrize(
    "design", [ForcedResponse(), ForcedResponse(0.8, 0.1), Mirrored(0.8), Mirrored(0.2)]
)
def test_expected_counts_give_back_the_true_coefficients_for_any_binary_design(design):
    beta = np.array([-1.0, 0.6, -0.4, 0.2])
    m, _, n = simulated_patterns(np.random.default_rng(0), beta, design.t, design.c, 10**7)
    q = 1 / (1 + np.exp(-(m.rows @ beta)))
    yes = np.round(n * (design.c + design.t * q))
    t, c = binary_line(design.response_matrix)
    np.testing.assert_allclose(fit(m, yes, n, t=t, c=c).params, beta, atol=2e-3)


def test_binary_line_reads_the_response_matrix_of_any_binary_design():
    for design in (ForcedResponse(), ForcedResponse(0.7, 0.2), Mirrored(0.8)):
        t, c = binary_line(design.response_matrix)
        assert t == pytest.approx(design.t, abs=1e-15)
        assert c == pytest.approx(design.c, abs=1e-15)


def test_binary_line_refuses_a_choice_matrix():
    with pytest.raises(ValueError, match="2×2"):
        binary_line(np.eye(3))


def test_design_matrix_dummy_codes_against_the_first_option_and_puts_intercept_first():
    m = design_matrix(
        {"faculty": ["Law", "Arts", "Science"], "age": [20, 21.5, 30]},
        levels={"faculty": FACULTIES},
    )
    assert m.names == ("(Intercept)", "faculty[Law]", "faculty[Science]", "age")
    assert m.rows.tolist() == [[1, 1, 0, 20], [1, 0, 0, 21.5], [1, 0, 1, 30]]


def test_design_matrix_without_levels_uses_sorted_values_of_a_text_covariate():
    m = design_matrix({"band": ["b", "a", "c"]})
    assert m.names == ("(Intercept)", "band[b]", "band[c]")


def test_design_matrix_refuses_values_outside_the_options():
    with pytest.raises(ValueError, match="not among its options: Medicine"):
        design_matrix({"faculty": ["Law", "Medicine"]}, levels={"faculty": FACULTIES})


def test_design_matrix_refuses_ragged_or_non_finite_covariates():
    with pytest.raises(ValueError, match="one value per row"):
        design_matrix({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError, match="finite"):
        design_matrix({"a": [1, math.nan]})


def test_direct_question_equals_ordinary_logistic_regression_from_statsmodels():
    rng = np.random.default_rng(1)
    m, yes, n = simulated_patterns(rng, np.array([-1.0, 0.5, -0.4, 0.3]), 1.0, 0.0, 60)
    ours = fit(m, yes, n, t=1.0, c=0.0)
    rows, outcome = expanded(m, yes, n)
    theirs = sm.Logit(outcome, rows).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(ours.params, theirs.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        [c.std_error for c in ours.coefficients], theirs.bse, rtol=1e-6, atol=1e-9
    )
    assert ours.log_likelihood == pytest.approx(theirs.llf, rel=1e-10)
    np.testing.assert_allclose([c.p_value for c in ours.coefficients], theirs.pvalues, rtol=1e-5)
    low, high = np.exp(theirs.conf_int(0.05)).T
    np.testing.assert_allclose([c.ci_low for c in ours.coefficients], low, rtol=1e-6)
    np.testing.assert_allclose([c.ci_high for c in ours.coefficients], high, rtol=1e-6)
    assert ours.n == int(n.sum()) and ours.converged


def test_grouped_fit_equals_the_fit_on_one_row_per_respondent():
    rng = np.random.default_rng(2)
    design = ForcedResponse()
    m, yes, n = simulated_patterns(rng, np.array([-0.5, 0.8, 0.2, 0.1]), design.t, design.c, 40)
    grouped = fit(m, yes, n, t=design.t, c=design.c)
    rows, outcome = expanded(m, yes, n)
    one_by_one = fit(rows, outcome, np.ones_like(outcome), t=design.t, c=design.c, names=m.names)
    np.testing.assert_allclose(grouped.params, one_by_one.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grouped.covariance, one_by_one.covariance, rtol=1e-8)
    assert grouped.log_likelihood == pytest.approx(one_by_one.log_likelihood, rel=1e-12)
    assert grouped.n == one_by_one.n == len(outcome)


@pytest.mark.parametrize(("t", "c"), [(1.0, 0.0), (0.5, 0.25), (-0.6, 0.8), (0.3, 0.1)])
def test_gradient_and_hessian_agree_with_finite_differences(t, c):
    rng = np.random.default_rng(3)
    x = np.column_stack([np.ones(12), rng.normal(size=12), rng.integers(0, 2, 12)])
    n = rng.integers(5, 50, 12).astype(float)
    yes = rng.binomial(n.astype(int), 0.4).astype(float)
    beta = np.array([0.3, -0.7, 0.5])
    gradient, observed, fisher = score_and_information(beta, x, yes, n, t, c)
    h = 1e-6
    eye = np.eye(3)

    def ll(b):
        return log_likelihood(b, x, yes, n, t, c)

    numeric_gradient = [(ll(beta + h * e) - ll(beta - h * e)) / (2 * h) for e in eye]
    np.testing.assert_allclose(gradient, numeric_gradient, rtol=1e-6, atol=1e-6)
    numeric_hessian = np.array(
        [
            (
                score_and_information(beta + h * e, x, yes, n, t, c)[0]
                - score_and_information(beta - h * e, x, yes, n, t, c)[0]
            )
            / (2 * h)
            for e in eye
        ]
    )
    np.testing.assert_allclose(-observed, numeric_hessian, rtol=1e-5, atol=1e-5)
    # The Fisher information is the observed one's expectation: at y = n·p they agree.
    p = c + t / (1 + np.exp(-(x @ beta)))
    _, observed_at_mean, _ = score_and_information(beta, x, n * p, n, t, c)
    np.testing.assert_allclose(observed_at_mean, fisher, rtol=1e-9)


def test_simulated_data_recover_known_coefficients_at_the_nominal_rate():
    # Each coefficient's interval covers its true value in Binomial(1000, 0.95) of 1000
    # independent replications if the intervals are right; the bounds below hold that
    # count with probability 1 − 1e-7 each (and the seed is fixed).
    rng = np.random.default_rng(20261123)
    beta = np.array([-1.2, 0.7, -0.5, 0.25])
    design = ForcedResponse()
    reps = 1000
    covered = np.zeros(len(beta), dtype=int)
    for _ in range(reps):
        m, yes, n = simulated_patterns(rng, beta, design.t, design.c, 150)
        res = fit(m, yes, n, t=design.t, c=design.c)
        covered += [
            c.ci_low <= math.exp(b) <= c.ci_high
            for c, b in zip(res.coefficients, beta, strict=True)
        ]
    low, high = stats.binom.ppf(1e-7, reps, 0.95), stats.binom.isf(1e-7, reps, 0.95)
    assert (low, high) == (911, 982)
    assert np.all((low <= covered) & (covered <= high)), covered


def test_result_reports_odds_ratios_their_intervals_and_a_readable_table():
    res = fit(design_matrix({"group": ["a", "b"]}), [300, 450], [1000, 1000], t=0.5, c=0.25)
    coef = res["group[b]"]
    assert coef.odds_ratio == pytest.approx(6.0)
    assert coef.ci_low == pytest.approx(math.exp(coef.estimate - 1.959964 * coef.std_error))
    assert res.ci(0.9)["group[b]"][0] > coef.ci_low
    text = repr(res)
    assert "group[b]" in text and "odds ratio" in text and "n = 2000" in text
    with pytest.raises(KeyError):
        res["nothing"]


def test_patterns_without_respondents_are_ignored():
    m = design_matrix({"group": ["a", "b", "c"]})
    with_empty = fit(m.rows[:, :2], [300, 450, 0], [1000, 1000, 0], t=0.5, c=0.25)
    without = fit(m.rows[:2, :2], [300, 450], [1000, 1000], t=0.5, c=0.25)
    np.testing.assert_allclose(with_empty.params, without.params)
    assert with_empty.n_patterns == 2


def test_a_covariate_that_never_varies_is_refused_by_name():
    m = design_matrix({"group": ["a", "b", "a"], "age": [20, 20, 20]})
    with pytest.raises(ValueError, match="cannot be told apart.*age"):
        fit(m, [10, 20, 30], [50, 50, 50], t=0.5, c=0.25)


def test_fewer_patterns_than_coefficients_is_refused():
    m = design_matrix({"group": ["a", "b", "c"]})
    with pytest.raises(ValueError, match="3 coefficients but .* only 2"):
        fit(m, [10, 20, 0], [50, 50, 0], t=0.5, c=0.25)


def test_separation_is_refused_with_a_clear_message():
    m = design_matrix({"group": ["a", "b"]})
    with pytest.raises(ValueError, match="at infinity"):
        fit(m, [0, 30], [50, 50], t=1.0, c=0.0)
    # With coins a group whose yes rate is below c also has its maximum at q = 0.
    with pytest.raises(ValueError, match="at infinity"):
        fit(m, [5, 30], [100, 100], t=0.5, c=0.25)


@pytest.mark.parametrize(
    ("yes", "n", "message"),
    [
        ([10, 60], [50, 50], "0 <= yes <= n"),
        ([-1, 10], [50, 50], "0 <= yes <= n"),
        ([2.5, 10], [50, 50], "whole numbers"),
        ([math.nan, 10], [50, 50], "finite"),
        ([10, 10], [50, math.inf], "finite"),
        ([10], [50], "one yes count"),
    ],
)
def test_bad_counts_are_refused(yes, n, message):
    m = design_matrix({"group": ["a", "b"]})
    with pytest.raises(ValueError, match=message):
        fit(m, yes, n, t=0.5, c=0.25)


@pytest.mark.parametrize(
    ("t", "c", "message"),
    [(0.0, 0.5, "t = 0"), (0.6, 0.5, "probabilities"), (0.5, -0.1, "probabilities")],
)
def test_bad_designs_are_refused(t, c, message):
    with pytest.raises(ValueError, match=message):
        fit(design_matrix({"group": ["a", "b"]}), [10, 20], [50, 50], t=t, c=c)


def test_bad_level_and_wrong_number_of_names_are_refused():
    m = design_matrix({"group": ["a", "b"]})
    with pytest.raises(ValueError, match="level"):
        fit(m, [20, 30], [50, 50], t=0.5, c=0.25, level=1.5)
    with pytest.raises(ValueError, match="3 names for 2 columns"):
        fit(m.rows, [20, 30], [50, 50], t=0.5, c=0.25, names=["a", "b", "c"])
