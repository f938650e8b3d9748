"""The split ballot as a design: the ballot stored as an arm, the randomized estimate
from the randomized ballot alone, and the comparison from estimator.compare."""

from __future__ import annotations

import doctest
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sps

from estimator import split as split_module
from estimator.arms import StochasticLieDetector
from estimator.compare import compare, split_ballot
from estimator.designs import (
    ChoiceForcedResponse,
    DirectBinary,
    DirectChoice,
    DirectNumber,
    ForcedResponse,
    KRandomizedResponse,
    Laplace,
    Mirrored,
)
from estimator.estimates import NumberStats
from estimator.one_bit import OneBitMean
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
        (DirectNumber(lower=0, upper=10), "asked directly"),
    ],
)
def test_only_a_randomized_design_without_arms_splits(design, words):
    with pytest.raises(ValueError, match=f"direct_share: .*{words}"):
        with_direct_share(design, 0.2)


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


# --- Number questions ---------------------------------------------------------------------

LAPLACE = Laplace(epsilon=1.0, lower=0, upper=10)
NUMBER_SPLIT = with_direct_share(LAPLACE, 0.25)


def key_sums(design, reports: np.ndarray) -> tuple[Counter, NumberStats, dict]:
    """What the tallies keep of ``reports``: counts, sums and sums per tally key."""
    keys = design.tally_keys(reports)
    per_key = {
        int(k): NumberStats(int((keys == k).sum()), *(int(s) for s in _sums(reports[keys == k])))
        for k in np.unique(keys)
    }
    stats = NumberStats(len(reports), *(int(s) for s in _sums(reports)))
    return Counter({k: s.count for k, s in per_key.items()}), stats, per_key


def _sums(values: np.ndarray) -> tuple[int, int]:
    values = values.astype(object)
    return sum(values), sum(v * v for v in values)


def test_a_direct_number_is_stored_beyond_every_randomized_report():
    low, high = LAPLACE.lower - LAPLACE.max_distance, LAPLACE.upper + LAPLACE.max_distance
    assert NUMBER_SPLIT.encode(0, low) == low and NUMBER_SPLIT.encode(0, high) == high
    assert NUMBER_SPLIT.encode(1, 0) == high + 1
    for ballot, answer in [(0, low), (0, 3), (0, high), (1, 0), (1, 7), (1, 10)]:
        assert NUMBER_SPLIT.decode(NUMBER_SPLIT.encode(ballot, answer)) == (ballot, answer)
    direct_keys = NUMBER_SPLIT.tally_keys([NUMBER_SPLIT.encode(1, v) for v in range(11)])
    randomized_keys = NUMBER_SPLIT.tally_keys(np.arange(low, high + 1))
    assert direct_keys.min() > randomized_keys.max()
    assert [NUMBER_SPLIT.tally_key(NUMBER_SPLIT.encode(1, v)) for v in range(11)] == list(
        direct_keys
    )


@pytest.mark.parametrize(
    ("ballot", "answer", "words"),
    [(1, 11, "impossible"), (1, -1, "impossible"), (0, 10**6, "impossible"), (2, 3, "ballot")],
)
def test_a_number_outside_its_ballot_is_refused(ballot, answer, words):
    with pytest.raises(ValueError, match=words):
        NUMBER_SPLIT.encode(ballot, answer)


def test_a_report_beyond_both_ballots_is_refused():
    with pytest.raises(ValueError, match="impossible"):
        NUMBER_SPLIT.check_report(NUMBER_SPLIT.encode(1, 10) + 1)


def test_each_ballot_reads_its_own_sums_from_the_tallies():
    """Seeded: the estimate from what the tallies keep (sums per key) equals the
    estimate from each ballot's own reports, exactly."""
    rng = np.random.default_rng(11)
    stored = NUMBER_SPLIT.simulate(rng.integers(0, 11, 5000), rng)
    counts, stats, per_key = key_sums(NUMBER_SPLIT, stored)
    est = NUMBER_SPLIT.estimate_from_tally(counts, stats, key_stats=per_key)
    ballots = np.array([NUMBER_SPLIT.decode(r) for r in stored])
    randomized, direct = (ballots[ballots[:, 0] == b, 1] for b in (0, 1))
    assert est.stats == NumberStats(len(randomized), *_sums(randomized))
    assert est.direct_stats == NumberStats(len(direct), *_sums(direct))
    assert est.estimate_unbiased == pytest.approx(randomized.mean())
    assert est.direct.estimate == pytest.approx(direct.mean())
    assert direct.min() >= 0 and direct.max() <= 10


def test_direct_sums_without_key_sums_are_refused():
    counts, stats, _ = key_sums(NUMBER_SPLIT, np.array([3, NUMBER_SPLIT.encode(1, 4)]))
    with pytest.raises(ValueError, match="sums per tally key"):
        NUMBER_SPLIT.estimate_from_tally(counts, stats)


