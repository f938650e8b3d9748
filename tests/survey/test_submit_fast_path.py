"""The submit endpoint's fast path: plainly valid bodies stored before DRF runs.

It must never accept what the full path (:class:`SubmissionSerializer` and
:meth:`Survey.record_submission`) would refuse or store differently, the answer sheets it
caches must only be those that can no longer change, and its direct write must store
nothing unless the survey is open, unlocked and needs no invite.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import pytest
from django.db import connection
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.response import Response

from responses.answer_sheet import AnswerSheet
from responses.credentials import used_invites
from responses.fast_path import store_if_accepting
from responses.models import INBOXES, Receipt, SurveyCount, receipt_of
from responses.submit import MAX_ANSWERS, SubmissionSerializer, plainly_valid
from responses.write import record_submission
from survey.models import Invite, Survey
from tests.storage import (
    stored_answers,
    stored_count,
    stored_reports,
    tallied,
    tallied_total,
)

pytestmark = pytest.mark.django_db

CLASSIC = {"p_truth": 0.5, "p_yes": 0.5}
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def submit(client, survey: Survey, body: dict):
    url = reverse("api-submit", args=[survey.slug])
    return client.post(url, body, content_type="application/json")


def body_for(survey: Survey, value: int = 1, **extra) -> dict:
    answers = [{"question": q.id, "value": value} for q in survey.questions.all()]
    return {"submission_id": str(uuid.uuid4()), "answers": answers, **extra}


def stored() -> tuple[int, int, int]:
    """(submissions, answers, sum of the tallies)."""
    return (stored_count(), stored_answers(), tallied_total())


# Generated bodies ----------------------------------------------------------------------

JSON_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)
# What a number may turn into on its way from a hostile or sloppy client.
ODD_NUMBERS = (
    st.integers()
    | st.sampled_from([2**53 - 1, 2**53, -(2**53), 2**63, -(2**63), 2**64 + 1, 10**30])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, 1.0, -0.0])
    | st.booleans()
    | st.sampled_from(["0", "1", " 1", "1.0", "01", "+1", ""])
    | st.none()
    | st.lists(st.integers(0, 1), max_size=2)
)
# Other spellings of a random UUID that Python's uuid module reads, and near misses.
RESPELLED_SUBMISSION_IDS = (
    st.uuids(version=4).map(lambda u: u.hex)
    | st.uuids(version=4).map(lambda u: str(u).upper())
    | st.uuids(version=4).map(lambda u: f"{{{u}}}")
    | st.uuids(version=4).map(lambda u: f"urn:uuid:{u}")
    | st.uuids(version=4).map(lambda u: f" {u} ")
    | st.uuids(version=4).map(lambda u: f"{u}\n")
    | st.uuids(version=4).map(lambda u: str(u)[:-1])
    | st.uuids(version=1).map(str)
    | st.just(str(uuid.UUID(int=0)))
    | st.uuids().map(str)
)
ODD_SUBMISSION_IDS = (
    st.uuids(version=4).map(lambda u: u.int)
    | st.text(max_size=40)
    | st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
)

Mutation = Callable[[dict, st.DataObject, AnswerSheet], None]


def answer_list(body: dict) -> list:
    """The body's answers if they are still a list (an earlier mutation may have changed that)."""
    answers = body.get("answers")
    return answers if isinstance(answers, list) else []


def some_answer(body: dict, draw: st.DataObject) -> dict | None:
    answers = [a for a in answer_list(body) if isinstance(a, dict)]
    return draw.draw(st.sampled_from(answers)) if answers else None


