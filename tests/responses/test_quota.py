"""A response quota is exact under concurrency and costs the same whatever the number of
responses: one count per survey and hour, taken under its row's lock."""

from __future__ import annotations

import re
import threading
import uuid

import pytest
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from responses.sealing import seal
from responses.write import bulk_record
from survey.models import Survey
from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_rate_limit(settings):
    settings.RATELIMIT_ENABLED = False


def body(survey: Survey) -> dict:
    answers = [{"question": q.id, "value": 1} for q in survey.questions.all()]
    return {"submission_id": str(uuid.uuid4()), "answers": answers}


def submit_at_once(survey: Survey, n: int) -> list[int]:
    """``n`` different respondents press send at the same moment."""
    barrier = threading.Barrier(n, timeout=60)
    statuses: list[int] = []
    url = reverse("api-submit", args=[survey.slug])

    def respondent() -> None:
        try:
            sent = body(survey)
            barrier.wait()
            statuses.append(Client().post(url, sent, "application/json").status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=respondent) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_fifty_respondents_at_once_against_a_quota_of_ten_store_exactly_ten(make_survey):
    survey = make_survey(n_questions=2, response_quota=10)
    statuses = submit_at_once(survey, 50)
    assert sorted(statuses) == [201] * 10 + [409] * 40
    assert stored_count(survey) == 10
    survey.refresh_from_db()
    assert not survey.is_accepting


def test_the_quota_counts_sealed_answers_and_both_hours(make_survey):
    survey = make_survey(n_questions=1, response_quota=5)
    question = survey.questions.get()
    bulk_record(survey, [{question.id: 1}] * 3, simulated=False)
    bulk_record(survey, [{question.id: 1}] * 50, simulated=True)  # not counted
    seal(everything=True)
    statuses = submit_at_once(survey, 4)
    assert sorted(statuses) == [201, 201, 409, 409]
    assert stored_count(survey, simulated=False) == 5


def test_the_quota_check_reads_single_rows_whatever_the_number_of_responses(make_survey):
    """No query counts stored responses: the quota's check reads the sealed count and
    the hours' counts, one row each, at 10 or at 100 000 responses alike."""
    survey = make_survey(n_questions=1, response_quota=1_000_000)
    question = survey.questions.get()
    bulk_record(survey, [{question.id: 1}] * 2000, simulated=False)
    seal(everything=True)
    url = reverse("api-submit", args=[survey.slug])
    with CaptureQueriesContext(connection) as queries:
        assert Client().post(url, body(survey), "application/json").status_code == 201
    stored = [q["sql"].upper() for q in queries.captured_queries if "responses_" in q["sql"]]
    assert stored and not [
        sql for sql in stored if re.search(r'COUNT\([^)]*\) FROM "?RESPONSES_', sql)
    ]
    assert stored_count(survey) == 2001
