"""A lesson's live state: which activity, which step, whether answering is locked, what
the projector reveals, and what students sent (guesses, noisy queries, votes)."""

from __future__ import annotations

import math
import secrets

from django.conf import settings
from django.db import models, transaction
from django.db.models import Count, Max
from django.urls import reverse
from django.utils.translation import gettext_lazy, gettext_noop

from estimator import lessons as maths
from estimator.designs import make_design
from survey.models import Question, Survey, new_join_code

EPSILON_CHOICES = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
DELTA_CHOICES = (0.1, 0.01, 1e-3, 1e-5, 1e-7, 1e-10)
DEFAULT_QUESTION = "Have you ever cheated on an exam?"
DEFAULT_VOTE_OPTIONS = [
    gettext_noop("Cryptography"),
    gettext_noop("Fairness in ML"),
    gettext_noop("Data protection law"),
    gettext_noop("Synthetic data"),
]


def new_lesson_join_code() -> str:
    """A join code no survey, lesson or session already uses (/j/CODE leads to any)."""
    while True:
        code = new_join_code()
        if not (
            Survey.objects.filter(join_code=code).exists()
            or Lesson.objects.filter(join_code=code).exists()
            or Session.objects.filter(join_code=code).exists()
        ):
            return code


def new_seed() -> int:
    return secrets.randbelow(10_000)


def new_token() -> str:
    return secrets.token_urlsafe(18)


class SimulatedRate(models.Model):
    """The true rate an instructor simulated students with, kept with the session so the
    projector marks it on the bar after any reload or control (not only in the URL)."""

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, primary_key=True)
    true_rate = models.FloatField()

    def __str__(self) -> str:
        return f"{self.true_rate:.0%} simulated in {self.survey_id}"

    @staticmethod
    def of(survey: Survey) -> float | None:
        """The kept rate (no query when the survey was loaded with select_related)."""
        kept = getattr(survey, "simulatedrate", None)
        return kept.true_rate if kept else None

    @classmethod
    def keep(cls, survey: Survey, rate: float) -> None:
        cls.objects.update_or_create(survey=survey, defaults={"true_rate": rate})


class LessonQuerySet(models.QuerySet):
    def owned_by(self, user) -> LessonQuerySet:
        return self.filter(owner=user) if user.is_authenticated else self.none()


