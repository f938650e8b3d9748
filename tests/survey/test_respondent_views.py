"""Respondent pages without a browser: status codes, headers, what is stored."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid

import pytest
from django.contrib.staticfiles.storage import staticfiles_storage
from django.template.loader import render_to_string

from survey.models import Answer, Invite, Submission, Survey

pytestmark = pytest.mark.django_db


def paper_post(client, survey, values: dict[int, str], **extra):
    data = {"submission_id": str(uuid.uuid4()), **extra}
    data |= {f"reported_{qid}": value for qid, value in values.items()}
    return client.post(f"/s/{survey.slug}/paper/", data)


def read_static(path: str) -> bytes:
    with staticfiles_storage.open(path) as handle:
        return handle.read()


def assert_respondent_headers(response) -> None:
    assert response["Referrer-Policy"] == "no-referrer"
    assert response["Cache-Control"] == "no-store"
    assert not response.cookies


def test_the_respondent_page_sets_no_cookies_and_sends_no_referrer(client, survey):
    response = client.get(survey.get_absolute_url())
    assert response.status_code == 200
    assert_respondent_headers(response)


def test_the_true_answer_controls_have_no_name_and_sit_outside_every_form(client, survey):
    html = client.get(survey.get_absolute_url()).content.decode()
    truth_buttons = re.findall(r"<button[^>]*data-truth[^>]*>", html)
    assert len(truth_buttons) == 2
    assert all(" name=" not in button for button in truth_buttons)
    for form in re.findall(r"<form.*?</form>", html, flags=re.S):
        assert "data-truth" not in form


def test_the_page_states_epsilon_per_question_and_in_total(client, make_survey):
    html = client.get(make_survey(3).get_absolute_url()).content.decode()
    assert "Answering all 3 questions" in html
    assert "ε = 3.30" in html and "27× more likely" in html
    assert html.count("ε = 1.10: a “yes” from you is at most") == 3


def test_an_unknown_survey_gets_a_human_not_found_page(client):
    response = client.get("/s/no-such-survey/")
    assert response.status_code == 404
    assert "Survey not found" in response.content.decode()
    assert_respondent_headers(response)


@pytest.mark.parametrize(
    ("status", "words"),
    [(Survey.Status.DRAFT, "it has not opened yet"), (Survey.Status.CLOSED, "it has closed")],
)
def test_a_survey_that_is_not_open_gets_a_clear_page(client, make_survey, status, words):
    response = client.get(make_survey(status=status).get_absolute_url())
    assert response.status_code == 409
    assert words in response.content.decode()
    assert_respondent_headers(response)


def test_a_missing_or_wrong_invite_gets_the_invite_page(client, make_survey):
    survey = make_survey(requires_invite=True)
    for suffix in ("", "?invite=not-a-real-token"):
        response = client.get(survey.get_absolute_url() + suffix)
        assert response.status_code == 403
        assert "does not carry a valid invite" in response.content.decode()
        assert_respondent_headers(response)


def test_a_used_invite_says_it_was_used(client, make_survey):
    survey = make_survey(requires_invite=True)
    (token,) = Invite.create_batch(survey, 1)
    assert client.get(f"{survey.get_absolute_url()}?invite={token}").status_code == 200
    Invite.consume(survey, token)
    response = client.get(f"{survey.get_absolute_url()}?invite={token}")
    assert response.status_code == 403
    assert "already been used" in response.content.decode()


def test_the_paper_form_stores_only_the_coin_results(client, make_survey):
    survey = make_survey(2)
    q1, q2 = survey.questions.all()
    response = paper_post(client, survey, {q1.id: "1", q2.id: "0"})
    assert response.status_code == 200
    assert "Thank you" in response.content.decode()
    assert_respondent_headers(response)
    assert dict(Answer.objects.values_list("question_id", "value")) == {q1.id: 1, q2.id: 0}


@pytest.mark.parametrize("bad", [None, "", "2", "yes", "-1"])
def test_the_paper_form_refuses_a_missing_or_impossible_result_and_stores_nothing(
    client, make_survey, bad
):
    survey = make_survey(2)
    q1, q2 = survey.questions.all()
    values = {q1.id: "1"} | ({} if bad is None else {q2.id: bad})
    response = paper_post(client, survey, values)
    assert response.status_code == 400
    assert "Please give a result for every question" in response.content.decode()
    assert Submission.objects.count() == 0 and Answer.objects.count() == 0


def test_the_paper_form_to_a_closed_survey_stores_nothing(client, make_survey):
    survey = make_survey(status=Survey.Status.CLOSED)
    response = paper_post(client, survey, {survey.questions.get().id: "1"})
    assert response.status_code == 409
    assert Submission.objects.count() == 0


def test_the_paper_form_to_an_unknown_survey_is_a_human_404(client):
    response = client.post("/s/nope/paper/", {"reported_1": "1"})
    assert response.status_code == 404
    assert "Survey not found" in response.content.decode()


def test_the_paper_form_with_a_used_invite_stores_nothing(client, make_survey):
    survey = make_survey(requires_invite=True)
    (token,) = Invite.create_batch(survey, 1)
    qid = survey.questions.get().id
    assert paper_post(client, survey, {qid: "1"}, invite=token).status_code == 200
    response = paper_post(client, survey, {qid: "0"}, invite=token)
    assert response.status_code == 403
    assert "already been used" in response.content.decode()
    assert list(Answer.objects.values_list("value", flat=True)) == [1]


def test_a_repeated_paper_submission_is_stored_once(client, survey):
    data = {"submission_id": str(uuid.uuid4()), f"reported_{survey.questions.get().id}": "1"}
    for _ in range(2):
        assert client.post(f"/s/{survey.slug}/paper/", data).status_code == 200
    assert Submission.objects.count() == 1


def test_a_bad_paper_submission_id_is_replaced_by_a_random_one(client, survey):
    data = {"submission_id": "1", f"reported_{survey.questions.get().id}": "0"}
    assert client.post(f"/s/{survey.slug}/paper/", data).status_code == 200
    assert Submission.objects.get().submission_id.version == 4


def test_the_paper_page_explains_two_coins_only_for_the_classic_design(client, make_survey):
    classic = make_survey()
    assert "Answer with two real coins" in client.get(classic.get_absolute_url()).content.decode()
    other = make_survey(0)
    other.questions.create(text="Q?", design_name="mirrored", design_params={"p": 2 / 3})
    other.questions.create(
        text="R?", design_name="unrelated_question", design_params={"p_truth": 0.5, "pi": 0.0833}
    )
    html = client.get(other.get_absolute_url()).content.decode()
    assert "Answer with two real coins" not in html
    assert "Roll a six-sided die. 1–4: your result is your true answer." in html
    assert "Pick a random whole number from 1 to 10,000" in html


def test_how_it_works_shows_the_served_sampler_and_its_sha256(client):
    served = read_static("survey/rr.js")
    response = client.get("/how-it-works/")
    html = response.content.decode()
    assert hashlib.sha256(served).hexdigest() in html
    assert "export function randomize(designName, params, trueAnswer" in html
    assert "crypto.getRandomValues(buffer)" in html
    assert_respondent_headers(response)


def test_the_page_loads_its_scripts_with_the_integrity_of_the_served_files(client, survey):
    html = client.get(survey.get_absolute_url()).content.decode()
    tags = re.findall(r'(?:src|href)="/static/([^"]+\.js)" integrity="sha384-([^"]+)"', html)
    assert {path.split("/")[-1].split(".")[0] for path, _ in tags} == {"rr", "respond"}
    for path, digest in tags:
        served = read_static(path)
        assert base64.b64decode(digest) == hashlib.sha384(served).digest()


def test_the_server_error_page_needs_no_request_context():
    html = render_to_string("500.html")
    assert "Something went wrong on our side" in html
    assert "your answers are safe on your device" in html


def test_healthz_answers_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.content == b"ok"
