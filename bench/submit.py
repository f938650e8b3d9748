"""Submission throughput under gunicorn, on PostgreSQL and SQLite, and what survives a crash.

    .venv/bin/python bench/submit.py                 # everything (a few minutes)
    .venv/bin/python bench/submit.py --only postgres --submissions 20000 --clients 100

For each scenario the script migrates a fresh database (PostgreSQL: a database named
``bench_submit``, dropped at the end; SQLite: a temporary file), creates one open survey,
starts gunicorn on a free loopback port and drives it with many concurrent clients:

* ``noop``: GET /healthz (a Django view that touches nothing) on the same server, in the
  same run, as the baseline; no-op and submit loads alternate in ``--rounds`` rounds so
  that a drift in the machine's speed weighs on both alike;
* ``submit``: POST /api/public/surveys/<slug>/responses/ with fresh submission ids;
* ``scale-out``: two gunicorn instances on two ports sharing one PostgreSQL, the clients
  alternating between them as a load balancer would; then again with the rate limiter
  on, its counters shared in one Redis (when Redis answers on 127.0.0.1:6379);
* ``kill -9``: the whole gunicorn process group is killed mid-load and restarted; clients
  retry with the same submission id as the browser does.

After each submit run the database is checked: stored submissions = acknowledged ones,
each with every answer, no partial submission; then everything is sealed
(``seal_hours --now``) and the sealed counts and tallies must equal the submissions.
Every load is bounded in count and time and talks to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
PG_SERVER = "postgres://postgres@127.0.0.1:5432"
PG_DATABASE = "bench_submit"
HOST = "127.0.0.1"
REQUEST_TIMEOUT = 60.0
RETRY_FOR = 60.0  # a client keeps retrying one submission at most this long

# The survey's questions cycle through these kinds: (kind, options, design, parameters).
MIX = [
    ("binary", [], "forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
    ("choice", ["never", "once", "more"], "k_rr", {"epsilon": 1.0986}),
    ("number", [], "laplace", {"epsilon": 1.0, "lower": 0, "upper": 30}),
    ("choice", ["1st year", "2nd year", "3rd year"], "direct", {}),
    # A design with arms: the report goes with the arm the device drew.
    ("binary", [], "stochastic_lie_detector", {"p": [2 / 12, 10 / 12], "arm_weights": [0.5, 0.5]}),
]
SETUP_SURVEY = """
import json
from django.contrib.auth import get_user_model
from survey.models import Survey
owner, _ = get_user_model().objects.get_or_create(username="bench")
survey = Survey.objects.create(owner=owner, title="Benchmark", status=Survey.Status.OPEN)
mix = json.loads({mix!r})
for i in range({questions}):
    kind, options, name, params = mix[i % len(mix)]
    survey.questions.create(position=i, text=f"Question {{i}}?", kind=kind, options=options,
                            design_name=name, design_params=params)
questions = list(survey.questions.all())
print(json.dumps({{"id": survey.id, "slug": survey.slug, "design": survey.design_version,
                  "questions": [q.id for q in questions],
                  # Reports each question can receive: its design's outputs, or a spread
                  # of numbers around its bounds, noise included.
                  "reports": [q.design.output_description().get("values")
                              or list(range(-40, 71)) for q in questions],
                  # How many arms each question's design draws from (0: none).
                  "arms": [q.design.output_description().get("arms", 0) for q in questions]}}))
"""


# The database --------------------------------------------------------------------------


@dataclass
class Database:
    url: str
    engine: str

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.engine == "sqlite":
            with sqlite3.connect(self.url.removeprefix("sqlite:///")) as conn:
                return conn.execute(sql.replace("%s", "?"), params).fetchall()
        with psycopg.connect(self.url) as conn:
            return conn.execute(sql, params).fetchall()


def fresh_database(engine: str, workdir: Path) -> Database:
    if engine == "sqlite":
        return Database(f"sqlite:///{workdir / 'bench.sqlite3'}", "sqlite")
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DATABASE}")
    return Database(f"{PG_SERVER}/{PG_DATABASE}", "postgres")


def drop_database(db: Database) -> None:
    if db.engine == "postgres":
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")


def app_env(db: Database, workdir: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_URL", "REDIS_URL", "RATELIMIT", "DENIABLE_ENV"))
    }
    env |= {
        "DATABASE_URL": db.url,
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + "k" * 50,
        "ALLOWED_HOSTS": HOST,
        "STATIC_ROOT": str(workdir / "static"),
        "RATELIMIT_ENABLED": "false",
        "GUNICORN_ACCESS_LOG": str(workdir / "access.log"),
    }
    return env | extra


def prepare(db: Database, workdir: Path, questions: int) -> dict:
    env = app_env(db, workdir)
    manage = [str(PYTHON), str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, check=True, cwd=ROOT)
    code = SETUP_SURVEY.format(questions=questions, mix=json.dumps(MIX))
    out = subprocess.run(
        [*manage, "shell", "-c", code], env=env, check=True, cwd=ROOT, capture_output=True
    )
    return json.loads(out.stdout.decode().strip().splitlines()[-1])


def digest(submission_id: str) -> uuid.UUID:
    """What the server keeps of a client's id (responses.models.receipt_of)."""
    return uuid.UUID(bytes=hashlib.sha256(uuid.UUID(submission_id).bytes).digest()[:16])


