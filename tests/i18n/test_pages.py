"""Every respondent and student page, rendered in each language: nothing left in English,
every number filled in, and ``<html lang>`` saying which language it is."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from classroom.lessons import lesson_context
from classroom.models import DEFAULT_QUESTION, Lesson, Session
from survey.models import Invite, Survey
from tests.i18n.catalogue import TRANSLATED, english_runs, visible_text
from tests.survey.test_respondent_views import MIXED, add_questions

pytestmark = pytest.mark.django_db

# What researchers and instructors wrote (the same in every language), and synthetic
# names from the lessons: left out when looking for English.
WRITTEN = [
    "Exam honesty",
    "Lecture questions",
    DEFAULT_QUESTION,  # the attack lesson's question, as a demo's
    *[text for *_, text in MIXED],
    *[option for *_, options, _ in MIXED for option in options],
]

Page = Callable[[Client, str], str]


def get(client: Client, url: str, language: str, expect: int = 200, **data) -> str:
    """A page as a browser set to ``language`` fetches it."""
    response = client.get(url, data, headers={"accept-language": language})
    assert response.status_code == expect, url
    return response.content.decode()


def post(client: Client, url: str, language: str, data: dict, expect: int = 200) -> str:
    response = client.post(url, data, headers={"accept-language": language})
    assert response.status_code == expect, url
    return response.content.decode()


@pytest.fixture
def surveys(make_survey) -> dict[str, Survey]:
    """One of each situation a respondent can land in."""
    mixed = make_survey(0, description="Please answer honestly.")
    add_questions(mixed)
    classroom = make_survey(mode=Survey.Mode.CLASSROOM, results_revealed=True)
    choice_class = make_survey(0, mode=Survey.Mode.CLASSROOM, results_revealed=True)
    add_questions(choice_class, [MIXED[4], MIXED[6]])
    return {
        "mixed": mixed,
        "invited": make_survey(2, requires_invite=True),
        "two_coins": make_survey(2),
        "draft": make_survey(status=Survey.Status.DRAFT),
        "closed": make_survey(status=Survey.Status.CLOSED),
        "paused": make_survey(mode=Survey.Mode.CLASSROOM, is_locked=True),
        "classroom": classroom,
        "choice_class": choice_class,
    }


def speak(survey: Survey, language: str) -> Survey:
    """Research surveys speak the language they were given in the builder."""
    survey.language = language
    survey.save(update_fields=["language"])
    return survey


def respondent_pages(surveys: dict[str, Survey]) -> dict[str, Page]:
    """Each research-survey page, fetched with the survey set to the language."""
    mixed, invited, two_coins = surveys["mixed"], surveys["invited"], surveys["two_coins"]
    paper = reverse("survey:respond_paper", args=[mixed.slug])
    token = Invite.create_batch(invited, 1)[0]
    results = {f"reported_{q.id}": "1" for q in two_coins.questions.all()}
    return {
        "respond": lambda c, lang: get(c, speak(mixed, lang).get_absolute_url(), lang),
        "invite_page": lambda c, lang: get(
            c, speak(invited, lang).get_absolute_url(), lang, invite="made-up"
        ),
        "paper_missing": lambda c, lang: post(c, speak(mixed, lang) and paper, lang, {}, 400),
        "design_changed": lambda c, lang: post(
            c, speak(mixed, lang) and paper, lang, {"design_version": "999"}, 409
        ),
        "thanks": lambda c, lang: post(
            c,
            reverse("survey:respond_paper", args=[speak(two_coins, lang).slug]),
            lang,
            results | {"submission_id": str(uuid.uuid4())},
        ),
        "two_coins_paper": lambda c, lang: get(c, speak(two_coins, lang).get_absolute_url(), lang),
        "invite_missing": lambda c, lang: get(
            c, speak(invited, lang).get_absolute_url(), lang, 403
        ),
        "invite_rejected": lambda c, lang: post(
            c,
            reverse("survey:respond_paper_invite", args=[speak(invited, lang).slug]),
            lang,
            {"invite": "not-" + token},
            403,
        ),
        "draft": lambda c, lang: get(
            c, speak(surveys["draft"], lang).get_absolute_url(), lang, 409
        ),
        "closed": lambda c, lang: get(
            c, speak(surveys["closed"], lang).get_absolute_url(), lang, 409
        ),
        "how_it_works": lambda c, lang: get(c, reverse("survey:how_it_works"), "en", lang=lang),
        "not_found": lambda c, lang: get(c, "/s/no-such-survey/", lang, 404),
    }


def student_pages(surveys: dict[str, Survey], owner) -> dict[str, Page]:
    """Each student page, fetched by a phone set to the language."""
    classroom, choice_class = surveys["classroom"], surveys["choice_class"]
    status = "classroom:student_status"
    session = Session.objects.create(owner=owner, title="Lecture questions")
    session.add_question(text="Have you ever cheated on an exam?")
    pages = {
        "phone": lambda c, lang: get(c, classroom.get_absolute_url(), lang),
        "paused_phone": lambda c, lang: get(c, surveys["paused"].get_absolute_url(), lang, 409),
        "status_yes_no": lambda c, lang: get(c, reverse(status, args=[classroom.slug]), lang),
        "status_choice_number": lambda c, lang: get(
            c, reverse(status, args=[choice_class.slug]), lang
        ),
        "status_session": lambda c, lang: get(
            c, reverse(status, args=[session.current.slug]), lang
        ),
        "explain": lambda c, lang: get(c, reverse("classroom:explain"), lang, s=classroom.slug),
        "join": lambda c, lang: get(c, reverse("classroom:join_form"), lang),
        "join_unknown": lambda c, lang: get(
            c, reverse("classroom:join", args=["ZZZZZZ"]), lang, 404
        ),
        "join_malformed": lambda c, lang: get(c, reverse("classroom:join", args=["AB"]), lang, 404),
    }
    for kind in Lesson.Kind.values:
        lesson = Lesson.objects.create(owner=owner, kind=kind, seed=7, revealed=True, budget=1000)
        for step in range(len(lesson.steps)):
            pages[f"lesson_{kind}_{step}"] = lesson_page(lesson, step)
    locked = Lesson.objects.create(owner=owner, kind=Lesson.Kind.LAPLACE, is_locked=True)
    pages["lesson_locked"] = lambda c, lang: post(c, locked.get_absolute_url(), lang, {}, 409)
    return pages


# The lessons whose phones press one button (nothing to choose, so no invalid choice).
NO_CHOICE = (Lesson.Kind.LAPLACE, Lesson.Kind.LOCAL, Lesson.Kind.GAUSSIAN, Lesson.Kind.HOLDOUT)


def lesson_page(lesson: Lesson, step: int) -> Page:
    """The step as a phone shows it, then after sending a valid and an invalid choice."""

    def page(client: Client, language: str) -> str:
        Lesson.objects.filter(pk=lesson.pk).update(step=step)
        lesson.refresh_from_db()
        url = lesson.get_absolute_url()
        choices = lesson_context(lesson).get("choices")
        if not choices and lesson.kind not in NO_CHOICE:
            # A step that only explains (and links to the question): nothing to send.
            return get(client, url, language) + post(client, url, language, {}, 400)
        choices = choices or ["query"]
        sent = post(client, url, language, {"choice": choices[0]})
        shown = get(client, url, language)
        if lesson.kind in NO_CHOICE:
            return shown + sent
        return shown + sent + post(client, url, language, {"choice": "none of these"}, 400)

    return page


@pytest.fixture
def pages(surveys, owner) -> dict[str, Page]:
    return respondent_pages(surveys) | student_pages(surveys, owner)


def html_lang(page: str) -> str | None:
    """The page's language, or None for a fragment (the phones' polled status)."""
    found = re.search(r'<html lang="([^"]+)">', page)
    assert found or "<html" not in page
    return found and found.group(1)


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_english_sentence_is_left_on_any_respondent_or_student_page(client, pages, language):
    """Runs of four English words from the English page must all be gone: a string
    that was never marked (or is missing from the catalogue) would leave its runs."""
    for name, page in pages.items():
        english, translated = page(client, "en"), page(client, language)
        if html_lang(english):
            assert html_lang(english) == "en" and html_lang(translated) == language, name
        english_words = english_runs(visible_text(english), WRITTEN)
        assert len(english_words) > 5, name
        left = english_words & english_runs(visible_text(translated), WRITTEN)
        assert not left, f"{name} ({language}) still says: {sorted(left)[:5]}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_placeholder_is_left_unfilled(client, pages, language):
    for name, page in pages.items():
        text = visible_text(page(client, language))
        assert not re.search(r"%\(\w+\)s|\{\{|\{%", text), name
