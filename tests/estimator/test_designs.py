"""The general design core: registry, parameters, ε, simulation and estimation per kind."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from estimator.designs import (
    IMPOSSIBLE_REPORT,
    REGISTRY,
    ChoiceForcedResponse,
    Crosswise,
    DirectBinary,
    DirectChoice,
    DirectNumber,
    ForcedResponse,
    KRandomizedResponse,
    Laplace,
    Mirrored,
    composition,
    make_design,
    matrix_epsilon,
    one_bit_mean_variance,
)
from estimator.estimates import BinaryEstimate, simplex_mle
from estimator.randomized_response import design_from_params, total_epsilon
from tests.fixtures import sampler_vectors

VECTORS = sampler_vectors.build()


def test_the_shared_vectors_file_is_what_the_designs_say_now():
    on_disk = sampler_vectors.PATH.read_text(encoding="utf-8")
    assert json.loads(on_disk) == json.loads(sampler_vectors.dump(VECTORS)), (
        "run: python tests/fixtures/sampler_vectors.py"
    )


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['kind']}-{c['name']}")
def test_python_simulation_matches_the_shared_vectors(case):
    params = {k: v for k, v in case["params"].items() if k != "k"}
    design = make_design(case["kind"], case["name"], params, k=case["params"].get("k"))
    rng = np.random.default_rng(20260101)
    edges = case["bins"]
    for truth, probabilities in zip(case["truths"], case["probabilities"], strict=True):
        reports = design.simulate(np.full(case["draws"], truth), rng)
        observed = np.array(
            [
                np.sum(
                    (reports >= (-np.inf if lo is None else lo))
                    & (reports <= (np.inf if hi is None else hi))
                )
                for lo, hi in edges
            ]
        )
        expected = case["draws"] * np.array(probabilities)
        assert observed.sum() == case["draws"]
        assert np.all(observed[expected == 0] == 0)
        used = expected > 0
        chi2 = np.sum((observed[used] - expected[used]) ** 2 / expected[used])
        assert chi2 <= case["chi2_limit"]


def test_every_registered_design_describes_itself_and_rebuilds_from_its_parameters():
    for (kind, name), cls in REGISTRY.items():
        k = 3 if cls.needs_options else None
        design = make_design(kind, name, {}, k=k)
        described = json.loads(json.dumps(design.describe()))
        assert (described["kind"], described["name"]) == (kind, name)
        assert [p["name"] for p in described["parameters"]] == list(design.params())
        assert make_design(kind, name, described["params"], k=k) == design
        assert described["no_privacy"] == (not design.randomized or not design.is_private)


@pytest.mark.parametrize(
    ("kind", "name", "params", "k", "message"),
    [
        ("ranking", "k_rr", {}, 3, "unknown kind"),
        ("choice", "coin", {}, 3, "unknown design 'coin' for kind choice"),
        ("binary", "k_rr", {}, None, "unknown design 'k_rr' for kind binary"),
        ("choice", "k_rr", {"epsilon": 1, "p": 0.5}, 3, "unknown parameter"),
        ("choice", "k_rr", {}, None, "number of options"),
        ("choice", "k_rr", {}, 1, "2 to 10 options"),
        ("choice", "k_rr", {}, 11, "2 to 10 options"),
        ("choice", "k_rr", {}, 3.0, "whole number of options"),
        ("binary", "mirrored", {}, 3, "takes no number of options"),
        ("choice", "forced_response", {"p_forced": [0.5, 0.5]}, 3, "one probability per option"),
        ("choice", "forced_response", {"p_forced": [0.5, 0.3, 0.3]}, 3, "must sum to 1"),
        ("choice", "forced_response", {"p_forced": "abc"}, 3, "list of probabilities"),
        ("choice", "forced_response", {"p_truth": 0}, 3, "p_truth must be > 0"),
        ("binary", "crosswise", {"p": 0.5}, None, "must not be 1/2"),
        ("number", "laplace", {"lower": 5, "upper": 5}, None, "lower must be below upper"),
        ("number", "laplace", {"lower": 0, "upper": 2_000_000}, None, "upper must be ≤ 1e"),
        ("number", "laplace", {"lower": 0.5}, None, "lower must be a whole number"),
        ("number", "direct", {"lower": 3, "upper": 1}, None, "lower must be below upper"),
        ("number", "laplace", {"epsilon": 0}, None, "epsilon must be ≥ 0.01"),
        ("number", "laplace", {"epsilon": -1}, None, "epsilon must be ≥ 0.01"),
        ("number", "laplace", {"epsilon": 0.009}, None, "epsilon must be ≥ 0.01"),
        ("choice", "k_rr", {"epsilon": 20.5}, 3, "epsilon must be ≤ 20"),
        ("number", "laplace", {"epsilon": 800}, None, "epsilon must be ≤ 20"),
        ("choice", "k_rr", {"epsilon": math.inf}, 3, "epsilon must be finite"),
        ("choice", "k_rr", {"epsilon": math.nan}, 3, "epsilon must be finite"),
        ("choice", "k_rr", {"epsilon": "1"}, 3, "epsilon must be a number"),
        ("binary", "forced_response", {"p_truth": True}, None, "p_truth must be a number"),
        ("binary", "forced_response", {"p_truth": None}, None, "p_truth must be a number"),
    ],
)
def test_the_registry_refuses_bad_designs_clearly(kind, name, params, k, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        make_design(kind, name, params, k=k)


def test_legacy_construction_still_works_and_defaults_to_binary():
    assert design_from_params("forced_response", {"p_truth": 0.5, "p_yes": 0.5}) == ForcedResponse()
    assert design_from_params("k_rr", {"epsilon": 1.0}, "choice", k=4) == KRandomizedResponse(
        epsilon=1.0, k=4
    )


def test_general_epsilon_formula_matches_each_design():
    krr = KRandomizedResponse(epsilon=0.7, k=5)
    assert matrix_epsilon(krr.response_matrix) == pytest.approx(0.7, abs=1e-12)
    assert krr.response_matrix.sum(axis=0) == pytest.approx(np.ones(5))
    die = ChoiceForcedResponse(p_truth=0.5, p_forced=(0.5, 0.25, 0.25))
    # Report 1: (0.5 + 0.125)/0.125 = 5 is the worst ratio.
    assert die.epsilon == pytest.approx(math.log(5))
    assert ChoiceForcedResponse(p_truth=0.5, p_forced=(1, 0, 0)).epsilon == math.inf
    assert Crosswise(p=0.25).epsilon == pytest.approx(math.log(3))
    assert DirectBinary().epsilon == DirectChoice(k=3).epsilon == math.inf
    assert DirectNumber(lower=0, upper=9).epsilon == math.inf


def test_laplace_epsilon_is_the_worst_report_ratio_exactly():
    design = Laplace(epsilon=1.3, lower=-2, upper=5)
    reports = np.arange(-40, 48)
    truths = np.arange(-2, 6)
    pmf = design.noise_pmf(reports[:, None] - truths[None, :])
    assert matrix_epsilon(pmf) == pytest.approx(1.3, abs=1e-12)
    assert design.epsilon == 1.3


def test_crosswise_is_warners_statistics_with_its_p():
    crosswise, mirrored = Crosswise(p=0.2), Mirrored(p=0.2)
    assert np.array_equal(crosswise.response_matrix, mirrored.response_matrix)
    a, b = crosswise.estimate(300, 1000), mirrored.estimate(300, 1000)
    assert (a.estimate, a.std_error, a.ci()) == (b.estimate, b.std_error, b.ci())
    # λ = 0.8 − 0.6·q (reports of "same"): q̂ = (0.8 − 0.3)/0.6.
    assert a.estimate_unbiased == pytest.approx(0.5 / 0.6)


def test_binary_estimate_from_a_count_vector_equals_yes_of_n():
    assert ForcedResponse().estimate([600, 400]).ci() == ForcedResponse().estimate(400, 1000).ci()
    with pytest.raises(ValueError, match="one entry per option"):
        ForcedResponse().estimate([1, 2, 3])


def test_choice_unbiased_estimate_is_the_inverse_matrix_times_the_report_rates():
    design = ChoiceForcedResponse(p_truth=0.6, p_forced=(0.2, 0.3, 0.5), k=3)
    counts = (270, 330, 400)
    est = design.estimate(counts)
    lam = np.array(counts) / 1000
    assert est.estimate_unbiased == pytest.approx(np.linalg.solve(design.response_matrix, lam))
    assert est.estimate_unbiased.sum() == pytest.approx(1.0)
    inverse = np.linalg.inv(design.response_matrix)
    cov = inverse @ ((np.diag(lam) - np.outer(lam, lam)) / 1000) @ inverse.T
    assert est.covariance == pytest.approx(cov, abs=1e-15)


def test_choice_per_option_intervals_are_the_binary_ones_on_each_line():
    design = KRandomizedResponse(epsilon=math.log(3), k=3)
    est = design.estimate([500, 300, 200])
    for j, (count, interval) in enumerate(zip(est.counts, est.ci(0.9, "exact"), strict=True)):
        line = design.option_line(j)
        assert line.lambda_for(0.0) == pytest.approx(0.2) and line.t == pytest.approx(0.4)
        assert interval == BinaryEstimate(line, count, 1000).ci(0.9, "exact")


def test_choice_mle_lies_on_the_simplex_and_equals_the_unbiased_one_inside_it():
    inside = KRandomizedResponse(epsilon=2.0, k=4).estimate([400, 300, 200, 100])
    assert inside.estimate_unbiased.min() > 0
    assert inside.estimate == pytest.approx(inside.estimate_unbiased, abs=1e-8)
    design = KRandomizedResponse(epsilon=1.0, k=4)
    outside = design.estimate([700, 250, 50, 0])
    assert outside.estimate_unbiased.min() < 0
    assert outside.estimate.min() >= 0 and outside.estimate.sum() == pytest.approx(1.0)
    matrix, counts = design.response_matrix, np.array(outside.counts)

    def loglik(pi):
        return float(counts @ np.log(matrix @ pi))

    rng = np.random.default_rng(3)
    for other in rng.dirichlet(np.ones(4), size=200):
        assert loglik(other) <= loglik(outside.estimate) + 1e-9


def test_choice_simulation_recovers_the_true_shares_within_their_intervals():
    design, truth = KRandomizedResponse(epsilon=1.5, k=5), np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    rng = np.random.default_rng(11)
    true_options = rng.choice(5, size=50_000, p=truth)
    est = design.estimate(np.bincount(design.simulate(true_options, rng), minlength=5))
    shares = np.bincount(true_options, minlength=5) / true_options.size
    z = stats.norm.isf(1e-6 / 2)
    assert np.all(np.abs(est.estimate_unbiased - shares) <= z * est.std_errors)


def test_choice_counts_are_checked():
    design = KRandomizedResponse(epsilon=1.0, k=3)
    for bad in ([1, 2], [1, 2.5, 3], [1, -1, 3], [1, None, 3], "123", {0: 1}):
        with pytest.raises(ValueError, match="count"):
            design.estimate(bad)
    assert design.estimate([0, 0, 0]).ci() is None
    assert design.estimate([0, 0, 0]).message.startswith("No reports")


def test_reports_outside_the_output_space_are_refused():
    for bad in (2, -1, "1", 1.0, True):
        with pytest.raises(ValueError, match="report"):
            ForcedResponse().check_report(bad)
    with pytest.raises(ValueError, match="one of 0…2"):
        KRandomizedResponse(epsilon=1.0, k=3).check_report(3)
    assert KRandomizedResponse(epsilon=1.0, k=3).check_report(2) == 2


def test_laplace_refuses_reports_it_could_not_have_produced():
    design = Laplace(epsilon=1.0, lower=0, upper=10)
    d = design.max_distance
    a = design.alpha
    # P(|Z| > d) < 1e-12 ≤ P(|Z| > d − 1): d is the smallest such distance.
    assert 2 * a ** (d + 1) / (1 + a) <= IMPOSSIBLE_REPORT < 2 * a**d / (1 + a)
    assert design.check_report(10 + d) == 10 + d
    with pytest.raises(ValueError, match="impossible for this question"):
        design.check_report(11 + d)
    for bad in (2.5, "3", math.nan, None):
        with pytest.raises(ValueError, match="whole number"):
            design.check_report(bad)
    assert DirectNumber(lower=0, upper=5).check_report(5) == 5
    with pytest.raises(ValueError, match="impossible"):
        DirectNumber(lower=0, upper=5).check_report(6)


def test_laplace_noise_has_the_known_variance_and_the_mean_its_t_interval():
    design = Laplace(epsilon=1.0, lower=0, upper=10)
    assert design.noise_variance == pytest.approx(2 * design.alpha / (1 - design.alpha) ** 2)
    rng = np.random.default_rng(5)
    truth = rng.integers(-3, 14, size=200_000)
    reports = design.simulate(truth, rng)
    noise = reports - np.clip(truth, 0, 10)
    assert noise.var() == pytest.approx(design.noise_variance, rel=0.02)
    est = design.estimate((reports.size, int(reports.sum()), int((reports**2).sum())))
    assert est.sample_variance == pytest.approx(reports.var(ddof=1))
    low, high = est.ci(0.99)
    half = stats.t.isf(0.005, reports.size - 1) * reports.std(ddof=1) / math.sqrt(reports.size)
    assert (low, high) == pytest.approx((reports.mean() - half, reports.mean() + half))
    assert low <= np.clip(truth, 0, 10).mean() <= high


def test_number_estimates_are_displayed_within_the_bounds():
    design = Laplace(epsilon=0.5, lower=0, upper=10)
    est = design.estimate({"count": 4, "sum": -40, "sum_sq": 900})
    assert est.estimate_unbiased == -10 and est.estimate == 0
    low, high = est.ci()
    assert 0 == low < high <= 10 and not est.contradicts_design()
    # Reports far below the range: never the zero-width (0, 0), and said.
    far = design.estimate({"count": 100, "sum": -5000, "sum_sq": 250_100})
    low, high = far.ci()
    assert low == 0 and 0 < high <= 10 and far.contradicts_design() and far.warning()
    assert "NumberEstimate(laplace" in repr(est)
    assert design.estimate((1, 3, 9)).ci() is None
    assert design.estimate((0, 0, 0)).message.startswith("No reports")


@pytest.mark.parametrize(
    "stats_",
    [(2, 3), (2.5, 1, 1), (-1, 0, 0), (2, 10, 1), (0, 1, 1), ("2", 1, 1), (2, math.nan, 4)],
)
def test_number_statistics_are_checked(stats_):
    with pytest.raises(ValueError):
        Laplace().estimate(stats_)


def test_planner_for_the_mean_and_the_one_bit_comparison():
    design = Laplace(epsilon=1.0, lower=0, upper=10)
    n = design.sample_size(1.0)
    var = 25 + design.noise_variance
    z = stats.norm.isf(0.025)
    assert z * math.sqrt(var / n) <= 1.0 < z * math.sqrt(var / (n - 1))
    comparison = design.one_bit_comparison(1.0)
    assert comparison["laplace_n"] == n
    assert comparison["narrower"] == "one_bit" and comparison["one_bit_n"] < n
    # B = (e + 1)/(e − 1) at ε = 1; the worst-case variance (5B)².
    b = (math.e + 1) / (math.e - 1)
    assert one_bit_mean_variance(1.0, 0, 10) == pytest.approx((5 * b) ** 2)
    assert DirectNumber(lower=0, upper=10).sample_size(1.0) == math.ceil(25 * z * z)
    with pytest.raises(ValueError, match="half_width"):
        design.sample_size(0)


def test_the_deconvolved_distribution_recovers_a_two_point_truth():
    design = Laplace(epsilon=4.0, lower=0, upper=4)
    rng = np.random.default_rng(9)
    truth = rng.choice([1, 3], size=100_000, p=[0.7, 0.3])
    values, counts = np.unique(design.simulate(truth, rng), return_counts=True)
    shares = design.distribution(dict(zip(values.tolist(), counts.tolist(), strict=True)))
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares[1] == pytest.approx(0.7, abs=0.05) and shares[3] == pytest.approx(0.3, abs=0.05)


def test_composition_counts_randomized_questions_and_lists_direct_ones_apart():
    designs = [ForcedResponse(), DirectChoice(k=4), Laplace(epsilon=0.5), DirectBinary()]
    result = composition(designs)
    assert result.epsilon_total == pytest.approx(math.log(3) + 0.5)
    assert result.direct == (DirectChoice(k=4), DirectBinary())
    assert total_epsilon(designs) == result.epsilon_total
    assert composition([ForcedResponse(p_truth=1.0)]).epsilon_total == math.inf


def test_results_read_well():
    text = repr(ForcedResponse().estimate(400, 1000))
    assert "q̂ = 0.3" in text and "ε = 1.099" in text
    assert "no reports" in repr(ForcedResponse().estimate(0, 0))
    text = repr(KRandomizedResponse(epsilon=1.0, k=3).estimate([50, 30, 20]))
    assert text.startswith("ChoiceEstimate(k_rr: 0: ")
    assert "∞ (no privacy)" in repr(DirectBinary().estimate(3, 4))


def test_simplex_mle_of_a_direct_question_is_the_plain_shares():
    assert simplex_mle(np.eye(3), [2, 3, 5]) == pytest.approx([0.2, 0.3, 0.5])


@pytest.mark.parametrize(
    "module", ["estimator.designs", "estimator.estimates", "estimator.randomized_response"]
)
def test_the_examples_in_the_docstrings_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_the_adversary_calculator_works_for_every_kind():
    assert ForcedResponse().posterior([0.5, 0.5], 1) == pytest.approx([0.25, 0.75])
    krr = KRandomizedResponse(epsilon=math.log(3), k=3)
    # Report 0 is 3 times as likely under truth 0 as under either other truth.
    assert krr.posterior([1 / 3] * 3, 0) == pytest.approx([0.6, 0.2, 0.2])
    assert DirectChoice(k=3).posterior([0.2, 0.3, 0.5], 2) == pytest.approx([0, 0, 1])
    laplace = Laplace(epsilon=1.0, lower=0, upper=1)
    assert laplace.posterior([0.5, 0.5], 0) == pytest.approx(
        [math.e / (1 + math.e), 1 / (1 + math.e)]
    )
    with pytest.raises(ValueError, match="prior must give a probability to each"):
        krr.posterior([0.5, 0.5], 0)
    with pytest.raises(ValueError, match="one of 0…2"):
        krr.posterior([1 / 3] * 3, 3)


def test_every_numeric_parameter_declares_a_finite_range():
    """The builder's min/max, the API schema and the property test of tests/survey/
    test_param_ranges.py all read this range: a parameter without one could take a value
    that overflows the maths."""
    for (kind, name), cls in REGISTRY.items():
        for param in cls.PARAMS:
            if param.type in ("real", "integer"):
                declared = param.to_json()
                assert declared["min"] is not None and declared["max"] is not None, (kind, name)
                assert math.isfinite(declared["min"]) and math.isfinite(declared["max"])
