"""Server-rendered SVG charts: a forest plot of all questions, an estimate over time.

Plain SVG with ``<title>`` and ``<desc>`` (the numbers in words for screen readers; the
page also shows them in a table) and CSS classes instead of inline styles (strict CSP).
Each chart is drawn in two frames, wide and narrow (:class:`Frame`); the stylesheet shows
the one that suits the screen.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from analysis.display import ChoiceDisplay, NumberDisplay, choice_display, number_display
from analysis.results import QuestionResult, SurveyResults
from estimator.estimates import ChoiceEstimate, NumberEstimate, NumberStats
from estimator.one_bit import OneBitEstimate
from responses.counts import HourTally, QuestionTally
from survey.models import Question

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


@dataclass(frozen=True)
class Frame:
    """One layout of a chart. A 720-unit chart shrunk to a 360 px phone prints its words
    at 6 px, so every chart is drawn twice: wide, with row labels in a column beside their
    rows, and narrow, about a phone's width, with each label on its own line above its row
    and no legend (the caption under the chart says the same). The stylesheet shows one."""

    name: str
    width: int
    left: int  # where a row chart's axis starts: after the label column, or a margin
    row: int
    label_chars: int
    stacked: bool  # row labels above their rows rather than beside them

    @property
    def top(self) -> int:
        """Where the first row starts (the wide frame keeps a line for the legend)."""
        return 12 if self.stacked else 40

    def row_y(self, i: int) -> tuple[float, float]:
        """Row ``i``'s label baseline and the centre line of its marks."""
        start = self.top + self.row * i
        if self.stacked:
            return start + 14, start + self.row - 15
        return start + self.row / 2 + 4, start + self.row / 2


WIDE = Frame("wide", WIDTH, LABEL_WIDTH, ROW, 38, stacked=False)
NARROW = Frame("narrow", 300, 16, 50, 40, stacked=True)


def _svg(frame: Frame, height: float, title: str, desc: str, body: list[str], label: str) -> str:
    ident = label if frame.name == "wide" else f"{label}-{frame.name}"
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart-{frame.name}" '
        f'viewBox="0 0 {frame.width} {height:g}" '
        f'role="img" aria-labelledby="{ident}-title {ident}-desc">'
        f'<title id="{ident}-title">{escape(title)}</title>'
        f'<desc id="{ident}-desc">{escape(desc)}</desc>'
    )
    return head + "".join(body) + "</svg>"


def _charts(
    draw: Callable[[Frame], tuple[float, list[str]]],
    title: str,
    desc: str,
    label: str,
    wide: Frame = WIDE,
) -> SafeString:
    """The chart ``draw`` makes (its height and body for a frame), wide and narrow."""
    drawn = [(frame, *draw(frame)) for frame in (wide, NARROW)]
    return mark_safe(
        "".join(_svg(frame, height, title, desc, body, label) for frame, height, body in drawn)
    )


def _row_label(frame: Frame, y: float, text: str) -> str:
    shown = escape(_short(text, frame.label_chars))
    return f'<text class="svg-label" x="8" y="{y:.1f}">{shown}</text>'


@dataclass(frozen=True)
class ForestRow:
    label: str
    estimate: float
    low: float
    high: float
    raw: float
    n: int


def forest_rows(results: SurveyResults) -> list[ForestRow]:
    """The yes/no questions the forest plot draws on its 0–100 % axis (a choice question
    has its own bar chart, a mean its own scale)."""
    rows = []
    for i, r in enumerate(results.questions, start=1):
        if r.question.kind == "binary" and r.estimate.n:
            low, high = r.interval
            est = r.estimate
            rows.append(
                ForestRow(
                    f"{i}. {r.question.text}", est.estimate, low, high, est.raw_yes_rate, est.n
                )
            )
    return rows


