from __future__ import annotations

from django.urls import path

from survey import views

app_name = "survey"
urlpatterns = [
    path("surveys/", views.survey_list, name="list"),
    path("s/<str:slug>/", views.respond, name="respond"),
    path("s/<str:slug>/paper/", views.respond_paper, name="respond_paper"),
    path("how-it-works/", views.how_it_works, name="how_it_works"),
]
