"""SPEC §2, invariant 8, played by the neighbour who glances at a phone in a lecture hall:
after "Flip and send" the page — its visible text, its accessibility tree (pressed,
checked, disabled states, values in fields) and the chance devices — is a function of the
report alone, never of the true answer or of how the coins fell."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from tests.browser.conftest import PHONE
from tests.survey.test_respondent_views import MIXED, add_questions

pytestmark = pytest.mark.django_db(transaction=True)

RUNS = 8
DOCS = Path(__file__).resolve().parents[2] / "docs"
# The README's pictures of the screen after sending, one per kind (DOCS_SCREENSHOTS=1).
PICTURED = {"Have you cheated on an exam?": "binary", "How often do you skip?": "choice"}
PICTURED["Drinks last week?"] = "number"
# A narrow number range: reports collide often, so the same report is seen for several
# true numbers and the test compares what the screen shows for them.
NARROW = [
    spec
    if spec[1] != "laplace"
    else ("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 2}, [], spec[4])
    for spec in MIXED
] + [
    # Designs with arms: the arm is sent with the report, and shown no more than the coins.
    (
        "binary",
        "stochastic_lie_detector",
        {"p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]},
        [],
        "Have you ever shoplifted?",
    ),
    (
        "binary",
        "cheating_detection",
        {"p_truth": [0.5, 0.75], "p_yes": [0.5, 0.5], "arm_weights": [0.5, 0.5]},
        [],
        "Have you ever faked a sick note?",
    ),
]
# Each run a first visit (nothing memoized) with crypto.getRandomValues drawn from a seed in
# the address's fragment: the runs are reproducible, so the test never flakes, and the true
# answers and the coins still vary run by run.
SEEDED_CRYPTO = """(() => {
  localStorage.clear();
  let s = (Number(new URLSearchParams(location.hash.slice(1)).get("seed")) * 2654435761) >>> 0 || 1;
  crypto.getRandomValues = (array) => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
      bytes[i] = s & 255;
    }
    return array;
  };
})();"""
# Everything a screen reader or a script reads off a question: states, values, faces.
STATES = """() => Object.fromEntries([...document.querySelectorAll('[data-question]')].map(
  (section) => [section.dataset.question, [section.innerText, [...section.querySelectorAll(
    'input, button, [aria-pressed], [aria-checked], [data-coin], [data-spinner], [data-face]')]
  .map((el) => [el.tagName, el.getAttribute('aria-pressed'), el.getAttribute('aria-checked'),
                el.tabIndex, el.disabled ?? null, el.value ?? null, el.dataset.face ?? null,
                el.textContent.trim(), el.checkVisibility()])]]))"""
OUTSIDE = "[data-respond] > :not([data-digital]), [data-digital] > :not([data-question])"


def truth_for(question, run: int) -> str:
    if question.kind == "number":
        return str((question.design.lower, question.design.upper)[run % 2])
    if question.kind == "choice":
        return question.options[run % len(question.options)]
    if question.design_name == "crosswise":
        return ("Same", "Different")[run % 2]
    return ("Yes", "No")[run % 2]


def test_after_sending_the_screen_shows_the_report_and_nothing_of_the_truth_or_coins(
    live_server, browser, make_survey, screenshot
):
    survey = make_survey(0)
    questions = add_questions(survey, NARROW)
    context = browser.new_context(viewport=PHONE)
    context.add_init_script(SEEDED_CRYPTO)
    page = context.new_page()
    bodies = []
    page.on("request", lambda r: r.method == "POST" and bodies.append(json.loads(r.post_data)))
    seen = defaultdict(set)  # (question, report) → what the screen showed
    truths = defaultdict(set)  # (question, report) → the true answers behind it
    outside = set()
    for run in range(RUNS):
        page.goto("about:blank")
        page.goto(f"{live_server.url}{survey.get_absolute_url()}#seed={run + 1}")
        for question in questions:
            section = page.locator(f'[data-question="{question.id}"]')
            truth = truth_for(question, run)
            if question.kind == "number":
                section.get_by_role("spinbutton").fill(truth)
            elif question.kind == "choice":
                section.get_by_role("radio", name=truth, exact=True).click()
            else:
                section.get_by_role("button", name=truth, exact=True).click()
        page.get_by_role("button", name="Flip and send").click()
        page.get_by_text("left this device").wait_for()
        # What was sent for each question: the report, and the arm of a design with arms.
        reports = {a["question"]: (a["value"], a.get("arm")) for a in bodies[-1]["answers"]}
        states = page.evaluate(STATES)
        for question in questions:
            section = page.locator(f'[data-question="{question.id}"]')
            key = (question.text, reports[question.id])
            seen[key].add((section.aria_snapshot(), json.dumps(states[str(question.id)])))
            truths[key].add(truth_for(question, run))
        outside.add(
            tuple(
                (el.aria_snapshot(), el.inner_text())
                for el in page.locator(OUTSIDE).all()
                if el.get_attribute("data-status") is None
            )
        )
        if run == 0:
            screenshot(page, "after-sending-phone")
            for question in questions:
                if os.environ.get("DOCS_SCREENSHOTS") and question.text in PICTURED:
                    name = f"respondent-sent-{PICTURED[question.text]}-phone.png"
                    page.locator(f'[data-question="{question.id}"]').screenshot(path=DOCS / name)
    assert len(bodies) == RUNS
    # The same report looks the same on screen, whatever the true answer and the coins.
    differing = {key: sorted(screens) for key, screens in seen.items() if len(screens) > 1}
    assert differing == {}
    # Not vacuous: every randomized question met one report from different true answers.
    for question in questions:
        if question.design.randomized and question.design_name != "crosswise":
            met = [key for key in truths if key[0] == question.text and len(truths[key]) > 1]
            assert met, question.text
    # Around the questions the page is the same after every run.
    assert len(outside) == 1
    context.close()
