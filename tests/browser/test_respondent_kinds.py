"""Every kind and design on the respondent page, in real Chromium: SPEC §2's invariants for
yes/no, crosswise, multiple-choice, number and directly asked questions, the no-JavaScript
path for each design, and the served sampler against every design's law."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bench.respondent import CONSENT, PAGE, check, draw, label_of
from tests.browser.conftest import LAPTOP, PHONE
from tests.browser.test_respondent_accessibility import axe_page, serious_violations

__all__ = ["axe_page"]  # the fixture, shared with the other accessibility tests
from tests.storage import stored_count, stored_reports
from tests.survey.test_respondent_views import add_questions

pytestmark = pytest.mark.django_db(transaction=True)

THROW_ON_MATH_RANDOM = "Math.random = () => { throw new Error('Math.random was called'); };"
SENT = "left this device"
SEND = re.compile("^(Flip and send|Send again)$")
# Two sets of true answers, by question text: every answer differs between them.
TRUTHS = [
    {
        "Have you cheated on an exam?": "Yes",
        "Have you copied homework?": "No",
        "Have you lied to a tutor?": "Yes",
        "I have taken a study drug without a prescription.": "Same",
        "How often do you skip?": "Often",
        "How many exams have you faked illness for?": "None",
        "Drinks last week?": "13",
        "Are you a full-time student?": "Yes",
        "Year of study?": "Second",
        "How old are you?": "23",
    },
    {
        "Have you cheated on an exam?": "No",
        "Have you copied homework?": "Yes",
        "Have you lied to a tutor?": "No",
        "I have taken a study drug without a prescription.": "Different",
        "How often do you skip?": "Never",
        "How many exams have you faked illness for?": "Several",
        "Drinks last week?": "0",
        "Are you a full-time student?": "No",
        "Year of study?": "Third or later",
        "How old are you?": "61",
    },
]


@pytest.fixture
def mixed(make_survey):
    survey = make_survey(0)
    add_questions(survey)
    return survey


def section_of(page, question):
    return page.locator(f'[data-question="{question.id}"]')


def answer(page, survey, truths: dict[str, str]) -> None:
    for question in survey.questions.all():
        section, truth = section_of(page, question), truths[question.text]
        if question.kind == "number":
            section.get_by_role("spinbutton").fill(truth)
        elif question.kind == "choice":
            section.get_by_role("radio", name=truth).click()
        else:
            section.get_by_role("button", name=truth, exact=True).click()
    page.get_by_role("button", name=SEND).click()
    page.get_by_text(SENT).wait_for()


def stored_on_device(page) -> dict:
    return page.evaluate(
        """() => ({
            local: Object.fromEntries(
                Object.keys(localStorage).map((k) => [k, localStorage.getItem(k)])),
            session: sessionStorage.length,
        })"""
    )


def watch(page) -> tuple[list, list]:
    """The page's script errors and every request it makes, as they happen."""
    errors, requests = [], []
    page.on("pageerror", lambda error: errors.append(error))
    page.on("request", lambda request: requests.append(request))
    return errors, requests


def shape(request) -> tuple:
    """A request with its randomized values and its random id blanked out."""
    body = request.post_data
    if body:
        data = json.loads(body)
        data["submission_id"] = "…"
        for answer_ in data.get("answers", []):
            answer_["value"] = "…"
        body = json.dumps(data, sort_keys=True)
    headers = {k: v for k, v in request.headers.items() if k != "content-length"}
    return request.method, request.url, body, sorted(headers.items())


def test_a_mixed_survey_sends_and_keeps_only_reports_whatever_the_true_answers(
    live_server, browser, mixed
):
    sessions = []
    for truths, viewport in zip(TRUTHS, (PHONE, LAPTOP), strict=True):
        context = browser.new_context(viewport=viewport)
        context.add_init_script(THROW_ON_MATH_RANDOM)
        page = context.new_page()
        errors, requests = watch(page)
        page.goto(live_server.url + mixed.get_absolute_url())
        assert page.locator("[data-digital] [name]").count() == 0
        assert page.locator("form [data-truth], form [data-number]").count() == 0
        answer(page, mixed, truths)
        posts = [r for r in requests if r.method == "POST"]
        assert len(posts) == 1 and errors == []
        body = json.loads(posts[0].post_data)
        assert set(body) == {"submission_id", "answers", "design_version"}
        designs = {q.id: q.design for q in mixed.questions.all()}
        sent = {a["question"]: a["value"] for a in body["answers"]}
        assert set(sent) == set(designs)
        for qid, value in sent.items():
            assert designs[qid].check_report(value) == value and isinstance(value, int)
        # The device keeps the report per question and design version, and nothing else.
        device = stored_on_device(page)
        prefix = f"deniable:v1:{mixed.slug}:"
        expected = {
            f"{prefix}report:q{qid}:d{mixed.design_version}": json.dumps(
                {"report": v}, separators=(",", ":")
            )
            for qid, v in sent.items()
        }
        assert device == {"local": expected | {f"{prefix}sent:r1": "true"}, "session": 0}
        assert context.cookies() == []
        stored = {item for r in stored_reports(mixed) for item in r.items()}
        assert set(sent.items()) <= stored
        sessions.append([shape(r) for r in requests])
        context.close()
    # Every request, its address, headers and body, is the same for both sets of true
    # answers once the randomized values and the random id are blanked out.
    assert sessions[0] == sessions[1]


