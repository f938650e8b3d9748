"""Estimates from sufficient statistics, in the spirit of scipy.stats' result objects:
attributes, a ``ci(level, method)`` method and a readable repr.

With no reports every number is ``None`` and ``message`` says why.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from scipy import stats as sps

from estimator.intervals import (
    CONTRADICTION_MESSAGE,
    DEFAULT_LEVEL,
    DEFAULT_METHOD,
    NO_DATA_MESSAGE,
    affine_interval,
    check_count,
    check_level,
    check_method,
)

if TYPE_CHECKING:
    from estimator.designs import BinaryDesign, ChoiceDesign, NumberDesign

MEAN_METHODS = ("t",)
_EM_STEPS = 5000
_EM_TOLERANCE = 1e-12
_EMPTY_CELL = 1e-9


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.4g}"


def _epsilon_text(eps: float) -> str:
    return "∞ (no privacy)" if math.isinf(eps) else f"{eps:.4g}"


def _check_population(population: Any, n: int) -> int | None:
    if population is None:
        return None
    population = check_count("population", population, allow_zero=False)
    if population < n:
        raise ValueError(f"population ({population}) cannot be smaller than n ({n})")
    return population


@dataclass(frozen=True, repr=False)
class BinaryEstimate:
    """Estimate of a true prevalence from randomized yes/no reports.

    Examples
    --------
    >>> from estimator.designs import ForcedResponse
    >>> est = ForcedResponse().estimate(yes_count=400, n=1000)
    >>> round(est.estimate, 3), round(est.std_error, 4)
    (0.3, 0.031)
    >>> [round(x, 3) for x in est.ci(0.95, "wilson")]
    [0.24, 0.361]
    """

    design: BinaryDesign
    yes_count: int
    n: int
    population: int | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "yes_count", check_count("yes_count", self.yes_count))
        object.__setattr__(self, "n", check_count("n", self.n))
        if self.yes_count > self.n:
            raise ValueError(f"need 0 <= yes_count <= n, got {self.yes_count} of {self.n}")
        object.__setattr__(self, "population", _check_population(self.population, self.n))

    def __repr__(self) -> str:
        if not self.n:
            return f"BinaryEstimate({self.design.name}: no reports)"
        low, high = self.ci()
        return (
            f"BinaryEstimate({self.design.name}: q̂ = {self.estimate:.4g}, 95% CI "
            f"[{low:.4g}, {high:.4g}] (wilson), unbiased {self.estimate_unbiased:.4g}, "
            f"SE {self.std_error:.4g}, {self.yes_count} yes of n = {self.n}, "
            f"ε = {_epsilon_text(self.design.epsilon)})"
        )

    @property
    def has_data(self) -> bool:
        return self.n > 0

    @property
    def message(self) -> str | None:
        """Why there is no estimate, or ``None`` when there is one."""
        return None if self.n else NO_DATA_MESSAGE

    @property
    def raw_yes_rate(self) -> float | None:
        """λ̂ = k/n, or ``None`` with no reports."""
        return self.yes_count / self.n if self.n else None

    @property
    def estimate_unbiased(self) -> float | None:
        """q̂ = (λ̂ − c)/t (Warner): unbiased, may fall outside [0, 1]."""
        lam = self.raw_yes_rate
        return None if lam is None else (lam - self.design.c) / self.design.t

    @property
    def estimate(self) -> float | None:
        """q̂ clipped to [0, 1]: the maximum-likelihood estimate under q ∈ [0, 1]."""
        q = self.estimate_unbiased
        return None if q is None else min(1.0, max(0.0, q))

    @property
    def fpc(self) -> float:
        """Factor on Var(λ̂) from sampling without replacement from a population of N.

        Var(λ̂) = [λ(1 − λ) − (n − 1)/(N − 1)·t²q(1 − q)]/n: only the part due to who
        was sampled shrinks; the coins' part stays. 1 without a population.
        """
        if self.population is None or not self.n:
            return 1.0
        lam, q = self.raw_yes_rate, self.estimate
        base = lam * (1 - lam)
        if base == 0:
            return 1.0
        share = (self.n - 1) / (self.population - 1) if self.population > 1 else 1.0
        return max(0.0, base - share * self.design.t**2 * q * (1 - q)) / base

    @property
    def std_error(self) -> float | None:
        """Estimated standard error of q̂: sqrt(λ̂(1 − λ̂)/n)/|t| (Warner), times the
        finite-population correction when a population size is given."""
        lam = self.raw_yes_rate
        if lam is None:
            return None
        return math.sqrt(lam * (1 - lam) / self.n * self.fpc) / abs(self.design.t)

    def _interval(self, level: float, method: str) -> tuple[tuple[float, float], bool]:
        key = (level, method)
        if key not in self._cache:
            low, high, contradicts = affine_interval(
                self.yes_count,
                self.n,
                self.design.c,
                self.design.t,
                level,
                method,
                shrink=math.sqrt(self.fpc),
            )
            self._cache[key] = ((float(low), float(high)), bool(contradicts))
        return self._cache[key]

    def ci(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> tuple[float, float] | None:
        """Confidence interval ``(low, high)`` for q, or ``None`` with no reports.

        Always contains :attr:`estimate` and is never of zero width; when the data
        contradict the design (see :meth:`contradicts_design`) it is a one-sided bound.
        """
        level, method = check_level(level), check_method(method)
        return self._interval(level, method)[0] if self.n else None

    def contradicts_design(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> bool:
        """True when the interval for λ misses [c, c + t]: no prevalence explains the
        reports at this level (respondents may not follow the randomization)."""
        level, method = check_level(level), check_method(method)
        return self._interval(level, method)[1] if self.n else False

    def warning(self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD) -> str | None:
        """What to tell the reader about this interval, or ``None``."""
        return CONTRADICTION_MESSAGE if self.contradicts_design(level, method) else None


@dataclass(frozen=True, repr=False)
class ChoiceEstimate:
    """Option shares from the count of reports of each option of a choice design.

    ``estimate_unbiased`` is P⁻¹λ̂ (may leave the simplex), ``covariance`` its
    multinomial covariance, ``estimate`` the maximum-likelihood shares on the simplex (EM)
    for display; ``options[j]`` is option j's estimate through the binary machinery (its
    report rate is c_j + t·π_j), so ``ci`` gives the calibrated binary interval per option.
    """

    design: ChoiceDesign
    counts: tuple[int, ...]
    population: int | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "population", _check_population(self.population, self.n))

    def __repr__(self) -> str:
        if not self.n:
            return f"ChoiceEstimate({self.design.name}: no reports)"
        shares = ", ".join(
            f"{j}: {p:.3g} [{lo:.3g}, {hi:.3g}]"
            for j, (p, (lo, hi)) in enumerate(zip(self.estimate, self.ci(), strict=True))
        )
        return (
            f"ChoiceEstimate({self.design.name}: {shares} (95% wilson), n = {self.n}, "
            f"ε = {_epsilon_text(self.design.epsilon)})"
        )

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def message(self) -> str | None:
        return None if self.n else NO_DATA_MESSAGE

    @property
    def report_rates(self) -> np.ndarray | None:
        return np.asarray(self.counts, dtype=float) / self.n if self.n else None

    @property
    def estimate_unbiased(self) -> np.ndarray | None:
        """P⁻¹λ̂ = (λ̂ − c)/t per option; sums to 1, may fall outside [0, 1]."""
        lam = self.report_rates
        return None if lam is None else (lam - self.design.c) / self.design.t

    @property
    def covariance(self) -> np.ndarray | None:
        """Estimated covariance of P⁻¹λ̂: (diag λ̂ − λ̂λ̂ᵀ)/(n t²); from a population of N,
        less the sampling part's share (n − 1)/(N − 1)·(diag π − ππᵀ)/n (the coins' part
        stays), its diagonal the options' own corrected variances (:attr:`std_errors`)."""
        lam = self.report_rates
        if lam is None:
            return None
        full = (np.diag(lam) - np.outer(lam, lam)) / (self.n * self.design.t**2)
        if self.population is None:
            return full
        share = (self.n - 1) / (self.population - 1) if self.population > 1 else 1.0
        pi = np.array([option.estimate for option in self.options])
        covariance = full - share * (np.diag(pi) - np.outer(pi, pi)) / self.n
        np.fill_diagonal(covariance, np.diag(full) * self._fpcs())
        return covariance

    @property
    def std_errors(self) -> np.ndarray | None:
        return None if self.n == 0 else np.sqrt(np.diag(self.covariance))

    def _fpcs(self) -> np.ndarray:
        return np.array([option.fpc for option in self.options])

    @property
    def estimate(self) -> np.ndarray | None:
        """Maximum-likelihood shares on the probability simplex, by EM."""
        if not self.n:
            return None
        if "mle" not in self._cache:
            self._cache["mle"] = simplex_mle(self.design.response_matrix, self.counts)
        return self._cache["mle"]

    @property
    def options(self) -> tuple:
        """Each option's :class:`BinaryEstimate` on its own line λ_j = c_j + t·π_j."""
        if "options" not in self._cache:
            self._cache["options"] = tuple(
                BinaryEstimate(self.design.option_line(j), c, self.n, self.population)
                for j, c in enumerate(self.counts)
            )
        return self._cache["options"]

    def ci(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> tuple[tuple[float, float], ...] | None:
        """Per-option intervals ``((low, high), …)``, or ``None`` with no reports."""
        level, method = check_level(level), check_method(method)
        if not self.n:
            return None
        self._share_intervals(level, method)
        return tuple(o.ci(level, method) for o in self.options)

    def _share_intervals(self, level: float, method: str) -> None:
        """Compute every option's interval in one vectorised call when the options share
        their line's intercept (k-RR, a direct question, a uniform die), as the same
        numbers each option would compute alone; the options keep them."""
        c = np.asarray(self.design.c, dtype=float)
        options = self.options
        if self.population is not None or np.ptp(c) or (level, method) in options[0]._cache:
            return
        low, high, contradicts = affine_interval(
            np.asarray(self.counts), self.n, float(c[0]), float(self.design.t), level, method
        )
        for option, lo, hi, bad in zip(options, low, high, contradicts, strict=True):
            option._cache[(level, method)] = ((float(lo), float(hi)), bool(bad))

    def contradicts_design(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> tuple[bool, ...]:
        return tuple(o.contradicts_design(level, method) for o in self.options)


def simplex_mle(matrix: np.ndarray, counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """Maximum-likelihood π on the simplex for reports ~ Multinomial(n, Mπ), by EM (van
    den Hout & van der Heijden): π ← π ∘ Mᵀ(λ̂ / Mπ), from the uniform π; the likelihood
    never decreases and π stays on the simplex. Where the unbiased estimate M⁻¹λ̂ already
    lies in the simplex it is the MLE and is returned as it is. Vectorised: ``counts``
    may hold one count vector per row (the cross-tabs fit many tables at once)."""
    matrix = np.asarray(matrix, dtype=float)
    counts = np.asarray(counts, dtype=float)
    shape = counts.shape
    counts = counts.reshape(-1, shape[-1])
    lam_hat = counts / counts.sum(axis=-1, keepdims=True)
    unbiased = lam_hat @ np.linalg.inv(matrix).T
    inside = np.all(unbiased >= 0, axis=-1)
    pi = np.full((len(lam_hat), matrix.shape[1]), 1.0 / matrix.shape[1])
    todo = ~inside
    for _ in range(_EM_STEPS):
        if not np.any(todo):
            break
        current = pi[todo]
        rates = current @ matrix.T
        ratio = np.divide(lam_hat[todo], rates, out=np.zeros_like(rates), where=rates > 0)
        updated = current * (ratio @ matrix)
        change = np.max(np.abs(updated - current), axis=-1)
        pi[todo] = updated
        todo[np.flatnonzero(todo)[change < _EM_TOLERANCE]] = False
    # EM creeps towards an empty cell without reaching it: call what is left there 0.
    pi = np.where(pi < _EMPTY_CELL, 0.0, pi)
    pi /= pi.sum(axis=-1, keepdims=True)
    return np.where(inside[:, None], unbiased, pi).reshape(shape)


class NumberStats(NamedTuple):
    """Sufficient statistics of integer reports: count, sum and sum of squares."""

    count: int
    total: int
    total_sq: int

    @classmethod
    def of(cls, stats: Any) -> NumberStats:
        if isinstance(stats, Mapping):
            try:
                stats = (stats["count"], stats["sum"], stats["sum_sq"])
            except KeyError as missing:
                raise ValueError(
                    f"number statistics need count, sum and sum_sq; {missing} is missing"
                ) from None
        if isinstance(stats, str | bytes) or len(stats) != 3:
            raise ValueError("number statistics are (count, sum, sum of squares)")
        count = check_count("count", stats[0])
        total = _whole("sum", stats[1])
        total_sq = check_count("sum of squares", stats[2])
        if count and total_sq * count < total * total:
            raise ValueError("the sum of squares is too small for this sum and count")
        if not count and (total or total_sq):
            raise ValueError("no reports cannot have a non-zero sum")
        return cls(count, total, total_sq)


def _whole(name: str, value: Any) -> int:
    """A whole number of either sign (a sum of reports can be negative)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if not math.isfinite(value) or value != math.floor(value):
        raise ValueError(f"{name} must be a finite whole number, got {value!r}")
    return int(value)


@dataclass(frozen=True, repr=False)
class NumberEstimate:
    """Mean of a bounded number from its reports' count, sum and sum of squares.

    The mean of the reports is unbiased for the mean of the clipped true values (the
    noise has mean 0); its interval is Student's t from the sample variance, displayed
    clipped to [lower, upper].
    """

    design: NumberDesign
    stats: NumberStats
    population: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "population", _check_population(self.population, self.n))

    def __repr__(self) -> str:
        if not self.n:
            return f"NumberEstimate({self.design.name}: no reports)"
        low, high = self.ci() or (None, None)
        return (
            f"NumberEstimate({self.design.name}: mean {self.estimate:.4g}, 95% CI "
            f"[{_fmt(low)}, {_fmt(high)}] (t), SE {_fmt(self.std_error)}, n = {self.n}, "
            f"ε = {_epsilon_text(self.design.epsilon)})"
        )

    @property
    def n(self) -> int:
        return self.stats.count

    @property
    def message(self) -> str | None:
        if not self.n:
            return NO_DATA_MESSAGE
        return None if self.n > 1 else "One report gives a mean but no interval yet."

    @property
    def estimate_unbiased(self) -> float | None:
        return self.stats.total / self.n if self.n else None

    @property
    def estimate(self) -> float | None:
        """The mean, clipped to [lower, upper] for display."""
        mean = self.estimate_unbiased
        return None if mean is None else min(self.design.upper, max(self.design.lower, mean))

    @property
    def sample_variance(self) -> float | None:
        n, total, total_sq = self.stats
        if n < 2:
            return None
        # Exact integer arithmetic before the one division: no cancellation.
        return (total_sq * n - total * total) / (n * (n - 1))

    @property
    def std_error(self) -> float | None:
        """sqrt(s²/n); from a population of N only the true values' part of s² shrinks,
        by (N − n)/(N − 1), not the noise's."""
        var = self.sample_variance
        if var is None:
            return None
        if self.population is not None:
            fpc = (self.population - self.n) / (self.population - 1) if self.population > 1 else 0
            var -= (1 - fpc) * self.true_value_variance
        return math.sqrt(var / self.n)

    @property
    def noise_variance(self) -> float:
        """Variance the privacy noise adds to each report (2α/(1 − α)² for Laplace)."""
        return self.design.noise_variance

    @property
    def true_value_variance(self) -> float | None:
        """The sample variance less the known noise variance (≥ 0): the spread of the
        clipped true values."""
        var = self.sample_variance
        return None if var is None else max(0.0, var - self.noise_variance)

    def _raw_interval(self, level: float) -> tuple[float, float] | None:
        se = self.std_error
        if se is None:
            return None
        half = float(sps.t.isf((1 - level) / 2, self.n - 1)) * se
        return self.estimate_unbiased - half, self.estimate_unbiased + half

    def ci(self, level: float = DEFAULT_LEVEL, method: str = "t") -> tuple[float, float] | None:
        """Student-t interval for the mean, clipped to [lower, upper]; ``None`` below two
        reports. When the whole t interval lies beyond a bound (see
        :meth:`contradicts_design`), it is the bound and one half-width inside it rather
        than a zero-width interval at the bound."""
        level = check_level(level)
        if method not in MEAN_METHODS:
            raise ValueError(f"method must be one of {', '.join(MEAN_METHODS)}; got {method!r}")
        raw = self._raw_interval(level)
        if raw is None:
            return None
        low, high = raw
        lo, hi = self.design.lower, self.design.upper
        half = (high - low) / 2
        if high < lo:
            return float(lo), float(min(hi, lo + half))
        if low > hi:
            return float(max(lo, hi - half)), float(hi)
        return float(max(lo, low)), float(min(hi, high))

    def contradicts_design(self, level: float = DEFAULT_LEVEL, method: str = "t") -> bool:
        """True when the t interval misses [lower, upper]: the reports are not what the
        design produces from values between the bounds."""
        raw = self._raw_interval(check_level(level))
        return raw is not None and (raw[1] < self.design.lower or raw[0] > self.design.upper)

    def warning(self, level: float = DEFAULT_LEVEL, method: str = "t") -> str | None:
        return CONTRADICTION_MESSAGE if self.contradicts_design(level, method) else None
