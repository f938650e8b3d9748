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
    "total_epsilon",
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
