"""The submit fast path's prepared statement on PostgreSQL, run straight over libpq.

It must behave as a statement run through Django's own cursors would: prepared again on
a new connection or when the server forgot it, errors arriving as ``django.db``
exceptions (a lost connection as OperationalError, which the app turns into a 503), and
the query log and ``execute_wrapper`` hooks seeing it.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from django.db import DataError, OperationalError, connection
from django.test.utils import CaptureQueriesContext

from responses.fast_path import STORE, store_if_accepting
from responses.models import parity, receipt_of
from survey.models import Survey, current_hour
from tests.storage import stored_answers, stored_count, tallied_total

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's fast path"),
]


def store(survey: Survey, values: dict[int, int] | None = None) -> bool:
    values = values or {q.id: 1 for q in survey.questions.all()}
    return store_if_accepting(survey.id, uuid.uuid4(), values, design=1)


def stored() -> tuple[int, int, int]:
    return (stored_count(), stored_answers(), tallied_total())


def statement():
    """The statement for this hour's tables."""
    return STORE[parity(current_hour())]


def server_knows_statement() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE name = %s",
            [statement().name.decode()],
        )
        return cursor.fetchone()[0] == 1


def test_it_is_prepared_once_per_connection(make_survey):
    survey = make_survey(n_questions=2)
    assert store(survey) and store(survey)
    assert server_knows_statement()
    connection.close()
    assert store(survey)  # a new connection: prepared there too
    assert server_knows_statement()
    assert stored() == (3, 6, 6)


def test_a_statement_the_server_forgot_is_prepared_again(make_survey):
    """DISCARD ALL (what a pooler may send between clients) drops prepared statements."""
    survey = make_survey(n_questions=2)
    assert store(survey)
    with connection.cursor() as cursor:
        cursor.execute("DISCARD ALL")
    assert not server_knows_statement()
    assert store(survey)
    assert server_knows_statement()
    assert stored() == (2, 4, 4)


def test_a_lost_connection_is_operational_error_and_the_next_request_reconnects(
    make_survey, client
):
    survey = make_survey(n_questions=2)
    assert store(survey)
    doomed = connection.connection.info.backend_pid
    with psycopg.connect(connection.connection.info.dsn, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [doomed])
    with pytest.raises(OperationalError):
        store(survey)
    # What a request sees: a 503 the browser retries, then a fresh connection.
    connection.close()
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [{"question": q.id, "value": 0} for q in survey.questions.all()],
    }
    response = client.post(
        f"/api/public/surveys/{survey.slug}/responses/", body, content_type="application/json"
    )
    assert response.status_code == 201
    assert stored() == (2, 4, 4)


def test_the_query_log_and_execute_wrappers_see_it(make_survey):
    survey = make_survey(n_questions=2)
    values = {q.id: 1 for q in survey.questions.all()}
    seen = []

    def spy(execute, sql, params, many, context):
        seen.append((sql, list(params)))
        return execute(sql, params, many, context)

    submission_id = uuid.uuid4()
    with CaptureQueriesContext(connection) as queries, connection.execute_wrapper(spy):
        assert store_if_accepting(survey.id, submission_id, values, design=1)
    assert [q["sql"] for q in queries.captured_queries] == [statement().sql]
    ((sql, params),) = seen
    assert sql == statement().sql
    assert params[:3] == [str(survey.id), "open", str(receipt_of(submission_id))]


def test_an_error_inside_the_statement_is_a_django_error_and_stores_nothing(make_survey):
    survey = make_survey(n_questions=1)
    # A question id too big for its column: PostgreSQL refuses the statement as a whole.
    values = {2**70: 1}
    with pytest.raises(DataError):
        store_if_accepting(survey.id, uuid.uuid4(), values, design=1)
    assert stored() == (0, 0, 0)
    assert store(survey)
