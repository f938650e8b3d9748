"""Every researcher page on a 360 px phone: nothing scrolls the page sideways, every chart
fits the screen whole (not clipped by a box that scrolls or hides its overflow), and no
link chip is broken over two lines of its sentence."""

from __future__ import annotations

import json

import pytest

from survey.models import AuditEntry, EmailedInvite
from tests.analysis.analysis_data import analysis_survey, fill, questions
from tests.browser.conftest import LAPTOP, PHONE
from tests.browser.test_workspace import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.rendering]

# For each chart (an <svg> wider than an icon), whether it sticks out of the window or out
# of an ancestor that clips it (overflow other than visible).
CHARTS_THAT_DO_NOT_FIT = """() => {
    const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
        + [...el.classList].map((c) => "." + c).join("");
    const problems = [];
    for (const svg of document.querySelectorAll("main svg")) {
        const box = svg.getBoundingClientRect();
        if (box.width < 48 || !svg.getClientRects().length) continue;
        if (box.left < -0.5 || box.right > window.innerWidth + 0.5) {
            problems.push(`${name(svg)} ${Math.round(box.width)} px outside the window`);
            continue;
        }
        for (let el = svg.parentElement; el && el !== document.body; el = el.parentElement) {
            const style = getComputedStyle(el);
            if (style.overflowX === "visible") continue;
            const clip = el.getBoundingClientRect();
            if (box.left < clip.left - 0.5 || box.right > clip.right + 0.5) {
                problems.push(`${name(svg)} ${Math.round(box.width)} px clipped by ${name(el)}`);
                break;
            }
        }
    }
    return problems;
}"""

# A link shown as a chip (the public link, the /j/ address) broken over two lines draws
# two boxes, the second over the sentence's next line.
SPLIT_CHIPS = """() => [...document.querySelectorAll(".copy-url")]
    .filter((chip) => chip.getClientRects().length > 1)
    .map((chip) => `chip split over lines: ${chip.textContent.trim()}`)"""

SIDEWAYS = """() => {
    const wider = document.scrollingElement.scrollWidth - window.innerWidth;
    if (wider <= 0) return null;
    const out = [...document.body.querySelectorAll("*")].filter(
        (el) => el.getBoundingClientRect().right > window.innerWidth + 0.5);
    const innermost = out.filter((el) => !out.some((o) => o !== el && el.contains(o)));
    const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
        + [...el.classList].map((c) => "." + c).join("");
    return `${wider} px too wide: ${innermost.slice(0, 5).map(name)}`;
}"""


def researcher_pages(survey) -> dict[str, str]:
    q = questions(survey)
    results = f"/surveys/{survey.id}/results/"
    return {
        "my surveys": "/surveys/",
        "builder": f"/surveys/{survey.id}/edit/",
        "distribute": f"/surveys/{survey.id}/distribute/",
        "dashboard": results,
        "dashboard choice question": f"{results}?question={q['often']}",
        "breakdown": f"{results}breakdown/?question={q['cheat']}&by={q['faculty']}",
        "cross-tab": f"{results}crosstab/?a={q['cheat']}&b={q['plagiarise']}",
        "model": f"{results}model/?outcome={q['cheat']}&covariates={q['job']}"
        f"&covariates={q['age']}",
        "audit": f"/surveys/{survey.id}/audit/",
    }


def test_every_researcher_page_fits_a_360_px_phone(
    live_server, browser, owner, screenshot, settings
):
    settings.EMAIL_ENABLED = True  # Distribute shows its email invites panel
    survey = analysis_survey(owner, requires_invite=True)
    fill(survey, [120, 100, 90, 80])
    EmailedInvite.create_batch(survey, ["ana@example.org", "ben@example.org"])
    AuditEntry.record(survey, owner, AuditEntry.Action.EXPORT, "CSV export of every response")
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    log_in(page, live_server)
    found = {}
    for name, url in researcher_pages(survey).items():
        response = page.goto(live_server.url + url)
        page.wait_for_load_state("networkidle")
        problems = [] if response and response.ok else [f"status {response and response.status}"]
        if wider := page.evaluate(SIDEWAYS):
            problems.append(wider)
        problems += page.evaluate(CHARTS_THAT_DO_NOT_FIT) + page.evaluate(SPLIT_CHIPS)
        if problems:
            found[name] = problems
        screenshot(page, f"phone-360-{name.replace(' ', '-')}")
    context.close()
    assert found == {}, json.dumps(found, indent=1)


# The smallest chart word on the page as the eye sees it: each visible <text>'s computed
# font size times its chart's scale on screen; how many chart words there are, and which
# drawings (wide or narrow) are shown.
CHART_TEXT = """() => {
    const sizes = [];
    for (const text of document.querySelectorAll("main figure.chart svg text")) {
        if (!text.getClientRects().length || !text.textContent.trim()) continue;
        const scale = text.getScreenCTM().a;
        sizes.push({size: parseFloat(getComputedStyle(text).fontSize) * scale,
                    height: text.getBoundingClientRect().height, text: text.textContent});
    }
    sizes.sort((a, b) => a.size - b.size);
    const drawings = [...document.querySelectorAll("main figure.chart > svg")]
        .filter((svg) => svg.getClientRects().length).map((svg) => svg.getAttribute("class"));
    return {count: sizes.length, smallest: sizes.slice(0, 3), drawings: [...new Set(drawings)]};
}"""

LEGIBLE_PX = 11


@pytest.mark.parametrize(("viewport", "drawing"), [(PHONE, "chart-narrow"), (LAPTOP, "chart-wide")])
def test_chart_words_stay_legible_on_a_phone_and_a_laptop(
    live_server, browser, owner, screenshot, viewport, drawing
):
    survey = analysis_survey(owner)
    fill(survey, [120, 100, 90, 80])
    pages = researcher_pages(survey)
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    log_in(page, live_server)
    found = {}
    for name in ("dashboard", "dashboard choice question", "breakdown", "cross-tab", "model"):
        page.goto(live_server.url + pages[name])
        words = page.evaluate(CHART_TEXT)
        small = [w for w in words["smallest"] if w["size"] < LEGIBLE_PX]
        if not words["count"] or small or words["drawings"] != [drawing]:
            found[name] = words
        screenshot(page, f"{viewport['width']}-charts-{name.replace(' ', '-')}")
    context.close()
    assert found == {}, json.dumps(found, indent=1)
