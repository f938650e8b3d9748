"""Logistic regression of a randomized yes/no question on directly asked covariates.

Each respondent's true answer x follows a logistic model P(x = 1) = g(zβ) in their
covariates z; the server only sees the randomized report, which says "yes" with
probability c + t·g(zβ) (t and c from the design's response matrix). The likelihood

    ℓ(β) = Σ_yes log(c + t·g(zβ)) + Σ_no log(1 − c − t·g(zβ))

is the one of R's ``rr::rrreg`` and ``RRreg::RRlog`` [1]_ [2]_ [3]_. It depends on the data
only through, per covariate pattern, the number of respondents and of "yes" reports, so
the fit takes grouped counts (one row per pattern, as a ``GROUP BY`` returns them) and its
cost does not grow with the number of respondents.

References
----------
.. [1] G. Blair, K. Imai and Y.-Y. Zhou, "Design and analysis of the randomized response
   technique", JASA 110(511):1304–1319, 2015 (R package ``rr``, function ``rrreg``).
.. [2] D. W. Heck and M. Moshagen, "RRreg: An R package for correlation and regression
   analyses of randomized response data", J. Stat. Softw. 85(2), 2018 (``RRlog``).
.. [3] P. G. M. van der Heijden and G. van Gils, "Some logistic regression models for
   randomized response data", Proc. 11th Int. Workshop on Statistical Modelling, 1996.
.. [4] Y. Pawitan, "In All Likelihood", Oxford, 2001, §8.3 (observed information) and
   §14.2 (Newton–Raphson and Fisher scoring).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize, special, stats

INTERCEPT = "(Intercept)"
# A fitted logit beyond ±30 is a probability within 1e-13 of 0 or 1: the maximum is at
# infinity (separation, or a group whose yes rate is at or below what the coins give).
_MAX_LINEAR_PREDICTOR = 30.0
_MAX_ITERATIONS = 100
_MAX_HALVINGS = 40
_TOLERANCE = 1e-10


def binary_line(response_matrix: np.ndarray) -> tuple[float, float]:
    """Slope t and intercept c of a binary design, λ = c + t·q, from M[report, truth].

    Examples
    --------
    >>> binary_line(np.array([[0.75, 0.25], [0.25, 0.75]]))
    (0.5, 0.25)
    """
    matrix = np.asarray(response_matrix, dtype=float)
    if matrix.shape != (2, 2):
        raise ValueError(f"a binary design has a 2×2 response matrix, got shape {matrix.shape}")
    c = float(matrix[1, 0])
    return float(matrix[1, 1]) - c, c


def check_line(t: float, c: float) -> tuple[float, float]:
    """Validate a binary design's (t, c): both P(yes | x) within [0, 1] and t ≠ 0."""
    t, c = float(t), float(c)
    if not (math.isfinite(t) and math.isfinite(c)):
        raise ValueError(f"t and c must be finite numbers, got t={t!r}, c={c!r}")
    if not (0.0 <= c <= 1.0 and 0.0 <= c + t <= 1.0 + 1e-12):
        raise ValueError(f"P(yes | 0) = c = {c!r} and P(yes | 1) = c + t must be probabilities")
    if t == 0:
        raise ValueError("t = 0: the reports say nothing about the true answers")
    return t, c


# --- Design matrix ------------------------------------------------------------------------


@dataclass(frozen=True)
class DesignMatrix:
    """Rows of covariates, one per pattern, with a name for every column."""

    names: tuple[str, ...]
    rows: np.ndarray


