"""Classroom mode: a live randomized-response demo an instructor runs in a lecture.

The instructor's pages (projector join screen, presenter view, its controls) are
owner-only; students answer on the ordinary respondent page, which polls a tiny public
status fragment that shows the class result only once the instructor reveals it.
Both polled endpoints answer 304 while nothing has changed: the presenter's after one
aggregate query over the round's tallies, the phones' from a fragment shared through the cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from estimator.analysis import QuestionResult, round_counts, survey_results
from estimator.randomized_response import BinaryDesign, BinaryEstimate, ForcedResponse
from survey.models import JOIN_CODE_ALPHABET, JOIN_CODE_LENGTH, Survey
from survey.qr import qr_svg

DEFAULT_QUESTION = "Have you ever cheated on an exam?"
POLL_SECONDS = 2
STATUS_FRESH_SECONDS = 3
MAX_SIMULATED = 10_000
# The CI bar's drawing area inside its SVG viewBox (0 0 1000 …).
BAR_LEFT, BAR_WIDTH = 40, 920
CLASSIC = ForcedResponse(p_truth=0.5, p_yes=0.5)


class DemoForm(forms.Form):
    question = forms.CharField(max_length=500, required=False, strip=True)


class SimulateForm(forms.Form):
    n = forms.IntegerField(min_value=1, max_value=MAX_SIMULATED, initial=100, label="Students")
    true_rate = forms.FloatField(min_value=0, max_value=100, initial=30, label="True rate (%)")


@dataclass(frozen=True)
class LiveQuestion:
    """One question on the projector: its estimate, and where to draw it on the bar."""

    result: QuestionResult
    true_rate: float | None

    @property
    def n_simulated(self) -> int:
        return self.result.n_simulated

    @property
    def estimate(self) -> BinaryEstimate:
        return self.result.estimate

    @property
    def interval(self) -> tuple[float, float] | None:
        return self.result.interval

    @property
    def one_over_root_n(self) -> float | None:
        return self.estimate.n**-0.5 if self.estimate.n else None

    @staticmethod
    def x(value: float) -> float:
        return round(BAR_LEFT + BAR_WIDTH * value, 1)

    @property
    def bar(self) -> dict[str, float] | None:
        if not self.interval:
            return None
        low, high = self.interval
        return {
            "x": self.x(low),
            "width": max(round(BAR_WIDTH * (high - low), 1), 2),
            "estimate_x": self.x(self.estimate.estimate),
        }

    @property
    def true_x(self) -> float | None:
        return None if self.true_rate is None else self.x(self.true_rate)


PRIORS = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9)


def explain_context(design: BinaryDesign) -> dict:
    """The adversary's posterior after each report, for a few priors (the no-JS table;
    the slider computes the same formula in the browser)."""
    rows = [
        {
            "prior": p,
            "after_yes": design.posterior_yes(p, 1),
            "after_no": design.posterior_yes(p, 0),
        }
        for p in PRIORS
    ]
    return {"design": design, "posterior_rows": rows}


TICKS = [{"x": LiveQuestion.x(v / 100), "label": f"{v} %"} for v in (0, 25, 50, 75, 100)]


def _classroom(request: HttpRequest, survey_id: int) -> Survey:
    """The requester's own classroom survey; anyone else's is a 404."""
    surveys = Survey.objects.owned_by(request.user).filter(mode=Survey.Mode.CLASSROOM)
    return get_object_or_404(surveys, pk=survey_id)


def _etag(*parts) -> str:
    return '"' + hashlib.sha256(repr(parts).encode()).hexdigest()[:20] + '"'


def _not_modified(request: HttpRequest, etag: str) -> HttpResponse | None:
    if etag in request.headers.get("If-None-Match", ""):
        response = HttpResponseNotModified()
        response["ETag"] = etag
        return response
    return None


def _cacheable(response: HttpResponse, etag: str) -> HttpResponse:
    """The browser keeps the fragment and revalidates it on every poll (ETag → 304)."""
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    return response


def _state(survey: Survey) -> tuple:
    return (survey.slug, survey.current_round, survey.status, survey.is_locked)


def _true_rate(params) -> float | None:
    """The simulated true rate to mark on the bar (``?true_rate=30`` in percent)."""
    try:
        value = float(params.get("true_rate", ""))
    except ValueError:
        return None
    return value / 100 if 0 <= value <= 100 else None


def _live_questions(survey: Survey, true_rate: float | None) -> list[LiveQuestion]:
    return [LiveQuestion(r, true_rate) for r in survey_results(survey).questions]


def _join_url(request: HttpRequest, survey: Survey) -> str:
    return request.build_absolute_uri(reverse("classroom:join", args=[survey.join_code]))


def _join_context(request: HttpRequest, survey: Survey) -> dict:
    url = _join_url(request, survey)
    return {
        "join_url": url,
        "join_url_short": url.split("://", 1)[-1],
        "qr": mark_safe(qr_svg(url, title=f"QR code for {url}", scalable=True)),
    }


def _student_page(response: HttpResponse) -> HttpResponse:
    """Like every respondent page: no Referer sent onwards."""
    response["Referrer-Policy"] = "no-referrer"
    return response


def normalize_code(raw: str) -> str:
    return "".join(raw.split()).replace("-", "").upper()


@require_GET
def join(request: HttpRequest, code: str = "") -> HttpResponse:
    """``/j/CODE`` (and the join form) lead to the survey's respondent page."""
    code = normalize_code(code or request.GET.get("code", ""))
    if not code:
        return _student_page(render(request, "classroom/join.html", {}))
    survey = Survey.objects.filter(join_code=code).first()
    if survey is None:
        error = f"No session has the code {code}. Check it on the projector and try again."
        if len(code) != JOIN_CODE_LENGTH or set(code) - set(JOIN_CODE_ALPHABET):
            error = "A join code has 6 letters and digits, as shown on the projector."
        context = {"code": code, "error": error}
        return _student_page(render(request, "classroom/join.html", context, status=404))
    return _student_page(redirect(survey))


