"""Accounts: sign-up with email verification, invitations, password reset, and links that
work once and expire."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from accounts.tokens import invitation_tokens, verification_tokens

pytestmark = pytest.mark.django_db
User = get_user_model()
NEW_PASSWORD = "correct-horse-battery-7"


@pytest.fixture
def mail_on(settings):
    """A site that can send mail (EMAIL_URL set) and takes sign-ups (SIGNUP_ENABLED)."""
    settings.EMAIL_ENABLED = True
    settings.SIGNUP_ENABLED = True
    settings.PASSWORD_RESET_TIMEOUT = 3600


def link_in(message) -> str:
    (url,) = re.findall(r"http://testserver(/\S+)", message.body)
    return url


def later(monkeypatch, tokens, seconds: int) -> None:
    """Make ``tokens`` check links ``seconds`` from now."""
    moment = timezone.now().replace(tzinfo=None) + timedelta(seconds=seconds)
    monkeypatch.setattr(tokens, "_now", lambda: moment)


def sign_up(client, address: str = "127.0.0.1", **fields):
    data = {
        "username": "ada",
        "email": "ada@example.org",
        "password1": NEW_PASSWORD,
        "password2": NEW_PASSWORD,
    }
    return client.post("/accounts/signup/", data | fields, REMOTE_ADDR=address)


def test_sign_up_is_off_unless_enabled(client, settings):
    settings.EMAIL_ENABLED = True
    settings.SIGNUP_ENABLED = False
    assert client.get("/accounts/signup/").status_code == 404
    assert sign_up(client).status_code == 404
    assert not User.objects.exists()
    assert (
        b"Ask this site's administrator for an invitation" in client.get("/accounts/login/").content
    )


def test_without_mail_there_is_no_sign_up_and_no_reset(client, settings):
    settings.EMAIL_ENABLED = False
    settings.SIGNUP_ENABLED = True
    for path in ("/accounts/signup/", "/accounts/password/reset/", "/accounts/invite/"):
        assert client.get(path).status_code == 404, path
    page = client.get("/accounts/login/").content.decode()
    assert "/accounts/password/reset/" not in page and "/accounts/signup/" not in page


def test_the_login_page_links_sign_up_and_password_reset(client, mail_on):
    page = client.get("/accounts/login/").content.decode()
    assert 'href="/accounts/password/reset/"' in page
    assert 'href="/accounts/signup/"' in page


def test_sign_up_then_verify_then_log_in(client, mail_on):
    response = sign_up(client)
    assert response.status_code == 200
    assert b"We sent a link to ada@example.org" in response.content
    user = User.objects.get(username="ada")
    assert not user.is_active
    assert not client.login(username="ada", password=NEW_PASSWORD)
    (message,) = mail.outbox
    assert message.to == ["ada@example.org"]
    link = link_in(message)
    # Opening the link (as a mail scanner would) activates nothing; the button does.
    assert b"Activate my account" in client.get(link).content
    assert not User.objects.get(username="ada").is_active
    response = client.post(link)
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"
    assert User.objects.get(username="ada").is_active
    assert client.login(username="ada", password=NEW_PASSWORD)
    # Used once, dead after.
    client.logout()
    assert client.get(link).status_code == 400
    assert client.post(link).status_code == 400


def test_a_verification_link_expires(client, mail_on, monkeypatch):
    sign_up(client)
    link = link_in(mail.outbox[0])
    later(monkeypatch, verification_tokens, 3601)
    response = client.post(link)
    assert response.status_code == 400
    assert b"This link no longer works" in response.content
    assert not User.objects.get(username="ada").is_active


def test_a_tampered_verification_link_does_nothing(client, mail_on, django_user_model):
    sign_up(client)
    other = django_user_model.objects.create_user("bob", is_active=False)
    link = link_in(mail.outbox[0])
    uid, token = link.strip("/").split("/")[-2:]
    for path in (f"/accounts/verify/{uid}/x{token}/", "/accounts/verify/%%%/abc/"):
        assert client.post(path).status_code == 400
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    stolen = f"/accounts/verify/{urlsafe_base64_encode(force_bytes(other.pk))}/{token}/"
    assert client.post(stolen).status_code == 400
    assert not User.objects.filter(is_active=True).exists()


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("73950284617", "This password is entirely numeric."),
        ("password123", "This password is too common."),
        ("short7", "This password is too short."),
        ("ada@example.org1", "The password is too similar to the"),
    ],
)
def test_weak_passwords_are_refused_and_nothing_is_stored(client, mail_on, password, message):
    response = sign_up(client, password1=password, password2=password)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not User.objects.exists()
    assert not mail.outbox


def test_sign_up_does_not_say_whether_an_email_or_username_is_taken(client, mail_on, owner):
    """Someone probing who has an account gets the same page for a taken address, a
    taken username and a new one; only the address's owner is told, by mail."""
    owner.email = "ada@example.org"
    owner.save()
    pages = [
        sign_up(client, email="ADA@example.org", username="newcomer"),
        sign_up(client, email="grace@example.org", username=owner.username.upper()),
    ]
    assert User.objects.count() == 1  # nothing made
    pages.append(sign_up(client, email="fresh@example.org", username="fresh"))
    assert User.objects.count() == 2
    shown = [
        p.content.decode().replace(address, "ADDRESS")
        for p, address in zip(
            pages, ("ADA@example.org", "grace@example.org", "fresh@example.org"), strict=True
        )
    ]
    assert [p.status_code for p in pages] == [200, 200, 200]
    assert shown[0] == shown[1] == shown[2]
    assert "already" not in shown[0]
    taken_email, taken_name, new = mail.outbox
    assert taken_email.to == ["ADA@example.org"] and "An account already uses" in taken_email.body
    assert "/accounts/password/reset/" in taken_email.body
    assert taken_name.to == ["grace@example.org"] and "is already taken" in taken_name.body
    assert new.to == ["fresh@example.org"] and "To activate it" in new.body


