"""Question and option order shuffled on the device: the server never learns the order
shown. Two phones whose crypto RNGs differ see different orders, give the same answers,
and send (and leave stored) exactly the same thing; without JavaScript the page keeps
the survey's own order and says so."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import PHONE
from tests.browser.test_respondent_accessibility import serious_violations
from tests.storage import stored_reports

pytestmark = pytest.mark.django_db(transaction=True)

OPTIONS = ["First", "Second", "Third", "Later"]
SENT = "left this device"
# crypto.getRandomValues replaced by a seeded xorshift, so that each phone's order is
# fixed by its seed (the page never uses any other randomness).
SEEDED = """(() => {{
  let x = {seed};
  crypto.getRandomValues = (words) => {{
    for (let i = 0; i < words.length; i++) {{
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      words[i] = x & (2 ** (8 * words.BYTES_PER_ELEMENT) - 1);
    }}
    return words;
  }};
}})();"""
SHOWN = """() => Array.from(document.querySelectorAll("[data-digital] [data-question]"), (q) => [
  Number(q.dataset.question),
  Array.from(q.querySelectorAll("[data-truth]"), (b) => [b.dataset.label || b.textContent.trim(),
    b.tabIndex, b.querySelector(".option-number")?.textContent ?? null]),
])"""


@pytest.fixture
def shuffled(make_survey):
    survey = make_survey(0, shuffle_questions=True)
    direct = {"design_name": "direct", "design_params": {}}
    year = survey.questions.create(
        position=0,
        text="Year of study?",
        kind="choice",
        options=OPTIONS,
        shuffle_options=True,
        **direct,
    )
    survey.questions.create(position=1, text="Do you live on campus?", **direct)
    survey.questions.create(
        position=2,
        text="Do you have a first-year mentor?",
        show_if={"question": year.id, "in": [0]},
        **direct,
    )
    survey.questions.create(
        position=3,
        text="Faculty?",
        kind="choice",
        options=["Arts", "Science", "Law", "Medicine"],
        shuffle_options=True,
        **direct,
    )
    return survey


def answer_on_a_phone(browser, live_server, survey, seed: int) -> tuple[list, dict]:
    """The order this phone showed, and the body it sent, answering the same each time."""
    context = browser.new_context(viewport=PHONE, bypass_csp=True)
    context.add_init_script(SEEDED.format(seed=seed))
    page = context.new_page()
    bodies = []
    page.on("request", lambda r: bodies.append(r.post_data) if r.method == "POST" else None)
    page.goto(live_server.url + survey.get_absolute_url())
    year, campus, mentor, faculty = (
        page.locator(f'[data-question="{q.id}"]') for q in survey.questions.all()
    )
    shown = page.evaluate(SHOWN)  # before answering: as the phone first laid it out
    year.get_by_role("radio", name="First").click()
    campus.get_by_role("button", name="Yes").click()
    mentor.get_by_role("button", name="No").click()
    faculty.get_by_role("radio", name="Law").click()
    assert serious_violations(page) == []
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()
    # Every answer here was asked directly: the page does not call them randomized.
    assert page.get_by_text("which are as you gave them").is_visible()
    context.close()
    (body,) = bodies
    return shown, json.loads(body)


def test_the_server_never_learns_the_order_shown(live_server, browser, shuffled):
    year, campus, mentor, faculty = shuffled.questions.all()
    first_shown, first_body = answer_on_a_phone(browser, live_server, shuffled, seed=2026)
    second_shown, second_body = answer_on_a_phone(browser, live_server, shuffled, seed=7)

    first_ids = [qid for qid, _ in first_shown]
    second_ids = [qid for qid, _ in second_shown]
    options = {qid: [label for label, _, _ in buttons] for qid, buttons in first_shown}
    other_options = {qid: [label for label, _, _ in buttons] for qid, buttons in second_shown}
    # The two phones really showed different orders of questions and of options...
    assert first_ids != second_ids and sorted(first_ids) == sorted(second_ids)
    assert options[year.id] != other_options[year.id]
    assert options[faculty.id] != other_options[faculty.id]
    assert sorted(options[year.id]) == sorted(year.options)
    for ids in (first_ids, second_ids):  # the conditional question follows its own
        assert ids[ids.index(year.id) + 1] == mentor.id
    for shown in (first_shown, second_shown):  # numbered 1, 2, … and tabbable from the top
        for qid in (year.id, faculty.id):
            buttons = dict(shown)[qid]
            assert [number for _, _, number in buttons] == ["1", "2", "3", "4"]
            assert [tab for _, tab, _ in buttons] == [0, -1, -1, -1]

    # ... yet sent the same thing: canonical question order and option indexes.
    expected = [
        {"question": year.id, "value": 0},
        {"question": campus.id, "value": 1},
        {"question": mentor.id, "value": 0},
        {"question": faculty.id, "value": 2},
    ]
    assert first_body["answers"] == second_body["answers"] == expected
    assert set(first_body) == set(second_body) == {"submission_id", "answers", "design_version"}
    assert first_body["design_version"] == second_body["design_version"]
    row = {year.id: 0, campus.id: 1, mentor.id: 0, faculty.id: 2}
    assert stored_reports(shuffled) == [row, row]


def test_without_javascript_the_page_keeps_the_surveys_order_and_says_so(
    live_server, browser, shuffled, screenshot
):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False, bypass_csp=True)
    page = context.new_page()
    page.goto(live_server.url + shuffled.get_absolute_url())
    paper = page.locator("form.paper")
    assert paper.get_by_text(
        "This form shows the questions and options in the survey's own"
    ).is_visible()
    fieldsets = paper.locator("fieldset")
    for i, question in enumerate(shuffled.questions.all()):
        assert question.text in fieldsets.nth(i).inner_text()
    year_labels = fieldsets.first.locator("label").all_inner_texts()
    assert [
        next(o for o in OPTIONS if o in label)
        for label in year_labels
        if any(o in label for o in OPTIONS)
    ] == OPTIONS
    screenshot(page, "order-paper-phone")
    context.close()
