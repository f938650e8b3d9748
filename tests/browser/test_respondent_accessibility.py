"""Respondent pages: axe-core scans, keyboard-only answering, 320 px, page weight."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from survey.models import Invite
from tests.browser.conftest import PHONE
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SENT = "left this device"


@pytest.fixture
def axe_page(browser):
    """A page where axe-core (from npm) can be injected despite the strict CSP."""
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci` (make test does)")
    context = browser.new_context(bypass_csp=True)
    yield context.new_page()
    context.close()


def serious_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']}: {[n['target'] for n in v['nodes']]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.rendering
def test_respondent_and_error_pages_have_no_serious_accessibility_violations(
    live_server, axe_page, make_survey, screenshot
):
    page = axe_page
    survey = make_survey(2)
    closed = make_survey(status="closed")
    invited = make_survey(requires_invite=True)
    pages = {
        "respond": survey.get_absolute_url(),
        "how it works": "/how-it-works/",
        "closed": closed.get_absolute_url(),
        "invite rejected": invited.get_absolute_url(),
        "not found": "/s/no-such-survey/",
    }
    found = {}
    for name, url in pages.items():
        page.goto(live_server.url + url)
        found[name] = serious_violations(page)
        screenshot(page, name.replace(" ", "-"))

    page.goto(live_server.url + survey.get_absolute_url())
    for section in page.locator("[data-question]").all():
        section.get_by_role("button", name="No").click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()
    found["after sending"] = serious_violations(page)
    page.reload()
    found["already answered"] = serious_violations(page)

    page.goto(live_server.url + survey.get_absolute_url())
    page.evaluate("() => document.querySelector('[data-paper]').hidden = false")
    found["paper form"] = serious_violations(page)
    page.locator("fieldset").first.get_by_label("My result is no").check()
    page.locator("fieldset").last.get_by_label("My result is yes").check()
    page.get_by_role("button", name="Send my results").click()
    page.get_by_role("heading", name="Thank you").wait_for()
    found["thanks"] = serious_violations(page)
    assert found == dict.fromkeys(found, [])


def test_a_survey_can_be_answered_with_the_keyboard_alone(live_server, page, make_survey):
    survey = make_survey(2)
    page.goto(live_server.url + survey.get_absolute_url())
    yes_buttons = page.get_by_role("button", name="Yes").all()
    for target in [*yes_buttons, page.get_by_role("button", name="Flip and send")]:
        for _ in range(30):
            page.keyboard.press("Tab")
            if target.evaluate("el => el === document.activeElement"):
                break
        else:
            pytest.fail("could not reach a control with the Tab key")
        page.keyboard.press("Enter")
    page.get_by_text(SENT).wait_for()
    assert stored_count() == 1


@pytest.mark.rendering
def test_the_page_fits_320_css_pixels_and_200_percent_zoom(live_server, browser, make_survey):
    survey = make_survey(3)
    # 640 px at 200 % zoom is 320 CSS pixels: the WCAG reflow case.
    context = browser.new_context(viewport={"width": 640, "height": 800}, device_scale_factor=2)
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    page.evaluate("() => document.documentElement.style.zoom = '200%'")
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    context.close()
    context = browser.new_context(viewport={"width": 320, "height": 640})
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 320
    context.close()


def test_the_respondent_page_weighs_at_most_50_kb_compressed_with_no_third_party(
    live_server, browser, make_survey
):
    survey = make_survey(3, requires_invite=True)
    (token,) = Invite.create_batch(survey, 1)
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    encodings = {}
    page.on("response", lambda r: encodings.update({r.url: r.headers.get("content-encoding")}))
    page.goto(f"{live_server.url}{survey.get_absolute_url()}?invite={token}")
    page.wait_for_load_state("networkidle")
    entries = page.evaluate(
        """() => [...performance.getEntriesByType("navigation"),
                  ...performance.getEntriesByType("resource")].map((e) => ({
            name: e.name, transfer: e.transferSize, encoded: e.encodedBodySize,
            decoded: e.decodedBodySize}))"""
    )
    context.close()
    names = [urlsplit(e["name"]).path for e in entries]
    assert any(n.endswith("rr.js") for n in names) and any("respond." in n for n in names)
    assert {urlsplit(e["name"]).netloc for e in entries} == {urlsplit(live_server.url).netloc}
    for entry in entries:
        if entry["name"].endswith((".js", ".css")):
            assert encodings[entry["name"]] in ("gzip", "br"), entry
            assert entry["encoded"] < entry["decoded"], entry
    total = sum(e["transfer"] for e in entries)
    assert 0 < total <= 50 * 1024, entries
