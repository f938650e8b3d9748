"""Sealing an hour of 100 000 submissions while respondents keep submitting.

    .venv/bin/python bench/seal.py                      # PostgreSQL and SQLite
    .venv/bin/python bench/seal.py --only postgres --rows 200000 --clients 64

For each database: a fresh one (as ``bench/submit.py`` makes it), one open survey, and
``--rows`` submissions bulk-loaded into the previous hour's tables (what an hour of a busy
survey leaves). gunicorn serves; ``--clients`` concurrent clients submit to the survey
without pause; after a few seconds ``manage.py seal_hours`` seals the previous hour in
another process. Reported: the seal's duration, every request's wait (before, during and
after the seal), the longest, and a check that every acknowledged submission is stored and
that, once everything is sealed (``seal_hours --now``), the sealed counts are the
submissions'.

Then the same while another survey is **closed**: closing seals its current hour at once,
which rewrites the current hour's tables, so submissions to every survey wait for that
moment: its length is measured against ``--rows`` current-hour rows of the busy survey.

Target (SPEC §6): no submission waits more than 1 s while an hour of 100 000 is sealed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.submit import (  # noqa: E402
    PYTHON,
    Database,
    Server,
    app_env,
    drop_database,
    fresh_database,
    prepare,
    request,
    submitter,
    table,
    verify,
)

LOAD_ROWS = """
import json, random, uuid
from datetime import timedelta
from responses.batch import pattern_key
from responses.models import hour_tables
from survey.models import Survey, current_hour
survey = Survey.objects.get(pk={survey})
hour = current_hour() - timedelta(hours={hours_back})
inbox = hour_tables(hour).inbox
questions = list(survey.questions.all())
reports = [q.design.output_description().get("values") or list(range(-40, 71)) for q in questions]
rng = random.Random(7)
rows = (
    inbox(receipt=uuid.uuid4(), survey=survey, hour=hour,
          reports=pattern_key({{q.id: rng.choice(r) for q, r in zip(questions, reports)}}))
    for _ in range({rows})
)
batch = []
for row in rows:
    batch.append(row)
    if len(batch) == 5000:
        inbox.objects.bulk_create(batch)
        batch = []
