"""Panels in a real browser: the completion button carries the panel id from the link the
respondent came with, and no request after the page itself carries it."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PHONE
from tests.browser.test_respondent_accessibility import serious_violations
from tests.browser.test_study import SENT
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)

PANEL_ID = "5f1e9b3c7a2d4e6f80914ab3"


def test_the_completion_button_is_filled_on_the_device_only(
    live_server, browser, make_survey, screenshot
):
    survey = make_survey(
        1, completion_url="https://panel.example/complete?cc=C1X2&pid={PROLIFIC_PID}&s={SESSION}"
    )
    context = browser.new_context(viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda request: requests.append(request))
    page.on("pageerror", lambda error: errors.append(error))
    page.goto(f"{live_server.url}{survey.get_absolute_url()}?PROLIFIC_PID={PANEL_ID}&x=1")
    button = page.get_by_role("link", name="Continue to complete your participation")
    assert not button.is_visible()  # nothing to continue to before sending
    page.locator("[data-question]").get_by_role("button", name="Yes").click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()
    assert button.is_visible()
    assert button.get_attribute("href") == (
        f"https://panel.example/complete?cc=C1X2&pid={PANEL_ID}&s="
    )  # an absent parameter is left empty, never the raw placeholder
    assert serious_violations(page) == []
    screenshot(page, "completion-phone")

    assert stored_count(survey) == 1
    after_page = requests[1:]
    assert after_page and requests[0].url.endswith(f"?PROLIFIC_PID={PANEL_ID}&x=1")
    for request in after_page:
        assert PANEL_ID not in request.url
        assert PANEL_ID not in (request.post_data or "")
        assert not any(PANEL_ID in value for value in request.all_headers().values())
    assert errors == []
    context.close()
