"""Respondent pages and the researcher's survey list."""

from __future__ import annotations

import functools
import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from survey import served_code
from survey.models import DesignChanged, Invite, InviteRejected, SubmissionIdTaken, Survey

BROWSER_CODE = "survey/rr.js"


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


def _respondent_page(request: HttpRequest, template: str, context: dict, status: int = 200):
    """Respondent pages never set cookies and never send a Referer onwards."""
    response = render(request, template, context, status=status)
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response


def _open_survey(request: HttpRequest, slug: str) -> tuple[Survey | None, HttpResponse | None]:
    """The survey, or the human page a respondent sees when it cannot be answered."""
    survey = Survey.objects.filter(slug=slug).first()
    if survey is None:
        return None, _respondent_page(request, "404.html", {"what": "survey"}, status=404)
    if not survey.is_accepting:
        return None, _respondent_page(request, "survey/closed.html", {"survey": survey}, 409)
    return survey, None


@require_GET
def respond(request: HttpRequest, slug: str) -> HttpResponse:
    survey, refusal = _open_survey(request, slug)
    if refusal:
        return refusal
    invite = request.GET.get("invite", "")
    invite_status = Invite.status(survey, invite) if survey.requires_invite else "valid"
    if invite_status != "valid":
        context = {"survey": survey, "invite_status": invite_status}
        return _respondent_page(request, "survey/invite_rejected.html", context, status=403)
    context = {
        "survey": survey,
        "questions": list(survey.questions.all()),
        "invite": invite,
        "paper_submission_id": uuid.uuid4(),
    }
    return _respondent_page(request, "survey/respond.html", context)


@csrf_exempt  # no cookies on respondent pages; a forged answer is no worse than a real one
@require_POST
def respond_paper(request: HttpRequest, slug: str) -> HttpResponse:
    """The no-JavaScript path: the respondent flips real coins and sends only the result."""
    survey, refusal = _open_survey(request, slug)
    if refusal:
        return refusal
    questions = list(survey.questions.all())
    values, missing = {}, []
    for question in questions:
        raw = request.POST.get(f"reported_{question.id}")
        if raw not in ("0", "1"):
            missing.append(question)
        else:
            values[question.id] = int(raw)
    try:
        submission_id = uuid.UUID(request.POST.get("submission_id", ""), version=4)
    except ValueError:
        submission_id = uuid.uuid4()
    context = {"survey": survey, "questions": questions, "invite": request.POST.get("invite", "")}
    # The form's version: the chance steps it showed. Without one (an older page), the
    # version read before the questions above, so an edit since then is caught.
    shown = request.POST.get("design_version", "")
    design = int(shown) if shown.isdigit() else survey.design_version
    if design != survey.design_version:
        return _design_changed_page(request, survey, context["invite"])
    if missing:
        context |= {"missing": missing, "paper_submission_id": submission_id}
        return _respondent_page(request, "survey/respond.html", context, status=400)
    try:
        record = functools.partial(
            survey.record_submission, invite_token=context["invite"], design_version=design
        )
        try:
            record(submission_id, values)
        except SubmissionIdTaken:  # a form tampered with: store the answers once anyway
            record(uuid.uuid4(), values)
    except DesignChanged:
        survey.refresh_from_db()
        return _design_changed_page(request, survey, context["invite"])
    except InviteRejected:
        context["invite_status"] = Invite.status(survey, context["invite"])
        return _respondent_page(request, "survey/invite_rejected.html", context, status=403)
    return _respondent_page(request, "survey/thanks.html", {"survey": survey})


def _design_changed_page(request: HttpRequest, survey: Survey, invite: str) -> HttpResponse:
    """The form again, with the questions as they are now and a fresh submission id."""
    context = {
        "survey": survey,
        "questions": list(survey.questions.all()),
        "invite": invite,
        "paper_submission_id": uuid.uuid4(),
        "design_changed": True,
    }
    return _respondent_page(request, "survey/respond.html", context, status=409)


@require_GET
def how_it_works(request: HttpRequest) -> HttpResponse:
    """The protocol, and the exact sampler the respondent's browser runs, byte for byte."""
    context = {
        "code": served_code.served_bytes(BROWSER_CODE, hashed=False).decode(),
        "code_url": served_code.unhashed_url(BROWSER_CODE),
        "code_sha256": served_code.sha256_hex(BROWSER_CODE, hashed=False),
        "code_integrity": served_code.integrity(BROWSER_CODE, hashed=False),
    }
    return _respondent_page(request, "survey/how_it_works.html", context)


@login_required
@require_GET
def survey_list(request: HttpRequest) -> HttpResponse:
    surveys = Survey.objects.owned_by(request.user).prefetch_related("questions")
    return render(request, "survey/list.html", {"surveys": surveys})
