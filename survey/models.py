"""Surveys, their questions, and the randomized answers respondents send.

Nothing here can hold a true answer, a client address, a user agent or a precise time:
submissions keep only the hour they arrived, and invites only whether they were used.
Nothing counts up as answers arrive, and once an hour is over its rows are rewritten in
random order (see :mod:`responses.sealing`), so not even their order of arrival remains.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import IntegrityError, models, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext

from estimator.designs import Composition, Design, composition, make_design
from estimator.disclosure import DEFAULT_MIN_CELL
from estimator.split import with_direct_share
from survey import invites

# No look-alike characters (0/O, 1/I/L) so a code read off a projector is typed right.
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 6


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


# Ten years: a longer "retention" is no retention worth promising.
MAX_RETENTION_DAYS = 3650
MAX_COMPLETION_URL = 1000

# Only a web address: a javascript: or data: link would run on the respondent's page.
validate_completion_url = URLValidator(
    schemes=["http", "https"],
    message="Enter an http:// or https:// address, e.g. "
    "https://app.prolific.com/submissions/complete?cc=XXXX&pid={PROLIFIC_PID}.",
)


class Role(models.TextChoices):
    """What someone may do with a survey; each role includes the ones before it."""

    VIEWER = "viewer"  # results, released in batches; no row-level data
    ANALYST = "analyst"  # also the live results and the row-level exports
    EDITOR = "editor"  # also build and distribute
    OWNER = "owner"  # also share, transfer, delete and restore

    def includes(self, other: Role) -> bool:
        return ROLE_ORDER.index(self) >= ROLE_ORDER.index(other)

    @classmethod
    def at_least(cls, role: Role) -> list[Role]:
        return [r for r in ROLE_ORDER if r.includes(role)]


# The smallest group a result may show, whatever the survey says (SPEC §3).
MIN_CELL_FLOOR = 5

ROLE_ORDER = [Role.VIEWER, Role.ANALYST, Role.EDITOR, Role.OWNER]
# The roles a survey can be shared with; owner is not one (it is transferred).
SHARED_ROLE_CHOICES = [(r.value, r.label) for r in (Role.VIEWER, Role.ANALYST, Role.EDITOR)]


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
        from responses.counts import with_response_counts  # responses builds on these models

        return with_response_counts(self)

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


# A classroom's projector shows one result per question, pooled from every phone.
CLASSROOM_SPLIT = (
    "a classroom question shows one result on the projector, so it cannot be split into "
    "a randomized and a direct ballot; run the split ballot as a research survey"
)


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
    # Shown to the hour on *My surveys*: several surveys a day are told apart by it.
    created = models.DateTimeField(auto_now_add=True)
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
        default=DEFAULT_MIN_CELL, validators=[MinValueValidator(MIN_CELL_FLOOR)]
    )

    # Its responses are deleted this many days after it closes (purge_responses, daily
    # from cron), as its respondent pages say; empty: kept until the survey is deleted.
    retention_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_RETENTION_DAYS)],
    )
    # How many people the respondents were drawn from (N), when known: every interval
    # then applies the finite-population correction (only the sampling part of the
    # variance shrinks; the coins' and the noise's stay).
    population_size = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(2)]
    )
    # When it last closed (cleared when it opens again), and when purge_responses deleted
    # its responses after that closing.
    closed_at = models.DateTimeField(null=True, blank=True, editable=False)
    responses_deleted_at = models.DateTimeField(null=True, blank=True, editable=False)

    # The language of its respondent pages (researcher pages stay in English).
    language = models.CharField(max_length=8, choices=settings.LANGUAGES, default="en")
    # "Prefer not to answer" on every question: a skip is stored as a skip (a null
    # report), never randomized, and counted apart. Part of the design: it freezes with
    # the first answer, so every respondent had the same choice.
    allow_skip = models.BooleanField(default=True)
    # Further languages the respondent may pick (codes of settings.LANGUAGES), and the
    # title and description in each: {"de": {"title": …, "description": …}}.
    languages = models.JSONField(default=list, blank=True)
    texts = models.JSONField(default=dict, blank=True)
    # Each device shows the questions in its own random order (crypto RNG); the server
    # never learns it: answers name their question, whatever order it was shown in.
    shuffle_questions = models.BooleanField(default=False)
    # Shown before the questions; nothing is sent until the respondent agrees.
    consent_text = models.TextField(blank=True, default="")
    # A panel's completion link: after sending, the respondent's page fills its {NAME}
    # placeholders from its own address's parameters (a panel id), in the browser only:
    # the server never stores, logs or receives them.
    completion_url = models.CharField(
        max_length=MAX_COMPLETION_URL,
        blank=True,
        default="",
        validators=[validate_completion_url],
    )

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
    def offered_languages(self) -> list[str]:
        """The languages a respondent can pick, the survey's own first."""
        return [self.language, *(code for code in self.languages if code != self.language)]

    def show_in(self, language: str, questions) -> None:
        """Put the wording of ``language`` (if translated) on this survey and
        ``questions``, for one page (never saved: the stored wording stays the original)."""
        if language == self.language or language not in self.languages:
            return
        texts = self.texts.get(language, {})
        self.title = texts.get("title") or self.title
        self.description = texts.get("description", self.description)
        for question in questions:
            if wording := question.texts.get(language):
                question.text = wording["text"]
                question.options = wording.get("options") or question.options
                question.innocuous_text = wording.get("innocuous_text") or question.innocuous_text

    @property
    def is_accepting(self) -> bool:
        return self.status == self.Status.OPEN and not self.is_locked and not self.close_if_due()

    def closing_reason(self) -> str | None:
        """Why the survey should be closed by now (close date passed, quota reached)."""
        if self.closes_at is not None and self.closes_at <= timezone.now():
            return "its close date has passed"
        if self.response_quota is not None:
            from responses.counts import quota_taken  # responses builds on these models

            if quota_taken(self) >= self.response_quota:
                return "it has reached its response quota"
        return None

    def close_if_due(self) -> bool:
        """Close an open survey whose close date has passed or whose quota is reached;
        True if it is (now) closed for that reason. Called whenever the survey is used,
        so no scheduled job is needed."""
        if self.status != self.Status.OPEN or self.closing_reason() is None:
            return False
        now = timezone.now()
        closed_at = min(self.closes_at, now) if self.closes_at else now
        Survey.with_trashed.filter(pk=self.pk, status=self.Status.OPEN).update(
            status=self.Status.CLOSED, closed_at=closed_at
        )
        self.status, self.closed_at = self.Status.CLOSED, closed_at
        return True

    def retention_error(self, days: int | None) -> str | None:
        """Why ``days`` cannot replace the retention: once answers exist, respondents
        were promised the current one, so it may only get shorter."""
        current = self.retention_days
        if current is None or not self.pk or (days is not None and days <= current):
            return None
        if self.has_answers():
            return (
                f"Respondents were told their answers are deleted {current} days after "
                "closing: with answers stored, the retention can only get shorter."
            )
        return None

    @property
    def responses_delete_at(self) -> datetime | None:
        """When its responses are due for deletion (None: no retention, or not closed)."""
        if self.retention_days is None or self.closed_at is None:
            return None
        return self.closed_at + timedelta(days=self.retention_days)

    def purge_responses_if_due(self, now: datetime | None = None) -> int | None:
        """Delete its responses if its retention has run out since it closed; the number
        of submissions deleted, or None when not due."""
        from responses.write import delete_responses  # responses builds on these models

        due = self.responses_delete_at
        if due is None or self.responses_deleted_at is not None or due > (now or timezone.now()):
            return None
        with transaction.atomic():
            deleted = delete_responses(self)
            # The addresses invites were mailed to are kept no longer than the answers.
            self.emailed_invites.all().delete()
            self.responses_deleted_at = timezone.now()
            self.save(update_fields=["responses_deleted_at"])
        return deleted

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
                shuffle_questions=self.shuffle_questions,
                languages=self.languages,
                texts=self.texts,
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
                    shuffle_options=q.shuffle_options,
                    direct_share=q.direct_share,
                    innocuous_text=q.innocuous_text,
                    texts=q.texts,
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

    def threshold_refusal(self, new: int) -> str | None:
        """Why ``new`` cannot be this survey's ``min_cell_count``, or None. Lowering it
        once answers exist would let a group hidden until now be worked out from what was
        already shown (and a viewer's batches shrink to fewer people)."""
        from responses.counts import has_reports  # responses builds on survey

        if new < MIN_CELL_FLOOR:
            return f"Must be at least {MIN_CELL_FLOOR}: smaller groups could single people out."
        if self.pk and new < self.min_cell_count and has_reports(self):
            return (
                f"Cannot be lowered once answers exist (it is {self.min_cell_count}): "
                "groups hidden so far could then be worked out."
            )
        return None

    def share_with(self, user, role: Role) -> Collaborator:
        """Give ``user`` (not the owner) ``role`` on this survey, or change theirs."""
        if user.pk == self.owner_id:
            raise SharingRefused("The owner already has every right on this survey.")
        if role not in (Role.VIEWER, Role.ANALYST, Role.EDITOR):
            raise SharingRefused("A collaborator is a viewer, an analyst or an editor.")
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
        self.closed_at = self.responses_deleted_at = None
        self.save(update_fields=["status", "closed_at", "responses_deleted_at"])

    def close(self) -> None:
        """Stop taking answers and seal the survey's answers at once, its current hour
        included (:mod:`responses.sealing`): closing is when a researcher may look at the
        database, so nothing of the order of arrival may be left in it."""
        from responses.sealing import seal_survey  # responses builds on these models

        self.status = self.Status.CLOSED
        self.closed_at = timezone.now()
        self.save(update_fields=["status", "closed_at"])
        transaction.on_commit(lambda: seal_survey(self.pk))

    def has_answers(self) -> bool:
        from responses.counts import has_reports  # responses builds on these models

        return has_reports(self)

    @property
    def is_frozen(self) -> bool:
        """Design parameters and the question set are fixed once the first answer
        arrives: every stored report was randomized with them, and estimates invert them."""
        return self.has_answers()

    def check_design_editable(self) -> None:
        """Raise :class:`DesignFrozen` when the questions' designs may no longer change;
        otherwise count one more design version.

        Call it inside the transaction that edits them. It first waits until no
        submission is being written and holds new ones back until it commits
        (:func:`responses.write.hold_for_design_edit`); a submission checks, after taking
        its own write lock, the version its answers were validated against. So either
        the submission waits for the edit and then finds the version changed (nothing
        stored), or the edit waits for the submission and then finds the survey frozen.
        Answer sheets cached by the submit endpoint rely on it (SQLite's write
        transactions are exclusive anyway).
        """
        from responses.write import hold_for_design_edit  # responses builds on these models

        hold_for_design_edit()
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


