"""The unrelated question with unknown prevalence in the classroom: a lecture takes it with
its innocuous question, "Simulate" adds students who answer both questions, and the
projector shows both prevalences once revealed."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.results import survey_results
from survey.models import Survey
from tests.classroom.test_arms import presenter_text

pytestmark = pytest.mark.django_db

UQU = {"name": "unrelated_question_unknown", "p_truth": [0.3, 0.7], "arm_weights": [0.5, 0.5]}


def test_the_projector_shows_both_prevalences_of_simulated_students(api, logged_in):
    question = {"text": "Shoplifted?", "kind": "binary", "design": UQU, "allow_no_privacy": True}
    question["innocuous_text"] = "Were you born in the first half of the year?"
    body = {"title": "Lecture", "mode": "classroom", "questions": [question]}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get(id=response.json()["id"])
    survey.open()
    simulated = logged_in.post(
        reverse("classroom:simulate", args=[survey.id]), {"n": 4000, "true_rate": 30}
    )
    assert simulated.status_code == 302
    survey.reveal(True)
    entry = survey_results(survey).as_dict()["questions"][0]
    # The students are drawn afresh each run: both estimates are held to bounds about ten
    # standard errors wide (0.02 each here), not to intervals that miss 5 % of the time.
    innocuous = entry["innocuous"]
    assert entry["n_simulated"] == 4000 and abs(entry["estimate"] - 0.3) < 0.2
    assert abs(innocuous["estimate"] - 0.5) < 0.2
    shown = presenter_text(logged_in, survey)
    pct = lambda v: f"{v * 100:.0f} %"  # noqa: E731
    assert f"Estimated true rate {pct(entry['estimate'])}" in shown
    assert f"Innocuous prevalence {pct(innocuous['estimate'])}" in shown
