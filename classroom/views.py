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
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from analysis.results import QuestionResult
from classroom.live import (
    ChoiceLive,
    NumberLive,
    choice_live,
    number_live,
    simulate_choice,
    simulate_number,
)
from classroom.models import DEFAULT_QUESTION, Lesson, Session, SimulatedRate
from estimator.arms import ArmsEstimate
from estimator.intervals import DEFAULT_LEVEL, DEFAULT_METHOD
from estimator.randomized_response import (
    BinaryDesign,
    BinaryEstimate,
    ForcedResponse,
    total_epsilon,
)
from responses.counts import survey_counts
from responses.write import simulate_respondents
from survey import languages
from survey.devices import is_two_fair_coins
from survey.models import JOIN_CODE_ALPHABET, JOIN_CODE_LENGTH, Question, Role, Survey
from survey.qr import qr_svg
from survey.views import CLASSIC_NUMBERS

# A session's default sequence: a yes/no, a multiple-choice and a number question.
DEFAULT_SESSION = [
    {"text": DEFAULT_QUESTION, "kind": Question.Kind.BINARY},
    {
        "text": "Which of these have you done?",
        "kind": Question.Kind.CHOICE,
        "options": [
            "Copied homework",
            "Used a phone in an exam",
            "More than one of these",
            "None of these",
        ],
    },
    {
        "text": "How many hours did you sleep last night?",
        "kind": Question.Kind.NUMBER,
        "bounds": (0, 12),
    },
]
MAX_OPTIONS = 10
POLL_SECONDS = 2
# A phone asks for the class status this often: 500 phones make 100 requests a second.
STUDENT_STATUS_POLL_SECONDS = 5
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

    def simulate(self, survey: Survey) -> str:
        """Add the students; returns the query string that keeps the truth marked."""
        rate = self.cleaned_data["true_rate"] / 100
        simulate_respondents(survey, self.cleaned_data["n"], rate)
        SimulatedRate.keep(survey, rate)
        return _keep_true_rate(rate)


