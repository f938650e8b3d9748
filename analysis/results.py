"""Counts in, estimates out: every question's estimate, from its own design.

Estimation reads a survey's counts (:mod:`responses.counts`: per question and tally key
the count of reports, their sum and their sum of squares). It never loads individual
answers, so its cost does not grow with the number of respondents, and each question's
estimate comes from its own design (``design.estimate_from_tally``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from estimator.arms import ArmsEstimate
from estimator.compare import Comparison, Difference, MeanComparison
from estimator.designs import composition, json_epsilon
from estimator.estimates import (
    MEAN_METHODS,
    BinaryEstimate,
    ChoiceEstimate,
    NumberEstimate,
)
from estimator.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_METHOD,
    INTERVAL_METHODS,
    METHOD_ALIASES,
    check_level,
    check_method,
)
from estimator.split import EqualityTest, SplitChoiceEstimate, SplitEstimate, SplitMeans
from responses.counts import QuestionTally, SurveyCounts, survey_counts
from survey.models import Question, Survey

# Every name the estimates accept for an interval method (``jeffreys`` is the old name
# of ``uniform_hpd``, still accepted and echoed as asked).
METHOD_NAMES = (*INTERVAL_METHODS, *METHOD_ALIASES)
Estimate = BinaryEstimate | ChoiceEstimate | NumberEstimate | ArmsEstimate
# Intervals of designs with arms come from the profile likelihood, whatever the method.
ARMS_METHOD = "profile"


@dataclass(frozen=True)
class QuestionResult:
    """One question's estimate. ``n_simulated`` of its ``estimate.n`` reports are simulated:
    they count in the estimate (the demo and classroom rely on that) but the exports leave
    them out, so it is shown wherever n is, to explain the difference."""

    question: Question
    estimate: Estimate
    level: float
    method: str
    n_simulated: int
    tally: QuestionTally = field(default_factory=QuestionTally)

    @property
    def kind(self) -> str:
        return self.question.kind

    @property
    def direct(self) -> bool:
        return not self.estimate.design.randomized

    @property
    def n_answered(self) -> int:
        """Everyone who answered: a split ballot's estimate counts its randomized ballot
        only, so its direct ballot is added here."""
        est = self.estimate
        split = isinstance(est, SplitEstimate | SplitChoiceEstimate | SplitMeans)
        return est.n + (est.direct_n if split else 0)

    @property
    def interval_method(self) -> str:
        """The method the interval was computed with: a mean has its own (``t``), a
        design with arms the profile likelihood."""
        if isinstance(self.estimate, ArmsEstimate):
            return ARMS_METHOD
        return MEAN_METHODS[0] if isinstance(self.estimate, NumberEstimate) else self.method

    @property
    def interval(self) -> Any:
        """``(low, high)`` (per option for a choice question), or None without data."""
        if isinstance(self.estimate, ArmsEstimate):
            return self.estimate.ci(self.estimate.design.parameter_names[0], self.level)
        return self.estimate.ci(self.level, self.interval_method)

    @property
    def warning(self) -> str | None:
        """The design's word on the data, e.g. that they contradict it, or None."""
        if isinstance(self.estimate, ArmsEstimate):
            return self.estimate.message
        if isinstance(self.estimate, ChoiceEstimate):
            warnings = [o.warning(self.level, self.method) for o in self.estimate.options]
            return next((w for w in warnings if w), None)
        return self.estimate.warning(self.level, self.interval_method)

    @property
    def options(self) -> list[dict]:
        """A choice question's per-option entries (SPEC §3.1); empty for other kinds."""
        est = self.estimate
        if not isinstance(est, ChoiceEstimate):
            return []
        texts = list(self.question.options)
        intervals = self.interval or [(None, None)] * len(texts)
        rates = est.report_rates
        ballots = self._option_ballots(est, texts)
        return [
            ballots[j]
            | {
                "index": j,
                "text": texts[j],
                "count": est.counts[j],
                "raw_rate": None if rates is None else float(rates[j]),
                "estimate": _float(est.estimate, j),
                "estimate_unbiased": _float(est.estimate_unbiased, j),
                "std_error": _float(est.std_errors, j),
                "ci_low": intervals[j][0],
                "ci_high": intervals[j][1],
            }
            for j in range(len(texts))
        ]

    def _option_ballots(self, est: ChoiceEstimate, texts: list[str]) -> list[dict]:
        """A choice split ballot's direct ballot and difference per option (each option's
        difference on its own design line, as its interval); empty dicts otherwise."""
        if not isinstance(est, SplitChoiceEstimate):
            return [{} for _ in texts]
        direct = est.direct
        shares = direct.estimate if direct.n else [None] * len(texts)
        errors = direct.std_errors if direct.n else [None] * len(texts)
        intervals = direct.ci(self.level, self.method) if direct.n else [(None, None)] * len(texts)
        comparisons = est.comparisons(self.level) or [None] * len(texts)
        return [
            {
                "direct": _ballot(_float(shares, j), _float(errors, j), intervals[j]),
                "difference": _difference(comparison),
                "words": difference_words(comparison, f"“{text}”"),
            }
            for j, (text, comparison) in enumerate(zip(texts, comparisons, strict=True))
        ]

    @property
    def choice_split(self) -> dict | None:
        """A choice question's split ballot: reports per ballot, the share asked directly
        and one test of "same distribution on both ballots" (per-option figures are in
        :attr:`options`); None for other questions."""
        est = self.estimate
        if not isinstance(est, SplitChoiceEstimate):
            return None
        test = est.equality_test()
        return {
            "arms": [
                {"index": 0, "n": est.n, "counts": list(est.counts)},
                {"index": 1, "n": est.direct_n, "counts": list(est.direct_counts)},
            ],
            "direct_share": self.question.direct_share,
            "equality_test": None if test is None else asdict(test),
            "words": equality_words(test),
        }

    @property
    def histogram(self) -> list[dict]:
        """A number question's reports per bin, from the tallies; empty for other kinds."""
        design = self.estimate.design
        return (
            design.histogram(self.tally.counts) if isinstance(self.estimate, NumberEstimate) else []
        )

    def as_dict(self) -> dict:
        entry = {
            "question": self.question.id,
            "text": self.question.text,
            "n": self.estimate.n,
            "n_simulated": self.n_simulated,
            "skipped": self.tally.skipped,
        }
        est = self.estimate
        if isinstance(est, ArmsEstimate):
            entry |= self._arms(est)
        elif isinstance(est, BinaryEstimate):
            entry |= self._binary(est) | (self.split or {})
        elif isinstance(est, ChoiceEstimate):
            entry |= {"kind": self.kind, "options": self.options, "warning": self.warning}
            entry |= self.choice_split or {}
        else:
            entry |= self._number(est) | (self.number_split or {})
        entry |= {
            "level": self.level,
            "method": self.interval_method,
            "epsilon": json_epsilon(est.design.epsilon),
            "population": est.population if hasattr(est, "population") else None,
        }
        return entry | ({"direct": True} if self.direct else {})

    def _binary(self, est: BinaryEstimate) -> dict:
        low, high = self.interval or (None, None)
        return {
            "yes_count": est.yes_count,
            "raw_yes_rate": est.raw_yes_rate,
            "estimate": est.estimate,
            "estimate_unbiased": est.estimate_unbiased,
            "std_error": est.std_error,
            "ci_low": low,
            "ci_high": high,
        }

    @property
    def split(self) -> dict | None:
        """A split ballot: reports per ballot (arm 0 randomized, 1 direct), the direct
        ballot's proportion and the difference randomized − direct, each with SE and
        interval (Wald); None for other designs."""
        est = self.estimate
        if not isinstance(est, SplitEstimate):
            return None
        direct, comparison = est.direct, est.comparison(self.level)
        interval = direct.ci(self.level, self.interval_method) if direct.has_data else None
        return {
            "arms": [
                {"index": 0, "n": est.n, "yes_count": est.yes_count},
                {"index": 1, "n": est.direct_n, "yes_count": est.direct_yes},
            ],
            "direct_share": self.question.direct_share,
            "direct": _ballot(
                direct.estimate, direct.std_error if direct.has_data else None, interval
            ),
            "difference": _difference(comparison),
            "words": difference_words(comparison),
        }

    @property
    def number_split(self) -> dict | None:
        """A number question's split ballot: answers per ballot, the direct ballot's
        mean and the difference of means randomized − direct (Welch), each with SE and
        interval; None for other questions."""
        est = self.estimate
        if not isinstance(est, SplitMeans):
            return None
        direct, comparison = est.direct, est.comparison(self.level)
        return {
            "arms": [{"index": 0, "n": est.n}, {"index": 1, "n": est.direct_n}],
            "direct_share": self.question.direct_share,
            "direct": _ballot(direct.estimate, direct.std_error, direct.ci(self.level)),
            "difference": _difference(comparison),
            "words": mean_difference_words(comparison),
        }

    @property
    def quantities(self) -> list[dict]:
        """A design with arms: every quantity beside the prevalence (carriers' honesty,
        honest "no", cheaters…) with its key, label, SE and interval; empty otherwise."""
        est = self.estimate
        return arms_quantities(est, self.level) if isinstance(est, ArmsEstimate) else []

    @property
    def findings(self) -> list[str]:
        """What a design with arms detected, in words (e.g. cheaters significantly above 0)."""
        est = self.estimate
        return est.findings(self.level) if isinstance(est, ArmsEstimate) else []

    @property
    def arms(self) -> dict | None:
        """A design with arms: its entry (prevalence, reports per arm, the other
        quantities, findings) as the estimates API gives it; None for other designs."""
        return self._arms(self.estimate) if isinstance(self.estimate, ArmsEstimate) else None

    def _arms(self, est: ArmsEstimate) -> dict:
        return arms_entry(est, self.level)

    def _number(self, est: NumberEstimate) -> dict:
        low, high = self.interval or (None, None)
        return {
            "kind": self.kind,
            "mean": est.estimate,
            "mean_unbiased": est.estimate_unbiased,
            "std_error": est.std_error,
            "ci_low": low,
            "ci_high": high,
            "lower": est.design.lower,
            "upper": est.design.upper,
            "noise_variance": est.noise_variance,
            "typical_noise": est.noise_variance**0.5,
            "warning": self.warning,
            "histogram": self.histogram,
        }


