"""The small-cell threshold k (SPEC §3, roles amended): at least 5, and never lowered once
answers exist — an editor lowering it to 1 would read off a group hidden until then. Each
refusal names the field (400 in the API, a message beside the field in the builder) and
stores nothing."""

from __future__ import annotations

import pytest

from responses.write import bulk_record
from survey.models import Survey

pytestmark = pytest.mark.django_db


def k_of(survey: Survey) -> int:
    return Survey.objects.get(pk=survey.pk).min_cell_count


def answered(survey: Survey) -> Survey:
    question = survey.questions.get()
    bulk_record(survey, [{question.id: 1}], simulated=False)
    return survey


@pytest.mark.parametrize("k", [1, 4])
def test_k_below_five_is_refused_at_creation_and_later(api, survey, k):
    created = api.post(
        "/api/surveys/", {"title": "Tiny groups", "min_cell_count": k}, format="json"
    )
    assert created.status_code == 400 and "min_cell_count" in created.json()
    assert Survey.objects.filter(title="Tiny groups").count() == 0
    changed = api.patch(f"/api/surveys/{survey.id}/", {"min_cell_count": k}, format="json")
    assert changed.status_code == 400 and "5" in changed.json()["min_cell_count"][0]
    assert k_of(survey) == 10


def test_before_answers_k_may_go_down_to_five(api, survey):
    response = api.patch(f"/api/surveys/{survey.id}/", {"min_cell_count": 5}, format="json")
    assert response.status_code == 200 and k_of(survey) == 5


def test_once_answers_exist_k_can_be_raised_but_not_lowered(api, survey):
    answered(survey)
    lowered = api.patch(f"/api/surveys/{survey.id}/", {"min_cell_count": 9}, format="json")
    assert lowered.status_code == 400
    assert "Cannot be lowered once answers exist" in lowered.json()["min_cell_count"][0]
    assert k_of(survey) == 10
    raised = api.patch(f"/api/surveys/{survey.id}/", {"min_cell_count": 12}, format="json")
    assert raised.status_code == 200 and k_of(survey) == 12


def test_the_builder_says_why_beside_the_field_and_keeps_k(logged_in, survey):
    answered(survey)
    form = {"title": survey.title, "mode": survey.mode, "language": "en", "min_cell_count": "5"}
    if survey.allow_skip:  # the box as the page shows it: skips are frozen with answers
        form["allow_skip"] = "on"
    response = logged_in.post(f"/surveys/{survey.id}/edit/", form)
    assert response.status_code == 400
    html = response.content.decode()
    field = html[html.index('id="id_min_cell_count"') - 600 :]
    assert "Cannot be lowered once answers exist (it is 10)" in field[:2000]
    assert k_of(survey) == 10
    form["min_cell_count"] = "15"
    assert logged_in.post(f"/surveys/{survey.id}/edit/", form).status_code == 302
    assert k_of(survey) == 15
