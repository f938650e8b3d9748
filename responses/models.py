"""The rows that hold respondents' reports. The only app that writes or reads them.

Two kinds of tables, so that sealing can leave nothing behind (SPEC §2, invariants 6 and
6b; the full account is in ``docs/privacy.md``):

* **The current hour's tables** (:class:`Inbox`, :class:`QuotaCount`, :class:`InviteUse`,
  each twice: one set for even hours, one for odd hours). Every way of storing reports
  writes here, one row per submission: the client's id (for idempotent retries), the
  hour, and the reports as one answer-pattern key. Until its hour is sealed a row keeps
  its order of arrival (PostgreSQL's ``xmin`` and ``ctid``, SQLite's ``rowid``): what a
  live observer of the current hour could see.
* **The sealed tables** (:class:`Receipt`, :class:`AnswerPattern`, :class:`Tally`,
  :class:`SpentCredential`, :class:`SurveyCount`), written only by the seal
  (:mod:`responses.sealing`): it moves a finished hour's rows here in random order, as
  counts (how many respondents gave each combination of reports; per question, hour and
  report), in one transaction, then empties the hour's tables in a way that drops their
  files (``TRUNCATE`` on PostgreSQL; on SQLite deleted content is overwritten with zeros).
  No sealed row is one respondent's: a submission survives only as one more in a count.

Nothing here can hold a true answer, a client address, a user agent or a precise time.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import NamedTuple

from django.db import models

from survey.models import Question, Survey


class ExactSum(models.Sum):
    """SUM that cannot overflow: PostgreSQL sums bigint and numeric exactly; SQLite's
    integer SUM raises on overflow, so there TOTAL (a float sum: exact below 2⁵³, then
    to 16 digits) adds the sums of squares."""

    def as_sqlite(self, compiler, connection, **extra_context):
        return super().as_sqlite(compiler, connection, function="TOTAL", **extra_context)


def whole(value) -> int:
    """An aggregate's value (int, Decimal, or SQLite's float TOTAL) as an int."""
    return int(round(value)) if isinstance(value, float) else int(value or 0)


class TallySums(NamedTuple):
    """What one tally row adds up: reports, their sum and their sum of squares."""

    count: int
    total: int
    total_sq: int


def receipt_of(submission_id: uuid.UUID) -> uuid.UUID:
    """What is kept of a client's submission id: a digest, enough to recognise a retry
    and nothing more. The id itself never reaches the database (nor its logs), so not
    even a copy of the files can be matched against what a device remembers."""
    return uuid.UUID(bytes=hashlib.sha256(submission_id.bytes).digest()[:16])


# --- The current hour ---------------------------------------------------------------------


class Inbox(models.Model):
    """One submission of the current hour, as it arrived; sealed at the end of the hour.

    ``receipt`` is a digest of the client's submission id (:func:`receipt_of`: a retry
    finds it and stores nothing twice) or, for simulated and imported respondents, a
    random one. ``reports`` is the
    answer-pattern key of the submission's reports (``"question=report,…"``, a skip as
    ``"question="``, see :mod:`responses.batch`). ``credential`` is the spent credential's
    hash on an invite-only survey; ``batch`` marks an import's rows until it finishes.

    Few indexes, as every submission writes one: the key, the survey (results read
    their survey's rows), and a credential's uniqueness where there is one.
    """

    receipt = models.UUIDField(primary_key=True)
    # The survey row is not locked or checked per insert (db_constraint=False): the
    # statement that writes a row reads the survey's state itself, and a survey's rows
    # go with it through Django's collector.
    survey = models.ForeignKey(
        Survey, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    hour = models.DateTimeField()
    reports = models.TextField()
    # Null, not "", when there is none: only credentials must be unique.
    credential = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    batch = models.UUIDField(null=True, blank=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"submission to survey {self.survey_id} in the hour {self.hour:%Y-%m-%d %H}:00"


class Inbox0(Inbox):
    """The current hour's submissions when the hour is even (hours since 1970)."""

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["credential"],
                condition=models.Q(credential__isnull=False),
                name="one_use_per_credential_0",
            )
        ]


class Inbox1(Inbox):
    """The current hour's submissions when the hour is odd."""

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["credential"],
                condition=models.Q(credential__isnull=False),
                name="one_use_per_credential_1",
            )
        ]


class QuotaCount(models.Model):
    """How many real submissions a survey with a response quota took this hour.

    One row per survey, updated by each submission under the row's lock, so that
    concurrent submissions cannot overshoot the quota; sealed with the hour. ``room`` is
    what the quota left when the count was last taken (sealed and other hour included).
    """

    survey = models.OneToOneField(
        Survey,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="+",
        db_constraint=False,
    )
    n = models.PositiveIntegerField(default=0)
    room = models.BigIntegerField(default=0)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.n} submissions to survey {self.survey_id} this hour"


class QuotaCount0(QuotaCount):
    """Quota counts of an even hour."""


class QuotaCount1(QuotaCount):
    """Quota counts of an odd hour."""


