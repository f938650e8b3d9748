"""The split ballot as a design: the ballot stored as an arm, the randomized estimate
from the randomized ballot alone, and the comparison from estimator.compare."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from estimator import split as split_module
from estimator.arms import StochasticLieDetector
from estimator.compare import split_ballot
from estimator.designs import DirectBinary, ForcedResponse, KRandomizedResponse, Mirrored
from estimator.split import SplitDesign, with_direct_share


def test_the_examples_run():
    assert doctest.testmod(split_module).failed == 0


def test_reports_carry_the_ballot_as_the_arm():
    design = SplitDesign(Mirrored(), 0.3)
    assert design.encode(1, 1) == 3 and design.decode(2) == (1, 0)
    assert design.arm_weights == pytest.approx((0.7, 0.3))
    assert design.epsilon == Mirrored().epsilon  # the randomized ballot's promise
    assert design.name == "mirrored" and design.params() == Mirrored().params()
    with pytest.raises(ValueError, match="ballot"):
        design.encode(2, 0)
    with pytest.raises(ValueError):
        design.check_report(4)


def test_the_law_of_ballot_and_report_sums_to_one_per_truth():
    matrix = SplitDesign(ForcedResponse(), 0.25).response_matrix
    assert matrix.shape == (4, 2) and matrix.sum(axis=0) == pytest.approx([1, 1])
    assert matrix[2:] == pytest.approx(0.25 * np.eye(2))


@pytest.mark.parametrize(
    ("design", "words"),
    [
        (StochasticLieDetector(), "without arms"),
        (DirectBinary(), "randomized"),
        (KRandomizedResponse(epsilon=1.0, k=3), "yes/no"),
    ],
)
def test_only_a_randomized_yes_no_design_without_arms_splits(design, words):
    with pytest.raises(ValueError, match=f"direct_share: .*{words}"):
        SplitDesign(design, 0.2)


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.2, float("nan"), "half"])
def test_the_share_lies_strictly_between_0_and_1(share):
    with pytest.raises(ValueError, match="direct_share"):
        with_direct_share(ForcedResponse(), share)


def test_no_share_leaves_the_design_alone():
    assert with_direct_share(ForcedResponse(), None) == ForcedResponse()


def test_estimates_agree_with_split_ballot_on_seeded_simulations():
    rng = np.random.default_rng(21)
    design = SplitDesign(ForcedResponse(), 0.3)
    truths = (rng.random(20_000) < 0.35).astype(int)
    reports = design.simulate(truths, rng)
    counts = np.bincount(reports, minlength=4)
    est = design.estimate(counts)
    expected = split_ballot(
        ForcedResponse().estimate(counts[1], counts[:2].sum()), counts[3], counts[2:].sum()
    )
    assert est.estimate == pytest.approx(expected.randomized.estimate)
    assert est.n == counts[:2].sum() and est.direct_n == counts[2:].sum()
    assert est.direct.estimate == pytest.approx(expected.direct.estimate)
    assert est.comparison().ci() == pytest.approx(expected.comparison().ci())
    # Everyone truthful on both ballots: no difference beyond chance.
    assert est.comparison().ci_low < 0 < est.comparison().ci_high
    assert (reports >= 2).mean() == pytest.approx(0.3, abs=0.01)


def test_a_ballot_without_answers_has_no_comparison():
    est = SplitDesign(ForcedResponse(), 0.2).estimate([10, 5, 0, 0])
    assert est.comparison() is None and not est.direct.has_data
