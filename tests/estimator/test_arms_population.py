"""Designs with arms from a finite population, and compared between groups and between
their arms: the corrected standard errors against seeded draws without replacement, the
likelihood-ratio test against a brute-force profile, the arms read as if everyone
followed the coins."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from estimator.arms import CheatingDetection, StochasticLieDetector, UnrelatedQuestionUnknown
from estimator.compare import compare, compare_arms

SLD, CDM = StochasticLieDetector(), CheatingDetection()


def sample(design, theta, big_n: int, n: int, reps: int, seed: int):
    """``reps`` report counts of n respondents drawn without replacement from one fixed
    population of ``big_n``, whose kinds follow the model at θ; and the population's π."""
    rng = np.random.default_rng(seed)
    shares, rates = design.unit_yes_rates(theta)
    kinds = rng.choice(len(shares), size=big_n, p=shares)
    carriers = np.mean(kinds < (2 if design is SLD else 1))
    draws = []
    for _ in range(reps):
        units = rng.choice(big_n, size=n, replace=False)
        arms = design.simulate_arms(n, rng)
        yes = rng.random(n) < rates[kinds[units], arms]
        draws.append(np.bincount(2 * arms + yes, minlength=4))
    return draws, carriers


@pytest.mark.parametrize(("design", "theta"), [(SLD, (0.4, 0.7)), (CDM, (0.3, 0.25))])
def test_the_corrected_standard_errors_match_draws_without_replacement(design, theta):
    draws, carriers = sample(design, theta, big_n=1100, n=1000, reps=800, seed=4)
    finite = [design.estimate(c, population=1100) for c in draws]
    for name in design.parameter_names:
        spread = np.std([e[name] for e in finite])
        assert np.mean([e.std_error(name) for e in finite]) == pytest.approx(spread, rel=0.1)
    if design is SLD:  # profile intervals of the cheating model take long: one is enough
        covered = np.mean([lo <= carriers <= hi for lo, hi in (e.ci("pi") for e in finite)])
        assert 0.93 <= covered <= 0.97


def test_without_the_correction_the_honesty_would_look_less_sure_than_it_is():
    """t's variance is mostly who was sampled (0.68 of it at 1000 of 1100)."""
    draws, _ = sample(SLD, (0.4, 0.7), big_n=1100, n=1000, reps=300, seed=5)
    spread = np.std([SLD.estimate(c)["t"] for c in draws])
    assert np.mean([SLD.estimate(c).std_error("t") for c in draws]) > 1.12 * spread


def test_a_vast_population_changes_nothing_and_a_small_one_narrows():
    counts = [220, 780, 620, 380]  # π ≈ 0.4, t ≈ 0.7
    plain = SLD.estimate(counts)
    vast = SLD.estimate(counts, population=10**12)
    assert vast.std_error("pi") == pytest.approx(plain.std_error("pi"), rel=1e-6)
    assert vast.ci("pi") == pytest.approx(plain.ci("pi"), rel=1e-6)
    small = SLD.estimate(counts, population=2500)
    assert small.population == 2500 and small["pi"] == plain["pi"]
    assert small.std_error("t") < plain.std_error("t")
    (lo, hi), (plo, phi) = small.ci("pi"), plain.ci("pi")
    assert plo < lo < small["pi"] < hi < phi


def test_a_population_smaller_than_n_is_refused_and_uq_unknown_takes_none():
    with pytest.raises(ValueError, match="population"):
        SLD.estimate([10, 10, 10, 10], population=39)
    assert UnrelatedQuestionUnknown().estimate([10, 10, 10, 10], population=100).population is None


def test_the_likelihood_ratio_of_two_groups_profiles_out_the_other_parameter():
    a, b = SLD.estimate([900, 600, 400, 1100]), SLD.estimate([800, 700, 300, 1200])
    result = compare(a, b)

    def joint(q: float) -> float:
        return a.profile(0, q)[1] + b.profile(0, q)[1]

    coarse = max(np.linspace(0, 1, 501), key=joint)
    common = max(joint(q) for q in np.linspace(coarse - 0.002, coarse + 0.002, 801))
    stat = 2 * (a.max_loglik + b.max_loglik - common)
    assert result.lr_p_value == pytest.approx(sps.chi2.sf(stat, 1), rel=1e-3)
    assert result.std_error == pytest.approx(np.hypot(a.std_error("pi"), b.std_error("pi")))


def test_the_arms_read_alone_are_the_compliant_lines():
    lines = SLD.compliant_lines()
    assert [v for line in lines for v in (line.c, line.t)] == pytest.approx(
        [10 / 12, 2 / 12, 2 / 12, 10 / 12]
    )
    a, h = CDM._lines
    assert [v for line in CDM.compliant_lines() for v in (line.c, line.t)] == pytest.approx(
        [h[0], a[0] - h[0], h[1], a[1] - h[1]]
    )
    counts = [700, 300, 250, 750]
    est = SLD.estimate(counts)
    arm0, arm1 = lines[0].estimate(300, 1000), lines[1].estimate(750, 1000)
    assert compare_arms(est) == compare(arm0, arm1, clipped=False)
    assert compare_arms(est).estimate_a == pytest.approx((0.3 - 10 / 12) / (2 / 12))  # unclipped
    with pytest.raises(ValueError, match="cannot be compared"):
        compare_arms(UnrelatedQuestionUnknown().estimate(counts))


def test_arms_agree_when_everyone_follows_the_coins_and_not_when_carriers_lie():
    rng = np.random.default_rng(12)
    p_values = {}
    for honesty in (1.0, 0.5):
        arms = SLD.simulate_arms(20_000, rng)
        yes = rng.random(20_000) < SLD.yes_rates((0.3, honesty))[arms]
        p_values[honesty] = compare_arms(SLD.estimate(np.bincount(2 * arms + yes, minlength=4)))
    assert p_values[1.0].lr_p_value > 0.05 and p_values[0.5].lr_p_value < 1e-6


def test_the_power_of_two_groups_matches_seeded_wald_tests():
    """Two groups of 1000 with π = 0.3 and 0.15, everyone following the coins."""
    rng = np.random.default_rng(6)
    rejected = 0
    for _ in range(300):
        groups = []
        for q in (0.3, 0.15):
            arms = SLD.simulate_arms(1000, rng)
            yes = rng.random(1000) < SLD.yes_rates((q, 1.0))[arms]
            groups.append(SLD.estimate(np.bincount(2 * arms + yes, minlength=4)))
        a, b = groups
        z = (a["pi"] - b["pi"]) / np.hypot(a.std_error("pi"), b.std_error("pi"))
        rejected += abs(z) > 1.959964
    assert rejected / 300 == pytest.approx(SLD.power_two_groups(0.3, 0.15, 1000), abs=0.08)
    assert SLD.power(0.3, 0.3, 1000) == pytest.approx(0.05)
    assert SLD.power(0.3, 0.0, 1000) > SLD.power(0.3, 0.2, 1000)
