"""Planning a randomized-response survey: power, sample sizes, the price of privacy.

Everything is a function of a binary design's line λ = c + t·q (P(yes | x) = c + t·x;
see :func:`estimator.regression.binary_line` to read it off any design's response
matrix) and the normal approximation to q̂ = (λ̂ − c)/t, whose variance with n
respondents drawn with replacement is λ(1 − λ)/(t²n) (Warner [1]_).

The power functions compute what R's ``rr::power.rr.test`` computes for the designs
with known coin probabilities [2]_: the test rejects when q̂ is beyond the null value by
z·SE *under the null*, and the power is the probability of that under the alternative,
with the SE *under the alternative*. (For ``forced-known`` and ``mirrored`` rr's Fisher
information t²/(λ(1 − λ)) is exactly this variance.) rr's one-sided test is our
``"greater"``. For n, rr scans n = 1, 2, … until the power is within 0.01 of the target;
here n is the smallest with power at least the target.

References
----------
.. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", JASA 60(309):63–69, 1965.
.. [2] G. Blair, K. Imai and Y.-Y. Zhou, "Design and analysis of the randomized
   response technique", JASA 110(511):1304–1319, 2015, §4 (power analysis); R package
   ``rr``, function ``power.rr.test``.
.. [3] A. Chaudhuri, "Randomized Response and Indirect Questioning Techniques in
   Surveys", Chapman & Hall/CRC, 2011, §2.2 (sampling without replacement).
.. [4] W. G. Cochran, "Sampling Techniques", 3rd ed., Wiley, 1977, §3.4 (finite
   population correction).
"""

from __future__ import annotations

import math

from scipy import stats

from estimator.regression import check_line

ALTERNATIVES = ("two-sided", "greater", "less")
_LARGEST_N = 10**9


def _probability(name: str, value: float) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"{name} must be a probability between 0 and 1, got {value!r}")
    return value


def _check_n(n: float, population: int | None) -> int:
    if isinstance(n, bool) or n != int(n) or n < 1:
        raise ValueError(f"n must be a whole number >= 1, got {n!r}")
    if population is not None:
        if isinstance(population, bool) or population != int(population) or population < 2:
            raise ValueError(f"population must be a whole number >= 2, got {population!r}")
        if n > population:
            raise ValueError(f"n = {n} is more than the population of {population}")
    return int(n)


def finite_population_correction(n: int, population: int | None) -> float:
    """(N − n)/(N − 1): the factor by which sampling without replacement shrinks the
    variance of a sample proportion (Cochran [4]_ §3.4); 1 when N is ``None`` (infinite)."""
    n = _check_n(n, population)
    return 1.0 if population is None else (population - n) / (population - 1)


def std_error(t: float, c: float, q: float, n: int, population: int | None = None) -> float:
    """Standard error of q̂ at true prevalence q with n respondents.

    Drawn with replacement (``population=None``): sqrt(λ(1 − λ)/n)/|t|. Drawn without
    replacement from N people, only the sampling part of the variance shrinks, not the
    coins' (Chaudhuri [3]_ §2.2): the variance is the sum of
    fpc·q(1 − q)/n (which people were asked) and (λ(1 − λ) − t²q(1 − q))/(t²n) (what
    their coins did), so a census (n = N) still leaves the coins' variance.

    Examples
    --------
    >>> round(std_error(0.5, 0.25, 0.3, 1000), 5)
    0.03098
    >>> round(std_error(0.5, 0.25, 0.3, 1000, population=1000), 5)
    0.02739
    """
    t, c = check_line(t, c)
    q = _probability("q", q)
    fpc = finite_population_correction(n, population)
    lam = c + t * q
    sampling = q * (1 - q)
    coins = lam * (1 - lam) / t**2 - sampling
    return math.sqrt((fpc * sampling + coins) / n)


