"""Duchi et al.'s one-bit design as a question of the app: created through the API, a
respondent's bit submitted, counted, estimated on the estimates API and the results page,
described in the codebook."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from html import unescape as html_unescape

import numpy as np
import pytest

from analysis.grouped import estimate_entry
from estimator.one_bit import OneBitMean
from responses.write import bulk_record, simulate_respondents
from survey.codebook import codebook
from survey.models import Survey
from tests.storage import nothing_stored, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

ONE_BIT = {"kind": "number", "design": {"name": "one_bit", "epsilon": 1.0, "lower": 0, "upper": 20}}


def create(api) -> Survey:
    body = {"title": "Hours of sleep", "questions": [{"text": "Hours online?", **ONE_BIT}]}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201, response.json()
    made = response.json()["questions"][0]
    assert made["design"] == {"name": "one_bit", "epsilon": 1.0, "lower": 0, "upper": 20}
    assert made["epsilon"] == pytest.approx(1.0)
    survey = Survey.objects.get(id=response.json()["id"])
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


def submit(client, survey: Survey, value):
    question = survey.questions.get()
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [{"question": question.id, "value": value}],
    }
    return client.post(
        f"/api/public/surveys/{survey.slug}/responses/",
        json.dumps(body),
        content_type="application/json",
    )


@pytest.mark.django_db(transaction=True)
def test_a_bit_is_submitted_and_anything_but_a_bit_is_refused(api, client):
    survey = create(api)
    for bad in (2, -1, 7, 0.5, "1"):
        response = submit(client, survey, bad)
        assert response.status_code == 400, bad
        assert "answers" in response.json(), bad
        assert nothing_stored(), bad
    assert submit(client, survey, 1).status_code == 201
    assert list(stored_reports(survey)) == [{survey.questions.get().id: 1}]


def test_the_estimates_give_the_mean_from_the_bits_with_its_interval(api):
    survey = create(api)
    question = survey.questions.get()
    design = OneBitMean(epsilon=1.0, lower=0, upper=20)
    rng = np.random.default_rng(11)
    bits = design.simulate(rng.integers(2, 11, size=2000), rng)  # true mean 6
    bulk_record(survey, [{question.id: int(b)} for b in bits], simulated=False)

    response = api.get(f"/api/surveys/{survey.id}/estimates/", {"level": "0.9"})
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    entry = response.json()["questions"][0]
    expected = design.estimate([int((bits == 0).sum()), int(bits.sum())])
    assert entry["kind"] == "number" and entry["n"] == 2000
    assert entry["method"] == "wilson" and entry["epsilon"] == pytest.approx(1.0)
    assert entry["mean"] == pytest.approx(expected.estimate)
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(expected.ci(0.9, "wilson"))
    assert entry["ci_low"] < 6 < entry["ci_high"] and entry["ci_high"] - entry["ci_low"] < 3
    assert entry["noise_variance"] == pytest.approx(100 * (1 / design.t**2 - 1))
    assert entry["histogram"] == []


def test_the_results_page_and_codebook_show_the_one_bit_mean(api, client, owner):
    survey = create(api)
    question = survey.questions.get()
    bulk_record(survey, [{question.id: b} for b in [0, 1] * 50], simulated=False)
    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert 'data-kind="number"' in html
    assert "Wilson interval" in html and "Student-t" not in html
    assert "<strong data-mean>10.00</strong>" in html  # half the bits are ones: the middle
    assert "from the share of 1s among the one-bit reports rescaled onto 0–20" in html
    assert "Histogram of the reports" not in html  # a bit has no histogram to show
    entry = codebook(survey)["questions"][0]
    assert entry["design"] == {"name": "one_bit", "epsilon": 1.0, "lower": 0, "upper": 20}
    assert entry["outputs"] == {"type": "options", "values": [0, 1]}
    assert "one bit" in entry["noise"] and "tanh(epsilon / 2)" in entry["noise"]
    assert "share of 1s" in entry["reanalysis"] and "t interval" not in entry["reanalysis"]


def test_the_respondent_page_says_one_bit_is_sent_and_loads_its_sampler(api, client):
    survey = create(api)
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "only one bit (0 or 1) is sent, never your number" in html
    assert "turns your number into one bit" in html
    assert "plus random noise of typical size" not in html
    assert "Your device adds whole-number noise" not in html
    # respond.js hands these to rr.js's sample("number", "one_bit", params, value), whose
    # draws tests/js/rr.test.mjs checks against P(1 | x) = c + t·u.
    assert 'data-kind="number" data-design="one_bit"' in html
    params = json.loads(html_unescape(re.search(r"data-params='([^']*)'", html)[1]))
    assert params == {"epsilon": 1.0, "lower": 0, "upper": 20}
    # The no-JS paper form on the same page: no hand-drawn bit, so no field for it.
    assert "Its protection is one bit drawn from your number" in html
    assert "random noise added to your number" not in html
    assert f'name="reported_{survey.questions.get().id}"' not in html


def test_the_builder_offers_the_one_bit_design_with_its_plan(logged_in, make_survey):
    draft = make_survey(n_questions=0, status=Survey.Status.DRAFT)
    fields = {"text": "Hours online?", "kind": "number", "preset": "custom"}
    fields |= {"design_name": "one_bit", "epsilon": "1", "lower": "0", "upper": "20"}
    data = {f"new-{key}": value for key, value in fields.items()}
    preview = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    design = OneBitMean(epsilon=1.0, lower=0, upper=20)
    assert f"typical noise added to each answer: ± {design.typical_noise:.2f}" in preview
    laplace = dict(data) | {"new-design_name": "laplace"}
    hint = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", laplace).content.decode()
    assert "choose “One randomized bit (Duchi et al.)” under Custom" in hint
    assert logged_in.post(f"/surveys/{draft.id}/questions/", data).status_code == 302
    question = draft.questions.get()
    assert (question.design_name, question.design_params) == (
        "one_bit",
        {"epsilon": 1.0, "lower": 0, "upper": 20},
    )
    assert question.epsilon == pytest.approx(1.0)


def test_a_breakdown_cell_estimates_the_mean_from_its_bits(api):
    survey = create(api)
    question = survey.questions.get()
    design = question.design
    entry = estimate_entry(question, {0: 30, 1: 70}, 0.95, "wilson")
    expected = design.estimate([30, 70])
    assert entry["n"] == 100 and entry["mean"] == pytest.approx(expected.estimate)
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(expected.ci(0.95))
    assert entry["contradicts_design"] is False
    assert estimate_entry(question, {1: 100}, 0.95, "wilson")["contradicts_design"] is True


def test_simulated_respondents_and_the_estimates_csv_carry_the_one_bit_mean(api):
    survey = create(api)
    question = survey.questions.get()
    simulate_respondents(
        survey, 3000, {question.id: {"mean": 15, "sd": 2}}, np.random.default_rng(4)
    )
    assert {r[question.id] for r in stored_reports(survey)} == {0, 1}
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    assert entry["n"] == 3000 and entry["ci_low"] < 15 < entry["ci_high"]
    text = api.get(f"/api/surveys/{survey.id}/estimates.csv").content.decode()
    [row] = [r for r in csv.DictReader(io.StringIO(text)) if r["question"] == str(question.id)]
    assert (row["kind"], row["method"]) == ("number", "wilson")
    assert float(row["estimate"]) == pytest.approx(entry["mean"], rel=1e-6)
    assert float(row["ci_low"]) == pytest.approx(entry["ci_low"], rel=1e-6)
