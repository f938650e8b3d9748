"""A split-ballot question in real Chromium: the device draws the ballot with the crypto
RNG as the page opens, before any answer; on the direct ballot the page says the question
is asked directly (no coins, no ε promise) and the request carries the answer with arm 1;
on the randomized ballot it shows the coins and sends arm 0. The crypto words are forced
here (every word 0: the direct ballot at s = ¼; every word 2³² − 1: the randomized one)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from estimator.compare import simulate_split
from estimator.designs import ForcedResponse
from responses.write import bulk_record
from tests.browser.conftest import LAPTOP
from tests.browser.test_respondent_accessibility import serious_violations
from tests.browser.test_respondent_kinds import SEND, SENT, THROW_ON_MATH_RANDOM, watch
from tests.browser.test_workspace import log_in
from tests.storage import stored_reports

pytestmark = pytest.mark.django_db(transaction=True)

SENT_AS_GIVEN = "which are as you gave them"
SENT_RANDOMIZED = "Only these randomized answers left this device."
# Why the answers sent protect the respondent: all randomized, or some asked directly.
ALL_RANDOMIZED = "every answer we store could have been chosen by the coins"
SOME_AS_GIVEN = "Answers to questions asked directly are stored as you gave them."
NOTICE = "This question is asked directly: your answer is sent as you give it, with no coins."


def forced_crypto(word: int) -> str:
    return (
        THROW_ON_MATH_RANDOM
        + f"crypto.getRandomValues = (buffer) => {{ buffer.fill({word}); return buffer; }};"
    )


@pytest.fixture
def split_survey(make_survey):
    survey = make_survey(0)
    question = survey.questions.create(
        position=0,
        text="Have you ever cheated on an exam?",
        kind="binary",
        design_params={"p_truth": 0.5, "p_yes": 0.5},
        direct_share=0.25,
    )
    return survey, question


def answer(page, url: str, question, role: str = "button", name: str = "Yes"):
    """Answer the question (its control of ``role`` and ``name``) and send: what was sent,
    whether the direct ballot's notice showed before answering, and the question."""
    return send(page, url, question, lambda section: section.get_by_role(role, name=name).click())


def send(page, url: str, question, act):
    """Open the page, answer the question with ``act(section)`` and send: what was sent,
    whether the direct ballot's notice showed before answering, and the question."""
    errors, requests = watch(page)
    page.goto(url)
    section = page.locator(f'[data-question="{question.id}"]')
    notice_before = section.get_by_text(NOTICE).is_visible()
    act(section)
    page.get_by_role("button", name=SEND).click()
    page.get_by_text(SENT).wait_for()
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1 and errors == []
    [sent] = json.loads(posts[0].post_data)["answers"]
    return sent | {"notice_before": notice_before}, section


def test_the_direct_ballot_is_told_before_answering_and_sends_the_answer_as_given(
    live_server, page, split_survey, screenshot
):
    survey, question = split_survey
    page.add_init_script(forced_crypto(0))
    url = live_server.url + survey.get_absolute_url()
    sent, section = answer(page, url, question)
    assert sent == {"question": question.id, "value": 1, "arm": 1, "notice_before": True}
    assert stored_reports(survey) == [{question.id: 3}]
    text = section.inner_text()
    assert "ε = ln 3" not in text and "ε = 1.10" not in text  # no promise it cannot keep
    assert "no privacy (ε = ∞)" in text
    # What was sent is not called randomized: this answer went as given.
    assert page.get_by_text(SENT_AS_GIVEN).is_visible()
    assert not page.get_by_text(SENT_RANDOMIZED).count()
    assert not section.locator("[data-coin]").first.is_visible()
    screenshot(page, "split-direct")


def test_the_randomized_ballot_sees_the_coins_and_sends_arm_0(live_server, page, split_survey):
    survey, question = split_survey
    page.add_init_script(forced_crypto(2**32 - 1))
    url = live_server.url + survey.get_absolute_url()
    page.goto(url)
    section = page.locator(f'[data-question="{question.id}"]')
    assert not section.get_by_text(NOTICE).is_visible()
    assert section.locator("[data-coin]").first.is_visible()
    assert section.locator(".privacy-line").first.is_visible()
    sent, _ = answer(page, url, question)
    assert sent["arm"] == 0 and sent["notice_before"] is False
    assert page.get_by_text(SENT_RANDOMIZED).is_visible()
    assert stored_reports(survey) == [{question.id: sent["value"]}]


