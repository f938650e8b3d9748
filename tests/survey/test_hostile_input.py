"""Hostile input to the public submit endpoint: a clear error, and nothing stored.

The named cases complete the catalogue of SPEC §3.1 in test_submit_api.py (invites,
content types, sizes, shapes); the hypothesis tests check the validator against an oracle.
"""

from __future__ import annotations

import json
import uuid

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from survey.api_public import MAX_ANSWERS
from survey.models import Answer, Invite, Submission, Survey, Tally

pytestmark = pytest.mark.django_db

HYPOTHESIS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def post(client, survey: Survey, raw: str | bytes, content_type: str = "application/json"):
    url = reverse("api-submit", args=[survey.slug])
    return client.generic("POST", url, raw, content_type=content_type)


def valid_body(survey: Survey, **extra) -> dict:
    answers = [{"question": q.id, "value": 1} for q in survey.questions.all()]
    return {"submission_id": str(uuid.uuid4()), "answers": answers, **extra}


def stored() -> tuple[int, int, int, int]:
    return (
        Submission.objects.count(),
        Answer.objects.count(),
        sum(Tally.objects.values_list("count", flat=True)),
        Invite.objects.filter(used=True).count(),
    )


@pytest.fixture(autouse=True)
def no_rate_limit(settings):
    settings.RATELIMIT_ENABLED = False


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "",
    ],
)
def test_a_body_that_is_not_declared_json_is_415(client, survey, content_type):
    response = post(client, survey, json.dumps(valid_body(survey)), content_type)
    assert response.status_code == 415
    assert "Unsupported media type" in response.json()["detail"]
    assert stored() == (0, 0, 0, 0)


def test_a_declared_length_over_64_kib_is_413_before_reading_the_body(client, survey):
    url = reverse("api-submit", args=[survey.slug])
    response = client.generic(
        "POST",
        url,
        json.dumps(valid_body(survey)),
        content_type="application/json",
        CONTENT_LENGTH=str(64 * 1024 + 1),
    )
    assert response.status_code == 413
    assert "at most 65536 bytes" in response.json()["detail"]
    assert stored() == (0, 0, 0, 0)


def test_a_body_of_exactly_64_kib_is_read(client, survey):
    body = valid_body(survey)
    body["padding"] = ""
    body["padding"] = "x" * (64 * 1024 - len(json.dumps(body)))
    response = post(client, survey, json.dumps(body))
    assert response.status_code == 201


def test_a_huge_number_of_answers_under_64_kib_is_400(client, survey):
    question = survey.questions.get().id
    body = valid_body(survey)
    body["answers"] = [{"question": question, "value": 1}] * 2000
    raw = json.dumps(body)
    assert len(raw) < 64 * 1024
    response = post(client, survey, raw)
    assert response.status_code == 400
    assert f"no more than {MAX_ANSWERS}" in str(response.json()["answers"])
    assert stored() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"a":' * 5000 + "1" + "}" * 5000, "nested too deeply"),
        ('{"submission_id": NaN}', "JSON parse error"),
        ("{nope", "JSON parse error"),
        ("null", "must be a JSON object"),
        ('"a string"', "must be a JSON object"),
        ("[1, 2, 3]", "must be a JSON object"),
        ("1e999", "must be a JSON object"),
    ],
    ids=["deep-array", "deep-object", "nan", "truncated", "null", "string", "array", "huge-float"],
)
def test_bodies_that_are_not_a_json_object_are_400(client, survey, raw, message):
    response = post(client, survey, raw)
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert stored() == (0, 0, 0, 0)


def test_bytes_that_are_not_utf8_are_400(client, survey):
    response = post(client, survey, b'{"submission_id": "\xff\xfe"}')
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]
    assert stored() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "value",
    [True, None, 0.5, -1, 2**63, "1; DROP TABLE survey_answer", [1], {"v": 1}],
    ids=["bool", "null", "half", "minus-one", "huge", "sql", "list", "object"],
)
def test_values_outside_the_designs_output_set_are_400(client, survey, value):
    body = valid_body(survey)
    body["answers"][0]["value"] = value
    response = post(client, survey, json.dumps(body))
    assert response.status_code == 400
    assert "answers" in response.json()
    assert stored() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "submission_id",
    ["", "0" * 32, str(uuid.UUID(int=0)), "g" * 32, 12345, None],
    ids=["empty", "zeros-hex", "nil-uuid", "not-hex", "number", "null"],
)
def test_submission_ids_that_are_not_a_random_uuid_are_400(client, survey, submission_id):
    body = valid_body(survey)
    body["submission_id"] = submission_id
    response = post(client, survey, json.dumps(body))
    assert response.status_code == 400
    assert "submission_id" in response.json()
    assert stored() == (0, 0, 0, 0)