def verify(
    db: Database, survey: dict, acknowledged: set[str], workdir: Path, sealed_before: int = 0
) -> dict[str, object]:
    """What the database holds, compared with what the clients were told: first the
    current hour's rows (one per submission, every answer in it), then, after sealing
    everything (``seal_hours --now``), the sealed counts (``sealed_before``: how many were
    sealed already)."""
    sid, q = survey["id"], len(survey["questions"])
    rows = db.query(
        "SELECT receipt, reports FROM responses_inbox0 WHERE survey_id = %s "
        "UNION ALL SELECT receipt, reports FROM responses_inbox1 WHERE survey_id = %s",
        (sid, sid),
    )
    stored = {uuid.UUID(str(receipt)) for receipt, _ in rows}
    partial = sum(1 for _, reports in rows if len(reports.split(",")) != q)
    started = time.monotonic()
    manage = [str(PYTHON), str(ROOT / "manage.py"), "seal_hours", "--now"]
    subprocess.run(manage, env=app_env(db, workdir), check=True, cwd=ROOT, capture_output=True)
    sealed_in = time.monotonic() - started
    (real,) = db.query("SELECT real FROM responses_surveycount WHERE survey_id = %s", (sid,))[0]
    tallies = dict(
        db.query(
            "SELECT question_id, sum(count) FROM responses_tally t JOIN survey_question qu "
            "ON t.question_id = qu.id WHERE qu.survey_id = %s GROUP BY question_id",
            (sid,),
        )
    )
    left = db.query(
        "SELECT (SELECT count(*) FROM responses_inbox0) + (SELECT count(*) FROM responses_inbox1)"
    )[0][0]
    return {
        "stored": len(stored),
        "acknowledged": len(acknowledged),
        "missing": len({digest(a) for a in acknowledged} - stored),
        "answers_ok": partial == 0,
        "partial": partial,
        "sealed": real == len(stored) + sealed_before and left == 0,
        "tallies_ok": all(
            int(tallies.get(qid, 0)) == len(stored) + sealed_before for qid in survey["questions"]
        ),
        "seal seconds": round(sealed_in, 1),
    }


