"""Error pages: JSON under /api/ (where clients parse the body), HTML elsewhere."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

# Headers an error response keeps when its body is rewritten as JSON.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Cache-Control", "Vary")


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


class ApiErrorsAsJson:
    """Every error under /api/ has a JSON body ``{"detail": …}``, whoever produced it:
    Django's 400/403/500 pages, a 405 from a view outside DRF (the docs page), an error
    rendered by the CSV renderer. API clients parse the body; an HTML page would make
    them fail on the parse instead of on the status. A body over Django's upload limit
    is a 413 here (Django's own answer is a 400 page)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not is_api(request) or response.status_code < 400:
            return response
        if "json" in response.get("Content-Type", ""):
            return response
        rewritten = JsonResponse(
            {"detail": f"{response.reason_phrase}."}, status=response.status_code
        )
        for name in KEPT_HEADERS:
            if name in response:
                rewritten[name] = response[name]
        return rewritten

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_api(request) and isinstance(exception, RequestDataTooBig):
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            detail = f"The request body must be at most {limit} bytes; nothing was stored."
            return JsonResponse({"detail": detail}, status=413)
        return None
