"""Comparisons of a randomized yes/no question between two groups (two categories of a
direct question, the two arms of a design with arms, or the randomized and the direct
arm of a split ballot).

The difference of the two prevalences comes with a Wald interval and two tests of "no
difference": Wald's z and the likelihood ratio of one common prevalence against one per
group (each group with its own design line λ = c + t·q), as ``rr`` and ``RRreg`` users
test group differences.

References
----------
.. [1] Y. Pawitan, "In All Likelihood", Oxford, 2001, §2.9 and §9.3 (Wald and
   likelihood-ratio tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special
from scipy import stats as sps

from estimator.arms import ArmsEstimate
from estimator.estimates import BinaryEstimate
from estimator.intervals import DEFAULT_LEVEL, check_level, z_value
from estimator.params import probability

_XTOL = 1e-12


@dataclass(frozen=True)
class Difference:
    """Group a minus group b, with its interval: what every comparison gives."""

    estimate_a: float
    estimate_b: float
    difference: float
    std_error: float
    ci_low: float
    ci_high: float
    level: float

    def ci(self) -> tuple[float, float]:
        return self.ci_low, self.ci_high

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.estimate_a,
            "b": self.estimate_b,
            "difference": self.difference,
            "std_error": self.std_error,
            "ci": [self.ci_low, self.ci_high],
            "level": self.level,
        }


@dataclass(frozen=True)
class Comparison(Difference):
    """Prevalence in group a minus group b, with interval and p-values."""

    wald_p_value: float
    lr_p_value: float

    @property
    def p_value(self) -> float:
        """The p-value shown beside the interval: Wald's, which the interval inverts."""
        return self.wald_p_value

    def to_dict(self) -> dict[str, Any]:
        return super().to_dict() | {
            "wald_p_value": self.wald_p_value,
            "lr_p_value": self.lr_p_value,
        }


# A group's estimate of a prevalence: one design line, or a design with arms (π and a
# second parameter, profiled out).
Prevalence = BinaryEstimate | ArmsEstimate


def prevalence_std_error(est: Prevalence) -> float:
    """The standard error of the prevalence (π of a design with arms)."""
    return est.std_error(est.design.parameter_names[0]) if est.design.has_arms else est.std_error


def profile_loglik(est: Prevalence, q: float) -> float:
    """The group's log-likelihood at prevalence q, maximized over any other parameter."""
    if est.design.has_arms:
        return est.profile(0, q)[1]
    lam = min(1.0, max(0.0, est.design.c + est.design.t * q))
    return float(special.xlogy(est.yes_count, lam) + special.xlogy(est.n - est.yes_count, 1 - lam))


def _loglik(estimates: Sequence[Prevalence], qs: Sequence[float]) -> float:
    return sum(profile_loglik(est, q) for est, q in zip(estimates, qs, strict=True))


def lr_p_value(a: Prevalence, b: Prevalence) -> float:
    """Likelihood-ratio test of q_a = q_b (q in [0, 1]; a design with arms' other
    parameter free in each group), against χ²₁."""
    separate = _loglik((a, b), (a.estimate, b.estimate))
    res = optimize.minimize_scalar(
        lambda q: -_loglik((a, b), (q, q)),
        bounds=(0.0, 1.0),
        method="bounded",
        options={"xatol": _XTOL},
    )
    common = max(-float(res.fun), *(_loglik((a, b), (q, q)) for q in (0.0, 1.0)))
    return float(sps.chi2.sf(max(0.0, 2 * (separate - common)), 1))


def compare(
    a: Prevalence, b: Prevalence, level: float = DEFAULT_LEVEL, *, clipped: bool = True
) -> Comparison:
    """q_a − q_b of two independent groups (each possibly with its own design; with a
    design with arms, its π and its other parameter estimated in each group). With
    ``clipped`` false the Wald difference is that of the unbiased estimates of two design
    lines, which may leave [0, 1] (and its interval [−1, 1]); the likelihood ratio keeps
    q in [0, 1]."""
    level = check_level(level)
    if not (a.has_data and b.has_data):
        raise ValueError("both groups need reports to be compared")
    value_a, value_b = (e.estimate if clipped else e.estimate_unbiased for e in (a, b))
    difference = value_a - value_b
    se = math.hypot(prevalence_std_error(a), prevalence_std_error(b))
    half = z_value(level) * se
    if se > 0:
        wald = float(2 * sps.norm.sf(abs(difference) / se))
    else:
        wald = 1.0 if difference == 0 else 0.0
    low, high = difference - half, difference + half
    return Comparison(
        estimate_a=value_a,
        estimate_b=value_b,
        difference=difference,
        std_error=se,
        ci_low=max(-1.0, low) if clipped else low,
        ci_high=min(1.0, high) if clipped else high,
        wald_p_value=wald,
        lr_p_value=lr_p_value(a, b),
        level=level,
    )


