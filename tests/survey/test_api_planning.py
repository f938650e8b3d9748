"""Planning through the API: the builder's preview figures for any design."""

from __future__ import annotations

import math

import pytest
from rest_framework.test import APIClient

from estimator import planning
from survey.models import Survey

pytestmark = pytest.mark.django_db


def test_the_default_design_costs_what_the_planner_says(api):
    response = api.post("/api/planning/", {"q": 0.1, "n": 1000}, format="json")
    assert response.status_code == 200, response.json()
    plan = response.json()
    assert plan["epsilon"] == pytest.approx(math.log(3))
    assert plan["price"] == pytest.approx(planning.variance_price(0.5, 0.25, 0.1))
    assert plan["price"] == pytest.approx(9.33, abs=0.01)
    assert plan["n_for_target"] == planning.n_for_half_width(0.5, 0.25, 0.05, 0.95)
    assert plan["power_one"] == pytest.approx(planning.power_one_sample(0.5, 0.25, 0.1, 1000, 0.05))
    assert 0 < plan["power_two"] < 1


def test_a_number_question_compares_laplace_with_one_bit(api):
    body = {"kind": "number", "design": {"name": "laplace", "epsilon": 1, "lower": 0, "upper": 30}}
    plan = api.post("/api/planning/", body, format="json").json()
    assert plan["typical_noise"] > 0
    assert plan["one_bit"]["narrower"] in ("laplace", "one_bit")
    assert plan["n_for_target"] == plan["one_bit"]["laplace_n"]


def test_a_choice_design_needs_its_number_of_options(api):
    body = {"kind": "choice", "options": 3, "design": {"name": "k_rr", "epsilon": 1.0986}}
    plan = api.post("/api/planning/", body, format="json").json()
    assert plan["epsilon"] == pytest.approx(1.0986)
    missing = api.post("/api/planning/", {**body, "options": None}, format="json")
    assert missing.status_code == 400


def test_a_direct_question_says_it_has_no_privacy(api):
    plan = api.post("/api/planning/", {"design": {"name": "direct"}}, format="json").json()
    assert plan["epsilon"] is None and plan["direct"] is True


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"design": {"name": "forced_response", "p_truth": 2}}, "design"),
        ({"design": {"name": "no_such_design"}}, "design"),
        ({"kind": "number", "design": {"name": "laplace", "lower": 5, "upper": 1}}, "design"),
        ({"half_width": 0}, "half_width"),
        ({"q": 1.5}, "q"),
        ({"n": 0}, "n"),
    ],
)
def test_bad_assumptions_name_their_field(api, body, field):
    response = api.post("/api/planning/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_planning_needs_an_account():
    assert APIClient().post("/api/planning/", {}, format="json").status_code in (401, 403)


TINY = 5e-324  # the least positive float: P(yes | 1) − P(yes | 0) squares to 0


@pytest.mark.parametrize(
    ("kind", "design"),
    [
        ("binary", {"name": "forced_response", "p_truth": TINY, "p_yes": 0.0}),
        ("binary", {"name": "unrelated_question", "p_truth": TINY, "pi": 0.0}),
        ("binary", {"name": "mirrored", "p": 0.5 + 1e-151}),
        ("choice", {"name": "forced_response", "p_truth": TINY}),
    ],
)
def test_a_design_whose_rates_barely_differ_is_a_400_naming_it_and_stores_nothing(
    api, kind, design
):
    """Once a ZeroDivisionError (a 500) in planning: the design's slope squared to 0."""
    plan = {"kind": kind, "design": design, "options": 2 if kind == "choice" else None}
    planned = api.post("/api/planning/", {k: v for k, v in plan.items() if v}, format="json")
    assert planned.status_code == 400
    assert "nearly" in str(planned.json()["design"])
    question = {"text": "Sensitive?", "kind": kind, "design": design}
    if kind == "choice":
        question["options"] = ["a", "b"]
    created = api.post("/api/surveys/", {"title": "x", "questions": [question]}, format="json")
    assert created.status_code == 400
    assert "nearly" in str(created.json()["questions"]["0"]["design"])
    assert not Survey.objects.exists()
