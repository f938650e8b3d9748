"""API tokens expire, can be revoked (endpoint and page), and die with a password change."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
CREDENTIALS = {"username": "owner", "password": "owner-password-1"}


@pytest.fixture
def api():
    return APIClient()


def obtain(api) -> str:
    response = api.post("/api/auth/token/", CREDENTIALS, format="json")
    assert response.status_code == 200, response.content
    return response.json()["token"]


def works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/surveys/").status_code == 200


def test_a_token_says_when_it_expires_and_works_until_then(api, owner, settings):
    settings.API_TOKEN_TTL = 3600
    response = api.post("/api/auth/token/", CREDENTIALS, format="json")
    assert_matches_schema(response, "/api/auth/token/", "post")
    token = Token.objects.get(user=owner)
    assert response.json()["expires"] == (token.created + timedelta(hours=1)).isoformat().replace(
        "+00:00", "Z"
    )
    assert works(token.key)
    assert obtain(api) == token.key  # asking again gives the same, still valid token


def test_an_expired_token_is_refused_and_replaced_on_request(api, owner, settings):
    settings.API_TOKEN_TTL = 3600
    key = obtain(api)
    Token.objects.filter(key=key).update(created=Token.objects.get().created - timedelta(hours=2))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get("/api/surveys/")
    assert response.status_code == 401
    assert response.json()["detail"].startswith("Token expired")
    assert not Token.objects.exists()
    fresh = obtain(api)
    assert fresh != key and works(fresh)


def test_delete_revokes_the_token(api, owner):
    key = obtain(api)
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = api.delete("/api/auth/token/")
    assert response.status_code == 204
    assert not works(key)
    assert api.delete("/api/auth/token/").status_code == 401
    assert not Token.objects.exists()


def test_delete_without_credentials_is_401(api, owner):
    obtain(api)
    response = api.delete("/api/auth/token/")
    assert response.status_code == 401
    assert Token.objects.count() == 1


def test_the_schema_documents_obtaining_and_revoking(api, owner):
    api.force_authenticate(owner)
    schema = api.get("/api/schema/?format=json").json()
    operations = schema["paths"]["/api/auth/token/"]
    assert {"post", "delete"} <= set(operations)
    assert operations["post"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Token"
    }
    assert set(schema["components"]["schemas"]["Token"]["properties"]) == {"token", "expires"}
    assert "204" in operations["delete"]["responses"]


def test_changing_the_password_on_the_site_revokes_the_token(client, api, owner):
    key = obtain(api)
    client.force_login(owner)
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "owner-password-1",
            "new_password1": "another-password-9",
            "new_password2": "another-password-9",
        },
    )
    assert response.status_code == 302
    assert not works(key)


def test_any_password_change_revokes_the_token_and_nothing_else_does(api, owner):
    key = obtain(api)
    owner.first_name = "Ada"
    owner.save()
    owner.save(update_fields=["last_login"])
    assert works(key)
    owner.set_password("another-password-9")
    owner.save()
    assert not works(key)


def test_the_changepassword_command_revokes_the_token(api, owner, monkeypatch):
    key = obtain(api)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "another-password-9")
    call_command("changepassword", "owner", stdout=io.StringIO())
    assert not works(key)


def test_the_token_page_creates_shows_once_and_revokes(client, owner, settings):
    settings.API_TOKEN_TTL = 30 * 86400
    client.force_login(owner)
    assert b"You have no token." in client.get("/accounts/api-token/").content
    created = client.post("/accounts/api-token/", {"action": "create"})
    key = Token.objects.get(user=owner).key
    assert key in created.content.decode()
    assert "expires after 30 days" in created.content.decode()
    shown_again = client.get("/accounts/api-token/").content.decode()
    assert key not in shown_again and "You have a token" in shown_again
    replaced = client.post("/accounts/api-token/", {"action": "create"})
    assert replaced.status_code == 200 and not works(key)
    revoked = client.post("/accounts/api-token/", {"action": "revoke"}, follow=True)
    assert b"Your API token is revoked." in revoked.content
    assert not Token.objects.exists()


def test_the_token_page_needs_an_account(client):
    response = client.get("/accounts/api-token/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
