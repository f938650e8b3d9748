"""Breakdowns played against an attacker who holds every breakdown of a question.

Each test builds a survey, fetches every breakdown of a randomized question through the
API as a viewer would, and then tries to recover a small group's count and sum of
reports by solving the linear system of all shown numbers over the respondents' atoms
(their combination of answers to the grouping questions, "no answer" included): least
squares, then a check that the system is solved exactly. The attack must fail; against
each table's own suppression alone it succeeds, which shows that the attacker is real.
"""

from __future__ import annotations

import csv
import io
import itertools
import random
from collections import Counter

import numpy as np
import pytest

from analysis.grouped import respondent_atoms
from estimator.disclosure import suppress_cells
from responses.counts import survey_counts
from survey.models import Role, Survey
from tests.analysis.analysis_data import (
    api_for,
    crowd,
    grouped_survey,
    record_people,
)
from tests.analysis.drawings import wide
from tests.storage import stored_reports, tallied
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
PATH = "/api/surveys/{survey_id}/estimates/breakdown/"
RANDOMIZED = ("cheat", "often", "drinks")
HIDDEN = "hidden: too few respondents in this or another cell"


def build(owner, viewer, groups: dict[str, list[str] | None], k: int = 10):
    survey, found = grouped_survey(owner, groups, k)
    survey.share_with(viewer, Role.VIEWER)
    return survey, found


def fetch(user, survey, found, question: str, groups: list[str]) -> dict[str, dict]:
    """Every breakdown of ``question``, by each grouping question, from the API."""
    api = api_for(user)
    bodies = {}
    for group in groups:
        response = api.get(
            PATH.format(survey_id=survey.id),
            {"question": found[question].id, "by": found[group].id},
        )
        assert response.status_code == 200, response.json()
        bodies[group] = response.json()
    return bodies


def numbers(question: str, entry: dict) -> list[float]:
    """What one published cell says about its respondents: n and the sum(s) of reports."""
    if question == "cheat":
        return [entry["n"], entry["yes_count"]]
    if question == "often":
        return [entry["n"], *(o["count"] for o in entry["options"])]
    return [entry["n"], entry["mean_unbiased"] * entry["n"]]


def truth(question: str, members: list[dict]) -> list[float]:
    if question == "cheat":
        return [len(members), sum(p["cheat"] for p in members)]
    if question == "often":
        return [len(members), *(sum(p["often"] == j for p in members) for j in range(3))]
    return [len(members), sum(p["drinks"] for p in members)]


def published(question: str, bodies: dict[str, dict]) -> list[tuple[str | None, object, list]]:
    """(group, category, numbers) of the overall and of every shown cell."""
    overall = next(iter(bodies.values()))["overall"]
    shown = [(None, None, numbers(question, overall))]
    for group, body in bodies.items():
        shown += [
            (group, c["category"], numbers(question, c))
            for c in body["categories"]
            if not c["suppressed"]
        ]
    return shown


def assert_true_numbers(question: str, people: list[dict], shown) -> None:
    """Every shown cell holds exactly its respondents' numbers ("no answer" included)."""
    for group, category, values in shown:
        members = [p for p in people if group is None or p.get(group) == category]
        assert values == pytest.approx(truth(question, members)), (group, category)


def small_groups(people: list[dict], groups: list[str], k: int) -> dict[str, list[dict]]:
    """Every cell, atom and intersection of two cells of different groupings with 1 … k − 1
    people (but not everyone): the groups that the threshold protects."""
    cells = {
        (g, c): [p for p in people if p.get(g) == c]
        for g in groups
        for c in {p.get(g) for p in people}
    }
    found = {f"{g}={c}": members for (g, c), members in cells.items()}
    for (g, c), (h, d) in itertools.combinations(cells, 2):
        if g != h:
            found[f"{g}={c} & {h}={d}"] = [p for p in cells[g, c] if p.get(h) == d]
    for atom in {tuple(p.get(g) for g in groups) for p in people}:
        found[f"atom {atom}"] = [p for p in people if tuple(p.get(g) for g in groups) == atom]
    return {name: m for name, m in found.items() if 0 < len(m) < min(k, len(people))}


def attack(question: str, people: list[dict], groups: list[str], shown, k: int) -> dict:
    """Solve the shown numbers for each small group's count and sums: returns what was
    recovered (group name → numbers), which the published data must leave empty."""
    atoms = sorted({tuple(p.get(g) for g in groups) for p in people}, key=repr)

    def indicator(test) -> np.ndarray:
        return np.array([float(test(atom)) for atom in atoms])

    rows = np.array(
        [indicator(lambda a, g=g, c=c: g is None or a[groups.index(g)] == c) for g, c, _ in shown]
    )
    values = np.array([v for _, _, v in shown], dtype=float)
    recovered = {}
    for name, members in small_groups(people, groups, k).items():
        keys = {tuple(p.get(g) for g in groups) for p in members}  # whole atoms
        target = indicator(lambda a, keys=keys: a in keys)
        weights = np.linalg.lstsq(rows.T, target, rcond=None)[0]
        if np.linalg.norm(rows.T @ weights - target) < 1e-6:
            recovered[name] = weights @ values
            assert recovered[name] == pytest.approx(truth(question, members))
    return recovered