def test_the_ballot_is_kept_on_the_device_across_reloads(live_server, page, split_survey):
    survey, question = split_survey
    page.add_init_script(forced_crypto(0))
    url = live_server.url + survey.get_absolute_url()
    page.goto(url)
    key = f"deniable:v1:{survey.slug}:ballot:q{question.id}:d{survey.design_version}"
    assert page.evaluate(f"() => localStorage.getItem('{key}')") == "1"
    # The next visit's crypto words would draw the randomized ballot: the kept one wins.
    page.evaluate(f"() => localStorage.setItem('{key}', '1')")
    page.add_init_script(forced_crypto(2**32 - 1))
    page.goto(url)
    assert page.locator(f'[data-question="{question.id}"]').get_by_text(NOTICE).is_visible()


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def scanned_page(browser):
    """A laptop page the accessibility scan can inject its script into."""
    context = browser.new_context(viewport=LAPTOP, bypass_csp=True)
    yield context.new_page()
    context.close()


def test_the_results_page_compares_the_ballots_in_words(
    live_server, scanned_page, split_survey, screenshot
):
    """Seeded: 38 % truly "yes"; asked directly, a third of them deny. The README's
    picture of the comparison comes from here (DOCS_SCREENSHOTS=1)."""
    survey, question = split_survey
    rng = np.random.default_rng(4)
    truths = (rng.random(2400) < 0.38).astype(int)
    direct, reports = simulate_split(ForcedResponse(), 0.25, truths, rng)
    reports = np.where(direct & (truths == 1) & (rng.random(2400) < 1 / 3), 0, reports)
    stored = 2 * direct.astype(int) + reports
    bulk_record(survey, [{question.id: int(r)} for r in stored], simulated=False)
    page = scanned_page
    page.goto(live_server.url + survey.get_absolute_url())
    page.locator(".ballot-note:visible").wait_for()
    assert serious_violations(page) == []  # the respondent page, on whichever ballot
    log_in(page, live_server)
    page.goto(f"{live_server.url}/surveys/{survey.id}/results/")
    row = page.locator('tr[data-kind="split"]')
    text = row.inner_text()
    assert "Randomized response found" in text and "points more" in text
    assert f"Asked directly: n = {direct.sum()}" in text
    assert serious_violations(page) == []
    screenshot(page, "split-results")
    if os.environ.get("DOCS_SCREENSHOTS"):
        page.locator("table.results").screenshot(path=DOCS / "split-ballot.png")


@pytest.fixture
def choice_split(make_survey):
    survey = make_survey(0)
    question = survey.questions.create(
        position=0,
        text="How often have you cheated on an exam?",
        kind="choice",
        options=["Never", "Once", "Often"],
        design_name="k_rr",
        design_params={"epsilon": 2.0},
        direct_share=0.25,
    )
    return survey, question


def test_a_choice_question_on_the_direct_ballot_sends_the_option_as_given(
    live_server, page, choice_split, screenshot
):
    survey, question = choice_split
    page.add_init_script(forced_crypto(0))
    sent, section = answer(
        page, live_server.url + survey.get_absolute_url(), question, "radio", "Often"
    )
    assert sent == {"question": question.id, "value": 2, "arm": 1, "notice_before": True}
    assert stored_reports(survey) == [{question.id: 5}]  # ballot · 3 + option
    assert section.locator("legend").inner_text() == "Your answer"
    assert not section.locator("[data-spinner]").is_visible()
    assert page.get_by_text(SENT_AS_GIVEN).is_visible()
    assert page.get_by_text(SOME_AS_GIVEN).is_visible()
    assert not page.get_by_text(ALL_RANDOMIZED).is_visible()
    screenshot(page, "split-choice-direct")


