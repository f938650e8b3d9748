"""Surveys, their questions, and the randomized answers respondents send.

Nothing here can hold a true answer, a client address, a user agent or a precise time:
submissions keep only the hour they arrived, and invites only whether they were used.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Iterable
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, models, transaction
from django.urls import reverse
from django.utils import timezone

from estimator.randomized_response import BinaryDesign, design_from_params, total_epsilon
from survey.pg_prepared import PreparedStatement

# No look-alike characters (0/O, 1/I/L) so a code read off a projector is typed right.
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 6
TALLY_SHARDS = 8
# The surveys the respondents' fast path may store into, in SQL: what Survey.is_accepting
# says, no invite needed, and the design the answers were validated against (parameters:
# survey, open, design).
TAKES_PLAIN_SUBMISSIONS = (
    "id = %(survey)s AND status = %(open)s AND NOT is_locked AND NOT requires_invite "
    "AND design_version = %(design)s"
)


def new_slug() -> str:
    """72 random bits, URL-safe; never starting with "-", which a command line (e.g.
    ``manage.py import_responses <slug> file.csv``) would read as an option."""
    slug = secrets.token_urlsafe(9)
    return slug if not slug.startswith("-") else new_slug()


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def current_hour() -> datetime:
    """Submission times are kept to the hour: enough for a chart, too coarse to link."""
    return timezone.now().replace(minute=0, second=0, microsecond=0)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SurveyQuerySet(models.QuerySet):
    def owned_by(self, user) -> SurveyQuerySet:
        return self.filter(owner=user) if user.is_authenticated else self.none()

    def create_classroom(self, owner, question: str) -> Survey:
        """An open classroom survey with one classic two-coin question (ε = ln 3)."""
        with transaction.atomic():
            survey = self.create(
                owner=owner, title=question, mode=Survey.Mode.CLASSROOM, status=Survey.Status.OPEN
            )
            survey.questions.create(text=question, design_params={"p_truth": 0.5, "p_yes": 0.5})
        return survey


class Survey(models.Model):
    class Mode(models.TextChoices):
        RESEARCH = "research"
        CLASSROOM = "classroom"

    class Status(models.TextChoices):
        DRAFT = "draft"
        OPEN = "open"
        CLOSED = "closed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.RESEARCH)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    slug = models.CharField(max_length=20, unique=True, default=new_slug, editable=False)
    join_code = models.CharField(max_length=JOIN_CODE_LENGTH, unique=True, default=new_join_code)
    requires_invite = models.BooleanField(default=False)
    # Classroom controls: results hidden until revealed; answering can be locked; a new
    # round starts the count from zero without deleting earlier rounds.
    results_revealed = models.BooleanField(default=False)
    is_locked = models.BooleanField(default=False)
    current_round = models.PositiveIntegerField(default=1)
    created = models.DateField(auto_now_add=True)
    # One more with every edit of the questions (see check_design_editable). A respondent
    # page sends the version it showed, and every write of answers checks the version
    # they were validated against: reports randomized with one design are never stored
    # under another. Only ever changed in the database (see save).
    design_version = models.PositiveIntegerField(default=1, editable=False)

    objects = SurveyQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        """Never write ``design_version`` back: a form or serializer holding this survey
        since before a question edit would otherwise undo that edit's version."""
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name != "design_version"
            ]
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("survey:respond", args=[self.slug])

    @property
    def is_accepting(self) -> bool:
        return self.status == self.Status.OPEN and not self.is_locked

    def reveal(self, revealed: bool = True) -> None:
        """Classroom: show (or hide again) the results on the projector and phones."""
        self.results_revealed = revealed
        self.save(update_fields=["results_revealed"])

    def lock(self, locked: bool = True) -> None:
        """Classroom: refuse (or accept again) new answers without closing the survey."""
        self.is_locked = locked
        self.save(update_fields=["is_locked"])

    def new_round(self) -> None:
        """Classroom: same question, empty count. Earlier rounds stay stored; the new one
        starts hidden and open for answers."""
        self.current_round += 1
        self.results_revealed = False
        self.is_locked = False
        self.save(update_fields=["current_round", "results_revealed", "is_locked"])

    def designs(self) -> list[BinaryDesign]:
        return [q.design for q in self.questions.all()]

    @property
    def epsilon_total(self) -> float:
        return total_epsilon(self.designs())

    def open(self) -> None:
        self.status = self.Status.OPEN
        self.save(update_fields=["status"])

    def close(self) -> None:
        self.status = self.Status.CLOSED
        self.save(update_fields=["status"])

    def has_answers(self) -> bool:
        return self.submissions.exists()

    @property
    def is_frozen(self) -> bool:
        """Design parameters and the question set are fixed once the first answer
        arrives: every stored report was randomized with them, and estimates invert them."""
        return self.has_answers()

    def check_design_editable(self) -> None:
        """Raise :class:`DesignFrozen` when the questions' designs may no longer change;
        otherwise count one more design version.

        Call it inside the transaction that edits them: it locks the survey row first.
        Storing a submission takes a share of that lock before it writes and checks the
        version its answers were validated against, so either the submission waits for
        the edit and then finds the version changed (nothing stored), or the edit waits
        for the submission and then finds the survey frozen. Answer sheets cached by the
        submit endpoint rely on it (SQLite's write transactions are exclusive).
        """
        locked = Survey.objects.select_for_update().filter(pk=self.pk)
        version = locked.values_list("design_version", flat=True).get()
        if self.is_frozen:
            raise DesignFrozen(
                "This survey already has answers, so its questions and their designs are "
                "frozen: the stored reports were randomized with them. Create a new "
                "survey to ask with a different design."
            )
        locked.update(design_version=version + 1)
        self.design_version = version + 1

    def lifecycle_error(self, action: str) -> str | None:
        """Why ``action`` ("open" or "close") is not allowed now, or None if it is.

        Draft → open → closed; a closed survey may be reopened.
        """
        if action == "open":
            if self.status == self.Status.OPEN:
                return "This survey is already open."
            if not self.questions.exists():
                return "Add at least one question before opening the survey."
            return None
        if action == "close":
            return None if self.status == self.Status.OPEN else "Only an open survey can be closed."
        return f"Unknown action {action!r}."

    def simulate(self, n: int, true_rate: float, rng=None, *, hour: datetime | None = None) -> int:
        """Add ``n`` simulated respondents whose true answers are yes with probability
        ``true_rate``, randomized by the same design code, marked simulated (``hour``: when
        they count as arrived, for a demo's estimate-over-time chart; default now)."""
        rng = rng or np.random.default_rng()
        questions = list(self.questions.all())
        columns = [q.design.simulate(rng.random(n) < true_rate, rng) for q in questions]
        rows = zip(*columns, strict=True) if columns else iter(())
        reports = ({q.id: int(v) for q, v in zip(questions, row, strict=True)} for row in rows)
        return bulk_record(self, reports, simulated=True, hour=hour)

    def record_submission(
        self,
        submission_id: uuid.UUID,
        values: dict[int, int],
        *,
        invite_token: str | None = None,
        simulated: bool = False,
        design_version: int | None = None,
    ) -> bool:
        """Store one submission and all its answers atomically.

        Returns True when stored, False when this ``submission_id`` was already stored
        (a retry: idempotent). Raises :class:`InviteRejected` for a bad invite and
        :class:`DesignChanged` when ``design_version`` (the one ``values`` were validated
        against) is no longer the survey's; then nothing is stored.
        """
        hour = current_hour()
        try:
            with transaction.atomic():
                if design_version is not None and design_version != self._locked_version():
                    raise DesignChanged
                Submission.objects.create(
                    submission_id=submission_id,
                    survey=self,
                    round=self.current_round,
                    simulated=simulated,
                    received_hour=hour,
                )
                if self.requires_invite and not Invite.consume(self, invite_token):
                    raise InviteRejected
                Answer.objects.bulk_create(
                    Answer(submission_id=submission_id, question_id=qid, value=value)
                    for qid, value in values.items()
                )
                Tally.add_counts(
                    dict.fromkeys(values.items(), 1),
                    round=self.current_round,
                    simulated=simulated,
                    hour=hour,
                )
        except IntegrityError:
            if self.submissions.filter(submission_id=submission_id).exists():
                return False
            if Submission.objects.filter(submission_id=submission_id).exists():
                raise SubmissionIdTaken from None
            raise
        return True

    def _locked_version(self) -> int:
        """The design version now, holding a share of the survey row's lock until the
        transaction ends, so no question edit can commit in between (PostgreSQL; SQLite's
        write transactions are exclusive anyway)."""
        sql = f"SELECT design_version FROM {Survey._meta.db_table} WHERE id = %s"
        if connection.vendor == "postgresql":
            sql += " FOR KEY SHARE"
        with connection.cursor() as cursor:
            cursor.execute(sql, [self.pk])
            return cursor.fetchone()[0]