class InviteUse(models.Model):
    """An invite used this hour (exchanged for a credential): the seal marks the invite
    used, in random order among the hour's others, and forgets this row.

    ``blinded_hash`` lets a browser whose answer was lost ask again with the same blinded
    message (and only that one)."""

    token_hash = models.CharField(max_length=64, primary_key=True)
    survey = models.ForeignKey(
        Survey, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    blinded_hash = models.CharField(max_length=64, blank=True, default="")
    hour = models.DateTimeField()

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return "invite used this hour"


class InviteUse0(InviteUse):
    """Invites used in an even hour."""


class InviteUse1(InviteUse):
    """Invites used in an odd hour."""


class ImportBatch(models.Model):
    """An import under way: the seal leaves its rows alone until it has finished (and
    they are all stored) or has been taken back."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="+")
    started_hour = models.DateTimeField()

    def __str__(self) -> str:
        return f"import into survey {self.survey_id}"


# --- Sealed -------------------------------------------------------------------------------


class Receipt(models.Model):
    """That a client's submission id was stored, for idempotent retries (a device coming
    back online days later stores nothing twice): its digest (:func:`receipt_of`), and
    nothing else, not the survey's rows it stored, not the hour. Written by the seal,
    in random order."""

    submission_id = models.UUIDField(primary_key=True)
    survey = models.ForeignKey(
        Survey, on_delete=models.CASCADE, related_name="receipts", db_constraint=False
    )

    def __str__(self) -> str:
        return f"receipt {self.submission_id}"


class SpentCredential(models.Model):
    """A credential that admitted a submission: only a hash of its message, to refuse
    a second use. It is not the invite's, and nothing else is kept."""

    spent_id = models.CharField(max_length=64, primary_key=True)
    survey = models.ForeignKey(
        Survey, on_delete=models.CASCADE, related_name="spent_credentials", db_constraint=False
    )

    def __str__(self) -> str:
        return "spent credential"


class AnswerPattern(models.Model):
    """How many respondents of a survey's round gave exactly this combination of reports.

    The sealed form of the responses: every submission ends up as one more in the count
    of its pattern, with no hour and no identifier, so a pattern row says nothing about
    when anyone answered or who answered with whom. Breakdowns, cross-tabs, regression
    and the row-level exports read them.
    """

    pk = models.CompositePrimaryKey("survey", "round", "simulated", "key")
    survey = models.ForeignKey(
        Survey,
        on_delete=models.CASCADE,
        related_name="patterns",
        db_index=False,  # the primary key's index starts with it
        db_constraint=False,
    )
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    key = models.TextField()
    count = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.count} × {self.key}"


class Release(models.Model):
    """What a survey round's viewers see: its counts as frozen at the last release
    (:func:`responses.counts.released_counts`), and how many respondents they held. A
    new release is made only once at least ``min_cell_count`` more have answered, so a
    viewer comparing two releases never sees fewer than that many people's answers."""

    pk = models.CompositePrimaryKey("survey", "round")
    survey = models.ForeignKey(
        Survey, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    round = models.PositiveIntegerField()
    respondents = models.BigIntegerField()
    counts = models.JSONField()

    def __str__(self) -> str:
        return f"round {self.round}: {self.respondents} respondents"


class Tally(models.Model):
    """Per question, hour and tally key: how many reports, their sum and sum of squares.

    Estimates read these few rows instead of every respondent's, so their cost does not
    grow with the respondents; the over-time charts read them hour by hour. ``value`` is
    the design's tally key (the report for yes/no and choice, a histogram bin for
    numbers), null for skips. Written only by the seal, one row per key and hour sealed
    (readers sum them). Σ report² over 10⁶ respondents can pass a bigint: numeric.
    """

    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="tallies", db_constraint=False
    )
    round = models.PositiveIntegerField(default=1)
    simulated = models.BooleanField(default=False)
    hour = models.DateTimeField()
    value = models.BigIntegerField(null=True)
    count = models.BigIntegerField(default=0)
    total = models.DecimalField(max_digits=40, decimal_places=0, default=0)
    total_sq = models.DecimalField(max_digits=60, decimal_places=0, default=0)

    def __str__(self) -> str:
        return f"{self.count} × key {self.value} for question {self.question_id}"


class SurveyCount(models.Model):
    """How many submissions of a survey are sealed, real and simulated: what a quota
    and the survey list read in one row, whatever the number of respondents."""

    survey = models.OneToOneField(
        Survey,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="sealed_count",
        db_constraint=False,
    )
    real = models.BigIntegerField(default=0)
    simulated = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.real} real and {self.simulated} simulated sealed submissions"


# --- Which set holds an hour --------------------------------------------------------------

INBOXES = (Inbox0, Inbox1)
QUOTA_COUNTS = (QuotaCount0, QuotaCount1)
INVITE_USES = (InviteUse0, InviteUse1)


def parity(hour: datetime) -> int:
    """0 for an even hour since 1970, 1 for an odd one: which set of tables it writes."""
    return int(hour.timestamp() // 3600) % 2


class HourTables(NamedTuple):
    """The current-hour tables of one parity, and those of the other."""

    inbox: type[Inbox]
    quota: type[QuotaCount]
    invite_use: type[InviteUse]
    other_inbox: type[Inbox]
    other_quota: type[QuotaCount]
    other_invite_use: type[InviteUse]


def hour_tables(hour: datetime) -> HourTables:
    return tables_of_parity(parity(hour))


def tables_of_parity(this: int) -> HourTables:
    other = 1 - this
    return HourTables(
        INBOXES[this],
        QUOTA_COUNTS[this],
        INVITE_USES[this],
        INBOXES[other],
        QUOTA_COUNTS[other],
        INVITE_USES[other],
    )
