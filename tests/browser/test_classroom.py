from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from survey.models import Survey
from tests.browser.conftest import PHONE
from tests.storage import nothing_stored, stored_count

pytestmark = pytest.mark.django_db(transaction=True)

PROJECTOR = {"width": 1280, "height": 720}
FULL_HD = {"width": 1920, "height": 1080}
STUDENTS = 30
BATCH = 10


def start_demo_logged_out(page, live_server) -> Survey:
    """Home → "Start a classroom demo" → log in → back → one click → projector join screen."""
    page.goto(live_server.url + "/")
    page.get_by_role("link", name="Start a classroom demo").click()
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("button", name="Start a classroom demo").click()
    expect(page.locator("[data-join-code]")).to_be_visible()
    return Survey.objects.get()


def open_student(browser, live_server, code: str):
    context = browser.new_context(viewport=PHONE)
    student = context.new_page()
    student.goto(f"{live_server.url}/j/{code}")
    return student


def answer(student, truth: bool) -> None:
    question = student.locator("[data-question]")
    question.get_by_role("button", name="Yes" if truth else "No", exact=True).click()
    student.get_by_role("button", name=re.compile("^Flip")).click()


def test_thirty_students_answer_live_and_results_stay_hidden_until_reveal(
    live_server, browser, page, screenshot, owner
):
    page.set_viewport_size(PROJECTOR)
    console_errors = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    survey = start_demo_logged_out(page, live_server)
    code = page.locator("[data-join-code]").inner_text()
    assert code == survey.join_code
    assert page.locator(".qr-large svg").is_visible()
    screenshot(page, "classroom-join-screen")

    page.get_by_role("link", name=re.compile("live results")).click()
    expect(page.locator("[data-count]")).to_have_text("0")

    kept = None
    for start in range(0, STUDENTS, BATCH):
        students = [open_student(browser, live_server, code) for _ in range(BATCH)]
        for i, student in enumerate(students):
            answer(student, truth=(start + i) % 3 == 0)
        for student in students:
            expect(student.locator("[data-received]")).to_be_visible(timeout=15_000)
        if kept is None:
            kept = students.pop(0)
            kept.on(
                "console", lambda m: console_errors.append(m.text) if m.type == "error" else None
            )
        for student in students:
            student.context.close()
        # The projector counts up by polling, without a reload.
        expect(page.locator("[data-count]")).to_have_text(str(start + BATCH), timeout=10_000)

    assert stored_count(simulated=False) == STUDENTS
    assert page.locator("[data-estimate]").count() == 0
    expect(page.locator("[data-hidden-note]")).to_be_visible()
    assert kept.locator("[data-class-result]").count() == 0
    screenshot(page, "classroom-presenter-before-reveal")

    assert page.get_by_role("button").count() == 0  # the projector shows no controls
    controls = page.context.new_page()  # the instructor's controls (on a laptop or phone)
    controls.goto(f"{live_server.url}/classroom/{survey.id}/controls/")
    controls.get_by_role("button", name="Reveal results").click()
    expect(page.locator("[data-estimate]")).to_be_visible()
    expect(page.locator("[data-ci-bar]")).to_be_visible()
    screenshot(page, "classroom-presenter-after-reveal")
    page.set_viewport_size(FULL_HD)
    page.locator("summary", has_text="Explain").click()
    screenshot(page, "classroom-presenter-1080p-explain")

    expect(kept.locator("[data-class-result]")).to_be_visible(timeout=10_000)
    expect(kept.locator("[data-received]")).to_be_visible()
    screenshot(kept, "classroom-student-phone")

    controls.get_by_role("button", name="Lock answering").click()
    expect(page.locator("[data-state]")).to_have_text("Answering locked")
    expect(kept.locator("[data-session-state]")).to_be_visible(timeout=10_000)

    late = open_student(browser, live_server, code)
    expect(late.get_by_text("not accepting answers right now")).to_be_visible()
    late.context.close()
    kept.context.close()
    assert stored_count() == STUDENTS
    assert console_errors == []  # among others: no Content-Security-Policy violation


