"""Cross-tabulation of two randomized questions: joint prevalences, phi and odds ratio.

Each respondent answers both questions through their own coins, independently, so the
probability of the pair of reports (r₁, r₂) given the pair of true answers (x₁, x₂) is
M₁[r₁, x₁]·M₂[r₂, x₂]: flattened row by row, the joint report distribution is
λ = (M₁ ⊗ M₂)·π with π the true joint table [1]_ [2]_. Inverting the Kronecker product
(its inverse is M₁⁻¹ ⊗ M₂⁻¹) gives the unbiased estimate π̂ = (M₁⁻¹ ⊗ M₂⁻¹)·λ̂, whose
covariance follows from the multinomial covariance of λ̂ (linear, so exact). Cells of π̂
can be negative; the maximum-likelihood estimate on the probability simplex (EM [3]_) is
the table to display, and the one phi and the odds ratio are computed from.

Intervals
---------
* Cells: the unbiased estimate ± z·se (Wald), clipped to [0, 1] and widened to contain
  the displayed (maximum-likelihood) cell, with the variance evaluated at the fitted
  report frequencies λ̃ = (M₁ ⊗ M₂)·π̃ (½ added per report cell, so that a design
  without privacy and an empty cell do not give a zero variance). A negative unbiased
  cell would give (0, 0) or a sliver such as (0, 0.008): the interval then reaches the
  maximum-likelihood cell + z·se (and symmetrically above 1), never claiming a
  certainty the coins cannot give.
* phi (2×2): delta method on the φ scale, clipped to [−1, 1], evaluated at the table
  with ½ respondent added per true cell (Haldane–Anscombe). With randomized response the
  noise of φ̂ comes mostly from the coins and does not shrink near ±1, so neither Fisher's
  z nor log odds help here: both blow the interval up near a boundary.
* Odds ratio (2×2): with the margins fixed the odds ratio is increasing in φ, so the
  φ interval is mapped through the estimated margins. A φ beyond what the margins allow
  is a table with an empty cell, and the interval then reaches 0 or ∞, as it does when
  the estimated table itself has an empty cell: never a finite interval that pretends
  to know.
* When a margin of the estimated table is 0, φ and the odds ratio are undefined: the
  estimate is NaN and the intervals are the whole range.
:func:`coverage_study` measures how often these intervals cover the truth.

References
----------
.. [1] A. Chaudhuri and R. Mukerjee, "Randomized Response: Theory and Techniques",
   Marcel Dekker, 1988, ch. 5 (several attributes).
.. [2] D. W. Heck and M. Moshagen, "RRreg: An R package for correlation and regression
   analyses of randomized response data", J. Stat. Softw. 85(2), 2018 (``RRcor``).
.. [3] A. van den Hout and P. G. M. van der Heijden, "Randomized response, statistical
   disclosure control and misclassification: a review", Int. Stat. Rev. 70(2):269–288,
   2002, §4 (the EM algorithm for the MLE on the simplex).
.. [4] A. Agresti, "Categorical Data Analysis", 3rd ed., Wiley, 2013, §2.4 (odds ratio,
   Yule's Q), §16.1 (delta method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from estimator.estimates import simplex_mle


def joint_response_matrix(matrix_1: np.ndarray, matrix_2: np.ndarray) -> np.ndarray:
    """M₁ ⊗ M₂: P((r₁, r₂) | (x₁, x₂)) with pairs flattened row by row (r₁ major)."""
    return np.kron(_check_matrix(matrix_1), _check_matrix(matrix_2))


def _check_matrix(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise ValueError(f"a response matrix is square with 2 or more rows, got {matrix.shape}")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ValueError("a response matrix holds probabilities")
    if not np.allclose(matrix.sum(axis=0), 1.0, atol=1e-9):
        raise ValueError("each column of a response matrix M[report, truth] must sum to 1")
    if abs(np.linalg.det(matrix)) < 1e-12:
        raise ValueError("this design's response matrix cannot be inverted: nothing to estimate")
    return matrix


def _z(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level!r}")
    return float(stats.norm.isf((1 - level) / 2))


# --- Vectorised core (a leading axis of samples is allowed everywhere) ----------------------


def _covariance(lam: np.ndarray, inverse: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Cov(π̂) = A⁻¹ (diag λ − λλᵀ) A⁻ᵀ / n for report frequencies λ (…, K)."""
    outer = lam[..., :, None] * lam[..., None, :]
    multinomial = np.einsum("...i,ij->...ij", lam, np.eye(lam.shape[-1])) - outer
    return inverse @ multinomial @ inverse.T / np.asarray(n, dtype=float)[..., None, None]