def arms_quantities(est: ArmsEstimate, level: float) -> list[dict]:
    """Every quantity of a design with arms beside the prevalence, with its key, label,
    SE and interval (None throughout without data)."""
    design = est.design
    out = []
    for name, key in design.quantity_keys.items():
        entry = {"key": key, "label": design.quantity_labels[name]}
        if est.has_data:
            se = est.std_error(name)
            low, high = est.ci(name, level)
            entry |= {
                "estimate": est[name],
                "std_error": se if math.isfinite(se) else None,
                "ci_low": low,
                "ci_high": high,
                "interval": (low, high),
            }
        else:
            entry |= dict.fromkeys(("estimate", "std_error", "ci_low", "ci_high", "interval"))
        out.append(entry)
    return out


def arms_entry(est: ArmsEstimate, level: float) -> dict:
    """A design with arms' estimate as the API gives it (the estimates endpoint and each
    cell of a breakdown): π with its profile interval, the reports per arm, each other
    quantity under its key, the findings in words."""
    low, high = est.ci(est.design.parameter_names[0], level) or (None, None)
    se = est.std_error(est.design.parameter_names[0]) if est.has_data else None
    moments = est.design.moment_solution(est.yes / est.per_arm) if est.has_data else None
    return {
        "n": est.n,
        "yes_count": int(est.yes.sum()),
        "raw_yes_rate": est.raw_yes_rate,
        "estimate": est.estimate,
        # The moment solution: unbiased to first order, and may leave [0, 1].
        "estimate_unbiased": None if moments is None else float(moments[0]),
        "std_error": se if se is None or math.isfinite(se) else None,
        "ci_low": low,
        "ci_high": high,
        "arms": [
            {"index": j, "n": int(n), "yes_count": int(y)}
            for j, (n, y) in enumerate(zip(est.per_arm, est.yes, strict=True))
        ],
        **{
            q["key"]: {k: q[k] for k in ("estimate", "std_error", "ci_low", "ci_high")}
            for q in arms_quantities(est, level)
        },
        "findings": est.findings(level),
        "warning": est.message,
    }


