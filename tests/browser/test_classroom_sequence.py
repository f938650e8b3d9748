"""A lecture's sequence of questions in real browsers: one join code, a class of phones
following lock, unlock, reveal and "next question", and the projector following too."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from classroom.models import Session
from tests.browser.conftest import PHONE
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)

PROJECTOR = {"width": 1280, "height": 720}
STUDENTS = int(os.environ.get("CLASSROOM_STUDENTS", "8"))  # 30 for a full class
# Phones poll every 5 s and share a status rendered at most every 3 s; 30 phones on a
# loaded machine can take several rounds of that.
FOLLOW = 30_000
OPTIONS = "Options (multiple choice: one per line)"
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def shoot(screenshot):
    """Screenshots for the README under docs/ when DOCS_SCREENSHOTS is set."""

    def take(page, name: str) -> None:
        path = screenshot(page, name)
        if os.environ.get("DOCS_SCREENSHOTS"):
            shutil.copy(path, DOCS / f"{name}.png")

    return take


def press(controls, name: str) -> None:
    controls.get_by_role("button", name=name).click()
    controls.wait_for_load_state()


def every(phones, check) -> None:
    for phone in phones:
        check(phone)


def add_question(controls, text: str, kind: str, **fields) -> None:
    controls.get_by_text("Add a question").click()
    controls.get_by_label("Question", exact=True).fill(text)
    controls.get_by_label("Kind").select_option(kind)
    for label, value in fields.items():
        controls.get_by_label(label).fill(value)
    press(controls, "Add the question")


def test_a_lecture_of_three_questions_reaches_every_phone(live_server, browser, page, owner, shoot):
    errors = []
    session = Session.objects.create(owner=owner, title="Lecture")
    first, second, third = (
        session.add_question(text)
        for text in (
            "Have you ever cheated on an exam?",
            "Have you ever lied to a doctor?",
            "Have you ever dropped a course to protect your grades?",
        )
    )
    page.goto(f"{live_server.url}/classroom/{first.id}/join/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("[data-join-code]")).to_have_text(session.join_code)
    expect(page.locator("[data-promise]")).to_contain_text("ε = 1.10")

    projector = page
    projector.set_viewport_size(PROJECTOR)
    projector.get_by_role("link", name=re.compile("live results")).click()
    controls = page.context.new_page()
    controls.set_viewport_size(PHONE)
    controls.goto(f"{live_server.url}/classroom/{first.id}/controls/")

    phones = []
    for _ in range(STUDENTS):
        phone = browser.new_context(viewport=PHONE).new_page()
        phone.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        phone.goto(f"{live_server.url}/j/{session.join_code}")
        phones.append(phone)
    every(phones, lambda p: expect(p).to_have_url(re.compile(re.escape(first.slug))))

    def answer_all(offset: int) -> None:
        for i, phone in enumerate(phones):
            phone.locator("[data-question]").get_by_role(
                "button", name="Yes" if (i + offset) % 3 == 0 else "No", exact=True
            ).click()
            phone.get_by_role("button", name=re.compile("^Flip")).click()
        every(phones, lambda p: expect(p.locator("[data-received]")).to_be_visible(timeout=FOLLOW))

    # Lock: every phone says so; unlock: every phone answers question 1.
    press(controls, "Lock answering")
    every(phones, lambda p: expect(p.locator("[data-session-state]")).to_be_visible(timeout=FOLLOW))
    press(controls, "Unlock answering")
    every(
        phones, lambda p: expect(p.locator("[data-session-state]")).to_have_count(0, timeout=FOLLOW)
    )
    answer_all(0)
    expect(projector.locator("[data-count]")).to_have_text(str(STUDENTS), timeout=FOLLOW)
    press(controls, "Reveal results")
    expect(projector.locator("[data-estimate]")).to_be_visible(timeout=FOLLOW)
    every(phones, lambda p: expect(p.locator("[data-class-result]")).to_be_visible(timeout=FOLLOW))

    # Next question: the projector and every phone move on; question 2 starts unanswered.
    press(controls, "Next question →")
    expect(controls.locator(".lesson-kind")).to_contain_text("question 2 of 3")
    expect(projector).to_have_url(re.compile(f"/classroom/{second.id}/"), timeout=FOLLOW)
    every(
        phones, lambda p: expect(p).to_have_url(re.compile(re.escape(second.slug)), timeout=FOLLOW)
    )
    every(phones, lambda p: expect(p.locator("[data-received]")).to_be_hidden())
    answer_all(1)
    press(controls, "Reveal results")
    expect(phones[0].locator("[data-class-result]")).to_be_visible(timeout=FOLLOW)
    shoot(phones[0], "classroom-sequence-phone")

    press(controls, "Next question →")
    every(
        phones, lambda p: expect(p).to_have_url(re.compile(re.escape(third.slug)), timeout=FOLLOW)
    )
    # Back to question 1: every phone that answered it sees it answered.
    press(controls, "← Previous question")
    press(controls, "← Previous question")
    every(
        phones, lambda p: expect(p).to_have_url(re.compile(re.escape(first.slug)), timeout=FOLLOW)
    )
    every(phones, lambda p: expect(p.locator("[data-received]")).to_be_visible(timeout=FOLLOW))
    expect(projector).to_have_url(re.compile(f"/classroom/{first.id}/"), timeout=FOLLOW)
    expect(projector.locator("[data-count]")).to_have_text(str(STUDENTS))
    for survey in (first, second):
        assert stored_count(survey, simulated=False) == STUDENTS
    assert errors == []
    for phone in phones:
        phone.context.close()

    # The instructor adds a multiple-choice and a number question and simulates a class.
    add_question(
        controls,
        "Which of these have you done?",
        "choice",
        **{OPTIONS: "Copied homework\nUsed a phone in an exam\nNone of these"},
    )
    add_question(
        controls, "How many hours did you sleep last night?", "number", **{"Highest number": "12"}
    )
    expect(controls.locator(".session-list li")).to_have_count(5)
    for _ in range(3):
        press(controls, "Next question →")
    expect(controls.locator(".lesson-kind")).to_contain_text("question 4 of 5")
    controls.get_by_label("Simulate").fill("500")
    controls.get_by_label("True distribution (%)").fill("20/30/50")
    press(controls, "Simulate")
    expect(projector.locator("[data-hidden-note]")).to_be_visible(timeout=FOLLOW)
    press(controls, "Reveal results")
    expect(projector.locator("[data-choice-bars]")).to_be_visible(timeout=FOLLOW)
    expect(projector.locator("[data-choice-table] tbody tr")).to_have_count(3)
    shoot(projector, "classroom-choice-presenter")

    press(controls, "Next question →")
    controls.get_by_label("Simulate").fill("2000")
    controls.get_by_label("True mean").fill("7")
    controls.get_by_label("True standard deviation").fill("1.5")
    press(controls, "Simulate")
    press(controls, "Reveal results")
    expect(projector.locator("[data-noise]")).to_be_visible(timeout=FOLLOW)
    expect(projector.locator("[data-mean]")).to_be_visible()
    shoot(projector, "classroom-number-presenter")
