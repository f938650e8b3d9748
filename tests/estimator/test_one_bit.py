"""Duchi et al.'s one-bit mechanism for a bounded mean: ε, the law of the report, the
unbiased mean and its interval."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from estimator import one_bit
from estimator.designs import Laplace, matrix_epsilon
from estimator.one_bit import OneBitMean


def test_examples_in_docstrings_run():
    assert doctest.testmod(one_bit).failed == 0


@pytest.mark.parametrize("epsilon", [0.1, 1.0, math.log(3), 5.0])
def test_epsilon_is_the_parameter_and_is_attained_at_the_bounds(epsilon):
    d = OneBitMean(epsilon=epsilon, lower=-3, upper=7)
    matrix = np.array([d.likelihood(0), d.likelihood(1)])
    assert matrix_epsilon(matrix) == pytest.approx(epsilon, rel=1e-9)
    assert d.p_one(7) / d.p_one(-3) == pytest.approx(math.exp(epsilon))


def test_the_two_step_sampler_has_the_stated_law():
    """Seeded: rounding at random then keeping or flipping gives P(1 | x) = c + t·u."""
    d = OneBitMean(epsilon=1.0, lower=0, upper=4)
    rng = np.random.default_rng(5)
    for x in range(5):
        reports = d.simulate(np.full(200_000, x), rng)
        assert reports.mean() == pytest.approx(float(d.p_one(x)), abs=0.005)


def test_the_mean_is_unbiased_and_covered():
    """Seeded: 400 surveys of 500 from a skewed distribution on 0…10."""
    d = OneBitMean(epsilon=1.0, lower=0, upper=10)
    rng = np.random.default_rng(9)
    shares = 0.7 ** np.arange(11)
    shares /= shares.sum()
    truth = float(shares @ np.arange(11))
    estimates, hits = [], 0
    for _ in range(400):
        reports = d.simulate(rng.choice(11, size=500, p=shares), rng)
        est = d.estimate(np.bincount(reports, minlength=2))
        estimates.append(est.estimate_unbiased)
        low, high = est.ci()
        hits += low <= truth <= high
    assert np.mean(estimates) == pytest.approx(truth, abs=0.1)
    assert 0.92 <= hits / 400 <= 0.98


def test_the_laplace_preview_and_the_design_agree_on_the_sample_size():
    laplace = Laplace(epsilon=0.5, lower=0, upper=10)
    preview = laplace.one_bit_comparison(0.5)
    assert OneBitMean(epsilon=0.5, lower=0, upper=10).sample_size(0.5) == preview["one_bit_n"]


def test_no_reports_no_estimate_and_bad_input_is_named():
    d = OneBitMean()
    assert d.estimate([0, 0]).estimate is None and d.estimate([0, 0]).ci() is None
    with pytest.raises(ValueError, match="one-bit report"):
        d.check_report(2)
    with pytest.raises(ValueError, match="epsilon"):
        OneBitMean(epsilon=0)
    with pytest.raises(ValueError, match="lower"):
        OneBitMean(lower=5, upper=5)
