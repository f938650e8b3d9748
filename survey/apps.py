from __future__ import annotations

from django.apps import AppConfig


class SurveyConfig(AppConfig):
    name = "survey"
    default_auto_field = "django.db.models.BigAutoField"
