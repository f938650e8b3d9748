"""Estimates over the API: the same code path as the dashboard, every field typed in the
OpenAPI schema (one entry shape per kind of question)."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.decorators import api_view, renderer_classes
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from analysis.exports import estimates_csv
from analysis.results import METHOD_NAMES, parse_estimate_options, survey_results
from survey.api import CSV_RESPONSE, CSVRenderer, csv_download
from survey.models import AuditEntry, Role
from survey.permissions import survey_for


def _number(help_text: str) -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, help_text=help_text)


class EntryBase(serializers.Serializer):
    question = serializers.IntegerField()
    text = serializers.CharField()
    n = serializers.IntegerField(help_text="Reports counted, simulated ones included.")
    n_simulated = serializers.IntegerField(help_text="Of n, simulated (exports leave them out).")
    skipped = serializers.IntegerField(
        help_text="Respondents who chose 'prefer not to answer': not in n, not in the estimate."
    )
    level = serializers.FloatField()
    method = serializers.CharField(help_text="The interval method used (t for a mean).")
    epsilon = _number("The question's ε; null when it has no privacy (ε = ∞, e.g. direct).")
    population = serializers.IntegerField(
        allow_null=True,
        help_text="The population N whose finite-population correction the standard error "
        "and interval apply; null without one (or when more than N answered).",
    )
    direct = serializers.BooleanField(
        required=False, help_text="Present (true) when the question is asked directly."
    )


class ArmCount(serializers.Serializer):
    index = serializers.IntegerField(help_text="The arm (0 or 1).")
    n = serializers.IntegerField(help_text="Reports given in this arm.")
    yes_count = serializers.IntegerField()


class Quantity(serializers.Serializer):
    estimate = _number("The maximum-likelihood estimate.")
    std_error = _number("Its standard error (null where not identified).")
    ci_low = _number("Lower end of its profile-likelihood interval.")
    ci_high = _number("Upper end of its profile-likelihood interval.")


class ArmsQuantities(serializers.Serializer):
    """A design with arms' quantities beside π, each under its own key."""

    honesty = Quantity(required=False, help_text="Stochastic lie detector: carriers' honesty t.")
    honest_no = Quantity(required=False, help_text="Cheating detection: honest 'no' β.")
    cheaters = Quantity(required=False, help_text="Cheating detection: cheaters γ.")
    innocuous = Quantity(required=False, help_text="The innocuous question's prevalence.")


class BallotQuantity(serializers.Serializer):
    estimate = _number("The estimate (null until that ballot has answers).")
    std_error = _number("Its standard error.")
    ci_low = _number("Lower end of its interval (the entry's level; Wald for a difference).")
    ci_high = _number("Upper end of its interval.")


class BallotDifference(BallotQuantity):
    p_value = _number("Test of no difference: Wald's for shares, Welch's t for means.")


class SplitBallot(serializers.Serializer):
    """A yes/no or number question's split ballot (a question with direct_share); the
    estimate above it reads the randomized ballot alone (arms: 0 randomized, 1 direct)."""

    direct = serializers.JSONField(
        required=False,
        help_text="true when the question is asked directly; for a split ballot the direct "
        "ballot's proportion of 'yes' or mean {estimate, std_error, ci_low, ci_high}.",
    )
    direct_share = serializers.FloatField(
        required=False, help_text="A split ballot: the share its devices asked directly."
    )
    difference = BallotDifference(
        required=False,
        help_text="A split ballot: the randomized estimate minus the direct one (positive: "
        "more admitted, or a higher mean, with randomized response); a proportion's with "
        "Wald's interval, a mean's with Welch's t (null until each ballot has two answers).",
    )
    words = serializers.CharField(required=False, help_text="A split ballot's difference in words.")


class BinaryEntry(SplitBallot, EntryBase, ArmsQuantities):
    yes_count = serializers.IntegerField()
    raw_yes_rate = _number("Share of 'yes' reports (null without reports).")
    estimate = _number("Estimated prevalence, clipped to [0, 1] (maximum likelihood).")
    estimate_unbiased = _number("The unbiased estimate (may leave [0, 1]).")
    std_error = _number("Standard error of the estimate.")
    ci_low = _number("Lower end of the interval.")
    ci_high = _number("Upper end of the interval.")
    arms = ArmCount(
        many=True,
        required=False,
        help_text="A design with arms: reports per arm (the estimate is π, its interval from "
        "the profile likelihood).",
    )
    findings = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="What the detection found, in words (e.g. cheaters significantly above 0).",
    )
    warning = serializers.CharField(
        allow_null=True, required=False, help_text="Set when nothing can be estimated yet."
    )


class OptionEntry(serializers.Serializer):
    index = serializers.IntegerField(help_text="The option index a report holds.")
    text = serializers.CharField()
    count = serializers.IntegerField(help_text="Reports of this option.")
    raw_rate = _number("Share of reports of this option.")
    estimate = _number("The maximum-likelihood share on the simplex.")
    estimate_unbiased = _number("P⁻¹λ̂ for this option (may leave [0, 1]).")
    std_error = _number("Standard error of the unbiased share.")
    ci_low = _number("Lower end of the option's interval.")
    ci_high = _number("Upper end of the option's interval.")
    direct = BallotQuantity(
        required=False,
        help_text="A split ballot: this option's share on the direct ballot (the figures "
        "above read the randomized ballot alone).",
    )
    difference = BallotDifference(
        required=False,
        help_text="A split ballot: this option's randomized share minus its direct one, on "
        "the option's own design line (positive: more chose it under randomized response).",
    )
    words = serializers.CharField(required=False, help_text="That difference in words.")


