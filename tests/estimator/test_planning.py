from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy import stats

from estimator import planning
from estimator.planning import (
    finite_population_correction,
    n_for_half_width,
    n_for_power_one_sample,
    n_for_power_two_sample,
    power_one_sample,
    power_two_sample,
    std_error,
    variance_price,
)
from estimator.randomized_response import ForcedResponse, Mirrored

DEFAULT = (0.5, 0.25)  # the two fair coins: t, c


def test_examples_in_docstrings_run():
    assert doctest.testmod(planning).failed == 0


def test_variance_price_of_the_default_design_at_rare_traits():
    assert variance_price(*DEFAULT, 0.1) == pytest.approx(9.3333, abs=1e-4)
    assert round(variance_price(*DEFAULT, 0.01)) == 77
    assert variance_price(*DEFAULT, 0.0) == math.inf


@pytest.mark.parametrize("design", [ForcedResponse(), ForcedResponse(0.7, 0.3), Mirrored(0.8)])
@pytest.mark.parametrize("q", [0.01, 0.2, 0.5, 0.9])
def test_variance_price_and_half_width_agree(design, q):
    """n for a half-width h is the direct question's n times the variance price."""
    z2 = 1.959963984540054**2
    for h in (0.01, 0.05):
        direct = z2 * q * (1 - q) / h**2
        want = direct * variance_price(design.t, design.c, q)
        assert n_for_half_width(design.t, design.c, h, q=q) == pytest.approx(want, abs=1)
    worst = z2 * 0.25 / 0.03**2 * variance_price(design.t, design.c)
    assert n_for_half_width(design.t, design.c, 0.03) == pytest.approx(worst, abs=1)


@pytest.mark.parametrize("half_width", [1e-300, 1e-6, 0, -0.1, 1.5, float("nan"), True])
def test_an_impossible_half_width_is_a_value_error_naming_it(half_width):
    with pytest.raises(ValueError, match="half_width"):
        n_for_half_width(0.5, 0.25, half_width)


def test_power_follows_rr_power_rr_test():
    # rr: se from the information c²(1/(cπ + d) + 1/(1 − cπ − d)) at the null and at the
    # alternative; power = P(above null + qnorm(1 − α/2)·se_null) + P(below null − …).
    t, c, q, q0, n = 0.5, 0.25, 0.1, 0.05, 1000

    def se(pi):
        return 1 / math.sqrt(t**2 * (1 / (t * pi + c) + 1 / (1 - t * pi - c)) * n)

    z = stats.norm.isf(0.025)
    expected = stats.norm.sf(q0 + z * se(q0), q, se(q)) + stats.norm.cdf(q0 - z * se(q0), q, se(q))
    assert power_one_sample(t, c, q, n, q_null=q0) == pytest.approx(expected, rel=1e-12)
    one_sided = stats.norm.sf(q0 + stats.norm.isf(0.05) * se(q0), q, se(q))
    got = power_one_sample(t, c, q, n, q_null=q0, alternative="greater")
    assert got == pytest.approx(one_sided, rel=1e-12)
    diff = math.hypot(se(0.3), se(0.2))
    null = math.sqrt(2) * se(0.2)
    expected = stats.norm.sf(z * null, 0.1, diff) + stats.norm.cdf(-z * null, 0.1, diff)
    assert power_two_sample(t, c, 0.3, 0.2, n) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_power_at_the_null_is_the_significance_level(alternative):
    assert power_one_sample(*DEFAULT, 0.2, 500, q_null=0.2, alternative=alternative) == (
        pytest.approx(0.05)
    )
    assert power_two_sample(*DEFAULT, 0.2, 0.2, 500, alternative=alternative) == (
        pytest.approx(0.05)
    )


def test_a_direct_question_gives_the_textbook_one_sample_power():
    q, q0, n = 0.3, 0.25, 400
    z = stats.norm.isf(0.05)
    textbook = stats.norm.sf((q0 + z * math.sqrt(q0 * (1 - q0) / n) - q) / math.sqrt(q * 0.7 / n))
    got = power_one_sample(1.0, 0.0, q, n, q_null=q0, alternative="greater")
    assert got == pytest.approx(textbook)
    assert power_one_sample(1.0, 0.0, 0.0, 50, q_null=0.0) == 0.0  # no variance at all


def test_power_matches_the_rejection_rate_of_the_simulated_test():
    # 20 000 seeded surveys of n = 2000 through the coins; the z test rejects at the rate
    # the normal approximation predicts (5 binomial sd plus 0.01 for the approximation).
    rng = np.random.default_rng(7)
    design, n, q, q0, reps = ForcedResponse(), 2000, 0.12, 0.08, 20_000
    yes = rng.binomial(n, design.lambda_for(q), size=reps)
    q_hat = (yes / n - design.c) / design.t
    se_null = std_error(design.t, design.c, q0, n)
    rate = np.mean(q_hat > q0 + stats.norm.isf(0.05) * se_null)
    predicted = power_one_sample(design.t, design.c, q, n, q_null=q0, alternative="greater")
    assert abs(rate - predicted) < 5 * math.sqrt(0.25 / reps) + 0.01


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_n_for_power_is_the_smallest_n_reaching_the_power(alternative):
    n = n_for_power_one_sample(*DEFAULT, 0.1, power=0.9, q_null=0.05, alternative=alternative)
    assert power_one_sample(*DEFAULT, 0.1, n, 0.05, alternative=alternative) >= 0.9
    assert power_one_sample(*DEFAULT, 0.1, n - 1, 0.05, alternative=alternative) < 0.9
    n = n_for_power_two_sample(*DEFAULT, 0.25, 0.15, power=0.8, alternative=alternative)
    assert power_two_sample(*DEFAULT, 0.25, 0.15, n, alternative=alternative) >= 0.8
    assert power_two_sample(*DEFAULT, 0.25, 0.15, n - 1, alternative=alternative) < 0.8