def _ballot(estimate: float | None, std_error: float | None, interval: Any) -> dict:
    low, high = interval or (None, None)
    return {"estimate": estimate, "std_error": std_error, "ci_low": low, "ci_high": high}


def _difference(comparison: Difference | None) -> dict:
    """Randomized − direct with its interval and p-value (Wald for shares, Welch for
    means; all None until both ballots have answers)."""
    if comparison is None:
        return dict.fromkeys(("estimate", "std_error", "ci_low", "ci_high", "p_value"))
    return _ballot(comparison.difference, comparison.std_error, comparison.ci()) | {
        "p_value": comparison.p_value
    }


def difference_words(comparison: Comparison | None, answer: str = "“yes”") -> str:
    """A split ballot's difference (randomized − direct) in words, in percentage points,
    of ``answer`` ("yes", or an option in quotes)."""
    if comparison is None:
        return "The comparison needs answers on both ballots."
    diff, low, high = (100 * v for v in (comparison.difference, *comparison.ci()))
    more = "more" if diff >= 0 else "fewer"
    found = f"{abs(diff):.1f} points {more} {answer}"
    interval = f"{low:+.1f} to {high:+.1f} points, p = {comparison.p_value:.2g}"
    return _found_words(found, interval, comparison, ("more admitted", "fewer admitted"))


