"""Distribution: public link, join code, QR code, one-time invites, offline answers.

Invite tokens exist in clear only in the response that creates them (the database keeps
hashes), so generating invites *is* the CSV download.
"""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from survey import exports
from survey.builder import owned_survey
from survey.models import Invite, Survey
from survey.qr import qr_svg

MAX_INVITES = 10_000


def invite_path(survey: Survey, token: str) -> str:
    return f"{survey.get_absolute_url()}?invite={token}"


def invite_counts(survey: Survey) -> dict[str, int]:
    total = survey.invites.count()
    used = survey.invites.filter(used=True).count()
    return {"total": total, "used": used, "unused": total - used}


def invites_csv(request: HttpRequest, survey: Survey, tokens: list[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["invite", "link"])
    for token in tokens:
        writer.writerow([token, request.build_absolute_uri(invite_path(survey, token))])
    return out.getvalue()


def parse_invite_count(raw: str | None) -> tuple[int | None, str | None]:
    try:
        n = int(raw or "")
    except ValueError:
        return None, "Enter how many invites to create, as a whole number."
    if not 1 <= n <= MAX_INVITES:
        return None, f"Create between 1 and {MAX_INVITES:,} invites at a time."
    return n, None


def distribute_context(request: HttpRequest, survey: Survey) -> dict:
    link = request.build_absolute_uri(survey.get_absolute_url())
    join = request.build_absolute_uri(reverse("classroom:join", args=[survey.join_code]))
    return {
        "survey": survey,
        "link": link,
        "join_link": join,
        "join_form_link": request.build_absolute_uri(reverse("classroom:join_form")),
        "qr": qr_svg(link, title=f"QR code for {survey.title}"),
        "invites": invite_counts(survey),
        "max_invites": MAX_INVITES,
    }


@login_required
@require_GET
def distribute(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    return render(request, "survey/distribute.html", distribute_context(request, survey))


@login_required
@require_POST
def invites_create(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Create N invites and answer with their CSV at once: the only time they exist."""
    survey = owned_survey(request, survey_id)
    n, error = parse_invite_count(request.POST.get("n"))
    if error:
        context = distribute_context(request, survey) | {"invite_error": error}
        return render(request, "survey/distribute.html", context, status=400)
    tokens = Invite.create_batch(survey, n)
    response = HttpResponse(
        invites_csv(request, survey, tokens), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.id}-invites.csv"'
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def responses_import(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Answers randomized offline (dice, coins in an interview) as a CSV: all rows or none."""
    survey = owned_survey(request, survey_id)
    upload = request.FILES.get("file")
    try:
        if upload is None:
            raise exports.ImportRejected([exports.LineError(1, "choose a CSV file to import")])
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise exports.ImportRejected(
                [exports.LineError(1, "the file is not UTF-8 text (save it as CSV UTF-8)")]
            ) from None
        imported = exports.import_responses(survey, text)
    except exports.ImportRejected as rejected:
        context = distribute_context(request, survey) | {"import_errors": rejected.errors}
        return render(request, "survey/distribute.html", context, status=400)
    messages.success(request, f"Imported {imported} offline responses.")
    return redirect("survey:distribute", survey.id)