SKIPS_FROZEN = (
    "This survey already has answers, so whether it allows skipping is frozen: every "
    "respondent had the same choice, and the estimates count the skips apart."
)


class DesignFrozen(Exception):
    """The survey has answers, so its designs cannot change any more."""


INNOCUOUS_UNASKED = "only a design that asks an innocuous question takes one"


def innocuous_text_for(design: Design, text: str) -> str:
    """The innocuous question's wording, checked against the design: required by a design
    that asks one (the respondent answers it on the device), refused by the others."""
    text = (text or "").strip()
    if design.asks_innocuous and not text:
        raise ValueError(
            "innocuous_text: this design asks an innocuous yes/no question beside the "
            "sensitive one (e.g. “Were you born in the first half of the year?”); give its wording"
        )
    if text and not design.asks_innocuous:
        raise ValueError(f"innocuous_text: {INNOCUOUS_UNASKED}")
    return text


def texts_without_stale_innocuous(texts: dict, innocuous_text: str) -> dict:
    """A question's translations, less those of an innocuous question it no longer asks:
    they go with the innocuous question itself, when its design changes."""
    if innocuous_text:
        return texts
    return {
        code: {key: value for key, value in wording.items() if key != "innocuous_text"}
        for code, wording in texts.items()
    }


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
    # {"question": id, "in": [answers]}: shown only when that earlier, directly asked
    # question got one of these answers (never a randomized one: that would branch on
    # the true answer). Hidden questions are not shown, so they send nothing.
    show_if = models.JSONField(null=True, blank=True, default=None)
    # A choice question's options in a random order on each device; reports keep the
    # canonical option index, so the server never learns the order shown.
    shuffle_options = models.BooleanField(default=False)
    # The wording in the survey's further languages: {"de": {"text": …, "options": […],
    # "innocuous_text": …}}; reports are the same whatever language was shown.
    texts = models.JSONField(default=dict, blank=True)
    # A split ballot: the share of respondents whose device asks them this randomized
    # yes/no question directly, telling them so before they answer (0 < s < 1).
    direct_share = models.FloatField(null=True, blank=True, default=None)
    # The innocuous question of a design that asks one beside the sensitive one (the
    # unrelated question with unknown prevalence); blank for every other design.
    innocuous_text = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.text

    @property
    def design(self) -> Design:
        """The question's design object: everything else asks it, never its name."""
        design = make_design(
            self.kind, self.design_name, self.design_params, k=len(self.options or ()) or None
        )
        return with_direct_share(design, self.direct_share)

    @property
    def epsilon(self) -> float:
        return self.design.epsilon

    @property
    def is_frozen(self) -> bool:
        return self.survey.is_frozen

    @property
    def design_params_json(self) -> str:
        return json.dumps(self.design_params)

    def answer_label(self, value: int) -> str:
        """A direct answer in words: the option's text, or yes/no."""
        if self.kind == self.Kind.CHOICE:
            return self.options[value]
        return gettext("yes") if value == 1 else gettext("no")

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


