"""Sharing a survey: the owner adds viewers and editors by username or email, changes
and removes them, and transfers ownership; the page and the API say the same."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from survey.models import Collaborator, Role, Survey
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def colleague(django_user_model):
    return django_user_model.objects.create_user(
        "colleague", email="Colleague@Example.org", password="colleague-password-1"
    )


def api_for(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def shares() -> list[tuple]:
    return sorted(Collaborator.objects.values_list("survey_id", "user__username", "role"))


# The sharing page ------------------------------------------------------------------------


def test_the_sharing_page_is_linked_from_the_owners_workspace_only(
    client, owner, colleague, survey
):
    survey.share_with(colleague, Role.EDITOR)
    client.force_login(owner)
    assert (
        f"/surveys/{survey.id}/share/" in client.get(f"/surveys/{survey.id}/edit/").content.decode()
    )
    client.force_login(colleague)
    page = client.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert f"/surveys/{survey.id}/share/" not in page
    assert "Shared with you as <strong>editor</strong>" in page
    assert f"/surveys/{survey.id}/delete/" not in page


@pytest.mark.parametrize("named_as", ["colleague", "colleague@example.org"])
def test_the_owner_shares_by_username_or_email(logged_in, colleague, survey, named_as):
    response = logged_in.post(
        f"/surveys/{survey.id}/share/", {"user": named_as, "role": "viewer"}, follow=True
    )
    assert "Shared with colleague as viewer." in response.content.decode()
    assert shares() == [(survey.id, "colleague", "viewer")]
    assert "colleague" in logged_in.get(f"/surveys/{survey.id}/share/").content.decode()


def test_a_viewer_sees_results_but_cannot_build(client, colleague, survey):
    survey.share_with(colleague, Role.VIEWER)
    client.force_login(colleague)
    results = client.get(f"/surveys/{survey.id}/results/")
    assert results.status_code == 200
    assert f"/surveys/{survey.id}/edit/" not in results.content.decode()
    assert client.get(f"/surveys/{survey.id}/edit/").status_code == 404
    page = results.content.decode()
    assert "need the analyst role" in page and "export.csv" not in page
    for export in ("export.csv", "codebook.json"):
        assert api_for(colleague).get(f"/api/surveys/{survey.id}/{export}").status_code == 404


@pytest.mark.parametrize("role", [Role.ANALYST, Role.EDITOR])
def test_an_analyst_or_editor_downloads_the_rows_but_only_an_editor_builds(
    client, colleague, survey, role
):
    survey.share_with(colleague, role)
    client.force_login(colleague)
    page = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert f"/api/surveys/{survey.id}/export.csv" in page
    assert (f"/surveys/{survey.id}/edit/" in page) == (role == Role.EDITOR)
    for export in ("export.csv", "codebook.json"):
        assert api_for(colleague).get(f"/api/surveys/{survey.id}/{export}").status_code == 200


def test_the_owner_shares_as_analyst_on_the_page_and_over_the_api(
    logged_in, colleague, survey, owner
):
    logged_in.post(f"/surveys/{survey.id}/share/", {"user": "colleague", "role": "analyst"})
    assert shares() == [(survey.id, "colleague", "analyst")]
    changed = api_for(owner).patch(
        f"/api/surveys/{survey.id}/collaborators/{colleague.id}/", {"role": "viewer"}, format="json"
    )
    assert changed.status_code == 200 and shares() == [(survey.id, "colleague", "viewer")]


@pytest.mark.parametrize(("role", "controls"), [(Role.VIEWER, False), (Role.EDITOR, True)])
def test_a_classroom_viewer_watches_without_the_controls(
    client, colleague, make_survey, role, controls
):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    survey.share_with(colleague, role)
    client.force_login(colleague)
    projector = client.get(f"/classroom/{survey.id}/")
    assert projector.status_code == 200
    assert f'action="/classroom/{survey.id}/simulate/"' not in projector.content.decode()
    remote = client.get(f"/classroom/{survey.id}/controls/")
    assert remote.status_code == (200 if controls else 404)
    if controls:
        assert f'action="/classroom/{survey.id}/simulate/"' in remote.content.decode()


def test_an_editor_builds_and_distributes(client, colleague, make_survey):
    survey = make_survey(status=Survey.Status.DRAFT)
    survey.share_with(colleague, Role.EDITOR)
    client.force_login(colleague)
    client.post(
        f"/surveys/{survey.id}/questions/",
        {"new-text": "Added by a colleague?", "new-preset": "classic"},
    )
    assert survey.questions.filter(text="Added by a colleague?").exists()
    client.post(f"/surveys/{survey.id}/status/", {"action": "open"})
    survey.refresh_from_db()
    assert survey.status == Survey.Status.OPEN


@pytest.mark.parametrize(
    ("named_as", "error"),
    [
        ("nobody", "No active account has this username or email."),
        ("", "This field is required."),
        ("owner", "The owner already has every right on this survey."),
    ],
)
def test_a_share_that_cannot_be_done_says_why_and_stores_nothing(
    logged_in, survey, named_as, error
):
    response = logged_in.post(f"/surveys/{survey.id}/share/", {"user": named_as, "role": "editor"})
    assert response.status_code == 400
    assert error in response.content.decode()
    assert shares() == []


def test_an_email_two_accounts_share_names_nobody(logged_in, survey, colleague, django_user_model):
    django_user_model.objects.create_user("twin", email="colleague@example.org")
    response = logged_in.post(
        f"/surveys/{survey.id}/share/", {"user": "colleague@example.org", "role": "viewer"}
    )
    assert response.status_code == 400
    assert shares() == []


def test_an_inactive_account_cannot_be_added(logged_in, survey, colleague):
    colleague.is_active = False
    colleague.save()
    response = logged_in.post(
        f"/surveys/{survey.id}/share/", {"user": "colleague", "role": "viewer"}
    )
    assert response.status_code == 400
    assert shares() == []


def test_a_role_that_is_not_viewer_or_editor_is_refused(logged_in, survey, colleague):
    response = logged_in.post(
        f"/surveys/{survey.id}/share/", {"user": "colleague", "role": "owner"}
    )
    assert response.status_code == 400
    assert shares() == []


def test_the_owner_changes_a_role_and_removes_access(client, logged_in, colleague, survey):
    survey.share_with(colleague, Role.EDITOR)
    logged_in.post(f"/surveys/{survey.id}/share/{colleague.id}/", {"role": "viewer"})
    assert shares() == [(survey.id, "colleague", "viewer")]
    bad = logged_in.post(f"/surveys/{survey.id}/share/{colleague.id}/", {"role": "admin"})
    assert bad.status_code == 400
    assert shares() == [(survey.id, "colleague", "viewer")]
    logged_in.post(f"/surveys/{survey.id}/share/{colleague.id}/", {"action": "remove"})
    assert shares() == []
    client.force_login(colleague)
    assert client.get(f"/surveys/{survey.id}/results/").status_code == 404


def test_the_owner_transfers_ownership_and_stays_on_as_editor(
    client, logged_in, owner, colleague, survey
):
    survey.share_with(colleague, Role.VIEWER)
    response = logged_in.post(
        f"/surveys/{survey.id}/transfer/", {"user": "colleague", "confirm": "on"}
    )
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.owner == colleague
    assert shares() == [(survey.id, "owner", "editor")]
    assert logged_in.get(f"/surveys/{survey.id}/edit/").status_code == 200
    assert logged_in.get(f"/surveys/{survey.id}/share/").status_code == 404
    assert logged_in.post(f"/surveys/{survey.id}/delete/").status_code == 404
    client.force_login(colleague)
    assert client.get(f"/surveys/{survey.id}/share/").status_code == 200


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"user": "colleague"}, "This field is required."),
        ({"user": "nobody", "confirm": "on"}, "No active account"),
        ({"user": "owner", "confirm": "on"}, "This account already owns the survey."),
    ],
)
def test_a_transfer_that_cannot_be_done_changes_nothing(
    logged_in, owner, colleague, survey, body, error
):
    response = logged_in.post(f"/surveys/{survey.id}/transfer/", body)
    assert response.status_code == 400
    assert error in response.content.decode()
    survey.refresh_from_db()
    assert survey.owner == owner
    assert shares() == []


# The API -----------------------------------------------------------------------------------


def test_the_api_lists_adds_changes_and_removes_collaborators(owner, colleague, survey):
    api = api_for(owner)
    url = f"/api/surveys/{survey.id}/collaborators/"
    added = api.post(url, {"user": "colleague@example.org", "role": "editor"}, format="json")
    assert added.status_code == 201
    assert_matches_schema(added, "/api/surveys/{survey_id}/collaborators/", "post")
    assert added.json() == {"user_id": colleague.id, "username": "colleague", "role": "editor"}
    listed = api.get(url)
    assert_matches_schema(listed, "/api/surveys/{survey_id}/collaborators/", "get")
    assert listed.json() == [added.json()]
    changed = api.patch(f"{url}{colleague.id}/", {"role": "viewer"}, format="json")
    assert_matches_schema(changed, "/api/surveys/{survey_id}/collaborators/{user_id}/", "patch")
    assert changed.json()["role"] == "viewer"
    assert api.delete(f"{url}{colleague.id}/").status_code == 204
    assert shares() == []
    assert api.delete(f"{url}{colleague.id}/").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user": "nobody", "role": "viewer"}, "user"),
        ({"user": "owner", "role": "viewer"}, "user"),
        ({"user": "colleague", "role": "owner"}, "role"),
        ({"user": "colleague"}, "role"),
        ({"role": "viewer"}, "user"),
    ],
)
def test_the_api_refuses_a_bad_share_and_stores_nothing(owner, colleague, survey, body, field):
    response = api_for(owner).post(f"/api/surveys/{survey.id}/collaborators/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert shares() == []


def test_the_api_refuses_a_bad_role_change(owner, colleague, survey):
    survey.share_with(colleague, Role.VIEWER)
    url = f"/api/surveys/{survey.id}/collaborators/{colleague.id}/"
    assert api_for(owner).patch(url, {"role": "owner"}, format="json").status_code == 400
    assert shares() == [(survey.id, "colleague", "viewer")]


def test_the_api_transfers_ownership(owner, colleague, survey):
    response = api_for(owner).post(
        f"/api/surveys/{survey.id}/transfer/", {"user": "colleague"}, format="json"
    )
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{id}/transfer/", "post")
    assert response.json()["role"] == "editor"
    survey.refresh_from_db()
    assert survey.owner == colleague
    assert api_for(colleague).get(f"/api/surveys/{survey.id}/").json()["role"] == "owner"


def test_the_api_refuses_a_transfer_to_nobody(owner, survey):
    response = api_for(owner).post(
        f"/api/surveys/{survey.id}/transfer/", {"user": "nobody"}, format="json"
    )
    assert response.status_code == 400
    survey.refresh_from_db()
    assert survey.owner == owner


def test_an_editor_edits_over_the_api_and_a_viewer_reads(colleague, make_survey, outsider):
    survey = make_survey(status=Survey.Status.DRAFT)
    survey.share_with(colleague, Role.EDITOR)
    survey.share_with(outsider, Role.VIEWER)
    edited = api_for(colleague).patch(
        f"/api/surveys/{survey.id}/", {"title": "Renamed"}, format="json"
    )
    assert edited.status_code == 200
    assert edited.json()["role"] == "editor"
    viewer = api_for(outsider)
    assert viewer.get(f"/api/surveys/{survey.id}/").json()["title"] == "Renamed"
    assert (
        viewer.patch(f"/api/surveys/{survey.id}/", {"title": "Mine"}, format="json").status_code
        == 404
    )
    survey.refresh_from_db()
    assert survey.title == "Renamed"


def test_sharing_twice_changes_the_role_without_a_second_row(owner, colleague, survey):
    api = api_for(owner)
    url = f"/api/surveys/{survey.id}/collaborators/"
    api.post(url, {"user": "colleague", "role": "viewer"}, format="json")
    api.post(url, {"user": "colleague", "role": "editor"}, format="json")
    assert shares() == [(survey.id, "colleague", "editor")]
