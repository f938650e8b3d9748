"""The rows that hold respondents' reports: receipts, submissions, answers, tallies,
answer patterns and spent credentials. The only app that writes or reads them.

Nothing here can hold a true answer, a client address, a user agent or a precise time:
submissions keep only the hour they arrived. Nothing counts up as answers arrive, and once
an hour is over its rows are rewritten in random order (see :mod:`responses.sealing`), so
not even their order of arrival remains.
"""

from __future__ import annotations

import secrets
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import NamedTuple

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, models, transaction

from estimator.designs import Design
from responses.pg_prepared import PreparedStatement
from survey import invites
from survey.models import CredentialKey, Question, Survey, current_hour

TALLY_SHARDS = 8

# The surveys the respondents' fast path may store into, in SQL: what Survey.is_accepting
# says, no invite needed, and the design the answers were validated against (parameters:
# survey, open, design). A survey past its close date or at its response quota takes
# nothing, even before anyone has looked at it since (see Survey.close_if_due).
TAKES_PLAIN_SUBMISSIONS = (
    "id = %(survey)s AND status = %(open)s AND NOT is_locked AND NOT requires_invite "
    "AND design_version = %(design)s AND trashed_at IS NULL "
    "AND (closes_at IS NULL OR closes_at > CURRENT_TIMESTAMP) "
    "AND (response_quota IS NULL OR response_quota > (SELECT COUNT(*) FROM survey_submission "
    "WHERE survey_submission.survey_id = survey_survey.id AND NOT survey_submission.simulated))"
)
# Unenforced keys. A submission is written to five tables (receipt, submission, answers,
# tallies, answer pattern). Only the submission's reference to its survey is a foreign
# key the database enforces: it anchors the rest, so a survey cannot be deleted from
# under a stored submission. The other references (db_constraint=False) are kept by the
# code that writes them: all five are written in one transaction that holds a share of
# the survey row's lock and stores nothing unless every answered question is one of the
# survey's (answers_belong); questions change only under that lock (see
# Survey.check_design_editable); and deletes cascade through Django's collector, never
# through the database. Enforcing them cost PostgreSQL a trigger and a lookup per row,
# about 15 % of its work on a submission (bench/submit.py).


def answers_belong(in_answered: str, answered: str) -> str:
    """SQL for "every answered question is one of this survey's questions", to AND into a
    WHERE on the survey table: ``in_answered`` tests a question id against the answered
    ones (``= ANY(…)``, ``IN (…)``), ``answered`` is their number."""
    question = Question._meta.db_table
    return (
        f"{answered} = (SELECT COUNT(*) FROM {question} WHERE {question}.survey_id = "
        f"{Survey._meta.db_table}.id AND {question}.id {in_answered})"
    )


class Receipt(models.Model):
    """That a client's submission id was stored, for idempotent retries; nothing links
    it to the submission it stored.

    The client's id is known to the device that sent it, so it is never a key of the
    submission or its answers: a late retry (a device coming back online days later)
    finds its receipt here and stores nothing twice, while the rows it stored carry a
    key the server drew. Until its hour is sealed the receipt shares a transaction (and
    so PostgreSQL's ``xmin``) with its submission; sealing rewrites both (see
    :mod:`survey.sealing`).
    """

    submission_id = models.UUIDField(primary_key=True)
    # No index of its own: receipts are found by key (and by hour when sealed); an index
    # on the survey would be one more write per submission for a rare cascade delete.
    survey = models.ForeignKey(
        Survey,
        on_delete=models.CASCADE,
        related_name="receipts",
        db_index=False,
        db_constraint=False,
    )
    received_hour = models.DateTimeField()

    class Meta:
        db_table = "survey_receipt"

    def __str__(self) -> str:
        return f"receipt {self.submission_id}"


