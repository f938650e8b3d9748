"""Creating and editing questions of every kind through the API (SPEC §3.1, issues 13, 14).

Every design is built from the registry: the serializer knows no parameter by name. Each
bad input is a 400 naming the field, and nothing is stored.
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from estimator.designs import REGISTRY, make_design
from responses.write import record_submission
from survey.models import Question, Survey
from tests.storage import stored_count
from tests.survey.api_schema import assert_matches_schema, openapi_schema

pytestmark = pytest.mark.django_db

LN3 = math.log(3)
OPTIONS = ["never", "once", "more than once"]
K_RR = {"kind": "choice", "options": OPTIONS, "design": {"name": "k_rr", "epsilon": 1.0986}}
CHOICE_FR = {
    "kind": "choice",
    "options": OPTIONS,
    "design": {"name": "forced_response", "p_truth": 0.5, "p_forced": [0.25, 0.25, 0.5]},
}
LAPLACE = {"kind": "number", "design": {"name": "laplace", "epsilon": 1.0, "lower": 0, "upper": 30}}
CROSSWISE = {"kind": "binary", "design": {"name": "crosswise", "p": 0.25}}
DIRECT_CHOICE = {
    "kind": "choice",
    "options": ["first year", "second year", "later"],
    "design": {"name": "direct"},
    "not_sensitive": True,
}
DIRECT_NUMBER = {
    "kind": "number",
    "design": {"name": "direct", "lower": 16, "upper": 99},
    "not_sensitive": True,
}
EVERY_KIND = [K_RR, CHOICE_FR, LAPLACE, CROSSWISE, DIRECT_CHOICE, DIRECT_NUMBER]


def body(*questions: dict) -> dict:
    return {
        "title": "Student life",
        "questions": [{"text": f"Question {i + 1}?", **q} for i, q in enumerate(questions)],
    }


def create(api, *questions: dict):
    return api.post("/api/surveys/", body(*questions), format="json")


def create_raw(api, text: str):
    """A JSON body as written (Python's encoder refuses 1e999, which JSON allows)."""
    return api.post("/api/surveys/", text, content_type="application/json")


def assert_nothing_stored() -> None:
    assert not Survey.objects.exists()
    assert not Question.objects.exists()


def test_every_kind_of_the_contract_is_created_with_its_epsilon(api):
    response = create(api, *EVERY_KIND)
    assert response.status_code == 201, response.json()
    assert_matches_schema(response, "/api/surveys/", "post")
    made = response.json()
    questions = made["questions"]
    assert [q["kind"] for q in questions] == [q["kind"] for q in EVERY_KIND]
    assert [q["design"]["name"] for q in questions] == [q["design"]["name"] for q in EVERY_KIND]
    assert questions[0]["design"] == {"name": "k_rr", "epsilon": 1.0986}
    assert questions[1]["design"]["p_forced"] == [0.25, 0.25, 0.5]
    assert questions[2]["design"] == {"name": "laplace", "epsilon": 1.0, "lower": 0, "upper": 30}
    assert questions[3]["design"] == {"name": "crosswise", "p": 0.25}
    assert questions[5]["design"] == {"name": "direct", "lower": 16, "upper": 99}
    assert questions[0]["options"] == OPTIONS
    assert questions[2]["options"] == []
    # ε: k-RR's is its parameter; forced response with a die: ln((0.5 + 0.125)/0.125) = ln 5
    # (the third option is forced most, so the first two set the worst ratio); crosswise
    # with p = ¼ is ln 3.
    epsilons = [q["epsilon"] for q in questions]
    assert epsilons[:4] == pytest.approx([1.0986, math.log(5), 1.0, LN3])
    assert epsilons[4:] == [None, None]
    assert [q["direct"] for q in questions] == [False] * 4 + [True] * 2
    assert [q["no_privacy"] for q in questions] == [False] * 4 + [True] * 2
    assert made["epsilon_total"] == pytest.approx(sum(epsilons[:4]))
    assert (made["asked_directly"], made["no_privacy"]) == (2, False)
    stored = list(Survey.objects.get(id=made["id"]).questions.all())
    assert [q.options for q in stored][:3] == [OPTIONS, OPTIONS, []]
    assert stored[1].design_params == {"p_truth": 0.5, "p_forced": [0.25, 0.25, 0.5]}


@pytest.mark.parametrize(("kind", "name"), list(REGISTRY))
def test_every_registered_design_is_offered_with_its_declared_defaults(api, kind, name):
    """A design added to the registry reaches the API with no change to the serializer."""
    cls = REGISTRY[(kind, name)]
    question = {"kind": kind, "design": {"name": name}, "not_sensitive": not cls.randomized}
    if cls.needs_options:
        question["options"] = OPTIONS
    if cls.asks_innocuous:
        question["innocuous_text"] = "Were you born in the first half of the year?"
    expected = make_design(kind, name, k=3 if cls.needs_options else None)
    if cls.randomized and not expected.is_private:
        question["allow_no_privacy"] = True  # acknowledged, as every design with ε = ∞
    response = create(api, question)
    assert response.status_code == 201, response.json()
    assert_matches_schema(response, "/api/surveys/", "post")
    made = response.json()["questions"][0]
    assert made["design"] == {"name": name, **expected.params()}
    assert made["epsilon"] == (expected.epsilon if expected.is_private else None)
    assert made["direct"] is not cls.randomized


def test_a_choice_forced_response_without_p_forced_uses_a_fair_die(api):
    question = {**CHOICE_FR, "design": {"name": "forced_response", "p_truth": 0.5}}
    made = create(api, question).json()["questions"][0]
    assert made["design"]["p_forced"] == pytest.approx([1 / 3] * 3)


def test_a_survey_of_direct_questions_only_has_a_total_of_zero(api):
    made = create(api, DIRECT_CHOICE).json()
    assert (made["epsilon_total"], made["asked_directly"], made["no_privacy"]) == (0.0, 1, False)


def test_the_schema_types_every_designs_parameters_from_its_declaration():
    schema = openapi_schema()
    design = schema["components"]["schemas"]["Question"]["properties"]["design"]
    variants = {v["title"]: v for v in design["anyOf"]}
    assert set(variants) == {f"{kind}: {name}" for kind, name in REGISTRY}
    for (kind, name), cls in REGISTRY.items():
        properties = variants[f"{kind}: {name}"]["properties"]
        assert properties["name"]["enum"] == [name]
        assert set(properties) == {"name", *(p.name for p in cls.PARAMS)}
    laplace = variants["number: laplace"]["properties"]
    assert laplace["lower"]["type"] == "integer"
    assert (laplace["lower"]["minimum"], laplace["upper"]["maximum"]) == (-(10**6), 10**6)
    assert (laplace["epsilon"]["minimum"], laplace["epsilon"]["maximum"]) == (0.01, 20)
    assert "exclusiveMinimum" not in laplace["epsilon"]
    quota = schema["components"]["schemas"]["Survey"]["properties"]["response_quota"]
    assert (quota["minimum"], quota["maximum"]) == (1, 10**9)
    assert variants["choice: forced_response"]["properties"]["p_forced"]["type"] == "array"


@pytest.mark.parametrize(
    ("question", "field", "message"),
    [
        ({"kind": "ranking"}, ["kind"], "not a valid choice"),
        (
            {**K_RR, "design": {"name": "mirrored", "p": 0.75}},
            ["design", "name"],
            "unknown design 'mirrored' for a choice question; choose one of k_rr",
        ),
        ({**CROSSWISE, "design": {"name": "k_rr"}}, ["design", "name"], "unknown design"),
        ({**K_RR, "options": ["only one"]}, ["options"], "needs 2 to 10 options"),
        ({**K_RR, "options": [f"o{i}" for i in range(11)]}, ["options"], "needs 2 to 10"),
        ({**K_RR, "options": []}, ["options"], "needs 2 to 10 options"),
        ({**K_RR, "options": None}, ["options"], "may not be null"),
        ({"kind": "choice", "design": {"name": "k_rr"}}, ["options"], "needs 2 to 10"),
        ({**K_RR, "options": ["yes", ""]}, ["options", "1"], "may not be blank"),
        ({**K_RR, "options": ["yes", "   "]}, ["options", "1"], "may not be blank"),
        ({**K_RR, "options": ["yes", "no", "Yes"]}, ["options"], "'Yes' appears twice"),
        ({**K_RR, "options": ["yes", "x" * 201]}, ["options", "1"], "no more than 200"),
        ({**CROSSWISE, "options": ["yes", "no"]}, ["options"], "a binary question takes no"),
        ({**LAPLACE, "options": ["1", "2"]}, ["options"], "a number question takes no"),
        (
            {**CHOICE_FR, "design": {"name": "forced_response", "p_forced": [0.5, 0.5]}},
            ["design", "p_forced"],
            "one probability per option (3), got 2",
        ),
        (
            {**CHOICE_FR, "design": {"name": "forced_response", "p_forced": [0.5, 0.5, 0.5]}},
            ["design", "p_forced"],
            "p_forced must sum to 1",
        ),
        (
            {**CHOICE_FR, "design": {"name": "forced_response", "p_forced": 0.5}},
            ["design", "p_forced"],
            "must be a list of probabilities",
        ),
        ({**CROSSWISE, "design": {"name": "crosswise", "p": 0.5}}, ["design", "p"], "not be 1/2"),
        (
            {**LAPLACE, "design": {"name": "laplace", "lower": 30, "upper": 30}},
            ["design", "lower"],
            "lower must be below upper",
        ),
        (
            {**LAPLACE, "design": {"name": "laplace", "lower": 40, "upper": 30}},
            ["design", "lower"],
            "lower must be below upper",
        ),
        (
            {**LAPLACE, "design": {"name": "laplace", "upper": 10**6 + 1}},
            ["design", "upper"],
            "upper must be ≤ 1e+06",
        ),
        (
            {**LAPLACE, "design": {"name": "laplace", "lower": -(10**7)}},
            ["design", "lower"],
            "lower must be ≥ -1e+06",
        ),
        (
            {**LAPLACE, "design": {"name": "laplace", "lower": 0.5}},
            ["design", "lower"],
            "lower must be a whole number",
        ),
        (
            {**DIRECT_NUMBER, "design": {"name": "direct", "upper": "99"}},
            ["design", "upper"],
            "upper must be a number",
        ),
        ({**LAPLACE, "design": {"name": "laplace", "epsilon": 0}}, ["design", "epsilon"], "≥ 0.01"),
        ({**K_RR, "design": {"name": "k_rr", "epsilon": -1}}, ["design", "epsilon"], "≥ 0.01"),
        ({**K_RR, "design": {"name": "k_rr", "epsilon": 710}}, ["design", "epsilon"], "≤ 20"),
        (
            {**K_RR, "design": {"name": "k_rr", "epsilon": "ln 3"}},
            ["design", "epsilon"],
            "must be a number",
        ),
        (
            {**LAPLACE, "design": {"name": "laplace", "alpha": 0.9}},
            ["design", "alpha"],
            "laplace takes no parameter alpha; it takes epsilon, lower, upper",
        ),
        ({**LAPLACE, "design": "laplace"}, ["design"], "must be an object"),
        ({"kind": "number"}, ["design"], "a number question needs a design"),
        ({"kind": "choice", "options": OPTIONS}, ["design"], "a choice question needs a design"),
        ({**DIRECT_CHOICE, "not_sensitive": False}, ["not_sensitive"], "not sensitive"),
        (
            {"kind": "binary", "design": {"name": "direct"}},
            ["not_sensitive"],
            "send not_sensitive: true to confirm",
        ),
    ],
)
def test_every_bad_question_is_a_400_naming_the_field_and_stores_nothing(
    api, question, field, message
):
    response = create(api, K_RR, question)
    assert response.status_code == 400
    errors = response.json()["questions"]["1"]
    for key in field:
        errors = errors[key]
    assert message in str(errors)
    assert_nothing_stored()


@pytest.mark.parametrize("value", ["1e999", "-1e999"])
def test_an_infinite_epsilon_is_a_400(api, value):
    text = json.dumps(body(K_RR)).replace('"epsilon": 1.0986', f'"epsilon": {value}')
    response = create_raw(api, text)
    assert response.status_code == 400
    errors = response.json()["questions"]["0"]["design"]["epsilon"]
    assert "epsilon must be finite" in str(errors)
    assert_nothing_stored()


@pytest.mark.parametrize("constant", ["NaN", "Infinity"])
def test_a_json_constant_that_is_not_a_number_is_a_400(api, constant):
    text = json.dumps(body(LAPLACE)).replace('"epsilon": 1.0', f'"epsilon": {constant}')
    response = create_raw(api, text)
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]
    assert_nothing_stored()


