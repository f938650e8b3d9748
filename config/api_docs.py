"""The API reference page, served entirely from the site's own static files.

drf-spectacular's ReDoc page breaks under the site's CSP (ReDoc injects <style> elements
and fetches fonts from a CDN; its page starts with an inline script). Swagger UI from
drf-spectacular-sidecar, with a stylesheet file and a start-up script file, needs neither.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def api_docs(request: HttpRequest) -> HttpResponse:
    return render(request, "api_docs.html")
