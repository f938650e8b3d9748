"""Designs with arms as questions of the app: the stochastic lie detector and the
cheating-detection model created through the API (ε = ∞ acknowledged), a respondent's
report sent with its arm and stored as one value (arm·2 + answer), bad input refused
naming the field with nothing stored, and the results (π and t; π, β, γ with the words
on cheating) on the estimates API and the results page."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest

from estimator.arms import CheatingDetection, StochasticLieDetector
from responses.write import bulk_record
from survey.models import Survey
from tests.storage import nothing_stored, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

SLD = {"name": "stochastic_lie_detector", "p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]}
CDM = {
    "name": "cheating_detection",
    "p_truth": [0.5, 0.75],
    "p_yes": [0.5, 0.5],
    "arm_weights": [0.5, 0.5],
}
PLAIN = {"name": "forced_response", "p_truth": 0.5, "p_yes": 0.5}


def post_survey(api, *designs: dict, **extra):
    questions = [
        {"text": f"Question {i}", "kind": "binary", "design": d, **extra}
        | ({"not_sensitive": True} if d["name"] == "direct" else {})
        for i, d in enumerate(designs)
    ]
    return api.post("/api/surveys/", {"title": "Arms", "questions": questions}, format="json")


def create(api, *designs: dict) -> Survey:
    response = post_survey(api, *designs, allow_no_privacy=True)
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get(id=response.json()["id"])
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


def submit(client, survey: Survey, *answers: dict):
    body = {"submission_id": str(uuid.uuid4()), "answers": list(answers)}
    return client.post(
        f"/api/public/surveys/{survey.slug}/responses/",
        json.dumps(body),
        content_type="application/json",
    )


def test_the_lie_detector_needs_its_no_privacy_acknowledged(api):
    refused = post_survey(api, SLD)
    assert refused.status_code == 400
    assert "allow_no_privacy" in json.dumps(refused.json())
    assert not Survey.objects.exists()
    made = post_survey(api, SLD, allow_no_privacy=True)
    assert made.status_code == 201
    question = made.json()["questions"][0]
    assert question["epsilon"] is None and made.json()["no_privacy"] is True
    assert question["design"] == {
        "name": "stochastic_lie_detector",
        **{k: v for k, v in SLD.items() if k != "name"},
    }


def test_cheating_detection_keeps_a_finite_epsilon(api):
    made = post_survey(api, CDM)
    assert made.status_code == 201, made.json()
    eps = made.json()["questions"][0]["epsilon"]
    # The largest over the arms: arm 1 (p_truth ¾) says "yes" 7 times likelier for a yes.
    assert eps == pytest.approx(CheatingDetection().epsilon) and eps == pytest.approx(np.log(7))


@pytest.mark.parametrize(
    ("design", "field"),
    [
        ({**SLD, "p": [0.5, 0.5]}, "p"),  # equal arm parameters: unidentifiable
        ({**CDM, "p_truth": [0.5, 0.5]}, "p_truth"),
        ({**SLD, "arm_weights": [0.5, 0.4]}, "arm_weights"),  # not summing to 1
        ({**SLD, "arm_weights": [1.0, 0.0]}, "arm_weights"),  # an arm nobody draws
        ({**SLD, "arm_weights": [0.2, 0.3, 0.5]}, "arm_weights"),  # a third arm
        ({**SLD, "p": [0.5]}, "p"),
        ({**CDM, "p_yes": [0.5, 1.5]}, "p_yes"),
    ],
)
def test_bad_arm_parameters_are_refused_naming_the_field(api, design, field):
    response = post_survey(api, design, allow_no_privacy=True)
    assert response.status_code == 400
    errors = response.json()["questions"]["0"]["design"]
    assert field in errors, errors
    assert not Survey.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_report_is_stored_with_its_arm(api, client):
    survey = create(api, SLD, PLAIN)
    sld, plain = survey.questions.order_by("id")
    response = submit(
        client,
        survey,
        {"question": sld.id, "value": 0, "arm": 1},
        {"question": plain.id, "value": 1},
    )
    assert response.status_code == 201, response.json()
    assert list(stored_reports(survey)) == [{sld.id: 2, plain.id: 1}]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("sld_answer", "plain_answer", "words"),
    [
        ({"value": 1}, {"value": 1}, "arm missing"),  # the arm left out
        ({"value": 1, "arm": 2}, {"value": 1}, "arm 2"),  # an arm outside the design
        ({"value": 1, "arm": -1}, {"value": 1}, "arm -1"),
        ({"value": 1, "arm": "1"}, {"value": 1}, "arm"),
        ({"value": 3, "arm": 0}, {"value": 1}, "value 3"),  # the encoding is the server's
        ({"value": 2, "arm": 1}, {"value": 1}, "value 2"),
        ({"value": 1, "arm": 0}, {"value": 1, "arm": 0}, "has no arms"),  # no arms here
    ],
)
def test_bad_arms_in_a_submission_are_refused_and_nothing_is_stored(
    api, client, sld_answer, plain_answer, words
):
    survey = create(api, SLD, PLAIN)
    sld, plain = survey.questions.order_by("id")
    response = submit(
        client, survey, {"question": sld.id, **sld_answer}, {"question": plain.id, **plain_answer}
    )
    assert response.status_code == 400
    assert "answers" in response.json()
    assert words in json.dumps(response.json()), response.json()
    assert nothing_stored()


def simulate(design, truth: dict, n: int, seed: int) -> np.ndarray:
    """Reports of n respondents; carriers of an SLD answer "yes" with probability t."""
    rng = np.random.default_rng(seed)
    arms = design.simulate_arms(n, rng)
    rates = design.yes_rates((truth["pi"], truth["second"]))[arms]
    return 2 * arms + (rng.random(n) < rates)


@pytest.mark.django_db(transaction=True)
def test_submitted_reports_recover_pi_and_t(api, client, settings):
    """Seeded respondents through the submit endpoint: π and t come back within their
    intervals on the estimates API."""
    settings.RATELIMIT_ENABLED = False  # one test client plays 400 respondents
    survey = create(api, SLD)
    question = survey.questions.get()
    design = StochasticLieDetector()
    reports = simulate(design, {"pi": 0.3, "second": 0.7}, 400, seed=5)
    for report in reports:
        arm, answer = divmod(int(report), 2)
        response = submit(client, survey, {"question": question.id, "value": answer, "arm": arm})
        assert response.status_code == 201
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    expected = design.estimate(np.bincount(reports, minlength=4))
    assert entry["n"] == 400
    assert entry["estimate"] == pytest.approx(expected["pi"])
    assert entry["ci_low"] < 0.3 < entry["ci_high"]
    honesty = entry["honesty"]
    assert honesty["estimate"] == pytest.approx(expected["t"])
    assert honesty["ci_low"] < 0.7 < honesty["ci_high"]
    assert [a["n"] for a in entry["arms"]] == expected.per_arm.astype(int).tolist()


def test_the_estimates_and_results_page_of_the_lie_detector(api, client, owner):
    survey = create(api, SLD)
    question = survey.questions.get()
    design = StochasticLieDetector()
    reports = simulate(design, {"pi": 0.4, "second": 0.6}, 20_000, seed=7)
    bulk_record(survey, [{question.id: int(r)} for r in reports], simulated=False)
    response = api.get(f"/api/surveys/{survey.id}/estimates/", {"level": "0.9"})
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    entry = response.json()["questions"][0]
    expected = design.estimate(np.bincount(reports, minlength=4))
    assert entry["estimate"] == pytest.approx(expected["pi"])
    assert entry["std_error"] == pytest.approx(expected.std_error("pi"))
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(expected.ci("pi", 0.9))
    assert entry["honesty"]["ci_low"] == pytest.approx(expected.ci("t", 0.9)[0])
    assert entry["epsilon"] is None
    assert abs(entry["estimate"] - 0.4) < 0.05 and abs(entry["honesty"]["estimate"] - 0.6) < 0.05
    assert "significantly above 0" in entry["findings"][0]
    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert 'data-quantity="honesty">Carriers&#x27; honesty t' in html
    assert f"{expected['t']:.3f}" in html or f"{100 * expected['t']:.1f}" in html
    assert "significantly above 0" in html


def test_the_cheating_model_says_when_cheaters_are_significantly_above_0(api, client, owner):
    survey = create(api, CDM)
    question = survey.questions.get()
    design = CheatingDetection()
    reports = simulate(design, {"pi": 0.2, "second": 0.15}, 8000, seed=3)
    bulk_record(survey, [{question.id: int(r)} for r in reports], simulated=False)
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    expected = design.estimate(np.bincount(reports, minlength=4))
    assert entry["estimate"] == pytest.approx(expected["pi"])
    assert entry["cheaters"]["estimate"] == pytest.approx(expected["gamma"])
    assert entry["honest_no"]["estimate"] == pytest.approx(expected["beta"])
    assert entry["cheaters"]["ci_low"] > 0
    assert "The share of cheaters" in entry["findings"][0]
    assert "is significantly above 0" in entry["findings"][0]
    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert "Cheaters γ" in html and "is significantly above 0" in html


def test_no_cheating_is_said_as_not_significant(api):
    survey = create(api, CDM)
    question = survey.questions.get()
    reports = simulate(CheatingDetection(), {"pi": 0.3, "second": 0.0}, 4000, seed=2)
    bulk_record(survey, [{question.id: int(r)} for r in reports], simulated=False)
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    assert "is not significantly above 0" in entry["findings"][0]


def test_the_respondent_page_says_how_the_arm_is_drawn_and_what_a_no_reveals(api, client):
    survey = create(api, SLD)
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "No privacy for a “no”" in html
    assert "draws set A or set B of chance devices by chance alone" in html
    assert "Set A (drawn with probability 50 %)" in html
    # rr.js's sample("binary", "stochastic_lie_detector", params, truth) draws the arm.
    assert 'data-kind="binary" data-design="stochastic_lie_detector"' in html
    assert '"arm_weights":[0.5,0.5]' in html


@pytest.mark.django_db(transaction=True)
def test_the_paper_form_asks_for_the_set_the_coin_picked_and_stores_it(api, client):
    survey = create(api, SLD, PLAIN)
    sld, plain = survey.questions.order_by("id")
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "pick your set by chance alone, before you think of your answer: Flip a coin." in html
    assert "Heads: set A; Tails: set B." in html
    assert f'name="arm_{sld.id}" value="1"' in html and f'name="arm_{plain.id}"' not in html
    form = {f"reported_{sld.id}": "1", f"reported_{plain.id}": "0", "design_version": 1}
    refused = client.post(f"/s/{survey.slug}/paper/", form)
    assert refused.status_code == 400 and nothing_stored()  # the set left out
    assert client.post(f"/s/{survey.slug}/paper/", form | {f"arm_{sld.id}": "1"}).status_code == 200
    assert list(stored_reports(survey)) == [{sld.id: 3, plain.id: 0}]


def test_exports_carry_the_arm_in_a_column_of_its_own(api, client, owner):
    import csv
    import io

    import pyreadstat

    survey = create(api, SLD, PLAIN)
    sld, plain = survey.questions.order_by("id")
    bulk_record(survey, [{sld.id: 3, plain.id: 0}, {sld.id: 0, plain.id: 1}], simulated=False)
    client.force_login(owner)
    exported = client.get(f"/api/surveys/{survey.id}/export.csv").content.decode()
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0] == ["round", "q1", "q1_arm", "q2"]
    assert sorted(rows[1:]) == [["1", "0", "0", "1"], ["1", "1", "1", "0"]]
    book = client.get(f"/api/surveys/{survey.id}/codebook.json").json()
    entry = book["questions"][0]
    assert entry["arm_column"] == "q1_arm" and "q<k>_arm" in book["columns"]
    assert 'model = "SLD"' in entry["rrreg"] and "group = q1_arm + 1" in entry["rrreg"]
    for suffix, reader in (("sav", pyreadstat.read_sav), ("dta", pyreadstat.read_dta)):
        content = client.get(f"/api/surveys/{survey.id}/export.{suffix}").content
        path = f"/tmp/arms-export-{survey.id}.{suffix}"
        with open(path, "wb") as f:
            f.write(content)
        frame, meta = reader(path)
        assert list(frame.columns) == ["round", "q1", "q1_arm", "q2"]
        assert sorted(frame["q1_arm"].tolist()) == [0, 1]
        assert "arm" in meta.column_names_to_labels["q1_arm"]


@pytest.mark.django_db(transaction=True)
def test_an_export_with_arms_imports_into_a_copy_and_a_bad_arm_stores_nothing(api, owner):
    import io

    from responses.exports import responses_csv
    from responses.imports import ImportRejected, import_responses

    survey = create(api, SLD, PLAIN)
    sld, plain = survey.questions.order_by("id")
    rows = [{sld.id: 3, plain.id: 0}, {sld.id: 0, plain.id: 1}, {sld.id: 2, plain.id: 1}]
    bulk_record(survey, rows, simulated=False)
    exported = responses_csv(survey).encode()
    copy = create(api, SLD, PLAIN)
    for bad in (
        b"round,q1,q2\n1,1,0\n",
        b"round,q1,q1_arm,q2\n1,1,2,0\n",
        b"round,q1,q1_arm,q2\n1,3,0,0\n",
    ):
        with pytest.raises(ImportRejected):
            import_responses(copy, io.BytesIO(bad))
        assert not list(stored_reports(copy))
    assert import_responses(copy, io.BytesIO(exported)) == 3
    csld, cplain = copy.questions.order_by("id")
    stored = sorted((r[csld.id], r[cplain.id]) for r in stored_reports(copy))
    assert stored == [(0, 1), (2, 1), (3, 0)]


def test_a_model_with_a_lie_detector_outcome_estimates_t_beside_the_coefficients(
    api, client, owner
):
    from estimator.arms import sld_regression
    from estimator.regression import design_matrix

    survey = create(api, SLD, {"name": "direct"})
    sld, group = survey.questions.order_by("id")
    design = StochasticLieDetector()
    rng = np.random.default_rng(9)
    rows = []
    for g, pi in ((0, 0.2), (1, 0.5)):
        reports = simulate(design, {"pi": pi, "second": 0.7}, 3000, seed=int(rng.integers(1000)))
        rows += [{sld.id: int(r), group.id: g} for r in reports]
    bulk_record(survey, rows, simulated=False)
    response = api.post(
        f"/api/surveys/{survey.id}/regression/",
        {"outcome": sld.id, "covariates": [group.id]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    result = response.json()
    assert_matches_schema(response, "/api/surveys/{survey_id}/regression/", "POST")
    # The same fit from the counts per (group, arm) in the maths.
    cells = {}
    for row in rows:
        arm, yes = divmod(row[sld.id], 2)
        cell = cells.setdefault((row[group.id], arm), [0, 0])
        cell[0] += yes
        cell[1] += 1
    keys = sorted(cells)
    expected = sld_regression(
        design,
        design_matrix({"q2": [k[0] for k in keys]}, {}),
        [k[1] for k in keys],
        [cells[k][0] for k in keys],
        [cells[k][1] for k in keys],
    )
    assert result["honesty"]["estimate"] == pytest.approx(expected.honesty, rel=1e-6)
    assert abs(result["honesty"]["estimate"] - 0.7) < 0.08
    slope = result["coefficients"][1]
    assert slope["estimate"] == pytest.approx(
        expected.regression.coefficients[1].estimate, rel=1e-6
    )
    assert slope["estimate"] > 0 and slope["ci_low"] > 1  # the odds ratio of group 1
    client.force_login(owner)
    page = client.get(
        f"/surveys/{survey.id}/results/model/", {"outcome": sld.id, "covariates": group.id}
    ).content.decode()
    assert "the carriers' honesty t estimated beside the coefficients" in page, page[-3000:]


def test_the_planner_gives_n_for_the_prevalence_and_the_price_of_the_detection(api):
    response = api.post(
        "/api/planning/",
        {"design": SLD, "q": 0.3, "half_width": 0.05, "n": 1000},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, "/api/planning/", "POST")
    plan = response.json()
    design = StochasticLieDetector()
    assert plan["n_for_target"] == design.sample_size((0.3, 1.0), 0.05)
    assert plan["price"] == pytest.approx(design.variance_price((0.3, 1.0)))
    assert plan["epsilon"] is None and "honestly" in plan["arms"]


@pytest.mark.parametrize(
    ("name", "fields", "field", "words"),
    [
        ("stochastic_lie_detector", {"p": "0.5, 0.5", "arm_weights": "0.5, 0.5"}, "p", "p₁ ≠ p₂"),
        (
            "stochastic_lie_detector",
            {"p": "0.2, 0.8", "arm_weights": "0.5, 0.4"},
            "arm_weights",
            "sum to 1",
        ),
        (
            "stochastic_lie_detector",
            {"p": "0.2, 0.8", "arm_weights": "1, 0"},
            "arm_weights",
            "above 0",
        ),
        (
            "cheating_detection",
            {"p_truth": "0.5, 0.5", "p_yes": "0.5, 0.5", "arm_weights": "0.5, 0.5"},
            "p_truth",
            "must differ",
        ),
    ],
)
def test_the_builder_says_what_is_wrong_beside_the_field_and_saves_nothing(
    logged_in, make_survey, name, fields, field, words
):
    from html import unescape

    draft = make_survey(n_questions=0, status=Survey.Status.DRAFT)
    data = {"text": "Shoplifted?", "kind": "binary", "preset": "custom", "design_name": name}
    data |= fields | {"confirm_no_privacy": "on"}
    response = logged_in.post(
        f"/surveys/{draft.id}/questions/", {f"new-{k}": v for k, v in data.items()}
    )
    assert response.status_code == 400 or response.status_code == 200
    html = unescape(response.content.decode())
    assert not draft.questions.exists()
    # The message sits in the field's own error list, linked to its input.
    error_id = f"id_new-{field}-error"
    assert error_id in html, html[:2000]
    at = html.index(f'id="{error_id}"')
    assert words in html[at : at + 400]


def test_simulated_respondents_follow_the_coins_of_their_arm(api):
    from responses.write import simulate_respondents

    survey = create(api, CDM)
    simulate_respondents(survey, 6000, truth=0.3, rng=np.random.default_rng(4))
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    assert entry["n"] == entry["n_simulated"] == 6000
    assert entry["ci_low"] < 0.3 < entry["ci_high"]
    assert entry["cheaters"]["ci_low"] == 0  # everyone followed the coins
    assert sum(a["n"] for a in entry["arms"]) == 6000 and min(a["n"] for a in entry["arms"]) > 0


def test_the_estimates_csv_has_a_row_per_quantity_of_a_design_with_arms(api, owner):
    import csv
    import io

    survey = create(api, SLD)
    question = survey.questions.get()
    reports = simulate(StochasticLieDetector(), {"pi": 0.4, "second": 0.6}, 4000, seed=8)
    bulk_record(survey, [{question.id: int(r)} for r in reports], simulated=False)
    api.force_authenticate(owner)
    response = api.get(f"/api/surveys/{survey.id}/estimates.csv")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    assert [r["option"] for r in rows] == ["", "honesty"]
    assert float(rows[0]["estimate"]) == pytest.approx(entry["estimate"])
    assert float(rows[1]["ci_high"]) == pytest.approx(entry["honesty"]["ci_high"])
    assert rows[1]["method"] == "profile"
