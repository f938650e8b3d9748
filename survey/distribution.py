"""Distribution: public link, join code, QR code, one-time invites, offline answers.

Invite tokens exist in clear only in the response that creates them (the database keeps
hashes), so generating invites *is* the CSV download.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from responses.counts import stored_submissions
from responses.credentials import used_invites
from responses.imports import (
    ImportRejected,
    ImportTooLarge,
    LineError,
    import_responses,
    row_limit,
    too_large_message,
)
from survey import email_invites
from survey.builder import owned_survey
from survey.codebook import question_columns
from survey.forms import ClosingForm
from survey.models import Invite, Question, Survey
from survey.qr import qr_file, qr_svg
from survey.spreadsheets import csv_text

MAX_INVITES = 10_000


def invite_path(survey: Survey, token: str) -> str:
    return f"{survey.get_absolute_url()}?invite={token}"


def invite_counts(survey: Survey) -> dict[str, int]:
    total = survey.invites.count()
    used = used_invites(survey)
    return {"total": total, "used": used, "unused": total - used}


def invites_csv(request: HttpRequest, survey: Survey, tokens: list[str]) -> str:
    links = ([token, request.build_absolute_uri(invite_path(survey, token))] for token in tokens)
    return csv_text(links, ["invite", "link"])


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
        "max_import_mib": settings.MAX_IMPORT_BYTES / 2**20,
        "max_import_rows": f"{row_limit(survey.questions.count()):,}",
        "preview_link": reverse("survey:preview", args=[survey.id]),
        "closing_form": ClosingForm(instance=survey),
        "responses": stored_submissions(survey, simulated=False),
        "import_columns": import_columns(survey),
        "emailing": emailing_context(survey),
    }


def emailing_context(survey: Survey) -> dict | None:
    """The email invites panel: absent where the site cannot send mail."""
    if not settings.EMAIL_ENABLED:
        return None
    return {
        "kept": survey.emailed_invites.count(),
        "unused": email_invites.unused(survey).count(),
        "max": email_invites.MAX_ADDRESSES,
        "refusal": email_invites.refusal(survey),
    }


def import_columns(survey: Survey) -> list[tuple[str, str, str]]:
    """Per column of an import: its name, its question and what a cell holds, as this
    survey's designs emit it (the import checks exactly that)."""
    described = []
    for column, question in question_columns(survey):
        outputs = question.design.output_description()
        if question.kind == Question.Kind.BINARY:
            holds = "1 = yes, 0 = no (the reported answer)"
        elif question.kind == Question.Kind.CHOICE:
            holds = ", ".join(f"{i} = {text}" for i, text in enumerate(question.options))
            holds += " (the reported option)"
        elif outputs["type"] == "options":  # a number sent as one randomized bit
            holds = "1 or 0 (the reported bit: 1 is likelier the higher the number)"
        else:
            holds = (
                f"a whole number from {outputs['min_report']} to {outputs['max_report']} "
                "(the reported number, noise included)"
            )
        if question.design.split_ballot:
            holds += "; on the direct ballot (arm 1), the answer as given"
        described.append((column, question.text, holds))
        if question.design.has_arms:
            holds = "0 or 1: the arm the device drew (empty when the report is empty)"
            described.append((f"{column}_arm", question.text, holds))
    return described


