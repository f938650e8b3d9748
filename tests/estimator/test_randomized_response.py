from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from estimator.designs import DirectBinary
from estimator.planning import n_for_half_width, variance_price
from estimator.randomized_response import (
    CI_METHODS,
    NO_DATA_MESSAGE,
    ForcedResponse,
    Mirrored,
    UnrelatedQuestion,
    design_from_params,
    lambda_interval,
    optimal_design,
    total_epsilon,
)


def test_classic_two_coins_has_epsilon_ln3():
    assert abs(ForcedResponse().epsilon - math.log(3)) < 1e-12


def test_classic_two_coins_estimator_is_2p_minus_half():
    est = ForcedResponse().estimate(yes_count=400, n=1000)
    assert est.estimate_unbiased == pytest.approx(2 * 0.4 - 0.5)
    assert est.estimate == pytest.approx(0.3)


def test_unbiased_and_clipped_estimates_differ_below_zero():
    est = ForcedResponse().estimate(yes_count=10, n=100)
    assert est.estimate_unbiased == pytest.approx(-0.3)
    assert est.estimate == 0.0


def test_wilson_interval_is_scipys_mapped_through_q():
    k, n = 321, 1000
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = ForcedResponse().estimate(k, n).ci(0.95, "wilson")
    assert low == pytest.approx(2 * ci.low - 0.5, abs=1e-12)
    assert high == pytest.approx(2 * ci.high - 0.5, abs=1e-12)


def test_standard_error_matches_formula():
    est = ForcedResponse().estimate(300, 1000)
    assert est.std_error == pytest.approx(math.sqrt(0.3 * 0.7 / 1000) / 0.5)


def test_rr_package_reference_value():
    # rr's forced design p = 2/3, p1 = p0 = 1/6: p_truth = 2/3, p_yes = 1/2.
    est = ForcedResponse(p_truth=2 / 3, p_yes=0.5).estimate(831, 2435)
    assert est.estimate == pytest.approx(0.261910, abs=1e-6)
    assert est.std_error == pytest.approx(0.014413, abs=1e-6)


def test_a_report_impossible_under_one_answer_means_no_privacy():
    assert ForcedResponse(p_truth=0.5, p_yes=1.0).epsilon == math.inf
    assert ForcedResponse(p_truth=1.0).epsilon == math.inf
    assert Mirrored(p=1.0).epsilon == math.inf


def test_mirrored_epsilon():
    assert Mirrored(p=0.75).epsilon == pytest.approx(math.log(3))


def test_unrelated_question_affine_inverse():
    d = UnrelatedQuestion(p_truth=0.5, pi=0.0833)
    assert d.t == pytest.approx(0.5)
    assert d.c == pytest.approx(0.5 * 0.0833)


def test_posterior_with_defaults_is_three_quarters():
    assert ForcedResponse().posterior_yes(0.5) == pytest.approx(0.75)


def test_composition_adds_epsilons():
    assert total_epsilon([ForcedResponse()] * 3) == pytest.approx(3 * math.log(3))


def test_no_reports_gives_no_estimate_not_an_error():
    est = ForcedResponse().estimate(0, 0)
    assert est.estimate is None and est.std_error is None and est.ci() is None


@pytest.mark.parametrize("level", [0, 1, -0.5, 1.5, float("nan")])
def test_level_outside_unit_interval_is_rejected(level):
    with pytest.raises(ValueError, match="level"):
        ForcedResponse().estimate(10, 20).ci(level)


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="method"):
        ForcedResponse().estimate(10, 20).ci(0.95, "bootstrap")


def test_design_from_params_rejects_bad_probabilities():
    with pytest.raises(ValueError, match="p_truth"):
        design_from_params("forced_response", {"p_truth": 1.5, "p_yes": 0.5})


def test_simulation_matches_design_frequencies():
    rng = np.random.default_rng(7)
    design = ForcedResponse()
    reports = design.simulate(np.ones(200_000, dtype=int), rng)
    assert stats.binomtest(int(reports.sum()), reports.size, 0.75).pvalue > 1e-6


def test_mirrored_epsilon_matches_opendp_reference_value():
    assert Mirrored(p=0.75).epsilon == pytest.approx(1.0986122886681098, abs=1e-15)


