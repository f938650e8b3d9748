"""The split ballot as a design: the ballot stored as an arm, the randomized estimate
from the randomized ballot alone, and the comparison from estimator.compare."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from estimator import split as split_module
from estimator.arms import StochasticLieDetector
from estimator.compare import compare, split_ballot
from estimator.designs import (
    ChoiceForcedResponse,
    DirectBinary,
    DirectChoice,
    ForcedResponse,
    KRandomizedResponse,
    Laplace,
    Mirrored,
)
from estimator.split import SplitChoiceEstimate, SplitDesign, with_direct_share


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
        (DirectChoice(k=3), "randomized"),
        (Laplace(epsilon=1.0, lower=0, upper=10), "not a number question"),
    ],
)
def test_only_a_randomized_yes_no_or_choice_design_without_arms_splits(design, words):
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


# --- Choice questions: the ballot times k plus the option ------------------------------

KRR3 = KRandomizedResponse(epsilon=2.0, k=3)


def test_a_choice_report_carries_its_ballot_times_k():
    design = SplitDesign(KRR3, 0.25)
    assert design.output_values == tuple(range(6))
    assert design.encode(0, 2) == 2 and design.encode(1, 2) == 5 and design.decode(4) == (1, 1)
    assert design.output_description()["values"] == [0, 1, 2]
    matrix = design.response_matrix
    assert matrix.shape == (6, 3) and matrix.sum(axis=0) == pytest.approx([1, 1, 1])
    assert matrix[3:] == pytest.approx(0.25 * np.eye(3))
    with pytest.raises(ValueError, match="ballot"):
        design.encode(2, 0)
    with pytest.raises(ValueError, match="one of 0…2"):
        design.encode(1, 3)
    with pytest.raises(ValueError):
        design.check_report(6)


def test_a_choice_split_estimates_each_ballot_from_its_own_reports():
    est = SplitDesign(KRR3, 0.25).estimate([500, 300, 200, 150, 60, 40])
    assert isinstance(est, SplitChoiceEstimate)
    assert est.counts == (500, 300, 200) and est.n == 1000 and est.direct_n == 250
    assert est.estimate == pytest.approx(KRR3.estimate([500, 300, 200]).estimate)
    assert list(est.direct.estimate) == pytest.approx([0.6, 0.24, 0.16])
    for j, comparison in enumerate(est.comparisons()):
        expected = compare(est.options[j], est.direct.options[j])
        assert comparison.ci() == pytest.approx(expected.ci())
        assert comparison.difference == pytest.approx(
            est.options[j].estimate - est.direct.estimate[j]
        )


def test_a_choice_ballot_without_answers_has_no_comparison():
    est = SplitDesign(KRR3, 0.25).estimate([10, 5, 5, 0, 0, 0])
    assert est.comparisons() is None and est.equality_test() is None


@pytest.mark.parametrize("design", [KRR3, ChoiceForcedResponse(k=3)], ids=["krr", "forced"])
def test_truthful_ballots_agree_and_hiding_on_the_direct_ballot_is_found(design):
    """Seeded: everyone truthful gives differences covering 0 and a large p-value; the
    direct ballot's carriers of option 2 answering option 0 instead is found."""
    rng = np.random.default_rng(7)
    split = SplitDesign(design, 0.3)
    truths = rng.choice(3, size=30_000, p=[0.5, 0.2, 0.3])
    counts = np.bincount(split.simulate(truths, rng), minlength=6)
    est = split.estimate(counts)
    assert all(c.ci_low < 0 < c.ci_high for c in est.comparisons())
    assert est.equality_test().p_value > 1e-3 and est.equality_test().df == 2
    hidden = counts.copy()
    moved = hidden[5] // 2  # half of option 2's direct answers become option 0
    hidden[5] -= moved
    hidden[3] += moved
    est = split.estimate(hidden)
    assert est.comparisons()[2].ci_low > 0  # more of option 2 admitted under RR
    assert est.equality_test().p_value < 1e-6