def _smoothed_fit(counts: np.ndarray, joint: np.ndarray):
    """n, the MLE table π̃, and the fitted report frequencies with ½ added per report cell.

    The variance is evaluated at the fitted λ̃ = Aπ̃ (not at λ̂, which may be impossible
    under the design), smoothed so that a design without privacy and an empty cell do
    not give a zero variance.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=-1)
    pi = simplex_mle(joint, counts)
    fitted = n[..., None] * (pi @ joint.T)
    smoothed = (fitted + 0.5) / (n[..., None] + 0.5 * counts.shape[-1])
    return n, pi, smoothed


def cell_intervals(counts: np.ndarray, joint: np.ndarray, z: float):
    """The MLE cells, their standard errors and intervals (see the module notes).

    ``counts`` (…, K) are flattened joint report counts, ``joint`` is M₁ ⊗ M₂. The
    interval is the unbiased estimate ± z·se clipped to [0, 1], widened to contain the
    displayed (MLE) cell and, when the unbiased estimate is outside [0, 1], to the MLE
    ± z·se on that side.
    """
    n, pi, smoothed = _smoothed_fit(counts, joint)
    inverse = np.linalg.inv(joint)
    unbiased = (np.asarray(counts, dtype=float) / n[..., None]) @ inverse.T
    se = np.sqrt(np.diagonal(_covariance(smoothed, inverse, n), axis1=-2, axis2=-1))
    low = np.minimum(np.clip(unbiased - z * se, 0, 1), pi)
    high = np.maximum(np.clip(unbiased + z * se, 0, 1), pi)
    high = np.where(unbiased < 0, np.maximum(high, np.clip(pi + z * se, 0, 1)), high)
    low = np.where(unbiased > 1, np.minimum(low, np.clip(pi - z * se, 0, 1)), low)
    return pi, se, low, high


def _pairs(pi: np.ndarray) -> tuple[np.ndarray, ...]:
    """π₀₀, π₀₁, π₁₀, π₁₁ of flattened 2×2 tables (truth 0 = "no", 1 = "yes")."""
    return pi[..., 0], pi[..., 1], pi[..., 2], pi[..., 3]


def phi_of(pi: np.ndarray) -> np.ndarray:
    """φ = (π₁₁π₀₀ − π₁₀π₀₁)/sqrt(π₁·π₀·π·₁π·₀) of flattened 2×2 tables."""
    p00, p01, p10, p11 = _pairs(pi)
    margins = (p10 + p11) * (p00 + p01) * (p01 + p11) * (p00 + p10)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip((p11 * p00 - p10 * p01) / np.sqrt(margins), -1.0, 1.0)  # rounding


def yule_q_of(pi: np.ndarray) -> np.ndarray:
    """Yule's Q = (π₁₁π₀₀ − π₁₀π₀₁)/(π₁₁π₀₀ + π₁₀π₀₁) = (OR − 1)/(OR + 1)."""
    p00, p01, p10, p11 = _pairs(pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p11 * p00 - p10 * p01) / (p11 * p00 + p10 * p01)


def _gradient(function, pi: np.ndarray, step: float = 1e-7) -> np.ndarray:
    """Central-difference gradient of a function of flattened 2×2 tables, (…, 4)."""
    columns = []
    for j in range(4):
        shift = np.zeros(4)
        shift[j] = step
        columns.append((function(pi + shift) - function(pi - shift)) / (2 * step))
    return np.stack(columns, axis=-1)