class InviteRejected(Exception):
    """The survey requires an invite and this one is missing, unknown or used."""


class SubmissionIdTaken(Exception):
    """The submission id is already used by another survey's submission (random
    version 4 ids never collide by chance, so the client reused one)."""


class DesignChanged(Exception):
    """The questions were edited after the answers were validated (or after the page
    that randomized them was loaded)."""


class DesignFrozen(Exception):
    """The survey has answers, so its designs cannot change any more."""


class Question(models.Model):
    class Kind(models.TextChoices):
        BINARY = "binary"

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveIntegerField(default=0)
    text = models.CharField(max_length=500)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.BINARY)
    design_name = models.CharField(max_length=30, default="forced_response")
    design_params = models.JSONField(default=dict)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.text

    @property
    def design(self) -> BinaryDesign:
        return design_from_params(self.design_name, self.design_params)

    @property
    def epsilon(self) -> float:
        return self.design.epsilon

    @property
    def is_frozen(self) -> bool:
        return self.survey.is_frozen

    @property
    def design_params_json(self) -> str:
        return json.dumps(self.design_params)

    @property
    def posterior_if_yes(self) -> float:
        """What an adversary with a 50 % prior believes after seeing a "yes"."""
        return self.design.posterior_yes(0.5)


class Submission(models.Model):
    """One respondent's randomized answers. The primary key is the client's random
    UUID (used for idempotent retries): no sequential identifier is ever exposed."""

    submission_id = models.UUIDField(primary_key=True)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="submissions")
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    received_hour = models.DateTimeField()

    def __str__(self) -> str:
        return f"submission {self.submission_id}"

    @classmethod
    def store_if_accepting(
        cls, survey_id: int, submission_id: uuid.UUID, values: dict[int, int], *, design: int
    ) -> bool:
        """The respondents' hot path: store a submission in plain SQL (one statement on
        PostgreSQL, one short transaction elsewhere) if the survey is open, unlocked,
        needs no invite and is still at design version ``design``, the one ``values``
        were validated against.

        The survey's state is checked by the INSERT itself, so a survey closed (or its
        questions edited) a moment ago gets nothing. Returns False when nothing was
        stored, whatever the reason (a retry, a closed or locked survey, an invite
        needed, edited questions, no such survey): the caller then takes
        :meth:`Survey.record_submission`'s path, which tells these apart.
        """
        hour = current_hour()
        try:
            if connection.vendor == "postgresql":
                return cls._store_in_one_statement(survey_id, submission_id, values, hour, design)
            return cls._store_in_transaction(survey_id, submission_id, values, hour, design)
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
        hour: datetime,
        design: int,
    ) -> bool:
        submission_db = cls._meta.pk.get_db_prep_value(submission_id, connection)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {cls._meta.db_table} "
                "(submission_id, survey_id, round, simulated, received_hour) "
                "SELECT %(submission)s, id, current_round, %(simulated)s, %(hour)s "
                f"FROM {Survey._meta.db_table} WHERE {TAKES_PLAIN_SUBMISSIONS} "
                "ON CONFLICT (submission_id) DO NOTHING RETURNING round",
                {
                    "submission": submission_db,
                    "simulated": False,
                    "hour": connection.ops.adapt_datetimefield_value(hour),
                    "survey": survey_id,
                    "open": Survey.Status.OPEN.value,
                    "design": design,
                },
            )
            row = cursor.fetchone()
            if row is None:
                return False
            Answer.insert_values(cursor, submission_db, values)
            Tally.add_counts(
                dict.fromkeys(values.items(), 1), round=row[0], simulated=False, hour=hour
            )
        return True

    @classmethod
    def _store_in_one_statement(
        cls,
        survey_id: int,
        submission_id: uuid.UUID,
        values: dict[int, int],
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
        ]
        # connections[...], not the proxy: each read of the proxy is a lookup.
        return STORE_SUBMISSION.execute(connections[DEFAULT_DB_ALIAS], params) > 0


