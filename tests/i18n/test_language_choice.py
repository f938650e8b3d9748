"""Who chooses the language: the researcher for a survey (builder and API), the phone's
Accept-Language for student pages; researcher pages stay in English."""

from __future__ import annotations

import pytest
from django.urls import reverse

from survey.models import Survey
from tests.i18n.test_pages import html_lang
from tests.survey.api_schema import assert_matches_schema, openapi_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client, owner):
    client.force_login(owner)
    return client


def lang_of(response) -> str:
    return html_lang(response.content.decode())


SETTINGS = {"title": "Umfrage", "description": "", "mode": "research"}


# Accept-Language ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("de-DE,de;q=0.9,en;q=0.8", "de"),
        ("fr-CH, fr;q=0.9", "fr"),
        ("es", "es"),
        ("ja, zh;q=0.8", "en"),
        ("", "en"),
    ],
)
def test_the_join_page_follows_accept_language_and_falls_back_to_english(client, accept, expected):
    response = client.get(reverse("classroom:join_form"), headers={"accept-language": accept})
    assert lang_of(response) == expected
    assert response["Content-Language"] == expected
    assert "Accept-Language" in response["Vary"]


def test_a_classroom_phone_follows_its_browser_not_the_survey(client, make_survey):
    classroom = make_survey(mode=Survey.Mode.CLASSROOM, language="fr")
    response = client.get(classroom.get_absolute_url(), headers={"accept-language": "de"})
    assert lang_of(response) == "de"
    status = client.get(
        reverse("classroom:student_status", args=[classroom.slug]),
        headers={"accept-language": "es"},
    )
    assert status["Content-Language"] == "es" and "Accept-Language" in status["Vary"]


def test_a_research_survey_speaks_its_own_language_whatever_the_browser(client, make_survey):
    survey = make_survey(language="es")
    response = client.get(survey.get_absolute_url(), headers={"accept-language": "de"})
    assert lang_of(response) == "es"
    assert 'href="/how-it-works/?lang=es"' in response.content.decode()
    assert lang_of(client.get("/how-it-works/?lang=es")) == "es"
    assert lang_of(client.get("/how-it-works/?lang=xx")) == "en"


def test_researcher_pages_stay_in_english(researcher, make_survey):
    survey = make_survey(language="de")
    german = {"accept-language": "de"}
    for url in ("/", reverse("survey:list"), reverse("survey:builder", args=[survey.id])):
        response = researcher.get(url, headers=german)
        assert lang_of(response) == "en", url
        assert "Content-Language" not in response


# The builder -----------------------------------------------------------------------------


def test_the_builder_sets_the_surveys_language(researcher, make_survey):
    survey = make_survey(status=Survey.Status.DRAFT)
    page = researcher.get(reverse("survey:builder", args=[survey.id])).content.decode()
    assert 'name="language"' in page and '<option value="fr">Français</option>' in page
    url = reverse("survey:builder", args=[survey.id])
    response = researcher.post(url, SETTINGS | {"language": "fr"})
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.language == "fr"


def test_the_builder_refuses_an_unknown_language_and_changes_nothing(researcher, make_survey):
    survey = make_survey(status=Survey.Status.DRAFT, language="de")
    url = reverse("survey:builder", args=[survey.id])
    response = researcher.post(url, SETTINGS | {"language": "klingon"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    survey.refresh_from_db()
    assert (survey.title, survey.language) == ("Exam honesty", "de")


def test_a_settings_post_without_a_language_keeps_it(researcher, make_survey):
    survey = make_survey(status=Survey.Status.DRAFT, language="es")
    researcher.post(reverse("survey:builder", args=[survey.id]), SETTINGS)
    survey.refresh_from_db()
    assert (survey.title, survey.language) == ("Umfrage", "es")


def test_a_new_survey_is_in_english_unless_chosen_and_a_copy_keeps_its_language(researcher, owner):
    researcher.post(reverse("survey:create"), {"title": "Plain", "mode": "research"})
    researcher.post(reverse("survey:create"), SETTINGS | {"language": "de"})
    plain, german = Survey.objects.order_by("id")
    assert (plain.language, german.language) == ("en", "de")
    assert german.duplicate(owner).language == "de"


# The API ---------------------------------------------------------------------------------


def test_the_api_creates_and_patches_the_language(api):
    body = {"title": "Encuesta", "language": "es", "questions": [{"text": "¿Copiaste?"}]}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201 and response.data["language"] == "es"
    assert_matches_schema(response, "/api/surveys/", "post")
    survey_id = response.data["id"]
    response = api.patch(f"/api/surveys/{survey_id}/", {"language": "fr"}, format="json")
    assert response.status_code == 200 and Survey.objects.get().language == "fr"
    assert api.post("/api/surveys/", {"title": "Plain"}, format="json").data["language"] == "en"


def test_the_api_refuses_an_unknown_language_with_a_clear_400_and_stores_nothing(api, survey):
    response = api.post("/api/surveys/", {"title": "X", "language": "xx"}, format="json")
    assert response.status_code == 400
    assert response.json()["language"] == ['Unknown language "xx": choose one of en, de, es, fr.']
    response = api.patch(f"/api/surveys/{survey.id}/", {"language": "EN"}, format="json")
    assert response.status_code == 400 and "language" in response.json()
    assert list(Survey.objects.values_list("language", flat=True)) == ["en"]


def test_the_schema_lists_the_languages():
    survey = openapi_schema()["components"]["schemas"]["Survey"]["properties"]["language"]
    choices = openapi_schema()["components"]["schemas"]
    enum = survey.get("enum") or choices[survey["allOf"][0]["$ref"].split("/")[-1]]["enum"]
    assert enum == ["en", "de", "es", "fr"]


def test_the_codebook_states_the_language(researcher, make_survey):
    survey = make_survey(language="fr")
    codebook = researcher.get(f"/api/surveys/{survey.id}/codebook.json").json()
    assert codebook["language"] == "fr"
