"""QR codes as inline SVG (segno): no image requests, readable off a projector."""

from __future__ import annotations

import io
import re

import segno


def qr_svg(url: str, *, scale: int = 8, title: str = "QR code", scalable: bool = False) -> str:
    """An SVG QR code for ``url``, safe to embed in a page (segno escapes the title).

    It always carries a viewBox, so CSS that sizes it scales the whole code instead of
    cropping it (a cropped finder pattern does not scan). ``scalable`` also drops the fixed
    width and height, e.g. to fill a projector screen."""
    svg = segno.make(url, error="m").svg_inline(
        scale=scale, title=title, border=2, dark="#1d2330", light="#ffffff", omitsize=True
    )
    if scalable:
        return svg
    side = re.search(r'viewBox="0 0 (\d+) \d+"', svg)[1]
    return svg.replace("<svg ", f'<svg width="{side}" height="{side}" ', 1)


def qr_file(url: str, fmt: str) -> bytes:
    """The QR code as a file to download: ``svg`` (scales for print) or ``png``."""
    out = io.BytesIO()
    code = segno.make(url, error="m")
    if fmt == "svg":
        code.save(out, kind="svg", scale=10, border=4, dark="#1d2330", light="#ffffff")
    else:
        code.save(out, kind="png", scale=12, border=4, dark="#1d2330", light="#ffffff")
    return out.getvalue()
