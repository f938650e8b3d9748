"""Breakdowns, cross-tabs and regression over the API: the same code as the dashboard.

Each endpoint reads grouped counts (:mod:`analysis.grouped`), never individual answers,
and answers 404 to anyone without at least the viewer role on the survey.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view, renderer_classes
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from analysis.api import ArmCount, ArmsQuantities
from analysis.audit import record_analysis
from analysis.grouped import (
    AnalysisError,
    breakdown,
    breakdowns_csv,
    compare,
    crosstab_of,
    regression,
)
from analysis.results import parse_estimate_options
from estimator.randomized_response import CI_METHODS
from survey.api import CSV_RESPONSE, CSVRenderer, csv_download
from survey.models import AuditEntry, Role
from survey.permissions import survey_for


class IntervalFields(serializers.Serializer):
    estimate = serializers.FloatField(allow_null=True)
    estimate_unbiased = serializers.FloatField(allow_null=True)
    std_error = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)


class BreakdownOptionSerializer(IntervalFields):
    index = serializers.IntegerField()
    text = serializers.CharField()
    count = serializers.IntegerField()
    raw_rate = serializers.FloatField(allow_null=True)


class BreakdownEstimateSerializer(ArmsQuantities):
    """An estimate entry: yes/no keys for a binary question, ``options`` for a choice
    one, the mean and its t interval for a number one."""

    n = serializers.IntegerField(required=False)
    yes_count = serializers.IntegerField(required=False)
    raw_yes_rate = serializers.FloatField(required=False, allow_null=True)
    estimate = serializers.FloatField(required=False, allow_null=True)
    estimate_unbiased = serializers.FloatField(required=False, allow_null=True)
    std_error = serializers.FloatField(required=False, allow_null=True)
    ci_low = serializers.FloatField(required=False, allow_null=True)
    ci_high = serializers.FloatField(required=False, allow_null=True)
    options = BreakdownOptionSerializer(many=True, required=False)
    mean = serializers.FloatField(
        required=False, allow_null=True, help_text="number questions: clipped to the bounds"
    )
    mean_unbiased = serializers.FloatField(required=False, allow_null=True)
    contradicts_design = serializers.BooleanField(required=False)
    skipped = serializers.IntegerField(
        required=False,
        help_text="Respondents (of this group) who chose 'prefer not to answer': not in n, "
        "not in the estimate; counted in the group's size for hiding small groups.",
    )
    population = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="N of the finite-population correction applied (a group: its share of "
        "the survey's population size); null when none.",
    )
    arms = ArmCount(
        many=True,
        required=False,
        help_text="A design with arms: the group's reports per arm (the estimate is π, its "
        "interval from the profile likelihood).",
    )
    findings = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="A design with arms: what the detection found in this group, in words.",
    )
    warning = serializers.CharField(
        allow_null=True, required=False, help_text="Set when nothing can be estimated yet."
    )


class BreakdownCategorySerializer(BreakdownEstimateSerializer):
    category = serializers.IntegerField(
        allow_null=True,
        help_text="the option's index; null for those who left the grouping question "
        'unanswered ("No answer", listed when there are any)',
    )
    text = serializers.CharField()
    suppressed = serializers.BooleanField(
        help_text="true: hidden, and then no other number is given"
    )


class BreakdownSerializer(serializers.Serializer):
    survey = serializers.IntegerField()
    question = serializers.IntegerField()
    text = serializers.CharField()
    kind = serializers.ChoiceField(["binary", "choice", "number"])
    by = serializers.IntegerField()
    by_text = serializers.CharField()
    min_cell_count = serializers.IntegerField(
        help_text="k: a cell with fewer respondents is hidden, with whatever else it takes "
        "so that no hidden cell can be recovered by differencing"
    )
    level = serializers.FloatField()
    method = serializers.CharField(
        help_text='"t" for a number question, "profile" (likelihood) for a design with arms'
    )
    lower = serializers.IntegerField(required=False, help_text="number questions only")
    upper = serializers.IntegerField(required=False, help_text="number questions only")
    overall = BreakdownEstimateSerializer(
        help_text="the question's estimate over all its respondents, as on the results page"
    )
    categories = BreakdownCategorySerializer(many=True)
    quantities = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        required=False,
        help_text='A design with arms: {"key", "label"} of each quantity beside π that every '
        "entry carries under its key",
    )


class AssociationSerializer(serializers.Serializer):
    estimate = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    defined = serializers.BooleanField(
        help_text="false when a margin of the table is empty; when true, null means ∞"
    )


class CrossTabCellSerializer(IntervalFields):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    a_text = serializers.CharField()
    b_text = serializers.CharField()


class CrossTabSerializer(serializers.Serializer):
    survey = serializers.IntegerField()
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    a_text = serializers.CharField()
    b_text = serializers.CharField()
    a_options = serializers.ListField(child=serializers.CharField())
    b_options = serializers.ListField(child=serializers.CharField())
    n = serializers.IntegerField()
    level = serializers.FloatField()
    cells = CrossTabCellSerializer(many=True)
    phi = AssociationSerializer(allow_null=True, help_text="two yes/no questions only")
    odds_ratio = AssociationSerializer(allow_null=True, help_text="two yes/no questions only")
    design_p_value = serializers.FloatField()
    contradicts_design = serializers.BooleanField()


class RegressionRequestSerializer(serializers.Serializer):
    outcome = serializers.IntegerField(help_text="a randomized yes/no question")
    covariates = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="one or more questions: directly asked ones, and at most one randomized "
        "yes/no question other than the outcome (its truth enters as a latent 0/1, as in "
        "rr::rrreg.predictor)",
    )
    level = serializers.FloatField(required=False, help_text="default 0.95")


class RegressionCovariateSerializer(serializers.Serializer):
    question = serializers.IntegerField()
    column = serializers.CharField()
    text = serializers.CharField()
    kind = serializers.CharField()
    randomized = serializers.BooleanField(help_text="a randomized covariate: its truth is latent")


class RegressionCoefficientSerializer(serializers.Serializer):
    term = serializers.CharField()
    estimate = serializers.FloatField()
    std_error = serializers.FloatField()
    z = serializers.FloatField()
    p_value = serializers.FloatField()
    odds_ratio = serializers.FloatField()
    ci_low = serializers.FloatField()
    ci_high = serializers.FloatField()
    std_error_opg = serializers.FloatField(
        allow_null=True, help_text="standard error from the outer product of gradients (rr)"
    )
    lr_p_value = serializers.FloatField(
        allow_null=True, help_text="likelihood-ratio test of the term (null for the intercept)"
    )


class HonestySerializer(serializers.Serializer):
    estimate = serializers.FloatField()
    std_error = serializers.FloatField()
    ci_low = serializers.FloatField()
    ci_high = serializers.FloatField()


class RegressionSerializer(serializers.Serializer):
    honesty = HonestySerializer(
        required=False,
        help_text="A stochastic-lie-detector outcome: the carriers' honesty t, estimated "
        "beside the coefficients (RRreg's RRlog with model SLD); Wald interval.",
    )
    survey = serializers.IntegerField()
    outcome = serializers.IntegerField()
    outcome_column = serializers.CharField()
    covariates = RegressionCovariateSerializer(many=True)
    t = serializers.FloatField()
    c = serializers.FloatField()
    n = serializers.IntegerField()
    n_patterns = serializers.IntegerField()
    log_likelihood = serializers.FloatField()
    level = serializers.FloatField()
    coefficients = RegressionCoefficientSerializer(many=True)
    std_error_method = serializers.ChoiceField(
        choices=["observed_information"],
        help_text="how std_error, z, p_value and the interval are computed",
    )


class CompareGroupSerializer(serializers.Serializer):
    category = serializers.IntegerField(allow_null=True)
    text = serializers.CharField()
    n = serializers.IntegerField()
    estimate = serializers.FloatField()
    std_error = serializers.FloatField(
        help_text="as in the breakdown: the difference's std_error is the two combined"
    )
    population = serializers.IntegerField(
        allow_null=True,
        help_text="N of the finite-population correction applied to this group, as in the "
        "breakdown (its share of the survey's population size); null when none (always "
        "for by=arm). The difference's std_error, interval and Wald p-value use it; the "
        "likelihood-ratio p-value does not.",
    )


class CompareSerializer(serializers.Serializer):
    survey = serializers.IntegerField()
    question = serializers.IntegerField()
    text = serializers.CharField()
    by = serializers.JSONField(
        help_text='the grouping question\'s id, or "arm" for the two arms of a design with arms'
    )
    by_text = serializers.CharField()
    min_cell_count = serializers.IntegerField()
    groups = CompareGroupSerializer(many=True)
    meaning = serializers.CharField(
        required=False, help_text="by=arm: what the arms' difference measures, in words"
    )
    a = serializers.FloatField(help_text="prevalence in group a")
    b = serializers.FloatField(help_text="prevalence in group b")
    difference = serializers.FloatField(help_text="a − b")
    std_error = serializers.FloatField()
    ci = serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2)
    level = serializers.FloatField()
    wald_p_value = serializers.FloatField()
    lr_p_value = serializers.FloatField()


ERROR = {400: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT}
LEVEL = OpenApiParameter("level", OpenApiTypes.FLOAT, description="Confidence level, default 0.95")


def _options(params) -> tuple[float, str]:
    level, method, errors = parse_estimate_options(params)
    if errors:
        raise ValidationError({"detail": errors})
    return level, method


def _answer(request: Request, analysis, survey, *args) -> Response:
    """The analysis's result, its run written in the survey's audit log; or a 400."""
    try:
        result = analysis(survey, *args)
    except AnalysisError as error:
        raise ValidationError({error.field: [error.message]}) from None
    record_analysis(survey, request.user, result)
    return Response(result)


@extend_schema(
    parameters=[
        OpenApiParameter("question", OpenApiTypes.INT, required=True),
        OpenApiParameter("by", OpenApiTypes.INT, required=True),
        LEVEL,
        OpenApiParameter("method", str, enum=list(CI_METHODS)),
    ],
    responses={200: BreakdownSerializer, **ERROR},
)
@api_view(["GET"])
def breakdown_endpoint(request: Request, survey_id: int) -> Response:
    """A randomized question's estimate (yes/no, choice or the mean of a number) per
    category of a directly asked one, and for those who left it unanswered.

    Cells with fewer than the survey's ``min_cell_count`` respondents are hidden, and so
    are further cells, chosen over every breakdown of the question together, until no
    small group can be recovered from the overall figure and the shown cells of all of
    them; a hidden cell carries no numbers.
    """
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, method = _options(request.query_params)
    params = request.query_params
    return _answer(
        request, breakdown, survey, params.get("question"), params.get("by"), level, method
    )


@extend_schema(
    parameters=[
        OpenApiParameter("a", OpenApiTypes.INT, required=True),
        OpenApiParameter("b", OpenApiTypes.INT, required=True),
        LEVEL,
    ],
    responses={200: CrossTabSerializer, **ERROR},
)
@api_view(["GET"])
def crosstab_endpoint(request: Request, survey_id: int) -> Response:
    """Joint prevalences of two randomized questions, with phi and the odds ratio when
    both are yes/no; ``contradicts_design`` when no true table explains the reports."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, _ = _options(request.query_params)
    return _answer(
        request,
        crosstab_of,
        survey,
        request.query_params.get("a"),
        request.query_params.get("b"),
        level,
    )


