"""The compare endpoint: a randomized yes/no question's prevalence in two groups of a
directly asked question, their difference with interval, Wald and likelihood-ratio
p-values; hidden groups of the breakdown cannot be compared."""

from __future__ import annotations

import math

import pytest

from estimator.compare import compare
from tests.analysis.analysis_data import api_for, fill, questions
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
PATH = "/api/surveys/{survey_id}/compare/"


def get(user, survey, **params):
    return api_for(user).get(PATH.format(survey_id=survey.id), params)


def faculty_breakdown(owner, study, q) -> dict:
    """The breakdown of cheating by faculty, as the owner reads it."""
    params = {"question": q["cheat"], "by": q["faculty"]}
    return api_for(owner).get(f"/api/surveys/{study.id}/estimates/breakdown/", params).json()


def test_the_difference_between_two_faculties_is_the_maths_on_their_counts(owner, study):
    fill(study, [300, 200, 250, 300], seed=3)
    q = questions(study)
    breakdown = faculty_breakdown(owner, study, q)
    response = get(owner, study, question=q["cheat"], by=q["faculty"], a=3, b=0)
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, PATH, "GET")
    body = response.json()
    design = study.questions.get(id=q["cheat"]).design
    medicine, arts = breakdown["categories"][3], breakdown["categories"][0]
    want = compare(
        design.estimate(medicine["yes_count"], medicine["n"]),
        design.estimate(arts["yes_count"], arts["n"]),
    )
    assert [g["text"] for g in body["groups"]] == ["Medicine", "Arts"]
    assert [g["n"] for g in body["groups"]] == [300, 300]
    assert body["difference"] == pytest.approx(want.difference)
    assert body["ci"] == pytest.approx(list(want.ci()))
    assert body["wald_p_value"] == pytest.approx(want.wald_p_value)
    assert body["lr_p_value"] == pytest.approx(want.lr_p_value)
    # The seeded truth: 40 % + age in Medicine against 10 % + age in Arts.
    assert body["difference"] > 0 and body["ci"][0] > 0 and body["lr_p_value"] < 0.01


def test_a_hidden_group_cannot_be_compared(owner, study):
    fill(study, [212, 7, 64, 40])  # Law (7) hidden, and Medicine with it
    q = questions(study)
    for hidden in (1, 3):
        response = get(owner, study, question=q["cheat"], by=q["faculty"], a=0, b=hidden)
        assert response.status_code == 400
        assert "hidden" in response.json()["b"][0]
        assert "estimate" not in response.content.decode()
    assert get(owner, study, question=q["cheat"], by=q["faculty"], a=0, b=2).status_code == 200


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"a": 0, "b": 0}, "b"),
        ({"a": 9, "b": 0}, "a"),
        ({"a": "Law", "b": 0}, "a"),
        ({"a": 0}, "b"),
        ({"a": 0, "b": 1, "question": "often"}, "question"),
        ({"a": 0, "b": 1, "by": "cheat"}, "by"),
        ({"a": 0, "b": 1, "level": 2}, "detail"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner, study, params, field):
    fill(study, [60, 60, 60, 60])
    q = questions(study)
    query = {"question": q["cheat"], "by": q["faculty"], **params}
    for key in ("question", "by"):
        if isinstance(query[key], str):
            query[key] = q[query[key]]
    response = get(owner, study, **query)
    assert response.status_code == 400
    assert field in response.json()


def test_only_the_surveys_team_can_compare(outsider, study):
    fill(study, [60, 60, 60, 60])
    q = questions(study)
    response = get(outsider, study, question=q["cheat"], by=q["faculty"], a=0, b=1)
    assert response.status_code == 404


def test_the_breakdown_page_compares_two_shown_groups(client, owner, study):
    fill(study, [212, 7, 64, 40])  # Law and Medicine hidden
    q = questions(study)
    client.force_login(owner)
    url = f"/surveys/{study.id}/results/breakdown/"
    page = client.get(url, {"question": q["cheat"], "by": q["faculty"]}).content.decode()
    assert "Compare two groups" in page
    choices = page.split('id="compare-a"')[1].split("</select>")[0]
    assert "Arts" in choices and "Science" in choices
    assert "Law" not in choices and "Medicine" not in choices  # hidden groups are not offered
    params = {"question": q["cheat"], "by": q["faculty"], "a": 2, "b": 0}
    page = client.get(url, params).content.decode()
    want = get(owner, study, **params).json()
    assert "Science" in page and "a difference of" in page
    assert f"p = {want['lr_p_value']:.3g} (likelihood ratio)" in page
    hidden = client.get(url, {**params, "b": 1}).content.decode()
    assert "hidden in the breakdown" in hidden and "a difference of" not in hidden


def test_with_a_population_size_the_groups_are_corrected_as_in_the_breakdown(client, owner, study):
    fill(study, [300, 200, 250, 300], seed=3)
    q = questions(study)
    params = {"question": q["cheat"], "by": q["faculty"], "a": 3, "b": 0}
    plain = get(owner, study, **params).json()
    study.population_size = 1500
    study.save(update_fields=["population_size"])
    response = get(owner, study, **params)
    assert_matches_schema(response, PATH, "GET")
    body = response.json()
    breakdown = faculty_breakdown(owner, study, q)
    medicine, arts = breakdown["categories"][3], breakdown["categories"][0]
    # Each group's share of N: 300 of the 1050 respondents, 429 of the 1500.
    groups = [medicine["population"], arts["population"]]
    assert [g["population"] for g in body["groups"]] == groups == [429, 429]
    assert [g["std_error"] for g in body["groups"]] == pytest.approx(
        [medicine["std_error"], arts["std_error"]]
    )
    assert body["std_error"] == pytest.approx(math.hypot(medicine["std_error"], arts["std_error"]))
    assert body["std_error"] < plain["std_error"]
    assert [g["population"] for g in plain["groups"]] == [None, None]
    client.force_login(owner)
    page = client.get(f"/surveys/{study.id}/results/breakdown/", params).content.decode()
    assert "The interval and the Wald test apply the finite-population correction" in page
