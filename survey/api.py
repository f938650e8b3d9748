"""The researcher's REST API: surveys with nested questions, lifecycle, invites, exports.

Every query starts from ``survey.permissions.api_surveys``: a survey the user holds no
role on, or too small a role for the action (viewer, editor, owner), is a 404 on every
endpoint, never a 403 that would confirm it exists; so is a survey in the trash.
"""

from __future__ import annotations

import io
import json
import math
from typing import IO

from django.conf import settings
from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, ParseError, ValidationError
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from config.parsers import PayloadTooLarge
from estimator.designs import REGISTRY, Design, ForcedResponse, json_epsilon, make_design
from estimator.disclosure import DEFAULT_MIN_CELL
from estimator.params import CHOICE_MAX_OPTIONS, CHOICE_MIN_OPTIONS, Param
from estimator.split import with_direct_share
from responses.exports import responses_csv
from responses.imports import ImportRejected, ImportTooLarge, import_responses, spool
from responses.statfiles import responses_dta, responses_sav
from survey import email_invites
from survey.api_teams import (
    CollaboratorViewSet,
    TransferRequestSerializer,
    TrashedSurveySerializer,
    find_account_or_400,
)
from survey.codebook import codebook
from survey.distribution import MAX_INVITES, import_too_large, invite_counts, invite_path
from survey.limits import MAX_DESCRIPTION, MAX_QUESTION_TEXT, MAX_QUESTIONS, MAX_RESPONSE_QUOTA
from survey.models import (
    CLASSROOM_SPLIT,
    INNOCUOUS_UNASKED,
    MAX_COMPLETION_URL,
    MAX_RETENTION_DAYS,
    MIN_CELL_FLOOR,
    SKIPS_FROZEN,
    AuditEntry,
    DesignFrozen,
    Invite,
    Question,
    Role,
    SharingRefused,
    Survey,
    innocuous_text_for,
    texts_without_stale_innocuous,
    validate_completion_url,
)
from survey.permissions import api_surveys


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


class FileRenderer(BaseRenderer):
    """Lets clients ask for a statistics file's media type; the views build the bytes,
    so this only renders error dictionaries (as JSON text)."""

    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, bytes) else json.dumps(data).encode()


class SPSSRenderer(FileRenderer):
    media_type = "application/x-spss-sav"
    format = "sav"


class StataRenderer(FileRenderer):
    media_type = "application/x-stata-dta"
    format = "dta"


def file_download(content: bytes, media_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=media_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class CSVParser(BaseParser):
    """A ``text/csv`` body as a binary file, spooled to disk beyond a few MiB: an import
    never holds the whole body in memory, and one over ``MAX_IMPORT_BYTES`` is a 413."""

    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None) -> IO[bytes]:
        try:
            return spool(stream)
        except ImportTooLarge as error:
            raise PayloadTooLarge(str(error)) from None


def csv_download(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class DesignField(serializers.Field):
    """A design as ``{"name": …, **parameters}``; missing parameters take the defaults.

    The field only checks the shape: which parameters a design takes, and what values
    they allow, depends on the question's kind and options, so :class:`QuestionSerializer`
    builds the design from the registry once it knows them (see :func:`build_design`).
    """

    def to_internal_value(self, data) -> dict:
        if not isinstance(data, dict):
            raise ValidationError('a design must be an object such as {"name": "k_rr", …}')
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError({"name": ["a design needs a name, e.g. forced_response"]})
        return {"name": name, "params": {k: v for k, v in data.items() if k != "name"}}

    def to_representation(self, design: Design) -> dict:
        return {"name": design.name, **design.params()}


def _param_schema(param: Param) -> dict:
    """One declared parameter as an OpenAPI 3.0 property."""
    described = {"description": f"{param.label}: {param.help}"}
    if param.type in ("probabilities", "probability_pair"):
        item = {"type": "number", "minimum": 0, "maximum": 1}
        pair = param.type == "probability_pair"
        return {
            **described,
            "type": "array",
            "items": item,
            "minItems": 2 if pair else CHOICE_MIN_OPTIONS,
            "maxItems": 2 if pair else CHOICE_MAX_OPTIONS,
        }
    declared = param.to_json()
    schema = {**described, "type": "integer" if param.type == "integer" else "number"}
    for bound, exclusive, key in (
        ("min", "exclusive_min", "minimum"),
        ("max", "exclusive_max", "maximum"),
    ):
        if declared[bound] is not None:
            schema[key] = declared[bound]
            if declared[exclusive]:
                schema[f"exclusive{key.title()}"] = True
    if param.default is not None:
        schema["default"] = param.default
    return schema


def design_schema() -> dict:
    """Every registered design as its own object schema, parameters from its declaration."""
    variants = []
    for (kind, name), cls in REGISTRY.items():
        variants.append(
            {
                "type": "object",
                "title": f"{kind}: {name}",
                "description": f"{cls.label}. {cls.help}".strip(),
                "properties": {
                    "name": {"type": "string", "enum": [name]},
                    **{p.name: _param_schema(p) for p in cls.PARAMS},
                },
                "required": ["name"],
                "additionalProperties": False,
            }
        )
    return {
        "anyOf": variants,
        "description": "The question's design: its name and parameters for the question's "
        "kind (SPEC §1.4). Binary questions default to the classic two coins.",
    }


extend_schema_field(design_schema())(DesignField)


def build_design(kind: str, name: str, params: dict, k: int | None) -> Design:
    """The (kind, name) design from the registry, or a ValidationError whose keys name
    the parameter at fault (``name`` for an unknown design, ``non_field_errors`` for a
    rule that spans parameters)."""
    cls = REGISTRY.get((kind, name))
    if cls is None:
        names = ", ".join(n for (kd, n) in REGISTRY if kd == kind)
        raise ValidationError(
            {"name": [f"unknown design {name!r} for a {kind} question; choose one of {names}"]}
        )
    declared = {p.name: p for p in cls.PARAMS}
    errors = {
        key: [f"{name} takes no parameter {key}; it takes {', '.join(declared) or 'none'}"]
        for key in params
        if key not in declared
    }
    for key, value in params.items():
        if key in declared:
            try:
                declared[key].check(value)
            except ValueError as error:
                errors[key] = [str(error)]
    if errors:
        raise ValidationError(errors)
    try:
        return make_design(kind, name, params, k=k if cls.needs_options else None)
    except ValueError as error:
        message = str(error)
        first = message.split(" ", 1)[0].rstrip(":")
        raise ValidationError(
            {first if first in declared else "non_field_errors": [message]}
        ) from None


@extend_schema_field(serializers.FloatField(allow_null=True, read_only=True))
class EpsilonField(serializers.Field):
    """ε as a number, or null for ε = ∞ (JSON has no infinity; see ``no_privacy``)."""

    def __init__(self, **kwargs):
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value: float) -> float | None:
        return json_epsilon(value)