class Submission(models.Model):
    """One respondent's randomized answers, under a random key the server draws (never
    the client's id, see :class:`Receipt`): no sequential identifier, and once its hour
    is sealed not even the order of arrival (:mod:`survey.sealing`)."""

    submission_id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="submissions")
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    received_hour = models.DateTimeField()
    # False until the hour's rows are rewritten in random order (a database default, so
    # that bulk loads in plain SQL need not know of it); the partial index holds only the
    # hours still to seal (in practice the current one).
    sealed = models.BooleanField(db_default=False)

    class Meta:
        db_table = "survey_submission"
        indexes = [
            models.Index(
                fields=["received_hour"], condition=models.Q(sealed=False), name="hour_to_seal"
            )
        ]

    def __str__(self) -> str:
        return f"submission {self.submission_id}"

    @classmethod
    def store_if_accepting(
        cls,
        survey_id: int,
        submission_id: uuid.UUID,
        values: dict[int, int],
        *,
        design: int,
        designs: Mapping[int, Design] | None = None,
    ) -> bool:
        """The respondents' hot path: store a submission in plain SQL (one statement on
        PostgreSQL, one short transaction elsewhere) if the survey is open, unlocked,
        needs no invite and is still at design version ``design``, the one ``values``
        were validated against. ``designs`` (question id → design, of that version; read
        from the database when not given) say where each report is tallied.

        The survey's state is checked by the INSERT itself, so a survey closed (or its
        questions edited) a moment ago gets nothing. Returns False when nothing was
        stored, whatever the reason (a retry, a closed or locked survey, an invite
        needed, edited questions, no such survey): the caller then takes
        :meth:`Survey.record_submission`'s path, which tells these apart.
        """
        hour = current_hour()
        if designs is None:
            designs = {q.id: q.design for q in Question.objects.filter(survey_id=survey_id)}
        if not set(values) <= set(designs):
            return False  # a question deleted meanwhile: the full path explains
        if None in values.values():
            return False  # a skip: the full path stores it
        keys = {qid: designs[qid].tally_key(value) for qid, value in values.items()}
        try:
            if connection.vendor == "postgresql":
                return cls._store_in_one_statement(
                    survey_id, submission_id, values, keys, hour, design
                )
            return cls._store_in_transaction(survey_id, submission_id, values, keys, hour, design)
        except IntegrityError:
            # A question deleted while the very first answers were on their way: nothing
            # was stored, and the full path explains what is wrong now.
            return False

    @classmethod
    def _store_in_transaction(
        cls,
        survey_id: int,
        submission_id: uuid.UUID,
        values: dict[int, int],
        keys: dict[int, int],
        hour: datetime,
        design: int,
    ) -> bool:
        key_field = cls._meta.pk
        hour_db = connection.ops.adapt_datetimefield_value(hour)
        with transaction.atomic(), connection.cursor() as cursor:
            answered = {f"q{i}": qid for i, qid in enumerate(values)}
            belong = answers_belong(
                "IN (" + ", ".join(f"%({name})s" for name in answered) + ")", "%(answered)s"
            )
            cursor.execute(
                f"INSERT INTO {Receipt._meta.db_table} (submission_id, survey_id, received_hour) "
                f"SELECT %(receipt)s, id, %(hour)s FROM {Survey._meta.db_table} "
                f"WHERE {TAKES_PLAIN_SUBMISSIONS} AND {belong} "
                "ON CONFLICT (submission_id) DO NOTHING RETURNING survey_id",
                {
                    "receipt": key_field.get_db_prep_value(submission_id, connection),
                    "hour": hour_db,
                    "survey": survey_id,
                    "open": Survey.Status.OPEN.value,
                    "design": design,
                    "answered": len(answered),
                    **answered,
                },
            )
            if cursor.fetchone() is None:
                return False
            key = key_field.get_db_prep_value(uuid.uuid4(), connection)
            cursor.execute(
                f"INSERT INTO {cls._meta.db_table} "
                "(submission_id, survey_id, round, simulated, received_hour, sealed) "
                f"SELECT %s, id, current_round, %s, %s, %s FROM {Survey._meta.db_table} "
                "WHERE id = %s RETURNING round",
                [key, False, hour_db, False, survey_id],
            )
            (round_,) = cursor.fetchone()
            Answer.insert_values(cursor, key, values)
            Tally.add_sums(
                {(qid, keys[qid]): TallySums(1, v, v * v) for qid, v in values.items()},
                round=round_,
                simulated=False,
                hour=hour,
            )
            AnswerPattern.add(
                survey_id, {AnswerPattern.key_for(values): 1}, round=round_, simulated=False
            )
        return True

    @classmethod
    def _store_in_one_statement(
        cls,
        survey_id: int,
        submission_id: uuid.UUID,
        values: dict[int, int],
        keys: dict[int, int],
        hour: datetime,
        design: int,
    ) -> bool:
        """PostgreSQL: the same writes as one prepared statement (data-modifying CTEs),
        so a submission costs one round trip and its own implicit transaction."""
        params = [
            str(survey_id),
            Survey.Status.OPEN.value,
            str(submission_id),
            hour.isoformat(),
            "{" + ",".join(map(str, values)) + "}",
            "{" + ",".join(map(str, values.values())) + "}",
            str(secrets.randbelow(TALLY_SHARDS)),
            str(design),
            "{" + ",".join(map(str, keys.values())) + "}",
            AnswerPattern.key_for(values),
        ]
        # connections[...], not the proxy: each read of the proxy is a lookup.
        return STORE_SUBMISSION.execute(connections[DEFAULT_DB_ALIAS], params) > 0


