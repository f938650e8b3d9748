from __future__ import annotations

from django.urls import path, re_path

from classroom import exports, lesson_views
from classroom import views as classroom
from survey import ratelimit

# Join codes are short: a per-address limit stops anyone walking through them.
join = ratelimit.limit("join", methods=("GET",))(classroom.join)

app_name = "classroom"
urlpatterns = [
    path("j/", join, name="join_form"),
    re_path(r"^j/(?P<code>[^/]+)/?$", join, name="join"),
    path("classroom/", classroom.index, name="index"),
    path("classroom/new/", classroom.new_demo, name="new"),
    path("classroom/sessions/new/", classroom.new_session, name="session_new"),
    path("classroom/sessions/<int:session_id>/add/", classroom.session_add, name="session_add"),
    path(
        "classroom/sessions/<int:session_id>/<slug:direction>/",
        classroom.session_move,
        name="session_move",
    ),
    path("classroom/explain/", classroom.explain, name="explain"),
    path("classroom/status/<str:slug>/", classroom.student_status, name="student_status"),
    path("classroom/<int:survey_id>/", classroom.presenter, name="presenter"),
    path("classroom/<int:survey_id>/join/", classroom.join_screen, name="join_screen"),
    path("classroom/<int:survey_id>/controls/", classroom.controls, name="controls"),
    path("classroom/<int:survey_id>/poll/", classroom.poll, name="poll"),
    path("classroom/<int:survey_id>/results.csv", exports.results_csv, name="results_csv"),
    path("classroom/<int:survey_id>/chart.svg", exports.chart_svg, name="chart_svg"),
    path("classroom/<int:survey_id>/simulate/", classroom.simulate, name="simulate"),
    path("classroom/lessons/start/<slug:kind>/", lesson_views.start, name="lesson_start"),
    path("classroom/lessons/<int:lesson_id>/", lesson_views.projector, name="lesson_projector"),
    path(
        "classroom/lessons/<int:lesson_id>/live/",
        lesson_views.projector_live,
        name="lesson_projector_live",
    ),
    path("classroom/lessons/<int:lesson_id>/control/", lesson_views.control, name="lesson_control"),
    path(
        "classroom/lessons/<int:lesson_id>/key/<slug:action>/",
        lesson_views.key,
        name="lesson_key",
    ),
    path("classroom/remote/<str:token>/", lesson_views.remote, name="remote"),
    path("classroom/remote/<str:token>/live/", lesson_views.remote_live, name="remote_live"),
    path(
        "classroom/remote/<str:token>/<slug:action>/",
        lesson_views.remote_action,
        name="remote_action",
    ),
    path("l/<str:slug>/", lesson_views.student, name="lesson_student"),
    path("l/<str:slug>/live/", lesson_views.student_live, name="lesson_student_live"),
    path("classroom/<int:survey_id>/<slug:action>/", classroom.control, name="control"),
]