def design_matrix(
    covariates: Mapping[str, Sequence],
    levels: Mapping[str, Sequence[str]] | None = None,
) -> DesignMatrix:
    """Build the design matrix of a model with an intercept.

    ``covariates`` maps each covariate's name to its values, one per row (pattern).
    A covariate listed in ``levels`` (or whose values are strings) is categorical and
    dummy-coded against its first level (the question's first option): a column named
    ``"faculty[Law]"`` is 1 for Law and 0 otherwise, as R's treatment contrasts. Any other
    covariate is a number and enters as it is. ``"(Intercept)"`` is the first column.

    Examples
    --------
    >>> m = design_matrix({"faculty": ["Arts", "Law", "Law"], "age": [19, 23, 30]},
    ...                   levels={"faculty": ["Arts", "Law", "Science"]})
    >>> m.names
    ('(Intercept)', 'faculty[Law]', 'faculty[Science]', 'age')
    >>> m.rows[1].tolist()
    [1.0, 1.0, 0.0, 23.0]
    """
    levels = dict(levels or {})
    lengths = {len(values) for values in covariates.values()}
    if len(lengths) > 1:
        raise ValueError("every covariate needs one value per row")
    n_rows = lengths.pop() if lengths else 0
    names, columns = [INTERCEPT], [np.ones(n_rows)]
    for name, values in covariates.items():
        values = list(values)
        if name in levels or any(isinstance(v, str) for v in values):
            options = list(levels.get(name) or sorted(set(values)))
            unknown = sorted({str(v) for v in values} - {str(o) for o in options})
            if unknown:
                raise ValueError(f"{name}: value(s) not among its options: {', '.join(unknown)}")
            for option in options[1:]:
                names.append(f"{name}[{option}]")
                columns.append(np.array([float(v == option) for v in values]))
        else:
            column = np.array(values, dtype=float)
            if not np.all(np.isfinite(column)):
                raise ValueError(f"{name}: every value must be a finite number")
            names.append(name)
            columns.append(column)
    return DesignMatrix(tuple(names), np.column_stack(columns))


# --- Likelihood -----------------------------------------------------------------------------


def _probabilities(eta: np.ndarray, t: float, c: float) -> tuple[np.ndarray, ...]:
    """μ = g(η), 1 − μ, p = c + tμ and 1 − p, each computed without cancellation."""
    mu, one_minus_mu = special.expit(eta), special.expit(-eta)
    p_yes = c + t * mu
    p_no = (1.0 - c - t) + t * one_minus_mu
    return mu, one_minus_mu, p_yes, p_no


def log_likelihood(
    beta: np.ndarray, x: np.ndarray, yes: np.ndarray, n: np.ndarray, t: float, c: float
) -> float:
    """ℓ(β) from grouped counts (the binomial coefficients, constant in β, left out)."""
    _, _, p_yes, p_no = _probabilities(x @ beta, t, c)
    with np.errstate(divide="ignore"):
        terms = special.xlogy(yes, p_yes) + special.xlogy(n - yes, p_no)
    return float(np.sum(terms))