OPTION_MAX_LENGTH = 200
OPTIONS_COUNT_MESSAGE = (
    f"a choice question needs {CHOICE_MIN_OPTIONS} to {CHOICE_MAX_OPTIONS} options"
)
EXAMPLE_DESIGNS = {
    Question.Kind.CHOICE: '{"name": "k_rr", "epsilon": 1.0986}',
    Question.Kind.NUMBER: '{"name": "laplace", "epsilon": 1.0, "lower": 0, "upper": 30}',
}


class QuestionSerializer(serializers.Serializer):
    """A question of any kind with its design, built from the registry (SPEC §3.1).

    Choice questions carry 2–10 options; binary and number questions none. A directly
    asked question (design ``direct``, ε = ∞) is saved only with ``not_sensitive: true``,
    the researcher's confirmation that it is a background question; a randomized design
    with ε = ∞ only with ``allow_no_privacy: true``. In a PATCH, what an item leaves out
    keeps its stored value.
    """

    id = serializers.IntegerField(required=False)
    position = serializers.IntegerField(read_only=True)
    text = serializers.CharField(max_length=500)
    kind = serializers.ChoiceField(choices=Question.Kind.choices, default=Question.Kind.BINARY)
    options = serializers.ListField(
        child=serializers.CharField(max_length=OPTION_MAX_LENGTH),
        required=False,
        max_length=CHOICE_MAX_OPTIONS,
        error_messages={"max_length": OPTIONS_COUNT_MESSAGE},
        help_text=f"Choice questions only: {CHOICE_MIN_OPTIONS} to {CHOICE_MAX_OPTIONS} "
        "distinct, non-empty option texts in order; a report is an index into this list. "
        "Empty for binary and number questions.",
    )
    design = DesignField(
        required=False,
        help_text="Defaults to the classic two coins (forced response, p_truth = p_yes = 0.5) "
        "for a binary question; choice and number questions name theirs.",
    )
    epsilon = EpsilonField()
    show_if = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="Shown only when an earlier, directly asked yes/no or choice question got "
        'one of the given answers: {"question": <its id>, "in": [option indexes, or 1/0 for '
        'yes/no]}; in a new survey "index" (its 0-based place in this list) instead of '
        '"question". Never on a randomized question: that would branch on the true answer.',
    )
    shuffle_options = serializers.BooleanField(
        required=False,
        help_text="Choice questions only: each device shows the options in its own random "
        "order (crypto RNG); a report is still the index into options, so the server never "
        "learns the order shown.",
    )
    texts = serializers.JSONField(
        required=False,
        help_text='The wording in the survey\'s further languages: {"de": {"text": …, '
        '"options": [one per option, in order], "innocuous_text": …}}; "innocuous_text" '
        "only for a design that asks an innocuous question (left out, it shows in the "
        "original); a language left out shows the original. Reports are the same whatever "
        "language was shown.",
    )
    direct_share = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="A split ballot on a randomized yes/no, multiple-choice or number "
        "question (a design without arms): "
        "the share s (0 < s < 1) of respondents whose device, before they answer, draws "
        "that this question is asked directly, tells them so, and sends their answer as "
        "given (no privacy for them on this question) with arm 1; the others randomize as "
        "usual and send arm 0. Results give the randomized estimate, the direct one and "
        "their difference. null: everyone randomizes.",
    )
    innocuous_text = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_QUESTION_TEXT,
        help_text="The innocuous yes/no question that unrelated_question_unknown asks beside "
        "the sensitive one (required for that design, blank for every other): the "
        "respondent answers both on the device, which sends one of the two answers.",
    )
    no_privacy = serializers.SerializerMethodField()
    direct = serializers.SerializerMethodField(
        help_text="Asked directly (not randomized): ε = ∞, left out of the survey's total."
    )
    allow_no_privacy = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="Required to save a randomized design with ε = ∞ (a report can reveal "
        "the answer).",
    )
    not_sensitive = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="Required to save a directly asked question (design direct): confirms "
        "that the question is not sensitive, since its answers are stored as given.",
    )

    def get_no_privacy(self, question: Question) -> bool:
        return math.isinf(question.epsilon)

    def get_direct(self, question: Question) -> bool:
        return not question.design.randomized

    def validate_options(self, options: list[str]) -> list[str]:
        if 0 < len(options) < CHOICE_MIN_OPTIONS:
            raise ValidationError(OPTIONS_COUNT_MESSAGE)
        seen: set[str] = set()
        for option in options:
            if option.casefold() in seen:
                raise ValidationError(f"the option {option!r} appears twice")
            seen.add(option.casefold())
        return options

    def validate_show_if(self, value):
        """The condition's form; where it points is checked with the whole list."""
        if value is None:
            return None
        if (
            not isinstance(value, dict)
            or set(value) - {"question", "index", "in"}
            or ("question" in value) == ("index" in value)
            or not all(type(value.get(key, 0)) is int for key in ("question", "index"))
            or not isinstance(value.get("in"), list)
            or not value["in"]
            or not all(type(v) is int for v in value["in"])
        ):
            raise ValidationError(
                'Give {"question": <id of an earlier question>, "in": [answers]} (or '
                '"index": its 0-based place in this list instead of "question"); "in" is a '
                "non-empty list of option indexes (1 = yes, 0 = no for a yes/no question)."
            )
        return value

    def _stored(self, question_id: int | None) -> Question | None:
        """The stored question an item edits, if it names one of this survey's."""
        survey = getattr(self.root, "instance", None)
        if question_id is None or not isinstance(survey, Survey):
            return None
        return survey.questions.filter(id=question_id).first()

    def validate(self, attrs: dict) -> dict:
        stored = self._stored(attrs.get("id"))
        kind = attrs.get("kind") or (stored.kind if stored else Question.Kind.BINARY)
        kept = stored is not None and stored.kind == kind
        options = attrs.get("options", stored.options if kept else [])
        if kind == Question.Kind.CHOICE and not options:
            raise ValidationError({"options": [OPTIONS_COUNT_MESSAGE]})
        if kind != Question.Kind.CHOICE and options:
            raise ValidationError(
                {"options": [f"a {kind} question takes no options; only choice questions do"]}
            )
        sent = attrs.get("design")
        if sent is None and kept:
            sent = {"name": stored.design_name, "params": stored.design_params}
        elif sent is None and kind != Question.Kind.BINARY:
            raise ValidationError(
                {"design": [f"a {kind} question needs a design, e.g. {EXAMPLE_DESIGNS[kind]}"]}
            )
        elif sent is None:
            sent = {"name": ForcedResponse.name, "params": {}}
        try:
            design = build_design(kind, sent["name"], sent["params"], len(options) or None)
        except ValidationError as error:
            raise ValidationError({"design": error.detail}) from None
        if "design" in attrs or not kept:
            self._check_confirmations(design, attrs)
        if "show_if" not in attrs and stored is not None:
            attrs["show_if"] = stored.show_if
        shuffled = attrs.get("shuffle_options", kept and stored.shuffle_options)
        if shuffled and kind != Question.Kind.CHOICE:
            raise ValidationError(
                {"shuffle_options": [f"a {kind} question has no options to shuffle"]}
            )
        attrs["shuffle_options"] = shuffled
        attrs["direct_share"] = self._direct_share(design, attrs, stored if kept else None)
        attrs["innocuous_text"] = self._innocuous_text(design, attrs, stored if kept else None)
        return {**attrs, "kind": kind, "options": options, "design": design}

    @staticmethod
    def _direct_share(design: Design, attrs: dict, stored: Question | None) -> float | None:
        """The split ballot's share, checked against the design it splits."""
        share = attrs.get("direct_share", stored.direct_share if stored else None)
        try:
            return with_direct_share(design, share).direct_share
        except ValueError as error:
            raise ValidationError({"direct_share": [str(error)]}) from None

    @staticmethod
    def _innocuous_text(design: Design, attrs: dict, stored: Question | None) -> str:
        """The innocuous question's wording: required by a design that asks one."""
        text = attrs.get("innocuous_text", stored.innocuous_text if stored else "")
        try:
            return innocuous_text_for(design, text)
        except ValueError as error:
            raise ValidationError({"innocuous_text": [str(error)]}) from None

    @staticmethod
    def _check_confirmations(design: Design, attrs: dict) -> None:
        if not design.randomized and not attrs.get("not_sensitive"):
            raise ValidationError(
                {
                    "not_sensitive": [
                        "A directly asked question is not randomized: its answers are stored "
                        "as given (ε = ∞). Use it only for background questions that are not "
                        "sensitive, and send not_sensitive: true to confirm."
                    ]
                }
            )
        if design.randomized and math.isinf(design.epsilon) and not attrs.get("allow_no_privacy"):
            raise ValidationError(
                {
                    "design": [
                        "This design gives no privacy (ε = ∞): some reports reveal the true "
                        "answer. Send allow_no_privacy: true to save it anyway."
                    ]
                }
            )


