from __future__ import annotations

import math
import uuid

import numpy as np
import pytest
from rest_framework.test import APIClient

from estimator.randomized_response import ForcedResponse
from responses.models import Tally
from responses.write import record_submission, simulate_respondents
from tests.storage import stored_answers, stored_count

QUESTION_KEYS = {
    "question",
    "text",
    "n",
    "n_simulated",
    "skipped",
    "yes_count",
    "raw_yes_rate",
    "estimate",
    "estimate_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
    "level",
    "method",
    "epsilon",
    "population",
}

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_for():
    def make(user) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    return make


def url(survey) -> str:
    return f"/api/surveys/{survey.id}/estimates/"


def record_all(survey, values: list[dict[int, int]]) -> None:
    for answers in values:
        record_submission(survey, uuid.uuid4(), answers)


def test_it_returns_the_spec_keys_and_the_estimate_from_counts(survey, owner, client_for):
    question = survey.questions.get()
    record_all(survey, [{question.id: 1}] * 30 + [{question.id: 0}] * 70)
    response = client_for(owner).get(url(survey))
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"survey", "n_responses", "n_simulated", "epsilon_total", "questions"}
    assert body["survey"] == survey.id and body["n_responses"] == 100
    assert body["epsilon_total"] == pytest.approx(math.log(3))
    [row] = body["questions"]
    assert set(row) == QUESTION_KEYS
    expected = ForcedResponse().estimate(30, 100)
    low, high = expected.ci(0.95, "wilson")
    assert row["question"] == question.id and row["text"] == question.text
    assert (row["n"], row["yes_count"], row["raw_yes_rate"]) == (100, 30, 0.3)
    assert row["n_simulated"] == body["n_simulated"] == 0
    assert row["estimate"] == pytest.approx(0.1)
    assert row["estimate_unbiased"] == pytest.approx(0.1)
    assert row["std_error"] == pytest.approx(expected.std_error)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    assert (row["level"], row["method"]) == (0.95, "wilson")
    assert row["epsilon"] == pytest.approx(math.log(3))


@pytest.mark.parametrize("method", ["wilson", "exact", "wald", "jeffreys"])
def test_it_honours_level_and_method(survey, owner, client_for, method):
    question = survey.questions.get()
    record_all(survey, [{question.id: 1}] * 12 + [{question.id: 0}] * 28)
    response = client_for(owner).get(url(survey), {"level": "0.9", "method": method})
    [row] = response.json()["questions"]
    low, high = ForcedResponse().estimate(12, 40).ci(0.9, method)
    assert (row["level"], row["method"]) == (0.9, method)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))


def test_no_answers_gives_nulls_not_errors(make_survey, owner, client_for):
    survey = make_survey(n_questions=2)
    response = client_for(owner).get(url(survey))
    assert response.status_code == 200
    body = response.json()
    assert body["n_responses"] == 0
    for row in body["questions"]:
        assert set(row) == QUESTION_KEYS
        assert row["n"] == 0 and row["yes_count"] == 0
        for key in ("raw_yes_rate", "estimate", "estimate_unbiased", "std_error"):
            assert row[key] is None
        assert row["ci_low"] is None and row["ci_high"] is None


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"level": "1.5"}, "level must be a number strictly between 0 and 1"),
        ({"level": "0"}, "level must be a number strictly between 0 and 1"),
        ({"level": "nan"}, "level must be a number strictly between 0 and 1"),
        ({"level": "ninety"}, "level must be a number strictly between 0 and 1"),
        (
            {"method": "bootstrap"},
            "method must be one of wilson, exact, wald, uniform_hpd, jeffreys",
        ),
    ],
)
def test_invalid_options_are_a_400_with_a_clear_message(survey, owner, client_for, params, message):
    stored = (stored_count(), stored_answers(), Tally.objects.count())
    response = client_for(owner).get(url(survey), params)
    assert response.status_code == 400
    assert any(message in error for error in response.json()["detail"])
    assert (stored_count(), stored_answers(), Tally.objects.count()) == stored


def test_it_checks_ownership(survey, outsider, client_for):
    assert client_for(outsider).get(url(survey)).status_code == 404


def test_it_needs_authentication(survey):
    assert APIClient().get(url(survey)).status_code in (401, 403)


def test_unknown_survey_is_a_404(owner, client_for):
    assert client_for(owner).get("/api/surveys/999999/estimates/").status_code == 404


def test_simulated_answers_of_the_current_round_are_estimated(survey, owner, client_for):
    simulate_respondents(survey, 2000, 0.3, np.random.default_rng(11))
    [row] = client_for(owner).get(url(survey)).json()["questions"]
    assert row["n"] == row["n_simulated"] == 2000
    assert row["ci_low"] <= 0.3 <= row["ci_high"]


def test_estimates_read_the_counts_in_a_few_queries_whatever_the_answers(
    make_survey, owner, client_for, django_assert_max_num_queries
):
    survey = make_survey(n_questions=5)
    questions = list(survey.questions.all())
    record_all(survey, [{q.id: i % 2 for q in questions} for i in range(20)])
    client = client_for(owner)
    # The survey, its questions, the sealed tallies, the current hour's hours, its reports
    # grouped, the designs: not one query per answer or question.
    with django_assert_max_num_queries(6):
        response = client.get(url(survey))
    assert [row["n"] for row in response.json()["questions"]] == [20] * 5


def test_no_privacy_design_has_null_epsilon(survey, owner, client_for):
    survey.questions.update(design_params={"p_truth": 1.0, "p_yes": 0.5})
    body = client_for(owner).get(url(survey)).json()
    assert body["epsilon_total"] is None and body["questions"][0]["epsilon"] is None
