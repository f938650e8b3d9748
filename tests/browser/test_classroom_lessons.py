"""A lecture's lessons in real browsers: the instructor's remote, the projector and
several student phones, with lock, unlock, reveal and next step reaching every phone."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from classroom import lesson_views
from classroom.models import Action, Lesson
from estimator import lessons as maths
from tests.browser.conftest import PHONE
from tests.browser.test_respondent_accessibility import AXE, serious_violations

pytestmark = pytest.mark.django_db(transaction=True)

PROJECTOR = {"width": 1280, "height": 720}
STUDENTS = 4
FOLLOW = 8_000  # ms: a few poll intervals (phones poll every 3 s, the projector every 2 s)
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(autouse=True)
def quick_phones(monkeypatch):
    """Phones poll every second here (every 3 s in class): the same steps, sooner."""
    monkeypatch.setattr(lesson_views, "STUDENT_POLL_SECONDS", 1)


@pytest.fixture
def shoot(screenshot):
    """Screenshots for the README under docs/ when DOCS_SCREENSHOTS is set."""

    def take(page, name: str) -> None:
        path = screenshot(page, name)
        if os.environ.get("DOCS_SCREENSHOTS"):
            shutil.copy(path, DOCS / f"{name}.png")

    return take


def start_lesson(page, live_server, label: str) -> tuple[Lesson, str]:
    """Log in, start the lesson from the classroom page; returns it and its remote URL."""
    page.goto(live_server.url + "/classroom/new/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("button", name=f"Start: {label}").click()
    expect(page.get_by_role("link", name="Open the projector view")).to_be_visible()
    # The slider's script runs once the page has loaded; a change before then goes unheard
    # (and "Set ε" is there for that).
    page.wait_for_load_state("load")
    return Lesson.objects.get(), page.url


def open_projector(context, live_server, lesson):
    projector = context.new_page()
    projector.set_viewport_size(PROJECTOR)
    projector.goto(f"{live_server.url}/classroom/lessons/{lesson.id}/")
    return projector


def open_phones(browser, live_server, lesson, n=STUDENTS):
    phones = []
    for _ in range(n):
        phone = browser.new_context(viewport=PHONE).new_page()
        phone.goto(f"{live_server.url}/j/{lesson.join_code}")
        phones.append(phone)
    return phones


def close(phones):
    for phone in phones:
        phone.context.close()


def press(remote, name: str) -> None:
    remote.get_by_role("button", name=name).click()
    remote.wait_for_load_state()


def open_phones_for_axe(browser, live_server, lesson, n=3):
    """Phones on which axe-core may be injected despite the strict CSP."""
    phones = [browser.new_context(viewport=PHONE, bypass_csp=True).new_page() for _ in range(n)]
    for phone in phones:
        phone.goto(f"{live_server.url}/j/{lesson.join_code}")
    return phones


def locked_out_then_answer(remote, phones, button: str, answered: str) -> None:
    """The remote locks: the other phones' button is disabled within a poll; it unlocks:
    each of them presses it and sees what it sent (``answered``)."""
    press(remote, "Lock answering")
    for phone in phones:
        expect(phone.get_by_role("button", name=button)).to_be_disabled(timeout=FOLLOW)
    press(remote, "Unlock answering")
    for phone in phones:
        expect(phone.get_by_role("button", name=button)).to_be_enabled(timeout=FOLLOW)
        phone.get_by_role("button", name=button).click()
        expect(phone.locator(answered)).to_be_visible()


def test_differencing_lock_unlock_reveal_and_next_reach_every_phone(
    live_server, browser, page, owner, shoot
):
    errors = []
    lesson, _ = start_lesson(page, live_server, "Differencing attack")
    projector = open_projector(page.context, live_server, lesson)
    phones = open_phones(browser, live_server, lesson)
    for phone in phones:
        phone.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    attack = maths.hospital(lesson.seed)
    expect(projector.locator("[data-answer-total]")).to_have_text(str(attack.total))
    # No visible controls on the projector: only the keys' hidden forms, listed as keys.
    assert projector.locator("button, form:not([hidden])").count() == 0
    expect(projector.locator("[data-shortcuts]")).to_contain_text("R reveal/hide")
    expect(projector.locator("[data-epsilon-pill]")).to_have_count(0)  # exact counts: no ε

    # The first phone answers; the others are locked out, then follow the unlock.
    phones[0].get_by_role("button", name="Has the condition").click()
    expect(phones[0].locator("[data-sent]")).to_be_visible()
    press(page, "Lock answering")
    for phone in phones[1:]:
        expect(phone.locator("[data-locked]")).to_be_visible(timeout=FOLLOW)
        expect(phone.get_by_role("button", name="Does not")).to_be_disabled()
    press(page, "Unlock answering")
    for phone in phones[1:]:
        expect(phone.get_by_role("button", name="Does not")).to_be_enabled(timeout=FOLLOW)
        phone.get_by_role("button", name="Does not").click()
        expect(phone.locator("[data-sent]")).to_be_visible()
    expect(projector.locator("[data-answers-count]")).to_contain_text(str(STUDENTS), timeout=FOLLOW)
    # The remote follows the answers by itself, without a reload.
    expect(page.locator("[data-sent-count]")).to_have_text(str(STUDENTS), timeout=FOLLOW)
    shoot(phones[1], "lesson-differencing-phone")

    # The projector's key R reveals (the remote shows it too, live).
    projector.locator("body").press("r")
    expect(projector.locator("[data-reveal]")).to_contain_text(
        f"{attack.total} − {attack.younger} = {attack.recovered}", timeout=FOLLOW
    )
    expect(projector.locator("[data-tally]")).to_be_visible()
    for phone in phones:
        expect(phone.locator("[data-revealed]")).to_be_visible(timeout=FOLLOW)
    shoot(projector, "lesson-differencing-projector")

    expect(page.locator("[data-remote-status]")).to_contain_text("Revealed", timeout=FOLLOW)
    press(page, "Next step →")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text(
            "The same counts with Laplace noise", timeout=FOLLOW
        )
        # Step 1's "Sent" does not carry over to step 2.
        expect(phone.locator("[data-sent]")).to_have_count(0)
    expect(projector.locator("[data-epsilon-pill]")).to_have_text("ε = 1", timeout=FOLLOW)
    press(page, "Reveal")
    expect(projector.locator("[data-posterior]")).to_be_visible(timeout=FOLLOW)
    shoot(projector, "lesson-differencing-noisy-projector")
    assert Action.objects.filter(step=0).count() == STUDENTS
    assert errors == []
    close(phones)


def test_a_phone_that_sends_while_locked_is_told_and_nothing_is_stored(live_server, browser, owner):
    lesson = Lesson.objects.create(owner=owner, kind=Lesson.Kind.EXPONENTIAL)
    (phone,) = open_phones(browser, live_server, lesson, 1)
    # The phone's polls are held back, so that it still shows the open step when the
    # lesson is locked (on a slow machine a poll could otherwise come first).
    polls = re.compile(r"/l/[^/]+/live/")
    phone.route(polls, lambda route: route.abort())
    lesson.go(is_locked=True)  # locked after the page loaded, before its next poll
    phone.get_by_role("button", name="Cryptography").click()
    expect(phone.locator("[data-error]")).to_have_text(re.compile("locked.*nothing was sent"))
    expect(phone.locator("[data-sent]")).to_have_count(0)
    assert not Action.objects.exists()
    phone.unroute(polls)
    lesson.go(is_locked=False)
    expect(phone.get_by_role("button", name="Cryptography")).to_be_enabled(timeout=FOLLOW)
    phone.get_by_role("button", name="Cryptography").click()
    expect(phone.locator("[data-sent]")).to_be_visible()
    assert Action.objects.count() == 1
    close([phone])


def test_laplace_answers_scatter_and_drain_the_budget(live_server, browser, page, owner, shoot):
    lesson, _ = start_lesson(page, live_server, "The Laplace mechanism")
    for notch, epsilon in (("3", "0.5"), ("4", "1")):
        page.get_by_label(re.compile("^Privacy parameter ε")).fill(notch)
        expect(page.locator("[data-epsilon]")).to_have_text(epsilon)  # set on release
        page.wait_for_load_state("load")  # the reloaded remote's slider is listening again
    projector = open_projector(page.context, live_server, lesson)
    phones = open_phones(browser, live_server, lesson)
    for phone in phones:
        phone.get_by_role("button", name="Ask the database").click()
        expect(phone.locator("[data-my-answer]")).to_contain_text("The database answered")
    shoot(phones[0], "lesson-laplace-phone")
    expect(projector.locator("[data-answer-dot]")).to_have_count(STUDENTS, timeout=FOLLOW)
    expect(projector.locator("[data-budget]")).to_contain_text(f"Spent ε = {STUDENTS}.00")
    # The budget (ε = 5) allows one more answer at ε = 1, then the database refuses.
    phones[0].get_by_role("button", name="Ask the database").click()
    phones[1].get_by_role("button", name="Ask the database").click()
    expect(phones[1].locator("[data-error]")).to_contain_text("spent its budget")
    press(page, "Reveal")
    press(page, "Next step →")
    press(page, "Next step →")
    expect(projector.get_by_text("Post-processing is free")).to_be_visible(timeout=FOLLOW)
    expect(projector.locator("[data-true-count]")).to_have_count(0)  # a new step starts hidden
    press(page, "Reveal")
    expect(projector.locator("[data-true-count]")).to_have_text(
        str(maths.hospital(lesson.seed).total), timeout=FOLLOW
    )
    shoot(projector, "lesson-laplace-projector")
    close(phones)


def test_linkage_generalize_until_k_anonymous_then_triangulate(
    live_server, browser, page, owner, shoot
):
    lesson, _ = start_lesson(page, live_server, "k-anonymity and linkage")
    projector = open_projector(page.context, live_server, lesson)
    data = maths.clinic(lesson.seed)
    phones = open_phones(browser, live_server, lesson, 2)
    expect(projector.locator("[data-k]")).to_have_text("k = 1")
    phones[0].get_by_role("button", name=data.target.diagnosis).click()
    shoot(phones[1], "lesson-linkage-phone")
    press(page, "Next step →")
    page.get_by_label("Postcode digits kept").fill("2")
    page.get_by_label("Birth year").select_option("10")
    page.get_by_label("Keep sex").uncheck()
    page.get_by_label("Suppress groups smaller than").fill("2")
    page.get_by_role("button", name=re.compile("^Apply")).click()
    lesson.refresh_from_db()
    k = maths.k_anonymity([key for key, _ in lesson.generalization.release(data.people)])
    assert k >= 2
    expect(projector.locator("[data-k]")).to_have_text(f"k = {k}", timeout=FOLLOW)
    press(page, "Next step →")
    press(page, "Reveal")
    expect(projector.locator("[data-found]")).to_have_text(data.target.diagnosis, timeout=FOLLOW)
    expect(projector.locator("[data-release]")).to_have_count(2)
    shoot(projector, "lesson-linkage-projector")
    close(phones)


def test_exponential_vote_then_pick_privately_and_rerun(live_server, browser, page, owner, shoot):
    lesson, remote_url = start_lesson(page, live_server, "The exponential mechanism")
    projector = open_projector(page.context, live_server, lesson)
    phones = open_phones(browser, live_server, lesson)
    # The instructor's phone, not logged in, steers the lesson by the remote's private link.
    remote = browser.new_context(viewport=PHONE).new_page()
    remote.goto(remote_url)
    for phone, choice in zip(phones, ["Cryptography"] * 3 + ["Synthetic data"], strict=True):
        phone.get_by_role("button", name=choice).click()
        expect(phone.locator("[data-sent]")).to_be_visible()
    shoot(phones[0], "lesson-exponential-phone")
    expect(projector.locator("[data-votes]")).to_have_text(str(STUDENTS), timeout=FOLLOW)
    press(remote, "Next step →")
    for _ in range(3):
        remote.get_by_role("button", name=re.compile("^Pick privately")).click()
    press(remote, "Reveal")
    shoot(remote, "lesson-remote-phone")
    expect(projector.locator("[data-probability]").first).to_have_text(
        f"{round(maths.exponential_probabilities([3, 0, 0, 1], 1.0)[0] * 100)} %", timeout=FOLLOW
    )
    assert Action.objects.filter(kind="pick").count() == 3
    lesson.refresh_from_db()
    expect(projector.locator("[data-last-pick]")).to_have_text(lesson.last_pick)
    for phone in phones:
        expect(phone.locator("[data-last-pick]")).to_have_text(lesson.last_pick, timeout=FOLLOW)
    shoot(projector, "lesson-exponential-projector")
    close([*phones, remote])


def test_local_noise_on_every_phone_against_one_curator(live_server, browser, page, owner, shoot):
    lesson, _ = start_lesson(page, live_server, "Local vs central noise")
    projector = open_projector(page.context, live_server, lesson)
    assert AXE.exists(), "axe-core is missing: run `npm ci`"
    phones = open_phones_for_axe(browser, live_server, lesson)
    phones[0].get_by_role("button", name="Send my noisy secret").click()
    expect(phones[0].locator("[data-my-report]")).to_contain_text("your phone sent")
    shoot(phones[0], "lesson-local-phone")
    assert serious_violations(phones[0]) == []
    expect(projector.locator("[data-reports]")).to_have_text("1", timeout=FOLLOW)
    locked_out_then_answer(page, phones[1:], "Send my noisy secret", "[data-my-report]")
    press(page, "Add 20 simulated phones")
    expect(page.locator("[data-remote-detail]")).to_contain_text("23 reports")
    expect(projector.locator("[data-reports]")).to_have_text("23", timeout=FOLLOW)
    expect(projector.locator("[data-ratio]")).to_have_text("4.8×")  # √23
    press(page, "Reveal")
    secrets = maths.classmates(lesson.seed).secrets[:23]
    expect(projector.locator("[data-true-count]")).to_have_text(str(sum(secrets)), timeout=FOLLOW)
    shoot(projector, "lesson-local-curator-projector")
    press(page, "Next step →")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text(
            "Error against class size", timeout=FOLLOW
        )
        expect(phone.locator("[data-my-report]")).to_have_count(0)
    needed = maths.respondents_needed(1.0, 0.05, "local")
    expect(projector.locator("[data-needed]")).to_contain_text(str(needed), timeout=FOLLOW)
    shoot(projector, "lesson-local-projector")
    press(page, "New round")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text("Noise on every phone", timeout=FOLLOW)
    expect(projector.locator("[data-reports]")).to_have_text("0", timeout=FOLLOW)
    close(phones)


def test_gaussian_beside_laplace_and_what_delta_permits(live_server, browser, page, owner, shoot):
    lesson, _ = start_lesson(page, live_server, "(ε, δ) and the Gaussian mechanism")
    projector = open_projector(page.context, live_server, lesson)
    phones = open_phones_for_axe(browser, live_server, lesson)
    phones[0].get_by_role("button", name="Ask both databases").click()
    expect(phones[0].locator("[data-my-answers]")).to_contain_text("Gaussian answered")
    shoot(phones[0], "lesson-gaussian-phone")
    assert serious_violations(phones[0]) == []
    expect(projector.locator("[data-asked]")).to_have_text("1", timeout=FOLLOW)
    locked_out_then_answer(page, phones[1:], "Ask both databases", "[data-my-answers]")
    expect(projector.locator("[data-asked]")).to_have_text("3", timeout=FOLLOW)
    page.get_by_label(re.compile("^Failure probability δ")).fill("1")
    page.get_by_role("button", name="Set δ").click()
    expect(page.locator("[data-delta]")).to_have_text("0.01")
    sigma = maths.gaussian_sigma(1.0, 0.01)
    expect(projector.locator("[data-sigma]")).to_have_text(f"{sigma:.2f}", timeout=FOLLOW)
    expect(projector.locator("[data-true-count]")).to_have_count(0)
    press(page, "Reveal")
    expect(projector.locator("[data-true-count]")).to_have_text(
        str(maths.hospital(lesson.seed).total), timeout=FOLLOW
    )
    for phone in phones:
        expect(phone.locator("[data-revealed]")).to_be_visible(timeout=FOLLOW)
    press(page, "Next step →")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text("What δ permits", timeout=FOLLOW)
        expect(phone.locator("[data-my-answers]")).to_have_count(0)
    expect(projector.locator("[data-exposed]")).to_contain_text("0.24", timeout=FOLLOW)
    shoot(projector, "lesson-gaussian-projector")
    press(page, "New round")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text(
            "Laplace beside Gaussian", timeout=FOLLOW
        )
    expect(projector.locator("[data-asked]")).to_have_text("0", timeout=FOLLOW)
    close(phones)


def test_holdout_overfitted_by_reuse_then_guarded_by_thresholdout(
    live_server, browser, page, owner, shoot
):
    lesson, _ = start_lesson(page, live_server, "The reusable holdout")
    projector = open_projector(page.context, live_server, lesson)
    phones = [browser.new_context(viewport=PHONE, bypass_csp=True).new_page() for _ in range(3)]
    for phone in phones:
        phone.goto(f"{live_server.url}/j/{lesson.join_code}")
    expect(projector.locator("[data-epsilon-pill]")).to_have_count(0)  # no ε to set here
    analysis = maths.holdout_analysis(lesson.seed, queries=20)
    phones[0].get_by_role("button", name="Try a bigger model").click()
    expect(phones[0].locator("[data-my-holdout]")).to_contain_text("With 5 features")
    assert serious_violations(phones[0]) == []
    shoot(phones[0], "lesson-holdout-phone")
    press(page, "Lock answering")
    for phone in phones[1:]:
        expect(phone.get_by_role("button", name="Try a bigger model")).to_be_disabled(
            timeout=FOLLOW
        )
    press(page, "Unlock answering")
    for phone in phones[1:]:
        expect(phone.get_by_role("button", name="Try a bigger model")).to_be_enabled(timeout=FOLLOW)
        phone.get_by_role("button", name="Try a bigger model").click()
        expect(phone.locator("[data-my-holdout]")).to_be_visible()
    expect(projector.locator("[data-asked]")).to_have_text("3", timeout=FOLLOW)
    press(page, "Run 5 more queries")
    expect(page.locator("[data-remote-detail]")).to_contain_text("8 of 20 queries")
    expect(projector.locator('[data-line="fresh"]')).to_have_count(0)
    press(page, "Reveal")
    expect(projector.locator("[data-reveal]")).to_contain_text("overfitted", timeout=FOLLOW)
    expect(projector.locator("[data-fresh]")).to_have_text(
        f"{100 * analysis.naive.fresh[7]:.1f} %", timeout=FOLLOW
    )
    shoot(projector, "lesson-holdout-reuse-projector")

    press(page, "Next step →")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text(
            "Reuse it through Thresholdout", timeout=FOLLOW
        )
        expect(phone.locator("[data-my-holdout]")).to_have_count(0)
    for _ in range(3):
        press(page, "Run 5 more queries")
    phones[0].get_by_role("button", name="Try a bigger model").click()
    expect(phones[0].locator("[data-my-holdout]")).to_contain_text("With 80 features")
    press(page, "Reveal")
    expect(projector.locator('[data-line="naive"]')).to_have_count(1, timeout=FOLLOW)
    expect(projector.locator("[data-reveal]")).to_contain_text("reusable", timeout=FOLLOW)
    expect(projector.locator("[data-asked]")).to_have_text("16")
    shoot(projector, "lesson-holdout-projector")

    press(page, "New round")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text("Reuse the holdout", timeout=FOLLOW)
    expect(projector.locator("[data-asked]")).to_have_text("0", timeout=FOLLOW)
    close(phones)


def test_disclosure_control_step_by_step_then_a_sparse_linkage(
    live_server, browser, page, owner, shoot
):
    lesson, _ = start_lesson(page, live_server, "Statistical disclosure control")
    projector = open_projector(page.context, live_server, lesson)
    phones = [browser.new_context(viewport=PHONE, bypass_csp=True).new_page() for _ in range(3)]
    for phone in phones:
        phone.goto(f"{live_server.url}/j/{lesson.join_code}")
    groups = maths.clinic_table(lesson.seed)
    exact = maths.disclosures(maths.publish(groups))
    expect(projector.locator("[data-identity]")).to_have_text(str(len(exact["identity"])))
    expect(projector.locator("[data-epsilon-pill]")).to_have_count(0)
    phones[0].get_by_role("button", name="Identity").click()
    expect(phones[0].locator("[data-sent]")).to_be_visible()
    assert serious_violations(phones[0]) == []
    press(page, "Lock answering")
    expect(phones[1].get_by_role("button", name="Attribute")).to_be_disabled(timeout=FOLLOW)
    press(page, "Unlock answering")
    for phone in phones[1:]:
        expect(phone.get_by_role("button", name="Attribute")).to_be_enabled(timeout=FOLLOW)
        phone.get_by_role("button", name="Attribute").click()
        expect(phone.locator("[data-sent]")).to_be_visible()
    press(page, "Reveal")
    expect(projector.locator("[data-tally]")).to_be_visible(timeout=FOLLOW)
    expect(projector.locator(".mark-identity").first).to_be_visible()
    shoot(projector, "lesson-disclosure-kinds-projector")

    press(page, "Next step →")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text(
            "Round, collapse, suppress", timeout=FOLLOW
        )
        expect(phone.locator("[data-sent]")).to_have_count(0)
    phones[0].get_by_role("button", name="Suppress small counts").click()
    expect(phones[0].locator("[data-sent]")).to_be_visible()
    page.get_by_label("Suppress small counts").check()
    press(page, "Apply practices")
    alone = maths.disclosures(maths.publish(groups, suppressed=True))
    expect(projector.locator("[data-identity]")).to_have_text(
        str(len(alone["identity"])), timeout=FOLLOW
    )
    expect(projector.locator("[data-sdc-table]")).to_contain_text(" c ")
    page.get_by_label("Round to base 5").check()
    press(page, "Apply practices")
    both = maths.disclosures(maths.publish(groups, rounded=True, suppressed=True))
    expect(projector.locator("[data-identity]")).to_have_text(
        str(len(both["identity"])), timeout=FOLLOW
    )
    press(page, "Reveal")
    expect(projector.locator("[data-reveal]")).to_be_visible(timeout=FOLLOW)
    shoot(projector, "lesson-disclosure-practices-projector")

    press(page, "Next step →")
    for phone in phones:
        expect(phone.get_by_role("button", name="3")).to_be_visible(timeout=FOLLOW)
    phones[1].get_by_role("button", name="3").click()
    press(page, "Reveal")
    counts = maths.ratings(lesson.seed).candidates_by_known(6)
    expect(projector.locator("[data-linkage-bars]")).to_contain_text(str(counts[0]), timeout=FOLLOW)
    shoot(projector, "lesson-disclosure-projector")
    press(page, "New round")
    for phone in phones:
        expect(phone.locator(".lesson-step")).to_have_text(
            "Three kinds of disclosure", timeout=FOLLOW
        )
    close(phones)


def test_attack_your_own_class_by_differencing_and_averaging(
    live_server, browser, page, owner, shoot
):
    lesson, _ = start_lesson(page, live_server, "Attack your own class")
    projector = open_projector(page.context, live_server, lesson)
    phones = [browser.new_context(viewport=PHONE, bypass_csp=True).new_page() for _ in range(3)]
    bodies = []
    for phone in phones:
        phone.on(
            "request", lambda r: bodies.append(r.post_data or "") if r.method == "POST" else None
        )
        phone.goto(f"{live_server.url}/j/{lesson.join_code}")
    assert serious_violations(phones[0]) == []
    shoot(phones[0], "lesson-attack-phone")
    # The phones answer the lesson's question with coins, on the classroom respondent page.
    for phone, truth in zip(phones[:2], (True, False), strict=True):
        phone.get_by_role("link", name="Answer with coins").click()
        phone.locator("[data-question]").get_by_role(
            "button", name="Yes" if truth else "No", exact=True
        ).click()
        phone.get_by_role("button", name=re.compile("^Flip")).click()
        expect(phone.locator("[data-received]")).to_be_visible(timeout=15_000)
    press(page, "Lock answering")
    expect(phones[2].get_by_role("button", name="Answer with coins")).to_be_disabled(timeout=FOLLOW)
    expect(phones[0].locator("[data-session-state]")).to_be_visible(timeout=FOLLOW)
    press(page, "Unlock answering")
    phones[2].get_by_role("link", name="Answer with coins").click(timeout=FOLLOW)
    phones[2].locator("[data-question]").get_by_role("button", name="Yes", exact=True).click()
    phones[2].get_by_role("button", name=re.compile("^Flip")).click()
    expect(phones[2].locator("[data-received]")).to_be_visible(timeout=15_000)
    expect(projector.locator("[data-reports]")).to_have_text("3", timeout=FOLLOW)
    expect(page.locator("[data-remote-detail]")).to_contain_text("3 reports", timeout=FOLLOW)
    # Only randomized reports left the phones: never a true answer.
    assert not any('"truth"' in body or "answer=yes" in body for body in bodies)

    press(page, "Next step →")
    for phone in phones:  # from the question back to the lesson, by themselves
        expect(phone.locator(".lesson-step")).to_have_text("A differencing attack", timeout=FOLLOW)
    phones[0].get_by_role("button", name="A little").click()
    expect(phones[0].locator("[data-sent]")).to_be_visible()
    press(page, "Reveal")
    expect(projector.locator("[data-belief]")).to_have_text(
        re.compile("^(75|25).0 %$"), timeout=FOLLOW
    )
    shoot(projector, "lesson-attack-differencing-projector")

    press(page, "Next step →")
    expect(phones[1].locator(".lesson-step")).to_have_text(
        "Averaging repeated answers", timeout=FOLLOW
    )
    phones[1].get_by_role("link", name="Ask my phone again").click()
    expect(phones[1].locator("[data-received]")).to_be_visible(timeout=FOLLOW)  # the memo
    press(page, "Reveal")
    expect(projector.locator('[data-line="fresh"]')).to_have_count(1, timeout=FOLLOW)
    shoot(projector, "lesson-attack-projector")
    press(page, "New round")
    expect(phones[0].locator(".lesson-step")).to_have_text("Answer with coins", timeout=FOLLOW)
    expect(projector.locator("[data-reports]")).to_have_text("0", timeout=FOLLOW)
    close(phones)