@extend_schema(
    parameters=[
        OpenApiParameter("question", OpenApiTypes.INT, required=True),
        OpenApiParameter(
            "by",
            str,
            required=True,
            description='a directly asked question\'s id, or "arm": the two arms of a design '
            "with arms, each read as if everyone followed the coins",
        ),
        OpenApiParameter(
            "a",
            str,
            required=True,
            description="a category of by (option index, or none), or an arm (0 or 1)",
        ),
        OpenApiParameter("b", str, required=True, description="the other category"),
        LEVEL,
    ],
    responses={200: CompareSerializer, **ERROR},
)
@api_view(["GET"])
def compare_endpoint(request: Request, survey_id: int) -> Response:
    """The difference of a randomized yes/no question's prevalence between two categories
    of a directly asked question, with its interval and the Wald and likelihood-ratio
    p-values of "no difference". A category the breakdown hides is refused. For a design
    with arms, π is estimated in each group with its second parameter (honesty t,
    cheaters γ) free; ``by=arm`` compares its two arms, each read as if everyone followed
    the coins: a difference says some respondents did not."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, _ = _options(request.query_params)
    params = request.query_params
    return _answer(
        request,
        compare,
        survey,
        params.get("question"),
        params.get("by"),
        params.get("a"),
        params.get("b"),
        level,
    )


@extend_schema(request=RegressionRequestSerializer, responses={200: RegressionSerializer, **ERROR})
@api_view(["POST"])
def regression_endpoint(request: Request, survey_id: int) -> Response:
    """Logistic regression of a randomized yes/no question on directly asked covariates
    (and at most one randomized yes/no covariate), by maximum likelihood from grouped
    counts (the model of R's ``rr::rrreg``)."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    body = request.data
    if not isinstance(body, dict):
        raise ValidationError({"detail": ["send a JSON object with outcome and covariates"]})
    level, _ = _options({"level": str(body["level"])} if "level" in body else {})
    return _answer(request, regression, survey, body.get("outcome"), body.get("covariates"), level)


@extend_schema(
    parameters=[LEVEL, OpenApiParameter("method", str, enum=list(CI_METHODS))],
    responses={**CSV_RESPONSE, 400: OpenApiTypes.OBJECT},
)
@api_view(["GET"])
@renderer_classes([JSONRenderer, CSVRenderer])
def breakdowns_csv_endpoint(request: Request, survey_id: int):
    """Every breakdown (each randomized yes/no, choice or number question by each
    directly asked yes/no or choice question) as CSV, with the cells hidden as in the
    API."""
    survey = survey_for(request, survey_id, Role.VIEWER)
    level, method = _options(request.query_params)
    text = breakdowns_csv(survey, level, method)
    AuditEntry.record(survey, request.user, AuditEntry.Action.EXPORT, "breakdowns (CSV)")
    return csv_download(text, f"survey-{survey.id}-breakdowns.csv")