@pytest.mark.parametrize(("k", "n"), [(0, 20), (7, 20), (20, 20), (321, 1000), (9999, 10000)])
@pytest.mark.parametrize("method", ["wilson", "exact"])
def test_lambda_intervals_match_scipys_binomtest(k, n, method):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method=method)
    low, high = lambda_interval(k, n, 0.9, method)
    assert (float(low), float(high)) == pytest.approx((ci.low, ci.high), abs=1e-9)


@pytest.mark.parametrize("method", CI_METHODS)
def test_vectorised_intervals_equal_one_at_a_time(method):
    design, n = UnrelatedQuestion(p_truth=0.6, pi=0.2), 50
    lows, highs = design.interval(np.arange(n + 1), n, 0.95, method)
    for k in (0, 4, 25, 50):
        assert design.estimate(k, n).ci(0.95, method) == pytest.approx((lows[k], highs[k]))


def test_wald_interval_is_the_textbook_formula_mapped():
    low, high = ForcedResponse().estimate(400, 1000).ci(0.95, "wald")
    half = 1.959963984540054 * math.sqrt(0.4 * 0.6 / 1000)
    assert (low, high) == pytest.approx((2 * (0.4 - half) - 0.5, 2 * (0.4 + half) - 0.5))


def test_bayesian_interval_reaches_zero_when_the_estimate_is_at_zero():
    low, high = ForcedResponse().estimate(240, 1000).ci(0.95, "jeffreys")
    assert low == 0.0 and 0 < high < 0.1


def test_bayesian_interval_reaches_one_when_the_estimate_is_at_one():
    low, high = ForcedResponse().estimate(20, 20).ci(0.95, "jeffreys")
    assert high == 1.0 and 0.5 < low < 1


def test_bayesian_interval_is_highest_density_in_the_interior():
    design, k, n = ForcedResponse(), 350, 1000
    low, high = design.estimate(k, n).ci(0.95, "jeffreys")
    posterior = stats.beta(k + 1, n - k + 1)
    ends = design.lambda_for(np.array([low, high]))
    assert posterior.pdf(ends[0]) == pytest.approx(posterior.pdf(ends[1]), rel=1e-6)
    mass = posterior.cdf(ends[1]) - posterior.cdf(ends[0])
    assert mass / (posterior.cdf(0.75) - posterior.cdf(0.25)) == pytest.approx(0.95, abs=1e-6)


def test_bayesian_interval_stays_finite_when_the_data_contradict_every_q():
    # 10 % yes is impossible when λ >= 1/4 for every q: the posterior mass in range underflows.
    low, high = ForcedResponse().estimate(1000, 10000).ci(0.95, "jeffreys")
    assert low == 0.0 and 0 < high < 0.01


def test_intervals_need_at_least_one_report():
    with pytest.raises(ValueError, match="n >= 1"):
        lambda_interval(0, 0)


def test_no_reports_says_why():
    assert ForcedResponse().estimate(0, 0).message == NO_DATA_MESSAGE
    assert ForcedResponse().estimate(1, 2).message is None


def test_more_yes_than_reports_is_rejected():
    with pytest.raises(ValueError, match="yes_count"):
        ForcedResponse().estimate(5, 4)


def test_all_yes_and_all_no_give_estimates_at_the_ends():
    assert ForcedResponse().estimate(0, 50).estimate == 0.0
    assert ForcedResponse().estimate(50, 50).estimate == 1.0
    # 50 "yes" of 50 is impossible when P(yes) <= 3/4: a one-sided bound, never (1, 1).
    low, high = ForcedResponse().estimate(50, 50).ci()
    assert 0.5 < low < 1.0 and high == 1.0
    assert ForcedResponse().estimate(50, 50).contradicts_design()


def test_planner_classic_coins_need_four_times_the_direct_sample():
    """One planner (estimator.planning) for every binary design, direct included."""
    coins, direct = ForcedResponse(), DirectBinary()
    assert n_for_half_width(coins.t, coins.c, 0.05) == 1537
    assert n_for_half_width(direct.t, direct.c, 0.05) == 385
    assert variance_price(coins.t, coins.c) == pytest.approx(4.0)


def test_planned_sample_size_is_the_smallest_reaching_the_half_width():
    design, h = UnrelatedQuestion(p_truth=0.7, pi=0.1), 0.03
    n = n_for_half_width(design.t, design.c, h, level=0.9, q=0.2)
    lam = design.lambda_for(0.2)

    def half_width(m: int) -> float:
        return 1.6448536269514722 * math.sqrt(lam * (1 - lam) / m) / design.t

    assert half_width(n) <= h < half_width(n - 1)