class ChoiceArmCount(serializers.Serializer):
    index = serializers.IntegerField(help_text="The ballot: 0 randomized, 1 asked directly.")
    n = serializers.IntegerField(help_text="Reports given on this ballot.")
    counts = serializers.ListField(
        child=serializers.IntegerField(), help_text="Reports of each option on this ballot."
    )


class EqualityTestEntry(serializers.Serializer):
    statistic = serializers.FloatField(help_text="Wald χ² of equal shares on both ballots.")
    df = serializers.IntegerField(help_text="Its degrees of freedom (options − 1).")
    p_value = serializers.FloatField()


class ChoiceEntry(EntryBase):
    kind = serializers.ChoiceField(choices=["choice"])
    options = OptionEntry(many=True)
    warning = serializers.CharField(
        allow_null=True, help_text="Set when the reports contradict the design."
    )
    arms = ChoiceArmCount(
        many=True, required=False, help_text="A split ballot: reports per ballot."
    )
    direct_share = serializers.FloatField(
        required=False, help_text="A split ballot: the share its devices asked directly."
    )
    equality_test = EqualityTestEntry(
        required=False,
        allow_null=True,
        help_text="A split ballot: one test that both ballots give the same shares (null "
        "until both have answers).",
    )
    words = serializers.CharField(required=False, help_text="That test in words.")


class BinEntry(serializers.Serializer):
    low = serializers.IntegerField(allow_null=True, help_text="Lowest report (null: open).")
    high = serializers.IntegerField(allow_null=True, help_text="Highest report (null: open).")
    count = serializers.IntegerField()


class NumberArmCount(serializers.Serializer):
    index = serializers.IntegerField(help_text="The ballot: 0 randomized, 1 asked directly.")
    n = serializers.IntegerField(help_text="Answers given on this ballot.")


class NumberEntry(SplitBallot, EntryBase):
    kind = serializers.ChoiceField(choices=["number"])
    mean = _number("Mean of the reports, clipped to [lower, upper] for display.")
    mean_unbiased = _number("Mean of the reports: unbiased for the mean of clipped values.")
    std_error = _number("Standard error of the mean (sample variance).")
    ci_low = _number("Lower end of the t interval, clipped to the bounds.")
    ci_high = _number("Upper end of the t interval, clipped to the bounds.")
    lower = serializers.IntegerField()
    upper = serializers.IntegerField()
    noise_variance = serializers.FloatField(help_text="Variance the privacy noise adds.")
    typical_noise = serializers.FloatField(help_text="The noise's standard deviation.")
    warning = serializers.CharField(
        allow_null=True, help_text="Set when the reports contradict the design."
    )
    histogram = BinEntry(
        many=True,
        help_text="Reports per bin, from the tallies (a split ballot: its randomized ballot's).",
    )
    arms = NumberArmCount(
        many=True, required=False, help_text="A split ballot: answers per ballot."
    )


ESTIMATE_ENTRY = PolymorphicProxySerializer(
    component_name="EstimateEntry",
    serializers=[BinaryEntry, ChoiceEntry, NumberEntry],
    resource_type_field_name=None,
    many=True,
)


class SurveyEstimates(serializers.Serializer):
    survey = serializers.IntegerField()
    n_responses = serializers.IntegerField()
    n_simulated = serializers.IntegerField()
    epsilon_total = _number("Σ ε over the randomized questions; null when ∞.")
    n_direct = serializers.IntegerField(help_text="Questions asked directly, left out of ε.")
    population_size = serializers.IntegerField(
        allow_null=True, help_text="The survey's population size N, when set."
    )
    level = serializers.FloatField()
    method = serializers.CharField()
    questions = ESTIMATE_ENTRY


class OptionErrors(serializers.Serializer):
    detail = serializers.ListField(child=serializers.CharField())


@extend_schema(
    parameters=[
        OpenApiParameter("level", OpenApiTypes.FLOAT, description="Confidence level, default 0.95"),
        OpenApiParameter("method", str, enum=list(METHOD_NAMES)),
    ],
    responses={
        200: SurveyEstimates,
        400: OpenApiResponse(OptionErrors, "A bad level or method."),
        404: OpenApiResponse(description="No such survey, or not yours to see."),
    },
)
@api_view(["GET"])
def survey_estimates(request: Request, survey_id: int) -> Response:
    """Debiased estimates with confidence intervals for every question of a survey.

    Simulated answers (demo, classroom, ``simulate_responses``) count in ``n`` and in the
    estimates; ``n_simulated`` says how many of ``n`` they are, since the CSV exports
    leave them out.
    """
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, method, errors = parse_estimate_options(request.query_params)
    if errors:
        raise ValidationError({"detail": errors})
    return Response(survey_results(survey, level, method).as_dict())


@extend_schema(
    parameters=[
        OpenApiParameter("level", OpenApiTypes.FLOAT, description="default 0.95"),
        OpenApiParameter("method", str, enum=list(METHOD_NAMES)),
    ],
    responses={**CSV_RESPONSE, 400: OpenApiResponse(OptionErrors, "A bad level or method.")},
)
@api_view(["GET"])
@renderer_classes([JSONRenderer, CSVRenderer])
def estimates_csv_endpoint(request: Request, survey_id: int) -> HttpResponse:
    """The estimates endpoint's numbers as CSV: one row per yes/no question, per option of
    a multiple-choice question, and per number question (its mean)."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, method, errors = parse_estimate_options(request.query_params)
    if errors:
        raise ValidationError({"detail": errors})
    text = estimates_csv(survey_results(survey, level, method))
    AuditEntry.record(survey, request.user, AuditEntry.Action.EXPORT, "estimates (CSV)")
    return csv_download(text, f"survey-{survey.id}-estimates.csv")
