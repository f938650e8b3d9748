"""Display filters: percentages, intervals and ε in words a respondent can read.

Numbers are written as in English ("1,234.5") and then given the active language's
separators ("1.234,5" in German), so every language shows the same digits.
"""

from __future__ import annotations

import math
import sys

from django import template
from django.utils.formats import get_format
from django.utils.translation import gettext

register = template.Library()


def local_number(text: str) -> str:
    """An English-formatted number with the active language's decimal and thousand
    separators (researcher pages, in English, are unchanged)."""
    decimal, thousands = get_format("DECIMAL_SEPARATOR"), get_format("THOUSAND_SEPARATOR")
    return text.translate(str.maketrans({".": decimal, ",": thousands}))


def whole(n: int) -> str:
    """A whole number with the language's thousand separator (12,345 → 12.345 in German)."""
    return local_number(f"{n:,}")


@register.filter
def number(value: float, spec: str = "g") -> str:
    """A number formatted as ``format(value, spec)``, with the language's separators."""
    return local_number(format(value, spec))


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return local_number(f"{value * 100:.{digits}f}") + " %"


@register.filter
def points(value: float | None) -> str:
    """A difference of two shares in signed percentage points ("+4.4 pt")."""
    if value is None:
        return "—"
    return local_number(f"{value * 100:+.1f}") + " pt"


@register.filter
def epsilon(value: float | None) -> str:
    """ε as a number, or "∞ (no privacy)" — never a misleading huge number."""
    if value is None or math.isinf(value):
        return gettext("∞ (no privacy)")
    return local_number(f"{value:.2f}")


MAX_EXP = math.log(sys.float_info.max)


@register.filter
def odds_bound(value: float | None) -> str:
    """e^ε in words: how many times more likely a report can be under one true answer."""
    if value is None or value > MAX_EXP:  # ∞, or past any float: the page shows ε alone
        return "unbounded"
    ratio = math.exp(value)
    # Whole numbers read best ("3×", "117×"); small non-integer ratios keep two decimals.
    near_whole = abs(ratio - round(ratio)) < 0.005 or ratio >= 10
    text = f"{ratio:,.0f}" if near_whole else f"{ratio:.2f}"
    return f"{local_number(text)}×"


@register.filter
def quantity(entry: dict, key: str) -> dict:
    """One quantity of an estimate entry by its key (a design with arms' honesty,
    cheaters…, listed by the breakdown's ``quantities``); empty when absent."""
    return entry.get(key) or {}


@register.filter
def interval(bounds: tuple[float, float] | None) -> str:
    if not bounds:
        return "—"
    return f"{percent(bounds[0])} – {percent(bounds[1])}"
