"""Every step of every lesson is scanned by axe-core for WCAG 2.2 AA (and axe's best
practices): the students' phones after a send (in German, Spanish or French) and locked
and revealed (in English), the projector revealed, and each lesson's remote. One page per
role is reused throughout, so the whole walk stays quick."""

from __future__ import annotations

import pytest

from classroom.models import Lesson
from tests.browser.conftest import PHONE
from tests.browser.test_projector_fit import lesson_views
from tests.browser.test_respondent_accessibility import AXE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.rendering]

PROJECTOR = {"width": 1280, "height": 720}
OTHER_LANGUAGES = ("de", "es", "fr")
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# The lesson's own pages are held to axe's best practices too (landmarks, headings).
LESSON_RULES = [*WCAG_AA, "best-practice"]


def violations(page, where: str, rules: list[str] = LESSON_RULES) -> list[str]:
    """Every violation axe finds on the page as loaded, whatever its impact."""
    page.wait_for_load_state("load")
    options = {"runOnly": {"type": "tag", "values": rules}, "resultTypes": ["violations"]}
    result = page.evaluate("(options) => axe.run(document, options)", options)
    return [
        f"{where}: {v['id']} ({v['impact']}) {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
    ]


def send_something(phone) -> bool:
    """Press the step's first answer button, as a student would; False if it has none."""
    button = phone.locator("#lesson-live form button:enabled").first
    if not button.count():
        return False
    button.click()
    phone.wait_for_load_state("load")
    return True


def test_every_lesson_step_on_phones_and_projector_is_axe_clean(live_server, browser, owner):
    assert AXE.exists(), "axe-core is missing: run `npm ci`"

    def new_page(**options):
        context = browser.new_context(bypass_csp=True, **options)
        context.add_init_script(path=str(AXE))
        return context.new_page()

    projector = new_page(viewport=PROJECTOR)
    projector.goto(live_server.url + "/accounts/login/")
    projector.get_by_label("Username").fill("owner")
    projector.get_by_label("Password").fill("owner-password-1")
    projector.get_by_role("button", name="Log in").click()
    projector.wait_for_load_state()
    english = new_page(viewport=PHONE, locale="en-GB")
    others = {code: new_page(viewport=PHONE, locale=code) for code in OTHER_LANGUAGES}
    lesson_views(owner)  # every lesson, with the class's answers in at every step
    found = []
    for number, lesson in enumerate(Lesson.objects.order_by("id")):
        language = OTHER_LANGUAGES[number % len(OTHER_LANGUAGES)]
        phone = others[language]
        student = live_server.url + lesson.get_absolute_url()
        for step in range(len(lesson.steps)):
            lesson.go(step=step, revealed=False, is_locked=False)
            where = f"{lesson.kind} step {step + 1}"
            phone.goto(student)
            sent = send_something(phone)  # the answer note above the still open form
            state = "after sending" if sent else "open"
            found += violations(phone, f"{where}, phone {state} ({language})")
            if lesson.survey and step == 0:
                phone.goto(live_server.url + lesson.survey.get_absolute_url())
                page = f"{where}, the question's page ({language})"
                found += violations(phone, page)
            # The projector's reveal only adds to the page (its "?" become numbers).
            lesson.go(revealed=True, is_locked=True)
            english.goto(student)
            found += violations(english, f"{where}, phone locked and revealed (en)")
            projector.goto(f"{live_server.url}/classroom/lessons/{lesson.id}/")
            found += violations(projector, f"{where}, projector revealed")
        projector.goto(live_server.url + f"/classroom/remote/{lesson.remote_token}/")
        found += violations(projector, f"{lesson.kind}, remote")
    for page in (projector, english, *others.values()):
        page.context.close()
    assert found == [], "\n".join(found)