def score_and_information(
    beta: np.ndarray, x: np.ndarray, yes: np.ndarray, n: np.ndarray, t: float, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradient, observed information (−Hessian) and Fisher information of ℓ at β.

    With p = c + tμ, μ = g(η), dp/dη = d = tμ(1 − μ), the chain rule gives
    ∂ℓ/∂η = r·d with r = (y − np)/(p(1 − p)), and
    ∂²ℓ/∂η² = −(y/p² + (n − y)/(1 − p)²)·d² + r·tμ(1 − μ)(1 − 2μ);
    the Fisher information replaces the first bracket by its expectation n/(p(1 − p))
    and drops the second term, whose expectation is 0 (Pawitan [4]_ §8.3).
    """
    mu, one_minus_mu, p_yes, p_no = _probabilities(x @ beta, t, c)
    tiny = np.finfo(float).tiny
    p_yes, p_no = np.maximum(p_yes, tiny), np.maximum(p_no, tiny)
    d = t * mu * one_minus_mu
    r = yes / p_yes - (n - yes) / p_no
    curvature = (yes / p_yes**2 + (n - yes) / p_no**2) * d**2 - r * d * (one_minus_mu - mu)
    fisher_weight = n * d**2 / (p_yes * p_no)
    gradient = x.T @ (r * d)
    observed = (x * curvature[:, None]).T @ x
    fisher = (x * fisher_weight[:, None]).T @ x
    return gradient, observed, fisher


def outer_product_of_gradients(
    beta: np.ndarray, x: np.ndarray, yes: np.ndarray, n: np.ndarray, t: float, c: float
) -> np.ndarray:
    """Σ over respondents of s·sᵀ, s each one's score: a "yes" in a pattern scores
    (d/p)·z, a "no" −(d/(1 − p))·z, so grouped counts suffice. Its inverse is the OPG
    covariance (BHHH), the one ``rr::rrreg`` reports; it differs from the observed
    information's by a few per cent in samples of usual size."""
    mu, one_minus_mu, p_yes, p_no = _probabilities(x @ beta, t, c)
    tiny = np.finfo(float).tiny
    d = t * mu * one_minus_mu
    weight = (
        yes * (d / np.maximum(p_yes, tiny)) ** 2 + (n - yes) * (d / np.maximum(p_no, tiny)) ** 2
    )
    return (x * weight[:, None]).T @ x


# --- The fit --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Coefficient:
    """One term of the model; the interval is for the odds ratio exp(β)."""

    name: str
    estimate: float
    std_error: float
    z: float
    p_value: float
    odds_ratio: float
    ci_low: float
    ci_high: float
    # Standard error from the outer product of gradients (what ``rr::rrreg`` prints).
    std_error_opg: float = math.nan
    # Likelihood-ratio test of this coefficient = 0 (the model refitted without it).
    lr_p_value: float = math.nan


# How ``Coefficient.std_error`` (and z, p, the interval) is computed; the OPG one is beside.
STD_ERROR_METHOD = "observed_information"


@dataclass(frozen=True, repr=False)
class RegressionResult:
    """A fitted randomized-response logistic regression.

    ``coefficients`` are on the log-odds scale with standard errors from the observed
    information (the OPG ones beside, and a likelihood-ratio p-value per term);
    ``odds_ratio`` = exp(estimate) and ``ci_low``/``ci_high`` are the Wald
    interval exp(β ± z·se) *on the odds-ratio scale*. ``n`` counts respondents.
    """

    coefficients: tuple[Coefficient, ...]
    covariance: np.ndarray
    log_likelihood: float
    n: int
    n_patterns: int
    converged: bool
    iterations: int
    level: float
    t: float
    c: float

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(coef.name for coef in self.coefficients)

    @property
    def params(self) -> np.ndarray:
        return np.array([coef.estimate for coef in self.coefficients])

    def __getitem__(self, name: str) -> Coefficient:
        for coef in self.coefficients:
            if coef.name == name:
                return coef
        raise KeyError(name)

    def ci(self, level: float | None = None) -> dict[str, tuple[float, float]]:
        """Odds-ratio intervals ``{name: (low, high)}`` at ``level`` (default: the fit's)."""
        level = self.level if level is None else _check_level(level)
        z = float(stats.norm.isf((1 - level) / 2))
        return {
            c.name: (math.exp(c.estimate - z * c.std_error), math.exp(c.estimate + z * c.std_error))
            for c in self.coefficients
        }

    def __repr__(self) -> str:
        width = max(len(name) for name in self.names)
        pct = f"{100 * self.level:g} %"
        lines = [
            f"Randomized-response logistic regression (t = {self.t:.4g}, c = {self.c:.4g}); "
            f"n = {self.n} in {self.n_patterns} patterns, log-likelihood = "
            f"{self.log_likelihood:.4f}, "
            + (f"converged in {self.iterations} iterations" if self.converged else "NOT converged"),
            f"{'term':<{width}}  {'estimate':>9} {'std.err':>9} {'z':>7} {'p':>9} "
            f"{'odds ratio':>10}  {pct} interval (odds ratio)",
        ]
        for c in self.coefficients:
            lines.append(
                f"{c.name:<{width}}  {c.estimate:9.4f} {c.std_error:9.4f} {c.z:7.2f} "
                f"{c.p_value:9.3g} {c.odds_ratio:10.4g}  ({c.ci_low:.4g}, {c.ci_high:.4g})"
            )
        return "\n".join(lines)


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level!r}")
    return level


def _check_counts(x, yes, n) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    yes, n = np.asarray(yes, dtype=float), np.asarray(n, dtype=float)
    if x.ndim != 2 or yes.shape != (x.shape[0],) or n.shape != (x.shape[0],):
        raise ValueError("need a 2-D design matrix and one yes count and one n per row")
    for name, values in (("design matrix", x), ("yes counts", yes), ("n", n)):
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{name}: every value must be a finite number")
    if np.any(yes != np.round(yes)) or np.any(n != np.round(n)):
        raise ValueError("yes counts and n must be whole numbers")
    if np.any(yes < 0) or np.any(yes > n):
        raise ValueError("each row needs 0 <= yes <= n")
    keep = n > 0
    return x[keep], yes[keep], n[keep]


def _check_identifiable(x: np.ndarray, names: Sequence[str]) -> None:
    patterns, terms = x.shape
    if patterns < terms:
        raise ValueError(
            f"the model has {terms} coefficients but the data hold only {patterns} "
            "covariate pattern(s) with respondents: it cannot be estimated"
        )
    if np.linalg.matrix_rank(x) < terms:
        culprits = [
            name
            for j, name in enumerate(names)
            if np.linalg.matrix_rank(np.delete(x, j, axis=1)) == np.linalg.matrix_rank(x)
        ]
        raise ValueError(
            "the coefficients cannot be told apart: some columns are linear combinations of "
            f"others (e.g. a covariate that never varies, or an option nobody chose): "
            f"{', '.join(culprits)}"
        )


