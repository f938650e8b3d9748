"""The researcher API (SPEC §3.1): every endpoint, every error, responses match the schema."""

from __future__ import annotations

import math
import uuid

import numpy as np
import pytest
from rest_framework.test import APIClient

from responses.write import record_submission, simulate_respondents
from survey.models import Invite, Question, Survey
from tests.storage import nothing_stored, stored_count, use_invite
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

LN3 = math.log(3)


def survey_body(*designs: dict, **fields) -> dict:
    designs = designs or ({"name": "forced_response", "p_truth": 0.5, "p_yes": 0.5},)
    return {
        "title": "Exam honesty",
        "description": "Three sensitive questions",
        "mode": "research",
        "questions": [
            {"text": f"Question {i + 1}?", "kind": "binary", "design": design}
            for i, design in enumerate(designs)
        ],
        **fields,
    }


def create(api, *designs, **fields):
    return api.post("/api/surveys/", survey_body(*designs, **fields), format="json")


def answer(survey: Survey, *values: int, simulated: bool = False) -> None:
    questions = list(survey.questions.all())
    record_submission(
        survey,
        uuid.uuid4(),
        dict(zip([q.id for q in questions], values, strict=True)),
        simulated=simulated,
    )


def test_a_token_from_username_and_password_authenticates(client, owner, make_survey):
    make_survey()
    token = client.post(
        "/api/auth/token/", {"username": "owner", "password": "owner-password-1"}
    ).json()["token"]
    api = APIClient()
    assert api.get("/api/surveys/").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = api.get("/api/surveys/")
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_it_creates_a_survey_with_nested_questions(api, owner):
    response = create(
        api,
        {"name": "forced_response", "p_truth": 0.5, "p_yes": 0.5},
        {"name": "mirrored", "p": 0.75},
        {"name": "unrelated_question", "p_truth": 0.5, "pi": 0.0833},
    )
    assert response.status_code == 201
    assert_matches_schema(response, "/api/surveys/", "post")
    body = response.json()
    survey = Survey.objects.get(id=body["id"])
    assert survey.owner == owner
    assert (body["slug"], body["join_code"], body["status"]) == (
        survey.slug,
        survey.join_code,
        "draft",
    )
    epsilons = [q["epsilon"] for q in body["questions"]]
    assert epsilons[:2] == pytest.approx([LN3, LN3])
    assert body["epsilon_total"] == pytest.approx(sum(epsilons))
    assert [q["id"] for q in body["questions"]] == list(
        survey.questions.values_list("id", flat=True)
    )
    assert body["questions"][2]["design"] == {
        "name": "unrelated_question",
        "p_truth": 0.5,
        "pi": 0.0833,
    }
    assert body["no_privacy"] is False


def test_a_design_without_parameters_is_the_classic_two_coins(api):
    body = api.post(
        "/api/surveys/", {"title": "T", "questions": [{"text": "Q?"}]}, format="json"
    ).json()
    assert body["questions"][0]["design"] == {
        "name": "forced_response",
        "p_truth": 0.5,
        "p_yes": 0.5,
    }
    assert body["questions"][0]["epsilon"] == pytest.approx(LN3)


@pytest.mark.parametrize(
    ("design", "field", "message"),
    [
        ({"name": "forced_response", "p_truth": 1.5}, "p_truth", "p_truth must be a probability"),
        ({"name": "mirrored", "p": -0.1}, "p", "p must be a probability"),
        ({"name": "mirrored", "p": 0.5}, "non_field_errors", "nothing can be estimated"),
        ({"name": "dice"}, "name", "unknown design 'dice' for a binary question"),
        ({"name": "mirrored", "p_truth": 0.5}, "p_truth", "mirrored takes no parameter p_truth"),
        ({"name": "mirrored", "colour": "red"}, "colour", "takes no parameter colour; it takes p"),
        ({"name": "forced_response", "p_yes": "lots"}, "p_yes", "p_yes must be a number"),
        ({"p": 0.7}, "name", "a design needs a name"),
    ],
)
def test_a_bad_design_is_a_400_naming_the_field_and_stores_nothing(api, design, field, message):
    response = create(api, design)
    assert response.status_code == 400
    errors = response.json()["questions"]["0"]["design"]
    assert message in " ".join(errors[field])
    assert not Survey.objects.exists()
    assert not Question.objects.exists()


