"""A German survey answered end to end in real Chromium: every sentence the page and
its script show is German, and the randomized answers are stored."""

from __future__ import annotations

import re

import pytest

from survey.models import Survey
from tests.i18n.catalogue import english_runs, visible_text
from tests.storage import stored_count, stored_reports

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = [
    ("binary", "forced_response", {"p_truth": 0.5, "p_yes": 0.5}, [], "Haben Sie geschummelt?"),
    ("choice", "k_rr", {"epsilon": 1.0986}, ["Nie", "Manchmal", "Oft"], "Wie oft?"),
    ("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 20}, [], "Wie viele Gläser?"),
]
WRITTEN = ["Ehrlichkeit", *[text for *_, text in QUESTIONS], "Nie", "Manchmal", "Oft"]
SENT = "Nur diese randomisierten Antworten haben dieses Gerät verlassen."


@pytest.fixture
def german(make_survey) -> Survey:
    survey = make_survey(0, language="de")
    survey.title = "Ehrlichkeit"
    survey.save()
    for i, (kind, name, params, options, text) in enumerate(QUESTIONS):
        survey.questions.create(
            position=i,
            text=text,
            kind=kind,
            design_name=name,
            design_params=params,
            options=options,
        )
    return survey


def test_a_german_survey_is_answered_in_german_from_start_to_end(live_server, page, german):
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    page.goto(live_server.url + german.get_absolute_url())
    assert page.locator("html").get_attribute("lang") == "de"
    binary, choice, number = page.locator("[data-question]").all()

    binary.get_by_role("button", name="Ja", exact=True).click()
    choice.get_by_role("radio", name="Manchmal").click()
    number.get_by_role("spinbutton").fill("25")  # the script's own message, in German
    page.get_by_text("Bitte geben Sie eine ganze Zahl von 0 bis 20 an.").wait_for()
    number.get_by_role("spinbutton").fill("4")
    page.get_by_role("button", name="Werfen und senden").click()
    page.get_by_text(SENT).wait_for()

    for question in (binary, choice, number):  # the report, in German, and never the coins
        text = question.inner_text()
        assert "Gesendet:" in text
        assert not re.search(r"zeigte (Kopf|Zahl)|Rauschen von [+−]\d", text)
    assert stored_count(german) == 1
    assert [len(r) for r in stored_reports(german)] == [3]

    page.reload()  # the device remembers: the same reports again, said in German
    assert page.get_by_text(
        "Sie haben diese Umfrage auf diesem Gerät bereits beantwortet"
    ).is_visible()
    shown = visible_text(page.content())
    german.language = "en"
    german.save()
    english = page.context.new_page()
    english.goto(live_server.url + german.get_absolute_url())
    english_page = english_runs(visible_text(english.content()), WRITTEN)
    assert english_page and not english_page & english_runs(shown, WRITTEN)
    assert errors == []
