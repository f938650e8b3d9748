"""Deleting loses nothing by accident: a confirmation that counts the answers, a trash
that hides the survey everywhere, restore that brings it back whole, and a purge after
the retention period — only ever at the owner's hand."""

from __future__ import annotations

import io
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from responses.sealing import seal
from responses.write import simulate_respondents
from survey.models import Collaborator, Invite, Question, Role, Survey
from tests.storage import every_response_row, rows_left, stored_answers, stored_count
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

NOON = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def team(owner, outsider, django_user_model) -> dict:
    users = {"owner": owner, "outsider": outsider}
    for name in ("editor", "viewer", "removed"):
        users[name] = django_user_model.objects.create_user(name, password=f"{name}-password-1")
    return users


@pytest.fixture
def answered(make_survey, team) -> Survey:
    """An open survey with answers, invites, tallies and collaborators."""
    survey = make_survey(n_questions=2, requires_invite=False)
    simulate_respondents(survey, 5, 0.3, np.random.default_rng(1))
    Invite.create_batch(survey, 3)
    survey.share_with(team["editor"], Role.EDITOR)
    survey.share_with(team["viewer"], Role.VIEWER)
    survey.share_with(team["removed"], Role.VIEWER)
    survey.collaborators.filter(user=team["removed"]).delete()
    for _ in range(2):
        assert submit(survey).status_code == 201
    return survey


@pytest.fixture
def frozen_clock(monkeypatch):
    """``timezone.now()`` returns ``clock[0]``; tests move it forward by hand."""
    clock = [NOON]
    monkeypatch.setattr(timezone, "now", lambda: clock[0])
    return clock


def submit(survey: Survey, client=None):
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [{"question": q.id, "value": 1} for q in survey.questions.all()],
    }
    client = client or APIClient()
    return client.post(f"/api/public/surveys/{survey.slug}/responses/", body, format="json")


