"""The one seam between the database and the maths: tallies in, estimates out.

Estimation reads the few tally rows of a survey (one aggregate query); it never loads
individual answers, so its cost does not grow with the number of respondents.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from django.db.models import Sum

from estimator.randomized_response import (
    CI_METHODS,
    DEFAULT_LEVEL,
    DEFAULT_METHOD,
    BinaryEstimate,
    check_level,
    check_method,
    total_epsilon,
)
from survey.models import Question, Survey, Tally


@dataclass(frozen=True)
class QuestionResult:
    """One question's estimate. ``n_simulated`` of its ``estimate.n`` reports are simulated:
    they count in the estimate (the demo and classroom rely on that) but the exports leave
    them out, so it is shown wherever n is, to explain the difference."""

    question: Question
    estimate: BinaryEstimate
    level: float
    method: str
    n_simulated: int

    @property
    def interval(self) -> tuple[float, float] | None:
        return self.estimate.ci(self.level, self.method)

    def as_dict(self) -> dict:
        est, interval = self.estimate, self.interval
        return {
            "question": self.question.id,
            "text": self.question.text,
            "n": est.n,
            "n_simulated": self.n_simulated,
            "yes_count": est.yes_count,
            "raw_yes_rate": est.raw_yes_rate,
            "estimate": est.estimate,
            "estimate_unbiased": est.estimate_unbiased,
            "std_error": est.std_error,
            "ci_low": interval[0] if interval else None,
            "ci_high": interval[1] if interval else None,
            "level": self.level,
            "method": self.method,
            "epsilon": json_epsilon(est.design.epsilon),
        }


@dataclass(frozen=True)
class SurveyResults:
    survey: Survey
    questions: list[QuestionResult]
    level: float
    method: str

    @property
    def n_responses(self) -> int:
        return max((r.estimate.n for r in self.questions), default=0)

    @property
    def n_simulated(self) -> int:
        """Simulated respondents answer every question, so this is how many there are."""
        return max((r.n_simulated for r in self.questions), default=0)

    @property
    def epsilon_total(self) -> float:
        return total_epsilon([r.estimate.design for r in self.questions])

    def as_dict(self) -> dict:
        return {
            "survey": self.survey.id,
            "n_responses": self.n_responses,
            "n_simulated": self.n_simulated,
            "epsilon_total": json_epsilon(self.epsilon_total),
            "level": self.level,
            "method": self.method,
            "questions": [r.as_dict() for r in self.questions],
        }


def parse_estimate_options(params: Mapping[str, str]) -> tuple[float, str, list[str]]:
    """Level and method from a query string, with readable errors.

    Shared by the dashboard (which shows the errors and falls back to the defaults) and
    the API (which answers 400 with them).
    """
    errors = []
    method = params.get("method", DEFAULT_METHOD)
    if method not in CI_METHODS:
        errors.append(f"method must be one of {', '.join(CI_METHODS)}; got {method!r}")
        method = DEFAULT_METHOD
    raw_level = params.get("level", str(DEFAULT_LEVEL))
    try:
        level = check_level(float(raw_level))
    except ValueError:
        errors.append(
            f"level must be a number strictly between 0 and 1, such as 0.95; got {raw_level!r}"
        )
        level = DEFAULT_LEVEL
    return level, method, errors


def json_epsilon(epsilon: float) -> float | None:
    """JSON has no infinity: ε = ∞ ("no privacy") is sent as null."""
    return epsilon if epsilon != float("inf") else None


def survey_results(
    survey: Survey,
    level: float = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    *,
    round: int | None = None,
) -> SurveyResults:
    """Estimates for every question of ``survey`` (the current round unless given)."""
    level, method = check_level(level), check_method(method)
    questions = list(survey.questions.all())
    counts, simulated = round_counts(survey, round or survey.current_round)
    results = []
    for question in questions:
        by_value = counts.get(question.id, {})
        n = sum(by_value.values())
        estimate = question.design.estimate(by_value.get(1, 0), n)
        results.append(
            QuestionResult(question, estimate, level, method, simulated.get(question.id, 0))
        )
    return SurveyResults(survey, results, level, method)


def round_counts(survey: Survey, round: int) -> tuple[dict[int, Counter[int]], Counter[int]]:
    """``({question_id: {value: reports}}, {question_id: simulated reports})`` for one
    round, real and simulated together, from one aggregate query grouped by question,
    simulated and value: the simulated share comes with the counts at no extra cost."""
    counts: dict[int, Counter[int]] = defaultdict(Counter)
    simulated: Counter[int] = Counter()
    rows = (
        Tally.objects.filter(question__survey=survey, round=round)
        .values_list("question_id", "simulated", "value")
        .annotate(total=Sum("count"))
        .order_by()
    )
    for question_id, is_simulated, value, total in rows:
        counts[question_id][value] += total
        if is_simulated:
            simulated[question_id] += total
    return counts, simulated
