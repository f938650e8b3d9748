"""The researcher's REST API: surveys with nested questions, lifecycle, invites, exports.

Every query starts from ``Survey.objects.owned_by(user)``, so another researcher's survey
is a 404 on every endpoint, never a 403 that would confirm it exists.
"""

from __future__ import annotations

import json
import math

from django.db import transaction
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from estimator.analysis import json_epsilon, parse_estimate_options, survey_results
from estimator.randomized_response import (
    CI_METHODS,
    DESIGNS,
    BinaryDesign,
    ForcedResponse,
    design_from_params,
)
from survey import exports
from survey.distribution import MAX_INVITES, invite_counts, invite_path
from survey.models import DesignFrozen, Invite, Question, Survey


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the survey's state."
    default_code = "conflict"


class CSVRenderer(BaseRenderer):
    """Lets clients ask for ``Accept: text/csv``; CSV bodies are built by the views,
    so this only renders error dictionaries (as JSON text)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, str | bytes) else json.dumps(data)


class CSVParser(BaseParser):
    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None) -> str:
        try:
            return stream.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("The CSV must be UTF-8 encoded.") from None


def csv_download(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class DesignSerializer(serializers.Serializer):
    """A design as ``{"name": …, **parameters}``; missing parameters take the defaults."""

    name = serializers.ChoiceField(choices=list(DESIGNS))
    p_truth = serializers.FloatField(required=False)
    p_yes = serializers.FloatField(required=False)
    p = serializers.FloatField(required=False)
    pi = serializers.FloatField(required=False)

    def to_internal_value(self, data) -> BinaryDesign:
        if isinstance(data, dict) and (unknown := set(data) - set(self.fields)):
            raise ValidationError(f"unknown design parameter(s): {', '.join(sorted(unknown))}")
        attrs = super().to_internal_value(data)
        name = attrs.pop("name")
        try:
            return design_from_params(name, attrs)
        except ValueError as error:
            raise ValidationError(str(error)) from None

    def to_representation(self, design: BinaryDesign) -> dict:
        return {"name": design.name, **design.params()}


@extend_schema_field(serializers.FloatField(allow_null=True, read_only=True))
class EpsilonField(serializers.Field):
    """ε as a number, or null for ε = ∞ (JSON has no infinity; see ``no_privacy``)."""

    def __init__(self, **kwargs):
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value: float) -> float | None:
        return json_epsilon(value)


class QuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField(required=False)
    position = serializers.IntegerField(read_only=True)
    text = serializers.CharField(max_length=500)
    kind = serializers.ChoiceField(choices=Question.Kind.choices, default=Question.Kind.BINARY)
    design = DesignSerializer(
        default=ForcedResponse,
        help_text="Defaults to the classic two coins (forced response, p_truth = p_yes = 0.5).",
    )
    epsilon = EpsilonField()
    no_privacy = serializers.SerializerMethodField()
    allow_no_privacy = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="Required to save a design with ε = ∞ (a report can reveal the answer).",
    )

    def get_no_privacy(self, question: Question) -> bool:
        return math.isinf(question.epsilon)

    def validate(self, attrs: dict) -> dict:
        design = attrs.get("design")
        if design and math.isinf(design.epsilon) and not attrs.get("allow_no_privacy"):
            raise ValidationError(
                {
                    "design": [
                        "This design gives no privacy (ε = ∞): some reports reveal the true "
                        "answer. Send allow_no_privacy: true to save it anyway."
                    ]
                }
            )
        return attrs


class SurveySerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    title = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    mode = serializers.ChoiceField(choices=Survey.Mode.choices, default=Survey.Mode.RESEARCH)
    status = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    join_code = serializers.CharField(read_only=True)
    requires_invite = serializers.BooleanField(default=False)
    epsilon_total = EpsilonField()
    no_privacy = serializers.SerializerMethodField()
    respond_url = serializers.SerializerMethodField()
    created = serializers.DateField(read_only=True)
    design_version = serializers.IntegerField(
        read_only=True,
        help_text="One more with every edit of the questions; send it with submissions "
        "so that answers randomized with an older design are refused (409).",
    )
    questions = QuestionSerializer(many=True, required=False)

    def get_no_privacy(self, survey: Survey) -> bool:
        return math.isinf(survey.epsilon_total)

    def get_respond_url(self, survey: Survey) -> str:
        request = self.context.get("request")
        url = survey.get_absolute_url()
        return request.build_absolute_uri(url) if request else url

    def validate_questions(self, questions: list[dict]) -> list[dict]:
        ids = [q["id"] for q in questions if "id" in q]
        if any("id" not in q and "text" not in q for q in questions):
            raise ValidationError("a new question needs a text")
        if len(ids) != len(set(ids)):
            raise ValidationError("a question id appears twice")
        if self.instance is not None:
            known = set(self.instance.questions.values_list("id", flat=True))
            if unknown := sorted(set(ids) - known):
                raise ValidationError(
                    f"question id(s) {', '.join(map(str, unknown))} are not in this survey"
                )
        elif ids:
            raise ValidationError("new questions must not carry an id")
        return questions

    @transaction.atomic
    def create(self, validated_data: dict) -> Survey:
        questions = validated_data.pop("questions", [])
        survey = Survey.objects.create(**validated_data)
        save_questions(survey, questions)
        return survey

    @transaction.atomic
    def update(self, survey: Survey, validated_data: dict) -> Survey:
        questions = validated_data.pop("questions", None)
        if questions is not None:
            try:
                survey.check_design_editable()
            except DesignFrozen as error:
                raise Conflict(str(error)) from None
            save_questions(survey, questions)
        for name, value in validated_data.items():
            setattr(survey, name, value)
        survey.save(update_fields=[*validated_data] or None)
        return survey


def save_questions(survey: Survey, questions: list[dict]) -> None:
    """Make the survey's questions exactly ``questions``, in order: items with an ``id``
    update that question, the others are created, questions left out are deleted."""
    existing = {q.id: q for q in survey.questions.all()}
    keep = [q["id"] for q in questions if "id" in q]
    survey.questions.exclude(id__in=keep).delete()
    for position, item in enumerate(questions):
        # A PATCH may leave out what it does not change: keep the stored value.
        current = existing.get(item.get("id"))
        design = item.get("design") or (current.design if current else ForcedResponse())
        fields = {
            "position": position,
            "text": item.get("text") or current.text,
            "kind": item.get("kind", Question.Kind.BINARY),
            "design_name": design.name,
            "design_params": design.params(),
        }
        if "id" in item:
            survey.questions.filter(id=item["id"]).update(**fields)
        else:
            survey.questions.create(**fields)
    if hasattr(survey, "_prefetched_objects_cache"):
        survey._prefetched_objects_cache.clear()


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class LineErrorSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    message = serializers.CharField()


class ImportErrorsSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = LineErrorSerializer(many=True, required=False)


class ImportResultSerializer(serializers.Serializer):
    imported = serializers.IntegerField()


class InviteCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    used = serializers.IntegerField()
    unused = serializers.IntegerField()


class InviteRequestSerializer(serializers.Serializer):
    n = serializers.IntegerField(min_value=1, max_value=MAX_INVITES)


class InviteBatchSerializer(serializers.Serializer):
    tokens = serializers.ListField(child=serializers.CharField())
    urls = serializers.ListField(child=serializers.URLField())


NOT_FOUND = OpenApiResponse(DetailSerializer, "No such survey among yours.")
CONFLICT = OpenApiResponse(DetailSerializer, "Not allowed in the survey's current state.")
CSV_RESPONSE = {(200, "text/csv"): OpenApiTypes.STR, 404: NOT_FOUND}


class SurveyViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your surveys: create with nested questions, edit, open and close, export, import."""

    serializer_class = SurveySerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        return Survey.objects.owned_by(self.request.user).prefetch_related("questions")

    def perform_create(self, serializer) -> None:
        serializer.save(owner=self.request.user)

    def _transition(self, action_name: str) -> Response:
        survey = self.get_object()
        if error := survey.lifecycle_error(action_name):
            raise Conflict(error)
        getattr(survey, action_name)()
        return Response(self.get_serializer(survey).data)

    @extend_schema(request=None, responses={200: SurveySerializer, 404: NOT_FOUND, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def open(self, request, pk=None) -> Response:
        """Open the survey for answers (needs at least one question)."""
        return self._transition("open")

    @extend_schema(request=None, responses={200: SurveySerializer, 404: NOT_FOUND, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def close(self, request, pk=None) -> Response:
        """Stop accepting answers; estimates and exports stay available."""
        return self._transition("close")

    @extend_schema(responses=CSV_RESPONSE)
    @action(
        detail=True,
        methods=["get"],
        url_path="export.csv",
        url_name="export-csv",
        renderer_classes=[JSONRenderer, CSVRenderer],
    )
    def export_csv(self, request, pk=None) -> HttpResponse:
        """Randomized responses: one row per submission, one column per question
        (``q1`` … ``qk``); simulated answers excluded."""
        survey = self.get_object()
        return csv_download(exports.responses_csv(survey), f"survey-{survey.id}-responses.csv")

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: NOT_FOUND})
    @action(detail=True, methods=["get"], url_path="codebook.json", url_name="codebook")
    def codebook(self, request, pk=None) -> Response:
        """Every design parameter and ε per column of the export."""
        response = Response(exports.codebook(self.get_object()))
        response["Content-Disposition"] = f'inline; filename="survey-{pk}-codebook.json"'
        return response

    @extend_schema(
        parameters=[
            OpenApiParameter("level", OpenApiTypes.FLOAT, description="default 0.95"),
            OpenApiParameter("method", str, enum=list(CI_METHODS)),
        ],
        responses={**CSV_RESPONSE, 400: OpenApiResponse(OpenApiTypes.OBJECT)},
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="estimates.csv",
        url_name="estimates-csv",
        renderer_classes=[JSONRenderer, CSVRenderer],
    )
    def estimates_csv(self, request, pk=None) -> HttpResponse:
        """The estimates endpoint's numbers as CSV."""
        survey = self.get_object()
        level, method, errors = parse_estimate_options(request.query_params)
        if errors:
            raise ValidationError({"detail": errors})
        text = exports.estimates_csv(survey_results(survey, level, method))
        return csv_download(text, f"survey-{survey.id}-estimates.csv")

    @extend_schema(
        request={
            "text/csv": OpenApiTypes.STR,
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}},
                "required": ["file"],
            },
        },
        responses={
            201: ImportResultSerializer,
            400: OpenApiResponse(ImportErrorsSerializer, "Errors by line; nothing imported."),
            404: NOT_FOUND,
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="import",
        url_name="import",
        parser_classes=[CSVParser, MultiPartParser],
    )
    def import_responses(self, request, pk=None) -> Response:
        """Import randomized responses collected offline (same columns as the export);
        every row is validated first and either all rows are stored or none."""
        survey = self.get_object()
        text = read_csv_body(request)
        try:
            imported = exports.import_responses(survey, text)
        except exports.ImportRejected as rejected:
            body = {"detail": str(rejected), "errors": [e.as_dict() for e in rejected.errors]}
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        return Response({"imported": imported}, status=status.HTTP_201_CREATED)

    @extend_schema(
        methods=["GET"], request=None, responses={200: InviteCountsSerializer, 404: NOT_FOUND}
    )
    @extend_schema(
        methods=["POST"],
        request=InviteRequestSerializer,
        responses={201: InviteBatchSerializer, 400: OpenApiTypes.OBJECT, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["get", "post"])
    def invites(self, request, pk=None) -> Response:
        """GET: how many one-time invites are used and unused. POST ``{"n"}``: create n
        invites; the tokens are shown this once (only their hashes are stored)."""
        survey = self.get_object()
        if request.method == "GET":
            return Response(invite_counts(survey))
        serializer = InviteRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tokens = Invite.create_batch(survey, serializer.validated_data["n"])
        urls = [request.build_absolute_uri(invite_path(survey, t)) for t in tokens]
        return Response({"tokens": tokens, "urls": urls}, status=status.HTTP_201_CREATED)


def read_csv_body(request) -> str:
    """The CSV from a ``text/csv`` body or a multipart ``file`` field."""
    if isinstance(request.data, str):
        return request.data
    if request.content_type.startswith("text/csv"):
        return ""
    upload = request.data.get("file")
    if upload is None:
        raise ParseError("Send the CSV as a text/csv body or as a multipart field 'file'.")
    try:
        return upload.read().decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("The CSV must be UTF-8 encoded.") from None


class OptionalSlashRouter(SimpleRouter):
    """``/api/surveys/1/export.csv`` (as in SPEC §3.1) and ``…/export.csv/`` both work."""

    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"


router = OptionalSlashRouter()
router.register("surveys", SurveyViewSet, basename="api-survey")
