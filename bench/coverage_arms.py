"""Coverage of the designs with arms, the split-ballot difference (yes/no, multiple
choice and numbers) and the one-bit mean.

Run: ``.venv/bin/python bench/coverage_arms.py [--reps 300]`` (part of ``coverage.py``).
Each cell draws ``reps`` surveys of n respondents (the arm by the design's weights, the
report from the latent classes), estimates through the design's own
``estimate(...).ci()`` (profile-likelihood intervals; β of the cheating model by Wald)
and counts how often the interval holds the truth. Targets as for the other kinds: mean
coverage 94–96.5 %, no cell below 92 % for n ≥ 50 — judged with the Monte-Carlo error of
``reps`` draws in mind (±2.5 % at 300 draws). Duchi et al.'s one-bit mean is checked on
the grid of ``coverage.py``'s Laplace mean (all mass at a bound, uniform, skewed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from estimator.arms import (  # noqa: E402
    CheatingDetection,
    StochasticLieDetector,
    UnrelatedQuestionUnknown,
)
from estimator.compare import compare  # noqa: E402
from estimator.designs import (  # noqa: E402
    DirectBinary,
    ForcedResponse,
    KRandomizedResponse,
    Laplace,
)
from estimator.estimates import NumberStats  # noqa: E402
from estimator.intervals import affine_interval  # noqa: E402
from estimator.one_bit import OneBitMean  # noqa: E402
from estimator.split import SplitDesign, with_direct_share  # noqa: E402

LAPLACE = Laplace(epsilon=1.0, lower=0, upper=10)

NS = (50, 200, 1000)
LEVEL = 0.95
CASES = (
    (StochasticLieDetector(), ((0.1, 0.8), (0.3, 0.6), (0.6, 0.9))),
    (
        CheatingDetection(p_truth=(0.8, 0.4), p_yes=(0.5, 0.5)),
        ((0.2, 0.0), (0.3, 0.1), (0.1, 0.3)),
    ),
    (UnrelatedQuestionUnknown(), ((0.05, 0.5), (0.3, 0.3), (0.6, 0.8))),
)


def arms_cell(design, theta, n: int, reps: int, rng: np.random.Generator) -> dict[str, float]:
    names = (*design.parameter_names, *design.derived_names)
    truth = dict(zip(design.parameter_names, theta, strict=True)) | design.derived(theta)
    hits = dict.fromkeys(names, 0)
    rates = design.yes_rates(theta)
    for _ in range(reps):
        per_arm = rng.multinomial(n, design.arm_weights)
        yes = rng.binomial(per_arm, rates)
        est = design.estimate([per_arm[0] - yes[0], yes[0], per_arm[1] - yes[1], yes[1]])
        if not est.has_data:  # an arm nobody drew: no estimate, counted as a miss
            continue
        for name in names:
            low, high = est.ci(name, LEVEL)
            hits[name] += low - 1e-9 <= truth[name] <= high + 1e-9
    return {name: hits[name] / reps for name in names}


def split_cell(q_rr: float, q_direct: float, n: int, share: float, reps, rng) -> float:
    """The split ballot's difference: randomized arm (forced response) against direct."""
    design, direct = ForcedResponse(), DirectBinary()
    truth = q_rr - q_direct
    hits = 0
    for _ in range(reps):
        n_direct = rng.binomial(n, share)
        n_rr = n - n_direct
        rr = design.estimate(rng.binomial(n_rr, design.lambda_for(q_rr)), n_rr)
        d = direct.estimate(rng.binomial(n_direct, q_direct), n_direct)
        if not (rr.has_data and d.has_data):
            continue
        c = compare(rr, d, LEVEL)
        hits += c.ci_low <= truth <= c.ci_high
    return hits / reps


def choice_split_cell(
    pi_rr: tuple[float, ...], pi_direct: tuple[float, ...], n: int, share: float, reps, rng
) -> list[float]:
    """A multiple-choice split ballot (k-RR, ε = 2): each option's difference, Wald."""
    split = SplitDesign(KRandomizedResponse(epsilon=2.0, k=len(pi_rr)), share)
    rates = split.randomized_design.response_matrix @ np.asarray(pi_rr)
    truth = np.asarray(pi_rr) - np.asarray(pi_direct)
    hits = np.zeros(len(pi_rr))
    for _ in range(reps):
        n_direct = rng.binomial(n, share)
        counts = [*rng.multinomial(n - n_direct, rates), *rng.multinomial(n_direct, pi_direct)]
        comparisons = split.estimate(counts).comparisons(LEVEL)
        if comparisons is None:
            continue
        hits += [c.ci_low <= d <= c.ci_high for c, d in zip(comparisons, truth, strict=True)]
    return list(hits / reps)


def number_split_cell(
    shares_rr: np.ndarray,
    shares_direct: np.ndarray,
    n: int,
    share: float,
    reps,
    rng,
    randomized=LAPLACE,
) -> float:
    """A number split ballot (Laplace or one bit, ε = 1 on 0…10): the difference of
    means, Welch. The true values follow ``shares_rr`` on the randomized ballot and
    ``shares_direct`` on the direct one (answers shaded when asked directly)."""
    split = with_direct_share(randomized, share)
    support = np.arange(11)
    truth = float((shares_rr - shares_direct) @ support)
    hits = 0
    for _ in range(reps):
        n_direct = rng.binomial(n, share)
        reports = randomized.simulate(rng.choice(11, n - n_direct, p=shares_rr), rng)
        answers = rng.choice(11, n_direct, p=shares_direct)
        if randomized.sends_one_bit:
            ones = int(reports.sum())
            given = [len(reports) - ones, ones]
        else:
            given = NumberStats(len(reports), int(reports.sum()), int((reports**2).sum()))
        direct = NumberStats(len(answers), int(answers.sum()), int((answers**2).sum()))
        comparison = split.estimate(given, direct=direct).comparison(LEVEL)
        if comparison is None:
            continue
        hits += comparison.ci_low <= truth <= comparison.ci_high
    return hits / reps