class Lesson(models.Model):
    class Kind(models.TextChoices):
        DIFFERENCING = "differencing", gettext_lazy("Differencing attack")
        LAPLACE = "laplace", gettext_lazy("The Laplace mechanism")
        LINKAGE = "linkage", gettext_lazy("k-anonymity and linkage")
        EXPONENTIAL = "exponential", gettext_lazy("The exponential mechanism")
        LOCAL = "local", gettext_lazy("Local vs central noise")
        GAUSSIAN = "gaussian", gettext_lazy("(ε, δ) and the Gaussian mechanism")
        HOLDOUT = "holdout", gettext_lazy("The reusable holdout")
        DISCLOSURE = "disclosure", gettext_lazy("Statistical disclosure control")
        ATTACK = "attack", gettext_lazy("Attack your own class")

    # The steps the instructor walks through, per activity (the projector's headline; the
    # students' phones show it in their language).
    STEPS = {
        Kind.DIFFERENCING: [
            gettext_lazy("Two innocent counts"),
            gettext_lazy("The same counts with Laplace noise"),
        ],
        Kind.LAPLACE: [
            gettext_lazy("Ask a noisy count"),
            gettext_lazy("Noise against ε"),
            gettext_lazy("Budget and post-processing"),
        ],
        Kind.LINKAGE: [
            gettext_lazy("Link the table to the public list"),
            gettext_lazy("Generalize until k-anonymous"),
            gettext_lazy("Two k-anonymous releases"),
        ],
        Kind.EXPONENTIAL: [gettext_lazy("Vote"), gettext_lazy("Pick the winner privately")],
        Kind.LOCAL: [
            gettext_lazy("Noise on every phone"),
            gettext_lazy("Error against class size"),
        ],
        Kind.GAUSSIAN: [
            gettext_lazy("Laplace beside Gaussian"),
            gettext_lazy("What δ permits"),
        ],
        Kind.HOLDOUT: [
            gettext_lazy("Reuse the holdout"),
            gettext_lazy("Reuse it through Thresholdout"),
        ],
        Kind.DISCLOSURE: [
            gettext_lazy("Three kinds of disclosure"),
            gettext_lazy("Round, collapse, suppress"),
            gettext_lazy("A sparse-data linkage"),
        ],
        Kind.ATTACK: [
            gettext_lazy("Answer with coins"),
            gettext_lazy("A differencing attack"),
            gettext_lazy("Averaging repeated answers"),
        ],
    }
    # The lessons without an ε to show or set (k-anonymity; Thresholdout's noise is fixed).
    WITHOUT_EPSILON = (Kind.LINKAGE, Kind.HOLDOUT, Kind.DISCLOSURE, Kind.ATTACK)

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    seed = models.PositiveIntegerField(default=new_seed)
    epsilon = models.FloatField(default=1.0)
    step = models.PositiveSmallIntegerField(default=0)
    round = models.PositiveIntegerField(default=1)
    is_locked = models.BooleanField(default=False)
    revealed = models.BooleanField(default=False)
    budget = models.FloatField(default=5.0)
    # (ε, δ): the chance the Gaussian mechanism's guarantee is allowed to fail.
    delta = models.FloatField(default=1e-5)
    # k-anonymity: the generalization the instructor chose (postcode digits, year bins, sex).
    postcode_digits = models.PositiveSmallIntegerField(default=4)
    year_width = models.PositiveSmallIntegerField(default=1)
    keep_sex = models.BooleanField(default=True)
    suppress_below = models.PositiveSmallIntegerField(default=1)
    # Statistical disclosure control: the ONS practices applied so far (round, collapse,
    # suppress).
    practices = models.JSONField(default=list, blank=True)
    # Attack your own class: the yes/no question the phones answer with coins (through
    # the classroom's own respondent page, so the server only ever gets reports).
    survey = models.OneToOneField(
        Survey, null=True, blank=True, on_delete=models.SET_NULL, related_name="lesson"
    )
    options = models.JSONField(default=list, blank=True)
    last_pick = models.CharField(max_length=100, blank=True)
    join_code = models.CharField(max_length=6, unique=True, default=new_lesson_join_code)
    slug = models.CharField(max_length=32, unique=True, default=new_token)
    remote_token = models.CharField(max_length=32, unique=True, default=new_token)
    created = models.DateTimeField(auto_now_add=True)

    objects = LessonQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.join_code})"

    def save(self, *args, **kwargs) -> None:
        """An attack lesson brings its own classroom question, asked with coins."""
        if self.kind == self.Kind.ATTACK and self.survey_id is None:
            self.survey = new_classroom_survey(self.owner, DEFAULT_QUESTION)
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = [*kwargs["update_fields"], "survey"]
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("classroom:lesson_student", args=[self.slug])

    @property
    def steps(self) -> list[str]:
        return self.STEPS[self.kind]

    @property
    def step_title(self) -> str:
        return self.steps[self.step]

    @property
    def uses_epsilon(self) -> bool:
        """Whether this step adds noise: exact counts and k-anonymity have no ε to show."""
        if not self.tunes_epsilon:
            return False
        return not (self.kind == self.Kind.DIFFERENCING and self.step == 0)

    @property
    def tunes_epsilon(self) -> bool:
        """Whether the remote offers an ε slider for this lesson."""
        return self.kind not in self.WITHOUT_EPSILON

    @property
    def accepting(self) -> bool:
        return not self.is_locked

    def state(self) -> tuple:
        """Everything a student's page depends on (its ETag)."""
        return (
            self.pk,
            self.step,
            self.round,
            self.is_locked,
            self.revealed,
            self.epsilon,
            self.delta,
            self.seed,
            self.generalization,
            tuple(self.practices),
            tuple(self.options),
            self.last_pick,
            # The Laplace lesson's phones show the class budget.
            self.spent() if self.kind == self.Kind.LAPLACE else None,
        )

    def activity(self) -> tuple:
        """What the projector additionally depends on: the students' actions so far."""
        agg = self.actions.aggregate(n=Count("id"), last=Max("id"))
        return (*self.state(), agg["n"], agg["last"])

    @property
    def generalization(self) -> maths.Generalization:
        return maths.Generalization(
            postcode_digits=self.postcode_digits,
            year_width=self.year_width,
            keep_sex=self.keep_sex,
            suppress_below=self.suppress_below,
        )

    def current_actions(self) -> models.QuerySet:
        return self.actions.filter(round=self.round, step=self.step)

    def spent(self) -> float:
        """The class's privacy budget spent this round: the sum of the queries' ε."""
        spent = self.actions.filter(round=self.round, kind=Action.Kind.QUERY).aggregate(
            total=models.Sum("epsilon")
        )["total"]
        return spent or 0.0

    def go(self, **fields) -> None:
        for name, value in fields.items():
            setattr(self, name, value)
        self.save(update_fields=list(fields))
        if self.survey_id and "is_locked" in fields:
            # The phones answering the lesson's question follow its lock.
            self.survey.lock(self.is_locked)

    def move(self, delta: int) -> None:
        """Next or previous step: answering reopens, the new step's results start hidden."""
        step = min(max(self.step + delta, 0), len(self.steps) - 1)
        self.go(step=step, revealed=False, is_locked=False)

    def new_round(self) -> None:
        """Start over: a fresh set of answers (the old ones stay with their round)."""
        self.go(round=self.round + 1, step=0, revealed=False, is_locked=False, last_pick="")
        if self.survey:
            self.survey.new_round()


