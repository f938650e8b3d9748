"""Latency of the estimates endpoint with 10 000 and 1 000 000 stored submissions.

Run: ``.venv/bin/python bench/estimates.py`` (a few minutes; ``--backends sqlite`` to skip
PostgreSQL). Each backend runs in its own process against its own throw-away database: a
temporary SQLite file, and a PostgreSQL database ``bench_estimates`` created and dropped
here (never the dev database). One survey with a yes/no, a multiple-choice, a number and
a directly asked question receives its submissions
spread over one week of hours, bulk-loaded (SQLite ``executemany``, PostgreSQL ``COPY``)
as the hourly ``seal_hours`` job leaves them: every hour but the latest sealed into
tallies and answer patterns, the latest hour still one inbox row per submission (about
1/168 of them). The endpoint is then timed through Django's in-process test client.

Target: p50 ≤ 100 ms at 1M and p50(1M)/p50(10k) ≤ 3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.throwaway import postgres_database, run_child  # noqa: E402

# (kind, options, design, parameters, true distribution of the simulated respondents)
QUESTION_SPECS = [
    ("binary", [], "forced_response", {"p_truth": 0.5, "p_yes": 0.5}, 0.2),
    ("choice", ["never", "once", "more"], "k_rr", {"epsilon": 1.0986}, [0.5, 0.3, 0.2]),
    ("number", [], "laplace", {"epsilon": 1.0, "lower": 0, "upper": 30}, {"mean": 6, "sd": 4}),
    ("choice", ["1st", "2nd", "3rd", "4th"], "direct", {}, [0.4, 0.3, 0.2, 0.1]),
]
QUESTIONS = len(QUESTION_SPECS)
HOURS = 168  # submissions arrive over one week, whatever their number
CHUNK = 200_000
PG_NAME = "bench_estimates"


def percentile_ms(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q) * 1000)


def new_uuids(count: int) -> list[str]:
    raw = np.frombuffer(os.urandom(16 * count), dtype=np.uint8).reshape(count, 16).copy()
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40  # version 4
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80  # RFC 4122 variant
    return [str(uuid.UUID(bytes=row.tobytes())) for row in raw]


def extreme_reports(design) -> np.ndarray:
    """The outputs of a design with a few, else its lowest and highest possible report."""
    outputs = design.output_description()
    return np.array(outputs.get("values") or [outputs["min_report"], outputs["max_report"]])


class Loader:
    """Loads simulated submissions into the bench database as the hourly seal leaves
    them: every hour but the latest sealed into tallies and answer patterns, the latest
    still one inbox row per submission."""

    def __init__(self, survey, rng: np.random.Generator) -> None:
        from django.db import connection

        self.connection = connection
        self.survey = survey
        self.questions = list(survey.questions.all())
        self.rng = rng
        self.designs = [q.design for q in self.questions]
        self.start = datetime(2026, 1, 5, tzinfo=UTC)
        # [question, hour, tally key] count, Σ report and Σ report², as the seal makes them
        keys = 1 + max(int(d.tally_keys(extreme_reports(d)).max()) for d in self.designs)
        self.counts = np.zeros((QUESTIONS, HOURS - 1, keys), dtype=np.int64)
        self.totals = np.zeros_like(self.counts)
        self.squares = np.zeros_like(self.counts)
        self.patterns: Counter[str] = Counter()
        self.sealed = 0
        self.inbox_rows = 0

    def add(self, count: int) -> None:
        for offset in range(0, count, CHUNK):
            self._add_chunk(min(CHUNK, count - offset))
        self._write_sealed()

    def _add_chunk(self, size: int) -> None:
        from estimator.simulation import simulate_reports
        from responses.batch import pattern_key
        from responses.models import hour_tables

        hours = self.rng.integers(0, HOURS, size)
        values = np.stack(
            [
                simulate_reports(d, spec[-1], size, self.rng).astype(np.int64)
                for d, spec in zip(self.designs, QUESTION_SPECS, strict=True)
            ]
        )
        sealed = hours < HOURS - 1
        for j, design in enumerate(self.designs):
            where = (hours[sealed], design.tally_keys(values[j, sealed]))
            np.add.at(self.counts[j], where, 1)
            np.add.at(self.totals[j], where, values[j, sealed])
            np.add.at(self.squares[j], where, values[j, sealed] ** 2)
        qids = [q.id for q in self.questions]
        keys = [pattern_key(dict(zip(qids, map(int, column), strict=True))) for column in values.T]
        self.patterns.update(k for k, s in zip(keys, sealed, strict=True) if s)
        self.sealed += int(sealed.sum())
        latest = self.start + timedelta(hours=HOURS - 1)
        table = hour_tables(latest).inbox._meta.db_table
        hour = self.connection.ops.adapt_datetimefield_value(latest)
        rows = [
            (uuid.uuid4().hex, self.survey.id, 1, False, hour, key)
            for key, s in zip(keys, sealed, strict=True)
            if not s
        ]
        self.inbox_rows += len(rows)
        self._insert(table, "receipt, survey_id, round, simulated, hour, reports", rows)

    def _insert(self, table: str, names: str, rows: list[tuple]) -> None:
        from django.db import transaction

        with transaction.atomic(), self.connection.cursor() as cursor:
            if self.connection.vendor == "postgresql":
                text = "".join("\t".join(map(str, row)) + "\n" for row in rows)
                with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                    copy.write(text)
            else:
                marks = ", ".join(["%s"] * len(names.split(",")))
                cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)

    def _write_sealed(self) -> None:
        """The sealed hours' counts, replacing those of the previous size."""
        from django.db import transaction

        from responses.models import AnswerPattern, SurveyCount, Tally

        hour = [
            self.connection.ops.adapt_datetimefield_value(self.start + timedelta(hours=h))
            for h in range(HOURS - 1)
        ]
        tallies = [
            (
                self.questions[j].id,
                1,
                False,
                hour[h],
                v,
                int(n),
                int(self.totals[j, h, v]),
                int(self.squares[j, h, v]),
            )
            for (j, h, v), n in np.ndenumerate(self.counts)
            if n
        ]
        patterns = [(self.survey.id, 1, False, key, n) for key, n in self.patterns.items()]
        with transaction.atomic():
            Tally.objects.filter(question__survey=self.survey).delete()
            AnswerPattern.objects.filter(survey=self.survey).delete()
            SurveyCount.objects.update_or_create(
                survey=self.survey, defaults={"real": self.sealed, "simulated": 0}
            )
            self._insert(
                Tally._meta.db_table,
                "question_id, round, simulated, hour, value, count, total, total_sq",
                tallies,
            )
            self._insert(
                AnswerPattern._meta.db_table,
                "survey_id, round, simulated, key, count",
                patterns,
            )