def test_variance_price_at_a_known_prevalence():
    # λ = 1/4 + q/2; at q = 0.1: λ = 0.3, price = 0.21 / (0.25 · 0.09).
    coins = ForcedResponse()
    assert variance_price(coins.t, coins.c, q=0.1) == pytest.approx(0.21 / 0.0225)
    assert variance_price(coins.t, coins.c, q=0.0) == math.inf


@pytest.mark.parametrize("half_width", [0, -0.1, 1.5])
def test_planner_rejects_impossible_half_widths(half_width):
    with pytest.raises(ValueError, match="half_width"):
        n_for_half_width(ForcedResponse().t, ForcedResponse().c, half_width)


def test_optimal_design_for_ln3_is_warners_three_quarters():
    assert optimal_design(math.log(3)) == Mirrored(p=0.75)
    assert optimal_design(math.inf) == Mirrored(p=1.0)


@pytest.mark.parametrize("epsilon", [0, -1, float("nan")])
def test_optimal_design_needs_a_positive_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        optimal_design(epsilon)


def test_posterior_after_a_no_and_at_certain_priors():
    design = ForcedResponse()
    assert design.posterior_yes(0.5, report=0) == pytest.approx(0.25)
    assert design.posterior_yes(0.0) == 0.0 and design.posterior_yes(1.0) == 1.0
    assert ForcedResponse(p_yes=1.0).posterior_yes(0.3, report=0) == 0.0


def test_posterior_rejects_bad_priors_and_reports():
    with pytest.raises(ValueError, match="prior"):
        ForcedResponse().posterior_yes(1.2)
    with pytest.raises(ValueError, match="report"):
        ForcedResponse().posterior_yes(0.5, report=2)


def test_composition_with_a_non_private_question_is_infinite():
    assert total_epsilon([ForcedResponse(), ForcedResponse(p_truth=1.0)]) == math.inf
    assert total_epsilon([]) == 0.0


def test_design_from_params_rejects_unknown_names_and_parameters():
    with pytest.raises(ValueError, match="unknown design"):
        design_from_params("coin", {})
    with pytest.raises(ValueError, match="unknown parameter"):
        design_from_params("mirrored", {"p": 0.7, "p_yes": 0.5})


def test_a_design_that_ignores_the_truth_is_rejected():
    with pytest.raises(ValueError, match="nothing can be estimated"):
        Mirrored(p=0.5)


@pytest.mark.parametrize(
    "design",
    [ForcedResponse(p_truth=0.6, p_yes=0.3), Mirrored(p=0.8), UnrelatedQuestion(0.5, 0.0833)],
)
def test_every_design_simulates_its_response_matrix(design):
    rng = np.random.default_rng(42)
    for truth in (0, 1):
        reports = design.simulate(np.full(100_000, truth), rng)
        expected = design.response_matrix[1, truth]
        assert stats.binomtest(int(reports.sum()), reports.size, expected).pvalue > 1e-6


@pytest.mark.parametrize(
    ("design", "k", "n", "level"),
    [
        (ForcedResponse(p_truth=1.0, p_yes=0.023), 1, 20, 0.52),
        (ForcedResponse(p_truth=0.672, p_yes=0.074), 578, 3000, 0.61),
        (Mirrored(p=0.881), 3, 100, 0.6),
    ],
)
def test_bayesian_interval_survives_tail_masses_too_small_for_scipy(design, k, n, level):
    low, high = design.estimate(k, n).ci(level, "jeffreys")
    assert 0 <= low <= design.estimate(k, n).estimate <= high <= 1


@pytest.mark.parametrize("yes_count", [float("nan"), float("inf"), 2.5])
def test_an_interval_of_a_count_that_is_not_a_count_names_it(yes_count):
    with pytest.raises(ValueError, match="yes_count must be a finite whole number"):
        ForcedResponse().interval(yes_count, 10)
    with pytest.raises(ValueError, match="n must be a finite whole number"):
        lambda_interval(3, yes_count)


def test_every_interval_method_offered_is_one_the_maths_names():
    """The OpenAPI enum lists uniform_hpd, not the old alias jeffreys."""
    assert "uniform_hpd" in CI_METHODS and "jeffreys" not in CI_METHODS
