"""What the classroom's live polling costs while a lecture hall submits.

Starts gunicorn on a fresh database, then has 500 simulated students submit their
randomized answers through the public API (as their phones do), alone and while the
presenter view polls, and while every student's phone polls its status fragment. Prints
submits per second sustained in each case (and the ratio to submitting alone, measured
side by side in this run), how many polls were answered 304, their latency, and the
size of every poll response.

    .venv/bin/python bench/poll.py                 # SQLite in a temporary file
    createdb -h 127.0.0.1 -U postgres bench_poll   # PostgreSQL: an empty database, then
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_poll .venv/bin/python bench/poll.py
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def setup_environment() -> dict[str, str]:
    env = dict(os.environ)
    if "DATABASE_URL" not in env:
        env["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='bench-poll-')}/db.sqlite3"
    # The benchmark measures the app, not the per-address rate limiter (every simulated
    # student here shares one address).
    env |= {"DEBUG": "false", "RATELIMIT_ENABLED": "false", "LOG_LEVEL": "ERROR"}
    env.setdefault("SECRET_KEY", "bench-" + "k" * 50)  # production settings refuse none
    env.setdefault("STATIC_ROOT", tempfile.mkdtemp(prefix="bench-poll-static-"))
    os.environ.update(env)
    return env


def prepare_database():
    """Migrate, create an instructor, a revealed classroom survey and a logged-in session."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from classroom.models import Lesson
    from survey.models import Survey

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-instructor")
    survey = Survey.objects.create_classroom(user, "Have you ever cheated on an exam?")
    survey.reveal()
    # A lesson whose phones poll alongside (the same polling, ETag and cache as the status).
    survey.lesson = Lesson.objects.create(owner=user, kind=Lesson.Kind.EXPONENTIAL)
    client = Client()
    client.force_login(user)
    return survey, client.cookies["sessionid"].value


