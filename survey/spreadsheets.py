"""Cells for the CSV files the app writes, safe to open in a spreadsheet."""

from __future__ import annotations

# What makes a spreadsheet read a cell as a formula (OWASP: CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(text: str | None) -> str:
    """Free text made safe for a spreadsheet (OWASP's CSV injection advice): a cell that
    starts with ``= + - @``, a tab or a carriage return gets a leading apostrophe, so
    Excel, LibreOffice and Google Sheets show it instead of running it as a formula.

    Only for cells that hold text: numbers are written as they are, so R and pandas read
    the same values (the codebook says so, and has the exact text in JSON)."""
    if text is None:
        return ""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def number_cell(value: float | int | None) -> str | int:
    """A number as R and pandas read it back: integers exact, floats rounded to 12
    significant digits (0.19499999999999995 → 0.195; far below any standard error),
    nothing for a missing value."""
    if value is None:
        return ""
    if isinstance(value, int):
        return value
    return repr(float(f"{value:.12g}"))