def test_a_direct_question_of_the_codebook_shape_keeps_its_confirmation(api):
    """A direct design confirmed once stays confirmed through edits of its wording."""
    survey = create(api, DIRECT_CHOICE).json()
    question = survey["questions"][0]
    response = api.patch(
        f"/api/surveys/{survey['id']}/",
        {"questions": [{"id": question["id"], "text": "Your year of study?"}]},
        format="json",
    )
    assert response.status_code == 200
    edited = response.json()["questions"][0]
    assert (edited["text"], edited["kind"], edited["options"]) == (
        "Your year of study?",
        "choice",
        DIRECT_CHOICE["options"],
    )
    assert edited["direct"] is True


def patch_questions(api, survey_id: int, questions: list[dict]):
    return api.patch(f"/api/surveys/{survey_id}/", {"questions": questions}, format="json")


def test_patch_keeps_what_an_item_leaves_out(api):
    survey = create(api, CHOICE_FR, LAPLACE).json()
    choice, number = survey["questions"]
    response = patch_questions(
        api,
        survey["id"],
        [
            {"id": number["id"], "design": {"name": "laplace", "epsilon": 2.0, "upper": 7}},
            {"id": choice["id"], "options": ["no", "yes", "rather not say"]},
        ],
    )
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, "/api/surveys/{id}/", "patch")
    first, second = response.json()["questions"]
    assert (first["id"], first["kind"], first["text"]) == (number["id"], "number", "Question 2?")
    assert first["design"] == {"name": "laplace", "epsilon": 2.0, "lower": 0, "upper": 7}
    assert second["options"] == ["no", "yes", "rather not say"]
    assert second["design"] == CHOICE_FR["design"]
    stored = Question.objects.get(id=choice["id"])
    assert (stored.position, stored.options[2]) == (1, "rather not say")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"options": ["a", "b"]}, ["design", "p_forced"], "one probability per option (2)"),
        ({"options": ["a", "a"]}, ["options"], "'a' appears twice"),
        ({"kind": "number"}, ["design"], "a number question needs a design"),
        ({"kind": "binary", "options": OPTIONS}, ["options"], "a binary question takes no"),
        ({"design": {"name": "direct"}}, ["not_sensitive"], "not sensitive"),
        ({"design": {"name": "k_rr", "epsilon": 0}}, ["design", "epsilon"], "epsilon must be ≥"),
    ],
)
def test_patch_follows_the_same_rules_and_changes_nothing_on_error(api, change, field, message):
    survey = create(api, CHOICE_FR).json()
    question = survey["questions"][0]
    version = Survey.objects.get(id=survey["id"]).design_version
    response = patch_questions(api, survey["id"], [{"id": question["id"], **change}])
    assert response.status_code == 400
    errors = response.json()["questions"]["0"]
    for key in field:
        errors = errors[key]
    assert message in str(errors)
    stored = Question.objects.get(id=question["id"])
    assert (stored.kind, stored.options, stored.design_name) == (
        "choice",
        OPTIONS,
        "forced_response",
    )
    assert Survey.objects.get(id=survey["id"]).design_version == version


