"""Every projector view is read from the back of a lecture hall: it fits a 1280×720 and a
1920×1080 screen without scrolling, and no text or chart label is drawn smaller than a
minimum size (SVG text measured as drawn, after the chart's scaling)."""

from __future__ import annotations

import pytest

from classroom import lessons
from classroom.live import simulate_choice, simulate_number
from classroom.models import Action, Lesson, Session
from classroom.views import DEFAULT_SESSION
from responses.write import simulate_respondents
from survey.models import Survey

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.rendering]

SCREENS = ({"width": 1280, "height": 720}, {"width": 1920, "height": 1080})
# The smallest text allowed, in CSS pixels, per screen height (a 720-line projector).
MIN_FONT = {720: 16, 1080: 18}

MEASURE = """() => {
  const sizes = [];
  for (const el of document.querySelectorAll("main *")) {
    const own = [...el.childNodes].filter((n) => n.nodeType === 3);
    const text = own.map((n) => n.textContent).join("").trim();
    if (!text) continue;
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || el.closest("details:not([open]) > :not(summary)")) continue;
    if (el.closest("[hidden], .visually-hidden, title, desc")) continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    // SVG text is drawn at its font size times the chart's scale on screen.
    if (el.ownerSVGElement) size *= el.ownerSVGElement.getScreenCTM().a;
    sizes.push([Math.round(size * 10) / 10, text.slice(0, 40)]);
  }
  sizes.sort((a, b) => a[0] - b[0]);
  const doc = document.documentElement;
  return {
    overflowY: doc.scrollHeight - innerHeight,
    overflowX: doc.scrollWidth - innerWidth,
    smallest: sizes.slice(0, 5),
  };
}"""


def lesson_views(owner) -> list[str]:
    """Every step of every lesson, revealed, with the students' answers in."""
    urls = []
    for kind in Lesson.Kind.values:
        lesson = Lesson.objects.create(owner=owner, kind=kind, seed=11, revealed=True)
        if kind == Lesson.Kind.EXPONENTIAL:
            lesson.go(last_pick="Cryptography")
        if kind == Lesson.Kind.ATTACK:
            simulate_respondents(lesson.survey, 30, 0.3)
        for step in range(len(lesson.steps)):
            lesson.go(step=step)
            choices = lessons.lesson_context(lesson).get("choices") or ["x"]
            for i in range(30):
                if kind == Lesson.Kind.LAPLACE:
                    action = {"kind": Action.Kind.QUERY, "value": 10 + i % 7 - 3, "epsilon": 0.05}
                elif kind == Lesson.Kind.GAUSSIAN:
                    action = {"kind": Action.Kind.QUERY, "choice": ("pure", "approximate")[i % 2]}
                    action["value"] = 10 + i % 7 - 3
                elif kind == Lesson.Kind.HOLDOUT:
                    lessons.ask_holdout(lesson)
                    continue
                elif kind == Lesson.Kind.LOCAL:
                    noise = (i % 7 - 3) * 0.8
                    action = {"kind": Action.Kind.QUERY, "choice": str(i % 3 // 2), "value": noise}
                else:
                    action = {"kind": Action.Kind.GUESS, "choice": choices[i % len(choices)]}
                    if kind == Lesson.Kind.EXPONENTIAL:
                        action["kind"] = Action.Kind.VOTE
                lesson.actions.create(round=1, step=step, **action)
            urls.append(f"/classroom/lessons/{lesson.id}/?step={step}")
    return urls


def fresh_lesson_views(owner) -> list[str]:
    """Every step of every lesson as the class first sees it: locked, nothing sent yet,
    nothing revealed (empty charts and tables, "?" where the reveal puts numbers)."""
    urls = []
    for kind in Lesson.Kind.values:
        lesson = Lesson.objects.create(owner=owner, kind=kind, seed=23, is_locked=True)
        urls += [
            f"/classroom/lessons/{lesson.id}/?step={step}" for step in range(len(lesson.steps))
        ]
    return urls


ARMS_DESIGNS = (
    ("stochastic_lie_detector", {"p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]}),
    (
        "cheating_detection",
        {"p_truth": [0.5, 0.75], "p_yes": [0.5, 0.5], "arm_weights": [0.5, 0.5]},
    ),
)


def arms_demo(owner, name: str, params: dict) -> Survey:
    """A demo whose question has arms: π and its other quantities fill the projector."""
    survey = Survey.objects.create(
        owner=owner, title="Shoplifting", mode=Survey.Mode.CLASSROOM, status=Survey.Status.OPEN
    )
    survey.questions.create(
        position=0, text="Have you ever shoplifted?", design_name=name, design_params=params
    )
    simulate_respondents(survey, 400, 0.3)
    return survey


def classroom_views(owner) -> list[str]:
    session = Session.objects.create(owner=owner, title="Lecture questions")
    for question in DEFAULT_SESSION:
        session.add_question(**question)
    binary, choice, number = session.surveys()
    simulate_respondents(binary, 400, 0.3)
    simulate_choice(choice, 400, [0.13, 0.37, 0.3, 0.2])
    simulate_number(number, 400, 7, 1.5)
    with_arms = [arms_demo(owner, name, params) for name, params in ARMS_DESIGNS]
    urls = [f"/classroom/{binary.id}/join/", f"/classroom/{with_arms[0].id}/join/"]
    for survey in (binary, choice, number, *with_arms):
        Survey.objects.filter(pk=survey.pk).update(results_revealed=True)
        urls.append(f"/classroom/{survey.id}/")
    return urls


def test_every_projector_view_fits_the_screen_and_is_legible(live_server, browser, owner):
    context = browser.new_context(viewport=SCREENS[0])
    page = context.new_page()
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("owner-password-1")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()
    urls = classroom_views(owner) + lesson_views(owner) + fresh_lesson_views(owner)
    problems = []
    for screen in SCREENS:
        page.set_viewport_size(screen)
        for url in urls:
            path, _, step = url.partition("?step=")
            if step:
                Lesson.objects.filter(pk=int(path.split("/")[3])).update(step=int(step))
            page.goto(live_server.url + path)
            page.wait_for_load_state("load")
            found = page.evaluate(MEASURE)
            where = f"{url} at {screen['width']}×{screen['height']}"
            if found["overflowY"] > 0 or found["overflowX"] > 0:
                problems.append(f"{where} scrolls: {found}")
            if found["smallest"] and found["smallest"][0][0] < MIN_FONT[screen["height"]]:
                problems.append(f"{where} has small text: {found['smallest']}")
    context.close()
    assert problems == [], "\n".join(problems)
