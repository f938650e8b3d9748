"""*My surveys*: how many answered and when, a search box, and a lecture's questions listed
under the lecture; viewers see only the counts released to them, never the live ones."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from classroom.models import Session
from classroom.views import DEFAULT_SESSION
from responses.sealing import seal
from responses.write import simulate_respondents
from survey.models import Role, Survey

pytestmark = pytest.mark.django_db


def row_of(page: str, survey: Survey) -> str:
    match = re.search(rf'<tr[^>]*data-survey="{survey.id}">(.*?)</tr>', page, re.S)
    assert match, f"survey {survey.id} is not listed"
    return match[1]


def cell(row: str, label: str) -> str:
    match = re.search(rf'data-label="{label}">(.*?)</td>', row, re.S)
    return re.sub(r"<[^>]+>", "", match[1]).strip()


def test_each_survey_shows_its_responses_created_hour_and_last_answer_hour(logged_in, survey):
    earlier = datetime(2026, 3, 2, 9, tzinfo=UTC)
    Survey.objects.filter(pk=survey.pk).update(created=earlier - timedelta(minutes=47))
    simulate_respondents(survey, 7, 0.3, hour=earlier)
    simulate_respondents(survey, 5, 0.3, hour=earlier + timedelta(hours=5))
    quiet = Survey.objects.create(owner=survey.owner, title="Nobody yet")
    row = row_of(logged_in.get("/surveys/").content.decode(), survey)
    assert cell(row, "Responses") == "12"
    assert cell(row, "Created") == f"{timezone.localtime(earlier):%Y-%m-%d} 08:00"
    last = timezone.localtime(earlier + timedelta(hours=5))
    assert cell(row, "Last answer") == f"{last:%Y-%m-%d %H}:00"
    empty = row_of(logged_in.get("/surveys/").content.decode(), quiet)
    assert (cell(empty, "Responses"), cell(empty, "Last answer")) == ("0", "–")


def test_a_viewer_sees_the_released_count_not_the_live_one(client, make_survey, outsider):
    """The attacker is a viewer polling *My surveys* to spot one new answer between
    releases: the count and the hour stay those of the last batch of k."""
    survey = make_survey(min_cell_count=10)
    survey.share_with(outsider, Role.VIEWER)
    first = datetime(2026, 3, 2, 9, tzinfo=UTC)
    simulate_respondents(survey, 12, 0.3, hour=first)
    seal()  # viewers are released sealed hours only
    client.force_login(outsider)
    row = row_of(client.get("/surveys/").content.decode(), survey)
    assert cell(row, "Responses").split() == ["12", "released"]
    simulate_respondents(survey, 1, 0.3, hour=first + timedelta(hours=3))
    seal()
    row = row_of(client.get("/surveys/").content.decode(), survey)
    assert cell(row, "Responses").split() == ["12", "released"]
    assert cell(row, "Last answer") == f"{timezone.localtime(first):%Y-%m-%d %H}:00"
    survey.share_with(outsider, Role.ANALYST)
    row = row_of(client.get("/surveys/").content.decode(), survey)
    assert cell(row, "Responses") == "13"


def test_the_search_box_finds_surveys_and_lectures_by_title(logged_in, make_survey, owner):
    exam = make_survey()
    other = Survey.objects.create(owner=owner, title="Commuting habits")
    lecture = Session.objects.create(owner=owner, title="Ethics week 3")
    lecture.add_question(**DEFAULT_SESSION[0])
    page = logged_in.get("/surveys/", {"q": "HONESTY"}).content.decode()
    assert f'data-survey="{exam.id}"' in page and f'data-survey="{other.id}"' not in page
    assert 'value="HONESTY"' in page and "data-lecture" not in page
    page = logged_in.get("/surveys/", {"q": "ethics"}).content.decode()
    assert "Ethics week 3" in page and f'data-survey="{exam.id}"' not in page
    page = logged_in.get("/surveys/", {"q": "zebra"}).content.decode()
    assert "No survey or lecture title contains “zebra”" in page


def test_a_lectures_questions_are_listed_once_under_it_in_order(logged_in, owner):
    lecture = Session.objects.create(owner=owner, title="Privacy lecture")
    for question in DEFAULT_SESSION:
        lecture.add_question(**question)
    surveys = lecture.surveys()
    simulate_respondents(surveys[0], 4, 0.3)
    simulate_respondents(surveys[2], 6, {"uniform": True})
    page = logged_in.get("/surveys/").content.decode()
    assert page.count("data-lecture") == 1 and page.count("Privacy lecture") == 1
    head = re.search(r"<tr class=\"lecture\" data-lecture>(.*?)</tr>", page, re.S)[1]
    assert (cell(head, "Questions"), cell(head, "Responses")) == (str(len(surveys)), "10")
    positions = [page.index(f'data-survey="{survey.id}"') for survey in surveys]
    assert page.index("data-lecture") < positions[0] and positions == sorted(positions)