def test_a_design_without_privacy_needs_acknowledgement(api):
    response = create(api, {"name": "forced_response", "p_yes": 1.0})
    assert response.status_code == 400
    assert "no privacy (ε = ∞)" in str(response.json()["questions"]["0"]["design"])
    assert not Survey.objects.exists()


def test_no_privacy_is_saved_only_with_acknowledgement_and_shown_as_null(api):
    response = api.post(
        "/api/surveys/",
        {
            "title": "Direct question",
            "questions": [
                {"text": "Q?", "design": {"name": "mirrored", "p": 1.0}, "allow_no_privacy": True}
            ],
        },
        format="json",
    )
    assert response.status_code == 201
    assert_matches_schema(response, "/api/surveys/", "post")
    body = response.json()
    assert (body["epsilon_total"], body["no_privacy"]) == (None, True)
    assert (body["questions"][0]["epsilon"], body["questions"][0]["no_privacy"]) == (None, True)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"questions": []}, "title"),
        ({"title": "T", "mode": "lecture"}, "mode"),
        ({"title": "T", "questions": [{"design": {"name": "mirrored"}}]}, "questions"),
        ({"title": "T", "questions": [{"id": 5, "text": "Q?"}]}, "questions"),
        ({"title": "T", "questions": "many"}, "questions"),
    ],
)
def test_a_malformed_survey_is_a_400_naming_the_field(api, body, field):
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Survey.objects.exists()


def test_the_list_is_paginated_and_holds_only_your_surveys(api, make_survey, outsider):
    mine = make_survey()
    make_survey(owner=outsider)
    response = api.get("/api/surveys/")
    assert_matches_schema(response, "/api/surveys/", "get")
    body = response.json()
    assert body["count"] == 1
    assert [s["id"] for s in body["results"]] == [mine.id]


def test_it_retrieves_a_survey(api, survey):
    response = api.get(f"/api/surveys/{survey.id}/")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{id}/", "get")
    assert response.json()["respond_url"] == f"http://testserver/s/{survey.slug}/"


def test_patch_changes_only_the_fields_sent(api, survey):
    response = api.patch(f"/api/surveys/{survey.id}/", {"title": "Renamed"}, format="json")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{id}/", "patch")
    survey.refresh_from_db()
    assert (survey.title, survey.questions.count()) == ("Renamed", 1)


def test_patch_questions_updates_reorders_adds_and_deletes(api, make_survey):
    survey = make_survey(n_questions=3, status=Survey.Status.DRAFT)
    q1, q2, _ = survey.questions.all()
    questions = [
        {"id": q2.id, "text": "Second, now first?", "design": {"name": "mirrored", "p": 0.8}},
        {"id": q1.id, "text": q1.text},
        {"text": "A new one?"},
    ]
    response = api.patch(f"/api/surveys/{survey.id}/", {"questions": questions}, format="json")
    assert response.status_code == 200
    texts = [(q.id, q.text, q.design_name) for q in survey.questions.all()]
    assert texts[:2] == [
        (q2.id, "Second, now first?", "mirrored"),
        (q1.id, q1.text, "forced_response"),
    ]
    assert texts[2][1] == "A new one?"
    assert survey.questions.count() == 3
    assert [q["text"] for q in response.json()["questions"]] == [t[1] for t in texts]


def test_patch_with_another_surveys_question_id_is_a_400(api, make_survey):
    survey, other = make_survey(), make_survey()
    foreign = other.questions.get()
    response = api.patch(
        f"/api/surveys/{survey.id}/",
        {"questions": [{"id": foreign.id, "text": "Stolen?"}]},
        format="json",
    )
    assert response.status_code == 400
    assert "not in this survey" in str(response.json()["questions"])
    assert Question.objects.get(id=foreign.id).survey == other


def test_designs_are_frozen_after_the_first_answer(api, survey):
    answer(survey, 1)
    response = api.patch(
        f"/api/surveys/{survey.id}/",
        {"questions": [{"text": "Q?", "design": {"name": "mirrored", "p": 0.9}}]},
        format="json",
    )
    assert response.status_code == 409
    assert "frozen" in response.json()["detail"]
    question = survey.questions.get()
    assert (question.design_name, question.design_params) == (
        "forced_response",
        {"p_truth": 0.5, "p_yes": 0.5},
    )
    assert (
        api.patch(f"/api/surveys/{survey.id}/", {"title": "New"}, format="json").status_code == 200
    )


