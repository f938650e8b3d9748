"""A viewer's results are released in batches (SPEC §3, roles amended), played by the
viewer who polls every result before and after one new respondent: the page, the API and
every CSV are byte-identical until at least k (the survey's ``min_cell_count``) new
respondents have arrived, and change after k. Analysts, editors and owners see live."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from responses.sealing import seal
from responses.write import bulk_record
from survey.models import Role
from tests.analysis.analysis_data import analysis_survey, api_for, fill, questions

pytestmark = pytest.mark.django_db

K = 5
# The one part of a page that differs on every response (CSRF tokens are masked anew).
CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')


def one_respondent(survey, faculty: int = 0) -> dict:
    q = questions(survey)
    return {
        q["faculty"]: faculty,
        q["age"]: 23,
        q["cheat"]: 1,
        q["plagiarise"]: 1,
        q["often"]: 2,
        q["job"]: 1,
    }


def everything(user, survey) -> dict[str, bytes]:
    """Every result a viewer may read, as the bytes they receive."""
    q = questions(survey)
    api, page = api_for(user), Client()
    page.force_login(user)
    s = survey.id
    urls = {
        f"/api/surveys/{s}/estimates/": api,
        f"/api/surveys/{s}/estimates.csv": api,
        f"/api/surveys/{s}/estimates/breakdowns.csv": api,
        f"/api/surveys/{s}/estimates/breakdown/?by={q['faculty']}&question={q['cheat']}": api,
        f"/api/surveys/{s}/crosstab/?a={q['cheat']}&b={q['plagiarise']}": api,
        f"/surveys/{s}/results/": page,
        f"/surveys/{s}/results/breakdown/?by={q['faculty']}&question={q['cheat']}": page,
        f"/surveys/{s}/results/crosstab/?a={q['cheat']}&b={q['plagiarise']}": page,
    }
    seen = {}
    for url, client in urls.items():
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:300])
        seen[url] = CSRF.sub(b"", response.content)
    return seen


@pytest.fixture
def released(owner, django_user_model):
    survey = analysis_survey(owner, min_cell_count=K)
    fill(survey, [12, 12, 12, 12])
    people = {}
    for role in (Role.VIEWER, Role.ANALYST):
        people[role] = django_user_model.objects.create_user(role.value, password="pw-1-long-x")
        survey.share_with(people[role], role)
    return survey, people


def arrive(survey, people: list[dict]) -> None:
    """Respondents arrive, and their hour is sealed (as the hourly job does)."""
    bulk_record(survey, people, simulated=False)
    seal(everything=True)


def test_a_viewer_sees_nothing_change_until_k_new_respondents_have_arrived(released):
    survey, people = released
    viewer = people[Role.VIEWER]
    before = everything(viewer, survey)
    arrive(survey, [one_respondent(survey)])
    assert everything(viewer, survey) == before
    arrive(survey, [one_respondent(survey)] * (K - 2))
    assert everything(viewer, survey) == before  # k − 1 new respondents
    arrive(survey, [one_respondent(survey)])
    after = everything(viewer, survey)
    changed = [url for url in before if after[url] != before[url]]
    assert f"/api/surveys/{survey.id}/estimates/" in changed
    assert f"/api/surveys/{survey.id}/estimates/breakdowns.csv" in changed
    assert f"/surveys/{survey.id}/results/" in changed
    # The next release again needs k more.
    arrive(survey, [one_respondent(survey, 1)] * (K - 1))
    assert everything(viewer, survey) == after


def test_a_viewer_sees_only_sealed_hours(released):
    """A release cut in the middle of an hour would, once the hour is sealed, set apart
    the reports of those who came after it (the final counts minus the release): only
    sealed hours are released, so what a release leaves out is whole hours."""
    survey, people = released
    viewer = people[Role.VIEWER]
    before = everything(viewer, survey)
    bulk_record(survey, [one_respondent(survey)] * (3 * K), simulated=False)
    assert everything(viewer, survey) == before  # the hour is not sealed yet
    seal(everything=True)
    assert everything(viewer, survey) != before


def test_an_analyst_sees_every_respondent_at_once(released):
    survey, people = released
    analyst = people[Role.ANALYST]
    url = f"/api/surveys/{survey.id}/estimates/"
    before = api_for(analyst).get(url).content
    bulk_record(survey, [one_respondent(survey)], simulated=False)
    assert api_for(analyst).get(url).content != before


def test_before_the_first_k_respondents_a_viewer_sees_no_answer(owner, django_user_model):
    survey = analysis_survey(owner, min_cell_count=K)
    viewer = django_user_model.objects.create_user("viewer", password="pw-1-long-x")
    survey.share_with(viewer, Role.VIEWER)
    bulk_record(survey, [one_respondent(survey)] * (K - 1), simulated=False)
    estimates = api_for(viewer).get(f"/api/surveys/{survey.id}/estimates/").json()
    assert {q["n"] for q in estimates["questions"]} == {0}
