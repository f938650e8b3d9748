"""A large CSV import while respondents keep submitting: how long does a respondent wait?

    .venv/bin/python bench/import.py                        # SQLite and PostgreSQL
    .venv/bin/python bench/import.py --only sqlite --rows 100000 200000
    DENIABLE_ROOT=/path/to/older/checkout .venv/bin/python bench/import.py   # compare

For each database and file size the script migrates a fresh database (SQLite: a
temporary file; PostgreSQL: a database named ``bench_import``, dropped at the end),
creates an open survey of ``--questions`` questions and writes a CSV of ``--rows`` rows.
It then runs ``manage.py import_responses`` (the same code as the page and the API, as
its own process, like another worker) while this process submits one response every
``--interval`` seconds through the respondents' fast path, timing each submission.
Before the import it times the same submissions alone (the baseline).

Printed per run: the import's duration and rows per second, and the respondents' median,
99th percentile and longest wait during the import next to the baseline. Afterwards the
database is checked: every imported row and every submission stored, tallies in step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(os.environ.get("DENIABLE_ROOT") or Path(__file__).resolve().parent.parent)
PG_SERVER = "postgres://postgres@127.0.0.1:5432"
PG_DATABASE = "bench_import"
CLASSIC = {"p_truth": 0.5, "p_yes": 0.5}


def django_setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def manage(url: str, *args: str) -> subprocess.Popen:
    env = os.environ | {"DATABASE_URL": url}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def create_survey(questions: int):
    from django.contrib.auth import get_user_model

    from survey.models import Survey

    owner, _ = get_user_model().objects.get_or_create(username="bench")
    survey = Survey.objects.create(owner=owner, title="Import benchmark", status="open")
    for i in range(questions):
        survey.questions.create(position=i, text=f"Q{i}?", design_params=CLASSIC)
    return survey


def write_csv(path: Path, rows: int, questions: int) -> None:
    header = ",".join(f"q{k + 1}" for k in range(questions))
    with path.open("w") as out:
        out.write(header + "\n")
        for i in range(rows):
            out.write(",".join(str((i >> k) & 1) for k in range(questions)) + "\n")


def submit_once(survey, values: dict[int, int]) -> float:
    """One respondent's submission through the fast path; seconds it took."""
    from responses.fast_path import store_if_accepting

    started = time.perf_counter()
    stored = store_if_accepting(survey.id, uuid.uuid4(), values, design=survey.design_version)
    assert stored, "the survey refused a submission"
    return time.perf_counter() - started


def submit_while(survey, keep_going, interval: float) -> list[float]:
    values = {q.id: 1 for q in survey.questions.all()}
    waits = []
    while keep_going():
        waits.append(submit_once(survey, values))
        time.sleep(interval)
    return waits


def run(url: str, rows: int, questions: int, interval: float, baseline: int) -> dict:
    from responses.counts import stored_submissions, survey_counts

    survey = create_survey(questions)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "offline.csv"
        write_csv(path, rows, questions)
        size = path.stat().st_size
        before = time.monotonic() + baseline * interval
        alone = submit_while(survey, lambda: time.monotonic() < before, interval)
        started = time.monotonic()
        command = manage(url, "import_responses", str(survey.id), str(path))
        waits = submit_while(survey, lambda: command.poll() is None, interval)
        duration = time.monotonic() - started
        out, err = command.communicate()
        if command.returncode:
            raise SystemExit(f"the import failed: {err or out}")
    submissions = stored_submissions(survey)
    expected = rows + len(alone) + len(waits)
    tallies = sum(t.count for t in survey_counts(survey).tallies.values())
    assert submissions == expected, (submissions, expected)
    assert tallies == expected * questions, (tallies, expected * questions)
    return {
        "rows": rows,
        "mib": size / 2**20,
        "seconds": duration,
        "during": waits,
        "alone": alone,
    }


def ms(values: list[float], q: float) -> float:
    if len(values) < 2:
        return max(values, default=0) * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1] * 1000


def print_table(engine: str, results: list[dict]) -> None:
    print(f"\n{engine}: respondents' waits during an import (ms)")
    print(
        f"{'rows':>8} {'MiB':>6} {'import s':>9} {'rows/s':>8} {'submits':>8} "
        f"{'median':>7} {'p99':>7} {'max':>7} {'alone max':>9}"
    )
    for r in results:
        during = r["during"]
        print(
            f"{r['rows']:>8} {r['mib']:>6.1f} {r['seconds']:>9.1f} {r['rows'] / r['seconds']:>8.0f}"
            f" {len(during):>8} {statistics.median(during) * 1000:>7.1f} {ms(during, 0.99):>7.1f}"
            f" {max(during) * 1000:>7.1f} {max(r['alone']) * 1000:>9.1f}"
        )


def sqlite_url(tmp: str) -> str:
    return f"sqlite:///{tmp}/bench-import.sqlite3"


def with_database(engine: str, body) -> None:
    if engine == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = sqlite_url(tmp)
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v0"],
                cwd=ROOT,
                env=os.environ | {"DATABASE_URL": url},
                check=True,
            )
            body(url)
        return
    import psycopg

    with psycopg.connect(PG_SERVER + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE}")
        conn.execute(f"CREATE DATABASE {PG_DATABASE}")
    url = f"{PG_SERVER}/{PG_DATABASE}"
    try:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"],
            cwd=ROOT,
            env=os.environ | {"DATABASE_URL": url},
            check=True,
        )
        body(url)
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(PG_SERVER + "/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between submits")
    parser.add_argument("--baseline", type=int, default=200, help="submissions before import")
    args = parser.parse_args()
    if not args.only:
        # Django is set up once per process: each database runs in its own child process.
        for engine in ("sqlite", "postgres"):
            subprocess.run([sys.executable, __file__, *sys.argv[1:], "--only", engine], check=True)
        return

    def body(url: str) -> None:
        django_setup(url)
        results = [
            run(url, rows, args.questions, args.interval, args.baseline) for rows in args.rows
        ]
        print_table(args.only, results)

    with_database(args.only, body)


if __name__ == "__main__":
    main()