def _starting_values(x: np.ndarray, yes: np.ndarray, n: np.ndarray, t: float, c: float):
    """Intercept at the logit of the overall prevalence estimate, slopes at 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = float(np.clip(np.nanmean((yes.sum() / n.sum() - c) / t), 0.05, 0.95))
    q = 0.5 if math.isnan(q) else q
    beta = np.zeros(x.shape[1])
    ones = np.all(x == 1.0, axis=0)
    if ones.any():
        beta[np.argmax(ones)] = math.log(q / (1 - q))
    return beta


def _newton(x, yes, n, t, c) -> tuple[np.ndarray, bool, int]:
    """Fisher scoring with step halving, polished by Newton steps near the maximum."""
    beta = _starting_values(x, yes, n, t, c)
    current = log_likelihood(beta, x, yes, n, t, c)
    for iteration in range(1, _MAX_ITERATIONS + 1):
        gradient, observed, fisher = score_and_information(beta, x, yes, n, t, c)
        try:
            # Newton where the observed information is positive definite, else scoring.
            np.linalg.cholesky(observed)
            step = np.linalg.solve(observed, gradient)
        except np.linalg.LinAlgError:
            try:
                step = np.linalg.solve(fisher, gradient)
            except np.linalg.LinAlgError:
                return beta, False, iteration
        for _ in range(_MAX_HALVINGS):
            candidate = beta + step
            value = log_likelihood(candidate, x, yes, n, t, c)
            if value >= current - 1e-12 * abs(current):
                break
            step = step / 2
        else:
            return beta, False, iteration
        beta, current = candidate, value
        if np.max(np.abs(step)) < _TOLERANCE * (1 + np.max(np.abs(beta))):
            return beta, True, iteration
        if np.max(np.abs(x @ beta)) > 2 * _MAX_LINEAR_PREDICTOR:
            return beta, False, iteration
    return beta, False, _MAX_ITERATIONS


def fit(
    x: np.ndarray | DesignMatrix,
    yes: Sequence[int] | np.ndarray,
    n: Sequence[int] | np.ndarray,
    *,
    t: float,
    c: float,
    names: Sequence[str] | None = None,
    level: float = 0.95,
) -> RegressionResult:
    """Maximum-likelihood logistic regression of a randomized yes/no question.

    Parameters
    ----------
    x
        One row per covariate pattern (see :func:`design_matrix`), or a DesignMatrix.
    yes, n
        Per pattern, the "yes" reports and the respondents. Patterns with n = 0 are
        ignored.
    t, c
        The design's line: P(yes | x) = c + t·x (see :func:`binary_line`). ``t = 1,
        c = 0`` is a directly asked question: ordinary logistic regression.
    names
        Term names (default: the DesignMatrix's, else ``x0, x1, …``).
    level
        Level of the odds-ratio intervals.

    Raises
    ------
    ValueError
        Bad counts, a design without information, coefficients that cannot be told apart
        (a constant covariate, fewer patterns than coefficients), or a maximum at
        infinity (separation: some pattern's fitted prevalence is 0 or 1).

    Notes
    -----
    Fisher scoring with step halving, switching to Newton near the maximum; standard
    errors from the inverse observed information at the maximum, as ``RRreg::RRlog`` [2]_
    reports them; ``rr::rrreg`` [1]_ prints the outer-product-of-gradients ones, given
    beside (``std_error_opg``), which may differ by a few per cent. Each coefficient also
    gets a likelihood-ratio p-value (the model refitted without it).

    Examples
    --------
    >>> m = design_matrix({"group": ["a", "b"]})
    >>> res = fit(m, yes=[300, 450], n=[1000, 1000], t=0.5, c=0.25)
    >>> [round(float(v), 4) for v in res.params]  # q̂ = 0.1 in a, 0.4 in b
    [-2.1972, 1.7918]
    >>> round(res["group[b]"].odds_ratio, 3)
    6.0
    """
    t, c = check_line(t, c)
    level = _check_level(level)
    if isinstance(x, DesignMatrix):
        names = names or x.names
        x = x.rows
    x, yes, n = _check_counts(x, yes, n)
    names = tuple(names or (f"x{j}" for j in range(x.shape[1])))
    if len(names) != x.shape[1]:
        raise ValueError(f"{len(names)} names for {x.shape[1]} columns")
    _check_identifiable(x, names)
    beta, converged, iterations = _newton(x, yes, n, t, c)
    eta = x @ beta
    if np.max(np.abs(eta)) > _MAX_LINEAR_PREDICTOR:
        raise ValueError(
            "the maximum likelihood is at infinity: some covariate pattern's fitted "
            "prevalence is 0 or 1 (separation, or a group whose 'yes' rate is at or beyond "
            "what the coins alone give). Merge categories or drop the covariate."
        )
    _, observed, _ = score_and_information(beta, x, yes, n, t, c)
    try:
        np.linalg.cholesky(observed)
        covariance = np.linalg.inv(observed)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the likelihood is flat in some direction at its maximum: the coefficients "
            "cannot be estimated from these counts"
        ) from None
    result = _result(beta, covariance, names, x, yes, n, t, c, level, converged, iterations)
    return _with_opg_and_lr(result, beta, x, yes, n, t, c)


def _with_opg_and_lr(result, beta, x, yes, n, t, c):
    """The fit with each coefficient's OPG standard error and likelihood-ratio p-value
    (2·(ℓ − ℓ without the term) against χ²₁; NaN when the smaller model cannot be fit)."""
    try:
        opg_se = np.sqrt(np.diag(np.linalg.inv(outer_product_of_gradients(beta, x, yes, n, t, c))))
    except np.linalg.LinAlgError:
        opg_se = np.full(len(beta), math.nan)
    coefficients = []
    for j, coef in enumerate(result.coefficients):
        lr_p = math.nan
        if x.shape[1] > 1 and coef.name != INTERCEPT:
            smaller = np.delete(x, j, axis=1)
            sub_beta, converged, _ = _newton(smaller, yes, n, t, c)
            if converged:
                stat = 2 * (result.log_likelihood - log_likelihood(sub_beta, smaller, yes, n, t, c))
                lr_p = float(stats.chi2.sf(max(0.0, stat), 1))
        coefficients.append(replace(coef, std_error_opg=float(opg_se[j]), lr_p_value=lr_p))
    return replace(result, coefficients=tuple(coefficients))


def _result(beta, covariance, names, x, yes, n, t, c, level, converged, iterations):
    se = np.sqrt(np.diag(covariance))
    z_crit = float(stats.norm.isf((1 - level) / 2))
    z = beta / se
    p = 2 * stats.norm.sf(np.abs(z))
    coefficients = tuple(
        Coefficient(
            name=name,
            estimate=float(b),
            std_error=float(s),
            z=float(zz),
            p_value=float(pp),
            odds_ratio=math.exp(b),
            ci_low=math.exp(b - z_crit * s),
            ci_high=math.exp(b + z_crit * s),
        )
        for name, b, s, zz, pp in zip(names, beta, se, z, p, strict=True)
    )
    return RegressionResult(
        coefficients=coefficients,
        covariance=covariance,
        log_likelihood=log_likelihood(beta, x, yes, n, t, c),
        n=int(n.sum()),
        n_patterns=int(x.shape[0]),
        converged=converged,
        iterations=iterations,
        level=level,
        t=t,
        c=c,
    )


# --- A randomized yes/no question as a covariate ---------------------------------------------


def fit_with_randomized_covariate(
    x: np.ndarray | DesignMatrix,
    covariate_report: Sequence[int] | np.ndarray,
    yes: Sequence[int] | np.ndarray,
    n: Sequence[int] | np.ndarray,
    *,
    t: float,
    c: float,
    covariate_t: float,
    covariate_c: float,
    covariate_name: str = "z",
    names: Sequence[str] | None = None,
    level: float = 0.95,
) -> RegressionResult:
    """Logistic regression with a randomized yes/no covariate z beside direct ones w
    (as ``rr::rrreg.predictor`` [1]_ and ``RRreg::RRlin`` [2]_ allow).

    z's true value is latent: P(z = 1 | w) = g(wα), its report says "yes" with probability
    covariate_c + covariate_t·z, and the outcome's true answer follows g(wβ + γz). The
    likelihood of a row (pattern w, z's report, n respondents of whom ``yes`` report
    "yes" to the outcome) sums over z. Rows come from grouped counts. α is a nuisance:
    the result lists β and γ (named ``covariate_name``) with standard errors from the
    observed information (numerical Hessian) and likelihood-ratio p-values."""
    t, c = check_line(t, c)
    covariate_t, covariate_c = check_line(covariate_t, covariate_c)
    level = _check_level(level)
    if isinstance(x, DesignMatrix):
        names = names or x.names
        x = x.rows
    report = np.asarray(covariate_report)
    x, yes_arr, n_arr = _check_counts(x, yes, n)
    report = report[np.asarray(n, dtype=float) > 0]
    if report.shape != yes_arr.shape or not np.isin(report, (0, 1)).all():
        raise ValueError("covariate_report: one report (0 or 1) of the covariate per row")
    names = (*(names or (f"x{j}" for j in range(x.shape[1]))), covariate_name)
    _check_identifiable(np.column_stack([x, report]), names)
    k = x.shape[1]
    # P(z's report | z) for z = 0, 1, per row.
    p_report = np.column_stack(
        [
            np.where(report == 1, covariate_c, 1 - covariate_c),
            np.where(report == 1, covariate_c + covariate_t, 1 - covariate_c - covariate_t),
        ]
    )

    def loglik(params: np.ndarray, drop: int | None = None) -> float:
        if drop is not None:
            params = np.insert(params, drop, 0.0)
        beta, gamma, alpha = params[:k], params[k], params[k + 1 :]
        prior_z1 = special.expit(x @ alpha)
        # Each respondent's z is their own: per respondent, P(outcome report, z's report | w)
        # sums over z; the respondents of a row are independent.
        joint_yes, joint_no = np.zeros(len(yes_arr)), np.zeros(len(yes_arr))
        for z, weight in ((0, 1 - prior_z1), (1, prior_z1)):
            _, _, p_yes, p_no = _probabilities(x @ beta + gamma * z, t, c)
            joint_yes = joint_yes + weight * p_report[:, z] * p_yes
            joint_no = joint_no + weight * p_report[:, z] * p_no
        tiny = np.finfo(float).tiny
        return float(
            np.sum(
                special.xlogy(yes_arr, np.maximum(joint_yes, tiny))
                + special.xlogy(n_arr - yes_arr, np.maximum(joint_no, tiny))
            )
        )

    found = optimize.minimize(
        lambda p: -loglik(p), np.zeros(2 * k + 1), method="BFGS", options={"gtol": 1e-7}
    )
    best = found.x
    hessian = _numerical_hessian(loglik, best)
    try:
        covariance = np.linalg.inv(-hessian)[: k + 1, : k + 1]
    except np.linalg.LinAlgError:
        raise ValueError(
            "the likelihood is flat in some direction at its maximum: the coefficients "
            "cannot be estimated from these counts"
        ) from None
    beta = best[: k + 1]
    result = _result(
        beta,
        covariance,
        names,
        np.column_stack([x, report]),
        yes_arr,
        n_arr,
        t,
        c,
        level,
        bool(found.success),
        int(found.nit),
    )
    top = loglik(best)
    coefficients = []
    for j, coef in enumerate(result.coefficients):
        lr_p = math.nan
        if coef.name != INTERCEPT:
            sub = _maximize_numerically(lambda p, j=j: loglik(p, drop=j), np.delete(best, j))
            stat = 2 * (top - loglik(sub, drop=j))
            lr_p = float(stats.chi2.sf(max(0.0, stat), 1))
        coefficients.append(replace(coef, lr_p_value=lr_p))
    # The log-likelihood is the joint one of both reports (z's model included).
    return replace(result, coefficients=tuple(coefficients), log_likelihood=top)


def _maximize_numerically(fun, start: np.ndarray) -> np.ndarray:
    res = optimize.minimize(lambda p: -fun(p), start, method="BFGS", options={"gtol": 1e-7})
    return res.x


def _numerical_hessian(fun, at: np.ndarray, step: float = 1e-4) -> np.ndarray:
    size = len(at)
    hessian = np.zeros((size, size))
    for i in range(size):
        for j in range(i, size):
            e_i, e_j = np.eye(size)[i] * step, np.eye(size)[j] * step
            value = (
                fun(at + e_i + e_j)
                - fun(at + e_i - e_j)
                - fun(at - e_i + e_j)
                + fun(at - e_i - e_j)
            ) / (4 * step * step)
            hessian[i, j] = hessian[j, i] = value
    return hessian
