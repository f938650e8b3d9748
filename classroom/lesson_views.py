"""The lessons as live activities: the instructor starts one from the classroom page, the
projector shows the live result and its explanation (no controls), a remote (the
instructor's private link, also on a phone) steps through it, and students take part on
their phones. Every polled fragment answers 304 while nothing changed."""

from __future__ import annotations

import numpy as np
from django import forms
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from classroom import lessons
from classroom.models import DELTA_CHOICES, EPSILON_CHOICES, Action, Lesson
from classroom.views import (
    POLL_SECONDS,
    STATUS_FRESH_SECONDS,
    Shortcut,
    _cacheable,
    _etag,
    _join_context,
    _not_modified,
    _student_page,
)
from estimator import lessons as maths
from survey import languages
from survey.qr import qr_svg
from survey.templatetags.privacy import number

STUDENT_POLL_SECONDS = 3


class EpsilonForm(forms.Form):
    """ε as a slider over a few telling values (0.05 … 4), one notch each."""

    notch = forms.IntegerField(
        min_value=0,
        max_value=len(EPSILON_CHOICES) - 1,
        label="Privacy parameter ε",
        widget=forms.NumberInput(attrs={"type": "range", "step": 1, "list": "epsilon-notches"}),
    )

    @property
    def epsilon(self) -> float:
        return EPSILON_CHOICES[self.cleaned_data["notch"]]


class DeltaForm(forms.Form):
    """δ as a slider from 0.1 down to 10⁻¹⁰, one notch each."""

    notch = forms.IntegerField(
        min_value=0,
        max_value=len(DELTA_CHOICES) - 1,
        label="Failure probability δ",
        widget=forms.NumberInput(attrs={"type": "range", "step": 1, "list": "delta-notches"}),
    )

    @property
    def delta(self) -> float:
        return DELTA_CHOICES[self.cleaned_data["notch"]]


class GeneralizeForm(forms.Form):
    postcode_digits = forms.IntegerField(min_value=0, max_value=4, label="Postcode digits kept")
    year_width = forms.TypedChoiceField(
        choices=[(1, "exact"), (5, "5 years"), (10, "10 years"), (20, "20 years"), (0, "hidden")],
        coerce=int,
        label="Birth year",
    )
    keep_sex = forms.BooleanField(required=False, label="Keep sex")
    suppress_below = forms.IntegerField(
        min_value=1, max_value=10, label="Suppress groups smaller than"
    )


class PracticesForm(forms.Form):
    practices = forms.MultipleChoiceField(
        choices=list(lessons.PRACTICES.items()),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="ONS practices applied",
    )


def _lesson(request: HttpRequest, lesson_id: int) -> Lesson:
    """The requester's own lesson; anyone else's is a 404."""
    return get_object_or_404(Lesson.objects.owned_by(request.user), pk=lesson_id)


def _remote_lesson(token: str) -> Lesson:
    return get_object_or_404(Lesson, remote_token=token)


def _partial(lesson: Lesson, part: str) -> str:
    return f"classroom/lessons/_{lesson.kind}.html#{part}"


def _base_context(lesson: Lesson) -> dict:
    return {"lesson": lesson, "poll_seconds": POLL_SECONDS} | lessons.lesson_context(lesson)


@login_required
@require_POST
def start(request: HttpRequest, kind: str) -> HttpResponse:
    """A new lesson of this kind with a fresh seed; the instructor lands on its remote."""
    if kind not in Lesson.Kind.values:
        raise Http404("No such lesson.")
    lesson = Lesson.objects.create(owner=request.user, kind=kind)
    return redirect("classroom:remote", lesson.remote_token)


@login_required
@require_GET
def control(request: HttpRequest, lesson_id: int) -> HttpResponse:
    return redirect("classroom:remote", _lesson(request, lesson_id).remote_token)


@login_required
@require_GET
def projector(request: HttpRequest, lesson_id: int) -> HttpResponse:
    lesson = _lesson(request, lesson_id)
    context = (
        _base_context(lesson)
        | _join_context(request, lesson)
        | {"part": _partial(lesson, "projector"), "shortcuts": _shortcuts(lesson)}
    )
    return render(request, "classroom/lesson_projector.html", context)


