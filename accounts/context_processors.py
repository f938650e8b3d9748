from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def accounts(request: HttpRequest) -> dict[str, object]:
    """Which account pages exist here, for the links to them (log-in page, navigation)."""
    return {
        "email_enabled": settings.EMAIL_ENABLED,
        "signup_enabled": settings.SIGNUP_ENABLED and settings.EMAIL_ENABLED,
        "link_hours": settings.PASSWORD_RESET_TIMEOUT // 3600,
    }
