"""Deleting without losing anything by accident: a confirmation that says how many
answers a survey holds, then the trash, restorable whole until ``purge_trash`` deletes
it for good ``settings.TRASH_RETENTION_DAYS`` later. Owner only; a 404 for anyone else."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from survey.models import Role, Survey
from survey.permissions import survey_for, trashed_survey_for


@login_required
@require_http_methods(["GET", "POST"])
def survey_delete(request: HttpRequest, survey_id: int) -> HttpResponse:
    """GET: what deleting would move to the trash. POST: move it there."""
    survey = survey_for(request, survey_id, Role.OWNER)
    if request.method == "GET":
        counted = Survey.objects.filter(pk=survey.pk).with_response_counts().get()
        context = {
            "survey": survey,
            "n_responses": counted.n_responses,
            "n_simulated": counted.n_simulated,
            "n_invites": survey.invites.count(),
            "retention_days": settings.TRASH_RETENTION_DAYS,
            "active": "delete",
        }
        return render(request, "survey/delete_confirm.html", context)
    survey.move_to_trash()
    messages.success(
        request,
        f"Moved “{survey.title}” to the trash: restore it from there within "
        f"{settings.TRASH_RETENTION_DAYS} days.",
    )
    return redirect("survey:list")


@login_required
@require_GET
def trash(request: HttpRequest) -> HttpResponse:
    surveys = Survey.with_trashed.in_trash().accessible_to(request.user, Role.OWNER)
    context = {
        "surveys": surveys.with_response_counts().order_by("-trashed_at"),
        "retention_days": settings.TRASH_RETENTION_DAYS,
    }
    return render(request, "survey/trash.html", context)


@login_required
@require_POST
def restore(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = trashed_survey_for(request, survey_id)
    survey.restore()
    messages.success(request, f"Restored “{survey.title}” with all its answers.")
    return redirect("survey:builder", survey.id)
