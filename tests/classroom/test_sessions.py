"""A lecture: a sequence of classroom questions under one join code."""

from __future__ import annotations

import csv
import io
import math
import re
import uuid
from xml.etree import ElementTree

import pytest
from django.urls import reverse

from classroom.models import Lesson, Session
from survey.models import Survey
from tests.storage import stored_answers, stored_count, tallied_total

pytestmark = pytest.mark.django_db


@pytest.fixture
def instructor(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def lecture(instructor) -> Session:
    instructor.post(reverse("classroom:session_new"))
    return Session.objects.get()


def questions(session: Session):
    return [s.questions.get() for s in session.surveys()]


def submit(client, survey, value):
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [{"question": survey.questions.get().id, "value": value}],
    }
    url = reverse("api-submit", args=[survey.slug])
    return client.post(url, body, content_type="application/json")


def move(client, session, direction):
    return client.post(reverse("classroom:session_move", args=[session.id, direction]))


def status_html(client, survey):
    return client.get(reverse("classroom:student_status", args=[survey.slug])).content.decode()


def stored():
    return (
        Survey.objects.count(),
        stored_count(),
        stored_answers(),
        tallied_total(),
    )


# Starting and joining


def test_a_lecture_starts_with_a_yes_no_a_choice_and_a_number_question(instructor):
    response = instructor.post(reverse("classroom:session_new"))
    session = Session.objects.get()
    first, choice, number = questions(session)
    assert response.url == reverse("classroom:join_screen", args=[first.survey_id])
    assert [q.kind for q in (first, choice, number)] == ["binary", "choice", "number"]
    assert first.epsilon == pytest.approx(math.log(3))
    assert choice.epsilon == pytest.approx(math.log(3))
    assert len(choice.options) == 4
    assert (number.design.lower, number.design.upper, number.epsilon) == (0, 12, 1.0)
    assert all(s.mode == Survey.Mode.CLASSROOM and s.is_accepting for s in session.surveys())


def test_the_new_demo_page_offers_a_lecture(instructor):
    page = instructor.get(reverse("classroom:new")).content.decode()
    assert reverse("classroom:session_new") in page
    assert "How many hours did you sleep last night?" in page


def test_the_join_screen_shows_the_sessions_code_and_the_current_questions_epsilon(
    instructor, lecture
):
    surveys = lecture.surveys()
    page = instructor.get(reverse("classroom:join_screen", args=[surveys[0].id])).content.decode()
    assert lecture.join_code in page and surveys[0].join_code not in page
    assert "Question 1 of 3" in page and "ε = 1.10" in page
    page = instructor.get(reverse("classroom:join_screen", args=[surveys[2].id])).content.decode()
    assert lecture.join_code in page and "ε = 1.00" in page
    assert "random whole-number noise" in page


def test_the_join_code_leads_to_the_current_question(client, instructor, lecture):
    surveys = lecture.surveys()
    join = reverse("classroom:join", args=[lecture.join_code.lower()])
    assert client.get(join).url == surveys[0].get_absolute_url()
    move(instructor, lecture, "next")
    assert client.get(join).url == surveys[1].get_absolute_url()


# Stepping


def test_next_and_previous_step_through_the_questions_and_stop_at_either_end(instructor, lecture):
    surveys = lecture.surveys()
    positions = []
    for direction in ("previous", "next", "next", "next", "previous"):
        response = move(instructor, lecture, direction)
        lecture.refresh_from_db()
        positions.append(lecture.position)
        assert response.url == reverse("classroom:controls", args=[surveys[lecture.position].id])
    assert positions == [0, 1, 2, 2, 1]


def test_every_phone_is_told_where_the_class_is(client, instructor, lecture):
    first, second, _ = lecture.surveys()
    assert f'data-current="{first.get_absolute_url()}"' in status_html(client, first)
    response = client.get(reverse("classroom:student_status", args=[first.slug]))
    etag = response["ETag"]
    move(instructor, lecture, "next")
    moved = client.get(
        reverse("classroom:student_status", args=[first.slug]), headers={"if-none-match": etag}
    )
    assert moved.status_code == 200
    assert f'data-current="{second.get_absolute_url()}"' in moved.content.decode()


