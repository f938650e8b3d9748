"""Estimates over the API: the same code path as the dashboard."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from estimator.analysis import parse_estimate_options, survey_results
from estimator.randomized_response import CI_METHODS
from survey.models import Survey


@extend_schema(
    parameters=[
        OpenApiParameter("level", OpenApiTypes.FLOAT, description="Confidence level, default 0.95"),
        OpenApiParameter("method", str, enum=list(CI_METHODS)),
    ],
    responses={200: OpenApiTypes.OBJECT},
)
@api_view(["GET"])
def survey_estimates(request: Request, survey_id: int) -> Response:
    """Debiased estimates with confidence intervals for every question of a survey.

    Simulated answers (demo, classroom, ``simulate_responses``) count in ``n`` and in the
    estimates; ``n_simulated`` says how many of ``n`` they are, since the CSV exports
    leave them out.
    """
    survey = get_object_or_404(Survey.objects.owned_by(request.user), pk=survey_id)
    level, method, errors = parse_estimate_options(request.query_params)
    if errors:
        raise ValidationError({"detail": errors})
    return Response(survey_results(survey, level, method).as_dict())
