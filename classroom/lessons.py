"""What each lesson shows: the maths from ``estimator.lessons`` turned into template
contexts and server-rendered SVG charts (they work without JavaScript)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext_noop
from scipy.stats import norm

from classroom.models import DEFAULT_VOTE_OPTIONS, Action, Lesson
from estimator import lessons as maths
from responses.counts import survey_counts

# Charts are drawn in a 1000 × 300 viewBox with this margin.
W, H, PAD = 1000, 300, 50


@dataclass(frozen=True)
class Axis:
    low: float
    high: float
    start: float
    length: float
    flip: bool = False

    def __call__(self, value: float) -> float:
        share = (value - self.low) / (self.high - self.low) if self.high > self.low else 0.5
        share = min(max(share, 0.0), 1.0)
        return round(self.start + self.length * ((1 - share) if self.flip else share), 1)


def x_axis(low: float, high: float) -> Axis:
    return Axis(low, high, PAD, W - 2 * PAD)


def y_axis(low: float, high: float) -> Axis:
    return Axis(low, high, PAD / 2, H - 1.5 * PAD, flip=True)


def points(xs, ys, x: Axis, y: Axis) -> str:
    """An SVG polyline's points attribute."""
    return " ".join(f"{x(a)},{y(b)}" for a, b in zip(xs, ys, strict=True))


def ticks(axis: Axis, values) -> list[dict]:
    return [{"at": axis(v), "label": f"{v:g}"} for v in values]


def error_axis_top(epsilon: float) -> float:
    """The error chart's top: 12 patients, or the current ε's 95 % error rounded up to a
    multiple of 4 (so the dot for the chosen ε is always on the chart)."""
    return float(max(12, 4 * math.ceil(maths.laplace_error(epsilon) / 4)))


def clipped_errors(top: float) -> dict | None:
    """What the chart cannot show below its top: the smallest ε's errors, to say in words."""
    smallest = float(EPSILON_GRID[0])
    if maths.laplace_error(smallest) <= top:
        return None
    return {
        "epsilon": smallest,
        "mean": maths.laplace_scale(smallest),
        "error95": maths.laplace_error(smallest),
    }


