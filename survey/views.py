"""Respondent pages and the researcher's survey list."""

from __future__ import annotations

import functools
import math
import re
import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET, require_POST

from responses import credentials
from responses.answer_sheet import AnswerSheet, InvalidAnswers
from responses.write import record_submission
from survey import invites, languages, ratelimit, served_code
from survey.listing import listed_surveys
from survey.models import (
    CredentialKey,
    DesignChanged,
    EmailedInvite,
    InviteRejected,
    SubmissionIdTaken,
    Survey,
)

BROWSER_CODE = "survey/rr.js"
# The two fair coins' numbers the privacy explanations quote (formatted in the page's
# language by the templates): ε = ln 3, totals over several questions, 50 % → 75 %.
CLASSIC_NUMBERS = {
    "epsilon": math.log(3),
    "two_questions": 2 * math.log(3),
    "three_questions": 3 * math.log(3),
    "ten_questions": 10 * math.log(3),
    "prior": 0.5,
    "posterior": 0.75,
    "after_no": 0.25,
}


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


def _respondent_page(request: HttpRequest, template: str, context: dict, status: int = 200):
    """Respondent pages never set cookies and never send a Referer onwards. They speak
    the survey's language, or without a survey the browser's."""
    survey = context.get("survey")
    language = languages.for_survey(survey, request) if survey else None
    if survey:
        questions = context.get("questions", [])
        survey.show_in(language, questions)
        languages.mark_originals(survey, language, questions)
        with translation.override(language):
            _with_conditions(questions)  # in the words shown
        context["language_links"] = languages.links(survey, request, language)
    response = languages.render_in(language, request, template, context, status=status)
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


def _page_context(survey: Survey, **extra) -> dict:
    """What the respondent page shows: the questions, and for an invite-only survey the
    public key that signs credentials (the same for everyone: its fingerprint is shown)
    and whether the invite was mailed (the page then says what the researcher learns)."""
    context = {
        "survey": survey,
        "questions": _with_conditions(list(survey.questions.all())),
        "paper_submission_id": uuid.uuid4(),
    }
    if survey.requires_invite:
        context["credential_key"] = CredentialKey.of(survey).public
    if invite := extra.get("invite"):
        context["emailed"] = EmailedInvite.sent_with(survey, invite)
    return context | extra


def _with_conditions(questions: list) -> list:
    """Each conditional question learns its condition in words, for the paper form
    (which cannot hide questions): the question it depends on and the answers that show it."""
    by_id = {q.id: q for q in questions}
    for q in questions:
        if q.show_if and (target := by_id.get(q.show_if["question"])):
            q.condition_target = target
            q.condition_answers = ", ".join(f"“{target.answer_label(v)}”" for v in q.show_if["in"])
    return questions


def _invite_rejected(request: HttpRequest, survey: Survey, status: str) -> HttpResponse:
    context = {"survey": survey, "invite_status": status}
    return _respondent_page(request, "survey/invite_rejected.html", context, status=403)


# Compressed (the page-weight budget): BREACH needs a secret the browser adds to the
# request by itself (a cookie), and respondent pages have none; an invite token is in the
# page only when the request itself carried it. Django's gzip also pads against it.
@gzip_page
@require_GET
def respond(request: HttpRequest, slug: str) -> HttpResponse:
    """The page never says whether an invite is used: only exchanging it (which uses it
    up) tells, so polling the page cannot learn when someone answered."""
    survey, refusal = _open_survey(request, slug)
    if refusal:
        return refusal
    invite = request.GET.get("invite", "") if survey.requires_invite else ""
    if survey.requires_invite and not invite:
        return _invite_rejected(request, survey, "missing")
    return _respondent_page(request, "survey/respond.html", _page_context(survey, invite=invite))


@csrf_exempt  # no cookies on respondent pages
@ratelimit.limit("credential")
@require_POST
def respond_paper_invite(request: HttpRequest, slug: str) -> HttpResponse:
    """No JavaScript, invite-only survey: use up the invite now and put a credential the
    server signs into the paper form. Not on GET: link checkers and previews fetch links."""
    survey, refusal = _open_survey(request, slug)
    if refusal:
        return refusal
    invite = request.POST.get("invite", "")
    if not _consented(survey, request.POST):  # nothing is exchanged before consent
        context = _page_context(survey, invite=invite, no_consent=True)
        return _respondent_page(request, "survey/respond.html", context, status=400)
    try:
        credential = credentials.issue(survey, invite)
    except InviteRejected:
        return _invite_rejected(request, survey, "rejected")
    context = _page_context(survey, credential=credential.as_json())
    return _respondent_page(request, "survey/respond.html", context)


def _posted_credential(post) -> invites.Credential | None:
    try:
        return invites.Credential.parse(
            {
                "message": post.get("credential_message"),
                "signature": post.get("credential_signature"),
            }
        )
    except invites.BadCredential:
        return None


