"""Invited respondents in real Chromium: the blind exchange behind the Start button, and
the no-JavaScript start step; what leaves the browser, what is stored, what the device keeps,
and that a link scanner opening the page leaves the invite for its respondent."""

from __future__ import annotations

import json

import pytest

from responses.credentials import used_invites
from survey.models import CredentialKey, Invite
from tests.browser.conftest import PHONE
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)
SENT = "left this device"
SPENT = "This invite link has already been used or is not valid, so it cannot admit you again."


@pytest.fixture
def invited(make_survey):
    survey = make_survey(n_questions=2, requires_invite=True)
    return survey, Invite.create_batch(survey, 2)


def posts(page) -> list[tuple[str, dict]]:
    sent: list[tuple[str, dict]] = []
    page.on(
        "request",
        lambda r: sent.append((r.url, json.loads(r.post_data))) if r.method == "POST" else None,
    )
    return sent


def kept_credential(page, slug: str):
    return page.evaluate(f"() => localStorage.getItem('deniable:credential:{slug}')")


def start(page) -> None:
    page.get_by_role("button", name="Start", exact=True).click()
    page.locator("[data-question]").first.wait_for()


def answer_all(page, truth: str = "Yes") -> None:
    for section in page.locator("[data-question]").all():
        section.get_by_role("button", name=truth).click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()


def test_the_browser_answers_with_a_blind_credential_never_with_the_invite(
    live_server, context, invited
):
    survey, (token, _) = invited
    page = context.new_page()
    sent = posts(page)
    page.goto(f"{live_server.url}{survey.get_absolute_url()}?invite={token}")
    page.get_by_role("button", name="Start", exact=True).wait_for()
    assert page.locator("[data-question]").first.is_hidden()
    assert used_invites(survey) == 0 and sent == []  # opening the page uses nothing
    start(page)
    assert used_invites(survey) == 1
    assert kept_credential(page, survey.slug)
    fingerprint = CredentialKey.of(survey).public["fingerprint"]
    assert page.locator("[data-key-fingerprint]").inner_text() == fingerprint
    answer_all(page)

    (exchange_url, exchange), (submit_url, submission) = sent
    assert exchange_url.endswith(f"/api/public/surveys/{survey.slug}/credentials/")
    assert set(exchange) == {"invite", "blinded_message"}
    assert submit_url.endswith(f"/api/public/surveys/{survey.slug}/responses/")
    assert "invite" not in submission and token not in json.dumps(submission)
    message = submission["credential"]["message"]
    assert message not in json.dumps(exchange)  # the server saw only the blinded value
    assert stored_count() == 1
    assert kept_credential(page, survey.slug) is None  # spent, so no longer kept

    page.reload()  # this device already answered: no second exchange, nothing sent
    page.get_by_text("You have already answered this survey on this device").wait_for()
    assert len(sent) == 2


def test_a_credential_kept_on_the_device_survives_closing_the_page(live_server, context, invited):
    survey, (token, _) = invited
    url = f"{live_server.url}{survey.get_absolute_url()}?invite={token}"
    first = context.new_page()
    first.goto(url)
    start(first)
    first.close()
    page = context.new_page()
    sent = posts(page)
    page.goto(url)  # the pass is on this device: the questions show without a Start
    assert page.get_by_role("button", name="Start", exact=True).is_hidden()
    answer_all(page, "No")
    assert [url.rsplit("/", 2)[-2] for url, _ in sent] == ["responses"]
    assert stored_count() == 1


def test_an_invite_already_used_on_another_device_says_so_at_the_top_after_start(
    live_server, browser, context, invited
):
    survey, (token, _) = invited
    url = f"{live_server.url}{survey.get_absolute_url()}?invite={token}"
    page = context.new_page()
    page.goto(url)
    start(page)
    answer_all(page)
    other = browser.new_context(viewport=PHONE)
    try:
        phone = other.new_page()
        response = phone.goto(url)
        assert response.status == 200  # the page itself does not tell
        assert phone.get_by_text(SPENT).is_hidden()
        phone.get_by_role("button", name="Start", exact=True).click()
        notice = phone.get_by_role("alert").filter(has_text=SPENT)
        notice.wait_for()
        assert notice.bounding_box()["y"] < phone.locator("[data-status]").bounding_box()["y"]
        assert phone.locator("[data-question]").first.is_hidden()
        assert phone.get_by_role("button", name="Flip and send").is_hidden()
        assert phone.get_by_role("button", name="Start", exact=True).is_hidden()
    finally:
        other.close()
    assert stored_count() == 1


def test_a_link_scanner_that_opens_the_page_leaves_the_invite_for_its_respondent(
    client, live_server, browser, context, invited
):
    survey, (token, _) = invited
    path = f"{survey.get_absolute_url()}?invite={token}"
    assert client.get(path).status_code == 200  # a plain fetch
    scanner = browser.new_context()  # a headless browser that runs scripts, clicks nothing
    try:
        preview = scanner.new_page()
        sent = posts(preview)
        preview.goto(live_server.url + path, wait_until="networkidle")
        preview.get_by_role("button", name="Start", exact=True).wait_for()
        assert sent == []
    finally:
        scanner.close()
    assert used_invites(survey) == 0

    page = context.new_page()  # the respondent, in another browser context
    page.goto(live_server.url + path)
    start(page)
    answer_all(page)
    assert used_invites(survey) == 1 and stored_count() == 1


def test_without_javascript_the_invite_is_used_in_a_start_step_then_answers_are_sent(
    live_server, browser, invited
):
    survey, (token, _) = invited
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        page = context.new_page()
        url = f"{live_server.url}{survey.get_absolute_url()}?invite={token}"
        page.goto(url)
        page.get_by_role("button", name="Use my invite and show the questions").click()
        assert used_invites(survey) == 1
        for fieldset in page.locator("fieldset").all():
            fieldset.get_by_label("My result is yes").check()
        page.get_by_role("button", name="Send my results").click()
        page.get_by_text("Thank you").first.wait_for()
        assert stored_count() == 1

        page.goto(url)  # the same invite again
        page.get_by_role("button", name="Use my invite and show the questions").click()
        assert page.get_by_text(
            "This invite link has already been used or is not valid"
        ).is_visible()
        assert stored_count() == 1
    finally:
        context.close()
