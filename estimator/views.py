"""The researcher's dashboard: estimates for each question, from tallies."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from estimator.analysis import parse_estimate_options, survey_results
from estimator.randomized_response import CI_METHODS
from survey.models import Survey


@login_required
@require_GET
def dashboard(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_object_or_404(Survey.objects.owned_by(request.user), pk=survey_id)
    level, method, errors = parse_estimate_options(request.GET)
    results = survey_results(survey, level, method)
    context = {"survey": survey, "results": results, "errors": errors, "methods": CI_METHODS}
    return render(request, "estimator/dashboard.html", context)