def store_submission_sql() -> str:
    """The fast path's statement, parameters in the order ``_store_in_one_statement``
    passes them. The survey row is share-locked before anything is written: a question
    edit holding it makes the statement wait, then re-check the row, find a new design
    version and store nothing (see :meth:`Survey.check_design_editable`). The receipt's
    primary key makes a retry store nothing, even one arriving while its hour is being
    sealed (the seal rewrites the receipt under the same key in the same transaction)."""
    tally = Tally._meta.db_table
    placeholders = {
        "survey": "$1::bigint",
        "open": "$2::text",
        "receipt": "$3::uuid",
        "hour": "$4::timestamptz",
        "questions": "$5::bigint[]",
        "values": "$6::bigint[]",
        "shard": "$7::smallint",
        "design": "$8::integer",
        "keys": "$9::bigint[]",
        "pattern": "$10::text",
    }
    return (
        f"""
        WITH survey AS (
            SELECT id, current_round FROM {Survey._meta.db_table}
            WHERE {TAKES_PLAIN_SUBMISSIONS}
                AND {answers_belong("= ANY(%(questions)s)", "cardinality(%(questions)s)")}
            FOR KEY SHARE
        ), receipt AS (
            INSERT INTO {Receipt._meta.db_table} (submission_id, survey_id, received_hour)
            SELECT %(receipt)s, id, %(hour)s FROM survey
            ON CONFLICT (submission_id) DO NOTHING
            RETURNING survey_id
        ), submission AS (
            INSERT INTO {Submission._meta.db_table}
                (submission_id, survey_id, round, simulated, received_hour, sealed)
            SELECT gen_random_uuid(), id, current_round, false, %(hour)s, false
            FROM survey, receipt
            RETURNING submission_id, survey_id, round
        ), pattern AS (
            INSERT INTO {AnswerPattern._meta.db_table}
                (survey_id, round, simulated, key, shard, count)
            SELECT survey_id, round, false, %(pattern)s, %(shard)s, 1 FROM submission
            ON CONFLICT (survey_id, round, simulated, key, shard)
            DO UPDATE SET count = {AnswerPattern._meta.db_table}.count + 1
        ), report AS (
            SELECT * FROM unnest(%(questions)s, %(values)s, %(keys)s)
                AS report (question, value, key)
        ), answer AS (
            INSERT INTO {Answer._meta.db_table} (submission_id, question_id, value)
            SELECT submission_id, question, value FROM submission, report
        )
        INSERT INTO {tally}
            (question_id, round, simulated, hour, value, shard, count, total, total_sq)
        SELECT question, round, false, %(hour)s, key, %(shard)s, 1, value,
            value::numeric * value
        FROM submission, report
        ON CONFLICT (question_id, round, simulated, hour, value, shard)
        DO UPDATE SET count = {tally}.count + excluded.count,
            total = {tally}.total + excluded.total,
            total_sq = {tally}.total_sq + excluded.total_sq
    """
        % placeholders
    )


