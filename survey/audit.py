"""The owner's audit log page: who exported, analysed, shared or edited the survey, to
the hour, newest first."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from survey.models import Role
from survey.permissions import survey_for

PAGE_SIZE = 100


@login_required
@require_GET
def audit_log(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = survey_for(request, survey_id, Role.OWNER)
    entries = Paginator(survey.audit_entries.all(), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"survey": survey, "entries": entries, "active": "audit"}
    return render(request, "survey/audit.html", context)
