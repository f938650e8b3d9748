"""The cross-tab endpoint and page: joint prevalences of two randomized questions from
their grouped report pairs, equal to estimator.crosstab on the same counts."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.crosstab import crosstab
from responses.counts import joint_counts
from tests.analysis.analysis_data import (
    api_for,
    fill,
    questions,
)
from tests.storage import stored_count, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
PATH = "/api/surveys/{survey_id}/crosstab/"


def get(user, survey, **params):
    return api_for(user).get(PATH.format(survey_id=survey.id), params)


def by_id(survey, question_id):
    return survey.questions.get(id=question_id)


def test_two_yes_no_questions_match_the_maths_on_the_same_counts(owner, study):
    fill(study, [300, 200, 250, 250])
    q = questions(study)
    response = get(owner, study, a=q["cheat"], b=q["plagiarise"])
    assert response.status_code == 200
    assert_matches_schema(response, PATH, "GET")
    body = response.json()
    # The counts the maths gets, counted here from the rows one by one.
    table = np.zeros((2, 2))
    for values in stored_reports(study):
        table[values[q["cheat"]], values[q["plagiarise"]]] += 1
    expected = crosstab(
        table,
        by_id(study, q["cheat"]).design.response_matrix,
        by_id(study, q["plagiarise"]).design.response_matrix,
    )
    assert body["n"] == 1000 == stored_count()
    cells = {(c["a"], c["b"]): c for c in body["cells"]}
    for (i, j), cell in cells.items():
        assert cell["estimate"] == pytest.approx(expected.estimate[i, j])
        assert cell["ci_low"] == pytest.approx(expected.ci_low[i, j])
        assert cell["ci_high"] == pytest.approx(expected.ci_high[i, j])
        assert cell["estimate_unbiased"] == pytest.approx(expected.estimate_unbiased[i, j])
    assert body["phi"]["estimate"] == pytest.approx(expected.phi.estimate)
    assert body["phi"]["ci_low"] == pytest.approx(expected.phi.ci_low)
    assert body["odds_ratio"]["estimate"] == pytest.approx(expected.odds_ratio.estimate)
    assert body["odds_ratio"]["ci_high"] == pytest.approx(expected.odds_ratio.ci_high)
    assert body["phi"]["defined"] is True
    assert body["contradicts_design"] is False
    # The seeded truth: plagiarism at 60 % among cheaters, 20 % otherwise → phi > 0.
    assert body["phi"]["ci_low"] > 0


def test_a_choice_question_gives_a_table_without_phi(owner, study):
    fill(study, [100, 100, 100, 100])
    q = questions(study)
    body = get(owner, study, a=q["often"], b=q["cheat"]).json()
    assert body["a_options"] == ["never", "once", "often"] and body["b_options"] == ["No", "Yes"]
    assert len(body["cells"]) == 6 and body["phi"] is None and body["odds_ratio"] is None
    counts = joint_counts(study, [q["often"], q["cheat"]])
    table = np.array([[counts.get((i, j), 0) for j in range(2)] for i in range(3)])
    expected = crosstab(
        table,
        by_id(study, q["often"]).design.response_matrix,
        by_id(study, q["cheat"]).design.response_matrix,
    )
    assert [c["estimate"] for c in body["cells"]] == pytest.approx(expected.estimate.ravel())
    assert sum(c["estimate"] for c in body["cells"]) == pytest.approx(1)


def test_reports_no_design_can_produce_are_flagged(owner, study):
    q = questions(study)
    # Everyone reports yes to both: with the two fair coins at most 75 % can.
    from responses.write import bulk_record

    bulk_record(study, [{q["cheat"]: 1, q["plagiarise"]: 1}] * 400, simulated=False)
    body = get(owner, study, a=q["cheat"], b=q["plagiarise"]).json()
    assert body["contradicts_design"] is True and body["design_p_value"] < 1e-6


def test_an_infinite_odds_ratio_is_null_and_defined(owner, study):
    q = questions(study)
    from responses.write import bulk_record

    # Reports as independent fair coins would give them for a table with an empty cell.
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(2000):
        truth = (int(rng.random() < 0.5),) * 2
        cheat, plag = (by_id(study, q[n]).design for n in ("cheat", "plagiarise"))
        rows.append(
            {
                q["cheat"]: int(cheat.simulate(np.array([truth[0]]), rng)[0]),
                q["plagiarise"]: int(plag.simulate(np.array([truth[1]]), rng)[0]),
            }
        )
    bulk_record(study, rows, simulated=False)
    body = get(owner, study, a=q["cheat"], b=q["plagiarise"]).json()
    odds = body["odds_ratio"]
    assert odds["defined"] is True
    assert odds["ci_high"] is None or odds["ci_high"] > 10  # ∞ is sent as null


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"b": "cheat"}, "a"),
        ({"a": "x", "b": "cheat"}, "a"),
        ({"a": 999999, "b": "cheat"}, "a"),
        ({"a": "faculty", "b": "cheat"}, "a"),  # asked directly
        ({"a": "cheat", "b": "job"}, "b"),
        ({"a": "cheat", "b": "age"}, "b"),
        ({"a": "cheat", "b": "cheat"}, "b"),
        ({"a": "cheat"}, "b"),
        ({"a": "cheat", "b": "plagiarise", "level": "x"}, "detail"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner, study, params, field):
    fill(study, [20, 0, 0, 0])
    q = questions(study)
    response = get(owner, study, **{key: q.get(v, v) for key, v in params.items()})
    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_no_answers_yet_is_a_clear_400(owner, study):
    q = questions(study)
    response = get(owner, study, a=q["cheat"], b=q["plagiarise"])
    assert response.status_code == 400
    assert "no respondent" in response.json()["a"][0]


@pytest.mark.parametrize(
    ("persona", "status"), [("owner", 200), ("viewer", 200), ("outsider", 404)]
)
def test_only_the_surveys_team_sees_a_crosstab(personas, study, persona, status):
    fill(study, [30, 30, 30, 30])
    q = questions(study)
    assert get(personas[persona], study, a=q["cheat"], b=q["plagiarise"]).status_code == status


def test_the_crosstab_page_shows_the_table_chart_and_phi(client, viewer, study):
    fill(study, [300, 200, 250, 250])
    q = questions(study)
    client.force_login(viewer)
    page = client.get(
        f"/surveys/{study.id}/results/crosstab/", {"a": q["cheat"], "b": q["plagiarise"]}
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "<title" in html and "<desc" in html
    assert "phi" in html.lower() and "odds ratio" in html.lower()


def test_the_crosstab_page_is_404_for_outsiders(client, outsider, study):
    client.force_login(outsider)
    assert client.get(f"/surveys/{study.id}/results/crosstab/").status_code == 404


def test_the_crosstab_page_of_a_choice_question_has_a_row_per_option(client, owner, study):
    fill(study, [100, 100, 100, 100])
    q = questions(study)
    client.force_login(owner)
    html = client.get(
        f"/surveys/{study.id}/results/crosstab/", {"a": q["often"], "b": q["cheat"]}
    ).content.decode()
    for option in ("never", "once", "often"):
        assert f'<th scope="row">{option}</th>' in html
    assert "Correlation (phi)" not in html