STORE_SUBMISSION = PreparedStatement("deniable_store_submission", store_submission_sql)


class Answer(models.Model):
    """A randomized report: the only trace of a respondent's answer on the server.

    Keyed by (submission, question) alone: no sequential id (SQLite's rowid and
    PostgreSQL's row order are scrambled when the hour is sealed)."""

    pk = models.CompositePrimaryKey("submission", "question")
    # No index of its own: the primary key's index starts with it.
    submission = models.ForeignKey(
        Submission,
        on_delete=models.CASCADE,
        related_name="answers",
        db_index=False,
        db_constraint=False,
    )
    # No index of its own either: answers are read by submission, and an index on the
    # question would cost a write per answer for a rare cascade delete.
    question = models.ForeignKey(
        Question,
        on_delete=models.CASCADE,
        related_name="answers",
        db_index=False,
        db_constraint=False,
    )
    # An option index, or an integer report of a number question (noise can take it
    # far beyond the question's bounds); null for "prefer not to answer" (a skip).
    value = models.BigIntegerField(null=True)

    class Meta:
        db_table = "survey_answer"

    def __str__(self) -> str:
        return f"reported {self.value} to question {self.question_id}"

    @classmethod
    def insert_values(cls, cursor, submission_db, values: dict[int, int]) -> None:
        """One multi-row INSERT of a submission's reports (``submission_db``: its key as
        the database stores it)."""
        cursor.execute(
            f"INSERT INTO {cls._meta.db_table} (submission_id, question_id, value) VALUES "
            + ", ".join(["(%s, %s, %s)"] * len(values)),
            [item for qid, value in values.items() for item in (submission_db, qid, value)],
        )


class ExactSum(models.Sum):
    """SUM that cannot overflow: PostgreSQL sums bigint and numeric exactly; SQLite's
    integer SUM raises on overflow, so there TOTAL (a float sum: exact below 2⁵³, then
    to 16 digits) adds the sums of squares."""

    def as_sqlite(self, compiler, connection, **extra_context):
        return super().as_sqlite(compiler, connection, function="TOTAL", **extra_context)


class TallySums(NamedTuple):
    """What one tally row adds up: reports, their sum and their sum of squares."""

    count: int
    total: int
    total_sq: int


def tally_sums(
    designs: Mapping[int, Design], reports: Iterable[Mapping[int, int | None]]
) -> dict[tuple[int, int | None], TallySums]:
    """``{(question_id, tally key): (count, Σ report, Σ report²)}`` for many submissions'
    reports: the key is where the question's design counts a report (the report itself,
    or a number's histogram bin), so the rows stay few whatever the reports."""
    sums: dict[tuple[int, int], list[int]] = {}
    keys: dict[int, Callable[[int], int]] = {qid: d.tally_key for qid, d in designs.items()}
    for values in reports:
        for qid, value in values.items():
            if value is None:  # a skip: counted apart, adds nothing to the sums
                sums.setdefault((qid, None), [0, 0, 0])[0] += 1
                continue
            row = sums.setdefault((qid, keys[qid](value)), [0, 0, 0])
            row[0] += 1
            row[1] += value
            row[2] += value * value
    return {key: TallySums(*row) for key, row in sums.items()}


