"""Real-browser fixtures: Debian's Chromium driven by Playwright against live_server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 360, "height": 740}
LAPTOP = {"width": 1280, "height": 800}


def pytest_collection_modifyitems(items):
    """Every test here is a browser test. The rendering checks (layout, accessibility,
    escaping) see the same pages from either database: with SKIP_RENDERING=1 (CI's
    PostgreSQL run, beside a SQLite run that has them) they are skipped, saying why."""
    skip = pytest.mark.skip(reason="rendering check: run once, in the SQLite run")
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
            if os.environ.get("SKIP_RENDERING") and item.get_closest_marker("rendering"):
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def quick_class_status(monkeypatch):
    """Phones on a class question ask for its status, and projectors for the live
    results, every second here (every 5 s and 2 s in class): the same steps, sooner."""
    from classroom import lesson_views, views

    monkeypatch.setattr(views, "STUDENT_STATUS_POLL_SECONDS", 1)
    monkeypatch.setattr(views, "POLL_SECONDS", 1)
    monkeypatch.setattr(lesson_views, "POLL_SECONDS", 1)


@pytest.fixture(scope="session")
def live_server():
    """Like pytest-django's, but static files are served by WhiteNoise from the collected,
    hashed and compressed files, exactly as in production (so page weight is real)."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost", start=False)
    server.thread.static_handler = lambda app: app
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make test`, which installs it")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport=LAPTOP)
    yield context
    context.close()


@pytest.fixture
def page(context):
    return context.new_page()


@pytest.fixture
def screenshot(tmp_path):
    """Save a full-page screenshot under the test's tmp dir (and ARTIFACTS_DIR if set)."""

    def take(page, name: str) -> Path:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=path, full_page=True)
        if artifacts := os.environ.get("ARTIFACTS_DIR"):
            Path(artifacts).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(artifacts) / path.name)
        return path

    return take


@pytest.fixture
def record_requests(page):
    """Every request the page makes, with its body, in order."""
    requests = []
    page.on("request", lambda request: requests.append(request))
    return requests