class Invite(models.Model):
    """A one-time invite. Only a hash of the token and whether it was used are kept:
    no time, no order, no link to the submission it admitted.

    An invite is exchanged once for a credential (:mod:`survey.invites`); the
    submission carries the credential, and no transaction writes both. Its use is kept
    apart until the hour is sealed (:mod:`responses.credentials`).
    """

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="invites")
    token_hash = models.CharField(max_length=64, unique=True)
    used = models.BooleanField(default=False)
    # A hash of the blinded message it was exchanged for, so that a browser whose answer
    # was lost on the way may ask again with the same one. Blinding makes that value
    # independent of the credential it becomes (the blindness RFC 9474 proves).
    blinded_hash = models.CharField(max_length=64, blank=True, default="")

    def __str__(self) -> str:
        return "used invite" if self.used else "unused invite"

    @classmethod
    def create_batch(cls, survey: Survey, n: int) -> list[str]:
        CredentialKey.of(survey)  # made now, so every respondent sees the same key
        tokens = [new_invite_token() for _ in range(n)]
        cls.objects.bulk_create(cls(survey=survey, token_hash=hash_token(t)) for t in tokens)
        return tokens


class EmailedInvite(models.Model):
    """The address an invite was mailed to, kept so that a reminder can go to it while the
    invite is unused, and only as long as the invite, the survey's responses or the
    owner's wish (deleted with any of them).

    It names the invite, and an invite says only whether it was used: the researcher
    learns *that* someone took part, never which answers were theirs (the credential the
    invite was exchanged for is blind, :mod:`survey.invites`). The link's token is not
    kept: it is recomputed from ``link_key`` and the site's secret key, so that a copy of
    the database alone cannot answer in an invitee's place.
    """

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="emailed_invites")
    invite = models.OneToOneField(Invite, on_delete=models.CASCADE, related_name="emailed")
    address = models.EmailField()
    link_key = models.CharField(max_length=32, unique=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "address"], name="one_invite_per_address")
        ]

    def __str__(self) -> str:
        return f"invite mailed to {self.address}"

    @property
    def token(self) -> str:
        """The invite's token, as the mailed link carries it."""
        return invite_token_for(self.link_key)

    @classmethod
    def create_batch(cls, survey: Survey, addresses: list[str]) -> list[EmailedInvite]:
        """One new invite for each address (lower-case, not yet invited to this survey)."""
        CredentialKey.of(survey)
        keys = [secrets.token_hex(16) for _ in addresses]
        with transaction.atomic():
            # PostgreSQL and SQLite (3.35+) give bulk-created rows their ids.
            created = Invite.objects.bulk_create(
                Invite(survey=survey, token_hash=hash_token(invite_token_for(key))) for key in keys
            )
            return cls.objects.bulk_create(
                cls(survey=survey, invite=invite, address=address, link_key=key)
                for invite, address, key in zip(created, addresses, keys, strict=True)
            )

    @classmethod
    def sent_with(cls, survey: Survey, token: str) -> bool:
        """Whether the invite with this token went out by email (its page says so)."""
        return cls.objects.filter(survey=survey, invite__token_hash=hash_token(token)).exists()