class TallyQuerySet(models.QuerySet):
    def counts(self) -> dict[int, dict[int, int]]:
        """{question_id: {tally key: count}} summed over shards and hours, in one query."""
        result: dict[int, dict[int, int]] = {}
        rows = self.values("question_id", "value").annotate(total=models.Sum("count"))
        for row in rows:
            result.setdefault(row["question_id"], {})[row["value"]] = row["total"]
        return result

    def sums(self) -> dict[int, TallySums]:
        """{question_id: (count, Σ report, Σ report²)} over every key, shard and hour."""
        rows = (
            self.values_list("question_id")
            .annotate(models.Sum("count"), ExactSum("total"), ExactSum("total_sq"))
            .order_by()
        )
        return {qid: TallySums(*map(whole, row)) for qid, *row in rows}

    def counts_by_hour(self) -> list[tuple[datetime, int, int, int]]:
        """``(hour, yes_count, n, n_simulated)`` per hour, oldest first: an
        estimate-over-time chart's data, from the tallies alone (one aggregate query, no
        individual answers)."""
        rows = (
            self.values("hour")
            .annotate(
                n=models.Sum("count"),
                yes=models.Sum("count", filter=models.Q(value=1)),
                simulated_n=models.Sum("count", filter=models.Q(simulated=True)),
            )
            .order_by("hour")
        )
        return [(row["hour"], row["yes"] or 0, row["n"], row["simulated_n"] or 0) for row in rows]

    def sums_by_hour(self) -> list[tuple[datetime, TallySums, int]]:
        """``(hour, (count, Σ report, Σ report²), n_simulated)`` per hour, oldest first:
        a mean-over-time chart's data, from the tallies alone (one aggregate query)."""
        rows = (
            self.values_list("hour")
            .annotate(
                models.Sum("count"),
                ExactSum("total"),
                ExactSum("total_sq"),
                simulated_n=models.Sum("count", filter=models.Q(simulated=True)),
            )
            .order_by("hour")
        )
        return [
            (hour, TallySums(whole(n), whole(total), whole(total_sq)), simulated or 0)
            for hour, n, total, total_sq, simulated in rows
        ]

    def compact(self, before: datetime) -> int:
        """Fold the shards of every hour before ``before`` into shard 0.

        Shards only help while an hour is receiving answers; afterwards they are rows
        that every estimate sums for nothing. Totals (counts, sums and sums of squares)
        are unchanged, so this is safe to run at any time (e.g. hourly from cron via
        ``manage.py compact_tallies``). Returns the number of rows removed.
        """
        keys = ["question_id", "round", "simulated", "hour", "value"]
        # No savepoint inside a seal: its rows must all carry the seal's one xmin.
        with transaction.atomic(savepoint=False):
            # Lock the rows first (PostgreSQL cannot lock an aggregate), then fold exactly
            # those: a row a late submission adds meanwhile has a higher id and is kept.
            locked = self.filter(hour__lt=before).select_for_update().values_list("pk", flat=True)
            newest = max(locked, default=None)
            if newest is None:
                return 0
            old = self.filter(hour__lt=before, pk__lte=newest)
            sums = list(
                old.values(*keys)
                .annotate(n=models.Sum("count"), sum=ExactSum("total"), sum_sq=ExactSum("total_sq"))
                .order_by()
            )
            removed, _ = old.delete()
            Tally.objects.bulk_create(
                [
                    Tally(
                        shard=0,
                        count=row.pop("n"),
                        total=whole(row.pop("sum")),
                        total_sq=whole(row.pop("sum_sq")),
                        **row,
                    )
                    for row in sums
                ],
                batch_size=1000,
            )
        return removed - len(sums)


def whole(value) -> int:
    """An aggregate's value (int, Decimal, or SQLite's float TOTAL) as an int."""
    return int(round(value)) if isinstance(value, float) else int(value or 0)


