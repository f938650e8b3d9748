"""A researcher imports a bad offline CSV: the errors, far down the page, take the focus
(and so the screen reader's and the eye's attention), in Chromium."""

from __future__ import annotations

import pytest

from tests.storage import nothing_stored

pytestmark = pytest.mark.django_db(transaction=True)


def test_import_errors_take_the_focus(live_server, page, owner, make_survey):
    survey = make_survey(n_questions=2)
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="My surveys").wait_for()
    page.goto(f"{live_server.url}/surveys/{survey.id}/distribute/")
    page.get_by_label("CSV file").set_input_files(
        files=[{"name": "offline.csv", "mimeType": "text/csv", "buffer": b"q1,q2\n1,0\n1,7\n"}]
    )
    page.get_by_role("button", name="Import").click()
    errors = page.locator("#import-errors")
    errors.wait_for()
    assert "Line 3: q2 must be 0 or 1" in errors.inner_text()
    page.wait_for_function(
        "document.activeElement && document.activeElement.id === 'import-errors'"
    )
    assert errors.is_visible()
    box = errors.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]
    assert nothing_stored()
