"""The maths behind the classroom lessons: differencing attacks, the Laplace mechanism and
its budget, k-anonymity and linkage, the exponential mechanism, local against central
noise, (ε, δ) and the Gaussian mechanism, the reusable holdout, statistical disclosure
control.

Pure numpy/scipy (no Django): the classroom pages only display what these functions
return. Every table is synthetic and generated from a seed that the projector shows, so
a lecture can be replayed exactly and nothing real is ever at stake.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9 (2014): the Laplace
   mechanism (Thm 3.6), basic composition (Thm 3.14), post-processing (Prop 2.1) and the
   exponential mechanism (Thm 3.10, and the remark on monotone utilities).
.. [2] L. Sweeney, "k-anonymity: a model for protecting privacy", International Journal
   of Uncertainty, Fuzziness and Knowledge-Based Systems 10 (2002).
.. [3] S. R. Ganta, S. P. Kasiviswanathan and A. Smith, "Composition attacks and
   auxiliary information in data privacy", KDD 2008 (two k-anonymous releases combined).
.. [4] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", JASA 60 (1965); the local model's √n cost: S. P. Kasiviswanathan et al.,
   "What can we learn privately?", SIAM J. Comput. 40 (2011).
.. [5] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential
   privacy: analytical calibration and optimal denoising", ICML 2018.
.. [6] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold and A. Roth, "The
   reusable holdout: preserving validity in adaptive data analysis", Science 349 (2015):
   Thresholdout (threshold T = 0.04, noise σ = 0.01) and the experiment with features
   that are pure noise.
.. [7] Office for National Statistics, "Statistical disclosure control" (identity,
   attribute and membership disclosure; rounding to base 5, collapsing categories,
   suppressing small cells), and A. Hundepool et al., "Statistical Disclosure Control",
   Wiley, 2012.
.. [8] A. Narayanan and V. Shmatikov, "Robust de-anonymization of large sparse datasets",
   IEEE S&P 2008 (the Netflix Prize data: a few approximately known ratings single out
   a record).
.. [9] Ú. Erlingsson, V. Pihur and A. Korolova, "RAPPOR: randomized aggregatable
   privacy-preserving ordinal response", CCS 2014 (the permanent, memoized randomized
   response that defeats averaging).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

FIRST_NAMES = [
    "Ada",
    "Bela",
    "Cyrus",
    "Dana",
    "Emil",
    "Fatou",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kaia",
    "Luca",
    "Mira",
    "Nils",
    "Omar",
    "Petra",
    "Quinn",
    "Rosa",
    "Sami",
    "Tess",
    "Uma",
    "Viktor",
    "Wren",
    "Xena",
    "Yusuf",
    "Zoe",
    "Aiko",
    "Bruno",
    "Chloe",
    "Dario",
]
SURNAMES = [
    "Novak",
    "Berg",
    "Costa",
    "Duval",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Holm",
    "Ivanova",
    "Jensen",
    "Kowalski",
]
CONDITIONS = ("asthma", "diabetes", "migraine", "flu", "fracture")


def _check_epsilon(epsilon: float) -> float:
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"ε must be a positive number, got {epsilon!r}")
    return epsilon


def _names(rng: np.random.Generator, n: int) -> list[str]:
    """n distinct synthetic names (first name + surname)."""
    pairs = [(f, s) for f in FIRST_NAMES for s in SURNAMES]
    picks = rng.choice(len(pairs), size=n, replace=False)
    return [f"{pairs[i][0]} {pairs[i][1]}" for i in picks]


# The Laplace mechanism


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """The noise scale b = Δf/ε that makes f(x) + Lap(b) ε-differentially private [1]_.

    >>> laplace_scale(0.5)
    2.0
    """
    if not sensitivity > 0:
        raise ValueError(f"the sensitivity must be positive, got {sensitivity!r}")
    return sensitivity / _check_epsilon(epsilon)


def laplace_density(x, scale: float):
    """Lap(0, b) density 1/(2b) · exp(−|x|/b)."""
    return np.exp(-np.abs(np.asarray(x, dtype=float)) / scale) / (2 * scale)


def laplace_error(epsilon: float, level: float = 0.95, sensitivity: float = 1.0) -> float:
    """The error t that the noise stays within with probability ``level``:
    P(|Lap(b)| > t) = exp(−t/b), so t = b · ln(1/(1 − level)). The mean error is b itself.

    >>> round(laplace_error(1.0), 3)
    2.996
    """
    if not 0 < level < 1:
        raise ValueError(f"the level must be between 0 and 1, got {level!r}")
    return laplace_scale(epsilon, sensitivity) * math.log(1 / (1 - level))


def noisy_count(true_count: int, epsilon: float, rng: np.random.Generator) -> float:
    """A counting query (sensitivity 1: one person changes a count by at most 1) answered
    with Laplace noise of scale 1/ε."""
    return float(true_count + rng.laplace(0.0, laplace_scale(epsilon)))


def post_process(noisy: float, n: int) -> int:
    """Round and clamp a noisy count to a possible count 0…n. Free: anything computed from
    an ε-private answer alone is still ε-private [1]_."""
    return int(min(max(round(noisy), 0), n))


@dataclass(frozen=True)
class Budget:
    """A privacy budget under basic composition: k answers at ε each cost k·ε [1]_."""

    total: float
    spent: float = 0.0

    def __post_init__(self):
        _check_epsilon(self.total)

    @property
    def remaining(self) -> float:
        return max(self.total - self.spent, 0.0)

    def allows(self, epsilon: float) -> bool:
        return _check_epsilon(epsilon) <= self.remaining + 1e-12

    def spend(self, epsilon: float) -> Budget:
        if not self.allows(epsilon):
            raise ValueError(
                f"the budget is spent: ε = {epsilon:g} asked, "
                f"{self.remaining:g} left of {self.total:g}"
            )
        return replace(self, spent=self.spent + epsilon)


# The differencing attack


@dataclass(frozen=True)
class Patient:
    name: str
    birth_year: int
    condition: bool


@dataclass(frozen=True)
class DifferencingAttack:
    """Two innocent counts whose difference is one person's condition.

    ``total`` counts the patients with the condition; ``younger`` counts those born in
    ``cutoff`` or later. Exactly one patient (``target``) is born before ``cutoff``, so
    total − younger is the target's condition (1 or 0).
    """

    patients: tuple[Patient, ...]
    target: Patient
    cutoff: int

    @property
    def total(self) -> int:
        return sum(p.condition for p in self.patients)

    @property
    def younger(self) -> int:
        return sum(p.condition for p in self.patients if p.birth_year >= self.cutoff)

    @property
    def recovered(self) -> int:
        return self.total - self.younger


def hospital(seed: int, n: int = 24, rate: float = 0.3) -> DifferencingAttack:
    """A synthetic hospital ward: n patients, about ``rate`` with the condition, exactly
    one born before all others (the differencing attack's target).

    >>> attack = hospital(7)
    >>> attack.recovered == int(attack.target.condition)
    True
    """
    if n < 2:
        raise ValueError("the ward needs at least 2 patients")
    rng = np.random.default_rng(seed)
    names = _names(rng, n)
    years = rng.integers(1962, 2006, size=n)
    years[0] = int(years[1:].min()) - int(rng.integers(3, 12))
    conditions = rng.random(n) < rate
    patients = tuple(
        Patient(name, int(year), bool(c))
        for name, year, c in zip(names, years, conditions, strict=True)
    )
    order = rng.permutation(n)
    shuffled = tuple(patients[i] for i in order)
    return DifferencingAttack(shuffled, patients[0], int(years[0]) + 1)


def difference_density(z, scale: float):
    """Density of the difference of two independent Lap(b) noises:
    (1/4b)(1 + |z|/b) e^{−|z|/b}."""
    z = np.abs(np.asarray(z, dtype=float)) / scale
    return (1 + z) * np.exp(-z) / (4 * scale)


def differencing_posterior(difference: float, epsilon: float, prior: float = 0.5) -> float:
    """The attacker's belief that the target has the condition after seeing the noisy
    difference of the two counts, each answered with Lap(1/ε). The two answers cost 2ε
    together (composition), so the odds move by at most e^{2ε}.

    >>> round(differencing_posterior(1.0, 0.5), 3)
    0.524
    """
    scale = laplace_scale(epsilon)
    if not 0 <= prior <= 1:
        raise ValueError(f"the prior must be between 0 and 1, got {prior!r}")
    has = prior * difference_density(difference - 1, scale)
    hasnt = (1 - prior) * difference_density(difference, scale)
    return float(has / (has + hasnt))


# k-anonymity and linkage

QUASI_IDENTIFIERS = ("postcode", "birth_year", "sex")


@dataclass(frozen=True)
class Person:
    name: str
    postcode: str
    birth_year: int
    sex: str
    diagnosis: str


@dataclass(frozen=True)
class Generalization:
    """How a release coarsens the quasi-identifiers: keep the first ``postcode_digits``
    digits (the rest become *), put birth years in bins of ``year_width`` years (0 hides
    them), and keep or hide sex. Rows in groups smaller than ``suppress_below`` are left out."""

    postcode_digits: int = 4
    year_width: int = 1
    keep_sex: bool = True
    suppress_below: int = 1

    def __post_init__(self):
        if not 0 <= self.postcode_digits <= 4:
            raise ValueError("postcode_digits must be between 0 and 4")
        if self.year_width < 0:
            raise ValueError("year_width must be 0 (hidden) or more")

    def key(self, person: Person) -> tuple[str, str, str]:
        """The generalized quasi-identifiers of one person (what a release shows)."""
        postcode = person.postcode[: self.postcode_digits] + "*" * (4 - self.postcode_digits)
        if self.year_width == 0:
            years = "*"
        elif self.year_width == 1:
            years = str(person.birth_year)
        else:
            start = person.birth_year - person.birth_year % self.year_width
            years = f"{start}–{start + self.year_width - 1}"
        return (postcode, years, person.sex if self.keep_sex else "*")

    def release(self, people: Sequence[Person]) -> list[tuple[tuple[str, str, str], str]]:
        """The released rows: generalized quasi-identifiers and the diagnosis, without
        the rows of groups smaller than ``suppress_below``."""
        sizes = Counter(self.key(p) for p in people)
        return [
            (self.key(p), p.diagnosis) for p in people if sizes[self.key(p)] >= self.suppress_below
        ]


def k_anonymity(keys: Sequence[tuple]) -> int:
    """The k of a release: the size of its smallest group of identical quasi-identifiers
    (every row hides among at least k − 1 others) [2]_; 0 for an empty release.

    >>> k_anonymity([("20**", "1980s"), ("20**", "1980s"), ("31**", "1990s")])
    1
    """
    sizes = Counter(keys)
    return min(sizes.values()) if sizes else 0


def candidates(release, person: Person, generalization: Generalization) -> list[str]:
    """The diagnoses a release leaves possible for someone whose quasi-identifiers an
    attacker knows from a public list (the linkage attack)."""
    key = generalization.key(person)
    return [diagnosis for row_key, diagnosis in release if row_key == key]


def triangulate(
    people: Sequence[Person], person: Person, first: Generalization, second: Generalization
) -> set[str]:
    """The diagnoses both releases leave possible for ``person``: each alone hides them
    among ≥ k rows, but the intersection can be a single value [3]_."""
    a = set(candidates(first.release(people), person, first))
    b = set(candidates(second.release(people), person, second))
    return a & b


# Two releases of the same ward, each k-anonymous on its own (the lesson's triangulation).
RELEASE_A = Generalization(postcode_digits=4, year_width=0, keep_sex=True, suppress_below=2)
RELEASE_B = Generalization(postcode_digits=0, year_width=10, keep_sex=True, suppress_below=2)


@dataclass(frozen=True)
class LinkageData:
    """An "anonymized" clinic table, the public list that shares its quasi-identifiers,
    and the person two k-anonymous releases give away."""

    people: tuple[Person, ...]
    target: Person

    def public_list(self) -> list[tuple[str, str, int, str]]:
        """Name and quasi-identifiers (a voter roll): what anyone can look up."""
        return sorted((p.name, p.postcode, p.birth_year, p.sex) for p in self.people)


def clinic(seed: int, n: int = 16) -> LinkageData:
    """A synthetic clinic of n people in a few postcodes, where two 2-anonymous releases
    (``RELEASE_A``, ``RELEASE_B``) together single out one person's diagnosis. The seed
    decides everything; draws that would not show the attack are skipped, reproducibly.
    """
    if n < 6:
        raise ValueError("the clinic needs at least 6 people")
    rng = np.random.default_rng(seed)
    postcodes = [f"{rng.integers(10, 99)}{rng.integers(10, 99)}" for _ in range(3)]
    while True:
        people = tuple(
            Person(
                name,
                postcodes[int(rng.integers(len(postcodes)))],
                int(rng.integers(1955, 2004)),
                str(rng.choice(["F", "M"])),
                str(rng.choice(CONDITIONS)),
            )
            for name in _names(rng, n)
        )
        for person in people:
            in_a = candidates(RELEASE_A.release(people), person, RELEASE_A)
            in_b = candidates(RELEASE_B.release(people), person, RELEASE_B)
            if len(set(in_a)) > 1 and len(set(in_b)) > 1:
                found = triangulate(people, person, RELEASE_A, RELEASE_B)
                if found == {person.diagnosis}:
                    return LinkageData(people, person)


# The exponential mechanism


def exponential_probabilities(scores, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Selection probabilities ∝ exp(ε · score / Δ) [1]_.

    With vote counts as scores, one voter joining or leaving changes one count by 1 and
    never lowers another (a monotone score), which is why ε·score/Δ (without the factor ½
    of the general mechanism) is already ε-differentially private.

    >>> exponential_probabilities([3, 1], math.log(2)).round(3).tolist()
    [0.8, 0.2]
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("give one score per option")
    if not sensitivity > 0:
        raise ValueError(f"the sensitivity must be positive, got {sensitivity!r}")
    weights = np.exp(_check_epsilon(epsilon) * (scores - scores.max()) / sensitivity)
    return weights / weights.sum()


def exponential_select(scores, epsilon: float, rng: np.random.Generator) -> int:
    """The index of the option the mechanism picks."""
    probabilities = exponential_probabilities(scores, epsilon)
    return int(rng.choice(len(probabilities), p=probabilities))


# Local against central noise


@dataclass(frozen=True)
class Classmates:
    """A synthetic class: each member's secret yes/no (1/0), in the order phones claim them."""

    secrets: tuple[int, ...]

    def secret(self, index: int) -> int:
        """The secret of the index-th phone to send (the list repeats for big classes)."""
        return self.secrets[index % len(self.secrets)]


def classmates(seed: int, n: int = 500, rate: float = 0.3) -> Classmates:
    """n synthetic secrets, about ``rate`` of them yes, decided by the seed."""
    if n < 1:
        raise ValueError("the class needs at least one member")
    rng = np.random.default_rng(seed)
    return Classmates(tuple(int(b) for b in rng.random(n) < rate))


def local_report(secret: int, epsilon: float, rng: np.random.Generator) -> float:
    """The local model: a phone adds Lap(1/ε) to its own 0/1 before anything leaves it,
    so no one, not even the collector, needs to be trusted."""
    return float(secret + rng.laplace(0.0, laplace_scale(epsilon)))


def central_sd(n: int, epsilon: float) -> float:
    """Standard deviation of a count released by a trusted curator: one Lap(1/ε) noise for
    the whole class, √2/ε whatever n (it does not depend on n)."""
    _check_n(n)
    return math.sqrt(2) * laplace_scale(epsilon)


def local_sd(n: int, epsilon: float) -> float:
    """Standard deviation of the sum of n locally noised reports: n independent Lap(1/ε)
    noises add up to √(2n)/ε, which is √n times the central one."""
    return math.sqrt(_check_n(n)) * central_sd(n, epsilon)


def randomized_response_sd(n: int, epsilon: float) -> float:
    """Standard deviation that Warner's randomized response (truth with probability
    p = e^ε/(1 + e^ε)) adds to the estimated count of n answers: √(n·p(1−p))/(2p − 1) [4]_.
    Also √n times a constant: the price of noise on every phone."""
    epsilon = _check_epsilon(epsilon)
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return math.sqrt(_check_n(n) * p * (1 - p)) / (2 * p - 1)


def _check_n(n: int) -> int:
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a whole number of at least 1, got {n!r}")
    return int(n)


def respondents_needed(epsilon: float, margin: float, model: str) -> int:
    """How many respondents keep the privacy noise on a proportion within ±``margin``
    (about 95 %, ±2 standard deviations): the curator's noise shrinks like 1/n, the local
    models' like 1/√n, so they need quadratically more people.

    >>> respondents_needed(1.0, 0.05, "central"), respondents_needed(1.0, 0.05, "local")
    (57, 3200)
    """
    if not 0 < margin < 1:
        raise ValueError(f"the margin must be between 0 and 1, got {margin!r}")
    sd_one = {"central": central_sd, "local": local_sd, "randomized": randomized_response_sd}
    if model not in sd_one:
        raise ValueError(f"unknown model {model!r}: central, local or randomized")
    people = 2 * sd_one[model](1, epsilon) / margin
    if model != "central":
        people = people**2
    return math.ceil(round(people, 9))


def simulated_errors(
    seed: int, sizes: Sequence[int], epsilon: float, trials: int = 200
) -> list[tuple[int, float, float]]:
    """For each class size n: the root-mean-square error of the count released centrally
    and locally over ``trials`` synthetic classes drawn from the seed (the dots beside the
    formulas' lines)."""
    rng = np.random.default_rng(seed)
    scale = laplace_scale(epsilon)
    rows = []
    for n in sizes:
        central = rng.laplace(0.0, scale, trials)
        local = rng.laplace(0.0, scale, (trials, _check_n(n))).sum(axis=1)
        rows.append(
            (int(n), float(np.sqrt(np.mean(central**2))), float(np.sqrt(np.mean(local**2))))
        )
    return rows


# (ε, δ) and the Gaussian mechanism


def _check_delta(delta: float) -> float:
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"δ must be between 0 and 1, got {delta!r}")
    return delta


