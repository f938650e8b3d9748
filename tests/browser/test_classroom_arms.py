"""A lie-detector demo in real Chromium: two phones answer (each request carries the arm
its phone drew), the instructor simulates a class from the controls, and the reveal puts
π and the carriers' honesty t, each with its interval, on the projector."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from survey.models import Survey
from tests.browser.conftest import PHONE
from tests.browser.test_respondent_kinds import THROW_ON_MATH_RANDOM
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)

PROJECTOR = {"width": 1280, "height": 720}
SLD = {"p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]}


def lie_detector_demo(owner) -> Survey:
    survey = Survey.objects.create(
        owner=owner, title="Shoplifting", mode=Survey.Mode.CLASSROOM, status=Survey.Status.OPEN
    )
    survey.questions.create(
        position=0,
        text="Have you ever shoplifted?",
        kind="binary",
        design_name="stochastic_lie_detector",
        design_params=SLD,
    )
    return survey


def phone_answers(browser, live_server, code: str, truth: str) -> dict:
    """One phone joins by code and answers; what its request sent."""
    context = browser.new_context(viewport=PHONE)
    context.add_init_script(THROW_ON_MATH_RANDOM)
    phone = context.new_page()
    posts = []
    phone.on("request", lambda r: posts.append(r) if r.method == "POST" else None)
    phone.goto(f"{live_server.url}/j/{code}")
    phone.locator("[data-question]").get_by_role("button", name=truth, exact=True).click()
    phone.get_by_role("button", name=re.compile("^Flip")).click()
    expect(phone.locator("[data-received]")).to_be_visible(timeout=10_000)
    context.close()
    [sent] = json.loads(posts[0].post_data)["answers"]
    return sent


def test_two_phones_answer_a_lie_detector_demo_and_the_reveal_shows_pi_and_t(
    live_server, browser, page, screenshot, owner
):
    survey = lie_detector_demo(owner)
    page.set_viewport_size(PROJECTOR)
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/classroom/{survey.id}/join/")
    expect(page.locator("[data-promise]")).to_contain_text("No privacy for a “no”")
    page.get_by_role("link", name=re.compile("live results")).click()

    sent = [phone_answers(browser, live_server, survey.join_code, t) for t in ("Yes", "No")]
    assert all(set(s) == {"question", "value", "arm"} and s["arm"] in (0, 1) for s in sent)
    expect(page.locator("[data-count]")).to_have_text("2", timeout=10_000)
    assert page.locator("[data-arms]").count() == 0  # hidden until the reveal

    controls = page.context.new_page()
    controls.goto(f"{live_server.url}/classroom/{survey.id}/controls/")
    controls.get_by_label("Simulate").fill("300")
    controls.get_by_label(re.compile("true rate")).fill("30")
    controls.get_by_role("button", name="Simulate", exact=True).click()
    controls.get_by_role("button", name="Reveal results").click()
    assert stored_count(simulated=True) == 300 and stored_count(simulated=False) == 2

    expect(page.locator("[data-count]")).to_have_text("302", timeout=10_000)
    expect(page.locator("[data-estimate]")).to_have_text(re.compile(r"^\d+ %$"))
    expect(page.locator("[data-ci]")).to_have_text(re.compile(r"^\d+ %–\d+ %$"))
    honesty = page.locator("[data-arms] .stat", has_text="Carriers' honesty t")
    expect(honesty.locator('[data-quantity="honesty"]')).to_have_text(re.compile(r"^\d+ %$"))
    expect(honesty).to_contain_text(re.compile(r"95 % interval \d+ %–\d+ %"))
    expect(page.locator("[data-privacy]")).to_contain_text("No privacy for a “no”")
    screenshot(page, "classroom-lie-detector-revealed")