def report(reps: int, seed: int) -> bool:
    rng = np.random.default_rng(seed)
    ok = True
    for design, thetas in CASES:
        print(f"\n{design!r}: profile-likelihood intervals, {reps} surveys per cell")
        names = (*design.parameter_names, *design.derived_names)
        header = "".join(f"{str(t) + ' ' + name:>22}" for t in thetas for name in names)
        print("n      " + header)
        grid = []
        for n in NS:
            row = []
            for theta in thetas:
                cell = arms_cell(design, theta, n, reps, rng)
                row += [cell[name] for name in names]
            grid.append(row)
            print(f"{n:<7}" + "".join(f"{100 * c:22.1f}" for c in row))
        ok &= _targets(np.array(grid))
    print(f"\nSplit ballot (forced response vs direct, share 0.3): difference, Wald, {reps}")
    truths = ((0.2, 0.1), (0.3, 0.3), (0.05, 0.0))
    print("n      " + "".join(f"{str(t):>14}" for t in truths))
    grid = []
    for n in NS:
        row = [split_cell(a, b, n, 0.3, reps, rng) for a, b in truths]
        grid.append(row)
        print(f"{n:<7}" + "".join(f"{100 * c:14.1f}" for c in row))
    ok &= _targets(np.array(grid))
    print("\nSplit ballot, multiple choice (k-RR ε = 2, k = 3, share 0.3): each option's")
    print(f"difference, Wald, {reps} surveys per cell")
    pairs = (((0.5, 0.3, 0.2), (0.6, 0.3, 0.1)), ((1 / 3, 1 / 3, 1 / 3),) * 2)
    print("n      " + "".join(f"{f'pair {i} option {j}':>18}" for i in (1, 2) for j in range(3)))
    grid = []
    for n in NS:
        row = [c for a, b in pairs for c in choice_split_cell(a, b, n, 0.3, reps, rng)]
        grid.append(row)
        print(f"{n:<7}" + "".join(f"{100 * c:18.1f}" for c in row))
    ok &= _targets(np.array(grid))
    support = np.arange(11)
    skewed = 0.7**support / (0.7**support).sum()
    uniform = np.full(11, 1 / 11)
    # Asked directly, everyone says two less (not below 0).
    shaded = np.bincount(np.maximum(support - 2, 0), weights=skewed, minlength=11)
    number_cases = {
        "uniform, same": (uniform, uniform),
        "skewed vs shaded": (skewed, shaded),
        "uniform vs skewed": (uniform, skewed),
    }
    for randomized in (LAPLACE, OneBitMean(epsilon=1.0, lower=0, upper=10)):
        print(f"\nSplit ballot, number ({randomized!r}, share 0.3): difference of means,")
        print(f"Welch, {reps} surveys per cell")
        print("n      " + "".join(f"{name:>20}" for name in number_cases))
        grid = []
        for n in NS:
            row = [
                number_split_cell(a, b, n, 0.3, reps, rng, randomized)
                for a, b in number_cases.values()
            ]
            grid.append(row)
            print(f"{n:<7}" + "".join(f"{100 * c:20.1f}" for c in row))
        ok &= _targets(np.array(grid))
    ok &= one_bit_report(max(reps, 20_000), rng)
    return ok


def one_bit_report(reps: int, rng: np.random.Generator) -> bool:
    """Duchi et al.'s one-bit mean (ε = 1 on 0…10): the report count is binomial with
    rate c + t·u, u the normalized true mean, so every count's interval is computed once
    (the design's own line and Wilson interval) and ``reps`` draws look theirs up."""
    design = OneBitMean(epsilon=1.0, lower=0, upper=10)
    support = np.arange(11)
    skewed = 0.6**support
    truths = {
        "all at a bound": (support == 0).astype(float),
        "uniform": np.full(11, 1 / 11),
        "skewed": skewed / skewed.sum(),
    }
    print(f"\n{design!r}: mean, Wilson through the line, {reps} surveys per cell")
    print("n      " + "".join(f"{name:>16}" for name in truths))
    grid = []
    for n in (50, 200, 1000, 10000):
        low, high, _ = affine_interval(np.arange(n + 1), n, design.c, design.t)
        row = []
        for shares in truths.values():
            u = float(shares @ support) / 10
            k = rng.binomial(n, design.c + design.t * u, size=reps)
            row.append(np.mean((low[k] <= u) & (u <= high[k])))
        grid.append(row)
        print(f"{n:<7}" + "".join(f"{100 * c:16.1f}" for c in row))
    return _targets(np.array(grid))


def _targets(coverage: np.ndarray) -> bool:
    mean, low = coverage.mean(), coverage.min()
    ok_mean, ok_min = 0.94 <= mean <= 0.965, low >= 0.92
    print(
        f"  mean {100 * mean:.2f} % ({'PASS' if ok_mean else 'FAIL'}), "
        f"min {100 * low:.2f} % ({'PASS' if ok_min else 'FAIL'})"
    )
    return ok_mean and ok_min


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args()
    return 0 if report(args.reps, args.seed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
