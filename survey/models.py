"""Surveys, their questions, and the randomized answers respondents send.

Nothing here can hold a true answer, a client address, a user agent or a precise time:
submissions keep only the hour they arrived, and invites only whether they were used.
Nothing counts up as answers arrive, and once an hour is over its rows are rewritten in
random order (see :mod:`survey.sealing`), so not even their order of arrival remains.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.validators import MinValueValidator
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, models, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.urls import reverse
from django.utils import timezone

from estimator.designs import Composition, Design, composition, make_design
from estimator.disclosure import DEFAULT_MIN_CELL
from estimator.simulation import Truth, simulate_reports
from survey import invites
from survey.pg_prepared import PreparedStatement

# No look-alike characters (0/O, 1/I/L) so a code read off a projector is typed right.
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 6
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


def new_slug() -> str:
    """72 random bits, URL-safe; never starting with "-", which a command line (e.g.
    ``manage.py import_responses <slug> file.csv``) would read as an option."""
    slug = secrets.token_urlsafe(9)
    return slug if not slug.startswith("-") else new_slug()


def new_invite_token() -> str:
    """96 random bits, URL-safe, never starting with "-": the invites CSV holds tokens
    as they are (a researcher pastes them), and a spreadsheet reads a cell starting with
    "-" as a formula (CSV injection). The other URL-safe characters are harmless."""
    token = secrets.token_urlsafe(12)
    return token if not token.startswith("-") else new_invite_token()


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def current_hour() -> datetime:
    """Submission times are kept to the hour: enough for a chart, too coarse to link."""
    return timezone.now().replace(minute=0, second=0, microsecond=0)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Role(models.TextChoices):
    """What someone may do with a survey; each role includes the ones before it."""

    VIEWER = "viewer"  # results and exports
    EDITOR = "editor"  # also build and distribute
    OWNER = "owner"  # also share, transfer, delete and restore

    def includes(self, other: Role) -> bool:
        return ROLE_ORDER.index(self) >= ROLE_ORDER.index(other)

    @classmethod
    def at_least(cls, role: Role) -> list[Role]:
        return [r for r in ROLE_ORDER if r.includes(role)]


ROLE_ORDER = [Role.VIEWER, Role.EDITOR, Role.OWNER]
# The roles a survey can be shared with; owner is not one (it is transferred).
SHARED_ROLE_CHOICES = [(r.value, r.label) for r in (Role.VIEWER, Role.EDITOR)]


class SurveyQuerySet(models.QuerySet):
    def accessible_to(self, user, role: Role = Role.VIEWER) -> SurveyQuerySet:
        """The surveys ``user`` holds at least ``role`` on, each annotated with the
        user's own ``role``: the one rule every page and endpoint asks."""
        if not user.is_authenticated:
            return self.none()
        access = models.Q(owner=user)
        if role != Role.OWNER:
            shared = Collaborator.objects.filter(
                survey=OuterRef("pk"), user=user, role__in=Role.at_least(role)
            )
            access |= models.Q(Exists(shared))
        return self.filter(access).with_role(user)

    def owned_by(self, user) -> SurveyQuerySet:
        return self.accessible_to(user, Role.OWNER)

    def with_role(self, user) -> SurveyQuerySet:
        share = Collaborator.objects.filter(survey=OuterRef("pk"), user=user).values("role")[:1]
        return self.annotate(
            role=models.Case(
                models.When(owner=user, then=models.Value(Role.OWNER.value)),
                default=Subquery(share),
                output_field=models.CharField(),
            )
        )

    def in_trash(self) -> SurveyQuerySet:
        return self.filter(trashed_at__isnull=False)

    def with_response_counts(self) -> SurveyQuerySet:
        """``n_responses`` and ``n_simulated`` per survey, counted by the database."""
        return self.annotate(
            n_responses=models.Count("submissions"),
            n_simulated=models.Count("submissions", filter=models.Q(submissions__simulated=True)),
        )

    def purge_expired(self, now: datetime | None = None) -> int:
        """Delete for good the surveys in the trash for longer than
        ``settings.TRASH_RETENTION_DAYS``, answers and all; one transaction per survey,
        so respondents elsewhere never wait long. Returns how many were deleted."""
        cutoff = (now or timezone.now()) - timedelta(days=settings.TRASH_RETENTION_DAYS)
        expired = self.in_trash().filter(trashed_at__lt=cutoff).values_list("pk", flat=True)
        purged = 0
        for pk in list(expired):
            with transaction.atomic():
                deleted, _ = self.filter(pk=pk, trashed_at__lt=cutoff).delete()
            purged += bool(deleted)
        return purged

    def create_classroom(self, owner, question: str) -> Survey:
        """An open classroom survey with one classic two-coin question (ε = ln 3)."""
        with transaction.atomic():
            survey = self.create(
                owner=owner, title=question, mode=Survey.Mode.CLASSROOM, status=Survey.Status.OPEN
            )
            survey.questions.create(text=question, design_params={"p_truth": 0.5, "p_yes": 0.5})
        return survey