def test_the_difference_of_means_is_welch():
    est = NUMBER_SPLIT.estimate((400, 2400, 30000), direct=(100, 450, 2500))
    comparison = est.comparison(0.9)
    a, b = est, est.direct
    se = np.hypot(a.std_error, b.std_error)
    df = se**4 / (a.std_error**4 / (a.n - 1) + b.std_error**4 / (b.n - 1))
    assert comparison.difference == pytest.approx(6.0 - 4.5)
    assert comparison.std_error == pytest.approx(se) and comparison.df == pytest.approx(df)
    half = sps.t.isf(0.05, df) * se
    assert comparison.ci() == pytest.approx((1.5 - half, 1.5 + half))
    assert comparison.p_value == pytest.approx(2 * sps.t.sf(1.5 / se, df))


def test_one_answer_on_a_ballot_gives_no_comparison():
    assert NUMBER_SPLIT.estimate((400, 2400, 30000), direct=(1, 4, 16)).comparison() is None


def test_truthful_numbers_agree_and_understating_on_the_direct_ballot_is_found():
    """Seeded: truthful ballots give a difference of means whose interval covers 0;
    direct answers shaded down by 2 are found (randomized mean significantly higher)."""
    rng = np.random.default_rng(17)
    stored = NUMBER_SPLIT.simulate(rng.integers(0, 11, 40_000), rng)
    counts, stats, per_key = key_sums(NUMBER_SPLIT, stored)
    est = NUMBER_SPLIT.estimate_from_tally(counts, stats, key_stats=per_key)
    assert est.comparison().ci_low < 0 < est.comparison().ci_high
    direct = stored > LAPLACE.upper + LAPLACE.max_distance
    shaded = np.where(direct, np.maximum(stored - 2, NUMBER_SPLIT.encode(1, 0)), stored)
    counts, stats, per_key = key_sums(NUMBER_SPLIT, shaded)
    comparison = NUMBER_SPLIT.estimate_from_tally(counts, stats, key_stats=per_key).comparison()
    assert comparison.ci_low > 0 and comparison.p_value < 1e-6


def test_the_direct_ballot_is_certain_and_weighted_by_its_share():
    assert NUMBER_SPLIT.likelihood(NUMBER_SPLIT.encode(1, 3)) == pytest.approx(
        0.25 * (np.arange(11) == 3)
    )
    assert NUMBER_SPLIT.likelihood(5) == pytest.approx(0.75 * LAPLACE.likelihood(5))
    assert NUMBER_SPLIT.epsilon == LAPLACE.epsilon


ONE_BIT = OneBitMean(epsilon=1.0, lower=0, upper=10)
ONE_BIT_SPLIT = with_direct_share(ONE_BIT, 0.3)


def test_a_one_bit_split_stores_direct_answers_above_the_bit():
    assert ONE_BIT_SPLIT.shift == 2
    assert [ONE_BIT_SPLIT.encode(0, b) for b in (0, 1)] == [0, 1]
    assert [ONE_BIT_SPLIT.encode(1, v) for v in (0, 10)] == [2, 12]
    assert ONE_BIT_SPLIT.decode(9) == (1, 7) and ONE_BIT_SPLIT.decode(1) == (0, 1)
    for ballot, answer in [(0, 2), (0, -1), (1, 11), (1, -1)]:
        with pytest.raises(ValueError):
            ONE_BIT_SPLIT.encode(ballot, answer)


def test_a_one_bit_split_reads_each_ballot_exactly_and_compares_the_means():
    """Seeded: the bits' counts and the direct answers' sums come back from the tallies;
    the randomized mean is the one-bit line's, compared by Welch's t."""
    rng = np.random.default_rng(13)
    stored = ONE_BIT_SPLIT.simulate(rng.integers(0, 11, 8000), rng)
    counts, stats, per_key = key_sums(ONE_BIT_SPLIT, stored)
    est = ONE_BIT_SPLIT.estimate_from_tally(counts, stats, key_stats=per_key)
    bits = stored[stored < 2]
    answers = stored[stored >= 2] - 2
    assert (est.normalized.yes_count, est.n) == (int(bits.sum()), len(bits))
    assert est.direct_stats == NumberStats(len(answers), *_sums(answers))
    assert est.estimate_unbiased == pytest.approx(
        ONE_BIT.estimate([len(bits) - bits.sum(), bits.sum()]).estimate_unbiased
    )
    comparison = est.comparison()
    assert comparison.difference == pytest.approx(est.estimate_unbiased - answers.mean())
    assert comparison.ci_low < 0 < comparison.ci_high  # everyone truthful
    assert ONE_BIT_SPLIT.likelihood(9) == pytest.approx(0.3 * (np.arange(11) == 7))
