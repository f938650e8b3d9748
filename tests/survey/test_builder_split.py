"""The builder's split-ballot field: saved on a randomized yes/no question, every bad
value shown beside the field with nothing stored."""

from __future__ import annotations

import pytest

from survey.models import Survey
from tests.survey.test_builder import add

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(make_survey) -> Survey:
    return make_survey(n_questions=1, status=Survey.Status.DRAFT)


def test_a_split_ballot_is_saved_with_its_share(logged_in, draft):
    assert add(logged_in, draft, direct_share="0.2").status_code == 302
    question = draft.questions.last()
    assert question.direct_share == 0.2 and question.design.arm_weights == (0.8, 0.2)
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "Split ballot: share asked directly" in page
    assert "without privacy for this question" in page


def test_an_empty_share_randomizes_for_everyone(logged_in, draft):
    assert add(logged_in, draft, direct_share="").status_code == 302
    assert draft.questions.last().direct_share is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"direct_share": "0"}, "between 0 and 1"),
        ({"direct_share": "1"}, "between 0 and 1"),
        ({"direct_share": "-0.5"}, "between 0 and 1"),
        ({"direct_share": "half"}, "Enter a number between 0 and 1"),
    ],
)
def test_a_bad_share_is_shown_beside_its_field_and_stores_nothing(
    logged_in, draft, fields, message
):
    version = Survey.objects.get(pk=draft.pk).design_version
    response = add(logged_in, draft, htmx=True, **fields)
    page = response.content.decode()
    assert response.status_code == 400
    beside = page.split('class="field field-direct_share has-error"', 1)[1].split("</div>", 1)[0]
    assert message in beside and 'aria-invalid="true"' in beside
    assert draft.questions.count() == 1
    assert Survey.objects.get(pk=draft.pk).design_version == version


def redraw(logged_in, draft, text: str, fields: dict) -> str:
    """The new-question form as the builder redraws it for ``fields``."""
    data = {f"new-{k}": v for k, v in {"text": text, **fields}.items()}
    url = f"/surveys/{draft.id}/question-form/?prefix=new"
    return logged_in.post(url, data).content.decode()


def test_choice_and_number_questions_take_a_share_and_designs_with_arms_none(logged_in, draft):
    fields = {"kind": "choice", "preset": "custom", "design_name": "k_rr", "epsilon": "1"}
    redrawn = redraw(logged_in, draft, "Faculty?", fields)
    assert "field-options" in redrawn and "field-direct_share" in redrawn
    assert add(logged_in, draft, options="a\nb", direct_share="0.2", **fields).status_code == 302
    assert draft.questions.last().direct_share == 0.2
    page = logged_in.get(f"/surveys/{draft.id}/edit/")
    assert page.status_code == 200 and "Split ballot: share asked directly" in page.content.decode()
    number = {"kind": "number", "preset": "custom", "design_name": "laplace", "epsilon": "1"}
    number |= {"lower": "0", "upper": "10"}
    redrawn = redraw(logged_in, draft, "Hours?", number)
    assert "field-lower" in redrawn and "field-direct_share" in redrawn
    assert add(logged_in, draft, direct_share="0.3", **number).status_code == 302
    assert draft.questions.last().direct_share == 0.3
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "split ballot: 30 % asked directly" in page
    one_bit = number | {"design_name": "one_bit"}
    redrawn = redraw(logged_in, draft, "Drinks?", one_bit)
    assert "field-lower" in redrawn and "field-direct_share" in redrawn
    assert add(logged_in, draft, direct_share="0.2", **one_bit).status_code == 302
    assert draft.questions.last().direct_share == 0.2
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "split ballot: 20 % asked directly" in page
    sld = {"kind": "binary", "preset": "custom", "design_name": "stochastic_lie_detector"}
    sld |= {"p": "0.2, 0.8", "arm_weights": "0.5, 0.5", "confirm_no_privacy": "on"}
    redrawn = redraw(logged_in, draft, "Voted?", sld)
    assert "field-p" in redrawn and "field-direct_share" not in redrawn


def test_a_frozen_split_question_says_its_share_in_words(logged_in, draft):
    from responses.write import bulk_record

    question = draft.questions.get()
    question.direct_share = 0.2
    question.save()
    bulk_record(draft, [{question.id: 3}], simulated=False)
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "split ballot: 20 % asked directly (no privacy for them on this question)" in page


SPLIT = {"text": "Cheated?", "kind": "binary", "direct_share": 0.2}


def test_a_classroom_survey_refuses_a_split_ballot_by_name(api):
    body = {"title": "Lecture", "mode": "classroom", "questions": [{"text": "Age?"}, SPLIT]}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 400
    assert "one result on the projector" in response.json()["questions[1].direct_share"][0]
    assert not Survey.objects.exists()


def test_a_survey_with_a_split_ballot_cannot_become_a_classroom_one(api, logged_in):
    made = api.post("/api/surveys/", {"title": "Study", "questions": [SPLIT]}, format="json")
    survey = Survey.objects.get(id=made.json()["id"])
    switched = api.patch(f"/api/surveys/{survey.id}/", {"mode": "classroom"}, format="json")
    assert switched.status_code == 400 and "questions[0].direct_share" in switched.json()
    data = {"title": "Study", "description": "", "mode": "classroom"}
    page = logged_in.post(f"/surveys/{survey.id}/edit/", data)
    assert page.status_code == 400 and "one result on the projector" in page.content.decode()
    assert Survey.objects.get(id=survey.id).mode == Survey.Mode.RESEARCH


def test_a_classroom_builder_offers_no_share_field(logged_in, make_survey):
    lecture = make_survey(n_questions=0, status=Survey.Status.DRAFT, mode="classroom")
    page = logged_in.get(f"/surveys/{lecture.id}/edit/").content.decode()
    assert "field-direct_share" not in page
    assert add(logged_in, lecture, direct_share="0.2").status_code == 302
    assert lecture.questions.get().direct_share is None
