"""The API's JSON parser, hardened against bodies built to crash the standard one."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, but nesting too deep for Python's decoder is a 400, not a 500.

    ``[[[[…]]]]`` a few thousand levels deep fits easily in 64 KiB and makes
    :func:`json.loads` raise RecursionError.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