LANGUAGE_CODES = ", ".join(code for code, _ in settings.LANGUAGES)


class DayField(serializers.DateField):
    """A date and time given as its day (UTC), as the API has always given ``created``."""

    def to_representation(self, value):
        return super().to_representation(timezone.localdate(value))


class SurveySerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    title = serializers.CharField(max_length=200)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=MAX_DESCRIPTION
    )
    mode = serializers.ChoiceField(choices=Survey.Mode.choices, default=Survey.Mode.RESEARCH)
    status = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    join_code = serializers.CharField(read_only=True)
    language = serializers.ChoiceField(
        choices=settings.LANGUAGES,
        default="en",
        help_text="The language of a research survey's respondent pages (their <html "
        "lang>); a classroom survey's phones follow each student's browser language.",
        error_messages={
            "invalid_choice": f'Unknown language "{{input}}": choose one of {LANGUAGE_CODES}.'
        },
    )
    requires_invite = serializers.BooleanField(default=False)
    allow_skip = serializers.BooleanField(
        default=True,
        help_text='Every question offers "Prefer not to answer": a skip is sent as '
        '{"question": id, "value": null}, never randomized, and counted apart '
        '("skipped"); estimates are for those who answered. Frozen with the first answer.',
    )
    languages = serializers.ListField(
        child=serializers.CharField(max_length=8),
        required=False,
        max_length=len(settings.LANGUAGES),
        help_text="Further languages respondents may pick on the page (the default comes "
        "from their browser); translate into them with texts here and on each question.",
    )
    texts = serializers.JSONField(
        required=False,
        help_text='The title and description in each further language: {"de": {"title": '
        '…, "description": …}}.',
    )
    shuffle_questions = serializers.BooleanField(
        default=False,
        help_text="Each device shows the questions in its own random order (crypto RNG; a "
        "conditional question stays right after the question it depends on). Answers name "
        "their question, so the server never learns the order shown.",
    )
    consent_text = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_DESCRIPTION,
        help_text="Shown before the questions; nothing is sent until the respondent agrees.",
    )
    completion_url = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_COMPLETION_URL,
        help_text="A panel's completion link, shown as a button after sending; {NAME} "
        "placeholders are filled in the respondent's browser from the parameters of the "
        "link they came with (e.g. {PROLIFIC_PID}), which the server never receives.",
    )
    closes_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="The survey closes itself at this time (null: closed by hand only).",
    )
    response_quota = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_RESPONSE_QUOTA,
        help_text="The survey closes itself once this many people have answered.",
    )
    population_size = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=2,
        help_text="How many people the respondents were drawn from (N): every interval "
        "then applies the finite-population correction (null: a large population).",
    )
    retention_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_RETENTION_DAYS,
        help_text="Delete the responses this many days after the survey closes (the "
        "respondent page says so; null: kept until the survey is deleted). Once answers "
        "exist it can only get shorter.",
    )
    min_cell_count = serializers.IntegerField(
        min_value=MIN_CELL_FLOOR,
        max_value=1000,
        default=DEFAULT_MIN_CELL,
        help_text="Breakdowns hide every group with fewer respondents than this (and "
        "whatever else it takes so that no hidden group can be worked out); at least 5, "
        "and never lowered once answers exist.",
    )
    epsilon_total = EpsilonField(
        help_text="Σ ε over the randomized questions (null for ∞); directly asked questions "
        "are left out and counted in asked_directly."
    )
    asked_directly = serializers.SerializerMethodField(
        help_text="How many questions are asked directly (background questions, ε = ∞)."
    )
    no_privacy = serializers.SerializerMethodField()
    respond_url = serializers.SerializerMethodField()
    created = DayField(read_only=True, help_text="The day it was created (UTC).")
    design_version = serializers.IntegerField(
        read_only=True,
        help_text="One more with every edit of the questions; send it with submissions "
        "so that answers randomized with an older design are refused (409).",
    )
    role = serializers.SerializerMethodField(
        help_text="Your role on this survey: owner, editor (build and distribute) or "
        "viewer (results and exports)."
    )
    questions = QuestionSerializer(many=True, required=False, max_length=MAX_QUESTIONS)

    @extend_schema_field(serializers.ChoiceField(choices=Role.choices))
    def get_role(self, survey: Survey) -> str:
        # Surveys read through the API carry the requester's role; a new one is theirs.
        return getattr(survey, "role", None) or Role.OWNER.value

    def get_asked_directly(self, survey: Survey) -> int:
        return len(survey.privacy.direct)

    def get_no_privacy(self, survey: Survey) -> bool:
        return math.isinf(survey.epsilon_total)

    def get_respond_url(self, survey: Survey) -> str:
        request = self.context.get("request")
        url = survey.get_absolute_url()
        return request.build_absolute_uri(url) if request else url

    def validate_completion_url(self, link: str) -> str:
        """Checked here, not as a field validator, so the schema keeps it a plain string
        (an empty one means none, and placeholders are not URL syntax)."""
        if link:
            validate_completion_url(link)
        return link

    def validate_languages(self, codes: list[str]) -> list[str]:
        """Checked here, not by a choice field, so that the schema names the language
        choices once (``language``)."""
        offered = {code for code, _ in settings.LANGUAGES}
        if unknown := [code for code in codes if code not in offered]:
            raise ValidationError(f'Unknown language "{unknown[0]}": choose from {LANGUAGE_CODES}.')
        return codes

    def validate(self, attrs: dict) -> dict:
        self._check_translations(attrs)
        self._check_classroom_ballots(attrs)
        return attrs

    def _check_classroom_ballots(self, attrs: dict) -> None:
        """A classroom's projector shows one result per question, drawn from every phone:
        a split ballot's second (direct) ballot would be pooled or hidden, so it is
        refused there, by name."""
        survey = self.instance
        mode = attrs.get("mode", survey.mode if survey else Survey.Mode.RESEARCH)
        if mode != Survey.Mode.CLASSROOM:
            return
        sent = attrs.get("questions")
        if sent is None and survey is not None:
            shares = [q.direct_share for q in survey.questions.all()]
        else:
            shares = [item.get("direct_share") for item in sent or []]
        for i, share in enumerate(shares):
            if share is not None:
                raise ValidationError({f"questions[{i}].direct_share": [CLASSROOM_SPLIT]})

    def _check_translations(self, attrs: dict) -> None:
        """Every translation is into one of the survey's languages, and complete."""
        survey = self.instance
        offered = attrs.get("languages", survey.languages if survey else [])
        if len(offered) != len(set(offered)):
            raise ValidationError({"languages": ["a language appears twice"]})
        if "texts" in attrs:
            attrs["texts"] = _survey_texts(attrs["texts"], offered)
        for i, item in enumerate(attrs.get("questions") or []):
            if "texts" in item:
                item["texts"] = _question_texts(item, offered, f"questions[{i}].texts")

    def validate_min_cell_count(self, k: int) -> int:
        if refusal := (self.instance or Survey()).threshold_refusal(k):
            raise ValidationError(refusal)
        return k

    def validate_retention_days(self, days: int | None) -> int | None:
        if self.instance is not None and (error := self.instance.retention_error(days)):
            raise ValidationError(error)
        return days

    def validate_closes_at(self, closes_at):
        if closes_at is not None and closes_at <= timezone.now():
            raise ValidationError("Choose a time in the future (or null).")
        return closes_at

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
        for i, item in enumerate(questions):
            if item.get("show_if"):
                item["show_if"] = _condition_at(questions, i)
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
        skips_change = validated_data.get("allow_skip", survey.allow_skip) != survey.allow_skip
        if questions is not None or skips_change:
            try:
                survey.check_design_editable()
            except DesignFrozen as error:
                if questions is not None:
                    raise Conflict(str(error)) from None
                raise Conflict({"allow_skip": [SKIPS_FROZEN]}) from None
            if questions is not None:
                save_questions(survey, questions)
        audit_update(survey, self.context["request"].user, validated_data, questions)
        for name, value in validated_data.items():
            setattr(survey, name, value)
        survey.save(update_fields=[*validated_data] or None)
        return survey


