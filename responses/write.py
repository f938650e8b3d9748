"""Every way reports become rows: one submission (the respondent pages and the API),
many at once (simulated respondents), with the checks each path needs."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

import numpy as np
from django.db import IntegrityError, transaction

from estimator.simulation import Truth, simulate_reports
from responses.models import (
    Answer,
    AnswerPattern,
    Receipt,
    SpentCredential,
    Submission,
    Tally,
    tally_sums,
)
from survey import invites
from survey.models import (
    DesignChanged,
    InviteRejected,
    SubmissionIdTaken,
    Survey,
    current_hour,
)


def simulate_respondents(
    survey: Survey,
    n: int,
    truth: Truth | Mapping[int, Truth] = 0.5,
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
    :mod:`estimator.simulation`). Raises ValueError, storing nothing, when a truth
    does not fit its question.
    """
    rng = rng or np.random.default_rng()
    questions = list(survey.questions.all())
    per_question = isinstance(truth, Mapping) and all(isinstance(k, int) for k in truth)
    columns = []
    for q in questions:
        own = truth.get(q.id) if per_question else truth
        if own is None:
            raise ValueError(f"no true distribution given for question {q.id}")
        columns.append(simulate_reports(q.design, own, n, rng))
    rows = zip(*columns, strict=True) if columns else iter(())
    reports = ({q.id: int(v) for q, v in zip(questions, row, strict=True)} for row in rows)
    return bulk_record(survey, reports, simulated=True, hour=hour)


def record_submission(
    survey: Survey,
    submission_id: uuid.UUID,
    values: dict[int, int],
    *,
    credential: invites.Credential | None = None,
    simulated: bool = False,
    design_version: int | None = None,
) -> bool:
    """Store one submission and all its answers atomically.

    Returns True when stored, False when this ``submission_id`` was already stored
    (a retry: idempotent). Raises :class:`InviteRejected` for a missing, forged or
    spent credential (the survey requires one) and
    :class:`DesignChanged` when ``design_version`` (the one ``values`` were validated
    against) is no longer the survey's; then nothing is stored.
    """
    hour = current_hour()
    try:
        with transaction.atomic():
            if design_version is not None and design_version != survey.locked_design_version():
                raise DesignChanged
            Receipt.objects.create(submission_id=submission_id, survey=survey, received_hour=hour)
            submission = Submission.objects.create(
                survey=survey,
                round=survey.current_round,
                simulated=simulated,
                received_hour=hour,
            )
            if survey.requires_invite and not SpentCredential.spend(survey, credential):
                raise InviteRejected
            Answer.objects.bulk_create(
                Answer(submission=submission, question_id=qid, value=value)
                for qid, value in values.items()
            )
            Tally.add_sums(
                tally_sums(survey.question_designs(), [values]),
                round=survey.current_round,
                simulated=simulated,
                hour=hour,
            )
            AnswerPattern.add(
                survey.id,
                {AnswerPattern.key_for(values): 1},
                round=survey.current_round,
                simulated=simulated,
            )
    except IntegrityError:
        if survey.receipts.filter(submission_id=submission_id).exists():
            return False
        if Receipt.objects.filter(submission_id=submission_id).exists():
            raise SubmissionIdTaken from None
        raise
    return True


def bulk_record(
    survey: Survey,
    reports: Iterable[dict[int, int]],
    *,
    simulated: bool,
    hour: datetime | None = None,
) -> int:
    """Store many submissions at once (simulated respondents): one transaction, one upsert."""
    hour = hour or current_hour()
    reports = list(reports)
    submissions, answers, patterns = [], [], {}
    for values in reports:
        key = AnswerPattern.key_for(values)
        patterns[key] = patterns.get(key, 0) + 1
        submission = Submission(
            survey=survey, round=survey.current_round, simulated=simulated, received_hour=hour
        )
        submissions.append(submission)
        for qid, value in values.items():
            answers.append(Answer(submission=submission, question_id=qid, value=value))
    sums = tally_sums(survey.question_designs(), reports)
    with transaction.atomic():
        Submission.objects.bulk_create(submissions, batch_size=1000)
        Answer.objects.bulk_create(answers, batch_size=1000)
        Tally.add_sums(sums, round=survey.current_round, simulated=simulated, hour=hour)
        for chunk in _chunks(list(patterns.items()), 500):
            AnswerPattern.add(
                survey.id, dict(chunk), round=survey.current_round, simulated=simulated
            )
    return len(submissions)


def _chunks(items: list, size: int) -> Iterator[list]:
    """Slices of ``size``: an upsert of every pattern at once would pass too many
    parameters for SQLite."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
