from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Researcher accounts: sign-up, email verification, invitations, API tokens."""

    name = "accounts"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import pre_save

        from accounts.tokens import revoke_api_tokens_on_password_change

        pre_save.connect(
            revoke_api_tokens_on_password_change,
            sender=get_user_model(),
            dispatch_uid="accounts.revoke_api_tokens_on_password_change",
        )