class Server:
    def __init__(self, env: dict[str, str], workers: int):
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "gunicorn"),
                "config.wsgi",
                f"--bind=127.0.0.1:{self.port}",
                f"--workers={workers}",
                "--access-logfile=/dev/null",
                "--log-level=warning",
            ],
            cwd=ROOT,
            env=env,
        )
        for _ in range(200):
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("gunicorn did not start")

    def request(self, method: str, path: str, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            content = response.read()
            header_bytes = sum(len(k) + len(v) + 4 for k, v in response.getheaders()) + 17
            return response.status, content, dict(response.getheaders()), header_bytes
        finally:
            conn.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


class Poller:
    """Threads that GET a fragment every ``interval`` seconds, revalidating with the last
    ETag like a browser's cache does, and record status codes and latencies."""

    def __init__(self, server: Server, path: str, cookie: str | None, threads: int, interval):
        self.server, self.path, self.cookie = server, path, cookie
        self.threads, self.interval = threads, interval
        self.stop_event = threading.Event()
        self.codes: list[int] = []
        self.latencies: list[float] = []
        self.lock = threading.Lock()

    def run_one(self, offset: float) -> None:
        etag = None
        time.sleep(offset)
        while not self.stop_event.is_set():
            headers = {"Cookie": f"sessionid={self.cookie}"} if self.cookie else {}
            if etag:
                headers["If-None-Match"] = etag
            start = time.perf_counter()
            status, _, response_headers, _ = self.server.request("GET", self.path, None, headers)
            elapsed = time.perf_counter() - start
            etag = response_headers.get("ETag", etag)
            with self.lock:
                self.codes.append(status)
                self.latencies.append(elapsed)
            self.stop_event.wait(max(0.0, self.interval - elapsed))

    def __enter__(self):
        self.workers = [
            threading.Thread(target=self.run_one, args=(i * self.interval / self.threads,))
            for i in range(self.threads)
        ]
        for worker in self.workers:
            worker.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        for worker in self.workers:
            worker.join()


def submit_students(server: Server, survey, n: int, concurrency: int) -> float:
    """n students each POST one randomized answer; returns submits per second."""
    question = survey.questions.get().id
    path = f"/api/public/surveys/{survey.slug}/responses/"

    def one(i: int) -> int:
        body = json.dumps(
            {
                "submission_id": str(uuid.uuid4()),
                "answers": [{"question": question, "value": i % 2}],
            }
        )
        return server.request("POST", path, body, {"Content-Type": "application/json"})[0]

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        codes = list(pool.map(one, range(n)))
    elapsed = time.perf_counter() - start
    if set(codes) != {201}:
        raise RuntimeError(f"unexpected submit statuses: {sorted(set(codes))}")
    return n / elapsed


def sizes(server: Server, survey, cookie: str) -> list[tuple[str, int, int, int]]:
    rows = []
    for label, path, headers in (
        ("presenter poll", f"/classroom/{survey.id}/poll/", {"Cookie": f"sessionid={cookie}"}),
        ("student status", f"/classroom/status/{survey.slug}/", {}),
        ("lesson phone", f"/l/{survey.lesson.slug}/live/", {}),
    ):
        status, body, response_headers, header_bytes = server.request("GET", path, None, headers)
        rows.append((f"{label}, changed", status, len(body), header_bytes))
        again = headers | {"If-None-Match": response_headers["ETag"]}
        status, body, _, header_bytes = server.request("GET", path, None, again)
        rows.append((f"{label}, unchanged", status, len(body), header_bytes))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16, help="phones submitting at once")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--repeat", type=int, default=3, help="runs per scenario (median)")
    parser.add_argument("--phone-interval", type=float, default=5.0, help="student poll, s")
    args = parser.parse_args()

    env = setup_environment()
    survey, cookie = prepare_database()
    from classroom.views import STATUS_FRESH_SECONDS

    server = Server(env, args.workers)
    poll_path = f"/classroom/{survey.id}/poll/"
    status_path = f"/classroom/status/{survey.slug}/"
    phones = args.students // 50  # each thread stands for 50 phones
    per_thread = args.phone_interval * phones / args.students
    every = f"every {args.phone_interval:g} s"
    scenarios = [
        ("submits alone", None),
        ("+ presenter polling every 2 s", (poll_path, cookie, 1, 2.0)),
        ("+ presenter polling back-to-back", (poll_path, cookie, 1, 0.0)),
        (
            f"+ {args.students} phones polling a no-op view {every}",
            ("/healthz", None, phones, per_thread),
        ),
        (
            f"+ {args.students} phones polling status {every}",
            (status_path, None, phones, per_thread),
        ),
        (
            f"+ {args.students} phones polling status {every}, revealed",
            (status_path, None, phones, per_thread),
        ),
        (
            f"+ {args.students} phones polling a lesson {every}",
            (f"/l/{survey.lesson.slug}/live/", None, phones, per_thread),
        ),
    ]
    try:
        results = {name: [] for name, _ in scenarios}
        polls = {name: ([], []) for name, _ in scenarios}
        for _ in range(args.repeat):  # interleaved, so drift hits every scenario alike
            for name, poller in scenarios:
                survey.new_round()  # hidden until revealed, as while students answer
                if name.endswith("revealed") or "presenter" in name:
                    survey.reveal()  # the presenter sees and the phones get the live estimate
                if poller is None:
                    results[name].append(
                        submit_students(server, survey, args.students, args.concurrency)
                    )
                    continue
                with Poller(server, *poller) as running:
                    rate = submit_students(server, survey, args.students, args.concurrency)
                results[name].append(rate)
                polls[name][0].extend(running.codes)
                polls[name][1].extend(running.latencies)
        report(scenarios, results, polls, args, env)
        time.sleep(STATUS_FRESH_SECONDS + 0.5)  # let every worker's cached fragment settle
        print()
        print("| response | status | body bytes | header bytes |")
        print("|---|---:|---:|---:|")
        for label, status, body, header in sizes(server, survey, cookie):
            print(f"| {label} | {status} | {body} | {header} |")
    finally:
        server.stop()


def report(scenarios, results, polls, args, env) -> None:
    database = env["DATABASE_URL"].split(":", 1)[0]
    print(
        f"{args.students} students submitting ({args.concurrency} at once), gunicorn "
        f"{args.workers} sync workers, {database}, median of {args.repeat} interleaved runs"
    )
    print()
    print("| scenario | submits/s | vs alone | polls | of which 304 | poll median ms |")
    print("|---|---:|---:|---:|---:|---:|")
    alone = statistics.median(results["submits alone"])
    for name, _ in scenarios:
        rate = statistics.median(results[name])
        codes, latencies = polls[name]
        not_modified = sum(code == 304 for code in codes)
        median_ms = f"{statistics.median(latencies) * 1000:.1f}" if latencies else "—"
        print(
            f"| {name} | {rate:.0f} | {rate / alone:.2f} | {len(codes)} | "
            f"{not_modified} | {median_ms} |"
        )


if __name__ == "__main__":
    main()