def association_intervals(counts: np.ndarray, joint: np.ndarray, z: float):
    """φ and the odds ratio of 2×2 cross-tabs with their intervals (see module notes).

    Returns (phi, phi_low, phi_high, odds_ratio, or_low, or_high), each of shape (…).
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=-1)
    pi = simplex_mle(joint, counts)
    # Haldane–Anscombe: ½ respondent added to each true cell for the delta method only.
    smooth = (n[..., None] * pi + 0.5) / (n[..., None] + 2.0)
    covariance = _covariance(smooth @ joint.T, np.linalg.inv(joint), n)

    def delta_se(gradient):
        return np.sqrt(np.einsum("...i,...ij,...j->...", gradient, covariance, gradient))

    phi_s = phi_of(smooth)
    phi_se = delta_se(_gradient(phi_of, smooth))
    phi_low, phi_high = np.clip(phi_s - z * phi_se, -1, 1), np.clip(phi_s + z * phi_se, -1, 1)
    odds_low, odds_high = odds_at_phi(smooth, phi_low), odds_at_phi(smooth, phi_high)
    phi, odds = phi_of(pi), odds_from_yule(yule_q_of(pi))
    phi_low, phi_high = _reaching(phi, phi_low, phi_high, -1.0, 1.0)
    odds_low, odds_high = _reaching(odds, odds_low, odds_high, 0.0, np.inf)
    return phi, phi_low, phi_high, odds, odds_low, odds_high


def _reaching(estimate, low, high, least, most):
    """Widen an interval to contain the estimate, to reach a bound the estimate sits on,
    and to the whole range when the estimate is undefined (a margin of the table is 0)."""
    undefined = np.isnan(estimate)
    at_least, at_most = estimate <= least + 1e-9, estimate >= most - 1e-9
    low = np.where(undefined | at_least, least, np.fmin(low, estimate))
    high = np.where(undefined | at_most, most, np.fmax(high, estimate))
    return low, high


def odds_at_phi(pi: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """The odds ratio of the 2×2 table with the margins of ``pi`` and correlation φ.

    With margins fixed the odds ratio increases with φ, so an interval for φ maps to one
    for the odds ratio; a φ beyond what the margins allow is a table with an empty
    cell: odds ratio 0 or ∞.
    """
    p00, p01, p10, p11 = _pairs(pi)
    row, column = p10 + p11, p01 + p11
    d = phi * np.sqrt(row * (1 - row) * column * (1 - column))
    agree = (row * column + d) * ((1 - row) * (1 - column) + d)
    differ = (row * (1 - column) - d) * ((1 - row) * column - d)
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where(differ > 0, agree / differ, np.inf)
    return np.where(agree > 0, odds, 0.0)


def odds_from_yule(q: np.ndarray) -> np.ndarray:
    """OR = (1 + Q)/(1 − Q): 0 at Q = −1 and ∞ at Q = 1."""
    with np.errstate(divide="ignore"):
        return (1 + q) / (1 - q)


# --- The result object ----------------------------------------------------------------------


@dataclass(frozen=True)
class Association:
    """A measure of association with its interval (endpoints may be 0 or ∞ for odds)."""

    estimate: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, repr=False)
class CrossTab:
    """Joint prevalences of two randomized questions, rows = first question's options.

    ``estimate`` is the maximum-likelihood table on the simplex (display it);
    ``estimate_unbiased`` is (M₁⁻¹ ⊗ M₂⁻¹)·λ̂, whose cells may be negative, with its
    ``covariance`` (cells flattened row by row). ``std_error``, ``ci_low`` and ``ci_high``
    are per cell (see the module notes). ``design_p_value`` tests whether the reports
    could come from the design at all (a conservative likelihood-ratio test against the
    tables the design can produce); a tiny value means respondents did not follow the
    coins, and then no interval here can be trusted.
    """

    counts: np.ndarray
    estimate: np.ndarray
    estimate_unbiased: np.ndarray
    covariance: np.ndarray
    std_error: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    level: float
    design_p_value: float
    phi: Association | None
    odds_ratio: Association | None

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def contradicts_design(self) -> bool:
        """The reports are very unlikely (p < 0.001) under any true table."""
        return self.design_p_value < 0.001

    def __repr__(self) -> str:
        rows, columns = self.estimate.shape
        lines = [f"Cross-tab of randomized reports, n = {self.n}, {100 * self.level:g} % intervals"]
        for i in range(rows):
            cells = (
                f"{self.estimate[i, j]:.3f} ({self.ci_low[i, j]:.3f}, {self.ci_high[i, j]:.3f})"
                for j in range(columns)
            )
            lines.append(f"  truth {i}: " + "   ".join(cells))
        for name, value in (("phi", self.phi), ("odds ratio", self.odds_ratio)):
            if value is not None:
                lines.append(
                    f"  {name} = {value.estimate:.4g} ({value.ci_low:.4g}, {value.ci_high:.4g})"
                )
        if self.contradicts_design:
            lines.append(f"  the reports contradict the design (p = {self.design_p_value:.2g})")
        return "\n".join(lines)


def _check_counts(counts, shape: tuple[int, int]) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    if counts.shape != shape:
        raise ValueError(f"counts must be a {shape[0]}×{shape[1]} table, got {counts.shape}")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("counts must be whole numbers >= 0")
    if counts.sum() < 1:
        raise ValueError("No reports yet: a cross-tab needs at least one respondent")
    return counts


def design_fit_p_value(counts: np.ndarray, joint: np.ndarray) -> float:
    """Conservative p-value of G² = 2Σ k log(λ̂/λ̃) for "these reports come from the design".

    λ̃ is the best fit the design allows (the MLE on the simplex). Under the design G²
    follows a mixture of χ²_j, j < K (a chi-bar-square: the simplex has boundaries), whose
    tail is below χ²_{K−1}'s, so this p-value is never too small.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    fitted = n * (simplex_mle(joint, counts) @ joint.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        g2 = 2 * float(np.sum(np.where(counts > 0, counts * np.log(counts / fitted), 0.0)))
    return float(stats.chi2.sf(max(g2, 0.0), counts.size - 1))


