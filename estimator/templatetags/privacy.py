"""Display filters: percentages, intervals and ε in words a respondent can read."""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.{digits}f} %"


@register.filter
def epsilon(value: float | None) -> str:
    """ε as a number, or "∞ (no privacy)" — never a misleading huge number."""
    if value is None or math.isinf(value):
        return "∞ (no privacy)"
    return f"{value:.2f}"


@register.filter
def odds_bound(value: float | None) -> str:
    """e^ε in words: how many times more likely a report can be under one true answer."""
    if value is None or math.isinf(value):
        return "unbounded"
    ratio = math.exp(value)
    # Whole numbers read best ("3×", "117×"); small non-integer ratios keep two decimals.
    near_whole = abs(ratio - round(ratio)) < 0.005 or ratio >= 10
    text = f"{ratio:,.0f}" if near_whole else f"{ratio:.2f}"
    return f"{text}×"


@register.filter
def interval(bounds: tuple[float, float] | None) -> str:
    if not bounds:
        return "—"
    return f"{bounds[0] * 100:.1f} % – {bounds[1] * 100:.1f} %"
