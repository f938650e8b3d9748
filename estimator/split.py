"""The split ballot: a randomized question of which a share ``s`` of respondents, drawn
by their own device before they answer, is asked directly and told so.

The ballot is an arm, stored in the report itself like the arms of :mod:`estimator.arms`
so that tallies, exports and imports keep the two ballots apart:

- yes/no and choice questions store ``ballot · m + answer`` (ballot 0 randomized,
  1 direct; m the question's number of answers: 2 for yes/no, k for k options);
- number questions store a randomized report as it is, and a direct answer v as
  ``v + shift``, beyond every report the randomized ballot can make; its tally keys lie
  beyond the randomized ballot's bins, so the sums kept per tally key give each ballot's
  count, sum and sum of squares exactly.

The randomized estimate reads the randomized ballot alone; the direct ballot gives plain
proportions or a plain mean, and :mod:`estimator.compare` their difference ("did
randomized response help?"), per option for a choice question.

References
----------
.. [1] D. W. Heck and M. Moshagen, "RRreg: An R package for correlation and regression
   analyses of randomized response data", J. Stat. Softw. 85(2), 2018 (§4: the minarets
   study's randomized and direct questioning groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats as sps

from estimator.compare import (
    Comparison,
    MeanComparison,
    check_direct_share,
    compare,
    compare_means,
    simulate_split,
    split_ballot,
)
from estimator.designs import (
    BinaryDesign,
    ChoiceDesign,
    DirectChoice,
    DirectNumber,
    NumberDesign,
    _check_index,
    _count_vector,
)
from estimator.estimates import BinaryEstimate, ChoiceEstimate, NumberEstimate, NumberStats
from estimator.intervals import DEFAULT_LEVEL
from estimator.one_bit import OneBitEstimate, OneBitMean

BALLOTS = 2
# The ballot of a report (its arm): what the export's arm column holds.
RANDOMIZED_BALLOT, DIRECT_BALLOT = 0, 1


@dataclass(frozen=True)
class SplitEstimate(BinaryEstimate):
    """The randomized ballot's estimate (every attribute of :class:`BinaryEstimate`
    speaks of it alone), with the direct ballot's counts beside it.

    Examples
    --------
    >>> from estimator.designs import ForcedResponse
    >>> est = SplitDesign(ForcedResponse(), 0.2).estimate([600, 400, 180, 20])
    >>> round(est.estimate, 3), round(est.direct.estimate, 3)
    (0.3, 0.1)
    >>> round(est.comparison().difference, 3)
    0.2
    """

    direct_yes: int = 0
    direct_n: int = 0

    @property
    def direct(self) -> BinaryEstimate:
        """The direct ballot's proportion of "yes" (answers taken as given)."""
        return split_ballot(self, self.direct_yes, self.direct_n).direct

    def comparison(self, level: float = DEFAULT_LEVEL) -> Comparison | None:
        """Randomized minus direct, with interval and tests; None until both ballots
        have answers."""
        if not (self.has_data and self.direct_n):
            return None
        return split_ballot(self, self.direct_yes, self.direct_n).comparison(level)


@dataclass(frozen=True)
class EqualityTest:
    """Wald's χ² test that the randomized and the direct ballot give one distribution
    over the options (k − 1 degrees of freedom): one p-value for a whole choice question,
    beside the per-option differences."""

    statistic: float
    df: int
    p_value: float


@dataclass(frozen=True, repr=False)
class SplitChoiceEstimate(ChoiceEstimate):
    """The randomized ballot's option shares (every attribute of :class:`ChoiceEstimate`
    speaks of it alone), with the direct ballot's counts per option beside them.

    Examples
    --------
    >>> from estimator.designs import KRandomizedResponse
    >>> design = SplitDesign(KRandomizedResponse(epsilon=2.0, k=3), 0.25)
    >>> est = design.estimate([500, 300, 200, 150, 60, 40])
    >>> [round(float(p), 3) for p in est.direct.estimate]
    [0.6, 0.24, 0.16]
    >>> [round(d.difference, 3) for d in est.comparisons()]
    [-0.022, 0.044, -0.023]
    >>> round(est.equality_test().p_value, 2)
    0.4
    """

    direct_counts: tuple[int, ...] = ()

    @property
    def direct(self) -> ChoiceEstimate:
        """The direct ballot's shares of each option (answers taken as given)."""
        return DirectChoice(k=self.design.k).estimate(self.direct_counts)

    @property
    def direct_n(self) -> int:
        return sum(self.direct_counts)

    def comparisons(self, level: float = DEFAULT_LEVEL) -> tuple[Comparison, ...] | None:
        """Per option, randomized minus direct (each option on its own design line, as
        its interval); None until both ballots have answers."""
        if not (self.n and self.direct_n):
            return None
        direct = self.direct.options
        return tuple(compare(a, b, level) for a, b in zip(self.options, direct, strict=True))

    def equality_test(self) -> EqualityTest | None:
        """One test for all options: d = P⁻¹λ̂ − p̂_direct over the first k − 1 options,
        χ² = dᵀ(Σ_randomized + Σ_direct)⁻¹d (the last option is fixed by the others)."""
        if not (self.n and self.direct_n):
            return None
        direct = self.direct
        d = (self.estimate_unbiased - direct.estimate_unbiased)[:-1]
        covariance = (self.covariance + direct.covariance)[:-1, :-1]
        statistic = float(max(0.0, d @ np.linalg.pinv(covariance) @ d))
        df = self.design.k - 1
        return EqualityTest(statistic, df, float(sps.chi2.sf(statistic, df)))


