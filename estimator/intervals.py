"""Intervals for a binomial report rate λ, and for a prevalence q with λ = c + t·q.

Vectorised over counts so that the coverage benchmark runs the very code the app uses.
Every randomized-response estimate in this package ends here: binary designs directly,
each option of a choice design through its own affine line.

References
----------
.. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical
   inference", JASA 22(158):209–212, 1927.
.. [2] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26(4):404–413, 1934.
.. [3] L. D. Brown, T. T. Cai and A. DasGupta, "Interval estimation for a binomial
   proportion", Statistical Science 16(2):101–133, 2001.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
from scipy import stats

# The methods by their names; ``jeffreys`` is the old name of ``uniform_hpd`` (it never
# used the Jeffreys prior) and stays accepted wherever a method is named.
INTERVAL_METHODS = ("wilson", "exact", "wald", "uniform_hpd")
METHOD_ALIASES = {"jeffreys": "uniform_hpd"}
# What the app offers (the API echoes the requested name; ``jeffreys`` stays accepted).
CI_METHODS = INTERVAL_METHODS
DEFAULT_METHOD = "wilson"
DEFAULT_LEVEL = 0.95
NO_DATA_MESSAGE = "No reports yet: an estimate needs at least one answer."
CONTRADICTION_MESSAGE = (
    "The reports contradict the design: no true prevalence makes this report rate likely, "
    "so respondents may not have followed the randomization. Only a one-sided bound is given."
)
# Bisection halves the lower tail mass of the HPD interval: 2⁻⁴⁰ is far below float noise.
_BISECTION_STEPS = 40
_SMALLEST_TAIL = 1e-300
_TINY_MASS = 1e-250


def check_level(level: float) -> float:
    """Validate a confidence level: a real number strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise ValueError(f"level must be a number strictly between 0 and 1, got {level!r}")
    level = float(level)
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be strictly between 0 and 1, got {level!r}")
    return level


def check_method(method: str) -> str:
    """Validate a confidence-interval method name; returns the canonical name."""
    if not isinstance(method, str) or (
        method not in INTERVAL_METHODS and method not in METHOD_ALIASES
    ):
        names = ", ".join((*INTERVAL_METHODS, *METHOD_ALIASES))
        raise ValueError(f"method must be one of {names}; got {method!r}")
    return METHOD_ALIASES.get(method, method)


def check_count(name: str, value: object, *, allow_zero: bool = True) -> int:
    """A count: a non-negative integer (an integral float such as 3.0 is accepted)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    as_float = float(value)
    if not math.isfinite(as_float) or as_float != math.floor(as_float):
        raise ValueError(f"{name} must be a finite whole number, got {value!r}")
    if as_float < (0 if allow_zero else 1):
        raise ValueError(f"{name} must be {'≥ 0' if allow_zero else '≥ 1'}, got {value!r}")
    return int(as_float)


def z_value(level: float) -> float:
    return float(stats.norm.isf((1 - level) / 2))


def lambda_interval(
    yes_count: int | np.ndarray,
    n: int | np.ndarray,
    level: float = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided interval for a binomial proportion λ from ``yes_count`` of ``n`` ≥ 1.

    Methods
    -------
    ``wilson``
        Score interval of Wilson [1]_, the closed form of scipy's
        ``binomtest(k, n).proportion_ci(method="wilson")``, with the end at 0 (k = 0) or
        1 (k = n) exact rather than 1 − 2⁻⁵², so the interval contains the estimate.
    ``exact``
        Clopper–Pearson [2]_ by beta quantiles, as ``proportion_ci(method="exact")``.
    ``wald``
        λ̂ ± z·sqrt(λ̂(1 − λ̂)/n): the textbook interval, kept for teaching [3]_.
    ``uniform_hpd`` (old name ``jeffreys``)
        Bayesian: a uniform prior on q is a uniform prior on λ over ``bounds`` =
        [c, c + t], so the posterior of λ is Beta(k + 1, n − k + 1) truncated to
        ``bounds``; the interval is its highest-posterior-density (shortest) one. It
        contains the posterior mode (the clipped estimate) and is anchored at a boundary
        when the density is highest there. (The Jeffreys interval of [3]_ uses the
        Beta(½, ½) prior and equal tails; this one does not.)
    """
    level, method = check_level(level), check_method(method)
    k, n = np.asarray(yes_count, dtype=float), np.asarray(n, dtype=float)
    for name, values in (("yes_count", k), ("n", n)):
        if np.any(~np.isfinite(values)) or np.any(values != np.floor(values)):
            raise ValueError(f"{name} must be a finite whole number, got {values.tolist()!r}")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("intervals need n >= 1 and 0 <= yes_count <= n")
    z = z_value(level)
    if method == "wilson":
        centre, spread = k + z * z / 2, z * np.sqrt(k * (n - k) / n + z * z / 4)
        low = np.where(k == 0, 0.0, np.clip((centre - spread) / (n + z * z), 0, 1))
        high = np.where(k == n, 1.0, np.clip((centre + spread) / (n + z * z), 0, 1))
        return low, high
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


