"""Per-client-address rate limits, held only in the cache and never in the database.

A fixed-window counter per (limit, client, window) lives in the cache for one window and
then expires: nothing about who called is ever written to disk by this module. The cache
key holds a keyed hash of the address, not the address itself, so even a Redis dump does
not list respondents' addresses. With several app processes, point ``REDIS_URL`` at one
Redis so that they share the counters; with the default local-memory cache each process
counts on its own (the effective limit is then N times the configured one).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import time
from collections.abc import Callable
from functools import lru_cache, wraps

from django.conf import settings
from django.core.cache import cache, caches
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
    round trips that the cache API's ``add`` + ``incr`` make.
    """
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        try:
            return redis_counter(backend)(keys=[backend.make_and_validate_key(key)], args=[timeout])
        except RedisError as error:
            # Fail open: an unreachable Redis must not stop respondents from answering.
            logger.warning("rate limiter unavailable, not counting: %s", error)
            return 1
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this request opens a new window
        cache.add(key, 1, timeout=timeout)
        return 1


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
