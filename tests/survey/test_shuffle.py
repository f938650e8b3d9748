"""Question and option order shuffled on the device: the settings, what the codebook and
the statistics files say, and the no-JavaScript page in the survey's own order. (That the
server never learns the order shown is tested in a real browser: tests/browser/test_order.py.)"""

from __future__ import annotations

import pytest

from responses.statfiles import _file_note, design_summary
from survey.codebook import SHUFFLED_OPTIONS, SHUFFLED_QUESTIONS, codebook
from survey.models import Survey

pytestmark = pytest.mark.django_db

YEAR = {
    "text": "Year of study?",
    "kind": "choice",
    "options": ["First", "Second", "Later"],
    "design": {"name": "direct"},
    "not_sensitive": True,
    "shuffle_options": True,
}
CHEATED = {"text": "Have you cheated in an exam?"}
PAPER_NOTE = "This form shows the questions and options in the survey's own order."


def create(api, questions, **fields):
    body = {"title": "Exams", "questions": questions, **fields}
    return api.post("/api/surveys/", body, format="json")


def test_the_api_stores_and_returns_both_shuffles(api):
    response = create(api, [CHEATED, YEAR], shuffle_questions=True)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["shuffle_questions"] is True
    assert [q["shuffle_options"] for q in body["questions"]] == [False, True]
    survey = Survey.objects.get()
    assert survey.shuffle_questions
    assert [q.shuffle_options for q in survey.questions.all()] == [False, True]


def test_new_surveys_keep_their_order_unless_asked(api):
    body = create(api, [CHEATED, YEAR | {"shuffle_options": False}]).json()
    assert body["shuffle_questions"] is False
    assert [q["shuffle_options"] for q in body["questions"]] == [False, False]


def test_a_patch_that_leaves_shuffle_options_out_keeps_it(api):
    create(api, [CHEATED, YEAR])
    survey = Survey.objects.get()
    year = survey.questions.get(kind="choice")
    items = [{"id": q.id} for q in survey.questions.all()]
    items[1]["text"] = "Your year of study?"
    response = api.patch(f"/api/surveys/{survey.id}/", {"questions": items}, format="json")
    assert response.status_code == 200, response.json()
    year.refresh_from_db()
    assert (year.text, year.shuffle_options) == ("Your year of study?", True)


def test_shuffling_a_yes_no_question_is_refused_naming_the_field(api):
    response = create(api, [CHEATED | {"shuffle_options": True}])
    assert response.status_code == 400
    assert response.json()["questions"]["0"]["shuffle_options"] == [
        "a binary question has no options to shuffle"
    ]
    assert not Survey.objects.exists()


def test_the_codebook_says_what_was_shuffled(make_survey):
    survey = make_survey(1, shuffle_questions=True)
    survey.questions.create(
        position=1,
        text="Year?",
        kind="choice",
        options=["a", "b"],
        design_name="direct",
        design_params={},
        shuffle_options=True,
    )
    book = codebook(survey)
    assert (book["shuffle_questions"], book["question_order"]) == (True, SHUFFLED_QUESTIONS)
    plain, shuffled = book["questions"]
    assert (plain["shuffle_options"], shuffled["shuffle_options"]) == (False, True)
    assert shuffled["option_order"] == SHUFFLED_OPTIONS
    assert "order listed here" in plain["option_order"]
    unshuffled = codebook(make_survey(1))
    assert unshuffled["shuffle_questions"] is False
    assert unshuffled["question_order"] == "shown in the order listed here"


def test_the_statistics_files_say_what_was_shuffled(make_survey):
    survey = make_survey(1, shuffle_questions=True)
    year = survey.questions.create(
        position=1,
        text="Year?",
        kind="choice",
        options=["a", "b"],
        design_name="k_rr",
        design_params={"epsilon": 1.0},
        shuffle_options=True,
    )
    assert design_summary(year).endswith("; options shuffled")
    assert "shuffled" not in design_summary(survey.questions.first())
    assert "random order on each device" in _file_note(survey)
    assert "random order" not in _file_note(make_survey(1))


def test_the_builder_saves_the_question_order_setting(logged_in, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    data = {"title": survey.title, "mode": "research", "language": "en", "allow_skip": "on"}
    response = logged_in.post(f"/surveys/{survey.id}/edit/", data | {"shuffle_questions": "on"})
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.shuffle_questions
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert "Shuffle the question order on each respondent" in page


def test_the_builder_shuffles_a_choice_questions_options_only(logged_in, make_survey):
    survey = make_survey(0, status=Survey.Status.DRAFT)
    fields = {"kind": "choice", "preset": "choice_ln3", "options": "a\nb\nc"}
    data = {f"new-{k}": v for k, v in ({"text": "How often?"} | fields).items()}
    response = logged_in.post(
        f"/surveys/{survey.id}/questions/", data | {"new-shuffle_options": "on"}
    )
    assert response.status_code == 302
    question = survey.questions.get()
    assert question.shuffle_options
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert f'name="q{question.id}-shuffle_options"' in page
    assert 'name="new-shuffle_options"' not in page  # a new question starts as yes/no
    yes_no = {"new-text": "Cheated?", "new-kind": "binary", "new-preset": "classic"}
    logged_in.post(f"/surveys/{survey.id}/questions/", yes_no | {"new-shuffle_options": "on"})
    assert survey.questions.get(kind="binary").shuffle_options is False


def test_the_respondent_page_marks_what_its_script_shuffles(client, make_survey):
    survey = make_survey(1, shuffle_questions=True)
    survey.questions.create(
        position=1,
        text="Year?",
        kind="choice",
        options=["a", "b"],
        design_name="direct",
        design_params={},
        shuffle_options=True,
    )
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "data-shuffle-questions" in html
    assert html.count("data-shuffle>") == 1
    assert PAPER_NOTE in html


def test_a_survey_in_its_own_order_says_nothing_of_shuffling(client, make_survey):
    html = client.get(make_survey(2).get_absolute_url()).content.decode()
    assert "data-shuffle" not in html and PAPER_NOTE not in html


def test_the_no_javascript_note_is_translated(client, make_survey):
    survey = make_survey(1, shuffle_questions=True, language="de")
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "Dieses Formular zeigt die Fragen und Optionen in der Reihenfolge" in html


def test_a_copy_keeps_the_order_settings(make_survey, owner):
    survey = make_survey(0, shuffle_questions=True)
    survey.questions.create(
        position=0,
        text="Year?",
        kind="choice",
        options=["a", "b"],
        design_name="direct",
        design_params={},
        shuffle_options=True,
    )
    copy = survey.duplicate(owner)
    assert copy.shuffle_questions and copy.questions.get().shuffle_options
