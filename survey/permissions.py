"""Who may do what with a survey: the one place pages and the API ask.

Owner, editor (build and distribute), analyst (live results and row-level exports),
viewer (results released in batches, never a row). Anyone without the
role an action needs gets a 404, exactly as if the survey did not exist: never a 403
that would confirm it does. Surveys in the trash are found only by their owner's trash
and restore.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from survey.models import Role, Survey

# Row-level data (one row per respondent: the responses CSV, the codebook, SPSS and Stata
# files) needs an analyst: a viewer could single out a small group from its rows. The one
# place that says who may download it.
ROWS_ROLE = Role.ANALYST
ROW_LEVEL_ACTIONS = ("export_csv", "export_sav", "export_dta", "codebook")

# The role each API action of SurveyViewSet needs; any other action needs a viewer to
# read and an editor to change anything.
API_ROLES = {
    "partial_update": Role.EDITOR,
    "open": Role.EDITOR,
    "close": Role.EDITOR,
    "import_responses": Role.EDITOR,
    "invites": Role.EDITOR,
    "email_invites": Role.EDITOR,
    "email_remind": Role.EDITOR,
    "destroy": Role.OWNER,
    "restore": Role.OWNER,
    "trash": Role.OWNER,
    "collaborators": Role.OWNER,
    "collaborator": Role.OWNER,
    "transfer": Role.OWNER,
    "audit": Role.OWNER,
    **dict.fromkeys(ROW_LEVEL_ACTIONS, ROWS_ROLE),
}
IN_TRASH_ACTIONS = {"restore", "trash"}
READ_METHODS = ("GET", "HEAD", "OPTIONS")


def can_download_rows(survey: Survey) -> bool:
    """Whether the requester (``survey.role``, as annotated by ``accessible_to``) may
    download row-level exports; a view serving one uses ``survey_for(…, ROWS_ROLE)``."""
    return Role(getattr(survey, "role", Role.VIEWER)).includes(ROWS_ROLE)


def sees_live_results(survey: Survey) -> bool:
    """Analysts, editors and owners see every answer as it arrives; viewers see results
    released in batches (:mod:`analysis.release`)."""
    return Role(getattr(survey, "role", Role.VIEWER)).includes(Role.ANALYST)


def survey_for(request: HttpRequest, survey_id: int, role: Role = Role.VIEWER) -> Survey:
    """The survey if the requester holds at least ``role`` on it, else a 404."""
    return get_object_or_404(Survey.objects.accessible_to(request.user, role), pk=survey_id)


def trashed_survey_for(request: HttpRequest, survey_id: int) -> Survey:
    """One of the requester's own surveys in the trash, else a 404."""
    surveys = Survey.with_trashed.in_trash().accessible_to(request.user, Role.OWNER)
    return get_object_or_404(surveys, pk=survey_id)


def api_role(action: str | None, method: str) -> Role:
    """The role a SurveyViewSet action needs."""
    if action in API_ROLES:
        return API_ROLES[action]
    return Role.VIEWER if method in READ_METHODS else Role.EDITOR


def api_surveys(request, action: str | None):
    """The queryset an API action may reach: a survey outside it is a 404."""
    role = api_role(action, request.method)
    manager = Survey.with_trashed.in_trash() if action in IN_TRASH_ACTIONS else Survey.objects
    return manager.accessible_to(request.user, role)
