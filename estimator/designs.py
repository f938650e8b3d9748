"""The design core: one family of immutable design objects for every question kind.

A design knows its ``kind`` (``binary``, ``choice``, ``number``), its ``name``, its output
space, its parameters (declared once in ``PARAMS``), its response matrix or noise law, its
privacy loss ε (SPEC §1.4: ln max over reports r of max_x P(r|x) / min_x P(r|x), ∞ when a
report is impossible under some true value but not others), how to simulate respondents
(the reference the browser sampler is tested against) and how to estimate from the
sufficient statistics of its reports. The rest of the app asks the design; it never
branches on a design's name.

References
----------
.. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", JASA 60(309):63–69, 1965.
.. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3–4), 2014, §3.2 and §3.5.
.. [3] J.-W. Yu, G.-L. Tian and M.-L. Tang, "Two new models for survey sampling with
   sensitive characteristic: design and analysis", Metrika 67:251–263, 2008 (crosswise).
.. [4] P. Kairouz, S. Oh and P. Viswanath, "Extremal mechanisms for local differential
   privacy", JMLR 17(17):1–51, 2016 (k-ary randomized response).
.. [5] A. Ghosh, T. Roughgarden and M. Sundararajan, "Universally utility-maximizing
   privacy mechanisms", SIAM J. Comput. 41(6):1673–1693, 2012 (the geometric mechanism).
.. [6] I. Mironov, "On significance of the least significant bits for differential
   privacy", CCS 2012.
.. [7] J. C. Duchi, M. I. Jordan and M. J. Wainwright, "Local privacy and statistical
   minimax rates", FOCS 2013 (one randomized bit for a bounded mean).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from estimator.estimates import BinaryEstimate, ChoiceEstimate, NumberEstimate, NumberStats
from estimator.intervals import DEFAULT_LEVEL, check_level, z_value
from estimator.params import (
    BOUNDS,
    EPSILON,
    Param,
    check_bounds,
    check_options_count,
    epsilon_param,
    probability,
)

# A report farther than this from the bounds has probability below this under any true
# value: the mechanism could not have produced it.
IMPOSSIBLE_REPORT = 1e-12
# A number question's reports are tallied in at most this many bins (plus one below, one
# above): enough for a histogram, and a bounded number of tally rows.
MAX_REPORT_BINS = 24
# The least difference between the report rates under two true values that a design may
# have: below it the variance 1/t² of every estimate and plan leaves the floats (t = 5e-324
# squares to 0). No sample could estimate much from such a design anyway.
MIN_SLOPE = 1e-150


def json_epsilon(epsilon: float) -> float | None:
    """JSON has no infinity: ε = ∞ ("no privacy") is sent as null."""
    return epsilon if epsilon != math.inf else None


def matrix_epsilon(matrix: np.ndarray) -> float:
    """ε = ln max over reports (rows) of max/min over true values (columns); ∞ when a
    report is possible under one true value and impossible under another."""
    worst = 0.0
    for row in np.asarray(matrix, dtype=float):
        hi, lo = row.max(), row.min()
        if hi == 0:
            continue
        if lo == 0:
            return math.inf
        worst = max(worst, math.log(hi) - math.log(lo))
    return worst


class Design:
    """What every design offers; subclasses are frozen dataclasses of their parameters."""

    kind: ClassVar[str]
    name: ClassVar[str]
    label: ClassVar[str]
    help: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    randomized: ClassVar[bool] = True
    # Choice designs take their number of options from the question.
    needs_options: ClassVar[bool] = False
    # The respondent compares the sensitive statement with an innocuous one and reports
    # only "same" or "different" (crosswise): no coin, and the report is that answer.
    compares_statements: ClassVar[bool] = False
    # A number design that sends one randomized bit rather than the number plus noise.
    sends_one_bit: ClassVar[bool] = False
    # The device draws an arm before randomizing; the report is stored as arm·2 + answer.
    has_arms: ClassVar[bool] = False
    # The respondent also answers an innocuous question on the device (its wording is the
    # question's innocuous_text); the true value is then sensitive + 2 · innocuous.
    asks_innocuous: ClassVar[bool] = False
    # A share of respondents asked directly, their reports apart (estimator.split).
    split_ballot: ClassVar[bool] = False
    regression_with_arms: ClassVar[bool] = False
    # A split ballot's share asked directly (estimator.split); None for every design here.
    direct_share: ClassVar[float | None] = None
    # Whether a share of respondents can be asked this design's question directly on a
    # split ballot: its reports and the direct answers must be told apart in the tallies
    # and compared (yes/no, options, a number plus noise; not one bit standing for a number).
    offers_split_ballot: ClassVar[bool] = False

    @classmethod
    def splits(cls) -> bool:
        """Whether the builder offers a split ballot on this design."""
        return cls.offers_split_ballot and cls.randomized and not cls.has_arms

    def _check_params(self) -> None:
        for param in self.PARAMS:
            object.__setattr__(self, param.name, param.check(getattr(self, param.name)))

    def params(self) -> dict[str, Any]:
        """The stored parameters (JSON-ready)."""
        return {
            p.name: list(v) if isinstance(v := getattr(self, p.name), tuple) else v
            for p in self.PARAMS
        }

    @property
    def epsilon(self) -> float:
        raise NotImplementedError

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)

    @classmethod
    def declaration(cls) -> dict:
        """The design's parameter declaration, as JSON, for forms and the browser."""
        return {
            "kind": cls.kind,
            "name": cls.name,
            "label": cls.label,
            "help": cls.help,
            "randomized": cls.randomized,
            "needs_options": cls.needs_options,
            "parameters": [p.to_json() for p in cls.PARAMS],
        }

    def describe(self) -> dict:
        """This design with its values and ε (``None`` for ∞, which JSON lacks)."""
        eps = self.epsilon
        return {
            **self.declaration(),
            "params": self.params(),
            "epsilon": eps if math.isfinite(eps) else None,
            "no_privacy": not math.isfinite(eps),
            "outputs": self.output_description(),
        }

    to_json = describe

    def output_description(self) -> dict:
        raise NotImplementedError

    def check_report(self, report: Any) -> int:
        """The report as an int if the design can emit it, else a clear ValueError."""
        raise NotImplementedError

    @property
    def true_values(self) -> tuple[int, ...]:
        """The true values a respondent can hold (after clipping, for numbers)."""
        raise NotImplementedError

    def likelihood(self, report: Any) -> np.ndarray:
        """P(report | x) for each of :attr:`true_values`."""
        raise NotImplementedError

    def tally_keys(self, reports: Any) -> np.ndarray:
        """Where each report is counted in the tallies (vectorised): the report itself
        for designs with a few outputs; a bounded histogram bin for numbers."""
        return np.asarray(reports, dtype=np.int64)

    def tally_key(self, report: int) -> int:
        return int(report)

    def estimate_from_tally(
        self,
        counts: Mapping[int, int],
        stats: NumberStats,
        population: int | None = None,
        *,
        key_stats: Mapping[int, NumberStats] | None = None,
    ) -> Any:
        """The estimate from what the tallies keep: reports counted per tally key, and
        their count, sum and sum of squares. Designs with a few outputs read the counts.
        ``population`` (N) applies the finite-population correction."""
        vector = [int(counts.get(v, 0)) for v in self.output_values]
        return self.estimate(vector, population=population)

    def posterior(self, prior: Sequence[float], report: Any) -> np.ndarray:
        """An adversary's belief over the true values after seeing ``report``, from a
        ``prior`` over :attr:`true_values`: Bayes' rule on the design's law. Whatever the
        prior, the odds between two true values move by at most e^ε."""
        prior = np.asarray([probability("prior", 0.5, "", "").check(p) for p in prior], dtype=float)
        if prior.shape != (len(self.true_values),) or abs(prior.sum() - 1) > 1e-9:
            raise ValueError(
                f"prior must give a probability to each of the {len(self.true_values)} "
                "true values, summing to 1"
            )
        joint = prior * self.likelihood(report)
        total = joint.sum()
        return joint / total if total > 0 else prior


