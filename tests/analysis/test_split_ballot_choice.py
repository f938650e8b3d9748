"""The split ballot on a multiple-choice question: a direct answer stored as k + option,
apart from the randomized reports; per option the randomized share, the direct one and
their difference (agreeing with :mod:`estimator.split`), one test for all options, and
the same figures on the results page, in the estimates CSV, the export and the codebook."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from estimator.designs import KRandomizedResponse
from estimator.split import SplitDesign
from responses.write import bulk_record
from survey.models import Survey
from tests.analysis.test_arms_question import submit
from tests.storage import nothing_stored, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

OPTIONS = ["Never", "Once", "Often"]
KRR = {"name": "k_rr", "epsilon": 2.0}
DESIGN = SplitDesign(KRandomizedResponse(epsilon=2.0, k=3), 0.3)


def create(api) -> Survey:
    question = {"text": "Cheated?", "kind": "choice", "options": OPTIONS, "design": KRR}
    return open_split_survey(api, question)


def open_split_survey(api, question: dict, *more: dict) -> Survey:
    """An open survey whose first question is ``question`` on a split ballot (0.3 asked
    directly), then ``more`` questions."""
    body = {"title": "Split", "questions": [question | {"direct_share": 0.3}, *more]}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["questions"][0]["direct_share"] == 0.3
    survey = Survey.objects.get(id=response.json()["id"])
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


@pytest.mark.django_db(transaction=True)
def test_a_direct_answer_is_stored_as_k_plus_the_option(api, client):
    survey = create(api)
    question = survey.questions.get()
    assert (
        submit(client, survey, {"question": question.id, "value": 2, "arm": 1}).status_code == 201
    )
    assert (
        submit(client, survey, {"question": question.id, "value": 2, "arm": 0}).status_code == 201
    )
    assert sorted(r[question.id] for r in stored_reports(survey)) == [2, 5]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"value": 1}, "arm missing"),
        ({"value": 3, "arm": 1}, "value 3"),
        ({"value": 0, "arm": 2}, "arm 2"),
    ],
)
def test_a_bad_choice_ballot_is_refused_and_nothing_is_stored(api, client, answer, words):
    survey = create(api)
    response = submit(client, survey, {"question": survey.questions.get().id, **answer})
    assert response.status_code == 400
    assert words in json.dumps(response.json()), response.json()
    assert nothing_stored()


def seeded(n: int = 9000) -> np.ndarray:
    """Stored reports (ballot·3 + answer): on the direct ballot, half of those whose
    truth is "Often" say "Never" — what a split ballot is there to find."""
    rng = np.random.default_rng(3)
    truths = rng.choice(3, size=n, p=[0.5, 0.2, 0.3])
    stored = DESIGN.simulate(truths, rng)
    hiding = (stored == 5) & (rng.random(n) < 0.5)
    return np.where(hiding, 3, stored)


def test_the_results_agree_with_the_maths_on_every_surface(api, client, owner):
    survey = create(api)
    question = survey.questions.get()
    stored = seeded()
    bulk_record(survey, [{question.id: int(r)} for r in stored], simulated=False)
    expected = DESIGN.estimate(np.bincount(stored, minlength=6))
    response = api.get(f"/api/surveys/{survey.id}/estimates/", {"level": "0.9"})
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    entry = response.json()["questions"][0]
    assert entry["n"] == expected.n and [a["n"] for a in entry["arms"]] == [
        expected.n,
        expected.direct_n,
    ]
    assert entry["arms"][1]["counts"] == list(expected.direct_counts)
    for option, comparison, share in zip(
        entry["options"], expected.comparisons(0.9), expected.direct.estimate, strict=True
    ):
        assert option["direct"]["estimate"] == pytest.approx(share)
        assert option["difference"]["estimate"] == pytest.approx(comparison.difference)
        assert (option["difference"]["ci_low"], option["difference"]["ci_high"]) == pytest.approx(
            comparison.ci()
        )
    # "Often" is admitted more under randomized response, "Never" less.
    often, never = entry["options"][2], entry["options"][0]
    assert often["difference"]["ci_low"] > 0 and never["difference"]["ci_high"] < 0
    assert "points more “Often”" in often["words"]
    assert entry["equality_test"]["df"] == 2 and entry["equality_test"]["p_value"] < 1e-6
    assert entry["words"].startswith("The shares differ")
    assert response.json()["n_responses"] == len(stored)

    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    section = html.split('data-kind="split"', 1)[1].split("</div>", 1)[0]
    assert f"n = {expected.direct_n}" in section and "Often" in section
    assert f"{100 * expected.comparisons()[2].difference:+.1f} pt" in section

    rows = list(
        csv.DictReader(
            io.StringIO(client.get(f"/api/surveys/{survey.id}/estimates.csv").content.decode())
        )
    )
    assert [r["option"] for r in rows][3:] == [
        "0 direct",
        "0 difference",
        "1 direct",
        "1 difference",
        "2 direct",
        "2 difference",
    ]
    assert float(rows[-1]["estimate"]) == pytest.approx(expected.comparisons()[2].difference)


def test_exports_codebook_and_breakdowns_know_the_ballot(api, client, owner):
    survey = create(api)
    question = survey.questions.get()
    bulk_record(survey, [{question.id: 5}, {question.id: 1}], simulated=False)
    client.force_login(owner)
    rows = list(
        csv.reader(io.StringIO(client.get(f"/api/surveys/{survey.id}/export.csv").content.decode()))
    )
    assert rows[0] == ["round", "q1", "q1_arm"]
    assert sorted(rows[1:]) == [["1", "1", "0"], ["1", "2", "1"]]
    entry = client.get(f"/api/surveys/{survey.id}/codebook.json").json()["questions"][0]
    assert entry["ballot_matrix"]["rows"].startswith("arm * 3 + report")
    assert len(entry["ballot_matrix"]["values"]) == 6
    assert "Never, Once, Often" in entry["ballot_matrix"]["rows"]


def test_a_breakdown_reads_the_randomized_ballot_alone(api):
    faculty = {"text": "Faculty?", "kind": "choice", "options": ["Arts", "Law"]}
    faculty |= {"design": {"name": "direct"}, "not_sensitive": True}
    question = {"text": "Cheated?", "kind": "choice", "options": OPTIONS, "design": KRR}
    body = {"title": "Split", "questions": [question | {"direct_share": 0.3}, faculty]}
    survey = Survey.objects.get(id=api.post("/api/surveys/", body, format="json").json()["id"])
    split, by = survey.questions.order_by("position")
    rng = np.random.default_rng(5)
    rows = [{split.id: int(rng.integers(0, 6)), by.id: int(rng.integers(0, 2))} for _ in range(600)]
    bulk_record(survey, rows, simulated=False)
    url = f"/api/surveys/{survey.id}/estimates/breakdown/?question={split.id}&by={by.id}"
    response = api.get(url)
    assert response.status_code == 200, response.json()
    for cell in response.json()["categories"]:
        counts = np.bincount(
            [r[split.id] for r in rows if r[by.id] == cell["category"] and r[split.id] < 3],
            minlength=3,
        )
        expected = DESIGN.randomized_design.estimate(counts)
        assert cell["n"] == expected.n
        assert [o["estimate"] for o in cell["options"]] == pytest.approx(list(expected.estimate))
    crosstab = api.get(f"/api/surveys/{survey.id}/crosstab/", {"a": split.id, "b": by.id})
    assert crosstab.status_code == 400, crosstab.json()
    assert "split ballot" in crosstab.json()["a"][0]


@pytest.mark.django_db(transaction=True)
def test_the_page_without_javascript_takes_the_ballot_the_respondent_drew(api, client):
    from tests.survey.test_respondent_views import paper_post

    survey = create(api)
    question = survey.questions.get()
    page = client.get(survey.get_absolute_url()).content.decode()
    assert "decide by chance alone how this question is asked" in page
    assert f'name="arm_{question.id}" value="1"' in page
    response = paper_post(client, survey, {question.id: "2"}, **{f"arm_{question.id}": "1"})
    assert response.status_code in (200, 302, 303)
    assert stored_reports(survey) == [{question.id: 5}]
