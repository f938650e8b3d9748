"""The breakdown page in a real browser: a number question's means per group with a
"No answer" group and hidden cells, readable on a phone and a laptop, under the strict
CSP, and the form swapping the result in with htmx."""

from __future__ import annotations

import pytest

from tests.analysis.analysis_data import (
    analysis_survey,
    crowd,
    fill,
    grouped_survey,
    questions,
    record_people,
)
from tests.analysis.test_breakdown_skips import skip_cheat
from tests.browser.conftest import LAPTOP, PHONE
from tests.browser.test_respondent_accessibility import AXE, serious_violations
from tests.browser.test_workspace import log_in

pytestmark = pytest.mark.django_db(transaction=True)

GROUPS = {"faculty": ["Arts", "Law", "Science", "Medicine"], "year": ["first", "second", "third"]}
HIDDEN = "hidden: too few respondents in this or another cell"


@pytest.fixture
def campus(owner):
    survey, found = grouped_survey(owner, GROUPS)
    cells = {(f, y): 12 + 3 * f + 2 * y for f in range(4) for y in range(3)} | {(1, None): 3}
    record_people(survey, found, crowd(list(GROUPS), cells))
    return survey, found


def breakdown_url(live_server, survey, question, by) -> str:
    return (
        f"{live_server.url}/surveys/{survey.id}/results/breakdown/"
        f"?question={question.id}&by={by.id}"
    )


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_a_number_breakdown_reads_well_and_hides_alike(
    live_server, browser, campus, viewport, screenshot
):
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci` (make test does)")
    survey, found = campus
    context = browser.new_context(viewport=viewport, bypass_csp=True)
    page = context.new_page()
    log_in(page, live_server)
    page.goto(breakdown_url(live_server, survey, found["drinks"], found["year"]))
    table = page.locator("#analysis table.data")
    assert table.locator("th", has_text="Mean").count() == 1
    no_answer = table.locator("tr", has=page.locator("th", has_text="No answer"))
    assert no_answer.locator("td").inner_text() == HIDDEN
    assert table.locator(f"td:text-is('{HIDDEN}')").count() >= 2
    assert page.locator("#analysis svg:visible").count() == 1
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    assert serious_violations(page) == []
    screenshot(page, f"breakdown-number-{'phone' if viewport == PHONE else 'laptop'}")
    context.close()


def test_the_form_swaps_the_breakdown_in_under_the_strict_csp(live_server, page, campus):
    survey, found = campus
    violations = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    log_in(page, live_server)
    page.goto(breakdown_url(live_server, survey, found["drinks"], found["year"]))
    page.locator("#analysis table.data").wait_for()
    page.select_option("#by", str(found["faculty"].id))
    page.select_option("#question", str(found["cheat"].id))
    page.get_by_role("button", name="Show").click()
    page.locator("#analysis caption", has_text="“faculty?”").wait_for()
    assert page.locator("#analysis th", has_text="No answer").count() == 0
    assert page.locator("#analysis th[scope=col]", has_text="Estimate").count() == 1
    assert f"by={found['faculty'].id}" in page.url
    assert violations == []


def test_two_groups_are_compared_on_the_breakdown_page(live_server, page, campus, screenshot):
    """One page load: pick two groups, compare under the strict CSP (htmx swaps the
    result in); "No answer", hidden here, is not offered."""
    survey, found = campus
    violations = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    log_in(page, live_server)
    page.goto(breakdown_url(live_server, survey, found["cheat"], found["faculty"]))
    offered = page.locator("#compare-a option").all_inner_texts()
    assert "Arts" in offered and "No answer" not in offered
    page.select_option("#compare-a", label="Medicine")
    page.select_option("#compare-b", label="Arts")
    page.get_by_role("button", name="Compare").click()
    result = page.locator("#analysis p.comparison")
    result.wait_for()
    text = result.inner_text()
    assert text.startswith("Medicine") and "against Arts" in text
    assert "(likelihood ratio)" in text and "(Wald)" in text
    assert violations == []
    screenshot(page, "breakdown-compare")


def test_skips_are_a_column_of_their_own_on_a_phone(live_server, browser, owner, screenshot):
    study = analysis_survey(owner)
    fill(study, [30, 30, 30, 30])
    skip_cheat(study, {2: 6})
    q = questions(study)
    context = browser.new_context(viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    log_in(page, live_server)
    page.goto(
        f"{live_server.url}/surveys/{study.id}/results/breakdown/"
        f"?question={q['cheat']}&by={q['faculty']}"
    )
    table = page.locator("#analysis table.data")
    headers = table.locator("thead th").all_inner_texts()
    assert headers[1:3] == ["n", "Skipped"]
    science = table.locator("tr", has=page.locator("th", has_text="Science"))
    assert science.locator("td").all_inner_texts()[:2] == ["30", "6"]
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    assert serious_violations(page) == []
    screenshot(page, "breakdown-skipped-phone")
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_a_lie_detector_breakdown_shows_t_per_group_and_whether_the_arms_agree(
    live_server, browser, api, viewport, screenshot
):
    from tests.analysis.test_arms_analyses import grouped_survey as arms_survey
    from tests.analysis.test_arms_question import SLD

    groups = {0: ({"pi": 0.2, "second": 0.6}, 1500), 1: ({"pi": 0.5, "second": 0.6}, 1500)}
    survey, question, by, _ = arms_survey(api, SLD, groups)
    context = browser.new_context(viewport=viewport, bypass_csp=True)
    page = context.new_page()
    log_in(page, live_server)
    page.goto(breakdown_url(live_server, survey, question, by))
    table = page.locator("#analysis table.data")
    assert table.locator("th", has_text="Carriers' honesty t").count() == 1
    assert table.locator("td[data-quantity='honesty']").count() == 3
    page.get_by_role("heading", name="Do the two arms agree?").wait_for()
    page.get_by_role("button", name="Compare").click()
    page.locator("p.comparison", has_text="a difference of").first.wait_for()
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    assert serious_violations(page) == []
    screenshot(page, f"breakdown-arms-{'phone' if viewport == PHONE else 'laptop'}")
    context.close()
