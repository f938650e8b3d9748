from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from estimator.randomized_response import (
    ForcedResponse,
    Mirrored,
    UnrelatedQuestion,
    design_from_params,
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


def test_maths_module_does_not_import_django():
    code = (
        "import sys, estimator.randomized_response; "
        "sys.exit(1 if any(m.startswith('django') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
