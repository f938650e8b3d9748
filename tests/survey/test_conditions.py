"""Conditions (show_if): a question shown only when an earlier, directly asked question got
given answers. Never on a randomized question (it would branch on the true answer);
hidden questions send nothing and count as not shown, not as skipped."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from analysis.results import survey_results
from survey.models import Survey
from tests.storage import nothing_stored, stored_reports
from tests.survey.test_respondent_views import paper_post

pytestmark = pytest.mark.django_db

STUDENT = {
    "text": "Are you a student?",
    "design": {"name": "direct"},
    "not_sensitive": True,
}
YEAR = {
    "text": "Year of study?",
    "kind": "choice",
    "options": ["First", "Second", "Later"],
    "design": {"name": "direct"},
    "not_sensitive": True,
}
CHEATED = {"text": "Have you cheated in an exam?"}


def create(api, questions):
    return api.post("/api/surveys/", {"title": "Exams", "questions": questions}, format="json")


@pytest.fixture
def conditional(api) -> Survey:
    """Student? → (if yes) cheated in an exam?"""
    response = create(api, [STUDENT, CHEATED | {"show_if": {"index": 0, "in": [1]}}])
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get()
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


def submit(client, survey, answers):
    body = {"submission_id": str(uuid.uuid4()), "answers": answers}
    return client.post(
        reverse("api-submit", args=[survey.slug]), body, content_type="application/json"
    )


def test_a_condition_is_stored_with_the_question_id_it_points_to(api, conditional):
    student, cheated = conditional.questions.all()
    assert cheated.show_if == {"question": student.id, "in": [1]}
    shown = api.get(f"/api/surveys/{conditional.id}/").json()["questions"]
    assert shown[1]["show_if"] == {"question": student.id, "in": [1]}


def test_a_patch_can_point_to_a_question_by_its_id(api, make_survey):
    response = create(api, [YEAR, CHEATED])
    survey = Survey.objects.get()
    year, cheated = survey.questions.all()
    items = [{"id": year.id}, {"id": cheated.id, "show_if": {"question": year.id, "in": [1, 2]}}]
    response = api.patch(f"/api/surveys/{survey.id}/", {"questions": items}, format="json")
    assert response.status_code == 200, response.json()
    cheated.refresh_from_db()
    assert cheated.show_if == {"question": year.id, "in": [1, 2]}


@pytest.mark.parametrize(
    ("questions", "words"),
    [
        ([CHEATED, YEAR | {"show_if": {"index": 0, "in": [1]}}], "true answer"),
        ([STUDENT, CHEATED | {"show_if": {"question": 999999, "in": [1]}}], "not a question"),
        ([STUDENT, CHEATED | {"show_if": {"index": 1, "in": [1]}}], "earlier question"),
        ([CHEATED | {"show_if": {"index": 1, "in": [1]}}, STUDENT], "earlier question"),
        ([STUDENT, CHEATED | {"show_if": {"index": 5, "in": [1]}}], "no question at index 5"),
        ([YEAR, CHEATED | {"show_if": {"index": 0, "in": [3]}}], "answer(s) 3 do not exist"),
        ([STUDENT, CHEATED | {"show_if": {"index": 0, "in": []}}], "non-empty list"),
        ([STUDENT, CHEATED | {"show_if": {"index": 0}}], "non-empty list"),
        ([STUDENT, CHEATED | {"show_if": "question 1"}], "non-empty list"),
    ],
)
def test_a_bad_condition_is_400_naming_the_field_and_nothing_is_stored(api, questions, words):
    response = create(api, questions)
    assert response.status_code == 400
    text = str(response.json())
    assert "show_if" in text and words in text
    assert not Survey.objects.exists()


def test_a_cycle_is_refused(api, make_survey):
    create(api, [YEAR, STUDENT])
    survey = Survey.objects.get()
    year, student = survey.questions.all()
    items = [
        {"id": year.id, "show_if": {"question": student.id, "in": [1]}},
        {"id": student.id, "show_if": {"question": year.id, "in": [0]}},
    ]
    response = api.patch(f"/api/surveys/{survey.id}/", {"questions": items}, format="json")
    assert response.status_code == 400
    assert "cycle" in str(response.json()["questions"])
    assert not any(q.show_if for q in survey.questions.all())


def test_a_hidden_question_sends_nothing_and_is_not_counted_as_skipped(client, conditional):
    student, cheated = conditional.questions.all()
    assert submit(client, conditional, [{"question": student.id, "value": 0}]).status_code == 201
    answers = [{"question": student.id, "value": 1}, {"question": cheated.id, "value": 1}]
    assert submit(client, conditional, answers).status_code == 201
    assert stored_reports(conditional) == [{student.id: 0}, {student.id: 1, cheated.id: 1}]
    entry = survey_results(conditional).as_dict()["questions"][1]
    assert (entry["n"], entry["skipped"]) == (1, 0)


def test_a_shown_question_must_be_answered_and_a_hidden_one_must_not(client, conditional):
    student, cheated = conditional.questions.all()
    response = submit(client, conditional, [{"question": student.id, "value": 1}])
    assert response.status_code == 400
    assert f"missing answers for question(s) {cheated.id}" in str(response.json())
    answers = [{"question": student.id, "value": 0}, {"question": cheated.id, "value": 1}]
    response = submit(client, conditional, answers)
    assert response.status_code == 400
    assert f"question {cheated.id} is not shown" in str(response.json())
    assert nothing_stored()


def test_the_paper_form_says_when_to_answer_and_drops_what_is_not_shown(client, conditional):
    student, cheated = conditional.questions.all()
    html = client.get(conditional.get_absolute_url()).content.decode()
    assert "Only if your answer to “Are you a student?” was “yes”" in html
    response = paper_post(client, conditional, {student.id: "0", cheated.id: "1"})
    assert response.status_code == 200
    assert stored_reports(conditional) == [{student.id: 0}]