def test_put_is_not_offered(api, survey):
    assert api.put(f"/api/surveys/{survey.id}/", survey_body(), format="json").status_code == 405


def test_open_and_close_follow_the_lifecycle(api, make_survey):
    survey = make_survey(status=Survey.Status.DRAFT)
    assert api.post(f"/api/surveys/{survey.id}/close/").status_code == 409
    response = api.post(f"/api/surveys/{survey.id}/open/")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{id}/open/", "post")
    assert response.json()["status"] == "open"
    again = api.post(f"/api/surveys/{survey.id}/open/")
    assert again.status_code == 409
    assert_matches_schema(again, "/api/surveys/{id}/open/", "post")
    assert api.post(f"/api/surveys/{survey.id}/close/").json()["status"] == "closed"
    assert api.post(f"/api/surveys/{survey.id}/open/").json()["status"] == "open"


def test_a_survey_without_questions_cannot_be_opened(api, make_survey):
    survey = make_survey(n_questions=0, status=Survey.Status.DRAFT)
    response = api.post(f"/api/surveys/{survey.id}/open/")
    assert response.status_code == 409
    assert "at least one question" in response.json()["detail"]
    survey.refresh_from_db()
    assert survey.status == "draft"


def test_export_has_one_row_per_real_submission_and_a_column_per_question(api, make_survey):
    survey = make_survey(n_questions=2)
    answer(survey, 1, 0)
    answer(survey, 0, 0)
    simulate_respondents(survey, 50, 0.3, np.random.default_rng(1))
    response = api.get(f"/api/surveys/{survey.id}/export.csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{id}/export.csv/", "get")
    assert response["Content-Disposition"].startswith("attachment")
    lines = response.content.decode().splitlines()
    assert lines[0] == "round,q1,q2"
    assert sorted(lines[1:]) == ["1,0,0", "1,1,0"]


def test_the_codebook_has_every_design_parameter(api):
    survey_id = create(api, {"name": "forced_response"}, {"name": "mirrored", "p": 0.75}).json()[
        "id"
    ]
    response = api.get(f"/api/surveys/{survey_id}/codebook.json")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{id}/codebook.json/", "get")
    book = response.json()
    first, second = book["questions"]
    assert first["column"] == "q1"
    assert first["design"] == {"name": "forced_response", "p_truth": 0.5, "p_yes": 0.5}
    assert (first["t"], first["c"], first["p_yes_given_1"]) == (0.5, 0.25, 0.75)
    assert second["design"] == {"name": "mirrored", "p": 0.75}
    assert second["t"] == pytest.approx(0.5)
    assert second["c"] == pytest.approx(0.25)
    assert book["epsilon_total"] == pytest.approx(2 * LN3)


def test_estimates_csv_has_the_estimates_endpoints_numbers(api, survey):
    simulate_respondents(survey, 400, 0.3, np.random.default_rng(2))
    response = api.get(f"/api/surveys/{survey.id}/estimates.csv?level=0.9&method=exact")
    assert response.status_code == 200
    header, row = response.content.decode().splitlines()
    estimates = api.get(f"/api/surveys/{survey.id}/estimates/?level=0.9&method=exact").json()
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert float(values["ci_low"]) == pytest.approx(estimates["questions"][0]["ci_low"])
    assert values["method"] == "exact"


def test_estimates_csv_rejects_a_bad_level(api, survey):
    response = api.get(f"/api/surveys/{survey.id}/estimates.csv?level=2")
    assert response.status_code == 400
    assert "level" in str(response.json())


def test_it_imports_a_csv_body(api, make_survey):
    survey = make_survey(n_questions=2)
    response = api.post(
        f"/api/surveys/{survey.id}/import/", "q1,q2\n1,0\n0,0\n1,1\n", content_type="text/csv"
    )
    assert response.status_code == 201
    assert_matches_schema(response, "/api/surveys/{id}/import/", "post")
    assert response.json() == {"imported": 3}
    assert stored_count(simulated=False) == 3


def test_it_imports_a_multipart_file(api, make_survey):
    from django.core.files.uploadedfile import SimpleUploadedFile

    survey = make_survey(n_questions=1)
    upload = SimpleUploadedFile("dice.csv", b"round,q1\n1,1\n1,0\n", content_type="text/csv")
    response = api.post(f"/api/surveys/{survey.id}/import/", {"file": upload}, format="multipart")
    assert response.status_code == 201
    assert response.json() == {"imported": 2}


