from __future__ import annotations

from django.urls import path

from analysis import views

app_name = "analysis"
urlpatterns = [
    path("surveys/<int:survey_id>/results/", views.dashboard, name="dashboard"),
    path("surveys/<int:survey_id>/results/breakdown/", views.breakdown_view, name="breakdown"),
    path("surveys/<int:survey_id>/results/crosstab/", views.crosstab_view, name="crosstab"),
    path("surveys/<int:survey_id>/results/model/", views.model_view, name="model"),
]