def store_submission_sql() -> str:
    """The fast path's statement, parameters in the order ``_store_in_one_statement``
    passes them. The survey row is share-locked before anything is written: a question
    edit holding it makes the statement wait, then re-check the row, find a new design
    version and store nothing (see :meth:`Survey.check_design_editable`)."""
    tally = Tally._meta.db_table
    placeholders = {
        "survey": "$1::bigint",
        "open": "$2::text",
        "submission": "$3::uuid",
        "hour": "$4::timestamptz",
        "questions": "$5::bigint[]",
        "values": "$6::smallint[]",
        "shard": "$7::smallint",
        "design": "$8::integer",
    }
    return (
        f"""
        WITH survey AS (
            SELECT id, current_round FROM {Survey._meta.db_table}
            WHERE {TAKES_PLAIN_SUBMISSIONS}
            FOR KEY SHARE
        ), submission AS (
            INSERT INTO {Submission._meta.db_table}
                (submission_id, survey_id, round, simulated, received_hour)
            SELECT %(submission)s, id, current_round, false, %(hour)s FROM survey
            ON CONFLICT (submission_id) DO NOTHING
            RETURNING round
        ), report AS (
            SELECT * FROM unnest(%(questions)s, %(values)s) AS report (question, value)
        ), answer AS (
            INSERT INTO {Answer._meta.db_table} (submission_id, question_id, value)
            SELECT %(submission)s, question, value FROM submission, report
        )
        INSERT INTO {tally} (question_id, round, simulated, hour, value, shard, count)
        SELECT question, round, false, %(hour)s, value, %(shard)s, 1 FROM submission, report
        ON CONFLICT (question_id, round, simulated, hour, value, shard)
        DO UPDATE SET count = {tally}.count + excluded.count
    """
        % placeholders
    )