def _check_index(value: Any, k: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{what} must be an option index (a whole number), got {value!r}")
    if not 0 <= value < k:
        raise ValueError(f"{what} must be one of 0…{k - 1}, got {value!r}")
    return int(value)


# --- Binary ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BinaryDesign(Design):
    """A yes/no design: P(report 1 | x) = c + t·x, so λ = c + t·q and q̂ = (λ̂ − c)/t [1]_.

    Subclasses set ``p_yes_given_1`` and ``p_yes_given_0``; everything else (ε, the
    affine inverse, simulation, estimation) follows from those two numbers.
    """

    kind: ClassVar[str] = "binary"
    offers_split_ballot: ClassVar[bool] = True
    name: ClassVar[str] = "binary"
    label: ClassVar[str] = "Yes/no"
    output_values: ClassVar[tuple[int, ...]] = (0, 1)

    @property
    def p_yes_given_1(self) -> float:
        raise NotImplementedError

    @property
    def p_yes_given_0(self) -> float:
        raise NotImplementedError

    @property
    def p_no_given_1(self) -> float:
        return 1 - self.p_yes_given_1

    def chance_steps(self) -> tuple[tuple[float, str, str], ...]:
        """The protocol as chance steps a respondent can follow by hand: each is
        ``(probability, outcome if it comes up, outcome if not)``, outcomes being
        ``truth``, ``opposite``, ``next`` (go on to the next step), ``yes`` or ``no``.
        Empty when no chance device is involved (asked directly, crosswise)."""
        return ()

    @property
    def p_no_given_0(self) -> float:
        return 1 - self.p_yes_given_0

    def __post_init__(self) -> None:
        self._check_params()
        if abs(self.t) < MIN_SLOPE:
            raise ValueError(
                "this design reports 'yes' equally often whatever the true answer "
                f"(or nearly: its rates differ by less than {MIN_SLOPE:g}), "
                "so nothing can be estimated from it"
            )

    @property
    def t(self) -> float:
        """Slope of λ in q: P(yes|1) − P(yes|0)."""
        return self.p_yes_given_1 - self.p_yes_given_0

    @property
    def c(self) -> float:
        """Intercept of λ in q: P(yes|0)."""
        return self.p_yes_given_0

    @property
    def response_matrix(self) -> np.ndarray:
        """M[report, truth] = P(report | truth), reports and truths (0, 1)."""
        return np.array(
            [[self.p_no_given_0, self.p_no_given_1], [self.p_yes_given_0, self.p_yes_given_1]]
        )

    @property
    def epsilon(self) -> float:
        """ε = ln max over reports of P(r|x)/P(r|x') ([2]_); ∞ when a report reveals x."""
        return matrix_epsilon(self.response_matrix)

    @property
    def lambda_range(self) -> tuple[float, float]:
        """The yes-rates λ that some prevalence q in [0, 1] can produce, low to high."""
        low, high = sorted((self.c, self.c + self.t))
        return low, high

    def lambda_for(self, q: float | np.ndarray) -> float | np.ndarray:
        """Expected yes-rate λ = c + t·q for true prevalence q."""
        return self.c + self.t * q

    def output_description(self) -> dict:
        return {"type": "options", "values": list(self.output_values)}

    def check_report(self, report: Any) -> int:
        return _check_index(report, 2, "a yes/no report")

    @property
    def true_values(self) -> tuple[int, ...]:
        return self.output_values

    def likelihood(self, report: Any) -> np.ndarray:
        return self.response_matrix[self.check_report(report)]

    def posterior_yes(self, prior: float, report: int = 1) -> float:
        """An adversary's belief P(x = 1 | report) given the prior P(x = 1) = ``prior``.

        Bayes' rule on the response matrix: with the two fair coins and a prior of 1/2,
        a "yes" moves the odds from 1:1 to 3:1 ([2]_, §3.2).

        Examples
        --------
        >>> ForcedResponse().posterior_yes(0.5)
        0.75
        """
        prior = probability("prior", 0.5, "", "").check(prior)
        if isinstance(report, bool) or report not in self.output_values:
            raise ValueError(f"report must be 0 or 1, got {report!r}")
        like1, like0 = self.response_matrix[report, 1], self.response_matrix[report, 0]
        denominator = prior * like1 + (1 - prior) * like0
        return float(prior * like1 / denominator) if denominator else float(prior)

    def simulate(self, true_answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomized reports (0/1) for an array of true answers (0/1)."""
        true_answers = np.asarray(true_answers)
        p_yes = np.where(true_answers == 1, self.p_yes_given_1, self.p_yes_given_0)
        return (rng.random(true_answers.shape) < p_yes).astype(np.int8)

    def estimate(
        self, yes_count: Any, n: Any = None, *, population: int | None = None
    ) -> BinaryEstimate:
        """Estimate the prevalence from ``yes_count`` of ``n`` reports, or from the count
        vector ``[no, yes]`` given alone. ``population`` (N) applies the finite-population
        correction."""
        if n is None:
            counts = _count_vector(yes_count, 2)
            yes_count, n = counts[1], sum(counts)
        return BinaryEstimate(self, yes_count, n, population)

    def interval(
        self,
        yes_count: int | np.ndarray,
        n: int | np.ndarray,
        level: float = DEFAULT_LEVEL,
        method: str = "wilson",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Confidence interval for q, vectorised over counts (``n`` ≥ 1); see
        :func:`estimator.intervals.affine_interval`."""
        from estimator.intervals import affine_interval

        low, high, _ = affine_interval(yes_count, n, self.c, self.t, level, method)
        return low, high


@dataclass(frozen=True)
class ForcedResponse(BinaryDesign):
    """Forced response: with probability ``p_truth`` answer truthfully, else a coin says
    'yes' with probability ``p_yes``. The defaults are the classic two fair coins, ε = ln 3.

    Examples
    --------
    >>> d = ForcedResponse()
    >>> round(d.epsilon, 4), d.t, d.c
    (1.0986, 0.5, 0.25)
    """

    name: ClassVar[str] = "forced_response"
    label: ClassVar[str] = "Forced response (two coins)"
    help: ClassVar[str] = "Coin 1: tell the truth; otherwise coin 2 says what to answer."
    PARAMS: ClassVar[tuple[Param, ...]] = (
        probability("p_truth", 0.5, "P(answer truthfully)", "the first coin: tell the truth"),
        probability("p_yes", 0.5, "P(forced “yes”)", "otherwise the second coin says yes"),
    )
    p_truth: float = 0.5
    p_yes: float = 0.5

    @property
    def p_yes_given_1(self) -> float:
        return self.p_truth + (1 - self.p_truth) * self.p_yes

    @property
    def p_yes_given_0(self) -> float:
        return (1 - self.p_truth) * self.p_yes

    def chance_steps(self) -> tuple[tuple[float, str, str], ...]:
        return ((self.p_truth, "truth", "next"), (self.p_yes, "yes", "no"))


@dataclass(frozen=True)
class Mirrored(BinaryDesign):
    """Warner's mirrored question [1]_: with probability ``p`` answer the question, else
    its negation. ε = |ln(p/(1−p))|; for a given ε the optimal binary mechanism.

    ``_lie`` (1 − p, kept exactly when p is within 2⁻⁵² of 1) is set only by
    :func:`optimal_design`, so that ε = 36 stays 36 rather than rounding to ∞.

    Examples
    --------
    >>> d = Mirrored(p=0.75)
    >>> round(d.epsilon, 4), d.t, d.c
    (1.0986, 0.5, 0.25)
    """

    name: ClassVar[str] = "mirrored"
    label: ClassVar[str] = "Mirrored question (Warner)"
    help: ClassVar[str] = "Answer the question or, by chance, its negation."
    PARAMS: ClassVar[tuple[Param, ...]] = (
        probability("p", 0.75, "P(answer as asked)", "otherwise answer the negated question"),
    )
    p: float = 0.75
    _lie: float | None = field(default=None, repr=False, compare=False)

    @property
    def lie(self) -> float:
        return 1 - self.p if self._lie is None else self._lie

    @property
    def p_yes_given_1(self) -> float:
        return self.p

    @property
    def p_yes_given_0(self) -> float:
        return self.lie

    @property
    def p_no_given_1(self) -> float:
        return self.lie

    def chance_steps(self) -> tuple[tuple[float, str, str], ...]:
        return ((self.p, "truth", "opposite"),)


@dataclass(frozen=True)
class UnrelatedQuestion(BinaryDesign):
    """Unrelated question with known prevalence ``pi``: with probability ``p_truth``
    answer the sensitive question, else an innocuous one true with probability ``pi``."""

    name: ClassVar[str] = "unrelated_question"
    label: ClassVar[str] = "Unrelated question with known prevalence"
    help: ClassVar[str] = "A coin chooses the sensitive question or an innocuous one."
    PARAMS: ClassVar[tuple[Param, ...]] = (
        probability("p_truth", 0.5, "P(answer the real question)", "else the innocuous one"),
        probability("pi", 0.5, "Known prevalence π", "of the innocuous question"),
    )
    p_truth: float = 0.5
    pi: float = 0.5

    @property
    def p_yes_given_1(self) -> float:
        return self.p_truth + (1 - self.p_truth) * self.pi

    @property
    def p_yes_given_0(self) -> float:
        return (1 - self.p_truth) * self.pi

    def chance_steps(self) -> tuple[tuple[float, str, str], ...]:
        return ((self.p_truth, "truth", "next"), (self.pi, "yes", "no"))


@dataclass(frozen=True)
class Crosswise(BinaryDesign):
    """The crosswise model [3]_: the respondent reads the sensitive statement and an
    innocuous one with known prevalence ``p`` (say, "my mother was born in January to
    March", p ≈ ¼) and says only whether the two answers are the same (report 1) or
    different (report 0). No coin at all; Warner's statistics with p: P(same | 1) = p,
    P(same | 0) = 1 − p. p = ½ tells nothing.

    Examples
    --------
    >>> round(Crosswise(p=0.25).epsilon, 4)
    1.0986
    """

    name: ClassVar[str] = "crosswise"
    label: ClassVar[str] = "Crosswise (same or different?)"
    help: ClassVar[str] = "Two statements, one innocuous: answer only 'same' or 'different'."
    compares_statements: ClassVar[bool] = True
    PARAMS: ClassVar[tuple[Param, ...]] = (
        probability("p", 0.25, "Known prevalence of the innocuous statement", "must not be ½"),
    )
    p: float = 0.25

    def __post_init__(self) -> None:
        self._check_params()
        if self.p == 0.5:
            raise ValueError(
                "p must not be 1/2: 'same' and 'different' would then be equally likely "
                "whatever the true answer, so nothing could be estimated"
            )
        super().__post_init__()

    @property
    def p_yes_given_1(self) -> float:
        return self.p

    @property
    def p_yes_given_0(self) -> float:
        return 1 - self.p


@dataclass(frozen=True)
class DirectBinary(BinaryDesign):
    """Asked directly, for non-sensitive background questions: no privacy, ε = ∞."""

    name: ClassVar[str] = "direct"
    label: ClassVar[str] = "Asked directly (no privacy)"
    help: ClassVar[str] = "Not randomized: only for questions that are not sensitive."
    randomized: ClassVar[bool] = False

    @property
    def p_yes_given_1(self) -> float:
        return 1.0

    @property
    def p_yes_given_0(self) -> float:
        return 0.0


@dataclass(frozen=True)
class AffineLine(BinaryDesign):
    """The two-output line λ = c + t·q of one option of a choice design (for its interval)."""

    name: ClassVar[str] = "option"
    label: ClassVar[str] = "One option of a choice design"
    c_: float = 0.0
    t_: float = 1.0

    @property
    def p_yes_given_1(self) -> float:
        return self.c_ + self.t_

    @property
    def p_yes_given_0(self) -> float:
        return self.c_

    @property
    def t(self) -> float:
        return self.t_


# --- Choice ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceDesign(Design):
    """A design over option indexes 0…k−1 whose response matrix is t·I + c·1ᵀ: the true
    option is kept with an extra probability t, and option j is reported with a base
    probability c_j whatever the truth. So each option's report rate is affine in its
    prevalence, λ_j = c_j + t·π_j, and P⁻¹λ̂ is simply (λ̂_j − c_j)/t per option.
    """

    kind: ClassVar[str] = "choice"
    offers_split_ballot: ClassVar[bool] = True
    needs_options: ClassVar[bool] = True
    k: int | None = None

    def __post_init__(self) -> None:
        if self.k is None:
            raise ValueError("a choice design needs its number of options k")
        object.__setattr__(self, "k", check_options_count(self.k))
        self._check_params()
        if self.t < MIN_SLOPE:
            raise ValueError(
                "this design reports every option equally often whatever the true one "
                f"(or nearly: its rates differ by less than {MIN_SLOPE:g}), "
                "so nothing can be estimated from it"
            )

    @property
    def t(self) -> float:
        raise NotImplementedError

    @property
    def c(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def response_matrix(self) -> np.ndarray:
        """M[report, truth] = P(report | truth) = t·[report = truth] + c[report]."""
        return self.t * np.eye(self.k) + np.repeat(self.c[:, None], self.k, axis=1)

    @property
    def epsilon(self) -> float:
        return matrix_epsilon(self.response_matrix)

    @property
    def output_values(self) -> tuple[int, ...]:
        return tuple(range(self.k))

    def output_description(self) -> dict:
        return {"type": "options", "values": list(self.output_values)}

    def check_report(self, report: Any) -> int:
        return _check_index(report, self.k, "a report")

    @property
    def true_values(self) -> tuple[int, ...]:
        return self.output_values

    def likelihood(self, report: Any) -> np.ndarray:
        return self.response_matrix[self.check_report(report)]

    def option_line(self, j: int) -> AffineLine:
        """Option j's report rate as a two-output line, for the binary intervals."""
        return AffineLine(c_=float(self.c[j]), t_=float(self.t))

    def simulate(self, true_values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports (option indexes) for an array of true option indexes."""
        true_values = np.asarray(true_values, dtype=int)
        if np.any((true_values < 0) | (true_values >= self.k)):
            raise ValueError(f"true options must be in 0…{self.k - 1}")
        cdf = np.cumsum(self.response_matrix, axis=0)[:-1]  # (k − 1) × k
        u = rng.random(true_values.shape)
        return (u[..., None] >= cdf[:, true_values].T).sum(axis=-1).astype(np.int8)

    def estimate(self, counts: Sequence[Any], *, population: int | None = None) -> ChoiceEstimate:
        """Estimate the option shares from the count of reports of each option."""
        return ChoiceEstimate(self, _count_vector(counts, self.k), population)


@dataclass(frozen=True)
class KRandomizedResponse(ChoiceDesign):
    """k-ary randomized response [4]_: the true option with probability
    e^ε/(e^ε + k − 1), else one of the others uniformly. ε is exactly ``epsilon``.

    Examples
    --------
    >>> d = KRandomizedResponse(epsilon=math.log(3), k=3)
    >>> round(d.epsilon, 12) == round(math.log(3), 12), round(d.t, 4)
    (True, 0.4)
    """

    name: ClassVar[str] = "k_rr"
    label: ClassVar[str] = "k-ary randomized response"
    help: ClassVar[str] = (
        "Keep the true option with a probability that grows with ε; otherwise give one of "
        "the other options at random."
    )
    PARAMS: ClassVar[tuple[Param, ...]] = (epsilon_param(EPSILON.default),)
    # The parameter is ε itself; matrix_epsilon(response_matrix) agrees to rounding.
    epsilon: float = EPSILON.default

    @property
    def p_keep(self) -> float:
        return 1 / (1 + (self.k - 1) * math.exp(-self.epsilon))

    @property
    def p_other(self) -> float:
        """Probability of each particular other option, computed without cancellation."""
        return 1 / (math.exp(self.epsilon) + self.k - 1)

    @property
    def t(self) -> float:
        return self.p_keep - self.p_other

    @property
    def c(self) -> np.ndarray:
        return np.full(self.k, self.p_other)


@dataclass(frozen=True)
class ChoiceForcedResponse(ChoiceDesign):
    """Forced response with a die (RRreg's "FR" with m categories): the true option with
    probability ``p_truth``, else option j with probability ``p_forced[j]``."""

    name: ClassVar[str] = "forced_response"
    label: ClassVar[str] = "Forced response (a die)"
    help: ClassVar[str] = "Tell the truth, or by chance give the option the die shows."
    PARAMS: ClassVar[tuple[Param, ...]] = (
        probability(
            "p_truth", 0.5, "P(answer truthfully)", "else the die chooses the option", open_low=True
        ),
        Param(
            "p_forced",
            "probabilities",
            None,
            "P(die shows option j)",
            "one per option, summing to 1 (default: uniform)",
        ),
    )
    p_truth: float = 0.5
    p_forced: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.p_forced is None:
            if self.k is not None:
                k = check_options_count(self.k)
                object.__setattr__(self, "p_forced", (1 / k,) * k)
        else:
            forced = self.PARAMS[1].check(self.p_forced)
            if self.k is not None and len(forced) != self.k:
                raise ValueError(
                    f"p_forced must have one probability per option ({self.k}), got {len(forced)}"
                )
            object.__setattr__(self, "p_forced", forced)
            object.__setattr__(self, "k", len(forced))
        super().__post_init__()

    @property
    def t(self) -> float:
        return self.p_truth

    @property
    def c(self) -> np.ndarray:
        return (1 - self.p_truth) * np.asarray(self.p_forced, dtype=float)


@dataclass(frozen=True)
class DirectChoice(ChoiceDesign):
    """A choice asked directly (year of study, faculty): no privacy, ε = ∞."""

    name: ClassVar[str] = "direct"
    label: ClassVar[str] = "Asked directly (no privacy)"
    help: ClassVar[str] = DirectBinary.help
    randomized: ClassVar[bool] = False

    @property
    def t(self) -> float:
        return 1.0

    @property
    def c(self) -> np.ndarray:
        return np.zeros(self.k)


# --- Numbers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NumberDesign(Design):
    """An integer in [lower, upper] plus integer noise of a known law (none when direct)."""

    kind: ClassVar[str] = "number"
    offers_split_ballot: ClassVar[bool] = True
    noise_words: ClassVar[str] = (
        "two-sided geometric: P(noise = z) = (1 - alpha) / (1 + alpha) * alpha^|z|, "
        "alpha = exp(-epsilon / (upper - lower)); none when asked directly"
    )
    reanalysis_words: ClassVar[str] = (
        "mean(column) is unbiased for the mean of the true values clipped to "
        "[lower, upper]; use a t interval from the sample variance of the column"
    )
    lower: int = 0
    upper: int = 10

    def __post_init__(self) -> None:
        self._check_params()
        check_bounds(self.lower, self.upper)

    @property
    def noise_variance(self) -> float:
        """Variance of the added noise: the privacy price on the mean's variance."""
        raise NotImplementedError

    @property
    def max_distance(self) -> int:
        """The farthest a report can lie outside [lower, upper] with probability
        ≥ 10⁻¹² under any true value (0 for a direct question)."""
        raise NotImplementedError

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    @property
    def highest_report(self) -> int:
        """The highest report the design makes (with probability ≥ 10⁻¹²)."""
        return self.upper + self.max_distance

    @property
    def report_bins(self) -> tuple[int, int, int]:
        """``(start, width, count)``: ``count`` bins of ``width`` integers from ``start``
        cover the bounds and three noise standard deviations either side, at most
        :data:`MAX_REPORT_BINS` of them. Tally key 0 counts the reports below ``start``,
        key ``count + 1`` those above, so a question's tally rows stay few whatever the
        reports (and estimates read their sums, never the keys)."""
        margin = math.ceil(3 * math.sqrt(self.noise_variance))
        start = self.lower - margin
        span = self.upper + margin - start + 1
        width = -(-span // MAX_REPORT_BINS)
        return start, width, -(-span // width)

    def tally_keys(self, reports: Any) -> np.ndarray:
        start, width, count = self.report_bins
        keys = (np.asarray(reports, dtype=np.int64) - start) // width + 1
        return np.clip(keys, 0, count + 1)

    def tally_key(self, report: int) -> int:
        start, width, count = self.report_bins
        return min(max((int(report) - start) // width + 1, 0), count + 1)

    def bin_range(self, key: int) -> tuple[int | None, int | None]:
        """The reports (inclusive) tally key ``key`` counts; ``None`` for an open end."""
        start, width, count = self.report_bins
        if key <= 0:
            return None, start - 1
        if key > count:
            return start + count * width, None
        low = start + (key - 1) * width
        return low, low + width - 1

    def histogram(self, counts: Mapping[int, int]) -> list[dict]:
        """The reports' histogram from the tallies' counts per key: every bin with its
        inclusive ``low`` and ``high`` (``None``: open) and ``count``."""
        _, _, count = self.report_bins
        return [
            dict(zip(("low", "high"), self.bin_range(key), strict=True))
            | {"count": int(counts.get(key, 0))}
            for key in range(count + 2)
        ]

    def estimate_from_tally(
        self,
        counts: Mapping[int, int],
        stats: NumberStats,
        population: int | None = None,
        *,
        key_stats: Mapping[int, NumberStats] | None = None,
    ) -> NumberEstimate:
        return self.estimate(stats, population=population)

    def output_description(self) -> dict:
        return {
            "type": "integers",
            "lower": self.lower,
            "upper": self.upper,
            "min_report": self.lower - self.max_distance,
            "max_report": self.upper + self.max_distance,
        }

    def check_report(self, report: Any) -> int:
        if isinstance(report, bool) or not isinstance(report, numbers.Integral):
            raise ValueError(f"a number report must be a whole number, got {report!r}")
        low, high = self.lower - self.max_distance, self.upper + self.max_distance
        if not low <= report <= high:
            raise ValueError(
                f"a report of {report} is impossible for this question: the design keeps "
                f"reports within {low}…{high} except with probability below "
                f"{IMPOSSIBLE_REPORT:g}"
            )
        return int(report)

    @property
    def true_values(self) -> tuple[int, ...]:
        return tuple(range(self.lower, self.upper + 1))

    def likelihood(self, report: Any) -> np.ndarray:
        offsets = self.check_report(report) - np.arange(self.lower, self.upper + 1)
        return self.noise_pmf(offsets)

    def noise_pmf(self, z: np.ndarray) -> np.ndarray:
        """P(Z = z) of the added noise."""
        raise NotImplementedError

    def simulate(self, true_values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports for an array of true integers: clipped to the bounds, plus noise."""
        clipped = np.clip(np.asarray(true_values, dtype=np.int64), self.lower, self.upper)
        return clipped + self.noise(clipped.shape, rng)

    def estimate(
        self,
        stats: NumberStats | Sequence[Any] | Mapping[str, Any],
        *,
        population: int | None = None,
    ) -> NumberEstimate:
        """Estimate the mean from (count, sum, sum of squares) of the reports;
        ``population`` (N) applies the finite-population correction."""
        return NumberEstimate(self, NumberStats.of(stats), population)

    def sample_size(
        self, half_width: float, level: float = DEFAULT_LEVEL, sd: float | None = None
    ) -> int:
        """Respondents for a half-width on the mean, at the planned standard deviation of
        the true values ``sd`` or at the worst case (upper − lower)/2."""
        return _mean_sample_size(self.report_variance(sd), half_width, level)

    def report_variance(self, sd: float | None = None) -> float:
        width = self.upper - self.lower
        sd = width / 2 if sd is None else float(sd)
        return sd**2 + self.noise_variance


@dataclass(frozen=True)
class Laplace(NumberDesign):
    """The local Laplace mechanism in its exact integer form [5]_: clip to
    [lower, upper], add two-sided geometric noise P(Z = z) ∝ α^|z| with
    α = e^(−ε/(upper − lower)). A report is at most e^ε times more likely under one true
    value than under another. Sampled exactly, never as a floating-point Laplace [6]_.

    Examples
    --------
    >>> d = Laplace(epsilon=1.0, lower=0, upper=10)
    >>> round(d.epsilon, 12), round(d.alpha, 4)
    (1.0, 0.9048)
    """

    name: ClassVar[str] = "laplace"
    label: ClassVar[str] = "Number plus exact Laplace (geometric) noise"
    help: ClassVar[str] = "Your number plus random whole-number noise."
    PARAMS: ClassVar[tuple[Param, ...]] = (epsilon_param(1.0), *BOUNDS)
    # The parameter is ε itself: the ratio of report probabilities under two true values
    # is α^(|r − x| − |r − x'|) ≤ α^−(upper − lower) = e^ε, attained for r outside the bounds.
    epsilon: float = 1.0

    @property
    def alpha(self) -> float:
        return math.exp(-self.epsilon / (self.upper - self.lower))

    @property
    def noise_variance(self) -> float:
        a = self.alpha
        return 2 * a / (1 - a) ** 2

    @property
    def typical_noise(self) -> float:
        """The noise's standard deviation, "±…" on the respondent page."""
        return math.sqrt(self.noise_variance)

    @property
    def max_distance(self) -> int:
        # P(|Z| > d) = 2α^(d+1)/(1 + α) ≤ 10⁻¹² from this d on.
        a = self.alpha
        d = math.log(IMPOSSIBLE_REPORT * (1 + a) / 2) / math.log(a) - 1
        return max(0, math.ceil(d - 1e-9))

    def noise_pmf(self, z: np.ndarray) -> np.ndarray:
        a = self.alpha
        return (1 - a) / (1 + a) * a ** np.abs(np.asarray(z))

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        # numpy's geometric counts trials (≥ 1); the difference of two is ≥0-based anyway.
        p = 1 - self.alpha
        return rng.geometric(p, shape) - rng.geometric(p, shape)

    def one_bit_comparison(self, half_width: float, level: float = DEFAULT_LEVEL) -> dict:
        """Respondents needed for ``half_width`` on the mean (worst case) with this design
        and with Duchi et al.'s one-bit mechanism [7]_ at the same ε, and which is
        narrower for the same n."""
        one_bit = one_bit_mean_variance(self.epsilon, self.lower, self.upper)
        laplace = self.report_variance()
        return {
            "laplace_n": _mean_sample_size(laplace, half_width, level),
            "one_bit_n": _mean_sample_size(one_bit, half_width, level),
            "laplace_sd": math.sqrt(laplace),
            "one_bit_sd": math.sqrt(one_bit),
            "narrower": "one_bit" if one_bit < laplace else "laplace",
        }

    def distribution(self, report_counts: Mapping[int, int], iterations: int = 2000) -> dict:
        """Deconvolved distribution of the clipped true values (EM on lower…upper).

        A rough picture, not an estimate with intervals: say so wherever it is drawn.
        """
        reports = np.array(sorted(report_counts), dtype=np.int64)
        weights = np.array([report_counts[int(r)] for r in reports], dtype=float)
        support = np.arange(self.lower, self.upper + 1)
        likelihood = self.noise_pmf(reports[:, None] - support[None, :])
        shares = np.full(support.size, 1 / support.size)
        for _ in range(iterations):
            joint = likelihood * shares
            joint /= joint.sum(axis=1, keepdims=True)
            updated = weights @ joint / weights.sum()
            if np.max(np.abs(updated - shares)) < 1e-10:
                shares = updated
                break
            shares = updated
        return {int(v): float(s) for v, s in zip(support, shares, strict=True)}


@dataclass(frozen=True)
class DirectNumber(NumberDesign):
    """A number asked directly (age): no privacy, ε = ∞; bounds for breakdowns."""

    name: ClassVar[str] = "direct"
    label: ClassVar[str] = "Asked directly (no privacy)"
    help: ClassVar[str] = DirectBinary.help
    randomized: ClassVar[bool] = False
    PARAMS: ClassVar[tuple[Param, ...]] = BOUNDS

    @property
    def epsilon(self) -> float:
        return math.inf

    @property
    def noise_variance(self) -> float:
        return 0.0

    @property
    def max_distance(self) -> int:
        return 0

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return np.zeros(shape, dtype=np.int64)

    def noise_pmf(self, z: np.ndarray) -> np.ndarray:
        return (np.asarray(z) == 0).astype(float)


def one_bit_mean_variance(epsilon: float, lower: float, upper: float) -> float:
    """Worst-case per-respondent variance of Duchi et al.'s one-bit mean mechanism [7]_:
    x ↦ v ∈ [−1, 1], report ±B with B = (e^ε + 1)/(e^ε − 1) and P(+B) = ½ + v/(2B);
    the variance B² − v² ≤ B², in the question's units times ((upper − lower)/2)²."""
    b = 1 / math.tanh(epsilon / 2)
    return (b * (upper - lower) / 2) ** 2


def _mean_sample_size(variance: float, half_width: float, level: float) -> int:
    level = check_level(level)
    if isinstance(half_width, bool) or not half_width > 0 or not math.isfinite(half_width):
        raise ValueError(f"half_width must be a positive number, got {half_width!r}")
    return max(2, math.ceil(variance * (z_value(level) / half_width) ** 2 - 1e-9))


def _count_vector(counts: Any, k: int) -> tuple[int, ...]:
    from estimator.intervals import check_count

    if isinstance(counts, str | bytes | Mapping) or not isinstance(counts, Iterable):
        raise ValueError(f"counts must be a list of {k} whole numbers, got {counts!r}")
    values = tuple(check_count("each count", c) for c in counts)
    if len(values) != k:
        raise ValueError(f"counts must have one entry per option ({k}), got {len(values)}")
    return values


# --- Registry and composition ------------------------------------------------------------

REGISTRY: dict[tuple[str, str], type[Design]] = {
    (cls.kind, cls.name): cls
    for cls in (
        ForcedResponse,
        Mirrored,
        UnrelatedQuestion,
        Crosswise,
        DirectBinary,
        KRandomizedResponse,
        ChoiceForcedResponse,
        DirectChoice,
        Laplace,
        DirectNumber,
    )
}
KINDS = ("binary", "choice", "number")


def make_design(
    kind: str, name: str, params: Mapping[str, Any] | None = None, *, k: int | None = None
) -> Design:
    """Build a design from its kind, name and stored parameters (missing ones take their
    defaults). Choice designs take ``k``, the question's number of options."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    cls = REGISTRY.get((kind, name))
    if cls is None:
        names = ", ".join(n for (kd, n) in REGISTRY if kd == kind)
        raise ValueError(f"unknown design {name!r} for kind {kind}; choose one of {names}")
    params = dict(params or {})
    if not isinstance(params, dict) or not all(isinstance(p, str) for p in params):
        raise ValueError("design parameters must be a mapping of names to values")
    allowed = {p.name for p in cls.PARAMS}
    if unknown := set(params) - allowed:
        raise ValueError(f"unknown parameter(s) for {name}: {', '.join(sorted(unknown))}")
    fields = dict(params)
    if cls.needs_options:
        if k is not None:
            fields["k"] = k
    elif k is not None:
        raise ValueError(f"a {kind} design takes no number of options")
    return cls(**fields)


def design_declarations() -> list[dict]:
    """Every design's declaration (kind, name, label, parameters), for forms and browser."""
    return [cls.declaration() for cls in REGISTRY.values()]


@dataclass(frozen=True)
class Composition:
    """A survey's privacy: Σ ε over its randomized questions, direct ones listed apart."""

    epsilon_total: float
    randomized: tuple[Design, ...]
    direct: tuple[Design, ...]


def composition(designs: Iterable[Design]) -> Composition:
    """Basic sequential composition ([2]_, Theorem 3.16) over randomized questions; one
    randomized design without privacy makes the total ∞. Directly asked questions are
    set apart: they are shown as such, never folded into a number."""
    designs = tuple(designs)
    randomized = tuple(d for d in designs if d.randomized)
    direct = tuple(d for d in designs if not d.randomized)
    return Composition(float(sum(d.epsilon for d in randomized)), randomized, direct)


# Designs kept in modules of their own register themselves on import; importing them here
# puts them in REGISTRY whichever module is imported first.
import estimator.arms  # noqa: E402, F401
import estimator.one_bit  # noqa: E402, F401
