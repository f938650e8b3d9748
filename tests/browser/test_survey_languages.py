"""A survey in two languages in real Chromium: the page starts in the browser's language,
the respondent switches language without losing the link's parameters, and what is sent
and stored is the same whatever language was shown (with and without JavaScript)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser.conftest import PHONE
from tests.browser.test_respondent_accessibility import serious_violations
from tests.storage import stored_reports

pytestmark = pytest.mark.django_db(transaction=True)

SENT = "left this device"


@pytest.fixture
def bilingual(make_survey):
    survey = make_survey(
        0,
        languages=["de"],
        texts={"de": {"title": "Prüfungen"}},
        consent_text="Run by the ethics lab.",
    )
    direct = {"design_name": "direct", "design_params": {}}
    survey.questions.create(
        position=0,
        text="Do you live on campus?",
        texts={"de": {"text": "Wohnen Sie auf dem Campus?"}},
        **direct,
    )
    survey.questions.create(
        position=1,
        text="Year of study?",
        kind="choice",
        options=["First", "Later"],
        texts={"de": {"text": "Studienjahr?", "options": ["Erstes", "Späteres"]}},
        **direct,
    )
    return survey


def test_the_page_starts_in_the_browsers_language_and_switches_keeping_the_link(
    live_server, browser, bilingual, screenshot
):
    context = browser.new_context(viewport=PHONE, locale="de-DE", bypass_csp=True)
    page = context.new_page()
    bodies = []
    page.on("request", lambda r: bodies.append(r.post_data) if r.method == "POST" else None)
    page.goto(f"{live_server.url}{bilingual.get_absolute_url()}?PROLIFIC_PID=p-42")
    assert page.locator("html").get_attribute("lang") == "de"
    assert page.get_by_role("heading", name="Prüfungen", level=1).is_visible()
    choice = page.get_by_role("navigation", name="Sprache dieser Umfrage")
    assert choice.get_by_role("link", name="Deutsch").get_attribute("aria-current") == "page"
    assert serious_violations(page) == []
    screenshot(page, "languages-german-phone")

    choice.get_by_role("link", name="English").click()
    page.wait_for_url("**lang=en**")
    assert parse_qs(urlsplit(page.url).query) == {"PROLIFIC_PID": ["p-42"], "lang": ["en"]}
    assert page.locator("html").get_attribute("lang") == "en"
    page.get_by_role("button", name="I agree: show the questions").click()
    campus, year = page.locator("[data-question]").all()
    assert "Do you live on campus?" in campus.inner_text()
    campus.get_by_role("button", name="Yes").click()
    year.get_by_role("radio", name="Later").click()
    assert serious_violations(page) == []
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()
    context.close()

    (body,) = [json.loads(b) for b in bodies]
    assert set(body) == {"submission_id", "answers", "design_version"}
    q1, q2 = bilingual.questions.all()
    assert body["answers"] == [{"question": q1.id, "value": 1}, {"question": q2.id, "value": 1}]
    assert "p-42" not in json.dumps(body)


def test_without_javascript_the_form_is_sent_in_the_language_picked(
    live_server, browser, bilingual, screenshot
):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False, locale="en-GB")
    page = context.new_page()
    page.goto(f"{live_server.url}{bilingual.get_absolute_url()}")
    assert page.locator("html").get_attribute("lang") == "en"
    page.get_by_role("link", name="Deutsch").click()
    paper = page.locator("form.paper")
    assert "Studienjahr?" in paper.inner_text()
    paper.locator("input[name=consent]").check()
    paper.get_by_label("Meine Antwort ist ja").check()
    paper.get_by_label("Meine Antwort ist Späteres").check()
    screenshot(page, "languages-paper-german-phone")
    paper.get_by_role("button", name="Meine Ergebnisse senden").click()
    page.get_by_role("heading", name="Danke").wait_for()
    assert page.locator("html").get_attribute("lang") == "de"
    q1, q2 = bilingual.questions.all()
    assert stored_reports(bilingual) == [{q1.id: 1, q2.id: 1}]
    context.close()
