"""Coverage of the cross-tab intervals: joint cells, phi and the odds ratio.

Run: ``.venv/bin/python bench/coverage_crosstab.py`` (about a minute; ``--reps`` to
change the replications per point). Two questions through the default two fair coins
(2×2: cells, phi, odds ratio) and a three-option question through k-ary randomized
response at ε = ln 3 crossed with a yes/no one (3×2: cells). For every true joint table
and n, ``reps`` seeded samples of report pairs go through the app's own vectorised code.

Targets as for binary questions, at nominal 95 %: mean coverage within 94–96.5 %, no
point below 92 % for n ≥ 50. The last lines say where each interval is weakest.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from estimator.crosstab import coverage_study, weakest  # noqa: E402

COINS = np.array([[0.75, 0.25], [0.25, 0.75]])  # forced response, p_truth = p_yes = 1/2
TABLES_2X2 = {  # π₀₀, π₀₁, π₁₀, π₁₁ (row: first question's truth)
    "independent, 50 %": [0.25, 0.25, 0.25, 0.25],
    "independent, 10 %": [0.81, 0.09, 0.09, 0.01],
    "phi +0.6": [0.4, 0.1, 0.1, 0.4],
    "phi -0.6": [0.1, 0.4, 0.4, 0.1],
    "rare, associated": [0.85, 0.05, 0.05, 0.05],
    "skewed": [0.6, 0.3, 0.05, 0.05],
    "one empty cell": [0.5, 0.25, 0.0, 0.25],
}
TABLES_3X2 = {
    "uniform": [1 / 6] * 6,
    "associated": [0.3, 0.05, 0.1, 0.1, 0.05, 0.4],
    "rare option": [0.45, 0.45, 0.04, 0.01, 0.03, 0.02],
}
NS = (50, 100, 500, 1000, 10_000)


def k_rr(k: int, epsilon: float) -> np.ndarray:
    """k-ary randomized response: the true option with probability e^ε/(e^ε + k − 1)."""
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return np.full((k, k), (1 - keep) / (k - 1)) + np.eye(k) * (keep - (1 - keep) / (k - 1))


def pct(value: float | None) -> str:
    return "      —" if value is None else f"{100 * value:6.1f}%"


def print_rows(title: str, rows) -> None:
    print(f"\n{title}")
    print(f"{'true table':<20} {'n':>6}  cells mean  cells min  cell width     phi  odds ratio")
    for r in rows:
        print(
            f"{r.table:<20} {r.n:>6}    {pct(r.cell_mean)}    {pct(r.cell_min)}"
            f"      {r.cell_width:6.3f}  {pct(r.phi)}     {pct(r.odds_ratio)}"
        )


def summarise(rows) -> bool:
    """Print the mean, the minimum and where it happens; True when targets are met."""
    ok = True
    for quantity, (cov, table, n) in weakest(rows).items():
        values = [getattr(r, quantity if quantity != "cell_min" else "cell_mean") for r in rows]
        mean = float(np.mean([v for v in values if v is not None]))
        floor_met, mean_met = cov >= 0.92, 0.94 <= mean <= 0.965
        ok &= floor_met and mean_met
        verdict = "never below 92 %" if floor_met else "BELOW 92 % somewhere"
        if not mean_met:
            verdict += ", mean " + ("conservative (> 96.5 %)" if mean > 0.965 else "TOO LOW")
        print(
            f"{quantity:<11} mean {100 * mean:5.1f} %, weakest {100 * cov:5.1f} % at "
            f"'{table}', n = {n}: {verdict}"
        )
    return ok


def report(reps: int, seed: int) -> bool:
    """Run both cross-tab grids, print them and where they are weakest; True when every
    target is met (bench/coverage.py calls this too)."""
    two = coverage_study(COINS, COINS, TABLES_2X2, NS, reps, seed)
    three = coverage_study(k_rr(3, math.log(3)), COINS, TABLES_3X2, NS, reps, seed)
    print_rows("2×2: forced response × forced response (coverage, nominal 95 %)", two)
    print_rows("3×2: k-ary RR (k = 3, ε = ln 3) × forced response", three)
    print("\nWhere the intervals are weakest (all n >= 50):")
    return summarise(two + three)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    return 0 if report(args.reps, args.seed) else 1


if __name__ == "__main__":
    sys.exit(main())