inbox.objects.bulk_create(batch)
print(json.dumps({{"hour": hour.isoformat()}}))
"""
CLOSE_OTHER = """
import json
from survey.models import Survey
Survey.objects.get(pk={survey}).close()
print(json.dumps({{}}))
"""


@dataclass
class Timeline:
    """Every request: when it started and ended, and its status."""

    requests: list[tuple[float, float, int]] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)

    def waits(self, start: float, end: float) -> list[float]:
        """Waits of the requests that were in flight at some moment of [start, end]."""
        return [b - a for a, b, _ in self.requests if a <= end and b >= start]


def manage(db: Database, workdir: Path, *args: str) -> float:
    """Run a management command; the seconds it took."""
    started = time.monotonic()
    subprocess.run(
        [str(PYTHON), str(ROOT / "manage.py"), *args],
        env=app_env(db, workdir),
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return time.monotonic() - started


def shell(db: Database, workdir: Path, code: str) -> dict:
    out = subprocess.run(
        [str(PYTHON), str(ROOT / "manage.py"), "shell", "-c", code],
        env=app_env(db, workdir),
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return json.loads(out.stdout.decode().strip().splitlines()[-1])


async def submit_until(port: int, clients: int, make, stop: threading.Event) -> Timeline:
    """``clients`` respondents submitting one after another until ``stop``."""
    timeline, counter = Timeline(), iter(range(10**9))

    async def client() -> None:
        while not stop.is_set():
            method, path, body, key = make(next(counter))
            began = time.monotonic()
            status, _ = await request(port, method, path, body)
            timeline.requests.append((began, time.monotonic(), status))
            if status in (200, 201):
                timeline.acknowledged.add(key)

    await asyncio.gather(*(client() for _ in range(clients)))
    return timeline


def under_load(db, workdir, survey, clients: int, action) -> tuple[Timeline, float, float]:
    """Submissions from ``clients`` clients; ``action()`` runs in between (after 3 s, and
    3 s before the end). Returns the timeline and when the action started and ended."""
    server = Server(app_env(db, workdir), 5).start()
    stop, moments = threading.Event(), {}

    def act() -> None:
        time.sleep(3)
        moments["start"] = time.monotonic()
        action()
        moments["end"] = time.monotonic()
        time.sleep(3)
        stop.set()

    thread = threading.Thread(target=act)
    try:
        thread.start()
        timeline = asyncio.run(submit_until(server.port, clients, submitter(survey), stop))
        thread.join()
    finally:
        server.stop()
    return timeline, moments["start"], moments["end"]


def summary(label: str, timeline: Timeline, start: float, end: float) -> list[str]:
    during = timeline.waits(start, end)
    everything = [b - a for a, b, _ in timeline.requests]
    failures = sum(1 for *_, status in timeline.requests if status >= 500)
    return [
        label,
        f"{end - start:.2f}",
        str(len(everything)),
        str(len(during)),
        f"{max(during, default=0) * 1000:.0f}",
        f"{sorted(everything)[len(everything) // 2] * 1000:.0f}",
        f"{max(everything) * 1000:.0f}",
        str(failures),
    ]


def run(engine: str, args, workdir: Path) -> tuple[list[list[str]], list[dict]]:
    rows, checks = [], []
    for scenario in ("hourly seal", "closing another survey"):
        db = fresh_database(engine, workdir)
        try:
            survey = prepare(db, workdir, args.questions)
            other = prepare(db, workdir, 1)
            hourly = scenario == "hourly seal"
            load = LOAD_ROWS.format(survey=survey["id"], hours_back=int(hourly), rows=args.rows)
            shell(db, workdir, load)
            if hourly:
                action = functools.partial(manage, db, workdir, "seal_hours")
            else:
                close = CLOSE_OTHER.format(survey=other["id"])
                action = functools.partial(shell, db, workdir, close)
            timeline, start, end = under_load(db, workdir, survey, args.clients, action)
            rows.append(summary(f"{engine}: {scenario}", timeline, start, end))
            sealed_before = args.rows if scenario == "hourly seal" else 0
            check = verify(db, survey, timeline.acknowledged, workdir, sealed_before)
            checks.append({"run": f"{engine}: {scenario}", **check})
        finally:
            drop_database(db)
    return rows, checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["postgres", "sqlite"])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--questions", type=int, default=4)
    args = parser.parse_args()
    engines = [args.only] if args.only else ["postgres", "sqlite"]
    rows, checks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        subprocess.run(
            [str(PYTHON), "manage.py", "collectstatic", "--noinput", "-v0"],
            env=app_env(Database("sqlite:///" + str(workdir / "x.sqlite3"), "sqlite"), workdir),
            check=True,
            cwd=ROOT,
        )
        for engine in engines:
            r, c = run(engine, args, workdir)
            rows += r
            checks += c
    print(f"\n{args.rows} submissions in the hour sealed, {args.clients} clients submitting, "
          f"{args.questions} questions each\n")  # fmt: skip
    header = ["run", "seal or close s", "requests", "in flight meanwhile", "longest wait then ms",
              "p50 ms (all)", "longest ms (all)", "5xx"]  # fmt: skip
    print(table(header, rows))
    print("\nDatabase check (clients' submissions, then everything sealed):\n")
    keys = ["run", "acknowledged", "missing", "partial", "sealed", "tallies_ok"]
    print(table(keys, [[str(c[k]) for k in keys] for c in checks]))
    failed = any(c["missing"] or c["partial"] or not c["sealed"] for c in checks)
    failed |= any(r[-1] != "0" for r in rows)
    for row in rows:
        if "hourly" in row[0]:
            verdict = "met" if int(row[4]) < 1000 else "NOT met"
            print(f"\nTarget: no wait over 1 s while an hour is sealed ({row[0]}): {verdict}")
    print("\nFAILED" if failed else "\nAll checks passed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