def test_patch_can_change_a_questions_kind_when_it_says_everything(api):
    survey = create(api, CROSSWISE).json()
    question = survey["questions"][0]
    response = patch_questions(api, survey["id"], [{"id": question["id"], **K_RR}])
    assert response.status_code == 200
    changed = response.json()["questions"][0]
    assert (changed["kind"], changed["options"], changed["design"]["name"]) == (
        "choice",
        OPTIONS,
        "k_rr",
    )


def test_a_new_question_in_a_patch_follows_the_create_rules(api):
    survey = create(api, K_RR).json()
    kept = {"id": survey["questions"][0]["id"]}
    response = patch_questions(api, survey["id"], [kept, {"text": "Age?", "kind": "number"}])
    assert response.status_code == 400
    assert "needs a design" in str(response.json()["questions"]["1"]["design"])
    assert Question.objects.count() == 1
    added = patch_questions(api, survey["id"], [kept, {"text": "Age?", **DIRECT_NUMBER}])
    assert added.status_code == 200
    assert added.json()["asked_directly"] == 1


def test_options_and_designs_are_frozen_once_answers_arrive(api):
    made = create(api, K_RR).json()
    survey = Survey.objects.get(id=made["id"])
    question = survey.questions.get()
    record_submission(survey, uuid.uuid4(), {question.id: 2})
    response = patch_questions(api, made["id"], [{"id": question.id, "options": ["a", "b"]}])
    assert response.status_code == 409
    assert "frozen" in response.json()["detail"]
    question.refresh_from_db()
    assert question.options == OPTIONS


