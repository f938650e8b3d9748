from __future__ import annotations

from django.apps import AppConfig


class ClassroomConfig(AppConfig):
    """Live lectures: the randomized-response demo and the lessons students join by phone."""

    name = "classroom"
    default_auto_field = "django.db.models.BigAutoField"
