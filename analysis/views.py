"""The researcher's dashboard: estimates for each question, from tallies; breakdowns,
cross-tabs and the model, from grouped counts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from analysis.audit import record_analysis
from analysis.charts import (
    IntervalRow,
    arms_over_time,
    bounds_scale,
    estimates_over_time,
    forest_plot,
    interval_chart,
    means_over_time,
    option_estimates_over_time,
    options_over_time_chart,
    over_time_chart,
    question_panels,
    thin,
)
from analysis.grouped import (
    BROKEN_DOWN,
    BY_ARM,
    CROSSTAB_ARMS,
    DIRECT_CATEGORICAL,
    NO_ANSWER,
    RANDOMIZED_CATEGORICAL,
    AnalysisError,
    breakdown,
    compare,
    crosstab_of,
    has_line,
    regression,
)
from analysis.results import parse_estimate_options, survey_results
from estimator.intervals import INTERVAL_METHODS
from responses.counts import survey_counts
from survey.models import Question, Role
from survey.permissions import can_download_rows, survey_for

POLL_SECONDS = 3


@login_required
@require_GET
def dashboard(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Estimates for every question (its own panel by kind), forest plot and estimate over
    time. htmx polls the ``results`` fragment, so new answers appear without a reload
    (each poll reads a few tally rows)."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, method, errors = parse_estimate_options(request.GET)
    counts = survey_counts(survey)
    results = survey_results(survey, level, method, counts=counts)
    timed = [r.question for r in results.questions]
    chosen = next((q for q in timed if str(q.id) == request.GET.get("question")), None)
    chosen = chosen or (timed[0] if timed else None)
    points, series, over_time = [], [], ""
    hours = counts.hours(chosen.id) if chosen else []
    if chosen and chosen.kind == "choice":
        series = [thin(s) for s in option_estimates_over_time(chosen, hours, level, method)]
        over_time = options_over_time_chart(chosen, chosen.options, series, level)
    elif chosen and chosen.kind == "number":
        points = thin(means_over_time(chosen, hours, level))
        over_time = over_time_chart(chosen, points, level)
    elif chosen and chosen.design.has_arms and chosen.design.direct_share is None:
        points = arms_over_time(chosen, hours, level)
        over_time = over_time_chart(chosen, points, level)
    elif chosen:
        points = thin(estimates_over_time(chosen, hours, level, method))
        over_time = over_time_chart(chosen, points, level)
    panels = question_panels(results)
    context = {
        "survey": survey,
        "privacy": survey.privacy,
        "results": results,
        "panels": panels,
        "has_binary": any(p.kind == "binary" for p in panels),
        "errors": errors,
        "methods": INTERVAL_METHODS,
        "forest": forest_plot(results),
        "timed": timed,
        "chosen": chosen,
        "points": points,
        "option_series": list(zip(chosen.options, series, strict=True)) if series else [],
        "over_time": over_time,
        "poll_seconds": POLL_SECONDS,
        "rows": can_download_rows(survey),
    }
    template = "analysis/dashboard.html#results" if request.htmx else "analysis/dashboard.html"
    return render(request, template, context)


HIDDEN = "hidden: too few respondents in this or another cell"


def _analysis_page(request: HttpRequest, template: str, context: dict) -> HttpResponse:
    """The whole page, or only its ``analysis`` fragment when htmx swaps it in."""
    return render(request, f"{template}#analysis" if request.htmx else template, context)


def _choices(survey, randomized: bool, kinds, *, arms=lambda design: True) -> list:
    """The questions an analysis offers; a design with arms where ``arms(design)``."""
    return [
        q
        for q in survey.questions.all()
        if q.design.randomized == randomized
        and q.kind in kinds
        and (not q.design.has_arms or arms(q.design))
    ]


@login_required
@require_GET
def breakdown_view(request: HttpRequest, survey_id: int) -> HttpResponse:
    """A randomized question's estimate (or mean) per category of a directly asked one;
    hidden cells look alike and carry no numbers (see :func:`analysis.grouped.breakdown`)."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, method, errors = parse_estimate_options(request.GET)
    questions = _choices(survey, True, BROKEN_DOWN)
    groups = _choices(survey, False, DIRECT_CATEGORICAL)
    picked = _picked(request, "question", questions), _picked(request, "by", groups)
    result, chart, comparison = None, "", None
    if all(picked):
        try:
            result = breakdown(survey, picked[0].id, picked[1].id, level, method)
            record_analysis(survey, request.user, result)
        except AnalysisError as error:
            errors.append(error.message)
    arms_comparison = None
    if result and picked[0].design.has_arms and not picked[0].design.split_ballot:
        try:
            arms_comparison = compare(survey, picked[0].id, BY_ARM, 0, 1, level)
        except AnalysisError as error:
            errors.append(error.message)
    if result and result["kind"] == Question.Kind.BINARY and "a" in request.GET:
        try:
            comparison = compare(
                survey,
                picked[0].id,
                picked[1].id,
                request.GET.get("a"),
                request.GET.get("b"),
                level,
            )
        except AnalysisError as error:
            errors.append(error.message)
    if result:
        number = result["kind"] == Question.Kind.NUMBER
        chart = interval_chart(
            _breakdown_rows(result),
            title=f"“{result['text']}” by “{result['by_text']}”, {level * 100:g} % intervals",
            label="breakdown",
            scale=bounds_scale(result["lower"], result["upper"]) if number else None,
        )
    return _analysis_page(
        request,
        "analysis/breakdown.html",
        {
            "survey": survey,
            "questions": questions,
            "groups": groups,
            "question": picked[0],
            "by": picked[1],
            "result": result,
            "chart": chart,
            "comparison": comparison,
            "arms_comparison": arms_comparison,
            "comparable": [c for c in (result or {}).get("categories", []) if not c["suppressed"]],
            "errors": errors,
            "level": level,
            "method": method,
            "methods": INTERVAL_METHODS,
            "hidden": HIDDEN,
            "no_answer": NO_ANSWER,
        },
    )