class SplitMeans:
    """A number question's split ballot: the randomized ballot's mean (every attribute of
    the estimate it is mixed into speaks of it alone), with the direct ballot's count, sum
    and sum of squares beside it."""

    design: Any
    direct_stats: NumberStats

    @property
    def direct(self) -> NumberEstimate:
        """The direct ballot's mean (answers taken as given)."""
        design = DirectNumber(lower=self.design.lower, upper=self.design.upper)
        return design.estimate(self.direct_stats)

    @property
    def direct_n(self) -> int:
        return self.direct_stats.count

    def comparison(self, level: float = DEFAULT_LEVEL) -> MeanComparison | None:
        """Randomized mean minus direct mean (Welch); None until each ballot has two
        answers."""
        if self.n < 2 or self.direct_n < 2:
            return None
        return compare_means(self, self.direct, level)


@dataclass(frozen=True, repr=False)
class SplitNumberEstimate(SplitMeans, NumberEstimate):
    """The randomized ballot's mean of noisy reports beside the direct ballot's.

    Examples
    --------
    >>> from estimator.designs import Laplace
    >>> design = SplitNumberDesign(Laplace(epsilon=1.0, lower=0, upper=10), 0.25)
    >>> est = design.estimate((300, 1500, 12000), direct=(100, 400, 2000))
    >>> est.estimate, est.direct.estimate
    (5.0, 4.0)
    >>> round(est.comparison().difference, 3)
    1.0
    """

    direct_stats: NumberStats = NumberStats(0, 0, 0)


@dataclass(frozen=True)
class SplitOneBitEstimate(SplitMeans, OneBitEstimate):
    """The randomized ballot's mean from one-bit reports beside the direct ballot's.

    Examples
    --------
    >>> design = SplitNumberDesign(OneBitMean(epsilon=1.0, lower=0, upper=10), 0.25)
    >>> est = design.estimate([450, 550], direct=(300, 1200, 6000))
    >>> round(est.estimate, 2), est.direct.estimate
    (6.08, 4.0)
    """

    direct_stats: NumberStats = NumberStats(0, 0, 0)


SplitMeanEstimate = SplitNumberEstimate | SplitOneBitEstimate


class _Ballots:
    """What every split ballot shares: two arms (randomized, direct) drawn with chances
    1 − s and s, the randomized design's ε and everything else it knows."""

    randomized_design: Any
    direct_share: float
    has_arms: ClassVar[bool] = True
    split_ballot: ClassVar[bool] = True
    arms: ClassVar[int] = BALLOTS
    regression_with_arms: ClassVar[bool] = False
    arm_names: ClassVar[tuple[str, str]] = ("randomized ballot", "direct ballot")
    # The kind of question the class splits ("binary" and "choice", or "number").
    splits_kinds: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "direct_share", check_direct_share(self.direct_share))
        inner = self.randomized_design
        if inner.kind not in self.splits_kinds or not inner.splits():
            raise ValueError(
                "direct_share: a split ballot needs a randomized question without arms "
                "(not a question asked directly or a design with arms)"
            )

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("randomized_design")
        if inner is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(inner, name)

    @property
    def arm_weights(self) -> tuple[float, float]:
        """The chance of each ballot: randomized 1 − s, direct s."""
        return 1 - self.direct_share, self.direct_share

    def arm_chance_steps(self) -> tuple[tuple[tuple[float, str, str], ...], ...]:
        """The randomized ballot follows the design's coins; the direct one has none."""
        return self.randomized_design.chance_steps(), ()


