"""An unrelated question with unknown prevalence in real Chromium: the page asks both true
answers (the sensitive and the innocuous question) on the device, rr.js draws the arm and
sends one of the two answers with the arm and nothing else, and after sending no answer
stays pressed."""

from __future__ import annotations

import json

import pytest

from tests.browser.test_device_memo import EVERYTHING_STORED
from tests.browser.test_respondent_accessibility import axe_page, serious_violations
from tests.browser.test_respondent_kinds import SEND, SENT, THROW_ON_MATH_RANDOM, watch
from tests.storage import stored_reports

__all__ = ["axe_page"]  # the fixture, shared with the other accessibility tests

pytestmark = pytest.mark.django_db(transaction=True)

BORN = "Were you born in the first half of the year?"


def shoplifted(survey, p_truth: tuple[float, float]):
    """The sensitive question with an innocuous one of unknown prevalence, equal arms."""
    return survey.questions.create(
        position=0,
        text="Have you ever shoplifted?",
        kind="binary",
        design_name="unrelated_question_unknown",
        design_params={"p_truth": list(p_truth), "arm_weights": [0.5, 0.5]},
        innocuous_text=BORN,
    )


def test_the_page_asks_both_answers_and_sends_only_the_report_and_arm(
    live_server, page, make_survey, tmp_path
):
    survey = make_survey(0)
    # Arm A always answers the innocuous question, arm B the sensitive one: the report
    # then says which answer the device used, whatever arm it drew.
    question = shoplifted(survey, (0.0, 1.0))
    page.add_init_script(THROW_ON_MATH_RANDOM)
    errors, requests = watch(page)
    page.goto(live_server.url + survey.get_absolute_url())
    section = page.locator(f'[data-question="{question.id}"]')
    assert BORN in section.inner_text()
    assert "No privacy against someone who knows your answer" in section.inner_text()
    send = page.get_by_role("button", name=SEND)
    section.locator('[data-truth="1"]').click()
    assert send.is_disabled()  # the innocuous answer is still missing
    section.locator('[data-innocuous="0"]').click()
    assert section.locator('[data-innocuous="0"]').get_attribute("aria-pressed") == "true"
    page.screenshot(path=str(tmp_path / "answered.png"), full_page=True)
    send.click()
    page.get_by_text(SENT).wait_for()
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1 and errors == []
    body = json.loads(posts[0].post_data)
    assert set(body) <= {"submission_id", "answers", "design_version", "credential"}
    [sent] = body["answers"]
    assert set(sent) == {"question", "value", "arm"}
    # Sensitive "yes", innocuous "no": arm B sends 1, arm A sends 0.
    assert sent["value"] == sent["arm"]
    assert stored_reports(survey) == [{question.id: 3 * sent["arm"]}]
    for control in section.locator("[data-truth], [data-innocuous]").all():
        assert control.get_attribute("aria-pressed") == "false"
    page.screenshot(path=str(tmp_path / "sent.png"), full_page=True)
    stored = page.evaluate(EVERYTHING_STORED)["local"]
    memo = stored[f"deniable:v1:{survey.slug}:report:q{question.id}:d{survey.design_version}"]
    assert json.loads(memo) == {"report": sent["value"], "arm": sent["arm"]}


def test_its_respondent_page_and_paper_form_have_no_serious_accessibility_violations(
    live_server, request, make_survey
):
    survey = make_survey(0)
    shoplifted(survey, (0.3, 0.7))
    page = request.getfixturevalue("axe_page")
    page.goto(live_server.url + survey.get_absolute_url())
    assert serious_violations(page) == []
    page.evaluate("() => document.querySelector('[data-paper]').hidden = false")
    assert serious_violations(page) == []


def test_prefer_not_to_answer_clears_both_answers_and_sends_a_skip(live_server, page, make_survey):
    survey = make_survey(0)
    question = shoplifted(survey, (0.3, 0.7))
    errors, requests = watch(page)
    page.goto(live_server.url + survey.get_absolute_url())
    section = page.locator(f'[data-question="{question.id}"]')
    section.locator('[data-truth="0"]').click()
    section.locator('[data-innocuous="1"]').click()
    section.get_by_label("Prefer not to answer").check()
    for control in section.locator("[data-truth], [data-innocuous]").all():
        assert control.get_attribute("aria-pressed") == "false"
    page.get_by_role("button", name=SEND).click()
    page.get_by_text(SENT).wait_for()
    [post] = [r for r in requests if r.method == "POST"]
    assert json.loads(post.post_data)["answers"] == [{"question": question.id, "value": None}]
    assert errors == []
