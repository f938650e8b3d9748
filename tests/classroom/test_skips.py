"""The classroom counts "prefer not to answer" apart: on the presenter for every kind of
question, and on the phones with the class result, never in the estimate."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from survey.models import Survey
from tests.classroom.test_views import poll, status, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def classroom(make_survey) -> Survey:
    return make_survey(mode=Survey.Mode.CLASSROOM)


def test_the_presenter_counts_skips_apart_from_the_answers(client, logged_in, classroom):
    for value in (1, 0, None, None):
        assert submit(client, classroom, value).status_code == 201
    page = logged_in.get(reverse("classroom:presenter", args=[classroom.id])).content.decode()
    assert "data-count>2<" in page
    assert "2 skipped, not in the estimate" in page
    etag = poll(logged_in, classroom)["ETag"]
    submit(client, classroom, None)
    again = poll(logged_in, classroom, if_none_match=etag)
    assert again.status_code == 200 and "3 skipped, not in the estimate" in again.content.decode()


def test_no_skip_no_mention(client, logged_in, classroom):
    submit(client, classroom, 1)
    page = logged_in.get(reverse("classroom:presenter", args=[classroom.id])).content.decode()
    assert "skipped" not in page


@pytest.mark.parametrize(
    ("kind", "options", "design", "params", "value"),
    [
        ("choice", ["a", "b", "c"], "k_rr", {"epsilon": 1.0}, 2),
        ("number", [], "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}, 4),
    ],
)
def test_phones_see_the_skips_with_the_class_result_in_their_language(
    client, logged_in, make_survey, kind, options, design, params, value
):
    classroom = make_survey(0, mode=Survey.Mode.CLASSROOM)
    classroom.questions.create(
        position=0,
        text="How often?",
        kind=kind,
        options=options,
        design_name=design,
        design_params=params,
    )
    for report in (value, None, None):
        assert submit(client, classroom, report).status_code == 201
    presenter = logged_in.get(reverse("classroom:presenter", args=[classroom.id]))
    assert "2 skipped, not in the estimate" in presenter.content.decode()
    classroom.reveal()
    german = status(client, classroom, accept_language="de").content.decode()
    assert "übersprungen: 2, nicht in der Schätzung" in german


def test_phones_see_the_skips_beside_the_yes_no_sentence_in_their_language(client, classroom):
    for report in (1, 0, 1, None, None, None):
        assert submit(client, classroom, report).status_code == 201
    classroom.reveal()
    english = status(client, classroom).content.decode()
    assert "from 3 answers" in english
    assert re.search(
        r"included\)\.<span data-skipped> 3 skipped, not in the estimate\.</span></p>", english
    )
    french = status(client, classroom, accept_language="fr").content.decode()
    assert "passées : 3, hors de l’estimation." in french


def test_phones_do_not_mention_skips_when_there_are_none(client, classroom):
    submit(client, classroom, 1)
    classroom.reveal()
    assert "skipped" not in status(client, classroom).content.decode()
