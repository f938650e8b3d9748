"""Every chart comes in a wide and a narrow drawing; tests that count marks read one."""

from __future__ import annotations

import re


def wide(html: str) -> str:
    """The wide drawings of the charts in ``html``, one after another."""
    return "".join(re.findall(r'<svg [^>]*class="chart-wide".*?</svg>', html, re.S))


def narrow(html: str) -> str:
    """The narrow (phone) drawings of the charts in ``html``."""
    return "".join(re.findall(r'<svg [^>]*class="chart-narrow".*?</svg>', html, re.S))
