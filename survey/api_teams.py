"""Sharing over the API: a survey's collaborators, listed, added, changed and removed by
its owner (``/api/surveys/{id}/collaborators/``; anyone else gets a 404), and what the
owner's trash lists."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from survey.models import (
    NO_SUCH_ACCOUNT,
    SHARED_ROLE_CHOICES,
    AuditEntry,
    Collaborator,
    Role,
    SharingRefused,
    find_account,
)
from survey.permissions import survey_for


class AccountField(serializers.CharField):
    """An account named by its username or its email address."""

    def run_validation(self, data=serializers.empty):
        user = find_account(super().run_validation(data))
        if user is None:
            raise ValidationError(NO_SUCH_ACCOUNT)
        return user

    def to_representation(self, user) -> str:
        return user.get_username()


class TransferRequestSerializer(serializers.Serializer):
    user = AccountField(max_length=254, help_text="Username or email of the new owner.")


class ShareRequestSerializer(serializers.Serializer):
    user = AccountField(max_length=254, help_text="Username or email of the account.")
    role = serializers.ChoiceField(choices=SHARED_ROLE_CHOICES)


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=SHARED_ROLE_CHOICES)


class CollaboratorSerializer(serializers.ModelSerializer):
    user_id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Collaborator
        fields = ["user_id", "username", "role"]


class TrashedSurveySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField()
    n_responses = serializers.IntegerField()
    trashed_at = serializers.DateTimeField()
    purge_after = serializers.DateTimeField(
        help_text="When purge_trash may delete it for good; restore it before then."
    )


def find_account_or_400(data) -> object:
    serializer = TransferRequestSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data["user"]


NOT_FOUND = OpenApiResponse(description="No such survey among those you own.")
USER_ID = OpenApiParameter("user_id", int, OpenApiParameter.PATH, description="The account's id")
SURVEY_ID = OpenApiParameter("survey_id", int, OpenApiParameter.PATH)


@extend_schema_view(
    list=extend_schema(
        parameters=[SURVEY_ID], responses={200: CollaboratorSerializer(many=True), 404: NOT_FOUND}
    ),
    create=extend_schema(
        parameters=[SURVEY_ID],
        request=ShareRequestSerializer,
        responses={
            201: CollaboratorSerializer,
            400: OpenApiResponse(description="Unknown account, or the owner."),
            404: NOT_FOUND,
        },
    ),
    partial_update=extend_schema(
        parameters=[SURVEY_ID, USER_ID],
        request=RoleSerializer,
        responses={
            200: CollaboratorSerializer,
            400: OpenApiResponse(description="Not a role."),
            404: NOT_FOUND,
        },
    ),
    destroy=extend_schema(
        parameters=[SURVEY_ID, USER_ID],
        responses={204: OpenApiResponse(description="Access removed."), 404: NOT_FOUND},
    ),
)
class CollaboratorViewSet(mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    """The accounts a survey is shared with: viewers (results and exports) and editors
    (also build and distribute). Owner only."""

    serializer_class = CollaboratorSerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    lookup_field = "user_id"
    lookup_value_regex = r"\d+"
    pagination_class = None

    def survey(self):
        return survey_for(self.request, self.kwargs["survey_id"], Role.OWNER)

    def perform_destroy(self, collaborator: Collaborator) -> None:
        said = f"access removed from {collaborator.user.get_username()}"
        AuditEntry.record(collaborator.survey, self.request.user, AuditEntry.Action.SHARING, said)
        collaborator.delete()

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema has no request user
            return Collaborator.objects.none()
        return self.survey().collaborators.select_related("user")

    def create(self, request, survey_id=None) -> Response:
        """Share the survey with an account, or change the role it has."""
        survey = self.survey()
        serializer = ShareRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            collaborator = survey.share_with(**serializer.validated_data)
        except SharingRefused as refused:
            raise ValidationError({"user": [str(refused)]}) from None
        said = f"shared with {collaborator.user.get_username()} as {collaborator.role}"
        AuditEntry.record(survey, request.user, AuditEntry.Action.SHARING, said)
        body = CollaboratorSerializer(collaborator).data
        return Response(body, status=status.HTTP_201_CREATED)

    def partial_update(self, request, survey_id=None, user_id=None) -> Response:
        """Change a collaborator's role."""
        collaborator = self.get_object()
        serializer = RoleSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        collaborator.role = serializer.validated_data["role"]
        collaborator.save(update_fields=["role"])
        said = f"{collaborator.user.get_username()} is now {collaborator.role}"
        AuditEntry.record(collaborator.survey, request.user, AuditEntry.Action.SHARING, said)
        return Response(CollaboratorSerializer(collaborator).data)
