"""The respondent invariants of SPEC §2, proved in real Chromium against a live server."""

from __future__ import annotations

import json
import math
import re
import uuid

import pytest
from django.db import transaction
from scipy import stats

from estimator.randomized_response import design_from_params
from responses.write import receipt_stored
from tests.browser.conftest import LAPTOP, PHONE
from tests.storage import stored_count, stored_reports

pytestmark = pytest.mark.django_db(transaction=True)

THREE_DESIGNS = [
    ("forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
    ("mirrored", {"p": 0.75}),
    ("unrelated_question", {"p_truth": 0.5, "pi": 0.0833}),
]
THROW_ON_MATH_RANDOM = "Math.random = () => { throw new Error('Math.random was called'); };"
SENT = "left this device"


@pytest.fixture
def three_question_survey(make_survey):
    survey = make_survey(0)
    for i, (name, params) in enumerate(THREE_DESIGNS):
        survey.questions.create(
            position=i, text=f"Sensitive question {i + 1}?", design_name=name, design_params=params
        )
    return survey


def answer(page, true_answers) -> None:
    for section, truth in zip(page.locator("[data-question]").all(), true_answers, strict=True):
        section.get_by_role("button", name="Yes" if truth else "No").click()
    # "Send again" when this device already made every report (nothing is flipped).
    page.get_by_role("button", name=re.compile("^(Flip and send|Send again)$")).click()
    page.get_by_text(SENT).wait_for()


def sent_bodies(requests) -> list[dict]:
    return [json.loads(r.post_data) for r in requests if r.method == "POST"]


def test_a_whole_session_sends_only_randomized_values_and_a_submission_id(
    live_server, browser, three_question_survey, screenshot
):
    for name, viewport in (("phone", PHONE), ("laptop", LAPTOP)):
        context = browser.new_context(viewport=viewport)
        context.add_init_script(THROW_ON_MATH_RANDOM)
        check_one_session(context.new_page(), live_server, three_question_survey, screenshot, name)
        assert context.cookies() == []
        context.close()


def check_one_session(page, live_server, survey, screenshot, name: str) -> None:
    errors, requests = [], []
    page.on("pageerror", lambda error: errors.append(error))
    page.on("request", lambda request: requests.append(request))
    response = page.goto(live_server.url + survey.get_absolute_url())
    assert response.headers["referrer-policy"] == "no-referrer"
    assert page.get_by_text("Answering all 3 questions").is_visible()
    assert page.locator("[data-truth][name], [name*=truth]").count() == 0
    assert page.locator("form [data-truth]").count() == 0
    screenshot(page, f"respondent-{name}-before")
    answer(page, [1, 0, 1])
    screenshot(page, f"respondent-{name}-after")

    (body,) = sent_bodies(requests)
    assert set(body) == {"submission_id", "answers", "design_version"}
    assert [set(a) for a in body["answers"]] == [{"question", "value"}] * 3
    assert all(a["value"] in (0, 1) for a in body["answers"])
    for request in requests:
        text = (request.post_data or "") + request.url
        assert "truth" not in text and "coin" not in text
        assert "cookie" not in request.headers
    assert receipt_stored(uuid.UUID(body["submission_id"])) == survey.pk
    # The sent reports are what is stored, and the client's id is nowhere in it.
    sent = {a["question"]: a["value"] for a in body["answers"]}
    assert sent in stored_reports(survey)
    assert errors == []


def test_the_sampler_in_the_browser_matches_every_design_and_its_epsilon(live_server, page):
    """≥ 100 000 draws per design and true answer, with Math.random made to throw."""
    designs = [
        *THREE_DESIGNS,
        ("forced_response", {"p_truth": 0.75, "p_yes": 1 / 3}),
        ("mirrored", {"p": 0.7}),
    ]
    n = 100_000
    page.add_init_script(THROW_ON_MATH_RANDOM)
    page.goto(live_server.url + "/how-it-works/")
    counts = page.evaluate(
        """async ({designs, n}) => {
            const rr = await import("/static/survey/rr.js");
            return designs.map(([name, params]) =>
                [0, 1].map((truth) => rr.countYes(name, params, truth, n)));
        }""",
        {"designs": designs, "n": n},
    )
    z = stats.norm.isf(1e-6 / 2)
    for (name, params), (yes_if_0, yes_if_1) in zip(designs, counts, strict=True):
        design = design_from_params(name, params)
        assert stats.binomtest(yes_if_0, n, design.p_yes_given_0).pvalue > 1e-6
        assert stats.binomtest(yes_if_1, n, design.p_yes_given_1).pvalue > 1e-6
        # The empirical privacy loss: both likelihood ratios, on the log scale (delta method).
        ratios = [
            (yes_if_1, yes_if_0, design.p_yes_given_1 / design.p_yes_given_0),
            (n - yes_if_0, n - yes_if_1, (1 - design.p_yes_given_0) / (1 - design.p_yes_given_1)),
        ]
        for top, bottom, expected in ratios:
            log_ratio = math.log(top / bottom)
            se = math.sqrt(1 / top - 1 / n + 1 / bottom - 1 / n)
            assert abs(log_ratio - math.log(expected)) < z * se, (name, params)
        assert max(expected for *_, expected in ratios) == pytest.approx(math.exp(design.epsilon))


FORCE_RANDOM_WORD = """
const word = %d;
window.__randomCalls = 0;
window.__fetchTimes = [];
crypto.getRandomValues = (array) => { window.__randomCalls++; array.fill(word); return array; };
const realFetch = window.fetch;
window.fetch = (...args) => {
  window.__fetchTimes.push(performance.now());
  return realFetch(...args);
};
window.addEventListener("click", () => {
  window.__fetchesWhenClickEnded = window.__fetchTimes.length;
  window.__clickTime = performance.now();
});
"""


def test_the_send_moment_and_the_work_do_not_depend_on_how_the_coins_fall(
    live_server, browser, survey
):
    """Word 0 makes both coins heads (truth sent); 0xFFFFFFFF makes both tails ("no")."""
    observed = {}
    for word in (0, 0xFFFFFFFF):
        context = browser.new_context()
        context.add_init_script(FORCE_RANDOM_WORD % word)
        page = context.new_page()
        page.goto(live_server.url + survey.get_absolute_url())
        answer(page, [1])
        observed[word] = page.evaluate(
            """() => ({
                fetchesWhenClickEnded: window.__fetchesWhenClickEnded,
                randomCalls: window.__randomCalls,
                shownAfter: performance.now() - window.__clickTime,
                sent: document.querySelector("[data-sent]").textContent,
            })"""
        )
        context.close()
    heads, tails = observed[0], observed[0xFFFFFFFF]
    assert (heads["sent"], tails["sent"]) == ("YES", "NO")
    # The request leaves during the click itself, before any timer or animation.
    assert heads["fetchesWhenClickEnded"] == tails["fetchesWhenClickEnded"] == 1
    assert heads["randomCalls"] == tails["randomCalls"]
    assert heads["shownAfter"] >= 1600 and tails["shownAfter"] >= 1600
    assert stored_count() == 2


def test_answering_again_on_this_device_gives_the_same_reports(
    live_server, page, record_requests, three_question_survey
):
    survey = three_question_survey
    page.goto(live_server.url + survey.get_absolute_url())
    answer(page, [1, 0, 1])
    page.reload()
    assert page.get_by_text("You have already answered this survey on this device").is_visible()
    assert page.get_by_role("button", name="Flip and send").is_hidden()

    survey.current_round += 1  # a classroom's new round: answering is allowed again
    survey.save(update_fields=["current_round"])
    page.reload()
    answer(page, [1, 0, 1])
    first, second = sent_bodies(record_requests)
    assert first["answers"] == second["answers"]
    assert first["submission_id"] != second["submission_id"]
    assert stored_count() == 2


def test_forgetting_answers_on_this_device_clears_the_memory(live_server, page, survey):
    page.goto(live_server.url + survey.get_absolute_url())
    answer(page, [1])
    page.get_by_role("button", name="Forget my answers on this device").click()
    page.get_by_role("button", name="Flip and send").wait_for()
    assert page.evaluate("() => Object.keys(localStorage).length") == 0


def test_questions_edited_while_the_page_was_open_are_refused_with_a_clear_message(
    live_server, page, survey
):
    """Reports randomized with the design the page showed are never stored under
    another: the owner changes the design before anyone answered, this page is stale."""
    page.goto(live_server.url + survey.get_absolute_url())
    with transaction.atomic():
        survey.check_design_editable()
        survey.questions.update(design_params={"p_truth": 0.25, "p_yes": 0.5})
    page.get_by_role("button", name="Yes").click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text("the questions were changed after this page was opened").wait_for()
    assert stored_count() == 0
    page.reload()
    answer(page, [1])
    assert stored_count() == 1


def test_network_failures_are_retried_with_the_same_submission_id(
    live_server, page, record_requests, survey
):
    failures = iter(["abort", "429"])

    def flaky(route):
        failure = next(failures, None)
        if failure == "abort":
            route.abort()
        elif failure == "429":
            route.fulfill(status=429, headers={"Retry-After": "1"}, json={"detail": "Slow down."})
        else:
            route.continue_()

    page.route("**/api/public/surveys/**", flaky)
    page.goto(live_server.url + survey.get_absolute_url())
    answer(page, [1])
    bodies = sent_bodies(record_requests)
    assert len(bodies) == 3
    assert bodies[0] == bodies[1] == bodies[2]
    assert stored_count() == 1
    assert receipt_stored(uuid.UUID(bodies[0]["submission_id"])) is not None


def test_the_browser_refuses_a_sampler_that_differs_from_the_published_one(
    live_server, page, record_requests, survey
):
    def tamper(route):
        original = route.fetch()
        route.fulfill(response=original, body=original.text() + "\n// one changed byte\n")

    page.route("**/static/survey/rr.js", tamper)
    page.goto(live_server.url + survey.get_absolute_url())
    page.get_by_role("button", name="Send my results").wait_for()
    assert page.locator("[data-digital]").is_hidden()
    assert sent_bodies(record_requests) == []


def test_without_javascript_the_paper_page_stores_a_valid_answer(
    live_server, browser, make_survey, screenshot
):
    survey = make_survey(2)
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    assert page.get_by_role("heading", name="Answer with two real coins").is_visible()
    assert page.get_by_role("button", name="Flip and send").is_hidden()
    page.get_by_role("button", name="Send my results").click()
    assert page.get_by_text("Please give a valid result for every question").is_visible()
    assert stored_count() == 0
    for fieldset in page.locator("fieldset").all():
        fieldset.get_by_label("My result is yes").check()
    screenshot(page, "paper-phone")
    page.get_by_role("button", name="Send my results").click()
    assert page.get_by_role("heading", name="Thank you").is_visible()
    assert sorted(v for r in stored_reports(survey) for v in r.values()) == [1, 1]
    assert context.cookies() == []
    context.close()


def test_the_paper_page_names_a_die_when_the_probability_is_two_thirds(
    live_server, browser, make_survey
):
    survey = make_survey(0)
    survey.questions.create(text="Q?", design_name="mirrored", design_params={"p": 2 / 3})
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    assert page.get_by_text(
        "Roll a six-sided die. 1–4: your result is your true answer."
    ).is_visible()
    assert page.get_by_text("Answer with two real coins").count() == 0
    context.close()


def test_answers_that_could_not_be_sent_are_kept_and_sent_later_unchanged(
    live_server, page, record_requests, survey
):
    def unavailable(route):
        route.fulfill(status=503, headers={"Retry-After": "1"}, json={"detail": "Try later."})

    page.route("**/api/public/surveys/**", unavailable)
    page.goto(live_server.url + survey.get_absolute_url())
    page.get_by_role("button", name="Yes").click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_role("button", name="Try sending again").wait_for()
    assert stored_count() == 0

    page.unroute("**/api/public/surveys/**")
    page.reload()
    assert page.get_by_text("Answers from this device are waiting to be sent").is_visible()
    assert page.get_by_role("button", name="Flip and send").is_hidden()
    page.get_by_role("button", name="Send them now").click()
    page.get_by_text(SENT).wait_for()
    bodies = sent_bodies(record_requests)
    assert len(bodies) == 6  # the first try, four automatic retries, then after the reload
    assert all(body == bodies[0] for body in bodies)
    assert stored_count() == 1


@pytest.mark.parametrize(
    ("motion", "animation"), [("reduce", "none"), ("no-preference", "coin-flip")]
)
def test_the_coins_spin_only_when_motion_is_welcome(live_server, page, survey, motion, animation):
    page.emulate_media(reduced_motion=motion)
    page.goto(live_server.url + survey.get_absolute_url())
    page.get_by_role("button", name="Yes").click()
    page.get_by_role("button", name="Flip and send").click()
    assert (
        page.locator("[data-coin]").first.evaluate("el => getComputedStyle(el).animationName")
        == animation
    )
    page.get_by_text(SENT).wait_for()
