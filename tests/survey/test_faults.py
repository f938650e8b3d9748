"""Faults on the submit path: concurrent retries, a database that goes away mid-request.

The concurrency tests use real threads, each with its own database connection, against
committed data (``transaction=True``), so on PostgreSQL they exercise the real unique
index and row locks, and on SQLite the write lock with BEGIN IMMEDIATE.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

import pytest
from django.db import OperationalError, connection, connections
from django.test import Client
from django.urls import reverse

from survey.models import Survey
from tests.storage import nothing_stored, stored_answers, stored_count, tallied, tallied_total

N_THREADS = 4


def body_for(survey: Survey, submission_id: uuid.UUID) -> dict:
    answers = [{"question": q.id, "value": 1} for q in survey.questions.all()]
    return {"submission_id": str(submission_id), "answers": answers}


def submit(survey: Survey, body: dict, client: Client | None = None):
    url = reverse("api-submit", args=[survey.slug])
    return (client or Client()).post(url, body, content_type="application/json")


def assert_stored_once(survey: Survey, n_questions: int) -> None:
    assert stored_count(survey) == 1
    assert stored_answers() == n_questions
    assert tallied_total() == n_questions


def run_together(survey: Survey, body: dict, barrier_after: Callable[[str], bool]) -> list[int]:
    """Send ``body`` from N_THREADS threads; each waits for the others right after its
    first query for which ``barrier_after(sql)`` holds, so all pass that point together."""
    barrier = threading.Barrier(N_THREADS, timeout=30)
    statuses: list[int] = []

    def worker() -> None:
        waited = False

        def wait_after_check(execute, sql, params, many, context):
            nonlocal waited
            result = execute(sql, params, many, context)
            if barrier_after(sql) and not waited:
                waited = True
                barrier.wait()
            return result

        try:
            with connection.execute_wrapper(wait_after_check):
                statuses.append(submit(survey, body).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(N_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def has_validated(sql: str) -> bool:
    """The last query before storing: the survey's questions, read for validation."""
    return sql.lstrip().upper().startswith("SELECT") and "survey_question" in sql


@pytest.fixture(autouse=True)
def no_rate_limit(settings):
    settings.RATELIMIT_ENABLED = False


@pytest.mark.django_db(transaction=True)
def test_identical_requests_at_the_same_time_are_stored_once(make_survey):
    """All threads validate, then all try to store the same submission: exactly one wins."""
    survey = make_survey(n_questions=3)
    statuses = run_together(survey, body_for(survey, uuid.uuid4()), has_validated)
    assert sorted(statuses) == [200] * (N_THREADS - 1) + [201]
    assert_stored_once(survey, 3)


@pytest.mark.django_db(transaction=True)
def test_different_submissions_at_the_same_time_are_all_stored(make_survey):
    survey = make_survey(n_questions=2)
    barrier = threading.Barrier(N_THREADS, timeout=30)
    statuses: list[int] = []

    def worker() -> None:
        try:
            barrier.wait()
            statuses.append(submit(survey, body_for(survey, uuid.uuid4())).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(N_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [201] * N_THREADS
    assert stored_count() == N_THREADS
    assert stored_answers() == 2 * N_THREADS
    assert tallied(survey) == {q.id: {1: N_THREADS} for q in survey.questions.all()}


@pytest.mark.django_db
def test_a_retry_after_a_timeout_is_stored_once_and_acknowledged_alike(make_survey):
    survey = make_survey(n_questions=2)
    body = body_for(survey, uuid.uuid4())
    first, retry = submit(survey, body), submit(survey, body)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert first.json() == retry.json()
    assert_stored_once(survey, 2)


def refuse_everything(execute, sql, params, many, context):
    raise OperationalError("connection to server at 127.0.0.1, port 5432 failed")


def fail_on_write(execute, sql, params, many, context):
    """The connection drops as the submission is being written."""
    if "INSERT" in sql and "responses_inbox" in sql:
        raise OperationalError("server closed the connection unexpectedly")
    return execute(sql, params, many, context)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("fault", [refuse_everything, fail_on_write], ids=["down", "mid-write"])
def test_an_unavailable_database_is_503_with_retry_after_and_nothing_half_written(
    make_survey, fault
):
    survey = make_survey(n_questions=3)
    body = body_for(survey, uuid.uuid4())
    with connection.execute_wrapper(fault):
        response = submit(survey, body)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "database is unavailable" in response.json()["detail"]
    assert nothing_stored()
    retry = submit(survey, body)
    assert retry.status_code == 201
    assert_stored_once(survey, 3)


@pytest.mark.django_db
def test_a_respondent_page_is_503_in_plain_words_when_the_database_is_down(survey):
    with connection.execute_wrapper(refuse_everything):
        response = Client().get(reverse("survey:respond", args=[survey.slug]))
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"Please retry shortly" in response.content