def test_every_kind_can_be_answered_with_the_keyboard_alone(live_server, page, mixed):
    page.goto(live_server.url + mixed.get_absolute_url())
    groups = page.get_by_role("radiogroup", name="Your true answer (stays on this device)")
    assert groups.count() == 2
    assert page.get_by_role("radiogroup", name="Your answer").count() == 1

    def tab_to(target) -> None:
        for _ in range(60):
            page.keyboard.press("Tab")
            if target.evaluate("el => el === document.activeElement"):
                return
        pytest.fail(f"could not reach {target} with the Tab key")

    for question in mixed.questions.all():
        section = section_of(page, question)
        if question.kind == "number":
            tab_to(section.get_by_role("spinbutton"))
            page.keyboard.type("7" if question.design.randomized else "30")
        elif question.kind == "choice":
            first = section.get_by_role("radio").first
            tab_to(first)  # one tab stop per group; the arrows move within it
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowUp")
            second = section.get_by_role("radio").nth(1)
            assert second.get_attribute("aria-checked") == "true"
            assert second.evaluate("el => el === document.activeElement")
            assert first.get_attribute("aria-checked") == "false"
        else:
            tab_to(section.get_by_role("button").first)
            page.keyboard.press("Space")
    tab_to(page.get_by_role("button", name="Flip and send"))
    page.keyboard.press("Enter")
    page.get_by_text(SENT).wait_for()
    assert stored_count() == 1
    direct = mixed.questions.get(kind="choice", design_name="direct")
    assert [r[direct.id] for r in stored_reports(mixed)] == [1]


def test_a_mixed_survey_has_no_serious_accessibility_findings(live_server, request, mixed):
    page = request.getfixturevalue("axe_page")
    page.goto(live_server.url + mixed.get_absolute_url())
    found = {"before": serious_violations(page)}
    laplace = mixed.questions.get(design_name="laplace")
    section_of(page, laplace).get_by_role("spinbutton").fill("2.5")
    found["number error"] = serious_violations(page)
    answer(page, mixed, TRUTHS[0])
    found["after sending"] = serious_violations(page)
    page.goto(live_server.url + mixed.get_absolute_url())
    page.evaluate("() => document.querySelector('[data-paper]').hidden = false")
    found["paper form"] = serious_violations(page)
    assert found == dict.fromkeys(found, [])