class Action(models.Model):
    """One thing a student (or the instructor's private pick) did in a lesson."""

    class Kind(models.TextChoices):
        GUESS = "guess"
        QUERY = "query"
        VOTE = "vote"
        PICK = "pick"

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="actions")
    round = models.PositiveIntegerField()
    step = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    choice = models.CharField(max_length=100, blank=True)
    value = models.FloatField(null=True)
    epsilon = models.FloatField(null=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} in {self.lesson_id} (round {self.round}, step {self.step})"


# The designs a classroom question is asked with, per kind (the registry's defaults
# otherwise): two coins (ε = ln 3); k-ary randomized response with ε = ln 3; Laplace ε = 1.
CLASSROOM_DESIGNS = {
    Question.Kind.BINARY: ("forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
    Question.Kind.CHOICE: ("k_rr", {"epsilon": math.log(3)}),
    Question.Kind.NUMBER: ("laplace", {"epsilon": 1.0}),
}


def classroom_design(kind: str, options: list[str], bounds: tuple[int, int] | None) -> tuple:
    """``(design_name, design_params)`` for a new classroom question; raises ValueError
    (the registry's own message) when the options or bounds do not make a design."""
    name, params = CLASSROOM_DESIGNS[kind]
    params = dict(params)
    if kind == Question.Kind.NUMBER:
        if bounds is None:
            raise ValueError("a number question needs its lower and upper bounds")
        params |= {"lower": bounds[0], "upper": bounds[1]}
    make_design(kind, name, params, k=len(options) if kind == Question.Kind.CHOICE else None)
    return name, params


def new_classroom_survey(
    owner,
    text: str,
    kind: str = Question.Kind.BINARY,
    options: list[str] | None = None,
    bounds: tuple[int, int] | None = None,
) -> Survey:
    """A one-question classroom survey, open, with the classroom's design for its kind
    (validated by the design registry)."""
    options = list(options or []) if kind == Question.Kind.CHOICE else []
    design_name, design_params = classroom_design(kind, options, bounds)
    with transaction.atomic():
        survey = Survey.objects.create(
            owner=owner, title=text, mode=Survey.Mode.CLASSROOM, status=Survey.Status.OPEN
        )
        survey.questions.create(
            text=text,
            kind=kind,
            options=options,
            design_name=design_name,
            design_params=design_params,
        )
    return survey


class SessionQuerySet(models.QuerySet):
    def owned_by(self, user) -> SessionQuerySet:
        return self.filter(owner=user) if user.is_authenticated else self.none()


class Session(models.Model):
    """A lecture's sequence of classroom questions under one join code. Each question is
    its own one-question classroom survey (its own rounds, reveal and lock, and the
    public submit API unchanged); the session only says which one is current, and every
    student's phone follows it there."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    title = models.CharField(max_length=200)
    position = models.PositiveSmallIntegerField(default=0)
    join_code = models.CharField(max_length=6, unique=True, default=new_lesson_join_code)
    created = models.DateTimeField(auto_now_add=True)

    objects = SessionQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.title} ({self.join_code})"

    def get_absolute_url(self) -> str:
        """Joining leads to the question the class is on now."""
        return self.current.get_absolute_url()

    def surveys(self) -> list[Survey]:
        return [step.survey for step in self.steps.select_related("survey")]

    @property
    def current(self) -> Survey:
        return self.steps.select_related("survey").get(position=self.position).survey

    def move(self, delta: int) -> Survey:
        """Previous or next question (stays at either end); returns the new current one."""
        last = self.steps.count() - 1
        self.position = min(max(self.position + delta, 0), last)
        self.save(update_fields=["position"])
        return self.current

    def add_question(
        self,
        text: str,
        kind: str = Question.Kind.BINARY,
        options: list[str] | None = None,
        bounds: tuple[int, int] | None = None,
    ) -> Survey:
        """Append a one-question classroom survey (validated by the design registry)."""
        with transaction.atomic():
            survey = new_classroom_survey(self.owner, text, kind, options, bounds)
            SessionStep.objects.create(session=self, survey=survey, position=self.steps.count())
        return survey

    @staticmethod
    def of(survey: Survey) -> Session | None:
        """The survey's session (no query when loaded with ``session_step__session``)."""
        step = getattr(survey, "session_step", None)
        return step.session if step else None

    @property
    def current_id(self) -> int:
        """The current question's survey id, in one small query."""
        return self.steps.values_list("survey_id", flat=True).get(position=self.position)


class SessionStep(models.Model):
    """One question of a session, at its place in the sequence."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="steps")
    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="session_step")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "position"], name="one_question_per_place")
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.position}: {self.survey_id}"
