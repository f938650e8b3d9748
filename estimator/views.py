"""The researcher's dashboard: estimates for each question, from tallies."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from estimator.analysis import survey_results
from estimator.randomized_response import CI_METHODS, DEFAULT_LEVEL, DEFAULT_METHOD
from survey.models import Survey


def parse_estimate_options(params) -> tuple[float, str, list[str]]:
    """Level and method from a query string, with readable errors (shared with the API)."""
    errors = []
    method = params.get("method", DEFAULT_METHOD)
    if method not in CI_METHODS:
        errors.append(f"method must be one of {', '.join(CI_METHODS)}")
        method = DEFAULT_METHOD
    try:
        level = float(params.get("level", DEFAULT_LEVEL))
        if not 0 < level < 1:
            raise ValueError
    except ValueError:
        errors.append("level must be a number strictly between 0 and 1, such as 0.95")
        level = DEFAULT_LEVEL
    return level, method, errors


@login_required
@require_GET
def dashboard(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_object_or_404(Survey.objects.owned_by(request.user), pk=survey_id)
    level, method, errors = parse_estimate_options(request.GET)
    results = survey_results(survey, level, method)
    context = {"survey": survey, "results": results, "errors": errors, "methods": CI_METHODS}
    return render(request, "estimator/dashboard.html", context)
