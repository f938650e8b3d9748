"""Breakdowns over the API and the dashboard: estimates per category of a directly asked
question, with small cells hidden so that differencing cannot recover them."""

from __future__ import annotations

import csv
import io
import itertools
import uuid

import pytest

from estimator.disclosure import suppress_cells
from responses.counts import joint_counts, survey_counts
from responses.fast_path import store_if_accepting
from responses.sealing import seal
from responses.write import record_submission
from tests.analysis.analysis_data import (
    analysis_survey,
    api_for,
    fill,
    questions,
)
from tests.analysis.drawings import narrow, wide
from tests.storage import joint_from_rows, stored_count
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
PATH = "/api/surveys/{survey_id}/estimates/breakdown/"


def url(survey) -> str:
    return PATH.format(survey_id=survey.id)


def get(user, survey, **params):
    return api_for(user).get(url(survey), params)


def test_the_estimate_per_category_matches_the_design_on_the_same_counts(owner, study):
    fill(study, [120, 40, 60, 30])
    q = questions(study)
    response = get(owner, study, question=q["cheat"], by=q["faculty"])
    assert response.status_code == 200
    assert_matches_schema(response, PATH, "GET")
    body = response.json()
    assert [c["text"] for c in body["categories"]] == ["Arts", "Law", "Science", "Medicine"]
    assert not any(c["suppressed"] for c in body["categories"])
    assert [c["n"] for c in body["categories"]] == [120, 40, 60, 30]
    assert body["overall"]["n"] == 250 and body["min_cell_count"] == 10
    design = study.questions.get(id=q["cheat"]).design
    for cell in body["categories"]:
        expected = design.estimate(cell["yes_count"], cell["n"])
        assert cell["estimate"] == pytest.approx(expected.estimate)
        assert (cell["ci_low"], cell["ci_high"]) == pytest.approx(expected.ci())
    assert sum(c["yes_count"] for c in body["categories"]) == body["overall"]["yes_count"]


def test_a_choice_question_is_broken_down_option_by_option(owner, study):
    fill(study, [50, 50, 50, 50])
    q = questions(study)
    body = get(owner, study, question=q["often"], by=q["faculty"]).json()
    cell = body["categories"][0]
    assert [o["text"] for o in cell["options"]] == ["never", "once", "often"]
    design = study.questions.get(id=q["often"]).design
    estimate = design.estimate([o["count"] for o in cell["options"]])
    assert [o["estimate"] for o in cell["options"]] == pytest.approx(list(estimate.estimate))


def test_a_direct_yes_no_question_breaks_down_into_no_and_yes(owner, study):
    fill(study, [100, 100, 0, 0])
    q = questions(study)
    body = get(owner, study, question=q["cheat"], by=q["job"]).json()
    assert [c["text"] for c in body["categories"]] == ["No", "Yes"]
    assert sum(c["n"] for c in body["categories"]) == 200


HIDDEN_KEYS = {"category", "text", "suppressed"}


def test_small_cells_are_hidden_with_a_protecting_cell_and_carry_no_numbers(owner, study):
    fill(study, [212, 7, 64, 40])
    q = questions(study)
    body = get(owner, study, question=q["cheat"], by=q["faculty"]).json()
    hidden = [c for c in body["categories"] if c["suppressed"]]
    assert [c["text"] for c in hidden] == ["Law", "Medicine"]  # the 7, and the 40 for it
    assert all(set(c) == HIDDEN_KEYS for c in hidden)  # no n, no estimate, no reason


def test_the_survey_sets_k(owner, study):
    study.min_cell_count = 50
    study.save(update_fields=["min_cell_count"])
    fill(study, [212, 70, 64, 40])
    q = questions(study)
    body = get(owner, study, question=q["cheat"], by=q["faculty"]).json()
    assert body["min_cell_count"] == 50
    # 40 < 50, and the 64 with it (two hidden cells holding 104 >= 50)
    assert [c["suppressed"] for c in body["categories"]] == [False, False, True, True]