@pytest.mark.parametrize(
    ("csv", "errors"),
    [
        ("q1,q2\n1,0\n2,0\n1,yes\n", [(3, "q1 must be 0 or 1"), (4, "q2 must be 0 or 1")]),
        ("q1,q2\n1,0\n1\n", [(3, "expected 2 values, found 1")]),
        ("q1\n1\n", [(1, "missing column(s) q2")]),
        ("q1,q2,q3\n1,0,1\n", [(1, "unknown column(s) q3")]),
        ("q1,q2\n", [(2, "no rows")]),
        ("", [(1, "the file is empty")]),
    ],
)
def test_an_import_with_errors_names_the_lines_and_stores_nothing(api, make_survey, csv, errors):
    survey = make_survey(n_questions=2)
    response = api.post(f"/api/surveys/{survey.id}/import/", csv, content_type="text/csv")
    assert response.status_code == 400
    assert_matches_schema(response, "/api/surveys/{id}/import/", "post")
    got = response.json()["errors"]
    assert [e["line"] for e in got] == [line for line, _ in errors]
    for error, (_, message) in zip(got, errors, strict=True):
        assert message in error["message"]
    assert nothing_stored()


def test_an_import_that_is_not_utf8_is_a_400(api, survey):
    response = api.post(f"/api/surveys/{survey.id}/import/", b"q1\n\xff\n", content_type="text/csv")
    assert response.status_code == 400
    assert "UTF-8" in response.json()["detail"]
    assert nothing_stored()


def test_an_import_without_a_file_is_a_400(api, survey):
    response = api.post(f"/api/surveys/{survey.id}/import/", {}, format="multipart")
    assert response.status_code == 400
    assert_matches_schema(response, "/api/surveys/{id}/import/", "post")
    assert "multipart field 'file'" in response.json()["detail"]
    assert nothing_stored()


def test_invites_are_created_once_and_only_counted_afterwards(api, make_survey):
    survey = make_survey(requires_invite=True)
    response = api.post(f"/api/surveys/{survey.id}/invites/", {"n": 3}, format="json")
    assert response.status_code == 201
    assert_matches_schema(response, "/api/surveys/{id}/invites/", "post")
    tokens = response.json()["tokens"]
    assert len(set(tokens)) == 3
    assert response.json()["urls"][0] == f"http://testserver/s/{survey.slug}/?invite={tokens[0]}"
    assert use_invite(survey, tokens[0])
    counts = api.get(f"/api/surveys/{survey.id}/invites/")
    assert_matches_schema(counts, "/api/surveys/{id}/invites/", "get")
    assert counts.json() == {"total": 3, "used": 1, "unused": 2}
    assert not any(t in str(counts.json()) for t in tokens)


@pytest.mark.parametrize("n", [0, -1, 10_001, "ten"])
def test_a_bad_invite_count_is_a_400(api, survey, n):
    response = api.post(f"/api/surveys/{survey.id}/invites/", {"n": n}, format="json")
    assert response.status_code == 400
    assert "n" in response.json()
    assert not Invite.objects.exists()


def test_export_then_import_into_a_survey_made_from_the_codebook_gives_identical_estimates(
    api,
):
    designs = ({"name": "forced_response"}, {"name": "mirrored", "p": 0.8})
    source = Survey.objects.get(id=create(api, *designs).json()["id"])
    rng = np.random.default_rng(7)
    for _ in range(60):
        answer(source, *rng.integers(0, 2, size=2).tolist())
    exported = api.get(f"/api/surveys/{source.id}/export.csv").content.decode()
    book = api.get(f"/api/surveys/{source.id}/codebook.json").json()
    copy = api.post("/api/surveys/", book, format="json").json()
    imported = api.post(f"/api/surveys/{copy['id']}/import/", exported, content_type="text/csv")
    assert imported.json() == {"imported": 60}
    before = api.get(f"/api/surveys/{source.id}/estimates/").json()
    after = api.get(f"/api/surveys/{copy['id']}/estimates/").json()
    strip = ("question", "survey")
    for old, new in zip(before["questions"], after["questions"], strict=True):
        assert {k: v for k, v in old.items() if k not in strip} == {
            k: v for k, v in new.items() if k not in strip
        }
    assert before["n_responses"] == after["n_responses"] == 60