class ChoiceSimulateForm(forms.Form):
    """N students whose true options follow a distribution such as "20/30/50" (%)."""

    n = forms.IntegerField(min_value=1, max_value=MAX_SIMULATED, initial=100, label="Students")
    distribution = forms.CharField(max_length=200, label="True distribution (%)")

    def __init__(self, *args, options: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.options = options
        even = [round(100 / len(options))] * len(options)
        self.fields["distribution"].initial = "/".join(str(v) for v in even)
        self.fields["distribution"].help_text = "One percentage per option, in order: " + ", ".join(
            options
        )

    def clean_distribution(self) -> list[float]:
        raw = self.cleaned_data["distribution"]
        try:
            shares = [float(part) for part in raw.replace(",", "/").split("/")]
        except ValueError:
            raise forms.ValidationError(
                "Write one percentage per option separated by “/”, e.g. 20/30/50."
            ) from None
        if len(shares) != len(self.options):
            raise forms.ValidationError(
                f"Give {len(self.options)} percentages, one per option (got {len(shares)})."
            )
        if any(not 0 <= v <= 100 for v in shares):
            raise forms.ValidationError("Each percentage lies between 0 and 100.")
        if abs(sum(shares) - 100) > 0.5:
            raise forms.ValidationError(f"The percentages add up to {sum(shares):g}, not 100.")
        return [v / sum(shares) for v in shares]

    def simulate(self, survey: Survey) -> str:
        simulate_choice(survey, self.cleaned_data["n"], self.cleaned_data["distribution"])
        return ""


class NumberSimulateForm(forms.Form):
    """N students whose true numbers have a given mean and standard deviation."""

    n = forms.IntegerField(min_value=1, max_value=MAX_SIMULATED, initial=100, label="Students")

    def __init__(self, *args, lower: int, upper: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The bounds are the question's own: a true mean outside them is no class at all.
        self.fields["mean"] = forms.FloatField(
            min_value=lower, max_value=upper, initial=(lower + upper) / 2, label="True mean"
        )
        self.fields["sd"] = forms.FloatField(
            min_value=0,
            max_value=upper - lower,
            initial=round((upper - lower) / 6, 1),
            label="True standard deviation",
        )

    def simulate(self, survey: Survey) -> str:
        data = self.cleaned_data
        simulate_number(survey, data["n"], data["mean"], data["sd"])
        return ""


def simulate_form(survey: Survey, data=None) -> forms.Form:
    """The simulation form for the survey's one question's kind."""
    question = survey.questions.first()
    if question and question.kind == Question.Kind.CHOICE:
        return ChoiceSimulateForm(data, options=question.options)
    if question and question.kind == Question.Kind.NUMBER:
        design = question.design
        return NumberSimulateForm(data, lower=design.lower, upper=design.upper)
    return SimulateForm(data)


class AddQuestionForm(forms.Form):
    """A question added to a running session: yes/no, multiple choice or a number."""

    text = forms.CharField(max_length=500, strip=True, label="Question")
    kind = forms.ChoiceField(choices=Question.Kind.choices, initial=Question.Kind.BINARY)
    options = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Options (multiple choice: one per line)",
    )
    lower = forms.IntegerField(required=False, initial=0, label="Lowest number")
    upper = forms.IntegerField(required=False, initial=10, label="Highest number")

    def clean(self) -> dict:
        data = super().clean()
        kind = data.get("kind")
        options = [line.strip() for line in data.get("options", "").splitlines() if line.strip()]
        data["options"] = options
        if kind == Question.Kind.CHOICE:
            if not 2 <= len(options) <= MAX_OPTIONS:
                self.add_error(
                    "options", f"Give between 2 and {MAX_OPTIONS} options, one per line."
                )
            elif len(set(options)) != len(options):
                self.add_error("options", "Each option appears once.")
            elif any(len(o) > 200 for o in options):
                self.add_error("options", "An option has at most 200 characters.")
        if kind == Question.Kind.NUMBER:
            lower, upper = data.get("lower"), data.get("upper")
            if lower is None or upper is None:
                self.add_error("upper", "A number question needs its lowest and highest number.")
            elif not lower < upper:
                self.add_error("upper", "The highest number must be above the lowest.")
            else:
                data["bounds"] = (lower, upper)
        return data


@dataclass(frozen=True)
class Shortcut:
    """A projector key: what the page lists (``label_key``) and the form it posts."""

    label_key: str
    keys: str  # KeyboardEvent.key values, space-separated
    label: str
    url: str


@dataclass(frozen=True)
class LiveQuestion:
    """One question on the projector: its estimate, and where to draw it on the bar."""

    result: QuestionResult
    true_rate: float | None
    skipped: int = 0  # "prefer not to answer": counted apart, not in the estimate
    kind = "binary"

    @property
    def question(self) -> Question:
        return self.result.question

    @property
    def n_simulated(self) -> int:
        return self.result.n_simulated

    @property
    def estimate(self) -> BinaryEstimate | ArmsEstimate:
        return self.result.estimate

    @property
    def interval(self) -> tuple[float, float] | None:
        return self.result.interval

    @property
    def quantities(self) -> list[dict]:
        """A design with arms: what it estimates beside π (carriers' honesty t; honest
        "no" β and cheaters γ), each with its interval; empty for other designs."""
        return self.result.quantities

    @property
    def findings(self) -> list[str]:
        return self.result.findings

    @property
    def chance(self) -> str:
        """What randomized the answers, in the result's words: "coins" only when the
        design's chance steps are two fair coins (other designs have other devices)."""
        return "coins" if is_two_fair_coins(self.result.question.design) else "randomization"

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


def _yes_no_design(survey: Survey) -> BinaryDesign | None:
    """The design the coins explanation speaks of: the first question's, when it is a
    yes/no question (a survey without questions gets the classic two coins)."""
    designs = survey.designs() or [CLASSIC]
    plain = designs[0].kind == Question.Kind.BINARY and not designs[0].has_arms
    return designs[0] if plain else None


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
    return {"design": design, "posterior_rows": rows, "classic": CLASSIC_NUMBERS}


TICKS = [{"x": LiveQuestion.x(v / 100), "label": f"{v} %"} for v in (0, 25, 50, 75, 100)]


def _classroom(request: HttpRequest, survey_id: int, role: Role = Role.VIEWER) -> Survey:
    """A classroom survey the requester holds ``role`` on (viewers watch, editors run
    the controls); anyone else gets a 404."""
    surveys = Survey.objects.accessible_to(request.user, role).filter(mode=Survey.Mode.CLASSROOM)
    related = surveys.select_related("simulatedrate", "session_step__session")
    return get_object_or_404(related, pk=survey_id)


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


def _true_rate(survey: Survey, params) -> float | None:
    """The simulated true rate to mark on the bar: ``?true_rate=30`` (in percent) if given,
    else the rate the session's students were last simulated with."""
    try:
        value = float(params.get("true_rate", ""))
    except ValueError:
        return SimulatedRate.of(survey)
    return value / 100 if 0 <= value <= 100 else SimulatedRate.of(survey)


def _live_questions(
    survey: Survey, true_rate: float | None
) -> list[LiveQuestion | ChoiceLive | NumberLive]:
    """Each question's live result for its kind, from one aggregate over the round."""
    counts = survey_counts(survey)
    live = []
    for question in survey.questions.all():
        tally = counts.tally(question.id)
        by_value, n_simulated = tally.counts, tally.simulated
        if question.kind == Question.Kind.CHOICE:
            live.append(choice_live(question, by_value, n_simulated, tally.skipped))
        elif question.kind == Question.Kind.NUMBER:
            live.append(number_live(question, tally.stats, n_simulated, tally.skipped))
        else:
            # A design with arms reads its reports per arm from the same tally keys.
            estimate = tally.estimate(question.design)
            result = QuestionResult(question, estimate, DEFAULT_LEVEL, DEFAULT_METHOD, n_simulated)
            live.append(LiveQuestion(result, true_rate, tally.skipped))
    return live


def _join_code(survey: Survey) -> str:
    """The code students type: the session's when the question is part of one."""
    session = Session.of(survey)
    return session.join_code if session else survey.join_code


def _join_url(request: HttpRequest, survey: Survey) -> str:
    return request.build_absolute_uri(reverse("classroom:join", args=[_join_code(survey)]))


def _join_context(request: HttpRequest, survey: Survey) -> dict:
    url = _join_url(request, survey)
    return {
        "join_code": _join_code(survey),
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
        return _student_page(languages.render_in(None, request, "classroom/join.html", {}))
    survey = Survey.objects.filter(join_code=code).first()
    survey = survey or Lesson.objects.filter(join_code=code).first()
    survey = survey or Session.objects.filter(join_code=code).first()
    if survey is None:
        malformed = len(code) != JOIN_CODE_LENGTH or set(code) - set(JOIN_CODE_ALPHABET)
        context = {"code": code, "error": "malformed" if malformed else "unknown"}
        response = languages.render_in(None, request, "classroom/join.html", context, 404)
        return _student_page(response)
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
    return _classroom_page(request, form)


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """The instructor's classroom: start a demo, a lecture or any lesson, and reopen past
    ones (a lost projector or remote link is found again here)."""
    return _classroom_page(request, DemoForm())


def _classroom_page(request: HttpRequest, form: DemoForm) -> HttpResponse:
    user = request.user
    sessions = Session.objects.owned_by(user).prefetch_related("steps__survey")
    lone = Survey.objects.filter(
        owner=user, mode=Survey.Mode.CLASSROOM, session_step=None, lesson=None
    )
    lessons = list(Lesson.objects.owned_by(user).select_related("survey"))
    for lesson in lessons:
        lesson.remote_url = request.build_absolute_uri(
            reverse("classroom:remote", args=[lesson.remote_token])
        )
    context = {
        "form": form,
        "default_question": DEFAULT_QUESTION,
        "default_session": DEFAULT_SESSION,
        "sessions": sessions,
        "single_questions": lone.order_by("-created"),
        "kinds": Lesson.Kind.choices,
        "lessons": lessons,
    }
    return render(request, "classroom/new.html", context, status=400 if form.errors else 200)


@login_required
@require_GET
def join_screen(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = _classroom(request, survey_id)
    designs = survey.designs() or [CLASSIC]
    context = {"survey": survey, "design": designs[0], "epsilon": total_epsilon(designs)}
    context |= _join_context(request, survey) | _session_context(survey)
    return render(request, "classroom/join_screen.html", context)


def _keep_true_rate(true_rate: float | None) -> str:
    """The query string that keeps the simulated true rate marked across requests."""
    return f"?true_rate={true_rate * 100:g}" if true_rate is not None else ""


def _session_context(survey: Survey) -> dict:
    """Where the question stands in its session (empty for a lone question)."""
    session = Session.of(survey)
    if session is None:
        return {"session": None}
    surveys = session.surveys()
    return {
        "session": session,
        "session_surveys": surveys,
        "session_index": surveys.index(survey) + 1,
        "is_current": surveys[session.position] == survey,
        "current_survey": surveys[session.position],
    }


def _presenter_context(survey: Survey, true_rate: float | None) -> dict:
    return _session_context(survey) | {
        "survey": survey,
        "live": _live_questions(survey, true_rate),
        "ticks": TICKS,
        "poll_url": reverse("classroom:poll", args=[survey.id]) + _keep_true_rate(true_rate),
        "keep_query": _keep_true_rate(true_rate),
        "poll_seconds": POLL_SECONDS,
    }


@login_required
@require_GET
def presenter(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The projector: live results and the explanation, no controls (they have their own
    page, which also works on the instructor's phone)."""
    survey = _classroom(request, survey_id)
    context = _presenter_context(survey, _true_rate(survey, request.GET))
    context |= _join_context(request, survey)
    if design := _yes_no_design(survey):
        context |= explain_context(design) | {"explain_binary": True}
    context["shortcuts"] = _presenter_shortcuts(request, survey)
    return render(request, "classroom/presenter.html", context)


def _presenter_shortcuts(request: HttpRequest, survey: Survey) -> list[Shortcut]:
    """The keys for whoever may run the controls (a viewer only watches)."""
    editors = Survey.objects.accessible_to(request.user, Role.EDITOR)
    if not editors.filter(pk=survey.pk).exists():
        return []

    def url(action: str) -> str:
        return reverse("classroom:control", args=[survey.id, action])

    keys = [
        Shortcut("R", "r", "reveal/hide", url("toggle-reveal")),
        Shortcut("L", "l", "lock/unlock", url("toggle-lock")),
    ]
    session = Session.of(survey)
    if session and session.owner_id == request.user.id:
        move = "classroom:session_move"
        keys += [
            Shortcut(
                "→",
                "ArrowRight PageDown",
                "next question",
                reverse(move, args=[session.id, "next"]),
            ),
            Shortcut(
                "←",
                "ArrowLeft PageUp",
                "previous question",
                reverse(move, args=[session.id, "previous"]),
            ),
        ]
    return [*keys, Shortcut("N", "n", "new round", url("new-round"))]


def _controls_page(
    request: HttpRequest,
    survey: Survey,
    true_rate: float | None,
    form: forms.Form,
    status=200,
    add_form: AddQuestionForm | None = None,
) -> HttpResponse:
    url = request.build_absolute_uri(reverse("classroom:controls", args=[survey.id]))
    context = _presenter_context(survey, true_rate) | _join_context(request, survey)
    context |= {
        "answers": max((q.estimate.n for q in context["live"]), default=0),
        "simulated": max((q.n_simulated for q in context["live"]), default=0),
        "simulate_form": form,
        "add_form": add_form or AddQuestionForm(),
        "controls_qr": mark_safe(qr_svg(url, title="QR code of the controls", scalable=True)),
    }
    return render(request, "classroom/controls.html", context, status=status)


@login_required
@require_GET
def controls(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = _classroom(request, survey_id, Role.EDITOR)
    return _controls_page(request, survey, _true_rate(survey, request.GET), simulate_form(survey))


@login_required
@require_GET
def poll(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The presenter's live fragment; 304 while the round's counts and state are unchanged."""
    survey = _classroom(request, survey_id)
    true_rate = _true_rate(survey, request.GET)
    # The same aggregate the estimates use, cheap enough to run before computing them.
    tallies = sorted(
        (qid, sorted(t.counts.items()), t.simulated, t.skipped)
        for qid, t in survey_counts(survey).tallies.items()
    )
    session = Session.of(survey)
    current = session.current_id if session else survey.id
    etag = _etag("presenter", *_state(survey), survey.results_revealed, true_rate, tallies, current)
    if unchanged := _not_modified(request, etag):
        return unchanged
    if current != survey.id:
        # The instructor stepped to another question: the projector follows.
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse("classroom:presenter", args=[current])
        return response
    context = _presenter_context(survey, true_rate)
    return _cacheable(render(request, "classroom/presenter.html#live", context), etag)


CONTROLS = {
    "toggle-reveal": lambda survey: survey.reveal(not survey.results_revealed),
    "toggle-lock": lambda survey: survey.lock(not survey.is_locked),
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
    survey = _classroom(request, survey_id, Role.EDITOR)
    if action not in CONTROLS:
        return HttpResponse(f"Unknown action {action!r}.", status=404, content_type="text/plain")
    CONTROLS[action](survey)
    controls_url = reverse("classroom:controls", args=[survey.id])
    return redirect(controls_url + _keep_true_rate(_true_rate(survey, request.GET)))


@login_required
@require_POST
def simulate(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Add N simulated students with true rate r (server-side, marked simulated)."""
    survey = _classroom(request, survey_id, Role.EDITOR)
    form = simulate_form(survey, request.POST)
    if survey.status == Survey.Status.CLOSED:
        form.add_error(None, "This session has ended: reopen it to simulate more students.")
    if not form.is_valid():
        return _controls_page(request, survey, None, form, status=400)
    keep = form.simulate(survey)
    messages.success(
        request,
        f"Added {form.cleaned_data['n']} simulated students to round {survey.current_round}.",
    )
    return redirect(reverse("classroom:controls", args=[survey.id]) + keep)


@require_GET
def student_status(request: HttpRequest, slug: str) -> HttpResponse:
    """What a student's phone shows under the question: open or locked, and the class
    result once revealed. Public (by the unguessable slug), cookie-free and cheap: every
    phone gets the same fragment, rendered at most once per few seconds while answers
    arrive, and at once when the instructor reveals, locks or starts a round."""
    classrooms = Survey.objects.filter(mode=Survey.Mode.CLASSROOM)
    related = classrooms.select_related("session_step__session", "lesson")
    survey = get_object_or_404(related, slug=slug)
    session = Session.of(survey)
    # A phone on a session's question moves to whichever question is current; one on an
    # attack lesson's question goes back to the lesson when it moves on to the attack
    # (in the last step a phone opens the question again to see its memoized report).
    current = session.current.get_absolute_url() if session else ""
    lesson = getattr(survey, "lesson", None)
    if lesson and lesson.step == 1:
        current = lesson.get_absolute_url()
    language = languages.from_request(request)
    key = "classroom:status:" + _etag(*_state(survey), survey.results_revealed, current, language)
    cached = cache.get(key)
    if cached is None:
        context = {"survey": survey, "ticks": TICKS, "current_url": current}
        context |= _session_context(survey)
        if survey.results_revealed:
            context["live"] = _live_questions(survey, None)
        with translation.override(language):
            html = render_to_string("classroom/_student_status.html#status", context)
        cached = (_etag(html), html)
        cache.set(key, cached, STATUS_FRESH_SECONDS)
    etag, html = cached
    if unchanged := _not_modified(request, etag):
        return _student_page(unchanged)
    return _student_page(languages.in_language(_cacheable(HttpResponse(html), etag), language))


@require_GET
def explain(request: HttpRequest) -> HttpResponse:
    """The explain panel as a page students can read on their phones."""
    survey = Survey.objects.filter(
        slug=request.GET.get("s", ""), mode=Survey.Mode.CLASSROOM
    ).first()
    design = _yes_no_design(survey) if survey else CLASSIC
    if design is None:
        raise Http404("The coins explanation is for yes/no questions.")
    context = {"survey": survey} | explain_context(design)
    return _student_page(languages.render_in(None, request, "classroom/explain.html", context))


def _owned_session(request: HttpRequest, session_id: int) -> Session:
    """A session of the requester's own; anyone else's is a 404."""
    return get_object_or_404(Session.objects.owned_by(request.user), pk=session_id)


@login_required
@require_POST
def new_session(request: HttpRequest) -> HttpResponse:
    """A lecture's sequence: the default yes/no, multiple-choice and number questions."""
    with transaction.atomic():
        session = Session.objects.create(owner=request.user, title="Lecture questions")
        for question in DEFAULT_SESSION:
            session.add_question(**question)
    return redirect("classroom:join_screen", session.current.id)


@login_required
@require_POST
def session_move(request: HttpRequest, session_id: int, direction: str) -> HttpResponse:
    """Previous or next question: projector and phones follow within a poll."""
    session = _owned_session(request, session_id)
    if direction not in ("previous", "next"):
        return HttpResponse(
            f"Unknown direction {direction!r}.", status=404, content_type="text/plain"
        )
    current = session.move(1 if direction == "next" else -1)
    return redirect("classroom:controls", current.id)


@login_required
@require_POST
def session_add(request: HttpRequest, session_id: int) -> HttpResponse:
    """Append a question to the session (the instructor steps to it with "next")."""
    session = _owned_session(request, session_id)
    form = AddQuestionForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            session.add_question(data["text"], data["kind"], data["options"], data.get("bounds"))
        except ValueError as error:
            form.add_error(None, str(error))
    current = session.current
    if form.errors:
        return _controls_page(
            request, current, None, simulate_form(current), status=400, add_form=form
        )
    return redirect("classroom:controls", current.id)
