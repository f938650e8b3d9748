"""Rate limits per client address: 429 + Retry-After, counters only in the cache."""

from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from config.settings import env_rate
from survey import ratelimit
from survey.models import Answer, Submission

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
    assert (Submission.objects.count(), Answer.objects.count()) == (3, 3)


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


def test_the_cache_holds_no_client_address(client, survey, tight):
    submit(client, survey)
    keys = list(cache._cache)  # the local-memory backend's store
    assert keys
    assert not any(ADDRESS in key for key in keys)


def test_behind_a_proxy_it_counts_the_address_the_proxy_saw(client, survey, tight, settings):
    settings.RATELIMIT_PROXY_COUNT = 1
    for i in range(3):
        # The client may forge the left part of X-Forwarded-For; only the last is trusted.
        forwarded = f"10.0.0.{i}, {ADDRESS}"
        assert submit(client, survey, HTTP_X_FORWARDED_FOR=forwarded).status_code == 201
    assert submit(client, survey, HTTP_X_FORWARDED_FOR=f"10.9.9.9, {ADDRESS}").status_code == 429
    other = "10.0.0.1, 198.51.100.1"
    assert submit(client, survey, HTTP_X_FORWARDED_FOR=other).status_code == 201


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
    url = "redis://127.0.0.1:6379/14"
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
    assert Submission.objects.count() == 3
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
    assert Submission.objects.count() == 5
    assert "rate limiter unavailable" in caplog.text
