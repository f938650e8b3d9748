"""The language of respondent and student pages.

A research survey's pages speak the survey's language (chosen in the builder). Student
pages — a classroom survey's phone page, the join, explain and lesson pages — follow
each phone's Accept-Language: one room holds readers of several languages. Researcher
pages stay in English: there is no LocaleMiddleware, so nothing else is translated.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation.trans_real import parse_accept_lang_header

CODES = frozenset(code for code, _ in settings.LANGUAGES)


def from_request(request: HttpRequest) -> str:
    """``?lang=`` (links from a survey's pages carry its language), else the browser's
    Accept-Language, else English."""
    asked = request.GET.get("lang", "")
    if asked in CODES:
        return asked
    return translation.get_language_from_request(request)


def for_survey(survey, request: HttpRequest) -> str:
    """The language a respondent reads ``survey`` in: a research survey offered in
    several languages takes the one picked (``?lang=``), else the browser's best among
    them, else its own."""
    if survey.mode == "classroom":
        return from_request(request)
    offered = survey.offered_languages
    if len(offered) == 1:
        return survey.language
    if request.GET.get("lang") in offered:
        return request.GET["lang"]
    for code in _accepted(request):
        if code in offered:
            return code
    return survey.language


def mark_originals(survey, language: str, questions) -> None:
    """Say which texts the page shows untranslated. A survey may gain a language before
    every text is translated (the translation page says a blank shows the original), so
    such a text is shown in the survey's own language: its ``*_lang`` attribute (read by
    the templates as a ``lang`` attribute) makes screen readers pronounce it in that
    language instead of the page's. Classroom surveys are left alone: their phones follow
    each student's browser and their questions are never translated, so the language
    their teacher left in the settings says little about the words they typed."""
    if language == survey.language or survey.mode == "classroom":
        return
    translated = language in survey.languages
    texts = survey.texts.get(language, {}) if translated else {}
    original = survey.language
    survey.title_lang = "" if texts.get("title") else original
    survey.description_lang = "" if texts.get("description") else original
    survey.consent_lang = original  # the consent text has no translations
    for question in questions:
        wording = question.texts.get(language, {}) if translated else {}
        question.text_lang = "" if wording else original
        question.innocuous_lang = "" if wording.get("innocuous_text") else original


def untranslated_count(survey, questions, language: str) -> int:
    """How many of the survey's texts (its title, its description if it has one, each
    question and each innocuous question) respondents reading ``language`` see in the
    original: the builder says so beside the language's link."""
    texts = survey.texts.get(language, {})
    missing = int(not texts.get("title"))
    missing += int(bool(survey.description) and not texts.get("description"))
    for q in questions:
        wording = q.texts.get(language, {})
        missing += int(not wording)
        missing += int(bool(q.innocuous_text) and not wording.get("innocuous_text"))
    return missing


def _accepted(request: HttpRequest) -> list[str]:
    """The primary language codes of Accept-Language, most wanted first."""
    codes = []
    for code, _ in parse_accept_lang_header(request.headers.get("Accept-Language", "")):
        primary = code.split("-")[0].lower()
        if primary not in codes:
            codes.append(primary)
    return codes


def links(survey, request: HttpRequest, current: str) -> list[dict]:
    """The language choice on a survey's page: one link per offered language, keeping an
    invite. Other parameters (a panel's id for the completion link) are never echoed by
    the server: the page's script carries them over in the browser."""
    if survey.mode == "classroom" or len(survey.offered_languages) == 1:
        return []
    choices = []
    for code in survey.offered_languages:
        query = QueryDict(mutable=True)
        if invite := request.GET.get("invite"):
            query["invite"] = invite
        query["lang"] = code
        info = translation.get_language_info(code)
        choices.append(
            {
                "code": code,
                "name": info["name_local"],
                "query": query.urlencode(),
                "current": code == current,
            }
        )
    return choices


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
