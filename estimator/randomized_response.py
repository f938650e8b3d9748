"""Randomized response for binary questions: designs, privacy loss and inference.

Pure numpy/scipy (no Django) so that the maths can be read, tested and reused on its own.
A *design* knows its response matrix, its privacy loss ε, how to simulate a respondent
and how to turn counts of reports into an estimate of the true prevalence q.

Every binary design here is affine: P(report yes | x) = c + t·x, so the expected yes-rate
is λ = c + t·q and the unbiased estimator is q̂ = (λ̂ − c)/t.

References
----------
.. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", JASA 60(309), 1965.
.. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9, 2014, §3.2 (randomized response, ε = ln 3).
.. [3] A. Agresti and B. Coull, "Approximate is better than 'exact' for interval
   estimation of binomial proportions", The American Statistician 52(2), 1998.
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
        """Privacy loss ε = ln of the worst ratio P(r|x)/P(r|x') over reports r.

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

    def lambda_for(self, q: float | np.ndarray) -> float | np.ndarray:
        """Expected yes-rate λ = c + t·q for true prevalence q."""
        return self.c + self.t * q

    def posterior_yes(self, prior: float, report: int = 1) -> float:
        """An adversary's P(x = 1 | report) for prior P(x = 1) = ``prior`` (Bayes' rule)."""
        prior = _check_probability("prior", prior)
        like1, like0 = self.response_matrix[report, 1], self.response_matrix[report, 0]
        denominator = prior * like1 + (1 - prior) * like0
        return float(prior * like1 / denominator) if denominator else prior

    def simulate(self, true_answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomized reports (0/1) for an array of true answers (0/1)."""
        true_answers = np.asarray(true_answers)
        p_yes = np.where(true_answers == 1, self.p_yes_given_1, self.p_yes_given_0)
        return (rng.random(true_answers.shape) < p_yes).astype(np.int8)

    def estimate(self, yes_count: int, n: int) -> BinaryEstimate:
        """Estimate the true prevalence from ``yes_count`` 'yes' reports out of ``n``."""
        return BinaryEstimate(design=self, yes_count=int(yes_count), n=int(n))

    def params(self) -> dict[str, float]:
        raise NotImplementedError


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
    its negation. ε = |ln(p/(1−p))|; for a given ε the optimal binary mechanism."""

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
    ``pi``."""

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
    """Basic composition: a respondent answering every question loses Σ εᵢ."""
    return float(sum(d.epsilon for d in designs))


@dataclass(frozen=True)
class BinaryEstimate:
    """Estimate of a true prevalence from randomized yes/no reports.

    Like :func:`scipy.stats.binomtest`'s result: attributes plus :meth:`ci`.
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
    def raw_yes_rate(self) -> float | None:
        """λ̂ = k/n, or ``None`` with no reports."""
        return self.yes_count / self.n if self.n else None

    @property
    def estimate_unbiased(self) -> float | None:
        """q̂ = (λ̂ − c)/t: unbiased, may fall outside [0, 1]."""
        lam = self.raw_yes_rate
        return None if lam is None else (lam - self.design.c) / self.design.t

    @property
    def estimate(self) -> float | None:
        """q̂ clipped to [0, 1]: the maximum-likelihood estimate."""
        q = self.estimate_unbiased
        return None if q is None else min(1.0, max(0.0, q))

    @property
    def std_error(self) -> float | None:
        """sqrt(λ̂(1 − λ̂)/n)/|t|."""
        lam = self.raw_yes_rate
        if lam is None:
            return None
        return math.sqrt(lam * (1 - lam) / self.n) / abs(self.design.t)

    def ci(
        self, level: float = DEFAULT_LEVEL, method: str = DEFAULT_METHOD
    ) -> tuple[float, float] | None:
        """Confidence interval for q: an interval for λ mapped through q = (λ − c)/t and
        clipped to [0, 1]. ``None`` when there are no reports."""
        level, method = check_level(level), check_method(method)
        if not self.n:
            return None
        key = (level, method)
        if key not in self._cache:
            low, high = _lambda_interval(self, level, method)
            q1, q2 = sorted(
                ((low - self.design.c) / self.design.t, (high - self.design.c) / self.design.t)
            )
            self._cache[key] = (min(1.0, max(0.0, q1)), min(1.0, max(0.0, q2)))
        return self._cache[key]


def _lambda_interval(est: BinaryEstimate, level: float, method: str) -> tuple[float, float]:
    k, n = est.yes_count, est.n
    if method in ("wilson", "exact"):
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method=method)
        return float(ci.low), float(ci.high)
    if method == "wald":
        lam = k / n
        half = stats.norm.ppf(0.5 + level / 2) * math.sqrt(lam * (1 - lam) / n)
        return lam - half, lam + half
    return _truncated_beta_interval(est, level)


def _truncated_beta_interval(est: BinaryEstimate, level: float) -> tuple[float, float]:
    """Equal-tailed posterior interval for λ under a uniform prior on q.

    A uniform prior on q in [0, 1] is a uniform prior on λ in [c, c + t] (or [c + t, c]
    when t < 0), so the posterior of λ is Beta(k + 1, n − k + 1) truncated to that range.
    The tail masses are computed on whichever side of the distribution keeps precision.
    """
    posterior = stats.beta(est.yes_count + 1, est.n - est.yes_count + 1)
    lo, hi = sorted((est.design.c, est.design.c + est.design.t))
    alpha = 1 - level
    s_lo, s_hi = posterior.sf(lo), posterior.sf(hi)
    f_lo, f_hi = posterior.cdf(lo), posterior.cdf(hi)
    if f_lo < 0.5:
        mass = f_hi - f_lo
        return (
            float(posterior.ppf(f_lo + alpha / 2 * mass)),
            float(posterior.ppf(f_hi - alpha / 2 * mass)),
        )
    mass = s_lo - s_hi
    return (
        float(posterior.isf(s_lo - alpha / 2 * mass)),
        float(posterior.isf(s_hi + alpha / 2 * mass)),
    )
