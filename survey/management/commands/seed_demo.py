"""Create the demo researcher, a research survey with simulated answers and a classroom demo."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.urls import reverse

from responses.write import simulate_respondents
from survey.models import Survey, current_hour

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "deniable-demo"
DEMO_HOURS = 12

# Asked directly, so that the breakdown, cross-tab and model pages have a grouping.
FACULTY = ("Which faculty are you in?", ["Arts", "Law", "Science"], [0.4, 0.35, 0.25])
# The true "yes" rate of each sensitive question, per faculty: something to find.
TRUE_RATES = [[0.15, 0.25, 0.35], [0.3, 0.2, 0.25], [0.1, 0.1, 0.2]]

RESEARCH_QUESTIONS = [
    "Have you ever cheated on an exam?",
    "Have you used a recreational drug in the last 12 months?",
    "Have you ever driven after drinking more than the legal limit?",
]


class Command(BaseCommand):
    help = "Create a demo researcher and demo surveys (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--responses", type=int, default=400)
        parser.add_argument("--seed", type=int, default=2026)
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="where the app is served, so the printed links can be opened as they are",
        )

    @transaction.atomic
    def handle(self, *args, responses: int, seed: int, base_url: str, **options):
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USERNAME)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        if not Survey.objects.filter(owner=user).exists():
            self.create_surveys(user, responses, np.random.default_rng(seed))
        survey = Survey.objects.filter(owner=user, mode=Survey.Mode.RESEARCH).last()
        base_url = base_url.rstrip("/")
        self.stdout.write(
            self.style.SUCCESS(
                f"Sign in at {base_url}{reverse('login')} as '{DEMO_USERNAME}', "
                f"password '{DEMO_PASSWORD}'\n"
                f"Demo survey link: {base_url}{reverse('survey:respond', args=[survey.slug])}\n"
                f"Classroom: {base_url}{reverse('classroom:new')}"
            )
        )

    def create_surveys(self, user, responses: int, rng: np.random.Generator) -> None:
        research = Survey.objects.create(
            owner=user,
            title="Student life survey",
            description="Three sensitive questions, answered with two coins each, and the "
            "respondent's faculty, asked directly.",
            status=Survey.Status.OPEN,
        )
        for position, text in enumerate(RESEARCH_QUESTIONS):
            research.questions.create(
                position=position, text=text, design_params={"p_truth": 0.5, "p_yes": 0.5}
            )
        text, options, shares = FACULTY
        faculty = research.questions.create(
            position=len(RESEARCH_QUESTIONS),
            text=text,
            kind="choice",
            options=options,
            design_name="direct",
        )
        sensitive = list(research.questions.exclude(pk=faculty.pk))
        # Spread over the last hours, so the dashboard's estimate-over-time chart has a
        # story; each faculty with its own true rates, so the breakdowns and the model do.
        batches = np.array_split(np.arange(responses), DEMO_HOURS)
        for hours_ago, batch in zip(range(DEMO_HOURS - 1, -1, -1), batches, strict=True):
            hour = current_hour() - timedelta(hours=hours_ago)
            sizes = rng.multinomial(len(batch), shares)
            for index, size in enumerate(sizes):
                if not size:
                    continue
                truths = {faculty.id: [float(i == index) for i in range(len(options))]}
                truths |= {q.id: TRUE_RATES[k][index] for k, q in enumerate(sensitive)}
                simulate_respondents(research, int(size), truths, rng, hour=hour)
        classroom = Survey.objects.create(
            owner=user,
            title="Classroom demo",
            mode=Survey.Mode.CLASSROOM,
            status=Survey.Status.OPEN,
        )
        classroom.questions.create(
            text="Have you ever cheated on an exam?", design_params={"p_truth": 0.5, "p_yes": 0.5}
        )
