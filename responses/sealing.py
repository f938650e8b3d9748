"""Sealing a finished hour: its rows rewritten in random order under fresh keys.

Rows are written as answers arrive, so until then their physical place (PostgreSQL's
``ctid``, SQLite's ``rowid``), their transaction id (``xmin``) and the order of the
receipts all follow the order of arrival; with the access log's one-second timestamps
that would give each submission its second. Stored times are rounded to the hour, and
sealing makes everything else as coarse: in one transaction per hour, every submission,
answer and receipt of that hour is deleted and inserted again in a random order,
submissions under fresh random keys, and the hour's tally shards are folded into one row
per value, and the surveys' answer patterns are rewritten in random order (a pattern row
last written by one submission would otherwise keep that submission's ``xmin``).
Afterwards every row of the hour carries the same ``xmin``, and neither keys
nor physical order say which arrived first. Estimates and tallies do not change, and a
seal that is killed midway rolls back whole: nothing is lost or doubled.
"""

from __future__ import annotations

import random
import secrets
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from responses.models import Answer, AnswerPattern, Receipt, SpentCredential, Submission, Tally
from survey.models import Invite, Survey

BATCH = 1000


@dataclass(frozen=True)
class SealedHour:
    hour: datetime
    submissions: int
    answers: int
    receipts: int


def hours_to_seal(before: datetime) -> list[datetime]:
    """The hours before ``before`` that hold rows still in arrival order (a late
    straggler, committed after its hour was sealed, makes its hour due again)."""
    due = Submission.objects.filter(sealed=False, received_hour__lt=before)
    return list(due.values_list("received_hour", flat=True).distinct().order_by("received_hour"))


def seal_finished_hours(before: datetime, rng: random.Random | None = None) -> list[SealedHour]:
    """Seal every hour before ``before``, one transaction each (oldest first)."""
    return [seal_hour(hour, rng) for hour in hours_to_seal(before)]


def seal_hour(hour: datetime, rng: random.Random | None = None) -> SealedHour:
    """Rewrite every submission, answer and receipt of ``hour`` in a random order,
    submissions under fresh keys, and fold the hour's tallies; all or nothing.

    ``rng`` draws the order and the keys: the operating system's randomness unless a
    test passes a seeded one. Rows of this hour committed by a late writer while the
    seal runs are neither read nor deleted; they stay unsealed until the next run.
    """
    rng = rng or random.SystemRandom()
    with transaction.atomic():
        submissions = list(
            Submission.objects.select_for_update()
            .filter(received_hour=hour)
            .values_list("submission_id", "survey_id", "round", "simulated")
        )
        receipts = list(
            Receipt.objects.select_for_update()
            .filter(received_hour=hour)
            .values_list("submission_id", "survey_id")
        )
        answers = answers_by_submission([row[0] for row in submissions])
        delete_in_batches(submissions, receipts)
        rng.shuffle(submissions)
        rng.shuffle(receipts)
        insert_shuffled(hour, submissions, answers, receipts, rng)
        Tally.objects.filter(hour=hour).compact(before=hour + timedelta(hours=1))
        AnswerPattern.rewrite_shuffled({row[1] for row in submissions}, rng)
    return SealedHour(hour, len(submissions), sum(len(a) for a in answers.values()), len(receipts))


def answers_by_submission(keys: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[int, int]]]:
    """{submission key: [(question, report), …]} for exactly these submissions."""
    answers: dict[uuid.UUID, list[tuple[int, int]]] = defaultdict(list)
    for chunk in batches(keys):
        rows = Answer.objects.filter(submission_id__in=chunk).values_list(
            "submission_id", "question_id", "value"
        )
        for key, question, value in rows:
            answers[key].append((question, value))
    return answers


def delete_in_batches(submissions: list[tuple], receipts: list[tuple]) -> None:
    """Delete exactly the rows read (never "the hour's rows": a straggler committed
    since must survive)."""
    for chunk in batches([row[0] for row in submissions]):
        Submission.objects.filter(pk__in=chunk).delete()  # and their answers
    for chunk in batches([row[0] for row in receipts]):
        Receipt.objects.filter(pk__in=chunk).delete()


def insert_shuffled(
    hour: datetime,
    submissions: list[tuple],
    answers: dict[uuid.UUID, list[tuple[int, int]]],
    receipts: list[tuple],
    rng: random.Random,
) -> None:
    """Insert the rows in the (already shuffled) order given, submissions under keys
    drawn from ``rng``, each submission's answers in a shuffled order too."""
    new_submissions, new_answers = [], []
    for old_key, survey_id, round_, simulated in submissions:
        key = uuid.UUID(int=rng.getrandbits(128), version=4)
        new_submissions.append(
            Submission(
                submission_id=key,
                survey_id=survey_id,
                round=round_,
                simulated=simulated,
                received_hour=hour,
                sealed=True,
            )
        )
        reports = answers.get(old_key, [])
        rng.shuffle(reports)
        new_answers += [Answer(submission_id=key, question_id=q, value=v) for q, v in reports]
    Submission.objects.bulk_create(new_submissions, batch_size=BATCH)
    Answer.objects.bulk_create(new_answers, batch_size=BATCH)
    Receipt.objects.bulk_create(
        [Receipt(submission_id=key, survey_id=s, received_hour=hour) for key, s in receipts],
        batch_size=BATCH,
    )


def batches(items: list, size: int = BATCH):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def reseal_invites(survey: Survey | None = None) -> int:
    """Rewrite every used invite and spent credential (of ``survey``, or of all
    surveys) in random order, in one transaction; the number of rows rewritten.

    Each exchange marks its invite used in a transaction of its own, so until this
    runs an invite row's PostgreSQL ``xmin`` (and its new row version's place in the
    table, ``ctid``) still tell when it was used, and a spent credential's tell when
    its submission arrived. Afterwards all of them carry this transaction's ``xmin``
    and sit in the table in an order drawn at random: the hourly maintenance job
    calls it. Dead row versions stay in the files until ``VACUUM``, which the job
    should run after it on PostgreSQL.
    """
    shuffle = secrets.SystemRandom().shuffle
    used = Invite.objects.filter(used=True)
    spent = SpentCredential.objects.all()
    if survey is not None:
        used, spent = used.filter(survey=survey), spent.filter(survey=survey)
    with transaction.atomic():
        invite_rows = list(
            used.select_for_update().values_list("id", "survey_id", "token_hash", "blinded_hash")
        )
        spent_rows = list(spent.select_for_update().values_list("spent_id", "survey_id"))
        shuffle(invite_rows)
        shuffle(spent_rows)
        # By key, not by the filters: a row used or spent meanwhile stays as it is.
        for start in range(0, max(len(invite_rows), len(spent_rows)), 500):
            chunk = slice(start, start + 500)
            Invite.objects.filter(pk__in=[row[0] for row in invite_rows[chunk]]).delete()
            spent.filter(pk__in=[row[0] for row in spent_rows[chunk]]).delete()
        Invite.objects.bulk_create(
            Invite(id=pk, survey_id=sid, token_hash=token_hash, used=True, blinded_hash=blinded)
            for pk, sid, token_hash, blinded in invite_rows
        )
        SpentCredential.objects.bulk_create(
            SpentCredential(spent_id=spent_id, survey_id=survey_id)
            for spent_id, survey_id in spent_rows
        )
    return len(invite_rows) + len(spent_rows)
