"""Respondent and student pages say their mathematics in words: no raw "e^ε" reaches
them, in any language."""

from __future__ import annotations

import pytest
from django.urls import reverse

from survey.models import Survey
from tests.survey.test_respondent_views import add_questions

pytestmark = pytest.mark.django_db

LANGUAGES = ["en", "de", "es", "fr"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_respondent_page_of_every_design_shows_no_caret(client, make_survey, language):
    survey = make_survey(0, language=language)
    add_questions(survey)
    survey.questions.create(
        position=20,
        text="Hours of sleep?",
        kind="number",
        design_name="one_bit",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 12},
    )
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "ε" in html and 'class="paper"' in html  # the no-JS form is on the same page
    assert "^" not in html


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_revealed_class_result_of_a_choice_question_shows_no_caret(
    client, make_survey, language
):
    classroom = make_survey(0, mode=Survey.Mode.CLASSROOM, language=language)
    classroom.questions.create(
        position=0,
        text="How often?",
        kind="choice",
        options=["Never", "Sometimes", "Often"],
        design_name="k_rr",
        design_params={"epsilon": 1.0986},
    )
    classroom.reveal()
    status = client.get(reverse("classroom:student_status", args=[classroom.slug]))
    html = status.content.decode()
    assert "data-class-result" in html and "ε" in html
    assert "^" not in html
    client.force_login(classroom.owner)
    join = client.get(reverse("classroom:join_screen", args=[classroom.id])).content.decode()
    assert "ε" in join and "^" not in join
