"""The analysis pages (breakdown, cross-tab, model) in a real browser, as a researcher
reads them on a phone and a laptop: the numbers are there, nothing scrolls sideways,
axe-core finds no serious issue, and the screenshots in docs/ come from here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.analysis_data import analysis_survey, fill, questions
from tests.browser.conftest import LAPTOP, PHONE
from tests.browser.test_respondent_accessibility import AXE, serious_violations
from tests.browser.test_workspace import log_in

pytestmark = pytest.mark.django_db(transaction=True)

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def study(owner):
    survey = analysis_survey(owner)
    fill(survey, [300, 250, 200, 6])  # the last faculty is too small to show
    return survey


def pages(study) -> dict[str, str]:
    q = questions(study)
    return {
        "breakdown": f"breakdown/?question={q['cheat']}&by={q['faculty']}",
        "crosstab": f"crosstab/?a={q['cheat']}&b={q['plagiarise']}",
        "model": f"model/?outcome={q['cheat']}&covariates={q['job']}&covariates={q['age']}",
    }


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_analysis_pages_read_well_on_phones_and_laptops(
    live_server, browser, study, viewport, screenshot
):
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci` (make test does)")
    context = browser.new_context(viewport=viewport, bypass_csp=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    log_in(page, live_server)
    base = f"{live_server.url}/surveys/{study.id}/results/"
    expected = {
        "breakdown": ["Hidden", "Science"],
        "crosstab": ["phi", "Odds ratio"],
        "model": ["Odds ratio", "Log-likelihood"],
    }
    for name, query in pages(study).items():
        page.goto(base + query)
        text = page.locator("main").inner_text()
        for words in expected[name]:
            assert words.lower() in text.lower(), (name, words)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, name
        assert serious_violations(page) == [], name
        device = "phone" if viewport == PHONE else "laptop"
        screenshot(page, f"analysis-{name}-{device}")
        if viewport == LAPTOP:
            page.screenshot(path=DOCS / f"analysis-{name}.png", full_page=True)
    assert errors == []
    context.close()
