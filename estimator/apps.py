from __future__ import annotations

from django.apps import AppConfig


class EstimatorConfig(AppConfig):
    name = "estimator"
