"""The language of respondent and student pages.

A survey's pages speak the survey's language (chosen in the builder); pages not tied to
one survey follow the browser's Accept-Language. Researcher pages stay in English: there
is no LocaleMiddleware, so nothing else is translated.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.cache import patch_vary_headers

CODES = frozenset(code for code, _ in settings.LANGUAGES)


def from_request(request: HttpRequest) -> str:
    """``?lang=`` (links from a survey's pages carry its language), else the browser's
    Accept-Language, else English."""
    asked = request.GET.get("lang", "")
    if asked in CODES:
        return asked
    return translation.get_language_from_request(request)


def render_in(
    language: str | None,
    request: HttpRequest,
    template: str,
    context: dict,
    status: int = 200,
) -> HttpResponse:
    """The page rendered in ``language``, or in the browser's language when None."""
    if language is None:
        language = from_request(request)
    with translation.override(language):
        response = render(request, template, context, status=status)
    response["Content-Language"] = language
    patch_vary_headers(response, ["Accept-Language"])
    return response
