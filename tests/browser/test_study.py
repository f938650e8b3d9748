"""A real study in a real browser: "Prefer not to answer" with and without JavaScript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from survey.models import Invite
from tests.browser.conftest import PHONE
from tests.browser.test_respondent_accessibility import serious_violations
from tests.storage import nothing_stored, stored_reports

pytestmark = pytest.mark.django_db(transaction=True)

SENT = "left this device"
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def study(make_survey):
    survey = make_survey(0, consent_text="Run by the ethics lab. You may stop at any time.")
    survey.questions.create(position=0, text="Have you cheated?", design_params={})
    survey.questions.create(
        position=1,
        text="How often?",
        kind="choice",
        options=["Never", "Once", "More"],
        design_name="k_rr",
        design_params={"epsilon": 1.0986},
    )
    survey.questions.create(
        position=2,
        text="How old are you?",
        kind="number",
        design_name="direct",
        design_params={"lower": 16, "upper": 99},
    )
    return survey


def test_a_skip_is_sent_as_null_and_nothing_else(live_server, browser, study, screenshot):
    context = browser.new_context(viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda request: requests.append(request))
    page.on("pageerror", lambda error: errors.append(error))
    page.goto(live_server.url + study.get_absolute_url())
    cheated, often, age = page.locator("[data-question]").all()
    assert not cheated.is_visible()  # consent first
    page.get_by_role("button", name="I agree: show the questions").click()
    flip = page.get_by_role("button", name="Flip and send")
    cheated.get_by_role("button", name="Yes").click()
    often.get_by_role("radio", name="Once").click()
    often.get_by_role("checkbox", name="Prefer not to answer").check()
    assert often.get_by_role("radio", name="Once").get_attribute("aria-checked") == "false"
    cheated.get_by_role("checkbox", name="Prefer not to answer").check()
    cheated.get_by_role("button", name="Yes").click()  # an answer undoes the skip
    assert not cheated.get_by_role("checkbox", name="Prefer not to answer").is_checked()
    assert flip.is_disabled()  # the age is neither given nor skipped
    age.get_by_label("Your answer").fill("23")
    age.get_by_role("checkbox", name="Prefer not to answer").check()
    assert age.get_by_label("Your answer").input_value() == ""
    assert serious_violations(page) == []
    page.screenshot(path=DOCS / "respondent-study-phone.png", full_page=True)
    flip.click()
    page.get_by_text(SENT).wait_for()
    screenshot(page, "skipped-phone")

    (body,) = [json.loads(r.post_data) for r in requests if r.method == "POST"]
    values = [a["value"] for a in body["answers"]]
    assert values[0] in (0, 1) and values[1:] == [None, None]
    assert set(body) == {"submission_id", "answers", "design_version"}
    assert [set(a) for a in body["answers"]] == [{"question", "value"}] * 3
    q1, q2, q3 = study.questions.all()
    assert stored_reports(study) == [{q1.id: values[0], q2.id: None, q3.id: None}]
    # The device keeps no report for a skipped question (a later answer is fresh).
    memos = page.evaluate("() => Object.keys(localStorage)")
    assert [key for key in memos if f":q{q2.id}:" in key] == []
    assert "skipped (prefer not to answer)" in often.inner_text()
    assert errors == []
    context.close()


def test_without_javascript_a_refused_form_keeps_the_choices_and_focuses_the_error(
    live_server, browser, study, screenshot
):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False, bypass_csp=True)
    page = context.new_page()
    page.goto(live_server.url + study.get_absolute_url())
    paper = page.locator("form.paper")
    paper.get_by_label("I have read the text").check()
    paper.get_by_label("My result is yes").check()
    paper.locator("fieldset").nth(1).get_by_label("Prefer not to answer").check()
    paper.get_by_role("button", name="Send my results").click()  # the age left out

    assert nothing_stored()
    error = page.locator(".paper-error")
    assert "How old are you?" in error.inner_text()
    assert page.evaluate("() => document.activeElement.classList.contains('paper-error')")
    assert error.bounding_box()["y"] < PHONE["height"]
    assert paper.get_by_label("My result is yes").is_checked()
    assert paper.locator("fieldset").nth(1).get_by_label("Prefer not to answer").is_checked()
    screenshot(page, "paper-refused-phone")

    paper.locator("fieldset").nth(2).get_by_label("Prefer not to answer").check()
    paper.get_by_role("button", name="Send my results").click()
    page.get_by_role("heading", name="Thank you").wait_for()
    q1, q2, q3 = study.questions.all()
    assert stored_reports(study) == [{q1.id: 1, q2.id: None, q3.id: None}]
    context.close()


def test_nothing_is_sent_before_consent_not_even_the_invite(
    live_server, browser, make_survey, screenshot
):
    survey = make_survey(1, requires_invite=True, consent_text="Run by the ethics lab.")
    (token,) = Invite.create_batch(survey, 1)
    context = browser.new_context(viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.goto(f"{live_server.url}{survey.get_absolute_url()}?invite={token}")
    agree = page.get_by_role("button", name="I agree: show the questions")
    agree.wait_for()
    assert page.get_by_text("Run by the ethics lab.").is_visible()
    assert not page.locator("[data-question]").first.is_visible()
    assert serious_violations(page) == []
    page.wait_for_timeout(300)
    assert posts == []
    agree.click()
    start = page.get_by_role("button", name="Start", exact=True)
    start.wait_for()  # an invite is exchanged only on its own explicit Start, even after consent
    page.wait_for_timeout(300)
    assert posts == []
    start.click()
    page.get_by_role("heading", name="Question 1?").wait_for()
    page.wait_for_function("() => !!localStorage.length")  # the credential arrived
    assert len(posts) == 1 and "credential" in posts[0]
    context.close()


def test_a_condition_shows_its_question_and_progress_counts_what_is_shown(
    live_server, page, make_survey
):
    survey = make_survey(0)
    student = survey.questions.create(
        position=0, text="Are you a student?", design_name="direct", design_params={}
    )
    survey.questions.create(
        position=1,
        text="Have you cheated in an exam?",
        design_params={},
        show_if={"question": student.id, "in": [1]},
    )
    requests = []
    page.on("request", lambda r: requests.append(r) if r.method == "POST" else None)
    page.goto(live_server.url + survey.get_absolute_url())
    first, second = page.locator("[data-question]").all()
    progress = page.locator("[data-progress-text]")
    assert not second.is_visible()
    assert progress.inner_text() == "0 of 1 questions answered or skipped"
    first.get_by_role("button", name="Yes").click()
    assert second.is_visible()
    assert progress.inner_text() == "1 of 2 questions answered or skipped"
    second.get_by_role("button", name="No").click()
    first.get_by_role("button", name="No").click()  # hides it again: not asked, not sent
    assert not second.is_visible()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()
    (body,) = [json.loads(r.post_data) for r in requests]
    assert body["answers"] == [{"question": student.id, "value": 0}]
    assert stored_reports(survey) == [{student.id: 0}]


README_PHONE = {"width": 390, "height": 844}


def test_the_readme_phone_picture_shows_the_language_choice_consent_and_a_skip(
    live_server, browser, make_survey
):
    """docs/respondent-phone.png, on a 390 × 844 phone: the languages offered, the
    consent text agreed to, and a question answered "Prefer not to answer"."""
    survey = make_survey(
        0,
        languages=["de"],
        texts={"de": {"title": "Ehrlichkeit in Prüfungen"}},
        consent_text="Run by the ethics lab. You may stop at any time.",
    )
    survey.questions.create(
        position=0,
        text="Have you ever cheated in an exam?",
        design_params={},
        texts={"de": {"text": "Haben Sie je in einer Prüfung geschummelt?"}},
    )
    context = browser.new_context(viewport=README_PHONE, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    page.get_by_role("button", name="I agree: show the questions").click()
    question = page.locator("[data-question]")
    skip = question.get_by_role("checkbox", name="Prefer not to answer")
    skip.check()
    assert skip.is_checked() and question.get_by_role("button", name="Yes").is_enabled()
    assert page.evaluate("() => [innerWidth, innerHeight]") == [390, 844]
    assert page.get_by_role("navigation", name="Language of this survey").is_visible()
    assert page.locator(".consent-text").is_visible()
    assert serious_violations(page) == []
    # The whole page as this phone shows it: one screen cannot hold all three.
    page.screenshot(path=DOCS / "respondent-phone.png", full_page=True)
    context.close()