class Tally(models.Model):
    """Running counts of reports, kept in the same transaction as the answers.

    Estimates read these few rows instead of scanning every answer, so their cost does
    not grow with the number of respondents. Rows are spread over a few shards so that
    concurrent submissions to one question do not all wait on one row lock.

    ``value`` is the design's tally key (the report for yes/no and choice questions, a
    histogram bin for numbers); ``total`` and ``total_sq`` add up the reports and their
    squares, what a number's mean and interval need. A report is at most a few 10⁹ in
    practice (noise included), so Σ report² over 10⁶ respondents reaches 10²⁴: beyond a
    bigint, hence a numeric column (exact on PostgreSQL).
    """

    # No index of its own: the one_tally_row unique index starts with it.
    question = models.ForeignKey(
        Question,
        on_delete=models.CASCADE,
        related_name="tallies",
        db_index=False,
        db_constraint=False,
    )
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    hour = models.DateTimeField()
    # Null counts the question's skips ("prefer not to answer").
    value = models.BigIntegerField(null=True)
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.BigIntegerField(default=0)
    total = models.DecimalField(max_digits=40, decimal_places=0, default=0)
    total_sq = models.DecimalField(max_digits=60, decimal_places=0, default=0)

    objects = TallyQuerySet.as_manager()

    class Meta:
        db_table = "survey_tally"
        constraints = [
            models.UniqueConstraint(
                fields=["question", "round", "simulated", "hour", "value", "shard"],
                name="one_tally_row",
            )
        ]

    def __str__(self) -> str:
        return f"{self.count} × key {self.value} for question {self.question_id}"

    @classmethod
    def add_counts(
        cls, counts: dict[tuple[int, int], int], *, round: int, simulated: bool, hour: datetime
    ) -> None:
        """Add ``counts[(question_id, report)]`` reports of questions whose tally key is
        the report itself (yes/no and choice)."""
        cls.add_sums(
            {key: TallySums(n, key[1] * n, key[1] ** 2 * n) for key, n in counts.items()},
            round=round,
            simulated=simulated,
            hour=hour,
        )

    @classmethod
    def add_sums(
        cls,
        sums: dict[tuple[int, int], TallySums],
        *,
        round: int,
        simulated: bool,
        hour: datetime,
    ) -> None:
        """Add ``sums[(question_id, tally key)]`` to the tallies with one upsert."""
        if not sums:
            return
        shard = secrets.randbelow(TALLY_SHARDS)
        table = cls._meta.db_table
        hour_db = connection.ops.adapt_datetimefield_value(hour)
        rows = [
            (qid, round, simulated, hour_db, key, shard, n, str(total), str(total_sq))
            for (qid, key), (n, total, total_sq) in sums.items()
        ]
        numeric = "CAST(%s AS NUMERIC)"
        placeholders = ", ".join(
            [f"(%s, %s, %s, %s, %s, %s, %s, {numeric}, {numeric})"] * len(rows)
        )
        sql = (
            f"INSERT INTO {table} "
            "(question_id, round, simulated, hour, value, shard, count, total, total_sq) "
            f"VALUES {placeholders} "
            "ON CONFLICT (question_id, round, simulated, hour, value, shard) "
            f"DO UPDATE SET count = {table}.count + excluded.count, "
            f"total = {table}.total + excluded.total, "
            f"total_sq = {table}.total_sq + excluded.total_sq"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [item for row in rows for item in row])

    @classmethod
    def subtract(cls, question_id: int, value: int, count: int, *, round: int, hour: datetime):
        """Take ``count`` reports of ``value`` back out of a question's (non-simulated)
        tallies for one round and hour, from whichever shards hold them; rows left at
        zero are removed. For undoing a failed import; call inside a transaction."""
        rows = cls.objects.filter(
            question_id=question_id, round=round, simulated=False, hour=hour, value=value
        ).select_for_update()
        for row in rows.order_by("-count"):
            taken = min(row.count, count)
            count -= taken
            if taken == row.count:
                row.delete()
            else:
                cls.objects.filter(pk=row.pk).update(count=models.F("count") - taken)
            if not count:
                return


