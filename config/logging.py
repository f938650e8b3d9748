"""Logging that never records who answered: no client address, no request body."""

from __future__ import annotations

import logging


class DropClientDetails(logging.Filter):
    """Strip the request object (and so its address and body) from every log record.

    Django attaches ``request`` to records of ``django.request`` and ``django.server``;
    formatters or handlers could otherwise print the client address.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if hasattr(record, "request"):
            record.request = None
        if record.name == "django.server":
            record.args = ()
            record.msg = "request handled"
        return True