def test_flip_and_send_while_locked_is_refused_before_any_flip_and_works_after_unlock(
    live_server, browser, make_survey
):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    student = open_student(browser, live_server, survey.join_code)
    survey.lock()  # after the page loaded: whether or not its poll has seen it yet
    student.locator("[data-question]").get_by_role("button", name="Yes", exact=True).click()
    # A real tap reaches a button marked aria-disabled; Playwright needs force for that.
    student.get_by_role("button", name=re.compile("^Flip")).click(force=True)
    expect(student.locator("[data-refused]")).to_be_visible(timeout=10_000)
    expect(student.locator("[data-received]")).to_be_hidden()
    # The top of the page and the greyed button say so, not only the status at the bottom.
    top, beside = student.locator("[data-locked-note]").all()
    expect(top).to_have_text("Answering is locked by your instructor: wait for it to open again.")
    assert top.bounding_box()["y"] < student.locator("[data-question]").bounding_box()["y"]
    assert beside.evaluate("(note) => note.nextElementSibling.matches('[data-flip]')")
    expect(beside).to_be_visible()
    assert student.locator("[data-result]:visible").count() == 0  # no "Sent: …" shown
    assert nothing_stored()
    survey.lock(False)
    expect(student.locator("[data-refused]")).to_be_hidden(timeout=10_000)
    expect(top).to_be_hidden()
    expect(beside).to_be_hidden()
    student.get_by_role("button", name=re.compile("^Flip")).click()
    expect(student.locator("[data-received]")).to_be_visible(timeout=10_000)
    assert stored_count() == 1
    student.context.close()


def test_a_page_opened_while_locked_shows_the_question_once_answering_opens(
    live_server, browser, make_survey
):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    survey.lock()
    student = open_student(browser, live_server, survey.join_code)
    expect(student.get_by_text("not accepting answers right now")).to_be_visible()
    survey.lock(False)
    expect(student.locator("[data-question]")).to_be_visible(timeout=10_000)
    student.context.close()


def test_lock_unlock_and_reveal_reach_several_phones(live_server, browser, make_survey):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    phones = [open_student(browser, live_server, survey.join_code) for _ in range(4)]
    survey.lock()
    for phone in phones:
        expect(phone.locator("[data-session-state]")).to_contain_text("locked", timeout=10_000)
    survey.lock(False)
    survey.reveal()
    for phone in phones:
        expect(phone.locator("[data-session-state]")).to_have_count(0, timeout=10_000)
        expect(phone.locator("[data-class-result]")).to_be_visible(timeout=10_000)
    for phone in phones:
        phone.context.close()


def test_on_a_phone_the_question_shows_once_with_its_buttons_above_the_fold(
    live_server, browser, make_survey
):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    survey.questions.update(text=survey.title)  # a classroom session is titled by its question
    student = open_student(browser, live_server, survey.join_code)
    expect(student.get_by_text(survey.title, exact=True).locator("visible=true")).to_have_count(1)
    for name in ("Yes", "No"):
        box = student.get_by_role("button", name=name, exact=True).bounding_box()
        assert box["y"] + box["height"] <= PHONE["height"]
    student.context.close()


def test_the_posterior_calculator_follows_the_prior_slider(live_server, page, make_survey):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/classroom/explain/?s={survey.slug}")
    calculator = page.locator("[data-posterior]")
    expect(calculator.locator('[data-out="yes"]')).to_have_text("75 %")
    calculator.locator("input[type=range]").fill("20")
    # 0.2·¾ / (0.2·¾ + 0.8·¼) = 3/7
    expect(calculator.locator('[data-out="yes"]')).to_have_text("43 %")
    expect(calculator.locator('[data-out="no"]')).to_have_text("8 %")