def api_for(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def everything() -> tuple:
    """Every row a survey owns, as it is stored."""
    return (
        sorted(
            Survey.with_trashed.values_list(
                "id", "title", "status", "slug", "join_code", "owner_id", "design_version"
            )
        ),
        sorted(Question.objects.values_list("id", "survey_id", "text", "design_params")),
        every_response_row(),
        sorted(Invite.objects.values_list("token_hash", "used")),
        sorted(Collaborator.objects.values_list("survey_id", "user_id", "role")),
    )


# Confirmation --------------------------------------------------------------------------


def test_the_confirmation_says_how_many_answers_the_survey_holds(client, owner, answered):
    client.force_login(owner)
    page = client.get(f"/surveys/{answered.id}/delete/").content.decode()
    assert "7 responses" in page
    assert "of which 5 simulated" in page
    assert "3 invites" in page
    assert "It is <strong>open</strong>" in page
    assert "for 30 days" in page
    assert Survey.objects.filter(pk=answered.pk).exists()


def test_the_builder_asks_for_confirmation_instead_of_deleting(client, owner, answered):
    client.force_login(owner)
    builder = client.get(f"/surveys/{answered.id}/edit/").content.decode()
    assert f'href="/surveys/{answered.id}/delete/"' in builder
    assert f'action="/surveys/{answered.id}/delete/"' not in builder


def test_confirming_moves_an_open_answered_survey_to_the_trash(client, owner, answered):
    before = everything()
    client.force_login(owner)
    response = client.post(f"/surveys/{answered.id}/delete/", follow=True)
    assert "Moved “Exam honesty” to the trash" in response.content.decode()
    assert not Survey.objects.exists()
    assert everything() == before
    trash = client.get("/surveys/trash/").content.decode()
    assert "Exam honesty" in trash
    assert f'action="/surveys/{answered.id}/restore/"' in trash


# A trashed survey is gone everywhere ----------------------------------------------------


def test_a_trashed_survey_is_404_everywhere(client, owner, team, answered):
    answered.move_to_trash()
    before = everything()
    client.force_login(owner)
    for url in (
        f"/surveys/{answered.id}/edit/",
        f"/surveys/{answered.id}/distribute/",
        f"/surveys/{answered.id}/results/",
        f"/surveys/{answered.id}/share/",
        f"/surveys/{answered.id}/delete/",
    ):
        assert client.get(url).status_code == 404, url
    assert "Exam honesty" not in client.get("/surveys/").content.decode()
    for user in team.values():
        api = api_for(user)
        assert api.get(f"/api/surveys/{answered.id}/").status_code == 404
        assert api.get(f"/api/surveys/{answered.id}/estimates/").status_code == 404
        assert api.get(f"/api/surveys/{answered.id}/export.csv").status_code == 404
        assert api.get("/api/surveys/").json()["results"] == []
    client.logout()
    assert client.get(f"/s/{answered.slug}/").status_code == 404
    assert client.post(f"/s/{answered.slug}/paper/", {}).status_code == 404
    assert client.get(f"/j/{answered.join_code}").status_code == 404
    assert submit(answered).status_code == 404
    assert everything() == before


def test_a_trashed_classroom_survey_is_404_for_students_too(client, owner, make_survey):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    survey.move_to_trash()
    assert client.get(f"/classroom/status/{survey.slug}/").status_code == 404
    client.force_login(owner)
    assert client.get(f"/classroom/{survey.id}/").status_code == 404


def test_the_fast_path_stores_nothing_in_a_trashed_survey_whose_sheet_is_cached(answered):
    """The respondents' shortcut checks the survey row itself, not a cached sheet."""
    assert submit(answered).status_code == 201
    answered.move_to_trash()
    before = everything()
    assert submit(answered).status_code == 404
    assert everything() == before


# Restore ---------------------------------------------------------------------------------


def test_restore_brings_the_survey_back_whole(client, owner, team, answered):
    before = everything()
    client.force_login(owner)
    client.post(f"/surveys/{answered.id}/delete/")
    response = client.post(f"/surveys/{answered.id}/restore/")
    assert response.status_code == 302
    assert response["Location"] == f"/surveys/{answered.id}/edit/"
    assert everything() == before
    restored = Survey.objects.get()
    assert restored.trashed_at is None
    assert restored.is_accepting
    assert submit(restored).status_code == 201
    assert client.get(f"/s/{restored.slug}/").status_code == 200
    assert api_for(team["viewer"]).get(f"/api/surveys/{answered.id}/").status_code == 200
    assert "The trash is empty." in client.get("/surveys/trash/").content.decode()


def test_the_api_deletes_to_the_trash_and_restores(owner, answered):
    before = everything()
    api = api_for(owner)
    deleted = api.delete(f"/api/surveys/{answered.id}/")
    assert deleted.status_code == 204
    assert api.get(f"/api/surveys/{answered.id}/").status_code == 404
    assert everything() == before
    restored = api.post(f"/api/surveys/{answered.id}/restore/")
    assert restored.status_code == 200
    assert_matches_schema(restored, "/api/surveys/{id}/restore/", "post")
    assert restored.json()["status"] == "open"
    assert restored.json()["role"] == "owner"
    assert everything() == before
    assert api.post(f"/api/surveys/{answered.id}/restore/").status_code == 404


def test_the_api_lists_the_owners_trash(frozen_clock, owner, team, answered, make_survey):
    make_survey()  # not in the trash: not listed
    answered.move_to_trash()
    response = api_for(owner).get("/api/surveys/trash/")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/trash/", "get")
    assert response.json() == [
        {
            "id": answered.id,
            "title": "Exam honesty",
            "status": "open",
            "n_responses": 7,
            "trashed_at": "2026-03-01T12:00:00Z",
            "purge_after": "2026-03-31T12:00:00Z",
        }
    ]
    for persona in ("editor", "viewer", "removed", "outsider"):
        assert api_for(team[persona]).get("/api/surveys/trash/").json() == []


def test_restoring_a_survey_that_is_not_in_the_trash_is_a_404(client, owner, answered):
    client.force_login(owner)
    assert client.post(f"/surveys/{answered.id}/restore/").status_code == 404


# Only the owner deletes and restores --------------------------------------------------------


@pytest.mark.parametrize("persona", ["editor", "viewer", "removed", "outsider"])
def test_only_the_owner_deletes(client, team, answered, persona):
    before = everything()
    client.force_login(team[persona])
    assert client.get(f"/surveys/{answered.id}/delete/").status_code == 404
    assert client.post(f"/surveys/{answered.id}/delete/").status_code == 404
    assert api_for(team[persona]).delete(f"/api/surveys/{answered.id}/").status_code == 404
    assert everything() == before
    assert Survey.objects.filter(pk=answered.pk).exists()


@pytest.mark.parametrize("persona", ["editor", "viewer", "removed", "outsider"])
def test_only_the_owner_sees_the_trash_and_restores(client, team, answered, persona):
    answered.move_to_trash()
    before = everything()
    client.force_login(team[persona])
    assert "Exam honesty" not in client.get("/surveys/trash/").content.decode()
    assert client.post(f"/surveys/{answered.id}/restore/").status_code == 404
    restore = api_for(team[persona]).post(f"/api/surveys/{answered.id}/restore/")
    assert restore.status_code == 404
    assert everything() == before
    assert not Survey.objects.filter(pk=answered.pk).exists()


# Purge -------------------------------------------------------------------------------------


def purge() -> str:
    out = io.StringIO()
    call_command("purge_trash", stdout=out)
    return out.getvalue()


def test_purge_deletes_for_good_only_what_waited_longer_than_the_retention(
    frozen_clock, make_survey, owner
):
    old = make_survey()
    simulate_respondents(old, 3, 0.5, np.random.default_rng(2))
    assert submit(old).status_code == 201
    seal(everything=True)  # sealed rows and current-hour rows alike
    assert submit(old).status_code == 201
    questions = list(old.questions.values_list("pk", flat=True))
    old.move_to_trash()
    frozen_clock[0] = NOON + timedelta(days=20)
    recent = make_survey()
    recent.move_to_trash()
    kept = make_survey()
    frozen_clock[0] = NOON + timedelta(days=30)
    assert "Deleted 0 survey(s)" in purge()
    frozen_clock[0] = NOON + timedelta(days=30, seconds=1)
    assert "Deleted 1 survey(s) in the trash for more than 30 days." in purge()
    assert sorted(Survey.with_trashed.values_list("pk", flat=True)) == sorted([recent.pk, kept.pk])
    # Every row the survey's answers left, in each table that keeps them: the database
    # does not enforce most of these keys (survey.models), so the cascade must reach them.
    assert questions and not Question.objects.filter(survey_id=old.pk).exists()
    assert rows_left(old.pk, questions) == {}
    assert stored_answers() == stored_count() == 0


def test_purge_follows_the_retention_setting(frozen_clock, settings, make_survey):
    settings.TRASH_RETENTION_DAYS = 7
    survey = make_survey()
    survey.move_to_trash()
    frozen_clock[0] = NOON + timedelta(days=6)
    assert "Deleted 0" in purge()
    frozen_clock[0] = NOON + timedelta(days=7, minutes=1)
    assert "Deleted 1 survey(s) in the trash for more than 7 days." in purge()
    assert not Survey.with_trashed.exists()


def test_the_trash_page_says_when_a_survey_is_deleted_for_good(
    frozen_clock, client, owner, make_survey
):
    make_survey().move_to_trash()
    client.force_login(owner)
    page = client.get("/surveys/trash/").content.decode()
    assert "2026-03-01 12:00 UTC" in page
    assert "2026-03-31 12:00 UTC" in page


def test_a_survey_restored_before_the_purge_is_kept(frozen_clock, make_survey):
    survey = make_survey()
    survey.move_to_trash()
    frozen_clock[0] = NOON + timedelta(days=29)
    survey.restore()
    frozen_clock[0] = NOON + timedelta(days=90)
    assert "Deleted 0" in purge()
    assert Survey.objects.filter(pk=survey.pk).exists()
