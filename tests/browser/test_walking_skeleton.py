from __future__ import annotations

import json

import pytest

from tests.storage import stored_reports

pytestmark = pytest.mark.django_db(transaction=True)


def answer_survey(page, live_server, survey, true_answers):
    page.goto(live_server.url + survey.get_absolute_url())
    for section, truth in zip(page.locator("[data-question]").all(), true_answers, strict=True):
        section.get_by_role("button", name="Yes" if truth else "No").click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text("left this device").wait_for()


def test_a_respondent_answers_and_the_researcher_sees_n_1(
    live_server, page, record_requests, screenshot, survey, owner
):
    page.goto(live_server.url + survey.get_absolute_url())
    assert page.get_by_text("ε = 1.10").first.is_visible()
    assert page.get_by_text("3× more likely").first.is_visible()
    assert page.locator("[data-truth][name]").count() == 0
    answer_survey(page, live_server, survey, [1])
    screenshot(page, "respondent")

    posts = [r for r in record_requests if r.method == "POST"]
    assert len(posts) == 1
    body = json.loads(posts[0].post_data)
    assert set(body) == {"submission_id", "answers", "design_version"}
    assert [set(a) for a in body["answers"]] == [{"question", "value"}]
    for request in record_requests:
        assert "truth" not in (request.post_data or "") and "truth" not in request.url
    [stored] = stored_reports(survey)
    assert list(stored.values()) == [body["answers"][0]["value"]]
    assert stored[body["answers"][0]["question"]] in (0, 1)

    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.goto(live_server.url + f"/surveys/{survey.id}/results/")
    assert page.locator("[data-n]").inner_text() == "1"
    screenshot(page, "dashboard")