def test_a_choice_question_on_the_randomized_ballot_spins_and_sends_arm_0(
    live_server, page, choice_split
):
    survey, question = choice_split
    # Every word 2³¹ + 3 (3 mod 4: the randomized ballot at s = ¼), one the spinner's
    # exact draws accept (a word of 2³² − 1 is refused by them for ever).
    page.add_init_script(forced_crypto(2**31 + 3))
    sent, section = answer(
        page, live_server.url + survey.get_absolute_url(), question, "radio", "Often"
    )
    assert sent["arm"] == 0 and sent["notice_before"] is False and sent["value"] in (0, 1, 2)
    assert stored_reports(survey) == [{question.id: sent["value"]}]
    assert "stays on this device" in section.locator("legend").inner_text()
    assert page.get_by_text(SENT_RANDOMIZED).is_visible()
    assert page.get_by_text(ALL_RANDOMIZED).is_visible()
    assert not page.get_by_text(SOME_AS_GIVEN).is_visible()


def number_question(make_survey, design_name: str):
    survey = make_survey(0)
    question = survey.questions.create(
        position=0,
        text="How many drinks did you have last week?",
        kind="number",
        design_name=design_name,
        design_params={"epsilon": 1.0, "lower": 0, "upper": 20},
        direct_share=0.25,
    )
    return survey, question


@pytest.fixture
def number_split(make_survey):
    return number_question(make_survey, "laplace")


@pytest.fixture(params=["laplace", "one_bit"])
def any_number_split(request, make_survey):
    """A number question on a split ballot: noise added, or one bit sent."""
    return number_question(make_survey, request.param)


def send_number(page, url: str, question, value: str):
    """Type ``value`` into the number question and send (see :func:`send`)."""
    return send(page, url, question, lambda section: section.get_by_role("spinbutton").fill(value))


def test_a_number_on_the_direct_ballot_is_sent_as_given(
    live_server, page, any_number_split, screenshot
):
    survey, question = any_number_split
    page.add_init_script(forced_crypto(0))
    sent, section = send_number(page, live_server.url + survey.get_absolute_url(), question, "9")
    assert sent == {"question": question.id, "value": 9, "arm": 1, "notice_before": True}
    assert stored_reports(survey) == [{question.id: question.design.encode(1, 9)}]
    assert section.locator("label[for]").first.inner_text() == "Your answer"
    assert "no privacy (ε = ∞)" in section.inner_text()
    assert not section.locator(".steps").first.is_visible()  # no noise is drawn
    assert page.get_by_text(SENT_AS_GIVEN).is_visible()
    assert page.get_by_text(SOME_AS_GIVEN).is_visible()
    screenshot(page, "split-number-direct")


def test_a_number_on_the_randomized_ballot_is_randomized_and_sent_with_arm_0(
    live_server, page, any_number_split
):
    """The device's own crypto draws the noise or the bit; the ballot is the one kept on
    the device (the randomized one), as if drawn on an earlier visit."""
    survey, question = any_number_split
    key = f"deniable:v1:{survey.slug}:ballot:q{question.id}:d{survey.design_version}"
    page.add_init_script(f"localStorage.setItem('{key}', '0');" + THROW_ON_MATH_RANDOM)
    url = live_server.url + survey.get_absolute_url()
    sent, section = send_number(page, url, question, "9")
    assert sent["arm"] == 0 and sent["notice_before"] is False
    question.design.randomized_design.check_report(sent["value"])  # a report it can make
    assert stored_reports(survey) == [{question.id: sent["value"]}]
    assert "stays on this device" in section.locator("label[for]").first.inner_text()
    assert page.get_by_text(SENT_RANDOMIZED).is_visible()


def test_the_results_page_compares_a_numbers_ballots(
    live_server, scanned_page, number_split, screenshot
):
    """Seeded: asked directly, everyone says two drinks fewer (not below 0); the page
    gives both means and the difference in words, and passes the accessibility scan."""
    survey, question = number_split
    design = question.design
    rng = np.random.default_rng(6)
    stored = design.simulate(rng.integers(0, 21, 3000), rng)
    lowest = design.encode(1, 0)
    stored = np.where(stored >= lowest, np.maximum(stored - 2, lowest), stored)
    bulk_record(survey, [{question.id: int(r)} for r in stored], simulated=False)
    page = scanned_page
    log_in(page, live_server)
    page.goto(f"{live_server.url}/surveys/{survey.id}/results/")
    split = page.locator('.question-result[data-kind="number"] [data-kind="split"]')
    text = split.inner_text()
    assert "Randomized response found a mean" in text and "higher" in text
    assert f"asked directly: n = {int((stored >= lowest).sum())}" in text
    assert serious_violations(page) == []
    screenshot(page, "split-number-results")
