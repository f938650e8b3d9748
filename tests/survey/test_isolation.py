"""Another researcher's survey is a 404 everywhere — pages and API — and stays untouched."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from survey.models import Invite, Survey

pytestmark = pytest.mark.django_db

PAGES = [
    ("get", "/surveys/{s}/edit/"),
    ("post", "/surveys/{s}/edit/"),
    ("post", "/surveys/{s}/status/"),
    ("post", "/surveys/{s}/delete/"),
    ("post", "/surveys/{s}/preview/"),
    ("post", "/surveys/{s}/questions/"),
    ("post", "/surveys/{s}/questions/{q}/"),
    ("post", "/surveys/{s}/questions/{q}/move/"),
    ("post", "/surveys/{s}/questions/{q}/delete/"),
    ("get", "/surveys/{s}/distribute/"),
    ("post", "/surveys/{s}/invites/"),
    ("post", "/surveys/{s}/import/"),
    ("get", "/surveys/{s}/results/"),
]
API = [
    ("get", "/api/surveys/{s}/"),
    ("patch", "/api/surveys/{s}/"),
    ("delete", "/api/surveys/{s}/"),
    ("post", "/api/surveys/{s}/open/"),
    ("post", "/api/surveys/{s}/close/"),
    ("get", "/api/surveys/{s}/export.csv"),
    ("get", "/api/surveys/{s}/codebook.json"),
    ("get", "/api/surveys/{s}/estimates/"),
    ("get", "/api/surveys/{s}/estimates.csv"),
    ("post", "/api/surveys/{s}/import/"),
    ("get", "/api/surveys/{s}/invites/"),
    ("post", "/api/surveys/{s}/invites/"),
]
BODIES = {
    "patch": {"title": "Taken over", "questions": []},
    "post": {"n": 3, "action": "close", "title": "Taken over", "new-text": "Mine?"},
}


@pytest.fixture
def victim_survey(make_survey) -> Survey:
    return make_survey(n_questions=2)


def snapshot(survey: Survey) -> tuple:
    survey.refresh_from_db()
    questions = list(survey.questions.values_list("id", "position", "text", "design_params"))
    return survey.title, survey.status, questions, Invite.objects.count()


def url_for(template: str, survey: Survey) -> str:
    return template.format(s=survey.id, q=survey.questions.first().id)


@pytest.mark.parametrize(("method", "template"), PAGES)
def test_pages_answer_404_for_another_researchers_survey(
    client, outsider, victim_survey, method, template
):
    client.force_login(outsider)
    before = snapshot(victim_survey)
    response = getattr(client, method)(url_for(template, victim_survey), BODIES.get(method, {}))
    assert response.status_code == 404
    assert snapshot(victim_survey) == before


@pytest.mark.parametrize(("method", "template"), API)
def test_the_api_answers_404_for_another_researchers_survey(
    outsider, victim_survey, method, template
):
    api = APIClient()
    api.force_authenticate(outsider)
    before = snapshot(victim_survey)
    url = url_for(template, victim_survey)
    if template.endswith("import/"):
        response = api.post(url, "q1,q2\n1,1\n", content_type="text/csv")
    else:
        response = getattr(api, method)(url, BODIES.get(method, {}), format="json")
    assert response.status_code == 404
    assert snapshot(victim_survey) == before
    assert not victim_survey.submissions.exists()


def test_a_question_of_another_survey_is_a_404_even_in_your_own_survey_url(
    client, owner, make_survey, outsider
):
    mine = make_survey()
    theirs = make_survey(owner=outsider)
    client.force_login(owner)
    foreign = theirs.questions.get()
    response = client.post(f"/surveys/{mine.id}/questions/{foreign.id}/delete/")
    assert response.status_code == 404
    assert theirs.questions.exists()


def test_the_survey_list_shows_only_your_own(client, owner, make_survey, outsider):
    theirs = make_survey(owner=outsider)
    Survey.objects.filter(pk=theirs.pk).update(title="Their survey")
    make_survey()
    client.force_login(owner)
    page = client.get("/surveys/").content.decode()
    assert "Exam honesty" in page
    assert "Their survey" not in page