def test_a_lone_classroom_question_sends_no_phone_elsewhere(client, make_survey):
    lone = make_survey(mode=Survey.Mode.CLASSROOM)
    assert "data-current" not in status_html(client, lone)


def test_the_projector_follows_to_the_current_question(instructor, lecture):
    first, second, _ = lecture.surveys()
    poll = reverse("classroom:poll", args=[first.id])
    etag = instructor.get(poll)["ETag"]
    assert instructor.get(poll, headers={"if-none-match": etag}).status_code == 304
    move(instructor, lecture, "next")
    response = instructor.get(poll, headers={"if-none-match": etag})
    assert response["HX-Redirect"] == reverse("classroom:presenter", args=[second.id])


def test_the_controls_offer_the_sequence(instructor, lecture):
    first, second, _ = lecture.surveys()
    page = instructor.get(reverse("classroom:controls", args=[first.id])).content.decode()
    assert "question 1 of 3" in page and "Next question" in page and "Add a question" in page
    assert 'aria-current="step"' in page
    page = instructor.get(reverse("classroom:controls", args=[second.id])).content.decode()
    assert "data-not-current" in page


# Each question keeps its own rounds and results


def test_each_question_keeps_its_own_rounds_locks_and_answers(client, instructor, lecture):
    first, second, third = lecture.surveys()
    assert submit(client, first, 1).status_code == 201
    assert submit(client, second, 2).status_code == 201
    assert submit(client, third, 8).status_code == 201
    instructor.post(reverse("classroom:control", args=[second.id, "new-round"]))
    instructor.post(reverse("classroom:control", args=[third.id, "lock"]))
    for survey in (first, second, third):
        survey.refresh_from_db()
    assert (first.current_round, second.current_round, third.current_round) == (1, 2, 1)
    assert (first.is_locked, second.is_locked, third.is_locked) == (False, False, True)
    assert submit(client, third, 8).status_code == 409
    assert [stored_count(s) for s in (first, second, third)] == [1, 1, 1]


def test_a_report_outside_a_questions_design_is_refused_and_nothing_stored(client, lecture):
    _, second, _ = lecture.surveys()
    before = stored()
    assert submit(client, second, 7).status_code == 400
    assert stored() == before


# Choice and number results


def add(client, session, **fields):
    url = reverse("classroom:session_add", args=[session.id])
    return client.post(url, {"kind": "binary", "text": "Q?"} | fields)


def test_choice_results_stay_hidden_until_revealed_then_show_bars_and_a_table(instructor, lecture):
    add(instructor, lecture, kind="choice", text="Pick one", options="Red\nGreen\nBlue")
    survey = lecture.surveys()[3]
    url = reverse("classroom:simulate", args=[survey.id])
    assert instructor.post(url, {"n": 10_000, "distribution": "20/30/50"}).status_code == 302
    presenter = reverse("classroom:presenter", args=[survey.id])
    page = instructor.get(presenter).content.decode()
    assert "data-choice-bars" not in page and "data-hidden-note" in page
    instructor.post(reverse("classroom:control", args=[survey.id, "reveal"]))
    page = instructor.get(presenter).content.decode()
    assert "<title" in page and "<desc" in page and "data-choice-table" in page
    shares = [float(v) / 100 for v in re.findall(r"<td data-share>([\d.]+)\s*%</td>", page)]
    # n = 10 000 at ε = ln 3, k = 3: each share's standard error is about 0.013.
    assert shares == pytest.approx([0.2, 0.3, 0.5], abs=0.08)
    # The bold bar is the share (its width from 0 on a 920-wide axis), not the interval.
    widths = [float(w) for w in re.findall(r'data-share-bar x="40" y="\d+" width="([\d.]+)"', page)]
    assert [w / 920 for w in widths] == pytest.approx(shares, abs=0.01)
    assert page.count("data-ci-line") == 3