@dataclass(frozen=True)
class SplitDesign(_Ballots):
    """A randomized yes/no or choice design of which a share ``direct_share`` is asked
    directly.

    Everything not defined here (ε, chance steps, declaration, parameters) is the
    randomized design's: ε is the promise made to the randomized ballot; the direct
    ballot is told, before answering, that its answer is taken as given (ε = ∞).
    """

    randomized_design: BinaryDesign
    direct_share: float
    splits_kinds: ClassVar[tuple[str, ...]] = ("binary", "choice")

    @property
    def answers(self) -> int:
        """m, the answers a ballot's report takes: 2 for yes/no, k for k options."""
        return len(self.randomized_design.output_values)

    @property
    def output_values(self) -> tuple[int, ...]:
        return tuple(range(BALLOTS * self.answers))

    def encode(self, arm: Any, answer: Any) -> int:
        """The stored report of ``answer`` (0/1, or an option index) given on ballot
        ``arm``."""
        arm = _check_index(arm, BALLOTS, "ballot (arm)")
        return arm * self.answers + self.randomized_design.check_report(answer)

    def decode(self, report: int) -> tuple[int, int]:
        """(ballot, answer) of a stored report."""
        return divmod(int(report), self.answers)

    def check_report(self, report: Any) -> int:
        return _check_index(report, BALLOTS * self.answers, "a report with its ballot")

    def output_description(self) -> dict:
        values = list(self.randomized_design.output_values)
        return {"type": "options", "values": values, "arms": BALLOTS, "direct_arm": DIRECT_BALLOT}

    @property
    def response_matrix(self) -> np.ndarray:
        """M[ballot·m + report, truth]: the randomized design's rows weighted 1 − s, then
        the direct ballot's (its report is the truth) weighted s."""
        s, m = self.direct_share, self.answers
        return np.vstack(((1 - s) * self.randomized_design.response_matrix, s * np.eye(m)))

    def likelihood(self, report: Any) -> np.ndarray:
        return self.response_matrix[self.check_report(report)]

    def estimate(
        self, counts: Any, *, population: int | None = None
    ) -> SplitEstimate | SplitChoiceEstimate:
        """From the report counts of the randomized ballot then the direct (``[no, yes]``
        each, or one count per option)."""
        m = self.answers
        vector = _count_vector(counts, BALLOTS * m)
        if isinstance(self.randomized_design, ChoiceDesign):
            return SplitChoiceEstimate(
                self.randomized_design, vector[:m], population, direct_counts=vector[m:]
            )
        no, yes, direct_no, direct_yes = vector
        return SplitEstimate(
            self.randomized_design,
            yes,
            no + yes,
            population,
            direct_yes=direct_yes,
            direct_n=direct_no + direct_yes,
        )

    def estimate_from_tally(
        self,
        counts: Mapping[int, int],
        stats: NumberStats,
        population: int | None = None,
        *,
        key_stats: Mapping[int, NumberStats] | None = None,
    ) -> SplitEstimate | SplitChoiceEstimate:
        return self.estimate(
            [int(counts.get(v, 0)) for v in self.output_values], population=population
        )

    def simulate(self, true_answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports (ballot·m + answer): the direct share answers truthfully."""
        direct, reports = simulate_split(
            self.randomized_design, self.direct_share, true_answers, rng
        )
        return self.answers * direct.astype(np.int64) + reports


@dataclass(frozen=True)
class SplitNumberDesign(_Ballots):
    """A randomized number design (noise added, or one bit) of which a share
    ``direct_share`` is asked directly.

    A randomized report r is stored as it is; a direct answer v ∈ [lower, upper] as
    v + :attr:`shift`, above every report the randomized ballot can make. Tally keys of
    direct answers follow the randomized ballot's keys, so each ballot's count, sum and
    sum of squares are read from the sums kept per tally key.
    """

    randomized_design: NumberDesign | OneBitMean
    direct_share: float
    splits_kinds: ClassVar[tuple[str, ...]] = ("number",)

    @property
    def shift(self) -> int:
        """Added to a direct answer: lower + shift is one above the highest randomized
        report."""
        inner = self.randomized_design
        return inner.highest_report + 1 - inner.lower

    @property
    def _direct_design(self) -> DirectNumber:
        inner = self.randomized_design
        return DirectNumber(lower=inner.lower, upper=inner.upper)

    @property
    def first_direct_key(self) -> int:
        """The tally key of the direct ballot's first bin: after every key of the
        randomized ballot."""
        inner = self.randomized_design
        return inner.tally_key(inner.highest_report) + 1

    def encode(self, arm: Any, answer: Any) -> int:
        """The stored report of ``answer`` given on ballot ``arm``: a randomized report,
        or a direct answer within the bounds."""
        arm = _check_index(arm, BALLOTS, "ballot (arm)")
        if arm == RANDOMIZED_BALLOT:
            return self.randomized_design.check_report(answer)
        return self._direct_design.check_report(answer) + self.shift

    def decode(self, report: int) -> tuple[int, int]:
        """(ballot, answer) of a stored report."""
        report = int(report)
        if report >= self.randomized_design.lower + self.shift:
            return DIRECT_BALLOT, report - self.shift
        return RANDOMIZED_BALLOT, report

    def check_report(self, report: Any) -> int:
        if isinstance(report, bool) or not isinstance(report, int | np.integer):
            raise ValueError(f"a number report must be a whole number, got {report!r}")
        ballot, answer = self.decode(report)
        return self.encode(ballot, answer)

    def output_description(self) -> dict:
        inner = self.randomized_design.output_description()
        return inner | {"arms": BALLOTS, "direct_arm": DIRECT_BALLOT, "direct_shift": self.shift}

    def tally_keys(self, reports: Any) -> np.ndarray:
        reports = np.asarray(reports, dtype=np.int64)
        direct = reports >= self.randomized_design.lower + self.shift
        randomized = self.randomized_design.tally_keys(np.where(direct, 0, reports))
        answers = self._direct_design.tally_keys(np.where(direct, reports - self.shift, 0))
        return np.where(direct, self.first_direct_key + answers, randomized)

    def tally_key(self, report: int) -> int:
        ballot, answer = self.decode(report)
        if ballot == RANDOMIZED_BALLOT:
            return self.randomized_design.tally_key(answer)
        return self.first_direct_key + self._direct_design.tally_key(answer)

    def likelihood(self, report: Any) -> np.ndarray:
        """P(ballot and report | x): the randomized ballot's law weighted 1 − s, a direct
        answer's certainty weighted s."""
        ballot, answer = self.decode(self.check_report(report))
        if ballot == RANDOMIZED_BALLOT:
            return (1 - self.direct_share) * self.randomized_design.likelihood(answer)
        return self.direct_share * self._direct_design.likelihood(answer)

    def estimate(
        self,
        randomized: Any,
        *,
        direct: Any = (0, 0, 0),
        population: int | None = None,
    ) -> SplitMeanEstimate:
        """From what the randomized design estimates from (its reports' count, sum and
        sum of squares, or the counts of 0 and 1 of one-bit reports) and the direct
        ballot's (count, sum, sum of squares) of answers."""
        est = self.randomized_design.estimate(randomized, population=population)
        return self._with_direct(est, NumberStats.of(direct))

    def _with_direct(self, est: Any, direct: NumberStats) -> SplitMeanEstimate:
        if self.randomized_design.sends_one_bit:
            return SplitOneBitEstimate(est.design, est.normalized, direct_stats=direct)
        return SplitNumberEstimate(est.design, est.stats, est.population, direct_stats=direct)

    def estimate_from_tally(
        self,
        counts: Mapping[int, int],
        stats: NumberStats,
        population: int | None = None,
        *,
        key_stats: Mapping[int, NumberStats] | None = None,
    ) -> SplitMeanEstimate:
        """Each ballot's sums from the sums per tally key (``key_stats``): the direct
        ballot's keys start at :attr:`first_direct_key`, and its stored answers carry the
        shift, taken off exactly here."""
        direct_keys = [k for k in counts if k >= self.first_direct_key and counts[k]]
        if direct_keys and key_stats is None:
            raise ValueError(
                "a split ballot on a number question needs the sums per tally key "
                "(key_stats) to tell its two ballots apart"
            )
        n = total = total_sq = 0
        for key in direct_keys:
            part = key_stats.get(key)
            if part is None:
                raise ValueError(f"key_stats: no sums for the direct ballot's tally key {key}")
            n, total, total_sq = n + part.count, total + part.total, total_sq + part.total_sq
        shift = self.shift
        answers = total - shift * n
        direct = NumberStats(n, answers, total_sq - 2 * shift * answers - shift * shift * n)
        randomized = NumberStats(stats.count - n, stats.total - total, stats.total_sq - total_sq)
        kept = {k: v for k, v in counts.items() if k < self.first_direct_key}
        est = self.randomized_design.estimate_from_tally(kept, randomized, population)
        return self._with_direct(est, direct)

    def simulate(self, true_values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Stored reports: the direct share's clipped true values plus the shift, the
        others' randomized reports."""
        inner = self.randomized_design
        clipped = np.clip(np.asarray(true_values, dtype=np.int64), inner.lower, inner.upper)
        direct, reports = simulate_split(inner, self.direct_share, clipped, rng)
        return np.where(direct, reports + self.shift, reports).astype(np.int64)


def with_direct_share(design: Any, share: Any) -> Any:
    """``design`` itself, or its split ballot when a direct share is given."""
    if share is None:
        return design
    return (SplitNumberDesign if design.kind == "number" else SplitDesign)(design, share)