@login_required
@require_http_methods(["GET", "POST"])
def new_demo(request: HttpRequest) -> HttpResponse:
    """One click: an open classroom survey with the default (or the instructor's) question."""
    form = DemoForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        question = form.cleaned_data["question"] or DEFAULT_QUESTION
        survey = Survey.objects.create_classroom(request.user, question)
        return redirect("classroom:join_screen", survey.id)
    context = {"form": form, "default_question": DEFAULT_QUESTION}
    return render(request, "classroom/new.html", context, status=400 if form.errors else 200)


@login_required
@require_GET
def join_screen(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = _classroom(request, survey_id)
    context = {"survey": survey} | _join_context(request, survey)
    return render(request, "classroom/join_screen.html", context)


def _keep_true_rate(true_rate: float | None) -> str:
    """The query string that keeps the simulated true rate marked across requests."""
    return f"?true_rate={true_rate * 100:g}" if true_rate is not None else ""


def _presenter_context(survey: Survey, true_rate: float | None) -> dict:
    return {
        "survey": survey,
        "live": _live_questions(survey, true_rate),
        "ticks": TICKS,
        "poll_url": reverse("classroom:poll", args=[survey.id]) + _keep_true_rate(true_rate),
        "keep_query": _keep_true_rate(true_rate),
        "poll_seconds": POLL_SECONDS,
    }


def _presenter_page(
    request: HttpRequest, survey: Survey, true_rate: float | None, form: SimulateForm, status=200
) -> HttpResponse:
    context = _presenter_context(survey, true_rate) | _join_context(request, survey)
    context |= explain_context((survey.designs() or [CLASSIC])[0]) | {"simulate_form": form}
    return render(request, "classroom/presenter.html", context, status=status)


@login_required
@require_GET
def presenter(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = _classroom(request, survey_id)
    return _presenter_page(request, survey, _true_rate(request.GET), SimulateForm())


@login_required
@require_GET
def poll(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The presenter's live fragment; 304 while the round's counts and state are unchanged."""
    survey = _classroom(request, survey_id)
    true_rate = _true_rate(request.GET)
    # The same aggregate the estimates use, cheap enough to run before computing them.
    counts, simulated = round_counts(survey, survey.current_round)
    tallies = sorted((qid, sorted(c.items()), simulated[qid]) for qid, c in counts.items())
    etag = _etag("presenter", *_state(survey), survey.results_revealed, true_rate, tallies)
    if unchanged := _not_modified(request, etag):
        return unchanged
    context = _presenter_context(survey, true_rate)
    return _cacheable(render(request, "classroom/presenter.html#live", context), etag)


CONTROLS = {
    "reveal": lambda survey: survey.reveal(True),
    "hide": lambda survey: survey.reveal(False),
    "lock": lambda survey: survey.lock(True),
    "unlock": lambda survey: survey.lock(False),
    "new-round": Survey.new_round,
    "end": Survey.close,
    "reopen": Survey.open,
}


@login_required
@require_POST
def control(request: HttpRequest, survey_id: int, action: str) -> HttpResponse:
    """Reveal/hide results, lock/unlock answering, start a new round, end or reopen."""
    survey = _classroom(request, survey_id)
    if action not in CONTROLS:
        return HttpResponse(f"Unknown action {action!r}.", status=404, content_type="text/plain")
    CONTROLS[action](survey)
    presenter_url = reverse("classroom:presenter", args=[survey.id])
    return redirect(presenter_url + _keep_true_rate(_true_rate(request.GET)))


@login_required
@require_POST
def simulate(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Add N simulated students with true rate r (server-side, marked simulated)."""
    survey = _classroom(request, survey_id)
    form = SimulateForm(request.POST)
    if survey.status == Survey.Status.CLOSED:
        form.add_error(None, "This session has ended: reopen it to simulate more students.")
    if not form.is_valid():
        return _presenter_page(request, survey, None, form, status=400)
    rate = form.cleaned_data["true_rate"] / 100
    survey.simulate(form.cleaned_data["n"], rate)
    return redirect(reverse("classroom:presenter", args=[survey.id]) + _keep_true_rate(rate))


@require_GET
def student_status(request: HttpRequest, slug: str) -> HttpResponse:
    """What a student's phone shows under the question: open or locked, and the class
    result once revealed. Public (by the unguessable slug), cookie-free and cheap: every
    phone gets the same fragment, rendered at most once per few seconds while answers
    arrive, and at once when the instructor reveals, locks or starts a round."""
    survey = get_object_or_404(Survey, slug=slug, mode=Survey.Mode.CLASSROOM)
    key = "classroom:status:" + _etag(*_state(survey), survey.results_revealed)
    cached = cache.get(key)
    if cached is None:
        context = {"survey": survey, "ticks": TICKS}
        if survey.results_revealed:
            context["live"] = _live_questions(survey, None)
        html = render_to_string("classroom/_student_status.html#status", context)
        cached = (_etag(html), html)
        cache.set(key, cached, STATUS_FRESH_SECONDS)
    etag, html = cached
    if unchanged := _not_modified(request, etag):
        return _student_page(unchanged)
    return _student_page(_cacheable(HttpResponse(html), etag))


@require_GET
def explain(request: HttpRequest) -> HttpResponse:
    """The explain panel as a page students can read on their phones."""
    survey = Survey.objects.filter(
        slug=request.GET.get("s", ""), mode=Survey.Mode.CLASSROOM
    ).first()
    designs = (survey.designs() if survey else None) or [CLASSIC]
    context = {"survey": survey} | explain_context(designs[0])
    return _student_page(render(request, "classroom/explain.html", context))
