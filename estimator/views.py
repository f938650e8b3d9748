"""The researcher's dashboard: estimates for each question, from tallies."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from estimator.analysis import parse_estimate_options, survey_results
from estimator.charts import estimates_over_time, forest_plot, over_time_chart, thin
from estimator.randomized_response import CI_METHODS
from survey.models import Survey

POLL_SECONDS = 3


@login_required
@require_GET
def dashboard(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Estimates, forest plot and estimate over time. htmx polls the ``results`` fragment,
    so new answers appear without a reload (each poll reads a few tally rows)."""
    survey = get_object_or_404(Survey.objects.owned_by(request.user), pk=survey_id)
    level, method, errors = parse_estimate_options(request.GET)
    results = survey_results(survey, level, method)
    questions = [r.question for r in results.questions]
    chosen = next((q for q in questions if str(q.id) == request.GET.get("question")), None)
    chosen = chosen or (questions[0] if questions else None)
    points = (
        thin(estimates_over_time(chosen, level, method, survey.current_round)) if chosen else []
    )
    context = {
        "survey": survey,
        "results": results,
        "errors": errors,
        "methods": CI_METHODS,
        "forest": forest_plot(results),
        "chosen": chosen,
        "points": points,
        "over_time": over_time_chart(chosen, points, level) if chosen else "",
        "poll_seconds": POLL_SECONDS,
    }
    template = "estimator/dashboard.html#results" if request.htmx else "estimator/dashboard.html"
    return render(request, template, context)
