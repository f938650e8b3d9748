"""Regression additions: a likelihood-ratio p-value per term and standard errors from the
outer product of gradients beside those from the observed information."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from estimator.regression import design_matrix, fit, fit_with_randomized_covariate, log_likelihood


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


def _grouped(w, z_report, outcome_report):
    import collections

    counts = collections.Counter(zip(w, z_report, outcome_report, strict=True))
    keys = sorted({(a, b) for a, b, _ in counts})
    yes = np.array([counts[(a, b, True)] for a, b in keys])
    n = yes + np.array([counts[(a, b, False)] for a, b in keys])
    return np.array([k[0] for k in keys]), np.array([int(k[1]) for k in keys]), yes, n


def _population(rng, n):
    w = rng.integers(0, 3, n)
    z = rng.random(n) < 0.3 + 0.1 * w
    x = rng.random(n) < 1 / (1 + np.exp(-(-1.5 + 0.3 * w + 1.0 * z)))
    return w, z, x


def test_a_covariate_asked_directly_gives_the_ordinary_fit():
    """covariate_t = 1, covariate_c = 0: z is seen, so β and γ are the ordinary ones."""
    rng = np.random.default_rng(2)
    w, z, x = _population(rng, 4000)
    reports = rng.random(len(x)) < 0.25 + 0.5 * x
    W, Z, yes, n = _grouped(w, z, reports)
    mixed = fit_with_randomized_covariate(
        design_matrix({"w": W}), Z, yes, n, t=0.5, c=0.25, covariate_t=1, covariate_c=0
    )
    plain = fit(design_matrix({"w": W, "z": Z}), yes, n, t=0.5, c=0.25)
    assert mixed.params == pytest.approx(plain.params, abs=1e-5)
    for a, b in zip(mixed.coefficients, plain.coefficients, strict=True):
        assert a.std_error == pytest.approx(b.std_error, rel=1e-3)
        if b.name != "(Intercept)":
            assert a.lr_p_value == pytest.approx(b.lr_p_value, rel=1e-2, abs=1e-12)


def test_a_randomized_covariate_recovers_its_effect():
    """Seeded: 40 surveys of 5000, both questions by forced response; γ = 1 is covered
    at about the nominal rate and estimated without the attenuation of the naive fit."""
    rng = np.random.default_rng(20261126)
    hits, gammas = 0, []
    for _ in range(40):
        w, z, x = _population(rng, 5000)
        rx = rng.random(len(x)) < 0.25 + 0.5 * x
        rz = rng.random(len(z)) < 0.25 + 0.5 * z
        W, RZ, yes, n = _grouped(w, rz, rx)
        res = fit_with_randomized_covariate(
            design_matrix({"w": W}),
            RZ,
            yes,
            n,
            t=0.5,
            c=0.25,
            covariate_t=0.5,
            covariate_c=0.25,
            covariate_name="z",
        )
        gammas.append(res["z"].estimate)
        hits += res["z"].ci_low <= math.e <= res["z"].ci_high
    assert np.median(gammas) == pytest.approx(1.0, abs=0.15)
    assert hits >= 33
    naive = fit(design_matrix({"w": W, "z": RZ}), yes, n, t=0.5, c=0.25)
    assert naive["z"].estimate < 0.7  # the report of z dilutes its effect


def test_a_randomized_covariate_report_must_be_0_or_1():
    with pytest.raises(ValueError, match="covariate_report"):
        fit_with_randomized_covariate(
            design_matrix({"w": [0, 1, 2]}),
            [0, 2, 1],
            [1, 1, 1],
            [3, 3, 3],
            t=0.5,
            c=0.25,
            covariate_t=0.5,
            covariate_c=0.25,
        )