def variance_price(t: float, c: float, q: float | None = None) -> float:
    """How many times more respondents the design needs than asking directly, at q.

    Var(q̂) = λ(1 − λ)/(t²n) against q(1 − q)/n for a direct question: 9.33 at q = 0.1
    and 77 at q = 0.01 for the two fair coins (the worst-case-over-q figure, 4, given
    for ``q=None`` — the worst λ(1 − λ) against ¼ — hides how expensive rare traits
    are). ``math.inf`` at q ∈ {0, 1}.

    Examples
    --------
    >>> round(variance_price(0.5, 0.25, 0.1), 2), round(variance_price(0.5, 0.25, 0.01), 1)
    (9.33, 76.8)
    >>> variance_price(0.5, 0.25)
    4.0
    """
    t, c = check_line(t, c)
    if q is None:
        lam = c + t * _worst_q(t, c)
        return lam * (1 - lam) / (t**2 * 0.25)
    q = _probability("q", q)
    if q in (0.0, 1.0):
        return math.inf
    lam = c + t * q
    return lam * (1 - lam) / (t**2 * q * (1 - q))


def _worst_q(t: float, c: float) -> float:
    """The q in [0, 1] whose λ is nearest ½: it maximises λ(1 − λ)."""
    return min(max((0.5 - c) / t, 0.0), 1.0)


def _check_test(alpha: float, alternative: str) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}"
        )
    return alpha


def _rejection_probability(
    effect: float, se: float, null: float, se_null: float, alpha: float, alternative: str
) -> float:
    """P(estimate beyond the null's critical value), the estimate ~ N(effect, se²)."""
    one_sided = alternative != "two-sided"
    z = float(stats.norm.isf(alpha if one_sided else alpha / 2))

    def above(threshold: float) -> float:
        return float(effect > threshold) if se == 0 else float(stats.norm.sf(threshold, effect, se))

    def below(threshold: float) -> float:
        return (
            float(effect < threshold) if se == 0 else float(stats.norm.cdf(threshold, effect, se))
        )

    if alternative == "greater":
        return above(null + z * se_null)
    if alternative == "less":
        return below(null - z * se_null)
    return above(null + z * se_null) + below(null - z * se_null)


def power_one_sample(
    t: float,
    c: float,
    q: float,
    n: int,
    q_null: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    population: int | None = None,
) -> float:
    """Power of the test of prevalence = ``q_null`` when the truth is ``q``.

    As ``rr::power.rr.test(type = "one.sample")`` [2]_ (whose default null is 0 too).

    Examples
    --------
    >>> round(power_one_sample(0.5, 0.25, q=0.1, n=1000, q_null=0.05), 4)
    0.4269
    """
    t, c = check_line(t, c)
    q, q_null = _probability("q", q), _probability("q_null", q_null)
    alpha = _check_test(alpha, alternative)
    se = std_error(t, c, q, n, population)
    se_null = std_error(t, c, q_null, n, population)
    return _rejection_probability(q, se, q_null, se_null, alpha, alternative)