def respelled_submission_id(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    body["submission_id"] = draw.draw(RESPELLED_SUBMISSION_IDS)


def odd_submission_id(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    body["submission_id"] = draw.draw(ODD_SUBMISSION_IDS)


def odd_value(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    if (answer := some_answer(body, draw)) is not None:
        answer["value"] = draw.draw(ODD_NUMBERS)


def odd_question(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    if (answer := some_answer(body, draw)) is not None:
        question = answer.get("question")
        known = question if type(question) is int else 0
        answer["question"] = draw.draw(
            ODD_NUMBERS
            | st.sampled_from([str(known), float(known), known + 2**64, -known, 10**9])
            | st.sampled_from(list(sheet.designs))
        )


def missing_key(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    if draw.draw(st.booleans()):
        body.pop(draw.draw(st.sampled_from(["submission_id", "answers"])), None)
    elif (answer := some_answer(body, draw)) is not None:
        answer.pop(draw.draw(st.sampled_from(["question", "value"])), None)


def extra_key(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    target = body if draw.draw(st.booleans()) else some_answer(body, draw)
    if target is not None:
        key = draw.draw(st.sampled_from(["extra", "padding", ""]) | st.text(max_size=10))
        target.setdefault(key, draw.draw(JSON_VALUE))


def invite(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    body["invite"] = draw.draw(st.text(max_size=12) | st.none() | st.integers())


def duplicate_answer(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    if (answer := some_answer(body, draw)) is not None:
        copy = dict(answer)
        if draw.draw(st.booleans()) and type(copy.get("value")) is int:
            copy["value"] = 1 - copy["value"]
        answer_list(body).append(copy)


def drop_answer(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    if answers := answer_list(body):
        answers.pop(draw.draw(st.integers(0, len(answers) - 1)))


def answer_not_an_object(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    if isinstance(answers := body.get("answers"), list):
        index = draw.draw(st.integers(0, len(answers)))
        if draw.draw(st.booleans()):
            answers.insert(index, draw.draw(JSON_SCALAR))
        elif index < len(answers):
            answers[index] = draw.draw(JSON_SCALAR)


def odd_answer_list(body: dict, draw: st.DataObject, sheet: AnswerSheet) -> None:
    answers = answer_list(body)
    body["answers"] = draw.draw(
        st.just([])
        | st.just(answers * (MAX_ANSWERS // max(len(answers), 1) + 1))
        | st.builds(dict)
        | JSON_SCALAR
    )


MUTATIONS: list[Mutation] = [
    respelled_submission_id,
    odd_submission_id,
    odd_value,
    odd_question,
    missing_key,
    extra_key,
    invite,
    duplicate_answer,
    drop_answer,
    answer_not_an_object,
    odd_answer_list,
]


def draw_body(data: st.DataObject, sheet: AnswerSheet) -> tuple[dict, bool]:
    """A body as respond.js sends it, then up to two mutations, as JSON would carry it;
    and whether it was left untouched."""
    order = data.draw(st.permutations(list(sheet.designs)))
    answers = [
        {"question": q, "value": data.draw(st.sampled_from(sheet.designs[q].output_values))}
        for q in order
    ]
    body = {"submission_id": str(data.draw(st.uuids(version=4))), "answers": answers}
    n_mutations = data.draw(st.integers(0, 2))
    for _ in range(n_mutations):
        data.draw(st.sampled_from(MUTATIONS))(body, data, sheet)
    return json.loads(json.dumps(body)), n_mutations == 0


def typed(values: dict) -> list[tuple]:
    """Equal only if the values are equal and of the same types too (1.0 == 1 == True)."""
    return [(q, type(q), v, type(v)) for q, v in values.items()]


@pytest.fixture
def sheet(make_survey, n_questions: int) -> AnswerSheet:
    """Built once per test, not per example: the examples only read it."""
    return AnswerSheet.for_slug(make_survey(n_questions=n_questions).slug)


@pytest.mark.parametrize("n_questions", [2, 3])
@PROPERTY
@given(data=st.data())
def test_what_plainly_valid_accepts_the_serializer_accepts_with_the_same_values(
    sheet: AnswerSheet, data: st.DataObject
):
    """The fast path stores what plainly_valid returns without asking the validator of
    record, so the two must never disagree; a body as respond.js sends it must be taken."""
    body, untouched = draw_body(data, sheet)
    plain = plainly_valid(body, sheet)
    if untouched:
        assert plain is not None
    if plain is not None:
        serializer = SubmissionSerializer(data=body, context={"sheet": sheet})
        assert serializer.is_valid(), serializer.errors
        validated = serializer.validated_data
        assert (validated["submission_id"], typed(validated["answers"])) == (
            plain[0],
            typed(plain[1]),
        )


# The answer-sheet cache ----------------------------------------------------------------


def test_a_sheet_is_read_afresh_until_the_survey_has_a_submission(client, survey):
    """Questions may still change before the first answer: a cached sheet would accept a
    body that leaves the new question out."""
    body = body_for(survey)
    first = AnswerSheet.for_slug(survey.slug)
    added = survey.questions.create(position=1, text="Added?", design_params=CLASSIC)
    assert set(AnswerSheet.for_slug(survey.slug).designs) == {*first.designs, added.id}
    response = submit(client, survey, body)
    assert response.status_code == 400
    assert "missing answers" in str(response.json()["answers"])
    assert stored() == (0, 0, 0)


def test_a_sheet_is_cached_once_the_survey_has_a_submission(
    client, survey, django_assert_num_queries
):
    """Frozen means fixed for good, so the endpoint validates without a query."""
    assert submit(client, survey, body_for(survey)).status_code == 201
    sheet = AnswerSheet.for_slug(survey.slug)
    with django_assert_num_queries(0):
        assert AnswerSheet.for_slug(survey.slug) is sheet
    assert sheet.survey_id == survey.id
    assert set(sheet.designs) == {survey.questions.get().id}


def test_a_deleted_survey_is_404_even_with_its_sheet_cached(
    client, survey, django_assert_num_queries
):
    """The cached sheet says what a body must hold, never that the survey still exists."""
    assert submit(client, survey, body_for(survey)).status_code == 201
    AnswerSheet.for_slug(survey.slug)
    with django_assert_num_queries(0):
        assert AnswerSheet.for_slug(survey.slug) is not None
    body = body_for(survey)
    survey.delete()
    response = submit(client, survey, body)
    assert response.status_code == 404
    assert stored() == (0, 0, 0)


# The direct write ----------------------------------------------------------------------


def values_of(survey: Survey, value: int = 1) -> dict[int, int]:
    return {q.id: value for q in survey.questions.all()}


def test_store_if_accepting_stores_the_submission_its_answers_and_tallies_once(make_survey):
    """One call is one respondent: a submission in the survey's current round, one answer
    per question and one count per answer."""
    survey = make_survey(n_questions=2, current_round=3)
    submission_id = uuid.uuid4()
    values = dict(zip(values_of(survey), [0, 1], strict=True))
    assert store_if_accepting(survey.id, submission_id, values, design=1) is True
    [row] = [row for inbox in INBOXES for row in inbox.objects.all()]
    # The client's id is kept as a digest, never as it was sent.
    assert row.receipt == receipt_of(submission_id) != submission_id
    assert (row.survey_id, row.round, row.simulated) == (survey.id, 3, False)
    assert stored_reports(survey, round=3) == [values]
    assert tallied(survey) == {qid: {value: 1} for qid, value in values.items()}
    assert stored() == (1, 2, 2)


@pytest.mark.parametrize(
    "fields",
    [
        {"status": Survey.Status.DRAFT},
        {"status": Survey.Status.CLOSED},
        {"is_locked": True},
        {"requires_invite": True},
    ],
    ids=["draft", "closed", "locked", "invite-only"],
)
def test_store_if_accepting_stores_nothing_for_a_survey_not_accepting_plain_answers(
    make_survey, fields: dict
):
    """Its checks are in the INSERT itself, so the caller never has to look first."""
    survey = make_survey(n_questions=2, **fields)
    assert store_if_accepting(survey.id, uuid.uuid4(), values_of(survey), design=1) is False
    assert stored() == (0, 0, 0)


def test_store_if_accepting_stores_nothing_for_a_survey_that_does_not_exist(survey):
    """A sheet cached in this process may outlive its survey."""
    values = values_of(survey)
    missing = Survey.objects.order_by("-id").first().id + 1000
    assert store_if_accepting(missing, uuid.uuid4(), values, design=1) is False
    assert stored() == (0, 0, 0)


def test_store_if_accepting_leaves_a_stored_submission_alone_on_a_retry(make_survey):
    """A retry, even one with other values, must neither count twice nor overwrite."""
    survey = make_survey(n_questions=2)
    submission_id = uuid.uuid4()
    assert store_if_accepting(survey.id, submission_id, values_of(survey, 1), design=1)
    counts = tallied(survey)
    assert store_if_accepting(survey.id, submission_id, values_of(survey, 0), design=1) is False
    assert stored() == (1, 2, 2)
    assert stored_reports(survey) == [values_of(survey, 1)]
    assert tallied(survey) == counts


# Through the endpoint ------------------------------------------------------------------


def test_a_plain_body_to_a_closed_survey_is_409_and_stores_nothing(client, make_survey):
    """The fast path stores nothing and hands over; the full path says why."""
    survey = make_survey(n_questions=2, status=Survey.Status.CLOSED)
    response = submit(client, survey, body_for(survey))
    assert response.status_code == 409
    assert stored() == (0, 0, 0)


@pytest.mark.parametrize("closed_between", [False, True], ids=["open", "closed-since"])
def test_a_retry_of_a_stored_body_is_200_with_the_same_receipt(
    client, make_survey, closed_between: bool
):
    """The phone may not have seen the first answer: the retry must not count again."""
    survey = make_survey(n_questions=2)
    body = body_for(survey)
    first = submit(client, survey, body)
    if closed_between:
        survey.close()
    retry = submit(client, survey, body)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json() == first.json()
    assert stored() == (1, 2, 2)


def test_an_invite_in_the_body_is_consumed_by_the_full_path(client, make_survey):
    """The fast path cannot check invites, so a body with one must still be stored, and
    the invite used up."""
    survey = make_survey(n_questions=2, requires_invite=True)
    (token,) = Invite.create_batch(survey, 1)
    response = submit(client, survey, body_for(survey, invite=token))
    assert isinstance(response, Response)
    assert response.status_code == 201
    assert used_invites(survey) == 1
    assert stored() == (1, 2, 2)


def test_the_fast_paths_receipt_is_the_full_paths_receipt(client, make_survey):
    """Clients cannot tell which path stored their answers: same status, type and body."""
    survey = make_survey(n_questions=2)
    plain = body_for(survey)
    # An (empty) invite field is valid but not plain: DRF's serializer stores this one.
    full = body_for(survey) | {"invite": ""}
    fast_response, full_response = submit(client, survey, plain), submit(client, survey, full)
    assert not isinstance(fast_response, Response)
    assert isinstance(full_response, Response)
    assert fast_response.status_code == full_response.status_code == 201
    assert fast_response["Content-Type"] == full_response["Content-Type"] == "application/json"
    assert fast_response.json() == {
        "submission_id": plain["submission_id"],
        "answers": 2,
        "status": "stored",
    }
    assert full_response.json() == {**fast_response.json(), "submission_id": full["submission_id"]}
    assert stored() == (2, 4, 4)


@pytest.mark.django_db(transaction=True)
def test_store_if_accepting_stores_nothing_for_an_answer_to_a_deleted_question(make_survey):
    """A question deleted while the first answers were on their way (here even behind
    the design version's back, with the designs read before): the write finds it is no
    longer the survey's and stores nothing, and the caller falls back to the full path."""
    survey = make_survey(n_questions=2)
    values = values_of(survey)
    survey.questions.first().delete()
    assert store_if_accepting(survey.id, uuid.uuid4(), values, design=1) is False
    assert stored() == (0, 0, 0)


def test_a_submission_writes_one_row_and_the_database_checks_no_key_for_it():
    """A submission is one row of the hour's table: checking its survey key would cost a
    trigger and a lock on the survey row (a trace of every respondent in the survey's
    row). The statement reads the survey's state itself instead, and deletes cascade
    through Django's collector."""
    with connection.cursor() as cursor:
        enforced = [
            (model._meta.db_table, constraint["columns"])
            for model in (*INBOXES, Receipt, SurveyCount)
            for constraint in connection.introspection.get_constraints(
                cursor, model._meta.db_table
            ).values()
            if constraint["foreign_key"]
        ]
    assert enforced == []


@pytest.mark.django_db(transaction=True)
def test_store_if_accepting_stores_nothing_for_an_answer_to_another_surveys_question(
    make_survey,
):
    """The database does not enforce the answers' keys (see survey.models): the write
    itself refuses a question that is not the survey's, even one that exists."""
    survey, other = make_survey(n_questions=2), make_survey(n_questions=1)
    values = values_of(survey)
    stray = other.questions.get()
    values[stray.id] = values.pop(next(iter(values)))
    assert store_if_accepting(survey.id, uuid.uuid4(), values, design=1) is False
    assert stored() == (0, 0, 0)


def test_an_id_already_used_by_another_survey_is_409_and_stores_nothing(client, make_survey):
    """A 200 "stored" would tell the client its answers are safe when they are not."""
    first, second = make_survey(n_questions=2), make_survey(n_questions=2)
    body = body_for(first)
    assert submit(client, first, body).status_code == 201
    body["answers"] = body_for(second)["answers"]
    response = submit(client, second, body)
    assert response.status_code == 409
    assert "another survey" in response.json()["submission_id"][0]
    assert stored_count(second) == 0
    assert stored() == (1, 2, 2)


def test_the_paper_form_with_an_id_used_by_another_survey_stores_the_answers_once(
    client, make_survey
):
    first, second = make_survey(n_questions=1), make_survey(n_questions=1)
    taken = uuid.uuid4()
    record_submission(first, taken, values_of(first))
    question = second.questions.get()
    form = {"submission_id": str(taken), f"reported_{question.id}": "1"}
    response = client.post(reverse("survey:respond_paper", args=[second.slug]), form)
    assert response.status_code == 200
    assert stored_count(second) == 1