def private_rng(lesson: Lesson, *parts) -> np.random.Generator:
    """Noise the class cannot recompute from the seed on the screen (it also depends on
    the lesson's secret slug), yet stays the same on every poll of the same step."""
    digest = hashlib.sha256(repr((lesson.slug, lesson.round, *parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def guesses(lesson: Lesson, choices: list[str]) -> list[dict]:
    counts = Counter(
        lesson.current_actions().filter(kind=Action.Kind.GUESS).values_list("choice", flat=True)
    )
    total = sum(counts.values()) or 1
    return [
        {
            "choice": c,
            "n": counts[c],
            "share": counts[c] / total,
            "pct": round(100 * counts[c] / total, 1),
        }
        for c in choices
    ]


# What students choose between, for the catalogue: the stored choice stays in English,
# the button shows it in the page's language (estimator.lessons stays free of Django).
CHOICE_WORDS = (
    gettext_noop("Has the condition"),
    gettext_noop("Does not"),
    gettext_noop("asthma"),
    gettext_noop("diabetes"),
    gettext_noop("migraine"),
    gettext_noop("flu"),
    gettext_noop("fracture"),
)


# 1. Differencing attack


def differencing(lesson: Lesson) -> dict:
    attack = maths.hospital(lesson.seed)
    context = {"attack": attack, "choices": list(CHOICE_WORDS[:2])}
    if lesson.step == 1:
        rng = private_rng(lesson, "differencing", lesson.epsilon)
        total = maths.noisy_count(attack.total, lesson.epsilon, rng)
        younger = maths.noisy_count(attack.younger, lesson.epsilon, rng)
        context |= {
            "noisy_total": total,
            "noisy_younger": younger,
            "noisy_difference": total - younger,
            "posterior": maths.differencing_posterior(total - younger, lesson.epsilon),
            "odds_bound": float(np.exp(2 * lesson.epsilon)),
            "scale": maths.laplace_scale(lesson.epsilon),
        }
    tally = guesses(lesson, context["choices"])
    return context | {"guesses": tally, "n_answers": sum(g["n"] for g in tally)}


# 2. Laplace mechanism

EPSILON_GRID = np.geomspace(0.05, 4, 80)


def laplace(lesson: Lesson) -> dict:
    attack = maths.hospital(lesson.seed)
    true = attack.total
    n = len(attack.patients)
    scale = maths.laplace_scale(lesson.epsilon)
    answers = list(
        lesson.actions.filter(round=lesson.round, kind=Action.Kind.QUERY).values_list(
            "value", "epsilon"
        )
    )
    spread = max(4 * scale, 4)
    x = x_axis(true - spread, true + spread)
    grid = np.linspace(true - spread, true + spread, 161)
    density = maths.laplace_density(grid - true, scale)
    y = y_axis(0, float(density.max()) * 1.1)
    # Stack equal (rounded) answers so repeated values stay visible.
    seen: Counter = Counter()
    dots = []
    for value, eps in answers:
        slot = round(value * 2) / 2
        seen[slot] += 1
        dots.append({"x": x(value), "y": H - PAD - 14 * seen[slot], "epsilon": eps})
    # The axis reaches at least the 95 % error at ε = 0.25 (12 patients) and grows to the
    # current ε's; anything above its top is drawn at the top and the chart says so.
    top = error_axis_top(lesson.epsilon)
    errors_y = y_axis(0, top)
    ex = Axis(float(np.log(EPSILON_GRID[0])), float(np.log(EPSILON_GRID[-1])), PAD, W - 2 * PAD)
    log_eps = np.log(EPSILON_GRID)
    spent = lesson.spent()
    return {
        "true_count": true,
        "n_patients": n,
        "scale": scale,
        "error95": maths.laplace_error(lesson.epsilon),
        "answers": answers,
        "last_answer": answers[-1][0] if answers else None,
        "dots": dots,
        "density": points(grid, density, x, y),
        "true_x": x(true),
        "x_ticks": ticks(x, np.linspace(true - spread, true + spread, 5).round(1)),
        "error_mean": points(
            log_eps, [min(maths.laplace_scale(e), top) for e in EPSILON_GRID], ex, errors_y
        ),
        "error_95": points(
            log_eps, [min(maths.laplace_error(e), top) for e in EPSILON_GRID], ex, errors_y
        ),
        "error_marker": {
            "x": ex(np.log(lesson.epsilon)),
            "y": errors_y(min(maths.laplace_error(lesson.epsilon), top)),
        },
        "error_top": top,
        "error_clipped": clipped_errors(top),
        "eps_ticks": [
            {"at": ex(np.log(e)), "label": f"{e:g}"} for e in (0.05, 0.1, 0.25, 0.5, 1, 2, 4)
        ],
        "error_ticks": ticks(errors_y, np.linspace(0, top, 5)),
        "budget": maths.Budget(total=lesson.budget, spent=spent),
        "budget_share": min(spent / lesson.budget, 1.0),
        "queries_left": int((lesson.budget - spent) / lesson.epsilon + 1e-9),
    }


# 3. k-anonymity and linkage


def grouped(rows) -> list[tuple]:
    """The release as its groups: each set of quasi-identifiers once, with its people's
    diagnoses (what k-anonymity counts, and short enough for a projector)."""
    groups: dict = {}
    for key, diagnosis in sorted(rows):
        groups.setdefault(key, []).append(diagnosis)
    return list(groups.items())


def linkage(lesson: Lesson) -> dict:
    data = maths.clinic(lesson.seed)
    context = {"data": data, "choices": list(maths.CONDITIONS)}
    if lesson.step == 2:
        releases = []
        for name, g in (("A", maths.RELEASE_A), ("B", maths.RELEASE_B)):
            rows = g.release(data.people)
            releases.append(
                {
                    "name": name,
                    "rows": grouped(rows),
                    "k": maths.k_anonymity([key for key, _ in rows]),
                    "target_key": g.key(data.target),
                    "candidates": sorted(set(maths.candidates(rows, data.target, g))),
                }
            )
        found = maths.triangulate(data.people, data.target, maths.RELEASE_A, maths.RELEASE_B)
        context |= {"releases": releases, "found": sorted(found)}
    else:
        g = lesson.generalization if lesson.step == 1 else maths.Generalization()
        rows = g.release(data.people)
        context |= {
            "rows": grouped(rows),
            "k": maths.k_anonymity([key for key, _ in rows]),
            "suppressed": len(data.people) - len(rows),
            "target_key": g.key(data.target),
            "candidates": sorted(set(maths.candidates(rows, data.target, g))),
        }
    tally = guesses(lesson, context["choices"])
    return context | {"guesses": tally, "n_answers": sum(g["n"] for g in tally)}


# 5. Exponential mechanism


def vote_options(lesson: Lesson) -> list[str]:
    return lesson.options or DEFAULT_VOTE_OPTIONS


def vote_counts(lesson: Lesson) -> list[int]:
    options = vote_options(lesson)
    counts = Counter(
        lesson.actions.filter(round=lesson.round, kind=Action.Kind.VOTE).values_list(
            "choice", flat=True
        )
    )
    return [counts[o] for o in options]


def pick(lesson: Lesson) -> Action:
    """Run the exponential mechanism once on this round's votes (the instructor's button)."""
    index = maths.exponential_select(vote_counts(lesson), lesson.epsilon, np.random.default_rng())
    choice = vote_options(lesson)[index]
    lesson.go(last_pick=choice)
    return lesson.actions.create(
        round=lesson.round,
        step=lesson.step,
        kind=Action.Kind.PICK,
        choice=choice,
        epsilon=lesson.epsilon,
    )


COLOURS = ("#1f5fa8", "#c0392b", "#1e8449", "#8e44ad", "#b9770e", "#2e3646")


def exponential(lesson: Lesson) -> dict:
    options = vote_options(lesson)
    counts = vote_counts(lesson)
    probabilities = maths.exponential_probabilities(counts, lesson.epsilon)
    curves = np.array([maths.exponential_probabilities(counts, e) for e in EPSILON_GRID])
    ex = Axis(float(np.log(EPSILON_GRID[0])), float(np.log(EPSILON_GRID[-1])), PAD, W - 2 * PAD)
    y = y_axis(0, 1)
    picks = list(
        lesson.actions.filter(round=lesson.round, kind=Action.Kind.PICK).values_list(
            "choice", flat=True
        )
    )
    tally = Counter(picks)
    rows = [
        {
            "option": o,
            "votes": c,
            "probability": p,
            "picked": tally[o],
            "colour": COLOURS[i % len(COLOURS)],
            "curve": points(np.log(EPSILON_GRID), curves[:, i], ex, y),
        }
        for i, (o, c, p) in enumerate(zip(options, counts, probabilities, strict=True))
    ]
    return {
        "options": options,
        "rows": rows,
        "n_votes": sum(counts),
        "picks": picks,
        "eps_ticks": [
            {"at": ex(np.log(e)), "label": f"{e:g}"} for e in (0.05, 0.1, 0.25, 0.5, 1, 2, 4)
        ],
        "eps_marker": ex(np.log(lesson.epsilon)),
        "y_ticks": ticks(y, (0, 0.25, 0.5, 0.75, 1)),
        "choices": options,
    }


# 6. Local vs central noise

CLASS_SIZES = (10, 30, 100, 300, 1000)
SIZE_GRID = np.geomspace(1, 10_000, 60)
MARGIN = 0.05
SIMULATED_PHONES = 20


def send_local(lesson: Lesson) -> Action:
    """One phone's report: the next synthetic classmate's secret plus Laplace noise added
    before it leaves the phone (the collector stores only the noisy value; the secret is
    kept beside it because it is synthetic and the projector reveals the truth)."""
    index = lesson.actions.filter(round=lesson.round, kind=Action.Kind.QUERY).count()
    secret = maths.classmates(lesson.seed).secret(index)
    value = maths.local_report(secret, lesson.epsilon, np.random.default_rng())
    return lesson.actions.create(
        round=lesson.round,
        step=lesson.step,
        kind=Action.Kind.QUERY,
        choice=str(secret),
        value=value,
        epsilon=lesson.epsilon,
    )


def simulate_phones(lesson: Lesson) -> None:
    """The remote's shortcut for a small class: 20 more phones send their noisy secrets."""
    for _ in range(SIMULATED_PHONES):
        send_local(lesson)


def local_central(lesson: Lesson) -> dict:
    reports = list(
        lesson.actions.filter(round=lesson.round, kind=Action.Kind.QUERY).values_list(
            "choice", "value"
        )
    )
    n = len(reports)
    eps = lesson.epsilon
    true = sum(int(c) for c, _ in reports)
    local = sum(v for _, v in reports)
    central = maths.noisy_count(true, eps, private_rng(lesson, "central", n, eps))
    c_sd = maths.central_sd(max(n, 1), eps)
    l_sd = maths.local_sd(max(n, 1), eps)
    # The number line: the truth in the middle, room for the local band (±2 sd).
    spread = max(2.5 * l_sd, abs(local - true) * 1.1, 4)
    x = x_axis(true - spread, true + spread)
    rows = [
        {
            "name": "central",
            "estimate": central,
            "error": central - true,
            "sd": c_sd,
            "low": x(true - 2 * c_sd),
            "high": x(true + 2 * c_sd),
            "at": x(central),
            "y": 95,
        },
        {
            "name": "local",
            "estimate": local,
            "error": local - true,
            "sd": l_sd,
            "low": x(true - 2 * l_sd),
            "high": x(true + 2 * l_sd),
            "at": x(local),
            "y": 195,
        },
    ]
    for row in rows:
        row["width"] = round(row["high"] - row["low"], 1)
    context = {
        "n_reports": n,
        "true_count": true,
        "rows": rows,
        "ratio": l_sd / c_sd,
        "sqrt_n": math.sqrt(max(n, 1)),
        "true_x": x(true),
        "x_ticks": ticks(x, np.linspace(true - spread, true + spread, 5).round(1)),
        "scale": maths.laplace_scale(eps),
        "last_report": reports[-1][1] if reports else None,
        "choices": [],
    }
    if lesson.step >= 1:
        context |= size_chart(lesson, n)
    return context


def size_chart(lesson: Lesson, n: int) -> dict:
    """Error (standard deviation of the released count) against class size, log–log: the
    curator's stays flat, every phone's grows like √n; dots are simulated classes."""
    eps = lesson.epsilon
    logs = np.log10(SIZE_GRID)
    # Both local curves are √n times their one-person value (drawn for real n, not steps).
    central = np.full(len(SIZE_GRID), maths.central_sd(1, eps))
    local = np.sqrt(SIZE_GRID) * maths.local_sd(1, eps)
    rr = np.sqrt(SIZE_GRID) * maths.randomized_response_sd(1, eps)
    low = math.log10(min(central[0], rr[0]) / 2)
    high = math.log10(max(local[-1], rr[-1]) * 1.5)
    x = Axis(0.0, 4.0, PAD, W - 2 * PAD)
    y = y_axis(low, high)
    simulated = maths.simulated_errors(lesson.seed, CLASS_SIZES, eps)
    return {
        "line_central": points(logs, np.log10(central), x, y),
        "line_local": points(logs, np.log10(local), x, y),
        "line_rr": points(logs, np.log10(rr), x, y),
        "simulated": [
            {"x": x(math.log10(m)), "central": y(math.log10(c)), "local": y(math.log10(lo))}
            for m, c, lo in simulated
        ],
        "class_marker": x(math.log10(max(n, 1))),
        "size_ticks": [{"at": x(k), "label": f"{10**k:,}"} for k in range(5)],
        "sd_ticks": [
            {"at": y(k), "label": f"{10.0**k:g}"}
            for k in range(math.ceil(low), math.floor(high) + 1)
        ],
        "margin_pct": round(100 * MARGIN),
        "needed": {
            model: maths.respondents_needed(eps, MARGIN, model)
            for model in ("central", "local", "randomized")
        },
    }


# 7. (ε, δ) and the Gaussian mechanism

DELTA_GRID = np.geomspace(1e-12, 0.3, 60)
CENSUS = 1_000_000
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# The two databases of the (ε, δ) lesson: pure ε (Laplace noise) and approximate (ε, δ)
# (Gaussian noise), as each phone's query is recorded.
MECHANISMS = ("pure", "approximate")


def ask_both(lesson: Lesson) -> tuple[float, float]:
    """One phone's question to both databases: the ward's count with Laplace noise (ε) and
    with Gaussian noise calibrated to (ε, δ)."""
    true = maths.hospital(lesson.seed).total
    rng = np.random.default_rng()
    sigma = maths.gaussian_sigma(lesson.epsilon, lesson.delta)
    answers = (maths.noisy_count(true, lesson.epsilon, rng), float(true + rng.normal(0, sigma)))
    for name, value in zip(MECHANISMS, answers, strict=True):
        lesson.actions.create(
            round=lesson.round,
            step=lesson.step,
            kind=Action.Kind.QUERY,
            choice=name,
            value=value,
            epsilon=lesson.epsilon,
        )
    return answers


def gaussian(lesson: Lesson) -> dict:
    attack = maths.hospital(lesson.seed)
    true, n = attack.total, len(attack.patients)
    eps, delta = lesson.epsilon, lesson.delta
    b, sigma = maths.laplace_scale(eps), maths.gaussian_sigma(eps, delta)
    answers = list(
        lesson.actions.filter(round=lesson.round, kind=Action.Kind.QUERY).values_list(
            "choice", "value"
        )
    )
    spread = max(4 * max(b, sigma), 4)
    x = x_axis(true - spread, true + spread)
    grid = np.linspace(-spread, spread, 161)
    lap = maths.laplace_density(grid, b)
    gauss = norm.pdf(grid, scale=sigma)
    y = y_axis(0, float(max(lap.max(), gauss.max())) * 1.1)
    seen: Counter = Counter()
    dots = []
    for name, value in answers:
        slot = (name, round(value * 2) / 2)
        seen[slot] += 1
        dots.append({"x": x(value), "y": H - PAD - 14 * seen[slot], "name": name})
    context = {
        "true_count": true,
        "n_patients": n,
        "scale": b,
        "sigma": sigma,
        "n_asked": sum(1 for name, _ in answers if name == MECHANISMS[0]),
        "dots": dots,
        "density_laplace": points(grid + true, lap, x, y),
        "density_gaussian": points(grid + true, gauss, x, y),
        "true_x": x(true),
        "x_ticks": ticks(x, np.linspace(true - spread, true + spread, 5).round(1)),
        "loss_beyond": maths.gaussian_loss_beyond(sigma, eps),
        "exposed_ward": maths.exposed(n, delta),
        "exposed_census": maths.exposed(CENSUS, delta),
        "census": CENSUS,
        "choices": [],
    }
    if lesson.step >= 1:
        dx = Axis(math.log10(DELTA_GRID[0]), math.log10(DELTA_GRID[-1]), PAD, W - 2 * PAD)
        exact = [maths.gaussian_sigma(eps, d) for d in DELTA_GRID]
        classic = [maths.classic_gaussian_sigma(eps, d) for d in DELTA_GRID]
        top = max(classic[0], b) * 1.1
        sy = y_axis(0, top)
        logs = np.log10(DELTA_GRID)
        context |= {
            "line_exact": points(logs, exact, dx, sy),
            "line_classic": points(logs, classic, dx, sy),
            "laplace_y": sy(b),
            "delta_marker": {"x": dx(math.log10(delta)), "y": sy(sigma)},
            "delta_ticks": [
                {"at": dx(k), "label": "10" + str(k).translate(SUPERSCRIPT)}
                for k in range(-12, 0, 2)
            ],
            "sigma_ticks": ticks(sy, np.linspace(0, top, 5).round(1)),
        }
    return context


# 8. The reusable holdout

HOLDOUT_QUERIES = 20
SIMULATED_QUERIES = 5


def holdout_run(lesson: Lesson) -> maths.HoldoutRun:
    """The analysis this step shows: the holdout reused directly, then through Thresholdout."""
    analysis = maths.holdout_analysis(lesson.seed, queries=HOLDOUT_QUERIES)
    return analysis.thresholdout if lesson.step >= 1 else analysis.naive


def ask_holdout(lesson: Lesson) -> Action | None:
    """One more query of the class's adaptive analysis: a model with more features, its
    accuracy as the holdout answers it. None once the analysis has asked everything."""
    asked = lesson.current_actions().filter(kind=Action.Kind.QUERY).count()
    if asked >= HOLDOUT_QUERIES:
        return None
    run = holdout_run(lesson)
    return lesson.actions.create(
        round=lesson.round,
        step=lesson.step,
        kind=Action.Kind.QUERY,
        choice=str(run.sizes[asked]),
        value=run.reported[asked],
    )


def simulate_queries(lesson: Lesson) -> None:
    """The remote's shortcut: the analysis asks the holdout five more times."""
    for _ in range(SIMULATED_QUERIES):
        ask_holdout(lesson)


def holdout(lesson: Lesson) -> dict:
    analysis = maths.holdout_analysis(lesson.seed, queries=HOLDOUT_QUERIES)
    run = holdout_run(lesson)
    asked = min(lesson.current_actions().filter(kind=Action.Kind.QUERY).count(), HOLDOUT_QUERIES)
    x = Axis(0, HOLDOUT_QUERIES, PAD + 20, W - 2 * PAD - 20)
    y = y_axis(0.4, 0.7)
    queries = range(1, asked + 1)

    def line(values) -> str:
        return " ".join(
            f"{x(q)},{y(v)}" for q, v in zip(queries, values, strict=False) if v is not None
        )

    last = asked - 1
    return {
        "analysis": analysis,
        "asked": asked,
        "queries": HOLDOUT_QUERIES,
        "line_reported": line(run.reported),
        "line_fresh": line(run.fresh),
        # Beside Thresholdout, what reusing the holdout directly had answered.
        "line_naive": line(analysis.naive.reported) if lesson.step >= 1 else "",
        "dots": [
            {"x": x(q), "y": y(v)}
            for q, v in zip(queries, run.reported, strict=False)
            if v is not None
        ],
        "chance_y": y(0.5),
        "x_ticks": [{"at": x(q), "label": str(q)} for q in (1, 5, 10, 15, 20)],
        "y_ticks": [{"at": y(a), "label": f"{a:.0%}"} for a in (0.4, 0.5, 0.6, 0.7)],
        "last": {
            "size": run.sizes[last],
            "reported": run.reported[last],
            "fresh": run.fresh[last],
            "training": run.training[last],
        }
        if asked
        else None,
        "over_threshold": run.over_threshold,
        "choices": [],
    }


# 9. Statistical disclosure control

DISCLOSURE_WORDS = (gettext_noop("Identity"), gettext_noop("Attribute"), gettext_noop("Membership"))
# The ONS practices, by the name the remote's form posts, as the phones vote for them.
PRACTICES = {
    "round": gettext_noop("Round to base 5"),
    "collapse": gettext_noop("Collapse age bands"),
    "suppress": gettext_noop("Suppress small counts"),
}
KNOWN_RATINGS = ("1", "2", "3", "4", "5", "6")


def disclosure(lesson: Lesson) -> dict:
    if lesson.step == 2:
        context = sparse_linkage(lesson)
    else:
        applied = set(lesson.practices) if lesson.step == 1 else set()
        context = disclosure_table(lesson.seed, applied)
        context["choices"] = list(DISCLOSURE_WORDS if lesson.step == 0 else PRACTICES.values())
    tally = guesses(lesson, context["choices"])
    return context | {"guesses": tally, "n_answers": sum(g["n"] for g in tally)}


def disclosure_table(seed: int, applied: set[str]) -> dict:
    """The clinic's table as a grid of areas by age bands, each cell marked with the
    disclosures it still allows under the practices applied."""
    rows = maths.publish(
        maths.clinic_table(seed),
        rounded="round" in applied,
        collapsed="collapse" in applied,
        suppressed="suppress" in applied,
    )
    found = maths.disclosures(rows)
    by_label = {row.label: row for row in rows}
    bands = list(dict.fromkeys(row.label.split(" ", 1)[1] for row in rows))
    grid = [
        {
            "area": area,
            "cells": [
                {
                    "row": by_label[f"{area} {band}"],
                    "marks": [k for k in maths.DISCLOSURES if f"{area} {band}" in found[k]],
                }
                for band in bands
            ],
        }
        for area in maths.AREAS
    ]
    return {
        "bands": bands,
        "grid": grid,
        "found": found,
        "applied": [
            {"name": n, "label": label, "on": n in applied} for n, label in PRACTICES.items()
        ],
        "safe": not any(found.values()),
    }


def sparse_linkage(lesson: Lesson) -> dict:
    data = maths.ratings(lesson.seed)
    counts = data.candidates_by_known(len(KNOWN_RATINGS))
    known = data.known(len(KNOWN_RATINGS))
    users = len(data.by_user)
    singled = next((k for k, c in enumerate(counts, start=1) if c == 1), None)
    return {
        "users": users,
        "films": 300,
        "known": [{"film": f + 1, "stars": s} for f, s in known.items()],
        "bars": [
            {
                "k": k,
                "n": c,
                # A log scale: 1 record is a sliver, all of them the full bar.
                "width": round(100 * math.log(c + 1) / math.log(users + 1), 1),
            }
            for k, c in enumerate(counts, start=1)
        ],
        "singled": singled,
        "rated": len(data.by_user[data.target]),
        "choices": list(KNOWN_RATINGS),
    }


# 10. Attack your own class

ATTACK_WORDS = (gettext_noop("Everything"), gettext_noop("A little"), gettext_noop("Nothing"))
ASKS = 20


def reports_in(lesson: Lesson) -> tuple:
    """What the projector and remote also follow in an attack lesson: the class's
    reports to its question (they arrive through the respondent page, not as actions)."""
    if lesson.survey_id is None:
        return ()
    tallies = survey_counts(lesson.survey).tallies
    return tuple(sorted((qid, sorted(t.counts.items())) for qid, t in tallies.items()))


def attack(lesson: Lesson) -> dict:
    """The class's own randomized reports, attacked: two counts that differ by one student
    give that student's report (never the answer), and asking again gives the memoized
    report again."""
    if lesson.survey is None:  # its question was deleted with the instructor's surveys
        lesson.save(update_fields=["survey"])
    question = lesson.survey.questions.get()
    design = question.design
    p1, p0 = design.p_yes_given_1, design.p_yes_given_0
    counts = survey_counts(lesson.survey).tally(question.id).counts
    yes, n = counts.get(1, 0), sum(counts.values())
    context = {
        "question": question,
        "answer_url": lesson.survey.get_absolute_url(),
        "n_reports": n,
        "yes": yes,
        "epsilon": design.epsilon,
        "odds": math.exp(design.epsilon),
        "p1": p1,
        "p0": p0,
        "choices": list(ATTACK_WORDS) if lesson.step == 1 else [],
    }
    if lesson.step == 1 and n:
        # The student the attacker leaves out, drawn privately so the class cannot tell.
        report = int(private_rng(lesson, "attack", n).integers(n) < yes)
        context |= {
            "without": yes - report,
            "report": report,
            "belief": maths.report_posterior(report, 1 - report, p1, p0),
        }
    if lesson.step == 2:
        memo, fresh = maths.averaging_attack(lesson.seed, p1, p0, asks=ASKS)
        x = Axis(1, ASKS, PAD + 20, W - 2 * PAD - 20)
        y = y_axis(0, 1)
        asks = range(1, ASKS + 1)
        context |= {
            "line_memo": points(asks, memo, x, y),
            "line_fresh": points(asks, fresh, x, y),
            "memo_belief": memo[0],
            "fresh_belief": fresh[-1],
            "x_ticks": [{"at": x(k), "label": str(k)} for k in (1, 5, 10, 15, 20)],
            "y_ticks": [{"at": y(v), "label": f"{v:.0%}"} for v in (0, 0.5, 1)],
        }
    if context["choices"]:
        tally = guesses(lesson, context["choices"])
        context |= {"guesses": tally, "n_answers": sum(g["n"] for g in tally)}
    return context


CONTEXTS = {
    Lesson.Kind.DIFFERENCING: differencing,
    Lesson.Kind.LAPLACE: laplace,
    Lesson.Kind.LINKAGE: linkage,
    Lesson.Kind.EXPONENTIAL: exponential,
    Lesson.Kind.LOCAL: local_central,
    Lesson.Kind.GAUSSIAN: gaussian,
    Lesson.Kind.HOLDOUT: holdout,
    Lesson.Kind.DISCLOSURE: disclosure,
    Lesson.Kind.ATTACK: attack,
}


def lesson_context(lesson: Lesson) -> dict:
    return CONTEXTS[lesson.kind](lesson)
