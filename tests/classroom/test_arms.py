"""Designs with arms in the classroom: a demo or lecture takes the lie detector and the
cheating model (API, builder), the projector shows π and the design's other quantities
with their intervals once revealed, "Simulate" adds students who follow the coins of
their arm, and the lecture's CSV has a row per quantity."""

from __future__ import annotations

import csv
import io
import re
from html import unescape

import numpy as np
import pytest
from django.urls import reverse

from analysis.results import survey_results
from responses.write import simulate_respondents
from survey.models import Survey
from tests.analysis.test_arms_question import CDM, SLD
from tests.storage import stored_count

pytestmark = pytest.mark.django_db


def classroom_with(api, design: dict) -> Survey:
    question = {"text": "Shoplifted?", "kind": "binary", "design": design}
    question["allow_no_privacy"] = True  # the lie detector's "no" (ε = ∞)
    body = {"title": "Lecture", "mode": "classroom", "questions": [question]}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get(id=response.json()["id"])
    survey.open()
    return survey


@pytest.fixture
def instructor(client, owner):
    client.force_login(owner)
    return client


def presenter_text(instructor, survey: Survey) -> str:
    html = instructor.get(reverse("classroom:poll", args=[survey.id])).content.decode()
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.mark.parametrize("design", [SLD, CDM], ids=["sld", "cdm"])
def test_a_classroom_survey_takes_a_design_with_arms(api, design):
    survey = classroom_with(api, design)
    assert survey.mode == "classroom" and survey.questions.get().design.has_arms


def test_a_research_survey_with_arms_can_become_a_classroom_one(api):
    question = {"text": "Shoplifted?", "kind": "binary", "design": CDM}
    made = api.post("/api/surveys/", {"title": "Study", "questions": [question]}, format="json")
    switched = api.patch(f"/api/surveys/{made.json()['id']}/", {"mode": "classroom"}, format="json")
    assert switched.status_code == 200 and Survey.objects.get().mode == "classroom"


def test_the_builder_adds_a_design_with_arms_to_a_lecture(logged_in, make_survey):
    lecture = make_survey(n_questions=0, status=Survey.Status.DRAFT, mode="classroom")
    data = {"text": "Shoplifted?", "kind": "binary", "preset": "custom"}
    data |= {"design_name": "cheating_detection", "p_truth": "0.5, 0.75", "p_yes": "0.5, 0.5"}
    data |= {"arm_weights": "0.5, 0.5"}
    added = logged_in.post(
        f"/surveys/{lecture.id}/questions/", {f"new-{k}": v for k, v in data.items()}
    )
    assert added.status_code in (200, 302)
    assert lecture.questions.get().design.has_arms


def test_the_projector_shows_pi_and_the_carriers_honesty_once_revealed(api, instructor):
    survey = classroom_with(api, SLD)
    simulate_respondents(survey, 2000, 0.3, np.random.default_rng(5))
    hidden = presenter_text(instructor, survey)
    assert "2000" in hidden and "Carriers' honesty" not in hidden
    assert "Results stay hidden" in hidden
    survey.reveal(True)
    entry = survey_results(survey).as_dict()["questions"][0]
    shown = presenter_text(instructor, survey)
    pct = lambda v: f"{v * 100:.0f} %"  # noqa: E731
    assert f"Estimated true rate {pct(entry['estimate'])}" in shown
    assert f"{pct(entry['ci_low'])}–{pct(entry['ci_high'])}" in shown
    honesty = entry["honesty"]
    assert f"Carriers' honesty t {pct(honesty['estimate'])}" in shown
    assert f"95 % interval {pct(honesty['ci_low'])}–{pct(honesty['ci_high'])}" in shown
    assert "No privacy for a “no”" in shown


def test_the_projector_shows_honest_no_and_cheaters_of_the_cheating_model(api, instructor):
    survey = classroom_with(api, CDM)
    simulate_respondents(survey, 3000, 0.3, np.random.default_rng(6))
    survey.reveal(True)
    shown = presenter_text(instructor, survey)
    assert "Honest “no” β" in shown and "Cheaters γ" in shown
    assert "not significantly above 0" in shown  # simulated students follow the coins
    assert "No privacy" not in shown


