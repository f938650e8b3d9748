"""The builder side of several languages: picking further languages in the settings,
and one translation page per language with errors beside their fields."""

from __future__ import annotations

import re

import pytest

from survey.models import AuditEntry, Survey

pytestmark = pytest.mark.django_db

SETTINGS = {"title": "Exams", "mode": "research", "language": "en", "allow_skip": "on"}


@pytest.fixture
def draft(make_survey) -> Survey:
    survey = make_survey(1, status=Survey.Status.DRAFT, languages=["de"])
    survey.questions.create(
        position=1,
        text="Year?",
        kind="choice",
        options=["First", "Later"],
        design_name="direct",
        design_params={},
    )
    return survey


def url(survey, language="de") -> str:
    return f"/surveys/{survey.id}/translations/{language}/"


def test_the_settings_pick_further_languages(logged_in, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    response = logged_in.post(f"/surveys/{survey.id}/edit/", SETTINGS | {"languages": ["de", "fr"]})
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.languages == ["de", "fr"]
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert "<legend>Further languages respondents can pick</legend>" in page
    assert f'href="{url(survey)}">Deutsch</a>' in page and url(survey, "fr") in page


def test_a_language_the_app_does_not_offer_is_refused_beside_the_field(logged_in, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    response = logged_in.post(f"/surveys/{survey.id}/edit/", SETTINGS | {"languages": ["it"]})
    assert response.status_code == 400
    assert "Select a valid choice. it is not one of the available choices." in (
        response.content.decode()
    )
    survey.refresh_from_db()
    assert survey.languages == []


def test_the_translation_page_saves_every_text(logged_in, draft):
    cheat, year = draft.questions.all()
    data = {
        "title": "Prüfungen",
        "description": "",
        f"q{cheat.id}-text": "Geschummelt?",
        f"q{year.id}-text": "Jahr?",
        f"q{year.id}-options": "Erstes\nSpäteres\n",
    }
    response = logged_in.post(url(draft), data)
    assert response.status_code == 302
    draft.refresh_from_db()
    cheat.refresh_from_db()
    year.refresh_from_db()
    assert draft.texts == {"de": {"title": "Prüfungen"}}
    assert cheat.texts == {"de": {"text": "Geschummelt?"}}
    assert year.texts == {"de": {"text": "Jahr?", "options": ["Erstes", "Späteres"]}}
    assert AuditEntry.objects.filter(detail="translation into Deutsch edited").exists()
    page = logged_in.get(url(draft)).content.decode()
    assert 'value="Geschummelt?"' in page and "Erstes\nSpäteres</textarea>" in page


def test_a_translation_missing_an_option_is_refused_beside_the_field(logged_in, draft):
    _, year = draft.questions.all()
    data = {"title": "Prüfungen", f"q{year.id}-text": "Jahr?", f"q{year.id}-options": "Erstes"}
    response = logged_in.post(url(draft), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Give all 2 options, one per line in the original&#x27;s order (got 1)." in html
    assert f'id="id_q{year.id}-options-error"' in html
    draft.refresh_from_db()
    year.refresh_from_db()
    assert draft.texts == {} and year.texts == {}


def test_the_translation_page_translates_the_innocuous_question(logged_in, draft):
    born = "Were you born in the first half of the year?"
    shoplifted = draft.questions.create(
        position=2,
        text="Shoplifted?",
        design_name="unrelated_question_unknown",
        design_params={"p_truth": [0.3, 0.7], "arm_weights": [0.5, 0.5]},
        innocuous_text=born,
    )
    field = f"q{shoplifted.id}-innocuous"
    page = logged_in.get(url(draft)).content.decode()
    assert f'name="{field}"' in page and born in page
    alone = logged_in.post(url(draft), {"title": "Prüfungen", field: "Geboren?"})
    assert alone.status_code == 400 and "Translate the question too" in alone.content.decode()
    data = {"title": "Prüfungen", f"q{shoplifted.id}-text": "Gestohlen?"}
    assert logged_in.post(url(draft), data).status_code == 302
    before = untranslated(logged_in, draft)
    assert logged_in.post(url(draft), data | {field: "Geboren?"}).status_code == 302
    shoplifted.refresh_from_db()
    assert shoplifted.texts == {"de": {"text": "Gestohlen?", "innocuous_text": "Geboren?"}}
    assert untranslated(logged_in, draft) == before - 1


def untranslated(logged_in, survey) -> int:
    """The number of texts the builder says respondents reading German see untranslated."""
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    return int(re.search(r'data-untranslated="de">\((\d+) text', page)[1])


def test_only_the_surveys_further_languages_have_a_page(logged_in, draft):
    assert logged_in.get(url(draft, "fr")).status_code == 404
    assert logged_in.get(url(draft, "en")).status_code == 404


def test_other_peoples_surveys_have_no_translation_page(client, outsider, draft):
    client.force_login(outsider)
    assert client.get(url(draft)).status_code == 404