def _translations(texts, offered: list[str], field: str) -> dict:
    """``texts`` as ``{language: {…}}`` over languages the survey offers."""
    if not isinstance(texts, dict) or not all(isinstance(t, dict) for t in texts.values()):
        raise ValidationError({field: ['give {"<language>": {…}} per language']})
    if unknown := sorted(set(texts) - set(offered)):
        raise ValidationError(
            {
                field: [
                    f'"{unknown[0]}" is not one of the survey\'s languages ('
                    f"{', '.join(offered) or 'none'}): add it to languages first"
                ]
            }
        )
    return texts


def _wording(value, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ValidationError({field: [f"give a non-empty text of at most {limit} characters"]})
    return value.strip()


def _survey_texts(texts, offered: list[str]) -> dict:
    checked = {}
    for code, wording in _translations(texts, offered, "texts").items():
        checked[code] = {"title": _wording(wording.get("title"), f"texts.{code}.title", 200)}
        if wording.get("description"):
            field = f"texts.{code}.description"
            checked[code]["description"] = _wording(wording["description"], field, MAX_DESCRIPTION)
    return checked


def _question_texts(item: dict, offered: list[str], field: str) -> dict:
    """A question's translations: its text, for a choice question every option, and for a
    design that asks an innocuous question that question too (left out, the respondent
    reads it in the original)."""
    checked = {}
    for code, wording in _translations(item.get("texts") or {}, offered, field).items():
        text = _wording(wording.get("text"), f"{field}.{code}.text", 500)
        options = wording.get("options") or []
        if len(options) != len(item["options"]):
            raise ValidationError(
                {
                    f"{field}.{code}.options": [
                        f"give all {len(item['options'])} options, in order (got {len(options)})"
                    ]
                }
            )
        names = [
            _wording(o, f"{field}.{code}.options[{j}]", OPTION_MAX_LENGTH)
            for j, o in enumerate(options)
        ]
        checked[code] = {"text": text, "options": names} if names else {"text": text}
        if "innocuous_text" in wording:
            where = f"{field}.{code}.innocuous_text"
            if not item["design"].asks_innocuous:
                raise ValidationError({where: [INNOCUOUS_UNASKED]})
            checked[code]["innocuous_text"] = _wording(wording["innocuous_text"], where, 500)
    return checked


def _condition_at(questions: list[dict], i: int) -> dict:
    """Question i's condition as {"position": p, "in": [answers]}, or a ValidationError
    naming the field: conditions point only to earlier questions asked directly, so they
    never form a cycle and never branch on a true answer."""
    condition = questions[i]["show_if"]
    field = f"questions[{i}].show_if"
    if "question" in condition:
        positions = {item["id"]: p for p, item in enumerate(questions) if "id" in item}
        target = positions.get(condition["question"])
        if target is None:
            raise ValidationError(
                {field: [f"question {condition['question']} is not a question of this survey"]}
            )
    else:
        target = condition["index"]
        if target >= len(questions):
            raise ValidationError({field: [f"there is no question at index {target}"]})
    if target >= i:
        raise ValidationError(
            {
                field: [
                    "a condition must point to an earlier question (never to this one or a "
                    "later one), so that conditions never form a cycle"
                ]
            }
        )
    item = questions[target]
    if item["design"].randomized:
        raise ValidationError(
            {
                field: [
                    f"question {target + 1} is randomized: a condition on it would branch on "
                    "the respondent's true answer, which must never leave the device. Point "
                    "to a question asked directly (design direct) instead."
                ]
            }
        )
    if item["kind"] == Question.Kind.NUMBER:
        raise ValidationError({field: ["only yes/no and choice questions can be conditions"]})
    answers = len(item["options"]) or 2
    if unknown := sorted({v for v in condition["in"] if not 0 <= v < answers}):
        raise ValidationError(
            {
                field: [
                    f"answer(s) {', '.join(map(str, unknown))} do not exist: question "
                    f"{target + 1} has answers 0 to {answers - 1}"
                ]
            }
        )
    return {"position": target, "in": sorted(set(condition["in"]))}


def audit_update(survey: Survey, user, changes: dict, questions: list | None) -> None:
    """The audit entries of a PATCH, before its changes are applied to ``survey``."""
    if questions is not None:
        AuditEntry.record(
            survey,
            user,
            AuditEntry.Action.DESIGN,
            f"questions set through the API ({len(questions)})",
        )
    if "min_cell_count" in changes and changes["min_cell_count"] != survey.min_cell_count:
        detail = f"small-cell threshold {survey.min_cell_count} → {changes['min_cell_count']}"
        AuditEntry.record(survey, user, AuditEntry.Action.THRESHOLD, detail)
    if edited := [
        f for f in ("title", "description") if f in changes and changes[f] != getattr(survey, f)
    ]:
        AuditEntry.record(survey, user, AuditEntry.Action.WORDING, f"{' and '.join(edited)} edited")


def save_questions(survey: Survey, questions: list[dict]) -> None:
    """Make the survey's questions exactly ``questions``, in order: items with an ``id``
    update that question, the others are created, questions left out are deleted.

    Every item arrives validated by :class:`QuestionSerializer`, with its kind, options
    and design resolved (a PATCH item's omissions filled from the stored question)."""
    existing = {q.id: q for q in survey.questions.all()}
    keep = [q["id"] for q in questions if "id" in q]
    survey.questions.exclude(id__in=keep).delete()
    for position, item in enumerate(questions):
        # Wording: a PATCH may leave out the text it does not change.
        current = existing.get(item.get("id"))
        design = item["design"]
        fields = {
            "position": position,
            "text": item.get("text") or current.text,
            "kind": item["kind"],
            "options": item["options"],
            "design_name": design.name,
            "design_params": design.params(),
            "shuffle_options": item["shuffle_options"],
            "direct_share": item["direct_share"],
            "innocuous_text": item["innocuous_text"],
            # A PATCH item that leaves its translations out keeps them.
            "texts": texts_without_stale_innocuous(
                item["texts"] if "texts" in item else getattr(current, "texts", {}),
                item["innocuous_text"],
            ),
        }
        if "id" in item:
            survey.questions.filter(id=item["id"]).update(**fields)
        else:
            survey.questions.create(**fields)
    ids = list(survey.questions.order_by("position").values_list("id", flat=True))
    for position, item in enumerate(questions):
        condition = item.get("show_if")
        if condition:
            condition = {"question": ids[condition["position"]], "in": condition["in"]}
        survey.questions.filter(id=ids[position]).update(show_if=condition)
    if hasattr(survey, "_prefetched_objects_cache"):
        survey._prefetched_objects_cache.clear()


class AuditEntrySerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="username", help_text="The account, by name.")

    class Meta:
        model = AuditEntry
        fields = ["hour", "user", "action", "detail"]