@pytest.fixture
def invited_survey(make_survey) -> tuple[Survey, str]:
    survey = make_survey(requires_invite=True)
    used, _unused = Invite.create_batch(survey, 2)
    Invite.consume(survey, used)
    return survey, used


@pytest.mark.parametrize(
    "invite",
    [None, "", "never-issued", "USED"],
    ids=["absent", "blank", "unknown", "already-used"],
)
def test_a_bad_invite_is_403_and_stores_nothing(client, invited_survey, invite):
    survey, used = invited_survey
    body = valid_body(survey)
    if invite is not None:
        body["invite"] = used if invite == "USED" else invite
    response = post(client, survey, json.dumps(body))
    assert response.status_code == 403
    assert "invite" in response.json()
    assert stored() == (0, 0, 0, 1)


def test_an_invite_of_another_survey_is_403(client, make_survey, invited_survey):
    survey, _ = invited_survey
    other = make_survey(requires_invite=True)
    (token,) = Invite.create_batch(other, 1)
    response = post(client, survey, json.dumps(valid_body(survey, invite=token)))
    assert response.status_code == 403
    assert stored() == (0, 0, 0, 1)


# Property tests ------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@HYPOTHESIS
@given(data=JSON)
def test_arbitrary_json_is_never_a_server_error_and_stores_nothing(client, survey, data):
    response = post(client, survey, json.dumps(data))
    assert response.status_code == 400
    assert response.json()
    assert stored() == (0, 0, 0, 0)


@HYPOTHESIS
@given(
    fields=st.dictionaries(
        st.sampled_from(["submission_id", "answers", "invite", "extra"]), JSON, max_size=4
    )
)
def test_arbitrary_values_for_the_known_fields_are_400_naming_a_field(client, survey, fields):
    response = post(client, survey, json.dumps(fields))
    assert response.status_code == 400
    assert set(response.json()) <= {"submission_id", "answers", "invite", "detail"}
    assert stored() == (0, 0, 0, 0)


ANSWER = st.fixed_dictionaries(
    {"question": st.sampled_from([0, 1, 2, 3, 999]), "value": st.sampled_from([0, 1, 2, -1])}
)


@HYPOTHESIS
@example(
    answers=[{"question": 2, "value": 1}, {"question": 0, "value": 0}, {"question": 1, "value": 1}],
    random_uuid=True,
)
@given(
    answers=st.lists(ANSWER, max_size=6),
    random_uuid=st.booleans(),
)
def test_the_validator_accepts_exactly_the_well_formed_submissions(
    client, make_survey, answers, random_uuid
):
    """Oracle: one answer per question of the survey, each 0 or 1, and a uuid4."""
    survey = make_survey(n_questions=3)
    ids = [q.id for q in survey.questions.all()]
    # Index 3 and 999 stand for a question of another survey and one of no survey.
    others = make_survey().questions.get().id
    mapping = {0: ids[0], 1: ids[1], 2: ids[2], 3: others, 999: 10**9}
    sent = [{"question": mapping[a["question"]], "value": a["value"]} for a in answers]
    submission_id = uuid.uuid4() if random_uuid else uuid.uuid1()
    before = stored()
    response = post(
        client, survey, json.dumps({"submission_id": str(submission_id), "answers": sent})
    )
    well_formed = (
        random_uuid
        and sorted(a["question"] for a in sent) == sorted(ids)
        and all(a["value"] in (0, 1) for a in sent)
    )
    if well_formed:
        assert response.status_code == 201
        stored_values = dict(
            Answer.objects.filter(submission_id=submission_id).values_list("question_id", "value")
        )
        assert stored_values == {a["question"]: a["value"] for a in sent}
    else:
        assert response.status_code == 400
        assert stored() == before