def test_number_results_show_the_mean_its_interval_and_the_noise(instructor, lecture):
    number = lecture.surveys()[2]
    url = reverse("classroom:simulate", args=[number.id])
    response = instructor.post(url, {"n": 10_000, "mean": 7, "sd": 1.5})
    assert response.status_code == 302
    instructor.post(reverse("classroom:control", args=[number.id, "reveal"]))
    page = instructor.get(reverse("classroom:presenter", args=[number.id])).content.decode()
    mean = float(re.search(r"data-mean>([\d.]+)<", page)[1])
    # The Laplace noise at ε = 1 on 0–12 has sd ≈ 17: the mean's standard error ≈ 0.17.
    assert mean == pytest.approx(7, abs=1.2)
    assert "data-number-bar" in page and "data-noise" in page and "10000 simulated" in page


def test_students_see_the_revealed_choice_result(client, instructor, lecture):
    choice = lecture.surveys()[1]
    instructor.post(
        reverse("classroom:simulate", args=[choice.id]), {"n": 200, "distribution": "25/25/25/25"}
    )
    assert "data-choice-bars" not in status_html(client, choice)
    instructor.post(reverse("classroom:control", args=[choice.id, "reveal"]))
    assert "data-choice-bars" in status_html(client, choice)


@pytest.mark.parametrize(
    ("index", "data", "message"),
    [
        (1, {"n": 10, "distribution": "20/30"}, "Give 4 percentages"),
        (1, {"n": 10, "distribution": "a/b/c/d"}, "one percentage per option"),
        (1, {"n": 10, "distribution": "20/30/30/30"}, "add up to 110"),
        (1, {"n": 10, "distribution": "-10/60/25/25"}, "between 0 and 100"),
        (1, {"n": 0, "distribution": "25/25/25/25"}, "greater than or equal to 1"),
        (2, {"n": 10, "mean": 13, "sd": 1}, "less than or equal to 12"),
        (2, {"n": 10, "mean": 5, "sd": -1}, "greater than or equal to 0"),
        (2, {"n": 10, "mean": "", "sd": 1}, "required"),
    ],
)
def test_a_bad_simulation_is_refused_with_a_clear_error_and_stores_nothing(
    instructor, lecture, index, data, message
):
    survey = lecture.surveys()[index]
    before = stored()
    response = instructor.post(reverse("classroom:simulate", args=[survey.id]), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert stored() == before


# Adding questions


def test_the_instructor_adds_each_kind_of_question(instructor, lecture):
    assert add(instructor, lecture, text="Ever lied to a doctor?").status_code == 302
    add(instructor, lecture, kind="choice", text="Year?", options="First\n\nSecond\nThird ")
    add(instructor, lecture, kind="number", text="Coffees today?", lower=0, upper=10)
    added = questions(lecture)[3:]
    assert [q.kind for q in added] == ["binary", "choice", "number"]
    assert added[1].options == ["First", "Second", "Third"]
    assert added[1].epsilon == pytest.approx(math.log(3))
    assert (added[2].design.lower, added[2].design.upper) == (0, 10)
    assert [s.position for s in lecture.steps.all()] == [0, 1, 2, 3, 4, 5]
    lecture.refresh_from_db()
    assert lecture.position == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"text": ""}, "This field is required"),
        ({"text": "x" * 501}, "at most 500 characters"),
        ({"kind": "essay"}, "Select a valid choice"),
        ({"kind": "choice", "options": "Only one"}, "between 2 and 10 options"),
        ({"kind": "choice", "options": "A\nA"}, "Each option appears once"),
        ({"kind": "choice", "options": "\n".join("abcdefghijk")}, "between 2 and 10 options"),
        ({"kind": "number", "lower": 5, "upper": 5}, "must be above the lowest"),
        ({"kind": "number", "lower": "", "upper": 5}, "needs its lowest and highest"),
        ({"kind": "number", "lower": 0, "upper": 10**9}, "upper"),
    ],
)
def test_a_bad_question_is_refused_with_a_clear_error_and_stores_nothing(
    instructor, lecture, fields, message
):
    before = stored(), lecture.steps.count()
    response = add(instructor, lecture, **fields)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert (stored(), lecture.steps.count()) == before


# Isolation


