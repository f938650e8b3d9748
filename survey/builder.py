"""The survey builder: settings, questions of every kind with their designs, the live
preview of privacy, precision and power, and the lifecycle.

Function views, each: ownership helper (404 for other people's surveys) → bound form →
save → redirect, or with htmx the re-rendered fragment. Every page also works without
JavaScript. A validation error answers 400 with the form again, errors beside their
fields; it never replaces the page.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from estimator import planning
from estimator.designs import Design, composition
from estimator.intervals import DEFAULT_LEVEL, z_value
from survey import languages
from survey.forms import NewSurveyForm, QuestionForm, RewordForm, SurveyForm
from survey.limits import too_many_questions
from survey.listing import listed_surveys
from survey.models import (
    SKIPS_FROZEN,
    AuditEntry,
    DesignFrozen,
    Question,
    Role,
    Survey,
)
from survey.permissions import survey_for

DEFAULT_TARGET_N = 1000
MAX_TARGET_N = 10_000_000
PREFIX = re.compile(r"^(new|q\d+)$")


def owned_survey(request: HttpRequest, survey_id: int) -> Survey:
    """The survey if the requester may build and distribute it (its owner or an
    editor); a 404 for anyone else."""
    return survey_for(request, survey_id, Role.EDITOR)


def owned_question(request: HttpRequest, survey_id: int, question_id: int) -> Question:
    survey = owned_survey(request, survey_id)
    return get_object_or_404(survey.questions, pk=question_id)


# --- Planning assumptions and what they give for one design ------------------------------


@dataclass(frozen=True)
class Assumptions:
    """What the researcher plans: n respondents, a target half-width, the expected
    prevalence (an option's share for multiple choice), a null value to test against and
    a second group's prevalence to tell apart."""

    n: int = DEFAULT_TARGET_N
    half_width: float = 0.05
    q: float = 0.1
    q_null: float = 0.05
    q_other: float = 0.2
    level: float = DEFAULT_LEVEL

    FIELDS = (
        ("n", "n", int, 1, MAX_TARGET_N),
        ("half_width", "h", float, 0.001, 1.0),
        ("q", "q", float, 0.001, 0.999),
        ("q_null", "q0", float, 0.0, 1.0),
        ("q_other", "q2", float, 0.0, 1.0),
    )

    @classmethod
    def read(cls, params: QueryDict) -> tuple[Assumptions, dict[str, str]]:
        """The assumptions in ``params`` (defaults for missing ones) and a message per
        bad one, keyed by its parameter name."""
        values, errors = {}, {}
        for name, key, kind, low, high in cls.FIELDS:
            raw = params.get(key, "")
            if raw == "":
                continue
            try:
                value = kind(raw)
            except ValueError:
                errors[key] = f"Enter a {'whole ' if kind is int else ''}number."
                continue
            if not (math.isfinite(value) and low <= value <= high):
                errors[key] = f"Enter a value from {low:g} to {high:g}."
                continue
            values[name] = value
        return cls(**values), errors

    LABELS = {
        "n": "Planned respondents n",
        "h": "Target half-width (0.05 = ±5 points; for numbers a share of the range)",
        "q": "Expected prevalence (or option share)",
        "q0": "Null prevalence to test against",
        "q2": "Second group's prevalence",
    }

    def as_fields(self, raw: QueryDict | None = None) -> list[tuple[str, str, str]]:
        """(parameter, label, value) for the planning form; typed values are kept."""
        raw = raw or QueryDict()
        return [
            (key, self.LABELS[key], raw.get(key) or f"{getattr(self, name):g}")
            for name, key, *_ in self.FIELDS
        ]


def split_plan(design: Design, a: Assumptions) -> dict:
    """A split ballot: the randomized estimate reads only the randomized share 1 − s of
    the respondents, so its plan is the design's at that share of n, and n for a target
    half-width grows by 1/(1 − s)."""
    kept = 1 - design.direct_share
    result = plan(design.randomized_design, replace(a, n=max(1, round(a.n * kept))))
    if "n_for_target" in result:
        result["n_for_target"] = math.ceil(result["n_for_target"] / kept)
    return result | {"design": design, "direct_share": design.direct_share}


def worst_line(design: Design) -> tuple[float, float]:
    """(t, c) of the design's noisiest yes/no line: the design itself for yes/no, the
    option with the widest worst-case interval for multiple choice."""
    if design.kind == "binary":
        return float(design.t), float(design.c)
    t = float(design.t)
    return max(((t, float(c)) for c in design.c), key=lambda line: worst_variance(*line))


def worst_variance(t: float, c: float) -> float:
    """λ(1 − λ)/t² with λ as close to ½ as the line allows (the worst true prevalence)."""
    low, high = sorted((c, c + t))
    lam = min(max(0.5, low), high)
    return lam * (1 - lam) / t**2


def plan(design: Design, a: Assumptions) -> dict:
    """Everything the builder shows about a design: ε, precision at n, the n for a
    target half-width, power and the price of privacy (numbers: noise and the mean)."""
    if design.direct_share is not None:
        return split_plan(design, a)
    z = z_value(a.level)
    result = {"design": design, "direct": not design.randomized, "kind": design.kind}
    if design.kind == "number":
        width = design.upper - design.lower
        target = a.half_width * width
        result |= {
            "typical_noise": math.sqrt(design.noise_variance),
            "half_width": z * math.sqrt(design.report_variance() / a.n),
            "target": target,
            "n_for_target": design.sample_size(target, a.level),
        }
        if compare := getattr(design, "one_bit_comparison", None):
            result["one_bit"] = compare(target, a.level)
        return result
    if design.has_arms:
        theta = (a.q, design.planning_other)
        variance = float(design.unit_covariance(theta)[0, 0])
        return result | {
            "arms": design.planning_words,
            "half_width": z * math.sqrt(variance / a.n),
            "n_for_target": design.sample_size(theta, a.half_width, a.level),
            "power_one": design.power(a.q, a.q_null, a.n),
            "power_two": design.power_two_groups(a.q, a.q_other, a.n),
            "price": design.variance_price(theta),
        }
    t, c = worst_line(design)
    result["half_width"] = z * math.sqrt(worst_variance(t, c) / a.n)
    try:
        result |= {
            "n_for_target": planning.n_for_half_width(t, c, a.half_width, a.level),
            "power_one": planning.power_one_sample(t, c, a.q, a.n, a.q_null),
            "power_two": planning.power_two_sample(t, c, a.q_other, a.q, a.n),
            "price": planning.variance_price(t, c, a.q),
        }
    except ValueError as error:  # e.g. a design whose coins allow no such precision
        result["planning_error"] = str(error)
    return result


def number_words(value) -> str:
    return ", ".join(f"{v:g}" for v in value) if isinstance(value, tuple) else f"{value:g}"


def describe(design: Design, options: list[str]) -> str:
    """A design in words, from its declaration: label, then each parameter's label and
    value (the options for multiple choice)."""
    parts = [
        f"{p.label} = {number_words(value)}"
        for p in design.PARAMS
        if (value := getattr(design, p.name)) is not None
    ]
    text = design.label + (": " + "; ".join(parts) if parts else "")
    if options:
        text += ". Options: " + ", ".join(f"{i} = {o}" for i, o in enumerate(options))
    return text


# --- Pages -------------------------------------------------------------------------------


def builder_context(
    survey: Survey,
    a: Assumptions,
    forms: dict[int, QuestionForm] | None = None,
    raw: QueryDict | None = None,
    **extra,
) -> dict:
    forms = forms or {}
    questions = list(survey.questions.all())
    frozen = survey.is_frozen
    rows = [
        {
            "question": q,
            "form": forms.get(q.id) or QuestionForm.for_question(q, **form_options(survey)),
            "reword_form": forms.get(q.id)
            or RewordForm(initial={"text": q.text}, prefix=f"q{q.id}"),
            "plan": plan(q.design, a),
            "words": describe(q.design, q.options),
            "revisions": list(q.revisions.all()) if frozen else [],
        }
        for q in questions
    ]
    add_form = forms.get(0) or QuestionForm(prefix="new", **form_options(survey))
    add_data = add_form.data if add_form.is_bound else unbound_data(add_form)
    return {
        "survey": survey,
        "rows": rows,
        "frozen": frozen,
        "privacy": composition(q.design for q in questions),
        "assumptions": a,
        "planning_fields": a.as_fields(raw),
        "planning_errors": {},
        "target_n": a.n,
        "add_form": add_form,
        "new_preview": preview_context(survey, add_data, "new", None, a)["preview"],
        "settings_form": SurveyForm(instance=survey),
        "translations": [
            (code, name, languages.untranslated_count(survey, questions, code))
            for code, name in settings.LANGUAGES
            if code in survey.offered_languages[1:]
        ],
    } | extra


def render_builder(
    request: HttpRequest, survey: Survey, *, forms=None, status: int = 200, **extra
) -> HttpResponse:
    """The whole page, or for htmx just the questions fragment (list, add form, summary)."""
    a, _ = Assumptions.read(request.POST or request.GET)
    context = builder_context(survey, a, forms, **extra)
    template = "survey/builder.html#questions" if request.htmx else "survey/builder.html"
    return render(request, template, context, status=status)


@login_required
@require_POST
def survey_create(request: HttpRequest) -> HttpResponse:
    form = NewSurveyForm(request.POST)
    if not form.is_valid():
        rows = listed_surveys(Survey.objects.accessible_to(request.user))
        context = {"rows": rows, "create_form": form}
        return render(request, "survey/list.html", context, status=400)
    survey = form.save(commit=False)
    survey.owner = request.user
    survey.save()
    return redirect("survey:builder", survey.id)


@login_required
@require_http_methods(["GET", "POST"])
def builder(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    survey.close_if_due()
    if request.method == "GET":
        a, errors = Assumptions.read(request.GET)
        context = builder_context(survey, a, raw=request.GET, planning_errors=errors)
        template = "survey/builder.html#summary" if request.htmx else "survey/builder.html"
        return render(request, template, context)
    form = SurveyForm(request.POST, instance=survey)
    with transaction.atomic():
        if form.is_valid() and "allow_skip" in form.changed_data:
            try:
                survey.check_design_editable()  # a page offering skips is now out of date
            except DesignFrozen:
                form.add_error("allow_skip", SKIPS_FROZEN)
        if not form.is_valid():
            survey.refresh_from_db()
            context = builder_context(survey, Assumptions(), settings_form=form)
            return render(request, "survey/builder.html", context, status=400)
        if edited := [f for f in ("title", "description") if f in form.changed_data]:
            said = f"{' and '.join(edited)} edited"
            AuditEntry.record(survey, request.user, AuditEntry.Action.WORDING, said)
        if (before := form.initial["min_cell_count"]) != survey.min_cell_count:
            said = f"small-cell threshold {before} → {survey.min_cell_count}"
            AuditEntry.record(survey, request.user, AuditEntry.Action.THRESHOLD, said)
        form.save()
    messages.success(request, "Survey settings saved.")
    return redirect("survey:builder", survey.id)


def frozen_response(request: HttpRequest, survey: Survey) -> HttpResponse | None:
    """The 409 page if the survey's questions are frozen; call inside the editing
    transaction (see :meth:`Survey.check_design_editable`)."""
    try:
        survey.check_design_editable()
    except DesignFrozen:
        return render_builder(
            request,
            survey,
            status=409,
            frozen_error="This survey already has answers: its designs are frozen. "
            "Only the wording of a question can still change.",
        )
    return None


def save_question(request: HttpRequest, survey: Survey, question: Question | None):
    """Add or edit: the redrawn form (no-JS "Update form"), the form with its errors
    (400, nothing stored), or the saved question."""
    prefix = f"q{question.id}" if question else "new"
    key = question.id if question else 0
    if "redraw" in request.POST:
        return render_builder(
            request,
            survey,
            forms={key: QuestionForm.redrawn(request.POST, prefix, **form_options(survey))},
        )
    if response := frozen_response(request, survey):
        return response
    form = QuestionForm(request.POST, prefix=prefix, **form_options(survey))
    position = survey.questions.count()  # counted under the survey row's lock (above)
    if question is None and (error := too_many_questions(position + 1)):
        form.add_error(None, error)
    if not form.is_valid():
        response = render_builder(request, survey, forms={key: form}, status=400)
        transaction.set_rollback(True)  # nothing changed: keep the design version too
        return response
    saved = form.save_to(question or Question(survey=survey, position=position))
    said = f"question edited: “{saved.text}”" if question else f"question added: “{saved.text}”"
    AuditEntry.record(survey, request.user, AuditEntry.Action.DESIGN, said)
    return redirect_or_fragment(request, survey)


@login_required
@require_POST
@transaction.atomic
def question_add(request: HttpRequest, survey_id: int) -> HttpResponse:
    return save_question(request, owned_survey(request, survey_id), None)


@login_required
@require_POST
@transaction.atomic
def question_edit(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = owned_question(request, survey_id, question_id)
    return save_question(request, question.survey, question)


@login_required
@require_POST
@transaction.atomic
def question_reword(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    """Once answers exist only the wording changes; the change is kept for the codebook."""
    question = owned_question(request, survey_id, question_id)
    form = RewordForm(request.POST, prefix=f"q{question.id}")
    if not form.is_valid():
        return render_builder(request, question.survey, forms={question.id: form}, status=400)
    old = question.text
    if question.reword(form.cleaned_data["text"]):
        said = f"question reworded: “{old}” → “{question.text}”"
        AuditEntry.record(question.survey, request.user, AuditEntry.Action.WORDING, said)
        messages.warning(
            request,
            "Wording changed. Earlier respondents saw the old text: the codebook lists both.",
        )
    return redirect_or_fragment(request, question.survey)


@login_required
@require_POST
@transaction.atomic
def question_move(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = owned_question(request, survey_id, question_id)
    survey = question.survey
    if response := frozen_response(request, survey):
        return response
    questions = list(survey.questions.all())
    index = questions.index(question)
    other = index + (-1 if request.POST.get("direction") == "up" else 1)
    if 0 <= other < len(questions):
        questions[index], questions[other] = questions[other], questions[index]
        for position, q in enumerate(questions):
            Question.objects.filter(pk=q.pk).update(position=position)
        said = f"question moved to position {other + 1}: “{question.text}”"
        AuditEntry.record(survey, request.user, AuditEntry.Action.DESIGN, said)
    return redirect_or_fragment(request, survey)


@login_required
@require_POST
@transaction.atomic
def question_delete(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = owned_question(request, survey_id, question_id)
    survey = question.survey
    if response := frozen_response(request, survey):
        return response
    question.delete()
    said = f"question deleted: “{question.text}”"
    AuditEntry.record(survey, request.user, AuditEntry.Action.DESIGN, said)
    survey.questions.filter(position__gt=question.position).update(position=F("position") - 1)
    return redirect_or_fragment(request, survey)


def redirect_or_fragment(request: HttpRequest, survey: Survey) -> HttpResponse:
    if request.htmx:
        return render_builder(request, survey)
    return redirect("survey:builder", survey.id)


def posted_prefix(request: HttpRequest, survey: Survey) -> tuple[str, Question | None]:
    prefix = request.GET.get("prefix", "new")
    if not PREFIX.match(prefix):
        prefix = "new"
    if prefix == "new":
        return prefix, None
    return prefix, get_object_or_404(survey.questions, pk=int(prefix[1:]))


@login_required
@require_POST
def question_form(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The question form redrawn for a newly chosen kind, preset or design (htmx)."""
    survey = owned_survey(request, survey_id)
    prefix, question = posted_prefix(request, survey)
    a, _ = Assumptions.read(request.POST)
    form = QuestionForm.redrawn(request.POST, prefix, **form_options(survey))
    preview = preview_context(survey, unbound_data(form), prefix, question, a)
    context = preview | {"survey": survey, "form": form, "question": question}
    return render(request, "survey/_question_form.html", context)


def preview_context(
    survey: Survey, data, prefix: str, question: Question | None, a: Assumptions
) -> dict:
    """The design being typed, its plan and the survey's total if it were saved (the
    question's text is not needed for that), or the form with what is wrong."""
    data = {k: data.get(k) for k in data} | {f"{prefix}-text": data.get(f"{prefix}-text") or "…"}
    form = QuestionForm(data, prefix=prefix, **form_options(survey))
    form.is_valid()
    design = form.cleaned_data.get("design")
    others = [q.design for q in survey.questions.all() if q != question]
    return {
        "form": form,
        "preview": plan(design, a) if design else None,
        "privacy_if_saved": composition([*others, design]) if design else None,
        "assumptions": a,
        "target_n": a.n,
    }


def form_options(survey: Survey) -> dict:
    """What a question form may offer in this survey: no split ballot in a classroom."""
    return {"split_allowed": survey.mode != Survey.Mode.CLASSROOM}


def unbound_data(form: QuestionForm) -> dict:
    """What an unbound form shows, as if it were posted: its fields' initial values too
    (the kind and preset a new question starts with), so its preview is the design
    shown, not an error before anything is typed."""
    values = {name: form[name].value() for name in form.fields}
    values |= {"kind": form.kind_value, "preset": form.preset_value}
    return {form.add_prefix(k): v for k, v in values.items() if v not in (None, False, "")}


@login_required
@require_POST
def question_preview(request: HttpRequest, survey_id: int) -> HttpResponse:
    """ε, precision, power and price of the design being typed, or what is wrong."""
    survey = owned_survey(request, survey_id)
    prefix, question = posted_prefix(request, survey)
    a, _ = Assumptions.read(request.POST)
    context = preview_context(survey, request.POST, prefix, question, a)
    return render(request, "survey/_preview.html", context)


@login_required
@require_POST
def survey_status(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    action = request.POST.get("action", "")
    if error := survey.lifecycle_error(action):
        messages.error(request, error)
    else:
        getattr(survey, action)()
        messages.success(request, f"Survey {survey.get_status_display().lower()}.")
    return redirect("survey:builder", survey.id)


@login_required
@require_POST
def survey_duplicate(request: HttpRequest, survey_id: int) -> HttpResponse:
    """A new draft owned by whoever duplicates it: same questions and designs, no answers."""
    copy = owned_survey(request, survey_id).duplicate(request.user)
    messages.success(request, "Survey duplicated: a new draft with the same questions, no answers.")
    return redirect("survey:builder", copy.id)


@login_required
@require_GET
def survey_preview(request: HttpRequest, survey_id: int) -> HttpResponse:
    """What respondents will see, without any way to send: nothing is stored."""
    survey = owned_survey(request, survey_id)
    questions = list(survey.questions.all())
    context = {
        "survey": survey,
        "questions": questions,
        "privacy": composition(q.design for q in questions),
    }
    response = render(request, "survey/preview.html", context)
    response["Cache-Control"] = "no-store"
    return response
