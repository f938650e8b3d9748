"""A researcher builds, opens and distributes a survey, watches answers arrive on the
dashboard without reloading, and downloads the responses and codebook — in Chromium."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from responses.sealing import seal
from survey.models import Survey
from tests.storage import simulated_hours, stored_count

pytestmark = pytest.mark.django_db(transaction=True)

SENT = "left this device"


def log_in(page, live_server) -> None:
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="My surveys").wait_for()


def choose(page, label: str, value: str) -> None:
    """Pick an option that redraws the new question's form, then wait until htmx has
    swapped the new form in and wired it up."""
    card = page.locator(".question-card.new")
    old = card.locator(".design").element_handle()
    # htmx wires the form up once the page has loaded; a change before then goes unheard.
    page.wait_for_function('el => el["htmx-internal-data"] !== undefined', arg=old)
    card.get_by_label(label, exact=True).select_option(value)
    page.wait_for_function(
        """old => {
            const now = document.querySelector(".question-card.new .design");
            return now !== null && now !== old && now["htmx-internal-data"] !== undefined
                && document.querySelector(".htmx-request") === null;
        }""",
        arg=old,
    )


def add_question(page, text: str, preset: str, **params: str) -> None:
    card = page.locator(".question-card.new")
    card.get_by_label("Question").fill(text)
    choose(page, "Preset", preset)
    if preset == "custom":
        choose(page, "Design", params.pop("design"))
        for label, value in params.items():
            card.get_by_label(label).fill(value)
    card.get_by_role("button", name="Add question").click()


def respond(browser, live_server, survey: Survey, truths: list[int]) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + survey.get_absolute_url())
    for section, truth in zip(page.locator("[data-question]").all(), truths, strict=True):
        section.get_by_role("button", name="Yes" if truth else "No").click()
    page.get_by_role("button", name="Flip and send").click()
    page.get_by_text(SENT).wait_for()
    context.close()


def download(page, link_name: str) -> str:
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name).click()
    return Path(info.value.path()).read_text(encoding="utf-8")


def test_build_open_answer_watch_and_export(live_server, browser, page, owner, screenshot):
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, live_server)
    page.get_by_label("New survey").fill("Student life 2026")
    page.get_by_role("button", name="Create and add questions").click()
    survey = Survey.objects.get()

    add_question(page, "Have you ever cheated on an exam?", "classic")
    page.locator(".question-list > li.question-card").nth(0).wait_for()
    add_question(page, "Have you used a recreational drug this year?", "stronger")
    page.locator(".question-list > li.question-card").nth(1).wait_for()
    card = page.locator(".question-card.new")
    card.get_by_label("Question").fill("Have you driven after drinking too much?")
    choose(page, "Preset", "custom")
    choose(page, "Design", "mirrored")  # offered once the form is redrawn for custom
    card.get_by_label("P(answer as asked)").fill("1")  # redrawn for the mirrored design
    card.locator(".preview").get_by_text("ε = ∞ — no privacy").wait_for()  # the live preview
    card.get_by_label("P(answer as asked)").fill("0.8")
    card.locator(".preview .preview-epsilon").get_by_text(f"ε = {math.log(4):.2f}").wait_for()
    card.get_by_role("button", name="Add question").click()
    page.locator(".question-list > li.question-card").nth(2).wait_for()
    assert survey.questions.count() == 3
    total = math.log(3) + math.log(5 / 3) + math.log(4)
    page.locator("#summary").get_by_text(f"ε = {total:.2f}").wait_for()
    screenshot(page, "workspace-builder")

    page.get_by_role("button", name="Open survey").click()
    page.get_by_role("link", name="Distribute").click()
    survey.refresh_from_db()
    assert survey.status == "open"
    assert page.locator(".qr svg").is_visible()
    assert page.get_by_text(survey.join_code, exact=True).is_visible()
    screenshot(page, "workspace-distribute")

    page.get_by_role("link", name="Results").click()
    page.locator("[data-n-responses]").get_by_text("0").wait_for()
    respond(browser, live_server, survey, [1, 0, 1])
    respond(browser, live_server, survey, [0, 0, 1])
    page.locator("[data-n-responses]").get_by_text("2").wait_for(timeout=15_000)
    assert page.locator("#forest-title").count() == 1
    screenshot(page, "workspace-dashboard")

    rows = list(csv.reader(io.StringIO(download(page, "Responses (CSV)"))))
    assert rows[0] == ["round", "q1", "q2", "q3"]
    assert len(rows) == 3
    assert all(value in ("0", "1") for row in rows[1:] for value in row[1:])
    book = json.loads(download(page, "Codebook (JSON)"))
    assert [q["column"] for q in book["questions"]] == ["q1", "q2", "q3"]
    assert book["questions"][1]["design"] == {
        "name": "forced_response",
        "p_truth": 0.25,
        "p_yes": 0.5,
    }
    assert book["questions"][2]["design"] == {"name": "mirrored", "p": 0.8}
    assert book["epsilon_total"] == pytest.approx(total)
    assert errors == []


def test_the_dashboard_draws_a_day_of_answers(live_server, page, make_survey, screenshot):
    """Tallies spread over 24 hours: the band narrows as n grows (and looks right)."""

    survey = make_survey(n_questions=3)
    Survey.objects.filter(pk=survey.pk).update(title="Student life 2026")
    for i, question in enumerate(survey.questions.all()):
        question.text = ("Cheated on an exam?", "Used a drug this year?", "Drove drunk?")[i]
        question.save()
    simulated_hours(survey, 24, 40, (0.1, 0.3, 0.05))
    seal(everything=True)  # most of a day is sealed, as the hourly job leaves it
    log_in(page, live_server)
    page.goto(f"{live_server.url}/surveys/{survey.id}/results/?question={question.id}")
    assert page.locator("[data-n-responses]").inner_text() == "960"
    assert page.locator("polygon.svg-ci-band:visible").count() == 1
    assert page.locator(f"#time-{question.id}-desc").text_content().count("n = ") == 24
    screenshot(page, "workspace-dashboard-day")


def test_build_choice_and_number_questions_with_live_preview_and_inline_errors(
    live_server, browser, page, owner, settings, screenshot
):
    """Under DEBUG too: a validation error stays beside its field, the page stays."""
    settings.DEBUG = True
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => console.error("
        "'CSP', e.violatedDirective, e.sourceFile, e.lineNumber, e.columnNumber))"
    )
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, live_server)
    page.get_by_label("New survey").fill("Student life 2026")
    page.get_by_role("button", name="Create and add questions").click()
    survey = Survey.objects.get()

    card = page.locator(".question-card.new")
    card.get_by_label("Question").fill("How often have you copied homework?")
    choose(page, "Kind of answer", "choice")
    card.get_by_label("Options", exact=True).wait_for()  # the form redrawn for multiple choice
    assert card.get_by_label("Preset").input_value() == "choice_ln3"
    card.get_by_label("Options", exact=True).fill("never\nonce\nnever")
    card.get_by_role("button", name="Add question").click()
    error = page.locator(".question-card.new .field-options .error")
    error.get_by_text("“never” appears twice").wait_for()
    assert page.locator("h1").get_by_text("Student life 2026").is_visible()  # page intact
    assert survey.questions.count() == 0
    screenshot(page, "workspace-builder-error")
    card.get_by_label("Options", exact=True).fill("never\nonce\nmore than once")
    card.locator(".preview .preview-epsilon").get_by_text(f"ε = {math.log(3):.2f}").wait_for()
    card.get_by_role("button", name="Add question").click()
    page.locator(".question-list > li.question-card").nth(0).wait_for()

    card = page.locator(".question-card.new")
    card.get_by_label("Question").fill("How many drinks did you have last week?")
    choose(page, "Kind of answer", "number")
    card.get_by_label("Highest value").wait_for()
    card.get_by_label("Highest value").fill("30")
    card.locator(".preview").get_by_text("typical noise added to each answer").wait_for()
    card.locator(".preview").get_by_text("one-bit mechanism").wait_for()
    card.get_by_role("button", name="Add question").click()
    page.locator(".question-list > li.question-card").nth(1).wait_for()
    kinds = list(survey.questions.values_list("kind", "design_name", "design_params"))
    assert kinds[0][:2] == ("choice", "k_rr")
    assert kinds[1] == ("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 30})
    page.locator("#summary").get_by_text(f"ε = {math.log(3) + 1:.2f}").wait_for()
    screenshot(page, "workspace-builder-kinds")
    page.set_viewport_size({"width": 360, "height": 740})
    scroll = page.evaluate("document.documentElement.scrollWidth")
    screenshot(page, "workspace-builder-phone")
    page.locator(".question-list > li.question-card").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=screenshot(page, "workspace-builder-phone").with_name("phone-card.png"))
    assert scroll <= 360
    page.get_by_role("link", name="Preview as a respondent").click()
    page.get_by_text("nothing here can be sent or stored").wait_for()
    assert page.get_by_role("radio").count() == 3
    assert all(radio.is_disabled() for radio in page.get_by_role("radio").all())
    screenshot(page, "workspace-builder-respondent-preview")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert stored_count(survey) == 0
    # The refused form's 400 is expected; nothing else (no CSP violation, no script error).
    assert [e for e in errors if "status of 400" not in str(e)] == []
