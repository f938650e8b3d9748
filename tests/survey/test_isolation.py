"""Every page and endpoint of a survey answers 404 — never 403 — to anyone without the
role it needs, and leaves the survey untouched; those with the role get through.

Personas: the owner, an editor, an analyst, a viewer, a collaborator whose access was removed, and
an outsider. Each URL states the least role it needs.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from survey.models import Collaborator, Invite, Role, Survey
from tests.storage import stored_count

pytestmark = pytest.mark.django_db

PERSONAS = ["owner", "editor", "analyst", "viewer", "removed", "outsider"]
HOLDS = {
    "owner": Role.OWNER,
    "editor": Role.EDITOR,
    "analyst": Role.ANALYST,
    "viewer": Role.VIEWER,
    "removed": None,
    "outsider": None,
}

PAGES = [
    ("get", "/surveys/{s}/edit/", Role.EDITOR),
    ("post", "/surveys/{s}/edit/", Role.EDITOR),
    ("post", "/surveys/{s}/status/", Role.EDITOR),
    ("post", "/surveys/{s}/preview/", Role.EDITOR),
    ("post", "/surveys/{s}/questions/", Role.EDITOR),
    ("post", "/surveys/{s}/questions/{q}/", Role.EDITOR),
    ("post", "/surveys/{s}/questions/{q}/move/", Role.EDITOR),
    ("post", "/surveys/{s}/questions/{q}/delete/", Role.EDITOR),
    ("get", "/surveys/{s}/distribute/", Role.EDITOR),
    ("post", "/surveys/{s}/invites/", Role.EDITOR),
    ("post", "/surveys/{s}/import/", Role.EDITOR),
    ("get", "/surveys/{s}/results/", Role.VIEWER),
    ("get", "/surveys/{s}/delete/", Role.OWNER),
    ("post", "/surveys/{s}/delete/", Role.OWNER),
    ("get", "/surveys/{s}/share/", Role.OWNER),
    ("post", "/surveys/{s}/share/", Role.OWNER),
    ("post", "/surveys/{s}/share/{editor}/", Role.OWNER),
    ("post", "/surveys/{s}/transfer/", Role.OWNER),
    ("get", "/surveys/{s}/audit/", Role.OWNER),
]
CLASSROOM_PAGES = [
    ("get", "/classroom/{s}/", Role.VIEWER),
    ("get", "/classroom/{s}/join/", Role.VIEWER),
    ("get", "/classroom/{s}/poll/", Role.VIEWER),
    ("post", "/classroom/{s}/simulate/", Role.EDITOR),
    ("post", "/classroom/{s}/reveal/", Role.EDITOR),
    ("post", "/classroom/{s}/lock/", Role.EDITOR),
]
API = [
    ("get", "/api/surveys/{s}/", Role.VIEWER),
    ("patch", "/api/surveys/{s}/", Role.EDITOR),
    ("delete", "/api/surveys/{s}/", Role.OWNER),
    ("post", "/api/surveys/{s}/open/", Role.EDITOR),
    ("post", "/api/surveys/{s}/close/", Role.EDITOR),
    # Row-level exports: a viewer could single out a small group from its rows.
    ("get", "/api/surveys/{s}/export.csv", Role.ANALYST),
    ("get", "/api/surveys/{s}/export.sav", Role.ANALYST),
    ("get", "/api/surveys/{s}/export.dta", Role.ANALYST),
    ("get", "/api/surveys/{s}/codebook.json", Role.ANALYST),
    ("get", "/api/surveys/{s}/audit/", Role.OWNER),
    ("get", "/api/surveys/{s}/estimates/", Role.VIEWER),
    ("get", "/api/surveys/{s}/estimates.csv", Role.VIEWER),
    ("post", "/api/surveys/{s}/import/", Role.EDITOR),
    ("get", "/api/surveys/{s}/invites/", Role.EDITOR),
    ("post", "/api/surveys/{s}/invites/", Role.EDITOR),
    ("get", "/api/surveys/{s}/collaborators/", Role.OWNER),
    ("post", "/api/surveys/{s}/collaborators/", Role.OWNER),
    ("patch", "/api/surveys/{s}/collaborators/{editor}/", Role.OWNER),
    ("delete", "/api/surveys/{s}/collaborators/{editor}/", Role.OWNER),
    ("post", "/api/surveys/{s}/transfer/", Role.OWNER),
]
BODIES = {
    "patch": {"title": "Taken over", "questions": [], "role": "viewer"},
    "post": {
        "n": 3,
        "action": "close",
        "title": "Taken over",
        "new-text": "Mine?",
        "user": "bystander",
        "role": "editor",
        "confirm": "on",
        "true_rate": "30",
    },
}


@pytest.fixture
def team(owner, outsider, django_user_model) -> dict:
    """The five personas, by name; ``bystander`` is an account anyone may name."""
    users = {"owner": owner, "outsider": outsider}
    for name in ("editor", "analyst", "viewer", "removed", "bystander"):
        users[name] = django_user_model.objects.create_user(name, password=f"{name}-password-1")
    return users


def share_as_team(survey: Survey, team: dict) -> Survey:
    survey.share_with(team["editor"], Role.EDITOR)
    survey.share_with(team["analyst"], Role.ANALYST)
    survey.share_with(team["viewer"], Role.VIEWER)
    survey.share_with(team["removed"], Role.EDITOR)
    survey.collaborators.filter(user=team["removed"]).delete()
    return survey


@pytest.fixture
def victim_survey(make_survey, team) -> Survey:
    return share_as_team(make_survey(n_questions=2), team)


@pytest.fixture
def classroom_survey(make_survey, team) -> Survey:
    return share_as_team(make_survey(mode=Survey.Mode.CLASSROOM), team)


def snapshot(survey: Survey) -> tuple:
    survey = Survey.with_trashed.get(pk=survey.pk)
    questions = list(survey.questions.values_list("id", "position", "text", "design_params"))
    shares = sorted(Collaborator.objects.values_list("survey_id", "user_id", "role"))
    return (
        survey.title,
        survey.status,
        survey.owner_id,
        survey.trashed_at,
        survey.results_revealed,
        survey.is_locked,
        questions,
        shares,
        Invite.objects.count(),
        stored_count(survey),
    )


def url_for(template: str, survey: Survey, team: dict) -> str:
    return template.format(s=survey.id, q=survey.questions.first().id, editor=team["editor"].id)


def allowed(persona: str, needed: Role) -> bool:
    held = HOLDS[persona]
    return held is not None and held.includes(needed)


def check_page(client, team, survey, persona, method, template, needed) -> None:
    client.force_login(team[persona])
    before = snapshot(survey)
    response = getattr(client, method)(url_for(template, survey, team), BODIES.get(method, {}))
    if allowed(persona, needed):
        assert response.status_code not in (403, 404)
        assert response.status_code < 500
    else:
        assert response.status_code == 404
        assert snapshot(survey) == before


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("method", "template", "needed"), PAGES)
def test_pages_answer_404_to_everyone_without_the_role(
    client, team, victim_survey, persona, method, template, needed
):
    check_page(client, team, victim_survey, persona, method, template, needed)


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("method", "template", "needed"), CLASSROOM_PAGES)
def test_classroom_pages_answer_404_to_everyone_without_the_role(
    client, team, classroom_survey, persona, method, template, needed
):
    check_page(client, team, classroom_survey, persona, method, template, needed)


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("method", "template", "needed"), API)
def test_the_api_answers_404_to_everyone_without_the_role(
    team, victim_survey, persona, method, template, needed
):
    api = APIClient()
    api.force_authenticate(team[persona])
    before = snapshot(victim_survey)
    response = api_call(api, method, url_for(template, victim_survey, team))
    if allowed(persona, needed):
        assert response.status_code not in (403, 404)
        assert response.status_code < 500
    else:
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/json")
        assert snapshot(victim_survey) == before


def api_call(api: APIClient, method: str, url: str):
    if url.endswith("import/"):
        return api.post(url, "q1,q2\n1,1\n", content_type="text/csv")
    return getattr(api, method)(url, BODIES.get(method, {}), format="json")


@pytest.mark.parametrize(("method", "template", "needed"), PAGES + API)
def test_a_trashed_survey_is_404_on_every_page_and_endpoint_for_everyone(
    client, team, victim_survey, method, template, needed
):
    """Only the owner's trash page and restore (see test_trash) still find it."""
    victim_survey.move_to_trash()
    before = snapshot(victim_survey)
    url = url_for(template, victim_survey, team)
    for persona in PERSONAS:
        if template.startswith("/api/"):
            api = APIClient()
            api.force_authenticate(team[persona])
            response = api_call(api, method, url)
        else:
            client.force_login(team[persona])
            response = getattr(client, method)(url, BODIES.get(method, {}))
        assert response.status_code == 404, persona
    assert snapshot(victim_survey) == before