STORE_SUBMISSION = PreparedStatement("deniable_store_submission", store_submission_sql)


class Answer(models.Model):
    """A randomized report: the only trace of a respondent's answer on the server."""

    # No index of its own: the (submission, question) unique index serves it.
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="answers", db_index=False
    )
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    value = models.SmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "question"], name="one_answer_per_question"
            )
        ]

    def __str__(self) -> str:
        return f"reported {self.value} to question {self.question_id}"

    @classmethod
    def insert_values(cls, cursor, submission_db, values: dict[int, int]) -> None:
        """One multi-row INSERT of a submission's reports (``submission_db``: its id as
        the database stores it)."""
        cursor.execute(
            f"INSERT INTO {cls._meta.db_table} (submission_id, question_id, value) VALUES "
            + ", ".join(["(%s, %s, %s)"] * len(values)),
            [item for qid, value in values.items() for item in (submission_db, qid, value)],
        )


class TallyQuerySet(models.QuerySet):
    def counts(self) -> dict[int, dict[int, int]]:
        """{question_id: {value: count}} summed over shards and hours, in one query."""
        result: dict[int, dict[int, int]] = {}
        rows = self.values("question_id", "value").annotate(total=models.Sum("count"))
        for row in rows:
            result.setdefault(row["question_id"], {})[row["value"]] = row["total"]
        return result

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

    def compact(self, before: datetime) -> int:
        """Fold the shards of every hour before ``before`` into shard 0.

        Shards only help while an hour is receiving answers; afterwards they are rows
        that every estimate sums for nothing. Totals are unchanged, so this is safe to run
        at any time (e.g. hourly from cron via ``manage.py compact_tallies``). Returns the
        number of rows removed.
        """
        keys = ["question_id", "round", "simulated", "hour", "value"]
        with transaction.atomic():
            # Lock the rows first (PostgreSQL cannot lock an aggregate), then fold exactly
            # those: a row a late submission adds meanwhile has a higher id and is kept.
            locked = self.filter(hour__lt=before).select_for_update().values_list("pk", flat=True)
            newest = max(locked, default=None)
            if newest is None:
                return 0
            old = self.filter(hour__lt=before, pk__lte=newest)
            sums = list(old.values(*keys).annotate(total=models.Sum("count")).order_by())
            removed, _ = old.delete()
            Tally.objects.bulk_create(
                [Tally(shard=0, count=row.pop("total"), **row) for row in sums], batch_size=1000
            )
        return removed - len(sums)


