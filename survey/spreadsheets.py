"""The one writer of every CSV file the app writes, and its cells, safe to open in a
spreadsheet: text that would start a formula is neutralized, numbers stay numbers."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

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


def cell(value: object) -> object:
    """Any cell: text made safe (:func:`text_cell`), numbers as R and pandas read them
    (:func:`number_cell`; booleans as they are), nothing for a missing value."""
    if value is None:
        return ""
    if isinstance(value, str):
        return text_cell(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return number_cell(value)
    return text_cell(str(value))


def csv_text(
    rows: Iterable[Sequence[object]], header: Sequence[str] = (), lineterminator: str = "\n"
) -> str:
    """Every CSV the app writes: ``header`` then ``rows``, each cell through :func:`cell`,
    so no file can carry a formula into a colleague's spreadsheet."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=lineterminator)
    if header:
        writer.writerow([cell(name) for name in header])
    writer.writerows([cell(value) for value in row] for row in rows)
    return out.getvalue()
