"""Skipped answers in breakdowns: counted apart per group (API, page, CSV), never in n or
the estimate, and counted in a group's size when deciding what to hide."""

from __future__ import annotations

import csv
import io

import pytest

from responses.write import bulk_record
from tests.analysis.analysis_data import api_for, fill, questions

pytestmark = pytest.mark.django_db
PATH = "/api/surveys/{survey_id}/estimates/breakdown/"


def skip_cheat(study, per_faculty: dict[int, int]) -> None:
    """Respondents who answered everything but chose "prefer not to answer" for cheating."""
    q = questions(study)
    rows = [
        {q["faculty"]: faculty, q["age"]: 20, q["job"]: 0, q["cheat"]: None}
        | {q["plagiarise"]: 0, q["often"]: 0}
        for faculty, n in per_faculty.items()
        for _ in range(n)
    ]
    bulk_record(study, rows, simulated=False)


def breakdown(user, study, **params):
    return api_for(user).get(PATH.format(survey_id=study.id), params)


def test_each_group_counts_its_skips_apart_from_n(owner, study):
    fill(study, [30, 30, 30, 30])
    skip_cheat(study, {0: 4, 2: 1})
    q = questions(study)
    body = breakdown(owner, study, question=q["cheat"], by=q["faculty"]).json()
    assert [c["n"] for c in body["categories"]] == [30, 30, 30, 30]
    assert [c["skipped"] for c in body["categories"]] == [4, 0, 1, 0]
    assert (body["overall"]["n"], body["overall"]["skipped"]) == (120, 5)
    estimates = api_for(owner).get(f"/api/surveys/{study.id}/estimates/").json()
    (cheat,) = [e for e in estimates["questions"] if e["question"] == q["cheat"]]
    assert cheat["skipped"] == body["overall"]["skipped"]
    other = breakdown(owner, study, question=q["plagiarise"], by=q["faculty"]).json()
    assert [c["skipped"] for c in other["categories"]] == [0, 0, 0, 0]


def test_a_groups_size_counts_those_who_skipped_and_hidden_groups_say_nothing(owner, study):
    fill(study, [30, 30, 30, 8])  # k = 10: eight who answered alone are hidden
    q = questions(study)
    alone = breakdown(owner, study, question=q["cheat"], by=q["faculty"]).json()
    hidden = [c for c in alone["categories"] if c["suppressed"]]
    assert hidden and all(set(c) == {"category", "text", "suppressed"} for c in hidden)
    skip_cheat(study, {3: 2})  # ten were asked in the group: it is shown
    body = breakdown(owner, study, question=q["cheat"], by=q["faculty"]).json()
    medicine = body["categories"][3]
    assert not medicine["suppressed"]
    assert (medicine["n"], medicine["skipped"]) == (8, 2)


def test_the_breakdowns_csv_has_a_skipped_column(owner, study):
    fill(study, [30, 30, 30, 30])
    skip_cheat(study, {1: 3})
    q = questions(study)
    text = api_for(owner).get(f"/api/surveys/{study.id}/estimates/breakdowns.csv").content
    rows = list(csv.DictReader(io.StringIO(text.decode())))
    cheat = [r for r in rows if r["question"] == str(q["cheat"]) and r["by"] == str(q["faculty"])]
    assert [(r["category_text"], r["skipped"]) for r in cheat] == [
        ("(all)", "3"),
        ("Arts", "0"),
        ("Law", "3"),
        ("Science", "0"),
        ("Medicine", "0"),
    ]


def test_the_breakdown_page_shows_the_skipped_column(client, owner, study):
    fill(study, [30, 30, 30, 30])
    skip_cheat(study, {2: 6})
    q = questions(study)
    client.force_login(owner)
    html = client.get(
        f"/surveys/{study.id}/results/breakdown/?question={q['cheat']}&by={q['faculty']}"
    )
    page = " ".join(html.content.decode().split())
    assert '<th scope="col">Skipped</th>' in page
    assert '<th scope="row">Science</th><td>30</td><td>6</td>' in page
    assert '<th scope="row">All</th><td>120</td><td>6</td>' in page