def forest_plot(results: SurveyResults) -> SafeString:
    """One row per question: the estimate (dot) and its interval (bar) on a 0–100 % axis,
    with the raw yes-rate (open circle) for comparison."""
    rows = forest_rows(results)
    descriptions = [
        f"{r.label}: estimate {_pct(r.estimate)}, interval {_pct(r.low)} to {_pct(r.high)}, "
        f"raw report rate {_pct(r.raw)}, n = {r.n}."
        for r in rows
    ]
    legend = (
        f"● estimate with {results.level * 100:g} % interval ({results.method})   ○ raw yes-rate"
    )

    def draw(frame: Frame) -> tuple[float, list[str]]:
        height, x = _row_axis(frame, len(rows), lambda t: t)
        body = _ticks(frame, height, x, TICKS, lambda t: f"{t * 100:.0f} %")
        for i, r in enumerate(rows):
            label_y, y = frame.row_y(i)
            body.append(
                _row_label(frame, label_y, r.label)
                + f'<line class="svg-ci" x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" '
                f'y1="{y:.1f}" y2="{y:.1f}"/>'
                f'<circle class="svg-raw" cx="{x(r.raw):.1f}" cy="{y:.1f}" r="4"/>'
                f'<circle class="svg-point" cx="{x(r.estimate):.1f}" cy="{y:.1f}" r="5"/>'
            )
        if not rows:
            body.append(
                f'<text class="svg-muted" x="{x(0):.1f}" y="{frame.top + 18}">'
                "No answers yet.</text>"
            )
        if not frame.stacked:
            body.append(f'<text class="svg-muted" x="{x(0):.1f}" y="16">{legend}</text>')
        return height, body

    title = f"Estimated prevalence per question with {results.level * 100:g} % intervals"
    return _charts(draw, title, " ".join(descriptions) or "No answers yet.", "forest")


def _row_axis(
    frame: Frame, rows: int, position: Callable[[float], float]
) -> tuple[float, Callable[[float], float]]:
    """A row chart's height and its horizontal scale (``position`` maps a value to 0–1)."""
    x0, x1 = frame.left, frame.width - RIGHT

    def x(value: float) -> float:
        return x0 + (x1 - x0) * position(value)

    return frame.top + frame.row * max(rows, 1) + 30, x


def _ticks(frame: Frame, height: float, x, ticks, text: Callable[[float], str]) -> list[str]:
    """A row chart's vertical grid lines and their values under the axis."""
    return [
        f'<line class="svg-grid" x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{4 if frame.stacked else 24}" '
        f'y2="{height - 30}"/><text class="svg-muted" x="{x(t):.1f}" y="{height - 12}" '
        f'text-anchor="middle">{text(t)}</text>'
        for t in ticks
    ]


@dataclass(frozen=True)
class TimePoint:
    hour: datetime
    n: int
    n_simulated: int  # of n: the chart says so, as the tables beside it do
    estimate: float
    ci_low: float
    ci_high: float


def estimates_over_time(
    question: Question, hours: list[HourTally], level: float, method: str
) -> list[TimePoint]:
    """The estimate and interval as they stood at the end of each hour with answers,
    from the cumulative hourly tallies (intervals computed vectorised). Only reports 0
    and 1 count: a split ballot's direct answers (2 and 3) stay out of the estimate."""
    if not hours:
        return []
    yes = np.cumsum([h.tally.counts.get(1, 0) for h in hours])
    n = np.cumsum([h.tally.counts.get(0, 0) + h.tally.counts.get(1, 0) for h in hours])
    simulated = np.cumsum([h.tally.simulated for h in hours])
    return _line_points(question.design, [h.hour for h in hours], yes, n, simulated, level, method)


def option_estimates_over_time(
    question: Question, hours: list[HourTally], level: float, method: str
) -> list[list[TimePoint]]:
    """For each option of a choice question, its share and interval at the end of each
    hour with answers (each option's report rate is affine in its share, so it follows the
    yes/no machinery on its own line)."""
    design = question.design
    if not hours:
        return [[] for _ in range(design.k)]
    counts = [[h.tally.counts.get(j, 0) for j in range(design.k)] for h in hours]
    cumulative = np.cumsum(np.array(counts, dtype=np.int64), axis=0)
    n, sim = cumulative.sum(axis=1), np.cumsum([h.tally.simulated for h in hours])
    stamps = [h.hour for h in hours]
    return [
        _line_points(design.option_line(j), stamps, cumulative[:, j], n, sim, level, method)
        for j in range(design.k)
    ]


