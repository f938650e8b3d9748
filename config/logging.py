"""Logging that never records who answered: no client address, no request body, no
query string (invite tokens travel in one)."""

from __future__ import annotations

import ipaddress
import logging
import re

# Runs of hex digits, dots and colons: candidates, kept only if they parse as an address
# (so times such as 12:30:01 and numbers such as 1.5 survive).
CANDIDATE = re.compile(r"(?<![\w.:])[0-9A-Fa-f.:]*[.:][0-9A-Fa-f.:]*")
QUERY = re.compile(r"(/[^\s?\"']*)\?[^\s\"']*")


def is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def hide_address(match: re.Match) -> str:
    text = match.group(0)
    core = text.rstrip(":.")
    host, _, port = core.rpartition(":")
    if is_address(core):
        return "[address]" + text[len(core) :]
    if port.isdigit() and is_address(host):  # 192.0.2.1:54321
        return "[address]:" + text[len(host) + 1 :]
    return text


def scrub(text: str) -> str:
    """``text`` without client addresses or query strings."""
    return QUERY.sub(r"\1?…", CANDIDATE.sub(hide_address, text))


class DropClientDetails(logging.Filter):
    """Strip the request object (and so its address and body) from every log record, and
    addresses and query strings from its message.

    Django attaches ``request`` to records of ``django.request`` and ``django.server``;
    formatters or handlers could otherwise print the client address. Gunicorn's own
    messages ("Invalid request from ip=…", "Error handling request /s/x?invite=…") name
    them in the text.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if hasattr(record, "request"):
            record.request = None
        if record.name == "django.server":
            record.args = ()
            record.msg = "request handled"
            return True
        message = record.getMessage()
        cleaned = scrub(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True
