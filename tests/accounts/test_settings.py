"""Settings that fail safe: email by URL, sign-up off by default in production."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import parse_email_url


def test_smtp_with_starttls_and_an_encoded_password():
    assert parse_email_url("smtp+tls://mailer%40example.org:p%40ss%3Aword@mail.example.org") == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "mail.example.org",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "mailer@example.org",
        "EMAIL_HOST_PASSWORD": "p@ss:word",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
    }


@pytest.mark.parametrize(
    ("url", "port", "tls", "ssl"),
    [
        ("smtps://mail.example.org", 465, False, True),
        ("smtp://localhost", 25, False, False),
        ("smtp://localhost:1025", 1025, False, False),
    ],
)
def test_ports_and_encryption_follow_the_scheme(url, port, tls, ssl):
    parsed = parse_email_url(url)
    assert (parsed["EMAIL_PORT"], parsed["EMAIL_USE_TLS"], parsed["EMAIL_USE_SSL"]) == (
        port,
        tls,
        ssl,
    )


def test_console_prints_mail():
    backend = parse_email_url("console://")["EMAIL_BACKEND"]
    assert backend == "django.core.mail.backends.console.EmailBackend"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mail.example.org", "EMAIL_URL must start with one of smtp://"),
        ("imap://mail.example.org", "EMAIL_URL must start with one of"),
        ("smtp://mail.example.org:port", "EMAIL_URL has a port that is not a number"),
    ],
)
def test_a_malformed_email_url_stops_the_app(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_email_url(url)


def test_production_defaults_take_no_sign_ups_and_send_no_mail(settings):
    """The test suite runs with production's settings (DEBUG off, no EMAIL_URL)."""
    assert settings.SIGNUP_ENABLED is False
    assert settings.EMAIL_ENABLED is False
    assert len(settings.AUTH_PASSWORD_VALIDATORS) == 4