def _shortcuts(lesson: Lesson) -> list[Shortcut]:
    def url(action: str) -> str:
        return reverse("classroom:lesson_key", args=[lesson.id, action])

    return [
        Shortcut("R", "r", "reveal/hide", url("toggle-reveal")),
        Shortcut("L", "l", "lock/unlock", url("toggle-lock")),
        Shortcut("→", "ArrowRight PageDown", "next step", url("next")),
        Shortcut("←", "ArrowLeft PageUp", "previous step", url("previous")),
        Shortcut("N", "n", "new round", url("new-round")),
    ]


@login_required
@require_GET
def projector_live(request: HttpRequest, lesson_id: int) -> HttpResponse:
    """The projector's live fragment; 304 while the lesson and its answers are unchanged."""
    lesson = _lesson(request, lesson_id)
    etag = _etag("lesson-projector", *lesson.activity(), lessons.reports_in(lesson))
    if unchanged := _not_modified(request, etag):
        return unchanged
    context = _base_context(lesson) | {"part": _partial(lesson, "projector")}
    return _cacheable(render(request, "classroom/lesson_projector.html#live", context), etag)


def _notch(epsilon: float) -> int:
    return min(range(len(EPSILON_CHOICES)), key=lambda i: abs(EPSILON_CHOICES[i] - epsilon))


def _remote_page(request: HttpRequest, lesson: Lesson, status: int = 200, **forms_) -> HttpResponse:
    remote_url = request.build_absolute_uri(reverse("classroom:remote", args=[lesson.remote_token]))
    context = (
        _base_context(lesson)
        | {
            "epsilon_form": forms_.get("epsilon_form")
            or EpsilonForm(initial={"notch": _notch(lesson.epsilon)}),
            "epsilon_notches": EPSILON_CHOICES,
            "delta_form": forms_.get("delta_form")
            or DeltaForm(
                initial={"notch": DELTA_CHOICES.index(lesson.delta)}
                if lesson.delta in DELTA_CHOICES
                else None
            ),
            "delta_notches": [f"{d:g}" for d in DELTA_CHOICES],
            "generalize_form": forms_.get("generalize_form")
            or GeneralizeForm(
                initial={
                    "postcode_digits": lesson.postcode_digits,
                    "year_width": lesson.year_width,
                    "keep_sex": lesson.keep_sex,
                    "suppress_below": lesson.suppress_below,
                }
            ),
            "practices_form": forms_.get("practices_form")
            or PracticesForm(initial={"practices": lesson.practices}),
            "remote_url": remote_url,
            "remote_qr": mark_safe(
                qr_svg(remote_url, title="QR code of this remote", scalable=True)
            ),
            "projector_url": reverse("classroom:lesson_projector", args=[lesson.id]),
            "part": _partial(lesson, "remote"),
        }
        | _remote_live_context(lesson)
        | _join_context(request, lesson)
    )
    response = render(request, "classroom/lesson_remote.html", context, status=status)
    response["Referrer-Policy"] = "same-origin"  # the remote's link is its key: keep it here
    return response


def _remote_live_context(lesson: Lesson) -> dict:
    return {
        "status_part": _partial(lesson, "remote_status"),
        "sent_count": lesson.current_actions().exclude(kind=Action.Kind.PICK).count(),
    }


@require_GET
def remote(request: HttpRequest, token: str) -> HttpResponse:
    """The instructor's controls, by private link: works on a phone without logging in."""
    return _remote_page(request, _remote_lesson(token))


@require_GET
def remote_live(request: HttpRequest, token: str) -> HttpResponse:
    """The remote's live state (step, lock, reveal, answers, budget), polled like the
    projector so a second device or the students' answers show at once; 304 while unchanged."""
    lesson = _remote_lesson(token)
    etag = _etag("lesson-remote", *lesson.activity(), lessons.reports_in(lesson))
    if unchanged := _not_modified(request, etag):
        return unchanged
    context = _base_context(lesson) | _remote_live_context(lesson)
    response = render(request, "classroom/lesson_remote.html#live", context)
    response["Referrer-Policy"] = "same-origin"
    return _cacheable(response, etag)


