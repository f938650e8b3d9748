"""Security headers, cookies, owner isolation and inert HTML on every page.

Pages are found by walking the URL configuration, so a page added later is checked too:
each route's parameters are filled from one survey (by parameter name), and every page
that answers GET is fetched as its owner.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from survey.models import Invite, Survey

ROOT = Path(__file__).resolve().parent.parent
XSS_TITLE = '<script>window.__xss = "title"</script>"><img src=x onerror=alert(1)>'
XSS_QUESTION = "Q?<svg onload=alert(2)></svg><script>alert(3)</script>'\";--"
XSS_DESCRIPTION = '<iframe src="javascript:alert(4)"></iframe><a href="javascript:alert(5)">x</a>'
RAW_MARKERS = ("<script>window.__xss", "<img src=x", "<svg onload", "<script>alert", "<iframe")
RESPONDENT_PAGES = {
    "survey:respond",
    "survey:how_it_works",
    "classroom:join_form",
    "classroom:join",
}
SKIPPED_PREFIXES = ("admin/", "api/", "static/")


def routes(patterns=None, prefix: str = "", namespace: str = "", params: tuple = ()):
    """(name, route, parameter names) for every named URL pattern."""
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        names = params + tuple(pattern.pattern.regex.groupindex)
        if isinstance(pattern, URLResolver):
            ns = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from routes(pattern.url_patterns, route, ns, names)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield f"{namespace}{pattern.name}", route, names


def fill(name: str, params: tuple[str, ...], values: dict[str, object]) -> str | None:
    """The path of URL ``name`` with its parameters filled, or None if one is unknown."""
    if any(param not in values for param in params):
        return None
    return reverse(name, kwargs={param: values[param] for param in params})


def values_for(survey: Survey) -> dict[str, object]:
    question = survey.questions.first()
    return {
        "survey_id": survey.id,
        "pk": survey.id,
        "slug": survey.slug,
        "code": survey.join_code,
        "question_id": question.id,
        "action": "lock",
    }


def html_pages(client, survey: Survey) -> dict[str, tuple[str, object]]:
    """{name: (path, response)} for every non-API page that answers GET with HTML."""
    pages = {}
    for name, route, params in routes():
        if route.startswith(SKIPPED_PREFIXES):
            continue
        path = fill(name, params, values_for(survey))
        if path is None:
            continue
        response = client.get(path)
        if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
            pages[name] = (path, response)
    return pages


@pytest.fixture
def hostile_survey(make_survey, owner) -> Survey:
    survey = make_survey(n_questions=2, description=XSS_DESCRIPTION)
    Survey.objects.filter(pk=survey.pk).update(title=XSS_TITLE)
    survey.questions.update(text=XSS_QUESTION)
    survey.refresh_from_db()
    return survey


@pytest.fixture
def pages(client, owner, hostile_survey, make_survey):
    """Pages of a research survey and of a classroom one, both with hostile text."""
    client.force_login(owner)
    classroom = make_survey(mode=Survey.Mode.CLASSROOM, description=XSS_DESCRIPTION)
    Survey.objects.filter(pk=classroom.pk).update(title=XSS_TITLE)
    classroom.questions.update(text=XSS_QUESTION)
    found = html_pages(client, classroom) | html_pages(client, hostile_survey)
    expected = {"home", "survey:respond", "survey:list", "estimator:dashboard"}
    assert expected | {"classroom:presenter", "classroom:join_screen"} <= set(found)
    return found


class InlineCode(HTMLParser):
    """Collects what a strict CSP would block: inline scripts, handlers, style attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.in_inline_script = False

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag == "script" and "src" not in names and names.get("type") != "application/json":
            self.in_inline_script = True
        for attr, value in attrs:
            if attr.startswith("on") or attr == "style":
                self.found.append(f"<{tag} {attr}=…>")
            if attr in ("href", "src", "action") and (value or "").lower().startswith(
                "javascript:"
            ):
                self.found.append(f"<{tag} {attr}=javascript:…>")

    def handle_endtag(self, tag):
        self.in_inline_script = False if tag == "script" else self.in_inline_script

    def handle_data(self, data):
        if self.in_inline_script and data.strip():
            self.found.append(f"inline script {data.strip()[:40]!r}")