def test_password_reset_by_email(client, mail_on, owner):
    owner.email = "owner@example.org"
    owner.save()
    response = client.post("/accounts/password/reset/", {"email": "owner@example.org"})
    assert response["Location"] == "/accounts/password/reset/sent/"
    (message,) = mail.outbox
    link = link_in(message)
    form = client.get(link, follow=True)
    assert b"Choose a new password" in form.content
    set_password = form.redirect_chain[-1][0]
    numeric = client.post(set_password, {"new_password1": "8" * 12, "new_password2": "8" * 12})
    assert "This password is entirely numeric." in numeric.content.decode()
    done = client.post(set_password, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done["Location"] == "/accounts/password/reset/complete/"
    assert client.login(username="owner", password=NEW_PASSWORD)
    client.logout()
    assert b"This link no longer works" in client.get(link, follow=True).content


def test_a_password_reset_link_expires(client, mail_on, owner, monkeypatch):
    from django.contrib.auth.tokens import default_token_generator

    owner.email = "owner@example.org"
    owner.save()
    client.post("/accounts/password/reset/", {"email": "owner@example.org"})
    link = link_in(mail.outbox[0])
    later(monkeypatch, default_token_generator, 3601)
    assert b"This link no longer works" in client.get(link, follow=True).content
    assert client.login(username="owner", password="owner-password-1")


def test_a_reset_for_an_unknown_address_looks_the_same_and_sends_nothing(client, mail_on):
    response = client.post("/accounts/password/reset/", {"email": "nobody@example.org"})
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert not mail.outbox


def test_resets_and_sign_ups_are_throttled(client, mail_on, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMITS = {"login": (2, 300)}
    for _ in range(2):
        client.post(
            "/accounts/password/reset/", {"email": "x@example.org"}, REMOTE_ADDR="192.0.2.4"
        )
    assert sign_up(client, address="192.0.2.4").status_code == 429
    assert not User.objects.exists()


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("boss", password="boss-password-1", is_staff=True)


def test_staff_invite_by_email_and_the_invitee_chooses_a_password(client, mail_on, staff):
    client.force_login(staff)
    response = client.post(
        "/accounts/invite/", {"username": "grace", "email": "grace@example.org"}, follow=True
    )
    assert b"Invitation sent to grace@example.org" in response.content
    invitee = User.objects.get(username="grace")
    assert not invitee.is_active and not invitee.has_usable_password()
    (message,) = mail.outbox
    assert message.to == ["grace@example.org"]
    client.logout()
    form = client.get(link_in(message), follow=True)
    assert b"Choose your password" in form.content
    set_password = form.redirect_chain[-1][0]
    response = client.post(
        set_password, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert response["Location"] == "/accounts/login/"
    assert User.objects.get(username="grace").is_active
    assert client.login(username="grace", password=NEW_PASSWORD)
    client.logout()
    assert b"This link no longer works" in client.get(link_in(message), follow=True).content


def test_an_invitation_expires(client, mail_on, staff, monkeypatch):
    client.force_login(staff)
    client.post("/accounts/invite/", {"username": "grace", "email": "grace@example.org"})
    client.logout()
    later(monkeypatch, invitation_tokens, 3601)
    assert b"This link no longer works" in client.get(link_in(mail.outbox[0]), follow=True).content
    assert not User.objects.get(username="grace").is_active


def test_links_serve_one_purpose(client, mail_on, staff):
    """An invitation link is no password-reset link, and a verification link no invitation."""
    client.force_login(staff)
    client.post("/accounts/invite/", {"username": "grace", "email": "grace@example.org"})
    client.logout()
    uid, token = link_in(mail.outbox[0]).strip("/").split("/")[-2:]
    for path in (f"/accounts/password/reset/{uid}/{token}/", f"/accounts/verify/{uid}/{token}/"):
        assert b"This link no longer works" in client.get(path, follow=True).content
    assert not User.objects.get(username="grace").is_active


def test_only_staff_invite(client, mail_on, owner):
    client.force_login(owner)
    response = client.post("/accounts/invite/", {"username": "eve", "email": "eve@example.org"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not User.objects.filter(username="eve").exists()
    assert not mail.outbox


@pytest.mark.parametrize(
    "path",
    ["/accounts/login/", "/accounts/signup/", "/accounts/password/reset/", "/accounts/invite/"],
)
def test_account_pages_work_under_the_strict_csp(client, mail_on, staff, path):
    from tests.test_security import InlineCode

    if path == "/accounts/invite/":
        client.force_login(staff)
    response = client.get(path)
    assert response.status_code == 200
    assert "script-src 'self'" in response["Content-Security-Policy"]
    parser = InlineCode()
    parser.feed(response.content.decode())
    assert parser.found == []
    assert response["Cache-Control"] == "private, no-store"