class Tally(models.Model):
    """Running counts of reports, kept in the same transaction as the answers.

    Estimates read these few rows instead of scanning every answer, so their cost does
    not grow with the number of respondents. Rows are spread over a few shards so that
    concurrent submissions to one question do not all wait on one row lock.
    """

    # No index of its own: the one_tally_row unique index starts with it.
    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="tallies", db_index=False
    )
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    hour = models.DateTimeField()
    value = models.SmallIntegerField()
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.BigIntegerField(default=0)

    objects = TallyQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["question", "round", "simulated", "hour", "value", "shard"],
                name="one_tally_row",
            )
        ]

    def __str__(self) -> str:
        return f"{self.count} × {self.value} for question {self.question_id}"

    @classmethod
    def add_counts(
        cls,
        counts: dict[tuple[int, int], int],
        *,
        round: int,
        simulated: bool,
        hour: datetime,
    ) -> None:
        """Add ``counts[(question_id, value)]`` to the tallies with one upsert."""
        if not counts:
            return
        shard = secrets.randbelow(TALLY_SHARDS)
        table = cls._meta.db_table
        hour_db = connection.ops.adapt_datetimefield_value(hour)
        rows = [
            (qid, round, simulated, hour_db, value, shard, n) for (qid, value), n in counts.items()
        ]
        placeholders = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(rows))
        sql = (
            f"INSERT INTO {table} (question_id, round, simulated, hour, value, shard, count) "
            f"VALUES {placeholders} "
            "ON CONFLICT (question_id, round, simulated, hour, value, shard) "
            f"DO UPDATE SET count = {table}.count + excluded.count"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [item for row in rows for item in row])


class Invite(models.Model):
    """A one-time invite. Only a hash of the token and whether it was used are kept:
    no time, no order, no link to the submission it admitted."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="invites")
    token_hash = models.CharField(max_length=64, unique=True)
    used = models.BooleanField(default=False)

    def __str__(self) -> str:
        return "used invite" if self.used else "unused invite"

    @classmethod
    def create_batch(cls, survey: Survey, n: int) -> list[str]:
        tokens = [secrets.token_urlsafe(12) for _ in range(n)]
        cls.objects.bulk_create(cls(survey=survey, token_hash=hash_token(t)) for t in tokens)
        return tokens

    @classmethod
    def consume(cls, survey: Survey, token: str | None) -> bool:
        if not token:
            return False
        updated = cls.objects.filter(
            survey=survey, token_hash=hash_token(token), used=False
        ).update(used=True)
        return updated == 1

    @classmethod
    def status(cls, survey: Survey, token: str | None) -> str:
        """'valid', 'used' or 'unknown' — for a clear page before answering."""
        if not token:
            return "unknown"
        used = (
            cls.objects.filter(survey=survey, token_hash=hash_token(token))
            .values_list("used", flat=True)
            .first()
        )
        return "unknown" if used is None else ("used" if used else "valid")


def bulk_record(
    survey: Survey,
    reports: Iterable[dict[int, int]],
    *,
    simulated: bool,
    hour: datetime | None = None,
) -> int:
    """Store many submissions at once (simulation, import): one transaction, one upsert."""
    hour = hour or current_hour()
    submissions, answers, counts = [], [], {}
    for values in reports:
        sid = uuid.uuid4()
        submissions.append(
            Submission(
                submission_id=sid,
                survey=survey,
                round=survey.current_round,
                simulated=simulated,
                received_hour=hour,
            )
        )
        for qid, value in values.items():
            answers.append(Answer(submission_id=sid, question_id=qid, value=value))
            counts[(qid, value)] = counts.get((qid, value), 0) + 1
    with transaction.atomic():
        Submission.objects.bulk_create(submissions, batch_size=1000)
        Answer.objects.bulk_create(answers, batch_size=1000)
        Tally.add_counts(counts, round=survey.current_round, simulated=simulated, hour=hour)
    return len(submissions)
