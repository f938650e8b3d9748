"""The language of respondent and student pages.

A research survey's pages speak the survey's language (chosen in the builder). Student
pages — a classroom survey's phone page, the join, explain and lesson pages — follow
each phone's Accept-Language: one room holds readers of several languages. Researcher
pages stay in English: there is no LocaleMiddleware, so nothing else is translated.
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


def for_survey(survey, request: HttpRequest) -> str:
    """The language a respondent reads ``survey`` in."""
    return from_request(request) if survey.mode == "classroom" else survey.language


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
    return in_language(response, language)


def in_language(response: HttpResponse, language: str) -> HttpResponse:
    """Says the response's language; caches keep one copy per Accept-Language."""
    response["Content-Language"] = language
    patch_vary_headers(response, ["Accept-Language"])
    return response
