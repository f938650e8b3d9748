"""The API's JSON parser, hardened against bodies built to crash the standard one."""

from __future__ import annotations

from rest_framework import parsers, status
from rest_framework.exceptions import APIException, ParseError


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, but nesting too deep for Python's decoder is a 400, not a 500.

    ``[[[[…]]]]`` a few thousand levels deep fits easily in 64 KiB and makes
    :func:`json.loads` raise RecursionError. (A body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``
    never gets here: DRF reads JSON through ``request.body``, which refuses it; see
    :class:`config.errors.ApiErrorsAsJson` for the 413.)
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
