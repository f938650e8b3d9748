"""The unrelated question with unknown prevalence as a question of the app: created
through the API with its innocuous question (ε = ∞ acknowledged), bad input refused
naming the field with nothing stored, the respondent page asking both true answers on the
device, the paper steps, the codebook, both prevalences on the estimates API, the
results page and per group in a breakdown, and the planner's sample size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from estimator.arms import UnrelatedQuestionUnknown
from responses.write import bulk_record, simulate_respondents
from survey.builder import Assumptions, plan
from survey.codebook import codebook
from survey.models import Question, Survey
from survey.templatetags.privacy import percent
from tests.analysis.test_arms_question import post_survey, submit
from tests.storage import nothing_stored, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

UQU = {"name": "unrelated_question_unknown", "p_truth": [0.3, 0.7], "arm_weights": [0.5, 0.5]}
SLD = {"name": "stochastic_lie_detector", "p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]}
BORN = "Were you born in the first half of the year?"


def post(api, design: dict = UQU, **extra):
    return post_survey(api, design, allow_no_privacy=True, **extra)


def test_it_is_created_with_its_innocuous_question_and_no_privacy_acknowledged(api):
    refused = post_survey(api, UQU, innocuous_text=BORN)
    assert refused.status_code == 400
    assert "allow_no_privacy" in json.dumps(refused.json())
    assert not Survey.objects.exists()
    made = post(api, innocuous_text=f"  {BORN} ")
    assert made.status_code == 201, made.json()
    question = made.json()["questions"][0]
    assert question["innocuous_text"] == BORN
    assert question["epsilon"] is None
    assert question["design"] == UQU


@pytest.mark.parametrize(
    ("design", "extra", "field", "words"),
    [
        (UQU, {}, "innocuous_text", "give its wording"),
        (UQU, {"innocuous_text": "   "}, "innocuous_text", "give its wording"),
        (SLD, {"innocuous_text": BORN}, "innocuous_text", "only a design that asks"),
        ({**UQU, "p_truth": [0.5, 0.5]}, {"innocuous_text": BORN}, "design", "p_truth"),
        ({**UQU, "arm_weights": [1.0, 0.0]}, {"innocuous_text": BORN}, "design", "arm_weights"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_is_stored(
    api, design, extra, field, words
):
    response = post(api, design, **extra)
    assert response.status_code == 400
    errors = response.json()["questions"]["0"][field]
    assert words in json.dumps(errors, ensure_ascii=False), errors
    assert not Survey.objects.exists()


def test_a_patch_that_drops_the_innocuous_question_is_refused(api):
    made = post(api, innocuous_text=BORN)
    survey = Survey.objects.get(id=made.json()["id"])
    question = survey.questions.get()
    response = api.patch(
        f"/api/surveys/{survey.id}/",
        {"questions": [{"id": question.id, "innocuous_text": ""}]},
        format="json",
    )
    assert response.status_code == 400
    assert "innocuous_text" in response.json()["questions"]["0"]
    question.refresh_from_db()
    assert question.innocuous_text == BORN


def open_survey(api) -> Survey:
    made = post(api, innocuous_text=BORN)
    assert made.status_code == 201, made.json()
    survey = Survey.objects.get(id=made.json()["id"])
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


def test_the_respondent_page_asks_both_answers_on_the_device(api, client):
    survey = open_survey(api)
    html = client.get(survey.get_absolute_url()).content.decode()
    assert BORN in html and "data-asks-innocuous" in html
    assert html.count('data-innocuous="') == 2 and html.count('data-truth="') == 2
    # The true answers stay on the device: no form field carries them.
    start = html.index("data-asks-innocuous")
    section = html[start : html.index("</section>", start)]
    assert "name=" not in section
    assert "Your true answer to this second question (stays on this device)" in section
    assert "No privacy against someone who knows your answer to the second question" in section
    assert "your true answer to the second question" in section  # the arm's step


@pytest.mark.django_db(transaction=True)
def test_the_paper_form_names_the_second_question_and_stores_the_set(api, client):
    survey = open_survey(api)
    question = survey.questions.get()
    html = client.get(survey.get_absolute_url()).content.decode()
    paper = html[html.index(f'id="p{question.id}"') :]
    assert f"The second question: <strong>{BORN}</strong>" in paper
    assert "answer only that one" in paper
    form = {f"reported_{question.id}": "1", "design_version": 1}
    assert client.post(f"/s/{survey.slug}/paper/", form).status_code == 400 and nothing_stored()
    sent = client.post(f"/s/{survey.slug}/paper/", form | {f"arm_{question.id}": "0"})
    assert sent.status_code == 200
    assert list(stored_reports(survey)) == [{question.id: 1}]


@pytest.mark.django_db(transaction=True)
def test_a_report_is_sent_with_its_arm_and_stored_as_one_value(api, client):
    survey = open_survey(api)
    question = survey.questions.get()
    response = submit(client, survey, {"question": question.id, "value": 1, "arm": 1})
    assert response.status_code == 201, response.json()
    assert list(stored_reports(survey)) == [{question.id: 3}]


def test_both_prevalences_agree_with_the_estimator_on_seeded_data(api, client, owner):
    survey = open_survey(api)
    question = survey.questions.get()
    design = UnrelatedQuestionUnknown()
    rng = np.random.default_rng(11)
    n = 20_000
    truths = (rng.random(n) < 0.2) + 2 * (rng.random(n) < 0.6)  # π = 0.2, innocuous 0.6
    reports = design.simulate(truths, rng)
    bulk_record(survey, [{question.id: int(r)} for r in reports], simulated=False)
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    expected = design.estimate(np.bincount(reports, minlength=4))
    assert entry["estimate"] == pytest.approx(expected["pi"])
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(expected.ci("pi"))
    innocuous = entry["innocuous"]
    assert innocuous["estimate"] == pytest.approx(expected["pi_innocuous"])
    assert (innocuous["ci_low"], innocuous["ci_high"]) == pytest.approx(expected.ci("pi_innocuous"))
    assert entry["ci_low"] < 0.2 < entry["ci_high"]
    assert innocuous["ci_low"] < 0.6 < innocuous["ci_high"]
    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert 'data-quantity="innocuous">Innocuous prevalence' in html


def test_the_codebook_carries_the_innocuous_question(api):
    survey = open_survey(api)
    (column,) = codebook(survey)["questions"]
    assert column["innocuous_text"] == BORN
    assert column["allow_no_privacy"] is True


def test_exports_carry_the_arm_and_the_codebook_the_innocuous_question(api, client, owner):
    import csv
    import io

    survey = open_survey(api)
    question = survey.questions.get()
    bulk_record(survey, [{question.id: 3}, {question.id: 0}], simulated=False)
    client.force_login(owner)
    exported = client.get(f"/api/surveys/{survey.id}/export.csv").content.decode()
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0] == ["round", "q1", "q1_arm"]
    assert sorted(rows[1:]) == [["1", "0", "0"], ["1", "1", "1"]]
    entry = client.get(f"/api/surveys/{survey.id}/codebook.json").json()["questions"][0]
    assert entry["innocuous_text"] == BORN and entry["arm_column"] == "q1_arm"
    assert "pi_innocuous" in entry["reanalysis"]


def test_simulated_respondents_answer_both_questions(api):
    survey = open_survey(api)
    simulate_respondents(survey, 6000, truth=0.3, rng=np.random.default_rng(4))
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    assert entry["n"] == entry["n_simulated"] == 6000
    assert entry["ci_low"] < 0.3 < entry["ci_high"]
    # The innocuous answers follow the prevalence the design plans with, ½.
    assert entry["innocuous"]["ci_low"] < 0.5 < entry["innocuous"]["ci_high"]


def test_in_another_language_the_innocuous_question_is_marked_as_the_original(api, client):
    survey = open_survey(api)
    survey.languages = ["de"]
    survey.save()
    html = client.get(survey.get_absolute_url() + "?lang=de").content.decode()
    assert f'<span lang="en">{BORN}</span>' in html
    assert "Ihre wahre Antwort auf diese zweite Frage (bleibt auf diesem Gerät):" in html


GEBOREN = "Sind Sie in der ersten Jahreshälfte geboren?"


def post_translated(api, design: dict, wording: dict):
    question = {
        "text": "Shoplifted?",
        "design": design,
        "allow_no_privacy": True,
        "texts": {"de": {"text": "Ladendiebstahl?", **wording}},
    }
    if design["name"] == UQU["name"]:
        question["innocuous_text"] = BORN
    body = {"title": "Shops", "languages": ["de"], "questions": [question]}
    return api.post("/api/surveys/", body, format="json")


def test_the_innocuous_question_is_shown_in_the_language_the_respondent_picked(api, client):
    made = post_translated(api, UQU, {"innocuous_text": f" {GEBOREN} "})
    assert made.status_code == 201, made.json()
    texts = made.json()["questions"][0]["texts"]
    assert texts == {"de": {"text": "Ladendiebstahl?", "innocuous_text": GEBOREN}}
    Survey.objects.update(status=Survey.Status.OPEN)
    survey = Survey.objects.get()
    html = client.get(survey.get_absolute_url() + "?lang=de").content.decode()
    assert f"<span>{GEBOREN}</span>" in html  # the page's language: no lang of its own
    assert f"<strong>{GEBOREN}</strong>" in html  # the paper form
    assert BORN not in html
    english = client.get(survey.get_absolute_url() + "?lang=en").content.decode()
    assert BORN in english and GEBOREN not in english


@pytest.mark.parametrize(
    ("design", "wording", "words"),
    [
        (SLD, {"innocuous_text": GEBOREN}, "only a design that asks"),
        (UQU, {"innocuous_text": "  "}, "non-empty"),
    ],
)
def test_a_translated_innocuous_question_is_refused_where_it_has_no_place(
    api, design, wording, words
):
    response = post_translated(api, design, wording)
    assert response.status_code == 400
    assert words in str(response.json()["questions[0].texts.de.innocuous_text"])
    assert not Survey.objects.exists()


def test_a_new_design_without_an_innocuous_question_drops_its_translations(api):
    post_translated(api, UQU, {"innocuous_text": GEBOREN})
    survey = Survey.objects.get()
    question = survey.questions.get()
    item = {"id": question.id, "design": SLD, "innocuous_text": "", "allow_no_privacy": True}
    response = api.patch(f"/api/surveys/{survey.id}/", {"questions": [item]}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["questions"][0]["texts"] == {"de": {"text": "Ladendiebstahl?"}}


def test_a_duplicate_keeps_the_innocuous_question(api):
    survey = open_survey(api)
    copy = survey.duplicate(survey.owner)
    assert copy.questions.get().innocuous_text == BORN


def grouped(api) -> tuple[Survey, Question, Question]:
    """The unrelated question beside a direct yes/no question (the group), with seeded
    simulated respondents: a prevalence of 15 % among those answering no, 45 % among
    those answering yes (the innocuous question at ½ in both, as simulated)."""
    direct = {"text": "Employed?", "design": {"name": "direct"}, "not_sensitive": True}
    uqu = {"text": "Shoplifted?", "design": UQU, "allow_no_privacy": True, "innocuous_text": BORN}
    body = {"title": "Shops", "questions": [uqu, direct]}
    made = api.post("/api/surveys/", body, format="json")
    assert made.status_code == 201, made.json()
    survey = Survey.objects.get(id=made.json()["id"])
    question, by = survey.questions.order_by("position")
    rng = np.random.default_rng(21)
    for group, truth in ((0, 0.15), (1, 0.45)):
        simulate_respondents(survey, 8000, {question.id: truth, by.id: float(group)}, rng=rng)
    return survey, question, by


def test_a_breakdown_gives_both_prevalences_per_group(api):
    survey, question, by = grouped(api)
    path = "/api/surveys/{survey_id}/estimates/breakdown/"
    response = api.get(path.format(survey_id=survey.id), {"question": question.id, "by": by.id})
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, path, "GET")
    body = response.json()
    assert body["quantities"] == [{"key": "innocuous", "label": "Innocuous prevalence"}]
    design = UnrelatedQuestionUnknown()
    rows = stored_reports(survey)
    for cell, truth in zip(body["categories"], (0.15, 0.45), strict=True):
        reports = [r[question.id] for r in rows if r[by.id] == cell["category"]]
        expected = design.estimate(np.bincount(reports, minlength=4))
        assert not cell["suppressed"] and cell["n"] == 8000
        assert cell["estimate"] == pytest.approx(expected["pi"])
        assert (cell["ci_low"], cell["ci_high"]) == pytest.approx(expected.ci("pi"))
        assert cell["ci_low"] < truth < cell["ci_high"]
        innocuous = cell["innocuous"]
        assert innocuous["estimate"] == pytest.approx(expected["pi_innocuous"])
        assert innocuous["ci_low"] < 0.5 < innocuous["ci_high"]
    no, yes = body["categories"]
    assert no["ci_high"] < yes["ci_low"]  # 15 % and 45 % told apart


def test_the_planner_gives_a_sample_size_for_both_answers(api):
    body = {"design": UQU, "q": 0.2, "half_width": 0.05, "n": 1000}
    response = api.post("/api/planning/", body, format="json")
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, "/api/planning/", "POST")
    plan = response.json()
    design = UnrelatedQuestionUnknown()
    assert plan["n_for_target"] == design.sample_size((0.2, 0.5), 0.05) > 1000
    assert plan["half_width"] > 0.05 and plan["epsilon"] is None
    assert "innocuous prevalence is ½" in plan["arms"]


def test_the_builders_table_gives_its_sample_size_and_power(api, client, owner):
    survey = Survey.objects.get(id=post(api, innocuous_text=BORN).json()["id"])
    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/edit/").content.decode()
    row = html[html.index("<td>Question 0</td>") :]
    row = row[: row.index("</tr>")]
    expected = plan(survey.questions.get().design, Assumptions())
    assert f"(if the innocuous prevalence is ½)</td><td>{expected['n_for_target']}</td>" in row
    powers = [percent(expected[key], 0) for key in ("power_one", "power_two")]
    assert "<td>{}</td><td>{}</td>".format(*powers) in row