def per_table_publication(question, people, groups, k):
    """What each breakdown alone would show (the old rule): the attacker's sanity check."""
    shown = [(None, None, truth(question, people))]
    for g in groups:
        categories = sorted({p.get(g) for p in people}, key=lambda c: (c is None, c or 0))
        sizes = [sum(p.get(g) == c for p in people) for c in categories]
        hidden = suppress_cells(sizes, k)
        shown += [
            (g, c, truth(question, [p for p in people if p.get(g) == c]))
            for i, c in enumerate(categories)
            if i not in hidden
        ]
    return shown


NESTED_GROUPS = {
    "faculty": ["Arts", "Science"],
    "department": ["History", "Music", "Physics", "Biology"],
}
NESTED = {(0, 0): 25, (0, 1): 5, (1, 2): 12, (1, 3): 40}


@pytest.mark.parametrize("question", RANDOMIZED)
def test_nested_groupings_cannot_be_differenced(owner, viewer, question):
    survey, found = build(owner, viewer, NESTED_GROUPS)
    people = record_people(survey, found, crowd(list(NESTED_GROUPS), NESTED))
    bodies = fetch(viewer, survey, found, question, list(NESTED_GROUPS))
    music = bodies["department"]["categories"][1]
    assert music["text"] == "Music" and music["suppressed"]
    shown = published(question, bodies)
    assert attack(question, people, list(NESTED_GROUPS), shown, 10) == {}
    # Each table protected alone: faculty "Arts" (30) minus "History" (25) is Music's 5.
    naive = per_table_publication(question, people, list(NESTED_GROUPS), 10)
    assert "department=1" in attack(question, people, list(NESTED_GROUPS), naive, 10)


SKIPPED_GROUPS = {
    "faculty": ["Arts", "Law", "Science", "Medicine"],
    "year": ["first", "second", "third"],
}
# 3 people answered the faculty question but left the year unanswered (a paper form).
SKIPPED = {
    **{(f, y): 12 + 3 * f + 2 * y for f in range(4) for y in range(3)},
    (1, None): 3,
}


@pytest.fixture
def skipped(owner, viewer):
    survey, found = build(owner, viewer, SKIPPED_GROUPS)
    people = record_people(survey, found, crowd(list(SKIPPED_GROUPS), SKIPPED))
    return survey, found, people


@pytest.mark.parametrize("question", RANDOMIZED)
def test_every_breakdown_of_a_question_has_the_questions_own_overall(viewer, skipped, question):
    survey, found, people = skipped
    bodies = fetch(viewer, survey, found, question, list(SKIPPED_GROUPS))
    overalls = [body["overall"] for body in bodies.values()]
    assert overalls[0] == overalls[1]  # differencing the overalls gives nothing
    assert overalls[0]["n"] == len(people)
    estimates = api_for(viewer).get(f"/api/surveys/{survey.id}/estimates/").json()
    entry = next(q for q in estimates["questions"] if q["question"] == found[question].id)
    for key in ("n", "estimate", "mean", "ci_low", "ci_high"):
        if key in entry:
            assert overalls[0][key] == pytest.approx(entry[key]), key
    for mine, theirs in zip(overalls[0].get("options", []), entry.get("options", []), strict=True):
        assert mine == pytest.approx(theirs)


def test_those_who_skipped_the_grouping_question_are_a_category_hidden_alike(viewer, skipped):
    survey, found, people = skipped
    bodies = fetch(viewer, survey, found, "cheat", list(SKIPPED_GROUPS))
    year = bodies["year"]["categories"]
    assert [c["text"] for c in year] == ["first", "second", "third", "No answer"]
    assert year[-1] == {"category": None, "text": "No answer", "suppressed": True}
    assert sum(c["suppressed"] for c in year) >= 2
    assert [c["text"] for c in bodies["faculty"]["categories"]] == SKIPPED_GROUPS["faculty"]
    for body in bodies.values():
        assert_matches_schema_of(body)


def assert_matches_schema_of(body) -> None:
    class Response:  # the helper reads a response's status and JSON
        status_code = 200

        def json(self):
            return body

    assert_matches_schema(Response(), PATH, "GET")


