from __future__ import annotations

from django.apps import AppConfig


class ResponsesConfig(AppConfig):
    name = "responses"
    verbose_name = "Responses"

    def ready(self) -> None:
        from responses import checks  # noqa: F401 (registers the database checks)