# gunicorn ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class Server:
    """One gunicorn instance in its own process group (so kill -9 reaches its workers)."""

    def __init__(self, env: dict[str, str], workers: int, port: int | None = None) -> None:
        self.env, self.workers, self.port = env, workers, port or free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> Server:
        command = [str(GUNICORN), "-c", str(ROOT / "config" / "gunicorn.py"), "config.wsgi"]
        command += ["--bind", f"{HOST}:{self.port}", "--workers", str(self.workers)]
        log = open(Path(self.env["STATIC_ROOT"]).parent / "gunicorn.log", "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            command, env=self.env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if asyncio.run(request(self.port, "GET", "/healthz", b""))[0] == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"gunicorn did not answer on port {self.port} within 30 s")

    def kill(self) -> None:
        """SIGKILL to the master and every worker at once: a crash, not a shutdown."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


# The clients ---------------------------------------------------------------------------


async def request(port: int, method: str, path: str, body: bytes) -> tuple[int, bytes]:
    """One HTTP/1.1 request on its own connection (gunicorn's sync workers close it)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body)
        await writer.drain()
        response = await reader.read()
    finally:
        writer.close()
    if not response:
        raise ConnectionResetError("connection closed without a response")
    return int(response.split(b" ", 2)[1]), response


@dataclass
class Load:
    statuses: Counter = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)
    connection_errors: int = 0
    retried_200: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    def add(self, other: Load) -> None:
        self.statuses += other.statuses
        self.latencies += other.latencies
        self.acknowledged |= other.acknowledged
        self.connection_errors += other.connection_errors
        self.retried_200 += other.retried_200
        self.seconds += other.seconds

    def row(self, name: str, baseline: Load | None = None, ratios: list[float] = ()) -> list[str]:
        lat = sorted(self.latencies)
        p50 = statistics.median(lat) * 1000
        p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1000
        server_errors = sum(n for status, n in self.statuses.items() if status >= 500)
        ratio = f"{self.rate / baseline.rate:.2f}" if baseline else ""
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else ""
        statuses = " ".join(f"{s}×{n}" for s, n in sorted(self.statuses.items()))
        return [name, str(len(lat)), f"{self.rate:.0f}", f"{p50:.1f}", f"{p99:.1f}", ratio,
                spread, statuses, str(server_errors)]  # fmt: skip


async def drive(
    ports: list[int],
    n: int,
    clients: int,
    make: callable,
    on_ack: callable | None = None,
) -> Load:
    """``clients`` coroutines share ``n`` requests; each retries its request with the
    same body (and submission id) after a connection error or a 503/429, as respond.js
    does, for at most RETRY_FOR seconds."""
    load, next_index = Load(), iter(range(n))
    start = time.perf_counter()

    async def client(k: int) -> None:
        for i in next_index:
            method, path, body, key = make(i)
            port = ports[i % len(ports)]
            began, give_up, attempts = time.perf_counter(), time.monotonic() + RETRY_FOR, 0
            while True:
                attempts += 1
                try:
                    status, _ = await asyncio.wait_for(
                        request(port, method, path, body), REQUEST_TIMEOUT
                    )
                except (OSError, TimeoutError):
                    load.connection_errors += 1
                    if time.monotonic() > give_up:
                        break
                    await asyncio.sleep(0.2)
                    continue
                if status in (429, 503) and time.monotonic() < give_up:
                    load.statuses[status] += 1
                    await asyncio.sleep(0.2)
                    continue
                load.statuses[status] += 1
                load.latencies.append(time.perf_counter() - began)
                if key and status in (200, 201):
                    load.acknowledged.add(key)
                    load.retried_200 += status == 200 and attempts > 1
                    if on_ack:
                        on_ack(len(load.acknowledged))
                break

    await asyncio.gather(*(client(k) for k in range(clients)))
    load.seconds = time.perf_counter() - start
    return load


def noop(i: int) -> tuple[str, str, bytes, str | None]:
    return "GET", "/healthz", b"", None


def submitter(survey: dict):
    path = f"/api/public/surveys/{survey['slug']}/responses/"

    def make(i: int) -> tuple[str, str, bytes, str]:
        sid = str(uuid.uuid4())
        answers = [
            {"question": q, "value": reports[(i + k) % len(reports)]}
            | ({"arm": (i // 2 + k) % arms} if arms else {})
            for k, (q, reports, arms) in enumerate(
                zip(survey["questions"], survey["reports"], survey["arms"], strict=True)
            )
        ]
        # What the respondent page sends.
        body = {"submission_id": sid, "answers": answers, "design_version": survey["design"]}
        body = json.dumps(body).encode()
        return "POST", path, body, sid

    return make


# Scenarios -----------------------------------------------------------------------------


def throughput(engine, args, workdir, instances=1, redis=False) -> tuple[list, dict]:
    db = fresh_database(engine, workdir)
    try:
        survey = prepare(db, workdir, args.questions)
        extra = {}
        if redis:
            extra = {"REDIS_URL": "redis://127.0.0.1:6379/15", "RATELIMIT_ENABLED": "true",
                     "RATELIMIT_SUBMIT": "1000000/m"}  # fmt: skip
        env = app_env(db, workdir, **extra)
        servers = [Server(env, max(1, args.workers // instances)).start() for _ in range(instances)]
        try:
            ports = [s.port for s in servers]
            asyncio.run(drive(ports, min(1000, args.submissions), args.clients, noop))  # warm-up
            base, load, ratios = interleaved(ports, args, survey)
        finally:
            for server in servers:
                server.stop()
        check = verify(db, survey, load.acknowledged, workdir)
    finally:
        drop_database(db)
    label = f"{engine}, {instances} × {max(1, args.workers // instances)} workers"
    label += " + Redis rate limit" if redis else ""
    rows = [base.row(f"{label}: no-op /healthz"), load.row(f"{label}: submit", base, ratios)]
    return rows, check


def interleaved(ports: list[int], args, survey: dict) -> tuple[Load, Load, list[float]]:
    """Alternate no-op and submit rounds, so that the machine's drifting speed (shared
    CPUs, other tenants) weighs on both alike; totals of each, and each round's ratio."""
    base, load, ratios = Load(), Load(), []
    per_round = -(-args.submissions // args.rounds)
    make = submitter(survey)
    for _ in range(args.rounds):
        bodies = [make(i) for i in range(per_round)]  # built before the clock starts
        noops = asyncio.run(drive(ports, per_round, args.clients, noop))
        submits = asyncio.run(drive(ports, per_round, args.clients, bodies.__getitem__))
        ratios.append(submits.rate / noops.rate)
        base.add(noops)
        load.add(submits)
    return base, load, ratios


def crash(engine, args, workdir) -> dict:
    """kill -9 the whole gunicorn process group after a third of the acknowledgements."""
    db = fresh_database(engine, workdir)
    n = args.crash_submissions
    try:
        survey = prepare(db, workdir, args.questions)
        server = Server(app_env(db, workdir), args.workers).start()
        killed = {"at": None}

        def on_ack(count: int) -> None:
            if killed["at"] is None and count >= n // 3:
                killed["at"] = count
                server.kill()
                # Restart in the background: clients meanwhile see refused connections.
                asyncio.get_running_loop().run_in_executor(None, server.start)

        try:
            load = asyncio.run(drive([server.port], n, args.clients, submitter(survey), on_ack))
        finally:
            server.stop()
        check = verify(db, survey, load.acknowledged, workdir)
    finally:
        drop_database(db)
    return {
        "engine": engine,
        "submissions": n,
        "killed after acks": killed["at"],
        "connection errors (retried)": load.connection_errors,
        "acked 200 on a retry (stored before the crash)": load.retried_200,
        "5xx": sum(c for s, c in load.statuses.items() if s >= 500),
        **check,
    }


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def redis_answers() -> bool:
    try:
        with socket.create_connection((HOST, 6379), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=10_000)
    parser.add_argument("--crash-submissions", type=int, default=3_000)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2 * os.cpu_count() + 1)
    parser.add_argument(
        "--questions",
        type=int,
        default=5,
        help="cycling through yes/no, choice, number, direct, stochastic lie detector",
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternating no-op/submit rounds")
    parser.add_argument(
        "--only", choices=["postgres", "sqlite", "scale-out", "crash"], action="append"
    )
    args = parser.parse_args()
    only = set(args.only or ["postgres", "sqlite", "scale-out", "crash"])
    with tempfile.TemporaryDirectory(prefix="deniable-bench-") as tmp:
        workdir = Path(tmp)
        env = app_env(Database("sqlite:///:memory:", "sqlite"), workdir)
        subprocess.run(
            [str(PYTHON), "manage.py", "collectstatic", "--noinput", "-v0"],
            env=env, cwd=ROOT, check=True,
        )  # fmt: skip
        rows, checks = [], []
        for engine in ("postgres", "sqlite"):
            if engine in only:
                result, check = throughput(engine, args, workdir)
                rows += result
                checks.append([result[-1][0], *map(str, check.values())])
        if "scale-out" in only:
            # Without, then with, the rate limiter's shared counters: its cost shows apart.
            for redis in sorted({False, redis_answers()}):
                result, check = throughput("postgres", args, workdir, 2, redis=redis)
                rows += result
                checks.append([result[-1][0], *map(str, check.values())])
        kinds = ", ".join(f"{kind} {name}" for kind, _, name, _ in MIX[: args.questions])
        print(f"\n{args.clients} concurrent clients, {args.questions} questions per submission "
              f"({kinds}{', …' if args.questions > len(MIX) else ''}), "
              f"{os.cpu_count()} CPUs shared by server and clients\n")  # fmt: skip
        header = ["run", "requests", "req/s", "p50 ms", "p99 ms", "ratio to no-op",
                  "rounds' ratios", "statuses", "5xx"]  # fmt: skip
        print(table(header, rows))
        if checks:
            print("\nDatabase check after each submit run:\n")
            header = ["run", "stored", "acknowledged", "missing", "every answer in",
                      "partial", "all sealed", "tallies = stored", "seal s"]  # fmt: skip
            print(table(header, checks))
        for row in rows:
            if row[0].startswith("postgres") and row[5] and "rate limit" in row[0]:
                print(f"\nWith the rate limiter on, for information ({row[0]}): {row[5]}")
            elif row[0].startswith("postgres") and row[5]:
                verdict = "met" if float(row[5]) >= 0.5 else "NOT met"
                print(f"\nTarget ratio ≥ 0.5 on PostgreSQL ({row[0]}): {verdict} ({row[5]})")
        failed = any(
            c[3] != "0" or c[4] != "True" or c[5] != "0" or c[6] != "True" or c[7] != "True"
            for c in checks
        )
        failed |= any(row[-1] != "0" for row in rows)
        if "crash" in only:
            results = [crash(engine, args, workdir) for engine in ("postgres", "sqlite")]
            print("\nkill -9 of gunicorn (master and workers) mid-load, then restart:\n")
            keys = list(results[0])
            print(table(["", *[str(r["engine"]) for r in results]],
                        [[k, *[str(r[k]) for r in results]] for k in keys[1:]]))  # fmt: skip
            failed |= any(r["missing"] or r["partial"] or r["5xx"] for r in results)
            failed |= any(
                not (r["answers_ok"] and r["sealed"] and r["tallies_ok"]) for r in results
            )
        log = (workdir / "access.log").read_text()
        print(f"\nAccess log: {len(log.splitlines())} lines, client address present: {HOST in log}")
        failed |= HOST in log
    print("\nFAILED" if failed else "\nAll checks passed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
