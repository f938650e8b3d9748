"""Values that are accepted must work: every design parameter drawn across its declared
range (its ends and just inside them), and every page and endpoint of the survey it makes
answers without a server error. Values outside the range are a 400 naming the field."""

from __future__ import annotations

import math
import os
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from estimator.designs import REGISTRY, Design
from estimator.params import EPSILON_MAX, EPSILON_MIN, Param
from responses.write import simulate_respondents
from survey.limits import MAX_RESPONSE_QUOTA
from survey.models import Survey
from tests.storage import nothing_stored

pytestmark = pytest.mark.django_db

settings.register_profile(
    "param-ranges",
    max_examples=int(os.environ.get("RANGE_EXAMPLES", "6")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
OPTIONS = ["never", "once", "often", "always", "rarely", "daily", "weekly", "monthly", "a", "b"]
GROUP = {"text": "Faculty?", "kind": "choice", "options": ["arts", "science"]}
GROUP["design"], GROUP["not_sensitive"] = {"name": "direct"}, True


def near(low: float, high: float, integer: bool) -> st.SearchStrategy:
    """The ends of [low, high], values just inside them, and anything between."""
    if integer:
        low, high = int(low), int(high)
        return st.sampled_from([low, low + 1, high - 1, high]) | st.integers(low, high)
    inside = [math.nextafter(low, high), low * (1 + 1e-9) or 1e-12, high * (1 - 1e-9)]
    return st.sampled_from([low, high, *inside]) | st.floats(low, high)


def value_of(param: Param) -> st.SearchStrategy:
    declared = param.to_json()
    low, high = declared["min"], declared["max"]
    values = near(low, high, param.type == "integer")
    if declared["exclusive_min"]:
        values = values.filter(lambda v: v > low)
    if declared["exclusive_max"]:
        values = values.filter(lambda v: v < high)
    return values


@st.composite
def questions(draw) -> dict:
    kind, name = draw(st.sampled_from(sorted(REGISTRY)))
    design = {"name": name}
    for param in REGISTRY[kind, name].PARAMS:
        if param.type == "probabilities" or param.name in ("lower", "upper"):
            continue  # the default (uniform); the bounds are drawn as a pair below
        if param.type == "probability_pair":  # one per arm; equal ones are refused
            pair = st.tuples(near(0.0, 1.0, False), near(0.0, 1.0, False))
            design[param.name] = list(draw(pair))
            continue
        design[param.name] = draw(value_of(param))
    if any(p.name == "lower" for p in REGISTRY[kind, name].PARAMS):
        lower, upper = (p.to_json() for p in REGISTRY[kind, name].PARAMS[-2:])
        design["lower"] = draw(near(lower["min"], upper["max"] - 1, integer=True))
        design["upper"] = draw(near(design["lower"] + 1, upper["max"], integer=True))
    # ε = ∞ (a probability at its end) is saved when confirmed: its pages must work too.
    question = {"text": "Sensitive?", "kind": kind, "design": design, "allow_no_privacy": True}
    if kind == "choice":
        question["options"] = OPTIONS[: draw(st.integers(2, len(OPTIONS)))]
    if name == "direct":
        question["not_sensitive"] = True
    return question


def pages(survey: Survey, question_id: int, group_id: int) -> list[str]:
    s, slug = survey.id, survey.slug
    by = f"?question={question_id}&by={group_id}"
    return [
        f"/s/{slug}/",  # its paper form too (for the no-JavaScript path)
        f"/surveys/{s}/edit/",
        f"/surveys/{s}/respondent-preview/",
        f"/surveys/{s}/distribute/",
        f"/api/surveys/{s}/codebook.json",
        f"/api/surveys/{s}/estimates/",
        f"/api/surveys/{s}/estimates.csv",
        f"/surveys/{s}/results/",
        f"/surveys/{s}/results/breakdown/{by}",
        f"/api/surveys/{s}/estimates/breakdown/{by}",
    ]


def a_report(design: Design, seed: int) -> int:
    """A report the design can send: one respondent's, randomized by the design itself."""
    rng = np.random.default_rng(seed)
    return int(design.simulate(np.array([design.true_values[0]]), rng)[0])


@settings(settings.get_profile("param-ranges"))
@given(
    question=questions(),
    quota=near(1, MAX_RESPONSE_QUOTA, integer=True),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_accepted_value_renders_every_page(owner, logged_in, question, quota, seed):
    Survey.objects.all().delete()  # what an earlier example (failing, shrinking) left
    api = APIClient()
    api.force_authenticate(owner)
    body = {"title": "Ranges", "response_quota": quota, "questions": [question, GROUP]}
    created = api.post("/api/surveys/", body, format="json")
    if created.status_code == 400:  # a combination the design refuses (e.g. crosswise ½)
        assert "questions" in created.json() and not Survey.objects.exists()
        return
    assert created.status_code == 201, created.content
    survey = Survey.objects.get(id=created.json()["id"])
    target, group = survey.questions.all()
    plan = {"kind": question["kind"], "design": question["design"]}
    if question["kind"] == "choice":
        plan["options"] = len(question["options"])
    planned = api.post("/api/planning/", plan, format="json")
    assert planned.status_code == 200, planned.content
    form = {"new-text": "Another?", "new-kind": question["kind"], "new-preset": "custom"}
    form |= {f"new-{key}": value for key, value in question["design"].items()}
    form["new-design_name"] = form.pop("new-name")
    assert logged_in.post(f"/surveys/{survey.id}/preview/?prefix=new", form).status_code == 200

    assert api.post(f"/api/surveys/{survey.id}/open/").status_code == 200
    report = a_report(target.design, seed)
    if target.design.has_arms:  # the device sends the answer and the arm it drew
        answers = [{"question": target.id, "value": report % 2, "arm": report // 2}]
    else:
        answers = [{"question": target.id, "value": report}]
    submission = {
        "submission_id": str(uuid.uuid4()),
        "answers": [*answers, {"question": group.id, "value": 1}],
        "design_version": survey.design_version,
    }
    submit_url = f"/api/public/surveys/{survey.slug}/responses/"
    submitted = APIClient().post(submit_url, submission, format="json")
    assert submitted.status_code in (200, 201), submitted.content
    simulate_respondents(survey, 40, rng=np.random.default_rng(seed))
    survey.refresh_from_db()
    for path in pages(survey, target.id, group.id):
        client = api if path.startswith("/api/") else logged_in
        expected = 200
        if path.startswith("/s/") and not survey.is_accepting:
            expected = 409  # a quota of 1 closed the survey: its respondent pages say so
        breaks_down = target.design.randomized and not target.design.has_arms
        if path.startswith("/api/") and "breakdown" in path and not breaks_down:
            expected = 400  # asked directly, or with arms: no breakdown of one share
        assert client.get(path).status_code == expected, path
    Survey.objects.all().delete()


def test_a_survey_closed_by_a_quota_of_one_renders_every_page(owner, logged_in):
    """The first answer closes it: the respondent page says so, every other page works."""
    api = APIClient()
    api.force_authenticate(owner)
    question = {"text": "Cheated?", "kind": "binary", "design": {"name": "forced_response"}}
    body = {"title": "Quota", "response_quota": 1, "questions": [question, GROUP]}
    survey = Survey.objects.get(id=api.post("/api/surveys/", body, format="json").json()["id"])
    target, group = survey.questions.all()
    assert api.post(f"/api/surveys/{survey.id}/open/").status_code == 200
    answers = [{"question": target.id, "value": 1}, {"question": group.id, "value": 0}]
    submission = {"submission_id": str(uuid.uuid4()), "answers": answers}
    submit_url = f"/api/public/surveys/{survey.slug}/responses/"
    assert APIClient().post(submit_url, submission, format="json").status_code == 201
    survey.refresh_from_db()
    assert not survey.is_accepting
    closed = logged_in.get(f"/s/{survey.slug}/")
    assert closed.status_code == 409
    assert "not accepting answers right now — it has closed" in closed.content.decode()
    for path in pages(survey, target.id, group.id)[1:]:
        client = api if path.startswith("/api/") else logged_in
        assert client.get(path).status_code == 200, path


@pytest.mark.parametrize(
    ("design", "field"),
    [
        ({"name": "k_rr", "epsilon": EPSILON_MIN / 2}, "epsilon"),
        ({"name": "k_rr", "epsilon": EPSILON_MAX * 1.01}, "epsilon"),
        ({"name": "laplace", "epsilon": 1, "lower": -(10**7), "upper": 0}, "lower"),
        ({"name": "laplace", "epsilon": 1, "lower": 0, "upper": 10**12}, "upper"),
    ],
)
def test_a_value_outside_its_range_is_a_400_naming_it_and_stores_nothing(api, design, field):
    kind = "number" if design["name"] == "laplace" else "choice"
    question = {"text": "Sensitive?", "kind": kind, "design": design, "options": OPTIONS[:3]}
    if kind == "number":
        del question["options"]
    response = api.post("/api/surveys/", {"title": "x", "questions": [question]}, format="json")
    assert response.status_code == 400
    assert field in response.json()["questions"]["0"]["design"]
    assert nothing_stored()


def test_the_builder_inputs_carry_the_declared_range(logged_in, make_survey):
    survey = make_survey(status=Survey.Status.DRAFT)
    data = {"new-text": "How often?", "new-kind": "choice", "new-preset": "custom"}
    data |= {"new-design_name": "k_rr", "new-options": "a\nb"}
    page = logged_in.post(f"/surveys/{survey.id}/question-form/?prefix=new", data)
    epsilon = page.content.decode().split('name="new-epsilon"')[0].rsplit("<input", 1)[1]
    epsilon += page.content.decode().split('name="new-epsilon"')[1].split(">", 1)[0]
    assert f'min="{EPSILON_MIN}"' in epsilon and 'max="20.0"' in epsilon
    closing = logged_in.get(f"/surveys/{survey.id}/distribute/").content.decode()
    assert f'max="{MAX_RESPONSE_QUOTA}"' in closing