@pytest.mark.parametrize(
    ("name", "args"),
    [("classroom:session_move", ["next"]), ("classroom:session_add", [])],
)
def test_another_instructors_session_is_a_404_and_unchanged(client, outsider, lecture, name, args):
    client.force_login(outsider)
    before = stored(), lecture.steps.count()
    response = client.post(reverse(name, args=[lecture.id, *args]), {"text": "Mine now?"})
    assert response.status_code == 404
    lecture.refresh_from_db()
    assert (lecture.position, (stored(), lecture.steps.count())) == (0, before)
    for survey in lecture.surveys():
        assert client.get(reverse("classroom:controls", args=[survey.id])).status_code == 404


def test_a_logged_out_visitor_cannot_step_a_session(client, lecture):
    client.logout()
    response = client.post(reverse("classroom:session_move", args=[lecture.id, "next"]))
    assert response.status_code == 302 and "login" in response.url
    lecture.refresh_from_db()
    assert lecture.position == 0


def test_an_unknown_direction_is_a_404_and_changes_nothing(instructor, lecture):
    assert move(instructor, lecture, "sideways").status_code == 404
    lecture.refresh_from_db()
    assert lecture.position == 0


def test_stepping_refuses_get(instructor, lecture):
    url = reverse("classroom:session_move", args=[lecture.id, "next"])
    assert instructor.get(url).status_code == 405


def test_the_coins_explanation_is_only_for_yes_no_questions(client, lecture):
    first, second, _ = lecture.surveys()
    explain = reverse("classroom:explain")
    assert client.get(explain, {"s": first.slug}).status_code == 200
    assert client.get(explain, {"s": second.slug}).status_code == 404
    assert "classroom/explain" not in status_html(client, second)


def test_a_phone_is_told_which_question_of_the_lecture_it_is_on(client, lecture):
    assert "Question 2 of 3" in status_html(client, lecture.surveys()[1])


def test_the_classroom_page_lists_past_lectures_lessons_and_single_questions(
    instructor, lecture, owner, client
):
    lesson = Lesson.objects.create(owner=owner, kind=Lesson.Kind.LAPLACE)
    single = Survey.objects.create_classroom(owner, "Have you ever lied to a doctor?")
    page = instructor.get(reverse("classroom:index")).content.decode()
    # Every lesson and the lecture builder start from here (one click each).
    for kind in Lesson.Kind.values:
        assert reverse("classroom:lesson_start", args=[kind]) in page
    assert reverse("classroom:session_new") in page
    # The lecture is one entry holding its questions, each reopenable.
    lecture_entry = page.split(f'data-lecture="{lecture.id}"')[1].split("</ol>")[0]
    for survey in lecture.surveys():
        assert reverse("classroom:controls", args=[survey.id]) in lecture_entry
        assert reverse("classroom:join_screen", args=[survey.id]) in lecture_entry
    assert lecture.join_code in page
    # The lesson's lost remote link is found again, absolute, to open on a phone.
    remote = "http://testserver" + reverse("classroom:remote", args=[lesson.remote_token])
    assert remote in page and reverse("classroom:lesson_projector", args=[lesson.id]) in page
    assert reverse("classroom:controls", args=[single.id]) in page
    # A lecture's questions are not listed again as single questions.
    assert page.count(reverse("classroom:controls", args=[lecture.surveys()[1].id])) == 1


def test_the_classroom_page_shows_only_the_instructors_own(instructor, django_user_model):
    other = django_user_model.objects.create_user("someone-else", password="x")
    lesson = Lesson.objects.create(owner=other, kind=Lesson.Kind.LAPLACE)
    page = instructor.get(reverse("classroom:index")).content.decode()
    assert lesson.remote_token not in page


def test_home_and_menu_lead_a_logged_in_instructor_to_the_classroom(instructor, client):
    page = instructor.get("/").content.decode()
    assert page.count(f'href="{reverse("classroom:index")}"') == 2  # the menu and the card
    client.logout()
    response = client.get(reverse("classroom:index"))
    assert response.url.startswith(reverse("login"))


