from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from survey.models import Survey
from tests.storage import (
    hours_of,
    nothing_stored,
    stored_answers,
    stored_count,
    stored_reports,
    tallied,
)

pytestmark = pytest.mark.django_db


def submit(client, survey, body, **extra):
    url = reverse("api-submit", args=[survey.slug])
    return client.post(url, body, content_type="application/json", **extra)


def body_for(survey, value=1, submission_id=None):
    return {
        "submission_id": str(submission_id or uuid.uuid4()),
        "answers": [{"question": q.id, "value": value} for q in survey.questions.all()],
    }


def assert_nothing_stored():
    assert stored_count() == 0
    assert stored_answers() == 0
    assert nothing_stored()


def test_it_stores_a_submission(client, survey):
    response = submit(client, survey, body_for(survey))
    assert response.status_code == 201
    question = survey.questions.get()
    assert stored_reports(survey) == [{question.id: 1}]
    assert tallied(survey) == {question.id: {1: 1}}


def test_a_replay_is_stored_once_and_answered_200_with_the_same_body(client, survey):
    body = body_for(survey)
    first = submit(client, survey, body)
    second = submit(client, survey, body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    assert stored_count() == 1
    assert tallied(survey) == {survey.questions.get().id: {1: 1}}


def test_it_stores_all_answers_of_a_multi_question_survey(client, make_survey):
    survey = make_survey(n_questions=3)
    assert submit(client, survey, body_for(survey, value=0)).status_code == 201
    assert stored_answers() == 3


def test_it_keeps_only_the_hour(client, survey):
    submit(client, survey, body_for(survey))
    [hour] = hours_of(survey.questions.get())
    assert (hour.hour.minute, hour.hour.second, hour.hour.microsecond) == (0, 0, 0)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b, s: b.update(submission_id="not-a-uuid"), "submission_id"),
        (lambda b, s: b.update(submission_id=str(uuid.uuid1())), "submission_id"),
        (lambda b, s: b.pop("submission_id"), "submission_id"),
        (lambda b, s: b["answers"][0].update(value=2), "answers"),
        (lambda b, s: b["answers"][0].update(value="yes"), "answers"),
        (lambda b, s: b["answers"][0].update(question=999999), "answers"),
        (lambda b, s: b["answers"].append(dict(b["answers"][0])), "answers"),
        (lambda b, s: b.update(answers=[]), "answers"),
        (lambda b, s: b.pop("answers"), "answers"),
    ],
    ids=[
        "bad-uuid",
        "not-uuid4",
        "no-uuid",
        "value-2",
        "value-text",
        "unknown-question",
        "duplicate-question",
        "no-answers",
        "answers-missing",
    ],
)
def test_malformed_bodies_get_400_naming_the_field_and_store_nothing(client, survey, mutate, field):
    body = body_for(survey)
    mutate(body, survey)
    response = submit(client, survey, body)
    assert response.status_code == 400
    assert field in response.json()
    assert_nothing_stored()


def test_a_missing_question_is_400(client, make_survey):
    survey = make_survey(n_questions=2)
    body = body_for(survey)
    body["answers"].pop()
    response = submit(client, survey, body)
    assert response.status_code == 400
    assert "missing answers" in str(response.json()["answers"])
    assert_nothing_stored()


def test_a_question_of_another_survey_is_400(client, make_survey):
    survey, other = make_survey(), make_survey()
    body = body_for(survey)
    body["answers"][0]["question"] = other.questions.get().id
    assert submit(client, survey, body).status_code == 400
    assert_nothing_stored()


def test_a_body_that_is_not_json_is_400(client, survey):
    url = reverse("api-submit", args=[survey.slug])
    response = client.post(url, "{nope", content_type="application/json")
    assert response.status_code == 400
    assert "detail" in response.json()
    assert_nothing_stored()


def test_a_body_over_64_kib_is_413(client, survey):
    body = body_for(survey)
    body["invite"] = "x" * (65 * 1024)
    response = submit(client, survey, body)
    assert response.status_code == 413
    assert_nothing_stored()


@pytest.mark.parametrize("status", [Survey.Status.DRAFT, Survey.Status.CLOSED])
def test_a_survey_that_is_not_open_is_409(client, make_survey, status):
    survey = make_survey(status=status)
    response = submit(client, survey, body_for(survey))
    assert response.status_code == 409
    assert_nothing_stored()


def test_an_unknown_survey_is_404(client, survey):
    url = reverse("api-submit", args=["no-such-survey"])
    response = client.post(url, body_for(survey), content_type="application/json")
    assert response.status_code == 404


def test_it_sets_no_cookie(client, survey):
    response = submit(client, survey, body_for(survey))
    assert not response.cookies
