"""Every way of storing reports gives the same counts: the respondents' fast path, the
full path, bulk writes (simulated respondents, the classroom), and the CSV import, before
and after the seal."""

from __future__ import annotations

import io
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from responses.counts import survey_counts
from responses.imports import import_responses
from responses.sealing import seal
from responses.write import bulk_record, record_submission
from survey.models import Survey

pytestmark = pytest.mark.django_db
NUMBERS = [3, 7, 12, 12, 25, 29, 40, -5]


def new_survey(owner) -> Survey:
    survey = Survey.objects.create(owner=owner, title="Drinks", status=Survey.Status.OPEN)
    survey.questions.create(position=0, text="Cheated?", design_params={})
    survey.questions.create(
        position=1, text="Drinks last week?", kind="number", design_name="laplace",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 30},
    )  # fmt: skip
    return survey


def reports_of(survey: Survey) -> list[dict[int, int]]:
    yes_no, number = survey.questions.all()
    return [{yes_no.id: i % 2, number.id: v} for i, v in enumerate(NUMBERS)]


def through_the_api(survey: Survey) -> None:
    url = reverse("api-submit", args=[survey.slug])
    for values in reports_of(survey):
        answers = [{"question": q, "value": v} for q, v in values.items()]
        body = {"submission_id": str(uuid.uuid4()), "answers": answers}
        assert Client().post(url, body, "application/json").status_code == 201


def through_the_full_path(survey: Survey) -> None:
    for values in reports_of(survey):
        assert record_submission(survey, uuid.uuid4(), values)


def in_bulk(survey: Survey) -> None:
    bulk_record(survey, reports_of(survey), simulated=False)


def by_import(survey: Survey) -> None:
    lines = ["q1,q2", *(f"{i % 2},{v}" for i, v in enumerate(NUMBERS))]
    assert import_responses(survey, io.BytesIO("\n".join(lines).encode())) == len(NUMBERS)


def counts_by_position(survey: Survey) -> tuple:
    """The counts, with questions named by position (each path has its own survey)."""
    counts = survey_counts(survey)
    position = dict(survey.questions.values_list("id", "position"))
    tallies = {
        position[qid]: (dict(t.counts), tuple(t.stats), t.skipped)
        for qid, t in counts.tallies.items()
    }
    patterns = {
        tuple(sorted((position[int(item.split("=")[0])], item.split("=")[1])
                     for item in key.split(","))): n
        for key, n in counts.patterns.items()
    }  # fmt: skip
    return tallies, patterns


def test_the_same_reports_give_the_same_tallies_sums_and_patterns_on_every_path(owner):
    paths = [through_the_api, through_the_full_path, in_bulk, by_import]
    surveys = []
    for path in paths:
        survey = new_survey(owner)
        path(survey)
        surveys.append(survey)
    current = [counts_by_position(s) for s in surveys]
    assert all(c == current[0] for c in current)
    number = surveys[0].questions.get(position=1)
    tally = survey_counts(surveys[0]).tally(number.id)
    assert dict(tally.counts) == {
        key: sum(number.design.tally_key(v) == key for v in NUMBERS)
        for key in {number.design.tally_key(v) for v in NUMBERS}
    }
    seal(everything=True)
    assert [counts_by_position(s) for s in surveys] == current
