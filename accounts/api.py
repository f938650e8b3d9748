"""The API token endpoint: exchange a password for a token (throttled), or revoke it."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    parser_classes,
    permission_classes,
)
from rest_framework.exceptions import AuthenticationFailed, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from accounts.tokens import fresh_token, token_expiry
from survey import ratelimit


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)


TokenSerializer = inline_serializer(
    "Token",
    {
        "token": serializers.CharField(),
        "expires": serializers.DateTimeField(help_text="After this the token is refused."),
    },
)


@extend_schema(
    methods=["POST"],
    operation_id="auth_token_create",
    summary="Exchange a username and password for an API token",
    description=(
        "Returns the account's token (a new one if the old one expired). Send it as "
        "`Authorization: Token <token>`. Attempts are limited per client address (429)."
    ),
    request=CredentialsSerializer,
    responses={200: TokenSerializer, 400: OpenApiResponse(description="Wrong credentials.")},
    auth=[],
)
@extend_schema(
    methods=["DELETE"],
    operation_id="auth_token_destroy",
    summary="Revoke the account's API token",
    description="The token stops working at once; a password change revokes it too.",
    request=None,
    responses={204: OpenApiResponse(description="Revoked (or there was none).")},
)
@api_view(["POST", "DELETE"])
@authentication_classes(api_settings.DEFAULT_AUTHENTICATION_CLASSES)
@permission_classes([AllowAny])
@parser_classes([*api_settings.DEFAULT_PARSER_CLASSES, FormParser, MultiPartParser])  # as DRF's
def token_endpoint(request: Request) -> Response:
    """POST: log in for a token. DELETE: revoke the token of whoever is authenticated."""
    if request.method == "DELETE":
        if not request.user.is_authenticated:
            raise AuthenticationFailed()
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
    credentials = CredentialsSerializer(data=request.data)
    credentials.is_valid(raise_exception=True)
    user = authenticate(request._request, **credentials.validated_data)
    if user is None:
        raise ValidationError({"detail": "Unable to log in with the username and password given."})
    token = fresh_token(user)
    return Response({"token": token.key, "expires": token_expiry(token)})


token_view = ratelimit.limit("login")(token_endpoint)