@login_required
@require_GET
def distribute(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    survey.close_if_due()
    return render(request, "survey/distribute.html", distribute_context(request, survey))


@login_required
@require_POST
def closing(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Set or clear the close date and the response quota."""
    survey = owned_survey(request, survey_id)
    form = ClosingForm(request.POST, instance=survey)
    if not form.is_valid():
        context = distribute_context(request, survey) | {"closing_form": form}
        return render(request, "survey/distribute.html", context, status=400)
    form.save()
    if survey.close_if_due():
        messages.warning(request, f"Survey closed: {survey.closing_reason()}.")
    else:
        messages.success(request, "Closing rules saved.")
    return redirect("survey:distribute", survey.id)


QR_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


@login_required
@require_GET
def qr_download(request: HttpRequest, survey_id: int, fmt: str) -> HttpResponse:
    """The public link's QR code as a file, for slides and posters."""
    survey = owned_survey(request, survey_id)
    if fmt not in QR_TYPES:
        raise Http404
    link = request.build_absolute_uri(survey.get_absolute_url())
    response = HttpResponse(qr_file(link, fmt), content_type=QR_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.id}-qr.{fmt}"'
    return response


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


def import_too_large(request: HttpRequest) -> str | None:
    """Why an import request is refused before its body is read (a declared length over
    ``MAX_IMPORT_BYTES``), or None; and otherwise make its upload stream to a temporary
    file, never into memory."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > settings.MAX_IMPORT_BYTES:
        return too_large_message(settings.MAX_IMPORT_BYTES)
    request.upload_handlers = [TemporaryFileUploadHandler(request)]
    return None


@login_required
@csrf_exempt  # checked below, once the upload handlers are set (Django's documented way)
@require_POST
def responses_import(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Answers randomized offline (dice, coins in an interview) as a CSV: all rows or none."""
    survey = owned_survey(request, survey_id)
    if error := import_too_large(request):
        return import_failed(request, survey, [LineError(0, error)], status=413)
    return _import_checked(request, survey)


@csrf_protect
def _import_checked(request: HttpRequest, survey: Survey) -> HttpResponse:
    upload = request.FILES.get("file")
    try:
        if upload is None:
            raise ImportRejected([LineError(1, "choose a CSV file to import")])
        imported = import_responses(survey, upload)
    except ImportRejected as rejected:
        return import_failed(request, survey, rejected.errors, status=400)
    except ImportTooLarge as error:
        return import_failed(request, survey, [LineError(0, str(error))], status=413)
    messages.success(request, f"Imported {imported} offline responses.")
    return redirect("survey:distribute", survey.id)


def import_failed(
    request: HttpRequest, survey: Survey, errors: list[LineError], status: int
) -> HttpResponse:
    context = distribute_context(request, survey) | {"import_errors": errors}
    return render(request, "survey/distribute.html", context, status=status)


FORGET_UNCONFIRMED = (
    "Nothing was deleted: tick “Yes, delete them” first (the addresses cannot be restored)."
)


def needs_email() -> None:
    """Mailing exists only where the site can send mail (EMAIL_URL, or DEBUG)."""
    if not settings.EMAIL_ENABLED:
        raise Http404("Email is not configured on this site.")


def email_failed(request: HttpRequest, survey: Survey, errors: list[str]) -> HttpResponse:
    context = distribute_context(request, survey) | {"email_errors": errors}
    return render(request, "survey/distribute.html", context, status=400)


@login_required
@require_POST
def email_send(request: HttpRequest, survey_id: int) -> HttpResponse:
    """A new invite mailed to each pasted or uploaded address: all of them or, for any
    bad line, none (nothing sent, nothing stored)."""
    survey = owned_survey(request, survey_id)
    needs_email()
    if refused := email_invites.refusal(survey):
        return email_failed(request, survey, [refused])
    pasted, upload = request.POST.get("addresses", ""), request.FILES.get("file")
    try:
        if pasted.strip() and upload:
            raise email_invites.AddressesRejected(["Paste addresses or choose a file, not both."])
        lines = email_invites.csv_lines(upload) if upload else email_invites.pasted_lines(pasted)
        addresses = email_invites.checked_addresses(lines)
    except email_invites.AddressesRejected as rejected:
        return email_failed(request, survey, rejected.errors)
    try:
        sent = email_invites.send_invites(request, survey, addresses)
    except IntegrityError:  # the same address sent from two windows at once
        return email_failed(request, survey, ["Another sending ran at the same time: send again."])
    except OSError as error:  # smtplib's errors included
        return email_failed(
            request,
            survey,
            [
                f"The mail server refused ({error}). No invite was kept: any mail that "
                "went out holds a link that does not work. Send again."
            ],
        )
    note = f"Mailed {sent.sent} invite{'s' if sent.sent != 1 else ''}."
    if sent.already_invited:
        note += f" {sent.already_invited} already had one and were not mailed again."
    messages.success(request, note)
    return redirect("survey:distribute", survey.id)


@login_required
@require_POST
def email_remind(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The link again to every mailed address whose invite is unused."""
    survey = owned_survey(request, survey_id)
    needs_email()
    if refused := email_invites.refusal(survey):
        return email_failed(request, survey, [refused])
    try:
        reminded = email_invites.remind(request, survey)
    except OSError as error:
        return email_failed(request, survey, [f"The mail server refused ({error})."])
    messages.success(request, f"Reminded {reminded}: every mailed invite not yet used.")
    return redirect("survey:distribute", survey.id)


@login_required
@require_POST
def email_forget(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Delete the mailed addresses, once the owner has ticked that they mean it (a slip
    of the finger cannot be undone); their invites keep working, no reminder can follow."""
    survey = owned_survey(request, survey_id)
    if request.POST.get("confirm") != "yes":
        context = distribute_context(request, survey) | {"forget_error": FORGET_UNCONFIRMED}
        return render(request, "survey/distribute.html", context, status=400)
    deleted = email_invites.forget(request, survey)
    messages.success(request, f"Deleted {deleted} address{'es' if deleted != 1 else ''}.")
    return redirect("survey:distribute", survey.id)
