"""Time of the randomized-response logistic regression at 10 000 and 1 000 000 responses.

Run: ``.venv/bin/python bench/regression.py`` (a few seconds). Respondents get a faculty
(5 options), a year of study (4) and an age (18…40), so up to 460 covariate patterns;
their true answers follow a known logistic model and their reports go through the
default forced-response design. The reports are then grouped per (pattern, report) as
the database's ``GROUP BY`` returns them, and only the fit from those counts is timed
(median of ``--repeats``, 51 by default): its cost depends on the number of patterns,
not of people. A fit includes the likelihood-ratio test of every term (one refit per
term), about 0.1 s here.

Targets: fit at 1M ≤ 1 s and fit(1M)/fit(10k) ≤ 3.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from estimator.randomized_response import ForcedResponse  # noqa: E402
from estimator.regression import binary_line, design_matrix, fit  # noqa: E402

FACULTIES = ("Arts", "Law", "Medicine", "Science", "Engineering")
YEARS = ("1", "2", "3", "4")
AGES = np.arange(18, 41)
SIZES = (10_000, 1_000_000)
TRUE_BETA = np.array([-2.0, 0.3, -0.2, 0.5, 0.1, 0.2, 0.4, 0.6, 0.03])


def all_patterns():
    faculty, year, age = np.meshgrid(np.arange(5), np.arange(4), AGES, indexing="ij")
    faculty, year, age = faculty.ravel(), year.ravel(), age.ravel()
    return design_matrix(
        {
            "faculty": [FACULTIES[i] for i in faculty],
            "year": [YEARS[i] for i in year],
            "age": age.tolist(),
        },
        levels={"faculty": FACULTIES, "year": YEARS},
    )


def grouped_counts(n: int, patterns, rng: np.random.Generator):
    """Simulate n respondents and return (yes, n) per pattern — what GROUP BY returns."""
    design = ForcedResponse()
    pattern = rng.integers(0, len(patterns.rows), size=n)
    q = 1 / (1 + np.exp(-(patterns.rows @ TRUE_BETA)))
    truth = (rng.random(n) < q[pattern]).astype(np.int8)
    report = design.simulate(truth, rng)
    size = len(patterns.rows)
    return np.bincount(pattern, weights=report, minlength=size), np.bincount(
        pattern, minlength=size
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=51)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    patterns = all_patterns()
    t, c = binary_line(ForcedResponse().response_matrix)
    times = {}
    print("responses   patterns  fit (median ms)  iterations  age coef (true 0.03)")
    for n in SIZES:
        yes, counts = grouped_counts(n, patterns, rng)
        fit(patterns, yes, counts, t=t, c=c)  # warm-up: first calls pay for imports
        samples = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            result = fit(patterns, yes, counts, t=t, c=c)
            samples.append(time.perf_counter() - start)
        times[n] = float(np.median(samples))
        age = result["age"]
        print(
            f"{n:>9,}  {result.n_patterns:>9}  {1000 * times[n]:15.2f}  {result.iterations:>10}"
            f"  {age.estimate:.4f} ± {age.std_error:.4f}"
        )
    ratio = times[SIZES[1]] / times[SIZES[0]]
    big = times[SIZES[1]]
    print(f"\nratio 1M/10k = {ratio:.2f} (target ≤ 3): {'ok' if ratio <= 3 else 'MISSED'}")
    print(f"fit at 1M = {1000 * big:.1f} ms (target ≤ 1000 ms): {'ok' if big <= 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
