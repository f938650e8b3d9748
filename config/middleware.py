"""The project's own middleware: a 503 the browser client knows to retry when the
database is unavailable, no caching of private responses, and a content security policy
fitted to what each response is."""

from __future__ import annotations

import logging
from collections.abc import Callable

from csp.constants import HEADER
from csp.middleware import CSPMiddleware
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase

logger = logging.getLogger("deniable.database")

RETRY_AFTER_SECONDS = 5


class DatabaseUnavailableMiddleware:
    """Answer 503 + Retry-After when a view cannot reach the database.

    A lost connection, a refused connection or SQLite's "database is locked" after the
    busy timeout all surface as OperationalError/InterfaceError. Whatever transaction the
    view had open was rolled back by the database, so nothing is half-written and the
    client may retry the same request (submissions are idempotent on submission_id).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        # The path only: no address, no body (see config/logging.py).
        logger.error("database unavailable on %s: %s", request.path, exception)
        message = "The database is unavailable; nothing was stored. Please retry shortly."
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse({"detail": message}, status=503)
        else:
            response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        return response


PRIVATE_PREFIXES = ("/api/", "/accounts/", "/admin/")


class PrivateNoStoreMiddleware:
    """``Cache-Control: private, no-store`` on researcher pages, the API and exports.

    Results, exports, invite lists and tokens must not stay in a shared proxy's cache or
    on a lab computer's disk after the researcher logs out. A view that chose a private
    policy of its own keeps it (the presenter's live fragment revalidates with an ETag:
    ``private, no-cache``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # Without a session cookie nobody is logged in: respondents' requests skip the
        # session lookup (and so its Vary: Cookie).
        private = request.path.startswith(PRIVATE_PREFIXES) or (
            settings.SESSION_COOKIE_NAME in request.COOKIES and request.user.is_authenticated
        )
        chosen = response.get("Cache-Control", "")
        if private and not ("private" in chosen and "no-store" not in chosen):
            response["Cache-Control"] = "private, no-store"
        return response


# For a response no browser should ever render or run: nothing may load from it, nothing
# may frame it.
JSON_POLICY = "default-src 'none'; frame-ancestors 'none'"


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's policy (settings.CONTENT_SECURITY_POLICY) on pages; the stricter
    :data:`JSON_POLICY` on JSON responses.

    A JSON body is data, not a document: the page policy's script and style sources and
    its nonce mean nothing there. Building that policy twice per response (policy and
    report-only) costs more CPU than all the other middleware together, and every
    respondent's submission is answered with JSON.
    """

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.get("Content-Type", "").startswith("application/json"):
            if HEADER not in response:
                response[HEADER] = JSON_POLICY
            return response
        return super().process_response(request, response)
