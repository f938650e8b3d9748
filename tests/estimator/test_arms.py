"""Designs with arms (SLD, cheating detection, UQ with unknown prevalence): the minarets
reference of RRreg, properties of the estimates, and seeded simulations."""

from __future__ import annotations

import collections
import csv
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.arms import (
    ARM_DESIGNS,
    CheatingDetection,
    StochasticLieDetector,
    UnrelatedQuestionUnknown,
    sld_regression,
)
from estimator.regression import design_matrix

MINARETS = Path(__file__).resolve().parent.parent / "data" / "minarets.csv"


def minarets_rows() -> list[dict[str, str]]:
    with MINARETS.open(encoding="utf-8") as f:
        lines = (line for line in f if not line.startswith("#"))
        return [row for row in csv.DictReader(lines) if row["RRdesign"] == "1.0"]


def test_minarets_sld_matches_rreg():
    """Heck & Moshagen 2018, §4: groups 1 and 2 with p = 2/12 and 10/12."""
    rows = minarets_rows()
    counts = [0, 0, 0, 0]
    for row in rows:
        arm = int(float(row["condition"])) - 1
        counts[2 * arm + int(float(row["rrt"]))] += 1
    assert counts == [564 - 373, 373, 692 - 398, 398]
    est = StochasticLieDetector(p=(2 / 12, 10 / 12)).estimate(counts)
    assert est["pi"] == pytest.approx(0.8707, abs=5e-5)
    assert est.std_error("pi") == pytest.approx(0.0411, abs=5e-5)
    assert est["t"] == pytest.approx(0.6358, abs=5e-5)
    assert est.std_error("t") == pytest.approx(0.0173, abs=5e-5)
    # A third of the minaret opponents' carriers did not admit it (Heck & Moshagen 2018).
    assert "1 − t = 36.4% is significantly above 0" in est.findings()[0]
    low, high = est.ci("pi", method="wald")
    assert low == pytest.approx(0.8707 - 1.96 * 0.0411, abs=5e-4)
    assert est.ci("pi")[0] < est["pi"] < est.ci("pi")[1]


def test_minarets_sld_logistic_regression_matches_rreg():
    """RRlog(rrt ~ age.c * leftRight.c, model = "SLD"): t = 0.6517, logLik −821.084."""
    groups: dict[tuple, list[int]] = collections.defaultdict(lambda: [0, 0])
    for row in minarets_rows():
        key = (float(row["age.c"]), float(row["leftRight.c"]), int(float(row["condition"])) - 1)
        groups[key][0] += int(float(row["rrt"]))
        groups[key][1] += 1
    keys = list(groups)
    age = np.array([k[0] for k in keys])
    left = np.array([k[1] for k in keys])
    matrix = design_matrix({"age.c": age, "leftRight.c": left, "age.c:leftRight.c": age * left})
    result = sld_regression(
        StochasticLieDetector(),
        matrix,
        [k[2] for k in keys],
        [groups[k][0] for k in keys],
        [groups[k][1] for k in keys],
    )
    assert result.honesty == pytest.approx(0.6517, abs=5e-5)
    assert result.log_likelihood == pytest.approx(-821.084, abs=5e-4)
    assert result.regression.n == 1256
    low, high = result.honesty_ci()
    assert low < result.honesty < high


@pytest.mark.parametrize(
    ("design", "message"),
    [
        (lambda: StochasticLieDetector(p=(0.3, 0.3)), "different"),
        (lambda: StochasticLieDetector(arm_weights=(1.0, 0.0)), "arm_weights"),
        (lambda: StochasticLieDetector(arm_weights=(0.5, 0.6)), "arm_weights"),
        (lambda: StochasticLieDetector(p=(0.3, 1.3)), "p must be two probabilities"),
        (lambda: CheatingDetection(p_truth=(0.5, 0.5), p_yes=(0.5, 0.5)), "p_truth"),
        (lambda: UnrelatedQuestionUnknown(p_truth=(0.4, 0.4)), "p_truth"),
    ],
)
def test_unidentifiable_or_bad_parameters_are_refused(design, message):
    with pytest.raises(ValueError, match=message):
        design()


def test_reports_carry_their_arm():
    d = StochasticLieDetector()
    assert d.encode(1, 0) == 2 and d.decode(3) == (1, 1)
    with pytest.raises(ValueError, match="arm"):
        d.encode(2, 1)
    with pytest.raises(ValueError, match="report"):
        d.check_report(4)


def test_epsilon_of_designs_with_arms():
    assert StochasticLieDetector().epsilon == math.inf  # an honest carrier never says "no"
    assert UnrelatedQuestionUnknown().epsilon == math.inf
    cdm = CheatingDetection(p_truth=(0.5, 0.25), p_yes=(0.5, 0.5))
    # Arm 0: P(yes | 1) = 0.75, P(yes | 0) = 0.25 → ln 3; arm 1: 0.625 / 0.375 → less.
    assert cdm.epsilon == pytest.approx(math.log(3))


THETA = st.tuples(st.floats(0.02, 0.98), st.floats(0.02, 0.98))


