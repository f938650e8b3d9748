"""Consent: the researcher's text comes before the questions, and nothing is sent or
stored until the respondent agrees — with and without JavaScript."""

from __future__ import annotations

import pytest
from django.urls import reverse

from survey.models import Invite, Survey
from tests.storage import nothing_stored, stored_reports, use_invite
from tests.survey.test_respondent_views import paper_post

pytestmark = pytest.mark.django_db

CONSENT = "This study is run by the ethics lab.\n\nYou may stop at any time."


def test_the_api_sets_and_returns_the_consent_text(api):
    body = {"title": "Habits", "consent_text": CONSENT, "questions": []}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201
    assert response.json()["consent_text"] == CONSENT
    survey = Survey.objects.get()
    response = api.patch(f"/api/surveys/{survey.id}/", {"consent_text": ""}, format="json")
    assert response.json()["consent_text"] == ""


def test_the_consent_comes_before_the_questions_with_the_agree_button(client, make_survey):
    survey = make_survey(1, consent_text=CONSENT)
    html = client.get(survey.get_absolute_url()).content.decode()
    assert html.index("Before you start") < html.index("data-digital")
    assert "<p>You may stop at any time.</p>" in html
    assert "data-agree hidden" in html  # respond.js shows it; no-JS has the box instead
    assert 'name="consent" value="yes" required' in html


def test_a_survey_without_consent_text_has_no_consent_step(client, survey):
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "Before you start" not in html
    assert 'name="consent"' not in html


def test_the_paper_form_stores_nothing_without_consent(client, make_survey):
    survey = make_survey(2, consent_text=CONSENT)
    q1, q2 = survey.questions.all()
    response = paper_post(client, survey, {q1.id: "1", q2.id: "skip"})
    assert response.status_code == 400
    assert nothing_stored()
    html = response.content.decode()
    assert "Please tick “I agree” under the consent text first" in html
    assert f'name="reported_{q1.id}" value="1" checked' in html

    response = paper_post(client, survey, {q1.id: "1", q2.id: "skip"}, consent="yes")
    assert response.status_code == 200
    assert stored_reports(survey) == [{q1.id: 1, q2.id: None}]


def test_a_refused_paper_form_keeps_the_consent_ticked(client, make_survey):
    survey = make_survey(2, consent_text=CONSENT)
    q1, _ = survey.questions.all()
    html = paper_post(client, survey, {q1.id: "1"}, consent="yes").content.decode()
    assert 'name="consent" value="yes" required checked' in html


def test_an_invite_is_not_used_before_consent(client, make_survey):
    survey = make_survey(1, requires_invite=True, consent_text=CONSENT)
    (token,) = Invite.create_batch(survey, 1)
    url = reverse("survey:respond_paper_invite", args=[survey.slug])
    response = client.post(url, {"invite": token})
    assert response.status_code == 400
    assert "Please tick “I agree”" in response.content.decode()
    assert use_invite(survey, token)  # still unused


def test_after_consent_the_invite_page_carries_the_consent_to_the_answers(client, make_survey):
    survey = make_survey(1, requires_invite=True, consent_text=CONSENT)
    (token,) = Invite.create_batch(survey, 1)
    url = reverse("survey:respond_paper_invite", args=[survey.slug])
    html = client.post(url, {"invite": token, "consent": "yes"}).content.decode()
    assert '<input type="hidden" name="consent" value="yes">' in html
    assert not use_invite(survey, token)  # used now


def test_the_builder_saves_the_consent_text(logged_in, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    data = {
        "title": survey.title,
        "mode": "research",
        "language": "en",
        "allow_skip": "on",
        "consent_text": CONSENT,
    }
    response = logged_in.post(f"/surveys/{survey.id}/edit/", data)
    assert response.status_code == 302
    survey.refresh_from_db()
    assert (survey.consent_text, survey.allow_skip) == (CONSENT, True)
