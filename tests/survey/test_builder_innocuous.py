"""The builder's innocuous-question field: shown only for the unrelated question with
unknown prevalence, required there (the message beside the field, nothing stored), saved
with the question."""

from __future__ import annotations

import pytest

from survey.models import Survey
from tests.survey.test_builder import add

pytestmark = pytest.mark.django_db

UQU = {
    "preset": "custom",
    "design_name": "unrelated_question_unknown",
    "p_truth": "0.3, 0.7",
    "arm_weights": "0.5, 0.5",
    "confirm_no_privacy": "on",
}
BORN = "Were you born in the first half of the year?"


@pytest.fixture
def draft(make_survey) -> Survey:
    return make_survey(n_questions=1, status=Survey.Status.DRAFT)


def redraw(logged_in, draft, **fields) -> str:
    return logged_in.post(
        f"/surveys/{draft.id}/question-form/?prefix=new",
        {f"new-{k}": v for k, v in {"text": "Shoplifted?", **fields}.items()},
    ).content.decode()


def test_the_field_is_shown_only_for_the_design_that_asks_it(logged_in, draft):
    assert "field-innocuous_text" in redraw(logged_in, draft, **UQU)
    assert "field-innocuous_text" not in redraw(logged_in, draft)


def test_the_question_is_saved_with_its_innocuous_question(logged_in, draft):
    assert add(logged_in, draft, innocuous_text=BORN, **UQU).status_code == 302
    question = draft.questions.last()
    assert question.innocuous_text == BORN
    assert question.design.asks_innocuous
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert BORN in page


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"innocuous_text": ""}, "innocuous_text", "give its wording"),
        ({"innocuous_text": "  "}, "innocuous_text", "give its wording"),
        ({"innocuous_text": BORN, "p_truth": "0.5, 0.5"}, "p_truth", "different probabilities"),
        ({"innocuous_text": BORN, "confirm_no_privacy": ""}, "confirm_no_privacy", "ε = ∞"),
    ],
)
def test_bad_input_is_shown_beside_its_field_and_stores_nothing(
    logged_in, draft, fields, field, message
):
    version = Survey.objects.get(pk=draft.pk).design_version
    response = add(logged_in, draft, htmx=True, **(UQU | fields))
    page = response.content.decode()
    assert response.status_code == 400
    beside = page.split(f'class="field field-{field} has-error"', 1)[1].split("</div>", 1)[0]
    assert message in beside, beside
    assert draft.questions.count() == 1
    assert Survey.objects.get(pk=draft.pk).design_version == version


def test_editing_to_another_design_drops_the_innocuous_questions_translations(logged_in, draft):
    question = draft.questions.get()
    question.design_name = "unrelated_question_unknown"
    question.design_params = {"p_truth": [0.3, 0.7], "arm_weights": [0.5, 0.5]}
    question.innocuous_text = BORN
    question.texts = {"de": {"text": "Gestohlen?", "innocuous_text": "Geboren?"}}
    question.save()
    data = {f"q{question.id}-text": "Shoplifted?", f"q{question.id}-preset": "classic"}
    response = logged_in.post(f"/surveys/{draft.id}/questions/{question.id}/", data)
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.innocuous_text == "" and question.texts == {"de": {"text": "Gestohlen?"}}