@pytest.mark.parametrize(("name", "viewport"), [("phone", PHONE), ("laptop", LAPTOP)])
def test_the_page_never_scrolls_sideways(live_server, browser, mixed, tmp_path, name, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(live_server.url + mixed.get_absolute_url())
    width = "() => document.documentElement.scrollWidth"
    assert page.evaluate(width) <= viewport["width"]
    shots = Path(os.environ.get("ARTIFACTS_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=shots / f"respondent-mixed-{name}-top.png")
    for question in mixed.questions.filter(kind__in=["choice", "number"]):
        section = section_of(page, question)
        if question.design.randomized and question.kind == "number":
            section.get_by_role("spinbutton").fill("4")
        elif question.design.randomized:
            section.get_by_role("radio").nth(1).click()
        section.screenshot(
            path=shots / f"respondent-{question.kind}-{question.design_name}-{name}.png"
        )
    answer(page, mixed, TRUTHS[1])
    assert page.evaluate(width) <= viewport["width"]
    for question in mixed.questions.exclude(
        kind="binary", design_name__in=["mirrored", "unrelated_question"]
    ):
        name_ = f"respondent-{question.kind}-{question.design_name}-{name}-sent.png"
        section_of(page, question).screenshot(path=shots / name_)
    page.screenshot(path=shots / f"respondent-mixed-{name}-after.png", full_page=True)
    context.close()


@pytest.mark.parametrize(("motion", "animation"), [("reduce", "none"), ("no-preference", "spin")])
def test_the_spinner_turns_only_when_motion_is_welcome_and_always_for_as_long(
    live_server, page, mixed, motion, animation
):
    page.emulate_media(reduced_motion=motion)
    page.goto(live_server.url + mixed.get_absolute_url())
    started = page.evaluate("() => performance.now()")
    for question in mixed.questions.all():
        section = section_of(page, question)
        if question.kind == "number":
            section.get_by_role("spinbutton").fill("5" if question.design.randomized else "30")
        elif question.kind == "choice":
            section.get_by_role("radio").first.click()
        else:
            section.get_by_role("button").first.click()
    page.evaluate("() => { window.__t = null; }")
    page.get_by_role("button", name="Flip and send").click()
    spinner = page.locator("[data-spinner]").first
    assert spinner.evaluate("el => getComputedStyle(el).animationName") == animation
    page.locator("[data-result]").first.wait_for()
    # Results appear only after the full animation time, whatever the draws.
    assert page.evaluate("() => performance.now()") - started >= 1600
    page.get_by_text(SENT).wait_for()


def paper_choice(question, truth_index: int) -> str:
    if question.kind == "choice":
        return question.options[truth_index]
    if question.design_name == "crosswise":
        return ("different", "same")[truth_index]
    return ("no", "yes")[truth_index]


def test_without_javascript_every_design_is_answered_on_paper_but_the_number_that_needs_it(
    live_server, browser, mixed, screenshot
):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    _, requests = watch(page)
    page.goto(live_server.url + mixed.get_absolute_url())
    expected = {}
    for question in mixed.questions.all():
        fieldset = page.locator("fieldset").filter(has_text=question.text).first
        if question.design_name == "laplace":
            assert "This question needs JavaScript" in fieldset.inner_text()
            assert fieldset.locator("input").count() == 0
            continue
        if question.kind == "number":
            fieldset.get_by_role("spinbutton").fill("30")
            expected[question.id] = 30
            continue
        index = 1
        words = "My result is" if question.design.randomized else "My answer is"
        fieldset.get_by_label(f"{words} {paper_choice(question, index)}", exact=True).check()
        expected[question.id] = index
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "paper-phone")
    with page.expect_navigation():
        page.get_by_role("button", name="Send my results").press("Enter")
    assert page.get_by_role("heading", name="Thank you").is_visible()
    assert stored_reports(mixed) == [expected]
    (post,) = [r for r in requests if r.method == "POST"]
    assert "truth" not in post.post_data
    context.close()


def test_the_served_sampler_follows_every_design_law_and_its_epsilon(live_server, page):
    """≥ 10⁵ draws per design and true value, inside the page in one call, with
    Math.random made to throw: frequencies against the response matrix or the noise law
    (p < 10⁻⁶ with Bonferroni over the cells) and the empirical ε against the design's."""
    n = 100_000
    page.add_init_script(THROW_ON_MATH_RANDOM)
    page.goto(live_server.url + "/how-it-works/")
    failures = {}
    for design, truths, counts, _ms in draw(page, n):
        assert all(sum(c.values()) == n for c in counts)
        result = check(design, truths, counts, n)
        if result["problems"]:
            failures[label_of(design)] = result["problems"]
        if design.is_private:
            assert abs(result["epsilon"] - design.epsilon) < 6 * result["epsilon_se"] + 1e-9
    assert failures == {}


def test_ten_mixed_questions_weigh_at_most_50_kb_compressed_from_one_host(
    live_server, browser, make_survey
):
    # As bench/respondent.py: consent, skips, a condition and a second language too.
    survey = make_survey(0, consent_text=CONSENT, languages=["de"], texts={"de": {"title": "T"}})
    asked = []
    for i, (kind, name, params, options) in enumerate(PAGE):
        text = f"Question {i + 1}: how often, honestly, did this happen last term?"
        german = {"text": f"Frage {i + 1}: wie oft ist das ehrlich gesagt passiert?"}
        asked.append(
            survey.questions.create(
                position=i,
                text=text,
                kind=kind,
                design_name=name,
                design_params=params,
                options=options,
                show_if={"question": asked[-1].id, "in": [1, 2]} if i == len(PAGE) - 1 else None,
                texts={"de": german | {"options": [o.upper() for o in options]}},
            )
        )
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    page.wait_for_load_state("networkidle")
    assert page.get_by_role("navigation", name="Language of this survey").count() == 1
    entries = page.evaluate(
        """() => [...performance.getEntriesByType("navigation"),
                  ...performance.getEntriesByType("resource")]
                 .map((e) => [e.name, e.transferSize])"""
    )
    context.close()
    assert {urlsplit(name).netloc for name, _ in entries} == {urlsplit(live_server.url).netloc}
    total = sum(size for _, size in entries)
    assert 0 < total <= 50 * 1024, entries