def power_two_sample(
    t: float,
    c: float,
    q_treated: float,
    q_control: float,
    n: int,
    q_null: float | None = None,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> float:
    """Power of the test of no difference between two groups of ``n`` respondents each.

    As ``rr::power.rr.test(type = "two.sample")`` [2]_: the difference q̂₁ − q̂₀ has
    variance the sum of the groups'; under the null both groups have prevalence
    ``q_null`` (default ``q_control``).

    Examples
    --------
    >>> round(power_two_sample(0.5, 0.25, q_treated=0.3, q_control=0.2, n=1000), 4)
    0.6476
    """
    t, c = check_line(t, c)
    q1, q0 = _probability("q_treated", q_treated), _probability("q_control", q_control)
    q_null = q0 if q_null is None else _probability("q_null", q_null)
    alpha = _check_test(alpha, alternative)
    se = math.hypot(std_error(t, c, q1, n), std_error(t, c, q0, n))
    se_null = math.sqrt(2) * std_error(t, c, q_null, n)
    return _rejection_probability(q1 - q0, se, 0.0, se_null, alpha, alternative)


def _smallest_n(power_at, target: float) -> int:
    """Smallest n with power_at(n) >= target, by doubling then bisection."""
    target = float(target)
    if not 0.0 < target < 1.0:
        raise ValueError(f"power must be strictly between 0 and 1, got {target!r}")
    high = 1
    while power_at(high) < target:
        high *= 2
        if high > _LARGEST_N:
            raise ValueError(
                "no sample size up to a billion reaches this power: the difference to "
                "detect is too small for this design (or lies in the other direction)"
            )
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if power_at(middle) < target else (low, middle)
    return high


def n_for_power_one_sample(
    t: float,
    c: float,
    q: float,
    power: float = 0.8,
    q_null: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> int:
    """Respondents needed for the one-sample test to reach ``power`` at prevalence q.

    Examples
    --------
    >>> n_for_power_one_sample(0.5, 0.25, q=0.1, q_null=0.05)
    2544
    """
    power_one_sample(t, c, q, 1, q_null, alpha, alternative)  # validates the inputs
    return _smallest_n(lambda n: power_one_sample(t, c, q, n, q_null, alpha, alternative), power)


def n_for_power_two_sample(
    t: float,
    c: float,
    q_treated: float,
    q_control: float,
    power: float = 0.8,
    q_null: float | None = None,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> int:
    """Respondents needed *per group* for the two-sample test to reach ``power``.

    Examples
    --------
    >>> n_for_power_two_sample(0.5, 0.25, q_treated=0.3, q_control=0.2)
    1441
    """
    args = (t, c, q_treated, q_control)
    power_two_sample(*args, 1, q_null, alpha, alternative)  # validates the inputs
    return _smallest_n(lambda n: power_two_sample(*args, n, q_null, alpha, alternative), power)


def n_for_half_width(
    t: float,
    c: float,
    half_width: float,
    level: float = 0.95,
    q: float | None = None,
    population: int | None = None,
) -> int:
    """Respondents needed for a confidence-interval half-width, optionally from N people.

    z·SE ≤ h at the planned q (or the worst q when ``None``). Without replacement the
    variance is [A·(N − n)/(N − 1) + B]/n with A = q(1 − q) and B the coins' part (see
    :func:`std_error`), so n ≥ (A·N/(N − 1) + B)/(v + A/(N − 1)) with v = (h/z)².
    It can exceed N when the coins alone are too noisy for h: then raise.

    Examples
    --------
    >>> n_for_half_width(0.5, 0.25, 0.05), n_for_half_width(0.5, 0.25, 0.05, population=2000)
    (1537, 1290)
    """
    t, c = check_line(t, c)
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level!r}")
    if isinstance(half_width, bool) or not 0.0 < float(half_width) <= 1.0:
        raise ValueError(f"half_width must be in (0, 1], got {half_width!r}")
    if q is None:
        q = _worst_q(t, c)
    q = _probability("q", q)
    lam = c + t * q
    sampling, coins = q * (1 - q), lam * (1 - lam) / t**2 - q * (1 - q)
    v = (half_width / stats.norm.isf((1 - level) / 2)) ** 2
    if v == 0 or (sampling + coins) / v > _LARGEST_N:
        raise ValueError(
            f"half_width {half_width!r} is too small: it would take more than "
            f"{_LARGEST_N:.0e} respondents"
        )
    if population is None:
        return max(1, math.ceil((sampling + coins) / v - 1e-9))
    _check_n(1, population)
    n = (sampling * population / (population - 1) + coins) / (v + sampling / (population - 1))
    if n > population + 1e-9:
        raise ValueError(
            f"even asking all {population} people cannot reach ±{half_width}: the coins "
            "alone add more noise than that"
        )
    return max(1, math.ceil(n - 1e-9))
