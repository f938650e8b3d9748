"""Add simulated respondents to a survey (same design code; marked simulated).

Their true answers follow a truth per question: ``--truth q2=0.2,0.3,0.5`` (one
probability per option), ``--truth q1=0.3`` (a yes/no rate), ``--truth q3=uniform``,
``--truth q3=mean:12,sd:4`` (numbers), or a JSON file ``{"q1": 0.3, "q2": [0.2, 0.3,
0.5], "q3": {"mean": 12, "sd": 4}}``; ``--true-rate`` covers the yes/no questions left.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from estimator.simulation import Truth, draw_true_values
from responses.management.commands.import_responses import find_survey
from responses.write import simulate_respondents
from survey.codebook import question_columns
from survey.models import Question, Survey

EXAMPLES = {
    Question.Kind.BINARY: "{column}=0.3 (the true rate of yes)",
    Question.Kind.CHOICE: "{column}={probabilities} (one probability per option: {options})",
    Question.Kind.NUMBER: "{column}=mean:{mid},sd:{sd} or {column}=uniform",
}


def parse_truth(text: str) -> Truth:
    """``uniform``, ``mean:12,sd:4``, ``0.3`` or ``0.2,0.3,0.5``, as :mod:`estimator.
    simulation` takes them; a CommandError saying what is wrong otherwise."""
    text = text.strip()
    if text == "uniform":
        return {"uniform": True}
    parts = [p.strip() for p in text.split(",")]
    try:
        if all(":" in p for p in parts):
            named = {k.strip(): float(v) for k, v in (p.split(":", 1) for p in parts)}
            if set(named) != {"mean", "sd"}:
                raise ValueError
            return named
        values = [float(p) for p in parts]
    except ValueError:
        raise CommandError(
            f"cannot read the truth {text!r}: give a rate (0.3), one probability per option "
            "(0.2,0.3,0.5), mean:M,sd:S or uniform"
        ) from None
    return values[0] if len(values) == 1 else values


def example(column: str, question: Question) -> str:
    k = len(question.options)
    probabilities = ",".join([f"{1 / k:.2g}"] * k) if k else ""
    design = question.design
    lower, upper = getattr(design, "lower", 0), getattr(design, "upper", 1)
    return EXAMPLES[question.kind].format(
        column=column,
        probabilities=probabilities,
        options=", ".join(question.options),
        mid=(lower + upper) // 2,
        sd=max(1, (upper - lower) // 4),
    )


class Command(BaseCommand):
    help = (
        "Add N simulated respondents whose true answers follow --truth per question "
        "(or --true-rate for every yes/no question), randomized with each question's "
        "design. Simulated answers count in the dashboard and are left out of exports."
    )

    def add_arguments(self, parser):
        parser.add_argument("survey", help="survey id, slug or join code")
        parser.add_argument("--n", type=int, required=True, help="number of respondents")
        parser.add_argument(
            "--true-rate", type=float, default=None, help="in [0, 1], for yes/no questions"
        )
        parser.add_argument(
            "--truth",
            action="append",
            default=[],
            metavar="qN=TRUTH",
            help="a question's truth: q1=0.3, q2=0.2,0.3,0.5, q3=mean:12,sd:4 or q3=uniform",
        )
        parser.add_argument(
            "--truth-file", type=Path, default=None, help='JSON: {"q1": 0.3, "q2": [...], …}'
        )
        parser.add_argument("--seed", type=int, default=None, help="for a reproducible run")

    def handle(self, *args, survey: str, n: int, seed: int | None, **options):
        if n < 1:
            raise CommandError("--n must be at least 1")
        rate = options["true_rate"]
        if rate is not None and not 0 <= rate <= 1:
            raise CommandError("--true-rate must be between 0 and 1")
        target = find_survey(survey)
        if not target.questions.exists():
            raise CommandError(f"survey {target.id} has no questions")
        truths = self.truths(target, options["truth"], options["truth_file"], rate)
        rng = np.random.default_rng(seed)
        try:
            added = simulate_respondents(target, n, truths, rng)
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(self.style.SUCCESS(f"Added {added} simulated respondents to “{target}”."))

    def truths(
        self, survey: Survey, given: list[str], file: Path | None, rate: float | None
    ) -> dict[int, Truth]:
        """``{question id: truth}`` for every question, each checked against its
        question before anything is stored."""
        columns = dict(question_columns(survey))
        named: dict[str, Truth] = {}
        if file is not None:
            try:
                loaded = json.loads(file.read_text())
            except (OSError, ValueError) as error:
                raise CommandError(f"cannot read {file}: {error}") from None
            if not isinstance(loaded, dict):
                raise CommandError(f'{file} must hold an object such as {{"q1": 0.3}}')
            named |= loaded
        for item in given:
            column, sep, text = item.partition("=")
            if not sep:
                raise CommandError(f"--truth {item!r}: write it as qN=TRUTH, e.g. q1=0.3")
            named[column.strip()] = parse_truth(text)
        if unknown := sorted(set(named) - set(columns)):
            raise CommandError(
                f"no question {', '.join(unknown)} in this survey; its columns are "
                f"{', '.join(columns)}"
            )
        truths = {}
        for column, question in columns.items():
            truth = named.get(column)
            if truth is None and question.kind == Question.Kind.BINARY:
                truth = rate
            if truth is None:
                raise CommandError(
                    f"{column} (“{question.text}”, {question.kind}) needs a truth: --truth "
                    f"{example(column, question)}"
                    + (" or --true-rate" if question.kind == Question.Kind.BINARY else "")
                )
            try:
                draw_true_values(question.design, truth, 1, np.random.default_rng(0))
            except ValueError as error:
                hint = example(column, question)
                raise CommandError(
                    f"{column} (“{question.text}”): {error}; e.g. --truth {hint}"
                ) from None
            truths[question.id] = truth
        return truths
