"""Add simulated respondents to a survey (same design code; marked simulated)."""

from __future__ import annotations

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from responses.management.commands.import_responses import find_survey
from responses.write import simulate_respondents


class Command(BaseCommand):
    help = (
        "Add N simulated respondents whose true answers are yes with probability "
        "--true-rate, randomized with each question's design. Simulated answers count in "
        "the dashboard and are left out of exports."
    )

    def add_arguments(self, parser):
        parser.add_argument("survey", help="survey id, slug or join code")
        parser.add_argument("--n", type=int, required=True, help="number of respondents")
        parser.add_argument("--true-rate", type=float, required=True, help="in [0, 1]")
        parser.add_argument("--seed", type=int, default=None, help="for a reproducible run")

    def handle(self, *args, survey: str, n: int, true_rate: float, seed: int | None, **options):
        if n < 1:
            raise CommandError("--n must be at least 1")
        if not 0 <= true_rate <= 1:
            raise CommandError("--true-rate must be between 0 and 1")
        target = find_survey(survey)
        if not target.questions.exists():
            raise CommandError(f"survey {target.id} has no questions")
        added = simulate_respondents(target, n, true_rate, np.random.default_rng(seed))
        self.stdout.write(self.style.SUCCESS(f"Added {added} simulated respondents to “{target}”."))
