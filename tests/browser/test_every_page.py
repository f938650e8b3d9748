"""Every page type on a phone (360 px) and a laptop: no sideways scrolling, no console
error (CSP violations included) and no serious or critical WCAG 2.2 AA finding by axe."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from classroom.models import Lesson
from survey.models import Survey
from tests.browser.conftest import LAPTOP, PHONE
from tests.storage import simulated_hours

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.rendering]

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def page_urls(survey: Survey, classroom: Survey, lesson: Lesson) -> dict:
    """Every page type, keyed by the name failures are reported under: first those a
    visitor sees before logging in, then the researcher's (from "survey list" on)."""
    question = survey.questions.first()
    return {
        "home": "/",
        "login": "/accounts/login/",
        "sign-up": "/accounts/signup/",
        "password reset": "/accounts/password/reset/",
        "how it works": "/how-it-works/",
        "api docs": "/api/docs/",
        "survey list": "/surveys/",
        "api token": "/accounts/api-token/",
        "builder": f"/surveys/{survey.id}/edit/",
        "translation": f"/surveys/{survey.id}/translations/de/",
        "distribute": f"/surveys/{survey.id}/distribute/",
        "sharing": f"/surveys/{survey.id}/share/",
        "delete confirmation": f"/surveys/{survey.id}/delete/",
        "trash": "/surveys/trash/",
        "dashboard": f"/surveys/{survey.id}/results/",
        "dashboard question": f"/surveys/{survey.id}/results/?question={question.id}",
        "respondent": survey.get_absolute_url(),
        "classroom start": "/classroom/new/",
        "classroom": "/classroom/",
        "join screen": f"/classroom/{classroom.id}/join/",
        "presenter": f"/classroom/{classroom.id}/",
        "controls": f"/classroom/{classroom.id}/controls/",
        "student join form": "/j/",
        "student": f"/j/{classroom.join_code}",
        "lesson remote": f"/classroom/remote/{lesson.remote_token}/",
        "lesson projector": f"/classroom/lessons/{lesson.id}/",
        "lesson student": f"/l/{lesson.slug}/",
    }


def answer(survey: Survey) -> None:
    """Hours of simulated answers to every question, so that every figure draws."""
    rates = (0.1, 0.3, 0.05)[: survey.questions.count()]
    simulated_hours(survey, 6, 40, rates)


def inject_axe(page) -> None:
    """axe runs through the DevTools protocol, which the page's CSP does not govern, so the
    page keeps its real CSP and its violations still reach the console."""
    page.evaluate(AXE.read_text() + "\n;true")


def serious_findings(page) -> list[str]:
    inject_axe(page)
    result = page.evaluate(
        "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags},"
        " resultTypes: ['violations']})",
        WCAG_22_AA,
    )
    return [
        f"{v['id']}: {[n['target'] for n in v['nodes']][:5]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def overflow(page) -> str | None:
    """How much wider than the window the page is, and the innermost elements sticking out
    (None when nothing scrolls sideways)."""
    return page.evaluate(
        """() => {
        const wider = document.scrollingElement.scrollWidth - window.innerWidth;
        if (wider <= 0) return null;
        const out = [...document.body.querySelectorAll("*")].filter(
            (el) => el.getBoundingClientRect().right > window.innerWidth + 0.5);
        const innermost = out.filter((el) => !out.some((o) => o !== el && el.contains(o)));
        const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
            + [...el.classList].map((c) => "." + c).join("");
        return `${wider} px wider than the screen: ${innermost.slice(0, 5).map(name)}`;
    }"""
    )


def headless_tables(page) -> list[str]:
    """Tables on screen whose values show without their column's name: neither the
    header row nor a label beside each value is visible (a phone layout that drops them)."""
    return page.evaluate(
        """() => [...document.querySelectorAll("table")]
            .filter((t) => t.getClientRects().length && t.tHead
                && t.tHead.getBoundingClientRect().height <= 1
                && [...t.tBodies].some((b) => [...b.querySelectorAll("td")].some((td) =>
                    !/[^\\s"']/.test(getComputedStyle(td, "::before").content
                        .replace(/^none$/, "")))))
            .map((t) => `table without its headers: ${t.className || t.id}`)"""
    )


def shoot(page, name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    if artifacts := os.environ.get("ARTIFACTS_DIR"):
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(artifacts) / path.name)


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_every_page_fits_the_screen_logs_no_error_and_passes_axe(
    live_server, browser, make_survey, owner, settings, viewport, tmp_path
):
    settings.SIGNUP_ENABLED = True
    settings.EMAIL_ENABLED = True
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci` (make test does)")
    survey = make_survey(3, languages=["de"])  # the language choice and translation page
    answer(survey)
    # Revealed, with answers: the presenter draws its interval figure.
    classroom = Survey.objects.create_classroom(owner, "Have you ever cheated on an exam?")
    answer(classroom)
    Survey.objects.filter(pk=classroom.pk).update(results_revealed=True)
    lesson = Lesson.objects.create(owner=owner, kind=Lesson.Kind.LAPLACE, revealed=True)
    make_survey(1).move_to_trash()
    urls = page_urls(survey, classroom, lesson)

    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    found = {}
    size = "phone" if viewport == PHONE else "laptop"
    for name, url in urls.items():
        if name == "survey list":
            page.goto(live_server.url + "/accounts/login/")
            page.get_by_label("Username").fill("owner")
            page.get_by_label("Password").fill("owner-password-1")
            page.get_by_role("button", name="Log in").click()
            page.get_by_role("heading", name="My surveys").wait_for()
        errors.clear()
        response = page.goto(live_server.url + url)
        page.wait_for_load_state("networkidle")
        problems = []
        if response is None or response.status >= 400:
            problems.append(f"status {response and response.status}")
        if wider := overflow(page):
            problems.append(wider)
        problems += headless_tables(page)
        problems += serious_findings(page)
        problems += [f"console: {e}" for e in errors]
        if problems:
            found[name] = problems
        shoot(page, f"{size}-{name.replace(' ', '-')}", tmp_path)
    context.close()
    assert found == {}, json.dumps(found, indent=1)
