"""Designs with arms: each respondent's device draws an arm (independently of the truth)
and randomizes with that arm's parameters, so that two report rates identify two unknowns
— whether respondents followed the coins, or an innocuous prevalence nobody knows.

A report of a design with two arms is one integer, ``arm · 2 + answer`` (answer 0 = "no",
1 = "yes"); the design encodes and decodes it, so tallies and storage see a plain value.

Every model here has two free parameters θ = (θ₀, θ₁) and a yes-rate per arm that is
linear in θ₁ for fixed θ₀ and in θ₀ for fixed θ₁. The maximum-likelihood estimate is the
moment solution when it lies in the parameter space, else the maximum of the profile
likelihood on its boundary; standard errors come from the (expected = observed, for this
saturated binomial model) information, intervals from the profile likelihood (Wald on
request).

References
----------
.. [1] M. Moshagen, J. Musch and E. Erdfelder, "A stochastic lie detector", Behavior
   Research Methods 44:222–231, 2012 (SLD).
.. [2] S. J. Clark and R. A. Desharnais, "Honest answers to embarrassing questions:
   detecting cheating in the randomized response model", Psychological Methods
   3(2):160–168, 1998 (the cheating detection model).
.. [3] B. G. Greenberg, A.-L. A. Abul-Ela, W. R. Simmons and D. G. Horvitz, "The unrelated
   question randomized response model: theoretical framework", JASA 64:520–539, 1969.
.. [4] D. W. Heck and M. Moshagen, "RRreg: An R package for correlation and regression
   analyses of randomized response data", J. Stat. Softw. 85(2), 2018 (§4: minarets).
.. [5] Y. Pawitan, "In All Likelihood", Oxford, 2001, §2.9 (profile likelihood intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from scipy import optimize, special
from scipy import stats as sps

from estimator.designs import (
    REGISTRY,
    AffineLine,
    Design,
    _check_index,
    _count_vector,
    matrix_epsilon,
)
from estimator.estimates import _check_population
from estimator.intervals import DEFAULT_LEVEL, NO_DATA_MESSAGE, check_level, z_value
from estimator.params import Param

ARMS = 2
ARM_INTERVAL_METHODS = ("profile", "wald")
_XTOL = 1e-10
# Numerical derivative step for the information matrix.
_STEP = 1e-6


def _pair(name: str, default: tuple[float, float], label: str, help: str) -> Param:
    return Param(name, "probability_pair", default, label, help)


ARM_WEIGHTS = Param(
    "arm_weights",
    "probabilities",
    (0.5, 0.5),
    "Arm weights",
    "the chance that a respondent's device draws each arm (each above 0, summing to 1)",
)


@dataclass(frozen=True)
class ArmsDesign(Design):
    """A yes/no design with two arms; subclasses give the model of the yes-rates."""

    kind: ClassVar[str] = "binary"
    output_values: ClassVar[tuple[int, ...]] = tuple(range(2 * ARMS))
    has_arms: ClassVar[bool] = True
    arms: ClassVar[int] = ARMS
    # What the export's arm column says of each arm.
    arm_names: ClassVar[tuple[str, str]] = ("arm 0", "arm 1")
    # The two estimated parameters, and the ones derived from them.
    parameter_names: ClassVar[tuple[str, str]]
    parameter_labels: ClassVar[tuple[str, str]]
    derived_names: ClassVar[tuple[str, ...]] = ()
    # The share the detection watches for: (parameter, words), or None.
    detects: ClassVar[tuple[str, str] | None] = None
    # The API's key of each quantity beside the prevalence (SPEC §3.1), and its label.
    quantity_keys: ClassVar[dict[str, str]] = {}
    quantity_labels: ClassVar[dict[str, str]] = {}
    # The second parameter when everyone follows the coins (t = 1, γ = 0), or None when
    # the design detects nothing (its second parameter is not about compliance).
    compliance: ClassVar[float | None] = None
    # The second parameter a plan assumes (respondents who follow the instructions), in words.
    planning_other: ClassVar[float] = 0.5
    planning_words: ClassVar[str] = ""

    def __post_init__(self) -> None:
        self._check_params()
        if len(self.arm_weights) != ARMS:
            raise ValueError(f"arm_weights: one weight per arm ({ARMS}), got {self.arm_weights!r}")
        if any(w <= 0 for w in self.arm_weights):
            raise ValueError("arm_weights: every arm needs a weight above 0")
        self._check_identifiable()

    def _check_identifiable(self) -> None:
        raise NotImplementedError

    reanalysis_words: ClassVar[str] = ""
    rrreg_model: ClassVar[str | None] = None
    # The app's logistic regression takes this design as an outcome (sld_regression).
    regression_with_arms: ClassVar[bool] = False

    def rrreg_call(self, column: str) -> str | None:
        """R's RRreg call that re-analyses the column with its arm column, or None."""
        if self.rrreg_model is None:
            return None
        p = ", ".join(f"{v:.12g}" for v in getattr(self, "p", ()))
        return (
            f'RRreg::RRuni({column}, model = "{self.rrreg_model}", p = c({p}), '
            f"group = {column}_arm + 1)"
        )

    def arm_chance_steps(self) -> tuple[tuple[tuple[float, str, str], ...], ...]:
        """Per arm, the steps a respondent's device follows once the arm is drawn, as
        :meth:`estimator.designs.BinaryDesign.chance_steps` gives them."""
        raise NotImplementedError

    # --- the model -------------------------------------------------------------------

    def yes_rates(self, theta: Sequence[float]) -> np.ndarray:
        """P(yes | arm) for each arm at parameters θ."""
        raise NotImplementedError

    def moment_solution(self, rates: Sequence[float]) -> np.ndarray:
        """θ solving yes_rates(θ) = rates (may fall outside the parameter space)."""
        raise NotImplementedError

    def other_range(self, j: int, value: float) -> tuple[float, float]:
        """The range of the other parameter when parameter ``j`` is ``value``."""
        return 0.0, 1.0

    def derived(self, theta: Sequence[float]) -> dict[str, float]:
        return {}

    def compliant_lines(self) -> tuple[AffineLine, ...] | None:
        """Per arm, its yes rate as a line c + t·π when everyone follows the coins (the
        second parameter at :attr:`compliance`); None for a design that detects nothing."""
        if self.compliance is None:
            return None
        at_0 = self.yes_rates((0.0, self.compliance))
        at_1 = self.yes_rates((1.0, self.compliance))
        return tuple(
            AffineLine(c_=float(c), t_=float(top - c)) for c, top in zip(at_0, at_1, strict=True)
        )

    def unit_yes_rates(self, theta: Sequence[float]) -> tuple[np.ndarray, np.ndarray] | None:
        """The kinds of respondent at θ: (their shares, each kind's P(yes) per arm as a
        kinds × arms array), which the finite-population correction needs; None when the
        model does not fix them (no correction is then applied)."""
        return None

    def feasible(self, theta: Sequence[float]) -> bool:
        if not all(-1e-12 <= v <= 1 + 1e-12 for v in theta):
            return False
        lo, hi = self.other_range(0, float(theta[0]))
        return lo - 1e-12 <= theta[1] <= hi + 1e-12

    # --- reports ---------------------------------------------------------------------

    @property
    def response_matrix(self) -> np.ndarray:
        """M[report, truth] for a respondent who follows the coins (reports arm·2 + yes)."""
        raise NotImplementedError

    @property
    def epsilon(self) -> float:
        return matrix_epsilon(self.response_matrix)

    @property
    def true_values(self) -> tuple[int, ...]:
        return (0, 1)

    def encode(self, arm: Any, answer: Any) -> int:
        """The stored report of ``answer`` (0/1) given in ``arm``."""
        arm = _check_index(arm, ARMS, "arm")
        return arm * 2 + _check_index(answer, 2, "a yes/no report")

    @staticmethod
    def decode(report: int) -> tuple[int, int]:
        """(arm, answer) of a stored report."""
        return divmod(int(report), 2)

    def output_description(self) -> dict:
        return {"type": "options", "values": [0, 1], "arms": ARMS}

    def check_report(self, report: Any) -> int:
        return _check_index(report, 2 * ARMS, "a report with its arm")

    def likelihood(self, report: Any) -> np.ndarray:
        return self.response_matrix[self.check_report(report)]

    def simulate_arms(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return (rng.random(size) >= self.arm_weights[0]).astype(np.int64)

    def simulate(self, true_answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports (arm·2 + answer) of respondents who follow the coins."""
        true_answers = np.asarray(true_answers)
        arms = self.simulate_arms(true_answers.size, rng).reshape(true_answers.shape)
        p_yes = self.response_matrix[2 * arms + 1, true_answers] / np.take(self.arm_weights, arms)
        return 2 * arms + (rng.random(true_answers.shape) < p_yes)

    def unit_covariance(self, theta: Sequence[float]) -> np.ndarray:
        """Covariance of θ̂ times n (n respondents split by the arm weights), at θ."""
        theta = np.asarray(theta, dtype=float)
        lam = np.clip(self.yes_rates(theta), 1e-12, 1 - 1e-12)
        jac = _jacobian(lambda th: np.asarray(self.yes_rates(th)), theta)
        info = jac.T @ np.diag(np.asarray(self.arm_weights) / (lam * (1 - lam))) @ jac
        return np.linalg.inv(info)

    def sample_size(
        self, theta: Sequence[float], half_width: float, level: float = DEFAULT_LEVEL
    ) -> int:
        """Respondents needed for a half-width ``half_width`` of π's interval at the
        planned θ (normal approximation)."""
        level = check_level(level)
        if isinstance(half_width, bool) or not 0 < half_width <= 1:
            raise ValueError(f"half_width must be in (0, 1], got {half_width!r}")
        variance = self.unit_covariance(theta)[0, 0]
        return max(1, math.ceil(variance * (z_value(level) / half_width) ** 2 - 1e-9))

    def _planned_variance(self, q: float, other: float | None) -> float:
        """n·Var(π̂) at π = q. At π = 0 the lie detector's t drops out of the model and
        the information is singular, though π's variance has a finite limit: it is taken
        a hair inside [0, 1], which changes no power by more than rounding."""
        other = self.planning_other if other is None else other
        q = min(max(float(q), 1e-6), 1 - 1e-6)
        return float(self.unit_covariance((q, other))[0, 0])

    def power(
        self, q: float, q_other: float, n: int, other: float | None = None, alpha: float = 0.05
    ) -> float:
        """Power of the two-sided Wald test of π = ``q_other`` when π = ``q`` (n
        respondents, the second parameter at ``other``, by default the planned one). The
        test's standard error is estimated from the data, so both the critical value and
        the spread are taken at the truth q: at π = 0 the lie detector's t is not
        identified and a null-based standard error would not exist. For two groups of n
        each, pass twice the unit variance through :meth:`power_two_groups`."""
        from estimator.planning import _rejection_probability

        se = math.sqrt(self._planned_variance(q, other) / n)
        return _rejection_probability(q, se, q_other, se, alpha, "two-sided")

    def power_two_groups(
        self, q: float, q_other: float, n: int, other: float | None = None, alpha: float = 0.05
    ) -> float:
        """Power of the two-sided Wald test of no difference between two groups of n
        respondents each, with prevalences ``q`` and ``q_other`` (as
        ``rr::power.rr.test(type = "two.sample")``, with each group's standard error at its
        own prevalence, estimated from the data as in :meth:`power`)."""
        from estimator.planning import _rejection_probability

        se = math.hypot(*(math.sqrt(self._planned_variance(v, other) / n) for v in (q, q_other)))
        return _rejection_probability(q - q_other, se, 0.0, se, alpha, "two-sided")

    def variance_price(self, theta: Sequence[float]) -> float:
        """The price of the detection: how many times more respondents π needs than if
        it were asked directly (and answered honestly), at the planned θ."""
        pi = float(theta[0])
        direct = pi * (1 - pi)
        return math.inf if direct == 0 else float(self.unit_covariance(theta)[0, 0] / direct)

    def estimate(self, counts: Any, *, population: int | None = None) -> ArmsEstimate:
        """Estimate from the report counts ``[no₀, yes₀, no₁, yes₁]``; ``population`` (N)
        applies the finite-population correction where the model fixes the kinds of
        respondent (:meth:`unit_yes_rates`), and is ignored (None) otherwise."""
        values = _count_vector(counts, 2 * ARMS)
        yes = np.array(values[1::2], dtype=float)
        n = yes + np.array(values[0::2], dtype=float)
        if self.unit_yes_rates((0.5, 0.5)) is None:
            population = None
        return ArmsEstimate(self, yes, n, population=population)


@dataclass(frozen=True)
class StochasticLieDetector(ArmsDesign):
    """The stochastic lie detector [1]_: a non-carrier answers the question with
    probability p (of their arm) and else says "yes"; a carrier says "yes" honestly
    with probability t. P(yes | arm) = π·t + (1 − π)(1 − p). An honest carrier never says
    "no", so a "no" is impossible for them: ε = ∞ — no privacy for a "no"."""

    name: ClassVar[str] = "stochastic_lie_detector"
    label: ClassVar[str] = "Stochastic lie detector (two arms)"
    help: ClassVar[str] = (
        "Two arms with different chances p of answering the question (else say “yes”): "
        "estimates the prevalence and how honestly carriers answer. No privacy for a “no”."
    )
    PARAMS: ClassVar[tuple[Param, ...]] = (
        _pair("p", (2 / 12, 10 / 12), "P(answer the question) per arm", "else say “yes”"),
        ARM_WEIGHTS,
    )
    parameter_names: ClassVar[tuple[str, str]] = ("pi", "t")
    parameter_labels: ClassVar[tuple[str, str]] = ("Prevalence π", "Carriers' honesty t")
    detects: ClassVar[tuple[str, str] | None] = ("t", "The share of carriers who lie, 1 − t =")
    quantity_keys: ClassVar[dict[str, str]] = {"t": "honesty"}
    compliance: ClassVar[float | None] = 1.0
    planning_other: ClassVar[float] = 1.0
    planning_words: ClassVar[str] = "if carriers answer honestly (t = 1)"
    reanalysis_words: ClassVar[str] = (
        "per arm a, P(report 1) = pi * t + (1 - pi) * (1 - p[a]); maximize the binomial "
        "likelihood of the yes counts per arm over pi and t in [0, 1] (RRreg's SLD model)"
    )
    rrreg_model: ClassVar[str | None] = "SLD"
    regression_with_arms: ClassVar[bool] = True
    quantity_labels: ClassVar[dict[str, str]] = {"t": "Carriers' honesty t"}
    p: tuple[float, float] = (2 / 12, 10 / 12)
    arm_weights: tuple[float, float] = (0.5, 0.5)

    def arm_chance_steps(self) -> tuple[tuple[tuple[float, str, str], ...], ...]:
        return tuple(((p, "truth", "yes"),) for p in self.p)

    def _check_identifiable(self) -> None:
        if self.p[0] == self.p[1]:
            raise ValueError("p: the two arms need different probabilities p₁ ≠ p₂")

    def yes_rates(self, theta: Sequence[float]) -> np.ndarray:
        pi, t = theta
        return pi * t + (1 - pi) * (1 - np.asarray(self.p))

    def unit_yes_rates(self, theta: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Honest carriers (say "yes"), lying carriers (say "no"), non-carriers."""
        pi, t = theta
        shares = np.array([pi * t, pi * (1 - t), 1 - pi])
        return shares, np.array([[1.0, 1.0], [0.0, 0.0], 1 - np.asarray(self.p)])

    def moment_solution(self, rates: Sequence[float]) -> np.ndarray:
        (l0, l1), (p0, p1) = rates, self.p
        rest = (l0 - l1) / (p1 - p0)
        pi = 1 - rest
        t = (l0 - rest * (1 - p0)) / pi if pi else 0.0
        return np.array([pi, t])

    @property
    def response_matrix(self) -> np.ndarray:
        rows = []
        for w, p in zip(self.arm_weights, self.p, strict=True):
            rows += [[w * p, 0.0], [w * (1 - p), w]]
        return np.array(rows)


@dataclass(frozen=True)
class CheatingDetection(ArmsDesign):
    """Clark and Desharnais's cheating model [2]_ on forced response: honest carriers
    (π) and honest non-carriers (β) follow the coins of their arm; cheaters
    (γ = 1 − π − β) say "no" whatever the coins. P(yes | arm) = π(p_truth + (1 − p_truth)
    p_yes) + β(1 − p_truth)p_yes. Estimated as (π, γ)."""

    name: ClassVar[str] = "cheating_detection"
    label: ClassVar[str] = "Cheating detection (two forced-response arms)"
    help: ClassVar[str] = (
        "Two forced-response arms with different coins: estimates honest “yes”, honest "
        "“no” and the share who answer “no” whatever the coins."
    )
    PARAMS: ClassVar[tuple[Param, ...]] = (
        _pair("p_truth", (0.5, 0.75), "P(answer truthfully) per arm", "the first coin"),
        _pair("p_yes", (0.5, 0.5), "P(forced “yes”) per arm", "otherwise the second coin"),
        ARM_WEIGHTS,
    )
    parameter_names: ClassVar[tuple[str, str]] = ("pi", "gamma")
    parameter_labels: ClassVar[tuple[str, str]] = ("Honest “yes” π", "Cheaters γ")
    derived_names: ClassVar[tuple[str, ...]] = ("beta",)
    detects: ClassVar[tuple[str, str] | None] = ("gamma", "The share of cheaters γ =")
    quantity_keys: ClassVar[dict[str, str]] = {"beta": "honest_no", "gamma": "cheaters"}
    compliance: ClassVar[float | None] = 0.0
    planning_other: ClassVar[float] = 0.0
    planning_words: ClassVar[str] = "if nobody cheats (γ = 0)"
    reanalysis_words: ClassVar[str] = (
        "per arm a, with h1 = p_truth[a] + (1 - p_truth[a]) * p_yes[a] and "
        "h0 = (1 - p_truth[a]) * p_yes[a]: P(report 1) = pi * h1 + beta * h0, cheaters "
        "gamma = 1 - pi - beta say no; maximize the binomial likelihood of the yes counts "
        "per arm (Clark and Desharnais 1998)"
    )
    quantity_labels: ClassVar[dict[str, str]] = {"beta": "Honest “no” β", "gamma": "Cheaters γ"}
    p_truth: tuple[float, float] = (0.5, 0.75)
    p_yes: tuple[float, float] = (0.5, 0.5)
    arm_weights: tuple[float, float] = (0.5, 0.5)

    @property
    def _lines(self) -> tuple[np.ndarray, np.ndarray]:
        """P(yes | honest carrier) and P(yes | honest non-carrier) per arm."""
        pt, py = np.asarray(self.p_truth), np.asarray(self.p_yes)
        return pt + (1 - pt) * py, (1 - pt) * py

    def arm_chance_steps(self) -> tuple[tuple[tuple[float, str, str], ...], ...]:
        return tuple(
            ((pt, "truth", "next"), (py, "yes", "no"))
            for pt, py in zip(self.p_truth, self.p_yes, strict=True)
        )

    def _check_identifiable(self) -> None:
        a, b = self._lines
        if abs(a[0] * b[1] - a[1] * b[0]) < 1e-9:
            raise ValueError(
                "p_truth: the two arms must differ (in the share of forced “yes” among all "
                "“yes”), else honest “no” and cheating cannot be told apart"
            )

    def yes_rates(self, theta: Sequence[float]) -> np.ndarray:
        pi, gamma = theta
        a, b = self._lines
        return pi * a + (1 - pi - gamma) * b

    def moment_solution(self, rates: Sequence[float]) -> np.ndarray:
        a, b = self._lines
        pi, beta = np.linalg.solve(np.column_stack([a, b]), np.asarray(rates, dtype=float))
        return np.array([pi, 1 - pi - beta])

    def other_range(self, j: int, value: float) -> tuple[float, float]:
        return 0.0, max(0.0, 1.0 - value)

    def derived(self, theta: Sequence[float]) -> dict[str, float]:
        return {"beta": 1 - theta[0] - theta[1]}

    def unit_yes_rates(self, theta: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Honest carriers, honest non-carriers and cheaters (who say "no")."""
        pi, gamma = theta
        a, b = self._lines
        return np.array([pi, 1 - pi - gamma, gamma]), np.vstack([a, b, np.zeros(ARMS)])

    @property
    def response_matrix(self) -> np.ndarray:
        a, b = self._lines
        rows = []
        for w, yes1, yes0 in zip(self.arm_weights, a, b, strict=True):
            rows += [[w * (1 - yes0), w * (1 - yes1)], [w * yes0, w * yes1]]
        return np.array(rows)


@dataclass(frozen=True)
class UnrelatedQuestionUnknown(ArmsDesign):
    """Unrelated question with unknown prevalence [3]_: in each arm a coin picks the
    sensitive question (probability p_truth of the arm) or an innocuous one whose
    prevalence π_u is estimated too. P(yes | arm) = p·π + (1 − p)·π_u.

    ε is ∞: someone who knows a respondent's innocuous answer is "no" learns the
    sensitive answer from a "yes"."""

    name: ClassVar[str] = "unrelated_question_unknown"
    label: ClassVar[str] = "Unrelated question, unknown prevalence (two arms)"
    help: ClassVar[str] = (
        "Two arms with different chances of answering the real question rather than an "
        "innocuous one: estimates both prevalences."
    )
    PARAMS: ClassVar[tuple[Param, ...]] = (
        _pair("p_truth", (0.3, 0.7), "P(answer the real question) per arm", "else the other"),
        ARM_WEIGHTS,
    )
    parameter_names: ClassVar[tuple[str, str]] = ("pi", "pi_innocuous")
    parameter_labels: ClassVar[tuple[str, str]] = ("Prevalence π", "Innocuous prevalence")
    quantity_keys: ClassVar[dict[str, str]] = {"pi_innocuous": "innocuous"}
    planning_words: ClassVar[str] = "if the innocuous prevalence is ½"
    reanalysis_words: ClassVar[str] = (
        "per arm a, P(report 1) = p_truth[a] * pi + (1 - p_truth[a]) * pi_innocuous"
    )
    quantity_labels: ClassVar[dict[str, str]] = {"pi_innocuous": "Innocuous prevalence"}
    asks_innocuous: ClassVar[bool] = True
    p_truth: tuple[float, float] = (0.3, 0.7)
    arm_weights: tuple[float, float] = (0.5, 0.5)

    @property
    def true_values(self) -> tuple[int, ...]:
        """Both true answers on the device, as sensitive + 2 · innocuous."""
        return (0, 1, 2, 3)

    def arm_chance_steps(self) -> tuple[tuple[tuple[float, str, str], ...], ...]:
        return tuple(((p, "truth", "innocuous"),) for p in self.p_truth)

    def _check_identifiable(self) -> None:
        if self.p_truth[0] == self.p_truth[1]:
            raise ValueError("p_truth: the two arms need different probabilities")

    def yes_rates(self, theta: Sequence[float]) -> np.ndarray:
        pi, pi_u = theta
        p = np.asarray(self.p_truth)
        return p * pi + (1 - p) * pi_u

    def moment_solution(self, rates: Sequence[float]) -> np.ndarray:
        p = np.asarray(self.p_truth)
        return np.linalg.solve(np.column_stack([p, 1 - p]), np.asarray(rates, dtype=float))

    @property
    def response_matrix(self) -> np.ndarray:
        """Truths (sensitive, innocuous) as the columns (00, 10, 01, 11): the innocuous
        answer is a fact about the respondent, not a coin."""
        rows = []
        for w, p in zip(self.arm_weights, self.p_truth, strict=True):
            yes = np.array([0.0, p, 1 - p, 1.0])
            rows += [w * (1 - yes), w * yes]
        return np.array(rows)

    @property
    def epsilon(self) -> float:
        return math.inf

    def likelihood(self, report: Any) -> np.ndarray:
        row = self.response_matrix[self.check_report(report)]
        return np.array([row[0], row[1]])


def _jacobian(fun, theta: np.ndarray) -> np.ndarray:
    """Central differences of a vector function of θ, one column per parameter."""
    cols = []
    for j in range(len(theta)):
        step = np.zeros(len(theta))
        step[j] = _STEP
        cols.append((fun(theta + step) - fun(theta - step)) / (2 * _STEP))
    return np.column_stack(cols)


def _loglik(design: ArmsDesign, theta: Sequence[float], yes: np.ndarray, n: np.ndarray) -> float:
    lam = np.clip(design.yes_rates(theta), 0.0, 1.0)
    return float(np.sum(special.xlogy(yes, lam) + special.xlogy(n - yes, 1 - lam)))


def _maximize(fun, lo: float, hi: float) -> tuple[float, float]:
    """(argmax, max) of a concave ``fun`` on [lo, hi]."""
    if hi - lo < _XTOL:
        return lo, fun(lo)
    res = optimize.minimize_scalar(
        lambda v: -fun(v), bounds=(lo, hi), method="bounded", options={"xatol": _XTOL}
    )
    best = (float(res.x), -float(res.fun))
    for edge in (lo, hi):
        value = fun(edge)
        if value > best[1]:
            best = (edge, value)
    return best


@dataclass(frozen=True, repr=False)
class ArmsEstimate:
    """Maximum-likelihood estimates of a design with arms from yes counts per arm.

    ``yes`` and ``n`` hold one count per arm. ``theta`` is the estimate of the design's
    two parameters (:attr:`ArmsDesign.parameter_names`).
    """

    design: ArmsDesign
    yes: np.ndarray
    per_arm: np.ndarray
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    # N of the finite-population correction, or None (an infinite population).
    population: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "population", _check_population(self.population, self.n_total))

    def __repr__(self) -> str:
        if not self.has_data:
            return f"ArmsEstimate({self.design.name}: {self.message})"
        parts = [
            f"{name} = {v:.4g} (SE {se:.4g})"
            for name, v, se in zip(
                self.design.parameter_names, self.theta, self.std_errors, strict=True
            )
        ]
        return f"ArmsEstimate({self.design.name}: {', '.join(parts)}, n = {self.n_total})"

    @property
    def n_total(self) -> int:
        return int(self.per_arm.sum())

    @property
    def n(self) -> int:
        """Respondents, over both arms (as every other estimate's ``n``)."""
        return self.n_total

    @property
    def estimate(self) -> float | None:
        """The prevalence π (the first parameter), as every other yes/no estimate."""
        return None if not self.has_data else self[self.design.parameter_names[0]]

    @property
    def raw_yes_rate(self) -> float | None:
        """The share of "yes" reports over both arms."""
        return float(self.yes.sum() / self.n_total) if self.n_total else None

    @property
    def has_data(self) -> bool:
        return bool(np.all(self.per_arm > 0))

    @property
    def message(self) -> str | None:
        if self.has_data:
            return None
        if self.n_total:
            return "Every arm needs reports before anything can be estimated."
        return NO_DATA_MESSAGE

    def loglik(self, theta: Sequence[float]) -> float:
        return _loglik(self.design, theta, self.yes, self.per_arm)

    def profile(self, j: int, value: float) -> tuple[float, float]:
        """(best other parameter, log-likelihood) with parameter ``j`` fixed at ``value``."""

        def at(w: float) -> float:
            theta = [value, w] if j == 0 else [w, value]
            return self.loglik(theta)

        return _maximize(at, *self.design.other_range(j, value))

    @property
    def theta(self) -> np.ndarray | None:
        if not self.has_data:
            return None
        if "theta" not in self._cache:
            theta = self.design.moment_solution(self.yes / self.per_arm)
            if not (np.all(np.isfinite(theta)) and self.design.feasible(theta)):
                pi, _ = _maximize(lambda v: self.profile(0, v)[1], 0.0, 1.0)
                theta = np.array([pi, self.profile(0, pi)[0]])
            self._cache["theta"] = np.clip(theta, 0.0, 1.0)
        return self._cache["theta"]

    @property
    def max_loglik(self) -> float | None:
        return None if self.theta is None else self.loglik(self.theta)

    def __getitem__(self, name: str) -> float:
        """A parameter's or a derived quantity's estimate by name."""
        if name in self.design.parameter_names:
            return float(self.theta[self.design.parameter_names.index(name)])
        return float(self.design.derived(self.theta)[name])

    @property
    def covariance(self) -> np.ndarray | None:
        """Inverse information at the estimate (NaN where a parameter is not identified
        there, e.g. honesty t when π̂ = 0); from a population of N, the sandwich
        I⁻¹JᵀW·Cov(λ̂)·WJI⁻¹ with the finite-population covariance of the yes rates
        (:meth:`rate_covariance`)."""
        theta = self.theta
        if theta is None:
            return None
        lam = np.clip(self.design.yes_rates(theta), 1e-12, 1 - 1e-12)
        jac = _jacobian(lambda th: np.asarray(self.design.yes_rates(th)), theta)
        weights = np.diag(self.per_arm / (lam * (1 - lam)))
        info = jac.T @ weights @ jac
        if abs(np.linalg.det(info)) < 1e-12 * max(1.0, float(np.abs(info).max()) ** 2):
            return np.full((2, 2), np.nan)
        inverse = np.linalg.inv(info)
        if self.population is None:
            return inverse
        bread = inverse @ jac.T @ weights
        return bread @ self.rate_covariance(lam) @ bread.T

    def rate_covariance(self, lam: np.ndarray) -> np.ndarray:
        """Covariance of the arms' yes rates when the n respondents are drawn without
        replacement from N: within an arm, Var(λ̂ₐ) = [λₐ(1 − λₐ) − (nₐ − 1)/(N − 1)·Vₐ]/nₐ
        with Vₐ the population variance of the respondents' own P(yes) in arm a (only
        the part due to who was sampled shrinks; the coins' part stays, as for one arm);
        between the arms, two disjoint parts of one sample, −Cov(h₀, h₁)/(N − 1)."""
        shares, rates = self.design.unit_yes_rates(self.theta)
        mean = shares @ rates
        spread = (rates - mean).T @ np.diag(shares) @ (rates - mean)
        big_n = self.population
        within = (self.per_arm - 1) / (big_n - 1) if big_n > 1 else np.ones(ARMS)
        cov = -spread / (big_n - 1) if big_n > 1 else -spread
        diag = (lam * (1 - lam) - within * np.diag(spread)) / self.per_arm
        np.fill_diagonal(cov, np.maximum(diag, 0.0))
        return cov

    @property
    def fpc(self) -> np.ndarray:
        """Per parameter, the finite-population variance over the infinite-population one
        (1 without a population): it scales the profile-likelihood cut."""
        if self.population is None or self.theta is None:
            return np.ones(2)
        corrected = np.diag(self.covariance)
        plain = np.diag(replace(self, population=None, _cache={}).covariance)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = corrected / plain
        return np.where(np.isfinite(ratio), ratio, 1.0)

    @property
    def std_errors(self) -> np.ndarray | None:
        cov = self.covariance
        return None if cov is None else np.sqrt(np.diag(cov))

    def std_error(self, name: str) -> float:
        cov = self.covariance
        if name in self.design.parameter_names:
            j = self.design.parameter_names.index(name)
            return float(math.sqrt(cov[j, j]))
        grad = _jacobian(lambda th: np.array([self.design.derived(th)[name]]), self.theta).ravel()
        return float(math.sqrt(grad @ cov @ grad))

    def ci(
        self, name: str, level: float = DEFAULT_LEVEL, method: str = "profile"
    ) -> tuple[float, float] | None:
        """Confidence interval of a parameter or derived quantity: the profile-likelihood
        interval ([5]_; kept within [0, 1]) or Wald's, clipped to [0, 1]. Derived
        quantities use Wald's."""
        level = check_level(level)
        if method not in ARM_INTERVAL_METHODS:
            raise ValueError(f"method must be one of {', '.join(ARM_INTERVAL_METHODS)}")
        if not self.has_data:
            return None
        estimate = self[name]
        if method == "wald" or name not in self.design.parameter_names:
            half = z_value(level) * self.std_error(name)
            if not math.isfinite(half):
                return 0.0, 1.0
            return max(0.0, estimate - half), min(1.0, estimate + half)
        key = (name, level)
        if key not in self._cache:
            self._cache[key] = self._profile_interval(
                self.design.parameter_names.index(name), level
            )
        return self._cache[key]

    def _profile_interval(self, j: int, level: float) -> tuple[float, float]:
        """The profile-likelihood interval; from a population of N its cut shrinks by the
        parameter's finite-population variance ratio (:attr:`fpc`)."""
        top = self.max_loglik
        cut = sps.chi2.ppf(level, 1) / 2 * float(self.fpc[j])
        estimate = float(self.theta[j])
        if cut <= 0:
            return estimate, estimate
        drop = lambda v: top - self.profile(j, v)[1] - cut  # noqa: E731

        def end(bound: float) -> float:
            if abs(bound - estimate) < _XTOL or drop(bound) <= 0:
                return bound
            return float(optimize.brentq(drop, estimate, bound, xtol=_XTOL))

        return end(0.0), end(1.0)

    def lr_test_zero(self, name: str) -> float:
        """p-value of the likelihood-ratio test of ``name`` = 0 against > 0: the
        statistic's law is ½χ²₀ + ½χ²₁ at the boundary (Self and Liang 1987)."""
        j = self.design.parameter_names.index(name)
        stat = max(0.0, 2 * (self.max_loglik - self.profile(j, 0.0)[1]))
        return float(0.5 * sps.chi2.sf(stat, 1)) if stat > 0 else 1.0

    def findings(self, level: float = DEFAULT_LEVEL) -> list[str]:
        """What the detection found, in words: whether the share the design watches for
        (cheaters γ; carriers who lie, 1 − t) is significantly above 0 at ``level``."""
        if not self.has_data or self.design.detects is None:
            return []
        name, what = self.design.detects
        alpha = 1 - check_level(level)
        if name == "t":
            # Lying carriers: test t = 1 against t < 1, on the profile at t = 1.
            j = self.design.parameter_names.index("t")
            stat = max(0.0, 2 * (self.max_loglik - self.profile(j, 1.0)[1]))
            p = float(0.5 * sps.chi2.sf(stat, 1)) if stat > 0 else 1.0
            share = 1 - self["t"]
        else:
            p, share = self.lr_test_zero(name), self[name]
        if p < alpha:
            return [
                f"{what} {share:.1%} is significantly above 0 (likelihood-ratio p = {p:.2g}): "
                "some respondents did not follow the instructions."
            ]
        return [f"{what} {share:.1%} is not significantly above 0 (likelihood-ratio p = {p:.2g})."]

    def to_dict(self, level: float = DEFAULT_LEVEL) -> dict[str, Any]:
        """Every quantity with its SE and interval, JSON-ready."""
        out: dict[str, Any] = {
            "n": self.n_total,
            "n_per_arm": [int(v) for v in self.per_arm],
            "yes_per_arm": [int(v) for v in self.yes],
        }
        if not self.has_data:
            return {**out, "message": self.message}
        for name in (*self.design.parameter_names, *self.design.derived_names):
            se = self.std_error(name)
            out[name] = {
                "estimate": self[name],
                "std_error": se if math.isfinite(se) else None,
                "ci": list(self.ci(name, level)),
            }
        return out


ARM_DESIGNS = (StochasticLieDetector, CheatingDetection, UnrelatedQuestionUnknown)


# --- Logistic regression with a stochastic-lie-detector outcome ----------------------------


@dataclass(frozen=True, repr=False)
class SLDRegressionResult:
    """Logistic regression of the prevalence π on covariates with an SLD outcome, the
    carriers' honesty t estimated beside the coefficients (RRreg's ``RRlog`` with
    ``model = "SLD"`` [4]_). ``regression`` holds the coefficients, their standard errors
    taken from the joint observed information of (β, t)."""

    regression: Any
    honesty: float
    honesty_std_error: float
    level: float

    @property
    def log_likelihood(self) -> float:
        return self.regression.log_likelihood

    def honesty_ci(self) -> tuple[float, float]:
        half = z_value(self.level) * self.honesty_std_error
        return max(0.0, self.honesty - half), min(1.0, self.honesty + half)

    def __repr__(self) -> str:
        low, high = self.honesty_ci()
        return (
            f"{self.regression!r}\ncarriers' honesty t = {self.honesty:.4f} "
            f"(SE {self.honesty_std_error:.4f}, interval {low:.4f}–{high:.4f})"
        )


def sld_regression(
    design: StochasticLieDetector,
    x: Any,
    arm: Sequence[int],
    yes: Sequence[int],
    n: Sequence[int],
    *,
    names: Sequence[str] | None = None,
    level: float = DEFAULT_LEVEL,
) -> SLDRegressionResult:
    """Fit logit π = xβ with P(yes) = π·t + (1 − π)(1 − p_arm) from grouped counts (one
    row per covariate pattern and arm). The coefficients maximize the likelihood for each
    t (Newton, as :func:`estimator.regression.fit`); t maximizes that profile."""
    from estimator import regression

    level = check_level(level)
    if isinstance(x, regression.DesignMatrix):
        names = names or x.names
        x = x.rows
    x, yes_arr, n_arr = regression._check_counts(x, yes, n)
    arm_arr = np.asarray(arm)[np.asarray(n, dtype=float) > 0]
    if arm_arr.shape != yes_arr.shape or not np.isin(arm_arr, (0, 1)).all():
        raise ValueError("arm: one arm (0 or 1) per row")
    names = tuple(names or (f"x{j}" for j in range(x.shape[1])))
    regression._check_identifiable(x, names)
    c = 1 - np.asarray(design.p)[arm_arr]

    def beta_at(h: float) -> np.ndarray:
        return regression._newton(x, yes_arr, n_arr, h - c, c)[0]

    def profile(h: float) -> float:
        return regression.log_likelihood(beta_at(h), x, yes_arr, n_arr, h - c, c)

    honesty, _ = _maximize(profile, 1e-6, 1.0)
    beta, converged, iterations = regression._newton(x, yes_arr, n_arr, honesty - c, c)

    def gradient(params: np.ndarray) -> np.ndarray:
        b, h = params[:-1], params[-1]
        grad_beta, _, _ = regression.score_and_information(b, x, yes_arr, n_arr, h - c, c)
        mu = special.expit(x @ b)
        lam = np.clip(c + (h - c) * mu, 1e-300, 1 - 1e-16)
        r = yes_arr / lam - (n_arr - yes_arr) / (1 - lam)
        return np.append(grad_beta, np.sum(r * mu))

    params = np.append(beta, honesty)
    hessian = np.column_stack(
        [
            (gradient(params + step) - gradient(params - step)) / (2 * _STEP)
            for step in np.eye(len(params)) * _STEP
        ]
    )
    covariance = np.linalg.inv(-(hessian + hessian.T) / 2)
    k = len(beta)
    result = regression._result(
        beta,
        covariance[:k, :k],
        names,
        x,
        yes_arr,
        n_arr,
        honesty - c,
        c,
        level,
        converged,
        iterations,
    )
    # The line differs per arm: t here is the carriers' honesty, c the first arm's 1 − p.
    result = replace(result, t=honesty, c=float(1 - design.p[0]))
    return SLDRegressionResult(result, honesty, float(math.sqrt(covariance[k, k])), level)


# The designs with arms the app offers (the respondent page asks the innocuous question
# of the unrelated question with unknown prevalence beside the sensitive one).
for _cls in ARM_DESIGNS:
    REGISTRY[(_cls.kind, _cls.name)] = _cls
