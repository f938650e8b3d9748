"""Gunicorn settings: ``gunicorn -c config/gunicorn.py config.wsgi``.

The access log never holds a client address, a query string (invite tokens travel in
one) or a body: the submit endpoint's log lines say only that an answer arrived.
Everything can be overridden by gunicorn's own GUNICORN_CMD_ARGS or by flags.
"""

from __future__ import annotations

import multiprocessing
import os

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
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
