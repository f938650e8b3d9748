"""Server-rendered SVG charts: a forest plot of all questions, an estimate over time.

Plain SVG with ``<title>`` and ``<desc>`` (the numbers in words for screen readers; the
page also shows them in a table) and CSS classes instead of inline styles (strict CSP).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from estimator.analysis import SurveyResults
from survey.models import Question, Tally

WIDTH = 720
LABEL_WIDTH = 290
RIGHT = 24
ROW = 34
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)
MAX_POINTS = 120


def _pct(value: float) -> str:
    return f"{value * 100:.1f} %"


def _short(text: str, limit: int = 38) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _svg(width: int, height: int, title: str, desc: str, body: list[str], label: str) -> SafeString:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'role="img" aria-labelledby="{label}-title {label}-desc">'
        f'<title id="{label}-title">{escape(title)}</title>'
        f'<desc id="{label}-desc">{escape(desc)}</desc>'
    )
    return mark_safe(head + "".join(body) + "</svg>")


def forest_plot(results: SurveyResults) -> SafeString:
    """One row per question: the estimate (dot) and its interval (bar) on a 0–100 % axis,
    with the raw yes-rate (open circle) for comparison."""
    rows = [r for r in results.questions if r.estimate.has_data]
    height = 40 + ROW * max(len(rows), 1) + 30
    x0, x1 = LABEL_WIDTH, WIDTH - RIGHT

    def x(value: float) -> float:
        return x0 + (x1 - x0) * value

    body = []
    for tick in TICKS:
        body.append(
            f'<line class="svg-grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="24" '
            f'y2="{height - 30}"/><text class="svg-muted" x="{x(tick):.1f}" '
            f'y="{height - 12}" text-anchor="middle">{tick * 100:.0f} %</text>'
        )
    descriptions = []
    for i, r in enumerate(rows):
        y = 40 + ROW * i + ROW / 2
        low, high = r.interval
        est, raw = r.estimate.estimate, r.estimate.raw_yes_rate
        body.append(
            f'<text class="svg-label" x="8" y="{y + 4:.1f}">{i + 1}. '
            f"{escape(_short(r.question.text))}</text>"
            f'<line class="svg-ci" x1="{x(low):.1f}" x2="{x(high):.1f}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<circle class="svg-raw" cx="{x(raw):.1f}" cy="{y:.1f}" r="4"/>'
            f'<circle class="svg-point" cx="{x(est):.1f}" cy="{y:.1f}" r="5"/>'
        )
        descriptions.append(
            f"{r.question.text}: estimate {_pct(est)}, interval {_pct(low)} to {_pct(high)}, "
            f"raw yes-rate {_pct(raw)}, n = {r.estimate.n}."
        )
    if not rows:
        body.append(f'<text class="svg-muted" x="{x0}" y="58">No answers yet.</text>')
    body.append(
        f'<text class="svg-muted" x="{x0}" y="16">● estimate with {results.level * 100:g} % '
        f"interval ({results.method})   ○ raw yes-rate</text>"
    )
    title = f"Estimated prevalence per question with {results.level * 100:g} % intervals"
    desc = " ".join(descriptions) or "No answers yet."
    return _svg(WIDTH, height, title, desc, body, "forest")


@dataclass(frozen=True)
class TimePoint:
    hour: datetime
    n: int
    n_simulated: int  # of n: the chart says so, as the tables beside it do
    estimate: float
    ci_low: float
    ci_high: float


def estimates_over_time(
    question: Question, level: float, method: str, round: int
) -> list[TimePoint]:
    """The estimate and interval as they stood at the end of each hour with answers,
    from cumulative hourly tallies (one query; intervals computed vectorised)."""
    rows = Tally.objects.filter(question=question, round=round).counts_by_hour()
    if not rows:
        return []
    yes = np.cumsum([r[1] for r in rows])
    n = np.cumsum([r[2] for r in rows])
    simulated = np.cumsum([r[3] for r in rows])
    design = question.design
    low, high = design.interval(yes, n, level, method)
    estimates = np.clip((yes / n - design.c) / design.t, 0.0, 1.0)
    return [
        TimePoint(row[0], int(k), int(s), float(e), float(lo), float(hi))
        for row, k, s, e, lo, hi in zip(rows, n, simulated, estimates, low, high, strict=True)
    ]


def _n(point: TimePoint) -> str:
    """Reads "n = 425, 400 simulated" (or "all simulated"): simulated answers count in
    the estimate but not in exports, so the chart says so, as the tables beside it do."""
    if not point.n_simulated:
        return f"n = {point.n}"
    simulated = "all" if point.n_simulated == point.n else point.n_simulated
    return f"n = {point.n}, {simulated} simulated"


def thin(points: list[TimePoint], limit: int = MAX_POINTS) -> list[TimePoint]:
    """At most ``limit`` evenly spaced points, always keeping the first and the latest:
    a survey open for months has thousands of hours, a chart needs far fewer."""
    if len(points) <= limit:
        return points
    keep = np.unique(np.linspace(0, len(points) - 1, limit).round().astype(int))
    return [points[i] for i in keep]


def over_time_chart(question: Question, points: list[TimePoint], level: float) -> SafeString:
    """Estimate (line) and interval (band) after each hour: the band narrows like 1/√n."""
    height, top, bottom, left, right = 260, 20, 40, 48, WIDTH - RIGHT

    def y(value: float) -> float:
        return top + (height - top - bottom) * (1 - value)

    def x(i: int) -> float:
        return left + (right - left) * (i / (len(points) - 1) if len(points) > 1 else 0.5)

    body = [
        f'<line class="svg-grid" x1="{left}" x2="{right}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
        f'<text class="svg-muted" x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">'
        f"{t * 100:.0f} %</text>"
        for t in TICKS
    ]
    if points:
        upper = [f"{x(i):.1f},{y(p.ci_high):.1f}" for i, p in enumerate(points)]
        lower = [f"{x(i):.1f},{y(p.ci_low):.1f}" for i, p in reversed(list(enumerate(points)))]
        line = [f"{x(i):.1f},{y(p.estimate):.1f}" for i, p in enumerate(points)]
        if len(points) > 1:
            body.append(f'<polygon class="svg-ci-band" points="{" ".join(upper + lower)}"/>')
            body.append(f'<polyline class="svg-line" points="{" ".join(line)}"/>')
        else:
            p = points[0]
            body.append(
                f'<line class="svg-ci" x1="{x(0):.1f}" x2="{x(0):.1f}" '
                f'y1="{y(p.ci_low):.1f}" y2="{y(p.ci_high):.1f}"/>'
            )
        body += [
            f'<circle class="svg-point" cx="{x(i):.1f}" cy="{y(p.estimate):.1f}" r="3"/>'
            for i, p in enumerate(points)
        ]
        for i in sorted({0, len(points) - 1}):
            anchor = "start" if i == 0 and len(points) > 1 else "end" if i else "middle"
            body.append(
                f'<text class="svg-muted" x="{x(i):.1f}" y="{height - 14}" '
                f'text-anchor="{anchor}">{points[i].hour:%d %b %H:00} ({_n(points[i])})</text>'
            )
    else:
        body.append(
            f'<text class="svg-muted" x="{left + 8}" y="{height / 2}">No answers yet.</text>'
        )
    title = f"Estimate over time for “{question.text}” with {level * 100:g} % intervals"
    desc = " ".join(
        f"By {p.hour:%Y-%m-%d %H:00} UTC, {_n(p)}: {_pct(p.estimate)} "
        f"({_pct(p.ci_low)} to {_pct(p.ci_high)})."
        for p in points
    )
    return _svg(WIDTH, height, title, desc or "No answers yet.", body, f"time-{question.id}")