def test_the_owner_sets_k_over_the_api_and_a_bad_k_changes_nothing(owner, study):
    api = api_for(owner)
    assert api.get(f"/api/surveys/{study.id}/").json()["min_cell_count"] == 10
    for bad in (0, -3, "ten", 1001):
        response = api.patch(f"/api/surveys/{study.id}/", {"min_cell_count": bad}, format="json")
        assert response.status_code == 400 and "min_cell_count" in response.json()
        study.refresh_from_db()
        assert study.min_cell_count == 10
    response = api.patch(f"/api/surveys/{study.id}/", {"min_cell_count": 25}, format="json")
    assert response.status_code == 200 and response.json()["min_cell_count"] == 25
    fill(study, [100, 20, 30, 40])
    q = questions(study)
    body = get(owner, study, question=q["cheat"], by=q["faculty"]).json()
    assert [c["suppressed"] for c in body["categories"]] == [False, True, True, False]


def possible_hidden_counts(shown: dict[int, int], hidden: list[int], total: int, k: int):
    """Every count the hidden cells could have that reproduces what was published, for an
    attacker who knows the total, the shown cells and the suppression rule itself."""
    rest = total - sum(shown.values())
    for guess in itertools.product(range(rest + 1), repeat=len(hidden)):
        if sum(guess) != rest:
            continue
        counts = [0] * (len(shown) + len(hidden))
        for i, n in shown.items():
            counts[i] = n
        for i, n in zip(hidden, guess, strict=True):
            counts[i] = n
        if list(suppress_cells(counts, k=k)) == hidden:
            yield dict(zip(hidden, guess, strict=True))


@pytest.mark.parametrize(
    "sizes",
    [
        [212, 7, 64, 40],
        [120, 4, 35, 60],
        [3, 4, 100, 200],
        [50, 0, 0, 30],
        [12, 12, 9, 80],
        [9, 9, 60, 70],
    ],
)
def test_differencing_the_published_numbers_cannot_pin_a_hidden_cell(owner, study, sizes):
    """The attacker takes the overall n and "yes" count, subtracts every shown cell and
    tries every split of the rest that the rule would have hidden the same way."""
    fill(study, sizes)
    q = questions(study)
    body = get(owner, study, question=q["cheat"], by=q["faculty"]).json()
    hidden = [c["category"] for c in body["categories"] if c["suppressed"]]
    assert hidden, "these breakdowns have small cells"
    shown = {c["category"]: c["n"] for c in body["categories"] if not c["suppressed"]}
    total = body["overall"]["n"]
    pooled = total - sum(shown.values())
    assert len(hidden) >= 2 and pooled >= body["min_cell_count"]
    candidates = list(possible_hidden_counts(shown, hidden, total, body["min_cell_count"]))
    assert {h: sizes[h] for h in hidden} in candidates  # the truth is among them
    for cell in hidden:
        assert len({c[cell] for c in candidates}) >= 2, f"cell {cell} is pinned"
    # The "yes" counts difference to the pooled hidden cells only.
    pooled_yes = body["overall"]["yes_count"] - sum(
        c["yes_count"] for c in body["categories"] if not c["suppressed"]
    )
    assert 0 <= pooled_yes <= pooled


def test_the_breakdowns_csv_hides_the_same_cells(owner, study):
    fill(study, [212, 7, 64, 40])
    q = questions(study)
    response = api_for(owner).get(f"/api/surveys/{study.id}/estimates/breakdowns.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_faculty = [
        r for r in rows if r["question"] == str(q["cheat"]) and r["by"] == str(q["faculty"])
    ]
    assert [r["category_text"] for r in by_faculty] == [
        "(all)",
        "Arts",
        "Law",
        "Science",
        "Medicine",
    ]
    assert [r["suppressed"] for r in by_faculty] == ["false", "false", "true", "false", "true"]
    for row in by_faculty:
        if row["suppressed"] == "true":
            assert {key: value for key, value in row.items() if value} == {
                "question": row["question"],
                "by": row["by"],
                "category": row["category"],
                "category_text": row["category_text"],
                "question_text": row["question_text"],
                "by_text": row["by_text"],
                "suppressed": "true",
            }
    api = get(owner, study, question=q["cheat"], by=q["faculty"]).json()
    shown_csv = [int(r["n"]) for r in by_faculty[1:] if r["suppressed"] == "false"]
    shown_api = [c["n"] for c in api["categories"] if not c["suppressed"]]
    assert shown_csv == shown_api and int(by_faculty[0]["n"]) == api["overall"]["n"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"by": "faculty"}, "question"),
        ({"question": "abc", "by": "faculty"}, "question"),
        ({"question": 999999, "by": "faculty"}, "question"),
        ({"question": "faculty", "by": "job"}, "question"),  # direct, not randomized
        ({"question": "age", "by": "job"}, "question"),  # a number, and direct
        ({"question": "cheat"}, "by"),
        ({"question": "cheat", "by": "plagiarise"}, "by"),  # randomized, not direct
        ({"question": "cheat", "by": "age"}, "by"),  # a number has no categories
        ({"question": "cheat", "by": "faculty", "level": "2"}, "detail"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner, study, params, field):
    q = questions(study)
    params = {key: q.get(value, value) for key, value in params.items()}
    response = get(owner, study, **params)
    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_another_surveys_question_is_unknown(owner, study):
    other = analysis_survey(owner)
    q, other_q = questions(study), questions(other)
    response = get(owner, study, question=other_q["cheat"], by=q["faculty"])
    assert response.status_code == 400 and "question" in response.json()


