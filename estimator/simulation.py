"""Simulated respondents: true values drawn from a distribution the instructor or the
demo names, then randomized by the question's own design (``design.simulate``).

A truth is given per question in the form that suits its kind:

- a number in [0, 1]: the true rate of "yes" (two true values, as a yes/no question has);
- a list of probabilities, one per true value (a choice question's options, in order);
- ``{"mean": m, "sd": s}``: whole numbers from a normal law, rounded and clipped to the
  question's bounds (a number question);
- ``{"uniform": True}``: every true value equally likely (any question); ``None`` too
  (for yes/no: the true rate ½).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from estimator.designs import Design

Truth = float | Sequence[float] | Mapping[str, Any]


def _probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
    value = float(value)
    if not 0 <= value <= 1:
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    return value


def _finite(name: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (positive and value < 0):
        raise ValueError(f"{name} must be a finite number{' ≥ 0' if positive else ''}")
    return value


def draw_true_values(
    design: Design, truth: Truth | None, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` true values for ``design`` from ``truth`` (see the module's docstring);
    a clear ValueError when the truth does not fit the question."""
    support = np.asarray(design.true_values, dtype=np.int64)
    if truth is None:
        truth = 0.5 if support.size == 2 else {"uniform": True}
    if isinstance(truth, Mapping):
        if truth.get("uniform") is True and set(truth) == {"uniform"}:
            return rng.choice(support, size=n)
        if set(truth) == {"mean", "sd"}:
            mean, sd = _finite("mean", truth["mean"]), _finite("sd", truth["sd"], positive=True)
            drawn = np.rint(rng.normal(mean, sd, n)).astype(np.int64)
            return np.clip(drawn, support[0], support[-1])
        raise ValueError('a true distribution is {"mean": m, "sd": s} or {"uniform": true}')
    if isinstance(truth, numbers.Real) and not isinstance(truth, bool):
        if design.asks_innocuous:
            # The rate is the sensitive question's; the innocuous answers follow the
            # prevalence the design plans with (its planning_other).
            rate = _probability("the true rate", truth)
            sensitive = rng.random(n) < rate
            return (sensitive + 2 * (rng.random(n) < design.planning_other)).astype(np.int64)
        if support.size != 2:
            raise ValueError(
                f"a single true rate fits a yes/no question; give {support.size} "
                "probabilities, one per option, or a distribution"
            )
        return (rng.random(n) < _probability("the true rate", truth)).astype(np.int64)
    if isinstance(truth, str | bytes) or not isinstance(truth, Sequence):
        raise ValueError(f"cannot simulate from {truth!r}")
    shares = np.array([_probability("each probability", p) for p in truth], dtype=float)
    if shares.size != support.size:
        raise ValueError(f"give one probability per true value ({support.size}), got {shares.size}")
    if abs(shares.sum() - 1) > 1e-9:
        raise ValueError(f"the probabilities must sum to 1, got {shares.sum():g}")
    return rng.choice(support, size=n, p=shares / shares.sum())


def simulate_reports(
    design: Design, truth: Truth | None, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` randomized reports of simulated respondents: the design's own sampler."""
    return np.asarray(design.simulate(draw_true_values(design, truth, n, rng), rng))