@pytest.mark.parametrize("question", RANDOMIZED)
def test_a_skipped_group_cannot_be_differenced_out_of_two_breakdowns(viewer, skipped, question):
    survey, found, people = skipped
    shown = published(question, fetch(viewer, survey, found, question, list(SKIPPED_GROUPS)))
    assert_true_numbers(question, people, shown)
    assert attack(question, people, list(SKIPPED_GROUPS), shown, 10) == {}


OVERLAPPING_GROUPS = {
    "faculty": ["Arts", "Law", "Science", "Medicine"],
    "year": ["first", "second", "third"],
    "job": None,
}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_several_overlapping_groupings_cannot_be_differenced(owner, viewer, seed):
    rng = random.Random(seed)
    cells = {}
    for f, y, j in itertools.product(range(4), range(3), range(2)):
        if rng.random() < 0.7:
            cells[f, y, j] = rng.choice([1, 2, 4, 8, 15])
    survey, found = build(owner, viewer, OVERLAPPING_GROUPS)
    people = record_people(survey, found, crowd(list(OVERLAPPING_GROUPS), cells), seed=seed)
    for question in RANDOMIZED:
        bodies = fetch(viewer, survey, found, question, list(OVERLAPPING_GROUPS))
        shown = published(question, bodies)
        assert attack(question, people, list(OVERLAPPING_GROUPS), shown, 10) == {}


def random_survey(rng: random.Random):
    """2–3 groupings of 2–4 options, sometimes the second nested in the first, 20–90
    people, each grouping answer left out with probability 0.1."""
    sizes = [rng.randint(2, 4) for _ in range(rng.randint(2, 3))]
    parent = [rng.randrange(sizes[0]) for _ in range(sizes[1])]
    nested = rng.random() < 0.5
    people = []
    for _ in range(rng.randint(20, 90)):
        answers = [rng.randrange(size) for size in sizes]
        if nested:
            answers[0] = parent[answers[1]]
        people.append([None if rng.random() < 0.1 else a for a in answers])
    groups = {f"g{t}": [f"option {i}" for i in range(size)] for t, size in enumerate(sizes)}
    return groups, people, rng.randint(3, 10)


@pytest.mark.parametrize("seed", range(8))
def test_random_small_surveys_cannot_be_differenced(owner, viewer, seed):
    groups, answers, k = random_survey(random.Random(seed))
    survey, found = build(owner, viewer, groups, k=k)
    people = record_people(
        survey, found, [dict(zip(groups, a, strict=True)) for a in answers], seed=seed
    )
    for question in ("cheat", "drinks"):
        shown = published(question, fetch(viewer, survey, found, question, list(groups)))
        assert_true_numbers(question, people, shown)
        assert attack(question, people, list(groups), shown, k) == {}


def test_a_number_question_is_broken_down_into_means_with_t_intervals(viewer, skipped):
    survey, found, people = skipped
    response = api_for(viewer).get(
        PATH.format(survey_id=survey.id),
        {"question": found["drinks"].id, "by": found["faculty"].id, "level": 0.9},
    )
    assert response.status_code == 200
    assert_matches_schema(response, PATH, "GET")
    body = response.json()
    assert (body["kind"], body["method"], body["lower"], body["upper"]) == ("number", "t", 0, 30)
    design = found["drinks"].design
    for cell in body["categories"]:
        assert not cell["suppressed"]
        reports = [p["drinks"] for p in people if p["faculty"] == cell["category"]]
        expected = design.estimate((len(reports), sum(reports), sum(r * r for r in reports)))
        assert cell["n"] == len(reports)
        assert cell["mean"] == pytest.approx(expected.estimate)
        assert cell["mean_unbiased"] == pytest.approx(expected.estimate_unbiased)
        assert cell["std_error"] == pytest.approx(expected.std_error)
        assert (cell["ci_low"], cell["ci_high"]) == pytest.approx(expected.ci(0.9))
        assert "yes_count" not in cell and "estimate" not in cell