def test_privacy_costs_respondents_for_the_same_power():
    direct = n_for_power_two_sample(1.0, 0.0, 0.25, 0.15)
    coins = n_for_power_two_sample(*DEFAULT, 0.25, 0.15)
    # Between the variance prices at the two prevalences (5.0 at 0.25, 6.9 at 0.15).
    assert variance_price(*DEFAULT, 0.25) * direct < coins < variance_price(*DEFAULT, 0.15) * direct


def test_a_power_no_sample_size_reaches_is_refused():
    with pytest.raises(ValueError, match="no sample size"):
        n_for_power_one_sample(*DEFAULT, 0.1, q_null=0.1)
    with pytest.raises(ValueError, match="no sample size"):
        n_for_power_one_sample(*DEFAULT, 0.1, q_null=0.2, alternative="greater")


def test_finite_population_correction_shrinks_only_the_sampling_part():
    assert finite_population_correction(100, None) == 1.0
    assert finite_population_correction(100, 1000) == pytest.approx(900 / 999)
    t, c, q = *DEFAULT, 0.3
    assert std_error(t, c, q, 1000, population=10**12) == pytest.approx(
        std_error(t, c, q, 1000), rel=1e-9
    )
    lam = c + t * q
    census = std_error(t, c, q, 1000, population=1000)
    assert census == pytest.approx(math.sqrt((lam * (1 - lam) / t**2 - q * (1 - q)) / 1000))


def test_finite_population_standard_error_matches_simulated_surveys():
    # A fixed population of 3000 with 900 "yes"; 2000 people drawn without replacement
    # answer through the coins. 20 000 seeded surveys: the variance of q̂ is within
    # 5 % (5 sd of a variance estimated from 20 000 draws is 5 %) of the formula's.
    rng = np.random.default_rng(11)
    design, population, n, reps = ForcedResponse(), 3000, 2000, 20_000
    in_sample = rng.hypergeometric(900, population - 900, n, size=reps)
    yes = rng.binomial(in_sample, design.t + design.c) + rng.binomial(n - in_sample, design.c)
    q_hat = (yes / n - design.c) / design.t
    expected = std_error(design.t, design.c, 0.3, n, population) ** 2
    assert abs(q_hat.var() / expected - 1) < 0.05
    assert abs(q_hat.var() / std_error(design.t, design.c, 0.3, n) ** 2 - 1) > 0.05


def test_n_for_half_width_from_a_finite_population_is_the_smallest_enough():
    h, population = 0.05, 2000
    n = n_for_half_width(*DEFAULT, h, q=0.3, population=population)
    z = stats.norm.isf(0.025)
    assert z * std_error(*DEFAULT, 0.3, n, population) <= h
    assert z * std_error(*DEFAULT, 0.3, n - 1, population) > h
    assert n < n_for_half_width(*DEFAULT, h, q=0.3)


def test_a_half_width_even_a_census_cannot_reach_is_refused():
    with pytest.raises(ValueError, match="even asking all 500"):
        n_for_half_width(*DEFAULT, 0.02, population=500)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power_one_sample(0.0, 0.5, 0.1, 100), "t = 0"),
        (lambda: power_one_sample(*DEFAULT, 1.5, 100), "q must be"),
        (lambda: power_one_sample(*DEFAULT, math.nan, 100), "q must be"),
        (lambda: power_one_sample(*DEFAULT, 0.1, 0), "n must be"),
        (lambda: power_one_sample(*DEFAULT, 0.1, 10.5), "n must be"),
        (lambda: power_one_sample(*DEFAULT, 0.1, 100, alpha=0), "alpha"),
        (lambda: power_one_sample(*DEFAULT, 0.1, 100, alternative="bigger"), "alternative"),
        (lambda: power_one_sample(*DEFAULT, 0.1, 100, population=50), "more than the popul"),
        (lambda: power_two_sample(*DEFAULT, 0.1, -0.1, 100), "q_control"),
        (lambda: n_for_power_one_sample(*DEFAULT, 0.1, power=1.0), "power must be"),
        (lambda: n_for_half_width(*DEFAULT, 0.0), "half_width"),
        (lambda: n_for_half_width(*DEFAULT, 0.05, level=95), "level"),
        (lambda: finite_population_correction(10, 1), "population must be"),
    ],
)
def test_bad_inputs_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
