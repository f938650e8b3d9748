"""The dashboard for every kind of question in a real browser: axe-core finds no serious
issue, nothing scrolls sideways on a phone or a laptop, and the screenshots in docs/."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from survey.models import current_hour
from tests.analysis.dashboard_survey import mixed_survey
from tests.browser.conftest import LAPTOP, PHONE
from tests.browser.test_respondent_accessibility import AXE, serious_violations
from tests.browser.test_workspace import log_in

pytestmark = pytest.mark.django_db(transaction=True)

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def survey(owner):
    start = current_hour() - timedelta(hours=11)
    return mixed_survey(owner, n=80, hours=tuple(start + timedelta(hours=h) for h in range(12)))


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_dashboard_reads_well_on_phones_and_laptops(
    live_server, browser, survey, viewport, screenshot
):
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci` (make test does)")
    context = browser.new_context(viewport=viewport, bypass_csp=True)
    page = context.new_page()
    log_in(page, live_server)
    colour = survey.questions.get(text__startswith="Which colour")
    page.goto(f"{live_server.url}/surveys/{survey.id}/results/?question={colour.id}")
    assert page.locator("[data-n-responses]").inner_text() == "960"
    assert page.locator("section.question-result").count() == 3
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    assert serious_violations(page) == []
    name = "phone" if viewport == PHONE else "laptop"
    screenshot(page, f"dashboard-{name}")
    if viewport == LAPTOP:
        shoot(page, "section[data-kind=choice]", DOCS / "dashboard-choice.png")
        shoot(page, "section[data-kind=number]", DOCS / "dashboard-number.png")
    else:  # the README's phone picture: from the top to the end of the forest plot
        forest = page.locator(".dashboard-charts").first.bounding_box()
        bottom = forest["y"] + forest["height"] + page.evaluate("scrollY") + 16
        clip = {"x": 0, "y": 0, "width": PHONE["width"], "height": bottom}
        page.screenshot(path=DOCS / "phone-dashboard.png", full_page=True, clip=clip)
    context.close()


def shoot(page, selector: str, path: Path) -> None:
    """The element's area of the page (htmx replaces the element itself every poll)."""
    box = page.evaluate(
        """(selector) => {
            const r = document.querySelector(selector).getBoundingClientRect();
            return {x: r.x + scrollX - 8, y: r.y + scrollY - 8, width: r.width + 16,
                    height: r.height + 16};
        }""",
        selector,
    )
    page.screenshot(path=path, full_page=True, clip=box)


def test_the_dashboard_sends_no_inline_style_under_the_strict_csp(live_server, page, survey):
    """Without bypassing the CSP, the page raises no violation (no inline style or code)."""
    violations = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    log_in(page, live_server)
    page.goto(f"{live_server.url}/surveys/{survey.id}/results/")
    page.locator("section.question-result").first.wait_for()
    assert page.locator("svg title").count() >= 6
    assert violations == []