def test_a_codebook_posted_back_recreates_every_kind_and_takes_the_export(api):
    made = create(api, *EVERY_KIND).json()
    source = Survey.objects.get(id=made["id"])
    ids = list(source.questions.values_list("id", flat=True))
    for values in ([0, 1, 13, 1, 2, 40], [2, 2, -5, 0, 0, 99], [1, 0, 31, 1, 1, 16]):
        record_submission(source, uuid.uuid4(), dict(zip(ids, values, strict=True)))
    exported = api.get(f"/api/surveys/{source.id}/export.csv").content.decode()
    codebook = api.get(f"/api/surveys/{source.id}/codebook.json")
    assert_matches_schema(codebook, "/api/surveys/{id}/codebook.json/", "get")
    book = codebook.json()
    copy = api.post("/api/surveys/", book, format="json")
    assert copy.status_code == 201, copy.json()
    for old, new in zip(made["questions"], copy.json()["questions"], strict=True):
        for key in ("kind", "options", "design", "epsilon", "direct"):
            assert old[key] == new[key]
    imported = api.post(
        f"/api/surveys/{copy.json()['id']}/import/", exported, content_type="text/csv"
    )
    assert imported.json() == {"imported": 3}
    again = api.get(f"/api/surveys/{copy.json()['id']}/export.csv").content.decode()
    assert sorted(again.splitlines()) == sorted(exported.splitlines())


