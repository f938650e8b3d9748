"""On a phone: the owner shares a survey with a colleague, deletes it after the
confirmation, finds it in the trash and restores it; the colleague sees it as a viewer.
No page scrolls sideways and none logs an error (the strict CSP included)."""

from __future__ import annotations

import pytest

from responses.write import simulate_respondents
from survey.models import Survey
from tests.browser.conftest import PHONE
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, live_server, username: str) -> None:
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"{username}-password-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="My surveys").wait_for()


def assert_fits(page) -> None:
    page.wait_for_load_state()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} is {width} px wide"


def test_share_delete_and_restore_on_a_phone(
    live_server, browser, owner, make_survey, django_user_model, screenshot
):
    django_user_model.objects.create_user("colleague", password="colleague-password-1")
    survey = make_survey(n_questions=2)
    simulate_respondents(survey, 4, 0.5)
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, live_server, "owner")

    page.goto(f"{live_server.url}/surveys/{survey.id}/edit/")
    page.get_by_role("link", name="Sharing").click()
    page.get_by_label("Username or email").fill("colleague")
    page.get_by_label("Role").select_option("viewer")
    page.get_by_role("button", name="Share", exact=True).click()
    page.get_by_text("Shared with colleague as viewer.").wait_for()
    assert_fits(page)
    screenshot(page, "share-phone")

    page.get_by_role("link", name="Build").click()
    page.get_by_role("link", name="Delete survey…").click()
    page.get_by_text("4 responses").wait_for()
    assert_fits(page)
    screenshot(page, "delete-confirm-phone")
    page.get_by_role("button", name="Move to trash").click()
    page.get_by_text("Moved “Exam honesty” to the trash").wait_for()
    assert not Survey.objects.exists()

    page.get_by_role("link", name="Trash").click()
    assert_fits(page)
    screenshot(page, "trash-phone")
    page.get_by_role("button", name="Restore Exam honesty").click()
    page.get_by_text("Restored “Exam honesty” with all its answers.").wait_for()
    assert stored_count(Survey.objects.get()) == 4

    other = browser.new_context(viewport=PHONE)
    colleague = other.new_page()
    log_in(colleague, live_server, "colleague")
    colleague.get_by_text("viewer, shared by owner").wait_for()
    colleague.get_by_role("link", name="Exam honesty").click()
    colleague.get_by_role("heading", name="Exam honesty").wait_for()
    assert colleague.get_by_role("link", name="Build").count() == 0
    other.close()
    context.close()
    assert errors == []
