from __future__ import annotations

from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