def mean_difference_words(comparison: MeanComparison | None) -> str:
    """A number split ballot's difference of means (randomized − direct) in words."""
    if comparison is None:
        return "The comparison needs two answers on each ballot."
    diff, low, high = comparison.difference, *comparison.ci()
    found = f"a mean {abs(diff):.3g} {'higher' if diff >= 0 else 'lower'}"
    interval = f"{low:+.3g} to {high:+.3g}, p = {comparison.p_value:.2g}, Welch"
    return _found_words(found, interval, comparison, ("higher", "lower"))


def _found_words(
    found: str, interval: str, comparison: Difference, above_below: tuple[str, str]
) -> str:
    """The sentence every split-ballot difference ends in: what randomized response
    found against asking directly, the interval, and whether it is significant."""
    words = (
        f"Randomized response found {found} than asking directly "
        f"({100 * comparison.level:g} % interval {interval})"
    )
    low, high = comparison.ci()
    if low > 0:
        return words + f": significantly {above_below[0]} with randomized response."
    if high < 0:
        return words + f": significantly {above_below[1]} with randomized response."
    return words + ": the interval includes 0, no clear difference."


def equality_words(test: EqualityTest | None) -> str:
    """A choice split ballot's one test of "both ballots give the same shares"."""
    if test is None:
        return "The comparison needs answers on both ballots."
    figures = f"(Wald χ² = {test.statistic:.2f} on {test.df} df, p = {test.p_value:.2g})"
    if test.p_value < 0.05:
        return (
            f"The shares differ between randomized response and asking directly {figures}: "
            "see each option's difference."
        )
    return f"No clear difference between randomized response and asking directly {figures}."


def _float(values: Any, j: int) -> float | None:
    return None if values is None else float(values[j])


@dataclass(frozen=True)
class SurveyResults:
    survey: Survey
    questions: list[QuestionResult]
    level: float
    method: str

    @property
    def n_responses(self) -> int:
        return max((r.n_answered for r in self.questions), default=0)

    @property
    def n_simulated(self) -> int:
        """Simulated respondents answer every question, so this is how many there are."""
        return max((r.n_simulated for r in self.questions), default=0)

    @property
    def epsilon_total(self) -> float:
        """Σ ε over the randomized questions; the directly asked ones are apart."""
        return composition(r.estimate.design for r in self.questions).epsilon_total

    @property
    def n_direct(self) -> int:
        """How many questions are asked directly (no privacy, left out of ε)."""
        return sum(r.direct for r in self.questions)

    def as_dict(self) -> dict:
        return {
            "survey": self.survey.id,
            "n_responses": self.n_responses,
            "n_simulated": self.n_simulated,
            "epsilon_total": json_epsilon(self.epsilon_total),
            "n_direct": self.n_direct,
            "population_size": self.survey.population_size,
            "level": self.level,
            "method": self.method,
            "questions": [r.as_dict() for r in self.questions],
        }


def population_for(survey: Survey, n: int, of_n: int | None = None) -> int | None:
    """The population N the finite-population correction uses for ``n`` reports: the
    survey's ``population_size``, or for a group of ``n`` out of ``of_n`` reports its
    share of it (the same sampling fraction); None when unknown or smaller than ``n``
    (then the intervals say so: see ``population`` in each entry)."""
    size = survey.population_size
    if size is None or not n:
        return None
    if of_n:
        size = round(size * n / of_n)
    return size if size >= n else None


def parse_estimate_options(params: Mapping[str, str]) -> tuple[float, str, list[str]]:
    """Level and method from a query string, with readable errors.

    Shared by the dashboard (which shows the errors and falls back to the defaults) and
    the API (which answers 400 with them).
    """
    errors = []
    method = params.get("method", DEFAULT_METHOD)
    try:
        check_method(method)
    except ValueError as error:
        errors.append(str(error))
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


def survey_results(
    survey: Survey,
    level: float = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    *,
    round: int | None = None,
    counts: SurveyCounts | None = None,
) -> SurveyResults:
    """Estimates for every question of ``survey``, from ``counts`` (by default the live
    counts of its current round, or of ``round``)."""
    # The method is echoed as asked ("jeffreys" stays "jeffreys"); the maths accepts both.
    level = check_level(level)
    check_method(method)
    questions = list(survey.questions.all())
    counts = counts or survey_counts(survey, round)
    results = []
    for question in questions:
        tally = counts.tally(question.id)
        population = population_for(survey, tally.stats.count)
        estimate = tally.estimate(question.design, population)
        results.append(QuestionResult(question, estimate, level, method, tally.simulated, tally))
    return SurveyResults(survey, results, level, method)
