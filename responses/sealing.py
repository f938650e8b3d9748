"""Sealing: a finished hour's submissions become counts, and no trace of them is left.

Submissions arrive as rows of the current hour's tables (:class:`responses.models.Inbox`,
one set of tables for even hours and one for odd hours). Until their hour is sealed a
row keeps its order of arrival: PostgreSQL's ``xmin`` (its transaction id), its place in
the table (``ctid``), SQLite's ``rowid``, and with the access log's one-second lines the
second it arrived. Sealing removes all of that:

1. **Move, in random order.** The hour's rows are drawn in an order from the operating
   system's randomness and moved in chunks, each chunk one transaction that deletes its
   rows and adds them to the sealed tables: receipts and spent credentials (each on its
   own, in random order, linked to nothing), and counts — how many respondents gave each
   combination of reports (:class:`~responses.models.AnswerPattern`), per question, hour
   and report (:class:`~responses.models.Tally`), per survey
   (:class:`~responses.models.SurveyCount`). No sealed row is one respondent's.
   Invites used in the hour are marked used, in random order, and their use forgotten.
2. **Drop the files.** The hour's tables are emptied so that their bytes are gone, not
   just marked free: PostgreSQL's ``TRUNCATE`` gives a table new files and truncates the
   old ones at commit (``VACUUM`` would only mark space reusable, and ``pageinspect``
   still reads it); SQLite deletes with ``secure_delete`` on (set for every connection),
   which overwrites deleted content with zeros.
3. **The releases too.** What viewers see is a batch frozen while answers arrived
   (:class:`~responses.models.Release`, written when a viewer looks); its row versions
   carry the transaction ids of that moment, so the seal rewrites the releases afresh.
4. **The log too.** On PostgreSQL the write-ahead log holds every insert of the hour: the
   seal switches to a new WAL segment and checkpoints, so that the segments holding the
   hour are removed (with ``wal_recycle = off``, which ``manage.py check --deploy``
   checks: recycled segments keep their old bytes). On SQLite the WAL file is
   checkpointed and truncated to nothing.

An hour's tables are only written during that hour and the next (late answers), so the
hourly seal of the previous hour never makes a respondent wait. Closing a survey seals
its current hour too: its rows leave the current hour's tables at once, and the rows of
other surveys there are rewritten in random order (a short wait for submissions
meanwhile, measured in ``bench/seal.py``). A chunk killed midway rolls back whole; rows
already moved are sealed and the rest wait for the next seal: nothing is lost or doubled.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, Sum
from django.db.models.functions import Greatest

from estimator.designs import Design
from responses.batch import Batch, Row
from responses.models import (
    INBOXES,
    AnswerPattern,
    ExactSum,
    HourTables,
    ImportBatch,
    Receipt,
    Release,
    SpentCredential,
    SurveyCount,
    Tally,
    tables_of_parity,
    whole,
)
from survey.models import Invite, Question, current_hour

log = logging.getLogger(__name__)
CHUNK = 2000  # rows moved per transaction: what a waiting SQLite writer waits for at most
STALE_IMPORT = timedelta(days=1)  # an import not finished by then has died: taken back
INBOX_COLUMNS = ("receipt", "survey_id", "round", "simulated", "hour", "reports", "credential")


@dataclass
class Sealed:
    """What a seal did."""

    submissions: int = 0
    receipts: int = 0
    credentials: int = 0
    invites: int = 0
    duplicates: int = 0  # a retry or a second use of a credential, stored twice at an hour's edge
    hours: set[datetime] = field(default_factory=set)

    def __iadd__(self, other: Sealed) -> Sealed:
        for name in ("submissions", "receipts", "credentials", "invites", "duplicates"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.hours |= other.hours
        return self


def seal(
    *, surveys: Collection[int] = (), everything: bool = False, rng: random.Random | None = None
) -> Sealed:
    """Seal every finished hour's submissions and invite uses; also those of the current
    hour of ``surveys`` (closed surveys), or of every survey with ``everything``.

    ``rng`` draws the order: the operating system's randomness unless a test passes a
    seeded one.
    """
    rng = rng or random.SystemRandom()
    hour = current_hour()
    due = Q() if everything else Q(hour__lt=hour) | Q(survey_id__in=list(surveys))
    result = Sealed()
    _take_back_stale_imports(hour)
    for parity in (0, 1):
        tables = tables_of_parity(parity)
        result += _seal_tables(tables, due, rng, rewrite=bool(surveys) or everything)
    if result.submissions or result.invites or result.duplicates:
        _rewrite((Release,), rng)
        scrub_logs()
    return result


def seal_survey(survey_id: int) -> Sealed:
    """A survey was closed: seal it at once, its current hour included."""
    return seal(surveys=[survey_id])


def _seal_tables(tables: HourTables, due: Q, rng: random.Random, *, rewrite: bool) -> Sealed:
    """Move the due rows of one set of hour tables in random chunks, then drop the set's
    files if anything left it (rewriting what stays)."""
    result = Sealed()
    running = list(ImportBatch.objects.values_list("id", flat=True))
    rows = tables.inbox.objects.filter(due).exclude(batch__in=running)
    keys = list(rows.values_list("receipt", flat=True))
    rng.shuffle(keys)
    designs: dict[int, dict[int, Design]] = {}
    for start in range(0, len(keys), CHUNK):
        result += _move(tables, keys[start : start + CHUNK], designs, rng)
    result += _mark_invites_used(tables, due, rng)
    if result.submissions or result.duplicates or result.invites or rewrite:
        _drop_files(tables, rng)
    _fold_tallies(result.hours)
    return result


def _fold_tallies(hours: Iterable[datetime]) -> None:
    """One tally row per question, round, kind, hour and key again (each chunk of a seal
    added its own), so that estimates read as few rows as ever."""
    keys = ("question_id", "round", "simulated", "hour", "value")
    for hour in hours:
        with transaction.atomic():
            rows = Tally.objects.filter(hour=hour).select_for_update()
            ids = list(rows.values_list("pk", flat=True))
            sums = list(
                Tally.objects.filter(pk__in=ids)
                .values(*keys)
                .annotate(n=Sum("count"), sum=ExactSum("total"), sum_sq=ExactSum("total_sq"))
                .order_by()
            )
            if len(sums) == len(ids):
                continue
            Tally.objects.filter(pk__in=ids).delete()
            Tally.objects.bulk_create(
                [
                    Tally(
                        count=row.pop("n"),
                        total=whole(row.pop("sum")),
                        total_sq=whole(row.pop("sum_sq")),
                        **row,
                    )
                    for row in sums
                ],
                batch_size=CHUNK,
            )


def _move(tables: HourTables, keys: list[uuid.UUID], designs: dict, rng: random.Random) -> Sealed:
    """One transaction: delete these rows from the hour's tables and add them, as counts,
    to the sealed tables."""
    with transaction.atomic():
        rows = _delete_returning(tables.inbox, keys)
        fresh = _drop_duplicates(rows)
        receipts = [Receipt(submission_id=r[0], survey_id=r[1]) for r in fresh if r[7] is None]
        spent = [SpentCredential(spent_id=r[6], survey_id=r[1]) for r in fresh if r[6]]
        rng.shuffle(receipts)
        rng.shuffle(spent)
        Receipt.objects.bulk_create(receipts, batch_size=CHUNK)
        SpentCredential.objects.bulk_create(spent, batch_size=CHUNK)
        batch = Batch.of(
            (Row(r[1], r[2], r[3], r[4], r[5]) for r in fresh), _designs_of(fresh, designs)
        )
        _add_counts(batch)
        _uncount_quota(tables, rows)
    return Sealed(
        submissions=len(fresh),
        receipts=len(receipts),
        credentials=len(spent),
        duplicates=len(rows) - len(fresh),
        hours={r[4] for r in rows},
    )


def _delete_returning(inbox, keys: list[uuid.UUID]) -> list[tuple]:
    """Delete exactly these rows (never "the hour's rows": a late one stays for the next
    seal) and return them: ``(receipt, survey, round, simulated, hour, reports,
    credential, batch)``."""
    found = inbox.objects.select_for_update().filter(receipt__in=keys)
    rows = list(found.values_list(*INBOX_COLUMNS, "batch"))
    inbox.objects.filter(receipt__in=[r[0] for r in rows]).delete()
    return rows


def _drop_duplicates(rows: list[tuple]) -> list[tuple]:
    """Leave out a row whose client id or credential is sealed already: the same
    submission (or a second use of one credential) stored twice in the two hours' tables
    at the very edge of an hour. Its first copy counts."""
    receipts = Receipt.objects.filter(submission_id__in=[r[0] for r in rows if r[7] is None])
    known = set(receipts.values_list("submission_id", flat=True))
    spent_ids = [r[6] for r in rows if r[6]]
    spent = set(
        SpentCredential.objects.filter(spent_id__in=spent_ids).values_list("spent_id", flat=True)
    )
    return [r for r in rows if r[0] not in known and not (r[6] and r[6] in spent)]


def _designs_of(rows: Iterable[tuple], cache: dict) -> dict[int, Design]:
    """Every question's design, for the surveys of these rows (read once per seal)."""
    missing = {r[1] for r in rows} - set(cache)
    for question in Question.objects.filter(survey_id__in=missing):
        cache.setdefault(question.survey_id, {})[question.id] = question.design
    designs: dict[int, Design] = {}
    for survey_id in {r[1] for r in rows}:
        designs |= cache.get(survey_id, {})
    return designs