def _set_epsilon(request: HttpRequest, lesson: Lesson) -> HttpResponse | None:
    form = EpsilonForm(request.POST)
    if not form.is_valid():
        return _remote_page(request, lesson, status=400, epsilon_form=form)
    lesson.go(epsilon=form.epsilon)
    return None


def _set_delta(request: HttpRequest, lesson: Lesson) -> HttpResponse | None:
    form = DeltaForm(request.POST)
    if not form.is_valid():
        return _remote_page(request, lesson, status=400, delta_form=form)
    lesson.go(delta=form.delta)
    return None


def _generalize(request: HttpRequest, lesson: Lesson) -> HttpResponse | None:
    form = GeneralizeForm(request.POST)
    if not form.is_valid():
        return _remote_page(request, lesson, status=400, generalize_form=form)
    lesson.go(**form.cleaned_data)
    return None


def _practices(request: HttpRequest, lesson: Lesson) -> HttpResponse | None:
    form = PracticesForm(request.POST)
    if not form.is_valid():
        return _remote_page(request, lesson, status=400, practices_form=form)
    lesson.go(practices=form.cleaned_data["practices"])
    return None


def _pick(request: HttpRequest, lesson: Lesson) -> None:
    lessons.pick(lesson)


# The lessons whose remote can stand in for phones: 20 noisy secrets, 5 holdout queries.
SIMULATIONS = {
    Lesson.Kind.LOCAL: lessons.simulate_phones,
    Lesson.Kind.HOLDOUT: lessons.simulate_queries,
}


def _simulate_phones(request: HttpRequest, lesson: Lesson) -> HttpResponse | None:
    if lesson.kind not in SIMULATIONS:
        return HttpResponse(
            "Only the local vs central and the reusable holdout lessons simulate phones.",
            status=400,
            content_type="text/plain",
        )
    SIMULATIONS[lesson.kind](lesson)
    return None


ACTIONS = {
    "toggle-lock": lambda request, lesson: lesson.go(is_locked=not lesson.is_locked),
    "toggle-reveal": lambda request, lesson: lesson.go(revealed=not lesson.revealed),
    "lock": lambda request, lesson: lesson.go(is_locked=True),
    "unlock": lambda request, lesson: lesson.go(is_locked=False),
    "reveal": lambda request, lesson: lesson.go(revealed=True),
    "hide": lambda request, lesson: lesson.go(revealed=False),
    "next": lambda request, lesson: lesson.move(1),
    "previous": lambda request, lesson: lesson.move(-1),
    "new-round": lambda request, lesson: lesson.new_round(),
    "new-data": lambda request, lesson: (lesson.go(seed=lesson.seed + 1), lesson.new_round()),
    "epsilon": _set_epsilon,
    "delta": _set_delta,
    "generalize": _generalize,
    "practices": _practices,
    "pick": _pick,
    "simulate-phones": _simulate_phones,
}


@require_POST
def remote_action(request: HttpRequest, token: str, action: str) -> HttpResponse:
    lesson = _remote_lesson(token)
    if action not in ACTIONS:
        return HttpResponse(f"Unknown action {action!r}.", status=404, content_type="text/plain")
    if (response := ACTIONS[action](request, lesson)) is not None and isinstance(
        response, HttpResponse
    ):
        return response
    return redirect("classroom:remote", lesson.remote_token)


KEY_ACTIONS = ("toggle-reveal", "toggle-lock", "next", "previous", "new-round")


@login_required
@require_POST
def key(request: HttpRequest, lesson_id: int, action: str) -> HttpResponse:
    """A projector key for the owner (the projector never carries the remote's link)."""
    lesson = _lesson(request, lesson_id)
    if action not in KEY_ACTIONS:
        return HttpResponse(
            f"Unknown key action {action!r}.", status=404, content_type="text/plain"
        )
    ACTIONS[action](request, lesson)
    return HttpResponse(status=204)


class StudentForm(forms.Form):
    choice = forms.CharField(max_length=100, required=False)


