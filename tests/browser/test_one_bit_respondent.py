"""A one-bit number question in real Chromium: the served page draws the bit with rr.js
(Math.random made to throw), sends only 0 or 1, and the server keeps that bit."""

from __future__ import annotations

import json

import pytest

from tests.browser.test_respondent_kinds import SEND, SENT, THROW_ON_MATH_RANDOM, watch
from tests.storage import stored_reports

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_one_bit_question_sends_one_bit_and_never_the_number(live_server, page, make_survey):
    survey = make_survey(0)
    question = survey.questions.create(
        position=0,
        text="Hours online yesterday?",
        kind="number",
        design_name="one_bit",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 20},
    )
    page.add_init_script(THROW_ON_MATH_RANDOM)
    errors, requests = watch(page)
    page.goto(live_server.url + survey.get_absolute_url())
    section = page.locator(f'[data-question="{question.id}"]')
    assert "turns your number into one bit" in section.inner_text()
    section.get_by_role("spinbutton").fill("17")
    page.get_by_role("button", name=SEND).click()
    page.get_by_text(SENT).wait_for()
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1 and errors == []
    body = json.loads(posts[0].post_data)
    assert set(body) == {"submission_id", "answers", "design_version"}
    [sent] = body["answers"]
    assert set(sent) == {"question", "value"}  # the bit alone: the number stays here
    assert sent["question"] == question.id and sent["value"] in (0, 1)
    assert stored_reports(survey) == [{question.id: sent["value"]}]
