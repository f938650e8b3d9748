"""The public submit endpoint: what respondents' browsers call, with no account.

Validation happens before anything is written; storing is one transaction.
"""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.exceptions import ParseError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from survey import ratelimit
from survey.models import InviteRejected, Question, Survey

MAX_ANSWERS = 200


class AnswerSerializer(serializers.Serializer):
    question = serializers.IntegerField()
    value = serializers.IntegerField()


class SubmissionSerializer(serializers.Serializer):
    submission_id = serializers.UUIDField(format="hex_verbose")
    invite = serializers.CharField(required=False, allow_blank=True, max_length=100)
    answers = AnswerSerializer(many=True, allow_empty=False, max_length=MAX_ANSWERS)

    def validate_submission_id(self, value):
        if value.version != 4:
            raise serializers.ValidationError("Must be a random (version 4) UUID.")
        return value

    def validate_answers(self, answers: list[dict]) -> dict[int, int]:
        """Exactly one answer per question of this survey, each a possible report."""
        questions = self.context["questions"]
        values: dict[int, int] = {}
        errors = []
        for answer in answers:
            qid, value = answer["question"], answer["value"]
            question = questions.get(qid)
            if question is None:
                errors.append(f"question {qid} is not a question of this survey")
            elif qid in values:
                errors.append(f"question {qid} is answered more than once")
            elif value not in question.design.output_values:
                allowed = ", ".join(map(str, question.design.output_values))
                errors.append(f"value {value} for question {qid} is not one of {allowed}")
            values[qid] = value
        missing = sorted(set(questions) - set(values))
        if missing:
            errors.append(f"missing answers for question(s) {', '.join(map(str, missing))}")
        if errors:
            raise serializers.ValidationError(errors)
        return values


class SubmissionReceipt(serializers.Serializer):
    submission_id = serializers.UUIDField()
    answers = serializers.IntegerField()
    status = serializers.CharField()


@extend_schema(
    request=SubmissionSerializer,
    responses={
        201: SubmissionReceipt,
        200: OpenApiResponse(SubmissionReceipt, "Already stored (an idempotent retry)."),
        400: OpenApiResponse(description="Malformed submission; nothing stored."),
        403: OpenApiResponse(description="Invite missing, unknown or used."),
        404: OpenApiResponse(description="No such survey."),
        409: OpenApiResponse(description="The survey is not open."),
        413: OpenApiResponse(description="Body over 64 KiB."),
        415: OpenApiResponse(description="Not application/json; nothing stored."),
        429: OpenApiResponse(description="Too many requests from this address; see Retry-After."),
        503: OpenApiResponse(description="Database unavailable; nothing stored; see Retry-After."),
    },
    auth=[],
)
@api_view(["POST"])
@authentication_classes([])
@permission_classes([AllowAny])
def submit_response(request: Request, slug: str) -> Response:
    """Store one respondent's randomized answers (idempotent on ``submission_id``)."""
    wait = ratelimit.retry_after("submit", request)
    if wait is not None:
        return ratelimit.too_many_requests(request, wait)
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > settings.MAX_SUBMISSION_BYTES:
        return Response(
            {"detail": f"The body must be at most {settings.MAX_SUBMISSION_BYTES} bytes."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    # The survey comes with its questions in one query: round trips are most of the cost.
    rows = list(Question.objects.filter(survey__slug=slug).select_related("survey"))
    survey = rows[0].survey if rows else get_object_or_404(Survey, slug=slug)
    questions = {q.id: q for q in rows}
    if not isinstance(request.data, dict):
        raise ParseError("The body must be a JSON object.")
    serializer = SubmissionSerializer(data=request.data, context={"questions": questions})
    serializer.is_valid(raise_exception=True)
    data = serializer.validated_data
    receipt = {
        "submission_id": str(data["submission_id"]),
        "answers": len(data["answers"]),
        "status": "stored",
    }
    if not survey.is_accepting:
        # A retry of a submission stored before the survey closed still gets its receipt.
        if survey.submissions.filter(submission_id=data["submission_id"]).exists():
            return Response(receipt, status=status.HTTP_200_OK)
        return Response(
            {"detail": "This survey is not accepting answers right now."},
            status=status.HTTP_409_CONFLICT,
        )
    try:
        stored = survey.record_submission(
            data["submission_id"], data["answers"], invite_token=data.get("invite")
        )
    except InviteRejected:
        return Response(
            {"invite": ["This invite is missing, unknown or already used."]},
            status=status.HTTP_403_FORBIDDEN,
        )
    return Response(receipt, status=status.HTTP_201_CREATED if stored else status.HTTP_200_OK)
