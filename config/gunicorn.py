"""Gunicorn settings: ``gunicorn -c config/gunicorn.py config.wsgi``.

The access log never holds a client address, a query string (invite tokens travel in
one) or a body: the submit endpoint's log lines say only that an answer arrived.
Everything can be overridden by gunicorn's own GUNICORN_CMD_ARGS or by flags.
"""

from __future__ import annotations

import multiprocessing
import os

from gunicorn.glogging import Logger

from config.logging import DropClientDetails

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * multiprocessing.cpu_count() + 1))
worker_class = "sync"  # behind a buffering reverse proxy, sync workers are the simple choice
timeout = 30
graceful_timeout = 20
max_requests = 10000  # recycle workers now and then; jitter so they do not all restart at once
max_requests_jitter = 1000

accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
# %(t)s time, %(m)s method, %(U)s path without query string, %(s)s status, %(B)s bytes,
# %(M)s duration in ms. Deliberately absent: %(h)s address, %(r)s/%(q)s (query string),
# %(a)s user agent, %(f)s referer, and any {header}i.
access_log_format = '%(t)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms'
errorlog = "-"


class PrivateLogger(Logger):
    """Gunicorn's logger, minus client addresses and query strings in its error log
    ("Invalid request from ip=…", "Error handling request /s/…?invite=…")."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        if not any(isinstance(f, DropClientDetails) for f in self.error_log.filters):
            self.error_log.addFilter(DropClientDetails())


logger_class = PrivateLogger
# X-Forwarded-Proto/-For are believed only from the proxy in front (PROXY_COUNT > 0, see
# config/settings.py); with no proxy, from nobody, so a client cannot claim https.
proxies = int(os.environ.get("PROXY_COUNT") or os.environ.get("RATELIMIT_PROXY_COUNT") or 0)
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1" if proxies else "")
