"""Randomized response: the app's entry point to the maths, and planning.

Pure numpy/scipy (no Django). The designs live in :mod:`estimator.designs`, the
intervals in :mod:`estimator.intervals`, the result objects in
:mod:`estimator.estimates`; this module re-exports the names the app has always used
(``BinaryDesign``, ``design_from_params``, ``total_epsilon``, ``CI_METHODS``…) and holds
the planner.

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
from typing import Any

from estimator.designs import (
    KINDS,
    REGISTRY,
    AffineLine,
    BinaryDesign,
    ChoiceDesign,
    ChoiceForcedResponse,
    Composition,
    Crosswise,
    Design,
    DirectBinary,
    DirectChoice,
    DirectNumber,
    ForcedResponse,
    KRandomizedResponse,
    Laplace,
    Mirrored,
    NumberDesign,
    UnrelatedQuestion,
    composition,
    design_declarations,
    make_design,
    matrix_epsilon,
    one_bit_mean_variance,
)
from estimator.estimates import BinaryEstimate, ChoiceEstimate, NumberEstimate, NumberStats
from estimator.intervals import (
    CI_METHODS,
    CONTRADICTION_MESSAGE,
    DEFAULT_LEVEL,
    DEFAULT_METHOD,
    INTERVAL_METHODS,
    METHOD_ALIASES,
    NO_DATA_MESSAGE,
    affine_interval,
    check_level,
    check_method,
    lambda_interval,
)
from estimator.intervals import z_value as _z
from estimator.params import Param

__all__ = [
    "CI_METHODS",
    "CONTRADICTION_MESSAGE",
    "DEFAULT_LEVEL",
    "DEFAULT_METHOD",
    "DESIGNS",
    "INTERVAL_METHODS",
    "KINDS",
    "METHOD_ALIASES",
    "NO_DATA_MESSAGE",
    "REGISTRY",
    "AffineLine",
    "BinaryDesign",
    "BinaryEstimate",
    "ChoiceDesign",
    "ChoiceEstimate",
    "ChoiceForcedResponse",
    "Composition",
    "Crosswise",
    "Design",
    "DirectBinary",
    "DirectChoice",
    "DirectNumber",
    "ForcedResponse",
    "KRandomizedResponse",
    "Laplace",
    "Mirrored",
    "NumberDesign",
    "NumberEstimate",
    "NumberStats",
    "Param",
    "UnrelatedQuestion",
    "affine_interval",
    "check_level",
    "check_method",
    "composition",
    "design_declarations",
    "design_from_params",
    "lambda_interval",
    "make_design",
    "matrix_epsilon",
    "one_bit_mean_variance",
    "optimal_design",
    "sample_size",
    "total_epsilon",
    "variance_price",
]

# The binary designs the app offers today, by name (survey/api.py's choices). Crosswise
# and the other kinds join once the app asks the registry (``REGISTRY``/``make_design``).
DESIGNS: dict[str, type[BinaryDesign]] = {
    cls.name: cls for cls in (ForcedResponse, Mirrored, UnrelatedQuestion)
}


def design_from_params(
    name: str, params: dict[str, Any], kind: str = "binary", *, k: int | None = None
) -> Design:
    """Build a design from its name and parameters (as stored or sent in the API);
    ``kind`` defaults to binary, the only kind the stored questions have today."""
    return make_design(kind, name, params, k=k)


def total_epsilon(designs: list[Design]) -> float:
    """Total privacy loss of answering every randomized question: Σ εᵢ.

    Basic sequential composition (Dwork & Roth, Theorem 3.16); one randomized question
    without privacy makes the total ∞. Directly asked questions are left out (see
    :func:`composition`, which lists them apart). Estimates, dashboards and exports add
    nothing: they are post-processing of the already randomized reports.

    Examples
    --------
    >>> round(total_epsilon([ForcedResponse(), Mirrored(p=0.75)]), 4)
    2.1972
    """
    return composition(designs).epsilon_total


# --- Planning ---------------------------------------------------------------------------


def _check_q(q: float | None) -> float | None:
    return None if q is None else Param("q", "probability", None, "", "").check(q)


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
    response is optimal for estimating a proportion (Kairouz, Oh & Viswanath).
    ε = ∞ gives p = 1, asking directly. The small probability 1 − p = 1/(1 + e^ε) is
    kept exactly, so the design's ε is the one asked for even when p rounds to 1.

    Examples
    --------
    >>> optimal_design(math.log(3))
    Mirrored(p=0.75)
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}")
    epsilon = float(epsilon)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive (ε = 0 reveals nothing), got {epsilon!r}")
    if math.isinf(epsilon):
        return Mirrored(p=1.0)
    lie = 1 / (1 + math.exp(epsilon)) if epsilon < 700 else math.exp(-epsilon)
    if lie == 0:
        raise ValueError(f"epsilon = {epsilon:g} is too large to represent; ask directly")
    # A short decimal p (0.75 for ln 3) when it is the same design to 1e-12 in ε.
    rounded = round(1 - lie, 15)
    if rounded < 1 and abs(math.log(rounded / (1 - rounded)) - epsilon) < 1e-12:
        return Mirrored(p=rounded)
    return Mirrored(p=1 - lie, _lie=lie)