def time_endpoint(client, path: str, requests: int) -> list[float]:
    for _ in range(5):
        client.get(path)
    samples = []
    for _ in range(requests):
        began = time.perf_counter()
        response = client.get(path)
        samples.append(time.perf_counter() - began)
        assert response.status_code == 200, response.content
    return samples


def run_backend(sizes: list[int], requests: int) -> dict:
    """In the child process: migrate, load, time; returns the measurements."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from survey.models import Survey

    call_command("migrate", verbosity=0)
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous=OFF")
    owner = get_user_model().objects.create_user("bench", password="bench-password-1")
    survey = Survey.objects.create(owner=owner, title="Bench", status=Survey.Status.OPEN)
    for i, (kind, options, name, params, _) in enumerate(QUESTION_SPECS):
        survey.questions.create(
            position=i,
            text=f"Question {i + 1}?",
            kind=kind,
            options=options,
            design_name=name,
            design_params=params,
        )
    loader = Loader(survey, np.random.default_rng(2026))
    client = Client()
    client.force_login(owner)
    path = f"/api/surveys/{survey.id}/estimates/"
    results, loaded = [], 0
    for size in sizes:
        began = time.perf_counter()
        loader.add(size - loaded)
        loaded = size
        load_seconds = time.perf_counter() - began
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        body = client.get(path).json()
        assert body["n_responses"] == size, body
        endpoint = time_endpoint(client, path, requests)
        results.append(
            {
                "size": size,
                "load_s": load_seconds,
                "p50": percentile_ms(endpoint, 50),
                "p95": percentile_ms(endpoint, 95),
                "tally_rows": int(np.count_nonzero(loader.counts)),
                "pattern_rows": len(loader.patterns),
                "inbox_rows": loader.inbox_rows,
            }
        )
    return {"vendor": connection.vendor, "results": results}


def child(backend: str, sizes: list[int], requests: int) -> dict:
    args = ["--sizes", *map(str, sizes), "--requests", str(requests)]
    if backend == "postgres":
        with postgres_database(PG_NAME) as url:
            return run_child(__file__, args, url, f"{backend} run")
    with tempfile.TemporaryDirectory(prefix="bench-estimates-") as tmp:
        return run_child(__file__, args, f"sqlite:///{tmp}/bench.sqlite3", f"{backend} run")


def print_table(runs: list[dict], requests: int) -> bool:
    kinds = ", ".join(f"{kind} {name}" for kind, _, name, _, _ in QUESTION_SPECS)
    print(f"Estimates endpoint, {QUESTIONS} questions ({kinds}), {requests} requests per cell (ms)")
    print(
        "backend     submissions  load s  tally rows  pattern rows  inbox rows   p50     p95"
        "  | p50 ratio to smallest"
    )
    ok = True
    for run in runs:
        base = run["results"][0]
        for row in run["results"]:
            ratio = row["p50"] / base["p50"]
            print(
                f"{run['vendor']:<11} {row['size']:>11,} {row['load_s']:7.1f}"
                f" {row['tally_rows']:>10,} {row['pattern_rows']:>13,} {row['inbox_rows']:>11,}"
                f" {row['p50']:6.1f} {row['p95']:7.1f}  | {ratio:5.2f}"
            )
        largest = run["results"][-1]
        ratio = largest["p50"] / base["p50"]
        passed = largest["p50"] <= 100 and ratio <= 3
        ok &= passed
        print(
            f"  {run['vendor']}: p50 {largest['p50']:.1f} ms at {largest['size']:,} (target ≤ 100),"
            f" ratio {ratio:.2f} (target ≤ 3): {'PASS' if passed else 'FAIL'}"
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 1_000_000])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_backend(args.sizes, args.requests)))
        return 0
    runs = [child(backend, args.sizes, args.requests) for backend in args.backends]
    return 0 if print_table(runs, args.requests) else 1


if __name__ == "__main__":
    raise SystemExit(main())
