"""Respondent pages without a browser: status codes, headers, what is stored."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import uuid

import pytest
from django.contrib.staticfiles.storage import staticfiles_storage
from django.template.loader import render_to_string
from django.urls import reverse

from responses.answer_sheet import AnswerSheet, InvalidAnswers
from survey.models import Survey
from survey.templatetags.respondent import attribute_json
from tests.storage import nothing_stored, stored_count, stored_reports, tallied

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
    assert "ε&nbsp;=&nbsp;3.30" in html and "27× more likely" in html
    assert html.count("ε = 1.10: what is sent is at most 3× more likely if your true") == 3


def test_a_yes_no_design_with_an_epsilon_beyond_e_to_709_renders_its_words(client, make_survey):
    """Once an OverflowError (a 500): e^ε of a finite ε ≈ 714 (P("yes" | no) ≈ 5e-311)."""
    survey = make_survey(1)
    survey.questions.update(design_params={"p_truth": 0.5, "p_yes": 1e-310})
    assert 709 < survey.questions.get().design.epsilon < math.inf
    response = client.get(survey.get_absolute_url())
    assert response.status_code == 200
    assert "would, seeing it, think it at most 100" in response.content.decode()


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


def test_a_link_without_an_invite_gets_the_invite_page(client, make_survey):
    response = client.get(make_survey(requires_invite=True).get_absolute_url())
    assert response.status_code == 403
    assert "this link does not carry an invite" in response.content.decode()
    assert_respondent_headers(response)


def test_the_paper_form_stores_only_the_coin_results(client, make_survey):
    survey = make_survey(2)
    q1, q2 = survey.questions.all()
    response = paper_post(client, survey, {q1.id: "1", q2.id: "0"})
    assert response.status_code == 200
    assert "Thank you" in response.content.decode()
    assert_respondent_headers(response)
    assert stored_reports(survey) == [{q1.id: 1, q2.id: 0}]


@pytest.mark.parametrize("bad", [None, "", "2", "yes", "-1"])
def test_the_paper_form_refuses_a_missing_or_impossible_result_and_stores_nothing(
    client, make_survey, bad
):
    survey = make_survey(2)
    q1, q2 = survey.questions.all()
    values = {q1.id: "1"} | ({} if bad is None else {q2.id: bad})
    response = paper_post(client, survey, values)
    assert response.status_code == 400
    assert "Please give a valid result for every question" in response.content.decode()
    assert nothing_stored()


def test_the_paper_form_to_a_closed_survey_stores_nothing(client, make_survey):
    survey = make_survey(status=Survey.Status.CLOSED)
    response = paper_post(client, survey, {survey.questions.get().id: "1"})
    assert response.status_code == 409
    assert stored_count() == 0


def test_the_paper_form_to_an_unknown_survey_is_a_human_404(client):
    response = client.post("/s/nope/paper/", {"reported_1": "1"})
    assert response.status_code == 404
    assert "Survey not found" in response.content.decode()


def test_a_repeated_paper_submission_is_stored_once(client, survey):
    data = {"submission_id": str(uuid.uuid4()), f"reported_{survey.questions.get().id}": "1"}
    for _ in range(2):
        assert client.post(f"/s/{survey.slug}/paper/", data).status_code == 200
    assert stored_count() == 1


def test_a_bad_paper_submission_id_is_replaced_by_a_random_one(client, survey):
    data = {"submission_id": "1", f"reported_{survey.questions.get().id}": "0"}
    assert client.post(f"/s/{survey.slug}/paper/", data).status_code == 200
    assert stored_count() == 1


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


# A survey with every kind and design a respondent can meet.
LN3 = math.log(3)
MIXED = [
    (
        "binary",
        "forced_response",
        {"p_truth": 0.5, "p_yes": 0.5},
        [],
        "Have you cheated on an exam?",
    ),
    ("binary", "mirrored", {"p": 0.75}, [], "Have you copied homework?"),
    ("binary", "unrelated_question", {"p_truth": 0.5, "pi": 0.25}, [], "Have you lied to a tutor?"),
    ("binary", "crosswise", {"p": 0.25}, [], "I have taken a study drug without a prescription."),
    ("choice", "k_rr", {"epsilon": LN3}, ["Never", "Sometimes", "Often"], "How often do you skip?"),
    (
        "choice",
        "forced_response",
        {"p_truth": 0.5, "p_forced": [0.5, 0.25, 0.25]},
        ["None", "One", "Several"],
        "How many exams have you faked illness for?",
    ),
    ("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 20}, [], "Drinks last week?"),
    ("binary", "direct", {}, [], "Are you a full-time student?"),
    ("choice", "direct", {}, ["First", "Second", "Third or later"], "Year of study?"),
    ("number", "direct", {"lower": 16, "upper": 99}, [], "How old are you?"),
]


def add_questions(survey: Survey, specs=MIXED) -> list:
    return [
        survey.questions.create(
            position=i, text=text, kind=kind, design_name=name, design_params=params, options=opts
        )
        for i, (kind, name, params, opts, text) in enumerate(specs)
    ]


@pytest.fixture
def mixed(make_survey) -> Survey:
    survey = make_survey(0)
    add_questions(survey)
    return survey


def digital_part(html: str) -> str:
    return html[html.index("data-digital") : html.index('<form class="paper"')]


def test_every_kind_gets_its_own_control_with_no_name_outside_every_form(client, mixed):
    html = client.get(mixed.get_absolute_url()).content.decode()
    digital = digital_part(html)
    assert digital.count('role="radiogroup"') == 3 and digital.count('role="radio"') == 9
    assert 'type="number"' in digital and 'min="0"' in digital and 'max="20"' in digital
    assert 'min="16"' in digital and 'max="99"' in digital
    assert " name=" not in digital and "<form" not in digital
    # Crosswise: both statements, and only "same or different?".
    assert "I have taken a study drug without a prescription." in digital
    assert "My mother&#x27;s birthday is in January to March." in digital
    assert ">Same</button>" in digital and ">Different</button>" in digital


def test_the_page_states_each_design_epsilon_in_words_and_direct_questions_apart(client, mixed):
    html = client.get(mixed.get_absolute_url()).content.decode()
    total = sum(q.epsilon for q in mixed.questions.all() if q.design.randomized)
    assert (
        f"Answering the 7 randomized questions: <strong>ε&nbsp;=&nbsp;{total:.2f}</strong>"
        in " ".join(html.split())
    )
    assert "3 background questions are asked directly" in html
    assert (
        digital_part(html).count("Asked directly</span> Your answer is stored as you give it") == 3
    )
    noise = mixed.questions.get(design_name="laplace").design.typical_noise
    assert (
        f"ε = 1.00: what is sent is your number plus random noise of typical size ±{noise:.0f}; "
        "a report is at most 2.72× more likely for one true number than for any other"
    ) in html
    assert html.count("whichever option is sent is at most 3× more likely") == 1  # k-RR
    assert html.count("whichever option is sent is at most 5× more likely") == 1  # the die


def test_the_paper_page_explains_a_physical_device_for_every_design(client, mixed):
    html = client.get(mixed.get_absolute_url()).content.decode()
    paper = " ".join(html[html.index('class="paper"') :].split())
    # k-RR at ln 3 with 3 options: the true option is kept with probability 2/5.
    expected = [
        "Shuffle 5 slips of paper numbered 1 to 5 face down and draw one. "
        "1 or 2: your result is your true answer.",
        "Roll a six-sided die. 1 or 2: your result is “Never”. "
        "3 or 4: your result is “Sometimes”. 5 or 6: your result is “Often”.",
        "Shuffle 4 slips of paper numbered 1 to 4 face down and draw one. "
        "1 or 2: your result is “None”. 3: your result is “One”. 4: your result is “Several”.",
        "1–3: your result is your true answer. 4: your result is the opposite of your true answer",
        # The unrelated question's second step, pi = ¼.
        "draw one. 1: your result is “yes”. 2–4: your result is “no”.",
    ]
    for sentence in expected:
        assert sentence in paper
    assert "My mother&#x27;s birthday is in January to March." in paper
    laplace = mixed.questions.get(design_name="laplace")
    assert "This question needs JavaScript" in paper
    assert f'name="reported_{laplace.id}"' not in paper
    for question in mixed.questions.exclude(pk=laplace.pk):
        assert f'name="reported_{question.id}"' in paper


def paper_values(mixed, **overrides) -> dict[int, str]:
    values = {}
    for q in mixed.questions.all():
        if q.design_name != "laplace":
            values[q.id] = "30" if q.kind == "number" else "1"
    return values | {mixed.questions.get(text=t).id: v for t, v in overrides.items()}


def test_the_paper_page_stores_every_answer_but_the_number_that_needs_javascript(client, mixed):
    response = paper_post(client, mixed, paper_values(mixed))
    assert response.status_code == 200, response.content.decode()
    laplace = mixed.questions.get(design_name="laplace")
    [stored] = stored_reports(mixed)
    assert set(stored) == {q.id for q in mixed.questions.exclude(pk=laplace.pk)}
    assert tallied(mixed).get(laplace.id) is None


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("Drinks last week?", "7"),  # a true number: the page never asks for it
        ("How often do you skip?", "3"),
        ("How often do you skip?", "1.0"),
        ("How old are you?", "15"),
        ("How old are you?", ""),
        ("Are you a full-time student?", "2"),
    ],
)
def test_the_paper_page_refuses_a_bad_or_extra_answer_and_stores_nothing(client, mixed, text, bad):
    response = paper_post(
        client, mixed, paper_values(mixed) | {mixed.questions.get(text=text).id: bad}
    )
    assert response.status_code == 400
    assert f"“{text}”" in response.content.decode().split('role="alert"')[1].split("</p>")[0]
    assert nothing_stored()
    assert nothing_stored()


def test_only_the_paper_path_may_leave_a_randomized_number_out(mixed):
    sheet = AnswerSheet.for_slug(mixed.slug)
    laplace = mixed.questions.get(design_name="laplace")
    answers = [{"question": q.id, "value": 1} for q in mixed.questions.exclude(pk=laplace.pk)]
    answers[-1]["value"] = 30  # the age
    assert set(sheet.check(answers, paper=True)) == {a["question"] for a in answers}
    with pytest.raises(InvalidAnswers, match=f"missing answers for question\\(s\\) {laplace.id}"):
        sheet.check(answers)
    # A directly asked number is never optional.
    with pytest.raises(InvalidAnswers) as error:
        sheet.check(answers[:-1], paper=True)
    assert error.value.questions == {answers[-1]["question"]}


def test_the_api_still_needs_the_number(client, mixed):
    laplace = mixed.questions.get(design_name="laplace")
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [
            {"question": q.id, "value": 30 if q.kind == "number" else 1}
            for q in mixed.questions.exclude(pk=laplace.pk)
        ],
    }
    url = reverse("api-submit", args=[mixed.slug])
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 400
    assert stored_count() == 0


def test_design_parameters_reach_the_browser_as_exact_json_that_cannot_break_out(client, mixed):
    html = client.get(mixed.get_absolute_url()).content.decode()
    params = re.findall(r"data-params='([^']*)'", html)
    declarations = re.findall(r"data-declaration='([^']*)'", html)
    assert len(params) == len(declarations) == mixed.questions.count()
    for question, raw in zip(mixed.questions.all(), params, strict=True):
        expected = question.design.params() | (
            {"k": len(question.options)} if question.kind == "choice" else {}
        )
        assert json.loads(raw) == expected
    assert json.loads(declarations[4])["parameters"][0]["name"] == "epsilon"
    hostile = {"note": "</section><script>alert(1)</script>' onmouseover='x' &amp;"}
    encoded = str(attribute_json(hostile))
    assert not set("'<>&") & set(encoded) and json.loads(encoded) == hostile


def test_the_respondent_page_is_compressed_for_browsers_that_accept_it(client, survey):
    plain = client.get(survey.get_absolute_url())
    packed = client.get(survey.get_absolute_url(), headers={"accept_encoding": "gzip"})
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    assert len(packed.content) < len(plain.content) / 2
    assert_respondent_headers(packed)
