"""Per-client-address rate limits, held in memory and never in the database.

A fixed-window counter per (limit, client, window) lives for one window and then expires.
Its key holds a keyed hash (HMAC with SECRET_KEY) of the address, never the address, so
neither a memory dump nor a Redis dump lists respondents' addresses.

Where the counters live decides whether the limit holds across processes:

- One host (the default): a small SQLite file in RAM (``/dev/shm``, a tmpfs), shared by
  every worker process of the host. SQLite's write lock makes each count atomic across
  processes; the file never touches a disk, vanishes on reboot, deleted rows are zeroed
  (``secure_delete``) and expired windows are purged as new ones open. Per-process memory
  would let N workers allow N times the limit; a file on disk would keep (hashed)
  traces of who called after the window ended.
- Several hosts: one Redis shared by all (``REDIS_URL``).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from functools import lru_cache, wraps

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse, JsonResponse
from redis.exceptions import RedisError

logger = logging.getLogger("deniable.ratelimit")
clock = time.time  # replaced in tests, which must not depend on the wall clock


def client_address(request: HttpRequest) -> str:
    """The caller's address, trusting exactly ``RATELIMIT_PROXY_COUNT`` reverse proxies.

    Behind N proxies the client is the N-th address from the right of X-Forwarded-For;
    anything further left was written by the client and cannot be trusted.
    """
    proxies = settings.RATELIMIT_PROXY_COUNT
    if proxies:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "")


def retry_after(name: str, request: HttpRequest) -> int | None:
    """Count this request against limit ``name``; seconds to wait if over it, else None."""
    if not settings.RATELIMIT_ENABLED:
        return None
    count_allowed, seconds = settings.RATELIMITS[name]
    now = clock()
    window = int(now // seconds)
    digest = hmac.new(
        settings.SECRET_KEY.encode(), client_address(request).encode(), hashlib.sha256
    ).hexdigest()[:32]
    count = count_in_window(f"ratelimit:{name}:{digest}:{window}", seconds + 1)
    if count <= count_allowed:
        return None
    return max(1, math.ceil((window + 1) * seconds - now))


# Count and set the expiry atomically: a key can never outlive its window.
COUNT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""


@lru_cache(maxsize=8)
def redis_counter(backend: RedisCache) -> Callable[..., int]:
    """The counting script on the cache's Redis, built once per cache: making a redis-py
    client costs almost as much as the round trip."""
    return backend._cache.get_client(write=True).register_script(COUNT_SCRIPT)


def count_in_window(key: str, timeout: int) -> int:
    """Count one more request under ``key`` (created with ``timeout``); the new count.

    Every public submission pays this, so on Redis it is one command, not the three
    round trips that the cache API's ``add`` + ``incr`` make, and on the host-wide store
    one statement.
    """
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        try:
            return redis_counter(backend)(keys=[backend.make_and_validate_key(key)], args=[timeout])
        except RedisError as error:
            # Fail open: an unreachable Redis must not stop respondents from answering.
            logger.warning("rate limiter unavailable, not counting: %s", error)
            return 1
    try:
        return count_on_host(key, timeout)
    except (sqlite3.Error, OSError) as error:  # e.g. a store another user created
        logger.warning("rate limiter unavailable, not counting: %s", error)
        return 1


STORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS counter (
    key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counter_expires ON counter (expires);
"""
local = threading.local()


def host_store() -> sqlite3.Connection:
    """This process's (and thread's) connection to the host-wide counter file.

    A connection is never shared across a fork: gunicorn forks workers after importing
    the app, so the process id is part of what makes a connection reusable.
    """
    path = str(settings.RATELIMIT_STORE)
    cached = getattr(local, "store", None)
    if cached and cached[0] == (os.getpid(), path):
        return cached[1]
    connection = sqlite3.connect(path, timeout=2, isolation_level=None)
    os.chmod(path, 0o600)
    connection.executescript(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA secure_delete=ON;" + STORE_SCHEMA
    )
    local.store = ((os.getpid(), path), connection)
    return connection


def count_on_host(key: str, timeout: int) -> int:
    """One atomic upsert; when it opens a new counter, windows that have ended go."""
    store = host_store()
    now = clock()
    (count,) = store.execute(
        "INSERT INTO counter (key, count, expires) VALUES (?, 1, ?) "
        "ON CONFLICT (key) DO UPDATE SET count = count + 1 RETURNING count",
        (key, now + timeout),
    ).fetchone()
    if count == 1:
        store.execute("DELETE FROM counter WHERE expires < ?", (now,))
    return count


def forget_counters() -> None:
    """Drop every counter of the host-wide store (tests start each case with none)."""
    if os.path.exists(settings.RATELIMIT_STORE):
        host_store().execute("DELETE FROM counter")


def too_many_requests(request: HttpRequest, wait: int) -> HttpResponse:
    """429 with Retry-After: JSON under /api/, a short plain sentence elsewhere."""
    message = f"Too many requests from your address. Please retry in {wait} seconds."
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=429)
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(wait)
    return response


def limit(name: str, methods: tuple[str, ...] = ("POST",)) -> Callable:
    """Decorate a view so that ``methods`` requests count against limit ``name``."""

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method in methods:
                wait = retry_after(name, request)
                if wait is not None:
                    return too_many_requests(request, wait)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