def test_the_csv_hides_exactly_what_the_api_hides_for_every_kind(viewer, skipped):
    survey, found, _ = skipped
    response = api_for(viewer).get(f"/api/surveys/{survey.id}/estimates/breakdowns.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    for question in RANDOMIZED:
        for group, body in fetch(viewer, survey, found, question, list(SKIPPED_GROUPS)).items():
            mine = [
                r
                for r in rows
                if r["question"] == str(found[question].id) and r["by"] == str(found[group].id)
            ]
            cells = {}
            for row in mine[1:] if question != "often" else mine[3:]:
                cells.setdefault(row["category_text"], row)
            assert list(cells) == [c["text"] for c in body["categories"]]
            assert [r["suppressed"] == "true" for r in cells.values()] == [
                c["suppressed"] for c in body["categories"]
            ]
            for cell in body["categories"]:
                row = cells[cell["text"]]
                assert row["category"] == (
                    "" if cell["category"] is None else str(cell["category"])
                )
                if not cell["suppressed"]:
                    assert int(row["n"]) == cell["n"]
                if question == "drinks" and not cell["suppressed"]:
                    assert float(row["estimate"]) == pytest.approx(cell["mean"])


def test_the_same_cells_are_hidden_whatever_is_asked_first(viewer, skipped):
    survey, found, _ = skipped
    forward = fetch(viewer, survey, found, "cheat", ["faculty", "year"])
    backward = fetch(viewer, survey, found, "cheat", ["year", "faculty"])
    assert forward == backward


BAD = [
    ({"question": "faculty", "by": "year"}, "question"),  # asked directly
    ({"question": "drinks", "by": "drinks"}, "by"),  # a number has no categories
    ({"question": "drinks", "by": "cheat"}, "by"),  # randomized grouping
    ({"question": "drinks"}, "by"),
    ({"by": "faculty"}, "question"),
    ({"question": "drinks", "by": "faculty", "level": "1.5"}, "detail"),
    ({"question": "drinks", "by": "faculty", "method": "magic"}, "detail"),
]


@pytest.mark.parametrize(("params", "field"), BAD)
def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(viewer, skipped, params, field):
    survey, found, _ = skipped
    before = stored()
    params = {key: found[value].id if value in found else value for key, value in params.items()}
    response = api_for(viewer).get(PATH.format(survey_id=survey.id), params)
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert stored() == before


def stored() -> tuple:
    return (
        [stored_reports(s) for s in Survey.objects.order_by("pk")],
        [tallied(s) for s in Survey.objects.order_by("pk")],
    )


def test_reading_every_breakdown_stores_nothing(viewer, skipped):
    survey, found, _ = skipped
    before = stored()
    for question in RANDOMIZED:
        fetch(viewer, survey, found, question, list(SKIPPED_GROUPS))
    api_for(viewer).get(f"/api/surveys/{survey.id}/estimates/breakdowns.csv")
    assert stored() == before
    response = api_for(viewer).post(
        PATH.format(survey_id=survey.id), {"question": found["drinks"].id, "by": found["year"].id}
    )
    assert response.status_code == 405 and stored() == before


def test_the_page_shows_means_and_hides_cells_alike(client, viewer, skipped):
    survey, found, _ = skipped
    client.force_login(viewer)
    html = client.get(
        f"/surveys/{survey.id}/results/breakdown/",
        {"question": found["drinks"].id, "by": found["year"].id},
    ).content.decode()
    assert f'<option value="{found["drinks"].id}" selected>' in html
    assert '<th scope="col">Mean</th>' in html and "<svg" in html
    body = fetch(viewer, survey, found, "drinks", ["year"])["year"]
    hidden = [c for c in body["categories"] if c["suppressed"]]
    assert html.count(f'class="hint">{HIDDEN}') == len(hidden) >= 2
    assert wide(html).count(f"{HIDDEN}.") == len(hidden)  # the chart's description alike
    assert '<th scope="row">No answer</th>' in html
    for cell in body["categories"]:
        if not cell["suppressed"]:
            assert f"{cell['mean']:.2f}" in html and f"n = {cell['n']}" in html


def test_a_breakdown_reads_a_few_grouped_counts(viewer, skipped, django_assert_max_num_queries):
    """Two groupings, one of them skipped by some: one joint count per subset of the
    groupings (four) and the question's own, on top of the request's own queries and the
    run's audit-log entry."""
    survey, found, _ = skipped
    with django_assert_max_num_queries(16):
        fetch(viewer, survey, found, "drinks", ["faculty"])


def test_a_survey_without_answers_hides_every_cell(owner, viewer):
    survey, found = build(owner, viewer, SKIPPED_GROUPS)
    for question in RANDOMIZED:
        for body in fetch(viewer, survey, found, question, list(SKIPPED_GROUPS)).values():
            assert body["overall"]["n"] == 0
            assert all(c["suppressed"] for c in body["categories"])
            assert "No answer" not in [c["text"] for c in body["categories"]]


@pytest.mark.parametrize("seed", range(3))
def test_the_atoms_are_every_respondents_answers_to_the_groupings(owner, viewer, seed):
    groups, answers, _ = random_survey(random.Random(seed))
    groups["extra"] = None  # one grouping that nobody skips
    survey, found = build(owner, viewer, groups)
    people = record_people(
        survey, found, [dict(zip(groups, [*a, 1], strict=True)) for a in answers], seed=seed
    )
    atoms = respondent_atoms(survey_counts(survey), found["cheat"], [found[g] for g in groups])
    expected = Counter((p["cheat"], tuple(p.get(g) for g in groups)) for p in people)
    assert atoms == expected
