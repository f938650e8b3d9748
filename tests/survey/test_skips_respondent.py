""" "Prefer not to answer" as the respondent, the API and the researcher meet it: a skip is
sent as ``null``, stored as a skip, refused (and nothing stored) where the survey does
not allow it, and the no-JavaScript form keeps what was chosen when it is refused."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.urls import reverse

from responses.write import record_submission
from survey.models import Survey
from tests.storage import nothing_stored, stored_reports
from tests.survey.test_respondent_views import add_questions, paper_post

pytestmark = pytest.mark.django_db


def submit(client, survey, answers):
    body = {"submission_id": str(uuid.uuid4()), "answers": answers}
    url = reverse("api-submit", args=[survey.slug])
    return client.post(url, body, content_type="application/json")


def test_new_surveys_allow_skipping(api):
    response = api.post("/api/surveys/", {"title": "Habits", "questions": []}, format="json")
    assert response.status_code == 201
    assert response.json()["allow_skip"] is True
    assert Survey.objects.get().allow_skip


def test_a_survey_created_from_the_list_allows_skipping(logged_in):
    logged_in.post("/surveys/new/", {"title": "Student life", "mode": "research"})
    assert Survey.objects.get().allow_skip


def test_a_null_value_is_stored_as_a_skip(client, make_survey):
    survey = make_survey(2)
    q1, q2 = survey.questions.all()
    answers = [{"question": q1.id, "value": 1}, {"question": q2.id, "value": None}]
    response = submit(client, survey, answers)
    assert response.status_code == 201
    assert stored_reports(survey) == [{q1.id: 1, q2.id: None}]


def test_a_null_value_is_refused_when_skips_are_off_and_nothing_is_stored(client, make_survey):
    survey = make_survey(2, allow_skip=False)
    q1, q2 = survey.questions.all()
    answers = [{"question": q1.id, "value": 1}, {"question": q2.id, "value": None}]
    response = submit(client, survey, answers)
    assert response.status_code == 400
    message = " ".join(response.json()["answers"])
    assert f"value null for question {q2.id}" in message
    assert "allow_skip" in message
    assert nothing_stored()


def test_a_frozen_survey_keeps_refusing_skips_from_its_cached_sheet(client, make_survey):
    survey = make_survey(1, allow_skip=False)
    (q,) = survey.questions.all()
    assert submit(client, survey, [{"question": q.id, "value": 1}]).status_code == 201
    assert submit(client, survey, [{"question": q.id, "value": None}]).status_code == 400
    assert stored_reports(survey) == [{q.id: 1}]


def test_allow_skip_changes_the_design_version_before_answers(api, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    response = api.patch(f"/api/surveys/{survey.id}/", {"allow_skip": False}, format="json")
    assert response.status_code == 200
    survey.refresh_from_db()
    assert (survey.allow_skip, survey.design_version) == (False, 2)


def test_allow_skip_is_frozen_once_answers_exist(api, make_survey):
    survey = make_survey(1)
    record_submission(survey, uuid.uuid4(), {survey.questions.get().id: 1})
    response = api.patch(f"/api/surveys/{survey.id}/", {"allow_skip": False}, format="json")
    assert response.status_code == 409
    assert "frozen" in response.json()["allow_skip"][0]
    survey.refresh_from_db()
    assert survey.allow_skip


def test_the_builder_says_beside_the_field_that_skips_are_frozen(logged_in, make_survey):
    survey = make_survey(1)
    record_submission(survey, uuid.uuid4(), {survey.questions.get().id: 1})
    data = {"title": survey.title, "description": "", "mode": "research", "language": "en"}
    response = logged_in.post(f"/surveys/{survey.id}/edit/", data)  # the box unticked
    assert response.status_code == 400
    assert "whether it allows skipping is frozen" in response.content.decode()
    survey.refresh_from_db()
    assert survey.allow_skip


def test_every_question_offers_a_skip_the_researcher_will_see(client, make_survey):
    survey = make_survey(0)
    add_questions(survey)
    html = client.get(survey.get_absolute_url()).content.decode()
    digital = html[html.index("data-digital") : html.index('<form class="paper"')]
    assert digital.count("data-skip") == 10
    assert "the researcher sees that you skipped" in html
    paper = html[html.index('<form class="paper"') :]
    # Every question the paper form asks (the randomized number it cannot) has a skip.
    assert paper.count('value="skip"') == 9


def test_a_survey_without_skips_offers_none(client, make_survey):
    survey = make_survey(2, allow_skip=False)
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "data-skip" not in html
    assert 'value="skip"' not in html


def test_the_paper_form_stores_a_skip_for_every_kind(client, make_survey):
    survey = make_survey(0)
    questions = add_questions(survey)
    values = {q.id: "skip" for q in questions if q.kind != "number"}
    direct_number = next(q for q in questions if q.kind == "number" and q.design_name == "direct")
    response = paper_post(client, survey, values, **{f"skip_{direct_number.id}": "skip"})
    assert response.status_code == 200, response.content.decode()[:2000]
    (stored,) = stored_reports(survey)
    laplace = next(q for q in questions if q.design_name == "laplace")
    assert stored == {q.id: None for q in questions if q != laplace}


def test_the_paper_form_refuses_a_skip_when_skips_are_off(client, make_survey):
    survey = make_survey(2, allow_skip=False)
    q1, q2 = survey.questions.all()
    response = paper_post(client, survey, {q1.id: "1", q2.id: "skip"})
    assert response.status_code == 400
    assert nothing_stored()


def test_a_refused_paper_form_keeps_what_was_chosen_with_the_error_first(client, make_survey):
    survey = make_survey(0)
    questions = add_questions(survey)
    cheated, copied, *_ = questions
    often = next(q for q in questions if q.design_name == "k_rr")
    age = next(q for q in questions if q.kind == "number" and q.design_name == "direct")
    values = {cheated.id: "1", copied.id: "skip", often.id: "2", age.id: "23"}
    response = paper_post(client, survey, values)
    assert response.status_code == 400
    assert nothing_stored()
    html = response.content.decode()
    checked = re.findall(r'name="reported_(\d+)" value="([^"]+)" checked', html)
    assert set(checked) == {(str(cheated.id), "1"), (str(copied.id), "skip"), (str(often.id), "2")}
    assert re.search(rf'name="reported_{age.id}"[^>]*value="23"', html)
    # The error comes first in the article, takes the focus, and links to each question.
    error = html.index('class="error paper-error"')
    assert error < html.index('class="guarantee"')
    assert re.search(r'class="error paper-error" role="alert" tabindex="-1" autofocus', html)
    assert f'href="#p{questions[2].id}"' in html
    assert f'href="#p{cheated.id}"' not in html
    assert f'id="p{questions[2].id}" class="has-error"' in html


def test_the_results_count_skips_apart(logged_in, make_survey):
    survey = make_survey(1)
    (q,) = survey.questions.all()
    for value in (1, 0, None, None):
        record_submission(survey, uuid.uuid4(), {q.id: value})
    html = logged_in.get(f"/surveys/{survey.id}/results/").content.decode()
    assert "2&nbsp;skipped" in html
    csv_text = logged_in.get(f"/api/surveys/{survey.id}/estimates.csv").content.decode()
    header, row = csv_text.splitlines()[:2]
    assert dict(zip(header.split(","), row.split(","), strict=True))["skipped"] == "2"


def test_the_codebook_says_an_empty_cell_is_a_skip(api, make_survey):
    survey = make_survey(1)
    codebook = api.get(f"/api/surveys/{survey.id}/codebook.json").json()
    assert codebook["allow_skip"] is True
    assert "Prefer not to answer" in codebook["columns"]["q<k>"]
    assert json.dumps(codebook)  # still plain JSON
