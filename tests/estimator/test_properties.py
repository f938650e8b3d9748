"""Property tests of the maths module (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from estimator.designs import (
    ChoiceForcedResponse,
    Crosswise,
    KRandomizedResponse,
    Laplace,
    matrix_epsilon,
)
from estimator.planning import n_for_half_width
from estimator.randomized_response import (
    CI_METHODS,
    BinaryDesign,
    ForcedResponse,
    Mirrored,
    UnrelatedQuestion,
    optimal_design,
)

# Design parameters on a 1/1000 grid: what people configure, without the float extremes
# (1 − 1e-200 == 1) that would turn a finite ε into ∞.
probability = st.integers(0, 1000).map(lambda i: i / 1000)
p_truth = st.integers(50, 1000).map(lambda i: i / 1000)
designs = st.one_of(
    st.builds(ForcedResponse, p_truth=p_truth, p_yes=probability),
    st.builds(Mirrored, p=probability.filter(lambda p: abs(p - 0.5) >= 0.05)),
    st.builds(UnrelatedQuestion, p_truth=p_truth, pi=probability),
    st.builds(Crosswise, p=probability.filter(lambda p: abs(p - 0.5) >= 0.05)),
)
options = st.integers(2, 10)
krr = st.builds(KRandomizedResponse, epsilon=st.integers(1, 500).map(lambda i: i / 100), k=options)
dice = options.flatmap(
    lambda k: st.builds(
        lambda t, weights: ChoiceForcedResponse(
            p_truth=t, p_forced=tuple(w / sum(weights) for w in weights)
        ),
        p_truth,
        st.lists(st.integers(1, 20), min_size=k, max_size=k),
    )
)
choice_designs = st.one_of(krr, dice)
counts = st.integers(1, 3000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
methods = st.sampled_from(CI_METHODS)
levels = st.floats(0.5, 0.999)
TOLERANCE = 1e-9

property_settings = settings(deadline=None, max_examples=60)


def same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@property_settings
@given(t=p_truth, p=probability)
def test_epsilon_is_symmetric_in_relabelling_yes_and_no(t, p):
    assert same(ForcedResponse(t, p).epsilon, ForcedResponse(t, 1 - p).epsilon)
    assert same(UnrelatedQuestion(t, p).epsilon, UnrelatedQuestion(t, 1 - p).epsilon)
    if p != 0.5:
        assert same(Mirrored(p).epsilon, Mirrored(1 - p).epsilon)


@property_settings
@given(design=designs, n=st.integers(1, 40), q=probability)
def test_unbiased_estimate_has_expectation_q_exactly(design, n, q):
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, design.lambda_for(q))
    estimates = [design.estimate(i, n).estimate_unbiased for i in k]
    expectation = float(np.dot(pmf, estimates))
    assert expectation == pytest.approx(q, abs=1e-9)


@property_settings
@given(design=designs, count=counts, level=levels, method=methods)
def test_interval_contains_the_clipped_estimate(design, count, level, method):
    est = design.estimate(*count)
    low, high = est.ci(level, method)
    assert 0 <= low <= high <= 1
    assert low - TOLERANCE <= est.estimate <= high + TOLERANCE


@property_settings
@given(
    design=designs,
    count=counts,
    levels=st.tuples(st.floats(0.01, 0.999), st.floats(0.01, 0.999)),
    method=methods,
)
def test_interval_grows_with_the_level(design, count, levels, method):
    narrow, wide = sorted(levels)
    est = design.estimate(*count)
    (low_n, high_n), (low_w, high_w) = est.ci(narrow, method), est.ci(wide, method)
    assert low_w <= low_n + TOLERANCE and high_n <= high_w + TOLERANCE


@property_settings
@given(p=st.floats(0.5, 1.0, exclude_min=True), count=counts, level=levels, method=methods)
def test_mirrored_and_forced_response_with_one_matrix_give_one_estimate(p, count, level, method):
    mirrored, forced = Mirrored(p=p), ForcedResponse(p_truth=2 * p - 1, p_yes=0.5)
    assert np.allclose(mirrored.response_matrix, forced.response_matrix, atol=1e-12)
    a, b = mirrored.estimate(*count), forced.estimate(*count)
    assert a.estimate == pytest.approx(b.estimate, abs=1e-9)
    assert a.std_error == pytest.approx(b.std_error, abs=1e-9)
    assert a.ci(level, method) == pytest.approx(b.ci(level, method), abs=1e-7)


@property_settings
@given(design=designs, prior=st.floats(0.0, 1.0))
def test_posterior_odds_move_by_at_most_e_to_the_epsilon(design: BinaryDesign, prior):
    for report in (0, 1):
        posterior = design.posterior_yes(prior, report)
        assert 0 <= posterior <= 1
        if 0.001 < prior < 0.999 and design.is_private:
            odds_ratio = (posterior / (1 - posterior)) / (prior / (1 - prior))
            assert abs(math.log(odds_ratio)) <= design.epsilon + 1e-9


@property_settings
@given(t=p_truth, p_yes=probability, half_width=st.floats(0.01, 0.2))
def test_no_design_with_the_same_epsilon_needs_fewer_respondents_than_the_optimal(
    t, p_yes, half_width
):
    design = ForcedResponse(t, p_yes)
    if not design.is_private:
        return
    best = optimal_design(design.epsilon)
    assert best.epsilon == pytest.approx(design.epsilon)
    assert n_for_half_width(best.t, best.c, half_width) <= n_for_half_width(
        design.t, design.c, half_width
    )


@property_settings
@given(design=choice_designs, data=st.data())
def test_choice_designs_are_stochastic_affine_and_invert_exactly(design, data):
    matrix = design.response_matrix
    assert np.allclose(matrix.sum(axis=0), 1) and (matrix >= 0).all()
    assert same(matrix_epsilon(matrix), design.epsilon)
    weights = data.draw(st.lists(st.integers(0, 20), min_size=design.k, max_size=design.k))
    if sum(weights) == 0:
        return
    truth = np.array(weights) / sum(weights)
    # E[λ̂] = Mπ, and the unbiased estimate maps it back to π exactly.
    assert np.allclose((matrix @ truth - design.c) / design.t, truth, atol=1e-12)


@property_settings
@given(design=choice_designs, data=st.data(), level=levels, method=methods)
def test_every_option_interval_is_honest(design, data, level, method):
    counts = data.draw(st.lists(st.integers(0, 400), min_size=design.k, max_size=design.k))
    if sum(counts) == 0:
        return
    est = design.estimate(counts)
    assert est.estimate.sum() == pytest.approx(1.0) and (est.estimate >= 0).all()
    for option, (low, high) in zip(est.options, est.ci(level, method), strict=True):
        assert 0 <= low < high <= 1
        assert low - TOLERANCE <= option.estimate <= high + TOLERANCE


@property_settings
@given(
    epsilon=st.integers(1, 400).map(lambda i: i / 100),
    lower=st.integers(-50, 50),
    width=st.integers(1, 30),
)
def test_laplace_reports_are_never_more_than_e_to_the_epsilon_apart(epsilon, lower, width):
    design = Laplace(epsilon=epsilon, lower=lower, upper=lower + width)
    reports = np.arange(lower - 3 * width - 5, lower + 4 * width + 6)
    truths = np.arange(lower, lower + width + 1)
    pmf = design.noise_pmf(reports[:, None] - truths[None, :])
    assert matrix_epsilon(pmf) == pytest.approx(epsilon, rel=1e-9)


@property_settings
@given(
    design=st.one_of(
        choice_designs,
        st.builds(
            Laplace,
            epsilon=st.integers(1, 300).map(lambda i: i / 100),
            lower=st.integers(-5, 5),
            upper=st.integers(6, 12),
        ),
    ),
    data=st.data(),
)
def test_posterior_odds_between_any_two_true_values_move_by_at_most_e_to_the_epsilon(design, data):
    assume(math.isfinite(design.epsilon))  # with ε = ∞ a report may rule a value out
    size = len(design.true_values)
    weights = data.draw(st.lists(st.integers(1, 50), min_size=size, max_size=size))
    prior = np.array(weights) / sum(weights)
    if design.kind == "number":
        report = data.draw(st.integers(design.lower - 20, design.upper + 20))
    else:
        report = data.draw(st.integers(0, design.k - 1))
    posterior = design.posterior(prior, report)
    assert posterior.sum() == pytest.approx(1.0)
    shift = np.log(posterior / prior)
    assert shift.max() - shift.min() <= design.epsilon + 1e-9