def means_over_time(question: Question, hours: list[HourTally], level: float) -> list[TimePoint]:
    """A number question's mean and interval as they stood at the end of each hour with
    answers, from the cumulative hourly tallies (count, sum and sum of squares, and the
    counts per key for a design that reads them)."""
    points = []
    so_far = QuestionTally()  # Python integers: sums of squares stay exact
    for hour in hours:
        so_far.merge(hour.tally)
        estimate = so_far.estimate(question.design)
        mean = estimate.estimate
        low, high = estimate.ci(level) or (mean, mean)
        points.append(TimePoint(hour.hour, estimate.n, so_far.simulated, mean, low, high))
    return points


def arms_over_time(question: Question, hours: list[HourTally], level: float) -> list[TimePoint]:
    """A design with arms: the prevalence π and its profile interval as they stood at the
    end of each hour with answers (at most :data:`MAX_POINTS` of them, each a small fit)."""
    design, counts, cumulative = question.design, Counter(), []
    n = simulated = 0
    for hour in hours:
        counts.update(hour.tally.counts)
        n, simulated = n + hour.tally.count, simulated + hour.tally.simulated
        cumulative.append((hour.hour, n, simulated, Counter(counts)))
    points = []
    for stamp, n, simulated, counts in thin(cumulative):
        estimate = design.estimate_from_tally(counts, NumberStats(n, 0, 0))
        if estimate.has_data:
            low, high = estimate.ci(design.parameter_names[0], level)
            points.append(TimePoint(stamp, n, simulated, estimate.estimate, low, high))
    return points


