"""Several languages per survey: the researcher translates the title, description,
question texts and options (API "languages", "texts"); the respondent picks a language
on the page (default from Accept-Language); reports are the same whatever the language."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from analysis.results import survey_results
from survey.models import Survey
from tests.storage import nothing_stored, stored_reports

pytestmark = pytest.mark.django_db

CHEATED = {
    "text": "Have you cheated in an exam?",
    "texts": {"de": {"text": "Haben Sie in einer Prüfung geschummelt?"}},
}
YEAR = {
    "text": "Year of study?",
    "kind": "choice",
    "options": ["First", "Second", "Later"],
    "design": {"name": "direct"},
    "not_sensitive": True,
    "texts": {"de": {"text": "Studienjahr?", "options": ["Erstes", "Zweites", "Späteres"]}},
}
BODY = {
    "title": "Exams",
    "description": "A study of exams.",
    "languages": ["de"],
    "texts": {"de": {"title": "Prüfungen", "description": "Eine Studie über Prüfungen."}},
    "questions": [CHEATED, YEAR],
}


def create(api, **changes):
    return api.post("/api/surveys/", BODY | changes, format="json")


@pytest.fixture
def bilingual(api) -> Survey:
    response = create(api)
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get()
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


def page(client, survey, **headers) -> str:
    return client.get(survey.get_absolute_url(), headers=headers).content.decode()


def test_the_api_stores_and_returns_the_translations(api, bilingual):
    body = api.get(f"/api/surveys/{bilingual.id}/").json()
    assert body["languages"] == ["de"]
    assert body["texts"] == BODY["texts"]
    assert [q["texts"] for q in body["questions"]] == [CHEATED["texts"], YEAR["texts"]]


def test_a_patch_leaving_texts_out_keeps_them(api, bilingual):
    items = [{"id": q.id} for q in bilingual.questions.all()]
    response = api.patch(f"/api/surveys/{bilingual.id}/", {"questions": items}, format="json")
    assert response.status_code == 200, response.json()
    assert [q.texts for q in bilingual.questions.all()] == [CHEATED["texts"], YEAR["texts"]]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"languages": ["it"]}, "languages", 'Unknown language "it"'),
        ({"languages": ["de", "de"]}, "languages", "appears twice"),
        ({"texts": {"fr": {"title": "Examens"}}}, "texts", '"fr" is not one of'),
        ({"texts": {"de": {"title": ""}}}, "texts.de.title", "non-empty"),
        (
            {"questions": [CHEATED, YEAR | {"texts": {"de": {"text": "Jahr?", "options": ["a"]}}}]},
            "questions[1].texts.de.options",
            "give all 3 options, in order (got 1)",
        ),
        (
            {"questions": [CHEATED | {"texts": {"es": {"text": "¿Copiaste?"}}}, YEAR]},
            "questions[0].texts",
            '"es" is not one of',
        ),
        (
            {"questions": [CHEATED | {"texts": {"de": {"text": " "}}}, YEAR]},
            "questions[0].texts.de.text",
            "non-empty",
        ),
    ],
)
def test_bad_translations_are_refused_naming_the_field(api, changes, field, message):
    response = create(api, **changes)
    assert response.status_code == 400
    assert message in str(response.json()[field])
    assert not Survey.objects.exists()


def test_the_page_speaks_the_browsers_language_among_those_offered(client, bilingual):
    german = page(client, bilingual, accept_language="de-CH,de;q=0.9,en;q=0.5")
    assert '<html lang="de">' in german
    assert "<h1>Prüfungen</h1>" in german and "Eine Studie über Prüfungen." in german
    assert "Haben Sie in einer Prüfung geschummelt?" in german and "Erstes" in german
    assert "Have you cheated" not in german
    french = page(client, bilingual, accept_language="fr")  # not offered: the survey's own
    assert '<html lang="en">' in french and "<h1>Exams</h1>" in french


def test_the_respondent_picks_a_language_with_links_that_never_echo_a_panels_parameters(
    client, bilingual
):
    url = f"{bilingual.get_absolute_url()}?PROLIFIC_PID=abc123&lang=de"
    html = client.get(url, headers={"accept_language": "en"}).content.decode()
    assert "<h1>Prüfungen</h1>" in html
    assert 'aria-label="Sprache dieser Umfrage"' in html
    assert 'href="?lang=en" hreflang="en" lang="en">English</a>' in html
    assert "abc123" not in html  # the page's script carries it over, in the browser
    assert 'hreflang="de" lang="de" aria-current="page">Deutsch</a>' in html
    assert f'action="/s/{bilingual.slug}/paper/?lang=de"' in html


def test_a_survey_in_one_language_offers_no_choice(client, make_survey):
    html = page(client, make_survey(1), accept_language="de")
    assert 'class="languages"' not in html and '<html lang="en">' in html


def test_answers_are_the_same_whatever_the_language(client, bilingual):
    cheated, year = bilingual.questions.all()
    url = reverse("api-submit", args=[bilingual.slug])
    for _ in range(2):
        body = {
            "submission_id": str(uuid.uuid4()),
            "answers": [{"question": cheated.id, "value": 1}, {"question": year.id, "value": 2}],
        }
        assert client.post(url, body, content_type="application/json").status_code == 201
    response = client.post(
        f"/s/{bilingual.slug}/paper/?lang=de",
        {
            "submission_id": str(uuid.uuid4()),
            f"reported_{cheated.id}": "1",
            f"reported_{year.id}": "2",
        },
    )
    assert response.status_code == 200
    assert '<html lang="de">' in response.content.decode()
    assert stored_reports(bilingual) == [{cheated.id: 1, year.id: 2}] * 3
    entries = survey_results(bilingual).as_dict()["questions"]
    assert [(e["question"], e["n"]) for e in entries] == [(cheated.id, 3), (year.id, 3)]
    assert [q.text for q in Survey.objects.get().questions.all()] == [
        "Have you cheated in an exam?",
        "Year of study?",
    ]


def test_a_refused_paper_form_comes_back_in_the_language_picked(client, bilingual):
    cheated, year = bilingual.questions.all()
    response = client.post(
        f"/s/{bilingual.slug}/paper/?lang=de",
        {"submission_id": str(uuid.uuid4()), f"reported_{cheated.id}": "1"},
    )
    html = response.content.decode()
    assert response.status_code == 400 and '<html lang="de">' in html
    assert "„Studienjahr?“" in html or "“Studienjahr?”" in html
    assert nothing_stored()


def test_the_codebook_and_a_copy_keep_the_translations(api, bilingual, owner):
    book = api.get(f"/api/surveys/{bilingual.id}/codebook.json").json()
    assert book["languages"] == ["de"] and book["texts"] == BODY["texts"]
    assert [q["texts"] for q in book["questions"]] == [CHEATED["texts"], YEAR["texts"]]
    copy = bilingual.duplicate(owner)
    assert copy.languages == ["de"] and copy.questions.last().texts == YEAR["texts"]


def test_the_language_links_keep_an_invite(client, bilingual):
    Survey.objects.filter(pk=bilingual.pk).update(requires_invite=True)
    url = f"{bilingual.get_absolute_url()}?invite=tok-1&lang=de"
    html = client.get(url).content.decode()
    assert 'href="?invite=tok-1&amp;lang=en" hreflang="en"' in html


def test_a_text_left_untranslated_says_its_own_language_for_screen_readers(
    client, api, make_survey
):
    often = {"text": "How often?", "kind": "choice", "options": ["Never", "Often"]}
    often |= {"design": {"name": "direct"}, "not_sensitive": True}
    texts = {"de": {"title": "Prüfungen"}}  # no description in German
    response = create(api, texts=texts, consent_text="I agree.", questions=[CHEATED, often])
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get()
    survey.status = Survey.Status.OPEN
    survey.save()
    cheated, often = survey.questions.all()
    german = page(client, survey, accept_language="de")
    assert "<h1>Prüfungen</h1>" in german
    assert '<p class="lead" lang="en">A study of exams.</p>' in german
    assert '<div class="consent-text" lang="en">' in german
    assert f'<h2 id="q{cheated.id}-text">Haben Sie' in german
    assert f'<h2 id="q{often.id}-text" lang="en">How often?</h2>' in german
    assert german.count('<button type="button" class="option" lang="en"') == 2
    assert '<legend><span lang="en">How often?</span></legend>' in german  # no JavaScript
    assert '<strong lang="en">Never</strong>' in german
    english = page(client, survey, accept_language="en")
    assert f'<h2 id="q{often.id}-text">How often?</h2>' in english
    assert '<p class="lead">A study of exams.</p>' in english
    assert '<div class="consent-text">' in english and '<strong lang="en">' not in english


def test_the_builder_counts_the_texts_not_yet_translated(api, logged_in, bilingual):
    builder = reverse("survey:builder", args=[bilingual.id])
    assert "data-untranslated" not in logged_in.get(builder).content.decode()
    added = {"text": "Ever copied homework?", "design": {"name": "forced_response"}}
    response = api.patch(
        f"/api/surveys/{bilingual.id}/",
        {"questions": [CHEATED, YEAR, added], "texts": {"de": {"title": "Prüfungen"}}},
        format="json",
    )
    assert response.status_code == 200, response.json()
    page = logged_in.get(builder).content.decode()
    assert (
        '<span class="hint" data-untranslated="de">(2 texts not yet translated: respondents '
        "see them in the original)</span>" in page
    )
