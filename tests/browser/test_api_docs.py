"""The API reference page works under the site's strict CSP, from its own static files."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_api_docs_list_the_operations_without_console_errors(live_server, page):
    problems, outside = [], []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "request",
        lambda r: None if r.url.startswith(live_server.url) else outside.append(r.url),
    )
    response = page.goto(f"{live_server.url}/api/docs/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".opblock", timeout=30_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert {"/api/auth/token/", "/api/surveys/", "/api/surveys/{id}/export.csv/"} <= {
        p.replace("\u200b", "") for p in paths
    }
    methods = set(page.locator(".opblock-summary-method").all_inner_texts())
    assert {"GET", "POST", "DELETE"} <= methods
    assert "Something went wrong" not in page.content()
    assert problems == []
    assert outside == []
