"""The public submit endpoint: what respondents' browsers call, with no account.

Validation happens before anything is written; storing is one transaction. The body the
respondent page sends takes a shortcut past DRF (:func:`plain_submissions_first`); the
DRF view answers, and the OpenAPI schema documents, everything else.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    permission_classes,
    renderer_classes,
)
from rest_framework.exceptions import ParseError
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.json import strict_constant

from responses import credentials
from responses.answer_sheet import AnswerSheet, InvalidAnswers
from responses.fast_path import store_if_accepting
from responses.write import QuotaReached, receipt_stored, record_submission
from survey import invites, ratelimit
from survey.limits import MAX_QUESTIONS
from survey.models import DesignChanged, InviteRejected, SubmissionIdTaken, Survey

MAX_ANSWERS = MAX_QUESTIONS  # one answer per question
INVITE_REJECTED = (
    "This survey is by invitation: the invite or credential is missing, wrong or already "
    "used. Nothing was stored."
)
DESIGN_CHANGED = (
    "The questions of this survey were changed after these answers were randomized. "
    "Load the survey again and answer the questions as they are now; nothing was stored."
)


class WholeNumberField(serializers.IntegerField):
    """A JSON whole number and nothing else: an option index sent as "1" or 1.0 is
    refused (the respondent page sends numbers; anything else is a confused client)."""

    def to_internal_value(self, data):
        if type(data) is not int:  # null never reaches here: allow_null handles it
            raise serializers.ValidationError(
                "A whole number (not a string or decimal) is required."
            )
        return super().to_internal_value(data)


class AnswerSerializer(serializers.Serializer):
    question = serializers.IntegerField()
    value = WholeNumberField(
        allow_null=True,
        help_text="The report: 0/1 for yes/no, an option index for choice, an integer for "
        'a number question; null for "prefer not to answer" when the survey allows '
        "skipping (a skip is sent as it is: nothing is randomized).",
    )
    arm = WholeNumberField(
        required=False,
        allow_null=True,
        help_text="For a design with arms (stochastic_lie_detector, cheating_detection, "
        "unrelated_question_unknown): "
        "the arm the device drew (0 or 1) before randomizing with that arm's parameters; "
        "the value is then the 0/1 report. For a split ballot (a question with "
        "direct_share): 1 when the device drew the direct ballot (the value is the answer "
        "as given, the respondent having been told so), 0 for the randomized one. Refused "
        "for any other question.",
    )


class CredentialSerializer(serializers.Serializer):
    message = serializers.CharField(help_text="32 random bytes, base64url.")
    signature = serializers.CharField(
        help_text="The survey key's RSASSA-PSS signature on message (SHA-384, MGF1-SHA-384, "
        "48-byte salt), base64url: what the credentials endpoint's blind signature becomes."
    )

    def to_internal_value(self, data) -> invites.Credential:
        try:
            return invites.Credential.parse(data)
        except invites.BadCredential as error:
            raise serializers.ValidationError(str(error)) from None


class SubmissionSerializer(serializers.Serializer):
    submission_id = serializers.UUIDField(format="hex_verbose")
    credential = CredentialSerializer(
        required=False,
        help_text="For an invite-only survey: the one-time credential the invite was "
        "exchanged for (see the credentials endpoint). It cannot be traced to the invite.",
    )
    invite = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="For an invite-only survey, instead of a credential: the server exchanges "
        "the invite itself. It keeps nothing that joins the two, but its code sees both at "
        "that moment; a credential obtained beforehand keeps even that from it.",
    )
    answers = AnswerSerializer(many=True, allow_empty=False, max_length=MAX_ANSWERS)
    design_version = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="The survey's design_version when the answers were randomized (the "
        "respondent page sends it). If the questions have been edited since: 409, and "
        "nothing is stored.",
    )

    def validate_submission_id(self, value):
        if value.version != 4:
            raise serializers.ValidationError("Must be a random (version 4) UUID.")
        return value

    def validate_answers(self, answers: list[dict]) -> dict[int, int]:
        try:
            return self.context["sheet"].check(answers)
        except InvalidAnswers as error:
            raise serializers.ValidationError(error.messages) from None


def plainly_valid(data: dict, sheet: AnswerSheet) -> tuple[uuid.UUID, dict[int, int]] | None:
    """(submission id, {question: report}) for a valid body in the form respond.js sends,
    checked without building a serializer (that costs more than storing the answers).

    None means "not plainly valid": :class:`SubmissionSerializer` then decides and
    explains. Anything it would treat differently (an invite, numbers as strings, huge
    numbers) is left to it, so the two never disagree.
    """
    submission_id, answers = data.get("submission_id"), data.get("answers")
    if (
        "invite" in data
        or "credential" in data
        or type(submission_id) is not str
        or type(answers) is not list
    ):
        return None
    design_version = data.get("design_version", sheet.design_version)
    if type(design_version) is not int or design_version != sheet.design_version:
        return None
    if not 0 < len(answers) <= MAX_ANSWERS:
        return None
    pairs = []
    for answer in answers:
        if type(answer) is not dict:
            return None
        question, value = answer.get("question"), answer.get("value")
        if type(question) is not int or "value" not in answer:
            return None
        if type(value) is not int and value is not None:  # None: a skip
            return None
        if not (abs(question) < 2**53 and abs(value or 0) < 2**53):
            return None
        arm = answer.get("arm")
        if arm is not None and (type(arm) is not int or abs(arm) >= 2**53):
            return None
        pairs.append({"question": question, "value": value, "arm": arm})
    try:
        parsed = uuid.UUID(submission_id)
        values = sheet.check(pairs)
    except (ValueError, InvalidAnswers):
        return None
    return (parsed, values) if parsed.version == 4 else None


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
        403: OpenApiResponse(description="Credential or invite missing, wrong or used."),
        404: OpenApiResponse(description="No such survey."),
        409: OpenApiResponse(
            description="The survey is not open, its questions changed after the answers "
            "were randomized, or the id belongs to another survey."
        ),
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
@renderer_classes([JSONRenderer])  # respondents' browsers need no browsable API
def submit_response(request: Request, slug: str) -> Response:
    """Store one respondent's randomized answers (idempotent on ``submission_id``)."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > settings.MAX_SUBMISSION_BYTES:
        return Response(
            {"detail": f"The body must be at most {settings.MAX_SUBMISSION_BYTES} bytes."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    sheet = AnswerSheet.for_slug(slug)
    if sheet is None:
        # No questions: a survey that cannot be answered, or no survey at all.
        get_object_or_404(Survey, slug=slug)
        sheet = AnswerSheet(0, {}, 0)
    if not isinstance(request.data, dict):
        raise ParseError("The body must be a JSON object.")
    serializer = SubmissionSerializer(data=request.data, context={"sheet": sheet})
    serializer.is_valid(raise_exception=True)
    data = serializer.validated_data
    if data.get("design_version", sheet.design_version) != sheet.design_version:
        return design_changed()
    receipt = make_receipt(data["submission_id"], data["answers"])
    design = sheet.design_version
    if store_if_accepting(sheet.survey_id, data["submission_id"], data["answers"], design=design):
        return Response(receipt, status=status.HTTP_201_CREATED)
    # Nothing stored: a retry, a closed or locked survey, an invite needed, the quota.
    survey = get_object_or_404(Survey, slug=slug)
    stored_for = receipt_stored(data["submission_id"])
    if stored_for == survey.pk:
        # A retry (the answer to the first try was lost): its receipt, even once the
        # survey has closed, and nothing spent or counted again.
        return Response(receipt, status=status.HTTP_200_OK)
    if stored_for is not None:
        return submission_id_taken()
    if not survey.is_accepting:
        return not_accepting()
    credential, token = data.get("credential"), data.get("invite")
    if survey.requires_invite and credential is None and token:
        try:
            credential = credentials.issue(survey, token)
        except InviteRejected:
            return invite_rejected()
        response = record(survey, data, credential, receipt, design)
        if response.status_code >= 400:
            credentials.give_back(survey, token)  # refused as a whole: the invite still works
        return response
    return record(survey, data, credential, receipt, design)


def record(
    survey: Survey, data: dict, credential: invites.Credential | None, receipt: dict, design: int
) -> Response:
    """Store with the full checks (``design``: the version the answers were validated
    against); the answer for each way it can be refused."""
    try:
        stored = record_submission(
            survey,
            data["submission_id"],
            data["answers"],
            credential=credential,
            design_version=design,
        )
    except DesignChanged:
        return design_changed()
    except InviteRejected:
        return invite_rejected()
    except SubmissionIdTaken:
        return submission_id_taken()
    except QuotaReached:
        survey.close_if_due()
        return not_accepting()
    return Response(receipt, status=status.HTTP_201_CREATED if stored else status.HTTP_200_OK)


def not_accepting() -> Response:
    return Response(
        {"detail": "This survey is not accepting answers right now."},
        status=status.HTTP_409_CONFLICT,
    )


def submission_id_taken() -> Response:
    return Response(
        {"submission_id": ["This id belongs to another survey's submission; use a new one."]},
        status=status.HTTP_409_CONFLICT,
    )


def invite_rejected() -> Response:
    return Response(
        {"credential": [INVITE_REJECTED], "invite": [INVITE_REJECTED]},
        status=status.HTTP_403_FORBIDDEN,
    )


def design_changed() -> Response:
    return Response({"design_version": [DESIGN_CHANGED]}, status=status.HTTP_409_CONFLICT)


def make_receipt(submission_id: uuid.UUID, values: dict[int, int]) -> dict:
    return {"submission_id": str(submission_id), "answers": len(values), "status": "stored"}


def plain_submissions_first(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Store a plainly valid submission to an open survey before any of DRF's machinery
    runs, and hand every other request to ``view``.

    That common case is what hundreds of phones send at once in a classroom, and this
    way it costs a fraction of the full path (``bench/submit.py`` measures it). ``view``
    stays the contract: the OpenAPI schema describes it (``wraps`` keeps its ``cls``),
    and it answers, by the same rules, everything the shortcut does not store.
    """

    @wraps(view)
    def shortcut(request: HttpRequest, slug: str) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or ""
        if (
            request.method == "POST"
            and request.content_type == "application/json"
            and request.content_params.get("charset", "utf-8").lower() == "utf-8"
            and length.isdigit()
            and int(length) <= settings.MAX_SUBMISSION_BYTES
        ):
            try:
                # As strict as DRF's parser: UTF-8, no NaN or Infinity.
                data = json.loads(request.body.decode(), parse_constant=strict_constant)
            except (ValueError, RecursionError):
                data = None
            sheet = AnswerSheet.for_slug(slug) if isinstance(data, dict) else None
            plain = plainly_valid(data, sheet) if sheet else None
            if plain and store_if_accepting(sheet.survey_id, *plain, design=sheet.design_version):
                return JsonResponse(make_receipt(*plain), status=201)
        return view(request, slug=slug)

    return shortcut


submit_endpoint = ratelimit.limit("submit")(plain_submissions_first(submit_response))


class CredentialRequestSerializer(serializers.Serializer):
    invite = serializers.CharField(max_length=100, help_text="The one-time invite token.")
    blinded_message = serializers.CharField(
        max_length=invites.MAX_ENCODED,
        help_text="RFC 9474 Blind() output for the survey's public key (variant "
        "RSABSSA-SHA384-PSS-Deterministic, the message 32 random bytes), base64url.",
    )


class BlindSignatureSerializer(serializers.Serializer):
    blind_signature = serializers.CharField(
        help_text="RFC 9474 BlindSign() output, base64url: Finalize() it into the credential."
    )


@extend_schema(
    request=CredentialRequestSerializer,
    responses={
        201: BlindSignatureSerializer,
        400: OpenApiResponse(description="Malformed request; the invite is not used."),
        403: OpenApiResponse(description="Invite wrong or already used; nothing stored."),
        404: OpenApiResponse(description="No such survey."),
        409: OpenApiResponse(description="The survey is not accepting answers."),
        429: OpenApiResponse(description="Too many requests from this address; see Retry-After."),
    },
    auth=[],
)
@api_view(["POST"])
@authentication_classes([])
@permission_classes([AllowAny])
@renderer_classes([JSONRenderer])
def exchange_invite(request: Request, slug: str) -> Response:
    """Use up a one-time invite for a blind signature on a message the server never sees.

    The browser unblinds it into a credential (message + RSASSA-PSS signature) that
    admits one submission and cannot be traced to the invite, by anyone.
    """
    survey = get_object_or_404(Survey, slug=slug)
    if not survey.is_accepting:
        return Response(
            {"detail": "This survey is not accepting answers right now."},
            status=status.HTTP_409_CONFLICT,
        )
    if not isinstance(request.data, dict):
        raise ParseError("The body must be a JSON object.")
    serializer = CredentialRequestSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    data = serializer.validated_data
    try:
        blinded = invites.b64decode(data["blinded_message"], "blinded_message")
        signature = credentials.exchange(survey, data["invite"], blinded)
    except invites.BadCredential as error:
        return Response({"blinded_message": [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
    except InviteRejected:
        return Response(
            {"invite": ["This invite is wrong or already used. Nothing was stored."]},
            status=status.HTTP_403_FORBIDDEN,
        )
    return Response(
        {"blind_signature": invites.b64encode(signature)}, status=status.HTTP_201_CREATED
    )


credential_endpoint = ratelimit.limit("credential")(exchange_invite)