@settings(max_examples=40, deadline=None)
@given(theta=THETA, design=st.sampled_from(ARM_DESIGNS))
def test_moment_solution_inverts_the_yes_rates(theta, design):
    d = design()
    if not d.feasible(theta):
        theta = (theta[0] / 2, theta[1] / 2)
    assert d.moment_solution(d.yes_rates(theta)) == pytest.approx(theta, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(0, 60), min_size=4, max_size=4),
    design=st.sampled_from(ARM_DESIGNS),
)
def test_estimates_lie_in_the_parameter_space_and_intervals_hold_them(counts, design):
    d = design()
    est = d.estimate(counts)
    if not est.has_data:
        assert est.theta is None and est.message
        return
    assert d.feasible(est.theta)
    for name in d.parameter_names:
        low, high = est.ci(name)
        assert 0 <= low <= est[name] + 1e-7 and est[name] - 1e-7 <= high <= 1
    # No point of the parameter space beats the estimate.
    grid = np.linspace(0, 1, 21)
    best = max(est.loglik((a, b)) for a in grid for b in grid if d.feasible((a, b)))
    assert est.max_loglik >= best - 1e-6


@pytest.mark.parametrize(
    ("design", "theta"),
    [
        (StochasticLieDetector(), (0.3, 0.7)),
        (CheatingDetection(p_truth=(0.8, 0.4), p_yes=(0.5, 0.5)), (0.3, 0.2)),
        (UnrelatedQuestionUnknown(), (0.2, 0.6)),
    ],
)
def test_seeded_simulation_recovers_the_parameters(design, theta):
    """Respondents drawn from the latent classes; 60 samples of n = 2000 (a fixed seed)."""
    rng = np.random.default_rng(20261126)
    hits = collections.Counter()
    estimates = []
    for _ in range(60):
        arms = design.simulate_arms(2000, rng)
        lam = design.yes_rates(theta)[arms]
        answers = (rng.random(2000) < lam).astype(int)
        est = design.estimate(np.bincount(2 * arms + answers, minlength=4))
        estimates.append(est.theta)
        for j, name in enumerate(design.parameter_names):
            low, high = est.ci(name)
            hits[name] += low <= theta[j] <= high
    assert np.mean(estimates, axis=0) == pytest.approx(theta, abs=0.02)
    for name in design.parameter_names:
        assert 0.85 <= hits[name] / 60 <= 1.0


def test_cheating_is_detected_and_reported_as_significant():
    design = CheatingDetection(p_truth=(0.8, 0.4), p_yes=(0.5, 0.5))
    lam = design.yes_rates((0.2, 0.25))
    n = 3000
    counts = [
        round(n * (1 - lam[0])),
        round(n * lam[0]),
        round(n * (1 - lam[1])),
        round(n * lam[1]),
    ]
    est = design.estimate(counts)
    assert est["gamma"] == pytest.approx(0.25, abs=0.01)
    assert est["beta"] == pytest.approx(0.55, abs=0.01)
    assert est.lr_test_zero("gamma") < 1e-6
    (finding,) = est.findings()
    assert "cheaters γ = 25.0% is significantly above 0" in finding
    lam = design.yes_rates((0.2, 0.0))
    honest = design.estimate(
        [n - round(n * lam[0]), round(n * lam[0]), n - round(n * lam[1]), round(n * lam[1])]
    )
    assert honest.lr_test_zero("gamma") > 0.2
    assert "not significantly above 0" in honest.findings()[0]


def test_simulated_honest_respondents_follow_the_response_matrix():
    rng = np.random.default_rng(7)
    d = CheatingDetection(p_truth=(0.8, 0.4), p_yes=(0.5, 0.5), arm_weights=(0.3, 0.7))
    truths = (rng.random(200_000) < 0.4).astype(int)
    reports = d.simulate(truths, rng)
    for x in (0, 1):
        freq = np.bincount(reports[truths == x], minlength=4) / np.sum(truths == x)
        assert freq == pytest.approx(d.response_matrix[:, x], abs=0.01)


@pytest.mark.parametrize(
    ("design", "theta"),
    [
        (StochasticLieDetector(), (0.3, 0.8)),
        (CheatingDetection(p_truth=(0.8, 0.4), p_yes=(0.5, 0.5)), (0.3, 0.1)),
        (UnrelatedQuestionUnknown(), (0.2, 0.6)),
    ],
)
def test_planner_gives_the_half_width_it_promises(design, theta):
    """At the planned n, the expected counts give π's Wald half-width ≈ the target."""
    n = design.sample_size(theta, 0.05)
    lam = design.yes_rates(theta)
    per_arm = np.asarray(design.arm_weights) * n
    counts = []
    for size, rate in zip(per_arm, lam, strict=True):
        counts += [size * (1 - rate), size * rate]
    est = design.estimate([round(c) for c in counts])
    assert 1.959964 * est.std_error("pi") == pytest.approx(0.05, rel=0.01)
    # The price of the detection: more respondents than asking directly.
    assert design.variance_price(theta) == pytest.approx(
        n * (0.05 / 1.959964) ** 2 / (theta[0] * (1 - theta[0])), rel=0.01
    )
    assert design.variance_price(theta) > 1
    with pytest.raises(ValueError, match="half_width"):
        design.sample_size(theta, 0)
