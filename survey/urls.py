from __future__ import annotations

from django.urls import path

from survey import audit, builder, distribution, teams, trash, views

app_name = "survey"
urlpatterns = [
    path("surveys/", views.survey_list, name="list"),
    path("surveys/trash/", trash.trash, name="trash"),
    path("s/<str:slug>/", views.respond, name="respond"),
    path("s/<str:slug>/paper/", views.respond_paper, name="respond_paper"),
    path("s/<str:slug>/paper/invite/", views.respond_paper_invite, name="respond_paper_invite"),
    path("how-it-works/", views.how_it_works, name="how_it_works"),
    path("surveys/new/", builder.survey_create, name="create"),
    path("surveys/<int:survey_id>/edit/", builder.builder, name="builder"),
    path("surveys/<int:survey_id>/status/", builder.survey_status, name="status"),
    path("surveys/<int:survey_id>/delete/", trash.survey_delete, name="delete"),
    path("surveys/<int:survey_id>/restore/", trash.restore, name="restore"),
    path("surveys/<int:survey_id>/share/", teams.share, name="share"),
    path(
        "surveys/<int:survey_id>/share/<int:user_id>/",
        teams.collaborator,
        name="collaborator",
    ),
    path("surveys/<int:survey_id>/transfer/", teams.transfer, name="transfer"),
    path("surveys/<int:survey_id>/audit/", audit.audit_log, name="audit"),
    path("surveys/<int:survey_id>/preview/", builder.question_preview, name="question_preview"),
    path("surveys/<int:survey_id>/questions/", builder.question_add, name="question_add"),
    path(
        "surveys/<int:survey_id>/questions/<int:question_id>/",
        builder.question_edit,
        name="question_edit",
    ),
    path(
        "surveys/<int:survey_id>/questions/<int:question_id>/move/",
        builder.question_move,
        name="question_move",
    ),
    path(
        "surveys/<int:survey_id>/questions/<int:question_id>/delete/",
        builder.question_delete,
        name="question_delete",
    ),
    path("surveys/<int:survey_id>/question-form/", builder.question_form, name="question_form"),
    path(
        "surveys/<int:survey_id>/questions/<int:question_id>/wording/",
        builder.question_reword,
        name="question_reword",
    ),
    path("surveys/<int:survey_id>/duplicate/", builder.survey_duplicate, name="duplicate"),
    path("surveys/<int:survey_id>/respondent-preview/", builder.survey_preview, name="preview"),
    path("surveys/<int:survey_id>/closing/", distribution.closing, name="closing"),
    path("surveys/<int:survey_id>/qr.<str:fmt>", distribution.qr_download, name="qr"),
    path("surveys/<int:survey_id>/distribute/", distribution.distribute, name="distribute"),
    path("surveys/<int:survey_id>/invites/", distribution.invites_create, name="invites"),
    path("surveys/<int:survey_id>/import/", distribution.responses_import, name="import"),
    path("surveys/<int:survey_id>/invites/email/", distribution.email_send, name="email_send"),
    path(
        "surveys/<int:survey_id>/invites/email/remind/",
        distribution.email_remind,
        name="email_remind",
    ),
    path(
        "surveys/<int:survey_id>/invites/email/delete/",
        distribution.email_forget,
        name="email_forget",
    ),
]
