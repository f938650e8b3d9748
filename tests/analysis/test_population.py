"""A survey's population size N reaches every interval: yes/no, choice (its covariance
too), numbers and breakdowns, and the pages say so beside them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from estimator.designs import KRandomizedResponse, Laplace
from tests.analysis.analysis_data import analysis_survey, fill, questions

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(owner):
    survey = analysis_survey(owner)
    fill(survey, [60, 60, 60, 60])
    return survey


def entries(api, survey) -> dict[int, dict]:
    body = api.get(f"/api/surveys/{survey.id}/estimates/").json()
    return {entry["question"]: entry for entry in body["questions"]}


def test_every_kind_of_interval_narrows_with_a_small_population(api, study):
    q = questions(study)
    before = entries(api, study)
    response = api.patch(f"/api/surveys/{study.id}/", {"population_size": 300}, format="json")
    assert (response.status_code, response.json()["population_size"]) == (200, 300)
    after = entries(api, study)
    for name in ("cheat", "age"):
        assert after[q[name]]["population"] == 300
        assert after[q[name]]["std_error"] < before[q[name]]["std_error"]
        width = after[q[name]]["ci_high"] - after[q[name]]["ci_low"]
        assert width < before[q[name]]["ci_high"] - before[q[name]]["ci_low"]
    for old, new in zip(before[q["often"]]["options"], after[q["often"]]["options"], strict=True):
        assert new["std_error"] < old["std_error"]
        assert new["ci_high"] - new["ci_low"] < old["ci_high"] - old["ci_low"]


def test_the_coins_variance_stays_in_a_census(api, study):
    """n = N: who was asked no longer varies, but the randomization still does."""
    q = questions(study)
    api.patch(f"/api/surveys/{study.id}/", {"population_size": 240}, format="json")
    after = entries(api, study)
    cheat = after[q["cheat"]]
    assert cheat["std_error"] > 0 and cheat["ci_high"] > cheat["ci_low"]
    direct_age = after[q["age"]]  # asked directly: a census knows the mean exactly
    assert direct_age["std_error"] == pytest.approx(0, abs=1e-12)


def test_more_respondents_than_n_leaves_the_correction_out_and_says_so(api, logged_in, study):
    q = questions(study)
    before = entries(api, study)
    api.patch(f"/api/surveys/{study.id}/", {"population_size": 100}, format="json")
    after = entries(api, study)
    assert after[q["cheat"]]["population"] is None
    assert after[q["cheat"]]["std_error"] == before[q["cheat"]]["std_error"]
    page = logged_in.get(f"/surveys/{study.id}/results/").content.decode()
    assert "more people answered than N, so it is not applied" in page


def test_the_results_page_says_it_beside_the_intervals(logged_in, study):
    study.population_size = 500
    study.save(update_fields=["population_size"])
    page = logged_in.get(f"/surveys/{study.id}/results/").content.decode()
    assert "finite-population correction for a population of N = 500" in page


def test_breakdowns_take_each_group_as_its_share_of_n(api, logged_in, study):
    q = questions(study)
    url = f"/api/surveys/{study.id}/estimates/breakdown/?question={q['cheat']}&by={q['faculty']}"
    before = api.get(url).json()
    api.patch(f"/api/surveys/{study.id}/", {"population_size": 480}, format="json")
    after = api.get(url).json()
    assert after["overall"]["population"] == 480
    for old, new in zip(before["categories"], after["categories"], strict=True):
        if new["suppressed"]:
            continue
        assert new["population"] == round(480 * new["n"] / after["overall"]["n"])
        assert new["std_error"] < old["std_error"]
    page = logged_in.get(
        f"/surveys/{study.id}/results/breakdown/?question={q['cheat']}&by={q['faculty']}"
    ).content.decode()
    assert "each group taken as its share of N = 480" in page


@pytest.mark.parametrize("size", [1, 0, -5, "many", 2.5])
def test_a_bad_population_size_is_refused_and_nothing_changes(api, study, size):
    response = api.patch(f"/api/surveys/{study.id}/", {"population_size": size}, format="json")
    assert response.status_code == 400
    assert "population_size" in response.json()
    study.refresh_from_db()
    assert study.population_size is None


def test_the_choice_covariance_applies_the_correction_its_errors_do():
    design = KRandomizedResponse(epsilon=math.log(3), k=3)
    counts = [80, 70, 50]  # shares 0.5, 0.375, 0.125: inside (0, 1)
    plain = design.estimate(counts)
    finite = design.estimate(counts, population=400)
    assert np.allclose(np.sqrt(np.diag(finite.covariance)), finite.std_errors)
    assert np.all(finite.std_errors < plain.std_errors)
    n, share = 200, 199 / 399
    pi = np.array([o.estimate for o in finite.options])
    expected = plain.covariance - share * (np.diag(pi) - np.outer(pi, pi)) / n
    off = ~np.eye(3, dtype=bool)
    assert np.allclose(finite.covariance[off], expected[off])
    assert not np.allclose(finite.covariance[off], plain.covariance[off])
    assert np.allclose(design.estimate(counts, population=10**12).covariance, plain.covariance)


def test_a_numbers_standard_error_shrinks_only_the_true_values_part():
    design = Laplace(epsilon=1.0, lower=0, upper=10)
    rng = np.random.default_rng(5)
    reports = design.simulate(rng.integers(0, 11, 400), rng)
    stats = (reports.size, int(reports.sum()), int((reports.astype(np.int64) ** 2).sum()))
    plain = design.estimate(stats)
    census = design.estimate(stats, population=400)
    # A census leaves the noise's variance (all of s² when s² falls below it by chance).
    left = min(plain.sample_variance, plain.noise_variance)
    assert census.std_error == pytest.approx(math.sqrt(left / 400))
    half = design.estimate(stats, population=799)
    fpc = (799 - 400) / 798
    var = plain.sample_variance - (1 - fpc) * plain.true_value_variance
    assert half.std_error == pytest.approx(math.sqrt(var / 400))
    assert design.estimate(stats, population=10**12).std_error == pytest.approx(plain.std_error)
    with pytest.raises(ValueError, match="cannot be smaller than n"):
        design.estimate(stats, population=399)