class ResponseMatrixSerializer(serializers.Serializer):
    rows = serializers.CharField()
    columns = serializers.CharField()
    values = serializers.ListField(child=serializers.ListField(child=serializers.FloatField()))


class CodebookQuestionSerializer(serializers.Serializer):
    """One column of the export (documentation only: :func:`question_codebook`
    builds it). Binary and choice questions carry the matrix keys, numbers the bounds."""

    text = serializers.CharField()
    kind = serializers.ChoiceField(choices=Question.Kind.choices)
    options = serializers.ListField(child=serializers.CharField())
    design = DesignField()
    not_sensitive = serializers.BooleanField()
    allow_no_privacy = serializers.BooleanField()
    column = serializers.CharField()
    question_id = serializers.IntegerField()
    epsilon = serializers.FloatField(allow_null=True)
    no_privacy = serializers.BooleanField()
    direct = serializers.BooleanField()
    outputs = serializers.DictField()
    reanalysis = serializers.CharField()
    values = serializers.DictField(child=serializers.CharField(), required=False)
    response_matrix = ResponseMatrixSerializer(required=False)
    t = serializers.FloatField(required=False)
    forced = serializers.ListField(child=serializers.FloatField(), required=False)
    c = serializers.JSONField(required=False, help_text="binary: P(yes | 0); choice: per option")
    rrreg = serializers.CharField(required=False, allow_null=True)
    p_yes_given_1 = serializers.FloatField(required=False)
    p_yes_given_0 = serializers.FloatField(required=False)
    lower = serializers.IntegerField(required=False)
    upper = serializers.IntegerField(required=False)
    alpha = serializers.FloatField(required=False, allow_null=True)
    noise = serializers.CharField(required=False)
    noise_variance = serializers.FloatField(required=False)
    direct_share = serializers.FloatField(
        required=False, allow_null=True, help_text="A split ballot's share asked directly."
    )
    innocuous_text = serializers.CharField(
        required=False, help_text="The innocuous question asked beside this one, or blank."
    )
    arm_column = serializers.CharField(
        required=False, help_text="Designs with arms and split ballots: the arm's column."
    )
    arm_values = serializers.DictField(child=serializers.CharField(), required=False)
    ballot_matrix = ResponseMatrixSerializer(
        required=False, help_text="A split ballot: the law of (ballot, report) given the truth."
    )