class AnswerPattern(models.Model):
    """How many submissions of a survey's round gave exactly this combination of reports,
    kept at write time so that breakdowns, cross-tabs and regression read a few pattern
    rows instead of joining every answer (their cost then depends on how many different
    combinations there are, not on how many respondents).

    ``key`` is :meth:`key_for` of the submission's reports. Every way of storing a
    submission adds to it in the same transaction as its answers and tallies; a path
    that does not (yet) is caught by :func:`analysis.grouped.joint_counts`, which
    compares the patterns' total with the tallies' and otherwise groups the answers.
    No hour and no sequential id: a pattern row says nothing about when anyone answered.
    """

    pk = models.CompositePrimaryKey("survey", "round", "simulated", "key", "shard")
    # No index of its own: the primary key's index starts with it.
    survey = models.ForeignKey(
        Survey,
        on_delete=models.CASCADE,
        related_name="patterns",
        db_index=False,
        db_constraint=False,
    )
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    key = models.TextField()
    # Like the tallies', so that concurrent submissions with the same reports seldom
    # wait for each other's row lock; sealing folds them back into shard 0.
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.BigIntegerField(default=0)

    class Meta:
        db_table = "survey_answerpattern"

    def __str__(self) -> str:
        return f"{self.count} × {self.key}"

    @staticmethod
    def key_for(values: dict[int, int | None]) -> str:
        """``"question=report,…"`` in question id order: the same reports, the same key;
        a skip is ``"question="``."""
        return ",".join(
            f"{qid}={'' if values[qid] is None else values[qid]}" for qid in sorted(values)
        )

    @staticmethod
    def parse(key: str) -> dict[int, int | None]:
        return {
            int(q): int(v) if v else None
            for q, v in (item.split("=") for item in key.split(",") if item)
        }

    @classmethod
    def rewrite_shuffled(cls, survey_ids, rng) -> None:
        """Delete and insert again, in an order drawn from ``rng``, every pattern row of
        these surveys (sealing: afterwards no row carries the transaction id, nor sits in
        the physical place, that the last submission with its pattern gave it)."""
        ours = cls.objects.filter(survey_id__in=survey_ids)
        folded: Counter[tuple] = Counter()
        for survey_id, round_, simulated, key, count in ours.select_for_update().values_list(
            "survey_id", "round", "simulated", "key", "count"
        ):
            folded[survey_id, round_, simulated, key] += count
        if not folded:
            return
        ours.delete()
        rows = [
            cls(survey_id=survey_id, round=round_, simulated=simulated, key=key, count=count)
            for (survey_id, round_, simulated, key), count in folded.items()
        ]
        rng.shuffle(rows)
        cls.objects.bulk_create(rows, batch_size=500)

    @classmethod
    def add(cls, survey_id: int, keys: dict[str, int], *, round: int, simulated: bool) -> None:
        """Add ``keys[key]`` submissions with one upsert (one row for a single submission)."""
        if not keys:
            return
        table = cls._meta.db_table
        shard = secrets.randbelow(TALLY_SHARDS)
        rows = [(survey_id, round, simulated, key, shard, n) for key, n in keys.items()]
        sql = (
            f"INSERT INTO {table} (survey_id, round, simulated, key, shard, count) VALUES "
            + ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(rows))
            + " ON CONFLICT (survey_id, round, simulated, key, shard) "
            f"DO UPDATE SET count = {table}.count + excluded.count"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [item for row in rows for item in row])


class SpentCredential(models.Model):
    """A credential that admitted a submission: only a hash of its message, to refuse
    a second use. It is not the invite's, and nothing else is kept."""

    spent_id = models.CharField(max_length=64, primary_key=True)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="spent_credentials")

    class Meta:
        db_table = "survey_spentcredential"

    def __str__(self) -> str:
        return "spent credential"

    @classmethod
    def spend(cls, survey: Survey, credential: invites.Credential | None) -> bool:
        """Verify and record ``credential`` inside the caller's transaction; False for
        a missing, forged or already spent one (then nothing is recorded)."""
        if credential is None or not invites.verify(
            CredentialKey.of(survey).private_key, credential
        ):
            return False
        try:
            with transaction.atomic():
                cls.objects.create(spent_id=credential.spent_id(survey.pk), survey=survey)
        except IntegrityError:
            return False
        return True