@pytest.mark.django_db
def test_every_page_sends_a_strict_content_security_policy(pages):
    for name, (_, response) in pages.items():
        policy = response["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
        assert directives["script-src"] == "'self'", name
        assert directives["style-src"] == "'self'", name
        assert directives["frame-ancestors"] == "'none'", name
        assert directives["object-src"] == "'none'", name
        assert "unsafe-eval" not in policy and "unsafe-inline" not in policy, name
        assert response["X-Frame-Options"] == "DENY", name
        assert response["X-Content-Type-Options"] == "nosniff", name


@pytest.mark.django_db
def test_no_page_has_inline_script_style_or_handlers(pages):
    for name, (_, response) in pages.items():
        parser = InlineCode()
        parser.feed(response.content.decode())
        assert parser.found == [], name


@pytest.mark.django_db
def test_html_in_titles_and_questions_renders_inert_on_every_page(pages):
    for name, (_, response) in pages.items():
        html = response.content.decode()
        for marker in RAW_MARKERS:
            assert marker not in html, (name, marker)


@pytest.mark.django_db
def test_respondent_pages_send_no_referrer_and_no_page_leaks_its_address(pages):
    for name, (_, response) in pages.items():
        allowed = {"no-referrer"} if name in RESPONDENT_PAGES else {"no-referrer", "same-origin"}
        assert response["Referrer-Policy"] in allowed, name
    assert RESPONDENT_PAGES & set(pages)


@pytest.mark.django_db
def test_another_researchers_survey_is_a_404_on_every_page_and_endpoint(
    client, outsider, hostile_survey
):
    client.force_login(outsider)
    checked = []
    for name, _, params in routes():
        if not {"survey_id", "pk"} & set(params):
            continue
        path = fill(name, params, values_for(hostile_survey))
        if path is None:
            continue
        for method in ("get", "post", "patch", "delete"):
            response = getattr(client, method)(path, content_type="application/json")
            assert response.status_code in (404, 405), (name, method, response.status_code)
            checked.append(name)
    assert {"estimator:dashboard", "api-estimates", "api-survey-detail"} <= set(checked)
    assert hostile_survey in Survey.objects.all()


@pytest.mark.django_db
def test_pages_that_need_an_account_send_anonymous_visitors_to_log_in(client, hostile_survey):
    response = client.get(f"/surveys/{hostile_survey.id}/results/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_the_admin_is_for_staff_only(client, owner, django_user_model):
    client.force_login(owner)
    assert client.get("/admin/").status_code == 302
    staff = django_user_model.objects.create_user("staff", password="x" * 12, is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/").status_code == 200


@pytest.fixture
def production(settings):
    """The settings DENIABLE_ENV=production turns on (checked as a whole by check --deploy)."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SESSION_COOKIE_SECURE = True
    settings.CSRF_COOKIE_SECURE = True


@pytest.mark.django_db
def test_production_redirects_to_https_and_sends_hsts(client, production):
    assert client.get("/").status_code == 301
    response = client.get("/", secure=True)
    assert response["Strict-Transport-Security"] == ("max-age=31536000; includeSubDomains; preload")


@pytest.mark.django_db
def test_production_cookies_are_secure_httponly_and_samesite(client, owner, production):
    login = client.get("/accounts/login/", secure=True)
    csrf = login.cookies["csrftoken"]
    assert (csrf["secure"], csrf["samesite"]) == (True, "Strict")
    response = client.post(
        "/accounts/login/",
        {"username": "owner", "password": "owner-password-1"},
        secure=True,
    )
    session = response.cookies["sessionid"]
    assert (session["secure"], session["httponly"], session["samesite"]) == (True, True, "Lax")


@pytest.mark.django_db
def test_respondent_pages_set_no_cookie(client, hostile_survey):
    (token,) = Invite.create_batch(hostile_survey, 1)
    for path in (hostile_survey.get_absolute_url(), f"/s/{hostile_survey.slug}/?invite={token}"):
        response = client.get(path)
        assert response.status_code == 200
        assert not response.cookies


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        # The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE for Playwright in this process;
        # a deployment never has it.
        if key
        not in ("DEBUG", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    env |= {
        "DENIABLE_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "deniable.example.org",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'deploy.sqlite3'}",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