def invite_token_for(link_key: str) -> str:
    """A mailed invite's token: 128 bits keyed by the site's secret key, in hex (never
    starting with "-", and unchanged by a mail program's line breaks)."""
    return salted_hmac("survey.EmailedInvite", link_key, algorithm="sha256").hexdigest()[:32]


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


class AuditEntry(models.Model):
    """Who did what with a survey's data or its design, to the hour: the owner's record
    of every export, analysis, sharing change, design or wording edit and threshold
    change. Auditing the queries asked is the defence against differencing attacks that
    the small-cell threshold alone cannot give."""

    class Action(models.TextChoices):
        EXPORT = "export"
        ANALYSIS = "analysis"
        SHARING = "sharing"
        DESIGN = "design"
        WORDING = "wording"
        THRESHOLD = "threshold"
        INVITES = "invites"  # mailed, reminded, addresses deleted

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="audit_entries")
    # Kept by name as well, so the entry still says who once the account is gone.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    username = models.CharField(max_length=150)
    action = models.CharField(max_length=10, choices=Action.choices)
    detail = models.CharField(max_length=300)
    hour = models.DateTimeField(default=current_hour)

    class Meta:
        ordering = ["-hour", "-id"]
        indexes = [models.Index(fields=["survey", "-hour"])]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} {self.username} {self.action}: {self.detail}"

    @classmethod
    def record(cls, survey: Survey, user, action: str, detail: str) -> AuditEntry:
        """Write one entry; ``user`` is the account that acted (None: a command)."""
        account = user if getattr(user, "is_authenticated", False) else None
        return cls.objects.create(
            survey=survey,
            user=account,
            username=account.get_username() if account else "(command)",
            action=action,
            detail=detail[:300],
        )
