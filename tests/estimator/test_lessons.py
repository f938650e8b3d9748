"""The lessons' maths, checked against closed forms and against brute force."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, stats

from estimator import lessons
from estimator.lessons import (
    RELEASE_A,
    RELEASE_B,
    Budget,
    Generalization,
    Person,
    clinic,
    differencing_posterior,
    exponential_probabilities,
    exponential_select,
    hospital,
    k_anonymity,
    laplace_error,
    laplace_scale,
    noisy_count,
    post_process,
    triangulate,
)


def test_it_never_imports_django():
    code = "import sys, estimator.lessons; assert 'django' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# Differencing attack


@pytest.mark.parametrize("seed", range(40))
def test_two_counts_recover_the_targets_condition(seed):
    attack = hospital(seed)
    older = [p for p in attack.patients if p.birth_year < attack.cutoff]
    assert older == [attack.target]
    assert attack.recovered == int(attack.target.condition)
    assert attack.total == sum(p.condition for p in attack.patients)


def test_the_same_seed_gives_the_same_ward_and_another_seed_another():
    assert hospital(5) == hospital(5)
    assert hospital(5).patients != hospital(6).patients


def test_both_conditions_occur_among_seeds():
    assert {hospital(s).recovered for s in range(40)} == {0, 1}


def test_a_ward_needs_two_patients():
    with pytest.raises(ValueError, match="at least 2"):
        hospital(1, n=1)


def test_the_difference_of_two_laplace_noises_has_the_closed_form_density():
    rng = np.random.default_rng(1)
    b = 2.0
    z = rng.laplace(0, b, 400_000) - rng.laplace(0, b, 400_000)
    hist, edges = np.histogram(z, bins=40, range=(-8, 8), density=True)
    mids = (edges[1:] + edges[:-1]) / 2
    # Normalised over ±8 for the histogram: compare shapes within 2 %.
    expected = lessons.difference_density(mids, b)
    expected /= integrate.quad(lambda t: lessons.difference_density(t, b), -8, 8)[0]
    assert np.allclose(hist, expected, rtol=0.05, atol=2e-3)
    assert integrate.quad(lambda t: lessons.difference_density(t, b), -np.inf, np.inf)[0] == (
        pytest.approx(1)
    )


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1, 2])
def test_the_noisy_difference_moves_the_odds_by_at_most_e_to_the_two_epsilon(epsilon):
    for d in np.linspace(-20, 20, 401):
        post = differencing_posterior(d, epsilon)
        odds = post / (1 - post)
        assert math.exp(-2 * epsilon) - 1e-9 <= odds <= math.exp(2 * epsilon) + 1e-9


def test_with_much_noise_the_attacker_learns_almost_nothing():
    assert differencing_posterior(1.0, 0.05) == pytest.approx(0.5, abs=0.03)
    assert differencing_posterior(1.0, 5) > 0.95


# Laplace mechanism and the budget


def test_the_noise_scale_is_sensitivity_over_epsilon():
    assert laplace_scale(0.5) == 2
    assert laplace_scale(2, sensitivity=4) == 2
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="ε must be a positive number"):
            laplace_scale(bad)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_scale(1, sensitivity=0)


@pytest.mark.parametrize("epsilon", [0.1, 1, 3])
def test_the_error_bound_is_the_laplace_quantile(epsilon):
    b = 1 / epsilon
    t = laplace_error(epsilon, 0.95)
    assert stats.laplace(scale=b).cdf(t) - stats.laplace(scale=b).cdf(-t) == pytest.approx(0.95)
    with pytest.raises(ValueError, match="level"):
        laplace_error(epsilon, 1)


def test_noisy_counts_scatter_with_the_scale_one_over_epsilon():
    rng = np.random.default_rng(3)
    answers = np.array([noisy_count(10, 0.5, rng) for _ in range(20_000)])
    assert abs(np.median(answers) - 10) < 0.1
    assert np.mean(np.abs(answers - 10)) == pytest.approx(2, rel=0.05)  # E|Lap(b)| = b
    # Kolmogorov–Smirnov against Lap(10, 2): the p-value is far from 1e-6.
    assert stats.kstest(answers, stats.laplace(loc=10, scale=2).cdf).pvalue > 1e-6


def test_the_laplace_density_integrates_to_one():
    assert integrate.quad(lambda x: lessons.laplace_density(x, 1.7), -np.inf, np.inf)[0] == (
        pytest.approx(1)
    )


def test_post_processing_rounds_and_clamps_to_a_possible_count():
    assert [post_process(x, 20) for x in (-3.2, 4.49, 4.5001, 25.7)] == [0, 4, 5, 20]


def test_the_budget_adds_up_under_composition_and_refuses_beyond_it():
    budget = Budget(total=1.0)
    for _ in range(4):
        budget = budget.spend(0.25)
    assert budget.spent == pytest.approx(1.0) and budget.remaining == pytest.approx(0)
    assert not budget.allows(0.25)
    with pytest.raises(ValueError, match="budget is spent"):
        budget.spend(0.25)
    with pytest.raises(ValueError, match="ε must be a positive number"):
        Budget(total=0)


# k-anonymity and linkage


def people(*rows):
    return [Person(f"P{i}", *row) for i, row in enumerate(rows)]


def test_k_is_the_smallest_group_of_identical_quasi_identifiers():
    table = people(
        ("2041", 1981, "F", "flu"),
        ("2049", 1987, "F", "asthma"),
        ("2050", 1984, "M", "flu"),
        ("3110", 1990, "M", "migraine"),
    )
    raw = Generalization()
    assert k_anonymity([raw.key(p) for p in table]) == 1
    coarse = Generalization(postcode_digits=2, year_width=10, keep_sex=False)
    assert [coarse.key(p) for p in table][:2] == [("20**", "1980–1989", "*")] * 2
    assert k_anonymity([coarse.key(p) for p in table]) == 1  # 3110 is alone
    suppressed = Generalization(postcode_digits=2, year_width=10, keep_sex=False, suppress_below=2)
    assert k_anonymity([key for key, _ in suppressed.release(table)]) == 3
    assert len(suppressed.release(table)) == 3
    hidden = Generalization(postcode_digits=0, year_width=0, keep_sex=False)
    assert k_anonymity([hidden.key(p) for p in table]) == 4
    assert k_anonymity([]) == 0


def test_bad_generalizations_are_refused():
    with pytest.raises(ValueError, match="postcode_digits"):
        Generalization(postcode_digits=5)
    with pytest.raises(ValueError, match="year_width"):
        Generalization(year_width=-1)


@pytest.mark.parametrize("seed", range(30))
def test_two_k_anonymous_releases_together_give_one_person_away(seed):
    data = clinic(seed)
    for release in (RELEASE_A, RELEASE_B):
        rows = release.release(data.people)
        assert k_anonymity([key for key, _ in rows]) >= 2
        # Each release alone leaves the target more than one diagnosis.
        assert len(set(lessons.candidates(rows, data.target, release))) > 1
    assert triangulate(data.people, data.target, RELEASE_A, RELEASE_B) == {data.target.diagnosis}


def test_the_public_list_names_everyone_with_their_quasi_identifiers():
    data = clinic(2)
    assert len(data.public_list()) == len(data.people)
    assert (data.target.name, data.target.postcode, data.target.birth_year, data.target.sex) in (
        data.public_list()
    )


# Exponential mechanism


def test_selection_probabilities_follow_exp_epsilon_score():
    p = exponential_probabilities([5, 3, 0], 1.0)
    assert p.sum() == pytest.approx(1)
    assert p[0] / p[1] == pytest.approx(math.e**2)
    assert p[1] / p[2] == pytest.approx(math.e**3)


def test_small_epsilon_is_uniform_and_large_epsilon_picks_the_winner():
    assert exponential_probabilities([9, 1, 0], 1e-9) == pytest.approx([1 / 3] * 3)
    assert exponential_probabilities([9, 8, 0], 50)[0] == pytest.approx(1)


def test_one_voter_changes_every_probability_by_at_most_e_to_the_epsilon():
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(0, 20, size=4)
        neighbour = counts.copy()
        neighbour[rng.integers(4)] += 1  # one more voter
        eps = float(rng.uniform(0.05, 3))
        ratio = exponential_probabilities(counts, eps) / exponential_probabilities(neighbour, eps)
        assert np.all(ratio <= math.exp(eps) + 1e-9) and np.all(ratio >= math.exp(-eps) - 1e-9)


def test_huge_scores_do_not_overflow():
    assert exponential_probabilities([1e6, 1e6 - 1], 10)[0] == pytest.approx(
        1 / (1 + math.exp(-10))
    )


def test_the_selection_frequencies_match_the_probabilities():
    rng = np.random.default_rng(4)
    scores = [4, 2, 1]
    picks = np.bincount([exponential_select(scores, 0.5, rng) for _ in range(30_000)], minlength=3)
    expected = exponential_probabilities(scores, 0.5) * 30_000
    assert stats.chisquare(picks, expected).pvalue > 1e-6


def test_bad_scores_are_refused():
    with pytest.raises(ValueError, match="one score per option"):
        exponential_probabilities([], 1)
    with pytest.raises(ValueError, match="ε must be"):
        exponential_probabilities([1, 2], -1)


# Local against central noise


def test_the_local_error_is_sqrt_n_times_the_central_one():
    for n in (1, 4, 100, 2500):
        assert lessons.local_sd(n, 0.5) / lessons.central_sd(n, 0.5) == pytest.approx(math.sqrt(n))
    flat = lessons.central_sd(10, 1.0)
    assert flat == lessons.central_sd(1000, 1.0) == pytest.approx(math.sqrt(2))


def test_randomized_response_noise_matches_warners_variance():
    # ε = ln 3: truth with probability ¾, p(1 − p)/(2p − 1)² = (3/16)/(1/4) = ¾ per person.
    assert lessons.randomized_response_sd(100, math.log(3)) == pytest.approx(math.sqrt(75))


def test_simulated_classes_agree_with_the_formulas():
    rows = lessons.simulated_errors(3, [10, 400], 1.0, trials=2000)
    for n, central, local in rows:
        assert central == pytest.approx(lessons.central_sd(n, 1.0), rel=0.1)
        assert local == pytest.approx(lessons.local_sd(n, 1.0), rel=0.1)
    assert rows == lessons.simulated_errors(3, [10, 400], 1.0, trials=2000)


def test_the_local_model_needs_quadratically_more_respondents():
    central = lessons.respondents_needed(1.0, 0.05, "central")
    local = lessons.respondents_needed(1.0, 0.05, "local")
    rr = lessons.respondents_needed(1.0, 0.05, "randomized")
    assert central < rr < local
    assert local == pytest.approx(central**2, rel=0.02)
    # Halving the margin doubles the curator's respondents and quadruples the phones'.
    assert lessons.respondents_needed(1.0, 0.025, "central") == pytest.approx(2 * central, abs=1)
    assert lessons.respondents_needed(1.0, 0.025, "local") == 4 * local


def test_a_local_report_is_the_secret_plus_laplace_noise():
    reports = [lessons.local_report(1, 2.0, np.random.default_rng(i)) for i in range(4000)]
    assert np.mean(reports) == pytest.approx(1, abs=0.05)
    assert np.var(reports) == pytest.approx(2 * 0.5**2, rel=0.1)


def test_classmates_come_from_the_seed():
    assert lessons.classmates(5) == lessons.classmates(5) != lessons.classmates(6)
    mates = lessons.classmates(5, n=3)
    assert mates.secret(4) == mates.secret(1)
    assert 0.2 < sum(lessons.classmates(5).secrets) / 500 < 0.4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lessons.local_sd(0, 1.0), "n must be"),
        (lambda: lessons.central_sd(5, 0), "ε must be"),
        (lambda: lessons.respondents_needed(1.0, 0, "local"), "margin"),
        (lambda: lessons.respondents_needed(1.0, 0.05, "global"), "unknown model"),
        (lambda: lessons.classmates(1, n=0), "at least one"),
    ],
)
def test_local_central_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# (ε, δ) and the Gaussian mechanism


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-5), (1.0, 1e-3), (2.0, 1e-10)])
def test_the_gaussian_sigma_meets_delta_exactly_and_beats_the_textbook(epsilon, delta):
    sigma = lessons.gaussian_sigma(epsilon, delta)
    assert lessons.gaussian_delta(sigma, epsilon) == pytest.approx(delta, rel=1e-6)
    assert lessons.gaussian_delta(sigma * 0.99, epsilon) > delta
    if epsilon < 1:
        assert sigma < lessons.classic_gaussian_sigma(epsilon, delta)


def test_the_gaussian_delta_is_the_worst_case_over_outputs_by_brute_force():
    # δ(ε) = ∫ max(p(x) − e^ε q(x), 0) dx for N(0, σ²) against N(1, σ²).
    sigma, epsilon = 1.5, 0.7
    x = np.linspace(-20, 20, 400_001)
    p, q = stats.norm.pdf(x, 0, sigma), stats.norm.pdf(x, 1, sigma)
    brute = np.trapezoid(np.maximum(p - np.exp(epsilon) * q, 0), x)
    assert lessons.gaussian_delta(sigma, epsilon) == pytest.approx(brute, rel=1e-4)


def test_smaller_delta_needs_more_noise_and_the_loss_beyond_epsilon_shrinks():
    sigmas = [lessons.gaussian_sigma(1.0, d) for d in (0.1, 1e-3, 1e-5, 1e-10)]
    assert sigmas == sorted(sigmas)
    losses = [lessons.gaussian_loss_beyond(s, 1.0) for s in sigmas]
    assert losses == sorted(losses, reverse=True) and 0 < losses[-1] < 1e-6
    assert lessons.exposed(24, 0.01) == pytest.approx(0.24)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lessons.gaussian_sigma(1.0, 0), "δ must be"),
        (lambda: lessons.gaussian_sigma(1.0, 1), "δ must be"),
        (lambda: lessons.gaussian_sigma(0, 1e-5), "ε must be"),
        (lambda: lessons.gaussian_delta(0, 1.0), "σ must be"),
        (lambda: lessons.exposed(0, 0.1), "n must be"),
    ],
)
def test_gaussian_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# The reusable holdout


def test_thresholdout_mostly_returns_the_training_value_while_the_holdout_agrees():
    holdout = lessons.Thresholdout(np.random.default_rng(1), threshold=0.04, sigma=0.01)
    answers = [holdout.answer(0.7, 0.705) for _ in range(2000)]
    # Only when the noisy threshold T̂ + η falls below 0.005 does the holdout answer.
    assert 0.7 < answers.count(0.7) / 2000 < 0.95
    assert holdout.spent == 2000 - answers.count(0.7)


def test_thresholdout_answers_the_holdout_with_laplace_noise_when_they_disagree():
    sigma = 0.01
    holdout = lessons.Thresholdout(np.random.default_rng(2), sigma=sigma, budget=10_000)
    answers = np.array([holdout.answer(0.9, 0.5) for _ in range(4000)])
    assert holdout.spent == 4000
    # Lap(σ) around the holdout value: mean 0.5, mean absolute deviation σ.
    assert abs(answers.mean() - 0.5) < 0.001
    assert np.mean(np.abs(answers - 0.5)) == pytest.approx(sigma, rel=0.05)


def test_thresholdout_says_nothing_once_its_budget_is_spent():
    holdout = lessons.Thresholdout(np.random.default_rng(3), budget=2)
    assert [holdout.answer(0.9, 0.1) is None for _ in range(3)] == [False, False, True]


@pytest.mark.parametrize("seed", [3, 7, 11])
def test_reusing_the_holdout_overfits_it_and_thresholdout_does_not(seed):
    analysis = lessons.holdout_analysis(seed)
    naive, guarded = analysis.naive, analysis.thresholdout
    assert len(naive.reported) == len(guarded.reported) == 20
    # The features are pure noise: every model is at chance on fresh data.
    assert all(abs(a - 0.5) < 0.06 for a in naive.fresh + guarded.fresh)
    # Reused directly, the holdout's accuracy climbs far above the fresh one.
    assert naive.reported[-1] - naive.fresh[-1] > 0.08
    assert naive.reported[-1] > naive.reported[0] + 0.04
    # Through Thresholdout it stays within about T of the truth (its answers are the
    # training value while that is within a noisy T̂ + η), while the training accuracy climbs.
    errors = np.abs(np.array(guarded.reported) - np.array(guarded.fresh))
    assert np.median(errors) < 0.05 and np.median(errors) < naive.reported[-1] - naive.fresh[-1]
    assert guarded.training[-1] - guarded.reported[-1] > 0.08
    assert 0 < guarded.over_threshold <= 1000 and naive.over_threshold == 0


def test_the_holdout_analysis_comes_from_the_seed():
    lessons.holdout_analysis.cache_clear()
    first = lessons.holdout_analysis(5)
    lessons.holdout_analysis.cache_clear()
    assert lessons.holdout_analysis(5) == first
    assert lessons.holdout_analysis(6) != first


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lessons.Thresholdout(np.random.default_rng(), sigma=0), "must be positive"),
        (lambda: lessons.Thresholdout(np.random.default_rng(), budget=0), "must be positive"),
        (lambda: lessons.holdout_analysis(1, n=5), "n must be"),
    ],
)
def test_holdout_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# Statistical disclosure control


def test_the_exact_clinic_table_discloses_all_three_ways():
    groups = lessons.clinic_table(7)
    assert len(groups) == len(lessons.AREAS) * len(lessons.AGE_BANDS)
    found = lessons.disclosures(lessons.publish(groups))
    for kind in lessons.DISCLOSURES:
        assert found[kind], kind
    by_label = {f"{g.area} {g.band}": g for g in groups}
    for label in found["attribute"]:
        assert by_label[label].negative == 0 < by_label[label].positive
    for label in found["membership"]:
        assert by_label[label].patients == by_label[label].population
    for label in found["identity"]:
        assert {by_label[label].positive, by_label[label].negative} & {1, 2}


def test_a_suppressed_cell_comes_back_from_the_exact_row_total():
    group = lessons.Group("North", "65+", population=30, positive=1, negative=9)
    (row,) = lessons.publish([group], suppressed=True)
    assert (row.positive.shown, row.negative.shown, row.total.shown) == ("c", "9", "10")
    assert (row.positive.low, row.positive.high) == (1, 1)  # 10 − 9: differencing
    assert lessons.disclosures([row])["identity"] == ["North 65+"]
    (row,) = lessons.publish([group], suppressed=True, rounded=True)
    assert (row.positive.shown, row.negative.shown, row.total.shown) == ("c", "10", "10")
    assert lessons.disclosures([row]) == {"identity": [], "attribute": [], "membership": []}


def test_rounding_to_base_5_and_collapsing_change_the_counts_as_the_ons_does():
    groups = [
        lessons.Group("East", band, population=10, positive=p, negative=n)
        for band, p, n in (("16–24", 3, 4), ("25–34", 1, 1), ("50–64", 2, 0), ("65+", 6, 7))
    ]
    rows = lessons.publish(groups, rounded=True)
    assert [(r.positive.shown, r.negative.shown, r.total.shown) for r in rows] == [
        ("5", "5", "5"),
        ("0", "0", "0"),
        ("0", "0", "0"),
        ("5", "5", "15"),
    ]
    collapsed = lessons.publish(groups, collapsed=True)
    assert [(r.label, r.population, r.total.shown) for r in collapsed] == [
        ("East 16–49", 20, "9"),
        ("East 50+", 20, "15"),
    ]


@pytest.mark.parametrize("seed", range(6))
def test_all_three_practices_together_leave_no_group_certain(seed):
    groups = lessons.clinic_table(seed)
    rows = lessons.publish(groups, rounded=True, collapsed=True, suppressed=True)
    assert lessons.disclosures(rows) == {"identity": [], "attribute": [], "membership": []}
    # Every published interval still holds the true count.
    exact = {r.label: r for r in lessons.publish(groups, collapsed=True)}
    for row in rows:
        for name in ("positive", "negative", "total"):
            true = getattr(exact[row.label], name).low
            assert getattr(row, name).low <= true <= getattr(row, name).high


def test_a_few_approximately_known_ratings_single_out_one_record():
    data = lessons.ratings(7)
    counts = data.candidates_by_known(6)
    assert counts == sorted(counts, reverse=True) and counts[0] > 5 and counts[-1] == 1
    known = data.known(6)
    assert data.matching(known) == [data.target]
    rated = data.by_user[data.target]
    assert all(abs(rated[f] - s) <= 1 for f, s in known.items())
    assert lessons.ratings(7) == data and lessons.ratings(8) != data


def test_ratings_refuse_bad_sizes():
    with pytest.raises(ValueError, match="per_user"):
        lessons.ratings(1, films=5, per_user=20)


# Attack your own class


def test_one_report_moves_the_odds_by_at_most_e_to_the_epsilon():
    epsilon = math.log(3)
    for yes in (0, 1):
        belief = lessons.report_posterior(yes, 1 - yes, 0.75, 0.25)
        odds = belief / (1 - belief)
        assert math.exp(-epsilon) - 1e-12 <= odds <= math.exp(epsilon) + 1e-12
    assert lessons.report_posterior(1, 0, 0.75, 0.25) == pytest.approx(0.75)
    # Bayes' rule by brute force with a prior of 0.2.
    brute = 0.2 * 0.75**2 * 0.25 / (0.2 * 0.75**2 * 0.25 + 0.8 * 0.25**2 * 0.75)
    assert lessons.report_posterior(2, 1, 0.75, 0.25, prior=0.2) == pytest.approx(brute)


def test_averaging_learns_nothing_from_the_memo_and_everything_from_fresh_coins():
    memo, fresh = lessons.averaging_attack(3, 0.75, 0.25, asks=60)
    assert len(set(memo)) == 1 and memo[0] in (pytest.approx(0.75), pytest.approx(0.25))
    assert fresh[-1] > 0.999 and fresh[0] == memo[0]
    _, fresh_no = lessons.averaging_attack(3, 0.75, 0.25, asks=60, truth=0)
    assert fresh_no[-1] < 0.001


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lessons.report_posterior(1, 0, 1.0, 0.25), "between 0 and 1"),
        (lambda: lessons.report_posterior(-1, 0, 0.75, 0.25), "negative"),
        (lambda: lessons.averaging_attack(1, 0.75, 0.25, asks=0), "at least 1"),
    ],
)
def test_attack_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
