"""Regression additions: a likelihood-ratio p-value per term and standard errors from the
outer product of gradients beside those from the observed information."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from estimator.regression import design_matrix, fit, log_likelihood


def simulated(seed: int, n: int = 4000):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 40, n)
    group = rng.integers(0, 2, n)
    truth = rng.random(n) < 1 / (1 + np.exp(-(-2 + 0.05 * (age - 25) + 0.8 * group)))
    reports = rng.random(n) < 0.25 + 0.5 * truth
    return age, group, reports


def test_opg_equals_observed_information_in_a_saturated_model():
    m = design_matrix({"group": ["a", "b", "c"]})
    res = fit(m, yes=[300, 450, 380], n=[1000, 1000, 900], t=0.5, c=0.25)
    for coef in res.coefficients:
        assert coef.std_error_opg == pytest.approx(coef.std_error, rel=1e-8)


def test_opg_and_observed_standard_errors_differ_but_agree_roughly():
    """Each respondent their own row: both estimate the same variance, not equally."""
    age, group, reports = simulated(5)
    m = design_matrix({"age": age, "group": group})
    res = fit(m, yes=reports.astype(int), n=np.ones(len(age)), t=0.5, c=0.25)
    ratios = [c.std_error_opg / c.std_error for c in res.coefficients]
    assert all(0.85 < r < 1.15 for r in ratios)
    assert any(abs(r - 1) > 1e-4 for r in ratios)


def test_lr_p_value_is_the_refit_without_the_term():
    age, group, reports = simulated(6)
    m = design_matrix({"age": age, "group": group})
    yes, n = reports.astype(int), np.ones(len(age))
    res = fit(m, yes=yes, n=n, t=0.5, c=0.25)
    without = fit(design_matrix({"age": age}), yes=yes, n=n, t=0.5, c=0.25)
    stat = 2 * (res.log_likelihood - without.log_likelihood)
    assert res["group"].lr_p_value == pytest.approx(stats.chi2.sf(stat, 1), rel=1e-6)
    assert math.isnan(res["(Intercept)"].lr_p_value)
    # Wald and LR agree in a large sample.
    for name in ("age", "group"):
        assert math.log(res[name].lr_p_value) == pytest.approx(
            math.log(res[name].p_value), rel=0.25
        )
    assert res.log_likelihood == pytest.approx(
        log_likelihood(res.params, m.rows, yes, n, 0.5, 0.25)
    )
