"""The survey builder: settings, questions with their designs, live ε preview, lifecycle.

Function views, each: ownership helper (404 for other people's surveys) → bound form →
save → redirect, or with htmx the re-rendered fragment. Every page also works without
JavaScript.
"""

from __future__ import annotations

import math
import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from scipy import stats

from estimator.randomized_response import DEFAULT_LEVEL, BinaryDesign, total_epsilon
from survey.forms import PRESETS, QuestionForm, SurveyForm
from survey.models import DesignFrozen, Question, Survey

DEFAULT_TARGET_N = 1000
MAX_TARGET_N = 10_000_000
PREFIX = re.compile(r"^(new|q\d+)$")
CLASSIC = PRESETS["classic"][1]


def owned_survey(request: HttpRequest, survey_id: int) -> Survey:
    return get_object_or_404(Survey.objects.owned_by(request.user), pk=survey_id)


def owned_question(request: HttpRequest, survey_id: int, question_id: int) -> Question:
    survey = owned_survey(request, survey_id)
    return get_object_or_404(survey.questions, pk=question_id)


def target_n(params) -> int:
    """The planned number of respondents for the half-width preview (clamped)."""
    try:
        n = int(params.get("n", DEFAULT_TARGET_N))
    except (TypeError, ValueError):
        return DEFAULT_TARGET_N
    return min(max(n, 1), MAX_TARGET_N)


def expected_half_width(design: BinaryDesign, n: int, level: float = DEFAULT_LEVEL) -> float:
    """Worst-case (over the true prevalence) half-width of the CI for q at ``n``:
    z·sqrt(λ(1 − λ)/n)/|t| with λ as close to 1/2 as the design allows — the inverse
    of the planner's ``sample_size``."""
    low, high = design.lambda_range
    lam = min(max(0.5, low), high)
    z = stats.norm.ppf(0.5 + level / 2)
    return float(z * math.sqrt(lam * (1 - lam) / n) / abs(design.t))


def builder_context(survey: Survey, n: int, forms: dict[int, QuestionForm] | None = None) -> dict:
    forms = forms or {}
    questions = list(survey.questions.all())
    rows = [
        {
            "question": q,
            "form": forms.get(q.id) or QuestionForm.for_question(q),
            "half_width": expected_half_width(q.design, n),
        }
        for q in questions
    ]
    return {
        "survey": survey,
        "rows": rows,
        "frozen": survey.is_frozen,
        "epsilon_total": total_epsilon([q.design for q in questions]),
        "target_n": n,
        "add_form": forms.get(0) or QuestionForm(prefix="new"),
        "new_design": CLASSIC,
        "new_half_width": expected_half_width(CLASSIC, n),
        "settings_form": SurveyForm(instance=survey),
    }


def render_builder(
    request: HttpRequest, survey: Survey, *, forms=None, status: int = 200, **extra
) -> HttpResponse:
    """The whole page, or for htmx just the questions fragment (list, add form, summary)."""
    context = builder_context(survey, target_n(request.GET or request.POST), forms) | extra
    template = "survey/builder.html#questions" if request.htmx else "survey/builder.html"
    return render(request, template, context, status=status)


@login_required
@require_POST
def survey_create(request: HttpRequest) -> HttpResponse:
    form = SurveyForm(request.POST)
    if not form.is_valid():
        surveys = Survey.objects.owned_by(request.user).prefetch_related("questions")
        context = {"surveys": surveys, "create_form": form}
        return render(request, "survey/list.html", context, status=400)
    survey = form.save(commit=False)
    survey.owner = request.user
    survey.save()
    return redirect("survey:builder", survey.id)


@login_required
@require_http_methods(["GET", "POST"])
def builder(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    if request.method == "GET":
        if request.htmx:
            context = builder_context(survey, target_n(request.GET))
            return render(request, "survey/builder.html#summary", context)
        return render_builder(request, survey)
    form = SurveyForm(request.POST, instance=survey)
    if not form.is_valid():
        context = builder_context(survey, DEFAULT_TARGET_N) | {"settings_form": form}
        return render(request, "survey/builder.html", context, status=400)
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
            frozen_error="This survey already has answers: its questions and designs are frozen.",
        )
    return None


@login_required
@require_POST
@transaction.atomic
def question_add(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    if response := frozen_response(request, survey):
        return response
    form = QuestionForm(request.POST, prefix="new")
    if not form.is_valid():
        response = render_builder(request, survey, forms={0: form}, status=400)
        transaction.set_rollback(True)  # nothing changed: keep the design version too
        return response
    position = survey.questions.count()
    form.save_to(Question(survey=survey, position=position))
    return redirect_or_fragment(request, survey)


@login_required
@require_POST
@transaction.atomic
def question_edit(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = owned_question(request, survey_id, question_id)
    if response := frozen_response(request, question.survey):
        return response
    form = QuestionForm(request.POST, prefix=f"q{question.id}")
    if not form.is_valid():
        response = render_builder(request, question.survey, forms={question.id: form}, status=400)
        transaction.set_rollback(True)  # nothing changed: keep the design version too
        return response
    form.save_to(question)
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
    survey.questions.filter(position__gt=question.position).update(position=F("position") - 1)
    return redirect_or_fragment(request, survey)


def redirect_or_fragment(request: HttpRequest, survey: Survey) -> HttpResponse:
    if request.htmx:
        return render_builder(request, survey)
    return redirect("survey:builder", survey.id)


@login_required
@require_POST
def question_preview(request: HttpRequest, survey_id: int) -> HttpResponse:
    """ε, odds bound and expected half-width of the design being typed, or its errors."""
    survey = owned_survey(request, survey_id)
    prefix = request.GET.get("prefix", "new")
    if not PREFIX.match(prefix):
        prefix = "new"
    form = QuestionForm(request.POST, prefix=prefix)
    form.is_valid()
    design = form.cleaned_data.get("design")
    others = [q.design for q in survey.questions.all() if f"q{q.id}" != prefix]
    n = target_n(request.POST)
    context = {
        "form": form,
        "design": design,
        "half_width": expected_half_width(design, n) if design else None,
        "target_n": n,
        "total_if_saved": total_epsilon([*others, design]) if design else None,
    }
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
def survey_delete(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    survey.delete()
    messages.success(request, f"Deleted “{survey.title}”.")
    return redirect("survey:list")