def _phi(x: float) -> float:
    """The standard normal CDF for one number (erfc keeps the far tail accurate)."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The smallest δ for which N(0, σ²) noise on a query of sensitivity Δ is (ε, δ)-DP:
    Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) [5]_."""
    epsilon = _check_epsilon(epsilon)
    if not sigma > 0:
        raise ValueError(f"σ must be positive, got {sigma!r}")
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return max(_phi(a - b) - math.exp(epsilon) * _phi(-a - b), 0.0)


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The least Gaussian noise σ that is (ε, δ)-DP (the exact bound above, solved for
    log σ; δ falls as σ grows). Smaller than the classic Δ√(2 ln(1.25/δ))/ε [1]_."""
    epsilon, delta = _check_epsilon(epsilon), _check_delta(delta)

    def excess(log_sigma: float) -> float:
        return gaussian_delta(math.exp(log_sigma), epsilon, sensitivity) - delta

    low, high = math.log(1e-6 * sensitivity), math.log(1e6 * sensitivity)
    return math.exp(brentq(excess, low, high, xtol=1e-12, rtol=1e-12))


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Dwork and Roth's σ = Δ√(2 ln(1.25/δ))/ε (proved for ε < 1) [1]_."""
    return (
        sensitivity * math.sqrt(2 * math.log(1.25 / _check_delta(delta))) / _check_epsilon(epsilon)
    )