@pytest.mark.parametrize(
    ("persona", "status"), [("owner", 200), ("viewer", 200), ("outsider", 404)]
)
def test_only_the_surveys_team_sees_a_breakdown(personas, study, persona, status):
    fill(study, [30, 30, 30, 30])
    q = questions(study)
    response = get(personas[persona], study, question=q["cheat"], by=q["faculty"])
    assert response.status_code == status
    if status == 404:
        assert "Arts" not in response.content.decode()


def test_anonymous_and_trashed_are_404_or_401(owner, study):
    q = questions(study)
    anonymous = api_for(None).get(url(study), {"question": q["cheat"], "by": q["faculty"]})
    assert anonymous.status_code in (401, 403, 404)
    study.move_to_trash()
    assert get(owner, study, question=q["cheat"], by=q["faculty"]).status_code == 404


def test_the_counts_come_from_the_answer_patterns_in_three_small_queries(
    owner, study, django_assert_max_num_queries
):
    """The sealed patterns, the current hour's rows grouped, the designs."""
    fill(study, [40, 40, 40, 40])
    q = questions(study)
    with django_assert_max_num_queries(3):
        counts = joint_counts(study, [q["faculty"], q["cheat"]])
    assert counts == joint_from_rows(study, [q["faculty"], q["cheat"]])
    assert sum(counts.values()) == 160 and len(counts) <= 8


def test_the_respondents_fast_path_keeps_the_patterns(owner, study):
    fill(study, [40, 40, 40, 40])
    q = questions(study)
    before = joint_counts(study, [q["faculty"], q["cheat"]])
    values = {question.id: 0 for question in study.questions.all()}
    assert store_if_accepting(study.id, uuid.uuid4(), values, design=study.design_version)
    after = joint_counts(study, [q["faculty"], q["cheat"]])
    assert sum(after.values()) == 161 and after[(0, 0)] == before[(0, 0)] + 1
    assert after == joint_from_rows(study, [q["faculty"], q["cheat"]])


def test_sealing_leaves_every_joint_count_as_it_was(owner, study):
    fill(study, [40, 40, 40, 40])
    q = questions(study)
    before = joint_counts(study, [q["faculty"], q["cheat"]])
    seal(everything=True)
    assert joint_counts(study, [q["faculty"], q["cheat"]]) == before
    assert before == joint_from_rows(study, [q["faculty"], q["cheat"]])


def test_patterns_are_kept_per_round_and_survey(owner, study, make_survey):
    fill(study, [20, 0, 0, 0])
    study.new_round()
    fill(study, [0, 15, 0, 0], seed=9)
    q = questions(study)
    assert sum(joint_counts(study, [q["faculty"], q["cheat"]]).values()) == 15
    assert sum(joint_counts(study, [q["faculty"], q["cheat"]], round=1).values()) == 20
    assert stored_count() == stored_count(study)


def test_simulated_respondents_count_as_in_the_estimates(owner, study):
    fill(study, [40, 40, 40, 40])
    fill(study, [20, 0, 0, 0], simulated=True, seed=8)
    q = questions(study)
    body = get(owner, study, question=q["cheat"], by=q["faculty"]).json()
    tally = survey_counts(study).tally(q["cheat"])  # what the estimates read
    assert body["overall"]["n"] == sum(tally.counts.values()) == 180
    assert body["overall"]["yes_count"] == tally.counts[1]
    assert tally.simulated == 20
    assert body["categories"][0]["n"] == 60