def test_one_export_holds_every_question_of_the_lecture(instructor, lecture):
    binary, choice, number = lecture.surveys()
    for survey, data in (
        (binary, {"n": 2000, "true_rate": 30}),
        (choice, {"n": 2000, "distribution": "10/20/30/40"}),
        (number, {"n": 2000, "mean": 7, "sd": 1.5}),
    ):
        instructor.post(reverse("classroom:simulate", args=[survey.id]), data)
    response = instructor.get(reverse("classroom:results_csv", args=[number.id]))
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    # One row for the yes/no question, one per option, one for the number.
    assert [r["question_number"] for r in rows] == ["1", "2", "2", "2", "2", "3"]
    assert {r["n"] for r in rows} == {"2000"} and {r["n_simulated"] for r in rows} == {"2000"}
    yes_no = rows[0]
    assert float(yes_no["ci_low"]) < float(yes_no["estimate"]) < float(yes_no["ci_high"])
    assert float(yes_no["epsilon"]) == pytest.approx(math.log(3))
    assert [r["option"] for r in rows[1:5]] == choice.questions.get().options
    assert sum(float(r["estimate"]) for r in rows[1:5]) == pytest.approx(1)
    # Laplace noise of scale 12 on 2000 students: the mean's standard error is about 0.38,
    # so these bounds are about eight standard errors wide and never flake.
    assert float(rows[5]["epsilon"]) == 1.0 and 4 < float(rows[5]["estimate"]) < 10


def test_each_chart_downloads_as_a_standalone_svg(instructor, lecture, client, outsider):
    for survey in lecture.surveys():
        response = instructor.get(reverse("classroom:chart_svg", args=[survey.id]))
        body = response.content.decode()
        assert response["Content-Type"].startswith("image/svg+xml")
        assert body.startswith('<?xml version="1.0"')
        assert '<svg xmlns="http://www.w3.org/2000/svg"' in body and "<style>" in body
        assert body.rstrip().endswith("</svg>")
        # A well-formed XML file (what an image viewer or a slide program opens).
        root = ElementTree.fromstring(response.content)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    client.force_login(outsider)
    first = lecture.surveys()[0]
    assert client.get(reverse("classroom:chart_svg", args=[first.id])).status_code == 404
    assert client.get(reverse("classroom:results_csv", args=[first.id])).status_code == 404


def test_lessons_and_lectures_leave_no_stray_rows_in_my_surveys(instructor):
    """Every lesson, a lecture and a single demo, started as an instructor would: My
    surveys holds the lecture once (its questions beneath it) and the demo, never a
    lesson's question; the Classroom page keeps that question under its lesson."""
    for kind in Lesson.Kind.values:
        instructor.post(reverse("classroom:lesson_start", args=[kind]))
    instructor.post(reverse("classroom:session_new"))
    instructor.post(reverse("classroom:new"), {"question": "Have you ever lied to a doctor?"})
    attack = Lesson.objects.get(kind=Lesson.Kind.ATTACK)
    lecture = Session.objects.get()
    demo = Survey.objects.get(title="Have you ever lied to a doctor?")
    page = instructor.get(reverse("survey:list")).content.decode()
    listed = [int(i) for i in re.findall(r'data-survey="(\d+)"', page)]
    assert sorted(listed) == sorted([demo.id, *(survey.id for survey in lecture.surveys())])
    assert page.count("data-lecture") == 1
    searched = instructor.get(reverse("survey:list"), {"q": attack.survey.title})
    assert f'data-survey="{attack.survey.id}"' not in searched.content.decode()
    # On the Classroom page the question sits under its lesson, with the lesson's remote.
    page = instructor.get(reverse("classroom:index")).content.decode()
    entry = page.split(f'data-lesson="{attack.id}"')[1].split("</li>")[0]
    assert attack.survey.title in entry and attack.remote_token in entry
    results = reverse("classroom:results_csv", args=[attack.survey.id])
    assert results in entry and instructor.get(results).status_code == 200
    assert f'data-lesson-question="{attack.survey.id}"' in entry
    # Not again among the single questions.
    assert reverse("classroom:controls", args=[attack.survey.id]) not in page
