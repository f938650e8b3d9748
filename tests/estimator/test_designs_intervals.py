"""Intervals that never claim false certainty, and inputs that fail clearly (issue 15)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from estimator.designs import DirectBinary, ForcedResponse, Mirrored, UnrelatedQuestion
from estimator.intervals import (
    CONTRADICTION_MESSAGE,
    INTERVAL_METHODS,
    check_method,
    lambda_interval,
)
from estimator.randomized_response import optimal_design

DESIGNS = [
    ForcedResponse(),
    ForcedResponse(p_truth=0.2, p_yes=0.9),
    Mirrored(p=0.9),
    Mirrored(p=0.3),
    UnrelatedQuestion(p_truth=0.7, pi=0.05),
    DirectBinary(),
]


@pytest.mark.parametrize("design", DESIGNS, ids=repr)
@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("n", [1, 20, 1000])
def test_no_interval_has_zero_width_and_every_one_holds_the_estimate(design, method, n):
    for level in (0.5, 0.95, 0.999):
        low, high = design.interval(np.arange(n + 1), n, level, method)
        assert np.all(high - low > 0)
        estimates = np.clip((np.arange(n + 1) / n - design.c) / design.t, 0, 1)
        assert np.all((low <= estimates + 1e-12) & (estimates - 1e-12 <= high))


def test_reports_below_what_the_design_allows_give_a_one_sided_bound_and_say_so():
    est = ForcedResponse().estimate(10, 100)
    low, high = est.ci()
    assert low == 0.0 and 0 < high < 0.2
    assert est.contradicts_design() and est.warning() == CONTRADICTION_MESSAGE
    assert "contradict the design" in est.warning()
    plausible = ForcedResponse().estimate(30, 100)
    assert not plausible.contradicts_design() and plausible.warning() is None


def test_reports_above_what_the_design_allows_give_a_lower_bound():
    est = ForcedResponse().estimate(95, 100)
    low, high = est.ci(0.95, "exact")
    assert high == 1.0 and 0.5 < low < 1.0 and est.contradicts_design(0.95, "exact")


def test_samples_at_q_zero_never_collapse_to_a_zero_width_interval():
    design, n = ForcedResponse(), 1000
    rng = np.random.default_rng(1)
    k = rng.binomial(n, design.lambda_for(0.0), size=20_000)
    low, high = design.interval(k, n)
    assert np.all(high > low)
    # 2.5 % of these samples used to give (0, 0); they now keep covering q = 0.
    assert np.mean(low == 0) >= 0.95


def test_wilson_reaches_exactly_one_at_k_equal_n_and_zero_at_zero():
    low, high = lambda_interval(20, 20, 0.95, "wilson")
    assert high == 1.0
    assert lambda_interval(0, 20, 0.95, "wilson")[0] == 0.0
    low, high = DirectBinary().estimate(20, 20).ci()
    assert high == 1.0 and DirectBinary().estimate(20, 20).estimate == 1.0 and low < 1


def test_bayesian_tail_with_vanishing_posterior_mass_inside_the_design():
    # The mass of Beta(1, 1001) on [0.4999995, 0.5000005] is about 1e-302.
    low, high = ForcedResponse(1e-6, 0.5).estimate(0, 1000).ci(0.95, "uniform_hpd")
    assert low == 0.0 and high == pytest.approx(0.94995, abs=1e-5)


def test_the_uniform_prior_hpd_interval_keeps_its_old_name_as_an_alias():
    est = ForcedResponse().estimate(300, 1000)
    assert est.ci(0.9, "jeffreys") == est.ci(0.9, "uniform_hpd")
    assert check_method("jeffreys") == "uniform_hpd"


def test_optimal_design_keeps_a_large_epsilon_finite_and_exact():
    assert optimal_design(36).epsilon == pytest.approx(36, rel=1e-12)
    assert optimal_design(30).epsilon == pytest.approx(30, rel=1e-12)
    assert optimal_design(36).is_private
    assert optimal_design(math.log(3)) == Mirrored(p=0.75)
    with pytest.raises(ValueError, match="too large"):
        optimal_design(800)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ForcedResponse().estimate(2.7, 10), "yes_count must be a finite whole number"),
        (lambda: ForcedResponse().estimate(5, math.inf), "n must be a finite whole number"),
        (lambda: ForcedResponse().estimate(None, 10), "yes_count must be a whole number"),
        (lambda: ForcedResponse().estimate(5, None), "counts must be a list"),
        (lambda: ForcedResponse().estimate(math.nan, 10), "yes_count must be a finite"),
        (lambda: ForcedResponse().estimate(True, 10), "yes_count must be a whole number"),
        (lambda: ForcedResponse().estimate(5, 10).ci(0.95, "wilsn"), "method must be one of"),
        (lambda: lambda_interval(5, 10, 0.95, "wilsn"), "method must be one of"),
        (lambda: ForcedResponse().estimate(5, 10).ci(1.5), "level must be"),
        (lambda: lambda_interval(5, 10, 1.5), "level must be"),
        (lambda: ForcedResponse().estimate(5, 10).ci("0.9"), "level must be"),
        (lambda: ForcedResponse(p_truth="0.5"), "p_truth must be a number"),
        (lambda: ForcedResponse().posterior_yes(0.5, report=True), "report must be 0 or 1"),
        (lambda: ForcedResponse().estimate(5, 10, population=9), "population"),
        (lambda: ForcedResponse().estimate(5, 10, population=0), "population"),
        (lambda: optimal_design("1"), "epsilon must be a positive number"),
    ],
)
def test_bad_inputs_raise_clear_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_integral_floats_from_json_are_accepted_as_counts():
    assert ForcedResponse().estimate(3.0, 10.0).yes_count == 3


def test_finite_population_correction_shrinks_only_the_sampling_part():
    design = ForcedResponse()
    whole = design.estimate(400, 1000)
    assert design.estimate(400, 1000, population=10**9).std_error == pytest.approx(
        whole.std_error, rel=1e-6
    )
    census = design.estimate(400, 1000, population=1000)
    lam, q = 0.4, 0.3
    expected = math.sqrt((lam * (1 - lam) - 0.25 * q * (1 - q)) / 1000) / 0.5
    assert census.std_error == pytest.approx(expected)
    low, high = census.ci()
    wide_low, wide_high = whole.ci()
    assert wide_low < low < 0.3 < high < wide_high


def test_finite_population_standard_error_matches_simulation():
    design, population, n = ForcedResponse(), 2000, 1000
    rng = np.random.default_rng(17)
    people = np.zeros(population, dtype=int)
    people[:600] = 1  # q = 0.3 exactly
    estimates = []
    for _ in range(4000):
        sample = rng.choice(people, size=n, replace=False)
        estimates.append(
            design.estimate(int(design.simulate(sample, rng).sum()), n).estimate_unbiased
        )
    predicted = design.estimate(400, n, population=population).std_error
    assert np.std(estimates) == pytest.approx(predicted, rel=0.06)