class CodebookSerializer(serializers.Serializer):
    format = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    mode = serializers.ChoiceField(choices=Survey.Mode.choices)
    epsilon_total = serializers.FloatField(allow_null=True)
    no_privacy = serializers.BooleanField()
    asked_directly = serializers.IntegerField()
    rows = serializers.CharField()
    columns = serializers.DictField(child=serializers.CharField())
    estimator = serializers.CharField()
    questions = CodebookQuestionSerializer(many=True)


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


class EmailInvitesRequestSerializer(serializers.Serializer):
    addresses = serializers.ListField(
        child=serializers.CharField(max_length=1000, allow_blank=True, trim_whitespace=False),
        max_length=email_invites.MAX_ADDRESSES,
        help_text="Email addresses, one invite each; one already invited is not mailed again.",
    )


class EmailInvitesSerializer(serializers.Serializer):
    kept = serializers.IntegerField(help_text="Addresses kept beside their invites.")
    unused = serializers.IntegerField(help_text="Of those, whose invite is not yet used.")


class EmailSentSerializer(serializers.Serializer):
    sent = serializers.IntegerField()
    already_invited = serializers.IntegerField()


NOT_FOUND = OpenApiResponse(DetailSerializer, "No such survey among yours.")
CONFLICT = OpenApiResponse(DetailSerializer, "Not allowed in the survey's current state.")
CSV_RESPONSE = {(200, "text/csv"): OpenApiTypes.STR, 404: NOT_FOUND}


