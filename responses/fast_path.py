"""The respondents' hot path: a plainly valid submission to an open survey, stored by one
statement (PostgreSQL, prepared once per connection) or one short transaction (SQLite).

The statement checks the survey's state itself (open, unlocked, no invite needed, the
design version the reports were checked against, every answered question its own), that
the client's id was never stored (this hour, the last one, or sealed), and the quota, and
writes one row: a survey closed or edited a moment ago gets nothing. Whatever it does not
store, the full path (:func:`responses.write.record_submission`) explains.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from responses.batch import Reports, pattern_key
from responses.models import Receipt, hour_tables, parity, receipt_of, tables_of_parity
from responses.pg_prepared import PreparedStatement
from responses.write import quota_sql, receipt_stored
from survey.models import Question, Survey, current_hour

# The surveys the fast path may store into: what Survey.is_accepting says, no invite
# needed, and the design the answers were validated against. A survey past its close date
# takes nothing, even before anyone has looked at it since (see Survey.close_if_due).
TAKES_PLAIN_SUBMISSIONS = (
    "id = %(survey)s AND status = %(open)s AND NOT is_locked AND NOT requires_invite "
    "AND design_version = %(design)s AND trashed_at IS NULL "
    "AND (closes_at IS NULL OR closes_at > CURRENT_TIMESTAMP)"
)


def answers_belong(in_answered: str, answered: str) -> str:
    """SQL for "every answered question is one of this survey's questions", to AND into a
    WHERE on the survey table: ``in_answered`` tests a question id against the answered
    ones (``= ANY(…)``, ``IN (…)``), ``answered`` is their number."""
    question = Question._meta.db_table
    return (
        f"{answered} = (SELECT COUNT(*) FROM {question} WHERE {question}.survey_id = "
        f"{Survey._meta.db_table}.id AND {question}.id {in_answered})"
    )


def store_if_accepting(
    survey_id: int, submission_id: uuid.UUID, values: Reports, *, design: int
) -> bool:
    """Store a submission if the survey takes plain submissions and is still at design
    version ``design`` (the one ``values`` were validated against). Returns False when
    nothing was stored, whatever the reason (a retry, a closed or locked survey, an
    invite needed, edited questions, a reached quota, no such survey)."""
    hour = current_hour()
    if connection.vendor == "postgresql":
        params = [
            str(survey_id),
            Survey.Status.OPEN.value,
            str(receipt_of(submission_id)),
            hour.isoformat(),
            "{" + ",".join(map(str, values)) + "}",
            str(design),
            pattern_key(values),
        ]
        # connections[...], not the proxy: each read of the proxy is a lookup.
        return STORE[parity(hour)].execute(connections[DEFAULT_DB_ALIAS], params) > 0
    return _store_in_transaction(survey_id, submission_id, values, design, hour)


def _store_in_transaction(survey_id, submission_id, values, design, hour) -> bool:
    """SQLite: one ``INSERT … SELECT`` stores a submission to a survey without a quota
    (the common case) in one short write transaction; a survey with a quota takes the
    longer way, counting its place."""
    tables = hour_tables(hour)
    answered = {f"q{i}": qid for i, qid in enumerate(values)}
    params = {
        "survey": survey_id,
        "open": Survey.Status.OPEN.value,
        "design": design,
        "answered": len(answered),
        "receipt": receipt_of(submission_id).hex,
        "hour": connection.ops.adapt_datetimefield_value(hour),
        "reports": pattern_key(values),
        **answered,
    }
    belong = answers_belong(
        "IN (" + ", ".join(f"%({name})s" for name in answered) + ")", "%(answered)s"
    )
    takes = f"{TAKES_PLAIN_SUBMISSIONS} AND {belong}"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_sqlite_store_sql(tables, takes), params)
        if cursor.rowcount == 1:
            return True
        cursor.execute(
            f"SELECT current_round, response_quota FROM {Survey._meta.db_table} WHERE {takes}",
            params,
        )
        found = cursor.fetchone()
        if found is None or found[1] is None or receipt_stored(submission_id) is not None:
            return False
        cursor.execute(quota_sql(tables), [survey_id])
        if cursor.fetchone() is None:
            return False
        tables.inbox.objects.create(
            receipt=receipt_of(submission_id),
            survey_id=survey_id,
            round=found[0],
            hour=hour,
            reports=params["reports"],
        )
    return True


def _sqlite_store_sql(tables, takes: str) -> str:
    """SQLite's one statement: the survey takes plain submissions and has no quota, and
    the client's id is stored nowhere yet (sealed, this hour or the last)."""
    inbox, other = tables.inbox._meta.db_table, tables.other_inbox._meta.db_table
    return (
        f"INSERT INTO {inbox} (receipt, survey_id, round, simulated, hour, reports) "
        f"SELECT %(receipt)s, id, current_round, 0, %(hour)s, %(reports)s "
        f"FROM {Survey._meta.db_table} WHERE {takes} AND response_quota IS NULL "
        f"AND NOT EXISTS (SELECT 1 FROM {Receipt._meta.db_table} "
        f"WHERE submission_id = %(receipt)s) "
        f"AND NOT EXISTS (SELECT 1 FROM {other} WHERE receipt = %(receipt)s) "
        f"AND NOT EXISTS (SELECT 1 FROM {inbox} WHERE receipt = %(receipt)s)"
    )


def store_submission_sql(this: int) -> Callable[[], str]:
    """The fast path's statement for the hour tables of parity ``this``, parameters in
    the order :func:`store_if_accepting` passes them. The write lock on the hour's table
    is taken when the statement starts, before it reads the survey: a question edit
    (which waits for it, :func:`responses.write.hold_for_design_edit`) either sees the
    survey frozen by this answer or is seen by it."""

    def build() -> str:
        tables = tables_of_parity(this)
        inbox, other = tables.inbox._meta.db_table, tables.other_inbox._meta.db_table
        placeholders = {
            "survey": "$1::bigint",
            "open": "$2::text",
            "receipt": "$3::uuid",
            "hour": "$4::timestamptz",
            "questions": "$5::bigint[]",
            "design": "$6::integer",
            "reports": "$7::text",
        }
        quota = quota_sql(tables, surveys="fresh")
        return (
            f"""
            WITH survey AS (
                SELECT id, current_round, response_quota FROM {Survey._meta.db_table}
                WHERE {TAKES_PLAIN_SUBMISSIONS}
                    AND {answers_belong("= ANY(%(questions)s)", "cardinality(%(questions)s)")}
            ), fresh AS (
                SELECT * FROM survey
                WHERE NOT EXISTS (SELECT 1 FROM {Receipt._meta.db_table}
                                  WHERE submission_id = %(receipt)s)
                    AND NOT EXISTS (SELECT 1 FROM {other} WHERE receipt = %(receipt)s)
                    AND NOT EXISTS (SELECT 1 FROM {inbox} WHERE receipt = %(receipt)s)
            ), quota AS ({quota})
            INSERT INTO {inbox} (receipt, survey_id, round, simulated, hour, reports)
            SELECT %(receipt)s, id, current_round, false, %(hour)s, %(reports)s FROM fresh
            WHERE response_quota IS NULL OR EXISTS (SELECT 1 FROM quota)
            ON CONFLICT (receipt) DO NOTHING
        """
            % placeholders
        )

    return build


STORE = [
    PreparedStatement(f"deniable_store_submission_{p}", store_submission_sql(p)) for p in (0, 1)
]