class LiveSurveyManager(models.Manager.from_queryset(SurveyQuerySet)):
    """Surveys in the trash are invisible to every lookup through ``Survey.objects``
    (respondent link, join code, pages, API): a trashed survey is a 404 everywhere
    except where ``Survey.with_trashed`` is asked on purpose (trash page, restore, purge)."""

    def get_queryset(self) -> SurveyQuerySet:
        return super().get_queryset().filter(trashed_at__isnull=True)


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
    # Set while the survey is in the trash: hidden everywhere, restorable whole until
    # purge_trash deletes it for good (settings.TRASH_RETENTION_DAYS later).
    trashed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The survey closes itself at this time or once it holds this many real (not
    # simulated) responses, whichever comes first; checked on access, no cron needed.
    closes_at = models.DateTimeField(null=True, blank=True)
    response_quota = models.PositiveIntegerField(null=True, blank=True)
    # Breakdowns hide every cell with fewer respondents than this (and whatever else it
    # takes so that no hidden cell can be recovered by differencing: estimator.disclosure).
    min_cell_count = models.PositiveSmallIntegerField(
        default=DEFAULT_MIN_CELL, validators=[MinValueValidator(1)]
    )

    # The language of its respondent pages (researcher pages stay in English).
    language = models.CharField(max_length=8, choices=settings.LANGUAGES, default="en")

    objects = LiveSurveyManager()
    with_trashed = SurveyQuerySet.as_manager()

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
        return self.status == self.Status.OPEN and not self.is_locked and not self.close_if_due()

    def closing_reason(self) -> str | None:
        """Why the survey should be closed by now (close date passed, quota reached)."""
        if self.closes_at is not None and self.closes_at <= timezone.now():
            return "its close date has passed"
        if (
            self.response_quota is not None
            and self.submissions.filter(simulated=False).count() >= self.response_quota
        ):
            return "it has reached its response quota"
        return None

    def close_if_due(self) -> bool:
        """Close an open survey whose close date has passed or whose quota is reached;
        True if it is (now) closed for that reason. Called whenever the survey is used,
        so no scheduled job is needed."""
        if self.status != self.Status.OPEN or self.closing_reason() is None:
            return False
        Survey.objects.filter(pk=self.pk, status=self.Status.OPEN).update(status=self.Status.CLOSED)
        self.status = self.Status.CLOSED
        return True

    def duplicate(self, owner) -> Survey:
        """A new draft with the same settings, questions and designs, and no answers,
        invites or collaborators."""
        with transaction.atomic():
            copy = Survey.objects.create(
                owner=owner,
                title=f"{self.title} (copy)"[:200],
                description=self.description,
                mode=self.mode,
                requires_invite=self.requires_invite,
                language=self.language,
            )
            Question.objects.bulk_create(
                Question(
                    survey=copy,
                    position=q.position,
                    text=q.text,
                    kind=q.kind,
                    options=q.options,
                    design_name=q.design_name,
                    design_params=q.design_params,
                )
                for q in self.questions.all()
            )
        return copy

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

    def move_to_trash(self) -> None:
        """Hide the survey everywhere without touching its answers, invites or tallies."""
        self.trashed_at = timezone.now()
        self.save(update_fields=["trashed_at"])

    def restore(self) -> None:
        """Back from the trash exactly as it was (an open survey takes answers again)."""
        self.trashed_at = None
        self.save(update_fields=["trashed_at"])

    @property
    def purge_after(self) -> datetime | None:
        """When purge_trash may delete this trashed survey for good."""
        if self.trashed_at is None:
            return None
        return self.trashed_at + timedelta(days=settings.TRASH_RETENTION_DAYS)

    def share_with(self, user, role: Role) -> Collaborator:
        """Give ``user`` (not the owner) ``role`` on this survey, or change theirs."""
        if user.pk == self.owner_id:
            raise SharingRefused("The owner already has every right on this survey.")
        if role not in (Role.VIEWER, Role.EDITOR):
            raise SharingRefused("A collaborator is a viewer or an editor.")
        collaborator, _ = Collaborator.objects.update_or_create(
            survey=self, user=user, defaults={"role": role}
        )
        return collaborator

    def transfer_to(self, user) -> None:
        """Make ``user`` the owner; the previous owner stays on as an editor."""
        if user.pk == self.owner_id:
            raise SharingRefused("This account already owns the survey.")
        with transaction.atomic():
            previous = self.owner
            Collaborator.objects.filter(survey=self, user=user).delete()
            self.owner = user
            self.save(update_fields=["owner"])
            Collaborator.objects.create(survey=self, user=previous, role=Role.EDITOR)

    def designs(self) -> list[Design]:
        return [q.design for q in self.questions.all()]

    def question_designs(self) -> dict[int, Design]:
        """{question id: its design}, in one query."""
        return {q.id: q.design for q in self.questions.all()}

    @property
    def privacy(self) -> Composition:
        """Σ ε over the randomized questions, with the directly asked ones apart."""
        return composition(self.designs())

    @property
    def epsilon_total(self) -> float:
        return self.privacy.epsilon_total

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
            if reason := self.closing_reason():
                return f"This survey cannot open: {reason}. Change the close date or quota first."
            return None
        if action == "close":
            return None if self.status == self.Status.OPEN else "Only an open survey can be closed."
        return f"Unknown action {action!r}."

    def simulate(
        self,
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
        questions = list(self.questions.all())
        per_question = isinstance(truth, Mapping) and all(isinstance(k, int) for k in truth)
        columns = []
        for q in questions:
            own = truth.get(q.id) if per_question else truth
            if own is None:
                raise ValueError(f"no true distribution given for question {q.id}")
            columns.append(simulate_reports(q.design, own, n, rng))
        rows = zip(*columns, strict=True) if columns else iter(())
        reports = ({q.id: int(v) for q, v in zip(questions, row, strict=True)} for row in rows)
        return bulk_record(self, reports, simulated=True, hour=hour)

    def record_submission(
        self,
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
                if design_version is not None and design_version != self._locked_version():
                    raise DesignChanged
                Receipt.objects.create(submission_id=submission_id, survey=self, received_hour=hour)
                submission = Submission.objects.create(
                    survey=self,
                    round=self.current_round,
                    simulated=simulated,
                    received_hour=hour,
                )
                if self.requires_invite and not SpentCredential.spend(self, credential):
                    raise InviteRejected
                Answer.objects.bulk_create(
                    Answer(submission=submission, question_id=qid, value=value)
                    for qid, value in values.items()
                )
                Tally.add_sums(
                    tally_sums(self.question_designs(), [values]),
                    round=self.current_round,
                    simulated=simulated,
                    hour=hour,
                )
                AnswerPattern.add(
                    self.id,
                    {AnswerPattern.key_for(values): 1},
                    round=self.current_round,
                    simulated=simulated,
                )
        except IntegrityError:
            if self.receipts.filter(submission_id=submission_id).exists():
                return False
            if Receipt.objects.filter(submission_id=submission_id).exists():
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


class SharingRefused(Exception):
    """A share or transfer that cannot be done; the message says why, for the user."""


class Collaborator(models.Model):
    """Another account's access to a survey: viewer (results, exports) or editor (also
    build and distribute). Only the owner shares, transfers or deletes."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="collaborators")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="shared_surveys"
    )
    role = models.CharField(max_length=10, choices=SHARED_ROLE_CHOICES)

    class Meta:
        ordering = ["user__username"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "user"], name="one_share_per_account")
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) on survey {self.survey_id}"


NO_SUCH_ACCOUNT = "No active account has this username or email."


def find_account(identifier: str):
    """The active account with this username, or else the only one with this email."""
    users = get_user_model().objects.filter(is_active=True)
    identifier = identifier.strip()
    if not identifier:
        return None
    user = users.filter(username=identifier).first()
    if user is None and "@" in identifier:
        matches = list(users.filter(email__iexact=identifier)[:2])
        user = matches[0] if len(matches) == 1 else None
    return user


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
        CHOICE = "choice"
        NUMBER = "number"

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveIntegerField(default=0)
    text = models.CharField(max_length=500)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.BINARY)
    # A choice question's options, in order: a report is an index into this list.
    options = models.JSONField(default=list, blank=True)
    design_name = models.CharField(max_length=30, default="forced_response")
    design_params = models.JSONField(default=dict)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.text

    @property
    def design(self) -> Design:
        """The question's design object: everything else asks it, never its name."""
        return make_design(
            self.kind, self.design_name, self.design_params, k=len(self.options or ()) or None
        )

    @property
    def epsilon(self) -> float:
        return self.design.epsilon

    @property
    def is_frozen(self) -> bool:
        return self.survey.is_frozen

    @property
    def design_params_json(self) -> str:
        return json.dumps(self.design_params)

    def reword(self, text: str) -> QuestionRevision | None:
        """Change the wording; once answers exist the change is recorded (old text, new
        text, hour) for the codebook, as earlier respondents read the old one."""
        old, self.text = self.text, text
        self.save(update_fields=["text"])
        if old == text or not self.survey.has_answers():
            return None
        return self.revisions.create(old_text=old, new_text=text, hour=current_hour())

    def wording_history(self) -> list[dict[str, str]]:
        """The wording changes made after answers arrived, oldest first, for the codebook."""
        return [
            {"old_text": r.old_text, "new_text": r.new_text, "hour": r.hour.isoformat()}
            for r in self.revisions.all()
        ]

    @property
    def posterior_if_yes(self) -> float:
        """What an adversary with a 50 % prior believes after seeing a "yes"."""
        return self.design.posterior_yes(0.5)


class QuestionRevision(models.Model):
    """A change of a question's wording after answers arrived: the codebook lists them,
    so readers know which respondents saw which text. Designs never change (frozen)."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="revisions")
    old_text = models.CharField(max_length=500)
    new_text = models.CharField(max_length=500)
    # To the hour, like everything else that is timed here.
    hour = models.DateTimeField()

    class Meta:
        ordering = ["hour", "id"]

    def __str__(self) -> str:
        return f"{self.old_text!r} → {self.new_text!r}"


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


class InviteQuerySet(models.QuerySet):
    def reseal(self, survey: Survey | None = None) -> int:
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
        used = self.filter(used=True)
        spent = SpentCredential.objects.all()
        if survey is not None:
            used, spent = used.filter(survey=survey), spent.filter(survey=survey)
        with transaction.atomic():
            invite_rows = list(
                used.select_for_update().values_list(
                    "id", "survey_id", "token_hash", "blinded_hash"
                )
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


class Invite(models.Model):
    """A one-time invite. Only a hash of the token and whether it was used are kept:
    no time, no order, no link to the submission it admitted.

    An invite is exchanged once for a credential (:mod:`survey.invites`); the
    submission carries the credential, and no transaction writes both.
    """

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="invites")
    token_hash = models.CharField(max_length=64, unique=True)
    used = models.BooleanField(default=False)
    # A hash of the blinded message it was exchanged for, so that a browser whose answer
    # was lost on the way may ask again with the same one. Blinding makes that value
    # independent of the credential it becomes (the blindness RFC 9474 proves).
    blinded_hash = models.CharField(max_length=64, blank=True, default="")

    objects = InviteQuerySet.as_manager()

    def __str__(self) -> str:
        return "used invite" if self.used else "unused invite"

    @classmethod
    def create_batch(cls, survey: Survey, n: int) -> list[str]:
        CredentialKey.of(survey)  # made now, so every respondent sees the same key
        tokens = [new_invite_token() for _ in range(n)]
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
    def exchange(cls, survey: Survey, token: str | None, blinded_message: bytes) -> bytes:
        """Use up the invite and blind-sign ``blinded_message`` (RFC 9474): the
        credential it becomes is the browser's secret. The same blinded message may be
        signed again (a retry whose answer was lost); another one may not. Raises
        :class:`InviteRejected` or :class:`~survey.invites.BadCredential`, then nothing
        changed."""
        key = CredentialKey.of(survey).private_key
        blinded_hash = hashlib.sha256(blinded_message).hexdigest()
        with transaction.atomic():
            updated = (
                cls.objects.filter(survey=survey, token_hash=hash_token(token or ""))
                .filter(models.Q(used=False) | models.Q(blinded_hash=blinded_hash))
                .update(used=True, blinded_hash=blinded_hash)
            )
            if not token or updated != 1:
                raise InviteRejected
            return invites.blind_sign(key, blinded_message)

    @classmethod
    def issue(cls, survey: Survey, token: str | None) -> invites.Credential:
        """Use up the invite for a credential the server signs itself (no JavaScript,
        or an API client sending its invite): the server's code sees both for a moment,
        but stores nothing that joins them. Raises :class:`InviteRejected`."""
        key = CredentialKey.of(survey).private_key
        with transaction.atomic():
            if not cls.consume(survey, token):
                raise InviteRejected
            return invites.sign(key)

    @classmethod
    def give_back(cls, survey: Survey, token: str) -> None:
        """Undo :meth:`issue` when the submission it was for was refused as a whole."""
        cls.objects.filter(survey=survey, token_hash=hash_token(token)).update(used=False)


class CredentialKey(models.Model):
    """The RSA key pair that signs a survey's credentials: one per survey, so every
    respondent's page shows the same public key fingerprint."""

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="credential_key")
    private_key_pem = models.TextField()

    def __str__(self) -> str:
        return f"credential key of survey {self.survey_id}"

    @classmethod
    def of(cls, survey: Survey) -> CredentialKey:
        found = cls.objects.filter(survey=survey).first()
        if found is not None:
            return found
        try:
            with transaction.atomic():
                return cls.objects.create(
                    survey=survey, private_key_pem=invites.new_private_key_pem()
                )
        except IntegrityError:  # made by a concurrent request a moment ago
            return cls.objects.get(survey=survey)

    @property
    def private_key(self):
        return invites.load_private_key(self.private_key_pem)

    @property
    def public(self) -> dict[str, str]:
        return invites.public_key_fields(self.private_key)


class SpentCredential(models.Model):
    """A credential that admitted a submission: only a hash of its message, to refuse
    a second use. It is not the invite's, and nothing else is kept."""

    spent_id = models.CharField(max_length=64, primary_key=True)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="spent_credentials")

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