DELETED = OpenApiResponse(
    description="Moved to the trash: a 404 everywhere (its link and join code included) "
    "until restored with POST /api/surveys/{id}/restore/ within the retention period; "
    "answers, invites and tallies are kept."
)


class SurveyViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your surveys and those shared with you: create with nested questions, edit, open
    and close, export, import, share, delete to the trash and restore."""

    serializer_class = SurveySerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        return api_surveys(self.request, self.action).prefetch_related("questions")

    def perform_create(self, serializer) -> None:
        serializer.save(owner=self.request.user)

    @extend_schema(responses={204: DELETED, 404: NOT_FOUND})
    def destroy(self, request, *args, **kwargs) -> Response:
        """Move the survey to the trash (owner only), even an open one with answers."""
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, survey: Survey) -> None:
        survey.move_to_trash()

    @extend_schema(responses={200: TrashedSurveySerializer(many=True)})
    @action(detail=False, methods=["get"], pagination_class=None)
    def trash(self, request) -> Response:
        """Your surveys in the trash (owner only), most recently deleted first."""
        surveys = self.get_queryset().with_response_counts().order_by("-trashed_at")
        return Response(TrashedSurveySerializer(surveys, many=True).data)

    @extend_schema(request=None, responses={200: SurveySerializer, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def restore(self, request, pk=None) -> Response:
        """Bring a survey back from the trash whole (owner only): questions, answers,
        invites and status as they were."""
        survey = self.get_object()
        survey.restore()
        return Response(self.get_serializer(survey).data)

    @extend_schema(
        request=TransferRequestSerializer,
        responses={200: SurveySerializer, 400: OpenApiTypes.OBJECT, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["post"])
    def transfer(self, request, pk=None) -> Response:
        """Make another account the owner (owner only); you stay on as an editor."""
        survey = self.get_object()
        new_owner = find_account_or_400(request.data)
        try:
            survey.transfer_to(new_owner)
            detail = f"ownership transferred to {new_owner.get_username()}"
            AuditEntry.record(survey, request.user, AuditEntry.Action.SHARING, detail)
        except SharingRefused as refused:
            raise ValidationError({"user": [str(refused)]}) from None
        survey.role = Role.EDITOR.value
        return Response(self.get_serializer(survey).data)

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
        (``q1`` … ``qk``): 0/1 for binary, the option index for choice, a whole number for
        number questions, empty when unanswered; simulated answers excluded."""
        survey = self.get_object()
        AuditEntry.record(survey, request.user, AuditEntry.Action.EXPORT, "responses (CSV)")
        return csv_download(responses_csv(survey), f"survey-{survey.id}-responses.csv")

    @extend_schema(responses={(200, SPSSRenderer.media_type): OpenApiTypes.BINARY, 404: NOT_FOUND})
    @action(
        detail=True,
        methods=["get"],
        url_path="export.sav",
        url_name="export-sav",
        renderer_classes=[JSONRenderer, SPSSRenderer],
    )
    def export_sav(self, request, pk=None) -> HttpResponse:
        """The responses of export.csv as an SPSS file: question texts as variable labels,
        options and yes/no as value labels, a skip as a user-missing code labelled
        "skipped", each design in the file's notes."""
        survey = self.get_object()
        AuditEntry.record(survey, request.user, AuditEntry.Action.EXPORT, "responses (SPSS .sav)")
        return file_download(
            responses_sav(survey), SPSSRenderer.media_type, f"survey-{survey.id}-responses.sav"
        )

    @extend_schema(responses={(200, StataRenderer.media_type): OpenApiTypes.BINARY, 404: NOT_FOUND})
    @action(
        detail=True,
        methods=["get"],
        url_path="export.dta",
        url_name="export-dta",
        renderer_classes=[JSONRenderer, StataRenderer],
    )
    def export_dta(self, request, pk=None) -> HttpResponse:
        """The responses of export.csv as a Stata 15 data set: the design and question
        text as variable labels, options and yes/no as value labels, a skip as ``.a``."""
        survey = self.get_object()
        AuditEntry.record(survey, request.user, AuditEntry.Action.EXPORT, "responses (Stata .dta)")
        return file_download(
            responses_dta(survey), StataRenderer.media_type, f"survey-{survey.id}-responses.dta"
        )

    @extend_schema(responses={200: CodebookSerializer, 404: NOT_FOUND})
    @action(detail=True, methods=["get"], url_path="codebook.json", url_name="codebook")
    def codebook(self, request, pk=None) -> Response:
        """Per column of the export: the question's kind, options, design and ε (null for
        ∞), whether it is asked directly, the response matrix (binary and choice) or bounds,
        ε and α (numbers), and how to re-analyse it. POSTed to /api/surveys/ it recreates
        the survey's questions, ready for an import of the export."""
        survey = self.get_object()
        AuditEntry.record(survey, request.user, AuditEntry.Action.EXPORT, "codebook (JSON)")
        response = Response(codebook(survey))
        response["Content-Disposition"] = f'inline; filename="survey-{pk}-codebook.json"'
        return response

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
            413: OpenApiResponse(DetailSerializer, "Over MAX_IMPORT_BYTES or MAX_IMPORT_ANSWERS."),
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
        every value is checked against its question's design (0/1, an option index, a
        whole number the noise can reach) and either all rows are stored or none. Stored in
        short batches, so respondents answering meanwhile are never kept waiting."""
        survey = self.get_object()
        if error := import_too_large(request):
            raise PayloadTooLarge(error)
        try:
            with read_csv_body(request) as binary:
                imported = import_responses(survey, binary)
        except ImportRejected as rejected:
            body = {"detail": str(rejected), "errors": [e.as_dict() for e in rejected.errors]}
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        except ImportTooLarge as error:
            raise PayloadTooLarge(str(error)) from None
        return Response({"imported": imported}, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: AuditEntrySerializer(many=True), 404: NOT_FOUND})
    @action(detail=True, methods=["get"])
    def audit(self, request, pk=None) -> Response:
        """The survey's audit log (owner only), newest first, in pages like the survey
        list: every export, analysis run, sharing change, design or wording edit and
        threshold change, with who and the hour."""
        page = self.paginate_queryset(self.get_object().audit_entries.all())
        return self.get_paginated_response(AuditEntrySerializer(page, many=True).data)

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

    @extend_schema(
        methods=["GET"], request=None, responses={200: EmailInvitesSerializer, 404: NOT_FOUND}
    )
    @extend_schema(
        methods=["POST"],
        request=EmailInvitesRequestSerializer,
        responses={
            201: EmailSentSerializer,
            400: OpenApiTypes.OBJECT,
            404: NOT_FOUND,
            409: CONFLICT,
            502: DetailSerializer,
        },
    )
    @extend_schema(methods=["DELETE"], request=None, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get", "post", "delete"], url_path="invites/email")
    def email_invites(self, request, pk=None) -> Response:
        """GET: how many mailed addresses are kept, and how many of their invites are
        unused. POST ``{"addresses": [...]}``: a new invite mailed to each (all or none:
        400 names every bad item). DELETE: forget the addresses (the invites keep
        working, reminders end). Each is written to the audit log."""
        survey = self.get_object()
        if request.method == "GET":
            return Response(email_state(survey))
        if request.method == "DELETE":
            return Response({"deleted": email_invites.forget(request, survey)})
        mailable(survey)
        serializer = EmailInvitesRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        items = list(enumerate(serializer.validated_data["addresses"], start=1))
        try:
            addresses = email_invites.checked_addresses(items, where="Item")
        except email_invites.AddressesRejected as rejected:
            raise ValidationError({"addresses": rejected.errors}) from None
        try:
            sent = email_invites.send_invites(request, survey, addresses)
        except OSError as error:
            body = {"detail": f"The mail server refused ({error}). No invite was kept."}
            return Response(body, status=status.HTTP_502_BAD_GATEWAY)
        body = {"sent": sent.sent, "already_invited": sent.already_invited}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT, 404: NOT_FOUND, 409: CONFLICT, 502: DetailSerializer},
    )
    @action(detail=True, methods=["post"], url_path="invites/email/remind")
    def email_remind(self, request, pk=None) -> Response:
        """The invite link again to every mailed address whose invite is unused:
        ``{"reminded": n}``."""
        survey = mailable(self.get_object())
        try:
            return Response({"reminded": email_invites.remind(request, survey)})
        except OSError as error:
            body = {"detail": f"The mail server refused ({error})."}
            return Response(body, status=status.HTTP_502_BAD_GATEWAY)


def email_state(survey: Survey) -> dict[str, int]:
    return {"kept": survey.emailed_invites.count(), "unused": email_invites.unused(survey).count()}


def mailable(survey: Survey) -> Survey:
    """The survey, if this site sends mail (else 404) and the survey can use mailed
    invites now (else 409, saying why)."""
    if not settings.EMAIL_ENABLED:
        raise NotFound("Email is not configured on this site.")
    if refused := email_invites.refusal(survey):
        raise Conflict(refused)
    return survey


def read_csv_body(request) -> IO[bytes]:
    """The CSV from a ``text/csv`` body or a multipart ``file`` field, as a binary file."""
    if not isinstance(request.data, dict):
        return request.data
    if request.content_type.startswith("text/csv"):
        return io.BytesIO()
    upload = request.data.get("file")
    if upload is None:
        raise ParseError("Send the CSV as a text/csv body or as a multipart field 'file'.")
    return upload


class OptionalSlashRouter(SimpleRouter):
    """``/api/surveys/1/export.csv`` (as in SPEC §3.1) and ``…/export.csv/`` both work."""

    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"


router = OptionalSlashRouter()
router.register("surveys", SurveyViewSet, basename="api-survey")
router.register(
    r"surveys/(?P<survey_id>\d+)/collaborators", CollaboratorViewSet, basename="api-collaborator"
)