def _student_context(lesson: Lesson) -> dict:
    return _base_context(lesson) | {
        "part": _partial(lesson, "student"),
        "live_url": reverse("classroom:lesson_student_live", args=[lesson.slug]),
        "student_poll_seconds": STUDENT_POLL_SECONDS,
    }


def _record(lesson: Lesson, choice: str) -> tuple[dict, str | None, int]:
    """Store what a student sent, or say why not (and store nothing)."""
    if lesson.is_locked:
        return {}, gettext("Answering is locked by your instructor: nothing was sent."), 409
    base = {"round": lesson.round, "step": lesson.step}
    if lesson.kind == Lesson.Kind.LAPLACE:
        budget = maths.Budget(total=lesson.budget, spent=lesson.spent())
        if not budget.allows(lesson.epsilon):
            refusal = gettext(
                "The database refuses: the class has spent its budget ε = %(budget)s "
                "(every answer costs ε; composition)."
            ) % {"budget": number(lesson.budget)}
            return {}, refusal, 409
        true = maths.hospital(lesson.seed).total
        value = maths.noisy_count(true, lesson.epsilon, np.random.default_rng())
        lesson.actions.create(kind=Action.Kind.QUERY, value=value, epsilon=lesson.epsilon, **base)
        n = len(maths.hospital(lesson.seed).patients)
        return {"my_answer": value, "my_rounded": maths.post_process(value, n)}, None, 200
    if lesson.kind == Lesson.Kind.GAUSSIAN:
        laplace_answer, gaussian_answer = lessons.ask_both(lesson)
        return {"my_laplace": laplace_answer, "my_gaussian": gaussian_answer}, None, 200
    if lesson.kind == Lesson.Kind.HOLDOUT:
        query = lessons.ask_holdout(lesson)
        if query is None:
            message = gettext("The analysis has asked all its questions of the holdout.")
            return {}, message, 409
        return {"my_holdout": query.value, "my_features": int(query.choice)}, None, 200
    if lesson.kind == Lesson.Kind.LOCAL:
        report = lessons.send_local(lesson)
        return {"my_secret": int(report.choice), "my_report": report.value}, None, 200
    context = lessons.lesson_context(lesson)
    if choice not in context["choices"]:
        return {}, gettext("Choose one of the options."), 400
    kind = Action.Kind.VOTE if lesson.kind == Lesson.Kind.EXPONENTIAL else Action.Kind.GUESS
    lesson.actions.create(kind=kind, choice=choice, **base)
    return {"my_choice": choice}, None, 200


# Students are anonymous and cookie-free (like every respondent page, no Referer, so
# browsers send "Origin: null"): there is no session a forged request could ride on.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def student(request: HttpRequest, slug: str) -> HttpResponse:
    """A student's phone: the current step's prompt and, where it teaches something, a
    guess, a noisy query or a vote. Public by the lesson's unguessable link."""
    lesson = get_object_or_404(Lesson, slug=slug)
    language = languages.from_request(request)
    sent, error, status = {}, None, 200
    if request.method == "POST":
        form = StudentForm(request.POST)
        choice = form.cleaned_data["choice"] if form.is_valid() else ""
        with translation.override(language):
            sent, error, status = _record(lesson, choice)
    context = _student_context(lesson) | sent | {"error": error}
    template = "classroom/lesson_student.html"
    return _student_page(languages.render_in(language, request, template, context, status))


@require_GET
def student_live(request: HttpRequest, slug: str) -> HttpResponse:
    """The phones' polled fragment: the same for every phone, built at most once per few
    seconds per lesson state, 304 while unchanged."""
    lesson = get_object_or_404(Lesson, slug=slug)
    language = languages.from_request(request)
    key = "classroom:lesson:" + _etag(*lesson.state(), language)
    cached = cache.get(key)
    if cached is None:
        with translation.override(language):
            html = render_to_string("classroom/lesson_student.html#live", _student_context(lesson))
        cached = (_etag(html), html)
        cache.set(key, cached, STATUS_FRESH_SECONDS)
    etag, html = cached
    if unchanged := _not_modified(request, etag):
        return _student_page(unchanged)
    return _student_page(languages.in_language(_cacheable(HttpResponse(html), etag), language))
