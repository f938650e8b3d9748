"""Randomized response for binary questions: designs, privacy loss, inference, planning.

Pure numpy/scipy (no Django) so that the maths can be read, tested and reused on its own.
A *design* knows its response matrix, its privacy loss ε, how to simulate a respondent
and how to turn counts of reports into an estimate of the true prevalence q.

Every binary design here is affine: P(report yes | x) = c + t·x, so the expected yes-rate
is λ = c + t·q and the unbiased estimator is q̂ = (λ̂ − c)/t [1]_. Intervals for q are
intervals for the binomial λ mapped through that line and clipped to [0, 1].

References
----------
.. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", JASA 60(309):63–69, 1965.
.. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3–4), 2014, §3.2 (randomized response, ε = ln 3)
   and §3.5 (composition).
.. [3] E. B. Wilson, "Probable inference, the law of succession, and statistical
   inference", JASA 22(158):209–212, 1927.
.. [4] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26(4):404–413, 1934.
.. [5] A. Agresti and B. A. Coull, "Approximate is better than 'exact' for interval
   estimation of binomial proportions", The American Statistician 52(2):119–126, 1998.
.. [6] L. D. Brown, T. T. Cai and A. DasGupta, "Interval estimation for a binomial
   proportion", Statistical Science 16(2):101–133, 2001.
.. [7] P. Kairouz, S. Oh and P. Viswanath, "Extremal mechanisms for local differential
   privacy", JMLR 17(17):1–51, 2016.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy import stats

CI_METHODS = ("wilson", "exact", "wald", "jeffreys")
DEFAULT_METHOD = "wilson"
DEFAULT_LEVEL = 0.95
NO_DATA_MESSAGE = "No reports yet: an estimate needs at least one answer."
# Bisection halves the lower tail mass of the HPD interval: 2⁻⁴⁰ is far below float noise.
_BISECTION_STEPS = 40
_SMALLEST_TAIL = 1e-300


def _check_probability(name: str, value: float) -> float:
    value = float(value)
    if not (0.0 <= value <= 1.0) or math.isnan(value):
        raise ValueError(f"{name} must be a probability between 0 and 1, got {value!r}")
    return value


def check_level(level: float) -> float:
    """Validate a confidence level: strictly between 0 and 1."""
    level = float(level)
    if not (0.0 < level < 1.0) or math.isnan(level):
        raise ValueError(f"level must be strictly between 0 and 1, got {level!r}")
    return level


def check_method(method: str) -> str:
    """Validate a confidence-interval method name."""
    if method not in CI_METHODS:
        raise ValueError(f"method must be one of {', '.join(CI_METHODS)}; got {method!r}")
    return method


def _z(level: float) -> float:
    return float(stats.norm.isf((1 - level) / 2))


@dataclass(frozen=True)
class BinaryDesign:
    """A randomized-response design for a yes/no question.

    Subclasses set ``p_yes_given_1`` and ``p_yes_given_0``; everything else (ε, the
    affine inverse, simulation, estimation) follows from those two numbers.
    """

    name: ClassVar[str] = "binary"
    output_values: ClassVar[tuple[int, ...]] = (0, 1)

    @property
    def p_yes_given_1(self) -> float:
        raise NotImplementedError

    @property
    def p_yes_given_0(self) -> float:
        raise NotImplementedError

    def __post_init__(self) -> None:
        if self.t == 0:
            raise ValueError(
                "this design reports 'yes' equally often whatever the true answer, "
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
        """Matrix M with M[report, truth] = P(report | truth), reports and truths (0, 1)."""
        a, b = self.p_yes_given_1, self.p_yes_given_0
        return np.array([[1 - b, 1 - a], [b, a]])

    @property
    def epsilon(self) -> float:
        """Privacy loss ε = ln max over reports r of P(r|x)/P(r|x') (Dwork & Roth [2]_).

        ``math.inf`` when some report is possible under one true answer and impossible
        under the other: that report then reveals the true answer.
        """
        worst = 1.0
        for row in self.response_matrix:
            hi, lo = max(row), min(row)
            if lo == 0:
                return math.inf
            worst = max(worst, hi / lo)
        return math.log(worst)

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)

    @property
    def lambda_range(self) -> tuple[float, float]:
        """The yes-rates λ that some prevalence q in [0, 1] can produce, low to high."""
        low, high = sorted((self.c, self.c + self.t))
        return low, high

    def lambda_for(self, q: float | np.ndarray) -> float | np.ndarray:
        """Expected yes-rate λ = c + t·q for true prevalence q."""
        return self.c + self.t * q

    def posterior_yes(self, prior: float, report: int = 1) -> float:
        """An adversary's belief P(x = 1 | report) given the prior P(x = 1) = ``prior``.

        Bayes' rule on the response matrix: with the two fair coins and a prior of 1/2,
        a "yes" moves the odds from 1:1 to 3:1, i.e. P(x = 1 | yes) = 3/4 ([2]_, §3.2).

        Examples
        --------
        >>> ForcedResponse().posterior_yes(0.5)
        0.75
        """
        prior = _check_probability("prior", prior)
        if report not in self.output_values:
            raise ValueError(f"report must be one of {self.output_values}, got {report!r}")
        like1, like0 = self.response_matrix[report, 1], self.response_matrix[report, 0]
        denominator = prior * like1 + (1 - prior) * like0
        return float(prior * like1 / denominator) if denominator else prior

    def simulate(self, true_answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomized reports (0/1) for an array of true answers (0/1).

        The server-side reference the browser sampler is tested against.
        """
        true_answers = np.asarray(true_answers)
        p_yes = np.where(true_answers == 1, self.p_yes_given_1, self.p_yes_given_0)
        return (rng.random(true_answers.shape) < p_yes).astype(np.int8)

    def estimate(self, yes_count: int, n: int) -> BinaryEstimate:
        """Estimate the true prevalence from ``yes_count`` 'yes' reports out of ``n``."""
        return BinaryEstimate(design=self, yes_count=int(yes_count), n=int(n))

    def interval(
        self,
        yes_count: int | np.ndarray,
        n: int | np.ndarray,
        level: float = DEFAULT_LEVEL,
        method: str = DEFAULT_METHOD,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Confidence interval for q, vectorised over counts (``n`` ≥ 1).

        An interval [L, U] for λ from the binomial count, mapped through q = (λ − c)/t
        and clipped to [0, 1]. See :func:`lambda_interval` for the methods.
        """
        level, method = check_level(level), check_method(method)
        low, high = lambda_interval(yes_count, n, level, method, bounds=self.lambda_range)
        q1, q2 = (low - self.c) / self.t, (high - self.c) / self.t
        return np.clip(np.minimum(q1, q2), 0.0, 1.0), np.clip(np.maximum(q1, q2), 0.0, 1.0)

    def params(self) -> dict[str, float]:
        raise NotImplementedError


@dataclass(frozen=True)
class ForcedResponse(BinaryDesign):
    """Forced response: with probability ``p_truth`` answer truthfully, else a coin says
    'yes' with probability ``p_yes``. The defaults are the classic two fair coins, ε = ln 3.

    t = p_truth and c = (1 − p_truth)·p_yes, so q̂ = 2λ̂ − 1/2 with the defaults.

    Examples
    --------
    >>> d = ForcedResponse()
    >>> round(d.epsilon, 4), d.t, d.c
    (1.0986, 0.5, 0.25)
    """

    name: ClassVar[str] = "forced_response"
    p_truth: float = 0.5
    p_yes: float = 0.5

    def __post_init__(self) -> None:
        _check_probability("p_truth", self.p_truth)
        _check_probability("p_yes", self.p_yes)
        super().__post_init__()

    @property
    def p_yes_given_1(self) -> float:
        return self.p_truth + (1 - self.p_truth) * self.p_yes

    @property
    def p_yes_given_0(self) -> float:
        return (1 - self.p_truth) * self.p_yes

    def params(self) -> dict[str, float]:
        return {"p_truth": self.p_truth, "p_yes": self.p_yes}


@dataclass(frozen=True)
class Mirrored(BinaryDesign):
    """Warner's mirrored question [1]_: with probability ``p`` answer the question, else
    its negation. ε = |ln(p/(1−p))|; for a given ε the optimal binary mechanism
    (see :func:`optimal_design`).

    Examples
    --------
    >>> d = Mirrored(p=0.75)
    >>> round(d.epsilon, 4), d.t, d.c
    (1.0986, 0.5, 0.25)
    """

    name: ClassVar[str] = "mirrored"
    p: float = 0.75

    def __post_init__(self) -> None:
        _check_probability("p", self.p)
        super().__post_init__()

    @property
    def p_yes_given_1(self) -> float:
        return self.p

    @property
    def p_yes_given_0(self) -> float:
        return 1 - self.p

    def params(self) -> dict[str, float]:
        return {"p": self.p}


@dataclass(frozen=True)
class UnrelatedQuestion(BinaryDesign):
    """Unrelated question with known prevalence ``pi``: with probability ``p_truth``
    answer the sensitive question, else an innocuous one that is true with probability
    ``pi``. The same estimator as forced response with p_yes = π: t = p_truth,
    c = (1 − p_truth)·π."""

    name: ClassVar[str] = "unrelated_question"
    p_truth: float = 0.5
    pi: float = 0.5

    def __post_init__(self) -> None:
        _check_probability("p_truth", self.p_truth)
        _check_probability("pi", self.pi)
        super().__post_init__()

    @property
    def p_yes_given_1(self) -> float:
        return self.p_truth + (1 - self.p_truth) * self.pi

    @property
    def p_yes_given_0(self) -> float:
        return (1 - self.p_truth) * self.pi

    def params(self) -> dict[str, float]:
        return {"p_truth": self.p_truth, "pi": self.pi}


DESIGNS: dict[str, type[BinaryDesign]] = {
    cls.name: cls for cls in (ForcedResponse, Mirrored, UnrelatedQuestion)
}


def design_from_params(name: str, params: dict[str, float]) -> BinaryDesign:
    """Build a design from its name and parameters (as stored or sent in the API)."""
    try:
        cls = DESIGNS[name]
    except KeyError:
        raise ValueError(f"unknown design {name!r}; choose one of {', '.join(DESIGNS)}") from None
    allowed = set(cls.__dataclass_fields__)
    unknown = set(params) - allowed
    if unknown:
        raise ValueError(f"unknown parameter(s) for {name}: {', '.join(sorted(unknown))}")
    return cls(**params)


def total_epsilon(designs: list[BinaryDesign]) -> float:
    """Total privacy loss of answering every question: Σ εᵢ.

    Basic sequential composition (Dwork & Roth [2]_, Theorem 3.16); one question without
    privacy makes the total ∞. Estimates, dashboards and exports add nothing: they are
    post-processing of the already randomized reports (ibid., Proposition 2.1).

    Examples
    --------
    >>> round(total_epsilon([ForcedResponse(), Mirrored(p=0.75)]), 4)
    2.1972
    """
    return float(sum(d.epsilon for d in designs))


# --- Intervals for the binomial λ -------------------------------------------------------


def lambda_interval(
    yes_count: int | np.ndarray,
    n: int | np.ndarray,
    level: float = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided interval for a binomial proportion λ from ``yes_count`` of ``n`` ≥ 1.

    Vectorised over the counts, so the coverage benchmark runs the very code the app uses.

    Methods
    -------
    ``wilson``
        Score interval of Wilson [3]_; the closed form scipy's
        ``binomtest(k, n).proportion_ci(method="wilson")`` computes. Recommended by
        Agresti & Coull [5]_ and Brown, Cai & DasGupta [6]_.
    ``exact``
        Clopper–Pearson [4]_ by beta quantiles, as ``proportion_ci(method="exact")``.
    ``wald``
        λ̂ ± z·sqrt(λ̂(1 − λ̂)/n): the textbook interval, kept for teaching; it
        under-covers badly near 0 and 1 [6]_.
    ``jeffreys``
        Bayesian: a uniform prior on q is a uniform prior on λ over ``bounds`` =
        [c, c + t], so the posterior of λ is Beta(k + 1, n − k + 1) truncated to
        ``bounds`` (the Beta-posterior construction of [6]_ §4.1.2 with the design's
        support). The interval is the highest-posterior-density (shortest) one, not the
        equal-tailed one: an equal-tailed interval can never contain q = 0 or 1, and
        excludes the most probable value when it sits at or near a boundary. The HPD
        interval contains the posterior mode (the clipped estimate), is anchored at a
        boundary, [c, Q(level)] or [Q(1 − level), c + t], when the density there is
        high enough, and is close to equal-tailed when the data are far from both.
    """
    k, n = np.asarray(yes_count, dtype=float), np.asarray(n, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("intervals need n >= 1 and 0 <= yes_count <= n")
    z = _z(level)
    if method == "wilson":
        centre, spread = k + z * z / 2, z * np.sqrt(k * (n - k) / n + z * z / 4)
        return np.clip((centre - spread) / (n + z * z), 0, 1), np.clip(
            (centre + spread) / (n + z * z), 0, 1
        )
    if method == "exact":
        alpha = 1 - level
        low = np.where(k == 0, 0.0, stats.beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1))
        high = np.where(k == n, 1.0, stats.beta.isf(alpha / 2, k + 1, np.maximum(n - k, 1)))
        return low, high
    if method == "wald":
        lam = k / n
        half = z * np.sqrt(lam * (1 - lam) / n)
        return lam - half, lam + half
    return _truncated_beta_interval(k, n, level, bounds)


def _truncated_beta_interval(
    k: np.ndarray, n: np.ndarray, level: float, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Highest-posterior-density interval of the truncated Beta posterior.

    Every interval [Q(u), Q(u + level)] holds the right mass; the HPD one has equal
    density at both ends, and the density difference grows with the lower tail mass u
    (the posterior is unimodal), so u is found by bisection on [0, 1 − level]. When the
    density at a boundary already beats the other end, u is 0 or 1 − level: the
    interval is anchored at that boundary.
    """
    lo, hi = bounds
    quantile = _truncated_beta_quantile(k, n, lo, hi)
    log_density = stats.beta(k + 1, n - k + 1).logpdf

    def excess(u: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.nan_to_num(
                log_density(quantile(u)) - log_density(quantile(u + level)), nan=0.0
            )

    below, above = np.zeros_like(k), np.full_like(k, 1 - level)
    anchored_low, anchored_high = excess(below) >= 0, excess(above) <= 0
    for _ in range(_BISECTION_STEPS):
        middle = (below + above) / 2
        upper_half = excess(middle) < 0
        below, above = np.where(upper_half, middle, below), np.where(upper_half, above, middle)
    u = np.where(anchored_low, 0.0, np.where(anchored_high, 1 - level, (below + above) / 2))
    low, high = quantile(u), quantile(u + level)
    return np.where(anchored_low, lo, low), np.where(anchored_high, hi, high)


def _truncated_beta_quantile(k: np.ndarray, n: np.ndarray, lo: float, hi: float):
    """Quantile function of Beta(k + 1, n − k + 1) truncated to [lo, hi].

    Tail masses are taken on the side of the distribution where they are small numbers
    (cdf below the bulk, sf above it), so they keep their precision. When the range
    holds too little mass to represent precisely (< 1e-250), the truncated density is, to first
    order, exponential from the boundary nearest the bulk, with the log-density's slope
    there as its rate.
    """
    posterior = stats.beta(k + 1, n - k + 1)
    f_lo, f_hi, s_lo, s_hi = (
        posterior.cdf(lo),
        posterior.cdf(hi),
        posterior.sf(lo),
        posterior.sf(hi),
    )
    use_sf = f_lo >= 0.5
    mass = np.where(use_sf, s_lo - s_hi, f_hi - f_lo)
    bulk_below = k / n <= lo
    edge = np.where(bulk_below, lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.abs(k / edge - (n - k) / (1 - edge))

    def quantile(p: float | np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            # scipy's beta quantiles overflow on subnormal tail masses: those are the edge.
            tail = np.where(use_sf, s_lo - p * mass, f_lo + p * mass)
            at_edge = tail < _SMALLEST_TAIL
            # Both sides are evaluated everywhere; where unused they get a harmless 1/2.
            inside = np.where(
                use_sf,
                posterior.isf(np.where(use_sf & ~at_edge, tail, 0.5)),
                posterior.ppf(np.where(use_sf | at_edge, 0.5, tail)),
            )
            inside = np.where(at_edge, np.where(use_sf, hi, lo), inside)
            from_edge = np.where(bulk_below, -np.log1p(-p), np.log(p)) / rate
        return np.clip(np.where(mass > 1e-250, inside, edge + from_edge), lo, hi)

    return quantile


# --- Estimates --------------------------------------------------------------------------


@dataclass(frozen=True)
class BinaryEstimate:
    """Estimate of a true prevalence from randomized yes/no reports.

    Like :func:`scipy.stats.binomtest`'s result: attributes plus :meth:`ci`. With no
    reports (n = 0) every number is ``None`` and :attr:`message` says why.

    Examples
    --------
    >>> est = ForcedResponse().estimate(yes_count=400, n=1000)
    >>> round(est.estimate, 3), round(est.std_error, 4)
    (0.3, 0.031)
    >>> [round(x, 3) for x in est.ci(0.95, "wilson")]
    [0.24, 0.361]
    """

    design: BinaryDesign
    yes_count: int
    n: int
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.n < 0 or self.yes_count < 0 or self.yes_count > self.n:
            raise ValueError(f"need 0 <= yes_count <= n, got {self.yes_count} of {self.n}")

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
        """q̂ = (λ̂ − c)/t (Warner [1]_): unbiased, may fall outside [0, 1]."""
        lam = self.raw_yes_rate
        return None if lam is None else (lam - self.design.c) / self.design.t

    @property
    def estimate(self) -> float | None:
        """q̂ clipped to [0, 1]: the maximum-likelihood estimate under q ∈ [0, 1]."""
        q = self.estimate_unbiased
        return None if q is None else min(1.0, max(0.0, q))

    @property
    def std_error(self) -> float | None:
        """Estimated standard error of q̂: sqrt(λ̂(1 − λ̂)/n)/|t| (Warner [1]_)."""
        lam = self.raw_yes_rate
        if lam is None:
            return None
        return math.sqrt(lam * (1 - lam) / self.n) / abs(self.design.t)

    def ci(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> tuple[float, float] | None:
        """Confidence interval ``(low, high)`` for q, or ``None`` with no reports.

        Always contains :attr:`estimate`; see :func:`lambda_interval` for the methods.
        """
        level, method = check_level(level), check_method(method)
        if not self.n:
            return None
        key = (level, method)
        if key not in self._cache:
            low, high = self.design.interval(self.yes_count, self.n, level, method)
            self._cache[key] = (float(low), float(high))
        return self._cache[key]


# --- Planning ---------------------------------------------------------------------------


def _check_q(q: float | None) -> float | None:
    return None if q is None else _check_probability("q", q)


def _report_variance(design: BinaryDesign, q: float | None) -> float:
    """λ(1 − λ) at prevalence q, or its maximum over q ∈ [0, 1] when q is unknown."""
    if q is not None:
        lam = design.lambda_for(q)
        return lam * (1 - lam)
    low, high = design.lambda_range
    lam = min(max(0.5, low), high)
    return lam * (1 - lam)


def sample_size(
    design: BinaryDesign | None,
    half_width: float,
    level: float = DEFAULT_LEVEL,
    q: float | None = None,
) -> int:
    """Respondents needed for a CI half-width of ``half_width`` at ``level``.

    From the normal approximation z·sqrt(λ(1 − λ)/n)/|t| ≤ h, at the planned prevalence
    ``q`` or, when ``q`` is ``None``, at the worst q in [0, 1] (λ(1 − λ) ≤ 1/4, the
    "1.96/√n" rule). ``design=None`` means asking directly (t = 1, c = 0).

    Examples
    --------
    >>> sample_size(ForcedResponse(), 0.05), sample_size(None, 0.05)
    (1537, 385)
    """
    level = check_level(level)
    if not 0 < half_width <= 1:
        raise ValueError(f"half_width must be in (0, 1], got {half_width!r}")
    q = _check_q(q)
    design = design or ForcedResponse(p_truth=1.0)
    sd = math.sqrt(_report_variance(design, q)) / abs(design.t)
    return max(1, math.ceil((_z(level) * sd / half_width) ** 2 - 1e-9))


def variance_price(design: BinaryDesign, q: float | None = None) -> float:
    """How many times more respondents the design needs than asking directly.

    Var(q̂) = λ(1 − λ)/(t²n) against q(1 − q)/n; at the worst case over q when ``q`` is
    ``None``. The classic two coins cost a factor 4 (t = 1/2). ``math.inf`` at q ∈ {0, 1},
    where a direct answer has no variance at all.
    """
    q = _check_q(q)
    direct = 0.25 if q is None else q * (1 - q)
    if direct == 0:
        return math.inf
    return _report_variance(design, q) / (design.t**2 * direct)


def optimal_design(epsilon: float) -> Mirrored:
    """The binary design with the smallest variance for a privacy loss ε.

    Warner's mirrored question with p = e^ε/(1 + e^ε): among ε-locally-private yes/no
    mechanisms it has the largest slope t = (e^ε − 1)/(e^ε + 1), and binary randomized
    response is optimal for estimating a proportion (Kairouz, Oh & Viswanath [7]_).
    ε = ∞ gives p = 1, asking directly.

    Examples
    --------
    >>> optimal_design(math.log(3))
    Mirrored(p=0.75)
    """
    epsilon = float(epsilon)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive (ε = 0 reveals nothing), got {epsilon!r}")
    return Mirrored(p=round(1 / (1 + math.exp(-epsilon)), 15))
