"""A split-ballot question in the grouped analyses: its breakdown and comparisons read
the randomized ballot alone (the direct ballot's answers are another measurement, on the
results page); a cross-tab, a model and a comparison of its two ballots here are refused
with a 400 that says why, and the analysis pages open."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from estimator.compare import compare
from estimator.designs import ForcedResponse
from responses.write import bulk_record
from survey.models import Survey
from tests.analysis.test_split_ballot import post_survey, split_question

pytestmark = pytest.mark.django_db
ARTS, LAW = 0, 1


@pytest.fixture
def split_survey(api):
    response = post_survey(
        api,
        split_question(0.3),
        {
            "text": "Faculty?",
            "kind": "choice",
            "options": ["Arts", "Law"],
            "design": {"name": "direct"},
            "not_sensitive": True,
        },
    )
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get(id=response.json()["id"])
    split, faculty = survey.questions.order_by("position")
    rng = np.random.default_rng(3)
    rows = [
        {split.id: int(rng.integers(0, 4)), faculty.id: int(rng.integers(0, 2))} for _ in range(400)
    ]
    bulk_record(survey, rows, simulated=False)
    # The randomized ballot's reports (0/1) per faculty; 2/3 are the direct ballot's.
    counts = Counter((row[faculty.id], row[split.id]) for row in rows if row[split.id] < 2)
    return survey, split, faculty, counts


def randomized(counts, group):
    return ForcedResponse().estimate(counts[group, 1], counts[group, 0] + counts[group, 1])


def test_a_breakdown_reads_the_randomized_ballot_alone(api, split_survey):
    survey, split, faculty, counts = split_survey
    url = f"/api/surveys/{survey.id}/estimates/breakdown/?question={split.id}&by={faculty.id}"
    body = api.get(url).json()
    for cell in body["categories"]:
        expected = randomized(counts, cell["category"])
        assert cell["n"] == expected.n
        assert cell["estimate"] == pytest.approx(expected.estimate)
    assert body["method"] == "wilson" and "quantities" not in body


def test_two_groups_are_compared_on_the_randomized_ballot(api, split_survey):
    survey, split, faculty, counts = split_survey
    url = f"/api/surveys/{survey.id}/compare/?question={split.id}&by={faculty.id}&a=0&b=1"
    body = api.get(url).json()
    expected = compare(randomized(counts, ARTS), randomized(counts, LAW))
    assert body["difference"] == pytest.approx(expected.difference)
    assert body["lr_p_value"] == pytest.approx(expected.lr_p_value)


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("compare/?question={q}&by=arm&a=0&b=1", "by"),
        ("crosstab/?a={q}&b={f}", "a"),
    ],
)
def test_what_a_split_ballot_cannot_take_is_refused_saying_why(api, split_survey, path, field):
    survey, split, faculty, _ = split_survey
    response = api.get(f"/api/surveys/{survey.id}/" + path.format(q=split.id, f=faculty.id))
    assert response.status_code == 400
    assert "split ballot" in response.json()[field][0]


def test_a_model_of_a_split_ballot_is_refused_saying_why(api, split_survey):
    survey, split, faculty, _ = split_survey
    body = {"outcome": split.id, "covariates": [faculty.id]}
    response = api.post(f"/api/surveys/{survey.id}/regression/", body, format="json")
    assert response.status_code == 400
    assert "split ballot" in response.json()["outcome"][0]


def test_the_analysis_pages_open_with_a_split_ballot(logged_in, split_survey):
    survey, split, faculty, _ = split_survey
    for path in (
        f"breakdown/?question={split.id}&by={faculty.id}",
        f"breakdown/?question={split.id}&by={faculty.id}&a=0&b=1",
        "crosstab/",
        "model/",
        "",
    ):
        response = logged_in.get(f"/surveys/{survey.id}/results/{path}")
        assert response.status_code == 200, path
        assert "is a split ballot" not in response.content.decode(), path
    page = logged_in.get(
        f"/surveys/{survey.id}/results/breakdown/?question={split.id}&by={faculty.id}&a=0&b=1"
    ).content.decode()
    assert "Arts" in page and "Law" in page and "p =" in page