def _line_points(line, hours, yes, n, simulated, level: float, method: str) -> list[TimePoint]:
    low, high = line.interval(yes, n, level, method)
    estimates = np.clip((yes / n - line.c) / line.t, 0.0, 1.0)
    return [
        TimePoint(hour, int(k), int(s), float(e), float(lo), float(hi))
        for hour, k, s, e, lo, hi in zip(hours, n, simulated, estimates, low, high, strict=True)
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


@dataclass(frozen=True)
class Scale:
    """A time chart's vertical axis: its range, ticks and how values read."""

    low: float
    high: float
    ticks: tuple[float, ...]
    read: Callable[[float], str]
    tick: Callable[[float], str]

    def fraction(self, value: float) -> float:
        return (value - self.low) / (self.high - self.low)


SHARES = Scale(0.0, 1.0, TICKS, _pct, lambda share: f"{share * 100:.0f} %")


def bounds_scale(lower: int, upper: int) -> Scale:
    """From a number question's lower to its upper bound, five ticks."""
    ticks = tuple(lower + (upper - lower) * t for t in TICKS)
    return Scale(lower, upper, ticks, lambda mean: f"{mean:.2f}", lambda tick: f"{tick:g}")


def over_time_chart(question: Question, points: list[TimePoint], level: float) -> SafeString:
    """Estimate (line) and interval (band) after each hour: the band narrows like 1/√n."""
    if question.kind == "number":
        title = f"Mean over time for “{question.text}” with {level * 100:g} % intervals"
        scale = bounds_scale(question.design.lower, question.design.upper)
        return _time_chart(f"time-{question.id}", title, [("", points)], scale)
    title = f"Estimate over time for “{question.text}” with {level * 100:g} % intervals"
    return _time_chart(f"time-{question.id}", title, [("", points)])


def options_over_time_chart(
    question: Question, options: list[str], series: list[list[TimePoint]], level: float
) -> SafeString:
    """Each option's share (a line and its band, in the option's colour) after each hour."""
    title = f"Share of each option over time for “{question.text}” with {level * 100:g} % intervals"
    named = [(f"{text}: ", points) for text, points in zip(options, series, strict=True)]
    return _time_chart(f"time-{question.id}", title, named)


def _time_chart(
    label: str, title: str, series: list[tuple[str, list[TimePoint]]], scale: Scale = SHARES
) -> SafeString:
    points = series[0][1]
    many = len(series) > 1

    def draw(frame: Frame) -> tuple[float, list[str]]:
        # Narrow, the first and the latest hour's words take a line each under the axis.
        height, top, bottom, left = 260, 20, 58 if frame.stacked else 40, 48
        right = frame.width - RIGHT

        def y(value: float) -> float:
            return top + (height - top - bottom) * (1 - scale.fraction(value))

        def x(i: int) -> float:
            return left + (right - left) * (i / (len(points) - 1) if len(points) > 1 else 0.5)

        body = [
            f'<line class="svg-grid" x1="{left}" x2="{right}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
            f'<text class="svg-muted" x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">'
            f"{escape(scale.tick(t))}</text>"
            for t in scale.ticks
        ]
        for j, (_, line_points) in enumerate(series):
            body += _time_series(line_points, x, y, f" svg-series-{j % 10}" if many else "")
        if not points:
            body.append(
                f'<text class="svg-muted" x="{left + 8}" y="{height / 2}">No answers yet.</text>'
            )
        for line, i in enumerate(sorted({0, len(points) - 1} if points else ())):
            anchor = "start" if i == 0 and len(points) > 1 else "end" if i else "middle"
            text_y = height - (32 - 18 * line if frame.stacked and len(points) > 1 else 14)
            body.append(
                f'<text class="svg-muted" x="{x(i):.1f}" y="{text_y}" '
                f'text-anchor="{anchor}">{points[i].hour:%d %b %H:00} ({_n(points[i])})</text>'
            )
        return height, body

    desc = " ".join(
        f"{name}By {p.hour:%Y-%m-%d %H:00} UTC, {_n(p)}: {scale.read(p.estimate)} "
        f"({scale.read(p.ci_low)} to {scale.read(p.ci_high)})."
        for name, line_points in series
        for p in line_points
    )
    return _charts(draw, title, desc or "No answers yet.", label)


def _time_series(points: list[TimePoint], x, y, series: str) -> list[str]:
    if not points:
        return []
    upper = [f"{x(i):.1f},{y(p.ci_high):.1f}" for i, p in enumerate(points)]
    lower = [f"{x(i):.1f},{y(p.ci_low):.1f}" for i, p in reversed(list(enumerate(points)))]
    line = [f"{x(i):.1f},{y(p.estimate):.1f}" for i, p in enumerate(points)]
    if len(points) > 1:
        body = [
            f'<polygon class="svg-ci-band{series}" points="{" ".join(upper + lower)}"/>',
            f'<polyline class="svg-line{series}" points="{" ".join(line)}"/>',
        ]
    else:
        p = points[0]
        body = [
            f'<line class="svg-ci{series}" x1="{x(0):.1f}" x2="{x(0):.1f}" '
            f'y1="{y(p.ci_low):.1f}" y2="{y(p.ci_high):.1f}"/>'
        ]
    return body + [
        f'<circle class="svg-point{series}" cx="{x(i):.1f}" cy="{y(p.estimate):.1f}" r="3"/>'
        for i, p in enumerate(points)
    ]


def choice_chart(question: Question, shown: ChoiceDisplay, level: float, method: str) -> SafeString:
    """One horizontal bar per option: the maximum-likelihood share, with its interval as a
    whisker, on a 0–100 % axis."""
    rows = shown.rows

    def draw(frame: Frame) -> tuple[float, list[str]]:
        height, x = _row_axis(frame, len(rows), lambda t: t)
        body = _ticks(frame, height, x, TICKS, lambda t: f"{t * 100:.0f} %")
        for i, row in enumerate(rows):
            label_y, y = frame.row_y(i)
            body.append(_row_label(frame, label_y, row.text))
            if row.estimate is not None:
                body.append(_option_bar(i, row, x, y))
        if not shown.has_data:
            body.append(
                f'<text class="svg-muted" x="{x(0) + 8:.1f}" y="{height / 2}">'
                "No answers yet.</text>"
            )
        elif not shown.direct and not frame.stacked:
            body.append(
                f'<text class="svg-muted" x="{x(0):.1f}" y="16">bar: estimated share (maximum '
                f"likelihood)   ├─┤ {level * 100:g} % interval ({method})</text>"
            )
        return height, body

    what = "share" if shown.direct else f"estimated share with {level * 100:g} % interval"
    title = f"“{question.text}”: {what} per option"
    desc = " ".join(
        f"{row.text}: {_pct(row.estimate)}"
        + (f", interval {_pct(row.interval[0])} to {_pct(row.interval[1])}" if row.interval else "")
        + f", {row.count} reports."
        for row in rows
        if row.estimate is not None
    )
    wide = replace(WIDE, left=230, label_chars=30)
    return _charts(draw, title, desc or "No answers yet.", f"choice-{question.id}", wide)


def _option_bar(i: int, row, x, y: float) -> str:
    """An option's bar from 0 to its share, and its interval's whisker."""
    bar = (
        f'<rect class="svg-bar svg-series-{i % 10}" x="{x(0):.1f}" y="{y - 9:.1f}" '
        f'width="{x(row.estimate) - x(0):.1f}" height="18"/>'
    )
    if not row.interval:
        return bar
    low, high = row.interval
    return (
        bar + f'<line class="svg-whisker" x1="{x(low):.1f}" x2="{x(high):.1f}" '
        f'y1="{y:.1f}" y2="{y:.1f}"/>'
        + "".join(
            f'<line class="svg-whisker" x1="{x(v):.1f}" x2="{x(v):.1f}" '
            f'y1="{y - 7:.1f}" y2="{y + 7:.1f}"/>'
            for v in (low, high)
        )
    )


def column_chart(
    label: str, title: str, bars: list[tuple[str, float]], unit: str, css: str = "svg-bar"
) -> SafeString:
    """Vertical bars (a histogram): ``bars`` are ``(label, value)``, ``unit`` says what
    a value is ("reports", or "%" for shares in [0, 1])."""
    peak = max((v for _, v in bars), default=0) or 1

    def show(value: float) -> str:
        return _pct(value) if unit == "%" else f"{value:,.0f} {unit}"

    def draw(frame: Frame) -> tuple[float, list[str]]:
        height, top, bottom, left, right = 240, 16, 44, 56, frame.width - RIGHT
        step = (right - left) / max(len(bars), 1)

        def y(value: float) -> float:
            return top + (height - top - bottom) * (1 - value / peak)

        body = [
            f'<line class="svg-grid" x1="{left}" x2="{right}" y1="{y(t * peak):.1f}" '
            f'y2="{y(t * peak):.1f}"/><text class="svg-muted" x="{left - 6}" '
            f'y="{y(t * peak) + 4:.1f}" text-anchor="end">'
            f"{_pct(t * peak) if unit == '%' else f'{t * peak:,.0f}'}</text>"
            for t in (0, 0.5, 1)
        ]
        every = max(1, math.ceil(len(bars) / (3 if frame.stacked else 8)))
        for i, (name, value) in enumerate(bars):
            bx = left + i * step
            body.append(
                f'<rect class="{css}" x="{bx + 1:.1f}" y="{y(value):.1f}" '
                f'width="{max(step - 2, 1):.1f}" height="{y(0) - y(value):.1f}"/>'
            )
            if i % every == 0:
                body.append(
                    f'<text class="svg-muted" x="{bx + step / 2:.1f}" y="{height - 24}" '
                    f'text-anchor="middle">{escape(name)}</text>'
                )
        if not bars:
            body.append(
                f'<text class="svg-muted" x="{left + 8}" y="{height / 2}">No answers yet.</text>'
            )
        return height, body

    desc = " ".join(f"{name}: {show(value)}." for name, value in bars)
    return _charts(draw, title, desc or "No answers yet.", label)


def histogram_chart(question: Question, shown: NumberDisplay) -> SafeString:
    """How many reports fell in each bin (noise included: reports lie beyond the bounds)."""
    bars = [(b.label, float(b.count)) for b in shown.bins]
    title = f"“{question.text}”: histogram of the reports"
    return column_chart(f"hist-{question.id}", title, bars, "reports")


def distribution_chart(question: Question, shown: NumberDisplay) -> SafeString:
    """The deconvolved distribution of the true values: a rough picture, no intervals."""
    bars = [(str(v), share) for v, share in shown.distribution]
    title = f"“{question.text}”: estimated distribution of the true values (rough)"
    return column_chart(f"dist-{question.id}", title, bars, "%", "svg-bar svg-rough")


@dataclass(frozen=True)
class Panel:
    """One question as the dashboard shows it: its result, the display record of its
    kind (``None`` for yes/no, which the forest plot and the summary table show) and the
    charts drawn from it."""

    number: int
    result: QuestionResult
    shown: ChoiceDisplay | NumberDisplay | None
    charts: tuple[SafeString, ...]

    @property
    def kind(self) -> str:
        return self.result.question.kind

    @property
    def warning(self) -> str | None:
        """The result's word on the data (e.g. that they contradict the design)."""
        if self.shown is not None:
            return self.shown.warning
        return self.result.warning


def question_panels(results: SurveyResults) -> list[Panel]:
    """Every question's panel, built from its design's result object."""
    level, method = results.level, results.method
    panels = []
    for number, r in enumerate(results.questions, start=1):
        question, est = r.question, r.estimate
        if isinstance(est, ChoiceEstimate):
            shown = choice_display(est, question.options, level, method)
            charts = (choice_chart(question, shown, level, method),)
        elif isinstance(est, NumberEstimate | OneBitEstimate):
            shown = number_display(est, level, r.histogram, r.interval_method)
            charts = (histogram_chart(question, shown),)
            if shown.distribution:
                charts += (distribution_chart(question, shown),)
        else:
            shown, charts = None, ()
        panels.append(Panel(number, r, shown, charts))
    return panels


@dataclass(frozen=True)
class IntervalRow:
    """One row of an interval chart: ``estimate`` is None for a hidden cell, which is
    drawn as the words ``note`` and nothing else."""

    label: str
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""


def _odds(value: float) -> str:
    return "∞" if value == float("inf") else f"{value:.3g}"


def interval_chart(
    rows: list[IntervalRow],
    *,
    title: str,
    label: str,
    odds_ratios: bool = False,
    scale: Scale | None = None,
) -> SafeString:
    """Estimates with intervals, one row each, as the forest plot draws them: on a
    0–100 % axis, on ``scale`` (a number question's bounds), or for ``odds_ratios`` on a
    log axis with a line at 1 (no effect).

    Used by the breakdown (one row per category), the cross-tab (one per cell) and the
    model (one per coefficient's odds ratio)."""
    if odds_ratios:
        finite = [
            v
            for r in rows
            for v in (r.estimate, r.ci_low, r.ci_high)
            if v is not None and 0 < v < float("inf")
        ]
        span = max((abs(np.log10(v)) for v in finite), default=1.0)
        bound = max(1.0, float(np.ceil(span)))
        ticks = [10.0**e for e in range(-int(bound), int(bound) + 1)]

        def position(value: float) -> float:
            if value <= 0:
                return 0.0
            if value == float("inf"):
                return 1.0
            return min(1.0, max(0.0, (np.log10(value) + bound) / (2 * bound)))

        tick_text, show = (lambda t: f"{t:g}"), _odds
    elif scale is not None:
        ticks = list(scale.ticks)

        def position(value: float) -> float:
            return min(1.0, max(0.0, scale.fraction(value)))

        tick_text, show = scale.tick, scale.read
    else:
        ticks = list(TICKS)

        def position(value: float) -> float:
            return min(1.0, max(0.0, value))

        tick_text, show = (lambda t: f"{t * 100:.0f} %"), _pct

    descriptions = [
        f"{row.label}: {row.note}."
        if row.estimate is None
        else f"{row.label}: {show(row.estimate)}, interval {show(row.ci_low)} to "
        f"{show(row.ci_high)}{', ' + row.note if row.note else ''}."
        for row in rows
    ]

    def draw(frame: Frame) -> tuple[float, list[str]]:
        height, x = _row_axis(frame, len(rows), position)
        body = _ticks(frame, height, x, ticks, tick_text)
        for i, row in enumerate(rows):
            label_y, y = frame.row_y(i)
            body.append(_row_label(frame, label_y, row.label))
            if row.estimate is None:
                body.append(
                    f'<text class="svg-muted" x="{x(ticks[0]):.1f}" y="{y + 4:.1f}">'
                    f"{escape(row.note)}</text>"
                )
                continue
            body.append(
                f'<line class="svg-ci" x1="{x(row.ci_low):.1f}" x2="{x(row.ci_high):.1f}" '
                f'y1="{y:.1f}" y2="{y:.1f}"/>'
                f'<circle class="svg-point" cx="{x(row.estimate):.1f}" cy="{y:.1f}" r="5"/>'
            )
        if not rows:
            body.append(
                f'<text class="svg-muted" x="{x(ticks[0]):.1f}" y="{frame.top + 18}">'
                "Nothing to show yet.</text>"
            )
        return height, body

    return _charts(draw, title, " ".join(descriptions) or "Nothing to show yet.", label)
