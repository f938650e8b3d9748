"""Live results and simulated students for multiple-choice and number questions.

A yes/no question keeps its bar (``views.LiveQuestion``); a choice question shows each
option's estimated share with its interval, a number question the mean with its
interval and how much noise each phone added. Everything is asked of the question's
design; the tallies hold one row per reported value, summed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext, gettext_noop

from estimator.estimates import ChoiceEstimate, NumberEstimate, NumberStats
from estimator.intervals import DEFAULT_LEVEL, DEFAULT_METHOD
from responses.write import bulk_record
from survey.models import Question, Survey

# The drawing area inside the SVG viewBox (0 0 1000 …), as for the yes/no bar.
LEFT, WIDTH = 40, 920
# The choice designs' one-line descriptions (estimator.designs, which stays free of
# Django), for the catalogue: students see them under the class result.
CHOICE_HOWS = (
    gettext_noop(
        "Keep the true option with a probability that grows with ε; otherwise give one of "
        "the other options at random."
    ),
    gettext_noop("Tell the truth, or by chance give the option the die shows."),
    gettext_noop("Not randomized: only for questions that are not sensitive."),
)
# What designs with arms estimate beside π (estimator.arms' ``quantity_labels``), for the
# catalogue: students see them under the class result.
ARMS_LABELS = (
    gettext_noop("Carriers' honesty t"),
    gettext_noop("Honest “no” β"),
    gettext_noop("Cheaters γ"),
    gettext_noop("Innocuous prevalence"),
)
ROW = 56


def x_of(share: float) -> float:
    """Where a share in [0, 1] sits on the bar."""
    return round(LEFT + WIDTH * min(max(share, 0.0), 1.0), 1)


@dataclass(frozen=True)
class ChoiceLive:
    """A multiple-choice question: each option's estimated share and interval."""

    question: Question
    estimate: ChoiceEstimate
    n_simulated: int
    skipped: int = 0  # "prefer not to answer": counted apart, not in the estimate
    kind = "choice"
    level = DEFAULT_LEVEL

    @property
    def how(self) -> str:
        """The design's own one-line description, lower-cased to sit inside a sentence,
        in the page's language (students read it too)."""
        help_text = gettext(self.question.design.help).rstrip(".")
        return help_text[:1].lower() + help_text[1:]

    def rows(self) -> list[dict]:
        """One row per option: its text, estimate, interval and where to draw them."""
        shares = self.estimate.estimate
        intervals = self.estimate.ci(self.level, DEFAULT_METHOD)
        rows = []
        for j, text in enumerate(self.question.options):
            share = None if shares is None else float(shares[j])
            low, high = intervals[j] if intervals and intervals[j] else (None, None)
            top = 24 + ROW * j
            rows.append(
                {
                    "text": text,
                    "count": self.estimate.counts[j],
                    "share": share,
                    "interval": None if low is None else (low, high),
                    "y": top + 22,
                    "label_y": top + 14,
                    "bar_y": top + 20,
                    "x": None if low is None else x_of(low),
                    "width": None if low is None else max(x_of(high) - x_of(low), 2),
                    "estimate_x": None if share is None else x_of(share),
                    # The share is the bold bar from 0; the interval a thin line across it.
                    "share_width": None if share is None else max(x_of(share) - LEFT, 2),
                    "ci_end": None if low is None else x_of(high),
                    "mid_y": top + 32,
                }
            )
        return rows

    @property
    def height(self) -> int:
        return 24 + ROW * len(self.question.options) + 40

    @property
    def axis_y(self) -> int:
        return self.height - 34

    def ticks(self) -> list[dict]:
        return [{"x": x_of(v / 100), "label": f"{v} %"} for v in (0, 25, 50, 75, 100)]


@dataclass(frozen=True)
class NumberLive:
    """A number question: the mean of the noisy reports with its interval."""

    question: Question
    estimate: NumberEstimate
    n_simulated: int
    skipped: int = 0  # "prefer not to answer": counted apart, not in the estimate
    kind = "number"
    level = DEFAULT_LEVEL

    @property
    def interval(self) -> tuple[float, float] | None:
        return self.estimate.ci(self.level)

    @property
    def typical_noise(self) -> float:
        return self.estimate.noise_variance**0.5

    def _x(self, value: float) -> float:
        low, high = self.question.design.lower, self.question.design.upper
        return x_of((value - low) / (high - low))

    @property
    def bar(self) -> dict | None:
        if not self.interval:
            return None
        low, high = self.interval
        return {
            "x": self._x(low),
            "width": max(self._x(high) - self._x(low), 2),
            "estimate_x": self._x(self.estimate.estimate),
        }

    def ticks(self) -> list[dict]:
        low, high = self.question.design.lower, self.question.design.upper
        values = np.linspace(low, high, 5)
        return [{"x": self._x(v), "label": f"{v:g}"} for v in values]


def choice_live(
    question: Question, counts: Mapping[int, int], simulated: int, skipped: int = 0
) -> ChoiceLive:
    vector = [counts.get(j, 0) for j in range(len(question.options))]
    return ChoiceLive(question, question.design.estimate(vector), simulated, skipped)


def number_live(
    question: Question, stats: NumberStats, simulated: int, skipped: int = 0
) -> NumberLive:
    """The mean from the tallies' count, sum and sum of squares."""
    return NumberLive(question, question.design.estimate(stats), simulated, skipped)


def simulate_reports(survey: Survey, true_values: np.ndarray, rng: np.random.Generator) -> int:
    """Randomize the given true values with the survey's one question's design and store
    them as simulated students."""
    question = survey.questions.get()
    reports = question.design.simulate(true_values, rng)
    return bulk_record(survey, ({question.id: int(r)} for r in reports), simulated=True)


def simulate_choice(survey: Survey, n: int, shares: list[float], rng=None) -> int:
    """``n`` students whose true options follow ``shares`` (summing to 1)."""
    rng = rng or np.random.default_rng()
    return simulate_reports(survey, rng.choice(len(shares), size=n, p=shares), rng)


def simulate_number(survey: Survey, n: int, mean: float, sd: float, rng=None) -> int:
    """``n`` students whose true numbers are normal(mean, sd), rounded to whole numbers
    (the design clips them to its bounds, as a phone does)."""
    rng = rng or np.random.default_rng()
    return simulate_reports(survey, np.rint(rng.normal(mean, sd, size=n)).astype(int), rng)
