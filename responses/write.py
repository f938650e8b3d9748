"""Every way reports are stored: one row per submission in the current hour's tables.

The respondent pages and the API (:func:`record_submission`, and the fast path in
:mod:`responses.fast_path`), simulated respondents (:func:`bulk_record`,
:func:`simulate_respondents`) and imports (:mod:`responses.imports`) all write the same
kind of row, so whatever reads or seals them sees one shape (:mod:`responses.batch`).

Who may store what, and when, is decided in the same transaction as the write: the
design the reports were checked against, the client's id not used before (in this hour,
the last, or a sealed one), the invite's credential not spent, the quota not reached.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

import numpy as np
from django.db import IntegrityError, connection, transaction

from estimator.simulation import Truth, simulate_reports
from responses.batch import Reports, pattern_key
from responses.models import (
    INBOXES,
    AnswerPattern,
    HourTables,
    ImportBatch,
    Receipt,
    Release,
    SpentCredential,
    SurveyCount,
    Tally,
    hour_tables,
    receipt_of,
)
from survey import invites
from survey.models import (
    CredentialKey,
    DesignChanged,
    InviteRejected,
    SubmissionIdTaken,
    Survey,
    current_hour,
)

BATCH_ROWS = 1000


class QuotaReached(Exception):
    """The survey has taken as many real submissions as its quota allows."""


def hold_arrivals(tables: HourTables) -> None:
    """Take the write lock on the hour's table before reading anything the write depends
    on (PostgreSQL; SQLite's write transactions are exclusive anyway): a question edit
    waits for every submission in flight (:func:`hold_for_design_edit`), and a
    submission that waited for an edit reads the survey as it is after it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {tables.inbox._meta.db_table} IN ROW EXCLUSIVE MODE")


def hold_for_design_edit() -> None:
    """For a transaction that edits a survey's questions: wait until no submission is being
    written, and keep new ones waiting until it commits, so that either the edit sees the
    survey frozen by an answer or the answers see the new design version (the survey row
    itself is never locked by respondents, so it carries no trace of them)."""
    if connection.vendor == "postgresql":
        tables = ", ".join(inbox._meta.db_table for inbox in INBOXES)
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {tables} IN SHARE MODE")


def design_version_now(survey_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT design_version FROM {Survey._meta.db_table} WHERE id = %s", [survey_id]
        )
        return cursor.fetchone()[0]


def receipt_stored(submission_id: uuid.UUID) -> int | None:
    """The survey a client's submission id was stored for (this hour, the last, or
    sealed), or None."""
    digest = receipt_of(submission_id)
    for model, field in ((Receipt, "submission_id"), *((inbox, "receipt") for inbox in INBOXES)):
        found = model.objects.filter(**{field: digest}).values_list("survey_id", flat=True)
        if (survey_id := found.first()) is not None:
            return survey_id
    return None


def credential_spent(spent_id: str) -> bool:
    if SpentCredential.objects.filter(spent_id=spent_id).exists():
        return True
    return any(inbox.objects.filter(credential=spent_id).exists() for inbox in INBOXES)


def quota_sql(tables: HourTables, surveys: str | None = None) -> str:
    """Count one more real submission to a survey with a quota, if it has room: one row
    per survey and hour, updated under its lock, so concurrent submissions never overshoot,
    and the check costs the same whatever the number of responses. ``surveys``: SQL for
    the survey (its ``id`` and ``response_quota``), by default the one whose id is the
    statement's parameter. Returns a row when counted; none when the quota is reached or
    the survey has none."""
    quota, other = tables.quota._meta.db_table, tables.other_quota._meta.db_table
    sealed = SurveyCount._meta.db_table
    surveys = surveys or f"(SELECT id, response_quota FROM {Survey._meta.db_table} WHERE id = %s)"
    room = (
        f"s.response_quota - COALESCE((SELECT real FROM {sealed} WHERE survey_id = s.id), 0)"
        f" - COALESCE((SELECT n FROM {other} WHERE survey_id = s.id), 0)"
    )
    return (
        f"INSERT INTO {quota} (survey_id, n, room) "
        f"SELECT id, 1, room FROM (SELECT s.id, {room} AS room FROM {surveys} AS s "
        "WHERE s.response_quota IS NOT NULL) AS q WHERE room > 0 "
        f"ON CONFLICT (survey_id) DO UPDATE SET n = {quota}.n + 1, room = excluded.room "
        f"WHERE {quota}.n < excluded.room RETURNING survey_id"
    )


def take_quota_place(survey: Survey, tables: HourTables) -> None:
    """Raise :class:`QuotaReached` unless the survey (which has a quota) has room left,
    counting this submission in."""
    with connection.cursor() as cursor:
        cursor.execute(quota_sql(tables), [survey.pk])
        if cursor.fetchone() is None:
            raise QuotaReached


def spend(survey: Survey, credential: invites.Credential | None) -> str:
    """The spent id of a valid, unspent credential of ``survey``; raises
    :class:`InviteRejected` for a missing, forged or spent one."""
    if credential is None or not invites.verify(CredentialKey.of(survey).private_key, credential):
        raise InviteRejected
    spent_id = credential.spent_id(survey.pk)
    if credential_spent(spent_id):
        raise InviteRejected
    return spent_id


def record_submission(
    survey: Survey,
    submission_id: uuid.UUID,
    values: Reports,
    *,
    credential: invites.Credential | None = None,
    simulated: bool = False,
    design_version: int | None = None,
) -> bool:
    """Store one submission (all its reports, atomically) with every check.

    Returns True when stored, False when this ``submission_id`` was already stored for
    this survey (a retry: idempotent; nothing is spent or counted again). Raises
    :class:`SubmissionIdTaken` when the id belongs to another survey's submission,
    :class:`InviteRejected` for a missing, forged or spent credential (the survey requires
    one), :class:`DesignChanged` when ``design_version`` (the one ``values`` were
    validated against) is no longer the survey's, and :class:`QuotaReached`; then nothing
    is stored.
    """
    hour = current_hour()
    tables = hour_tables(hour)
    try:
        with transaction.atomic():
            hold_arrivals(tables)
            if design_version is not None and design_version != design_version_now(survey.pk):
                raise DesignChanged
            stored_for = receipt_stored(submission_id)
            if stored_for is not None:
                if stored_for != survey.pk:
                    raise SubmissionIdTaken
                return False
            spent_id = spend(survey, credential) if survey.requires_invite else None
            if survey.response_quota is not None and not simulated:
                take_quota_place(survey, tables)
            round_ = Survey.objects.values_list("current_round", flat=True).get(pk=survey.pk)
            tables.inbox.objects.create(
                receipt=receipt_of(submission_id),
                survey=survey,
                round=round_,
                simulated=simulated,
                hour=hour,
                reports=pattern_key(values),
                credential=spent_id,
            )
    except IntegrityError:
        # The same id or credential stored a moment ago by a concurrent request.
        if receipt_stored(submission_id) == survey.pk:
            return False
        if receipt_stored(submission_id) is not None:
            raise SubmissionIdTaken from None
        raise InviteRejected from None
    return True


def inbox_rows(
    survey: Survey,
    reports: Iterable[Reports],
    *,
    simulated: bool,
    hour: datetime,
    batch: uuid.UUID | None = None,
) -> Iterator:
    """The current-hour rows of ``reports`` (random receipts: nobody will retry them)."""
    inbox = hour_tables(hour).inbox
    for values in reports:
        yield inbox(
            receipt=uuid.uuid4(),
            survey_id=survey.pk,
            round=survey.current_round,
            simulated=simulated,
            hour=hour,
            reports=pattern_key(values),
            batch=batch,
        )


def bulk_record(
    survey: Survey,
    reports: Iterable[Reports],
    *,
    simulated: bool,
    hour: datetime | None = None,
) -> int:
    """Store many submissions at once (simulated respondents, tests): one transaction.
    ``hour``: when they count as arrived (a demo's estimate-over-time chart). They share a
    batch id: no client will ever retry them, so the seal keeps no receipts for them."""
    hour = hour or current_hour()
    rows = list(inbox_rows(survey, reports, simulated=simulated, hour=hour, batch=uuid.uuid4()))
    if rows:
        with transaction.atomic():
            type(rows[0]).objects.bulk_create(rows, batch_size=BATCH_ROWS)
    return len(rows)


def simulate_respondents(
    survey: Survey,
    n: int,
    truth: Truth | Mapping[int, Truth] | None = None,
    rng=None,
    *,
    hour: datetime | None = None,
) -> int:
    """Add ``n`` simulated respondents, randomized by each question's own design and
    marked simulated (``hour``: when they count as arrived, for a demo's
    estimate-over-time chart; default now).

    ``truth`` is their true distribution, one for every question or
    ``{question id: truth}`` for each: a true rate for yes/no, option probabilities
    for choice, ``{"mean", "sd"}`` or ``{"uniform": True}`` for numbers (see
    :mod:`estimator.simulation`); none: every true value equally likely, whatever the
    question's kind. Raises ValueError, storing nothing, when a truth does not fit its
    question.
    """
    rng = rng or np.random.default_rng()
    questions = list(survey.questions.all())
    per_question = isinstance(truth, Mapping) and all(isinstance(k, int) for k in truth)
    columns = []
    for q in questions:
        if per_question and truth.get(q.id) is None:
            raise ValueError(f"no true distribution given for question {q.id}")
        own = truth.get(q.id) if per_question else truth
        columns.append(simulate_reports(q.design, own, n, rng))
    rows = zip(*columns, strict=True) if columns else iter(())
    reports = ({q.id: int(v) for q, v in zip(questions, row, strict=True)} for row in rows)
    return bulk_record(survey, reports, simulated=True, hour=hour)


def start_import(survey: Survey) -> ImportBatch:
    """Mark an import as under way: the seal leaves its rows alone until it ends."""
    return ImportBatch.objects.create(survey=survey, started_hour=current_hour())


def delete_responses(survey: Survey) -> int:
    """Delete every stored response of ``survey`` (sealed and of the current hour), its
    receipts, spent credentials and the counts released to viewers; the number of
    submissions deleted. In one transaction, so the survey's results go from whole to
    nothing."""
    with transaction.atomic():
        count = SurveyCount.objects.filter(survey=survey).first()
        deleted = (count.real + count.simulated) if count else 0
        for inbox in INBOXES:
            deleted += inbox.objects.filter(survey=survey).delete()[0]
        for model in (AnswerPattern, Receipt, SpentCredential, SurveyCount, Release):
            model.objects.filter(survey=survey).delete()
        Tally.objects.filter(question__survey=survey).delete()
    return deleted
