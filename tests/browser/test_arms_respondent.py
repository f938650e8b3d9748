"""A stochastic-lie-detector question in real Chromium: the served page draws the arm and
the report with rr.js (Math.random made to throw), sends the 0/1 report with its arm, the
server stores both (arm·2 + report), and the device keeps the report and the arm — never
the true answer — so that answering again sends the same report and arm."""

from __future__ import annotations

import json

import pytest

from tests.browser.test_device_memo import EVERYTHING_STORED
from tests.browser.test_respondent_accessibility import axe_page, serious_violations
from tests.browser.test_respondent_kinds import SEND, SENT, THROW_ON_MATH_RANDOM, watch
from tests.storage import stored_reports

__all__ = ["axe_page"]  # the fixture, shared with the other accessibility tests

pytestmark = pytest.mark.django_db(transaction=True)


def answer(page, url: str, section_id: int, truth: str) -> None:
    page.goto(url)
    page.locator(f'[data-question="{section_id}"]').get_by_role("button", name=truth).click()
    page.get_by_role("button", name=SEND).click()
    page.get_by_text(SENT).wait_for()


def test_a_lie_detector_question_sends_its_report_with_the_arm(live_server, page, make_survey):
    survey = make_survey(0)
    question = survey.questions.create(
        position=0,
        text="Have you ever shoplifted?",
        kind="binary",
        design_name="stochastic_lie_detector",
        design_params={"p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]},
    )
    page.add_init_script(THROW_ON_MATH_RANDOM)
    errors, requests = watch(page)
    url = live_server.url + survey.get_absolute_url()
    page.goto(url)
    section = page.locator(f'[data-question="{question.id}"]')
    assert "No privacy for a “no”" in section.inner_text()
    assert "Set B (drawn with probability 50 %)" in section.inner_text()
    answer(page, url, question.id, "Yes")
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1 and errors == []
    [sent] = json.loads(posts[0].post_data)["answers"]
    assert set(sent) == {"question", "value", "arm"}
    # A carrier who follows the coins always says "yes", whichever arm was drawn.
    assert sent["value"] == 1 and sent["arm"] in (0, 1)
    assert stored_reports(survey) == [{question.id: 2 * sent["arm"] + 1}]
    # The screen after sending shows the report alone: not the arm, not the answer pressed.
    text = section.inner_text()
    assert "Sent: YES" in text and "set A" not in text.split("Sent:")[1]
    assert section.get_by_role("button", name="Yes").get_attribute("aria-pressed") == "false"
    stored = page.evaluate(EVERYTHING_STORED)["local"]
    memo = stored[f"deniable:v1:{survey.slug}:report:q{question.id}:d{survey.design_version}"]
    assert json.loads(memo) == {"report": 1, "arm": sent["arm"]}  # never the true answer
    # Answering again, now "No", on the same device: the same report and arm are sent.
    page.evaluate(
        "() => localStorage.removeItem(Object.keys(localStorage).find((k) => k.includes(':sent:')))"
    )
    answer(page, url, question.id, "No")
    again = json.loads([r for r in requests if r.method == "POST"][-1].post_data)["answers"]
    assert again == [sent]


def test_pages_with_designs_with_arms_have_no_serious_accessibility_violations(
    live_server, request, owner, make_survey
):
    from responses.write import bulk_record

    survey = make_survey(0)
    sld = survey.questions.create(
        position=0,
        text="Have you ever shoplifted?",
        kind="binary",
        design_name="stochastic_lie_detector",
        design_params={"p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]},
    )
    cdm = survey.questions.create(
        position=1,
        text="Have you ever faked a sick note?",
        kind="binary",
        design_name="cheating_detection",
        design_params={"p_truth": [0.5, 0.75], "p_yes": [0.5, 0.5], "arm_weights": [0.5, 0.5]},
    )
    page, found = request.getfixturevalue("axe_page"), {}
    page.goto(live_server.url + survey.get_absolute_url())
    found["respond"] = serious_violations(page)
    page.evaluate("() => document.querySelector('[data-paper]').hidden = false")
    found["paper form"] = serious_violations(page)
    bulk_record(survey, [{sld.id: r % 4, cdm.id: (r * 3) % 4} for r in range(200)], simulated=False)
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="My surveys").wait_for()
    for name, path in (("results", "results/"), ("builder", "edit/"), ("model", "results/model/")):
        page.goto(f"{live_server.url}/surveys/{survey.id}/{path}")
        found[name] = serious_violations(page)
    assert found == dict.fromkeys(found, [])
