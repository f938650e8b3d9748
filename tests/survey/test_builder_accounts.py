"""Accounts: log in, change the password; accounts themselves are made in the admin."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_a_researcher_changes_their_password(client, owner):
    client.force_login(owner)
    data = {
        "old_password": "owner-password-1",
        "new_password1": "a-new-long-passphrase",
        "new_password2": "a-new-long-passphrase",
    }
    response = client.post("/accounts/password/", data)
    assert response["Location"] == "/accounts/password/done/"
    owner.refresh_from_db()
    assert owner.check_password("a-new-long-passphrase")


def test_a_wrong_old_password_changes_nothing(client, owner):
    client.force_login(owner)
    data = {"old_password": "wrong", "new_password1": "x-y-z-1234", "new_password2": "x-y-z-1234"}
    response = client.post("/accounts/password/", data)
    assert response.status_code == 200
    assert "Your old password was entered incorrectly" in response.content.decode()
    owner.refresh_from_db()
    assert owner.check_password("owner-password-1")


def test_an_admin_sees_surveys_of_every_owner(admin_client, make_survey):
    make_survey()
    page = admin_client.get("/admin/survey/survey/").content.decode()
    assert "Exam honesty" in page
