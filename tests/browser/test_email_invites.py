"""Invites by email in real Chromium, on phones: the researcher pastes addresses on
Distribute (a bad line is named beside the field, nothing is sent), the invitee opens the
mailed link, reads what the researcher will learn, and answers; the reminder then goes only
to the one who has not."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from survey.models import EmailedInvite
from tests.browser.conftest import PHONE
from tests.browser.test_invites import answer_all, start
from tests.browser.test_respondent_accessibility import AXE, serious_violations
from tests.browser.test_workspace import log_in

pytestmark = pytest.mark.django_db(transaction=True)
LINK = re.compile(r"https?://\S+\?invite=[0-9a-f]+")


def test_a_mailed_invite_is_answered_and_only_the_other_address_is_reminded(
    live_server, browser, make_survey, settings
):
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci` (make test does)")
    settings.EMAIL_ENABLED = True
    survey = make_survey(n_questions=2, requires_invite=True)
    researcher = browser.new_context(viewport=PHONE, bypass_csp=True).new_page()
    log_in(researcher, live_server)
    researcher.goto(f"{live_server.url}/surveys/{survey.id}/distribute/")
    field = researcher.get_by_label("Addresses")
    field.fill("ana@example.org\nana(at)example.org")
    researcher.get_by_role("button", name="Send invites").click()
    errors = researcher.locator("#email-errors")
    assert "Line 2: “ana(at)example.org” is not an email address." in errors.inner_text()
    assert researcher.get_by_label("Addresses").get_attribute("aria-invalid") == "true"
    assert serious_violations(researcher) == []
    assert mail.outbox == []

    researcher.get_by_label("Addresses").fill("ana@example.org\nben@example.org")
    researcher.get_by_role("button", name="Send invites").click()
    researcher.get_by_text("Mailed 2 invites.").wait_for()
    ana = next(m for m in mail.outbox if m.to == ["ana@example.org"])

    invitee = browser.new_context(viewport=PHONE).new_page()
    invitee.goto(LINK.search(ana.body)[0])
    note = invitee.locator("[data-emailed]")
    assert "that you took part — but never what you answered" in note.inner_text()
    start(invitee)
    answer_all(invitee)

    mail.outbox.clear()
    researcher.reload()
    researcher.get_by_role("button", name="Remind the 1 not yet used").click()
    researcher.get_by_text("Reminded 1").wait_for()
    assert [m.to for m in mail.outbox] == [["ben@example.org"]]


def test_deleting_the_addresses_asks_for_a_tick_first_without_javascript(
    live_server, browser, owner, make_survey, settings, screenshot
):
    settings.EMAIL_ENABLED = True
    survey = make_survey(n_questions=2, requires_invite=True)
    EmailedInvite.create_batch(survey, ["ana@example.org", "ben@example.org"])
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server)
    page.goto(f"{live_server.url}/surveys/{survey.id}/distribute/")
    delete = page.get_by_role("button", name="Delete the 2 addresses")
    delete.click()  # one click, nothing ticked: the browser keeps the form
    assert page.get_by_label("Yes, delete them").evaluate("box => !box.validity.valid")
    assert survey.emailed_invites.count() == 2
    page.get_by_label("Yes, delete them").check()
    screenshot(page, "email-forget-confirm-phone")
    delete.click()
    page.get_by_text("Deleted 2 addresses.").wait_for()
    assert not survey.emailed_invites.exists()
    context.close()