@pytest.mark.parametrize("persona", ["removed", "outsider"])
def test_a_survey_shared_with_others_is_not_listed_for_you(client, team, victim_survey, persona):
    Survey.objects.filter(pk=victim_survey.pk).update(title="Their survey")
    client.force_login(team[persona])
    assert "Their survey" not in client.get("/surveys/").content.decode()
    api = APIClient()
    api.force_authenticate(team[persona])
    assert api.get("/api/surveys/").json()["results"] == []


@pytest.mark.parametrize("persona", ["owner", "editor", "analyst", "viewer"])
def test_the_survey_list_shows_each_survey_with_your_role(client, team, victim_survey, persona):
    client.force_login(team[persona])
    page = client.get("/surveys/").content.decode()
    assert "Exam honesty" in page
    assert (f"{persona}, shared by owner" in page) == (persona != "owner")
    api = APIClient()
    api.force_authenticate(team[persona])
    [listed] = api.get("/api/surveys/").json()["results"]
    assert (listed["id"], listed["role"]) == (victim_survey.id, persona)


def test_a_question_of_another_survey_is_a_404_even_in_your_own_survey_url(
    client, owner, make_survey, outsider
):
    mine = make_survey()
    theirs = make_survey(owner=outsider)
    client.force_login(owner)
    foreign = theirs.questions.get()
    response = client.post(f"/surveys/{mine.id}/questions/{foreign.id}/delete/")
    assert response.status_code == 404
    assert theirs.questions.exists()


def test_an_editor_of_one_survey_gets_nothing_of_the_owners_others(
    client, team, victim_survey, make_survey
):
    other = make_survey()
    client.force_login(team["editor"])
    assert client.get(f"/surveys/{other.id}/edit/").status_code == 404
    assert client.get(f"/surveys/{other.id}/results/").status_code == 404


def test_the_survey_list_shows_only_yours_and_those_shared_with_you(
    client, owner, make_survey, outsider
):
    theirs = make_survey(owner=outsider)
    Survey.objects.filter(pk=theirs.pk).update(title="Their survey")
    make_survey()
    client.force_login(owner)
    page = client.get("/surveys/").content.decode()
    assert "Exam honesty" in page
    assert "Their survey" not in page