def gaussian_loss_beyond(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """P(privacy loss > ε) under Gaussian noise: the loss is N(μ, 2μ) with μ = Δ²/2σ², so
    unlike Laplace's (never above ε) it exceeds any ε with some probability — what δ
    pays for."""
    mu = sensitivity**2 / (2 * sigma**2)
    return float(norm.sf((_check_epsilon(epsilon) - mu) / math.sqrt(2 * mu)))


def exposed(n: int, delta: float) -> float:
    """Expected people published in full by the (0, δ)-DP mechanism "release each row with
    probability δ": n·δ. Hence δ must be far below 1/n."""
    return _check_n(n) * _check_delta(delta)


# The reusable holdout


class Thresholdout:
    """Answers queries about a holdout set so that an adaptive analyst cannot overfit it
    [6]_: while a query's value on the training set agrees with the holdout (within a
    noisy threshold T̂), the training value is returned; otherwise the holdout value
    plus Lap(σ), and each such answer spends one unit of the budget. None is the
    paper's ⊥ (the budget is spent).

    >>> holdout = Thresholdout(np.random.default_rng(0))
    >>> holdout.answer(0.80, 0.81)
    0.8
    """

    def __init__(
        self,
        rng: np.random.Generator,
        threshold: float = 0.04,
        sigma: float = 0.01,
        budget: int = 1000,
    ):
        if not (threshold > 0 and sigma > 0 and budget >= 1):
            raise ValueError("the threshold, the noise σ and the budget must be positive")
        self.rng, self.threshold, self.sigma, self.budget = rng, threshold, sigma, budget
        self.spent = 0
        self._noisy_threshold = threshold + rng.laplace(0.0, 2 * sigma)

    def answer(self, training: float, holdout: float) -> float | None:
        if self.spent >= self.budget:
            return None
        if abs(holdout - training) > self._noisy_threshold + self.rng.laplace(0, 4 * self.sigma):
            self.spent += 1
            self._noisy_threshold = self.threshold + self.rng.laplace(0.0, 2 * self.sigma)
            return float(holdout + self.rng.laplace(0.0, self.sigma))
        return float(training)


@dataclass(frozen=True)
class HoldoutRun:
    """One adaptive analysis: per query, the features kept, the model's accuracy on the
    training set, what the holdout answered (None: ⊥) and its accuracy on fresh data."""

    sizes: tuple[int, ...]
    training: tuple[float, ...]
    reported: tuple[float | None, ...]
    fresh: tuple[float, ...]
    over_threshold: int


@dataclass(frozen=True)
class HoldoutAnalysis:
    """The same analysis with the holdout reused directly and through Thresholdout."""

    naive: HoldoutRun
    thresholdout: HoldoutRun
    n: int
    d: int
    threshold: float
    sigma: float


def _accuracy(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    """Accuracy of the linear classifier sign(x · weights) (ties count as wrong)."""
    return float(np.mean(np.sign(x @ weights) == y))


@lru_cache(maxsize=8)
def holdout_analysis(
    seed: int,
    n: int = 2500,
    d: int = 2000,
    queries: int = 20,
    batch: int = 5,
    threshold: float = 0.04,
    sigma: float = 0.01,
) -> HoldoutAnalysis:
    """The paper's experiment [6]_ on n training, n holdout and n fresh rows of d features
    that are pure noise (independent of the ±1 label). The analyst keeps the features
    whose correlation with the label is at least 1/√n with the same sign on the training
    set and on the holdout, ranks them by their training correlation, and at query q
    asks the holdout for the accuracy of sign(Σ ± x_i) over the top q·batch of them.
    Reused directly, the holdout's accuracy climbs although every model is at chance on
    fresh data; through Thresholdout (every holdout correlation and accuracy asked
    through it) it stays near the fresh accuracy. Cached: the seed decides everything.
    """
    if not (n >= 10 and d >= 1 and queries >= 1 and batch >= 1):
        raise ValueError("n must be at least 10; d, queries and batch at least 1")
    rng = np.random.default_rng(seed)
    labels = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(3, n))
    train = rng.standard_normal((n, d), dtype=np.float32)
    hold = rng.standard_normal((n, d), dtype=np.float32)
    corr_train, corr_hold = train.T @ labels[0] / n, hold.T @ labels[1] / n
    cutoff = 1 / math.sqrt(n)
    runs = []
    for guarded in (False, True):
        mechanism = Thresholdout(np.random.default_rng([seed, 1]), threshold, sigma)
        seen = corr_hold
        if guarded:
            # A correlation query x·y is a mean of values of spread 1; mapped to (1 + x·y)/2
            # it becomes a query of spread ½, the scale Thresholdout's T is set for.
            answers = [
                mechanism.answer((1 + float(t)) / 2, (1 + float(h)) / 2)
                for t, h in zip(corr_train, corr_hold, strict=True)
            ]
            seen = np.array([0.0 if a is None else 2 * a - 1 for a in answers])
        keep = (
            (np.abs(corr_train) >= cutoff)
            & (np.abs(seen) >= cutoff)
            & (np.sign(corr_train) == np.sign(seen))
        )
        ranked = np.flatnonzero(keep)
        ranked = ranked[np.argsort(-np.abs(corr_train[ranked]), kind="stable")]
        chosen = ranked[: queries * batch]
        # Fresh data only for the features a model uses: one column per feature and seed.
        fresh = (
            np.stack(
                [np.random.default_rng([seed, 2, int(j)]).standard_normal(n) for j in chosen],
                axis=1,
            )
            if len(chosen)
            else np.zeros((n, 0))
        )
        rows: dict[str, list] = {"sizes": [], "training": [], "reported": [], "fresh": []}
        for q in range(1, queries + 1):
            size = min(q * batch, len(chosen))
            weights = np.sign(corr_train[chosen[:size]])
            on_train = _accuracy(train[:, chosen[:size]], labels[0], weights)
            on_hold = _accuracy(hold[:, chosen[:size]], labels[1], weights)
            rows["sizes"].append(size)
            rows["training"].append(on_train)
            rows["reported"].append(mechanism.answer(on_train, on_hold) if guarded else on_hold)
            rows["fresh"].append(_accuracy(fresh[:, :size], labels[2], weights))
        runs.append(
            HoldoutRun(
                **{k: tuple(v) for k, v in rows.items()},
                over_threshold=mechanism.spent if guarded else 0,
            )
        )
    return HoldoutAnalysis(runs[0], runs[1], n, d, threshold, sigma)


# Statistical disclosure control

AREAS = ("North", "East", "South", "West")
AGE_BANDS = ("16–24", "25–34", "35–49", "50–64", "65+")
# Collapsing categories: the five age bands become two.
COLLAPSED_BANDS = {"16–24": "16–49", "25–34": "16–49", "35–49": "16–49"}
SMALL_CELL = 5  # counts below 5 (zeros included) are suppressed
ROUNDING_BASE = 5


@dataclass(frozen=True)
class Group:
    """One row of a clinic's table: the people of an area and age band in the public
    census (``population``), and the clinic's patients among them who tested positive
    and negative."""

    area: str
    band: str
    population: int
    positive: int
    negative: int

    @property
    def patients(self) -> int:
        return self.positive + self.negative


def _discloses(groups: Sequence[Group]) -> dict[str, list[str]]:
    """The disclosures of an exact table (to choose a seed's table that shows all three)."""
    return disclosures(publish(groups))


def clinic_table(seed: int) -> tuple[Group, ...]:
    """A synthetic sexual-health clinic's patients by area and age band, beside the
    census population of each group: small enough to have small cells. Draws whose
    exact table would not show identity, attribute and membership disclosure are
    skipped, reproducibly."""
    rng = np.random.default_rng(seed)
    while True:
        groups = []
        for area in AREAS:
            for band in AGE_BANDS:
                population = int(rng.integers(2, 40))
                patients = int(rng.binomial(population, rng.uniform(0.05, 0.5)))
                positive = int(rng.binomial(patients, 0.3))
                groups.append(Group(area, band, population, positive, patients - positive))
        found = _discloses(groups)
        if all(found[kind] for kind in DISCLOSURES):
            return tuple(groups)


@dataclass(frozen=True)
class Cell:
    """A published count and what it tells: the true value lies in [low, high]."""

    shown: str
    low: int
    high: int


@dataclass(frozen=True)
class PublishedRow:
    label: str
    population: int
    positive: Cell
    negative: Cell
    total: Cell


DISCLOSURES = ("identity", "attribute", "membership")


def _cell(value: int, rounded: bool, suppressed: bool) -> Cell:
    if suppressed and value < SMALL_CELL:
        return Cell("c", 0, SMALL_CELL - 1)
    if rounded:
        shown = ROUNDING_BASE * round(value / ROUNDING_BASE)
        half = ROUNDING_BASE // 2
        return Cell(str(shown), max(shown - half, 0), shown + half)
    return Cell(str(value), value, value)


def _tighten(row: PublishedRow) -> PublishedRow:
    """What the row's own sum gives away: positive + negative = total narrows each
    (the differencing attack: a suppressed cell beside an exact total and an exact
    neighbour is recovered exactly)."""
    p, n, t = row.positive, row.negative, row.total
    for _ in range(2):
        p = replace(p, low=max(p.low, t.low - n.high), high=min(p.high, t.high - n.low))
        n = replace(n, low=max(n.low, t.low - p.high), high=min(n.high, t.high - p.low))
        t = replace(t, low=max(t.low, p.low + n.low), high=min(t.high, p.high + n.high))
    return replace(row, positive=p, negative=n, total=t)


def publish(
    groups: Sequence[Group],
    rounded: bool = False,
    collapsed: bool = False,
    suppressed: bool = False,
) -> list[PublishedRow]:
    """The clinic's table as released under the ONS practices [7]_: age bands collapsed
    (five into two), every count rounded to base 5, counts below 3 suppressed ("c").
    Each cell says what a reader can still infer (an interval, after the row's sum)."""
    merged: dict[tuple[str, str], list[int]] = {}
    for g in groups:
        band = COLLAPSED_BANDS.get(g.band, "50+") if collapsed else g.band
        counts = merged.setdefault((g.area, band), [0, 0, 0])
        counts[0] += g.population
        counts[1] += g.positive
        counts[2] += g.negative
    rows = []
    for (area, band), (population, positive, negative) in merged.items():
        row = PublishedRow(
            f"{area} {band}",
            population,
            _cell(positive, rounded, suppressed),
            _cell(negative, rounded, suppressed),
            _cell(positive + negative, rounded, suppressed),
        )
        rows.append(_tighten(row))
    return rows


def disclosures(rows: Sequence[PublishedRow]) -> dict[str, list[str]]:
    """The groups a reader can still be sure about [7]_:

    * identity: a count certainly 1 or 2 — those few patients are singled out by area
      and age, and so is their result;
    * attribute: every patient of the group certainly tested positive — anyone known to
      be a patient there has the result, though no one is singled out;
    * membership: the group certainly has as many patients as people — anyone living
      there with that age was at the clinic.
    """
    found: dict[str, list[str]] = {kind: [] for kind in DISCLOSURES}
    for row in rows:
        if any(c.low >= 1 and c.high <= 2 for c in (row.positive, row.negative)):
            found["identity"].append(row.label)
        if row.negative.high == 0 and row.total.low >= 1:
            found["attribute"].append(row.label)
        if row.total.low >= row.population:
            found["membership"].append(row.label)
    return found


# A sparse-data linkage in the manner of the Netflix study


@dataclass(frozen=True)
class Ratings:
    """Film ratings (1–5 stars) of ``users`` subscribers, sparse (each rated a few of
    ``films`` films, popular ones more often), and the target whose record is sought."""

    by_user: tuple[dict[int, int], ...]
    target: int

    def matching(self, known: dict[int, int], tolerance: int = 1) -> list[int]:
        """The records that fit everything the attacker approximately knows: a rating of
        each known film within ±``tolerance`` stars."""
        return [
            user
            for user, rated in enumerate(self.by_user)
            if all(f in rated and abs(rated[f] - s) <= tolerance for f, s in known.items())
        ]

    def known(self, k: int) -> dict[int, int]:
        """The first k of the target's ratings the attacker learned (from public
        reviews), each off by up to one star — the seed decides which and how."""
        rated = self.by_user[self.target]
        rng = np.random.default_rng([self.target, len(self.by_user)])
        order = rng.permutation(sorted(rated))[:k]
        noise = rng.integers(-1, 2, size=len(order))
        return {
            int(f): int(min(max(rated[int(f)] + d, 1), 5))
            for f, d in zip(order, noise, strict=True)
        }

    def candidates_by_known(self, most: int = 6) -> list[int]:
        """How many records fit after 1, 2, … ``most`` approximately known ratings."""
        return [len(self.matching(self.known(k))) for k in range(1, most + 1)]


def ratings(seed: int, users: int = 500, films: int = 300, per_user: int = 20) -> Ratings:
    """A synthetic sparse ratings table: each user rates about ``per_user`` films drawn
    with Zipf-like popularity, stars around the film's own mean."""
    if not (users >= 2 and films >= per_user >= 2):
        raise ValueError("need at least 2 users and per_user between 2 and films")
    rng = np.random.default_rng(seed)
    popularity = 1 / np.arange(1, films + 1) ** 0.8
    popularity /= popularity.sum()
    means = rng.uniform(2, 4.5, films)
    by_user = []
    for _ in range(users):
        count = int(rng.integers(per_user // 2, per_user * 3 // 2 + 1))
        seen = rng.choice(films, size=count, replace=False, p=popularity)
        stars = np.clip(np.rint(means[seen] + rng.normal(0, 1, count)), 1, 5)
        by_user.append({int(f): int(s) for f, s in zip(seen, stars, strict=True)})
    return Ratings(tuple(by_user), int(rng.integers(users)))


# Attack your own class: differencing and averaging against randomized response


def report_posterior(
    yes: int, no: int, p_yes_if_yes: float, p_yes_if_no: float, prior: float = 0.5
) -> float:
    """The attacker's belief that someone's true answer is yes after seeing ``yes`` and
    ``no`` independent randomized reports of theirs: the odds move by the likelihood
    ratio p₁/p₀ per "yes" and (1 − p₁)/(1 − p₀) per "no". With one report the move is at
    most e^ε — the ε of the design.

    >>> round(report_posterior(1, 0, 0.75, 0.25), 3)
    0.75
    """
    if not (0 < p_yes_if_no < 1 and 0 < p_yes_if_yes < 1 and 0 < prior < 1):
        raise ValueError("the report probabilities and the prior must be between 0 and 1")
    if yes < 0 or no < 0:
        raise ValueError("report counts cannot be negative")
    log_odds = (
        math.log(prior / (1 - prior))
        + yes * math.log(p_yes_if_yes / p_yes_if_no)
        + no * math.log((1 - p_yes_if_yes) / (1 - p_yes_if_no))
    )
    return 1 / (1 + math.exp(-log_odds))


def averaging_attack(
    seed: int, p_yes_if_yes: float, p_yes_if_no: float, asks: int = 20, truth: int = 1
) -> tuple[list[float], list[float]]:
    """The attacker asks the same person ``asks`` times and updates on every answer.
    With the device's memo every ask returns the one report already sent, which is no
    new evidence (the belief stays where the first report put it); with fresh coins each
    time, the reports pile up and the belief converges on the truth [9]_.
    Returns (memoized, fresh) beliefs after 1 … asks asks."""
    if asks < 1:
        raise ValueError("asks must be at least 1")
    rng = np.random.default_rng(seed)
    p = p_yes_if_yes if truth else p_yes_if_no
    fresh = (rng.random(asks) < p).astype(int)
    first = int(fresh[0])
    memo = [report_posterior(first, 1 - first, p_yes_if_yes, p_yes_if_no)] * asks
    yes = np.cumsum(fresh)
    believed = [
        report_posterior(int(y), k + 1 - int(y), p_yes_if_yes, p_yes_if_no)
        for k, y in enumerate(yes)
    ]
    return memo, believed