def _picked(request: HttpRequest, name: str, candidates: list, default: int = 0):
    """The candidate the query string names, else the ``default``-th (or None)."""
    wanted = request.GET.get(name)
    found = next((q for q in candidates if str(q.id) == wanted), None)
    if found or not candidates:
        return found
    return candidates[min(default, len(candidates) - 1)]


def _breakdown_rows(result: dict) -> list[IntervalRow]:
    """Chart rows: per category (per option of a choice question), hidden ones as words."""
    rows = []
    for cell in [{"text": "All", "suppressed": False, **result["overall"]}, *result["categories"]]:
        if cell["suppressed"]:
            rows.append(IntervalRow(cell["text"], note=HIDDEN))
        elif "options" in cell:
            rows += [
                IntervalRow(
                    f"{cell['text']}: {o['text']}", o["estimate"], o["ci_low"], o["ci_high"]
                )
                for o in cell["options"]
                if o["estimate"] is not None
            ]
        elif cell["ci_low"] is not None:  # the mean of a number question is its estimate
            estimate = cell.get("estimate", cell.get("mean"))
            note = f"n = {cell['n']}"
            rows.append(IntervalRow(cell["text"], estimate, cell["ci_low"], cell["ci_high"], note))
    return rows


@login_required
@require_GET
def crosstab_view(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The joint prevalences of two randomized questions, with phi and the odds ratio
    for two yes/no ones (see :func:`analysis.grouped.crosstab_of`)."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, _, errors = parse_estimate_options(request.GET)
    questions = _choices(survey, True, RANDOMIZED_CATEGORICAL, arms=lambda design: False)
    with_arms = [q for q in _choices(survey, True, RANDOMIZED_CATEGORICAL) if q.design.has_arms]
    a, b = _picked(request, "a", questions), _picked(request, "b", questions, default=1)
    result, chart = None, ""
    if a and b and a != b:
        try:
            result = crosstab_of(survey, a.id, b.id, level)
            record_analysis(survey, request.user, result)
        except AnalysisError as error:
            errors.append(error.message)
    if result:
        chart = interval_chart(
            [
                IntervalRow(
                    f"{c['a_text']} × {c['b_text']}", c["estimate"], c["ci_low"], c["ci_high"]
                )
                for c in result["cells"]
            ],
            title=f"Joint prevalences of “{result['a_text']}” and “{result['b_text']}”",
            label="crosstab",
        )
    return _analysis_page(
        request,
        "analysis/crosstab.html",
        {
            "survey": survey,
            "questions": questions,
            "a": a,
            "b": b,
            "result": result,
            "rows": _table(result) if result else [],
            "with_arms": with_arms,
            "crosstab_arms": CROSSTAB_ARMS,
            "chart": chart,
            "errors": errors,
            "level": level,
        },
    )


def option_term(result: dict | None) -> str | None:
    """A dummy-coded term of this model (``q1[Law]``), to explain such terms with."""
    terms = [c["term"] for c in result["coefficients"]] if result else []
    return next((term for term in terms if "[" in term), None)


def _table(result: dict) -> list[tuple[str, list[dict]]]:
    """The cells as rows of the first question's options."""
    width = len(result["b_options"])
    return [
        (text, result["cells"][i * width : (i + 1) * width])
        for i, text in enumerate(result["a_options"])
    ]


@login_required
@require_GET
def model_view(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Logistic regression of a randomized yes/no question on directly asked covariates
    (and at most one other randomized yes/no question), its coefficients in a table and
    its odds ratios on a log axis."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, _, errors = parse_estimate_options(request.GET)
    outcomes = _choices(
        survey, True, (Question.Kind.BINARY,), arms=lambda design: design.regression_with_arms
    )
    covariates = _choices(survey, False, DIRECT_CATEGORICAL + (Question.Kind.NUMBER,))
    outcome = _picked(request, "outcome", outcomes)
    latent = [q for q in outcomes if q != outcome and has_line(q)]
    wanted = set(request.GET.getlist("covariates"))
    chosen = [q for q in covariates + latent if str(q.id) in wanted] or covariates[:1]
    result, chart = None, ""
    if outcome and chosen:
        try:
            result = regression(survey, outcome.id, [q.id for q in chosen], level)
            record_analysis(survey, request.user, result)
        except AnalysisError as error:
            errors.append(error.message)
    if result:
        chart = interval_chart(
            [
                IntervalRow(c["term"], c["odds_ratio"], c["ci_low"], c["ci_high"])
                for c in result["coefficients"][1:]
            ],
            title=f"Odds ratios for “{outcome.text}” with {level * 100:g} % intervals",
            label="model",
            odds_ratios=True,
        )
    return _analysis_page(
        request,
        "analysis/model.html",
        {
            "survey": survey,
            "outcomes": outcomes,
            "covariates": covariates,
            "latent": latent,
            "outcome": outcome,
            "chosen": chosen,
            "result": result,
            "chart": chart,
            "errors": errors,
            "level": level,
            "option_term": option_term(result),
        },
    )