def _add_counts(batch: Batch) -> None:
    """Add a batch to the sealed counts: pattern and survey counts by upsert (one row
    each, whatever the number of seals), tallies as new rows (their readers sum)."""
    table = AnswerPattern._meta.db_table
    rows = [(*key, n) for key, n in batch.patterns.items()]
    _upsert(
        f"INSERT INTO {table} (survey_id, round, simulated, key, count) VALUES %s "
        f"ON CONFLICT (survey_id, round, simulated, key) "
        f"DO UPDATE SET count = {table}.count + excluded.count",
        rows,
    )
    counts = SurveyCount._meta.db_table
    per_survey: Counter[int] = Counter()
    simulated: Counter[int] = Counter()
    for (survey_id, is_simulated), n in batch.submissions.items():
        (simulated if is_simulated else per_survey)[survey_id] += n
    _upsert(
        f"INSERT INTO {counts} (survey_id, real, simulated) VALUES %s "
        f"ON CONFLICT (survey_id) DO UPDATE SET real = {counts}.real + excluded.real, "
        f"simulated = {counts}.simulated + excluded.simulated",
        [(s, per_survey[s], simulated[s]) for s in set(per_survey) | set(simulated)],
    )
    Tally.objects.bulk_create(
        [
            Tally(
                question_id=qid,
                round=round_,
                simulated=is_simulated,
                hour=hour,
                value=key,
                count=sums.count,
                total=sums.total,
                total_sq=sums.total_sq,
            )
            for (qid, round_, is_simulated, hour, key), sums in batch.tally_rows().items()
        ],
        batch_size=CHUNK,
    )


