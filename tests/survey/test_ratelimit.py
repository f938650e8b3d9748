"""Rate limits per client address: 429 + Retry-After, counters only in memory (the host's
shared store or Redis), and a limit that holds across processes."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import uuid
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import RequestFactory
from django.urls import reverse

from config.settings import env_rate
from survey import ratelimit
from tests.storage import stored_answers, stored_count

pytestmark = pytest.mark.django_db

ADDRESS = "203.0.113.7"


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    """Ten seconds into a one-minute window, whatever the real time."""
    monkeypatch.setattr(ratelimit, "clock", lambda: 60_000_010.0)


@pytest.fixture
def tight(settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMITS = {"submit": (3, 60), "join": (3, 60), "login": (2, 300)}


def submit(client, survey, address=ADDRESS, **extra):
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [{"question": q.id, "value": 0} for q in survey.questions.all()],
    }
    url = reverse("api-submit", args=[survey.slug])
    return client.post(url, body, content_type="application/json", REMOTE_ADDR=address, **extra)


def test_the_request_over_the_limit_is_429_with_retry_after_and_stores_nothing(
    client, survey, tight
):
    assert [submit(client, survey).status_code for _ in range(3)] == [201] * 3
    response = submit(client, survey)
    assert response.status_code == 429
    assert response["Retry-After"] == "50"
    assert "retry in 50 seconds" in response.json()["detail"]
    assert (stored_count(), stored_answers()) == (3, 3)


def test_the_limit_is_per_address(client, survey, tight):
    for _ in range(3):
        submit(client, survey)
    assert submit(client, survey).status_code == 429
    assert submit(client, survey, address="198.51.100.1").status_code == 201


def test_a_new_window_starts_a_new_count(client, survey, tight, monkeypatch):
    for _ in range(4):
        submit(client, survey)
    monkeypatch.setattr(ratelimit, "clock", lambda: 60_000_060.0)
    assert submit(client, survey).status_code == 201


def test_it_can_be_turned_off(client, survey, tight, settings):
    settings.RATELIMIT_ENABLED = False
    assert {submit(client, survey).status_code for _ in range(6)} == {201}


def store_bytes() -> bytes:
    """Everything the host-wide store holds, as an attacker reading tmpfs would see it."""
    base = Path(settings_store())
    return b"".join(
        Path(f"{base}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(f"{base}{suffix}").exists()
    )


def settings_store() -> str:
    from django.conf import settings

    return settings.RATELIMIT_STORE


def stored_counters() -> list[tuple[str, int]]:
    with sqlite3.connect(settings_store()) as connection:
        return connection.execute("SELECT key, count FROM counter").fetchall()


def test_the_store_holds_no_client_address_and_only_its_owner_reads_it(client, survey, tight):
    submit(client, survey)
    submit(client, survey, address="2001:db8::7")
    counters = stored_counters()
    assert sorted(count for _, count in counters) == [1, 1]
    data = store_bytes()
    for address in (ADDRESS, "2001:db8::7", "2001:0db8"):
        assert address.encode() not in data
        assert address.encode("utf-16-le") not in data
    assert stat.S_IMODE(os.stat(settings_store()).st_mode) == 0o600
    assert settings_store().startswith(("/dev/shm/", "/tmp/"))


def test_a_window_that_ended_is_purged_when_a_new_one_opens(client, survey, tight, monkeypatch):
    submit(client, survey)
    submit(client, survey)
    monkeypatch.setattr(ratelimit, "clock", lambda: 60_000_130.0)  # two windows later
    submit(client, survey)
    assert [count for _, count in stored_counters()] == [1]


def count_allowed(barrier, results, attempts: int) -> None:
    """One worker process: ``attempts`` requests from one address, all at once."""
    request = RequestFactory().post("/", REMOTE_ADDR=ADDRESS)
    barrier.wait()
    results.put(sum(ratelimit.retry_after("submit", request) is None for _ in range(attempts)))


@pytest.mark.parametrize("processes", [3, 6])
def test_the_limit_holds_across_processes(settings, processes):
    """Without Redis, N worker processes of one host allow the limit once, not N times."""
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMITS = {"submit": (100, 60)}
    fork = multiprocessing.get_context("fork")
    barrier, results = fork.Barrier(processes), fork.Queue()
    workers = [
        fork.Process(target=count_allowed, args=(barrier, results, 150)) for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    allowed = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert sum(allowed) == 100, allowed
    assert sum(count for _, count in stored_counters()) == 150 * processes
    assert ADDRESS.encode() not in store_bytes()


def test_an_unusable_store_lets_answers_through(client, survey, tight, settings, caplog):
    """Fail open, as with Redis: respondents must still be able to answer."""
    settings.RATELIMIT_STORE = "/nonexistent-directory/counters.sqlite3"
    assert [submit(client, survey).status_code for _ in range(5)] == [201] * 5
    assert "rate limiter unavailable" in caplog.text


def test_behind_a_proxy_it_counts_the_address_the_proxy_saw(client, survey, tight, settings):
    settings.RATELIMIT_PROXY_COUNT = 1
    for i in range(3):
        # The client may forge the left part of X-Forwarded-For; only the last is trusted.
        forwarded = f"10.0.0.{i}, {ADDRESS}"
        assert submit(client, survey, HTTP_X_FORWARDED_FOR=forwarded).status_code == 201
    assert submit(client, survey, HTTP_X_FORWARDED_FOR=f"10.9.9.9, {ADDRESS}").status_code == 429
    other = "10.0.0.1, 198.51.100.1"
    assert submit(client, survey, HTTP_X_FORWARDED_FOR=other).status_code == 201


def paper(client, survey, address=ADDRESS):
    question = survey.questions.get()
    data = {"submission_id": str(uuid.uuid4()), f"reported_{question.id}": "1"}
    return client.post(f"/s/{survey.slug}/paper/", data, REMOTE_ADDR=address)


def test_the_paper_form_counts_with_the_submissions(client, survey, tight):
    assert [paper(client, survey).status_code for _ in range(2)] == [200, 200]
    assert submit(client, survey).status_code == 201
    response = paper(client, survey)
    assert response.status_code == 429
    assert response["Retry-After"] == "50"
    assert b"Too many requests" in response.content
    assert (stored_count(), stored_answers()) == (3, 3)


def test_api_token_requests_are_throttled(client, owner, tight):
    """Two wrong passwords, then the right one: no token."""
    url = reverse("api-token")
    for _ in range(2):
        response = client.post(url, {"username": "owner", "password": "guess"}, REMOTE_ADDR=ADDRESS)
        assert response.status_code == 400
    right = {"username": "owner", "password": "owner-password-1"}
    response = client.post(url, right, REMOTE_ADDR=ADDRESS)
    assert response.status_code == 429
    assert "token" not in response.json()
    assert client.post(url, right, REMOTE_ADDR="198.51.100.1").json()["token"]


def test_admin_login_attempts_are_throttled(client, django_user_model, tight):
    django_user_model.objects.create_user("boss", password="boss-password-1", is_staff=True)
    url = "/admin/login/"
    wrong = {"username": "boss", "password": "guess"}
    assert [client.post(url, wrong, REMOTE_ADDR=ADDRESS).status_code for _ in range(2)] == [200] * 2
    response = client.post(
        url, {"username": "boss", "password": "boss-password-1"}, REMOTE_ADDR=ADDRESS
    )
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_login_attempts_are_throttled(client, owner, tight):
    url = reverse("login")
    wrong = {"username": "owner", "password": "guess"}
    assert [client.post(url, wrong, REMOTE_ADDR=ADDRESS).status_code for _ in range(2)] == [200] * 2
    right = {"username": "owner", "password": "owner-password-1"}
    response = client.post(url, right, REMOTE_ADDR=ADDRESS)
    assert response.status_code == 429
    assert response["Retry-After"] == "290"
    assert b"Too many requests" in response.content
    assert client.get(url).status_code == 200


@pytest.mark.parametrize(
    ("text", "expected"),
    [("30/m", (30, 60)), ("10/300s", (10, 300)), ("1000/h", (1000, 3600)), ("5/2m", (5, 120))],
)
def test_rates_are_read_from_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("RATELIMIT_TEST", text)
    assert env_rate("RATELIMIT_TEST", "1/s") == expected


@pytest.mark.parametrize("text", ["30", "30/", "thirty/m", "30/d", "0/m", "30/0s", "-1/m"])
def test_a_malformed_rate_stops_the_app_with_a_clear_message(monkeypatch, text):
    monkeypatch.setenv("RATELIMIT_TEST", text)
    with pytest.raises(ImproperlyConfigured, match="RATELIMIT_TEST must"):
        env_rate("RATELIMIT_TEST", "1/s")


def test_walking_through_join_codes_is_throttled(client, tight):
    statuses = [client.get(f"/j/AAAAA{c}", REMOTE_ADDR=ADDRESS).status_code for c in "BCDE"]
    assert statuses == [404, 404, 404, 429]
    response = client.get("/j/?code=AAAAAF", REMOTE_ADDR=ADDRESS)
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 50


@pytest.fixture
def on_redis(settings, tight):
    """The shared counters of a multi-process deployment (CI starts Redis; a machine
    without it skips these tests)."""
    redis = pytest.importorskip("redis")
    # A database of its own per engine: CI runs the SQLite and PostgreSQL suites side by side.
    url = f"redis://127.0.0.1:6379/{14 if connection.vendor == 'sqlite' else 15}"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        client.flushdb()
    except redis.exceptions.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    }
    yield client
    client.flushdb()


def test_on_redis_the_request_over_the_limit_is_429_and_stores_nothing(client, survey, on_redis):
    assert [submit(client, survey).status_code for _ in range(3)] == [201] * 3
    response = submit(client, survey)
    assert (response.status_code, response["Retry-After"]) == (429, "50")
    assert stored_count() == 3
    assert submit(client, survey, address="198.51.100.1").status_code == 201


def test_on_redis_a_counter_expires_with_its_window_and_names_no_address(client, survey, on_redis):
    submit(client, survey)
    keys = on_redis.keys("*")
    assert len(keys) == 1
    assert ADDRESS.encode() not in keys[0]
    assert 0 < on_redis.ttl(keys[0]) <= 61
    assert int(on_redis.get(keys[0])) == 1


def test_an_unreachable_redis_lets_answers_through(client, survey, tight, settings, caplog):
    """Fail open: losing the counters must not stop respondents from answering."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
        }
    }
    assert [submit(client, survey).status_code for _ in range(5)] == [201] * 5
    assert stored_count() == 5
    assert "rate limiter unavailable" in caplog.text