def test_an_import_of_a_bad_value_names_line_and_column_over_the_api(api):
    made = create(api, K_RR, LAPLACE).json()
    response = api.post(
        f"/api/surveys/{made['id']}/import/", "q1,q2\n0,3\n1,2.5\n3,0\n", content_type="text/csv"
    )
    assert response.status_code == 400
    assert_matches_schema(response, "/api/surveys/{id}/import/", "post")
    errors = [(e["line"], e["message"].split(" must")[0]) for e in response.json()["errors"]]
    assert errors == [(3, "q2"), (4, "q1")]
    assert stored_count(Survey.objects.get(id=made["id"])) == 0


def test_a_close_date_and_a_quota_can_be_set_through_the_api(api):
    later = (timezone.now() + timedelta(days=3)).isoformat()
    body = {"title": "Closes itself", "closes_at": later, "response_quota": 50}
    created = api.post("/api/surveys/", body, format="json")
    assert created.status_code == 201, created.json()
    survey = Survey.objects.get(pk=created.json()["id"])
    assert survey.response_quota == 50 and survey.closes_at is not None
    assert created.json()["response_quota"] == 50


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("closes_at", "2001-01-01T00:00:00Z"),
        ("response_quota", 0),
        ("response_quota", 10**9 + 1),
    ],
)
def test_a_past_close_date_or_an_empty_quota_is_refused(api, field, value):
    response = api.post("/api/surveys/", {"title": "x", field: value}, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Survey.objects.exists()
