from __future__ import annotations

from django.urls import path, re_path

from survey import classroom, ratelimit

# Join codes are short: a per-address limit stops anyone walking through them.
join = ratelimit.limit("join", methods=("GET",))(classroom.join)

app_name = "classroom"
urlpatterns = [
    path("j/", join, name="join_form"),
    re_path(r"^j/(?P<code>[^/]+)/?$", join, name="join"),
    path("classroom/new/", classroom.new_demo, name="new"),
    path("classroom/explain/", classroom.explain, name="explain"),
    path("classroom/status/<str:slug>/", classroom.student_status, name="student_status"),
    path("classroom/<int:survey_id>/", classroom.presenter, name="presenter"),
    path("classroom/<int:survey_id>/join/", classroom.join_screen, name="join_screen"),
    path("classroom/<int:survey_id>/poll/", classroom.poll, name="poll"),
    path("classroom/<int:survey_id>/simulate/", classroom.simulate, name="simulate"),
    path("classroom/<int:survey_id>/<slug:action>/", classroom.control, name="control"),
]