def _upsert(sql: str, rows: list[tuple]) -> None:
    """Run an ``INSERT … VALUES %s …`` upsert for ``rows``, a few hundred at a time."""
    for start in range(0, len(rows), 200):
        part = rows[start : start + 200]
        values = ", ".join(["(" + ", ".join(["%s"] * len(part[0])) + ")"] * len(part))
        with connection.cursor() as cursor:
            cursor.execute(sql % values, [item for row in part for item in row])


def _uncount_quota(tables: HourTables, rows: list[tuple]) -> None:
    """Rows leaving the hour's tables leave its quota counts (the sealed count took them)."""
    moved = Counter(r[1] for r in rows if not r[3] and r[7] is None)
    for survey_id, n in moved.items():
        tables.quota.objects.filter(survey_id=survey_id).update(n=Greatest(F("n") - n, 0))


def _mark_invites_used(tables: HourTables, due: Q, rng: random.Random) -> Sealed:
    """The due invite uses, marked on their invites in random order, then forgotten."""
    with transaction.atomic():
        uses = list(tables.invite_use.objects.filter(due).values_list("token_hash", "blinded_hash"))
        if not uses:
            return Sealed()
        rng.shuffle(uses)
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {Invite._meta.db_table} SET used = %s, blinded_hash = %s "
                "WHERE token_hash = %s",
                [(True, blinded, token) for token, blinded in uses],
            )
        tables.invite_use.objects.filter(token_hash__in=[u[0] for u in uses]).delete()
    return Sealed(invites=len(uses))


def _drop_files(tables: HourTables, rng: random.Random) -> None:
    """Empty the set's tables so that nothing of their old rows stays in a file; the rows
    still due later (another survey's current hour, an import under way) are written
    back, in random order. The imports' markers too: they were written during the hour."""
    _rewrite((tables.inbox, tables.quota, tables.invite_use, ImportBatch), rng)


def _rewrite(models: tuple, rng: random.Random) -> None:
    """Write the tables' rows back in random order into emptied files: no row version,
    dead or live, keeps the transaction id or the place it was written with."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            names = ", ".join(m._meta.db_table for m in models)
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {names} IN EXCLUSIVE MODE")
        kept = [list(m.objects.all()) for m in models]
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # Deferred foreign-key checks still pending in this transaction (a seal
                # run inside a caller's transaction) would make TRUNCATE refuse: run them.
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute(f"TRUNCATE {names}")
        else:
            for model in models:
                model.objects.all().delete()
        for model, rows in zip(models, kept, strict=True):
            rng.shuffle(rows)
            model.objects.bulk_create(rows, batch_size=CHUNK)


def _take_back_stale_imports(hour: datetime) -> None:
    """An import that started long ago and never finished died midway (its process was
    killed): all rows or none, so its rows go."""
    stale = ImportBatch.objects.filter(started_hour__lt=hour - STALE_IMPORT)
    for batch in list(stale.values_list("id", flat=True)):
        with transaction.atomic():
            for inbox in INBOXES:
                inbox.objects.filter(batch=batch).delete()
            ImportBatch.objects.filter(pk=batch).delete()
        log.warning("an import that never finished was taken back (batch %s)", batch)


def scrub_logs() -> None:
    """Leave no sealed hour in the database's own logs: on PostgreSQL switch to a new WAL
    segment and checkpoint, so the segments holding the hour are removed; on SQLite
    checkpoint the WAL file and truncate it. Needs a role allowed to run
    ``pg_switch_wal()`` and ``CHECKPOINT`` (superuser, or ``pg_checkpoint`` and a grant);
    without it the seal still seals, and says so in the log."""
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_switch_wal()")
                cursor.execute("CHECKPOINT")
            elif connection.vendor == "sqlite":
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except DatabaseError as error:
        log.warning("the sealed hour stays in the database's log until it is recycled: %s", error)