def crosstab(
    counts: np.ndarray, matrix_1: np.ndarray, matrix_2: np.ndarray, level: float = 0.95
) -> CrossTab:
    """Estimate the true joint table of two randomized questions from their report pairs.

    Parameters
    ----------
    counts
        ``counts[r1, r2]``: respondents whose reports were option r1 to the first
        question and r2 to the second (a GROUP BY on the two answers).
    matrix_1, matrix_2
        The designs' response matrices M[report, truth] (``design.response_matrix``).
    level
        Level of every interval.

    Examples
    --------
    >>> coins = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> tab = crosstab([[290, 210], [215, 285]], coins, coins)
    >>> np.round(tab.estimate, 3).tolist()
    [[0.405, 0.095], [0.105, 0.395]]
    >>> round(tab.phi.estimate, 3), round(tab.phi.ci_low, 3), round(tab.phi.ci_high, 3)
    (0.6, 0.354, 0.844)
    >>> round(tab.odds_ratio.estimate, 2), round(tab.odds_ratio.ci_low, 2)
    (16.04, 4.39)
    """
    z = _z(level)
    joint = joint_response_matrix(matrix_1, matrix_2)
    shape = (len(matrix_1), len(matrix_2))
    flat = _check_counts(counts, shape).ravel()
    inverse = np.linalg.inv(joint)
    estimate, se, low, high = cell_intervals(flat, joint, z)
    association = {"phi": None, "odds_ratio": None}
    if shape == (2, 2):
        phi, phi_low, phi_high, odds, odds_low, odds_high = association_intervals(flat, joint, z)
        association = {
            "phi": Association(float(phi), float(phi_low), float(phi_high)),
            "odds_ratio": Association(float(odds), float(odds_low), float(odds_high)),
        }
    n = flat.sum()
    return CrossTab(
        counts=flat.reshape(shape),
        estimate=estimate.reshape(shape),
        estimate_unbiased=(inverse @ (flat / n)).reshape(shape),
        covariance=_covariance(flat / n, inverse, n),
        std_error=se.reshape(shape),
        ci_low=low.reshape(shape),
        ci_high=high.reshape(shape),
        level=float(level),
        design_p_value=design_fit_p_value(flat, joint),
        **association,
    )


# --- Coverage -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CoverageRow:
    """Coverage of one (true table, n) point, in [0, 1]; phi/odds only for 2×2."""

    table: str
    n: int
    cell_mean: float
    cell_min: float
    cell_width: float
    phi: float | None
    odds_ratio: float | None


def coverage_study(
    matrix_1: np.ndarray,
    matrix_2: np.ndarray,
    tables: dict[str, np.ndarray],
    ns: tuple[int, ...] = (50, 100, 500, 1000, 10_000),
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> list[CoverageRow]:
    """Seeded simulation of the cross-tab intervals' coverage over true tables and n.

    For every named true joint table (rows: first question) and n, ``reps`` samples of
    report pairs are drawn (multinomial with λ = (M₁ ⊗ M₂)·π) and the app's own
    vectorised interval code is applied to them all at once.
    """
    z = _z(level)
    joint = joint_response_matrix(matrix_1, matrix_2)
    rng = np.random.default_rng(seed)
    rows = []
    for name, table in tables.items():
        pi = np.asarray(table, dtype=float).ravel()
        if pi.size != joint.shape[0] or abs(pi.sum() - 1) > 1e-9 or np.any(pi < 0):
            raise ValueError(f"table {name!r} is not a joint distribution of the right shape")
        lam = joint @ pi
        for n in ns:
            counts = rng.multinomial(n, lam / lam.sum(), size=reps)
            _, _, low, high = cell_intervals(counts, joint, z)
            covered = (low <= pi + 1e-12) & (pi - 1e-12 <= high)
            phi_cov = odds_cov = None
            if pi.size == 4:
                phi, phi_low, phi_high, _, odds_low, odds_high = association_intervals(
                    counts, joint, z
                )
                true_phi, true_odds = float(phi_of(pi)), float(odds_from_yule(yule_q_of(pi)))
                phi_cov = float(np.mean((phi_low <= true_phi) & (true_phi <= phi_high)))
                odds_cov = float(np.mean((odds_low <= true_odds) & (true_odds <= odds_high)))
            rows.append(
                CoverageRow(
                    table=name,
                    n=int(n),
                    cell_mean=float(covered.mean()),
                    cell_min=float(covered.mean(axis=0).min()),
                    cell_width=float((high - low).mean()),
                    phi=phi_cov,
                    odds_ratio=odds_cov,
                )
            )
    return rows


def weakest(rows: list[CoverageRow]) -> dict[str, tuple[float, str, int]]:
    """Lowest coverage of each quantity and where it happens: {quantity: (cov, table, n)}."""
    worst = {}
    for quantity in ("cell_min", "phi", "odds_ratio"):
        scored = [
            (getattr(r, quantity), r.table, r.n) for r in rows if getattr(r, quantity) is not None
        ]
        if scored:
            worst[quantity] = min(scored)
    return worst