def test_simulate_adds_students_who_follow_their_arms_coins(api, instructor):
    survey = classroom_with(api, SLD)
    response = instructor.post(
        reverse("classroom:simulate", args=[survey.id]), {"n": 4000, "true_rate": 30}
    )
    assert response.status_code == 302
    assert stored_count(simulated=True) == 4000 and stored_count(simulated=False) == 0
    entry = survey_results(survey).as_dict()["questions"][0]
    assert entry["n_simulated"] == 4000 and min(a["n"] for a in entry["arms"]) > 1000
    # The students are drawn afresh each run, so the estimates are held to bounds about ten
    # standard errors wide (about 0.02 each here), not to intervals that miss 5 % of the
    # time: π = 0.3, and they answered honestly, t = 1.
    assert abs(entry["estimate"] - 0.3) < 0.2
    assert entry["honesty"]["estimate"] > 0.8


def test_a_new_round_starts_the_arms_estimate_afresh(api, instructor):
    survey = classroom_with(api, SLD)
    simulate_respondents(survey, 500, 0.3, np.random.default_rng(2))
    survey.reveal(True)
    instructor.post(reverse("classroom:control", args=[survey.id, "new-round"]))
    survey.refresh_from_db()
    survey.reveal(True)
    shown = presenter_text(instructor, survey)
    assert "Answers 0" in shown and "Carriers' honesty t —" in shown


def test_the_lecture_csv_has_a_row_per_quantity(api, instructor):
    survey = classroom_with(api, CDM)
    simulate_respondents(survey, 1000, 0.3, np.random.default_rng(9))
    response = instructor.get(reverse("classroom:results_csv", args=[survey.id]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    entry = survey_results(survey).as_dict()["questions"][0]
    assert [r["option"] for r in rows] == ["", "honest_no", "cheaters"]
    assert float(rows[0]["estimate"]) == pytest.approx(entry["estimate"])
    assert float(rows[2]["ci_high"]) == pytest.approx(entry["cheaters"]["ci_high"])
    assert {r["n_simulated"] for r in rows} == {"1000"}


def test_the_join_screen_says_the_lie_detector_gives_no_privacy_for_a_no(api, instructor):
    survey = classroom_with(api, SLD)
    page = unescape(
        instructor.get(reverse("classroom:join_screen", args=[survey.id])).content.decode()
    )
    assert "No privacy for a “no”" in page and "unbounded" not in page


def test_a_students_page_with_arms_links_to_no_coins_explanation(api, client):
    survey = classroom_with(api, SLD)
    page = client.get(survey.get_absolute_url()).content.decode()
    assert "data-classroom-status" in page and reverse("classroom:explain") not in page
    assert client.get(reverse("classroom:explain"), {"s": survey.slug}).status_code == 404


def test_the_chart_and_the_phones_show_pi_of_a_design_with_arms(api, instructor, client):
    survey = classroom_with(api, SLD)
    simulate_respondents(survey, 800, 0.3, np.random.default_rng(4))
    survey.reveal(True)
    estimate = survey_results(survey).questions[0].estimate.estimate
    chart = instructor.get(reverse("classroom:chart_svg", args=[survey.id]))
    assert chart.status_code == 200 and b"data-ci-bar" in chart.content
    status = client.get(reverse("classroom:student_status", args=[survey.slug]))
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", status.content.decode())).split())
    assert f"Class estimate: {estimate * 100:.0f} % truly “yes”" in text


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "Carriers' honesty t: {t} (95 % interval"),
        ("de", "Ehrlichkeit der Merkmalsträger t: {t} (95 %-Intervall"),
        ("es", "Honestidad de los portadores t: {t} (intervalo del 95 %:"),
        ("fr", "Honnêteté des porteurs t : {t} (intervalle à 95 % :"),
    ],
)
def test_the_phones_show_the_carriers_honesty_in_their_language(api, client, language, words):
    survey = classroom_with(api, SLD)
    simulate_respondents(survey, 800, 0.3, np.random.default_rng(4))
    survey.reveal(True)
    t = survey_results(survey).questions[0].estimate["t"]
    url = reverse("classroom:student_status", args=[survey.slug])
    status = client.get(url, headers={"accept-language": language})
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", status.content.decode())).split())
    percent = f"{t * 100:.0f} %".replace(".", ",")
    assert words.format(t=percent) in text, text


@pytest.mark.parametrize("language", ["de", "es", "fr"])
def test_every_quantity_a_design_with_arms_estimates_reaches_the_students_translated(language):
    from django.utils import translation

    from classroom.live import ARMS_LABELS
    from estimator.designs import REGISTRY

    labels = {
        label
        for design in REGISTRY.values()
        if design.has_arms
        for label in design.quantity_labels.values()
    }
    assert labels and labels <= set(ARMS_LABELS)
    with translation.override(language):
        assert all(translation.gettext(label) != label for label in labels)