@csrf_exempt  # no cookies on respondent pages; a forged answer is no worse than a real one
@require_POST
@ratelimit.limit("submit")  # counted with the JavaScript path's submissions
def respond_paper(request: HttpRequest, slug: str) -> HttpResponse:
    """The no-JavaScript path: the respondent randomizes with real coins, a die or slips
    and sends only the result. A randomized number cannot be randomized by hand, so it is
    left out (and counted as missing); every other question needs a possible result."""
    survey, refusal = _open_survey(request, slug)
    if refusal:
        return refusal
    questions = _with_conditions(list(survey.questions.all()))
    answers = []
    for q in questions:
        # Kept on the question so that a refused form comes back as it was filled in.
        q.posted = _posted_result(request.POST, q.id)
        if q.posted == SKIP:
            answers.append({"question": q.id, "value": None})
        elif re.fullmatch(r"-?\d{1,9}", q.posted):
            answers.append({"question": q.id, "value": int(q.posted)})
            # A design with arms: the set the respondent's own chance device picked.
            q.posted_arm = request.POST.get(f"arm_{q.id}", "").strip()[:2]
            if q.design.has_arms and q.posted_arm in ("0", "1"):
                answers[-1]["arm"] = int(q.posted_arm)
    sheet = AnswerSheet.for_slug(slug)
    try:
        values = sheet.check(answers, paper=True) if sheet else {}
        missing = [] if values else questions  # nothing at all answered is not a submission
    except InvalidAnswers as error:
        values, missing = {}, [q for q in questions if q.id in error.questions]
    for q in missing:
        q.is_missing = True
    try:
        submission_id = uuid.UUID(request.POST.get("submission_id", ""), version=4)
    except ValueError:
        submission_id = uuid.uuid4()
    credential = _posted_credential(request.POST)
    shown_credential = credential.as_json() if credential else None
    design = _shown_version(request.POST.get("design_version", ""), survey.design_version)
    if design != survey.design_version:
        return _design_changed_page(request, survey, shown_credential)
    no_consent = not _consented(survey, request.POST)
    if missing or no_consent:
        context = _page_context(
            survey, credential=shown_credential, missing=missing, no_consent=no_consent
        )
        context["consent_given"] = bool(survey.consent_text) and not no_consent
        context |= {"questions": questions, "paper_submission_id": submission_id}
        return _respondent_page(request, "survey/respond.html", context, status=400)
    try:
        record = functools.partial(
            record_submission, survey, credential=credential, design_version=design
        )
        try:
            record(submission_id, values)
        except SubmissionIdTaken:  # a form tampered with: store the answers once anyway
            record(uuid.uuid4(), values)
    except DesignChanged:
        survey.refresh_from_db()
        return _design_changed_page(request, survey, shown_credential)
    except InviteRejected:
        return _invite_rejected(request, survey, "rejected")
    return _respondent_page(request, "survey/thanks.html", {"survey": survey})


SKIP = "skip"  # the paper form's "Prefer not to answer"


def _consented(survey: Survey, post) -> bool:
    """A survey with a consent text stores nothing until the respondent ticks "I agree"."""
    return not survey.consent_text or post.get("consent") == "yes"


def _posted_result(post, question_id: int) -> str:
    """What the paper form gave for a question: its result, or SKIP (a number question's
    skip is a checkbox beside its field, and wins over the field)."""
    if post.get(f"skip_{question_id}") == SKIP:
        return SKIP
    return post.get(f"reported_{question_id}", "").strip()[:20]


def _shown_version(shown: str, current: int) -> int | None:
    """The design version the paper form showed: the chance steps it explained. Without
    one (an older page), the version read before its questions, so an edit since then is
    caught; anything but a plain number (``²``, ``٣``, 5 000 digits) matches no version."""
    if not shown:
        return current
    if shown.isascii() and shown.isdigit() and len(shown) <= 9:
        return int(shown)
    return None


def _design_changed_page(
    request: HttpRequest, survey: Survey, credential: dict | None
) -> HttpResponse:
    """The form again, with the questions as they are now and a fresh submission id."""
    context = _page_context(survey, credential=credential, design_changed=True)
    return _respondent_page(request, "survey/respond.html", context, status=409)


@require_GET
def how_it_works(request: HttpRequest) -> HttpResponse:
    """The protocol, and the exact sampler the respondent's browser runs, byte for byte."""
    context = {
        "code": served_code.served_bytes(BROWSER_CODE, hashed=False).decode(),
        "code_url": served_code.unhashed_url(BROWSER_CODE),
        "code_sha256": served_code.sha256_hex(BROWSER_CODE, hashed=False),
        "code_integrity": served_code.integrity(BROWSER_CODE, hashed=False),
        "classic": CLASSIC_NUMBERS,
    }
    return _respondent_page(request, "survey/how_it_works.html", context)


@login_required
@require_GET
def survey_list(request: HttpRequest) -> HttpResponse:
    """The surveys I own and those shared with me, each with my role."""
    search = request.GET.get("q", "").strip()
    rows = listed_surveys(Survey.objects.accessible_to(request.user), search)
    return render(request, "survey/list.html", {"rows": rows, "search": search})
