"""Duchi, Jordan and Wainwright's one-bit mechanism for the mean of a bounded number.

The true value x, clipped to [lower, upper], is first rounded at random to one bit
b = 1 with probability u = (x − lower)/(upper − lower); the bit is then kept with
probability e^ε/(1 + e^ε) and flipped otherwise (Warner at ε). The report is that bit:

    P(report 1 | x) = c + t·u,   t = tanh(ε/2),   c = (1 − t)/2,

so a report is at most (c + t)/c = e^ε times more likely under one true value than under
another (attained at the bounds), and the mean of x is lower + (upper − lower)·(λ − c)/t.
Its worst-case variance per respondent, ((upper − lower)/2)²/t², is the smallest any
ε-locally-private mechanism attains up to a constant [1]_; the interval is the one of a
binomial rate (Wilson) mapped through that line.

Both steps can be drawn exactly by hand or in the browser: u is rational (a whole number
over the range), and keeping with probability 1/(1 + e^(−ε)) is two-option k-RR.

References
----------
.. [1] J. C. Duchi, M. I. Jordan and M. J. Wainwright, "Local privacy and statistical
   minimax rates", FOCS 2013; "Minimax optimal procedures for locally private
   estimation", JASA 113(521):182–201, 2018, §4.2.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from estimator.designs import REGISTRY, Design, _check_index, _count_vector
from estimator.estimates import BinaryEstimate
from estimator.intervals import DEFAULT_LEVEL, DEFAULT_METHOD
from estimator.params import BOUNDS, Param, check_bounds, epsilon_param


@dataclass(frozen=True)
class OneBitMean(Design):
    """One randomized bit per respondent for the mean of a number in [lower, upper].

    Examples
    --------
    >>> d = OneBitMean(epsilon=math.log(3), lower=0, upper=10)
    >>> round(d.t, 12), round(d.c, 12), round(d.epsilon, 4)
    (0.5, 0.25, 1.0986)
    >>> round(d.estimate([500, 500]).estimate, 12)  # λ̂ = ½ is the middle of the range
    5.0
    """

    kind: ClassVar[str] = "number"
    name: ClassVar[str] = "one_bit"
    label: ClassVar[str] = "One randomized bit (Duchi et al.)"
    help: ClassVar[str] = "Your number becomes one coin-like bit; only the average is estimated."
    PARAMS: ClassVar[tuple[Param, ...]] = (epsilon_param(1.0), *BOUNDS)
    output_values: ClassVar[tuple[int, ...]] = (0, 1)
    highest_report: ClassVar[int] = 1
    sends_one_bit: ClassVar[bool] = True
    offers_split_ballot: ClassVar[bool] = True
    noise_words: ClassVar[str] = (
        "one bit: 1 with probability c + t * (x - lower) / (upper - lower) for the true "
        "number x clipped to [lower, upper], t = tanh(epsilon / 2), c = (1 - t) / 2"
    )
    reanalysis_words: ClassVar[str] = (
        "mean = lower + (upper - lower) * (share of 1s - c) / t; interval: a binomial "
        "interval for the share of 1s mapped through the same line"
    )
    epsilon: float = 1.0
    lower: int = 0
    upper: int = 10

    def __post_init__(self) -> None:
        self._check_params()
        check_bounds(self.lower, self.upper)

    @property
    def t(self) -> float:
        """tanh(ε/2) = 1 − 2c."""
        return 1 - 2 * self.c

    @property
    def c(self) -> float:
        # (1 − tanh(ε/2))/2 = 1/(1 + e^ε), kept exact for large ε.
        return 1 / (1 + math.exp(self.epsilon)) if self.epsilon < 700 else 0.0

    @property
    def width(self) -> int:
        return self.upper - self.lower

    @property
    def noise_variance(self) -> float:
        """What a rescaled report lower + width·(bit − c)/t adds to the variance of the
        true values at worst (all at the bounds, half each): (width/2)²·(1/t² − 1)."""
        return (self.width / 2) ** 2 * (1 / self.t**2 - 1)

    @property
    def typical_noise(self) -> float:
        return math.sqrt(self.noise_variance)

    def report_variance(self, sd: float | None = None) -> float:
        """A rescaled report's variance at worst, (width/(2t))², whatever the spread
        ``sd`` of the true values (a bit's variance is largest at λ = ½)."""
        return (self.width / 2 / self.t) ** 2

    @property
    def true_values(self) -> tuple[int, ...]:
        return tuple(range(self.lower, self.upper + 1))

    def output_description(self) -> dict:
        return {"type": "options", "values": [0, 1]}

    def check_report(self, report: Any) -> int:
        return _check_index(report, 2, "a one-bit report")

    def p_one(self, x: Any) -> np.ndarray:
        """P(report 1 | x) for true values x (clipped to the bounds)."""
        clipped = np.clip(np.asarray(x, dtype=float), self.lower, self.upper)
        return self.c + self.t * (clipped - self.lower) / self.width

    def likelihood(self, report: Any) -> np.ndarray:
        p = self.p_one(self.true_values)
        return p if self.check_report(report) == 1 else 1 - p

    def simulate(self, true_values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The two steps, as the browser draws them: round at random, then keep or flip."""
        clipped = np.clip(np.asarray(true_values, dtype=np.int64), self.lower, self.upper)
        bit = rng.random(clipped.shape) < (clipped - self.lower) / self.width
        keep = rng.random(clipped.shape) < 1 / (1 + math.exp(-self.epsilon))
        return np.where(keep, bit, ~bit).astype(np.int8)

    def estimate(self, counts: Any, *, population: int | None = None) -> OneBitEstimate:
        """The mean from the counts of reports ``[zeros, ones]``. ``population`` is
        accepted and not applied: the device's rounding to a bit is randomization, so a
        finite-population correction of the bit's share would understate the error."""
        zeros, ones = _count_vector(counts, 2)
        return OneBitEstimate(self, BinaryEstimate(self, ones, zeros + ones))

    def sample_size(self, half_width: float, level: float = DEFAULT_LEVEL) -> int:
        """Respondents for a half-width on the mean, at the worst case (λ = ½)."""
        from estimator.designs import _mean_sample_size

        return _mean_sample_size((self.width / 2 / self.t) ** 2, half_width, level)


@dataclass(frozen=True)
class OneBitEstimate:
    """The mean of a number from one-bit reports: the normalized mean u's estimate
    (a binomial rate through the line c + t·u) scaled onto [lower, upper]."""

    design: OneBitMean
    normalized: BinaryEstimate

    @property
    def n(self) -> int:
        return self.normalized.n

    @property
    def message(self) -> str | None:
        return self.normalized.message

    @property
    def noise_variance(self) -> float:
        return self.design.noise_variance

    def contradicts_design(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> bool:
        """True when no mean in [lower, upper] explains the share of 1s at this level."""
        return self.normalized.contradicts_design(level, method)

    def warning(self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD) -> str | None:
        """The rate's word on the data: no mean in [lower, upper] explains the bits."""
        return self.normalized.warning(level, method)

    def _scale(self, u: float | None) -> float | None:
        return None if u is None else self.design.lower + self.design.width * u

    @property
    def estimate_unbiased(self) -> float | None:
        """lower + width·(λ̂ − c)/t: unbiased, may fall outside the bounds."""
        return self._scale(self.normalized.estimate_unbiased)

    @property
    def estimate(self) -> float | None:
        """The mean clipped to [lower, upper]."""
        return self._scale(self.normalized.estimate)

    @property
    def std_error(self) -> float | None:
        se = self.normalized.std_error
        return None if se is None else self.design.width * se

    def ci(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> tuple[float, float] | None:
        interval = self.normalized.ci(level, method)
        if interval is None:
            return None
        return self._scale(interval[0]), self._scale(interval[1])


REGISTRY[(OneBitMean.kind, OneBitMean.name)] = OneBitMean
