"""A survey with every kind of question and simulated answers, for the dashboard's tests.

``results_from_tallies`` hands the dashboard each question's result object built from the
tallies by its own design, as the analysis seam does: the dashboard is written against
the result objects (binary, choice, number) and these tests exercise it with them.
"""

from __future__ import annotations

import math

import numpy as np

from responses.write import bulk_record
from survey.models import Question, Survey

COLOURS = ["Red", "Green", "Blue", "Yellow"]
SLEEP = "How many hours did you sleep last night?"
FACULTY = "Which faculty are you in?"


def add_question(survey: Survey, kind: str, text: str, design: str, params=None, options=()):
    return survey.questions.create(
        position=survey.questions.count(),
        text=text,
        kind=kind,
        design_name=design,
        design_params=params or {},
        options=list(options),
    )


def answer(survey: Survey, true_values: dict[Question, np.ndarray], seed: int = 7, **kw) -> int:
    """Randomize each question's true values with its own design and store them as
    simulated respondents (one per position in the arrays)."""
    rng = np.random.default_rng(seed)
    columns = {q.id: q.design.simulate(values, rng) for q, values in true_values.items()}
    n = len(next(iter(columns.values())))
    rows = ({qid: int(col[i]) for qid, col in columns.items()} for i in range(n))
    return bulk_record(survey, rows, simulated=True, **kw)


def mixed_survey(owner, n: int = 600, seed: int = 7, hours: tuple = (None,)) -> Survey:
    """Yes/no, multiple choice (die), a number with Laplace noise, and a directly asked
    choice, with ``n`` simulated respondents in each of ``hours`` (default: now)."""
    survey = Survey.objects.create(owner=owner, title="Student life", status=Survey.Status.OPEN)
    cheated = add_question(survey, "binary", "Have you ever cheated in an exam?", "forced_response")
    colour = add_question(
        survey,
        "choice",
        "Which colour did you pick?",
        "forced_response",
        {"p_truth": 0.6, "p_forced": [0.25] * 4},
        COLOURS,
    )
    sleep = add_question(
        survey, "number", SLEEP, "laplace", {"epsilon": 2.0, "lower": 0, "upper": 12}
    )
    faculty = add_question(survey, "choice", FACULTY, "direct", {}, ["Arts", "Science", "Medicine"])
    rng = np.random.default_rng(seed)
    for i, hour in enumerate(hours):
        truth = {
            cheated: (rng.random(n) < 0.3).astype(int),
            colour: rng.choice(4, n, p=[0.45, 0.3, 0.2, 0.05]),
            sleep: np.clip(np.round(rng.normal(7, 1.5, n)), 0, 12).astype(int),
            faculty: rng.choice(3, n, p=[0.5, 0.3, 0.2]),
        }
        answer(survey, truth, seed=seed + i, hour=hour)
    return survey


def is_zero_width(interval) -> bool:
    return interval is not None and math.isclose(interval[0], interval[1])
