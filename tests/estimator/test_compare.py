"""Comparisons of two groups and the split ballot: difference, interval, Wald and
likelihood-ratio p-values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.compare import check_direct_share, compare, simulate_split, split_ballot
from estimator.designs import DirectBinary, ForcedResponse, Mirrored


def test_difference_interval_and_both_tests():
    a = ForcedResponse().estimate(400, 1000)  # q̂ = 0.3
    b = ForcedResponse().estimate(300, 1000)  # q̂ = 0.1
    c = compare(a, b)
    assert c.difference == pytest.approx(0.2)
    assert c.std_error == pytest.approx(np.hypot(a.std_error, b.std_error))
    assert c.ci() == pytest.approx((0.2 - 1.959964 * c.std_error, 0.2 + 1.959964 * c.std_error))
    # Both tests agree closely at this size, and reject equality.
    assert c.wald_p_value < 1e-4 and c.lr_p_value < 1e-4
    assert np.log(c.wald_p_value) == pytest.approx(np.log(c.lr_p_value), rel=0.1)


def test_equal_groups_have_p_value_one():
    a = ForcedResponse().estimate(350, 1000)
    c = compare(a, Mirrored().estimate(350, 1000))  # same line (t = ½, c = ¼)
    assert c.difference == pytest.approx(0) and c.lr_p_value == pytest.approx(1)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200))
def test_comparison_is_antisymmetric(ka, kb):
    a, b = ForcedResponse().estimate(ka, 200), ForcedResponse().estimate(kb, 200)
    ab, ba = compare(a, b), compare(b, a)
    assert ab.difference == pytest.approx(-ba.difference)
    assert ab.lr_p_value == pytest.approx(ba.lr_p_value, abs=1e-9)
    assert 0 <= ab.lr_p_value <= 1 and 0 <= ab.wald_p_value <= 1


def test_comparison_needs_both_groups():
    with pytest.raises(ValueError, match="both groups"):
        compare(ForcedResponse().estimate(0, 0), ForcedResponse().estimate(3, 10))


def test_lr_test_holds_its_level_under_equality():
    """Seeded: under q_a = q_b the LR test rejects about 5 % of the time."""
    rng = np.random.default_rng(11)
    design = ForcedResponse()
    rejections = 0
    for _ in range(400):
        ka, kb = rng.binomial(500, design.lambda_for(0.2), size=2)
        rejections += compare(design.estimate(ka, 500), design.estimate(kb, 500)).lr_p_value < 0.05
    assert 0.025 <= rejections / 400 <= 0.08


@pytest.mark.parametrize("share", [0, 1, 1.5, -0.1, "half", True])
def test_direct_share_must_lie_strictly_between_0_and_1(share):
    with pytest.raises(ValueError, match="direct_share"):
        check_direct_share(share)


def test_split_ballot_did_randomized_response_help():
    """More admit under RR (q̂ = 0.3) than asked directly (10 %): a positive difference."""
    ballot = split_ballot(ForcedResponse().estimate(400, 1000), 20, 200)
    assert ballot.direct.design == DirectBinary()
    c = ballot.comparison()
    assert c.difference == pytest.approx(0.2)
    assert c.ci_low > 0 and c.wald_p_value < 0.001


def test_simulated_split_answers_directly_in_its_share():
    rng = np.random.default_rng(3)
    truths = (rng.random(50_000) < 0.3).astype(int)
    direct, reports = simulate_split(ForcedResponse(), 0.25, truths, rng)
    assert direct.mean() == pytest.approx(0.25, abs=0.01)
    assert np.array_equal(reports[direct], truths[direct])
    assert reports[~direct].mean() == pytest.approx(ForcedResponse().lambda_for(0.3), abs=0.01)