@dataclass(frozen=True)
class MeanComparison(Difference):
    """Mean in group a minus group b (a split ballot's randomized and direct ballots),
    with Welch's t interval and test. Means have no likelihood-ratio test here: the noise
    law is known, but not the law of the true values it is added to."""

    df: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return super().to_dict() | {"df": self.df, "p_value": self.p_value}


def compare_means(a: Any, b: Any, level: float = DEFAULT_LEVEL) -> MeanComparison:
    """Mean a − mean b of two independent groups of reports (each a
    :class:`~estimator.estimates.NumberEstimate`, with or without noise): the unbiased
    means, the standard error √(SE_a² + SE_b²) and Welch–Satterthwaite's degrees of
    freedom, since the noise makes the two groups' variances unequal by design."""
    level = check_level(level)
    if a.std_error is None or b.std_error is None:
        raise ValueError("both groups need at least two reports to compare their means")
    difference = a.estimate_unbiased - b.estimate_unbiased
    va, vb = a.std_error**2, b.std_error**2
    se = math.sqrt(va + vb)
    if se > 0:
        df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
        half = float(sps.t.isf((1 - level) / 2, df)) * se
        p_value = float(2 * sps.t.sf(abs(difference) / se, df))
    else:
        df, half = float(a.n + b.n - 2), 0.0
        p_value = 1.0 if difference == 0 else 0.0
    return MeanComparison(
        estimate_a=a.estimate_unbiased,
        estimate_b=b.estimate_unbiased,
        difference=difference,
        std_error=se,
        df=df,
        ci_low=difference - half,
        ci_high=difference + half,
        p_value=p_value,
        level=level,
    )


def compare_arms(est: ArmsEstimate, level: float = DEFAULT_LEVEL) -> Comparison:
    """The two arms of a design with arms against each other: the prevalence read from
    each arm alone as if everyone followed the coins (:meth:`ArmsDesign.compliant_lines`),
    arm 0 minus arm 1. Following the coins makes both read the same π, so a difference
    says that some respondents did not — the design's own detection (t < 1, γ > 0) asked
    arm against arm. Comparing the arms' raw yes rates would say nothing: they differ by
    design. The readings are the unbiased (λ̂ − c)/t of each arm's line, unclipped: a
    reading below 0 or above 1 is itself a sign that the coins were not followed, and
    clipping it would hide part of the difference from the Wald test."""
    lines = est.design.compliant_lines()
    if lines is None:
        raise ValueError(
            "this design's arms do not each estimate the prevalence: they cannot be compared"
        )
    a, b = (
        line.estimate(int(yes), int(n))
        for line, yes, n in zip(lines, est.yes, est.per_arm, strict=True)
    )
    return compare(a, b, level, clipped=False)


def check_direct_share(share: Any) -> float:
    """A split ballot's direct share: strictly between 0 and 1."""
    share = probability("direct_share", 0.5, "", "").check(share)
    if not 0 < share < 1:
        raise ValueError(f"direct_share must be strictly between 0 and 1, got {share!r}")
    return float(share)


@dataclass(frozen=True)
class SplitBallot:
    """A randomized question of which a share was asked directly (told so before
    answering): the randomized estimate, the direct one and how far they differ — "did
    randomized response help?" (a positive difference: more admitted under RR)."""

    randomized: BinaryEstimate
    direct: BinaryEstimate

    def comparison(self, level: float = DEFAULT_LEVEL) -> Comparison:
        return compare(self.randomized, self.direct, level)


def split_ballot(randomized: BinaryEstimate, direct_yes: int, direct_n: int) -> SplitBallot:
    """The split ballot from the randomized estimate and the direct arm's counts."""
    from estimator.designs import DirectBinary

    return SplitBallot(randomized, DirectBinary().estimate(direct_yes, direct_n))


def simulate_split(
    design: Any, share: float, true_answers: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(direct?, report) per respondent: the direct share answers truthfully."""
    share = check_direct_share(share)
    direct = rng.random(true_answers.shape) < share
    reports = np.where(direct, true_answers, design.simulate(true_answers, rng))
    return direct, reports
