"""Security headers, cookies, owner isolation and inert HTML on every page.

Pages are found by walking the URL configuration, so a page added later is checked too:
each route's parameters are filled from one survey (by parameter name), and every page
that answers GET is fetched as its owner.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from config.middleware import JSON_POLICY
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
POLLED = {"classroom:poll", "classroom:student_status"}
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
    expected = {"home", "survey:respond", "survey:list", "analysis:dashboard"}
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
def test_json_responses_forbid_everything_and_pages_keep_their_policy(
    client, owner, hostile_survey
):
    """Data is never a document: whatever a browser is tricked into doing with a JSON
    body, it may load nothing and be framed nowhere. Pages under /api/ (the docs) keep
    the page policy they need."""
    answers = [{"question": q.id, "value": 1} for q in hostile_survey.questions.all()]
    receipt = client.post(
        f"/api/public/surveys/{hostile_survey.slug}/responses/",
        {"submission_id": str(uuid.uuid4()), "answers": answers},
        content_type="application/json",
    )
    refusal = client.post(
        f"/api/public/surveys/{hostile_survey.slug}/responses/",
        {"submission_id": "not an id", "answers": []},
        content_type="application/json",
    )
    client.force_login(owner)
    responses = {
        "receipt": receipt,
        "refusal": refusal,
        "surveys": client.get("/api/surveys/"),
        "estimates": client.get(f"/api/surveys/{hostile_survey.id}/estimates/"),
        "not found": client.get("/api/surveys/999999/estimates/"),
    }
    for name, response in responses.items():
        assert response["Content-Type"].startswith("application/json"), name
        assert response["Content-Security-Policy"] == JSON_POLICY, name
    assert [receipt.status_code, refusal.status_code] == [201, 400]
    docs = client.get("/api/docs/")["Content-Security-Policy"]
    assert "script-src 'self'" in docs and "default-src 'self'" in docs


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
    assert {"analysis:dashboard", "api-estimates", "api-survey-detail"} <= set(checked)
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
        "DJANGO_SETTINGS_MODULE": "config.settings",
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


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A production-like environment for a subprocess: the real settings module, no DEBUG,
    its own SQLite file."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DEBUG", "DJANGO_", "SECRET_KEY", "RATELIMIT", "PROXY_COUNT"))
        and key not in ("DATABASE_URL", "REDIS_URL", "EMAIL_URL")
    }
    return env | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.sqlite3'}",
        **extra,
    }


@pytest.mark.parametrize("command", [["manage.py", "check"], ["-c", "import config.wsgi"]])
def test_without_a_secret_key_and_debug_off_the_app_refuses_to_start(tmp_path, command):
    env = production_env(tmp_path)
    del env["SECRET_KEY"]
    result = subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "SECRET_KEY is not set. Set SECRET_KEY to a long random string" in result.stderr
    debug = subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        env=env | {"DEBUG": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert debug.returncode == 0, debug.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(
    base: str, method: str, path: str, body: dict | None = None, **headers: str
) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, content = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, content = error.code, error.read()
    try:
        return status, json.loads(content)
    except ValueError:
        return status, {"text": content.decode(errors="replace")}


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory):
    """The app as deployed: gunicorn with three sync workers and no Redis. Yields the base
    URL, an API token, and the paths of everything the server writes."""
    tmp = tmp_path_factory.mktemp("gunicorn")
    store = f"/dev/shm/deniable-test-gunicorn-{os.getpid()}.sqlite3"
    port = free_port()
    env = production_env(
        tmp,
        WEB_CONCURRENCY="3",
        BIND=f"127.0.0.1:{port}",
        RATELIMIT_LOGIN="20/86400s",  # a day: a slow run never crosses into a new window
        RATELIMIT_STORE=store,
        DJANGO_SUPERUSER_PASSWORD="researcher-password-1",
        LOG_LEVEL="INFO",
    )
    run = functools.partial(subprocess.run, cwd=ROOT, env=env, check=True, timeout=300)
    run([sys.executable, "manage.py", "migrate", "--noinput"], capture_output=True)
    run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "researcher"]
        + ["--email", "researcher@example.org"],
        capture_output=True,
    )
    logs = tmp / "stdout.log", tmp / "stderr.log"
    with logs[0].open("wb") as out, logs[1].open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "--no-control-socket"]
            + ["config.wsgi"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=err,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                status, _ = http(base, "GET", "/healthz")
                if status == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.1)
        else:
            pytest.fail("gunicorn did not start: " + logs[1].read_text())
        credentials = {"username": "researcher", "password": "researcher-password-1"}
        status, body = http(base, "POST", "/api/auth/token/", credentials)
        assert status == 200, body
        yield {
            "base": base,
            "token": body["token"],
            "files": [*logs, tmp / "app.sqlite3", *(Path(store + s) for s in ("", "-wal", "-shm"))],
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
        for suffix in ("", "-wal", "-shm"):
            Path(store + suffix).unlink(missing_ok=True)


def test_the_login_limit_holds_across_gunicorn_workers(gunicorn):
    """20 a day on three workers: 20 attempts allowed of 90 (the token request counted one)."""
    wrong = {"username": "researcher", "password": "guess"}
    with concurrent.futures.ThreadPoolExecutor(9) as pool:
        statuses = list(
            pool.map(
                lambda _: http(gunicorn["base"], "POST", "/api/auth/token/", wrong)[0], range(90)
            )
        )
    assert statuses.count(400) == 19, statuses
    assert statuses.count(429) == 71


def test_x_forwarded_proto_from_a_client_does_not_make_links_https(gunicorn):
    auth = {"Authorization": f"Token {gunicorn['token']}"}
    survey = {"title": "T", "questions": [{"text": "Q?"}]}
    status, created = http(gunicorn["base"], "POST", "/api/surveys/", survey, **auth)
    assert status == 201, created
    status, invites = http(
        gunicorn["base"],
        "POST",
        f"/api/surveys/{created['id']}/invites/",
        {"n": 1},
        X_Forwarded_Proto="https",
        X_Forwarded_For="203.0.113.9",
        **auth,
    )
    assert status == 201, invites
    assert invites["urls"][0].startswith("http://127.0.0.1:")


def test_nothing_the_server_writes_names_a_client_address(gunicorn):
    """A malformed request makes gunicorn log "Invalid request from ip=…"; a query string
    holds invite tokens. Neither address nor query string may reach a log or a file."""
    with socket.create_connection(("127.0.0.1", int(gunicorn["base"].rsplit(":", 1)[1]))) as raw:
        raw.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        raw.recv(1024)
    http(gunicorn["base"], "GET", "/s/no-such-survey/?invite=SECRETINVITE")
    http(gunicorn["base"], "POST", "/api/auth/token/", {"username": "x", "password": "y"})
    time.sleep(1)  # let the workers flush their logs
    logs = gunicorn["files"][1].read_text()
    assert "Invalid request from ip=[address]" in logs
    written = b"".join(path.read_bytes() for path in gunicorn["files"] if path.exists())
    for secret in (b"127.0.0.1", b"203.0.113.9", b"SECRETINVITE"):
        assert secret not in written


@pytest.mark.django_db
def test_researcher_pages_the_api_and_exports_are_private_and_not_stored(
    client, owner, hostile_survey, pages
):
    researcher = {name for name in pages if name not in RESPONDENT_PAGES}
    assert {"survey:list", "survey:builder", "analysis:dashboard"} <= researcher
    for name in researcher:
        # Fragments polled every few seconds (presenter, student status) are private too,
        # revalidated by ETag on each poll.
        expected = "private, no-cache" if name in POLLED else "private, no-store"
        assert pages[name][1]["Cache-Control"] == expected, name
    for path in (
        "/api/surveys/",
        f"/api/surveys/{hostile_survey.id}/export.csv",
        f"/api/surveys/{hostile_survey.id}/codebook.json",
        "/accounts/api-token/",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response["Cache-Control"] == "private, no-store", path
    response = client.post(f"/surveys/{hostile_survey.id}/invites/", {"n": 2})
    assert response["Content-Type"].startswith("text/csv")
    assert response["Cache-Control"] == "private, no-store"
    client.logout()
    assert client.get("/accounts/login/")["Cache-Control"] == "private, no-store"


@pytest.mark.django_db
def test_respondents_get_no_session_lookup_and_keep_their_headers(client, hostile_survey):
    response = client.get(hostile_survey.get_absolute_url())
    assert response["Cache-Control"] == "no-store"
    assert "Cookie" not in response.get("Vary", "")


@pytest.mark.parametrize(("proxies", "expected"), [("0", "None"), ("1", "https")])
def test_x_forwarded_proto_is_trusted_only_behind_the_configured_proxies(
    tmp_path, proxies, expected
):
    script = "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=production_env(tmp_path, PROXY_COUNT=proxies),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert expected in result.stdout


@pytest.mark.django_db
def test_a_client_claiming_https_gets_http_invite_links(client, owner, hostile_survey, settings):
    client.force_login(owner)
    url = f"/api/surveys/{hostile_survey.id}/invites/"
    forged = client.post(
        url, {"n": 1}, content_type="application/json", HTTP_X_FORWARDED_PROTO="https"
    )
    assert forged.json()["urls"][0].startswith("http://testserver/")
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # PROXY_COUNT=1
    proxied = client.post(
        url, {"n": 1}, content_type="application/json", HTTP_X_FORWARDED_PROTO="https"
    )
    assert proxied.json()["urls"][0].startswith("https://testserver")


def wsgi_get(path: str) -> int:
    """A request through Django's real WSGI handler, which opens and closes each request
    (and so checks connections) as under gunicorn; the test client skips that."""
    status = []
    result = WSGIHandler()(RequestFactory().get(path).environ, lambda s, h: status.append(s))
    result.close()
    return int(status[0].split()[0])


@pytest.mark.parametrize("health_checks", [True, False])
@pytest.mark.django_db(transaction=True)
def test_a_connection_postgresql_dropped_while_idle_is_replaced_without_a_503(
    survey, health_checks
):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (run with DATABASE_URL=postgres://…)")
    import psycopg

    connection.settings_dict["CONN_HEALTH_CHECKS"] = health_checks
    connection.settings_dict["CONN_MAX_AGE"] = 60
    try:
        path = survey.get_absolute_url()
        assert wsgi_get(path) == 200
        backend = connection.connection.info.backend_pid  # kept open between requests
        params = connection.get_connection_params()
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [backend])
        # With health checks (the setting) the next request reconnects; without, it fails.
        assert wsgi_get(path) == (200 if health_checks else 503)
    finally:
        connection.settings_dict["CONN_HEALTH_CHECKS"] = True
        connection.settings_dict["CONN_MAX_AGE"] = 0
        connection.close()


def test_the_settings_check_connection_health():
    from django.conf import settings

    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


@pytest.mark.django_db
def test_the_api_docs_page_has_no_inline_code_and_no_outside_resources(client):
    response = client.get("/api/docs/")
    html = response.content.decode()
    parser = InlineCode()
    parser.feed(html)
    assert parser.found == []
    assert "https://" not in html and "http://" not in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle." in html