def test_the_dashboard_page_shows_the_breakdown_with_hidden_cells(client, owner, study):
    fill(study, [212, 7, 64, 40])
    q = questions(study)
    client.force_login(owner)
    page = client.get(
        f"/surveys/{study.id}/results/breakdown/", {"question": q["cheat"], "by": q["faculty"]}
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "<title" in html and "<desc" in html
    hidden = "hidden: too few respondents in this or another cell"
    assert html.count(f'class="hint">{hidden}') == 2  # the table: Law and Medicine alike
    assert wide(html).count(f"{hidden}.") == 2  # the chart's description says the same
    assert narrow(html).count(f"{hidden}.") == 2  # on phones too
    assert "n = 7" not in html and "n = 40" not in html
    assert ">212<" in html and ">7<" not in html and ">40<" not in html


def test_the_breakdown_page_is_404_for_outsiders(client, outsider, study):
    client.force_login(outsider)
    assert client.get(f"/surveys/{study.id}/results/breakdown/").status_code == 404


def test_the_results_page_links_the_analyses(client, owner, survey):
    client.force_login(owner)
    dashboard = client.get(f"/surveys/{survey.id}/results/").content.decode()
    for name in ("breakdown", "crosstab", "model"):
        assert f'href="/surveys/{survey.id}/results/{name}/"' in dashboard
    assert f"/api/surveys/{survey.id}/estimates/breakdowns.csv" in dashboard


def test_a_choice_question_page_shows_every_option_and_hides_alike(client, viewer, study):
    fill(study, [60, 5, 30, 0])
    q = questions(study)
    client.force_login(viewer)
    html = client.get(
        f"/surveys/{study.id}/results/breakdown/", {"question": q["often"], "by": q["faculty"]}
    ).content.decode()
    assert html.count('class="hint">hidden: too few respondents') == 3  # 5, 0 and the 30
    for option in ("never", "once", "often"):
        assert f"<td>{option}</td>" in html


def test_htmx_gets_only_the_fragment(client, owner, study):
    fill(study, [30, 30, 30, 30])
    q = questions(study)
    client.force_login(owner)
    fragment = client.get(
        f"/surveys/{study.id}/results/breakdown/",
        {"question": q["cheat"], "by": q["faculty"]},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert fragment.lstrip().startswith('<div id="analysis">') and "<html" not in fragment
    assert "<svg" in fragment


def test_patterns_still_answer_when_some_respondents_left_a_question_blank(
    owner, study, monkeypatch
):
    """A skipped question is in none of its respondent's pattern and none of its
    tallies: the counts still come from the patterns, not from grouping the answers."""
    fill(study, [30, 30, 0, 0])
    q = questions(study)
    for skipped in ("faculty", "cheat"):
        values = {q["faculty"]: 1, q["cheat"]: 1, q["plagiarise"]: 0}
        del values[q[skipped]]
        assert record_submission(study, uuid.uuid4(), values)
    expected = joint_from_rows(study, [q["faculty"], q["cheat"]])
    assert joint_counts(study, [q["faculty"], q["cheat"]]) == expected
    assert sum(expected.values()) == 60
    assert sum(joint_counts(study, [q["cheat"]]).values()) == 61


def test_the_breakdowns_csv_keeps_the_codebooks_12_digits_and_safe_text(owner, study):
    """As the estimates CSV: 0.19499999999999995 is 0.195; a text starting a formula is
    shown, not run, in a spreadsheet."""
    fill(study, [212, 30, 64, 40])
    study.questions.filter(text="Faculty?").update(text="=Faculty?")
    response = api_for(owner).get(f"/api/surveys/{study.id}/estimates/breakdowns.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    numbers = [
        value
        for row in rows
        for key, value in row.items()
        if key in ("estimate", "std_error", "ci_low", "ci_high", "raw_rate") and value
    ]
    assert len(numbers) > 50
    for value in numbers:
        digits = value.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        assert len(digits) <= 12, value
    assert {r["by_text"] for r in rows if r["by"] == str(questions(study)["faculty"])} == {
        "'=Faculty?"
    }
