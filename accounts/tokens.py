"""Signed one-time links (email verification, invitations) and API tokens that expire.

An API token is a bearer credential: it dies after ``API_TOKEN_TTL`` seconds, when its
owner revokes it, and when the owner's password changes (whoever changed it: the password
page, a reset link, the admin or ``manage.py changepassword``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed


class OneTimeLinkTokens(PasswordResetTokenGenerator):
    """Like a password-reset link, but for one purpose only (a verification link cannot
    reset a password) and dead once used: the hash covers ``is_active`` and the password,
    which using the link changes. Expires after PASSWORD_RESET_TIMEOUT like Django's."""

    def __init__(self, purpose: str) -> None:
        self.key_salt = f"accounts.{purpose}"
        super().__init__()

    def _make_hash_value(self, user: AbstractBaseUser, timestamp: int) -> str:
        return f"{super()._make_hash_value(user, timestamp)}{user.is_active}"


verification_tokens = OneTimeLinkTokens("verify-email")
invitation_tokens = OneTimeLinkTokens("invitation")


def token_expiry(token: Token) -> datetime:
    return token.created + timedelta(seconds=settings.API_TOKEN_TTL)


def fresh_token(user: AbstractBaseUser) -> Token:
    """The user's API token, replaced by a new one if it has expired."""
    token, created = Token.objects.get_or_create(user=user)
    if not created and token_expiry(token) <= timezone.now():
        token.delete()
        token = Token.objects.create(user=user)
    return token


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing (and deleting) tokens past their lifetime."""

    def authenticate_credentials(self, key: str):
        user, token = super().authenticate_credentials(key)
        if token_expiry(token) <= timezone.now():
            token.delete()
            raise AuthenticationFailed("Token expired. Ask for a new one: POST /api/auth/token/.")
        return user, token


def revoke_api_tokens_on_password_change(sender, instance, update_fields=None, **kwargs) -> None:
    """pre_save on the user model: a new password revokes the user's API token."""
    if instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True)
    if stored.first() not in (None, instance.password):
        Token.objects.filter(user_id=instance.pk).delete()
