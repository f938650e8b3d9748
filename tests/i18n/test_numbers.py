"""The privacy explanations' numbers — ε, the odds bound e^ε, the posterior, the noise —
are filled in every language, with that language's decimal and thousand separators."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from survey.templatetags.respondent import respond_sentences
from tests.i18n.catalogue import visible_text
from tests.survey.test_respondent_views import MIXED, add_questions

pytestmark = pytest.mark.django_db

# Decimal and thousand separators, as each language writes numbers.
SEPARATORS = {"en": (".", ","), "de": (",", "."), "es": (",", "\xa0"), "fr": (",", "\xa0")}
LANGUAGES = list(SEPARATORS)
WIDE = ("number", "laplace", {"epsilon": 0.5, "lower": 0, "upper": 20000}, [], "Steps today?")


def written(number: str, language: str) -> str:
    """An English-formatted number ("12,345.6") as ``language`` writes it."""
    decimal, thousands = SEPARATORS[language]
    return number.translate(str.maketrans({".": decimal, ",": thousands}))


@pytest.fixture
def mixed(make_survey):
    survey = make_survey(0)
    add_questions(survey, [*MIXED, WIDE])
    return survey


def page_text(client, url: str, language: str = "en", **data) -> str:
    response = client.get(url, data, headers={"accept-language": language})
    assert response.status_code == 200
    return visible_text(response.content.decode())


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_questions_epsilon_odds_and_posterior_are_filled_in(client, mixed, language):
    mixed.language = language
    mixed.save()
    text = page_text(client, mixed.get_absolute_url())
    total = sum(q.epsilon for q in mixed.questions.all() if q.design.randomized)
    # The survey's total; ln 3 (two coins, mirrored, k-RR); the Laplace questions' ε,
    # odds and noise; the posterior after a "yes" from two fair coins.
    expected = [
        f"ε\xa0=\xa0{written(f'{total:.2f}', language)}",
        f"ε = {written('1.10', language)}",
        "3×",
        f"ε = {written('1.00', language)}",
        f"{written('2.72', language)}×",
        f"ε = {written('0.50', language)}",
        "50 %",
        "75 %",
    ]
    for question in mixed.questions.filter(design_name="laplace"):
        noise = f"{question.design.typical_noise:,.0f}"
        expected.append(f"±{written(noise, language)}")
    for number in expected:
        assert number in text, (language, number)
    assert "20000" in text or written("20,000", language) in text
    if language != "en":
        assert not re.search(r"\d\.\d\d\b", text), "a number kept its English decimal point"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_how_it_works_page_fills_in_the_two_coins_numbers(client, language):
    text = page_text(client, reverse("survey:how_it_works"), lang=language)
    for number in (f"ln 3 ≈ {written('1.10', language)}", written("3.30", language), "27×"):
        assert number in text, (language, number)
    assert "50 %" in text and "75 %" in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_explain_page_fills_in_composition_and_the_posterior(client, language):
    text = page_text(client, reverse("classroom:explain"), language)
    for number in (f"ln 3 ≈ {written('1.10', language)}", f"≈ {written('2.20', language)}"):
        assert number in text, (language, number)
    assert "≈ 11" in text and "75 %" in text and "25 %" in text


def test_respond_js_has_a_sentence_for_every_key_it_uses():
    script = (Path(settings.BASE_DIR) / "static/survey/respond.js").read_text()
    used = set(re.findall(r'\bt\("(\w+)"', script))
    assert used == set(respond_sentences()), used ^ set(respond_sentences())


@pytest.mark.parametrize("language", LANGUAGES)
def test_respond_js_sentences_keep_their_placeholders(language):
    english = respond_sentences()
    with translation.override(language):
        sentences = respond_sentences()
    for key, sentence in sentences.items():
        assert set(re.findall(r"\{\w+\}", sentence)) == set(re.findall(r"\{\w+\}", english[key]))
        assert language == "en" or sentence != english[key], key


def test_epsilon_words_read_the_same_number_in_every_language():
    """ln 3 written out: the same digits, only the separator differs."""
    from survey.templatetags.privacy import epsilon, odds_bound

    for language in LANGUAGES:
        with translation.override(language):
            assert epsilon(math.log(3)) == written("1.10", language)
            assert odds_bound(math.log(12345)) == written("12,345", language) + "×"
            assert "∞" in epsilon(math.inf)