class AffineInterval(NamedTuple):
    """An interval for q on λ = c + t·q, with whether the data contradict the design."""

    low: np.ndarray
    high: np.ndarray
    contradicts: np.ndarray


def affine_interval(
    yes_count: int | np.ndarray,
    n: int | np.ndarray,
    c: float,
    t: float,
    level: float = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    *,
    shrink: float | np.ndarray = 1.0,
) -> AffineInterval:
    """Interval for q ∈ [0, 1] where the report rate is λ = c + t·q (t ≠ 0).

    An interval for λ is mapped through q = (λ − c)/t and clipped to [0, 1]. Where it
    reaches past an end of [c, c + t] (the reports are at least as extreme as q = 0 or
    q = 1 could make them) that side of the q-interval ends at the boundary, and the other
    end is the farther of the mapped one and the one-sided ``level`` bound of the
    uniform-prior posterior of q: never a zero-width interval. When the λ-interval misses
    [c, c + t] altogether, ``contradicts`` is true: no q explains the data (respondents
    may not follow the coins), and only that one-sided bound is given.

    ``shrink`` multiplies the λ-interval's half-widths about λ̂ (the finite-population
    correction; 1 for an infinite population).
    """
    level, method = check_level(level), check_method(method)
    k, n = np.asarray(yes_count, dtype=float), np.asarray(n, dtype=float)
    lo_lam, hi_lam = sorted((c, c + t))
    low, high = lambda_interval(k, n, level, method, bounds=(lo_lam, hi_lam))
    lam = k / n
    low, high = lam - shrink * (lam - low), lam + shrink * (high - lam)
    if method == "uniform_hpd":
        q1, q2 = (low - c) / t, (high - c) / t
        qlow, qhigh = np.clip(np.minimum(q1, q2), 0, 1), np.clip(np.maximum(q1, q2), 0, 1)
        return AffineInterval(qlow, qhigh, np.zeros(np.shape(qlow), dtype=bool))
    quantile = _truncated_beta_quantile(k, n, lo_lam, hi_lam)
    # One-sided posterior bounds for λ near each end of [c, c + t].
    from_low_end, from_high_end = quantile(level), quantile(1 - level)
    below, above = low <= lo_lam, high >= hi_lam
    lam_low = np.where(below, lo_lam, np.where(above, np.minimum(low, from_high_end), low))
    lam_high = np.where(above, hi_lam, np.where(below, np.maximum(high, from_low_end), high))
    lam_low, lam_high = np.clip(lam_low, lo_lam, hi_lam), np.clip(lam_high, lo_lam, hi_lam)
    contradicts = (high < lo_lam) | (low > hi_lam)
    q1, q2 = (lam_low - c) / t, (lam_high - c) / t
    qlow, qhigh = np.clip(np.minimum(q1, q2), 0, 1), np.clip(np.maximum(q1, q2), 0, 1)
    return AffineInterval(qlow, qhigh, contradicts)


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
    holds too little mass to represent precisely (< 1e-250), the truncated density is, to
    first order, exponential from the boundary nearest the bulk with the log-density's
    slope there as its rate, truncated to the range's width (which matters when the range
    is narrow: a nearly flat density on a sliver).
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
        # Mass of the unit-rate exponential over the range's width, in rate units.
        span = -np.expm1(-rate * (hi - lo))

    def quantile(p: float | np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
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
            # Distance from the edge of the truncated exponential's quantile (p counted
            # from lo upwards); a flat density (rate 0) is uniform on the range.
            share = np.where(bulk_below, p, 1 - p)
            distance = np.where(rate > 0, -np.log1p(-share * span) / rate, share * (hi - lo))
            from_edge = np.where(bulk_below, distance, -distance)
        return np.clip(np.where(mass > _TINY_MASS, inside, edge + from_edge), lo, hi)

    return quantile
