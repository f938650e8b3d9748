from __future__ import annotations

from django.urls import path

from estimator import views

app_name = "estimator"
urlpatterns = [
    path("surveys/<int:survey_id>/results/", views.dashboard, name="dashboard"),
]
