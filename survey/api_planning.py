"""Planning through the API: what the builder's live preview shows, for any design.

A researcher (or a script) can ask before creating anything: how many respondents a
design needs for a half-width, the power it gives against a null prevalence and between
two groups, and how much privacy costs at the expected prevalence.
"""

from __future__ import annotations

import math

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from estimator.designs import json_epsilon
from estimator.params import CHOICE_MAX_OPTIONS, CHOICE_MIN_OPTIONS
from survey.api import DesignField, build_design
from survey.builder import DEFAULT_TARGET_N, MAX_TARGET_N, Assumptions, plan
from survey.models import Question


class PlanRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Question.Kind.choices, default=Question.Kind.BINARY)
    options = serializers.IntegerField(
        required=False,
        min_value=CHOICE_MIN_OPTIONS,
        max_value=CHOICE_MAX_OPTIONS,
        help_text="How many options a multiple-choice question has.",
    )
    design = DesignField(
        default={"name": "forced_response", "params": {}},
        help_text='{"name": …, **parameters}, as when creating a question.',
    )
    n = serializers.IntegerField(min_value=1, max_value=MAX_TARGET_N, default=DEFAULT_TARGET_N)
    half_width = serializers.FloatField(
        min_value=0.001,
        max_value=1.0,
        default=0.05,
        help_text="Target half-width; for numbers a share of the range upper − lower.",
    )
    q = serializers.FloatField(min_value=0.001, max_value=0.999, default=0.1)
    q_null = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.05)
    q_other = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.2)
    level = serializers.FloatField(min_value=0.5, max_value=0.999, default=0.95)

    def validate(self, attrs: dict) -> dict:
        design = attrs["design"]
        try:
            attrs["design"] = build_design(
                attrs["kind"], design["name"], design["params"], attrs.get("options")
            )
        except ValidationError as error:
            raise ValidationError({"design": error.detail}) from None
        return attrs


class PlanSerializer(serializers.Serializer):
    kind = serializers.CharField()
    epsilon = serializers.FloatField(allow_null=True, help_text="null for ε = ∞")
    direct = serializers.BooleanField()
    half_width = serializers.FloatField(help_text="Expected half-width at n (worst case).")
    n_for_target = serializers.IntegerField(required=False)
    power_one = serializers.FloatField(required=False, help_text="Power against q_null.")
    power_two = serializers.FloatField(required=False, help_text="Power of q against q_other.")
    price = serializers.FloatField(
        required=False, allow_null=True, help_text="Variance price of privacy at q."
    )
    typical_noise = serializers.FloatField(required=False)
    target = serializers.FloatField(required=False)
    one_bit = serializers.DictField(required=False)
    planning_error = serializers.CharField(required=False)
    arms = serializers.CharField(
        required=False,
        help_text="A design with arms: the assumption the plan makes about those who do "
        "not follow the instructions (e.g. carriers answer honestly); half_width and "
        "n_for_target are for the prevalence, price is that of the detection and privacy.",
    )


@extend_schema(request=PlanRequestSerializer, responses={200: PlanSerializer})
@api_view(["POST"])
def plan_endpoint(request: Request) -> Response:
    """Plan a question: the builder's preview figures for a design and assumptions."""
    body = PlanRequestSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    data = dict(body.validated_data)
    design = data.pop("design")
    data.pop("kind"), data.pop("options", None)
    result = plan(design, Assumptions(**data))
    result.pop("design")
    result["epsilon"] = json_epsilon(design.epsilon)
    if "price" in result and math.isinf(result["price"]):
        result["price"] = None
    return Response(result)
